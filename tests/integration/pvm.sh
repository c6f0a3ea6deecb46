#!/bin/bash
# pvm.sh -- PVM programs on collsd (libpvm3, libgpvm3, pvmgs), 2 daemons on
# loopback; the tasks are started here, one per daemon as named.
#
# 1. Messages (tests/pvm/pvm-msg.c): an echo task on daemon 2 and a checker
#    on daemon 1 -- every pack type with strides 1 and 3 in the three
#    encodings on both routes, compared item by item; pvm_packf and
#    pvm_unpackf against the typed calls; psend/precv per
#    datatype; mcast, probe, nrecv, trecv, bufinfo; the buffer calls;
#    errors by code; options; pvm_tasks/pvm_config/pvm_pstat; the
#    PvmTaskExit notification.  Every line of the checker must say "ok",
#    and the expected number of lines must be there.
# 1b. Hosts: pvm_mstat, pvm_addhosts of a standalone daemon 3 (its pvmd
#    tid back, 3 hosts in pvm_config), pvm_delhosts of it (2 again), and
#    their per-host errors (an unreachable address, a host already there,
#    an unknown name).
# 2. Groups (tests/pvm/pvm-group.c): the group server pvmgs started on
#    daemon 1, 5 members over both daemons: joins and instances, gsize,
#    gettid/getinst, barriers through the server, reduce (PvmSum,
#    PvmProduct, PvmMax, PvmMin over every datatype and a user function),
#    gather, scatter, bcast, each compared with the serial result; then the
#    group frozen and the same again through collsd's collectives; errors
#    by code; leaving.  Each member prints "inst I: ok" lines only.
# 3. PvmHostDelete: a task on daemon 1 asks for it about host 2, daemon 2
#    is killed, and the message holds host 2's pvmd tid as PVM packs it;
#    PvmHostAdd: daemon 2 comes back, and the message holds a count of 1
#    and host 2's pvmd tid.
. "${top_srcdir:-.}/tests/integration/lib.sh"

P=$IT_B/tests/pvm
for b in pvm-msg pvm-group; do
    [ -x "$P/$b" ] || {
        echo "SKIP: $P/$b not built" >&2
        exit 77
    }
done
it_setup
it_start 2 || exit 1
it_wait_hosts 2 || exit 1

# ---- 1. messages ----------------------------------------------------------
it_bg echo.log env COLLS_SOCKET="$(it_sock 2)" timeout 120 "$P/pvm-msg" echo
ECHO=$IT_LASTPID
for _ in $(seq 1 100); do
    grep -q '^t' "$IT_DIR/echo.log" && break
    sleep 0.1
done
PEER=$(grep -m1 '^t' "$IT_DIR/echo.log")
[ -n "$PEER" ] || it_fail "the echo task printed no tid"
COLLS_SOCKET=$(it_sock 1) timeout 120 "$P/pvm-msg" check "$PEER" \
    >"$IT_DIR/check.out" 2>"$IT_DIR/check.err"
rc=$?
[ "$rc" = 0 ] || it_fail "pvm-msg check exited $rc"
if grep -v ': ok$' "$IT_DIR/check.out" | grep -q .; then
    it_fail "pvm-msg check: $(grep -v ': ok$' "$IT_DIR/check.out")"
fi
# 12 pack checks, the route option, 11 psend, 30 calls, 2 notify
n=$(grep -c ': ok$' "$IT_DIR/check.out")
[ "$n" = 66 ] || it_fail "pvm-msg check: $n checks ok, 66 expected"
# the NotImpl log names the call, once
grep -q 'pvm_putinfo(): not implemented on collsd' "$IT_DIR/check.err" ||
    it_fail "no PvmNotImpl line for pvm_putinfo: $(cat "$IT_DIR/check.err")"
it_wait "$ECHO" 30 || it_fail "the echo task did not end cleanly"
it_log "messages: $n checks"

# ---- 1b. hosts: daemon 3 alone (no hostfile), added and deleted ------------
it_free_port >>"$IT_DIR/ports"
mkdir -p "$IT_DIR/d3" && chmod 700 "$IT_DIR/d3"
# shellcheck disable=SC2086
"$IT_B/collsd" --foreground --listen "127.0.0.1:$(it_port 3)" \
    --socket "$(it_sock 3)" --name it3 $IT_DAEMON_OPTS \
    >>"$IT_DIR/d3.log" 2>&1 </dev/null &
echo $! >"$IT_DIR/d3.pid.sh"
it_wait_socket 3
COLLS_SOCKET=$(it_sock 1) timeout 120 "$P/pvm-msg" hosts \
    "127.0.0.1:$(it_port 3)" >"$IT_DIR/hosts.out" 2>&1
rc=$?
[ "$rc" = 0 ] || it_fail "pvm-msg hosts: exit $rc: $(cat "$IT_DIR/hosts.out")"
[ "$(grep -c ': ok$' "$IT_DIR/hosts.out")" = 9 ] ||
    it_fail "pvm-msg hosts: $(cat "$IT_DIR/hosts.out")"
it_kill 3

# ---- 2. groups --------------------------------------------------------------
it_bg pvmgs.log env COLLS_SOCKET="$(it_sock 1)" "$IT_B/pvm/pvmgs"
for _ in $(seq 1 100); do
    it_ctl 2 tasks 2>/dev/null | grep -q pvmgs && break
    sleep 0.1
done
N=5
PIDS=""
for k in $(seq 1 $N); do
    d=$(((k % 2) + 1))
    it_bg "group$k.log" env COLLS_SOCKET="$(it_sock $d)" timeout 120 \
        "$P/pvm-group" $N
    PIDS="$PIDS $IT_LASTPID"
done
k=0
for p in $PIDS; do
    k=$((k + 1))
    it_wait "$p" 120
    rc=$?
    [ "$rc" = 0 ] || it_fail "pvm-group member $k exited $rc"
done
for k in $(seq 1 $N); do
    f="$IT_DIR/group$k.log"
    if grep '^inst' "$f" | grep -v ': ok$' | grep -q .; then
        it_fail "member $k: $(grep -v ': ok$' "$f")"
    fi
done
n=$(cat "$IT_DIR"/group*.log | grep -c ': ok$')
per=$(grep -c ': ok$' "$IT_DIR/group1.log")
[ "$n" = $((per * N)) ] && [ "$per" -gt 20 ] ||
    it_fail "groups: $n checks ok in all, $per in member 1"
it_log "groups: $n checks"

# ---- 3. host notifications ---------------------------------------------------
# Waits (30 s at most) for "waiting" in IT_DIR/LOG.
wait_line()
{
    for _ in $(seq 1 300); do
        grep -q '^waiting' "$IT_DIR/$1" && return 0
        sleep 0.1
    done
    it_fail "$1: the task never got to wait"
    return 1
}

H2=t$(printf %x $((2 << 20)))
it_bg hostdel.log env COLLS_SOCKET="$(it_sock 1)" timeout 60 \
    "$P/pvm-msg" host-delete "$H2"
HD=$IT_LASTPID
wait_line hostdel.log
it_kill 2
it_wait "$HD" 60 || it_fail "host-delete: exit $?: $(cat "$IT_DIR/hostdel.log")"
[ "$(grep -c ': ok$' "$IT_DIR/hostdel.log")" = 2 ] ||
    it_fail "host-delete: $(cat "$IT_DIR/hostdel.log")"
it_bg hostadd.log env COLLS_SOCKET="$(it_sock 1)" timeout 60 \
    "$P/pvm-msg" host-add "$H2"
HA=$IT_LASTPID
wait_line hostadd.log
it_restart 2
it_wait "$HA" 60 || it_fail "host-add: exit $?: $(cat "$IT_DIR/hostadd.log")"
[ "$(grep -c ': ok$' "$IT_DIR/hostadd.log")" = 2 ] ||
    it_fail "host-add: $(cat "$IT_DIR/hostadd.log")"
it_finish
