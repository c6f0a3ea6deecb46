#!/bin/sh
# Runs each libFuzzer target (built by make fuzz) for SECONDS (default 60),
# starting from the committed corpus; new inputs go to a scratch directory.
# Run it from the build directory.  Prints the final coverage line and
# statistics of each target; a crash leaves its input in
# tests/fuzz/crashes/TARGET/ and makes the script exit 1 after the others.
# usage: tests/fuzz/run.sh [SECONDS] [TARGET...]
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=.}"
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-"frame dgram envelope xdr fpc rel auth join plogp libmsg"}
status=0
for t in $targets; do
    bin=$top_builddir/tests/fuzz/bin/fuzz-$t
    if [ ! -x "$bin" ]; then
        echo "== fuzz-$t: $bin missing (make fuzz)"
        status=1
        continue
    fi
    work=$(mktemp -d)
    crashes=$top_builddir/tests/fuzz/crashes/$t
    mkdir -p "$crashes"
    echo "== fuzz-$t for ${secs}s"
    if "$bin" -max_total_time="$secs" -print_final_stats=1 \
        -artifact_prefix="$crashes/" "$work" \
        "$top_srcdir/tests/fuzz/corpus/$t" >"$work.log" 2>&1; then
        grep -E '^#[0-9]+[[:space:]]+DONE|^stat::' "$work.log"
    else
        status=1
        grep -E 'ERROR|SUMMARY|^#[0-9]+[[:space:]]+(pulse|NEW)' "$work.log" |
            tail -n 6
        grep -E '^ +#[0-9]+ ' "$work.log" | head -n 12
        grep -E 'Test unit written' "$work.log"
    fi
    rm -rf "$work" "$work.log"
    rmdir "$crashes" "$top_builddir/tests/fuzz/crashes" 2>/dev/null
done
exit $status
