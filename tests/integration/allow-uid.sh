#!/bin/bash
# allow-uid.sh -- tasks of other uids and groups against one collsd run
# as root:
#   1. without --allow-uid the socket's directory (0700) keeps uid 65534
#      out: the attach fails with COLLS_ECONNREFUSED;
#   2. with the directory and socket opened up by hand, the daemon still
#      refuses the attach by its peer credentials: COLLS_EPERM;
#   3. restarted with --allow-uid 65534 (and the modes back at 0700), the
#      daemon gives that uid ACL entries on the directory and the socket:
#      the task attaches and messages bounce off the daemon intact; its
#      status/hosts/ps/stats work, but `collsctl add/delete/halt` are
#      refused ("admin verbs need uid 0 or --admin-uid"), logged with the
#      uid, counted, and the machine is unchanged; it is not granted single
#      copy (that is for the daemon's own uid);
#   4. with --admin-uid 65534 alone, that uid attaches and halts;
#   5. --allow-gid 4242 --admin-gid 4243: a uid of neither group cannot
#      reach the socket; a process with supplementary group 4242 attaches
#      and sends but cannot halt; one with 4243 halts;
#   6. the library refuses a socket whose listener belongs to another
#      non-root uid (a fake daemon of uid 65534 in a directory of its
#      own): collsctl says whose it is, and the listener reads 0 bytes;
#      with COLLS_DAEMON_UID=65534 the same socket is trusted.
# Needs root (setpriv to switch uid); skipped otherwise.
. "${top_srcdir:-.}/tests/integration/lib.sh"

LC=$IT_B/tests/integration/limits-check
[ -x "$LC" ] || {
    echo "SKIP: $LC not built" >&2
    exit 77
}
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
    echo "SKIP: needs root and setpriv" >&2
    exit 77
fi
NOBODY=65534

# setpriv as UID with supplementary GROUPS ("" none) running the rest.
as_user()
{
    local uid=$1 groups=$2
    shift 2
    if [ -n "$groups" ]; then
        timeout 60 setpriv --reuid="$uid" --regid="$uid" --groups="$groups" \
            "$@" 2>&1
    else
        timeout 60 setpriv --reuid="$uid" --regid="$uid" --clear-groups \
            "$@" 2>&1
    fi
}

# limits-check --mode echo as uid 65534 against daemon 1; prints its
# output, returns its status.
as_nobody()
{
    as_user $NOBODY "" "$LC" --mode echo --socket "$(it_sock 1)" \
        --timeout-ms 20000
}

# Waits up to 5 s for daemon 1 to exit (halted); 0 if it did.
wait_halted()
{
    for _ in $(seq 1 50); do
        it_alive 1 || return 0
        sleep 0.1
    done
    return 1
}

# collsctl itself as another uid: the binary behind libtool's wrapper
# (which another uid may not be able to run), with the library beside it.
CTL=$IT_B/.libs/collsctl
[ -x "$CTL" ] || CTL=$IT_B/collsctl
ctl_as()
{
    local uid=$1 groups=$2
    shift 2
    as_user "$uid" "$groups" env \
        LD_LIBRARY_PATH="$IT_B/libclient/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$CTL" --socket "$(it_sock 1)" "$@"
}

it_setup
# uid 65534 must be able to walk to the daemon's directory and run the
# program: the test's own directory (mktemp, 0700) is opened for search.
chmod 0711 "$IT_DIR"
if ! setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups \
    "$LC" --help 2>&1 | grep -q usage; then
    echo "SKIP: uid $NOBODY cannot run $LC (build directory not readable)" >&2
    exit 77
fi
it_start 1 || exit 1
it_wait_hosts 1 || exit 1

# 1. The directory keeps other uids out.
out=$(as_nobody)
rc=$?
it_log "1. no --allow-uid: $out (exit $rc)"
[ "$rc" = 3 ] && [ "$out" = "attach: COLLS_ECONNREFUSED" ] ||
    it_fail "uid $NOBODY through a 0700 directory: $out (exit $rc)"

# 2. Reachable, but the daemon checks the uid itself.
refused=$(it_stat_sum 1 attach_refused)
chmod 0711 "$IT_DIR/d1"
chmod 0777 "$(it_sock 1)"
out=$(as_nobody)
rc=$?
it_log "2. socket opened by hand: $out (exit $rc)"
[ "$rc" = 3 ] && [ "$out" = "attach: COLLS_EPERM" ] ||
    it_fail "uid $NOBODY without --allow-uid: $out (exit $rc)"
[ "$(it_stat_sum 1 attach_refused)" -gt "$refused" ] ||
    it_fail "daemon 1 did not count the refused attach"
grep -q "uid $NOBODY refused" "$IT_DIR/d1.log" ||
    it_fail "daemon 1 logged no refusal of uid $NOBODY"

# 3. --allow-uid: no hand-made modes, the daemon grants the access.
it_kill 1 TERM
chmod 0700 "$IT_DIR/d1"
IT_OPTS="$IT_OPTS --allow-uid $NOBODY"
it_restart 1 || exit 1
it_wait_hosts 1 || exit 1
if grep -q "allow-uid $NOBODY: cannot give it access.*not supported" \
    "$IT_DIR/d1.log"; then
    echo "SKIP: no POSIX ACLs on the file system of $IT_DIR" >&2
    exit 77
fi
mode=$(stat -c %a "$IT_DIR/d1")
[ "$((0$mode & 07))" = 0 ] || it_fail "directory mode $mode lets others in"
cma=$(it_stat_sum 1 cma_tasks)
out=$(as_nobody)
rc=$?
it_log "3. --allow-uid $NOBODY: $out (exit $rc)"
[ "$rc" = 0 ] || it_fail "uid $NOBODY with --allow-uid: $out (exit $rc)"
# single copy is for the daemon's own uid only (docs/protocol.md): the
# next count includes the root collsctl that asks, not uid 65534
[ "$(it_stat_sum 1 cma_tasks)" = $((cma + 1)) ] ||
    it_fail "uid $NOBODY was granted single copy by a root daemon"
grep -q "attached: .* uid $NOBODY" "$IT_DIR/d1.log" ||
    it_fail "daemon 1 logged no attach of uid $NOBODY"

# 3b. The allowed uid may look, not change the machine.
for verb in status hosts ps stats; do
    out=$(ctl_as $NOBODY "" $verb)
    rc=$?
    [ "$rc" = 0 ] || it_fail "uid $NOBODY: collsctl $verb: $out (exit $rc)"
done
hosts_before=$(it_ctl 1 hosts)
for verb in "add 127.0.0.1:9" "delete 1" halt; do
    # shellcheck disable=SC2086
    out=$(ctl_as $NOBODY "" $verb)
    rc=$?
    it_log "3. uid $NOBODY: collsctl $verb: $out (exit $rc)"
    [ "$rc" != 0 ] || it_fail "uid $NOBODY: collsctl $verb succeeded"
    echo "$out" | grep -q "operation not permitted: admin verbs need uid 0 or --admin-uid" ||
        it_fail "uid $NOBODY: collsctl $verb: no clear refusal: $out"
done
sleep 0.3
it_alive 1 || it_fail "daemon 1 halted by uid $NOBODY"
[ "$(it_ctl 1 hosts)" = "$hosts_before" ] ||
    it_fail "the host table changed: $(it_ctl 1 hosts)"
[ "$(it_stat_sum 1 admin_refused)" = 3 ] ||
    it_fail "admin_refused is $(it_stat_sum 1 admin_refused), not 3"
grep -q "of uid $NOBODY: halt refused" "$IT_DIR/d1.log" ||
    it_fail "daemon 1 logged no refused halt of uid $NOBODY"

# 4. --admin-uid alone: attach and administer.
it_kill 1 TERM
BASE_OPTS=${IT_OPTS% --allow-uid $NOBODY}
IT_OPTS="$BASE_OPTS --admin-uid $NOBODY"
it_restart 1 || exit 1
it_wait_hosts 1 || exit 1
out=$(ctl_as $NOBODY "" halt)
rc=$?
it_log "4. --admin-uid $NOBODY: collsctl halt: $out (exit $rc)"
[ "$rc" = 0 ] || it_fail "uid $NOBODY with --admin-uid: halt: $out"
wait_halted || it_fail "daemon 1 not halted by --admin-uid $NOBODY"
it_kill 1 TERM

# 5. Groups: 4242 may attach, 4243 may administer.
IT_OPTS="$BASE_OPTS --allow-gid 4242 --admin-gid 4243"
it_restart 1 || exit 1
it_wait_hosts 1 || exit 1
out=$(as_user 12345 "" "$LC" --mode echo --socket "$(it_sock 1)" \
    --timeout-ms 20000)
rc=$?
it_log "5. uid 12345, no group: $out (exit $rc)"
[ "$rc" = 3 ] && [ "$out" = "attach: COLLS_ECONNREFUSED" ] ||
    it_fail "uid 12345 without the group: $out (exit $rc)"
out=$(as_user 12345 4242 "$LC" --mode echo --socket "$(it_sock 1)" \
    --timeout-ms 20000)
rc=$?
it_log "5. uid 12345, group 4242: $out (exit $rc)"
[ "$rc" = 0 ] || it_fail "uid 12345 in --allow-gid 4242: $out (exit $rc)"
out=$(ctl_as 12345 4242 halt)
rc=$?
it_log "5. uid 12345, group 4242: collsctl halt: $out (exit $rc)"
[ "$rc" != 0 ] && echo "$out" | grep -q "admin verbs need uid 0" ||
    it_fail "group 4242 halted or no clear refusal: $out (exit $rc)"
sleep 0.3
it_alive 1 || it_fail "daemon 1 halted by group 4242"
out=$(ctl_as 12346 100,4243 halt)
rc=$?
it_log "5. uid 12346, groups 100,4243: collsctl halt: $out (exit $rc)"
[ "$rc" = 0 ] || it_fail "group 4243 (--admin-gid): halt: $out (exit $rc)"
wait_halted || it_fail "daemon 1 not halted by --admin-gid 4243"
it_kill 1 TERM

# 6. A socket of another non-root uid: the library sends it nothing.
command -v python3 >/dev/null || {
    it_log "6. skipped: no python3"
    it_finish
}
EVIL=$IT_DIR/evil
mkdir "$EVIL"
chown $NOBODY "$EVIL"
chmod 0755 "$EVIL"
# python3 becomes uid 65534 itself (it may live where that uid cannot
# run it from); the listener's credentials are those of its listen().
it_bg evil.log python3 -c '
import os, socket, sys
d = sys.argv[1]
os.setgroups([])
os.setgid(int(sys.argv[2]))
os.setuid(int(sys.argv[2]))
ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
ls.bind(d + "/s.sock")
ls.listen(4)
for i in range(2):
    c, _ = ls.accept()
    c.settimeout(3)
    n = 0
    try:
        while True:
            b = c.recv(65536)
            if not b:
                break
            n += len(b)
    except socket.timeout:
        pass
    c.close()
    with open(d + "/bytes", "a") as f:
        f.write("%d\n" % n)
' "$EVIL" $NOBODY
for _ in $(seq 1 50); do
    [ -S "$EVIL/s.sock" ] && break
    sleep 0.1
done
out=$(timeout 30 "$IT_B/collsctl" --socket "$EVIL/s.sock" status 2>&1)
rc=$?
it_log "6. socket of uid $NOBODY: $out (exit $rc)"
[ "$rc" != 0 ] || it_fail "collsctl trusted a socket of uid $NOBODY"
echo "$out" | grep -q "the daemon's socket belongs to another user" &&
    echo "$out" | grep -q "s.sock belongs to uid $NOBODY" ||
    it_fail "no clear refusal of the socket of uid $NOBODY: $out"
COLLS_DAEMON_UID=$NOBODY timeout 30 "$IT_B/collsctl" \
    --socket "$EVIL/s.sock" status >/dev/null 2>&1
for _ in $(seq 1 50); do
    [ "$(wc -l <"$EVIL/bytes" 2>/dev/null)" = 2 ] && break
    sleep 0.1
done
bytes=$(tr '\n' ' ' <"$EVIL/bytes" 2>/dev/null)
it_log "6. bytes the fake daemon read: $bytes (refused, then trusted)"
set -- $bytes
[ "$1" = 0 ] || it_fail "the refused socket read $1 bytes"
[ "${2:-0}" -gt 0 ] || it_fail "COLLS_DAEMON_UID=$NOBODY: nothing sent"
it_finish
