#!/bin/bash
# poll.sh -- adaptive polling (--poll-us, COLLS_POLL_US) changes no result,
# its counters move only when it is on, and an idle daemon sleeps.
#
# 1. Three pairs of daemons on loopback, one after the other: --poll-us 0
#    (never poll), the default, and 2000 (a large window); the tasks get
#    the same window through COLLS_POLL_US.  Each pair runs the same
#    coll-check (2 hosts x 2 tasks, level smoke, both placements) and the
#    same p2p-check (4 workers over both daemons); their summaries (cases,
#    calls, messages, bytes) must be the same text for the three windows.
#    `collsctl status` names the window; the stats counters poll_rounds,
#    poll_hits and polled_us stay 0 with --poll-us 0 and grow otherwise.
# 2. An idle daemon does not poll: one daemon with a window of 1 s serves
#    a coll-check, then stays idle for 10 s: its poll_rounds do not move
#    and its CPU time (utime + stime of /proc/PID/stat, in clock ticks)
#    grows by at most 2 ticks more than that of a daemon that never polls,
#    idle beside it (a daemon that kept polling would burn about 1000).
# (Part 3, between them: a daemon pinned to one CPU, see below; part 4:
# a task pinned to one CPU polls in direct collectives among hosts.)
. "${top_srcdir:-.}/tests/integration/lib.sh"

CC=$IT_B/tests/integration/coll-check
[ -x "$CC" ] || {
    echo "SKIP: $CC not built" >&2
    exit 77
}
it_setup

# stat I NAME: counter NAME of daemon I (collsctl stats --json).
stat()
{
    it_ctl "$1" stats --json 2>/dev/null |
        grep -oE "\"$2\" *: *[0-9]+" | sed 's/.*: *//'
}

# stop_all: stops daemons 1..IT_K.
stop_all()
{
    local i
    for i in $(seq 1 "$IT_K"); do
        it_kill "$i" TERM
    done
}

# run_checks TAG: coll-check and p2p-check on the running pair; their
# summaries without pids go to IT_DIR/sum-TAG.
run_checks()
{
    local tag=$1 socks rc
    socks="$(it_sock 1),$(it_sock 2)"
    timeout 300 "$CC" -n 4 --sockets "$socks" --layout 2,2 --group g \
        --level smoke --timeout-ms 60000 >"$IT_DIR/cc-$tag.log" 2>&1
    rc=$?
    [ "$rc" = 0 ] || {
        it_fail "coll-check with window $tag: rc $rc"
        grep -m 5 FAIL "$IT_DIR/cc-$tag.log" >&2
    }
    P2P_OPTS="--quick --timeout-ms 60000" it_p2p "w$tag" 1 1 2 1 2 ||
        it_fail "p2p-check with window $tag failed"
    {
        grep -h 'passed' "$IT_DIR/cc-$tag.log"
        grep -h 'passed' "$IT_DIR"/p2p-w"$tag"-w*.log | sort
        grep -h 'passed' "$IT_DIR/p2p-w$tag-coord.log"
    } | sed -e 's/^[^:]*\[[0-9]*\]: //' -e 's/t[0-9a-f]\{5,\}/tTID/g' \
        >"$IT_DIR/sum-$tag"
    [ -s "$IT_DIR/sum-$tag" ] || it_fail "window $tag: no summary"
}

# 1. The same results with every window.
for w in 0 default 2000; do
    # COLLS_POLL_US sets the tasks' window, and the daemons' unless
    # --poll-us says otherwise.
    if [ "$w" = default ]; then
        unset COLLS_POLL_US
        it_start 2 || exit 1
    else
        export COLLS_POLL_US=$w
        it_start 2 --poll-us "$w" || exit 1
    fi
    it_wait_hosts 2 || exit 1
    shown=$(it_ctl 1 status | sed -n 's/^poll  *//p')
    run_checks "$w"
    rounds=$(stat 1 poll_rounds)
    hits=$(stat 1 poll_hits)
    us=$(stat 1 polled_us)
    it_log "window $w: status says '$shown'; poll_rounds $rounds," \
        "poll_hits $hits, polled_us $us"
    case $w in
    0)
        [ "$shown" = "off (--poll-us 0)" ] ||
            it_fail "status shows '$shown' for --poll-us 0"
        [ "$rounds" = 0 ] && [ "$hits" = 0 ] && [ "$us" = 0 ] ||
            it_fail "--poll-us 0 polled: $rounds rounds, $hits hits, $us us"
        ;;
    *)
        want=$w
        [ "$w" = default ] && want=$("$IT_B/collsd" --help |
            sed -n '/--poll-us/,/default/s/.*\[default \([0-9]*\).*/\1/p')
        [ "$shown" = "$want us (--poll-us)" ] ||
            it_fail "status shows '$shown' for a window of ${want:-?} us"
        [ "${rounds:-0}" -gt 0 ] && [ "${hits:-0}" -gt 0 ] &&
            [ "${hits:-0}" -le "${rounds:-0}" ] ||
            it_fail "window $w: $rounds rounds, $hits hits"
        ;;
    esac
    stop_all
done
unset COLLS_POLL_US
for w in default 2000; do
    cmp -s "$IT_DIR/sum-0" "$IT_DIR/sum-$w" || {
        it_fail "results with window $w differ from --poll-us 0"
        diff "$IT_DIR/sum-0" "$IT_DIR/sum-$w" >&2
    }
done
it_log "the same summaries with every window: $(wc -l <"$IT_DIR/sum-0") lines"

# 3. A daemon pinned to one CPU gives the same results and sleeps with a
# timer slack of 4 ms (its timers fire at a scheduler tick; collsd.c
# collsd_slack) while no paced send is due; so does an idle daemon (no
# task, no group, no measurement) with more CPUs, but while a task is
# attached it keeps the slack it was started with (ours), and so does a
# program the pinned daemon spawns.  Needs 2 CPUs and the kernel's
# /proc/PID/timerslack_ns.
if [ "$(nproc)" -ge 2 ] && [ -r /proc/self/timerslack_ns ]; then
    mkdir -m 700 "$IT_DIR/bin"
    printf '#!/bin/sh\necho "slack $(cat /proc/self/timerslack_ns)"\n' \
        >"$IT_DIR/bin/slack"
    chmod +x "$IT_DIR/bin/slack"
    it_start 2 --spawn-path "$IT_DIR/bin" || exit 1
    it_wait_hosts 2 || exit 1
    taskset -a -p -c 0 "$(it_pid 1)" >/dev/null || it_fail "cannot pin daemon 1"
    run_checks solo
    cmp -s "$IT_DIR/sum-0" "$IT_DIR/sum-solo" || {
        it_fail "results with a pinned daemon differ from --poll-us 0"
        diff "$IT_DIR/sum-0" "$IT_DIR/sum-solo" >&2
    }
    # idle: no paced send due, and no measurement -- the checks moved the
    # round trips the daemons observe, so they may measure pLogP again
    # (measure.c; a daemon that measures is not idle, collsd_idle)
    measuring()
    {
        [ "$(stat 1 measure_jobs)" != 0 ] || [ "$(stat 2 measure_jobs)" != 0 ]
    }
    for _ in $(seq 1 100); do
        measuring || break
        sleep 0.1
    done
    ! measuring || it_fail "the daemons still measure pLogP after 10 s"
    sleep 0.2
    own=$(cat /proc/self/timerslack_ns)
    s1=$(cat "/proc/$(it_pid 1)/timerslack_ns")
    s2=$(cat "/proc/$(it_pid 2)/timerslack_ns")
    it_log "timer slack: pinned daemon $s1 ns, unpinned idle $s2 ns (ours $own)"
    [ "$s1" = 4000000 ] || it_fail "the pinned daemon's timer slack is $s1 ns"
    [ "$s2" = 4000000 ] ||
        it_fail "the unpinned idle daemon's timer slack is $s2 ns"
    # a task attached: the unpinned daemon is not idle
    "$IT_B/collsctl" --socket "$(it_sock 2)" echo >"$IT_DIR/echo.out" 2>&1 &
    epid=$!
    for _ in $(seq 1 50); do
        [ -s "$IT_DIR/echo.out" ] && break
        sleep 0.1
    done
    sleep 0.2
    s2=$(cat "/proc/$(it_pid 2)/timerslack_ns")
    kill "$epid" 2>/dev/null
    wait "$epid" 2>/dev/null
    it_log "timer slack of the unpinned daemon with a task attached: $s2 ns"
    [ "$s2" = "$own" ] ||
        it_fail "the unpinned daemon's timer slack with a task is $s2 ns"
    out=$(it_ctl 1 spawn --host 1 "$IT_DIR/bin/slack" 2>&1)
    grep -q "\] slack $own\$" "$IT_DIR/d1.log" ||
        it_fail "a child of the pinned daemon: '$out', log:
$(grep slack "$IT_DIR/d1.log")"
    stop_all
fi

# 4. A task pinned to one CPU polls while it waits in a direct collective
# among hosts (libclient/colls.c, dcoll_remote): two members of a group, on
# two daemons (one per host: direct), both pinned to CPU 0, run barriers
# with a window of 1 s and with none.  GNU time's %w counts a process's
# voluntary context switches, its sleeps: without polling, where the
# member that waits must sleep for the other to run, at least one per
# barrier between the two; polling, a wait yields to the other and finds
# its message without a sleep.  (Before dcoll_remote a solo task never
# polled: both counts were alike.)
if [ -x /usr/bin/time ]; then
    it_start 2 || exit 1
    it_wait_hosts 2 || exit 1
    # sleeps W: SLEEPS = the voluntary context switches of both members
    # with COLLS_POLL_US=W, summed (not in a subshell: it_fail counts)
    sleeps()
    {
        local w=$1 i pids="" c
        SLEEPS=0
        for i in 1 2; do
            COLLS_POLL_US=$w /usr/bin/time -f %w -o "$IT_DIR/csw-$w-$i" \
                taskset -c 0 timeout 300 "$IT_B/collsctl" --socket \
                "$(it_sock "$i")" bench barrier --group "solo$w" -n 2 \
                --iters 500 --runs 4 >"$IT_DIR/solo-$w-$i.log" 2>&1 &
            pids="$pids $!"
        done
        for i in $pids; do
            wait "$i" || it_fail "barriers with window $w failed"
        done
        grep -q 'dissemination  *direct' "$IT_DIR/solo-$w-1.log" ||
            it_fail "window $w: not a direct barrier:
$(cat "$IT_DIR/solo-$w-1.log")"
        for i in 1 2; do
            c=$(tail -n 1 "$IT_DIR/csw-$w-$i")
            case $c in
            '' | *[!0-9]*) it_fail "window $w: GNU time wrote '$c'" ;;
            *) SLEEPS=$((SLEEPS + c)) ;;
            esac
        done
    }
    sleeps 0
    s0=$SLEEPS
    sleeps 1000000
    s1=$SLEEPS
    it_log "pinned barriers, 2 x 2000: $s0 sleeps without polling, $s1 polling"
    [ "$s0" -ge 1000 ] ||
        it_fail "without polling only $s0 sleeps in 2 x 2000 barriers"
    [ $((4 * s1)) -lt "$s0" ] ||
        it_fail "a pinned task polling in direct barriers slept $s1 times" \
            "($s0 without polling)"
    stop_all
else
    it_log "SKIP part 4: no /usr/bin/time"
fi

# 2. An idle daemon sleeps, even with a large window.  Beside it, at the
# same time, a daemon that never polls (same options otherwise): the cost
# of being idle (the cron's wake-ups) is the same for both, however loaded
# the machine is.
ticks()
{
    awk '{ print $14 + $15 }' "/proc/$1/stat"
}
it_start 1 --poll-us 1000000 || exit 1
mkdir -m 700 "$IT_DIR/ref"
# (the same heartbeat as daemon 1: an idle daemon's cron follows it)
# shellcheck disable=SC2086
it_bg ref.log "$IT_B/collsd" --foreground --listen 127.0.0.1:0 \
    --socket "$IT_DIR/ref/collsd.sock" $IT_DAEMON_OPTS --poll-us 0 \
    --log-level warn
ref=$IT_LASTPID
for _ in $(seq 1 100); do
    [ -S "$IT_DIR/ref/collsd.sock" ] && break
    sleep 0.1
done
for s in "$(it_sock 1)" "$IT_DIR/ref/collsd.sock"; do
    COLLS_POLL_US=0 timeout 300 "$CC" -n 2 --sockets "$s" --layout 2 \
        --group idle --level smoke --timeout-ms 60000 \
        >>"$IT_DIR/cc-idle.log" 2>&1 || it_fail "coll-check on $s failed"
done
r0=$(stat 1 poll_rounds)
[ "${r0:-0}" -gt 0 ] || it_fail "the busy daemon never polled"
sleep 1
r0=$(stat 1 poll_rounds)
t0=$(ticks "$(it_pid 1)")
z0=$(ticks "$ref")
sleep 10
t1=$(ticks "$(it_pid 1)")
z1=$(ticks "$ref")
r1=$(stat 1 poll_rounds)
it_log "idle 10 s: CPU ticks $t0 -> $t1 (never polling: $z0 -> $z1)," \
    "poll_rounds $r0 -> $r1"
[ $((t1 - t0)) -le $((z1 - z0 + 2)) ] ||
    it_fail "the idle daemon used $((t1 - t0)) ticks, $((z1 - z0)) without polling"
# The stats request that read r0 queued its reply after counting: one
# window for it, at most one for the detach.
[ $((r1 - r0)) -le 2 ] ||
    it_fail "the idle daemon opened $((r1 - r0)) polling windows"
stop_all
it_finish
