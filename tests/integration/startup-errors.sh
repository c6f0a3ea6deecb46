#!/bin/bash
# startup-errors.sh -- every start-up failure of collsd names its cause
# once, on the terminal, with the right exit status, in the foreground and
# daemonized (the README's form, without --foreground):
#   1. --hostfile /nonexistent, --log-file /nonexistent/x.log and
#      --key-file /nonexistent print the OS error (strerror), one line;
#      so does a --listen address of another host, and a --join that
#      nobody answers says so in one line;
#   2. a UDP port in use: "UDP port P on 127.0.0.1: Address already in use
#      (another collsd? ...)", and nothing lands in the running daemon's log;
#      an --http port in use: "cannot listen: Address already in use";
#   3. a second daemon on the same socket: "a daemon already serves it
#      (pid N)", with the running daemon's pid;
#   4. a bad option value (--mtu, --log) exits 2, a failed start 1, with
#      stdout empty;
#   5. a daemonizing collsd exits 0 only once its pid file and socket
#      exist: after each of 5 starts the pid file names a live daemon;
#   6. --help says where a daemon logs by default.
. "${top_srcdir:-.}/tests/integration/lib.sh"

it_setup
D="$IT_DIR/run"
mkdir -p "$D"
P=$(it_free_port)
echo "$P" >>"$IT_DIR/ports"
P2=$(it_free_port)
echo "$P2" >>"$IT_DIR/ports"

# expect NAME STATUS TEXT CMD...: runs CMD, compares its exit status with
# STATUS, its whole stderr with TEXT, and checks that stdout is empty.
expect()
{
    local name=$1 want_rc=$2 want=$3 rc
    shift 3
    # bounded: a start expected to fail that succeeds in the foreground
    # would otherwise run until CI's cut-off
    if declare -F "$1" >/dev/null; then
        "$@" >"$IT_DIR/out" 2>"$IT_DIR/err" </dev/null
    else
        timeout 30 "$@" >"$IT_DIR/out" 2>"$IT_DIR/err" </dev/null
    fi
    rc=$?
    [ "$rc" = "$want_rc" ] ||
        it_fail "$name: exit $rc, not $want_rc (stderr: $(cat "$IT_DIR/err"))"
    [ "$(cat "$IT_DIR/err")" = "$want" ] ||
        it_fail "$name: stderr
$(cat "$IT_DIR/err")
-- expected --
$want"
    [ ! -s "$IT_DIR/out" ] || it_fail "$name: stdout: $(cat "$IT_DIR/out")"
}

# A daemon in the background, as the README starts one; its pid is
# registered for the cleanup once it has written its pid file.
daemon_bg()
{
    local dir=$1
    shift
    "$IT_B/collsd" --socket "$dir/collsd.sock" "$@" </dev/null
}

# stop PID: SIGTERM, then waits (bounded) until it is gone.
stop()
{
    kill -TERM "$1"
    for _ in $(seq 1 50); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.1
    done
}

# 1. OS errors as OS errors, in both modes.
for mode in --foreground ""; do
    m=${mode:-daemonized}
    # shellcheck disable=SC2086
    expect "hostfile ($m)" 1 \
        "collsd: hostfile /nonexistent: No such file or directory" \
        "$IT_B/collsd" $mode --socket "$D/h/collsd.sock" \
        --listen "127.0.0.1:$P" --hostfile /nonexistent
    # shellcheck disable=SC2086
    expect "log file ($m)" 1 \
        "collsd: log file /nonexistent/x.log: No such file or directory" \
        "$IT_B/collsd" $mode --socket "$D/l/collsd.sock" \
        --listen "127.0.0.1:$P" --log-file /nonexistent/x.log
    # shellcheck disable=SC2086
    expect "key file ($m)" 1 \
        "collsd: key file /nonexistent: No such file or directory" \
        "$IT_B/collsd" $mode --socket "$D/k/collsd.sock" \
        --listen "127.0.0.1:$P" --key-file /nonexistent
done
# An address of another host; a join nobody answers (the cause, one line).
KEY=$(it_keygen) || it_fail "collsctl keygen failed"
expect "address not here" 1 \
    "collsd: UDP address 192.0.2.1:$P: Cannot assign requested address (not an address of this host: see --listen)" \
    "$IT_B/collsd" --socket "$D/h/collsd.sock" --listen "192.0.2.1:$P" \
    --key-file "$KEY"
"$IT_B/collsd" --socket "$D/h/collsd.sock" --listen "127.0.0.1:$P" \
    --join "127.0.0.1:$P2" --join-timeout 300 >"$IT_DIR/out" 2>"$IT_DIR/err" </dev/null
rc=$?
[ "$rc" = 1 ] && [ "$(wc -l <"$IT_DIR/err")" = 1 ] &&
    grep -q "^collsd: .*127\.0\.0\.1:$P2" "$IT_DIR/err" ||
    it_fail "join nobody answers: exit $rc, stderr: $(cat "$IT_DIR/err")"
[ ! -e "$D/h/collsd.pid" ] && [ ! -e "$D/h/collsd.sock" ] ||
    it_fail "a failed start left its pid file or socket behind"
it_log "1. hostfile, log file, key file, address, join: the cause, once"

# 2 and 3: daemon A runs (daemonized) on port P, socket $D/a.
# The HTTP port is free when chosen, but another test running in
# parallel may take it before daemon A binds it: a new port then, up to
# 5 times (the clean-clone CI's ASan pass once lost it, and every check
# below failed or waited on a daemon that should not have started).
started=0
for _ in 1 2 3 4 5; do
    HP=$(it_free_port)
    while ss -Hltn "sport = :$HP" 2>/dev/null | grep -q .; do
        HP=$(it_free_port)
    done
    if daemon_bg "$D/a" --listen "127.0.0.1:$P" --http "127.0.0.1:$HP" \
        2>"$IT_DIR/a.err"; then
        started=1
        break
    fi
    grep -q -- "--http .*Address already in use" "$IT_DIR/a.err" || break
done
[ "$started" = 1 ] ||
    it_fail "daemon A did not start: $(cat "$IT_DIR/a.err")"
apid=$(cat "$D/a/collsd.pid" 2>/dev/null)
[ -n "$apid" ] && kill -0 "$apid" 2>/dev/null ||
    it_fail "daemon A: no live pid in its pid file after start"
echo "$apid" >"$IT_DIR/dA.pid.sh"
alog=$(wc -l <"$D/a/collsd.log")
want="collsd: UDP port $P on 127.0.0.1: Address already in use (another collsd? choose another port with --listen)"
expect "port in use (foreground)" 1 "$want" \
    "$IT_B/collsd" --foreground --socket "$D/b/collsd.sock" \
    --listen "127.0.0.1:$P"
expect "port in use (daemonized)" 1 "$want" \
    daemon_bg "$D/b" --listen "127.0.0.1:$P"
grep -q "Address already in use" "$D/b/collsd.log" ||
    it_fail "the port error is not in the failed daemon's own log"
expect "HTTP port in use" 1 \
    "collsd: --http 127.0.0.1:$HP: cannot listen: Address already in use" \
    "$IT_B/collsd" --foreground --socket "$D/b/collsd.sock" \
    --listen "127.0.0.1:$P2" --http "127.0.0.1:$HP"
it_log "2. port in use: '$want'"

want="collsd: socket $D/a/collsd.sock: a daemon already serves it (pid $apid); stop it, or choose another --socket"
expect "same socket (foreground)" 1 "$want" \
    "$IT_B/collsd" --foreground --socket "$D/a/collsd.sock" \
    --listen "127.0.0.1:$P2"
expect "same socket (daemonized)" 1 "$want" \
    daemon_bg "$D/a" --listen "127.0.0.1:$P2"
[ "$(wc -l <"$D/a/collsd.log")" = "$alog" ] ||
    it_fail "the failed starts wrote into daemon A's log: $(tail -n +$((alog + 1)) "$D/a/collsd.log")"
[ "$(cat "$D/a/collsd.pid")" = "$apid" ] ||
    it_fail "a failed start replaced daemon A's pid file"
out=$(timeout 10 "$IT_B/collsctl" --socket "$D/a/collsd.sock" status 2>&1) ||
    it_fail "daemon A no longer answers: $out"
it_log "3. second daemon on a socket: '$want'"

# 4. Exit statuses: 2 for a bad option value.
expect "bad value" 2 "collsd: --mtu: 'big' is not an integer number" \
    "$IT_B/collsd" --foreground --mtu big
expect "unknown option" 2 \
    "collsd: unknown option '--no-such' (see --help)" \
    "$IT_B/collsd" --no-such
expect "bad --log" 2 \
    "collsd: --log: 'journal' is not stderr, file, syslog or auto" \
    "$IT_B/collsd" --foreground --log journal
expect "--log stderr in the background" 2 \
    "collsd: --log stderr needs --foreground (a daemon in the background has no terminal)" \
    "$IT_B/collsd" --log stderr
it_log "4. usage errors exit 2"

# 5. The parent exits 0 only when the daemon is ready: pid file and
# socket are there as soon as it returns, every time.
stop "$apid"
for i in 1 2 3 4 5; do
    daemon_bg "$D/r" --listen "127.0.0.1:$P2" ||
        { it_fail "start $i: exit $?"; continue; }
    p=$(cat "$D/r/collsd.pid" 2>/dev/null)
    if [ -z "$p" ] || ! kill -0 "$p" 2>/dev/null; then
        it_fail "start $i: no live pid in the pid file when the parent exited"
        continue
    fi
    echo "$p" >"$IT_DIR/dR.pid.sh"
    [ -S "$D/r/collsd.sock" ] ||
        it_fail "start $i: no socket when the parent exited"
    stop "$p"
    [ ! -e "$D/r/collsd.pid" ] || it_fail "start $i: pid file left at stop"
done
it_log "5. daemonized: the pid file and socket exist when the parent exits (5 of 5)"

# 6. Where a daemon logs, in --help.
"$IT_B/collsd" --help | tr -s ' \n' ' ' |
    grep -q "default: stderr with --foreground, else collsd.log next to the socket" ||
    it_fail "--help does not say where a daemon logs by default"
it_log "6. --help says where the log goes"

it_finish
