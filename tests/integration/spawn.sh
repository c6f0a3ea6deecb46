#!/bin/bash
# spawn.sh -- starting programs through the daemons (docs/spawn.md), on
# three loopback daemons with --spawn-path naming the test programs'
# directory:
#   1. spawn-check parent: copies started over the machine with valid
#      tids and their parent, no descriptor of the daemon's, the list of
#      siblings the even copies ask for (the odd ones do not: nobody
#      waits for them), their output lines caught byte for byte (a
#      long line cut at 4096, a last line without newline, stderr), exit
#      codes through TASK_EXIT notices, the task table's parent, kill
#      (status 143), messages held for copies that attach after the spawn
#      returned, a missing file (COLLS_ENOENT per copy), a program
#      outside --spawn-path (COLLS_EPERM per copy); the counters of
#      lines delivered and copies refused;
#   2. collsctl spawn: examples/ring over three hosts prints every rank's
#      line and "exit 0" per copy; a missing program and one outside
#      --spawn-path name their error per copy and exit 1; the spawner's
#      daemon logs the lines "[tTID] line"; a spawned master's workers'
#      lines pass up through it to collsctl;
#      a copy's environment holds the spawner's COLLS_* variables (but
#      those the daemon sets) and those COLLS_EXPORT names, no others;
#   3. COLLS_NOTIFY_HOST_ADD: a host that comes back is announced, also
#      when it restarted before it was declared down;
#   4. a daemon without --spawn-path refuses (COLLS_EPERM).
. "${top_srcdir:-.}/tests/integration/lib.sh"
. "${top_srcdir:-.}/tests/integration/spawn-ring.sh"

it_require
it_setup
chk="$IT_B/tests/integration/spawn-check"
[ -x "$chk" ] || { echo "SKIP: $chk not built" >&2; exit 77; }
bindir=$(cd "$IT_B/tests/integration" && pwd)
exdir=$(cd "$IT_B/examples" && pwd)
it_start 3 --spawn-path "$bindir:$exdir" || exit 1
it_wait_hosts 3 || exit 1

# 1. the library calls
want="spawn: 4 started
child 0: tid ok, parent ok, count 4, index ok, fds ok
child 1: tid ok, parent ok, count 4, index ok, fds ok
child 2: tid ok, parent ok, count 4, index ok, fds ok
child 3: tid ok, parent ok, count 4, index ok, fds ok
siblings: ok
spread: ok
exit 0: status 10
exit 1: status 11
exit 2: status 12
exit 3: status 13
output: ok
ps: parent ok
kill: status 143
late: ok
missing: ENOENT ENOENT
bare missing: ENOENT
outside: EPERM EPERM
bad env: EINVAL
kill unknown: ENOENT
parent: ENOENT"
# (the children say hello in any order: both sides sorted)
got=$(COLLS_SOCKET=$(it_sock 1) timeout 60 "$chk" parent \
    --self "$bindir/spawn-check" --out "$IT_DIR/caught" --copies 4 |
    LC_ALL=C sort)
want_sorted=$(echo "$want" | LC_ALL=C sort)
[ "$got" = "$want_sorted" ] ||
    it_fail "spawn-check parent:
--- got
$got
--- expected
$want_sorted"

# the counters: daemon 1 delivered the caught lines (4 copies x 9), the
# daemons refused the copies outside --spawn-path
lines=$(it_ctl 1 stats --json | grep -o '"spawn_lines": *[0-9]*' | grep -o '[0-9]*$')
[ "${lines:-0}" -ge 36 ] || it_fail "spawn_lines on daemon 1: '$lines', not >= 36"
refused=0
for i in 1 2 3; do
    r=$(it_ctl "$i" stats --json | grep -o '"spawn_refused": *[0-9]*' | grep -o '[0-9]*$')
    refused=$((refused + ${r:-0}))
done
[ "$refused" -ge 5 ] || it_fail "spawn_refused: $refused over the daemons, not >= 5"

# 2. collsctl spawn
out=$(it_ctl 1 spawn -n 6 "$exdir/ring" 2>&1)
rc=$?
[ $rc -eq 0 ] || it_fail "collsctl spawn -n 6 ring: exit $rc: $out"
problems=$(spawn_ring_problems "$out")
[ -z "$problems" ] || it_fail "$problems
$out"
grep -Eq "\[t[0-9a-f]+\] ring: rank 3 of 6" "$IT_DIR/d1.log" ||
    it_fail "the spawner's daemon did not log the ring's lines"

out=$(it_ctl 2 spawn -n 2 no-such-program 2>&1)
rc=$?
want="copy 0: ENOENT (no such program, or not executable)
copy 1: ENOENT (no such program, or not executable)"
[ $rc -eq 1 ] && [ "$out" = "$want" ] ||
    it_fail "spawn of a missing program: exit $rc: '$out'"
out=$(it_ctl 2 spawn --host it3 /bin/true 2>&1)
rc=$?
want="copy 0: EPERM (not allowed by the daemon's --spawn-path)"
[ $rc -eq 1 ] && [ "$out" = "$want" ] ||
    it_fail "spawn outside --spawn-path: exit $rc: '$out'"
out=$(it_ctl 1 spawn --host 3 "$bindir/spawn-check" child 2>&1)
rc=$?
echo "$out" | grep -Eq '^copy 0: t3[0-9a-f]{5} exit 10$' && [ $rc -eq 1 ] ||
    it_fail "spawn --host 3: exit $rc: '$out'"
# a master's workers' lines pass up through it to collsctl
out=$(it_ctl 1 spawn --host 2 "$bindir/spawn-check" master 2 2>&1)
rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -Eq '^copy 0: t2[0-9a-f]{5} exit 0$' &&
    echo "$out" | grep -Eq '^\[t2[0-9a-f]{5}\] master: 2 workers, exits 10 11$' &&
    [ "$(echo "$out" | grep -Ec '^\[t[0-9a-f]+\] copy [01] line 4$')" = 2 ] &&
    [ "$(echo "$out" | grep -Ec '^\[t[0-9a-f]+\] copy [01] on stderr$')" = 2 ] ||
    it_fail "spawn of a master: exit $rc: '$out'"
# the copies' environment: the spawner's COLLS_* variables (not those
# the daemon sets) and what COLLS_EXPORT names, nothing else of its
out=$(COLLS_DIRECT_MAX=123 COLLS_SPAWN_INDEX=7 COLLS_EXPORT=IT_FOO:IT_NONE \
    IT_FOO='a b=c' IT_BAR=no it_ctl 1 spawn --host 2 "$bindir/spawn-check" \
    env COLLS_DIRECT_MAX COLLS_SPAWN_INDEX COLLS_SPAWN_COUNT COLLS_EXPORT \
    IT_FOO IT_BAR IT_NONE 2>&1)
rc=$?
want="COLLS_DIRECT_MAX=123
COLLS_SPAWN_INDEX=0
COLLS_SPAWN_COUNT=1
COLLS_EXPORT=IT_FOO:IT_NONE
IT_FOO=a b=c
IT_BAR unset
IT_NONE unset"
got=$(echo "$out" | sed -n 's/^\[t2[0-9a-f]\{5\}\] //p')
[ $rc -eq 0 ] && [ "$got" = "$want" ] ||
    it_fail "environment of a spawned copy: exit $rc: '$out'"
out=$(it_ctl 1 spawn --host nosuchhost /bin/true 2>&1)
[ $? -eq 1 ] && echo "$out" | grep -q "host is down" ||
    it_fail "spawn --host nosuchhost: '$out'"

# 3. HOST_ADD: host 3 goes down and comes back
# hostadd_arm NAME: a task on daemon 1 that waits for HOST_ADD (output in
# $IT_DIR/NAME), once it has armed the notify; hostadd_check NAME WHAT: it
# was told of host 3.
hostadd_arm()
{
    COLLS_SOCKET=$(it_sock 1) timeout 60 "$chk" hostadd >"$IT_DIR/$1" 2>&1 &
    hpid=$!
    for _ in $(seq 1 100); do
        grep -q ready "$IT_DIR/$1" && break
        sleep 0.1
    done
}
hostadd_check()
{
    wait $hpid
    [ "$(cat "$IT_DIR/$1")" = "ready
host_add: host 3" ] || it_fail "$2: $(cat "$IT_DIR/$1")"
}
it_kill 3
for _ in $(seq 1 100); do
    [ "$(it_ctl 1 hosts 2>/dev/null | awk '$1 == 3 { print $2 }')" = down ] && break
    sleep 0.1
done
hostadd_arm hostadd
it_restart 3
hostadd_check hostadd "HOST_ADD"
# ... and again, restarted before anyone declared it down (a new
# incarnation of a host that is up): HOST_ADD too
hostadd_arm hostadd2
it_kill 3
it_restart 3
hostadd_check hostadd2 "HOST_ADD after a quick restart"

# 4. no --spawn-path: refused
port=$(it_free_port)
mkdir -p "$IT_DIR/solo" && chmod 700 "$IT_DIR/solo"
"$IT_B/collsd" --foreground --listen "127.0.0.1:$port" \
    --socket "$IT_DIR/solo/collsd.sock" >"$IT_DIR/solo.log" 2>&1 &
spid=$!
IT_BGPIDS="$IT_BGPIDS $spid"
for _ in $(seq 1 50); do
    [ -S "$IT_DIR/solo/collsd.sock" ] && break
    sleep 0.1
done
out=$(timeout 20 "$IT_B/collsctl" --socket "$IT_DIR/solo/collsd.sock" \
    spawn "$bindir/spawn-check" child 2>&1)
[ "$out" = "copy 0: EPERM (not allowed by the daemon's --spawn-path)" ] ||
    it_fail "spawn without --spawn-path: '$out'"
grep -q "refused: no --spawn-path set" "$IT_DIR/solo.log" ||
    it_fail "the daemon without --spawn-path did not say why it refused"

it_finish
