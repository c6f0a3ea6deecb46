#!/bin/bash
# tune.sh -- pLogP measurement and model-based selection on three emulated
# hosts (network namespaces; docs/collectives.md "Measuring the network"):
# 1. with --measure (the default) every daemon measures its peers as they
#    come up: right after they are up the daemons' statistics count
#    measurements waiting (`measure_jobs`, at most N - 1 each; they start
#    a second after a peer comes up, so those of the last host up still
#    wait), later 0 on every host (mh_wait_measured, which the benchmarks
#    wait for), and each has parameters in force (epoch >= 1) within
#    seconds;
# 2. `collsctl tune` measures every peer with the thorough ladder and
#    every daemon at once: nine sizes, a positive finite L, a larger gap
#    for 4 MiB than for 1 B, gl nowhere below g, the send and receive
#    overheads o_s and o_r positive at 4 MiB (o_r at most the gap: one
#    thread's CPU over a train's span), a new epoch, and the file
#    next to the socket holds that epoch;
# 3. a group formed after it runs, through the daemons, the algorithm
#    `tune --show` marks as the pick for that size (bcast, 1 KiB and
#    1 MiB), with the right result (bench checks nothing, so coll-check
#    runs the same group shape: results against a serial reference);
# 4. a restarted daemon (--measure=no) takes its parameters from the
#    file; a corrupt file is logged and ignored (tune --show then says
#    nothing was measured, exit 1);
# 5. --measure without --show is a usage error.
# Needs root (exit 77 otherwise).  Bounded: every step runs under timeout.
. "${top_srcdir:-.}/tests/netns/lib.sh"

B=${top_builddir:-.}
B=$(cd "$B" && pwd -P)
SOCK=/tmp/collsd/collsd.sock
N=3
DOPTS="--heartbeat 100 --dead-after 3000 --request-timeout 5000"

mh_init "$B" "$SOCK" "$N" collsd collsctl tests/integration/coll-check
for i in $(seq 1 $N); do
    mh_daemon "$i" $DOPTS
done
for i in $(seq 1 $N); do
    mh_wait_up "$i" $N || fail "host $i does not see $N hosts up"
done

# epoch_of I: the epoch host I's daemon has in force (0: none)
epoch_of()
{
    mh_ctl "$1" tune --params | sed -n 's/^machine, epoch \([0-9]*\):.*/\1/p' |
        grep . || echo 0
}

# 1. measured on start
jobs=0
for i in $(seq 1 $N); do
    j=$(mh_measure_jobs "$i")
    case "$j" in
    [0-9]) [ "$j" -le $((N - 1)) ] || fail "host $i: measure_jobs $j" ;;
    *) fail "host $i: no measure_jobs in its statistics ('$j')" ;;
    esac
    jobs=$((jobs + ${j:-0}))
done
[ "$jobs" -ge 1 ] || fail "no measurement waits just after start"
mh_wait_measured $N || fail "the start measurements do not end"
mh_ctl 1 stats | grep -qE 'measure_jobs +0( |$)' ||
    fail "collsctl stats does not show measure_jobs 0: $(mh_ctl 1 stats | head -12)"
for i in $(seq 1 $N); do
    e=0
    for _ in $(seq 1 100); do
        e=$(epoch_of "$i")
        [ "$e" -ge 1 ] && break
        sleep 0.1
    done
    [ "$e" -ge 1 ] || fail "host $i: no parameters 10 s after start"
done
echo "ok: every daemon measured its peers on start"

# 2. collsctl tune
# the probes' deadlines grow from the daemon's --request-timeout, which
# tune reads from its statistics
mh_ctl 1 stats --json | grep -qE '"request_timeout_ms": *5000[,}]' ||
    fail "stats do not show --request-timeout 5000 as request_timeout_ms"
before=$(epoch_of 1)
out=$(mh_ctl 1 tune 2>"$NS_RUN/tune.err") || {
    cat "$NS_RUN/tune.err"
    fail "collsctl tune failed"
}
echo "$out"
grep -q "2/2 hosts" "$NS_RUN/tune.err" || fail "no progress bar to 2/2 hosts"
after=$(epoch_of 1)
[ "$after" -gt "$before" ] || fail "epoch $before -> $after after tune"
rows=$(echo "$out" | awk '$1 ~ /^[0-9]+$/ && NF == 7' | wc -l)
[ "$rows" -eq 9 ] || fail "tune printed $rows sizes, want 9"
L=$(echo "$out" | sed -n 's/^machine, epoch [0-9]*: L \([0-9.]*\) us.*/\1/p')
awk -v l="$L" 'BEGIN { exit !(l > 0 && l < 100000) }' ||
    fail "L '$L' is not a positive latency"
echo "$out" | awk '$1 == 1 { g1 = $3 } $1 == 4194304 { g4 = $3 }
    END { exit !(g4 > g1 && g4 > 0) }' ||
    fail "gap(4 MiB) is not larger than gap(1 B)"
echo "$out" | awk '$1 ~ /^[0-9]+$/ && NF == 7 && $5 < $2 { bad = 1 }
    END { exit bad }' || fail "gl below g at some size"
# the overheads: CPU per message, more for 4 MiB than for 1 B; the
# receiver's CPU over a train's span is at most that span (one thread)
echo "$out" | awk '$1 == 1 && NF == 7 { s1 = $6 }
    $1 == 4194304 && NF == 7 { gap = $3; s4 = $6; r4 = $7 }
    END { exit !(s4 > s1 && s4 > 0 && r4 > 0 && r4 <= 1.05 * gap + 1) }' ||
    fail "o_s or o_r (4 MiB) out of bounds"
grep -q "every daemon sending at once" "$NS_RUN/tune.err" ||
    fail "tune did not measure under load"
# Ll: from the lower of the two echo steps' medians (before and after the
# trains), half of it less g(1), at least L
Ll=$(echo "$out" | sed -n 's/^machine, epoch [0-9]*: L [0-9.]* us (\([0-9.]*\) while.*/\1/p')
g1=$(echo "$out" | awk '$1 == 1 && NF == 7 { print $2; exit }')
rtts=$(sed -n 's/.*echoes of 1 byte \(before\|after\) the trains: median round trip \([0-9.]*\) us.*/\1 \2/p' \
    "$NS_RUN/d1.log" | tail -2)
echo "$rtts" | awk -v L="$L" -v Ll="$Ll" -v g1="$g1" '
    { step[NR] = $1; rtt[NR] = $2 }
    END {
        if (NR != 2 || step[1] != "before" || step[2] != "after") exit 1
        low = rtt[1] < rtt[2] ? rtt[1] : rtt[2]
        want = low / 2 - g1; if (want < L) want = L
        d = want - Ll; if (d < 0) d = -d
        exit !(d <= 0.02 + 1e-4 * want) }' ||
    fail "Ll $Ll is not from the lower of the echo steps ($rtts; L $L, g(1) $g1)"
file=$(host_run 1 cat /tmp/collsd/collsd.plogp)
echo "$file" | head -1 | grep -qx "collsd-plogp 1" ||
    fail "the parameter file does not start with its magic"
echo "$file" | grep -qx "epoch $after" ||
    fail "the parameter file does not hold epoch $after"
echo "ok: tune measured, committed epoch $after and saved it"

# 3. the pick runs: bcast through the daemons, 1 KiB and 1 MiB
for size in 1024 1048576; do
    want=$(mh_ctl 1 tune --show bcast --sizes "$size:$size" |
        awk '$1 == "*" { print $2 }')
    [ -n "$want" ] || fail "tune --show bcast marks no pick for $size"
    g=tune$size
    pids=""
    for i in $(seq 1 $N); do
        host_bg "$i" "$g-$i.log" timeout 60 "$B/collsctl" --socket "$SOCK" \
            bench bcast --hier --sizes "$size:$size" --runs 1 --iters 3 \
            --group "$g" -n $N
        pids="$pids $NS_LASTPID"
    done
    for p in $pids; do
        wait "$p" || fail "bench bcast $size failed (pid $p)"
    done
    ran=$(awk '$1 ~ /^[0-9]+$/ && NF >= 3 { print $3 }' "$NS_RUN/$g-"*.log |
        head -1)
    [ "${ran%%:*}" = "$want" ] ||
        fail "bcast $size ran '$ran', tune --show picks '$want'"
    echo "ok: bcast $size ran $ran, the pick"
done
pids=""
for i in $(seq 1 $N); do
    host_bg "$i" "check-$i.log" timeout 300 "$B/tests/integration/coll-check" \
        -n 1 --sockets "$SOCK" --group tunecheck --size $N --level thin \
        --timeout-ms 60000
    pids="$pids $NS_LASTPID"
done
for p in $pids; do
    wait "$p" || {
        tail -5 "$NS_RUN"/check-*.log
        fail "coll-check through the daemons with measured parameters"
    }
done
echo "ok: coll-check's matrix with the model's picks"

# 4. the file across a restart, and a corrupt one
mh_ctl 1 halt >/dev/null 2>&1
sleep 1
ns_kill_pids 2>/dev/null
host_run 1 sh -c "test -f /tmp/collsd/collsd.plogp" ||
    fail "the parameter file is gone after halt"
mh_daemon 1 $DOPTS --measure=no
mh_wait_up 1 1 || fail "host 1 did not come back"
[ "$(epoch_of 1)" = "$after" ] ||
    fail "restarted daemon has epoch $(epoch_of 1), the file $after"
echo "ok: a restarted daemon takes epoch $after from its file"
mh_ctl 1 halt >/dev/null 2>&1
sleep 1
host_run 1 sh -c "printf 'collsd-plogp 1\nL nan\ng 1 2 1 40\nend\n' \
    >/tmp/collsd/collsd.plogp"
mh_daemon 1 $DOPTS --measure=no
mh_wait_up 1 1 || fail "host 1 did not come back"
[ "$(epoch_of 1)" = 0 ] || fail "a corrupt file was taken"
grep -q "not a parameter file" "$NS_RUN/d1.log" ||
    fail "the corrupt file was not logged"
if mh_ctl 1 tune --show bcast >/dev/null 2>"$NS_RUN/show.err"; then
    fail "tune --show without parameters succeeded"
fi
grep -q "no parameters measured yet" "$NS_RUN/show.err" ||
    fail "tune --show without parameters: $(cat "$NS_RUN/show.err")"
echo "ok: a corrupt file is refused and logged"

# 5. options that need --show
if mh_ctl 1 tune --measure >/dev/null 2>&1; then
    fail "tune --measure without --show accepted"
fi
ns_finish
