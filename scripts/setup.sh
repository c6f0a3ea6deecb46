#!/bin/bash
# setup.sh -- installs what a fresh Debian 12 machine lacks and builds
# collsd in ./build.  Idempotent: packages already there are not touched,
# an existing build is reused.  Sourced by quickstart.sh and test.sh.
#
#   COLLS_BUILD_DIR   build directory (default: build)
#   COLLS_CONFIGURE   extra configure flags
set -euo pipefail

COLLS_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
COLLS_BUILD_DIR=${COLLS_BUILD_DIR:-$COLLS_TOP/build}

# Debian packages: build tools, the four libraries, protoc-c, libsystemd
# (sd_notify readiness), clang for the fuzz targets, clang-format for the
# style check, the tools the emulated-host tests use, and systemd for
# systemd-analyze (tests/integration/service.sh checks the unit), and
# pvm-examples (with pvm, pvm-dev): the example sources of PVM 3.4.6 that
# tests/integration/pvm-examples.sh builds unchanged against our pvm3.h;
# gnuplot-nox for `collsctl tune --plot` (tests/integration/tune-show.sh
# draws a plot and checks the PNG); time (GNU time) for
# tests/integration/poll.sh, which counts a process's sleeps with it;
# strace for tests/netns/forward.sh, which checks the order of a daemon's
# system calls in a loop turn.
COLLS_PACKAGES="autoconf automake libtool pkg-config make gcc \
libevent-dev libuv1-dev libprotobuf-c-dev protobuf-c-compiler check libsodium-dev \
libsystemd-dev systemd \
clang libclang-rt-14-dev clang-format iproute2 nftables procps util-linux \
pvm pvm-dev pvm-examples gnuplot-nox time strace"

# The big-endian host of the test suite (scripts/cross-s390x.sh, run once
# by test.sh): the s390x cross compiler, its C library and qemu-user.  Kept
# apart from COLLS_PACKAGES: cross-s390x.sh installs them itself, and a
# machine that cannot get them skips that part instead of failing setup.
COLLS_S390X_PACKAGES="gcc-s390x-linux-gnu libc6-dev-s390x-cross \
qemu-user-static"

colls_install_packages() {
    local missing=() p
    for p in $COLLS_PACKAGES; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
            grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "setup: installing ${missing[*]}"
    local sudo=
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
        --no-install-recommends "${missing[@]}" >/dev/null
}

# colls_build DIR [configure flags...]
colls_build() {
    local dir=$1
    shift
    if [ ! -x "$COLLS_TOP/configure" ] ||
        [ "$COLLS_TOP/configure.ac" -nt "$COLLS_TOP/configure" ]; then
        (cd "$COLLS_TOP" && autoreconf -fi >/dev/null 2>&1) ||
            { echo "setup: autoreconf failed"; return 1; }
    fi
    mkdir -p "$dir"
    local want="$*"
    if [ ! -f "$dir/Makefile" ] || [ "$(cat "$dir/.colls-flags" 2>/dev/null)" != "$want" ]; then
        (cd "$dir" && "$COLLS_TOP/configure" -q "$@") || return 1
        echo "$want" >"$dir/.colls-flags"
    fi
    make -C "$dir" -s -j"$(nproc)" all || return 1
    # Build the test programs too, without running anything yet.
    make -C "$dir" -s -j"$(nproc)" check TESTS= >"$dir/build-tests.log" 2>&1 ||
        { cat "$dir/build-tests.log"; return 1; }
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    colls_install_packages
    colls_build "$COLLS_BUILD_DIR" ${COLLS_CONFIGURE:-}
    echo "setup: built in $COLLS_BUILD_DIR"
fi
