#!/bin/sh
# Runs each libFuzzer target (built by make fuzz) for SECONDS (default 60),
# starting from the committed corpus; new inputs go to a scratch directory.
# usage: tests/fuzz/run.sh [SECONDS] [TARGET...]
set -eu
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-"frame dgram envelope xdr fpc rel"}
for t in $targets; do
    work=$(mktemp -d)
    echo "== fuzz-$t for ${secs}s"
    tests/fuzz/bin/fuzz-$t -max_total_time="$secs" -print_final_stats=1 \
        "$work" "$top_srcdir/tests/fuzz/corpus/$t" 2>&1 | tail -n 12
    rm -rf "$work"
done
