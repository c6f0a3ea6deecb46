#!/bin/bash
# fpc-bcast-bench.sh -- FPC compression inside bcast on emulated hosts
# (network namespaces, one collsd each; needs root).  Not part of make
# check.
#
# 4 hosts x 1 task, every host's egress shaped to 100 Mbit/s (tbf).  Per
# data kind (smooth: the ramp 1 + k/1000 of coll-check, a sampled smooth
# function; random: arbitrary 64-bit patterns, which FPC cannot shrink)
# and size (1 MiB, 4 MiB of doubles), a hierarchical bcast from rank 0 is
# timed with compression off, on and auto (coll-check --check bench: 3
# warm-ups, 5 runs of BENCH_ITERS calls after a barrier, each member's best
# run, the maximum over members), BENCH_REPS (3) times; the table shows
# the median µs/op of each mode, what ran (the algorithm, "+fpc" when the
# payload went compressed) and the ratios off/on and off/auto.  The
# daemons assume the link speed they really have (--link-mbit 100),
# which AUTO's model uses.
# Environment: BENCH_ITERS (default 3), BENCH_REPS (3), BENCH_SIZES
# ("1048576 4194304"), BENCH_RATE (100mbit), BENCH_OUT (results, default
# ./fpc-bcast-bench-results.txt).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/netns/lib.sh"

B=${top_builddir:-.}
B=$(cd "$B" && pwd -P)
CC=$B/tests/integration/coll-check
SOCK=/tmp/collsd/collsd.sock
N=4
ITERS=${BENCH_ITERS:-3}
REPS=${BENCH_REPS:-3}
SIZES=${BENCH_SIZES:-1048576 4194304}
RATE=${BENCH_RATE:-100mbit}
OUT=${BENCH_OUT:-$PWD/fpc-bcast-bench-results.txt}

mh_init "$B" "$SOCK" "$N" collsd collsctl tests/integration/coll-check
: >"$OUT"
export COLLS_LINK_MBIT=${RATE%mbit}
for i in $(seq 1 $N); do
    mh_daemon "$i" --log-level warning
done
for i in $(seq 1 $N); do
    mh_wait_up "$i" "$N" || true
    ns_limit "$i" "$RATE"
done
mh_wait_measured "$N" || true # the daemons' start measurement

out()
{
    echo "$*" | tee -a "$OUT"
}

# bench DATA BYTES COMPRESS: one coll-check bench over the 4 hosts (one
# member each); prints "us alg".
bench()
{
    local data=$1 bytes=$2 comp=$3 i pids="" name
    name="f$(date +%s%N)"
    for i in $(seq 1 $N); do
        host_bg "$i" "$name-$i.log" timeout 900 "$CC" --socket "$SOCK" \
            --group "$name" --size "$N" --check bench --ops bcast \
            --bytes "$bytes" --mode hier --iters "$ITERS" \
            --compress "$comp" --data "$data" --timeout-ms 600000
        pids="$pids $NS_LASTPID"
    done
    for i in $pids; do
        wait "$i"
    done
    cat "$NS_RUN/$name"-*.log | awk '$1 == "bench" { print $4, $5 }'
}

# median of the numbers on stdin
median()
{
    sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)];
        else print "-" }'
}

out "== bcast, $N hosts x 1 task, $RATE per host, hierarchical;" \
    "us/op, median of $REPS"
printf '%-7s %8s %12s %12s %12s %7s %7s  %s\n' data bytes off on auto \
    off/on off/auto "ran (off / on / auto)" | tee -a "$OUT"
for data in smooth random; do
    for bytes in $SIZES; do
        declare -A med ran
        for comp in off on auto; do
            f="$NS_RUN/r-$data-$bytes-$comp"
            : >"$f"
            for _ in $(seq 1 "$REPS"); do
                bench "$data" "$bytes" "$comp" >>"$f"
            done
            med[$comp]=$(awk '{ print $1 }' "$f" | median)
            ran[$comp]=$(awk '{ print $2 }' "$f" | sort | uniq -c |
                awk '{ printf "%s%s(%d)", s, $2, $1; s = "," }')
        done
        printf '%-7s %8s %12s %12s %12s %7s %7s  %s / %s / %s\n' "$data" \
            "$bytes" "${med[off]}" "${med[on]}" "${med[auto]}" \
            "$(awk -v a="${med[off]}" -v b="${med[on]}" \
                'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')" \
            "$(awk -v a="${med[off]}" -v b="${med[auto]}" \
                'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')" \
            "${ran[off]}" "${ran[on]}" "${ran[auto]}" | tee -a "$OUT"
        unset med ran
    done
done
out ""
out "compression counters of host 2 (a receiver):"
mh_ctl 2 stats --json 2>/dev/null | grep -oE '"fpc_[a-z_]*" *: *[0-9.]+' |
    tee -a "$OUT"
out "compression counters of host 1 (the root's daemon):"
mh_ctl 1 stats --json 2>/dev/null | grep -oE '"fpc_[a-z_]*" *: *[0-9.]+' |
    tee -a "$OUT"
