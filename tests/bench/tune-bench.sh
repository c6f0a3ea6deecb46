#!/bin/bash
# tune-bench.sh -- how good the daemons' own pick is (#13): on emulated
# hosts (network namespaces, one collsd each, one task per host; needs
# root), for every configuration of TUNE_CONFIGS:
#   1. `collsctl tune` on host 1 measures the pLogP parameters (thorough
#      ladder) and every daemon takes the summary (PARAMS_SHARE);
#   2. per operation and size, `collsctl tune --show` gives every
#      algorithm's prediction and the pick;
#   3. every algorithm is run forced (`collsctl bench OP --hier --algo
#      NAME[:SEG] --latency`, a segmented row at the segment of its
#      prediction: one operation's latency, which the formulas
#      predict; timed back to back, the classic method, consecutive
#      operations overlap), and once unforced (the
#      daemons' own pick, with its segment size);
# and prints per point the pick, its prediction and measured time, the
# fastest forced algorithm, pick / fastest, and the prediction's error
# |predicted - measured| / measured; then the share of points where the
# pick is within 1.1x of the fastest and the median error (the issue's
# targets: >= 90 % and <= 25 %; a point whose unforced run measured 0,
# below the noise of --latency, is listed and not counted, and a forced
# 0 is no figure), and tables like the paper's figures
# 1-4: binomial vs segmented chain bcast and flat vs binomial scatter,
# predicted and measured, per P and m.
# Not part of make check.
#
# Environment: TUNE_METHOD (latency, the default, or classic: bench
# without --latency, as before session 21), TUNE_CONFIGS (default "4:none 4:100mbit 8:10mbit",
# HOSTS:RATE[:BURST], RATE a tc rate or none, BURST tbf's bucket (default
# 128kb: bursts of that size pass at the veth's speed, which a static
# g(m) cannot describe; 4kb is closer to a real link of RATE); "none"
# prints the summary of the results already in TUNE_OUT), TUNE_SHAPE
# (link, the default: RATE each way of every host's link, as a switch
# port; egress: on the hosts' egress only, as before session 25, which
# lets P - 1 hosts send to one at P - 1 times RATE), TUNE_OPS
# (bcast scatter reduce allreduce allgather), TUNE_SIZES (4 1024 65536 1048576), TUNE_REPS
# (rounds: each figure is the least of this many, default 3), TUNE_OUT
# (results, default ./tune-bench-results.txt), TUNE_DAEMON_ARGS (more
# collsd options for every daemon, e.g. --poll-us=0), TUNE_PIN (hosts, the
# default: every process of emulated host I -- its daemon, its task, tune
# on host 1 -- runs on CPU (I - 1) mod nproc, as a real host's processes
# run on that host's CPUs; none: the scheduler places every process.
# Unpinned on 2 shared vCPUs the placement of 8 processes changed from
# one launch to the next, and with it an operation's time by up to 2x:
# the same algorithm forced and unforced differed by more than the
# algorithms did).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/netns/lib.sh"

B=${top_builddir:-.}
B=$(cd "$B" && pwd -P)
SELF=$(cd "$(dirname "$0")" && pwd -P)/$(basename "$0")
CONFIGS=${TUNE_CONFIGS:-4:none 4:100mbit 8:10mbit}
OPS=${TUNE_OPS:-bcast scatter reduce allreduce allgather}
SIZES=${TUNE_SIZES:-4 1024 65536 1048576}
REPS=${TUNE_REPS:-3}
PIN=${TUNE_PIN:-hosts}
METHOD=${TUNE_METHOD:-latency}
case "${TUNE_SHAPE:-link}" in
link) SHAPER=ns_link ;;
egress) SHAPER=ns_limit ;;
*)
    echo "TUNE_SHAPE=$TUNE_SHAPE: link or egress" >&2
    exit 2
    ;;
esac
case "$METHOD" in
latency) LATENCY=--latency ;;
classic) LATENCY= ;;
*)
    echo "TUNE_METHOD=$METHOD: latency or classic" >&2
    exit 2
    ;;
esac
[ "$PIN" = none ] && PIN=
OUT=${TUNE_OUT:-$PWD/tune-bench-results.txt}
SOCK=/tmp/collsd/collsd.sock

# ---- one configuration (run as a child: its own namespaces) -------------
if [ -n "${TUNE_ONE:-}" ]; then
    NH=${TUNE_ONE%%:*}
    RATE=${TUNE_ONE#*:}
    BURST=
    case "$RATE" in
    *:*)
        BURST=${RATE#*:}
        RATE=${RATE%%:*}
        ;;
    esac
    mh_init "$B" "$SOCK" "$NH" collsd collsctl
    # host_cpu I: the CPU of host I's processes with TUNE_PIN=hosts
    NCPU=$(nproc)
    host_cpu()
    {
        echo $((($1 - 1) % NCPU))
    }
    # pin_of I: the words that pin a command of host I (none unpinned)
    pin_of()
    {
        [ -z "$PIN" ] || echo "taskset -c $(host_cpu "$1")"
    }
    # the link is what it is from the start: shaped before the daemons
    # come up (shaped after, every daemon would see its peers' round trips
    # move, and check them, while tune measures)
    if [ "$RATE" != none ]; then
        for i in $(seq 1 "$NH"); do
            $SHAPER "$i" "$RATE" $BURST || fail "tc on host $i"
        done
    fi
    # --measure=no: the daemons measure nothing by themselves, so that
    # only collsctl tune's thorough measurement is in force and nothing
    # measures during the runs (on 8 hosts at 10 Mbit/s, tune's trains
    # made the round trips of other pairs rise, and their daemons checked
    # them with trains of their own while tune measured)
    for i in $(seq 1 "$NH"); do
        mh_daemon "$i" --log-level info --measure=no ${TUNE_DAEMON_ARGS:-}
        [ -z "$PIN" ] || taskset -apc "$(host_cpu "$i")" "$NS_LASTPID" \
            >/dev/null || fail "taskset host $i"
    done
    for i in $(seq 1 "$NH"); do
        mh_wait_up "$i" "$NH" || fail "host $i does not see $NH hosts up"
    done
    max=4M # the ladder: up to 1 MiB on links of 20 Mbit/s and less
    case "$RATE" in
    *mbit) [ "${RATE%mbit}" -le 20 ] && max=1M ;;
    esac
    host_run 1 $(pin_of 1) timeout 900 "$B/collsctl" --socket "$SOCK" tune --max "$max" \
        >"$NS_RUN/tune.txt" 2>/dev/null || fail "collsctl tune"
    cat "$NS_RUN/tune.txt" >&2
    epoch=$(sed -n 's/^machine, epoch \([0-9]*\):.*/\1/p' "$NS_RUN/tune.txt")
    for i in $(seq 1 "$NH"); do
        for _ in $(seq 1 50); do
            mh_ctl "$i" tune --params | grep -q "^machine, epoch $epoch:" &&
                break
            sleep 0.1
        done
    done
    # iterations and runs by size and rate: about the same time per
    # point, and many runs where an operation is short (its best run is
    # what counts, and on 2 shared CPUs one run in three of a 4-byte
    # allreduce took 3-8 times the others: with 3 runs, the pick and the
    # fastest row differed by noise more often than by algorithm)
    iters_for()
    {
        local s=$1
        case "$RATE" in
        none)
            if [ "$s" -ge 1048576 ]; then
                echo "10 3"
            elif [ "$s" -ge 65536 ]; then
                echo "30 5"
            else echo "30 12"; fi
            ;;
        *mbit)
            local r=${RATE%mbit}
            if [ $((s * 8 / r)) -ge 100000 ]; then
                echo "2 1"
            elif [ $((s * 8 / r)) -ge 10000 ]; then
                echo "5 2"
            elif [ $((s * 8 / r)) -ge 1000 ]; then
                echo "20 3"
            else echo "30 12"; fi
            ;;
        *) echo "10 2" ;;
        esac
    }
    # bench OP SIZE [ALG]: us/op over the NH hosts, or "-"
    bench()
    {
        local op=$1 s=$2 alg=${3:-} pids="" g k ir
        g=b$RANDOM$RANDOM
        read -r it rn <<<"$(iters_for "$s")"
        for k in $(seq 1 "$NH"); do
            host_bg "$k" "$g-$k.log" $(pin_of "$k") timeout 900 "$B/collsctl" --socket \
                "$SOCK" bench "$op" --hier --sizes "$s:$s" --iters "$it" \
                --runs "$rn" --group "$g" -n "$NH" ${alg:+--algo "$alg"} \
                $LATENCY
            pids="$pids $NS_LASTPID"
        done
        for k in $pids; do
            wait "$k"
        done
        ir=$(awk '$1 ~ /^[0-9]+$/ && NF >= 3 { print $2 " " $3; exit }' \
            "$NS_RUN/$g-1.log")
        echo "${ir:--}"
    }
    for op in $OPS; do
        mh_ctl 1 tune --show "$op" --sizes 4:4M >"$NS_RUN/show-$op.txt" ||
            fail "tune --show $op"
        for s in $SIZES; do
            # the predictions at s: "alg predicted" lines, * the pick, and
            # the segment the prediction is for (segmented rows; "-" else)
            awk -v s="$s" '/^[0-9]+ bytes:/ { cur = $1 }
                cur == s && /predicted/ {
                    star = ($1 == "*"); a = star ? $2 : $1; g = "-"
                    for (i = 1; i <= NF; i++) {
                        if ($i == "predicted") p = $(i + 1)
                        if ($i == "seg") g = $(i + 1)
                    }
                    print a, p, star, g }' "$NS_RUN/show-$op.txt" \
                >"$NS_RUN/pred-$op-$s.txt"
            # REPS rounds, each algorithm once per round (and the pick
            # unforced): the least of each, as the machine is noisy.  A
            # segmented row is forced at the segment of its prediction,
            # which the pick runs at too (at bench's default of 64 KiB a
            # forced chain_seg of 64 KiB over 8 hosts at 10 Mbit/s took
            # 395 ms, unforced 110 ms: the row was judged by a segment
            # the tuner would not choose)
            # Round r starts at entry r of the list (the rows, then the
            # pick unforced), so no entry always runs last.  In a 4:none
            # run with the pick always last, it took 1.12-1.29x the same
            # row forced at 6 of 20 points; rotated, 1.13-1.35x at 3 and
            # 0.85-0.87x at 2: the machine's noise, which the order no
            # longer biases
            : >"$NS_RUN/meas-$op-$s.txt"
            awk '{ print $1, $4 } END { print "auto -" }' \
                "$NS_RUN/pred-$op-$s.txt" >"$NS_RUN/runs-$op-$s.txt"
            nrun=$(wc -l <"$NS_RUN/runs-$op-$s.txt")
            for r in $(seq 0 $((REPS - 1))); do
                k=$((r % nrun))
                { tail -n +$((k + 1)) "$NS_RUN/runs-$op-$s.txt"
                  head -n "$k" "$NS_RUN/runs-$op-$s.txt"; } |
                    while read -r alg seg; do
                        [ "$seg" = - ] && seg=
                        if [ "$alg" = auto ]; then
                            echo "auto $(bench "$op" "$s")"
                        else
                            echo "$alg $(bench "$op" "$s" "$alg${seg:+:$seg}")"
                        fi
                    done >>"$NS_RUN/meas-$op-$s.txt"
            done
            while read -r alg pred star _; do
                m=$(awk -v a="$alg" '$1 == a && $2 != "-" &&
                    (m == "" || $2 + 0 < m) { m = $2 + 0 }
                    END { print m == "" ? "-" : m }' "$NS_RUN/meas-$op-$s.txt")
                echo "$TUNE_ONE $op $s $alg $pred $m $star"
            done <"$NS_RUN/pred-$op-$s.txt"
            awk -v c="$TUNE_ONE $op $s" '$1 == "auto" && $2 != "-" &&
                (m == "" || $2 + 0 < m) { m = $2 + 0; a = $3 }
                END { print c, "auto -", (m == "" ? "-" : m), (a == "" ? "-" : a) }' \
                "$NS_RUN/meas-$op-$s.txt"
        done
    done
    # a measurement that failed
    grep -h "failed" "$NS_RUN"/d*.log >&2
    ns_finish
    exit 0
fi

# ---- every configuration, then the summary ------------------------------
# TUNE_CONFIGS=none: only the summary of an earlier run's $TUNE_OUT
[ "$CONFIGS" = none ] && CONFIGS=
[ -z "$CONFIGS" ] || {
    ns_require
    : >"$OUT"
}
for cfg in $CONFIGS; do
    echo "== $cfg (TUNE_METHOD=$METHOD, TUNE_SHAPE=${TUNE_SHAPE:-link})" >&2
    TUNE_ONE=$cfg bash "$SELF" | tee -a "$OUT" || echo "configuration $cfg failed" >&2
done

echo
echo "# per point: config op bytes | the pick (run unforced) predicted" \
    "measured | fastest forced | pick/fastest (unforced, forced) | error of" \
    "the prediction"
awk '
$4 == "auto" { auto[$1 " " $2 " " $3] = $6; ran[$1 " " $2 " " $3] = $7; next }
{ k = $1 " " $2 " " $3; keys[k] = 1
  # 0: --latency found the operation below the noise of what it subtracts
  # (bench_latency_run clamps there): no figure
  if ($6 != "-" && $6 + 0 > 0 && (!(k in best) || $6 + 0 < best[k])) {
    best[k] = $6 + 0; fa[k] = $4 }
  if ($7 == 1) { pick[k] = $4; pred[k] = $5; pickf[k] = $6 } }
END {
  n = 0; near = 0; ne = 0
  for (k in keys) {
    if (k in auto && auto[k] != "-" && auto[k] + 0 <= 0) {
      printf "%-30s | not counted: the unforced run measured 0 (below the " \
        "noise of --latency)\n", k
      continue }
    if (!(k in auto) || auto[k] == "-" || !(k in best)) continue
    r = auto[k] / best[k]; e = (pred[k] - auto[k]) / auto[k]; if (e < 0) e = -e
    rf = pickf[k] != "-" && pickf[k] + 0 > 0 ? pickf[k] / best[k] : 99
    printf "%-30s | %-18s %10.1f %10.1f | %-18s %10.1f | %5.2f %5.2f | %4.0f %%\n",
        k, ran[k], pred[k], auto[k], fa[k], best[k], r, rf, 100 * e
    n++; if (r <= 1.1) near++; if (rf <= 1.1) nearf++; err[++ne] = e
  }
  for (i = 2; i <= ne; i++) { # insertion sort: mawk has no asort
    x = err[i]; for (j = i - 1; j >= 1 && err[j] > x; j--) err[j + 1] = err[j]
    err[j + 1] = x }
  med = ne ? (ne % 2 ? err[(ne + 1) / 2] : (err[ne / 2] + err[ne / 2 + 1]) / 2) : 0
  printf "# the pick within 1.1x of the fastest at %d of %d points (%.0f %%; " \
    "forced as the others: %d, %.0f %%); median error of its prediction " \
    "%.0f %%\n", near, n, n ? 100 * near / n : 0, nearf, n ? 100 * nearf / n : 0,
    100 * med
}' "$OUT" | sort

echo
echo "# like the paper's figures 1-4: predicted / measured us"
for pair in "bcast binomial chain_seg" "scatter flat binomial"; do
    set -- $pair
    echo "## $1: $2 vs $3"
    printf "%-12s %10s  %-24s %-24s\n" config bytes "$2 pred/meas" "$3 pred/meas"
    awk -v op="$1" -v a="$2" -v b="$3" '$2 == op && ($4 == a || $4 == b) {
        k = $1 " " $3; v[k " " $4] = sprintf("%.0f / %s", $5, $6); keys[k] = 1 }
        END { for (k in keys) { split(k, x, " ")
            printf "%-12s %10s  %-24s %-24s\n", x[1], x[2], v[k " " a], v[k " " b] } }' \
        "$OUT" | sort -k1,1 -k2n
done
