#!/bin/sh
# Replays every committed corpus through its fuzz target (make check).
set -eu
: "${top_srcdir:=.}" "${top_builddir:=.}"
for dir in "$top_srcdir"/tests/fuzz/corpus/*/; do
    t=$(basename "$dir")
    set -- "$dir"*
    [ -e "$1" ] || continue
    "$top_builddir/tests/fuzz/replay" "$t" "$@"
done
