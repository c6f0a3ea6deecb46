#!/bin/bash
# coll-errors.sh -- group and collective mistakes reach the program with a
# code that says what kind and the daemon's words (colls_errmsg), two
# collsd on loopback.  errs-check prints "STEP: ENAME: words" per step.
#
# 1. Counts that differ between ranks: an allreduce of 16 against 8 int32,
#    ranks on two daemons (the executor meets "64 bytes from rank R, 32
#    expected") and on one daemon (the requests disagree: "count 8 at rank
#    1, 16 at rank 0"): every rank gets COLLS_ECOUNT with those words.
#    Then direct among the tasks (libclient/dcoll.c): the same code and
#    the executor's words.
# 2. Joiners giving different sizes (2, then 3): both fail at once with
#    COLLS_ESIZE naming both sizes; `collsctl groups` lists the forming
#    group while the first waits.
# 3. A third task joining a formed group of two: COLLS_EFULL.  A task
#    joining a group it is in: COLLS_EMEMBER ("already rank 0"), and
#    joining twice while forming (the first join timed out): COLLS_EMEMBER
#    ("has already asked").
# 4. COLLS_ALG_ALLREDUCE=nosuch: the allreduce fails with COLLS_EINVAL and
#    "COLLS_ALG_ALLREDUCE=nosuch: unknown algorithm ... (one of: ...)";
#    the daemon logs it once, not per collective; `collsctl bench --algo
#    nosuch` refuses it before it starts (exit 2), with the names.  A misspelt
#    COLLS_ALG_ALLREDCE fails the join, naming the variable and the
#    operations.
# 5. The daemons' --max-message (1 MiB here) bounds each buffer, not the
#    group's data: 4 members, 2 per daemon, in hierarchical and in flat
#    mode.  An allreduce of 512 KiB (P x n = 2 MiB, each host's share 1
#    MiB) gives the right sums; a gather of those blocks (2 MiB at the
#    root) fails with COLLS_EMSGSIZE at the root, an allreduce of 1 MiB
#    + 4 bytes at every member.
# 6. No daemon log line shows an error as a bare number ("error -4002").
. "${top_srcdir:-.}/tests/integration/lib.sh"

EC=$IT_B/tests/integration/errs-check
[ -x "$EC" ] || {
    echo "SKIP: $EC not built" >&2
    exit 77
}
it_setup
it_start 2 --max-message 1M || exit 1
it_wait_hosts 2 || exit 1

# ec LOG DAEMON ARGS...: errs-check against daemon DAEMON, in the
# background (pid in IT_LASTPID), output in IT_DIR/LOG.
ec()
{
    local log=$1 i=$2
    shift 2
    it_bg "$log" "$EC" --socket "$(it_sock "$i")" "$@"
}

# expect LOG REGEX: LOG has a line matching REGEX (extended).
expect()
{
    grep -Eq -- "$2" "$IT_DIR/$1" ||
        it_fail "$1: want /$2/, got: $(cat "$IT_DIR/$1")"
}

# finish PID...: each ends by itself, exit 0.
finish()
{
    local p rc
    for p in "$@"; do
        it_wait "$p" 60
        rc=$?
        [ "$rc" = 0 ] || it_fail "errs-check pid $p: exit $rc"
    done
}

# pair NAME I J CA CB: two members of group NAME, on daemons I and J, an
# allreduce of CA and CB items; their outputs in NAME-a and NAME-b.
pair()
{
    local a
    ec "$1-a" "$2" --group "$1" --size 2 --count "$4"
    a=$IT_LASTPID
    ec "$1-b" "$3" --group "$1" --size 2 --count "$5"
    finish "$a" "$IT_LASTPID"
}

# 1. counts that differ: ranks on two daemons, then on one (through the
# daemons: COLLS_DIRECT_MAX=0), then direct among the tasks (dcoll.c
# meets a message of the wrong length, with the executor's words)
export COLLS_DIRECT_MAX=0
pair cnt2 1 2 16 8
for l in cnt2-a cnt2-b; do
    expect "$l" '^allreduce: ECOUNT: (64|32) bytes from rank [01], (32|64) expected$'
done
pair cnt1 1 1 16 8
for l in cnt1-a cnt1-b; do
    expect "$l" '^allreduce: ECOUNT: count (8|16) at rank [01], (16|8) at rank [01]$'
done
unset COLLS_DIRECT_MAX
pair cntd 1 2 16 8
for l in cntd-a cntd-b; do
    expect "$l" '^allreduce: ECOUNT: (64|32) bytes from rank [01], (32|64) expected$'
done

# 2. sizes that differ; the first joiner is listed as forming meanwhile
ec sz-a 1 --group sz --size 2
a=$IT_LASTPID
for _ in $(seq 1 50); do
    it_ctl 1 groups >"$IT_DIR/groups.out" 2>&1
    grep -q '^sz .* forming' "$IT_DIR/groups.out" && break
    sleep 0.1
done
grep -Eq '^sz +- +2 +1 +forming' "$IT_DIR/groups.out" ||
    it_fail "collsctl groups does not list forming group sz: $(cat "$IT_DIR/groups.out")"
ec sz-b 2 --group sz --size 3
finish "$a" "$IT_LASTPID"
for l in sz-a sz-b; do
    expect "$l" '^join: ESIZE: group sz: size 3 asked by t[0-9a-f]+, 2 by t[0-9a-f]+ \(1 of 2 joined\); every joiner refused$'
done

# 3. a full group, a member joining again, a joiner asking twice
ec full-a 1 --group full --size 2 --hold-ms 4000
a=$IT_LASTPID
ec full-b 2 --group full --size 2 --hold-ms 4000
b=$IT_LASTPID
for _ in $(seq 1 100); do
    grep -q '^join: rank' "$IT_DIR/full-a" && grep -q '^join: rank' "$IT_DIR/full-b" && break
    sleep 0.1
done
ec full-c 1 --group full --size 2
finish "$IT_LASTPID" "$a" "$b"
expect full-c '^join: EFULL: group full is full: formed with its 2 members \(gid [0-9a-f]{16}\); join another name$'
expect full-a '^held$'
ec twice 2 --group one --size 1 --twice
finish "$IT_LASTPID"
expect twice '^join: rank 0$'
expect twice '^join2: EMEMBER: t[0-9a-f]+ is already rank 0 of group one \(gid [0-9a-f]{16}\)$'
ec twice2 1 --group two --size 2 --twice --timeout-ms 1000
finish "$IT_LASTPID"
expect twice2 '^join: ETIMEDOUT: '
expect twice2 '^join2: EMEMBER: t[0-9a-f]+ has already asked to join group two \(1 of 2 joined\)$'

# 4. an unknown algorithm, a misspelt variable
n0=$(cat "$IT_DIR"/d*.log | grep -c nosuch)
COLLS_ALG_ALLREDUCE=nosuch pair alg 1 2 4 4
for l in alg-a alg-b; do
    expect "$l" '^allreduce: EINVAL: COLLS_ALG_ALLREDUCE=nosuch: unknown algorithm "nosuch" for allreduce \(one of: [a-z_]+(, [a-z_]+)+\)$'
done
n1=$(cat "$IT_DIR"/d*.log | grep -c nosuch)
[ $((n1 - n0)) -le 2 ] ||
    it_fail "the unknown algorithm took $((n1 - n0)) daemon log lines, want at most 2"
out=$(it_ctl 1 bench allreduce --algo nosuch --sizes 8:64 -n 2 \
    --sockets "$(it_sock 1),$(it_sock 2)" 2>&1)
rc=$?
echo "$out" | grep -Eq '^collsctl bench: unknown algorithm nosuch for allreduce \(one of: [a-z_]+( [a-z_]+)+\)$' &&
    [ "$rc" = 2 ] || it_fail "bench --algo nosuch: rc $rc, '$out'"
COLLS_ALG_ALLREDCE=ring ec typo 1 --group typo --size 1
finish "$IT_LASTPID"
expect typo '^join: EINVAL: COLLS_ALG_ALLREDCE: no such operation \(COLLS_ALG_<OP>, OP one of: BARRIER BCAST .*ALLREDUCE.*\)$'

# 5. the message limit is per buffer
for mode in hier flat; do
    pids=""
    for k in 1 2 3 4; do
        ec "big-$mode-$k" $(((k + 1) / 2)) --group "big-$mode" --size 4 \
            --mode "$mode" --count 131072 --gather
        pids="$pids $IT_LASTPID"
    done
    finish $pids
    pids=""
    for k in 1 2 3 4; do
        expect "big-$mode-$k" '^allreduce: OK$'
        # the others' part is done once their block is handed over
        if grep -q '^join: rank 0$' "$IT_DIR/big-$mode-$k"; then
            expect "big-$mode-$k" '^gather: EMSGSIZE: '
        else
            expect "big-$mode-$k" '^gather: (OK|EMSGSIZE: )'
        fi
        ec "over-$mode-$k" $(((k + 1) / 2)) --group "over-$mode" --size 4 \
            --mode "$mode" --count 262145
        pids="$pids $IT_LASTPID"
    done
    finish $pids
    for k in 1 2 3 4; do
        expect "over-$mode-$k" '^allreduce: EMSGSIZE: '
    done
done

# 6. logs name errors
if grep -E 'error -?[0-9]+' "$IT_DIR"/d*.log >"$IT_DIR/bare.out"; then
    it_fail "daemon logs print bare error numbers: $(cat "$IT_DIR/bare.out")"
fi
for i in 1 2; do
    it_alive "$i" || it_fail "daemon $i died"
done
it_finish
