#!/bin/bash
# coll-multihost.sh -- groups and collectives over four emulated hosts
# (network namespaces, one collsd each), checked by coll-check.
#
# Each host runs one coll-check in fork mode on its own daemon (its
# socket is in the host's private /tmp): k members there, all of them
# joining one group of P = sum of k.  Runs (hierarchical and flat, every
# algorithm; both placements unless one is named):
#   0 % loss   4 hosts x 1 task (thin), 4 x 2 (smoke), uneven 1+3+2+1
#              (smoke, round-robin), and two concurrent conc sets (4 x 1
#              each);
#   5 % loss   of incoming UDP on every host: 2+1+1+2 (smoke, contiguous)
#              and a conc set; the loss rule must have dropped something.
# (levels: see tests/integration/coll-check.c and coll-loopback.sh; the
# set is kept small so make check stays short in the sanitizer pass too.)
# Needs root (exit 77 otherwise); COLLS_QUICK=1 skips it (exit 77) so
# distcheck stays short.  Bounded: every run under timeout; the netns
# library tears everything down at exit.
. "${top_srcdir:-.}/tests/netns/lib.sh"

if [ "${COLLS_QUICK:-0}" = 1 ]; then
    echo "SKIP: COLLS_QUICK=1" >&2
    exit 77
fi
B=${top_builddir:-.}
B=$(cd "$B" && pwd -P)
CC=$B/tests/integration/coll-check
SOCK=/tmp/collsd/collsd.sock
N=4
NRUN=0
DOPTS="--heartbeat 100 --dead-after 3000 --request-timeout 4000"

mh_init "$B" "$SOCK" "$N" collsd collsctl tests/integration/coll-check
for i in $(seq 1 $N); do
    mh_daemon "$i" $DOPTS
done

wait_up()
{
    mh_wait_up "$1" "$2" && return 0
    fail "host $1 does not see $2 hosts up"
    return 1
}

for i in $(seq 1 $N); do
    wait_up "$i" $N || exit 1
done

# run LAYOUT ARGS...: LAYOUT "k1,k2,k3,k4" members per host (0: none);
# the other arguments go to every coll-check.  The group is gN, or
# $RUN_NAME (runs started in the background at the same time).
run()
{
    local layout=$1 p=0 k i=0 pids="" t0 rc=0 name
    shift
    NRUN=$((NRUN + 1))
    name=${RUN_NAME:-g$NRUN}
    for k in $(echo "$layout" | tr ',' ' '); do
        p=$((p + k))
    done
    t0=$(date +%s)
    for k in $(echo "$layout" | tr ',' ' '); do
        i=$((i + 1))
        [ "$k" -gt 0 ] || continue
        host_bg "$i" "cc-$name-h$i.log" timeout 600 "$CC" -n "$k" \
            --sockets "$SOCK" --size "$p" --group "$name" \
            --timeout-ms 120000 "$@"
        pids="$pids $NS_LASTPID"
    done
    for k in $pids; do
        wait "$k" || rc=1
    done
    ns_log "layout $layout (P=$p) $*: rc $rc, $(($(date +%s) - t0)) s"
    if [ "$rc" != 0 ]; then
        fail "layout $layout $*"
        grep -h -m 5 FAIL "$NS_RUN"/cc-"$name"-h*.log >&2
    fi
    grep -h 'passed' "$NS_RUN"/cc-"$name"-h*.log >&2
    return $rc
}

run 1,1,1,1 --level thin
run 2,2,2,2 --level smoke
run 1,3,2,1 --level smoke --placement rr
RUN_NAME=conc1 run 1,1,1,1 --check conc --iters 200 &
c1=$!
RUN_NAME=conc2 run 1,1,1,1 --check conc --iters 200 --seed 7 &
c2=$!
wait "$c1" || FAILED=$((FAILED + 1))
wait "$c2" || FAILED=$((FAILED + 1))

for i in $(seq 1 $N); do
    ns_loss "$i" 5
done
run 2,1,1,2 --level smoke --placement contig
run 2,1,1,2 --check conc --iters 100
drops=0
for i in $(seq 1 $N); do
    drops=$((drops + $(ns_loss_drops "$i")))
    ns_loss "$i" 0
done
ns_log "5 % loss: $drops datagrams dropped"
[ "$drops" -gt 0 ] || fail "the loss rule dropped nothing"

for i in $(seq 1 $N); do
    wait_up "$i" $N || true
done
if [ "$FAILED" != 0 ]; then
    for i in $(seq 1 $N); do
        echo "---- host $i daemon log (last 20 lines)" >&2
        tail -n 20 "$NS_RUN/d$i.log" >&2
    done
    ns_log "$FAILED failure(s)"
    exit 1
fi
ns_log "passed"
exit 0
