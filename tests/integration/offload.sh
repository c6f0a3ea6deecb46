#!/bin/bash
# offload.sh -- --gso on|off|auto (docs/protocol.md, "Datagrams").
#
# Two daemons with --gso off: `collsctl status` says "offload off" (and
# --json "offload": "off"), and checked messages of every size (p2p-check,
# both routes) still arrive, now one datagram per system call entry.  A
# third daemon with the default says what the kernel gave it (gso+gro on
# Linux with UDP_SEGMENT and UDP_GRO, something else elsewhere), and
# --gso on either starts with both or refuses to start, saying so.  A bad
# value is refused at start with the valid ones.
. "${top_srcdir:-.}/tests/integration/lib.sh"

it_require
it_setup
it_start 2 --gso off || exit 1
it_wait_hosts 2 || exit 1

for i in 1 2; do
    it_ctl "$i" status | grep -q '^offload *off (--gso)$' ||
        it_fail "daemon $i: status does not say offload off: $(it_ctl "$i" status)"
    it_ctl "$i" status --json | python3 -c '
import json, sys
sys.exit(json.load(sys.stdin)["offload"] != "off")' ||
        it_fail "daemon $i: status --json offload is not off"
done
P2P_OPTS="--quick --timeout-ms 60000" it_p2p pair 1 1 2 ||
    it_fail "messages between daemons with --gso off"

# The default, and --gso on, on a daemon of their own.
port=$(it_free_port)
"$IT_B/collsd" --foreground --listen "127.0.0.1:$port" \
    --socket "$IT_DIR/auto/collsd.sock" >"$IT_DIR/auto.log" 2>&1 &
apid=$!
IT_BGPIDS="$IT_BGPIDS $apid" # it_cleanup stops it if we end early
for _ in $(seq 1 50); do
    [ -S "$IT_DIR/auto/collsd.sock" ] && break
    sleep 0.1
done
auto=$(timeout 10 "$IT_B/collsctl" --socket "$IT_DIR/auto/collsd.sock" \
    status --json | python3 -c '
import json, sys
print(json.load(sys.stdin)["offload"])')
kill "$apid"
wait "$apid" 2>/dev/null
it_log "the default here: offload $auto"
case $auto in
gso+gro | gso | gro | off) ;;
*) it_fail "status --json offload is '$auto'" ;;
esac
port=$(it_free_port)
timeout 10 "$IT_B/collsd" --foreground --gso on --listen "127.0.0.1:$port" \
    --socket "$IT_DIR/on/collsd.sock" >"$IT_DIR/on.log" 2>&1 &
opid=$!
IT_BGPIDS="$IT_BGPIDS $opid"
for _ in $(seq 1 50); do
    [ -S "$IT_DIR/on/collsd.sock" ] && break
    kill -0 "$opid" 2>/dev/null || break
    sleep 0.1
done
if [ "$auto" = gso+gro ]; then
    [ -S "$IT_DIR/on/collsd.sock" ] ||
        it_fail "--gso on did not start where both offloads exist: $(cat "$IT_DIR/on.log")"
else
    wait "$opid"
    grep -q -- '--gso on: UDP offloads missing here' "$IT_DIR/on.log" ||
        it_fail "--gso on without offloads: $(cat "$IT_DIR/on.log")"
fi
kill "$opid" 2>/dev/null
wait "$opid" 2>/dev/null

out=$("$IT_B/collsd" --foreground --gso maybe --listen 127.0.0.1:0 \
    --socket "$IT_DIR/bad/collsd.sock" 2>&1)
rc=$?
[ "$rc" = 2 ] && [ "$out" = "collsd: --gso: 'maybe' is not on, off or auto" ] ||
    it_fail "--gso maybe: rc $rc, '$out'"
it_finish
