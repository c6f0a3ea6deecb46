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
#   BENCH_PIN      "0 1"  1: every process pinned to CPU 0 (taskset -c 0),
#                         0: unpinned; both by default
#   BENCH_IMPLS    "collsd ompi mpich"  which of the three run
#   BENCH_MODE     collsd's mode: "auto" (default: what a program gets;
#                  small barrier/bcast/allreduce/allgather run direct among
#                  the tasks, the rest hierarchical), "hier", "flat",
#                  "direct"
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
# The script prints both command lines.  Every MPI run is bounded by a
# 900 s timeout.
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
ITERS=${BENCH_ITERS:-50}
PINS=${BENCH_PIN:-0 1}
IMPLS=" ${BENCH_IMPLS:-collsd ompi mpich} "
CMODE=${BENCH_MODE:-auto}
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
for i in $(seq 1 "$maxh"); do
    mh_daemon "$i" --log-level warning
done
for i in $(seq 1 "$maxh"); do
    mh_wait_up "$i" "$maxh" || fail "host $i does not see $maxh hosts up"
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
MPICH_ENV="UCX_TLS=tcp,self,sm UCX_NET_DEVICES=eth0 \
LD_PRELOAD=$NS_RUN/mb-yield.so"
HOW="collsd: collsctl bench, mode $CMODE (BENCH_MODE), cluster key set
Open MPI: OMPI_ALLOW_RUN_AS_ROOT=1 mpirun.openmpi --hostfile HOSTS -np N
  $OMPI_OPTS (rsh agent: ns-rsh)
MPICH: mpiexec.hydra -launcher ssh -launcher-exec ns-rsh -f HOSTS -iface eth0
  -n N, -genv for each of: $MPICH_ENV"

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

# collsd: `collsctl bench` on H hosts x K tasks (contiguous ranks); prints
# "collsd OP BYTES US" lines.
run_colls()
{
    # (not h: host_bg and host_run of lib.sh set a global h)
    local nh=$1 nk=$2 op=$3 pin=$4 name i j pids="" wrap=""
    name="g$(date +%s%N)"
    [ "$pin" = 1 ] && wrap="taskset -c 0"
    for i in $(seq 1 "$nh"); do
        for j in $(seq 1 "$nk"); do
            host_bg "$i" "$name-$i-$j.log" timeout 900 $wrap "$B/collsctl" \
                --socket "$SOCK" bench "$op" --sizes "$SIZES" $CMODE_OPT \
                --runs "$RUNS" --iters "$ITERS" --group "$name" \
                -n $((nh * nk))
            pids="$pids $NS_LASTPID"
        done
    done
    for i in $pids; do
        wait "$i"
    done
    cat "$NS_RUN/$name"-*.log |
        awk -v op="$op" '/^ *[0-9]+ +[0-9.]+ / { print "collsd", op, $1, $2 }'
}

# Open MPI and MPICH: H hosts x K ranks; "LABEL OP BYTES US" lines.
run_mpi()
{
    local impl=$1 nh=$2 nk=$3 op=$4 pin=$5 i hf="$NS_RUN/hf-$1-$2-$3"
    local wrap="" np=$(($2 * $3))
    [ "$pin" = 1 ] && wrap="taskset -c 0"
    if [ "$impl" = ompi ]; then
        for i in $(seq 1 "$nh"); do
            echo "$(ns_addr "$i") slots=$nk"
        done >"$hf"
        host_run 1 timeout 900 env OMPI_ALLOW_RUN_AS_ROOT=1 \
            OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm_rsh_agent="$NS_RUN/ns-rsh" \
            mpirun.openmpi --hostfile "$hf" -np "$np" $OMPI_OPTS \
            $wrap "$NS_RUN/mb-ompi" "$op" "$SIZES" --runs "$RUNS" \
            --iters "$ITERS" --label openmpi 2>>"$NS_RUN/mpi.err"
    else
        for i in $(seq 1 "$nh"); do
            echo "$(ns_addr "$i"):$nk"
        done >"$hf"
        host_run 1 timeout 900 mpiexec.hydra -launcher ssh \
            -launcher-exec "$NS_RUN/ns-rsh" -f "$hf" -iface eth0 -n "$np" \
            $(for v in $MPICH_ENV; do echo "-genv ${v%%=*} ${v#*=}"; done) \
            $wrap "$NS_RUN/mb-mpich" "$op" "$SIZES" --runs "$RUNS" \
            --iters "$ITERS" --label mpich 2>>"$NS_RUN/mpi.err"
    fi
}

echo "$HOW" | tee "$OUT"
for layout in $LAYOUTS; do
    lh=${layout%x*}
    lk=${layout#*x}
    for pin in $PINS; do
        f="$NS_RUN/res-$layout-$pin"
        : >"$f"
        for op in $OPS; do
            case $IMPLS in *" collsd "*)
                run_colls "$lh" "$lk" "$op" "$pin" >>"$f" ;;
            esac
            for impl in ompi mpich; do
                case $IMPLS in *" $impl "*)
                    run_mpi "$impl" "$lh" "$lk" "$op" "$pin" >>"$f" ;;
                esac
            done
        done
        {
            printf '\n== %s hosts x %s tasks, %s; us/op (collsctl bench and mpi-bench, %s runs x %s ops, best run per process, max over processes)\n' \
                "$lh" "$lk" "$([ "$pin" = 1 ] && echo "all pinned to CPU 0" || echo unpinned)" "$RUNS" "$ITERS"
            python3 - "$f" <<'EOP'
import sys
rows = {}
for line in open(sys.argv[1]):
    w = line.split()
    if len(w) != 4:
        continue
    lab, op, n, us = w[0], w[1], int(w[2]), float(w[3])
    rows.setdefault((op, n), {})[lab] = us
print("%-10s %9s %10s %10s %10s %12s" % ("op", "bytes", "collsd", "Open MPI",
                                        "MPICH", "collsd/best"))
for (op, n) in sorted(rows, key=lambda k: (k[0], k[1])):
    r = rows[(op, n)]
    c, o, m = r.get("collsd"), r.get("openmpi"), r.get("mpich")
    best = min([x for x in (o, m) if x is not None], default=None)
    f = lambda x: "%10.1f" % x if x is not None else "%10s" % "-"
    ratio = "%11.2fx" % (c / best) if c and best else "%12s" % "-"
    print("%-10s %9d %s %s %s %s" % (op, n, f(c), f(o), f(m), ratio))
EOP
        } | tee -a "$OUT"
    done
done
if [ -s "$NS_RUN/mpi.err" ]; then
    echo "(MPI's stderr, last lines:)"
    tail -n 5 "$NS_RUN/mpi.err"
fi
[ "$FAILED" = 0 ]
