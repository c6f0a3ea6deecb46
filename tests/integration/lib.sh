# tests/integration/lib.sh -- K collsd daemons on loopback (sourced).
#
# it_setup                  temp dir IT_DIR, cleanup trap (EXIT INT TERM)
# it_start K [collsd opts]  daemons 1..K on 127.0.0.1, free UDP ports, one
#                           shared hostfile, sockets IT_DIR/dI/collsd.sock
# it_wait_hosts K           until every daemon lists K hosts up
# it_sock I, it_port I      daemon I's socket path and UDP port
# it_keygen                 writes a cluster key, prints its path
# it_ctl I ARGS...          collsctl against daemon I (bounded by timeout)
# it_bg LOG CMD...          a background command, killed at cleanup
# it_alive I                daemon I still running?
# it_kill I [SIG]           stop daemon I (default KILL) and reap it
# it_restart I              start daemon I again with its original options
#
# The cleanup kills every process started here (daemons and it_bg jobs),
# then removes IT_DIR, unless IT_KEEP is set; logs of a failed test are
# printed first.  Binaries come from $top_builddir (set by make check; the
# default is the current directory).

IT_B=${top_builddir:-.}
IT_DIR=""
IT_K=0
IT_PIDS=""
IT_BGPIDS=""
IT_OPTS=""
IT_FAILED=0
IT_FAILS="" # the it_fail lines, repeated after the logs (it_cleanup)
# Short heartbeats; --dead-after long enough for a loaded machine (tests
# that time failure detection pass their own, e.g. coll-fail.sh).
IT_DAEMON_OPTS=${IT_DAEMON_OPTS:-"--heartbeat 100 --dead-after 3000 \
--request-timeout 2000 --log-level info"}

it_log()
{
    echo "[$(date +%H:%M:%S)] ${0##*/}: $*" >&2
}

# Records a failure; the test exits 1 at the end (see it_finish).
it_fail()
{
    echo "${0##*/}: FAIL: $*" >&2
    IT_FAILED=$((IT_FAILED + 1))
    IT_FAILS="$IT_FAILS${0##*/}: FAIL: $*
"
}

it_require()
{
    for b in collsd collsctl; do
        if [ ! -x "$IT_B/$b" ]; then
            echo "SKIP: $IT_B/$b not built" >&2
            exit 77
        fi
    done
}

# Kills pids: TERM, a grace period, then KILL; reaps them.
it_kill_pids()
{
    local alive p
    [ -n "$*" ] || return 0
    kill -TERM "$@" 2>/dev/null
    for _ in $(seq 1 30); do
        alive=""
        for p in "$@"; do
            kill -0 "$p" 2>/dev/null && alive="$alive $p"
        done
        [ -z "$alive" ] && break
        sleep 0.1
    done
    [ -n "$alive" ] && kill -KILL $alive 2>/dev/null
    for p in "$@"; do
        wait "$p" 2>/dev/null
    done
    return 0
}

it_cleanup()
{
    local rc=$? f
    trap - EXIT INT TERM
    it_kill_pids $IT_BGPIDS
    it_kill_pids $(it_daemon_pids)
    if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -n "$IT_DIR" ]; then
        for f in "$IT_DIR"/*.log; do
            [ -f "$f" ] || continue
            echo "---- $f (last 30 lines)" >&2
            tail -n 30 "$f" >&2
        done
        # a CI that keeps the output's tail shows why after the logs
        [ -z "$IT_FAILS" ] || printf -- '---- failures\n%s' "$IT_FAILS" >&2
    fi
    if [ -n "$IT_DIR" ] && [ -d "$IT_DIR" ]; then
        if [ -n "${IT_KEEP:-}" ]; then
            it_log "kept $IT_DIR"
        else
            rm -rf "$IT_DIR"
        fi
    fi
    exit "$rc"
}

it_setup()
{
    it_require
    IT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/colls-it.XXXXXX") || exit 99
    trap it_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# The pid of daemon I (empty when stopped).
it_pid()
{
    cat "$IT_DIR/d$1.pid.sh" 2>/dev/null
}

it_daemon_pids()
{
    cat "$IT_DIR"/d*.pid.sh 2>/dev/null
}

it_sock()
{
    echo "$IT_DIR/d$1/collsd.sock"
}

it_port()
{
    sed -n "$1p" "$IT_DIR/ports"
}

# Prints a port no TCP or UDP socket uses, not in IT_DIR/ports yet, for
# a daemon's --listen (UDP) or --http (TCP).  Below the kernel's ephemeral
# range (32768 and up): a port drawn from it could be a TCP connection's
# local port by the time the daemon binds it (CI once failed
# conn-errors.sh on "--http 127.0.0.1:54690: cannot listen: Address
# already in use" while other tests ran beside it).
it_free_port()
{
    local p
    while :; do
        p=$((20000 + (RANDOM * 32768 + RANDOM) % 12768))
        grep -qx "$p" "$IT_DIR/ports" 2>/dev/null && continue
        if ! ss -Hantu "sport = :$p" 2>/dev/null | grep -q .; then
            echo "$p"
            return 0
        fi
    done
}

# Writes a new cluster key (collsctl keygen) to IT_DIR/cluster.key and
# prints its path, for --key-file.
it_keygen()
{
    "$IT_B/collsctl" keygen --force "$IT_DIR/cluster.key" >/dev/null &&
        echo "$IT_DIR/cluster.key"
}

# Starts daemon I in the foreground mode, in the background.
it_start_one()
{
    local i=$1
    mkdir -p "$IT_DIR/d$i"
    chmod 700 "$IT_DIR/d$i"
    # shellcheck disable=SC2086
    "$IT_B/collsd" --foreground --listen "127.0.0.1:$(it_port "$i")" \
        --hostfile "$IT_DIR/hostfile" --socket "$(it_sock "$i")" \
        --name "it$i" $IT_DAEMON_OPTS $IT_OPTS \
        >>"$IT_DIR/d$i.log" 2>&1 </dev/null &
    echo $! >"$IT_DIR/d$i.pid.sh"
}

# Starts K daemons.  Extra arguments are passed to every collsd.
it_start()
{
    IT_K=$1
    shift
    IT_OPTS="$*"
    local i
    : >"$IT_DIR/ports"
    : >"$IT_DIR/hostfile"
    for i in $(seq 1 "$IT_K"); do
        it_free_port >>"$IT_DIR/ports"
        echo "127.0.0.1:$(it_port "$i") name=it$i" >>"$IT_DIR/hostfile"
    done
    for i in $(seq 1 "$IT_K"); do
        it_start_one "$i"
    done
    for i in $(seq 1 "$IT_K"); do
        it_wait_socket "$i" || return 1
    done
}

it_wait_socket()
{
    for _ in $(seq 1 100); do
        [ -S "$(it_sock "$1")" ] && return 0
        it_alive "$1" || break
        sleep 0.1
    done
    it_fail "daemon $1 did not create its socket"
    return 1
}

it_restart()
{
    it_start_one "$1"
    it_wait_socket "$1"
}

it_alive()
{
    local p
    p=$(it_pid "$1")
    [ -n "$p" ] && kill -0 "$p" 2>/dev/null
}

it_kill()
{
    local p
    p=$(it_pid "$1")
    [ -n "$p" ] || return 0
    kill -"${2:-KILL}" "$p" 2>/dev/null
    wait "$p" 2>/dev/null
    rm -f "$IT_DIR/d$1.pid.sh"
}

# collsctl against daemon I, bounded in time.
it_ctl()
{
    local i=$1
    shift
    timeout 30 "$IT_B/collsctl" --socket "$(it_sock "$i")" "$@"
}

# Number of hosts daemon I lists as up.
it_hosts_up()
{
    it_ctl "$1" hosts 2>/dev/null | grep -c ' up '
}

# Waits until each of daemons LIST (default 1..K) sees N hosts up.
it_wait_hosts()
{
    local n=$1 list i ok
    shift
    list=${*:-$(seq 1 "$IT_K")}
    for i in $list; do
        ok=0
        for _ in $(seq 1 100); do
            if [ "$(it_hosts_up "$i")" -ge "$n" ]; then
                ok=1
                break
            fi
            sleep 0.1
        done
        if [ "$ok" != 1 ]; then
            it_fail "daemon $i sees $(it_hosts_up "$i") hosts up, not $n"
            it_ctl "$i" hosts >&2
            return 1
        fi
    done
}

# Runs CMD in the background with output to IT_DIR/LOG; pid in IT_LASTPID.
it_bg()
{
    local log=$1
    shift
    "$@" >"$IT_DIR/$log" 2>&1 </dev/null &
    IT_LASTPID=$!
    IT_BGPIDS="$IT_BGPIDS $IT_LASTPID"
}

# Waits for a background pid with a bound; returns its status (124 on
# timeout, after killing it).
it_wait()
{
    local pid=$1 secs=${2:-60} n=0
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$n" -ge $((secs * 10)) ]; then
            kill -KILL "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
            return 124
        fi
        sleep 0.1
        n=$((n + 1))
    done
    wait "$pid"
}

# Starts the p2p check NAME: a coordinator on daemon C and one worker per
# entry of WORKERS on that daemon (e.g. "1 2 3 1 2 3"); extra worker options
# in P2P_OPTS.  Logs: IT_DIR/p2p-NAME-*.log.  it_p2p_wait NAME collects it.
it_p2p_start()
{
    local name=$1 c=$2 n k=0 w tidfile
    shift 2
    n=$#
    tidfile="$IT_DIR/coord-$name.tid"
    rm -f "$tidfile"
    it_bg "p2p-$name-coord.log" timeout 300 \
        "$IT_B/tests/integration/p2p-check" --socket "$(it_sock "$c")" \
        --coord "$n" --tidfile "$tidfile"
    echo "$IT_LASTPID" >"$IT_DIR/p2p-$name.pids"
    for w in "$@"; do
        # shellcheck disable=SC2086
        k=$((k + 1))
        it_bg "p2p-$name-w$k.log" timeout 300 \
            "$IT_B/tests/integration/p2p-check" --socket "$(it_sock "$w")" \
            --worker "$tidfile" $P2P_OPTS
        echo "$IT_LASTPID" >>"$IT_DIR/p2p-$name.pids"
    done
}

# Waits for the p2p check NAME (bounded); 0 if the coordinator and every
# worker passed.  Failures are recorded with it_fail.
it_p2p_wait()
{
    local name=$1 rc=0 first=1 p cpid n
    for p in $(cat "$IT_DIR/p2p-$name.pids"); do
        if [ "$first" = 1 ]; then
            first=0
            cpid=$p
            continue
        fi
        if ! it_wait "$p" 300; then
            it_fail "p2p $name: worker pid $p failed"
            grep -h 'FAIL' "$IT_DIR"/p2p-$name-w*.log | head -5 >&2
            rc=1
        fi
    done
    if ! it_wait "$cpid" 60; then
        it_fail "p2p $name: coordinator failed"
        tail -5 "$IT_DIR/p2p-$name-coord.log" >&2
        rc=1
    fi
    n=$(($(wc -l <"$IT_DIR/p2p-$name.pids") - 1))
    [ "$rc" = 0 ] && it_log "p2p $name: passed ($n workers)"
    return "$rc"
}

# it_p2p_start + it_p2p_wait.
it_p2p()
{
    it_p2p_start "$@"
    it_p2p_wait "$1"
}

# Prints the sum of the numeric JSON fields whose names match the extended
# regular expression RE in daemon I's `collsctl stats --json`.
it_stat_sum()
{
    it_ctl "$1" stats --json 2>/dev/null |
        grep -oE "\"[A-Za-z0-9_]*($2)[A-Za-z0-9_]*\" *: *[0-9]+" |
        sed 's/.*: *//' | awk '{ s += $1 } END { print s + 0 }'
}

# Exits with 1 if any it_fail was recorded, else 0.
it_finish()
{
    if [ "$IT_FAILED" != 0 ]; then
        it_log "$IT_FAILED failure(s)"
        exit 1
    fi
    it_log "passed"
    exit 0
}
