#!/bin/bash
# net-bench.sh -- collsd against the raw network, on two emulated hosts.
#
# Two network namespaces (tests/netns/lib.sh), one collsd on each; host 2
# runs the servers (raw UDP echo, raw TCP ping-pong, `collsctl echo`, a
# p2p-check sink), host 1 the clients.  In one run, unshaped and with a
# 100 Mbit tbf on both hosts' links:
#   * half round trip, 8 B .. 10 MB (UDP: up to 64 KB), with alpha/beta
#     least-squares fits t(n) = alpha + n/beta, for raw UDP echo, raw TCP
#     ping-pong, `collsctl ping` (daemon to daemon), `collsctl pingpong
#     --route default` (task -> daemon -> daemon -> daemon's echo) and
#     `--route direct` (task -> task over TCP), each with every process
#     pinned to CPU 0 and unpinned;
#   * the 8 B targets again in interleaved rounds (median and spread of
#     the per-round ratios), pinned and unpinned, unshaped;
#   * bulk throughput: one TCP stream vs a stream of 1 MiB colls messages
#     on the default route (and the direct route), vs line rate at
#     100 Mbit, and with 5 % datagram loss on both hosts;
#   * the transport alone between the hosts (tests/bench/bench-rel), when
#     built;
#   * the daemon's resident memory idle and with 100 attached tasks.
# It prints tables with ratios against the raw baselines and the targets.
# Needs root (exits 77 otherwise).  Not part of make check.
#
# --auth measures the cost of authentication instead: the default-route
# 8 B half round trip (median over rounds, every process pinned to CPU 0
# and unpinned) and bulk throughput (1 MiB messages, default route, median
# over rounds; unpinned, with one CPU per emulated host, and unpinned at
# 1 Gbit/s) with
# daemons without a key (--insecure), with the cluster key, and with
# --encrypt, in one run, with the differences and ratios against the
# keyless daemons (targets: +<= 1 us, bulk >=
# 0.85x).
#
#   top_builddir=BUILD tests/bench/net-bench.sh [--quick] [--auth]
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
B=$(cd "${top_builddir:-.}" && pwd -P)
QUICK=0
AUTH=0
for a in "$@"; do
    case "$a" in
    --quick) QUICK=1 ;;
    --auth) AUTH=1 ;;
    esac
done
. "$top_srcdir/tests/netns/lib.sh"

SOCK=/tmp/collsd/collsd.sock
mh_init "$B" "$SOCK" 2 collsd collsctl tests/integration/p2p-check \
    tests/bench/raw-udp-echo tests/bench/raw-tcp-pingpong
R=$NS_RUN
A2=$(ns_addr 2)
NCPU=$(nproc)
ALLCPU="0-$((NCPU - 1))"

# ---- --auth: what authentication costs --------------------------------
# Three machines of two daemons run side by side on hosts 1 and 2, on
# ports 7491..7493: no key (--insecure), the cluster key, key and
# --encrypt.  The 8 B rounds alternate among them (machine noise hits all
# three); bulk streams go one machine after the other.
AUTH_TAGS="none key enc"

# Port and options of machine TAG.
auth_port()
{
    case $1 in none) echo 7491 ;; key) echo 7492 ;; enc) echo 7493 ;; esac
}
auth_opts()
{
    case $1 in
    none) echo "--insecure" ;;
    key) echo "--key-file $MH_KEY" ;;
    enc) echo "--key-file $MH_KEY --encrypt" ;;
    esac
}

# Starts machine TAG (daemons on hosts 1 and 2, a sink on host 2); 0 once
# it is up.
auth_start()
{
    local tag=$1 port i
    port=$(auth_port "$tag")
    printf '%s:%s name=host1\n%s:%s name=host2\n' "$(ns_addr 1)" "$port" \
        "$(ns_addr 2)" "$port" >"$R/hosts-$tag"
    for i in 1 2; do
        # shellcheck disable=SC2046
        host_bg "$i" "a-$tag-d$i.log" "$B/collsd" --foreground \
            --listen "$(ns_addr "$i"):$port" --hostfile "$R/hosts-$tag" \
            --socket "/tmp/a-$tag/collsd.sock" $(auth_opts "$tag")
    done
    for _ in $(seq 1 100); do
        [ "$(host_run 1 timeout 10 "$B/collsctl" --socket \
            "/tmp/a-$tag/collsd.sock" hosts 2>/dev/null |
            grep -c ' up ')" = 2 ] && break
        sleep 0.1
    done
    MH_SOCK="/tmp/a-$tag/collsd.sock" mh_wait_measured 2 ||
        echo "net-bench: $tag: the start measurement did not end" >&2
    host_bg 2 "a-$tag-sink.log" "$B/tests/integration/p2p-check" \
        --socket "/tmp/a-$tag/collsd.sock" --mode sink \
        --tidfile "$R/a-$tag-sink.tid" --timeout-ms 600000
    for _ in $(seq 1 100); do
        [ -s "$R/a-$tag-sink.tid" ] && return 0
        sleep 0.1
    done
    return 1
}

# x - y ("+d") or x / y ("r"), or "-".
auth_cmp()
{
    awk -v op="$1" -v x="$2" -v y="$3" 'BEGIN {
        if (!(x + 0 > 0 && y + 0 > 0)) print "-";
        else if (op == "d") printf "%+.2f", x - y;
        else printf "%.2f", x / y }'
}

if [ "$AUTH" = 1 ]; then
    reps=2000 rounds=9 bytes=$((512 << 20)) brounds=5
    [ "$QUICK" = 1 ] && reps=500 rounds=5 bytes=$((128 << 20)) brounds=3
    APIDS=""
    for t in $AUTH_TAGS; do
        auth_start "$t" || echo "net-bench: machine $t did not start" >&2
        : >"$R/a-$t-8-pin" >"$R/a-$t-8-free" >"$R/a-$t-bulk"
    done
    APIDS=$(pgrep -f -- "--socket /tmp/a-" | tr '\n' ' ')
    # 8 B: interleaved rounds, every process pinned to CPU 0 and unpinned.
    for mode in pin free; do
        wrap=""
        if [ "$mode" = pin ]; then
            wrap="taskset -c 0"
            for p in $APIDS; do taskset -apc 0 "$p" >/dev/null; done
        else
            for p in $APIDS; do taskset -apc 0-63 "$p" >/dev/null 2>&1; done
        fi
        for k in $(seq 1 "$rounds"); do
            for t in $AUTH_TAGS; do
                host_run 1 timeout 600 $wrap "$B/collsctl" --socket \
                    "/tmp/a-$t/collsd.sock" pingpong --route default \
                    --host 2 --csv --min 8 --max 8 --reps "$reps" \
                    2>/dev/null | awk -F, '$1 == 8 { print $2 }' \
                    >>"$R/a-$t-8-$mode"
            done
        done
    done
    # bulk: interleaved rounds of one stream each, unpinned (bulk), then
    # with one CPU per emulated host (bulk-host: host 1's daemon and the
    # streaming task on CPU 0, host 2's daemon and the sink on CPU 1, as
    # two real single-core hosts would be)
    for mode in bulk bulk-host bulk-1g; do
        wrap=""
        if [ "$mode" = bulk-1g ]; then
            # unpinned again, both hosts' egress at 1 Gbit/s
            for p in $APIDS; do taskset -apc 0-63 "$p" >/dev/null 2>&1; done
            ns_limit 1 1gbit
            ns_limit 2 1gbit
        elif [ "$mode" = bulk-host ]; then
            wrap="taskset -c 0"
            for p in $(pgrep -f -- "--listen $(ns_addr 1):749"); do
                taskset -apc 0 "$p" >/dev/null
            done
            for p in $(pgrep -f -- "--listen $(ns_addr 2):749") \
                $(pgrep -f -- "--mode sink --tidfile $R/a-"); do
                taskset -apc 1 "$p" >/dev/null
            done
        fi
        : >"$R/a-none-$mode" >"$R/a-key-$mode" >"$R/a-enc-$mode"
        sbytes=$bytes
        [ "$mode" = bulk-1g ] && sbytes=$((bytes / 2))
        for k in $(seq 1 "$brounds"); do
            for t in $AUTH_TAGS; do
                host_run 1 timeout 600 $wrap \
                    "$B/tests/integration/p2p-check" \
                    --socket "/tmp/a-$t/collsd.sock" --mode stream \
                    --peer "$R/a-$t-sink.tid" --bytes "$sbytes" \
                    --msg-size 1048576 --routes default --rounds 1 \
                    --timeout-ms 300000 2>>"$R/stream.err" |
                    awk '$1 == "stream" { print $3 }' >>"$R/a-$t-$mode"
            done
        done
    done
    # a-TAG-res: "pinned_8B unpinned_8B bulk_median bulk_min bulk_max
    # bulk_host_median bulk_host_min bulk_host_max"
    for t in $AUTH_TAGS; do
        for f in 8-pin 8-free bulk bulk-host bulk-1g; do
            sort -n "$R/a-$t-$f" | awk '{ v[n++] = $1 }
                END { if (n) print v[int(n / 2)], v[0], v[n - 1];
                      else print "- - -" }'
        done | awk '{ m[NR] = $1; lo[NR] = $2; hi[NR] = $3 }
            END { print m[1], m[2], m[3], lo[3], hi[3], m[4], lo[4], hi[4],
                  m[5], lo[5], hi[5] }' >"$R/a-$t-res"
    done
    ns_limit 1 off
    ns_limit 2 off
    read -r p0 f0 b0 _ _ c0 _ _ g0 _ _ <"$R/a-none-res"
    printf '\n== cost of authentication (default route; 8 B: median of %d\n' \
        "$rounds"
    printf '   interleaved rounds of %d round trips, pinned to CPU 0 and\n' \
        "$reps"
    printf '   unpinned; bulk: median of %d interleaved streams of %d MiB\n' \
        "$brounds" $((bytes >> 20))
    printf '   in 1 MiB messages, unpinned, with min..max)\n'
    printf '%-20s %9s %7s %9s %7s %10s %6s %15s\n' daemons "8B pin us" \
        "+us" "8B free" "+us" "bulk MB/s" ratio "bulk min..max"
    for t in $AUTH_TAGS; do
        case $t in
        none) label="no key (--insecure)" ;;
        key) label="cluster key" ;;
        enc) label="key + --encrypt" ;;
        esac
        read -r p f b lo hi c clo chi g glo ghi <"$R/a-$t-res"
        printf '%-20s %9s %7s %9s %7s %10s %6s %15s\n' "$label" "$p" \
            "$(auth_cmp d "$p" "$p0")" "$f" "$(auth_cmp d "$f" "$f0")" \
            "$b" "$(auth_cmp r "$b" "$b0")" "$lo..$hi"
        echo "$label|$c|$(auth_cmp r "$c" "$c0")|$clo..$chi" >>"$R/a-host"
        echo "$label|$g|$(auth_cmp r "$g" "$g0")|$glo..$ghi" >>"$R/a-1g"
    done
    printf '\nbulk with one CPU per emulated host (host 1 on CPU 0, host 2 on CPU 1):\n'
    printf '%-20s %10s %6s %15s\n' daemons "bulk MB/s" ratio "min..max"
    while IFS='|' read -r label c r mm; do
        printf '%-20s %10s %6s %15s\n' "$label" "$c" "$r" "$mm"
    done <"$R/a-host"
    printf '\nbulk at 1 Gbit/s (tbf on both hosts; line rate 125 MB/s), unpinned,\n'
    printf 'streams of %d MiB:\n' $((bytes >> 21))
    printf '%-20s %10s %6s %15s\n' daemons "bulk MB/s" ratio "min..max"
    while IFS='|' read -r label g r mm; do
        printf '%-20s %10s %6s %15s\n' "$label" "$g" "$r" "$mm"
    done <"$R/a-1g"
    printf 'targets: key +<= 1 us at 8 B, bulk >= 0.85x (encrypt reported)\n'
    exit 0
fi

DPIDS=""
for i in 1 2; do
    mh_daemon "$i"
    DPIDS="$DPIDS $NS_LASTPID"
    eval "DPID_$i=$NS_LASTPID"
done

# collsctl on host I; "ctl I taskset -c M PROG ARGS" runs PROG pinned
# (the caller names collsctl itself then).
ctl()
{
    local i=$1
    shift
    case "$1" in
    taskset) host_run "$i" timeout 600 "$@" ;;
    *) host_run "$i" timeout 600 "$B/collsctl" --socket "$SOCK" "$@" ;;
    esac
}

if ! mh_wait_up 1 2; then
    echo "net-bench: the two daemons did not form a machine" >&2
    exit 1
fi
# the daemons' own first measurement ends before any figure is taken
if ! mh_wait_measured 2; then
    echo "net-bench: the daemons' start measurement does not end" >&2
    exit 1
fi

# Servers on host 2.
SPIDS=""
host_bg 2 udp-echo.log "$B/tests/bench/raw-udp-echo" server "$A2:9001"
SPIDS="$SPIDS $NS_LASTPID"
host_bg 2 tcp-pp.log "$B/tests/bench/raw-tcp-pingpong" server "$A2:9002"
SPIDS="$SPIDS $NS_LASTPID"
host_bg 2 echo.log "$B/collsctl" --socket "$SOCK" echo
SPIDS="$SPIDS $NS_LASTPID"
if [ -x "$B/tests/bench/bench-rel" ]; then
    host_bg 2 bench-rel.log "$B/tests/bench/bench-rel" --role server \
        --bind "$A2:9003"
    SPIDS="$SPIDS $NS_LASTPID"
fi
host_bg 2 sink.log "$B/tests/integration/p2p-check" --socket "$SOCK" \
    --mode sink --tidfile "$R/sink.tid" --timeout-ms 600000
SPIDS="$SPIDS $NS_LASTPID"
for _ in $(seq 1 100); do
    [ -s "$R/echo.log" ] && [ -s "$R/sink.tid" ] && break
    sleep 0.1
done
ECHO_TID=$(head -1 "$R/echo.log")
case "$ECHO_TID" in
t*) ;;
*)
    echo "net-bench: collsctl echo did not start: $ECHO_TID" >&2
    exit 1
    ;;
esac
sleep 0.3

# Pins every daemon and server thread to MASK.
pin_all()
{
    for p in $DPIDS $SPIDS; do
        taskset -a -p -c "$1" "$p" >/dev/null 2>&1
    done
}

# Converts client output to "size half_us" lines.
only_data()
{
    grep -v '^#' | awk 'NF >= 2 { print $1, $2 }'
}

# Weighted least-squares fit of t(n) = alpha + n/beta over "size half_us"
# lines, weights 1/t^2 (relative errors: small sizes are not drowned by
# the large ones; as collsctl pingpong does): prints "alpha_us beta_MBps"
# (us and bytes/us = MB/s).
fit()
{
    awk '$2 > 0 { w = 1 / ($2 * $2); sw += w; sx += w * $1; sy += w * $2
                  sxx += w * $1 * $1; sxy += w * $1 * $2; n++ }
        END {
            d = sw * sxx - sx * sx
            if (n < 2 || d <= 0) { print "- -"; exit }
            s = (sw * sxy - sx * sy) / d
            a = (sy - s * sx) / sw
            printf "%.1f %s\n", a, (s > 0 ? sprintf("%.1f", 1 / s) : "inf")
        }' "$1"
}

# The half round trip at SIZE from a "size half_us" file, or "-".
at()
{
    awk -v s="$2" '$1 == s { v = $2 } END { print (v == "" ? "-" : v) }' "$1"
}

SIZES_SMALL="8 64 512 1024 4096 16384 65536"
SIZES_LARGE="262144 1048576 4194304 10485760"
[ "$QUICK" = 1 ] && SIZES_LARGE="262144 1048576"
MAX_LARGE=$(echo "$SIZES_LARGE" | awk '{ print $NF }')

# Latency of every method, one shaping and pinning: files lat-TAG-METHOD.
latency()
{
    local tag=$1 pin=$2 iters=$3 big_iters=$4 s med
    local P="taskset -c $pin"
    host_run 1 $P "$B/tests/bench/raw-udp-echo" client "$A2:9001" \
        --iters "$iters" --sizes "8,64,512,1024,4096,16384,65507" |
        only_data | sed 's/^65507 /65536 /' >"$R/lat-$tag-udp"
    {
        host_run 1 $P "$B/tests/bench/raw-tcp-pingpong" client "$A2:9002" \
            --iters "$iters" --sizes "$(echo $SIZES_SMALL | tr ' ' ,)"
        host_run 1 $P "$B/tests/bench/raw-tcp-pingpong" client "$A2:9002" \
            --iters "$big_iters" --sizes "$(echo $SIZES_LARGE | tr ' ' ,)"
    } | only_data >"$R/lat-$tag-tcp"
    : >"$R/lat-$tag-ping"
    for s in $SIZES_SMALL $SIZES_LARGE; do
        local c=$iters
        [ "$s" -gt 65536 ] && c=$big_iters
        med=$(ctl 1 ping 2 -c "$c" -s "$s" 2>/dev/null | sed -n \
            's|.*rtt min/median/max = [0-9.]*/\([0-9.]*\)/.*|\1|p')
        [ -n "$med" ] && echo "$s $(awk -v m="$med" 'BEGIN { print m / 2 }')" \
            >>"$R/lat-$tag-ping"
    done
    for route in default direct; do
        local to="--host 2"
        [ "$route" = direct ] && to="--to $ECHO_TID"
        {
            ctl 1 $P "$B/collsctl" --socket "$SOCK" pingpong --route "$route" \
                $to --csv --min 8 --max 64k --reps "$iters" 2>&1
            ctl 1 $P "$B/collsctl" --socket "$SOCK" pingpong --route "$route" \
                $to --csv --min 256k --max "$MAX_LARGE" --reps "$big_iters" \
                2>&1
        } >"$R/pp-$tag-$route.raw"
        grep -E '^[0-9]+,' "$R/pp-$tag-$route.raw" | tr , ' ' |
            awk '{ print $1, $2 }' |
            awk -v keep="$SIZES_SMALL $SIZES_LARGE" \
                'BEGIN { split(keep, k, " "); for (i in k) want[k[i]] = 1 }
                 want[$1] { print }' >"$R/lat-$tag-$route"
        grep -i 'fell back' "$R/pp-$tag-$route.raw" >&2
    done
}

print_latency()
{
    local tag=$1 title=$2 m label a b ref r
    printf '\n== half round trip (us): %s\n' "$title"
    printf '   (alpha us, beta MB/s: fit of t(n) = alpha + n/beta, weights\n'
    printf '   1/t^2; MB/s@max: largest size / its time; UDP: up to 64 KB)\n'

    printf '%-20s %8s %8s %8s %8s %9s %8s %8s %8s %9s\n' method 8B 1KB \
        64KB 1MB "$( [ "$QUICK" = 1 ] && echo 1MB || echo 10MB)" alpha \
        beta "MB/s@max" "x raw@8B"
    for m in udp tcp ping default direct; do
        case $m in
        udp) label="raw UDP echo" ref="" ;;
        tcp) label="raw TCP ping-pong" ref="" ;;
        ping) label="collsctl ping (d2d)" ref=udp ;;
        default) label="pingpong default" ref=udp ;;
        direct) label="pingpong direct" ref=tcp ;;
        esac
        f="$R/lat-$tag-$m"
        [ -s "$f" ] || { printf '%-20s (no data)\n' "$label"; continue; }
        read -r a b <<EOF
$(fit "$f")
EOF
        r="-"
        if [ -n "$ref" ]; then
            r=$(awk -v x="$(at "$f" 8)" -v y="$(at "$R/lat-$tag-$ref" 8)" \
                'BEGIN { if (x + 0 > 0 && y + 0 > 0) printf "%.2fx %s", x / y,
                         "'"$ref"'"; else print "-" }')
        fi
        printf '%-20s %8s %8s %8s %8s %9s %8s %8s %8s %9s\n' "$label" \
            "$(at "$f" 8)" "$(at "$f" 1024)" "$(at "$f" 65536)" \
            "$(at "$f" 1048576)" "$(at "$f" "$MAX_LARGE")" "$a" "$b" \
            "$(awk 'END { if ($2 > 0) printf "%.1f", $1 / $2 }' "$f")" "$r"
    done
}

# MB/s of a stream of BYTES in 1 MiB colls messages on ROUTE, ROUNDS
# rounds (p2p-check stream to the sink on host 2); empty on failure.
colls_stream()
{
    host_run 1 timeout 600 "$B/tests/integration/p2p-check" \
        --socket "$SOCK" --mode stream --peer "$R/sink.tid" \
        --bytes "$1" --msg-size 1048576 --routes "$2" \
        --rounds "$3" --timeout-ms 300000 2>>"$R/stream.err" |
        awk '$1 == "stream" { print $3 }'
}

# Bulk throughput for one shaping: prints "name MBps" lines to bulk-TAG.
bulk()
{
    local tag=$1 bytes=$2 v
    : >"$R/bulk-$tag"
    v=$(host_run 1 "$B/tests/bench/raw-tcp-pingpong" stream "$A2:9002" \
        --bytes "$bytes" --reps 3 | awk '$1 == "stream" { print $3 }')
    echo "tcp ${v:--}" >>"$R/bulk-$tag"
    for route in default direct; do
        v=$(colls_stream "$bytes" "$route" 3)
        echo "$route ${v:--}" >>"$R/bulk-$tag"
    done
    # The transport alone (tests/bench/bench-rel, its own 5 % injected
    # loss row), host to host.
    if [ -x "$B/tests/bench/bench-rel" ]; then
        host_run 1 timeout 600 "$B/tests/bench/bench-rel" --role client \
            --bind "$(ns_addr 1):0" --peer "$A2:9003" \
            --mib $((bytes / 1048576)) --reps 3 >"$R/bench-rel-$tag" 2>&1
    fi
    # Per-datagram loss needs per-datagram packets (no GSO bursts on the
    # veth), which costs throughput by itself: the loss-free baseline of
    # the lossy row is measured segmented too.
    ns_segment on
    v=$(colls_stream "$bytes" default 2)
    echo "default_seg ${v:--}" >>"$R/bulk-$tag"
    ns_loss 1 5
    ns_loss 2 5
    v=$(colls_stream "$bytes" default 2)
    echo "default_loss5 ${v:--}" >>"$R/bulk-$tag"
    ns_loss 1 0
    ns_loss 2 0
}

# Median MB/s of the bench-rel row starting with LABEL, link SHAPE.
rel_median()
{
    [ -s "$R/bench-rel-$1" ] || return 0
    awk -v l="$2" 'index($0, l) == 1 {
        for (i = 1; i < NF; i++) if ($i == "median") { print $(i + 1); exit } }' \
        "$R/bench-rel-$1"
}

get()
{
    awk -v k="$2" '$1 == k { print $2 }' "$1"
}

ratio()
{
    awk -v x="$1" -v y="$2" 'BEGIN { if (x + 0 > 0 && y + 0 > 0)
        printf "%.2f", x / y; else print "-" }'
}

# A line "target: value ratio >= / <= bound: ok|MISSED".
target()
{
    local what=$1 val=$2 op=$3 bound=$4 ok
    ok=$(awk -v v="$val" -v b="$bound" -v op="$op" 'BEGIN {
        if (v == "-" || v == "") { print "n/a"; exit }
        if (op == "<=") print (v + 0 <= b + 0 ? "ok" : "MISSED");
        else print (v + 0 >= b + 0 ? "ok" : "MISSED") }')
    printf '  %-52s %6s %s %-4s %s\n' "$what" "$val" "$op" "$bound" "$ok"
}

rss()
{
    awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null
}

# The 8-byte targets, measured in ROUNDS interleaved rounds (raw UDP,
# raw TCP, default route, direct route one after the other in each round,
# so machine noise hits all four): files r8-TAG-METHOD, one median half
# round trip (us) per round.
rounds8()
{
    local tag=$1 pin=$2 n=$3 k
    local P="taskset -c $pin"
    for k in udp tcp default direct; do
        : >"$R/r8-$tag-$k"
    done
    for k in $(seq 1 "$ROUNDS"); do
        host_run 1 $P "$B/tests/bench/raw-udp-echo" client "$A2:9001" \
            --iters "$n" --sizes 8 | only_data | awk '{ print $2 }' \
            >>"$R/r8-$tag-udp"
        host_run 1 $P "$B/tests/bench/raw-tcp-pingpong" client "$A2:9002" \
            --iters "$n" --sizes 8 | only_data | awk '{ print $2 }' \
            >>"$R/r8-$tag-tcp"
        ctl 1 $P "$B/collsctl" --socket "$SOCK" pingpong --route default \
            --host 2 --csv --min 8 --max 8 --reps "$n" 2>/dev/null |
            awk -F, '$1 == 8 { print $2 }' >>"$R/r8-$tag-default"
        ctl 1 $P "$B/collsctl" --socket "$SOCK" pingpong --route direct \
            --to "$ECHO_TID" --csv --min 8 --max 8 --reps "$n" 2>/dev/null |
            awk -F, '$1 == 8 { print $2 }' >>"$R/r8-$tag-direct"
    done
}

# "median min max" of the per-round ratios of files A and B (line by line).
ratio_rounds()
{
    paste -d' ' "$1" "$2" | awk '$1 > 0 && $2 > 0 { v[n++] = $1 / $2 }
        END {
            if (n == 0) { print "- - -"; exit }
            for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
                if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
            m = (n % 2) ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2
            printf "%.2f %.2f %.2f\n", m, v[0], v[n - 1] }'
}

# "median min max" of the values in file F.
med_file()
{
    sort -g "$1" | awk '{ v[n++] = $1 } END {
        if (n == 0) { print "- - -"; exit }
        m = (n % 2) ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2
        printf "%.2f %.2f %.2f\n", m, v[0], v[n - 1] }'
}

# Bulk throughput, unshaped: ROUNDS interleaved rounds of one TCP stream
# and one default-route stream of BYTES each: files rb-tcp, rb-default.
bulk_rounds()
{
    local bytes=$1 k v
    : >"$R/rb-tcp"
    : >"$R/rb-default"
    for k in $(seq 1 "$ROUNDS"); do
        v=$(host_run 1 "$B/tests/bench/raw-tcp-pingpong" stream "$A2:9002" \
            --bytes "$bytes" --reps 1 | awk '$1 == "stream" { print $3 }')
        echo "${v:-0}" >>"$R/rb-tcp"
        v=$(colls_stream "$bytes" default 1)
        echo "${v:-0}" >>"$R/rb-default"
    done
}

if [ "$QUICK" = 1 ]; then
    IT=50 BIG=3 BYTES_FAST=67108864 BYTES_SLOW=12500000 ROUNDS=3 N8=500
else
    IT=200 BIG=5 BYTES_FAST=268435456 BYTES_SLOW=25000000 ROUNDS=7 N8=2000
fi

echo "net-bench: $(date -u +%FT%TZ), $(uname -r), $NCPU CPUs," \
    "2 emulated hosts (veth + bridge)"

# Memory first, on an idle machine.
rss_idle=$(rss "$DPID_1")
rm -f "$R/many.ready"
: >"$R/many.hold"
host_bg 1 many.log "$B/tests/integration/p2p-check" --socket "$SOCK" \
    --mode attach-many --count 100 --ready "$R/many.ready" \
    --tidfile "$R/many.hold" --timeout-ms 60000
many=$NS_LASTPID
for _ in $(seq 1 200); do
    [ -s "$R/many.ready" ] && break
    sleep 0.1
done
sleep 0.5
ntasks=$(cat "$R/many.ready" 2>/dev/null)
rss_100=$(rss "$DPID_1")
rm -f "$R/many.hold"
wait "$many" 2>/dev/null
sleep 0.5
rss_after=$(rss "$DPID_1")

for shape in none 100mbit; do
    if [ "$shape" = 100mbit ]; then
        ns_limit 1 100mbit
        ns_limit 2 100mbit
        it=$((IT / 4)) bytes=$BYTES_SLOW
    else
        it=$IT bytes=$BYTES_FAST
    fi
    for pin in all 0; do
        if [ "$pin" = 0 ]; then
            pin_all 0
            mask=0
        else
            pin_all "$ALLCPU"
            mask=$ALLCPU
        fi
        latency "$shape-$pin" "$mask" "$it" "$BIG"
        [ "$shape" = none ] && rounds8 "$pin" "$mask" "$N8"
        print_latency "$shape-$pin" "link $shape, $( [ "$pin" = 0 ] &&
            echo 'every process pinned to CPU 0' || echo unpinned)"
    done
    pin_all "$ALLCPU"
    bulk "$shape" "$bytes"
    [ "$shape" = none ] && bulk_rounds "$bytes"
done

printf '\n== bulk throughput (MB/s, 1 MB = 1e6 bytes; colls: 1 MiB messages;\n'
printf '   "no GSO": veth segmenting every datagram, as under the loss rule)\n'
printf '%-10s %10s %10s %10s %12s %12s %10s\n' link "TCP stream" \
    "colls def" "colls dir" "def, no GSO" "def 5% loss" "line rate"
for shape in none 100mbit; do
    f="$R/bulk-$shape"
    lr="-"
    [ "$shape" = 100mbit ] && lr=12.50
    printf '%-10s %10s %10s %10s %12s %12s %10s\n' "$shape" \
        "$(get "$f" tcp)" "$(get "$f" default)" "$(get "$f" direct)" \
        "$(get "$f" default_seg)" "$(get "$f" default_loss5)" "$lr"
done

for shape in none 100mbit; do
    if [ -s "$R/bench-rel-$shape" ]; then
        printf '\n== the transport alone, host to host (bench-rel), link %s\n' \
            "$shape"
        grep -v '^bench-rel server' "$R/bench-rel-$shape"
    fi
done

printf '\n== daemon resident memory (VmRSS, KiB)\n'
printf '  idle %s; with %s attached tasks %s; after they left %s\n' \
    "${rss_idle:--}" "${ntasks:-?}" "${rss_100:--}" "${rss_after:--}"

printf '\n== 8 B half round trip, unshaped, %s interleaved rounds of %s\n' \
    "$ROUNDS" "$N8"
printf "   (us: median of the rounds' medians, min..max)\n"
for pin in all 0; do
    pl=$([ "$pin" = 0 ] && echo "pinned to CPU 0" || echo "unpinned")
    for m in udp tcp default direct; do
        read -r a b c <<EOF
$(med_file "$R/r8-$pin-$m")
EOF
        printf '  %-16s %-8s %8s  (%s..%s)\n' "$pl" "$m" "$a" "$b" "$c"
    done
done
printf '\n== bulk, unshaped, %s interleaved rounds (MB/s, median min..max)\n' \
    "$ROUNDS"
for m in tcp default; do
    read -r a b c <<EOF
$(med_file "$R/rb-$m")
EOF
    printf '  %-8s %10s  (%s..%s)\n' "$m" "$a" "$b" "$c"
done

printf '\n== targets (ratios: median of the per-round ratios, [min..max])\n'
for pin in all 0; do
    pl=$([ "$pin" = 0 ] && echo "pinned" || echo "unpinned")
    read -r a b c <<EOF
$(ratio_rounds "$R/r8-$pin-direct" "$R/r8-$pin-tcp")
EOF
    target "direct route / raw TCP at 8 B ($pl) [$b..$c]" "$a" "<=" 1.3
    read -r a b c <<EOF
$(ratio_rounds "$R/r8-$pin-default" "$R/r8-$pin-udp")
EOF
    target "default route / raw UDP at 8 B ($pl) [$b..$c]" "$a" "<=" 3
done
# The issue's bulk targets are the transport's (bench-rel: daemon to
# daemon, medians of its 3 runs); the default route end to end (task ->
# daemon -> daemon -> task) must also keep the line rate and the loss
# target.  Unshaped, end to end against TCP is printed without a target.
target "transport / one TCP stream, unshaped" \
    "$(ratio "$(rel_median none 'rel, no loss')" \
        "$(rel_median none 'tcp (1 stream)')")" ">=" 0.8
target "transport / line rate, 100 Mbit" \
    "$(ratio "$(rel_median 100mbit 'rel, no loss')" 12.5)" ">=" 0.9
target "default route end to end / line rate, 100 Mbit" \
    "$(ratio "$(get "$R/bulk-100mbit" default)" 12.5)" ">=" 0.9
for shape in none 100mbit; do
    target "transport, 5% loss / loss-free, $shape" \
        "$(ratio "$(rel_median "$shape" 'rel, 5% loss')" \
            "$(rel_median "$shape" 'rel, no loss')")" ">=" 0.5
    target "default route, 5% loss / loss-free (no GSO), $shape" \
        "$(ratio "$(get "$R/bulk-$shape" default_loss5)" \
            "$(get "$R/bulk-$shape" default_seg)")" ">=" 0.5
done
read -r a b c <<EOF
$(ratio_rounds "$R/rb-default" "$R/rb-tcp")
EOF
printf '  %-52s %6s (no target: its 4 processes share the\n' \
    "default route end to end / one TCP stream [$b..$c]" "$a"
printf '  %-52s %6s  2 CPUs; each byte is copied 9 times, not 2)\n' "" ""
if [ -s "$R/stream.err" ]; then
    echo "stream errors:" >&2
    head -5 "$R/stream.err" >&2
fi
exit 0
