#!/bin/bash
# coll-fpc.sh -- FPC compression inside bcast (docs/collectives.md,
# "Compression") over three collsd daemons on 127.0.0.1.
#
# Every run is one coll-check --check fpc: hierarchical bcasts of doubles
# (smooth, random and special values: NaN payloads, -0.0, infinities,
# denormals), sizes 0, 1, 1009, 70001 and 140001 (more than one FPC block
# of 65536 doubles), roots 0 and P-1; every member's result is compared
# bytewise with the root's data, and colls_group_last_alg must carry
# "+fpc" exactly where compression applies (with on).  Segmented
# algorithms with small segments are forced in two runs so that compressed
# streams travel in several segments.  The counters of `collsctl stats`
# must show it: compressed operations for on, and for auto the decisions
# the data call for -- random data (which FPC cannot shrink) never
# compressed, smooth data compressed at the two large sizes at least.
#
# Last, members that disagree (on and off) must fail with ECOUNT (the
# lengths differ), not hang.
#
# AUTO's decision also depends on the link speed it assumes; the daemons
# here assume 1 Mbit/s (collsd --link-mbit, env COLLS_LINK_MBIT), slow
# enough that smooth data pays on any machine, and random data loses at
# any speed (its ratio is below 1), so nothing here depends on timing.
. "${top_srcdir:-.}/tests/integration/lib.sh"

CC=$IT_B/tests/integration/coll-check
[ -x "$CC" ] || {
    echo "SKIP: $CC not built" >&2
    exit 77
}
it_setup
export COLLS_LINK_MBIT=1
it_start 3 || exit 1
it_wait_hosts 3 || exit 1
NRUN=0

# run LAYOUT ARGS...: one coll-check over daemons 1..3 with LAYOUT
# ("n1,n2,n3" members per daemon).
run()
{
    local layout=$1 p=0 n rc
    shift
    for n in $(echo "$layout" | tr ',' ' '); do
        p=$((p + n))
    done
    NRUN=$((NRUN + 1))
    timeout 300 "$CC" -n "$p" --sockets "$(it_sock 1),$(it_sock 2),$(it_sock 3)" \
        --layout "$layout" --group "f$NRUN" --timeout-ms 60000 "$@" \
        >"$IT_DIR/cc-$NRUN.log" 2>&1
    rc=$?
    it_log "layout $layout (P=$p) $*: rc $rc"
    if [ "$rc" != 0 ]; then
        it_fail "coll-check layout $layout $* (rc $rc)"
        grep -m 10 'FAIL' "$IT_DIR/cc-$NRUN.log" >&2
        tail -n 3 "$IT_DIR/cc-$NRUN.log" >&2
    fi
}

# fpc_sum RE: sum of the stats fields matching RE over the three daemons.
fpc_sum()
{
    local i s=0
    for i in 1 2 3; do
        s=$((s + $(it_stat_sum "$i" "$1")))
    done
    echo "$s"
}

# on: P = 3..6 over 2 and 3 daemons, both placements, forced segments
ops0=$(fpc_sum 'fpc_ops')
run 1,1,1 --check fpc --compress on
run 2,2,0 --check fpc --compress on --placement rr
run 1,2,2 --check fpc --compress on --alg chain_seg:4096
run 2,2,2 --check fpc --compress on --alg binomial_seg:8192 --placement rr
# one host: nothing crosses a link, nothing is compressed ("+fpc" absent)
run 3,0,0 --check fpc --compress on
ops1=$(fpc_sum 'fpc_ops')
bad=$(fpc_sum 'fpc_bad_streams')
raw=$(fpc_sum 'fpc_raw_bytes')
comp=$(fpc_sum 'fpc_comp_bytes')
it_log "on: $((ops1 - ops0)) compressed bcast completions," \
    "$raw raw / $comp compressed bytes"
[ "$ops1" -gt "$ops0" ] || it_fail "on: fpc_ops did not grow ($ops0 -> $ops1)"
[ "$comp" -gt 0 ] && [ "$raw" -gt "$comp" ] ||
    it_fail "on: raw bytes $raw, compressed $comp"
[ "$bad" = 0 ] || it_fail "on: $bad bad streams"

# the bcast rows of the matrix with compression on: every algorithm forced,
# hierarchical and flat, all datatypes (only doubles are compressed)
run 1,2,0 --check matrix --ops bcast --level thin --compress on
run 2,1,1 --check matrix --ops bcast --level smoke --compress auto

# auto: random data is never compressed (8 bcasts of count > 0) ...
ac0=$(fpc_sum 'fpc_auto_compressed')
ar0=$(fpc_sum 'fpc_auto_raw')
run 2,1,1 --check fpc --compress auto --data random
ac1=$(fpc_sum 'fpc_auto_compressed')
ar1=$(fpc_sum 'fpc_auto_raw')
it_log "auto, random: $((ac1 - ac0)) compressed, $((ar1 - ar0)) raw"
[ "$ac1" = "$ac0" ] && [ $((ar1 - ar0)) = 8 ] ||
    it_fail "auto on random data: compressed +$((ac1 - ac0)), raw +$((ar1 - ar0)), want +0 and +8"
# ... smooth data is, at least at 70001 and 140001 items (both roots)
run 1,1,2 --check fpc --compress auto --data smooth
ac2=$(fpc_sum 'fpc_auto_compressed')
ar2=$(fpc_sum 'fpc_auto_raw')
it_log "auto, smooth: $((ac2 - ac1)) compressed, $((ar2 - ar1)) raw"
[ $((ac2 - ac1)) -ge 4 ] && [ $((ac2 - ac1 + ar2 - ar1)) = 8 ] ||
    it_fail "auto on smooth data: compressed +$((ac2 - ac1)), raw +$((ar2 - ar1))"
# special values under auto, whatever it decides
run 1,1,1 --check fpc --compress auto --data special

# members that disagree (on at rank 0 on daemon 1, off at rank 1 on
# daemon 2): the first bcast (root 0) meets a plain one and fails with
# ECOUNT at rank 1 instead of hanging; rank 0, the root, may finish first
# and then sees rank 1 gone
for m in 1 2; do
    c=on
    [ "$m" = 2 ] && c=off
    timeout 120 "$CC" --socket "$(it_sock "$m")" --group mism --size 2 \
        --check fpc --compress "$c" --data smooth --timeout-ms 60000 \
        >"$IT_DIR/mism-$m.log" 2>&1 &
    eval "mpid$m=\$!"
done
wait "$mpid1"
rc1=$?
wait "$mpid2"
rc2=$?
it_log "on vs off members: rc $rc1 and $rc2"
[ "$rc1" = 1 ] && [ "$rc2" = 1 ] ||
    it_fail "on vs off members: rc $rc1 and $rc2, want 1 and 1"
grep -q 'count=1 root=0 .*returned ECOUNT' "$IT_DIR/mism-2.log" ||
    it_fail "on vs off members: $(cat "$IT_DIR/mism-2.log")"

[ "$(fpc_sum 'fpc_bad_streams')" = 0 ] || it_fail "bad FPC streams"
for i in 1 2 3; do
    it_alive "$i" || it_fail "daemon $i died"
done
it_ctl 1 stats --json 2>/dev/null | grep -oE '"fpc_[a-z_]*" *: *[0-9.]+' >&2
it_finish
