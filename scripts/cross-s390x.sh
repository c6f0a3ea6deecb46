#!/bin/bash
# cross-s390x.sh -- a big-endian host for the test suite: cross-builds
# collsd, libcolls, the unit runner and the integration test programs for
# s390x and runs them under qemu-user (docs/protocol.md "Byte order").
#
#   scripts/cross-s390x.sh build   the tools, the sysroot and build-s390x
#   scripts/cross-s390x.sh test    build, then the unit suite under qemu and
#                                  tests/integration/byteorder.sh (x86-64
#                                  and s390x daemons and tasks mixed)
#
# Debian 12 has no multiarch install of these libraries that apt can
# resolve (version skew), so the s390x builds of each library and its -dev
# package are fetched with `apt-get download PKG:s390x` (after `dpkg
# --add-architecture s390x`) and unpacked with dpkg-deb -x into a sysroot,
# cached in COLLS_S390X_CACHE (default /var/cache/collsd-s390x) so a second
# run downloads nothing.  The cross compiler (gcc-s390x-linux-gnu) links
# against it; qemu-s390x-static runs the programs with QEMU_LD_PREFIX set
# to it (the sysroot holds libc too).
#
# qemu-user 7.2 does not translate the UDP_SEGMENT control message, so
# every s390x daemon here runs with --gso off, and the unit suite with
# COLLS_GSO=off (with the offloads on, an s390x daemon's batched sends
# arrive broken and the collectives stall).  The tools are
# COLLS_S390X_PACKAGES of scripts/setup.sh; when they cannot be installed
# (no apt, no network, not root) the script prints one line "SKIP: ..."
# and exits 77.
#
#   COLLS_S390X_DIR     the cross build tree (default: build-s390x)
#   COLLS_S390X_CACHE   where the sysroot is kept
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/setup.sh" # COLLS_TOP, the package lists
set +e
S390X_DIR=${COLLS_S390X_DIR:-$COLLS_TOP/build-s390x}
S390X_CACHE=${COLLS_S390X_CACHE:-/var/cache/collsd-s390x}
S390X_SYSROOT=$S390X_CACHE/sysroot
S390X_TRIPLET=s390x-linux-gnu
# The libraries configure needs (libsystemd is optional and left out),
# each with its -dev package, and what they link against at run time.
S390X_DEBS="libc6 libgcc-s1 libevent-2.1-7 libevent-core-2.1-7 \
libevent-extra-2.1-7 libevent-pthreads-2.1-7 libevent-openssl-2.1-7 \
libevent-dev libuv1 libuv1-dev libprotobuf-c1 libprotobuf-c-dev check \
libsubunit0 libsubunit-dev libsodium23 libsodium-dev libssl3"

s390x_skip() {
    echo "SKIP: s390x cross tests: $*"
    exit 77
}

# 0 if the cross compiler, its C library and qemu-user are there.
s390x_have_tools() {
    command -v "$S390X_TRIPLET-gcc" >/dev/null &&
        command -v qemu-s390x-static >/dev/null &&
        [ -f "/usr/$S390X_TRIPLET/lib/crt1.o" ]
}

# The cross compiler, its C library and qemu-user, installed when missing.
s390x_tools() {
    local sudo=
    s390x_have_tools && return 0
    command -v apt-get >/dev/null || return 1
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    echo "cross-s390x: installing $COLLS_S390X_PACKAGES"
    $sudo apt-get update -qq >/dev/null 2>&1
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
        --no-install-recommends $COLLS_S390X_PACKAGES >/dev/null 2>&1 ||
        return 1
    s390x_have_tools
}

# The sysroot: every package of S390X_DEBS unpacked, once.
s390x_sysroot() {
    local debs="$S390X_CACHE/debs" p sudo=
    [ -f "$S390X_SYSROOT/.complete" ] && return 0
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    mkdir -p "$debs" || return 1
    if ! dpkg --print-foreign-architectures | grep -qx s390x; then
        $sudo dpkg --add-architecture s390x || return 1
        $sudo apt-get update -qq >/dev/null 2>&1 || return 1
    fi
    echo "cross-s390x: downloading the s390x libraries into $debs"
    # shellcheck disable=SC2086
    if ! (cd "$debs" && apt-get download -qq $(for p in $S390X_DEBS; do
        echo "$p:s390x"; done) >/dev/null 2>&1); then
        $sudo apt-get update -qq >/dev/null 2>&1
        # shellcheck disable=SC2086
        (cd "$debs" && apt-get download -qq $(for p in $S390X_DEBS; do
            echo "$p:s390x"; done) >/dev/null 2>&1) || return 1
    fi
    rm -rf "$S390X_SYSROOT"
    mkdir -p "$S390X_SYSROOT"
    for p in "$debs"/*.deb; do
        dpkg-deb -x "$p" "$S390X_SYSROOT" || return 1
    done
    touch "$S390X_SYSROOT/.complete"
}

# Configures and builds build-s390x (reused when configured already).
s390x_build() {
    local lib="$S390X_SYSROOT/usr/lib/$S390X_TRIPLET"
    if [ ! -x "$COLLS_TOP/configure" ] ||
        [ "$COLLS_TOP/configure.ac" -nt "$COLLS_TOP/configure" ]; then
        (cd "$COLLS_TOP" && autoreconf -fi >/dev/null 2>&1) || return 1
    fi
    mkdir -p "$S390X_DIR"
    if [ ! -f "$S390X_DIR/Makefile" ]; then
        echo "cross-s390x: configuring $S390X_DIR"
        (cd "$S390X_DIR" && "$COLLS_TOP/configure" -q \
            --host="$S390X_TRIPLET" --without-libsystemd --enable-werror \
            CPPFLAGS="-I$S390X_SYSROOT/usr/include" \
            LDFLAGS="-L$lib -Wl,-rpath-link,$lib" \
            PKG_CONFIG_LIBDIR="$lib/pkgconfig:$S390X_SYSROOT/usr/share/pkgconfig" \
            PKG_CONFIG_SYSROOT_DIR="$S390X_SYSROOT" \
            FUZZ_CC=no) >"$S390X_DIR/configure.log" 2>&1 ||
            { tail -n 20 "$S390X_DIR/configure.log"; return 1; }
    fi
    echo "cross-s390x: building in $S390X_DIR"
    # the generated protobuf sources first (BUILT_SOURCES are made only
    # for all and check, not for the targets named here)
    make -C "$S390X_DIR" -s -j1 proto/colls.pb-c.h proto/colls.pb-c.c \
        >"$S390X_DIR/build.log" 2>&1 &&
        make -C "$S390X_DIR" -s -j1 collsd collsctl libclient/libcolls.la \
            >>"$S390X_DIR/build.log" 2>&1 &&
        make -C "$S390X_DIR" -s -j1 tests/unit/runner \
            tests/integration/bo-check >>"$S390X_DIR/build.log" 2>&1 ||
        { tail -n 30 "$S390X_DIR/build.log"; return 1; }
}

# Runs the unit suite under qemu; 0 if every check passed.
s390x_units() {
    local log="$S390X_DIR/runner-s390x.log"
    echo "cross-s390x: unit suite under qemu-s390x (offloads off: COLLS_GSO=off)"
    (cd "$S390X_DIR" && COLLS_GSO=off QEMU_LD_PREFIX="$S390X_SYSROOT" \
        timeout 1200 qemu-s390x-static tests/unit/runner) >"$log" 2>&1
    grep -E '^[0-9]+%: Checks' "$log"
    grep -qE '^100%: Checks' "$log"
}

s390x_prepare() {
    s390x_tools || s390x_skip "cannot install gcc-$S390X_TRIPLET and qemu-user-static"
    s390x_sysroot || s390x_skip "cannot fetch the s390x libraries (apt-get download)"
    s390x_build || { echo "cross-s390x: BUILD FAILED"; exit 1; }
}

case ${1:-test} in
build)
    s390x_prepare
    ;;
test)
    t0=$(date +%s)
    s390x_prepare
    rc=0
    s390x_units || { echo "cross-s390x: unit suite FAILED (log: $S390X_DIR/runner-s390x.log)"; rc=1; }
    echo "cross-s390x: tests/integration/byteorder.sh (s390x daemons with --gso off)"
    COLLS_S390X_DIR=$S390X_DIR COLLS_S390X_SYSROOT=$S390X_SYSROOT \
        top_builddir=${top_builddir:-$COLLS_TOP/build} \
        bash "$COLLS_TOP/tests/integration/byteorder.sh"
    b=$?
    [ $b -eq 0 ] || { echo "cross-s390x: byteorder.sh FAILED ($b)"; rc=1; }
    echo "cross-s390x: the s390x part took $(($(date +%s) - t0)) s"
    exit $rc
    ;;
*)
    echo "usage: $0 build|test" >&2
    exit 2
    ;;
esac
