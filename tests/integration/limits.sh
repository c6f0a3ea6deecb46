#!/bin/bash
# limits.sh -- bounded daemon memory and end-to-end flow control
# (docs/protocol.md, "Memory bounds" and "Flow control").  Two collsd on
# loopback with small limits: --task-queue-max 256 KiB, --task-credit
# 256 KiB, --task-queue-limit 1 MiB.
#
# 1. Tasks that ask and never read, all at once on daemon 1 for a few
#    seconds (limits-check hog): one floods STATS_REQ, one sends DATA to
#    itself, one floods echoes (DATA to its daemon's tid).  Meanwhile a
#    p2p check (coordinator and a worker on daemon 1, a worker on daemon
#    2) exchanges checked messages.  Daemon 1's RSS, sampled throughout,
#    stays under the bound of docs/protocol.md for these limits plus its
#    RSS before; each hog was slowed to a trickle (its daemon stopped
#    reading it) and then got every answer, in order; the p2p check
#    passed; nobody was closed.
# 2. A fast sender and a slow reader on two daemons: a raw task on daemon
#    2 reads nothing for a while, a raw task on daemon 1 sends it 64 MiB
#    in 64 KiB messages with blocking writes.  The sender blocks (it has
#    not written everything after 5 s, daemon 1 counted credit holds);
#    daemon 2's RSS stays within a credit window and a task queue of
#    where it was; then the reader reads all 64 MiB in order and intact,
#    and the sender sees neither SEND_FAILED nor ERROR, only the reader's
#    TASK_EXIT at the end.  The same with a libcolls reader, and with the
#    sender on the reader's daemon (paused on the reader's queue).
# 3. A group of four tasks (two per daemon) runs checked collectives whose
#    results are larger than --task-queue-max (coll-check smoke): the
#    limit slows, it never fails them.
. "${top_srcdir:-.}/tests/integration/lib.sh"

LC=$IT_B/tests/integration/limits-check
CC=$IT_B/tests/integration/coll-check
[ -x "$LC" ] && [ -x "$CC" ] && [ -x "$IT_B/tests/integration/p2p-check" ] || {
    echo "SKIP: limits-check, coll-check or p2p-check not built" >&2
    exit 77
}
QMAX=$((256 << 10))
CREDIT=$((256 << 10))
QLIMIT=$((1 << 20))
SENT=$((64 << 20))
MSG=$((64 << 10))
HOG_S=4
# Freed messages must not pile up in AddressSanitizer's quarantine (256 MiB
# by default): the RSS check is about the daemon's own memory.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4"

it_setup
it_start 2 --task-queue-max "$QMAX" --task-credit "$CREDIT" \
    --task-queue-limit "$QLIMIT" || exit 1
it_wait_hosts 2 || exit 1

# Resident KiB of daemon I.
rss()
{
    awk '/^VmRSS:/ { print $2 }' "/proc/$(it_pid "$1")/status"
}

# Samples daemon I's RSS every 50 ms into FILE (its maximum, KiB) until
# FILE.stop exists.
rss_watch()
{
    local i=$1 f=$2 max=0 r
    while [ ! -e "$f.stop" ]; do
        r=$(rss "$i") || break
        [ "$r" -gt "$max" ] && max=$r && echo "$max" >"$f"
        sleep 0.05
    done
}

# The bound of docs/protocol.md ("Memory bounds") for T tasks on a
# daemon of H hosts with the limits above and frames of at most F bytes,
# in KiB, on top of the daemon's RSS before (M0):
#   T (Q + 4F + 128 KiB + (H - 1)(W + F)) + (H - 1)(L + T F + 2 N U + F) + P
# with N = 1024 datagrams of U = 1472 bytes.  SLACK_KIB covers the
# allocator's fragmentation and libevent: it is not a function of the
# traffic (without the bounds, the hogs alone grow a daemon by hundreds
# of MiB in a few seconds).
# P, the pLogP measurement's memory, is the quick ladder's (the daemons
# measure each other a second after they come up, during part 1):
# 3 x 2 MiB of trains and 2 x 64 KiB of echo.  Measured under ASan
# (quarantine 4 MiB): daemon 1 peaked 8 MiB higher with --measure than
# without (26.7 MiB), 1.7 MiB under the bound with 4.2 MiB for P.
SLACK_KIB=$((8 << 10))
MEASURE_KIB=$((3 * 2048 + 2 * 64))
bound_kib()
{
    local t=$1 h=$2 f=$3
    echo $(((t * (QMAX + 4 * f + (128 << 10) + (h - 1) * (CREDIT + f)) +
        (h - 1) * (QLIMIT + t * f + 2 * 1024 * 1472 + f)) / 1024 + SLACK_KIB +
        MEASURE_KIB))
}

# ---- 1. tasks that never read, on daemon 1 ---------------------------------

base1=$(rss 1)
rm -f "$IT_DIR/rss1" "$IT_DIR/rss1.stop"
rss_watch 1 "$IT_DIR/rss1" &
watcher=$!
P2P_OPTS="--quick --routes default --timeout-ms 60000" \
    it_p2p_start pair 1 1 2
hogs=""
for what in stats self echo; do
    it_bg "hog-$what.log" timeout 120 "$LC" --mode hog --what "$what" \
        --socket "$(it_sock 1)" --seconds "$HOG_S" --msg-size 4096
    hogs="$hogs $IT_LASTPID"
done
for p in $hogs; do
    it_wait "$p" 120 || it_fail "a hog failed"
done
it_p2p_wait pair || true
: >"$IT_DIR/rss1.stop"
wait "$watcher"
cat "$IT_DIR"/hog-*.log >&2
peak1=$(cat "$IT_DIR/rss1" 2>/dev/null || echo 0)
# 3 hogs + the p2p coordinator and worker on daemon 1 (+1 spare).
b1=$(bound_kib 6 2 $((MSG + 1024)))
it_log "daemon 1: RSS ${base1} KiB before the hogs, peak ${peak1} KiB;" \
    "bound ${base1} + ${b1} KiB"
[ "$peak1" -gt 0 ] && [ "$peak1" -le $((base1 + b1)) ] ||
    it_fail "daemon 1 peaked at ${peak1} KiB, over ${base1} + ${b1} KiB"
for what in stats self echo; do
    # Answered all it asked; in its last second it got little through.
    line=$(grep "^hog $what:" "$IT_DIR/hog-$what.log")
    read -r k last got <<<"$(echo "$line" |
        sed -n 's/.*: \([0-9]*\) written.*(\([0-9]*\) in the last second), \([0-9]*\) answered/\1 \2 \3/p')"
    [ -n "$k" ] && [ "$k" = "$got" ] && [ "$last" -le $((k / 2)) ] ||
        it_fail "hog $what: '$line'"
done
[ "$(it_stat_sum 1 pauses)" -gt 0 ] || it_fail "daemon 1 paused no task"

# ---- 2. a fast sender and a slow reader on two daemons ---------------------

# Starts the slow reader MODE (slow or slowlib) on daemon 2 and a flood
# towards it from daemon S (default 1); checks the sender is held back
# (daemon 1 counted credit holds, or, from daemon 2 itself, pauses) and
# daemon 2's memory bounded; then lets the reader read and checks all
# arrived.
slow_reader()
{
    local mode=$1 s=${2:-1} base2 peak2 slow flood holds0 b2 what
    what=credit_holds
    [ "$s" = 2 ] && what=pauses
    rm -f "$IT_DIR/go" "$IT_DIR/$mode.tid" "$IT_DIR/rss2" "$IT_DIR/rss2.stop"
    base2=$(rss 2)
    holds0=$(it_stat_sum "$s" "$what")
    rss_watch 2 "$IT_DIR/rss2" &
    watcher=$!
    it_bg "$mode.log" timeout 120 "$LC" --mode "$mode" --socket "$(it_sock 2)" \
        --tidfile "$IT_DIR/$mode.tid" --go "$IT_DIR/go" --bytes "$SENT" \
        --msg-size "$MSG"
    slow=$IT_LASTPID
    it_bg "flood-$mode.log" timeout 120 "$LC" --mode flood \
        --socket "$(it_sock "$s")" --peer "$IT_DIR/$mode.tid" \
        --bytes "$SENT" --msg-size "$MSG"
    flood=$IT_LASTPID
    sleep 5
    # The flood prints its count once it has written everything.
    ! grep -q 'messages' "$IT_DIR/flood-$mode.log" ||
        it_fail "$mode: the sender was not held back: $(cat "$IT_DIR/flood-$mode.log")"
    [ "$(it_stat_sum "$s" "$what")" -gt "$holds0" ] ||
        it_fail "$mode: daemon $s counted no $what"
    : >"$IT_DIR/go"
    it_wait "$slow" 120 || it_fail "$mode reader: $(cat "$IT_DIR/$mode.log")"
    it_wait "$flood" 120 ||
        it_fail "$mode sender: $(cat "$IT_DIR/flood-$mode.log")"
    : >"$IT_DIR/rss2.stop"
    wait "$watcher"
    cat "$IT_DIR/flood-$mode.log" "$IT_DIR/$mode.log" >&2
    grep -q "^$mode: [0-9]* messages $SENT bytes in order" "$IT_DIR/$mode.log" ||
        it_fail "$mode: the reader did not get all $SENT bytes in order"
    peak2=$(cat "$IT_DIR/rss2" 2>/dev/null || echo 0)
    b2=$(bound_kib 3 2 $((MSG + 1024)))
    it_log "daemon 2 ($mode): RSS ${base2} KiB before, peak ${peak2} KiB;" \
        "bound ${base2} + ${b2} KiB; $((SENT >> 10)) KiB sent"
    [ "$peak2" -gt 0 ] && [ "$peak2" -le $((base2 + b2)) ] ||
        it_fail "$mode: daemon 2 peaked at ${peak2} KiB"
}

slow_reader slow
slow_reader slowlib
slow_reader slow 2 # the sender on the reader's daemon
for i in 1 2; do
    [ "$(it_stat_sum "$i" send_failed)" = 0 ] ||
        it_fail "daemon $i counted failed sends"
done
if grep -q 'ENOBUFS\|exits: error' "$IT_DIR"/d*.log; then
    it_fail "a task was closed for being slow"
fi

# ---- 3. a task that never reads while tasks come and go -----------------
# Every task exit is announced to every task.  To one over its queue limit
# the notices are not queued but kept once in the daemon's ring of the
# last 4096 (task.c): the daemon stays within the bound however many
# tasks exit, and the task gets, once it reads, what it missed up to the
# ring's size; what lagged further is counted lost, never silently.
CHURN=50000
rm -f "$IT_DIR/deaf.go" "$IT_DIR/rss3" "$IT_DIR/rss3.stop"
base3=$(rss 1)
lost0=$(it_stat_sum 1 notices_lost)
it_bg deaf.log timeout 300 "$LC" --mode deaf --socket "$(it_sock 1)" \
    --go "$IT_DIR/deaf.go"
deaf=$IT_LASTPID
sleep 0.3
rss_watch 1 "$IT_DIR/rss3" &
watcher=$!
timeout 300 "$LC" --mode churn --socket "$(it_sock 1)" --count "$CHURN" \
    >"$IT_DIR/churn.log" 2>&1 || it_fail "churn: $(cat "$IT_DIR/churn.log")"
: >"$IT_DIR/rss3.stop"
wait "$watcher"
: >"$IT_DIR/deaf.go"
it_wait "$deaf" 120 || it_fail "the deaf task failed: $(cat "$IT_DIR/deaf.log")"
lost=$(($(it_stat_sum 1 notices_lost) - lost0))
got=$(sed -n 's/^deaf: \([0-9]*\) task-exit notices$/\1/p' "$IT_DIR/deaf.log")
peak3=$(cat "$IT_DIR/rss3" 2>/dev/null || echo 0)
b3=$(bound_kib 3 2 $((MSG + 1024)))
it_log "task exits: $CHURN; the deaf task got ${got:-?}, ${lost} counted" \
    "lost; daemon 1 RSS ${base3} KiB before, peak ${peak3} KiB, bound" \
    "${base3} + ${b3} KiB"
[ -n "$got" ] && [ "$got" -ge 4096 ] && [ $((got + lost)) -ge "$CHURN" ] ||
    it_fail "task-exit notices: $CHURN exits, ${got:-?} got, $lost lost"
[ "$lost" -gt 0 ] || it_fail "$CHURN exits fitted the queue and the ring"
[ "$peak3" -le $((base3 + b3)) ] ||
    it_fail "daemon 1 peaked at ${peak3} KiB, over ${base3} + ${b3} KiB"
grep -q "notices lost" "$IT_DIR/d1.log" || it_fail "the loss was not logged"

# ---- 4. collectives larger than the task queue limit -----------------------

out=$(timeout 120 "$CC" -n 4 --sockets "$(it_sock 1),$(it_sock 2)" \
    --layout 2,2 --group limits --level smoke --timeout-ms 60000 2>&1) ||
    it_fail "collectives: $(echo "$out" | tail -n 5)"
echo "$out" | tail -n 1 >&2
for i in 1 2; do
    it_alive "$i" || it_fail "daemon $i died"
done
it_finish
