#!/bin/bash
# coll-loopback.sh -- groups and collectives over five collsd daemons on
# 127.0.0.1, checked by coll-check against its serial reference.
#
# Every run below is one coll-check -n P --sockets ... --layout ...: P
# member tasks, layout[i] of them on daemon i, a group per placement
# (contiguous and round-robin, except where noted), every operation x
# every algorithm of the daemon's tables x sizes 0, 1, 1009, 70001 x
# roots 0 and P-1, each in hierarchical and flat mode, results compared
# bytewise with the reference and with each other, the reported
# algorithm checked (forced one, or a fallback where it cannot run).
#
# The choice of layouts (the machine has 2 shared cores; the script must
# stay near a minute in a plain build and a few minutes with sanitizers,
# and well under a minute with COLLS_QUICK=1):
#   level full  (both placements; 11 datatypes at 1009 items; int32,
#               double and uint8 with every valid operator at 1 item):
#               P = 1; 2 hosts x 4 tasks (P = 8, the common hierarchical
#               case); uneven 1+2+4 (P = 7: non-power-of-two leaders,
#               local groups of 1, 2 and 4)
#   level thin  (one placement, alternating; at 1 item int32 prod and
#               lxor, double min, uint8 band; at 1009 double sum and int32
#               max; double sum at 70001): P hosts x 1 task for
#               P = 2..5, 2 + 1 (P = 3), 3 x 3 (P = 9), and 1 host x 4
#               tasks (placement makes no difference there; 1 host x P is
#               also the local phase of every hierarchical run above)
#   level smoke (int32 or double sum; 0, 1009 and 70001 items; default and
#               each forced algorithm, segmented ones at their default
#               segment): the thin runs in COLLS_QUICK mode, where the full
#               runs become thin and 1 host x P is left out.
# Every run checks hierarchical and flat mode and every algorithm; what
# shrinks is the datatype/operator product and the placements.
# Then concurrency: two coll-check --check conc instances at once (4 and 5
# members over all daemons), each process alternating 200 collectives
# between two groups of its own, inputs salted by group and iteration.
# Finally no task may be left attached and every daemon must be up.
# The daemons share a cluster key and encrypt (--encrypt) every datagram.
. "${top_srcdir:-.}/tests/integration/lib.sh"

CC=$IT_B/tests/integration/coll-check
[ -x "$CC" ] || {
    echo "SKIP: $CC not built" >&2
    exit 77
}
it_setup
KEY=$(it_keygen) || it_fail "collsctl keygen failed"
it_start 5 --key-file "$KEY" --encrypt || exit 1
it_wait_hosts 5 || exit 1

FULL=full
THIN=thin
if [ "${COLLS_QUICK:-0}" = 1 ]; then
    FULL=thin
    THIN=smoke
fi
NRUN=0

# run LEVEL LAYOUT [PLACEMENT]: LAYOUT is "n1,n2,..." tasks on daemons
# 1, 2, ...; one coll-check run, bounded in time.
run()
{
    local level=$1 layout=$2 place=${3:-both} socks="" p=0 i=0 n t0 rc
    for n in $(echo "$layout" | tr ',' ' '); do
        i=$((i + 1))
        p=$((p + n))
        socks="$socks${socks:+,}$(it_sock "$i")"
    done
    NRUN=$((NRUN + 1))
    t0=$(date +%s)
    timeout 600 "$CC" -n "$p" --sockets "$socks" --layout "$layout" \
        --group "m$NRUN" --level "$level" --placement "$place" \
        --timeout-ms "${TMO:-60000}" >"$IT_DIR/cc-$NRUN.log" 2>&1
    rc=$?
    it_log "layout $layout (P=$p) level $level placement $place:" \
        "rc $rc, $(($(date +%s) - t0)) s"
    if [ "$rc" != 0 ]; then
        it_fail "coll-check layout $layout level $level (rc $rc)"
        grep -m 10 'FAIL' "$IT_DIR/cc-$NRUN.log" >&2
        tail -n 5 "$IT_DIR/cc-$NRUN.log" >&2
    fi
}

run "$FULL" 1
run "$FULL" 4,4
run "$FULL" 1,2,4
# Without a time limit, large inputs and results go by single copy
# (process_vm_readv/writev: docs/protocol.md); with one they never do.
# cma_sum NAME: that counter of collsctl stats, summed over daemons 1-3.
cma_sum()
{
    local s=0 i v
    for i in 1 2 3; do
        v=$(it_ctl "$i" stats --json | grep -oE "\"$1\": *[0-9]+" |
            grep -oE '[0-9]+$')
        s=$((s + ${v:-0}))
    done
    echo "$s"
}
[ "$(cma_sum cma_bytes_in)$(cma_sum cma_bytes_out)" = 00 ] ||
    it_fail "calls with a time limit used single copy"
TMO=-1 run "$THIN" 4,4
TMO=-1 run "$THIN" 1,2,4 rr
[ "$(cma_sum cma_bytes_in)" -gt 0 ] && [ "$(cma_sum cma_bytes_out)" -gt 0 ] ||
    it_fail "no single copy without a time limit: $(cma_sum cma_tasks) tasks"
it_log "single copy: $(cma_sum cma_bytes_in) bytes in," \
    "$(cma_sum cma_bytes_out) out, $(cma_sum cma_failed) failed"
run "$THIN" 1,1 rr
run "$THIN" 1,1,1 contig
run "$THIN" 1,1,1,1 rr
run "$THIN" 1,1,1,1,1 contig
run "$THIN" 2,1 rr
run "$THIN" 3,3,3 rr
if [ "${COLLS_QUICK:-0}" != 1 ]; then
    run "$THIN" 4 contig
fi

# Concurrency: two sets of processes, each alternating two groups.
all="$(it_sock 1),$(it_sock 2),$(it_sock 3),$(it_sock 4),$(it_sock 5)"
it_bg conc1.log timeout 300 "$CC" -n 4 --sockets "$all" --layout 1,1,1,1,0 \
    --group conc1 --check conc --iters 200 --timeout-ms 60000
c1=$IT_LASTPID
it_bg conc2.log timeout 300 "$CC" -n 5 --sockets "$all" --layout 2,0,1,0,2 \
    --group conc2 --check conc --iters 200 --timeout-ms 60000 --seed 99
c2=$IT_LASTPID
it_wait "$c1" 300 || it_fail "concurrent set 1: $(grep -m 3 FAIL \
    "$IT_DIR/conc1.log")"
it_wait "$c2" 300 || it_fail "concurrent set 2: $(grep -m 3 FAIL \
    "$IT_DIR/conc2.log")"
grep -h 'passed' "$IT_DIR/conc1.log" "$IT_DIR/conc2.log" >&2

for i in 1 2 3 4 5; do
    it_alive "$i" || it_fail "daemon $i died"
done
left=""
for _ in $(seq 1 50); do
    left=$(it_ctl 1 ps -a | grep -v '^TID\|this collsctl')
    [ -z "$left" ] && break
    sleep 0.1
done
[ -z "$left" ] || it_fail "tasks left attached: $left"
it_ctl 1 groups >&2 || true
it_finish
