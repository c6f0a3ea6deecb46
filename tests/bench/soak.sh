#!/bin/bash
# soak.sh -- the reliable transport under a hostile, lossy network, for a
# long run: SOAK_COUNT (10^6) checked messages from a task on host 1 to a
# task on host 2, with SOAK_LOSS % (20) of the datagrams arriving at
# either host dropped, while host 3 (no key) keeps forging datagrams from
# host 1's address to host 2: DATA, HALT_ALL, DELETE_HOST, HOST_DOWN,
# sequence sprays and fragments ahead of the live stream, with and
# without made-up trailers, and random bytes.  The daemons share a
# cluster key.  Reported: messages received, lost, duplicated, reordered
# and corrupt (p2p-check --mode soak-recv checks the sequence number,
# length and bytes of every message), the forged datagrams sent and
# refused (host 2's auth_failures), both daemons' RSS every second, its
# peak against the bound of docs/protocol.md ("Memory bounds") for the
# limits the daemons run with, and the time taken.
#
#   SOAK_COUNT=N   messages (default 1000000)
#   SOAK_LOSS=P    percent of datagrams dropped at each host (default 20)
#
# Exits 0 only when nothing was lost, duplicated, reordered or corrupt,
# every daemon stayed up and the RSS stayed within the bound.  Needs root
# (exit 77 otherwise).  Not part of make check (it runs for minutes).
. "${top_srcdir:-.}/tests/netns/lib.sh"

B=${top_builddir:-.}
B=$(cd "$B" && pwd -P)
P2P=$B/tests/integration/p2p-check
G=$B/tests/integration/garbage
SOCK=/tmp/collsd/collsd.sock
N=${SOAK_COUNT:-1000000}
LOSS=${SOAK_LOSS:-20}
# The limits (docs/protocol.md): Q, W, L, F (largest message + envelope).
QMAX=$((1 << 20))
CREDIT=$((256 << 10))
QLIMIT=$((1 << 20))
MAXMSG=$((64 << 10))
F=$((MAXMSG + 1024))
DOPTS="--heartbeat 200 --dead-after 5000 --task-queue-max $QMAX \
--task-credit $CREDIT --task-queue-limit $QLIMIT --max-message $MAXMSG"

mh_init "$B" "$SOCK" 3 collsd collsctl tests/integration/p2p-check \
    tests/integration/garbage
head -2 "$NS_RUN/hostfile" >"$NS_RUN/hostfile.2"
mv "$NS_RUN/hostfile.2" "$NS_RUN/hostfile"
for i in 1 2; do
    # shellcheck disable=SC2086
    mh_daemon "$i" $DOPTS
    eval "DPID_$i=$NS_LASTPID"
done
for i in 1 2; do
    mh_wait_up "$i" 2 || fail "host $i does not see 2 hosts up"
done
[ "$FAILED" = 0 ] || exit 1

rss()
{
    awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}

# The bound for T tasks on a daemon of H hosts, KiB above M0 (as
# tests/integration/limits.sh), with N = 1024 datagrams of U = 1472 B and
# 8 MiB of slack for the allocator and libevent.
bound_kib()
{
    local t=$1 h=$2
    echo $(((t * (QMAX + 4 * F + (128 << 10) + (h - 1) * (CREDIT + F)) +
        (h - 1) * (QLIMIT + t * F + 2 * 1024 * 1472 + F)) / 1024 + 8192))
}

m0_1=$(rss "$DPID_1")
m0_2=$(rss "$DPID_2")
ns_loss 1 "$LOSS" || fail "cannot set loss on host 1"
ns_loss 2 "$LOSS" || fail "cannot set loss on host 2"

host_bg 2 recv.log "$P2P" --socket "$SOCK" --mode soak-recv \
    --tidfile "$NS_RUN/recv.tid" --count "$N" --timeout-ms 600000
rpid=$NS_LASTPID
for _ in $(seq 1 100); do
    [ -s "$NS_RUN/recv.tid" ] && break
    sleep 0.1
done
t0=$(date +%s.%N)
host_bg 1 send.log "$P2P" --socket "$SOCK" --mode soak-send \
    --peer "$NS_RUN/recv.tid" --count "$N" --timeout-ms 600000
spid=$NS_LASTPID

# The forger: until the receiver is done, rounds of every attack.
SRC_INC=$(mh_inc_of 1)
DST_INC=$(mh_inc_of 2)
forger()
{
    local k=0 seq what out n sent=0
    while kill -0 "$rpid" 2>/dev/null; do
        k=$((k + 1))
        for what in data halt delete hostdown "spray --count 500" \
            "frags --count 100"; do
            seq=$(mh_dgrams_sent 1 2 2>/dev/null)
            # shellcheck disable=SC2086
            out=$(host_run 3 "$G" attack "$(ns_addr 2):7490" \
                --src "$(ns_addr 1):7490" --src-hid 1 --dst-hid 2 \
                --src-inc "$SRC_INC" --dst-inc "$DST_INC" \
                --seq $((${seq:-1} + 20)) --what $what 2>&1)
            n=$(echo "$out" | sed -n 's/^sent \([0-9]*\)$/\1/p')
            sent=$((sent + ${n:-0}))
        done
        host_run 3 "$G" udp "$(ns_addr 2):7490" --from "$(ns_addr 3)" \
            --count 200 --seed "$k" >/dev/null 2>&1 && sent=$((sent + 200))
        echo "$sent" >"$NS_RUN/forged"
        sleep 0.5
    done
}
forger &
fpid=$!

# RSS of both daemons every second, and the peaks.
peak1=0 peak2=0 last=0
while kill -0 "$rpid" 2>/dev/null; do
    r1=$(rss "$DPID_1") r2=$(rss "$DPID_2")
    [ -n "$r1" ] && [ "$r1" -gt "$peak1" ] && peak1=$r1
    [ -n "$r2" ] && [ "$r2" -gt "$peak2" ] && peak2=$r2
    now=$(date +%s)
    if [ $((now - last)) -ge 10 ]; then
        ns_log "RSS host 1 ${r1:-?} KiB, host 2 ${r2:-?} KiB;" \
            "$(tail -n 1 "$NS_RUN/recv.log" 2>/dev/null)"
        last=$now
    fi
    sleep 1
done
wait "$rpid"
rrc=$?
wait "$spid" || fail "the sender: $(cat "$NS_RUN/send.log")"
t1=$(date +%s.%N)
wait "$fpid"
ns_loss 1 0
ns_loss 2 0

result=$(grep '^soak recv' "$NS_RUN/recv.log")
ns_log "$result"
[ "$rrc" = 0 ] || fail "the receiver: $(tail -n 3 "$NS_RUN/recv.log")"
for i in 1 2; do
    eval "p=\$DPID_$i"
    kill -0 "$p" 2>/dev/null || fail "daemon $i died"
done
forged=$(cat "$NS_RUN/forged" 2>/dev/null || echo 0)
af=$(mh_error_count 2 auth_failures)
# 2 tasks on daemon 1 or 2 at most (the soak task, a collsctl): T = 2.
b=$(bound_kib 2 2)
secs=$(echo "$t1 - $t0" | bc -l 2>/dev/null ||
    python3 -c "print($t1 - $t0)")
printf '\n== soak: %s messages at %s %% loss, forged datagrams mixed in\n' \
    "$N" "$LOSS"
printf '%-36s %s\n' "result" "$result" \
    "time (s)" "$(printf '%.1f' "$secs")" \
    "forged datagrams sent (host 3)" "$forged" \
    "auth failures counted (host 2)" "$af" \
    "RSS host 1: before, peak (KiB)" "$m0_1, $peak1" \
    "RSS host 2: before, peak (KiB)" "$m0_2, $peak2" \
    "bound above before (KiB)" "$b"
for i in 1 2; do
    eval "m0=\$m0_$i; pk=\$peak$i"
    [ "$pk" -le $((m0 + b)) ] ||
        fail "daemon $i: RSS peak $pk KiB over $m0 + $b KiB"
done
[ "$af" -gt 0 ] || fail "no forged datagram was refused"
[ "$FAILED" = 0 ] && ns_log "passed"
exit $((FAILED > 0))
