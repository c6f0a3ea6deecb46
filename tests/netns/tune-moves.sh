#!/bin/bash
# tune-moves.sh -- a link that changes speed is measured again (#13;
# docs/collectives.md "Measuring the network", "When"): two emulated
# hosts measure each other unshaped on start; then host 2's link is
# shaped to 10 Mbit/s both ways, which leaves the round trip of small
# messages about where it was, and a bcast of 256 KiB through the daemons
# runs for about half a minute.  Checked:
# 1. a daemon logs that it measures host 1 or 2 again, with a delivery
#    rate at most half the one the peer's row gives a stream
#    (plogp_rate_moved; bw_bps in collsctl stats is that estimate);
# 2. a new summary follows once the link is quiet again (the check waits
#    for a quiet look, since a stream's queue would time its probes), and
#    its gap(64 KiB) is at least 10 times the first one's (a 10 Mbit/s
#    link carries 64 KiB in about 57 ms; unshaped, tens of us).
# Needs root (exit 77 otherwise).  About a minute; every step bounded.
. "${top_srcdir:-.}/tests/netns/lib.sh"

B=${top_builddir:-.}
B=$(cd "$B" && pwd -P)
SOCK=/tmp/collsd/collsd.sock
N=2

mh_init "$B" "$SOCK" "$N" collsd collsctl
for i in 1 2; do
    mh_daemon "$i" --heartbeat 100 --dead-after 3000
done
for i in 1 2; do
    mh_wait_up "$i" $N || fail "host $i does not see $N hosts up"
done
mh_wait_measured $N || fail "the start measurements do not end"

# epoch_gap64: "EPOCH GAP" of the summary in force on host 1
epoch_gap64()
{
    mh_ctl 1 tune --params | awk '
        /^machine, epoch/ { e = $3; sub(":", "", e); m = 1; next }
        /^$/ { m = 0 }
        m && $1 == 65536 { print e, $3; exit }'
}
read -r e0 gap0 <<<"$(epoch_gap64)"
[ -n "$gap0" ] || fail "no summary with 64 KiB after the start measurements"
echo "epoch $e0: gap(64 KiB) $gap0 us"

ns_link 2 10mbit
g=bulk$RANDOM
pids=""
for k in 1 2; do
    host_bg "$k" "$g-$k.log" timeout 120 "$B/collsctl" --socket "$SOCK" \
        bench bcast --hier --sizes 262144:262144 --iters 20 --runs 8 \
        --group "$g" -n 2
    pids="$pids $NS_LASTPID"
done
mh_ctl 1 stats --json | grep -q '"bw_bps"' ||
    fail "collsctl stats shows no bw_bps"

# the bulk takes about 35 s; the check waits for a quiet look after it
# (10 s apart), and a measurement that fails is tried again 30 s later
new=""
for _ in $(seq 1 240); do
    sleep 1
    read -r e1 gap1 <<<"$(epoch_gap64)"
    [ "${e1:-0}" -gt "$e0" ] && new=1 && break
done
for k in $pids; do
    wait "$k" || fail "the bulk bcast failed: $(tail -3 "$NS_RUN/$g-1.log")"
done
# what the daemons said about measuring, for the log
grep -h "pLogP\|measur\|parameters" "$NS_RUN"/d1.log "$NS_RUN"/d2.log

# 1. the move, seen in the delivery rate
line=$(grep -h "measuring again" "$NS_RUN"/d1.log "$NS_RUN"/d2.log | head -1)
[ -n "$line" ] || fail "no daemon measured again after the link slowed"
echo "$line"
echo "$line" | sed -n 's/.*delivery rate \([0-9.]*\) MB\/s (\([0-9.]*\)).*/\1 \2/p' |
    awk '{ exit !(NF == 2 && $1 > 0 && 2 * $1 <= $2) }' ||
    fail "the delivery rate logged is not half the row's: $line"
echo "ok: the slower link was seen in the delivery rate"

# 2. the new summary
[ -n "$new" ] || fail "no new summary 4 min after the link slowed"
echo "epoch $e1: gap(64 KiB) $gap1 us"
awk -v a="$gap0" -v b="$gap1" 'BEGIN { exit !(b >= 10 * a) }' ||
    fail "gap(64 KiB) $gap0 -> $gap1 us: the new summary is not the slow link's"
echo "ok: measured again, epoch $e0 -> $e1"
ns_finish
