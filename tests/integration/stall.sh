#!/bin/bash
# stall.sh -- daemons that stop running (SIGSTOP), three collsd on loopback.
#
# 1. daemon 3 stopped for less than --dead-after: nobody declares
#    anybody down;
# 2. all three idle (heartbeats every --idle-heartbeat, crons as rare),
#    then stopped together for more than --dead-after plus that: when
#    they go on, nobody declares anybody down (each notices its own
#    stall: its cron ran late);
# 3. daemon 3 stopped for longer than --dead-after while tasks on daemons
#    1 and 2 exchange messages: 1 and 2 declare it down; once it goes on
#    it learns that it was declared down, comes back under a new
#    incarnation and every daemon lists all three hosts up again; the
#    tasks on 1 and 2 pass, and a new group over all three daemons forms
#    and passes a checked collective matrix.
# Bounded by timeouts; the harness kills everything at exit.
. "${top_srcdir:-.}/tests/integration/lib.sh"

CC=$IT_B/tests/integration/coll-check
[ -x "$CC" ] || {
    echo "SKIP: $CC not built" >&2
    exit 77
}
DEAD_AFTER=2000
IDLE_BEAT=1000
it_setup
it_start 3 --dead-after "$DEAD_AFTER" --idle-heartbeat "$IDLE_BEAT" || exit 1
it_wait_hosts 3 || exit 1
S="$(it_sock 1),$(it_sock 2),$(it_sock 3)"

# Number of "declared down" lines in all daemon logs.
downs()
{
    cat "$IT_DIR"/d*.log | grep -c ') declared down'
}

# Daemon I's view of host H: "STATE INCARNATION".
host_view()
{
    it_ctl "$1" hosts 2>/dev/null | awk -v h="$2" '$1 == h { print $2, $5 }'
}

# Sends SIG to daemon I (without reaping it).
sig()
{
    kill -"$1" "$(it_pid "$2")"
}

# 1. A short stop.
sig STOP 3
sleep 0.5
sig CONT 3
sleep 0.5
it_wait_hosts 3 || true
[ "$(downs)" = 0 ] || it_fail "short stop: $(grep -h ') declared down' \
    "$IT_DIR"/d*.log)"

# 2. Everybody idle (it_wait_hosts's collsctl detached; the next
#    heartbeat announces --idle-heartbeat), then stopped longer than a
#    slow peer may be silent: --dead-after + --idle-heartbeat -
#    --heartbeat.  Each cron was due within --idle-heartbeat of the stop.
sleep 1
stalls=$(cat "$IT_DIR"/d*.log | grep -c 'did not run for')
for i in 1 2 3; do sig STOP "$i"; done
sleep $(((DEAD_AFTER + IDLE_BEAT) / 1000 + 1))
for i in 1 2 3; do sig CONT "$i"; done
sleep 1
it_wait_hosts 3 || true
[ "$(downs)" = 0 ] || it_fail "all stopped: $(grep -h ') declared down' \
    "$IT_DIR"/d*.log)"
[ "$(cat "$IT_DIR"/d*.log | grep -c 'did not run for')" -ge $((stalls + 3)) ] ||
    it_fail "not every daemon noticed its own stall: $(grep -h \
        'did not run for' "$IT_DIR"/d*.log)"

# 3. Daemon 3 stops longer than --dead-after.
old=$(host_view 1 3 | awk '{ print $2 }')
P2P_OPTS="--timeout-ms 60000" it_p2p_start during 1 1 2 1 2
sig STOP 3
for i in 1 2; do
    n=0
    until [ "$(host_view "$i" 3 | awk '{ print $1 }')" = down ]; do
        n=$((n + 1))
        if [ "$n" -gt 300 ]; then
            it_fail "daemon $i never declared the stopped daemon 3 down"
            break
        fi
        sleep 0.1
    done
done
it_ctl 1 hosts >&2
sig CONT 3
it_wait_hosts 3 || exit 1
for i in 1 2 3; do
    v=$(host_view "$i" 3)
    it_log "daemon $i sees host 3: $v (was $old)"
    [ "${v%% *}" = up ] || it_fail "daemon $i: host 3 is $v"
    [ "${v#* }" != "$old" ] || it_fail "daemon $i: host 3 kept $old"
done
grep -q 'declared this daemon .* down while it was alive' \
    "$IT_DIR/d3.log" || it_fail "daemon 3 did not log its comeback"
grep -h ') declared down\|down while it was alive\|did not run' \
    "$IT_DIR"/d*.log >&2
it_p2p_wait during || true
out=$(timeout 120 "$CC" -n 3 --sockets "$S" --layout 1,1,1 --group after \
    --level smoke --timeout-ms 30000 2>&1) ||
    it_fail "group over all three after the comeback: $out"
echo "$out" | tail -n 2
for i in 1 2 3; do
    it_alive "$i" || it_fail "daemon $i died"
done
it_finish
