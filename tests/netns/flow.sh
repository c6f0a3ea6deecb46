#!/bin/bash
# flow.sh -- end-to-end flow control between emulated hosts (network
# namespaces), docs/protocol.md "Flow control".
#
# Two hosts, host 1's egress shaped to 200 Mbit/s and 5 % of the UDP
# arriving at host 2 dropped; both daemons with --task-credit,
# --task-queue-max and --task-queue-limit of 1 MiB.  A raw task on host 2
# reads nothing for 6 s while a raw task on host 1 writes 64 MiB to it
# in 64 KiB messages with blocking writes (limits-check slow / flood):
#   * the sender is held back (it has not written everything after 6 s;
#     host 1 counted credit holds);
#   * host 2's daemon grows by less than a credit window, a task queue
#     and its transport windows (its VmRSS sampled throughout);
#   * then the reader reads all 64 MiB, in order and intact; the sender
#     gets no SEND_FAILED or ERROR, only the reader's TASK_EXIT at the
#     end; nobody is closed, no host goes down.
# Needs root (exit 77 otherwise).  Bounded: every step runs under timeout.
. "${top_srcdir:-.}/tests/netns/lib.sh"

# Freed messages must not pile up in AddressSanitizer's quarantine (256 MiB
# by default): the RSS check is about the daemon's own memory.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4"

B=${top_builddir:-.}
B=$(cd "$B" && pwd -P)
LC=$B/tests/integration/limits-check
SOCK=/tmp/collsd/collsd.sock
SENT=$((64 << 20))
MSG=$((64 << 10))
CREDIT=$((1 << 20))
QMAX=$((1 << 20))
QLIMIT=$((1 << 20))
DOPTS="--heartbeat 100 --dead-after 3000 --request-timeout 2000 \
--task-credit $CREDIT --task-queue-max $QMAX --task-queue-limit $QLIMIT"

mh_init "$B" "$SOCK" 2 collsd collsctl tests/integration/limits-check
for i in 1 2; do
    # shellcheck disable=SC2086
    mh_daemon "$i" $DOPTS
    eval "DPID_$i=$NS_LASTPID"
done
for i in 1 2; do
    mh_wait_up "$i" 2 || fail "host $i does not see 2 hosts up"
done
ns_limit 1 200mbit
ns_loss 2 5

rss()
{
    awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

base=$(rss "$DPID_2")
host_bg 2 slow.log timeout 180 "$LC" --mode slow --socket "$SOCK" \
    --tidfile "$NS_RUN/slow.tid" --go "$NS_RUN/go" --bytes "$SENT" \
    --timeout-ms 120000
slow=$NS_LASTPID
host_bg 1 flood.log timeout 180 "$LC" --mode flood --socket "$SOCK" \
    --peer "$NS_RUN/slow.tid" --bytes "$SENT" --msg-size "$MSG" \
    --timeout-ms 120000
flood=$NS_LASTPID
peak=0
for _ in $(seq 1 60); do
    r=$(rss "$DPID_2")
    [ "$r" -gt "$peak" ] && peak=$r
    sleep 0.1
done
# The flood prints its count once it has written everything.
! grep -q 'messages' "$NS_RUN/flood.log" || fail "the sender was not held back"
holds=$(mh_ctl 1 stats --json | grep -o '"credit_holds": *[0-9]*' |
    grep -o '[0-9]*$')
[ "${holds:-0}" -gt 0 ] || fail "host 1 held nothing for credit"
: >"$NS_RUN/go"
while kill -0 "$slow" 2>/dev/null; do
    r=$(rss "$DPID_2")
    [ "$r" -gt "$peak" ] && peak=$r
    sleep 0.1
done
wait "$slow" || fail "reader: $(cat "$NS_RUN/slow.log")"
wait "$flood" || fail "sender: $(cat "$NS_RUN/flood.log")"
cat "$NS_RUN/flood.log" "$NS_RUN/slow.log" >&2
grep -q "^slow: [0-9]* messages $SENT bytes in order" "$NS_RUN/slow.log" ||
    fail "the reader did not get all $SENT bytes in order"
# Bound (docs/protocol.md, "Memory bounds"), 3 tasks, 2 hosts, frames of
# 65 KiB, plus 8 MiB for the allocator and libevent.
f=$((MSG + 1024))
bound=$(((3 * (QMAX + 4 * f + (128 << 10) + CREDIT + f) +
    QLIMIT + 3 * f + 2 * 1024 * 1472 + f) / 1024 + (8 << 10)))
ns_log "host 2's daemon: RSS ${base} KiB before, peak ${peak} KiB," \
    "bound ${base} + ${bound} KiB; $((SENT >> 10)) KiB sent;" \
    "host 1 held messages for credit ${holds} times"
[ "$peak" -le $((base + bound)) ] || fail "host 2's daemon peaked at ${peak} KiB"
for i in 1 2; do
    eval "p=\$DPID_$i"
    kill -0 "$p" 2>/dev/null || fail "daemon of host $i died"
    [ "$(mh_ctl "$i" hosts | grep -c ' up ')" = 2 ] ||
        fail "host $i lost a host"
done
if grep -q 'ENOBUFS\|exits: error' "$NS_RUN"/d*.log; then
    fail "a task was closed for being slow"
fi
ns_finish
