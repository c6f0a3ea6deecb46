#!/bin/bash
# pvm-bench.sh -- a PVM program under real PVM 3.4.6 and under collsd's
# pvm3 library, on the same emulated hosts, in one run (issue 14's
# targets: barrier, small reduce and 1 MiB pvm_bcast at most 0.3x PVM's
# time, 8 B ping-pong on the default route at most 0.5x).
#
# On HOSTS network namespaces (tests/netns/lib.sh; one bridge), for each
# CPU placement in BENCH_PIN:
#
#  PVM    Debian's pvmd (package pvm 3.4.6) started on host 1 with a
#         hostfile naming host1..hostN; it starts the other pvmds through
#         PVM_RSH=ns-rsh (below), an rsh agent that enters the namespace
#         of the named host.  PVM resolves host names with gethostbyname,
#         so every host gets a private /etc/hosts (bind-mounted in its
#         mount namespace) naming all of them.  PVM_ROOT=/usr/lib/pvm3,
#         PVM_ARCH=LINUX64, PVM_ALLOW_ROOT=1 (we are root); the hostfile's
#         "* ep=" puts Debian's /usr/lib/pvm3/lib on the executable path,
#         where the group server pvmgs is (PVM's default path,
#         $PVM_ROOT/bin/$PVM_ARCH, does not exist on Debian).
#         tests/bench/pvm-bench.c is built against Debian's pvm3.h,
#         -lgpvm3 -lpvm3, and started by hand on host 1.
#  collsd when BUILD/pvm/libpvm3.la (or BUILD/libpvm3.la) exists, our
#         pvm3 library: the same
#         pvm-bench.c built against our pvm/pvm3.h and libgpvm3/libpvm3,
#         started by hand on host 1 on collsd daemons (one per host, with
#         a cluster key, --spawn-path the run directory and the build
#         tree's pvm/ and top directory, where the group server pvmgs is
#         looked for), which spawn its workers.  Without the library, one
#         line says so.
#
# pvm-bench spawns one worker per other host (PvmTaskHost), so 1 process
# per host; it times as `collsctl bench` does (3 warm-ups, K runs of N
# operations, per process its best run, the maximum over processes).
# Both systems are up at once and take turns: R rounds of one program run
# under PVM then one under collsd.  The tables give the median and
# [min..max] of the R figures in microseconds per operation, collsd / PVM
# of the medians, and the median [min..max] of the R per-round ratios.  Pinned (1): every daemon and task on CPU 0 (taskset -c 0; the
# pvmds and spawned tasks inherit it, collsd daemons are pinned with
# taskset -a -p once started); unpinned (0): as the scheduler likes.
#
#   BENCH_HOSTS   4
#   BENCH_OPS     "barrier reduce-int reduce-double bcast pingpong"
#   BENCH_RUNS    5, BENCH_ITERS 50, BENCH_REPEAT 5
#   BENCH_PP_ITERS 1000  round trips per run of pingpong: the barrier
#                 before each run leaves work in the daemons that lands on
#                 its first operations (about 2 us per round trip of ours
#                 in runs of 50), and a latency benchmark runs thousands
#   BENCH_PIN     "0 1"  both by default
#   BENCH_OUT     ./pvm-bench-results.txt
#
# Installs pvm and pvm-dev when missing (only this script and
# tests/integration/pvm-examples.sh need them).  Needs root (exit 77
# otherwise).  Every program run is bounded by a 600 s timeout.  Not part
# of make check.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/netns/lib.sh"

B=${top_builddir:-.}
B=$(cd "$B" && pwd -P)
SRC=${top_srcdir:-$(dirname "$0")/../..}
SRC=$(cd "$SRC" && pwd -P)
SOCK=/tmp/collsd/collsd.sock
NH=${BENCH_HOSTS:-4}
OPS=${BENCH_OPS:-barrier reduce-int reduce-double bcast pingpong}
RUNS=${BENCH_RUNS:-5}
ITERS=${BENCH_ITERS:-50}
PP_ITERS=${BENCH_PP_ITERS:-1000}
REPEAT=${BENCH_REPEAT:-5}
PINS=${BENCH_PIN:-0 1}
OUT=${BENCH_OUT:-$PWD/pvm-bench-results.txt}
PVM_PACKAGES="pvm pvm-dev"
export PVM_ROOT=/usr/lib/pvm3 PVM_ARCH=LINUX64 PVM_ALLOW_ROOT=1

[ "$(id -u)" = 0 ] || {
    echo "SKIP: needs root" >&2
    exit 77
}
ns_packages $PVM_PACKAGES || exit 77

mh_init "$B" "$SOCK" "$NH" collsd collsctl
export PVM_RSH="$NS_RUN/ns-rsh"

# Host names for PVM: a private /etc/hosts on every host.
{
    echo "127.0.0.1 localhost"
    for i in $(seq 1 "$NH"); do
        echo "$(ns_addr "$i") host$i"
    done
} >"$NS_RUN/etc-hosts"
for i in $(seq 1 "$NH"); do
    host_run "$i" mount --bind "$NS_RUN/etc-hosts" /etc/hosts ||
        fail "cannot give host $i its /etc/hosts"
    echo "$(ns_addr "$i") $(ns_holder "$i")"
    echo "host$i $(ns_holder "$i")"
done >"$NS_RUN/hosts.map"

# The rsh agent: "ns-rsh HOST [-n] [-l USER] CMD" runs CMD (one string, as
# rsh passes it to the remote shell) in the namespaces of HOST (a name or
# an address), as rsh would on a real cluster.  pvmd calls it as
# "ns-rsh host2 -n '/usr/lib/pvm3/lib/pvmd -s ...'".
cat >"$NS_RUN/ns-rsh" <<EOS
#!/bin/sh
h=""
while [ \$# -gt 0 ]; do
    case "\$1" in
    -l | -p | -o) shift 2 ;;
    -*) shift ;;
    *) [ -n "\$h" ] && break; h=\$1; shift ;;
    esac
done
pid=\$(awk -v h="\$h" '\$1 == h { print \$2 }' "$NS_RUN/hosts.map")
[ -n "\$pid" ] || { echo "ns-rsh: no host \$h" >&2; exit 255; }
exec nsenter -t "\$pid" -n -m -u -i --wd="$NS_RUN" -- sh -c "\$*" </dev/null
EOS
chmod +x "$NS_RUN/ns-rsh"

# PVM's hostfile: the executable path for pvmgs, then the hosts.
{
    echo "* ep=/usr/lib/pvm3/lib:$NS_RUN"
    for i in $(seq 1 "$NH"); do
        echo "host$i"
    done
} >"$NS_RUN/pvm.hosts"

cc -O2 -o "$NS_RUN/pb-pvm" "$SRC/tests/bench/pvm-bench.c" -lgpvm3 -lpvm3 ||
    fail "cannot build tests/bench/pvm-bench.c against Debian's PVM"
# Our pvm3 library: BUILD/pvm/ (where Makefile.am builds it) or BUILD/.
OURS=""
for d in "$B/pvm" "$B"; do
    [ -e "$d/libpvm3.la" ] && [ -e "$d/libgpvm3.la" ] && OURS=$d && break
done
if [ -n "$OURS" ]; then
    cc -O2 -I"$SRC/pvm" -I"$B/pvm" -c -o "$NS_RUN/pb-ours.o" \
        "$SRC/tests/bench/pvm-bench.c" &&
        "$B/libtool" --mode=link --quiet cc -O2 -no-install \
            -o "$NS_RUN/pb-ours" "$NS_RUN/pb-ours.o" "$OURS/libgpvm3.la" \
            "$OURS/libpvm3.la" ||
        fail "cannot build tests/bench/pvm-bench.c against our pvm3 library"
fi
[ "$FAILED" = 0 ] || exit 1

# The virtual machine of real PVM on every host: pvmd on host 1 starts the
# others from the hostfile; 0 once the console lists NH hosts.
pvm_start()
{
    local wrap=""
    [ "$1" = 1 ] && wrap="taskset -c 0"
    host_bg 1 pvmd.log $wrap pvmd "$NS_RUN/pvm.hosts"
    PVMD_PID=$NS_LASTPID
    # The console starts a pvmd of its own when it finds none: ask it
    # only once pvmd has written its address file.
    for _ in $(seq 1 100); do
        host_run 1 test -e "/tmp/pvmd.$(id -u)" &&
            echo conf | host_run 1 timeout 10 pvm 2>/dev/null |
            grep -q "^$NH host" && return 0
        sleep 0.2
    done
    echo conf | host_run 1 timeout 10 pvm >&2
    return 1
}

# Halts PVM (every pvmd and pvmgs) and reaps host 1's pvmd.
pvm_stop()
{
    (echo halt | host_run 1 timeout 10 pvm) >/dev/null 2>&1
    ns_pin_kill "$PVMD_PID" TERM
}

# collsd daemons on every host, pinned to CPU 0 when $1 is 1.
colls_start()
{
    local i
    COLLS_PIDS=""
    for i in $(seq 1 "$NH"); do
        mh_daemon "$i" --log-level warning --spawn-path "$NS_RUN:$B/pvm:$B"
        COLLS_PIDS="$COLLS_PIDS $NS_LASTPID"
        [ "$1" = 1 ] && taskset -a -p -c 0 "$NS_LASTPID" >/dev/null
    done
    for i in $(seq 1 "$NH"); do
        mh_wait_up "$i" "$NH" || return 1
    done
    mh_wait_measured "$NH" || return 1 # the daemons' start measurement
}

colls_stop()
{
    local p
    for p in $COLLS_PIDS; do
        ns_pin_kill "$p" TERM
    done
}

# pvm-bench's master on host 1: prints "LABEL OP BYTES MEDIAN MIN MAX"
# lines (its comment line goes to bench.log); returns its status.
run_bench()
{
    local prog=$1 label=$2 pin=$3 wrap="" rc o="$NS_RUN/out-$2-$3"
    [ "$pin" = 1 ] && wrap="taskset -c 0"
    # shellcheck disable=SC2086
    host_run 1 timeout 600 env COLLS_SOCKET="$SOCK" $wrap "$NS_RUN/$prog" \
        --runs "$RUNS" --iters "$ITERS" --pp-iters "$PP_ITERS" \
        --repeat 1 --label "$label" \
        $OPS >"$o" 2>>"$NS_RUN/bench.err"
    rc=$?
    cat "$o" >>"$NS_RUN/bench.log"
    grep -v '^#' "$o"
    return "$rc"
}

{
    echo "How each system was run ($NH emulated hosts, 1 process per host):"
    echo "  PVM:    Debian pvm $(dpkg-query -W -f='${Version}' pvm): pvmd on host1 with hostfile host1..host$NH"
    echo "          (\"* ep=/usr/lib/pvm3/lib:RUN\"), remote pvmds through PVM_RSH=ns-rsh, PVM_ALLOW_ROOT=1,"
    echo "          private /etc/hosts per host; pvm-bench.c built with cc -O2 -lgpvm3 -lpvm3 (Debian's pvm3.h)"
    if [ -n "$OURS" ]; then
        echo "  collsd: one collsd per host (cluster key, --spawn-path RUN:BUILD/pvm:BUILD); pvm-bench.c built with cc -O2"
        echo "          against pvm/pvm3.h, libgpvm3.la and libpvm3.la of $OURS"
    else
        echo "  collsd: not measured: libpvm3 not built ($B/pvm/libpvm3.la: our pvm3 library is absent)"
    fi
    echo "  both:   master started by hand on host1, workers by pvm_spawn(PvmTaskHost), default route;"
    echo "          $REPEAT rounds, each a program run under PVM then one under collsd (both systems up"
    echo "          throughout); a program run: $RUNS runs x $ITERS ops (pingpong $PP_ITERS round trips) after a"
    echo "          barrier and 3 warm-ups, best run per process, max over processes;"
    echo "          median [min..max] of the $REPEAT figures, us/op; collsd/PVM: of the medians, and"
    echo "          per round (median [min..max] of the $REPEAT ratios)"
} | tee "$OUT"

# Both systems stay up for a placement and take turns, one program run
# each per round: this machine's speed drifts over minutes (other guests),
# and a drift then lands on both sides of a ratio instead of one.
for pin in $PINS; do
    f="$NS_RUN/res-$pin"
    : >"$f"
    pvm_up=0
    colls_up=0
    if pvm_start "$pin"; then
        pvm_up=1
    else
        fail "PVM's virtual machine did not come up"
        cp "$NS_RUN/pvmd.log" "$NS_RUN/pvmd-failed.log" 2>/dev/null
    fi
    if [ -n "$OURS" ]; then
        if colls_start "$pin"; then
            colls_up=1
        else
            fail "collsd daemons did not come up"
        fi
    fi
    for _ in $(seq 1 "$REPEAT"); do
        if [ "$pvm_up" = 1 ]; then
            run_bench pb-pvm pvm "$pin" >>"$f" ||
                fail "pvm-bench under PVM failed"
        fi
        if [ "$colls_up" = 1 ]; then
            run_bench pb-ours collsd "$pin" >>"$f" ||
                fail "pvm-bench under collsd failed"
        fi
    done
    pvm_stop
    [ -n "$OURS" ] && colls_stop
    {
        printf '\n== %s hosts, %s; us/op\n' "$NH" \
            "$([ "$pin" = 1 ] && echo "everything pinned to CPU 0" || echo unpinned)"
        python3 - "$f" <<'EOP'
import statistics, sys
# one figure per program run (--repeat 1), in round order per label
rows, order = {}, []
for line in open(sys.argv[1]):
    w = line.split()
    if len(w) != 6:
        continue
    lab, op, n = w[0], w[1], int(w[2])
    if (op, n) not in rows:
        order.append((op, n))
    rows.setdefault((op, n), {}).setdefault(lab, []).append(float(w[3]))
def summary(v):
    return (statistics.median(v), min(v), max(v)) if v else None
target = {"pingpong": 0.5}
print("%-14s %8s %28s %28s %11s %22s %7s" % (
    "op", "bytes", "PVM 3.4.6", "collsd", "collsd/PVM", "per round", "target"))
for k in order:
    r = rows[k]
    f = lambda v: ("%9.1f [%7.1f..%7.1f]" % v) if v else "%28s" % "-"
    pv, cv = r.get("pvm", []), r.get("collsd", [])
    p, c = summary(pv), summary(cv)
    ratio = "%10.2fx" % (c[0] / p[0]) if p and c and p[0] > 0 else "%11s" % "-"
    pairs = [b / a for a, b in zip(pv, cv) if a > 0]
    pr = summary(pairs)
    rounds = ("%6.2fx [%5.2f..%5.2f]" % pr) if pr else "%22s" % "-"
    print("%-14s %8d %28s %28s %s %s %6.1fx" % (
        k[0], k[1], f(p), f(c), ratio, rounds, target.get(k[0], 0.3)))
EOP
    } | tee -a "$OUT"
done
if [ -s "$NS_RUN/bench.err" ]; then
    echo "(the programs' stderr, last lines:)"
    tail -n 5 "$NS_RUN/bench.err"
fi
[ "$FAILED" = 0 ]
