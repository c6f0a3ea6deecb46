#!/bin/bash
# mpi-bench.sh -- collsd against Open MPI and MPICH on the same emulated
# hosts: what our users would pick instead.
#
# On HOSTS network namespaces (tests/netns/lib.sh; one bridge, one collsd
# each, with a cluster key: authentication on), for each operation and
# size, in one run: `collsctl bench` (the classic method: 3 warm-ups,
# --runs runs of --iters operations after a barrier, per process its best
# run, the maximum over processes) and tests/bench/mpi-bench.c (the same
# method in MPI) under Open MPI 4.1 and MPICH 4.0 from Debian, started in
# the namespaces through an rsh agent that enters them (ns-rsh below; TCP
# between hosts, shared memory within one).  Prints one table per layout
# (us/op, the ratio collsd / best MPI) and writes it to $BENCH_OUT.
#
#   BENCH_LAYOUTS  "4x1 2x4"  HOSTSxTASKS layouts (contiguous ranks)
#   BENCH_OPS      "barrier bcast allreduce allgather alltoall"
#   BENCH_SIZES    "4:4194304" (powers of 4; barrier once)
#   BENCH_RUNS     5, BENCH_ITERS 50
#   BENCH_ROUNDS   1  rounds of the whole table per layout and placement;
#                  each round runs every implementation once per
#                  operation, the first a different one each round (the
#                  list rotated), and the table then gives per point the
#                  median of the rounds' figures, the median of the
#                  rounds' ratios and their range (min-max): on 2 shared
#                  vCPUs one run's ratio of a small operation on 4 x 1
#                  ranged 0.75-1.80x from run to run (2 December 2026)
#   BENCH_PIN      "0 1"  1: every process pinned to CPU 0 (taskset -c 0),
#                         0: unpinned; both by default
#   BENCH_IMPLS    "collsd ompi mpich han"  which run; han: Open MPI with
#                  its hierarchical collectives (--mca coll_han_priority
#                  100), a column and a ratio of its own
#   BENCH_MODE     collsd's mode: "auto" (default: what a program gets;
#                  small barrier/bcast/allreduce/allgather run direct among
#                  the tasks, the rest hierarchical), "hier", "flat",
#                  "direct"
#   BENCH_AUTH     "key"  collsd machines: "key" (daemons with the cluster
#                  key: authenticated datagrams) and/or "none" (--insecure);
#                  with both, two machines run side by side (ports 7490 and
#                  7491; an idle daemon costs nothing) and the tables get a
#                  column for each; the two take turns at going first, op
#                  after op (on 2 x 4 whichever ran first was the slower,
#                  by up to 1.9x, keyed or not)
#   BENCH_CPU_OPS  10000  the CPU table: that many operations of 4 B of
#                  each of BENCH_CPU_LIST per layout and placement (--runs
#                  1), CPU seconds summed over every process that takes
#                  part: collsd's tasks and its daemons
#                  (/proc/PID/schedstat), each MPI's ranks (bash's `times`
#                  around each); 0: no CPU table
#   BENCH_CPU_LIST "allreduce"  the operations of the CPU table.  Pinned
#                  to one CPU, where every process waits for that CPU,
#                  CPU time is what separates two implementations: the
#                  classic method's figure depends on the order in which
#                  the processes leave the barrier before each run (see
#                  "One CPU" in docs/architecture.md)
#   BENCH_IDLE_S   10  then the daemons' CPU over that many idle seconds
#   BENCH_TCP_CC   the TCP congestion control of every emulated host
#                  (net.ipv4.tcp_congestion_control in each host's
#                  namespace), for every implementation alike; default:
#                  the machine's.  With BBR, which paces every connection
#                  (no fq qdisc here: the kernel's own timers), bcasts of
#                  1-4 MiB over TCP took 3-5x as long as with reno on this
#                  VM, collsd's and Open MPI's (docs/architecture.md,
#                  "TCP's congestion control")
#   BENCH_DIRECT_CC  COLLS_DIRECT_CC for collsd's tasks only: the congestion
#                  control of their direct connections (docs/protocol.md);
#                  default: unset (libcolls' default: the host's, cubic
#                  where that is BBR; "system": the host's)
#   BENCH_MPI_TIMEOUT  300  seconds per MPI run
#   BENCH_OUT      ./mpi-bench-results.txt
#
# Fairness on a machine with fewer CPUs than ranks: both MPIs busy-poll,
# and a waiting rank that spins until the scheduler's tick makes their
# small operations take milliseconds (measured before these settings:
# barrier 4.5-8 ms, allreduce 4 B 4.8 ms).  So Open MPI runs with
# `--mca pml ob1 --mca btl tcp,self,vader --bind-to none --mca
# mpi_yield_when_idle 1 --oversubscribe`, and MPICH 4.0 (ch4:ucx, which
# has no switch to yield) with UCX_TLS=tcp,self,sm UCX_NET_DEVICES=eth0
# and LD_PRELOAD of a shim built here (mb-yield.so) that calls
# sched_yield() after every ucp_worker_progress() that made no progress.
# The script prints both command lines.  Every MPI run is bounded by
# BENCH_MPI_TIMEOUT seconds (default 300; MPICH 4.0 hangs now and then on
# 2 x 4, and one hang should not cost the rest of the tables).
#
# Installs openmpi-bin libopenmpi-dev mpich libmpich-dev when missing (the
# only script that needs them).  Needs root (exit 77 otherwise).  Not part
# of make check.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/netns/lib.sh"

B=${top_builddir:-.}
B=$(cd "$B" && pwd -P)
SRC=${top_srcdir:-$(dirname "$0")/../..}
SRC=$(cd "$SRC" && pwd -P)
SOCK=/tmp/collsd/collsd.sock
LAYOUTS=${BENCH_LAYOUTS:-4x1 2x4}
OPS=${BENCH_OPS:-barrier bcast allreduce allgather alltoall}
SIZES=${BENCH_SIZES:-4:4194304}
RUNS=${BENCH_RUNS:-5}
ROUNDS=${BENCH_ROUNDS:-1}
ITERS=${BENCH_ITERS:-50}
PINS=${BENCH_PIN:-0 1}
IMPLS=" ${BENCH_IMPLS:-collsd ompi mpich han} "
CMODE=${BENCH_MODE:-auto}
AUTHS=${BENCH_AUTH:-key}
CPU_OPS=${BENCH_CPU_OPS:-10000}
CPU_LIST=${BENCH_CPU_LIST:-allreduce}
IDLE_S=${BENCH_IDLE_S:-10}
MPI_TIMEOUT=${BENCH_MPI_TIMEOUT:-300}
case $ROUNDS in '' | *[!0-9]* | 0)
    echo "BENCH_ROUNDS=$ROUNDS: a count of 1 or more" >&2
    exit 2
    ;;
esac
for a in $AUTHS; do
    case $a in key | none) ;; *)
        echo "BENCH_AUTH=$AUTHS: key and/or none" >&2
        exit 2
        ;;
    esac
done
case $CMODE in
auto) CMODE_OPT="" ;;
hier | flat | direct) CMODE_OPT="--$CMODE" ;;
*)
    echo "BENCH_MODE=$CMODE: auto, hier, flat or direct" >&2
    exit 2
    ;;
esac
OUT=${BENCH_OUT:-$PWD/mpi-bench-results.txt}
MPI_PACKAGES="openmpi-bin libopenmpi-dev mpich libmpich-dev"

[ "$(id -u)" = 0 ] || {
    echo "SKIP: needs root" >&2
    exit 77
}
ns_packages $MPI_PACKAGES || exit 77

maxh=0
for l in $LAYOUTS; do
    [ "${l%x*}" -gt "$maxh" ] && maxh=${l%x*}
done
mh_init "$B" "$SOCK" "$maxh" collsd collsctl
TCP_CC_SYS=$(cat /proc/sys/net/ipv4/tcp_congestion_control)
if [ -n "${BENCH_TCP_CC:-}" ]; then
    for i in $(seq 1 "$maxh"); do
        host_run "$i" sysctl -q -w \
            "net.ipv4.tcp_congestion_control=$BENCH_TCP_CC" ||
            fail "BENCH_TCP_CC=$BENCH_TCP_CC: host $i refuses it"
    done
    [ "$FAILED" = 0 ] || exit 1
fi
TCP_CC=$(host_run 1 cat /proc/sys/net/ipv4/tcp_congestion_control)
unset COLLS_DIRECT_CC
[ -n "${BENCH_DIRECT_CC:-}" ] && export COLLS_DIRECT_CC=$BENCH_DIRECT_CC
case ${COLLS_DIRECT_CC:-} in
"") case $TCP_CC in
    bbr*) DIRECT_CC="cubic (reno for a task that may not choose cubic;
  libcolls' default where the host's is BBR)" ;;
    *) DIRECT_CC="as the hosts (libcolls' default)" ;;
    esac ;;
system) DIRECT_CC="as the hosts (COLLS_DIRECT_CC=system)" ;;
*) DIRECT_CC=$COLLS_DIRECT_CC ;;
esac
# One collsd machine per BENCH_AUTH mode: its socket, label and daemons.
sock_of()
{
    [ "$1" = key ] && echo "$SOCK" || echo /tmp/collsd-na/collsd.sock
}
label_of()
{
    [ "$1" = key ] && echo collsd || echo collsd-noauth
}
sed 's/:7490 /:7491 /' "$NS_RUN/hostfile" >"$NS_RUN/hostfile-na"
for a in $AUTHS; do
    pids=""
    for i in $(seq 1 "$maxh"); do
        if [ "$a" = key ]; then
            mh_daemon "$i" --log-level warning
        else
            host_bg "$i" "dna$i.log" "$B/collsd" --foreground \
                --listen "$(ns_addr "$i"):7491" \
                --hostfile "$NS_RUN/hostfile-na" --socket "$(sock_of none)" \
                --insecure --log-level warning
        fi
        pids="$pids $NS_LASTPID"
    done
    eval "DPIDS_$a=\"$pids\""
    for i in $(seq 1 "$maxh"); do
        MH_SOCK=$(sock_of "$a") mh_wait_up "$i" "$maxh" ||
            fail "host $i does not see $maxh hosts up ($a)"
    done
    # the daemons' own first measurement ends before any figure is taken
    MH_SOCK=$(sock_of "$a") mh_wait_measured "$maxh" ||
        fail "the daemons' start measurement does not end ($a)"
done
[ "$FAILED" = 0 ] || exit 1

# The MPI programs, built once per implementation into the shared dir.
mpicc.openmpi -O2 -o "$NS_RUN/mb-ompi" "$SRC/tests/bench/mpi-bench.c" &&
    mpicc.mpich -O2 -o "$NS_RUN/mb-mpich" "$SRC/tests/bench/mpi-bench.c" ||
    fail "cannot build tests/bench/mpi-bench.c"
# MPICH's yield shim (see the head of this file).
cat >"$NS_RUN/mb-yield.c" <<'EOS'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
typedef struct ucp_worker *ucp_worker_h;
unsigned
ucp_worker_progress(ucp_worker_h w)
{
    static unsigned (*real)(ucp_worker_h);
    unsigned n;

    if (real == NULL)
        real = (unsigned (*)(ucp_worker_h))dlsym(RTLD_NEXT,
                                                 "ucp_worker_progress");
    n = real(w);
    if (n == 0)
        sched_yield();
    return n;
}
EOS
cc -O2 -shared -fPIC -o "$NS_RUN/mb-yield.so" "$NS_RUN/mb-yield.c" -ldl ||
    fail "cannot build the MPICH yield shim"
OMPI_OPTS="--map-by slot --bind-to none --oversubscribe --mca pml ob1 \
--mca btl tcp,self,vader --mca mpi_yield_when_idle 1 \
--mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0"
HAN_OPTS="--mca coll_han_priority 100"
MPICH_ENV="UCX_TLS=tcp,self,sm UCX_NET_DEVICES=eth0 \
LD_PRELOAD=$NS_RUN/mb-yield.so"
HOW="collsd: collsctl bench, mode $CMODE (BENCH_MODE); daemons: $(for a in $AUTHS; do
    [ "$a" = key ] && printf 'cluster key (collsd) ' || printf -- '--insecure (collsd-noauth) '
done)
Open MPI: OMPI_ALLOW_RUN_AS_ROOT=1 mpirun.openmpi --hostfile HOSTS -np N
  $OMPI_OPTS (rsh agent: ns-rsh)
Open MPI HAN: the same with $HAN_OPTS
MPICH: mpiexec.hydra -launcher ssh -launcher-exec ns-rsh -f HOSTS -iface eth0
  -n N, -genv for each of: $MPICH_ENV
TCP congestion control of the hosts: $TCP_CC (BENCH_TCP_CC; the machine's:
  $TCP_CC_SYS); collsd's direct connections: $DIRECT_CC
  (BENCH_DIRECT_CC sets COLLS_DIRECT_CC)"

# cpu-wrap CMD...: runs CMD, then prints "cpu USER SYS", its CPU time
# (the second line of bash's `times`: the children's; `times` in a
# command substitution would be a subshell's); CMD's status.
cat >"$NS_RUN/cpu-wrap" <<'EOS'
#!/bin/bash
"$@"
s=$?
t=$(mktemp)
times >"$t"
echo "cpu $(tail -1 "$t")"
rm -f "$t"
exit $s
EOS
chmod +x "$NS_RUN/cpu-wrap"

# The rsh agent: "ns-rsh [options] ADDR CMD..." runs CMD in the namespace
# of the host with address ADDR, as ssh would on a real cluster.
for i in $(seq 1 "$maxh"); do
    echo "$(ns_addr "$i") $(ns_holder "$i")"
done >"$NS_RUN/hosts.map"
cat >"$NS_RUN/ns-rsh" <<EOS
#!/bin/sh
while [ \$# -gt 0 ]; do
    case "\$1" in
    -o | -l | -p) shift 2 ;;
    -*) shift ;;
    *) break ;;
    esac
done
h=\$1
shift
pid=\$(awk -v h="\$h" '\$1 == h { print \$2 }' "$NS_RUN/hosts.map")
[ -n "\$pid" ] || { echo "ns-rsh: no host \$h" >&2; exit 255; }
exec nsenter -t "\$pid" -n -m -u -i --wd="$NS_RUN" -- sh -c "\$*"
EOS
chmod +x "$NS_RUN/ns-rsh"

# The CPU seconds of a `times` line's second half ("0m1.5s 0m0.2s": the
# children's user and system time), summed over such lines prefixed
# "cpu " in the files or standard input.
cpu_sum()
{
    awk '$1 == "cpu" {
        for (i = 2; i <= 3; i++) {
            split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2]
        }
    } END { printf "%.3f", t }' "$@"
}

# The CPU time of the processes PIDS so far, in nanoseconds (the first
# field of /proc/PID/schedstat: exact, where /proc/PID/stat counts ticks).
cpu_ns()
{
    local p t=0 st
    for p in "$@"; do
        st=$(cut -d' ' -f1 "/proc/$p/schedstat" 2>/dev/null) || continue
        t=$((t + st))
    done
    echo "$t"
}

# collsd: `collsctl bench` on H hosts x K tasks (contiguous ranks) of
# machine AUTH; prints "LABEL OP BYTES US" lines.  With CPU=1 (6th
# argument): CPU_OPS operations of 4 B in one run, and the tasks' CPU
# seconds ("tasks-cpu S"; every task runs under cpu-wrap).
run_colls()
{
    # (not h: host_bg and host_run of lib.sh set a global h)
    local nh=$1 nk=$2 op=$3 pin=$4 auth=$5 cpu=${6:-0} name i j pids=""
    local wrap="" sizes=$SIZES runs=$RUNS iters=$ITERS
    name="g$(date +%s%N)"
    [ "$pin" = 1 ] && wrap="taskset -c 0"
    [ "$cpu" = 1 ] && sizes=4:4 runs=1 iters=$CPU_OPS
    for i in $(seq 1 "$nh"); do
        for j in $(seq 1 "$nk"); do
            host_bg "$i" "$name-$i-$j.log" timeout 900 $wrap \
                "$NS_RUN/cpu-wrap" "$B/collsctl" --socket "$(sock_of "$auth")" bench "$op" \
                --sizes "$sizes" $CMODE_OPT --runs "$runs" \
                --iters "$iters" --group "$name" -n $((nh * nk))
            pids="$pids $NS_LASTPID"
        done
    done
    for i in $pids; do
        wait "$i"
    done
    cat "$NS_RUN/$name"-*.log | awk -v op="$op" -v l="$(label_of "$auth")" \
        '/^ *[0-9]+ +[0-9.]+ / { print l, op, $1, $2 }'
    [ "$cpu" = 1 ] && echo "tasks-cpu $(cpu_sum "$NS_RUN/$name"-*.log)"
}

# Open MPI and MPICH: H hosts x K ranks; "LABEL OP BYTES US" lines.
# With CPU=1 (6th argument): CPU_OPS operations of 4 B in one run, and
# a "cpu USER SYS" line per rank.
run_mpi()
{
    local impl=$1 nh=$2 nk=$3 op=$4 pin=$5 cpu=${6:-0} i hf="$NS_RUN/hf-$1-$2-$3"
    local wrap="" np=$(($2 * $3)) sizes=$SIZES runs=$RUNS iters=$ITERS
    [ "$pin" = 1 ] && wrap="taskset -c 0"
    [ "$cpu" = 1 ] && sizes=4:4 runs=1 iters=$CPU_OPS
    wrap="$wrap $NS_RUN/cpu-wrap"
    if [ "$impl" = ompi ] || [ "$impl" = han ]; then
        for i in $(seq 1 "$nh"); do
            echo "$(ns_addr "$i") slots=$nk"
        done >"$hf"
        # shellcheck disable=SC2046
        host_run 1 timeout "$MPI_TIMEOUT" env OMPI_ALLOW_RUN_AS_ROOT=1 \
            OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm_rsh_agent="$NS_RUN/ns-rsh" \
            mpirun.openmpi --hostfile "$hf" -np "$np" $OMPI_OPTS \
            $([ "$impl" = han ] && echo "$HAN_OPTS") \
            $wrap "$NS_RUN/mb-ompi" "$op" "$sizes" --runs "$runs" \
            --iters "$iters" \
            --label "$([ "$impl" = han ] && echo openmpi-han || echo openmpi)" \
            2>>"$NS_RUN/mpi.err"
    else
        for i in $(seq 1 "$nh"); do
            echo "$(ns_addr "$i"):$nk"
        done >"$hf"
        host_run 1 timeout "$MPI_TIMEOUT" mpiexec.hydra -launcher ssh \
            -launcher-exec "$NS_RUN/ns-rsh" -f "$hf" -iface eth0 -n "$np" \
            $(for v in $MPICH_ENV; do echo "-genv ${v%%=*} ${v#*=}"; done) \
            $wrap "$NS_RUN/mb-mpich" "$op" "$sizes" --runs "$runs" \
            --iters "$iters" --label mpich 2>>"$NS_RUN/mpi.err"
    fi
}

# The units that take turns per operation: a collsd machine per
# BENCH_AUTH mode, then each MPI of BENCH_IMPLS.
UNITS=""
case $IMPLS in *" collsd "*)
    for a in $AUTHS; do UNITS="$UNITS c:$a"; done
    ;;
esac
for impl in ompi mpich han; do
    case $IMPLS in *" $impl "*) UNITS="$UNITS m:$impl" ;; esac
done
[ -n "$UNITS" ] || {
    echo "BENCH_IMPLS=$IMPLS: none of collsd ompi mpich han" >&2
    exit 2
}
# rotate K WORDS...: the words, the first K of them moved to the end
rotate()
{
    local k=$1
    shift
    k=$((k % $#))
    echo "${@:k+1}" "${@:1:k}"
}

echo "$HOW" | tee "$OUT"
for layout in $LAYOUTS; do
    lh=${layout%x*}
    lk=${layout#*x}
    for pin in $PINS; do
        f="$NS_RUN/res-$layout-$pin"
        : >"$f"
        turn=0
        for round in $(seq 1 "$ROUNDS"); do
            for op in $OPS; do
                # whoever went first goes last next time (on 2 x 4 the
                # first of two collsd machines was the slower, by up to
                # 1.9x, keyed or not)
                # shellcheck disable=SC2086
                for u in $(rotate "$turn" $UNITS); do
                    # (not in a pipeline: host_bg's bookkeeping is the
                    # shell's own)
                    case $u in
                    c:*) run_colls "$lh" "$lk" "$op" "$pin" "${u#c:}" ;;
                    m:*) run_mpi "${u#m:}" "$lh" "$lk" "$op" "$pin" ;;
                    esac >"$NS_RUN/unit.out"
                    sed "s/^/$round /" "$NS_RUN/unit.out" >>"$f"
                done
                turn=$((turn + 1))
            done
        done
        {
            printf '\n== %s hosts x %s tasks, %s; us/op (collsctl bench and mpi-bench, %s runs x %s ops, best run per process, max over processes%s)\n' \
                "$lh" "$lk" "$([ "$pin" = 1 ] && echo "all pinned to CPU 0" || echo unpinned)" "$RUNS" "$ITERS" \
                "$([ "$ROUNDS" -gt 1 ] && echo "; median of $ROUNDS rounds, ratio: median of the rounds' ratios [min-max]")"
            python3 - "$f" <<'EOP'
import sys
from statistics import median
rows = {}
labels = ("collsd", "collsd-noauth", "openmpi", "mpich", "openmpi-han")
for line in open(sys.argv[1]):
    w = line.split()
    # what else the programs print (an MPI's warnings) is not a figure
    if len(w) != 5 or w[1] not in labels:
        continue
    try:
        rnd, n, us = int(w[0]), int(w[3]), float(w[4])
    except ValueError:
        continue
    rows.setdefault((w[2], n), {}).setdefault(rnd, {})[w[1]] = us
na = any("collsd-noauth" in r for rs in rows.values() for r in rs.values())
han = any("openmpi-han" in r for rs in rows.values() for r in rs.values())
many = any(len(rs) > 1 for rs in rows.values())
rw = 22 if many else 12
head = "%-10s %9s %10s" % ("op", "bytes", "collsd")
if na:
    head += " %10s" % "no auth"
head += " %10s %10s %*s" % ("Open MPI", "MPICH", rw, "collsd/best")
if han:
    head += " %10s %*s" % ("OMPI HAN", rw, "collsd/HAN")
print(head)
f = lambda x: "%10.1f" % x if x is not None else "%10s" % "-"


def med(rs, label):
    v = [r[label] for r in rs.values() if r.get(label)]
    return median(v) if v else None


def ratio(rs, num, dens):
    """The rounds' ratios num / the best of dens: median [min-max]."""
    q = []
    for r in rs.values():
        c = r.get(num)
        best = min([r[d] for d in dens if r.get(d)], default=None)
        if c and best:
            q.append(c / best)
    if not q:
        return "%*s" % (rw, "-")
    if len(q) == 1:
        return "%*.2fx" % (rw - 1, q[0])
    return "%*s" % (rw, "%.2fx [%.2f-%.2f]" % (median(q), min(q), max(q)))


for (op, n) in sorted(rows, key=lambda k: (k[0], k[1])):
    rs = rows[(op, n)]
    line = "%-10s %9d %s" % (op, n, f(med(rs, "collsd")))
    if na:
        line += " " + f(med(rs, "collsd-noauth"))
    line += " %s %s %s" % (f(med(rs, "openmpi")), f(med(rs, "mpich")),
                           ratio(rs, "collsd", ("openmpi", "mpich")))
    if han:
        line += " %s %s" % (f(med(rs, "openmpi-han")),
                            ratio(rs, "collsd", ("openmpi-han",)))
    print(line)
EOP
        } | tee -a "$OUT"
    done
done

# CPU: CPU_OPS operations of 4 B, CPU seconds of everything that works.
if [ "$CPU_OPS" -gt 0 ]; then
    {
        printf '\n== CPU seconds per %s operations of 4 B (one run of %s; collsd: tasks + daemons, MPI: ranks; wall us/op beside)\n' \
            "$CPU_OPS" "$CPU_OPS"
        printf '%-10s %-6s %-10s %-14s %10s %10s %10s %10s\n' op layout \
            placement system tasks daemons total "us/op"
    } | tee -a "$OUT"
    for cop in $CPU_LIST; do
        for layout in $LAYOUTS; do
            lh=${layout%x*}
            lk=${layout#*x}
            for pin in $PINS; do
                pl=$([ "$pin" = 1 ] && echo pinned || echo unpinned)
                case $IMPLS in *" collsd "*)
                    for a in $AUTHS; do
                        eval "dp=\$DPIDS_$a"
                        # shellcheck disable=SC2086
                        t0=$(cpu_ns $dp)
                        o=$(run_colls "$lh" "$lk" "$cop" "$pin" "$a" 1)
                        # shellcheck disable=SC2086
                        t1=$(cpu_ns $dp)
                        tc=$(echo "$o" | awk '$1 == "tasks-cpu" { print $2 }')
                        us=$(echo "$o" | awk '$3 == 4 { print $4 }')
                        awk -v o="$cop" -v l="$layout" -v p="$pl" \
                            -v s="$(label_of "$a")" -v t="${tc:-0}" \
                            -v d="$((t1 - t0))" -v us="${us:--}" 'BEGIN {
                            printf "%-10s %-6s %-10s %-14s %10.2f %10.2f %10.2f %10s\n",
                                o, l, p, s, t, d / 1e9, t + d / 1e9, us }'
                    done
                    ;;
                esac
                for impl in ompi mpich; do
                    case $IMPLS in *" $impl "*)
                        o=$(run_mpi "$impl" "$lh" "$lk" "$cop" "$pin" 1)
                        us=$(echo "$o" | awk -v o="$cop" '$2 == o && $3 == 4 { print $4 }')
                        # no "cpu" line from a rank (hydra lost the end
                        # of its output): no figure, not 0
                        t=-
                        [ "$(echo "$o" | grep -c '^cpu ')" = $((lh * lk)) ] &&
                            t=$(echo "$o" | cpu_sum)
                        awk -v o="$cop" -v l="$layout" -v p="$pl" \
                            -v s="$([ "$impl" = ompi ] && echo "Open MPI" || echo MPICH)" \
                            -v t="$t" -v us="${us:--}" 'BEGIN {
                            f = t == "-" ? "%10s" : "%10.2f"
                            printf "%-10s %-6s %-10s %-14s " f " %10s " f " %10s\n",
                                o, l, p, s, t, "-", t, us }'
                        ;;
                    esac
                done
            done
        done
    done | tee -a "$OUT"
fi

# Idle: the daemons' CPU while nothing runs.
if [ "$IDLE_S" -gt 0 ]; then
    sleep 2 # the groups of the last runs are gone
    for a in $AUTHS; do
        eval "dp=\$DPIDS_$a"
        # shellcheck disable=SC2086
        t0=$(cpu_ns $dp)
        sleep "$IDLE_S"
        # shellcheck disable=SC2086
        t1=$(cpu_ns $dp)
        awk -v l="$(label_of "$a")" -v n="$maxh" -v d="$((t1 - t0))" \
            -v s="$IDLE_S" 'BEGIN {
            printf "\nidle daemons (%s): %d daemons used %.1f ms of CPU in %d s, %.3f %% of a CPU each\n",
                l, n, d / 1e6, s, d / 1e7 / s / n }'
    done | tee -a "$OUT"
fi
if [ -s "$NS_RUN/mpi.err" ]; then
    echo "(MPI's stderr, last lines:)"
    tail -n 5 "$NS_RUN/mpi.err"
fi
[ "$FAILED" = 0 ]
