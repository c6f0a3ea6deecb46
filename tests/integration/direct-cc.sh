#!/bin/bash
# direct-cc.sh -- COLLS_DIRECT_CC, the TCP congestion control of a task's
# direct connections (libclient/direct.c, colls__direct_cc_set):
#   1. a name the kernel does not know fails the attach with the
#      variable's name and the kernel's reason, and so does one longer
#      than a kernel name can be; nothing is left attached;
#   2. with an allowed algorithm other than the system's default, a direct
#      ping-pong of 1 MiB messages between two tasks completes, and while
#      it runs both ends of its connection use that algorithm (ss -tinp);
#      with COLLS_DIRECT_CC=system they use the system's default;
#   3. without the variable they use the system's default, unless that is
#      BBR: then cubic (reno where cubic is not allowed).
. "${top_srcdir:-.}/tests/integration/lib.sh"

command -v ss >/dev/null || {
    echo "SKIP: needs ss (iproute2)" >&2
    exit 77
}

it_setup
it_start 1 || exit 1
it_wait_hosts 1 || exit 1
CTL="$IT_B/collsctl"

# 1. Names the kernel refuses.
out=$(COLLS_DIRECT_CC=no-such-cc "$CTL" --socket "$(it_sock 1)" status 2>&1)
rc=$?
[ "$rc" -ne 0 ] || it_fail "COLLS_DIRECT_CC=no-such-cc attached (rc 0)"
echo "$out" | grep -q 'COLLS_DIRECT_CC=no-such-cc: No such file or directory' ||
    it_fail "COLLS_DIRECT_CC=no-such-cc: '$out'"
out=$(COLLS_DIRECT_CC=a-name-of-20-chars "$CTL" --socket "$(it_sock 1)" \
    status 2>&1)
rc=$?
[ "$rc" -ne 0 ] || it_fail "a 20-character COLLS_DIRECT_CC attached (rc 0)"
echo "$out" | grep -q 'COLLS_DIRECT_CC=a-name-of-20-chars: longer than 15' ||
    it_fail "a 20-character COLLS_DIRECT_CC: '$out'"
n=$(it_ctl 1 status | sed -n 's/^local tasks  *\([0-9]*\).*/\1/p')
[ "$n" = 1 ] || it_fail "after the refused attaches $n local tasks (1: status)"
it_log "1. refused: '$(echo "$out" | head -n 1)'"

# ccs_of PID: the congestion control names of PID's established TCP
# connections (ss prints a connection's process on its first line and
# its algorithm among the details on the next).
ccs_of()
{
    ss -tinp state established 2>/dev/null |
        awk -v pid="pid=$1," -v known=" $ALL " '
            index($0, pid) { want = 1; next }
            want {
                for (i = 1; i <= NF; i++)
                    if (index(known, " " $i " "))
                        print $i
                want = 0
            }' | sort -u | tr '\n' ' '
}

# pair CC TAG: an echo task and a direct ping-pong to it, both with
# COLLS_DIRECT_CC=CC (unset when CC is empty); sets SEEN_E and SEEN_P to
# the algorithms of their connections while they ran.
pair()
{
    local cc=$1 tag=$2 tid="" epid ppid rc
    SEEN_E="" SEEN_P=""
    unset COLLS_DIRECT_CC
    [ -n "$cc" ] && export COLLS_DIRECT_CC=$cc
    it_bg "echo-$tag.log" "$CTL" --socket "$(it_sock 1)" echo
    epid=$IT_LASTPID
    for _ in $(seq 1 100); do
        tid=$(grep -om1 '^t[0-9a-f]*' "$IT_DIR/echo-$tag.log")
        [ -n "$tid" ] && break
        sleep 0.1
    done
    [ -n "$tid" ] || {
        it_fail "$tag: the echo task printed no tid"
        return
    }
    it_bg "pp-$tag.log" timeout 300 "$CTL" --socket "$(it_sock 1)" pingpong \
        --route direct --to "$tid" --min 1m --max 1m --reps 3000
    ppid=$IT_LASTPID
    for _ in $(seq 1 200); do
        [ -z "$SEEN_E" ] && SEEN_E=$(ccs_of "$epid")
        # (ppid is timeout's: the ping-pong is its child)
        [ -z "$SEEN_P" ] && SEEN_P=$(ccs_of "$(pgrep -P "$ppid" | head -n 1)")
        [ -n "$SEEN_E" ] && [ -n "$SEEN_P" ] && break
        kill -0 "$ppid" 2>/dev/null || break
        sleep 0.05
    done
    wait "$ppid"
    rc=$?
    [ "$rc" = 0 ] || it_fail "$tag: the direct ping-pong failed (rc $rc):
$(cat "$IT_DIR/pp-$tag.log")"
    ! grep -q 'fell back to the default route' "$IT_DIR/pp-$tag.log" ||
        it_fail "$tag: the ping-pong fell back to the daemon"
    kill "$epid" 2>/dev/null
    wait "$epid" 2>/dev/null
    unset COLLS_DIRECT_CC
}

# 2. An allowed algorithm that is not the default, then "system".
SYS=$(cat /proc/sys/net/ipv4/tcp_congestion_control)
ALL=$(cat /proc/sys/net/ipv4/tcp_available_congestion_control)
case " $ALL " in *" cubic "*) ;; *) ALL="$ALL cubic" ;; esac
ALT=""
for a in $(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control); do
    [ "$a" != "$SYS" ] && ALT=$a && break
done
if [ -z "$ALT" ]; then
    it_log "SKIP part 2: no allowed algorithm besides $SYS"
else
    pair "$ALT" alt
    it_log "2. COLLS_DIRECT_CC=$ALT: echo '$SEEN_E', ping-pong '$SEEN_P'"
    [ "$SEEN_E" = "$ALT " ] && [ "$SEEN_P" = "$ALT " ] ||
        it_fail "COLLS_DIRECT_CC=$ALT: connections used '$SEEN_E' / '$SEEN_P'"
    pair system system
    it_log "2. COLLS_DIRECT_CC=system ($SYS): echo '$SEEN_E'," \
        "ping-pong '$SEEN_P'"
    [ "$SEEN_E" = "$SYS " ] && [ "$SEEN_P" = "$SYS " ] ||
        it_fail "COLLS_DIRECT_CC=system: connections used" \
            "'$SEEN_E' / '$SEEN_P'"
fi

# 3. Unset: the system's, or cubic (reno) in place of BBR.
pair "" unset
it_log "3. unset (system: $SYS): echo '$SEEN_E', ping-pong '$SEEN_P'"
case $SYS in
bbr*)
    [ "$SEEN_E" = "$SEEN_P" ] &&
        { [ "$SEEN_E" = "cubic " ] || [ "$SEEN_E" = "reno " ]; } ||
        it_fail "without COLLS_DIRECT_CC (system $SYS): connections used" \
            "'$SEEN_E' / '$SEEN_P', not cubic or reno"
    ;;
*)
    [ "$SEEN_E" = "$SYS " ] && [ "$SEEN_P" = "$SYS " ] ||
        it_fail "without COLLS_DIRECT_CC: connections used" \
            "'$SEEN_E' / '$SEEN_P'"
    ;;
esac
it_finish
