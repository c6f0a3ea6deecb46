#!/bin/bash
# loopback.sh -- three collsd daemons on 127.0.0.1, tasks on each.
#
# 1. the machine forms (every daemon lists 3 hosts up);
# 2. p2p-check: 6 workers (two per daemon) exchange every size, encoding
#    and route pairwise, bytes and order checked; workers 0 and 1 also
#    exchange 32 MiB messages;
# 3. error codes: ETRUNC (both routes), ENOENT for bogus tids,
#    EPEERDEAD when a task (on another daemon, and on the same one) dies
#    while being waited for, and the task-exit notification; a task's
#    last direct message, written just before it exits, is received;
# 4. the daemons are still up afterwards and answer collsctl.
# The daemons share a cluster key (every datagram authenticated).
. "${top_srcdir:-.}/tests/integration/lib.sh"

P2P=$IT_B/tests/integration/p2p-check
it_setup
KEY=$(it_keygen) || it_fail "collsctl keygen failed"
[ "$(stat -c %a "$KEY")" = 600 ] || it_fail "the key file is not mode 600"
"$IT_B/collsctl" keygen "$KEY" 2>/dev/null && it_fail "keygen overwrote a key"
cp "$KEY" "$IT_DIR/open.key" && chmod 644 "$IT_DIR/open.key"
out=$("$IT_B/collsd" --foreground --key-file "$IT_DIR/open.key" \
    --listen 127.0.0.1:0 --socket "$IT_DIR/open/s" 2>&1) &&
    it_fail "collsd used a key file readable by others"
echo "$out" | grep -q "chmod 600" || it_fail "no chmod 600 hint: $out"
it_start 3 --key-file "$KEY" || exit 1
it_wait_hosts 3 || exit 1
it_ctl 1 hosts

P2P_OPTS="--big --timeout-ms 60000" it_p2p all 1 1 2 3 1 2 3

for i in 2 3; do
    out=$(timeout 60 "$P2P" --socket "$(it_sock 1)" --mode etrunc \
        --peer-socket "$(it_sock "$i")" 2>&1) ||
        it_fail "ETRUNC with a task on daemon $i: $out"
done
out=$(timeout 60 "$P2P" --socket "$(it_sock 2)" --mode enoent 2>&1) ||
    it_fail "ENOENT: $out"
echo "$out"
for i in 1 3; do
    out=$(timeout 60 "$P2P" --socket "$(it_sock 1)" --mode peerdead \
        --peer-socket "$(it_sock "$i")" 2>&1) ||
        it_fail "EPEERDEAD with a task on daemon $i: $out"
    echo "$out"
    # a task's last direct message, still in our listener's backlog when
    # its TASK_EXIT comes, is received, not lost
    out=$(timeout 60 "$P2P" --socket "$(it_sock 1)" --mode lastwords \
        --peer-socket "$(it_sock "$i")" 2>&1) ||
        it_fail "last words of a task on daemon $i: $out"
    echo "$out"
done

# Everything still answers, and no task is left attached.
for i in 1 2 3; do
    it_alive "$i" || it_fail "daemon $i died"
done
it_wait_hosts 3 || true
# Every task has gone: only collsctl itself is left in `ps -a`.
left=""
for _ in $(seq 1 50); do
    left=$(it_ctl 1 ps -a | grep -v '^TID\|this collsctl')
    [ -z "$left" ] && break
    sleep 0.1
done
[ -z "$left" ] || it_fail "tasks left attached: $left"
it_finish
