#!/bin/bash
# host-mgmt.sh -- host management that refuses what would hurt, collsd on
# loopback; checks the texts of collsctl and the host tables (`hosts`).
#
# 1. `collsctl delete 1` against daemon 1 is refused (as PVM refuses to
#    delete the master), saying to run it from another host's daemon or to
#    halt; daemon 1 goes on and nothing changes.
# 2. `delete 3` from daemon 1: daemon 3 stops, and both others drop it
#    from their tables (no entry left down).
# 3. `delete 1` from daemon 2, host 1 being the one that assigns hids:
#    daemon 1 sends the table without itself and stops; daemon 2 lists
#    itself alone.  No daemon logs "declared down: telling it" about a
#    deleted host.
# 4. `add` of an address where no daemon runs fails with the words "no
#    daemon answered", and the entry is removed once seen down: no
#    phantom host stays in the table.
# 5. A new machine of three; the hostfile loses its last line and daemon 3
#    gets SIGHUP: it leaves the machine and stops, saying why, and the
#    others drop it from their tables; SIGHUP to them changes nothing.
. "${top_srcdir:-.}/tests/integration/lib.sh"

it_setup
it_start 3 || exit 1
it_wait_hosts 3 || exit 1

# hids I: the hids daemon I lists, one line "HID STATE" each, sorted.
hids()
{
    it_ctl "$1" hosts 2>/dev/null | awk 'NR > 1 { print $1, $2 }'
}

# want_hids I WANT...: daemon I lists exactly "HID STATE" lines WANT
# (joined by ";"), within about 10 s.
want_hids()
{
    local i=$1 want got
    shift
    want=$(printf '%s;' "$@")
    for _ in $(seq 1 100); do
        got=$(hids "$i" | tr '\n' ';')
        [ "$got" = "$want" ] && return 0
        sleep 0.1
    done
    it_fail "daemon $i lists '$got', want '$want'"
    return 1
}

# gone I: daemon I's process ends within about 10 s.
gone()
{
    for _ in $(seq 1 100); do
        it_alive "$1" || return 0
        sleep 0.1
    done
    it_fail "daemon $1 still runs"
    return 1
}

# 1. deleting the daemon one talks to
out=$(it_ctl 1 delete 1 2>&1)
rc=$?
want="collsctl delete 1: operation not permitted: host 1 is this daemon, \
the one you are connected to: delete it from another host's daemon \
(collsctl --socket), or stop the whole machine with collsctl halt"
[ "$rc" = 1 ] && [ "$out" = "$want" ] ||
    it_fail "delete 1 against daemon 1: rc $rc, '$out'"
it_alive 1 || it_fail "daemon 1 stopped after a refused delete of itself"
want_hids 1 "1 up" "2 up" "3 up"

# 2. deleting another daemon
out=$(it_ctl 1 delete 3 2>&1)
[ "$out" = "deleted host 3" ] || it_fail "delete 3 from daemon 1: '$out'"
gone 3
want_hids 1 "1 up" "2 up"
want_hids 2 "1 up" "2 up"

# 3. deleting the daemon that assigns hids, from another one
out=$(it_ctl 2 delete 1 2>&1)
[ "$out" = "deleted host 1" ] || it_fail "delete 1 from daemon 2: '$out'"
gone 1
want_hids 2 "2 up"
sleep 1 # what the deleted daemons sent while lingering has arrived
if grep -h 'telling it' "$IT_DIR"/d*.log >"$IT_DIR/telling.out"; then
    it_fail "a deleted host is told it is down: $(cat "$IT_DIR/telling.out")"
fi

# 4. a failed add leaves no phantom entry
p=$(it_free_port)
out=$(it_ctl 2 add "127.0.0.1:$p" 2>&1)
rc=$?
want="collsctl add 127.0.0.1:$p: no daemon answered at 127.0.0.1:$p within \
--dead-after; its entry (host 1) is removed"
[ "$rc" = 1 ] && [ "$out" = "$want" ] ||
    it_fail "add of a silent address: rc $rc, '$out'"
want_hids 2 "2 up"
grep -q "host 1 (127.0.0.1:$p) was added but no daemon answered there: removed" \
    "$IT_DIR/d2.log" || it_fail "daemon 2 does not log the removal"

# 5. a daemon dropped from the hostfile leaves on SIGHUP
it_kill 2 TERM
it_start 3 || exit 1
it_wait_hosts 3 || exit 1
sed -i '3d' "$IT_DIR/hostfile"
kill -HUP "$(it_pid 3)"
gone 3
grep -q "no longer lists this daemon (--listen 127.0.0.1:$(it_port 3)): leaving the machine and stopping" \
    "$IT_DIR/d3.log" || it_fail "daemon 3 does not say why it left: $(tail -n 5 "$IT_DIR/d3.log")"
want_hids 1 "1 up" "2 up"
want_hids 2 "1 up" "2 up"
kill -HUP "$(it_pid 1)" "$(it_pid 2)"
sleep 1
want_hids 1 "1 up" "2 up"
want_hids 2 "1 up" "2 up"
for i in 1 2; do
    it_alive "$i" || it_fail "daemon $i died"
done
it_finish
