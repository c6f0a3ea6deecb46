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
#    of two hosts, or of a standalone one serving a task, fails with a
#    clear message and leaves both machines as they were.
# 3. Group owners (daemons 1..4): names NAME-a/-b formed over daemons 1, 2
#    and 4, with the owner read from the gid the owner logs.  Daemon 3
#    stopped (SIGSTOP): a join of a name it owns ends with COLLS_EHOSTDOWN
#    (or passes if it was declared down first), never a hang; once it is
#    declared down every name forms again, each name not owned by 3
#    keeping its owner (the owner is chosen over the whole table, so
#    views that differ about host 3 agree on every other name).  Members
#    of a name owned by 3 join on 1, 2 and 4 while it is down; daemon 3
#    goes on and comes back, the name is handed over to it and a member
#    on 3 completes the group.  Then every name forms over all four
#    daemons with the owners of the start.
. "${top_srcdir:-.}/tests/integration/lib.sh"

G=$IT_B/tests/integration/garbage
CC=$IT_B/tests/integration/coll-check
[ -x "$CC" ] || {
    echo "SKIP: $CC not built" >&2
    exit 77
}
it_setup
it_start 3 || exit 1
it_wait_hosts 3 || exit 1

# Daemon I's view of host H: "STATE INCARNATION".
host_view()
{
    it_ctl "$1" hosts 2>/dev/null | awk -v h="$2" '$1 == h { print $2, $5 }'
}

# Waits (30 s at most) until daemon I lists host H in STATE.
wait_state()
{
    local _
    for _ in $(seq 1 300); do
        [ "$(host_view "$1" "$2" | awk '{ print $1 }')" = "$3" ] && return 0
        sleep 0.1
    done
    return 1
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

# A standalone daemon serving a task (waiting in a group join there).
start_alone 7 || exit 1
it_bg lone-task.log timeout 120 "$CC" --socket "$(it_sock 7)" \
    --group lone --size 2 --check conc --iters 1 --timeout-ms 60000
lone=$IT_LASTPID
for _ in $(seq 1 100); do
    [ "$(it_ctl 7 ps 2>/dev/null | grep -c coll-check)" -ge 1 ] && break
    sleep 0.1
done
if out=$(it_ctl 1 add "127.0.0.1:$(it_port 7)" 2>&1); then
    it_fail "add of a daemon serving a task succeeded: $out"
fi
it_log "$out"
grep -q "refuses to join: it serves tasks" "$IT_DIR/d1.log" ||
    it_fail "daemon 1 did not log why daemon 7 refused"
[ "$(it_ctl 7 hosts | grep -c ' up ')" = 1 ] ||
    it_fail "daemon 7 changed its machine"
kill "$lone" 2>/dev/null
it_kill 7 TERM
IT_K=4

# ---- 3. group owners with a daemon stopped ---------------------------
NAMES="m0 m1 m2 m3 m4 m5 m6 m7"

# The hid of the owner of the latest formation of group G (from the gid).
owner_of()
{
    local x
    x=$(grep -h "group $1 formed: gid" "$IT_DIR"/d*.log | sort | tail -n 1 |
        sed -n 's/.*formed: gid \(....\).*/\1/p')
    [ -n "$x" ] && echo $((16#$x))
}

# Forms NAME-a and NAME-b over the daemons of socket list S (one member
# each) and runs collectives on them; prints coll-check's output.
form()
{
    timeout 120 "$CC" -n "$2" --sockets "$3" --check conc --iters 2 \
        --group "$1" --timeout-ms 30000 2>&1
}

# Forms every name over S; records the owners in owners_TAG_NAME.
form_all()
{
    local tag=$1 n=$2 s=$3 m out
    for m in $NAMES; do
        out=$(form "$m" "$n" "$s") || it_fail "$tag: $m: $out"
        eval "owners_${tag}_$m='$(owner_of "$m-a") $(owner_of "$m-b")'"
    done
}

S124="$(it_sock 1),$(it_sock 2),$(it_sock 4)"
form_all start 3 "$S124"
by3=""
for m in $NAMES; do
    eval "o=\$owners_start_$m"
    it_log "owners of $m-a, $m-b: $o"
    case " $o " in *" 3 "*) by3="$by3 $m" ;; esac
done
[ -n "$by3" ] || it_fail "no name is owned by host 3: take other names"

kill -STOP "$(it_pid 3)"
M3=${by3# }
M3=${M3%% *}
out=$(form "$M3" 3 "$S124")
it_log "$M3 with daemon 3 stopped: $(echo "$out" | tail -n 1)"
case "$out" in
*EHOSTDOWN* | *passed*) ;;
*) it_fail "join of $M3 (owned by the stopped daemon 3): $out" ;;
esac
for i in 1 2 4; do
    wait_state "$i" 3 down ||
        it_fail "daemon $i never declared the stopped daemon 3 down"
done
form_all down 3 "$S124"
for m in $NAMES; do
    eval "a=\$owners_start_$m; b=\$owners_down_$m"
    set -- $a
    a1=$1 a2=$2
    set -- $b
    [ "$a1" = 3 ] || [ "$a1" = "$1" ] ||
        it_fail "$m-a moved from host $a1 to $1 when host 3 went down"
    [ "$a2" = 3 ] || [ "$a2" = "$2" ] ||
        it_fail "$m-b moved from host $a2 to $2 when host 3 went down"
    [ "$1" != 3 ] && [ "$2" != 3 ] ||
        it_fail "$m: owned by the stopped host 3 ($b)"
done

# Members of $M3 on 1, 2 and 4 join while 3 is down (another daemon
# collects them); daemon 3 goes on and comes back: the name is handed
# over to it and the member on 3 completes the group there.
pids=""
for i in 1 2 4; do
    it_bg "handover-$i.log" timeout 120 "$CC" --socket "$(it_sock "$i")" \
        --group "$M3" --size 4 --check conc --iters 2 --timeout-ms 30000
    pids="$pids $IT_LASTPID"
done
sleep 1
kill -CONT "$(it_pid 3)"
it_wait_hosts 4 || exit 1
it_bg handover-3.log timeout 120 "$CC" --socket "$(it_sock 3)" \
    --group "$M3" --size 4 --check conc --iters 2 --timeout-ms 30000
for p in $pids $IT_LASTPID; do
    it_wait "$p" 150 || it_fail "handover of $M3: member pid $p failed"
done
grep -h "owns the name now" "$IT_DIR"/d*.log >&2
for i in 1 2 3 4; do
    tail -n 1 "$IT_DIR/handover-$i.log" >&2
done

form_all back 4 "$(it_sock 1),$(it_sock 2),$(it_sock 3),$(it_sock 4)"
for m in $NAMES; do
    eval "a=\$owners_start_$m; b=\$owners_back_$m"
    [ "$a" = "$b" ] || it_fail "$m: owners $a at the start, $b at the end"
done

for i in 1 2 3 4; do
    it_alive "$i" || it_fail "daemon $i died"
done
it_finish
