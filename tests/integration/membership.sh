#!/bin/bash
# membership.sh -- host membership and group ownership, collsd on loopback.
#
# 1. Spoofed joins (as root: forged source addresses): a HOST_JOIN datagram
#    from a member's address with a new incarnation, without the join
#    cookie and with a guessed one, sent to the assigner and to another
#    member.  Nobody takes the member for restarted: every daemon keeps
#    its incarnation, the member alone got the cookie challenge (counted
#    as an unexpected join datagram there), the guesses were counted as
#    bad join datagrams, and an exchange across keeps working.
# 2. `collsctl add` of a standalone daemon (no --hostfile, no --join): it
#    joins, both sides list every host up, and a task there reaches the
#    others.  `collsctl add` of a daemon that belongs to another machine
#    of two hosts fails with a clear message and leaves both machines as
#    they were.
. "${top_srcdir:-.}/tests/integration/lib.sh"

G=$IT_B/tests/integration/garbage
it_setup
it_start 3 || exit 1
it_wait_hosts 3 || exit 1

# Daemon I's view of host H: "STATE INCARNATION".
host_view()
{
    it_ctl "$1" hosts 2>/dev/null | awk -v h="$2" '$1 == h { print $2, $5 }'
}

# Starts daemon I alone (no hostfile) on a new port; extra args to collsd.
start_alone()
{
    local i=$1
    shift
    it_free_port >>"$IT_DIR/ports"
    mkdir -p "$IT_DIR/d$i"
    chmod 700 "$IT_DIR/d$i"
    # shellcheck disable=SC2086
    "$IT_B/collsd" --foreground --listen "127.0.0.1:$(it_port "$i")" \
        --socket "$(it_sock "$i")" --name "it$i" $IT_DAEMON_OPTS "$@" \
        >>"$IT_DIR/d$i.log" 2>&1 </dev/null &
    echo $! >"$IT_DIR/d$i.pid.sh"
    it_wait_socket "$i"
}

# ---- 1. spoofed joins --------------------------------------------------
if [ "$(id -u)" = 0 ]; then
    v1=$(host_view 1 2)
    v3=$(host_view 3 2)
    self=$(host_view 2 2)
    bad1=$(it_stat_sum 1 bad_join_dgrams)
    bad2=$(it_stat_sum 2 bad_join_dgrams)
    bad3=$(it_stat_sum 3 bad_join_dgrams)
    src="127.0.0.1:$(it_port 2)"
    for t in 1 3; do
        "$G" join "127.0.0.1:$(it_port "$t")" --src "$src" \
            --src-inc 0x5eed0001 || it_fail "forging a join to daemon $t"
        "$G" join "127.0.0.1:$(it_port "$t")" --src "$src" \
            --src-inc 0x5eed0002 --cookie 0x1234567890abcdef ||
            it_fail "forging a join with a cookie to daemon $t"
    done
    # An exchange across 1, 2 and 3 after the forgeries: it also gives
    # the daemons the time to act on them.
    P2P_OPTS="--quick --timeout-ms 30000" it_p2p spoof 2 1 2 3 ||
        it_fail "exchange after the spoofed joins"
    for t in 1 3; do
        [ "$(host_view "$t" 2)" = "$(eval echo "\$v$t")" ] ||
            it_fail "daemon $t: host 2 was '$(eval echo "\$v$t")', now" \
                "'$(host_view "$t" 2)'"
    done
    [ "$(host_view 2 2)" = "$self" ] ||
        it_fail "daemon 2 changed its incarnation: $self -> $(host_view 2 2)"
    n=$(it_stat_sum 1 bad_join_dgrams)
    [ "$n" -gt "$bad1" ] || it_fail "daemon 1 counted no forged join ($n)"
    n=$(it_stat_sum 3 bad_join_dgrams)
    [ "$n" -gt "$bad3" ] || it_fail "daemon 3 counted no forged join ($n)"
    n=$(it_stat_sum 2 bad_join_dgrams)
    [ "$n" -ge $((bad2 + 2)) ] ||
        it_fail "daemon 2 got $((n - bad2)) challenges, not 2"
    if grep -h 'restarted\|joins; epoch' "$IT_DIR"/d[123].log; then
        it_fail "a forged join was taken for a restart or a join"
    fi
else
    it_log "not root: spoofed joins skipped"
fi

# ---- 2. collsctl add ---------------------------------------------------
start_alone 4 || exit 1
it_wait_hosts 1 4 || exit 1
out=$(it_ctl 2 add "127.0.0.1:$(it_port 4)" 2>&1) ||
    it_fail "add of a standalone daemon: $out"
it_log "$out"
IT_K=4
it_wait_hosts 4 || exit 1
for i in 1 2 3 4; do
    [ "$(it_ctl "$i" hosts | grep -c ' joining ')" = 0 ] ||
        it_fail "daemon $i still lists a host joining"
done
P2P_OPTS="--quick --timeout-ms 30000" it_p2p added 1 1 4 2 4 ||
    it_fail "exchange with the added daemon"

# A machine of two: daemon 5 alone, daemon 6 joins it.
start_alone 5 || exit 1
it_free_port >>"$IT_DIR/ports"
mkdir -p "$IT_DIR/d6"
chmod 700 "$IT_DIR/d6"
# shellcheck disable=SC2086
"$IT_B/collsd" --foreground --listen "127.0.0.1:$(it_port 6)" \
    --join "127.0.0.1:$(it_port 5)" --socket "$(it_sock 6)" --name it6 \
    $IT_DAEMON_OPTS >>"$IT_DIR/d6.log" 2>&1 </dev/null &
echo $! >"$IT_DIR/d6.pid.sh"
it_wait_socket 6 || exit 1
it_wait_hosts 2 5 6 || exit 1
if out=$(it_ctl 1 add "127.0.0.1:$(it_port 5)" 2>&1); then
    it_fail "add of a member of another machine succeeded: $out"
fi
it_log "$out"
echo "$out" | grep -q 'refused' || it_fail "no clear refusal: $out"
it_ctl 1 hosts | grep -q ":$(it_port 5) " &&
    it_fail "the refused host stays in the table"
for i in 1 2 3 4; do
    [ "$(it_hosts_up "$i")" = 4 ] ||
        it_fail "daemon $i: $(it_hosts_up "$i") hosts up after the refusal"
done
for i in 5 6; do
    [ "$(it_ctl "$i" hosts | grep -c ' up ')" = 2 ] ||
        it_fail "daemon $i: its machine changed"
done
it_kill 5 TERM
it_kill 6 TERM
IT_K=4

for i in 1 2 3 4; do
    it_alive "$i" || it_fail "daemon $i died"
done
it_finish
