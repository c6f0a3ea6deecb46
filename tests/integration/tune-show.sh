#!/bin/bash
# tune-show.sh -- collsctl tune on three daemons on 127.0.0.1
# (docs/collectives.md "Measuring the network"):
# 1. before any measurement (--measure=no), --params says the rules
#    table decides and --show fails with "no parameters measured yet";
# 2. `collsctl tune --max 64K` measures the two peers (7 sizes, 1 B ..
#    64 KiB) and every daemon at once, and commits epoch 1; the two other
#    daemons take the same epoch (PARAMS_SHARE);
# 3. `tune --show bcast --measure --sockets A,B,C --plot F` prints, per
#    size, a prediction and a measured time for every algorithm (the
#    segmented ones run at their predicted segment), one pick (*), the
#    unforced run, the summary line, and writes a PNG (when
#    gnuplot is installed; else it must say so and fail);
# 4. wrong uses: --measure without --show, --max with --params, a size
#    range upside down: usage errors (exit 2).
. "${top_srcdir:-.}/tests/integration/lib.sh"

it_setup
it_start 3 --measure=no || exit 1
it_wait_hosts 3 || exit 1

# 1. nothing measured
it_ctl 1 tune --params >"$IT_DIR/p0" || it_fail "tune --params failed"
grep -q "no parameters measured yet" "$IT_DIR/p0" ||
    it_fail "tune --params before any measurement: $(cat "$IT_DIR/p0")"
if it_ctl 1 tune --show bcast >/dev/null 2>"$IT_DIR/e0"; then
    it_fail "tune --show without parameters succeeded"
fi
grep -q "no parameters measured yet" "$IT_DIR/e0" ||
    it_fail "tune --show without parameters: $(cat "$IT_DIR/e0")"

# 2. measure
it_ctl 1 tune --max 64K >"$IT_DIR/t1" 2>"$IT_DIR/t1.err" || {
    cat "$IT_DIR/t1.err" >&2
    it_fail "collsctl tune --max 64K failed"
}
cat "$IT_DIR/t1"
grep -q "^machine, epoch 1:" "$IT_DIR/t1" || it_fail "tune did not commit epoch 1"
n=$(awk '$1 ~ /^[0-9]+$/ && NF == 7' "$IT_DIR/t1" | wc -l)
[ "$n" -eq 6 ] || it_fail "tune --max 64K printed $n sizes, want 6"
grep -q "2/2 hosts" "$IT_DIR/t1.err" || it_fail "no progress to 2/2 hosts"
for i in 2 3; do
    ok=0
    for _ in $(seq 1 50); do
        it_ctl "$i" tune --params | grep -q "^machine, epoch 1:" && ok=1 &&
            break
        sleep 0.1
    done
    [ $ok = 1 ] || it_fail "daemon $i did not take epoch 1"
done

# 3. predictions against measurements, and the plot
S="$(it_sock 1),$(it_sock 2),$(it_sock 3)"
PNG=$IT_DIR/bcast.png
timeout 300 "$IT_B/collsctl" --socket "$(it_sock 1)" tune --show bcast \
    --measure --sockets "$S" --sizes 1K:4K --plot "$PNG" >"$IT_DIR/show" \
    2>"$IT_DIR/show.err"
rc=$?
cat "$IT_DIR/show"
if command -v gnuplot >/dev/null; then
    [ $rc = 0 ] || it_fail "tune --show --measure --plot: exit $rc: $(tail -3 "$IT_DIR/show.err")"
    [ "$(head -c 4 "$PNG" | od -An -c | tr -d ' ')" = "211PNG" ] ||
        it_fail "the plot is not a PNG"
else
    [ $rc = 1 ] && grep -q "gnuplot" "$IT_DIR/show.err" ||
        it_fail "--plot without gnuplot: exit $rc, $(cat "$IT_DIR/show.err")"
fi
for size in 1024 4096; do
    rows=$(awk -v s="$size" '/^[0-9]+ bytes:/ { cur = $1 }
        cur == s && /predicted/ && /measured/ && /error/' "$IT_DIR/show" |
        wc -l)
    [ "$rows" = 7 ] ||
        it_fail "bcast $size: $rows of 7 algorithms with prediction, measurement and error"
    # the segmented rows, measured one size at a time at their segment
    segd=$(awk -v s="$size" '/^[0-9]+ bytes:/ { cur = $1 }
        cur == s && /_seg +seg [0-9]+ +predicted .* measured/' \
        "$IT_DIR/show" | wc -l)
    [ "$segd" = 2 ] ||
        it_fail "bcast $size: $segd of 2 segmented rows measured at a segment"
    for alg in chain_seg binomial_seg; do
        seg=$(awk -v s="$size" -v a="$alg" '/^[0-9]+ bytes:/ { cur = $1 }
            cur == s && $1 == a && $2 == "seg" { print $3 }
            cur == s && $1 == "*" && $2 == a && $3 == "seg" { print $4 }' \
            "$IT_DIR/show")
        grep -q "^  $size B: --algo $alg:$seg\$" "$IT_DIR/show.err" ||
            it_fail "bcast $size: $alg not run at its predicted segment ${seg:-?}: $(grep -- --algo "$IT_DIR/show.err")"
    done
    picks=$(awk -v s="$size" '/^[0-9]+ bytes:/ { cur = $1 }
        cur == s && $1 == "*"' "$IT_DIR/show" | wc -l)
    [ "$picks" = 1 ] || it_fail "bcast $size: $picks picks"
done
[ "$(grep -c "the daemons' pick, run unforced" "$IT_DIR/show")" = 2 ] ||
    it_fail "no unforced run per size"
grep -q "^# the pick within 1.1x of the fastest at [0-9]* of 2 sizes" \
    "$IT_DIR/show" || it_fail "no summary line"

# 4. usage errors
for args in "--measure" "--max 1M --params" "--show bcast --sizes 4K:1K"; do
    # shellcheck disable=SC2086
    it_ctl 1 tune $args >/dev/null 2>&1
    rc=$?
    [ $rc = 2 ] || it_fail "tune $args: exit $rc, want 2"
done
it_finish
