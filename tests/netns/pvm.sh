#!/bin/bash
# pvm.sh -- PVM programs over three emulated hosts (network namespaces,
# one collsd each), started through collsd's spawn:
# 1. master/worker (tests/pvm/pvm-master.c) on host 1: six workers spawned
#    anywhere land on all three hosts, one on host3 by name, one by
#    architecture; a missing program is PvmNoFile per copy; the workers'
#    output comes back through pvm_catchout with their tids; sums, parent,
#    pvm_tasks, pvm_kill and every PvmTaskExit notification check out;
#    every worker sees the variable pvm_export named and the master's
#    COLLS_* setting, not the one pvm_unexport took back; the
#    workers' group (pvmgs started by libgpvm3 through spawn) reduces to
#    the serial sum.
# 2. `collsctl spawn -n 5 tests/pvm/pvm-group 5`: five members over the
#    three hosts run every group call, dynamic and frozen, against serial
#    results (as tests/integration/pvm.sh does on loopback) and find each
#    other with pvm_siblings; each exits 0.
# Needs root (exit 77 otherwise).  Bounded: every step runs under timeout.
. "${top_srcdir:-.}/tests/netns/lib.sh"

B=${top_builddir:-.}
B=$(cd "$B" && pwd -P)
SOCK=/tmp/collsd/collsd.sock
N=3
DOPTS="--heartbeat 100 --dead-after 3000 --request-timeout 3000"

mh_init "$B" "$SOCK" "$N" collsd collsctl pvm/pvmgs tests/pvm/pvm-master \
    tests/pvm/pvm-group
for i in $(seq 1 $N); do
    mh_daemon "$i" $DOPTS --spawn-path "$B/tests/pvm:$B/pvm"
done
for i in $(seq 1 $N); do
    mh_wait_up "$i" $N || fail "host $i does not see $N hosts up"
done

# 1. master/worker
out=$(host_run 1 env COLLS_SOCKET="$SOCK" timeout 120 \
    "$B/tests/pvm/pvm-master" 6 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "pvm-master 6: exit $rc"
echo "$out" | grep '^master: ' | grep -v ': ok$' |
    grep -vx 'master: workers on 3 hosts' | grep -q . &&
    fail "pvm-master: $(echo "$out" | grep FAIL)"
# catchout, spawn missing/default/host/arch, notify, 8 results, group
# reduce, tasks, kill, exits
n=$(echo "$out" | grep -c '^master: .*: ok$')
[ "$n" = 27 ] || fail "pvm-master: $n checks ok, 27 expected"
echo "$out" | grep -qx 'master: workers on 3 hosts' ||
    fail "pvm-master: the six workers are not on all three hosts"
w=$(echo "$out" | grep -Ec '^\[t[0-9a-f]+\] worker t[0-9a-f]+ on host[1-3]$')
[ "$w" -ge 8 ] || fail "pvm-master: $w worker lines caught, 8 expected"
echo "$out" | grep -E '^\[t[0-9a-f]+\] worker' |
    awk '{ t = $1; gsub(/[][]/, "", t); if (t != $3) bad = 1 } END { exit bad }' ||
    fail "pvm-master: a caught line does not carry its worker's tid"

# 2. groups over the three hosts, members started by collsctl spawn
out=$(host_run 2 sh -c "cd '$B' && timeout 120 '$B/collsctl' \
    --socket '$SOCK' spawn -n 5 tests/pvm/pvm-group 5" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "collsctl spawn -n 5 pvm-group: exit $rc"
echo "$out" | grep -E 'FAIL|exit [1-9]' && fail "pvm-group over 3 hosts"
[ "$(echo "$out" | grep -Ec '^copy [0-4]: t[0-9a-f]+ exit 0$')" = 5 ] ||
    fail "pvm-group: not five copies with exit 0: $(echo "$out" | tail -8)"
n=$(echo "$out" | grep -c ': ok$')
[ "$n" -gt 500 ] || fail "pvm-group: only $n checks ok"
[ "$(echo "$out" | grep -c ': siblings: ok$')" = 5 ] ||
    fail "pvm-group: pvm_siblings does not list the five copies"
echo "$out" | grep '^copy'
echo "pvm-group: $n checks ok"

ns_finish
