#!/bin/bash
# attack.sh -- the attacks of issue #15 on emulated hosts, against a
# machine whose daemons share a cluster key.
#
# Hosts 1..3 run the machine (keyed); host 4 is the attacker (no key, a
# raw socket: tests/integration/garbage attack); host 5 runs a lone keyed
# daemon.  While tasks on hosts 1..3 exchange checked messages, the
# attacker forges, from member 2's address and with its real incarnations
# (which /stats.json publishes), datagrams to member 1: DATA to a task
# from a tid that never existed, HALT_ALL, DELETE_HOST, a HOST_DOWN join
# datagram, a blind spray of seq 1..2000 and 100 fragments 20 seqs ahead
# of the live stream; then it invites the lone daemon on host 5 to its
# own machine.  Each datagram is sent without a trailer and with a
# made-up one.  Checked: member 1's auth_failures rose by what was sent,
# every daemon is still up, the machine's membership and incarnations are
# unchanged, the lone daemon is still alone, and the exchanges beside the
# attacks (and one after) lost nothing (p2p-check checks every message).
# Then a member's genuine invitation does take the lone daemon in.
# Last, without a key a daemon refuses a non-loopback address unless
# --insecure, which it reports in `collsctl status`.
# Needs root (exit 77 otherwise).
. "${top_srcdir:-.}/tests/netns/lib.sh"

B=${top_builddir:-.}
B=$(cd "$B" && pwd -P)
P2P=$B/tests/integration/p2p-check
G=$B/tests/integration/garbage
SOCK=/tmp/collsd/collsd.sock
DOPTS="--heartbeat 100 --dead-after 1500 --request-timeout 2000"

mh_init "$B" "$SOCK" 5 collsd collsctl tests/integration/p2p-check \
    tests/integration/garbage
# the machine is hosts 1..3; 4 attacks; 5 runs alone
head -3 "$NS_RUN/hostfile" >"$NS_RUN/hostfile.3"
mv "$NS_RUN/hostfile.3" "$NS_RUN/hostfile"

ctl()
{
    mh_ctl "$@"
}

# hid and incarnation of every host up, as host I sees them.
members()
{
    ctl "$1" hosts | awk '$2 == "up" { print $1, $5 }'
}

for i in 1 2 3; do
    mh_daemon "$i" $DOPTS
    eval "DPID_$i=$NS_LASTPID"
done
for i in 1 2 3; do
    mh_wait_up "$i" 3 || fail "host $i does not see 3 hosts up"
done
[ "$FAILED" = 0 ] || exit 1
# the lone daemon: no hostfile, keyed
host_bg 5 d5.log "$B/collsd" --foreground --listen "$(ns_addr 5):7490" \
    --socket "$SOCK" --key-file "$MH_KEY"
DPID_5=$NS_LASTPID
for _ in $(seq 1 50); do
    host_run 5 test -S "$SOCK" && break
    sleep 0.1
done
before=$(members 1)
lone_before=$(ctl 5 hosts | grep -c ' up ')
echo "machine before: $before"

# Starts an exchange NAME among tasks on hosts 1..3 (coordinator on host
# 1), worker options after the name: pids in cpid and wpids.
exchange()
{
    local name=$1 w
    shift
    rm -f "$NS_RUN/$name.tid"
    host_bg 1 "$name-coord.log" timeout 240 "$P2P" --socket "$SOCK" \
        --coord 3 --tidfile "$NS_RUN/$name.tid"
    cpid=$NS_LASTPID
    wpids=""
    for w in 1 2 3; do
        host_bg "$w" "$name-w$w.log" timeout 240 "$P2P" --socket "$SOCK" \
            --worker "$NS_RUN/$name.tid" "$@"
        wpids="$wpids $NS_LASTPID"
    done
}

# Live traffic: exchanges among tasks on hosts 1..3, one after the other
# until NS_RUN/stop exists; a failed one is appended to NS_RUN/exfail,
# the number run written to NS_RUN/exdone.
exchange_loop()
{
    local k=0 p
    while [ ! -e "$NS_RUN/stop" ]; do
        k=$((k + 1))
        exchange "live$k" --timeout-ms 60000
        for p in $wpids $cpid; do
            wait "$p" || echo "live$k" >>"$NS_RUN/exfail"
        done
        echo "$k" >"$NS_RUN/exdone"
    done
}
exchange_loop &
loop_pid=$!
sleep 1

SRC_INC=$(mh_inc_of 2)
DST_INC=$(mh_inc_of 1)
fails0=$(mh_error_count 1 auth_failures)
sent=0
attack()
{
    local out n
    out=$(host_run 4 "$G" attack "$(ns_addr 1):7490" \
        --src "$(ns_addr 2):7490" --src-hid 2 --dst-hid 1 \
        --src-inc "$SRC_INC" --dst-inc "$DST_INC" "$@" 2>&1) ||
        fail "garbage attack $*: $out"
    n=$(echo "$out" | sed -n 's/^sent \([0-9]*\)$/\1/p')
    sent=$((sent + ${n:-0}))
    ns_log "attack $*: $out"
}
attack --what data
attack --what halt
attack --what delete
attack --what hostdown
attack --what spray --count 2000
seq_now=$(mh_dgrams_sent 2 1)
attack --what frags --seq $((${seq_now:-1} + 20)) --count 100
sleep 1
fails1=$(mh_error_count 1 auth_failures)
delta=$((fails1 - fails0))
ns_log "host 1: $delta auth failures for $sent forged datagrams"
# the raw socket's datagrams may be dropped by a full receive buffer, but
# nearly all must arrive and each that arrives must be refused
[ "$delta" -ge $((sent * 95 / 100)) ] ||
    fail "auth_failures rose by $delta for $sent forged datagrams"
[ "$(mh_error_count 1 replays)" = 0 ] || fail "replays counted without replays"

# The lone daemon is invited by the attacker (its own address).
l0=$(mh_error_count 5 auth_failures)
out=$(host_run 4 "$G" attack "$(ns_addr 5):7490" --src "$(ns_addr 4):7490" \
    --src-hid 1 --dst-hid 1 --src-inc 1 --dst-inc 0 --what invite 2>&1) ||
    fail "invite: $out"
sleep 1
l1=$(mh_error_count 5 auth_failures)
[ $((l1 - l0)) -ge 2 ] || fail "the invitation was not refused as forged"
[ "$(ctl 5 hosts | grep -c ' up ')" = "$lone_before" ] ||
    fail "the lone daemon changed its table: $(ctl 5 hosts)"
grep -q "invites this daemon" "$NS_RUN/d5.log" &&
    fail "the lone daemon acted on a forged invitation"

# Everybody is still up, the machine unchanged, the traffic intact.
for i in 1 2 3 5; do
    eval "p=\$DPID_$i"
    kill -0 "$p" 2>/dev/null || fail "daemon $i died"
done
: >"$NS_RUN/stop"
wait "$loop_pid"
ns_log "$(cat "$NS_RUN/exdone" 2>/dev/null) exchanges beside the attacks"
[ -e "$NS_RUN/exdone" ] || fail "no exchange completed beside the attacks"
if [ -e "$NS_RUN/exfail" ]; then
    for x in $(cat "$NS_RUN/exfail"); do
        fail "exchange $x: $(grep -h FAIL "$NS_RUN/$x"-*.log | head -3)"
    done
fi
after=$(members 1)
[ "$after" = "$before" ] || fail "membership changed: '$before' -> '$after'"
for i in 2 3; do
    [ "$(members "$i")" = "$before" ] ||
        fail "host $i sees another machine: $(members "$i")"
done
# and one more exchange after the attacks
exchange p2p2 --quick --timeout-ms 60000
for p in $wpids $cpid; do
    wait "$p" || fail "p2p after the attacks"
done

# A genuine invitation from a member does take the lone daemon in, through
# the challenge and proof of keyed invitations (docs/protocol.md).  An
# on-path recorder on host 1 keeps every datagram of that join (sealed
# and genuine: the HOST_JOINs with their cookies among them) and replays
# them once the joiner is dead and its challenge expired: host 1 must
# not take the dead host back up, and counts the replays.
host_bg 1 replay.log "$G" replay "$(ns_addr 1):7490" --capture-ms 4000 \
    --delay-ms 9000 --times 2
rpid=$NS_LASTPID
sleep 0.3
ctl 1 add "$(ns_addr 5):7490" >"$NS_RUN/add.log" 2>&1 ||
    fail "collsctl add of the lone daemon: $(cat "$NS_RUN/add.log")"
mh_wait_up 5 4 || fail "the invited daemon did not join"
grep -q "invites this daemon to join its machine: joining" "$NS_RUN/d5.log" ||
    fail "the invited daemon did not log its join"
hid5=$(ctl 1 hosts | awk -v a="$(ns_addr 5):7490" '$4 == a { print $1 }')
[ -n "$hid5" ] || fail "host 1 does not list $(ns_addr 5):7490: $(ctl 1 hosts)"
jr0=$(mh_error_count 1 join_replays)
ns_pin_kill "$DPID_5" KILL
for _ in $(seq 1 50); do
    ctl 1 hosts | awk -v h="$hid5" '$1 == h { print $2 }' | grep -q down &&
        break
    sleep 0.2
done
wait "$rpid" || fail "the recorder: $(cat "$NS_RUN/replay.log")"
ns_log "$(cat "$NS_RUN/replay.log")"
sleep 1
state5=$(ctl 1 hosts | awk -v h="$hid5" '$1 == h { print $2 }')
[ "$state5" = down ] ||
    fail "replayed join datagrams brought dead host $hid5 back: $state5"
jr1=$(mh_error_count 1 join_replays)
[ "$jr1" -gt "$jr0" ] || fail "join_replays did not count the replays"

# Without a key: refused off loopback, unless --insecure (and said so).
ns_pin_kill "$DPID_5" TERM
if host_run 5 timeout 10 "$B/collsd" --foreground \
    --listen "$(ns_addr 5):7491" --socket /tmp/c2/collsd.sock \
    >"$NS_RUN/nokey.log" 2>&1; then
    fail "a keyless daemon listened on $(ns_addr 5)"
fi
grep -q "collsctl keygen" "$NS_RUN/nokey.log" ||
    fail "the refusal does not name collsctl keygen: $(cat "$NS_RUN/nokey.log")"
host_bg 5 insecure.log "$B/collsd" --foreground --insecure \
    --listen "$(ns_addr 5):7491" --socket /tmp/c3/collsd.sock
for _ in $(seq 1 50); do
    host_run 5 test -S /tmp/c3/collsd.sock && break
    sleep 0.1
done
host_run 5 timeout 10 "$B/collsctl" --socket /tmp/c3/collsd.sock status |
    grep -q "WARNING.*--insecure" || fail "status does not warn of --insecure"
grep -q "INSECURE" "$NS_RUN/insecure.log" || fail "no INSECURE warning logged"

[ "$FAILED" = 0 ] && ns_log "passed"
exit $((FAILED > 0))
