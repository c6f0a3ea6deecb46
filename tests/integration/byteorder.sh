#!/bin/bash
# byteorder.sh -- a machine of both byte orders (docs/protocol.md, "Byte
# order"; docs/collectives.md, "Byte order"): four collsd on 127.0.0.1,
# daemons 1 and 2 x86-64 (this build), 3 and 4 s390x (big-endian, the
# cross build of scripts/cross-s390x.sh run under qemu-user), and groups
# of bo-check tasks of either order placed on them in every combination:
#   all of one order (x86 tasks on x86 daemons, s390x on s390x),
#   tasks of one order on daemons of the other,
#   both orders on every daemon (alternating),
#   daemons of both orders with tasks of one order, of their own order,
#   of the other order, and of both,
#   and two ranks of different orders on two x86 daemons.
# Each bo-check runs every collective x datatype x operator, hierarchical
# and flat, bcast of doubles with compression off, on and auto, and
# packed point-to-point messages in the three encodings on both routes,
# special floating values included, compared bit for bit with a serial
# reference (see bo-check.c).
#
# The s390x daemons run with --gso off: qemu-user 7.2 does not translate
# the UDP_SEGMENT control message (the x86-64 daemons keep the default).
# They also run with --shm=no, which keeps qemu's emulation of atomics on
# memory shared between two processes out of this test (not tried).  The
# x86-64 daemons keep --shm and refuse the offers of s390x tasks (the
# other byte order: the rings' indices are native): that is exercised.
# Skips (77) without COLLS_S390X_DIR, the s390x build tree that
# scripts/cross-s390x.sh makes and passes (scripts/test.sh runs it once).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

S390X=${COLLS_S390X_DIR:-}
export QEMU_LD_PREFIX=${COLLS_S390X_SYSROOT:-/var/cache/collsd-s390x/sysroot}
QEMU=$(command -v qemu-s390x-static)
if [ -z "$S390X" ] || [ ! -x "$S390X/collsd" ] ||
    [ ! -x "$S390X/tests/integration/bo-check" ] || [ -z "$QEMU" ]; then
    echo "SKIP: no s390x build (scripts/cross-s390x.sh test runs this test)"
    exit 77
fi
BO=$IT_B/tests/integration/bo-check
[ -x "$BO" ] || {
    echo "SKIP: $BO not built"
    exit 77
}
it_setup

# The s390x daemon: a wrapper named collsd that lib.sh starts as it
# starts any other (the pid it records is qemu's, after the exec).
mkdir -p "$IT_DIR/s390x"
printf '#!/bin/sh\nexec %s %s/collsd "$@"\n' "$QEMU" "$S390X" \
    >"$IT_DIR/s390x/collsd"
chmod +x "$IT_DIR/s390x/collsd"

# Four daemons, started as it_start would, each with its own binary.
IT_K=4
IT_OPTS=""
IT_DAEMON_OPTS="--heartbeat 200 --dead-after 20000 --request-timeout 20000 \
--log-level info"
: >"$IT_DIR/ports"
: >"$IT_DIR/hostfile"
for i in 1 2 3 4; do
    it_free_port >>"$IT_DIR/ports"
    echo "127.0.0.1:$(it_port "$i") name=it$i" >>"$IT_DIR/hostfile"
done
X86_B=$IT_B
for i in 1 2 3 4; do
    if [ "$i" -le 2 ]; then
        IT_B=$X86_B IT_OPTS="" it_start_one "$i"
    else
        IT_B=$IT_DIR/s390x IT_OPTS="--gso off --shm=no" it_start_one "$i"
    fi
done
IT_B=$X86_B
for i in 1 2 3 4; do
    it_wait_socket "$i" || exit 1
done
it_wait_hosts 4 || exit 1
it_log "daemons 1, 2 x86-64; 3, 4 s390x under qemu-user (--gso off --shm=no)"
for i in 3 4; do
    it_ctl "$i" status | grep -q '^offload *off' ||
        it_fail "daemon $i: collsctl status does not say the offloads are off"
done

NRUN=0
# run NAME TASK...: one group, a member per TASK "x@D" (x86-64 bo-check)
# or "s@D" (s390x) on daemon D, started in this order.
run()
{
    local name=$1 t p rc=0 k=0 t0 clean pids=""
    local -a cmd
    shift
    NRUN=$((NRUN + 1))
    t0=$(date +%s)
    for t in "$@"; do
        k=$((k + 1))
        cmd=("$BO")
        [ "${t%@*}" = s ] && cmd=("$QEMU" "$S390X/tests/integration/bo-check")
        it_bg "$name-$k.log" timeout 900 "${cmd[@]}" \
            --socket "$(it_sock "${t#*@}")" --group "$name" --size $# \
            --timeout-ms 300000
        pids="$pids $IT_LASTPID"
    done
    for p in $pids; do
        wait "$p" || rc=1
    done
    if [ $rc -ne 0 ]; then
        it_fail "$name ($*)"
        for k in $(seq 1 $#); do
            grep -h 'FAIL' "$IT_DIR/$name-$k.log" | head -n 8 >&2
        done
    fi
    clean=$(cat "$IT_DIR/$name"-*.log | grep -c '^rank .* 0 failed')
    it_log "$name ($*): $clean of $# members clean, $(($(date +%s) - t0)) s"
}

# all of one order
run xx-x x@1 x@1 x@2 x@2
run ss-s s@3 s@3 s@4 s@4
# tasks of one order on daemons of the other
run xx-s s@1 s@1 s@2 s@2
run ss-x x@3 x@3 x@4 x@4
# both orders on every daemon, started alternately on the two daemons
run xx-xs x@1 s@2 s@1 x@2
run ss-xs x@3 s@4 s@3 x@4
# x86-64, s390x, x86-64, s390x started alternately on two x86-64
# daemons (the issue's case: all x86-64 tasks on one, s390x on the other)
run xx-alt x@1 s@2 x@1 s@2
# daemons of both orders
run xs-x x@1 x@3 x@1 x@3
run xs-s s@1 s@3 s@1 s@3
run xs-own x@1 s@3 x@1 s@3
run xs-other s@1 x@3 s@1 x@3
run xs-xs x@1 s@3 s@1 x@3
# two ranks of different orders on two x86-64 daemons (the issue's case)
run xx-2 x@1 s@2

for i in 1 2 3 4; do
    it_alive "$i" || it_fail "daemon $i died"
done
it_log "$NRUN groups"
it_finish
