#!/bin/bash
# quickstart.sh -- sets up a fresh Debian 12 machine (packages, build) and
# runs the main job: a local virtual machine of three collsd daemons on
# this host (different UDP ports, one socket each), the ring example
# attached to all three, collsctl showing the machine, then everything it
# started is stopped.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
colls_install_packages
colls_build "$COLLS_BUILD_DIR" ${COLLS_CONFIGURE:-}

B=$COLLS_BUILD_DIR
run=$(mktemp -d /tmp/collsd-quickstart.XXXXXX)
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$run"
}
trap cleanup EXIT INT TERM

# Three daemons on loopback: a shared hostfile, one socket each.
base=$((20000 + RANDOM % 20000))
for i in 1 2 3; do echo "127.0.0.1:$((base + i)) name=vhost$i"; done >"$run/hostfile"
for i in 1 2 3; do
    "$B/collsd" --foreground --listen "127.0.0.1:$((base + i))" \
        --hostfile "$run/hostfile" --socket "$run/d$i/collsd.sock" \
        --log-file "$run/d$i.log" &
    pids+=($!)
done
for i in 1 2 3; do
    for _ in $(seq 100); do [ -S "$run/d$i/collsd.sock" ] && break; sleep 0.1; done
done
ctl() { "$B/collsctl" --socket "$run/d1/collsd.sock" "$@"; }
for _ in $(seq 100); do
    [ "$(ctl hosts 2>/dev/null | grep -c ' up ')" -ge 3 ] && break
    sleep 0.1
done

echo "== collsctl hosts"
ctl hosts
echo "== ring: a token with a checksum around 6 tasks on 3 daemons"
"$B/examples/ring" -n 6 -l 100 \
    --socket "$run/d1/collsd.sock,$run/d2/collsd.sock,$run/d3/collsd.sock"
echo "== collsctl ping 2"
ctl ping 2 -c 5
echo "== collsctl stats"
ctl stats
echo "== collsctl halt"
ctl halt
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
pids=()
echo "quickstart: done"
