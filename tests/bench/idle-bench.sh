#!/bin/bash
# idle-bench.sh -- what idle daemons cost: CPU and wake-ups per daemon.
#
# Two machines of IDLE_HOSTS emulated hosts (tests/netns/lib.sh) run side
# by side, one collsd per host each, on ports 7490 and 7491: one with the
# default heartbeats (--heartbeat 500, --idle-heartbeat 10000), one with
# --idle-heartbeat 0 (every --heartbeat, as before there was an idle
# interval).  Once every daemon lists every host up and IDLE_SETTLE
# seconds passed, IDLE_ROUNDS rounds of IDLE_S seconds measure each
# machine's daemons (alternately, so that machine noise hits both):
# their CPU time (/proc/PID/schedstat, ns) and voluntary context
# switches (one per sleep, so per wake-up), per daemon and second.
# Prints every round, then the median and spread of each and the ratio.
# Needs root (exits 77 otherwise).  Not part of make check.
#
#   top_builddir=BUILD tests/bench/idle-bench.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
B=$(cd "${top_builddir:-.}" && pwd -P)
N=${IDLE_HOSTS:-4}
ROUNDS=${IDLE_ROUNDS:-5}
SECS=${IDLE_S:-10}
SETTLE=${IDLE_SETTLE:-3}
. "$top_srcdir/tests/netns/lib.sh"

mh_init "$B" /tmp/collsd/a.sock "$N" collsd collsctl
for i in $(seq 1 "$N"); do
    echo "$(ns_addr "$i"):7491 name=host$i"
done >"$NS_RUN/hostfile.off"

PIDS_on=""
PIDS_off=""
for i in $(seq 1 "$N"); do
    mh_daemon "$i"
    PIDS_on="$PIDS_on $NS_LASTPID"
    # shellcheck disable=SC2046
    host_bg "$i" "off$i.log" "$B/collsd" --foreground \
        --listen "$(ns_addr "$i"):7491" --hostfile "$NS_RUN/hostfile.off" \
        --socket /tmp/collsd/b.sock $(mh_trust) --idle-heartbeat 0
    PIDS_off="$PIDS_off $NS_LASTPID"
done
for i in $(seq 1 "$N"); do
    mh_wait_up "$i" "$N" || fail "host $i (default) does not see $N up"
    MH_SOCK=/tmp/collsd/b.sock mh_wait_up "$i" "$N" ||
        fail "host $i (--idle-heartbeat 0) does not see $N up"
done
[ "$FAILED" = 0 ] || ns_finish
# the daemons' start measurement is not idleness
mh_wait_measured "$N" || fail "the start measurement does not end (default)"
MH_SOCK=/tmp/collsd/b.sock mh_wait_measured "$N" ||
    fail "the start measurement does not end (--idle-heartbeat 0)"
sleep "$SETTLE"

# sums PIDS: "cpu_ns wakeups" over those daemons.
sums()
{
    local c=0 w=0 p
    for p in "$@"; do
        read -r ns _ <"/proc/$p/schedstat" || return 1
        c=$((c + ns))
        w=$((w + $(awk '/^voluntary_ctxt_switches/ { print $2 }' \
            "/proc/$p/status")))
    done
    echo "$c $w"
}

printf '%d emulated hosts, one idle collsd each per machine; rounds of %d s\n' \
    "$N" "$SECS"
printf '%-7s %-22s %12s %14s\n' round machine "% of a CPU" "wake-ups/s"
: >"$NS_RUN/r-on"
: >"$NS_RUN/r-off"
for k in $(seq 1 "$ROUNDS"); do
    for m in on off; do
        eval "pids=\$PIDS_$m"
        # shellcheck disable=SC2086
        read -r c0 w0 < <(sums $pids)
        sleep "$SECS"
        # shellcheck disable=SC2086
        read -r c1 w1 < <(sums $pids)
        awk -v c=$((c1 - c0)) -v w=$((w1 - w0)) -v n="$N" -v s="$SECS" \
            'BEGIN { printf "%.5f %.2f\n", c / 1e7 / s / n, w / s / n }' \
            >>"$NS_RUN/r-$m"
        label="default"
        [ "$m" = off ] && label="--idle-heartbeat 0"
        printf '%-7s %-22s %12s %14s\n' "$k" "$label" \
            $(tail -n 1 "$NS_RUN/r-$m")
    done
done

# med FILE COL: "median (min..max)" of column COL.
med()
{
    sort -g -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c }
        END { printf "%s (%s..%s)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
mc() { sort -g -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'; }
echo
echo "median (min..max) per daemon:"
printf '  %-20s %% of a CPU %s, wake-ups/s %s\n' default \
    "$(med "$NS_RUN/r-on" 1)" "$(med "$NS_RUN/r-on" 2)"
printf '  %-20s %% of a CPU %s, wake-ups/s %s\n' "--idle-heartbeat 0" \
    "$(med "$NS_RUN/r-off" 1)" "$(med "$NS_RUN/r-off" 2)"
awk -v a="$(mc "$NS_RUN/r-on" 1)" -v b="$(mc "$NS_RUN/r-off" 1)" \
    -v x="$(mc "$NS_RUN/r-on" 2)" -v y="$(mc "$NS_RUN/r-off" 2)" \
    'BEGIN { printf "  default / --idle-heartbeat 0: CPU %.3fx, wake-ups %.3fx\n",
        (b > 0 ? a / b : 0), (y > 0 ? x / y : 0) }'
ns_finish
