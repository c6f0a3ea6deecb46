#!/bin/bash
# badinput.sh -- hostile input while a well-behaved exchange runs.
#
# Three daemons on loopback.  While a p2p-check (4 workers, several rounds)
# runs, tests/integration/garbage throws at daemons 1 and 2:
#   * garbage on the task socket (random bytes, impossible lengths, bad
#     envelopes, truncated frames, oversized payload claims, requests
#     before attach, unknown kinds): each malformed connection is closed;
#   * random and header-valid datagrams from 127.0.0.5, which is not in
#     the host table;
#   * as root: datagrams captured between the daemons replayed verbatim
#     from their known source addresses, and random bytes and datagrams
#     with valid headers and random incarnations forged from them (a new
#     incarnation is only adopted after a challenge, daemon/rel.c).
#   * single copy from a hostile task (garbage cma): a wrong token is not
#     granted, bad input and output addresses fail that collective alone;
#   * a join datagram of protocol version 1: dropped, with a
#     COLLS_EVERSION line naming the sender and both versions in the log.
# Then: the exchange passed, every daemon is still up and answers, and the
# statistics counted the bad input (malformed frames, datagrams from
# unknown sources, bad or duplicate datagrams).
# The replay captures the daemons' own datagrams: heartbeats every 100 ms,
# also while a daemon is idle (the default --idle-heartbeat of 10 s would
# leave 1.5 s of capture empty).
IT_DAEMON_OPTS="--heartbeat 100 --idle-heartbeat 0 --dead-after 3000 \
--request-timeout 2000 --log-level info"
. "${top_srcdir:-.}/tests/integration/lib.sh"

G=$IT_B/tests/integration/garbage
it_setup
it_start 3 || exit 1
it_wait_hosts 3 || exit 1

# Counters of rejected input (collsctl stats --json) before the attack.
TASK_RE='bad_frames|bad_envelopes|unknown_kinds|bad_requests'
for i in 1 2; do
    eval "task_$i=\$(it_stat_sum $i '$TASK_RE')"
    eval "bad_$i=\$(it_stat_sum $i bad_dgrams)"
    eval "unk_$i=\$(it_stat_sum $i unknown_src)"
done
dups_1=$(it_stat_sum 1 'dups_recv|stale_inc')

P2P_OPTS="--rounds 3 --timeout-ms 60000" it_p2p_start steady 3 1 2 3 1

timeout 120 "$G" unix "$(it_sock 1)" >"$IT_DIR/garbage-unix1.log" 2>&1 ||
    it_fail "task socket garbage against daemon 1: $(grep FAIL \
        "$IT_DIR/garbage-unix1.log")"
timeout 120 "$G" unix "$(it_sock 2)" >"$IT_DIR/garbage-unix2.log" 2>&1 ||
    it_fail "task socket garbage against daemon 2"
cat "$IT_DIR/garbage-unix1.log"
# single copy from a hostile task (needs the daemon to be allowed to read
# our memory: root, or the same user where ptrace rules permit)
timeout 60 "$G" cma "$(it_sock 1)" >"$IT_DIR/garbage-cma.log" 2>&1 ||
    it_fail "single-copy garbage against daemon 1: $(grep FAIL \
        "$IT_DIR/garbage-cma.log")"
cat "$IT_DIR/garbage-cma.log"

for i in 1 2; do
    timeout 60 "$G" udp "127.0.0.1:$(it_port "$i")" --from 127.0.0.5 \
        --count 3000 --seed "$i" || it_fail "udp garbage to daemon $i"
done

# A daemon of the previous protocol version trying to join: dropped, and
# the log says why, naming it and both versions.
V=$(sed -n 's/^#define COLLS_PROTO_VERSION \([0-9]*\).*/\1/p' \
    "${top_srcdir:-.}/proto/envelope.h")
timeout 10 "$G" version "127.0.0.1:$(it_port 1)" --version 1 ||
    it_fail "version-1 join datagram to daemon 1"
for _ in $(seq 50); do
    grep -q "COLLS_EVERSION.*version 1, this daemon $V" "$IT_DIR/d1.log" &&
        break
    sleep 0.1
done
grep -q "COLLS_EVERSION.*version 1, this daemon $V" "$IT_DIR/d1.log" ||
    it_fail "daemon 1 did not log the version-1 join datagram (version $V)"

if [ "$(id -u)" = 0 ]; then
    timeout 60 "$G" replay "127.0.0.1:$(it_port 1)" --capture-ms 1500 \
        --count 400 --times 3 --forge-valid 1
    rc=$?
    [ "$rc" = 0 ] || it_fail "replay against daemon 1 (rc $rc)"
else
    it_log "not root: replayed datagrams from known sources skipped"
fi

it_p2p_wait steady || it_fail "the exchange during the attack failed"

for i in 1 2 3; do
    it_alive "$i" || it_fail "daemon $i died"
done
it_wait_hosts 3 || it_fail "the machine did not stay together"

# A fresh exchange after the attack.
P2P_OPTS="--quick --timeout-ms 30000" it_p2p after 2 1 2 3 ||
    it_fail "exchange after the attack"

# Every kind of bad input was counted (before -> after).
check_counter()
{
    local what=$1 i=$2 re=$3 before=$4 after
    after=$(it_stat_sum "$i" "$re")
    it_log "daemon $i $what: $before -> $after"
    [ "$after" -gt "$before" ] || it_fail "daemon $i counted no $what"
}
for i in 1 2; do
    eval "check_counter 'malformed task input' $i '$TASK_RE' \$task_$i"
    eval "check_counter 'bad datagrams' $i bad_dgrams \$bad_$i"
    eval "check_counter 'datagrams from unknown sources' $i unknown_src \
        \$unk_$i"
done
if [ "$(id -u)" = 0 ]; then
    check_counter 'duplicate or stale datagrams' 1 'dups_recv|stale_inc' \
        "$dups_1"
fi
it_ctl 1 stats --json >"$IT_DIR/stats1.json"
it_finish
