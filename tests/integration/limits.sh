#!/bin/bash
# limits.sh -- --task-queue-max: a task that stops reading messages from
# another daemon is closed, and nothing else suffers.  Two collsd on
# loopback, both with a 256 KiB cap:
#   * a task on daemon 2 attaches and reads nothing (limits-check slow);
#   * a task on daemon 1 sends it 64 MiB in 64 KiB messages, all of them
#     (limits-check flood, raw protocol: it does not stop at the exit);
#   * meanwhile a pair of tasks, one on each daemon, exchanges checked
#     messages (p2p-check, default route only);
# then: daemon 2 counted the overflow (task_overflows, log line); its peak
# RSS grew by well under what was sent; the slow task, once it reads,
# gets the messages that were already in its socket, in order and intact,
# then ERROR COLLS_ENOBUFS, then EOF; the sender got the slow task's
# TASK_EXIT and SEND_FAILED COLLS_EPEERDEAD; the pair passed.  Last, a
# group of four tasks (two per daemon) runs checked collectives whose
# results are larger than the cap (coll-check smoke: up to 70001
# doubles), which the cap does not count: no other overflow.  In
# between, the same overflow with a libcolls task (limits-check slowlib):
# its colls_recv() returns the queued messages, then COLLS_ENOBUFS.
. "${top_srcdir:-.}/tests/integration/lib.sh"

LC=$IT_B/tests/integration/limits-check
CC=$IT_B/tests/integration/coll-check
[ -x "$LC" ] && [ -x "$CC" ] && [ -x "$IT_B/tests/integration/p2p-check" ] || {
    echo "SKIP: limits-check, coll-check or p2p-check not built" >&2
    exit 77
}
CAP=$((256 << 10))
SENT=$((64 << 20))
MSG=$((64 << 10))
# Freed messages must not pile up in AddressSanitizer's quarantine (256 MiB
# by default): the RSS check is about the daemon's own memory.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4"

it_setup
it_start 2 --task-queue-max "$CAP" || exit 1
it_wait_hosts 2 || exit 1

# Resident and peak resident KiB of daemon I ("VmRSS VmHWM").
mem()
{
    awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { print r, h }' \
        "/proc/$(it_pid "$1")/status"
}

rss_before=$(mem 2 | awk '{ print $1 }')
it_bg slow.log timeout 120 "$LC" --mode slow --socket "$(it_sock 2)" \
    --tidfile "$IT_DIR/slow.tid" --go "$IT_DIR/go"
slow=$IT_LASTPID
P2P_OPTS="--quick --routes default --timeout-ms 60000" \
    it_p2p_start pair 1 1 2
it_bg flood.log timeout 120 "$LC" --mode flood --socket "$(it_sock 1)" \
    --peer "$IT_DIR/slow.tid" --bytes "$SENT" --msg-size "$MSG"
flood=$IT_LASTPID

# Waits (60 s at most) until daemon 2 has counted N overflows -- before
# the slow task reads anything --, lets the slow task read, and waits for
# it and the flood (logs FLOOD_LOG and SLOW_LOG).
overflow_then_read()
{
    local n=0
    while [ "$(it_stat_sum 2 task_overflows)" -lt "$1" ]; do
        n=$((n + 1))
        if [ "$n" -gt 600 ]; then
            it_fail "daemon 2 counted no overflow number $1"
            break
        fi
        sleep 0.1
    done
    : >"$IT_DIR/go"
    it_wait "$flood" 120 || it_fail "flood: $(cat "$IT_DIR/$2")"
    it_wait "$slow" 120 || it_fail "slow task: $(cat "$IT_DIR/$3")"
}

overflow_then_read 1 flood.log slow.log
it_p2p_wait pair || true
cat "$IT_DIR/flood.log" "$IT_DIR/slow.log" >&2

overflows=$(it_stat_sum 2 task_overflows)
[ "$overflows" = 1 ] || it_fail "daemon 2 counted $overflows overflows, not 1"
grep -q 'would exceed --task-queue-max' "$IT_DIR/d2.log" ||
    it_fail "daemon 2 logged no overflow"

grep -q "^flood: [0-9]* messages $SENT bytes" "$IT_DIR/flood.log" ||
    it_fail "the flood did not send all $SENT bytes"
# The slow task got a prefix of the flood, less than was sent.
got=$(sed -n 's/^slow: [0-9]* messages \([0-9]*\) bytes.*/\1/p' \
    "$IT_DIR/slow.log")
[ -n "$got" ] && [ "$got" -lt "$SENT" ] ||
    it_fail "slow task received '$got' of $SENT bytes"

# Daemon 2's memory: without the cap it would have held most of SENT.
read -r rss hwm <<<"$(mem 2)"
it_log "daemon 2: RSS ${rss_before} KiB before, peak ${hwm} KiB, now ${rss} KiB;" \
    "sent $((SENT >> 10)) KiB, cap $((CAP >> 10)) KiB"
[ $((hwm - rss_before)) -lt $((SENT / 2 >> 10)) ] ||
    it_fail "daemon 2 grew by $((hwm - rss_before)) KiB for" \
        "$((SENT >> 10)) KiB sent"

# The same through libcolls: the slow task's colls_recv() gets the
# messages that made it, then fails with the daemon's reason.
rm -f "$IT_DIR/go"
it_bg slowlib.log timeout 120 "$LC" --mode slowlib --socket "$(it_sock 2)" \
    --tidfile "$IT_DIR/slowlib.tid" --go "$IT_DIR/go" --msg-size "$MSG"
slow=$IT_LASTPID
it_bg flood2.log timeout 120 "$LC" --mode flood --socket "$(it_sock 1)" \
    --peer "$IT_DIR/slowlib.tid" --bytes "$SENT" --msg-size "$MSG"
flood=$IT_LASTPID
overflow_then_read 2 flood2.log slowlib.log
cat "$IT_DIR/slowlib.log" >&2
grep -q '^slowlib: .* then COLLS_ENOBUFS$' "$IT_DIR/slowlib.log" ||
    it_fail "the libcolls task did not see COLLS_ENOBUFS"

# Collective results larger than the cap do not count against it.
out=$(timeout 120 "$CC" -n 4 --sockets "$(it_sock 1),$(it_sock 2)" \
    --layout 2,2 --group limits --level smoke --timeout-ms 60000 2>&1) ||
    it_fail "collectives: $(echo "$out" | tail -n 5)"
echo "$out" | tail -n 1 >&2
[ "$(it_stat_sum 2 task_overflows)" = 2 ] &&
    [ "$(it_stat_sum 1 task_overflows)" = 0 ] ||
    it_fail "overflows counted during the collectives"
for i in 1 2; do
    it_alive "$i" || it_fail "daemon $i died"
done
it_finish
