#!/bin/sh
# idle.sh -- idle daemons stretch their heartbeats (--idle-heartbeat) on
# three emulated hosts (a fourth is added), and still judge each other's
# silence right.
#
# Options: --heartbeat 100 --dead-after 1000 --idle-heartbeat 2000, so an
# idle daemon beats every 2 s, twice --dead-after: a peer that judged it
# by --dead-after alone would declare it down.
#
# 1. Idle: over 4 s each daemon sends at most 12 heartbeats (2 peers,
#    every 2 s, and the few a `collsctl stats` may cause; at --heartbeat
#    it would be 80), every host still lists all three up with the same
#    incarnations, and none was declared down.
# 2. A task attached on host 1: its daemon beats at --heartbeat again (at
#    least 8 in 2 s, 40 expected).
# 3. Host 3's daemon killed while every daemon is idle: hosts 1 and 2
#    declare it down (bounded wait: --dead-after, one idle heartbeat and
#    one idle cron, under 20 s), then beat at --heartbeat (a host is down:
#    not idle in the steady sense).
# 4. Host 3 restarted after it was declared down: it comes up everywhere,
#    and 5 s of idleness later every host still lists all three up.
# 5. Host 3 restarted at once (its peers see a new incarnation, idle and
#    beating slowly): within 6 s without collsctl (which wakes a daemon
#    up), no host goes down anywhere, not even for a moment -- the peers
#    heartbeat the new incarnation at once, so it hears them and learns
#    their interval.
#
# 6. A standalone daemon added (`collsctl add` on host 2) while every
#    daemon is idle: it joins, and every host lists four up.
#
# Needs root (exit 77 otherwise).  Bounded: every step runs under timeout.
. "${top_srcdir:-.}/tests/netns/lib.sh"

B=${top_builddir:-.}
B=$(cd "$B" && pwd -P)
P2P=$B/tests/integration/p2p-check
SOCK=/tmp/collsd/collsd.sock
N=3
DOPTS="--heartbeat 100 --dead-after 1000 --idle-heartbeat 2000 \
--request-timeout 2000"

mh_init "$B" "$SOCK" 4 collsd collsctl tests/integration/p2p-check
# hosts 1..3 in the hostfile; host 4's daemon is added later (step 6)
head -n "$N" "$NS_RUN/hostfile" >"$NS_RUN/hostfile.3"
mv "$NS_RUN/hostfile.3" "$NS_RUN/hostfile"

start_daemon()
{
    # shellcheck disable=SC2086
    mh_daemon "$1" $DOPTS
    eval "DPID_$1=$NS_LASTPID"
}

# stat I NAME: counter NAME of host I's daemon (stats --json, "counters").
stat()
{
    mh_ctl "$1" stats --json | python3 -c '
import json, sys
def find(o, k):
    if isinstance(o, dict):
        if k in o and not isinstance(o[k], (dict, list)):
            return o[k]
        for v in o.values():
            r = find(v, k)
            if r is not None:
                return r
    return None
print(find(json.load(sys.stdin), sys.argv[1]))' "$2"
}

# The hosts host I lists up, as "hid:incarnation ...".
ups()
{
    mh_ctl "$1" hosts 2>/dev/null | awk '$2 == "up" { printf "%s:%s ", $1, $5 }'
}

# beats_in I S: heartbeats host I sent over S seconds.
beats_in()
{
    b0=$(stat "$1" heartbeats_out)
    sleep "$2"
    b1=$(stat "$1" heartbeats_out)
    echo $((b1 - b0))
}

for i in $(seq 1 $N); do
    start_daemon "$i"
done
for i in $(seq 1 $N); do
    mh_wait_up "$i" $N || fail "host $i does not see $N hosts up"
done
[ "$FAILED" = 0 ] || ns_finish

# 1. Idle.
sleep 3 # every daemon announced the idle interval
u0=$(ups 1)
for i in $(seq 1 $N); do
    eval "h0_$i=\$(stat $i heartbeats_out)"
done
sleep 4
for i in $(seq 1 $N); do
    eval "n=\$((\$(stat $i heartbeats_out) - h0_$i))"
    ns_log "idle: host $i sent $n heartbeats in 4 s"
    [ "$n" -le 12 ] || fail "idle host $i sent $n heartbeats in 4 s"
    [ "$(stat "$i" hosts_down)" = 0 ] || fail "host $i declared a host down"
    [ "$(ups "$i")" = "$u0" ] ||
        fail "host $i lists '$(ups "$i")' up, host 1 listed '$u0'"
done
[ "$(echo "$u0" | wc -w)" = 3 ] || fail "host 1 lists '$u0' up"

# 2. A task on host 1: beats at --heartbeat.
rm -f "$NS_RUN/t.tid"
host_bg 1 task.log timeout 60 "$P2P" --socket "$SOCK" --mode victim \
    --tidfile "$NS_RUN/t.tid" --timeout-ms 30000
tpid=$NS_LASTPID
for _ in $(seq 1 100); do
    [ -s "$NS_RUN/t.tid" ] && break
    sleep 0.1
done
[ -s "$NS_RUN/t.tid" ] || fail "the task on host 1 did not attach"
n=$(beats_in 1 2)
ns_log "a task attached: host 1 sent $n heartbeats in 2 s"
[ "$n" -ge 8 ] || fail "host 1 with a task sent $n heartbeats in 2 s"
ns_pin_kill "$tpid"
sleep 3 # idle again

# 3. Host 3 dies while everyone is idle.
kill -KILL "$DPID_3"
wait "$DPID_3" 2>/dev/null
t0=$(date +%s.%N)
for i in 1 2; do
    for _ in $(seq 1 200); do
        [ "$(mh_ctl "$i" hosts | awk '$1 == 3 { print $2 }')" = down ] &&
            break
        sleep 0.1
    done
    st=$(mh_ctl "$i" hosts | awk '$1 == 3 { print $2 }')
    ns_log "host $i lists host 3 $st after" \
        "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
    [ "$st" = down ] || fail "host $i lists the dead host 3 as '$st'"
done
n=$(beats_in 1 2)
ns_log "host 3 down: host 1 sent $n heartbeats in 2 s"
[ "$n" -ge 8 ] || fail "host 1, a host down, sent $n heartbeats in 2 s"

# 4. Host 3 comes back; idle again, nobody is declared down.
start_daemon 3
for i in $(seq 1 $N); do
    mh_wait_up "$i" $N || fail "host $i does not see host 3 back"
done
u0=$(ups 1)
sleep 5
for i in $(seq 1 $N); do
    [ "$(ups "$i")" = "$u0" ] ||
        fail "after the restart host $i lists '$(ups "$i")' up, host 1 '$u0'"
done
[ "$(echo "$u0" | wc -w)" = 3 ] || fail "host 1 lists '$u0' up"
n=$(beats_in 3 4)
ns_log "the restarted host 3 sent $n heartbeats in 4 s, idle"
[ "$n" -le 12 ] || fail "the restarted idle host 3 sent $n heartbeats in 4 s"

# 5. Host 3 restarts at once: its peers, idle and beating slowly, see a
#    new incarnation without declaring anyone down; they must heartbeat
#    it at once (it does not know their interval), or it would declare
#    them down when it goes idle itself.
inc3=$(mh_inc_of 3)
l1=$(wc -l <"$NS_RUN/d1.log")
l2=$(wc -l <"$NS_RUN/d2.log")
kill -KILL "$DPID_3"
wait "$DPID_3" 2>/dev/null
start_daemon 3 # a new d3.log
sleep 6 # no collsctl meanwhile: it would wake the daemons up
[ "$(mh_inc_of 3)" != "$inc3" ] || fail "host 1 did not see host 3 restart"
# No host went down meanwhile, not even for a moment (a listed host the
# restarted daemon did not hear from within --dead-after goes down).
downs=$( (tail -n +"$((l1 + 1))" "$NS_RUN/d1.log"
    tail -n +"$((l2 + 1))" "$NS_RUN/d2.log"
    cat "$NS_RUN/d3.log") | grep -c ' is down')
[ "$downs" = 0 ] ||
    fail "$downs host(s) went down after the quick restart of host 3"
u0=$(ups 1)
for i in $(seq 1 $N); do
    [ "$(ups "$i")" = "$u0" ] ||
        fail "after a quick restart host $i lists '$(ups "$i")' up, host 1 '$u0'"
done
[ "$(echo "$u0" | wc -w)" = 3 ] || fail "host 1 lists '$u0' up"
[ "$(stat 3 hosts_down)" = 0 ] ||
    fail "the quickly restarted host 3 declared a host down"

# 6. `collsctl add` on host 2 of a standalone daemon on host 4 while every
#    daemon is idle: the assigner (host 1) beats slowly, yet the joining
#    host gets its invitation at once (host_beat_early), not at the next
#    slow cron, after the add has given up (--dead-after).
# shellcheck disable=SC2046,SC2086
host_bg 4 d4.log "$B/collsd" --foreground --listen "$(ns_addr 4):7490" \
    --socket "$SOCK" --name host4 $(mh_trust) $DOPTS
sleep 4 # everyone idle and beating slowly again
out=$(mh_ctl 2 add "$(ns_addr 4):7490" 2>&1) ||
    fail "add of host 4 while idle: $out"
ns_log "$out"
for i in 1 2 3 4; do
    mh_wait_up "$i" 4 || fail "host $i does not see 4 hosts up after the add"
done
ns_finish
