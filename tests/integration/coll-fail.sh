#!/bin/bash
# coll-fail.sh -- failures during collectives, three collsd on 127.0.0.1.
#
# 1. a member task dies mid-operation: 5 members (2 + 1 + 2 on daemons
#    1..3) run back-to-back allreduces; rank 3 kills itself (SIGKILL) in
#    round 20 while the others are inside that round's call.  Every
#    survivor's call must return COLLS_EPEERDEAD (each asserts it, and a
#    later barrier on the group fails the same way); the 4 survivors then
#    join the same name again and pass a checked allreduce and a barrier.
#    Run twice: the victim on a daemon with another member, and rank 0;
#    then twice with --mode direct (the allreduces run among the tasks,
#    libclient/dcoll.c: the survivors learn of the death from their
#    daemons while they wait for the dead task's message).
# 2. a host's daemon dies mid-operation: 6 members (2 per daemon); after
#    rank 0 reports round 20, daemon 3 is killed (-9).  Every member on
#    daemons 1 and 2 must get COLLS_EHOSTDOWN (the call bounded by the
#    task timeout; its duration is printed and must stay within a loose
#    liveness bound of 3 x --dead-after + 2 s), then the 4 survivors form
#    the group again.  Daemon 3 restarts and a group over all three
#    daemons passes a smoke matrix.
# Last, daemon 3 is killed under two tasks running large allreduces without
# a time limit (single copy): both calls must fail at once.
# Every run is bounded by timeout; the harness kills everything at exit.
. "${top_srcdir:-.}/tests/integration/lib.sh"

CC=$IT_B/tests/integration/coll-check
[ -x "$CC" ] || {
    echo "SKIP: $CC not built" >&2
    exit 77
}
DEAD_AFTER=1500
it_setup
it_start 3 --dead-after "$DEAD_AFTER" || exit 1
it_wait_hosts 3 || exit 1
S="$(it_sock 1),$(it_sock 2),$(it_sock 3)"

# 1. member death.
for run in "3 auto" "0 auto" "3 direct" "1 direct"; do
    set -- $run
    victim=$1
    mode=$2
    out=$(timeout 120 "$CC" -n 5 --sockets "$S" --layout 2,1,2 \
        --group "pd$victim$mode" --check fail --expect peerdead \
        --victim "$victim" --after 20 --reform 4 --timeout-ms 30000 \
        --mode "$mode" 2>&1)
    rc=$?
    echo "$out"
    [ "$rc" = 0 ] || it_fail "member death (victim rank $victim, $mode): rc $rc"
    n=$(echo "$out" | grep -c 'survivor rank .*: EPEERDEAD')
    [ "$n" = 4 ] || it_fail "victim $victim ($mode): $n survivors saw EPEERDEAD, not 4"
    n=$(echo "$out" | grep -c '^re-formed .* passed')
    [ "$n" = 4 ] || it_fail "victim $victim ($mode): $n re-formed members, not 4"
done

# 2. host death.
ready="$IT_DIR/hd.ready"
it_bg hd.log timeout 120 "$CC" -n 6 --sockets "$S" --layout 2,2,2 \
    --group hd --check fail --expect hostdown --victim-daemon 2 \
    --after 20 --ready "$ready" --reform 4 --timeout-ms 30000
hd=$IT_LASTPID
for _ in $(seq 1 600); do
    [ -e "$ready" ] && break
    kill -0 "$hd" 2>/dev/null || break
    sleep 0.1
done
if [ -e "$ready" ]; then
    sleep 0.2
    it_kill 3
else
    it_fail "host death: the members never reached round 20"
fi
it_wait "$hd" 120 || it_fail "host death: coll-check failed"
cat "$IT_DIR/hd.log"
n=$(grep -c 'survivor rank .*: EHOSTDOWN' "$IT_DIR/hd.log")
[ "$n" = 4 ] || it_fail "host death: $n survivors saw EHOSTDOWN, not 4"
n=$(grep -c '^re-formed .* passed' "$IT_DIR/hd.log")
[ "$n" = 4 ] || it_fail "host death: $n re-formed members, not 4"
bound=$((3 * DEAD_AFTER + 2000))
for ms in $(sed -n 's/.*failing call took \([0-9]*\) ms/\1/p' \
    "$IT_DIR/hd.log"); do
    [ "$ms" -le "$bound" ] ||
        it_fail "host death: a survivor waited $ms ms (> $bound)"
done

# Daemon 3 back: a group over all three daemons works again.
it_restart 3 || exit 1
it_wait_hosts 3 || exit 1
out=$(timeout 120 "$CC" -n 6 --sockets "$S" --layout 2,2,2 --group again \
    --level smoke --ops barrier,bcast,allreduce,alltoall \
    --timeout-ms 30000 2>&1) || it_fail "after restart: $out"
for i in 1 2 3; do
    it_alive "$i" || it_fail "daemon $i died"
done

# Daemon 3 killed while its two tasks wait in large allreduces without a
# time limit, hierarchical (in AUTO two members of one daemon would run
# it among themselves, hcoll.c), which go by single copy (the daemon may be reading or
# writing their buffers; docs/protocol.md): each call must fail at once
# (the library waits for the daemon's end of the socket, here at once),
# not hang.
for k in 1 2; do
    it_bg "cmakill$k.log" timeout 60 "$IT_B/collsctl" --socket \
        "$(it_sock 3)" bench allreduce --sizes 1048576:1048576 --runs 100 \
        --iters 50 -n 2 --group cmakill --hier
    eval "ck$k=\$IT_LASTPID"
done
moved=0
for _ in $(seq 1 100); do
    moved=$(it_ctl 3 stats --json | grep -oE '"cma_bytes_out": *[0-9]+' |
        grep -oE '[0-9]+$')
    [ "${moved:-0}" -gt 0 ] && break
    sleep 0.1
done
[ "${moved:-0}" -gt 0 ] || it_fail "single copy: no result written in place"
it_kill 3
for k in 1 2; do
    eval "p=\$ck$k"
    it_wait "$p" 20
    rc=$?
    it_log "single copy, daemon killed: task $k exited $rc:" \
        "$(tail -n 1 "$IT_DIR/cmakill$k.log")"
    [ "$rc" != 0 ] && [ "$rc" != 124 ] ||
        it_fail "single copy, daemon killed: task $k exited $rc (0: no" \
            "error; 124: hung)"
done
it_finish
