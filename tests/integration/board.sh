#!/bin/bash
# board.sh -- hierarchical direct collectives and the board of a host
# (libclient/hcoll.c, board.h; docs/collectives.md, "The board"), on two
# daemons on loopback, checked by board-check (results against what each
# member put in; how each call handed its data within the host):
#   - 3 + 2 members: every host's members use their board;
#   - a root 500 bcasts ahead of members that sleep first: its mailbox
#     fills, its puts wait for room (counted), every value arrives;
#   - the same with COLLS_BOARD=0 for one member of daemon 1: that host
#     falls back to the direct route, daemon 2's keeps its board, results
#     the same; with COLLS_BOARD=0 everywhere, both fall back;
#   - a corrupt board (a member writes a slot ahead of the reader, or a
#     length beyond the slot): the reader alone fails with COLLS_EIO
#     naming the board, in time; its connection and the daemon serve on;
#   - 100 members on one daemon, one board;
#   - one member per daemon (no board: dcoll.c), large bcasts and
#     allreduces back to back after the non-roots slept: every message of
#     COLLS__DCOLL_RNDV bytes or more waited for its receiver's
#     clear-to-send, none was copied out of the inbox.
# A member killed in the middle of a hierarchical collective is
# coll-fail.sh's (--mode direct, 2 + 1 + 2 members).
. "${top_srcdir:-.}/tests/integration/lib.sh"

BC=$IT_B/tests/integration/board-check
[ -x "$BC" ] || {
    echo "SKIP: $BC not built" >&2
    exit 77
}
it_setup
it_start 2 || exit 1
it_wait_hosts 2 || exit 1

# run NAME ROUNDS SPEC...: one board-check --mode run per SPEC
# "DAEMON:EXPECT[:ENV=VALUE]", all in group NAME; each must print its
# "run: ok" line within the bound.
run()
{
    local name=$1 rounds=$2 n k=0 spec d e env pid pids="" rc
    shift 2
    n=$#
    for spec in "$@"; do
        IFS=: read -r d e env <<<"$spec"
        it_bg "$name-$k.log" env ${env:-COLLS_NOTHING=} "$BC" \
            --socket "$(it_sock "$d")" --mode run --group "$name" --size "$n" \
            --rounds "$rounds" --expect "$e" --timeout-ms 60000
        pids="$pids $IT_LASTPID"
        k=$((k + 1))
    done
    k=0
    for pid in $pids; do
        it_wait "$pid" 240
        rc=$?
        grep -q "^run: ok $rounds " "$IT_DIR/$name-$k.log" ||
            it_fail "$name: member $k (rc $rc): $(tail -3 "$IT_DIR/$name-$k.log")"
        k=$((k + 1))
    done
}

# ---- both hosts on their boards -------------------------------------------
run b1 4 1:board 1:board 1:board 2:board 2:board

# ---- fallback: one member of daemon 1 will not map a board ----------------
run b2 3 1:direct:COLLS_BOARD=0 1:direct 1:direct 2:board 2:board
run b3 3 1:direct:COLLS_BOARD=0 1:direct:COLLS_BOARD=0 2:direct:COLLS_BOARD=0 \
    2:direct:COLLS_BOARD=0

# ---- a full mailbox: the root waits for room, nothing is overwritten -------
pids=""
for k in 0 1 2; do
    it_bg "full-$k.log" "$BC" --socket "$(it_sock 1)" --mode full --group full \
        --size 3 --rounds 500 --expect board --timeout-ms 60000
    pids="$pids $IT_LASTPID"
done
for pid in $pids; do
    it_wait "$pid" 120 || it_fail "full: a member failed: $(cat "$IT_DIR"/full-*.log)"
done
[ "$(cat "$IT_DIR"/full-*.log | grep -c '^full: ok 500')" = 3 ] ||
    it_fail "full: $(cat "$IT_DIR"/full-*.log)"
w=$(sed -n 's/^full: waited //p' "$IT_DIR"/full-*.log)
[ -n "$w" ] && [ "$w" -gt 0 ] || it_fail "full: the root never waited for room ($w)"

# ---- a corrupt board: the reader alone fails --------------------------------
for what in seq len; do
    it_bg "c-$what-0.log" "$BC" --socket "$(it_sock 1)" --mode corrupt \
        --group "c$what" --what "$what" --timeout-ms 10000
    p0=$IT_LASTPID
    it_bg "c-$what-1.log" "$BC" --socket "$(it_sock 1)" --mode corrupt \
        --group "c$what" --what "$what" --timeout-ms 10000
    p1=$IT_LASTPID
    it_wait "$p0" 60 || it_fail "corrupt $what: a member failed: $(cat "$IT_DIR/c-$what-"*.log)"
    it_wait "$p1" 60 || it_fail "corrupt $what: a member failed: $(cat "$IT_DIR/c-$what-"*.log)"
    cat "$IT_DIR/c-$what-"*.log >"$IT_DIR/c-$what.all"
    grep -q "^corrupt: EIO: the board of group c$what is corrupt" \
        "$IT_DIR/c-$what.all" ||
        it_fail "corrupt $what: no EIO naming the board: $(cat "$IT_DIR/c-$what.all")"
    grep -q "^corrupt: self ok" "$IT_DIR/c-$what.all" ||
        it_fail "corrupt $what: the reader's connection broke"
done
it_alive 1 || it_fail "daemon 1 died"
run b4 1 1:board 1:board

# ---- 100 members on one daemon -----------------------------------------------
specs=""
for _ in $(seq 1 100); do
    specs="$specs 2:board"
done
# shellcheck disable=SC2086
run b100 2 $specs

# ---- one member per host: large messages wait for a clear-to-send -----------
for k in 0 1; do
    it_bg "rndv-$k.log" "$BC" --socket "$(it_sock $((k + 1)))" --mode rndv \
        --group rndv --size 2 --rounds 6 --timeout-ms 60000
    eval "prndv$k=\$IT_LASTPID"
done
for k in 0 1; do
    eval "it_wait \$prndv$k 120"
    grep -q "^rndv: ok 6 copied 0" "$IT_DIR/rndv-$k.log" ||
        it_fail "rndv: member $k: $(tail -3 "$IT_DIR/rndv-$k.log")"
done

it_alive 1 && it_alive 2 || it_fail "a daemon died"
it_finish
