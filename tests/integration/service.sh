#!/bin/bash
# service.sh -- collsd under a service manager:
#   1. readiness (sd_notify's protocol, received on a NOTIFY_SOCKET of
#      our own): READY=1 once the socket and pid file exist, then on
#      SIGHUP RELOADING=1 and READY=1 again, on SIGTERM STOPPING=1;
#      nothing before the daemon is ready, and a failed start sends no
#      READY=1.
. "${top_srcdir:-.}/tests/integration/lib.sh"

it_setup
command -v python3 >/dev/null || { echo "SKIP: no python3" >&2; exit 77; }

# 1. Readiness.  notify-listen.py: one line per datagram, its fields
# joined by '|'.
cat >"$IT_DIR/notify-listen.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
while True:
    msg = s.recv(4096).decode()
    print(msg.replace("\n", "|"), flush=True)
EOF
NS="$IT_DIR/notify.sock"
it_bg notify.log python3 "$IT_DIR/notify-listen.py" "$NS"
for _ in $(seq 1 50); do
    [ -S "$NS" ] && break
    sleep 0.1
done
[ -S "$NS" ] || it_fail "the notify listener did not start"
P=$(it_free_port)
echo "$P" >>"$IT_DIR/ports"
mkdir -p "$IT_DIR/n"
chmod 700 "$IT_DIR/n"

# waits (bounded) until the notify log has N lines
notes()
{
    for _ in $(seq 1 100); do
        [ "$(wc -l <"$IT_DIR/notify.log")" -ge "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

# A failed start: no READY=1.
NOTIFY_SOCKET=$NS "$IT_B/collsd" --foreground --listen "127.0.0.1:$P" \
    --socket "$IT_DIR/n/collsd.sock" --hostfile /nonexistent 2>/dev/null &&
    it_fail "collsd started with a missing hostfile"
NOTIFY_SOCKET=$NS "$IT_B/collsd" --foreground --listen "127.0.0.1:$P" \
    --socket "$IT_DIR/n/collsd.sock" >"$IT_DIR/dn.log" 2>&1 </dev/null &
dpid=$!
echo "$dpid" >"$IT_DIR/dn.pid.sh"
notes 1 || it_fail "no notification from a starting daemon"
first=$(sed -n 1p "$IT_DIR/notify.log")
[ "$first" = "READY=1|STATUS=host 1, socket $IT_DIR/n/collsd.sock" ] ||
    it_fail "first notification: '$first'"
[ -S "$IT_DIR/n/collsd.sock" ] && [ "$(cat "$IT_DIR/n/collsd.pid")" = "$dpid" ] ||
    it_fail "READY=1 before the socket and the pid file"
kill -HUP "$dpid"
notes 3 || it_fail "no notifications after SIGHUP"
[ "$(sed -n 2,3p "$IT_DIR/notify.log" | tr '\n' ' ')" = "RELOADING=1 READY=1 " ] ||
    it_fail "after SIGHUP: $(sed -n '2,$p' "$IT_DIR/notify.log")"
kill -TERM "$dpid"
wait "$dpid" || it_fail "collsd exited $? after SIGTERM"
notes 4 || it_fail "no notification at SIGTERM"
[ "$(sed -n '4,$p' "$IT_DIR/notify.log")" = "STOPPING=1" ] ||
    it_fail "at SIGTERM: $(sed -n '4,$p' "$IT_DIR/notify.log")"
it_log "1. readiness: $(tr '\n' ' ' <"$IT_DIR/notify.log")"

it_finish
