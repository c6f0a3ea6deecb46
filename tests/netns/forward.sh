#!/bin/bash
# forward.sh -- a daemon forwards a collective's data before it hands the
# data to its own task (task.c, task_enqueue and task_flush_due;
# docs/architecture.md, "Forward before delivering").
#
# Three emulated hosts (network namespaces, one collsd and one member
# each, everything pinned to CPU 0 so that the members sleep and every
# delivery rings a doorbell) run back-to-back chain bcasts through the
# daemons (`collsctl bench bcast --hier --algo chain`): rank 0 on host 1
# sends to rank 1 on host 2, which passes the data on to host 3 and
# delivers it to its member.  strace follows host 2's daemon: in each of
# its loop turns (the stretch between two epoll_waits) that both sends
# datagrams (sendmmsg) and rings its member's doorbell (an 8-byte write of
# 1 to the eventfd), the sendmmsg must come first.  Before the change the
# doorbell was rung as soon as the result was queued, ahead of the turn's
# datagrams: 0 turns of 7 had the send first.
# Needs root (exit 77 otherwise) and strace (exit 77 without it).
. "${top_srcdir:-.}/tests/netns/lib.sh"

B=${top_builddir:-.}
B=$(cd "$B" && pwd -P)
SOCK=/tmp/collsd/collsd.sock
N=3

command -v strace >/dev/null || {
    echo "SKIP: strace is not installed" >&2
    exit 77
}
mh_init "$B" "$SOCK" "$N" collsd collsctl
for i in $(seq 1 $N); do
    # --measure=no: no probes of the daemons' own among the turns
    mh_daemon "$i" --measure=no
    taskset -a -cp 0 "$NS_LASTPID" >/dev/null || fail "taskset host $i"
    [ "$i" = 2 ] && D2=$NS_LASTPID
done
for i in $(seq 1 $N); do
    mh_wait_up "$i" $N || fail "host $i does not see $N hosts up"
done
[ "$FAILED" = 0 ] || ns_finish

strace -qq -e trace=epoll_wait,sendmmsg,write -e signal=none \
    -o "$NS_RUN/d2.strace" -p "$D2" &
ST=$!
sleep 0.5 # attached
pids=""
for i in $(seq 1 $N); do
    host_bg "$i" "bench$i.log" timeout 60 taskset -c 0 "$B/collsctl" \
        --socket "$SOCK" bench bcast --hier --algo chain --sizes 4:4 \
        --runs 2 --iters 50 --group fwd -n $N
    pids="$pids $NS_LASTPID"
done
for p in $pids; do
    wait "$p" || fail "collsctl bench (pid $p) failed"
done
kill -INT "$ST" 2>/dev/null
wait "$ST" 2>/dev/null
grep -q chain "$NS_RUN/bench1.log" ||
    fail "the bench did not run the chain: $(cat "$NS_RUN/bench1.log")"

# per turn: which came first, the datagrams or the doorbell
read -r sendfirst bellfirst < <(awk '
    function turn() { if (s && b) { if (first == "s") sf++; else bf++ }
                      s = b = 0; first = "" }
    /^epoll_wait\(/ { turn(); next }
    /^sendmmsg\(/ { s = 1; if (first == "") first = "s" }
    /^write\([0-9]+, "\\1\\0\\0\\0\\0\\0\\0\\0", 8\)/ {
        b = 1; if (first == "") first = "b" }
    END { turn(); print sf + 0, bf + 0 }' "$NS_RUN/d2.strace")
echo "host 2's turns that send and ring: send first $sendfirst, ring first $bellfirst"
[ "$sendfirst" -ge 5 ] ||
    fail "only $sendfirst turns of host 2 sent before they rang its member"
[ $((4 * bellfirst)) -le "$sendfirst" ] ||
    fail "$bellfirst turns of host 2 rang its member before they sent"

ns_finish
