#!/bin/bash
# coll-b2b.sh -- rooted collectives back to back, no barrier between them
# (docs/collectives.md, "Completion"): a root of bcast, scatter and
# scatterv and a non-root of reduce, gather and gatherv return once their
# request is written, so several operations of one group are in flight at
# once.  coll-check --check b2b runs runs of them from varying roots mixed
# with allreduces, in hierarchical and flat mode on both placements,
# overwrites every input as soon as its call returned and compares every
# output with its serial reference.  Layouts: 4 hosts x 1 task, 2 hosts x
# 4 tasks, uneven 1 + 2 + 3, and 1 host x 3 tasks (the local phase only).
. "${top_srcdir:-.}/tests/integration/lib.sh"

CC=$IT_B/tests/integration/coll-check
[ -x "$CC" ] || {
    echo "SKIP: $CC not built" >&2
    exit 77
}
it_setup
it_start 4 || exit 1
it_wait_hosts 4 || exit 1

ITERS=400
[ "${COLLS_QUICK:-0}" = 1 ] && ITERS=100
NRUN=0

# run LAYOUT: "n1,n2,..." tasks on daemons 1, 2, ...
run()
{
    local layout=$1 socks="" p=0 i=0 n rc
    for n in $(echo "$layout" | tr ',' ' '); do
        i=$((i + 1))
        p=$((p + n))
        socks="$socks${socks:+,}$(it_sock "$i")"
    done
    NRUN=$((NRUN + 1))
    timeout 600 "$CC" -n "$p" --sockets "$socks" --layout "$layout" \
        --group "b$NRUN" --check b2b --iters "$ITERS" \
        --timeout-ms 60000 >"$IT_DIR/b2b-$NRUN.log" 2>&1
    rc=$?
    it_log "layout $layout (P=$p): rc $rc"
    grep -h "passed\|nosuch" "$IT_DIR/b2b-$NRUN.log" >&2
    if [ "$rc" != 0 ]; then
        it_fail "coll-check --check b2b layout $layout (rc $rc)"
        grep -m 10 'FAIL' "$IT_DIR/b2b-$NRUN.log" >&2
        tail -n 5 "$IT_DIR/b2b-$NRUN.log" >&2
    fi
    [ "$(grep -c 'back-to-back calls passed' "$IT_DIR/b2b-$NRUN.log")" = 2 ] ||
        it_fail "layout $layout: not both placements passed"
}

run 1,1,1,1
run 4,4
run 1,2,3
run 3

for i in 1 2 3 4; do
    it_alive "$i" || it_fail "daemon $i died"
done
left=""
for _ in $(seq 1 50); do
    left=$(it_ctl 1 ps -a | grep -v '^TID\|this collsctl')
    [ -z "$left" ] && break
    sleep 0.1
done
[ -z "$left" ] || it_fail "tasks left attached: $left"
it_finish
