#!/bin/bash
# shm.sh -- the shared-memory channel between tasks and their daemon
# (docs/architecture.md, "The shared-memory channel"), on two daemons on
# loopback:
#   - tasks of a daemon started --shm attach on shm, on the socket with
#     COLLS_SHM=0, and with a daemon started --shm=off (a fallback the
#     daemon counts, and logs only at debug level: it was chosen);
#   - p2p-check and coll-check pass on shm and with COLLS_SHM=0 alike;
#   - ring full: a task that reads nothing for a while gets 64 MiB in
#     4 MiB messages (rings of 1 MiB, --task-queue-max 1M), all arrive
#     intact; both the daemon's and the sender's full-ring waits counted;
#   - bad offers (a memfd without seals or of the wrong size, pipes for
#     doorbells): the task attaches on its socket, the daemon logs why;
#   - a corrupt ring (a task scribbles on its own indices through its
#     mapping): that task alone ends with an error naming the ring, the
#     daemon logs and counts it and serves others;
#   - a task killed (SIGKILL) in the middle of a collective and of a large
#     send: the other members get an error instead of hanging, the daemon
#     lives, and its descriptors come back to what they were;
#   - 100 tasks on one daemon, each on its own channel;
#   - a daemon started --shm=off keeps every task on the socket (--shm is
#     on by default).
. "${top_srcdir:-.}/tests/integration/lib.sh"

SC=$IT_B/tests/integration/shm-check
CC=$IT_B/tests/integration/coll-check
for p in "$SC" "$CC" "$IT_B/tests/integration/p2p-check"; do
    [ -x "$p" ] || {
        echo "SKIP: $p not built" >&2
        exit 77
    }
done
it_setup
it_start 2 --shm --task-queue-max 1M || exit 1
it_wait_hosts 2 || exit 1
S1=$(it_sock 1)
S2=$(it_sock 2)

# counters of daemon 1 (collsctl itself stays on the socket, uncounted)
stat1() { COLLS_SHM=0 it_stat_sum 1 "$1"; }
nfds() { ls "/proc/$(it_pid "$1")/fd" | wc -l; }

# ---- which channel ----------------------------------------------------------
base=$(stat1 shm_tasks)
out=$("$SC" --socket "$S1" --mode channel --count 3 --expect shm)
[ "$out" = "channel: 3 shm" ] || it_fail "default channel: '$out'"
out=$(COLLS_SHM=0 "$SC" --socket "$S1" --mode channel --count 3 --expect socket)
[ "$out" = "channel: 3 socket" ] || it_fail "COLLS_SHM=0 channel: '$out'"
[ "$(stat1 shm_tasks)" = $((base + 3)) ] ||
    it_fail "shm_tasks $(stat1 shm_tasks), not $((base + 3))"

# ---- p2p-check and coll-check on both channels -------------------------------
for mode in shm socket; do
    if [ $mode = socket ]; then export COLLS_SHM=0; fi
    before=$(stat1 shm_bytes_in)
    P2P_OPTS="--big" it_p2p "p2p-$mode" 1 1 1 2 ||
        it_fail "p2p-check on $mode"
    timeout 300 "$CC" -n 3 --sockets "$S1,$S2" --layout 2,1 \
        --group "cc-$mode" --level smoke --placement both \
        --timeout-ms 60000 >"$IT_DIR/cc-$mode.log" 2>&1 ||
        it_fail "coll-check on $mode: $(grep -m 3 FAIL "$IT_DIR/cc-$mode.log")"
    after=$(stat1 shm_bytes_in)
    if [ $mode = shm ]; then
        [ "$after" -gt $((before + 64 * 1024 * 1024)) ] ||
            it_fail "p2p-check --big on shm: only $((after - before)) bytes"
    else
        [ "$after" = "$before" ] ||
            it_fail "COLLS_SHM=0: $((after - before)) bytes through rings"
    fi
    unset COLLS_SHM
    it_log "p2p-check and coll-check pass on $mode"
done

# ---- ring full: a receiver that does not read for 3 s ------------------------
fd0=$(nfds 1)
fw=$(stat1 shm_full_waits)
tw=$(stat1 shm_task_waits)
it_bg lazy.log timeout 120 "$SC" --socket "$S1" --mode lazy \
    --tidfile "$IT_DIR/lazy.tid" --count 16 --size 4194304 --sleep-ms 3000
lazy=$IT_LASTPID
it_bg send.log timeout 120 "$SC" --socket "$S1" --mode send \
    --peer "$IT_DIR/lazy.tid" --count 16 --size 4194304
send=$IT_LASTPID
it_wait "$lazy" 120 || it_fail "lazy receiver: $(cat "$IT_DIR/lazy.log")"
it_wait "$send" 120 || it_fail "sender: $(cat "$IT_DIR/send.log")"
grep -q '^lazy: got 16 on shm$' "$IT_DIR/lazy.log" ||
    it_fail "lazy: $(cat "$IT_DIR/lazy.log")"
grep -qE '^send: sent 16, ring-full waits [1-9]' "$IT_DIR/send.log" ||
    it_fail "sender never waited for room: $(cat "$IT_DIR/send.log")"
[ "$(stat1 shm_full_waits)" -gt "$fw" ] ||
    it_fail "the daemon never waited for room in a completion ring"
[ "$(stat1 shm_task_waits)" -gt "$tw" ] ||
    it_fail "the daemon never woke a task waiting for room"

# ---- corrupt rings ------------------------------------------------------------
bad=$(stat1 shm_bad)
for what in req-head comp-tail; do
    out=$(timeout 60 "$SC" --socket "$S1" --mode scribble --what $what \
        --timeout-ms 10000) || it_fail "scribble $what: the call succeeded"
    echo "$out" | grep -q 'shared-memory channel: .*out of bounds' ||
        it_fail "scribble $what: '$out'"
    it_log "scribble $what -> $out"
done
[ "$(stat1 shm_bad)" = $((bad + 2)) ] ||
    it_fail "shm_bad $(stat1 shm_bad), not $((bad + 2))"
grep -q 'shared-memory channel: request ring head out of bounds' \
    "$IT_DIR/d1.log" || it_fail "no log line of the corrupt request ring"
it_alive 1 || it_fail "daemon 1 died of a corrupt ring"
out=$("$SC" --socket "$S1" --mode channel --count 2 --expect shm)
[ "$out" = "channel: 2 shm" ] || it_fail "after the corrupt rings: '$out'"

# ---- bad offers: attached on the socket, never accepted, counted, logged -------
fb=$(stat1 shm_fallbacks)
for what in unsealed size pipes; do
    out=$(timeout 30 "$SC" --socket "$S1" --mode offer --what $what)
    [ "$out" = "offer: attached, accepted 0" ] || it_fail "offer $what: '$out'"
done
[ "$(stat1 shm_fallbacks)" = $((fb + 3)) ] ||
    it_fail "bad offers: $(($(stat1 shm_fallbacks) - fb)) fallbacks, not 3"
for why in "memfd not sealed against shrinking and growing" \
    "memfd of the wrong size" "doorbells are not eventfds"; do
    grep -q "stays on the socket: $why" "$IT_DIR/d1.log" ||
        it_fail "no log line: $why"
done
it_alive 1 || it_fail "daemon 1 died of a bad offer"

# ---- a task killed in the middle of a collective -----------------------------
# (while they run, stats and ps show the three members on shm)
for i in 1 2 3; do
    # no timeout(1) in between: the kill must reach the task (it_wait
    # bounds the wait)
    it_bg "coll$i.log" "$SC" --socket "$S1" --mode coll \
        --group kill1 --size 3 --iters 100000000 --timeout-ms 30000
    eval "coll$i=\$IT_LASTPID"
done
sleep 2
on=$(COLLS_SHM=0 it_ctl 1 stats --json | grep -oE '"tasks_on_shm": *[0-9]+')
[ "${on##*:}" = 3 ] || it_fail "three members on shm: '$on'"
ps=$(COLLS_SHM=0 it_ctl 1 ps)
[ "$(echo "$ps" | grep -cE ' shm +shm-check$')" = 3 ] ||
    it_fail "ps does not show the three members on shm: $ps"
echo "$ps" | grep -qE ' socket +collsctl \(this collsctl\)$' ||
    it_fail "ps does not show collsctl on the socket: $ps"
COLLS_SHM=0 it_ctl 1 ps --json | grep -q '"channel": "shm"' ||
    it_fail "ps --json has no channel"
kill -KILL "$coll3"
for i in 1 2; do
    eval "p=\$coll$i"
    it_wait "$p" 60
    rc=$?
    [ "$rc" = 3 ] || it_fail "member $i after the kill: rc $rc," \
        "$(cat "$IT_DIR/coll$i.log")"
    grep -qE '^coll: E(PEERDEAD|HOSTDOWN) at [0-9]+$' \
        "$IT_DIR/coll$i.log" || it_fail "member $i: $(cat "$IT_DIR/coll$i.log")"
done
it_log "killed member: $(cat "$IT_DIR/coll1.log")"

# ---- a task killed in the middle of a large send -------------------------------
rm -f "$IT_DIR/lazy.tid"
it_bg lazy2.log "$SC" --socket "$S1" --mode lazy \
    --tidfile "$IT_DIR/lazy.tid" --count 1 --size 268435455 --sleep-ms 30000
lazy=$IT_LASTPID
it_bg send2.log "$SC" --socket "$S1" --mode send \
    --peer "$IT_DIR/lazy.tid" --count 4 --size 134217728
send=$IT_LASTPID
sleep 2
kill -KILL "$send"
kill -KILL "$lazy"
wait "$send" "$lazy" 2>/dev/null
it_alive 1 || it_fail "daemon 1 died with the killed tasks"
out=$("$SC" --socket "$S1" --mode channel --count 2 --expect shm)
[ "$out" = "channel: 2 shm" ] || it_fail "after the kills: '$out'"
for _ in $(seq 1 50); do
    [ "$(nfds 1)" = "$fd0" ] && break
    sleep 0.1
done
[ "$(nfds 1)" = "$fd0" ] || it_fail "daemon 1 has $(nfds 1) descriptors, not $fd0"

# ---- 100 tasks on one daemon ----------------------------------------------------
base=$(stat1 shm_tasks)
out=$(timeout 120 "$SC" --socket "$S2" --mode channel --count 100 --expect shm)
[ "$out" = "channel: 100 shm" ] || it_fail "100 tasks: '$out'"
[ "$(COLLS_SHM=0 it_stat_sum 2 shm_tasks)" -ge 100 ] || it_fail "100 tasks not counted"

# ---- a daemon with --shm=off: every task falls back to the socket --------------
it_kill 2
IT_OPTS="--shm=off"
rm -f "$S2"
it_restart 2 || exit 1
it_wait_hosts 2 2 || exit 1
fb=$(COLLS_SHM=0 it_stat_sum 2 shm_fallbacks)
out=$("$SC" --socket "$S2" --mode channel --count 2 --expect socket)
[ "$out" = "channel: 2 socket" ] || it_fail "--shm off: '$out'"
[ "$(COLLS_SHM=0 it_stat_sum 2 shm_fallbacks)" = $((fb + 2)) ] ||
    it_fail "--shm off: $(COLLS_SHM=0 it_stat_sum 2 shm_fallbacks) fallbacks"
grep -q 'stays on the socket: --shm off' "$IT_DIR/d2.log" &&
    it_fail "--shm=off: a fallback by choice logged at info level"

[ "$(stat1 shm_bad)" = $((bad + 2)) ] || it_fail "shm_bad moved"
it_alive 1 && it_alive 2 || it_fail "a daemon died"
it_finish
