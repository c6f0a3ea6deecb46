#!/bin/bash
# quickstart.sh -- sets up a fresh Debian 12 machine (packages, build) and
# runs the main job: a local virtual machine of three collsd daemons on
# this host (different UDP ports, one socket each), the ring example
# attached to all three, the allreduce example (a group of six tasks over
# the three daemons running real collectives) and a short collsctl bench,
# collsctl showing the machine, then everything it started is stopped.
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
socks="$run/d1/collsd.sock,$run/d2/collsd.sock,$run/d3/collsd.sock"
echo "== allreduce: 6 tasks on 3 daemons form a group; allreduce, bcast and"
echo "   allgather checked against a serial reference (hierarchical, then flat)"
"$B/examples/allreduce" -n 6 --socket "$socks"
"$B/examples/allreduce" -n 6 --flat --socket "$socks"
echo "== collsctl bench allreduce: us per operation, 4 B .. 64 KiB"
ctl bench allreduce -n 6 --sockets "$socks" --sizes 4:64K --runs 3 --iters 20
echo "== collsctl ping 2"
ctl ping 2 -c 5
echo "== collsctl stats"
ctl stats
echo "== collsctl halt"
ctl halt
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
pids=()
echo "quickstart: done"
