#!/bin/bash
# service.sh -- collsd under a service manager:
#   1. readiness (sd_notify's protocol, received on a NOTIFY_SOCKET of
#      our own): READY=1 once the socket and pid file exist, then on
#      SIGHUP RELOADING=1 and READY=1 again, on SIGTERM STOPPING=1;
#      nothing before the daemon is ready, and a failed start sends no
#      READY=1;
#   2. --log syslog: in a mount namespace whose /dev/log is a socket of
#      ours, the lines arrive as "<PRI>... collsd[PID]: TEXT" with facility
#      daemon and the level's priority (error 27, warning 28, info 30), and
#      start-up errors and warnings still reach the terminal, once;
#   3. the unit's configuration directory ($CONFIGURATION_DIRECTORY):
#      collsd.conf, hostfile and cluster.key there are used when present
#      (the name, the hostfile's line, trust "key" in collsctl status),
#      and an empty directory is skipped without a word;
#   4. stderr that is journald's stream ($JOURNAL_STREAM
#      names its device and inode): lines "<PRIORITY>TEXT", the start-up
#      error once as "<3>...", no timestamps; with another JOURNAL_STREAM
#      the usual lines;
#   5. the units make builds: @sbindir@ replaced by the Makefile's sbindir;
#      `systemd-analyze verify` passes (the system unit, and the user
#      unit), and `systemd-analyze security --offline=yes` rates the
#      system unit neither UNSAFE nor EXPOSED (without systemd-analyze
#      the test ends with 77, skipped, after the other checks).
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

# 2. --log syslog, in a mount namespace with a /dev of its own.
if unshare -m true 2>/dev/null; then
    P2=$(it_free_port)
    echo "$P2" >>"$IT_DIR/ports"
    mkdir -p "$IT_DIR/s"
    chmod 700 "$IT_DIR/s"
    # shellcheck disable=SC2016
    timeout 60 unshare -m bash -c '
        set -u
        B=$1 D=$2 P=$3
        mount -t tmpfs none /dev && mknod -m 666 /dev/null c 1 3 || exit 3
        python3 "$D/notify-listen.py" /dev/log >"$D/syslog.log" &
        lp=$!
        for _ in $(seq 1 50); do [ -S /dev/log ] && break; sleep 0.1; done
        "$B/collsd" --foreground --log syslog --listen "127.0.0.1:$P"             --socket "$D/s/collsd.sock" --hostfile /nonexistent 2>"$D/s-err1"
        echo "$?" >"$D/s-rc1"
        "$B/collsd" --foreground --log syslog --listen "0.0.0.0:$P"             --insecure --socket "$D/s/collsd.sock" 2>"$D/s-err2" &
        dp=$!
        echo "$dp" >"$D/s-pid"
        for _ in $(seq 1 50); do [ -S "$D/s/collsd.sock" ] && break; sleep 0.1; done
        kill -TERM "$dp"
        wait "$dp"
        echo "$?" >"$D/s-rc2"
        sleep 0.2
        kill "$lp"' _ "$IT_B" "$IT_DIR" "$P2"
    rc=$?
    [ "$rc" = 0 ] || it_fail "the syslog namespace run ended with $rc"
    [ "$(cat "$IT_DIR/s-rc1")" = 1 ] ||
        it_fail "--log syslog, missing hostfile: exit $(cat "$IT_DIR/s-rc1")"
    [ "$(cat "$IT_DIR/s-err1")" = "collsd: hostfile /nonexistent: No such file or directory" ] ||
        it_fail "--log syslog, missing hostfile, terminal: $(cat "$IT_DIR/s-err1")"
    [ "$(cat "$IT_DIR/s-rc2")" = 0 ] ||
        it_fail "--log syslog daemon: exit $(cat "$IT_DIR/s-rc2") after SIGTERM"
    grep -q '^collsd: warning: INSECURE: listening on 0.0.0.0' "$IT_DIR/s-err2" &&
        [ "$(wc -l <"$IT_DIR/s-err2")" = 1 ] ||
        it_fail "--log syslog daemon, terminal: $(cat "$IT_DIR/s-err2")"
    spid=$(cat "$IT_DIR/s-pid")
    for want in '<27>.* collsd\[[0-9]+\]: hostfile /nonexistent: No such file or directory$' \
        "<28>.* collsd\\[$spid\\]: INSECURE: listening on 0.0.0.0:$P2" \
        "<30>.* collsd\\[$spid\\]: ready: host 1, pid $spid, socket " \
        "<30>.* collsd\\[$spid\\]: signal 15: shutting down$"; do
        grep -Eq "^$want" "$IT_DIR/syslog.log" ||
            it_fail "syslog: no line matching '$want' in: $(cat "$IT_DIR/syslog.log")"
    done
    it_log "2. --log syslog: $(wc -l <"$IT_DIR/syslog.log") lines, priorities 27/28/30"
else
    it_log "2. --log syslog: skipped (no mount namespace)"
fi

# 3. The configuration directory of the unit.
P3=$(it_free_port)
echo "$P3" >>"$IT_DIR/ports"
mkdir -p "$IT_DIR/etc" "$IT_DIR/empty" "$IT_DIR/c"
chmod 700 "$IT_DIR/c"
"$IT_B/collsctl" keygen "$IT_DIR/etc/cluster.key" >/dev/null ||
    it_fail "collsctl keygen failed"
printf '# as /etc/collsd/collsd.conf\nname svc-conf\n' >"$IT_DIR/etc/collsd.conf"
echo "127.0.0.1:$P3 name=svc-hostfile" >"$IT_DIR/etc/hostfile"
for dir in etc empty; do
    CONFIGURATION_DIRECTORY=$IT_DIR/$dir "$IT_B/collsd" --foreground \
        --listen "127.0.0.1:$P3" --socket "$IT_DIR/c/collsd.sock" \
        >"$IT_DIR/dc-$dir.log" 2>&1 </dev/null &
    echo $! >"$IT_DIR/dc.pid.sh"
    for _ in $(seq 1 50); do
        [ -S "$IT_DIR/c/collsd.sock" ] && break
        sleep 0.1
    done
    st=$(timeout 10 "$IT_B/collsctl" --socket "$IT_DIR/c/collsd.sock" status 2>&1)
    if [ "$dir" = etc ]; then
        echo "$st" | grep -q "^daemon  *hid 1, svc-conf at 127.0.0.1:$P3" &&
            echo "$st" | grep -q '^trust  *key$' ||
            it_fail "collsd.conf and cluster.key of the directory not used: $st"
        grep -q "host 1 of 1 (hostfile $IT_DIR/etc/hostfile)" "$IT_DIR/dc-$dir.log" ||
            it_fail "the directory's hostfile not used: $(cat "$IT_DIR/dc-$dir.log")"
    else
        echo "$st" | grep -q '^trust  *loopback$' ||
            it_fail "an empty configuration directory: $st"
        ! grep -Eq 'error|warn|hostfile' "$IT_DIR/dc-$dir.log" ||
            it_fail "an empty configuration directory is not silent: $(cat "$IT_DIR/dc-$dir.log")"
    fi
    kill -TERM "$(cat "$IT_DIR/dc.pid.sh")"
    wait "$(cat "$IT_DIR/dc.pid.sh")" || it_fail "exit $? after SIGTERM ($dir)"
    rm -f "$IT_DIR/dc.pid.sh"
done
it_log "3. the configuration directory: used when there, silent when empty"

# 4. stderr as journald's stream.
P5=$(it_free_port)
echo "$P5" >>"$IT_DIR/ports"
mkdir -p "$IT_DIR/j"
chmod 700 "$IT_DIR/j"
: >"$IT_DIR/journal"
js=$(stat -c '%d:%i' "$IT_DIR/journal")
JOURNAL_STREAM=$js "$IT_B/collsd" --foreground --listen "127.0.0.1:$P5" \
    --socket "$IT_DIR/j/collsd.sock" --hostfile /nonexistent \
    2>>"$IT_DIR/journal" </dev/null
JOURNAL_STREAM=$js "$IT_B/collsd" --foreground --listen "127.0.0.1:$P5" \
    --socket "$IT_DIR/j/collsd.sock" 2>>"$IT_DIR/journal" </dev/null &
echo $! >"$IT_DIR/dj.pid.sh"
for _ in $(seq 1 50); do
    [ -S "$IT_DIR/j/collsd.sock" ] && break
    sleep 0.1
done
kill -TERM "$(cat "$IT_DIR/dj.pid.sh")"
wait "$(cat "$IT_DIR/dj.pid.sh")" || it_fail "exit $? after SIGTERM (journal)"
rm -f "$IT_DIR/dj.pid.sh"
[ "$(sed -n 1p "$IT_DIR/journal")" = "<3>hostfile /nonexistent: No such file or directory" ] ||
    it_fail "on journald's stream, the start-up error: $(sed -n 1p "$IT_DIR/journal")"
version=$("$IT_B/collsd" --version | awk '{ print $2 }')
case "$(sed -n 2p "$IT_DIR/journal")" in
"<6>collsd $version: host 1, incarnation "*) ;;
*) it_fail "on journald's stream, line 2: $(sed -n 2p "$IT_DIR/journal")" ;;
esac
bad=$(grep -v '^<[36]>' "$IT_DIR/journal")
[ -z "$bad" ] || it_fail "on journald's stream, lines without a priority: $bad"
grep -qx "<6>signal 15: shutting down" "$IT_DIR/journal" ||
    it_fail "on journald's stream, no '<6>signal 15: shutting down'"
JOURNAL_STREAM=1:1 "$IT_B/collsd" --foreground --listen "127.0.0.1:$P5" \
    --socket "$IT_DIR/j/collsd.sock" --hostfile /nonexistent \
    2>"$IT_DIR/journal2" </dev/null
[ "$(cat "$IT_DIR/journal2")" = "collsd: hostfile /nonexistent: No such file or directory" ] ||
    it_fail "with another JOURNAL_STREAM: $(cat "$IT_DIR/journal2")"
it_log "4. journald's stream: $(wc -l <"$IT_DIR/journal") lines with priorities"

# 5. The units make built.
unit=$IT_B/dist/collsd.service
uunit=$IT_B/dist/user/collsd.service
sbindir=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
    make -s -C "$IT_B" --no-print-directory -f Makefile \
    -f <(printf 'colls-print-sbindir:\n\t@echo $(sbindir)\n') \
    colls-print-sbindir 2>/dev/null)
for u in "$unit" "$uunit"; do
    [ -f "$u" ] || { it_fail "$u was not built"; continue; }
    ! grep -q '@[a-z]*@' "$u" || it_fail "$u: unsubstituted: $(grep '@[a-z]*@' "$u")"
    grep -qx "ExecStart=$sbindir/collsd --foreground" "$u" ||
        it_fail "$u: ExecStart is not $sbindir/collsd: $(grep ExecStart "$u")"
done
grep -qx 'Type=notify' "$unit" || it_fail "the system unit is not Type=notify"
if command -v systemd-analyze >/dev/null; then
    # verify checks that ExecStart exists: point it at the built daemon.
    mkdir -p "$IT_DIR/units/user" "$IT_DIR/xdg"
    chmod 700 "$IT_DIR/xdg"
    sed "s|^ExecStart=$sbindir/collsd|ExecStart=$(cd "$IT_B" && pwd)/collsd|" \
        "$unit" >"$IT_DIR/units/collsd.service"
    sed "s|^ExecStart=$sbindir/collsd|ExecStart=$(cd "$IT_B" && pwd)/collsd|" \
        "$uunit" >"$IT_DIR/units/user/collsd.service"
    out=$(systemd-analyze verify "$IT_DIR/units/collsd.service" 2>&1) ||
        it_fail "systemd-analyze verify (system unit): $out"
    out=$(XDG_RUNTIME_DIR=$IT_DIR/xdg systemd-analyze --user verify \
        "$IT_DIR/units/user/collsd.service" 2>&1) ||
        it_fail "systemd-analyze --user verify (user unit): $out"
    rating=$(systemd-analyze security --offline=yes \
        "$IT_DIR/units/collsd.service" 2>&1 | grep 'Overall exposure level')
    case "$rating" in
    *" OK"* | *" MEDIUM"*) ;;
    *) it_fail "systemd-analyze security: '$rating'" ;;
    esac
    it_log "5. units: ExecStart=$sbindir/collsd, verify passes; ${rating#→ }"
else
    it_log "5. units: ExecStart=$sbindir/collsd; systemd-analyze absent"
    # What could be checked passed, but the unit was not verified.
    [ "$IT_FAILED" = 0 ] && { it_log "SKIP: no systemd-analyze"; exit 77; }
fi

it_finish
