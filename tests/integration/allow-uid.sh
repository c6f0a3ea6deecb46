#!/bin/bash
# allow-uid.sh -- tasks of another uid (65534) against one collsd run as
# root:
#   1. without --allow-uid the socket's directory (0700) keeps uid 65534
#      out: the attach fails with COLLS_ECONNREFUSED;
#   2. with the directory and socket opened up by hand, the daemon still
#      refuses the attach by its peer credentials: COLLS_EPERM;
#   3. restarted with --allow-uid 65534 (and the modes back at 0700), the
#      daemon gives that uid ACL entries on the directory and the socket:
#      the task attaches and messages bounce off the daemon intact.
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

# limits-check --mode echo as uid 65534 against daemon 1; prints its
# output, returns its status.
as_nobody()
{
    timeout 60 setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups \
        "$LC" --mode echo --socket "$(it_sock 1)" --timeout-ms 20000 2>&1
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
out=$(as_nobody)
rc=$?
it_log "3. --allow-uid $NOBODY: $out (exit $rc)"
[ "$rc" = 0 ] || it_fail "uid $NOBODY with --allow-uid: $out (exit $rc)"
grep -q "attached: .* uid $NOBODY" "$IT_DIR/d1.log" ||
    it_fail "daemon 1 logged no attach of uid $NOBODY"
it_alive 1 || it_fail "daemon 1 died"
it_finish
