#!/bin/bash
# test.sh -- sets up a fresh Debian 12 machine (packages, build) and runs
# the whole test suite: unit tests, fuzz corpus replay, loopback integration
# and emulated-host (network namespace) tests, first in a build with
# warnings as errors, then (once) the unit suite and the byte-order test
# on a big-endian s390x build under qemu-user, then again under
# AddressSanitizer + UBSan, then `make distcheck`.  Ends with one line
# "N passed, N failed, N skipped" and exits non-zero on any failure.
#
#   COLLS_SKIP_SANITIZERS=1   skip the sanitizer pass
#   COLLS_SKIP_S390X=1        skip the big-endian part (cross-s390x.sh)
#   COLLS_SKIP_DISTCHECK=1    skip make distcheck
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
set +e

colls_install_packages || exit 1

passed=0 failed=0 skipped=0 status=0

# tally BUILD_DIR: adds that build's results to the totals.  Check suites
# count each test case; every other test script counts once.
tally() {
    local dir=$1 f res n
    for f in $(find "$dir/tests" -name '*.trs' 2>/dev/null); do
        res=$(sed -n 's/^:test-result: //p' "$f" | head -n 1)
        if [ "${f##*/}" = runner.trs ] && [ -f "${f%.trs}.log" ]; then
            n=$(sed -n 's/.*Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p' "${f%.trs}.log" | tail -n 1)
            if [ -n "$n" ]; then
                set -- $n
                passed=$((passed + $1 - $2 - $3))
                failed=$((failed + $2 + $3))
                continue
            fi
        fi
        case $res in
        PASS | XFAIL) passed=$((passed + 1)) ;;
        SKIP) skipped=$((skipped + 1)) ;;
        *) failed=$((failed + 1)) ;;
        esac
    done
}

# run_pass NAME DIR FLAGS...: build and make check in DIR.
run_pass() {
    local name=$1 dir=$2
    shift 2
    echo "=== $name: build ($*)"
    if ! colls_build "$dir" "$@"; then
        echo "=== $name: BUILD FAILED"
        failed=$((failed + 1)) status=1
        return
    fi
    echo "=== $name: make check"
    find "$dir/tests" -name '*.trs' -delete 2>/dev/null
    if ! make -C "$dir" -s -j"$(nproc)" check; then
        status=1
        cat "$dir/test-suite.log" 2>/dev/null | tail -n 80
    fi
    tally "$dir"
}

run_pass "werror" "$COLLS_TOP/build" --enable-werror
echo "=== make format-check"
if make -C "$COLLS_TOP/build" -s format-check; then
    echo "format-check: ok"
    passed=$((passed + 1))
else
    echo "format-check: FAILED (make format fixes it)"
    failed=$((failed + 1)) status=1
fi
# The big-endian host (docs/protocol.md, "Byte order"): the unit suite
# and tests/integration/byteorder.sh under qemu-user, once (not in every
# pass); counts as one test, skipped where the cross tools cannot be had.
if [ "${COLLS_SKIP_S390X:-0}" != 1 ]; then
    echo "=== s390x (big-endian, qemu-user)"
    top_builddir=$COLLS_TOP/build top_srcdir=$COLLS_TOP \
        bash "$COLLS_TOP/scripts/cross-s390x.sh" test
    case $? in
    0) passed=$((passed + 1)) ;;
    77) skipped=$((skipped + 1)) ;;
    *) failed=$((failed + 1)) status=1 ;;
    esac
fi
if [ "${COLLS_SKIP_SANITIZERS:-0}" != 1 ]; then
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        run_pass "sanitizers" "$COLLS_TOP/build-asan" --enable-werror --enable-sanitizers
fi
if [ "${COLLS_SKIP_DISTCHECK:-0}" != 1 ]; then
    echo "=== make distcheck"
    # The distcheck copy skips the slow emulated-host tests (COLLS_QUICK):
    # they already ran twice above.
    if COLLS_QUICK=1 make -C "$COLLS_TOP/build" -s distcheck \
        DISTCHECK_CONFIGURE_FLAGS=--enable-werror \
        >"$COLLS_TOP/build/distcheck.log" 2>&1; then
        echo "distcheck: ok"
        passed=$((passed + 1))
    else
        tail -n 40 "$COLLS_TOP/build/distcheck.log"
        echo "distcheck: FAILED"
        failed=$((failed + 1)) status=1
    fi
fi

[ $failed -gt 0 ] && status=1
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
