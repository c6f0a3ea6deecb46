#!/bin/bash
# multihost.sh -- four emulated hosts (network namespaces), one collsd each.
#
# 1. the machine forms from a shared hostfile (each host lists 4 up);
# 2. p2p-check with one worker per host under 0 %, 5 % and 20 % loss of
#    incoming UDP on every host: every message exactly once, intact, in
#    order (checked by p2p-check);
# 3. host 4's daemon is killed (-9) while a task on host 2 streams to a
#    task on host 4: the sender's calls fail with COLLS_EHOSTDOWN, a
#    receive from that task fails with COLLS_EHOSTDOWN, the host-down
#    notification arrives -- bounded by the task's timeout, no hang;
#    the other hosts list host 4 as down;
# 4. host 4's daemon restarts: it rejoins as a new incarnation, and an
#    exchange among tasks on all four hosts passes.
# Needs root (exit 77 otherwise).  Bounded: every step runs under timeout.
. "${top_srcdir:-.}/tests/netns/lib.sh"

B=${top_builddir:-.}
B=$(cd "$B" && pwd -P)
P2P=$B/tests/integration/p2p-check
SOCK=/tmp/collsd/collsd.sock        # the same path on every host: own /tmp
N=4
DOPTS="--heartbeat 100 --dead-after 1500 --request-timeout 2000"

mh_init "$B" "$SOCK" "$N" collsd collsctl tests/integration/p2p-check

# Starts the daemon of host I; DPID_I holds its pid.
start_daemon()
{
    mh_daemon "$1" $DOPTS
    eval "DPID_$1=$NS_LASTPID"
}

ctl()
{
    mh_ctl "$@"
}

# Waits until host I lists at least N hosts up.
wait_up()
{
    mh_wait_up "$1" "$2" && return 0
    fail "host $1 does not see $2 hosts up"
    return 1
}

# The incarnation column of hid H in host I's `collsctl hosts`.
incarnation()
{
    ctl "$1" hosts 2>/dev/null | awk -v h="$2" '$1 == h { print $5 }'
}

# One p2p exchange: coordinator on host 1, a worker on each host in
# WORKERS; extra worker options in P2P_OPTS.
p2p()
{
    local name=$1 wp="" k=0 rc=0 cp
    shift
    rm -f "$NS_RUN/coord-$name.tid"
    host_bg 1 "p2p-$name-coord.log" timeout 240 "$P2P" --socket "$SOCK" \
        --coord $# --tidfile "$NS_RUN/coord-$name.tid"
    cp=$NS_LASTPID
    for w in "$@"; do
        k=$((k + 1))
        host_bg "$w" "p2p-$name-w$k.log" timeout 240 "$P2P" \
            --socket "$SOCK" --worker "$NS_RUN/coord-$name.tid" $P2P_OPTS
        wp="$wp $NS_LASTPID"
    done
    k=0
    for p in $wp; do
        k=$((k + 1))
        if ! wait "$p"; then
            fail "p2p $name: worker $k"
            grep -h FAIL "$NS_RUN/p2p-$name-w$k.log" | head -5 >&2
            tail -3 "$NS_RUN/p2p-$name-w$k.log" >&2
            rc=1
        fi
    done
    if ! wait "$cp"; then
        fail "p2p $name: coordinator"
        tail -5 "$NS_RUN/p2p-$name-coord.log" >&2
        rc=1
    fi
    [ "$rc" = 0 ] && ns_log "p2p $name: passed"
    return $rc
}

for i in $(seq 1 $N); do
    start_daemon "$i"
done
for i in $(seq 1 $N); do
    wait_up "$i" $N || exit 1
done
ctl 1 hosts
# Every host has its own /tmp and hostname.
host_run 1 touch /tmp/only-on-host1
host_run 2 test -e /tmp/only-on-host1 && fail "host 2 sees host 1's /tmp"
[ "$(host_run 3 hostname)" = host3 ] || fail "host 3's hostname"
for i in $(seq 1 $N); do
    host_run "$i" test -S "$SOCK" || fail "no socket on host $i"
done

# 2. Loss.
P2P_OPTS="--big --timeout-ms 60000" p2p loss0 1 2 3 4
for pct in 5 20; do
    for i in $(seq 1 $N); do
        ns_loss "$i" "$pct"
    done
    P2P_OPTS="--timeout-ms 90000" p2p "loss$pct" 1 2 3 4
    drops=0
    for i in $(seq 1 $N); do
        drops=$((drops + $(ns_loss_drops "$i")))
        ns_loss "$i" 0
    done
    ns_log "$pct % loss: $drops datagrams dropped"
    [ "$drops" -gt 0 ] || fail "the $pct % loss rule dropped nothing"
done
for i in $(seq 1 $N); do
    wait_up "$i" $N
done

# 3. Host 4 dies while host 2 streams to a task on it.
rm -f "$NS_RUN/victim.tid" "$NS_RUN/ready"
host_bg 4 victim.log timeout 120 "$P2P" --socket "$SOCK" --mode victim \
    --tidfile "$NS_RUN/victim.tid" --timeout-ms 60000
vpid=$NS_LASTPID
host_bg 2 waitdown.log timeout 120 "$P2P" --socket "$SOCK" --mode waitdown \
    --peer "$NS_RUN/victim.tid" --ready "$NS_RUN/ready" --timeout-ms 20000
wpid=$NS_LASTPID
for _ in $(seq 1 100); do
    [ -e "$NS_RUN/ready" ] && break
    sleep 0.1
done
[ -e "$NS_RUN/ready" ] || fail "waitdown did not start"
sleep 1
inc_before=$(incarnation 1 4)
kill_at=$(date +%s.%N)
kill -KILL "$DPID_4"
wait "$DPID_4" 2>/dev/null
ns_log "killed host 4's daemon (incarnation $inc_before)"
if wait "$wpid"; then
    seen=$(sed -n 's/.*EHOSTDOWN after.*wall clock \([0-9.]*\) s.*/\1/p' \
        "$NS_RUN/waitdown.log")
    delay=$(awk -v a="$kill_at" -v b="$seen" \
        'BEGIN { printf "%.2f", b - a }')
    ns_log "host 2's stream to host 4 failed with EHOSTDOWN $delay s" \
        "after the kill (--dead-after 1.5 s)"
else
    fail "host-down errors on host 2"
    cat "$NS_RUN/waitdown.log" >&2
fi
ns_pin_kill "$vpid"
for i in 1 2 3; do
    st=$(ctl "$i" hosts | awk '$1 == 4 { print $2 }')
    [ "$st" = down ] || fail "host $i lists host 4 as '$st', not down"
done

# 4. Restart: a new incarnation, and everything works again.
start_daemon 4
for i in $(seq 1 $N); do
    wait_up "$i" $N
done
inc_after=$(incarnation 1 4)
ns_log "host 4 incarnation: $inc_before -> $inc_after"
[ -n "$inc_after" ] && [ "$inc_after" != "$inc_before" ] ||
    fail "host 4 did not come back as a new incarnation"
ctl 1 hosts
P2P_OPTS="--quick --timeout-ms 60000" p2p rejoin 1 2 3 4

for i in $(seq 1 $N); do
    eval "p=\$DPID_$i"
    kill -0 "$p" 2>/dev/null || fail "daemon of host $i died"
done
ns_finish
