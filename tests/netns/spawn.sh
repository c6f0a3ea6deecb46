#!/bin/bash
# spawn.sh -- starting programs across three emulated hosts (network
# namespaces, docs/spawn.md):
# 1. `collsctl spawn -n 6 examples/ring` on host 1 (a relative path, made
#    absolute from collsctl's directory): the ring's six lines, copies on
#    all three hosts, "exit 0" for each, exit status 0;
# 2. a master/worker program (spawn-check parent on host 2) spawns six
#    workers across the hosts: their tids and parent, no inherited
#    descriptor, the siblings list across hosts, output caught, exit
#    codes, kill, messages held for copies that attach late (from
#    another host's task), per-copy ENOENT and EPERM, as on loopback;
# 3. --host by name and --arch (uname -m) place copies there; an unknown
#    architecture fails with "host is down".
# Needs root (exit 77 otherwise).  Bounded: every step runs under timeout.
. "${top_srcdir:-.}/tests/netns/lib.sh"
. "${top_srcdir:-.}/tests/integration/spawn-ring.sh"

B=${top_builddir:-.}
B=$(cd "$B" && pwd -P)
SOCK=/tmp/collsd/collsd.sock
N=3
CHK=$B/tests/integration/spawn-check
DOPTS="--heartbeat 100 --dead-after 3000 --request-timeout 3000"

mh_init "$B" "$SOCK" "$N" collsd collsctl tests/integration/spawn-check \
    examples/ring
for i in $(seq 1 $N); do
    mh_daemon "$i" $DOPTS --spawn-path "$B/examples:$B/tests/integration"
done
for i in $(seq 1 $N); do
    mh_wait_up "$i" $N || fail "host $i does not see $N hosts up"
done
mh_ctl 1 hosts

# 1. the ring
out=$(host_run 1 sh -c "cd '$B' && timeout 60 '$B/collsctl' \
    --socket '$SOCK' spawn -n 6 examples/ring" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "collsctl spawn -n 6 examples/ring: exit $rc"
problems=$(spawn_ring_problems "$out")
[ -z "$problems" ] || fail "$problems"

# 2. master/worker
out=$(host_run 2 env COLLS_SOCKET="$SOCK" timeout 90 "$CHK" parent \
    --self "$CHK" --out "$NS_RUN/caught" --copies 6 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "spawn-check parent on host 2: exit $rc"
for want in "spawn: 6 started" "siblings: ok" "spread: ok" "output: ok" \
    "ps: parent ok" "late: ok" \
    "kill: status 143" "missing: ENOENT ENOENT" "outside: EPERM EPERM"; do
    echo "$out" | grep -qx "$want" || fail "master/worker: no '$want'"
done
for i in 0 1 2 3 4 5; do
    echo "$out" | grep -qx "exit $i: status $((10 + i))" ||
        fail "master/worker: exit status of worker $i"
    echo "$out" |
        grep -qx "child $i: tid ok, parent ok, count 6, index ok, fds ok" ||
        fail "master/worker: worker $i's tid or parent"
done

# the late copies' messages were held by their daemons: the spawner's
# "early" and its list of siblings, two per copy; at least one copy ran
# on another host than the spawner's (held as DATA from a daemon)
held() {
    mh_ctl "$1" stats --json |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["counters"]["data_held"])'
}
h1=$(held 1) h2=$(held 2) h3=$(held 3)
echo "data_held on hosts 1 2 3: $h1 $h2 $h3"
[ "$((h1 + h2 + h3))" -ge 4 ] && [ "$((h1 + h3))" -ge 2 ] ||
    fail "late copies: data_held $h1 $h2 $h3 on hosts 1 2 3"

# 3. placement by name and architecture
out=$(mh_ctl 1 spawn -n 2 --host host3 "$CHK" child 2>&1)
[ "$(echo "$out" | grep -Ec '^copy [01]: t3[0-9a-f]{5} exit 1[01]$')" = 2 ] ||
    fail "spawn --host host3: '$out'"
arch=$(uname -m)
out=$(mh_ctl 3 spawn -n 3 --arch "$arch" "$CHK" child 2>&1)
[ "$(echo "$out" | grep -Ec '^copy [0-2]: t[0-9a-f]+ exit 1[0-2]$')" = 3 ] ||
    fail "spawn --arch $arch: '$out'"
out=$(mh_ctl 3 spawn --arch no-such-arch "$CHK" child 2>&1)
echo "$out" | grep -q "host is down" || fail "spawn --arch no-such-arch: '$out'"
mh_ctl 2 hosts | awk -v a="$arch" 'NR > 1 && $NF != a { bad = 1 } END { exit bad }' ||
    fail "collsctl hosts does not show every host's architecture"

ns_finish
