# tests/netns/lib.sh -- emulated hosts in network namespaces (sourced).
#
# Each emulated host is a network namespace with one veth "eth0" on a bridge
# that lives in a separate "switch" namespace, so nothing is added to the
# root namespace but the netns names themselves.  Host I has the address
# 10.77.0.I/24, and a long-lived "holder" process that owns its own UTS
# (hostname hostI), mount (private tmpfs on /tmp, /run and /dev/shm) and IPC
# namespaces; host_run / host_bg enter all four namespaces of the holder, so
# every command started on a host sees that host's /tmp, hostname and SysV
# IPC, and nothing host-local is shared between emulated hosts.
#
# Directories the test needs on every host (the run directory, the build
# and source trees) are bind-mounted into each private /tmp when they live
# under /tmp.  Names carry the PID of the sourcing shell so parallel runs
# do not clash.  ns_teardown (installed on EXIT INT TERM) kills every
# process in the namespaces, deletes them (links and nft tables go with
# them) and removes the run directory, also when a test fails.
#
# Usage:
#   . tests/netns/lib.sh
#   ns_require                      # exits 77 unless root + netns work
#   ns_setup 4                      # hosts 1..4; NS_RUN = shared run dir
#   host_run 2 collsctl hosts      # foreground, inside host 2
#   host_bg 1 log cmd args...       # background; pid in NS_LASTPID
#   ns_limit 1 100mbit              # tbf on host 1's egress
#   ns_link 1 100mbit               # and on its ingress: a switch port
#   ns_loss 1 5                     # drop 5 % of UDP arriving at host 1
#   ns_loss 1 0                     # remove the loss rule
#   ns_segment on|off               # per-datagram packets on every link
#   ns_pin_kill PID                 # kill one process started by host_bg
#
# NS_KEEP=1 keeps the run directory (logs) for debugging.

NS_TAG="c$$"
NS_N=0
NS_RUN=""
NS_PIDS=""
NS_LASTPID=""
NS_HOLDERS=""
NS_NAMES=""
NS_SHARE=""
FAILED=0
FAILS="" # the fail lines, repeated after the logs (ns_finish)

# Counts one failure of the test and says what it was.
fail()
{
    echo "${0##*/}: FAIL: $*" >&2
    FAILED=$((FAILED + 1))
    FAILS="$FAILS${0##*/}: FAIL: $*
"
}

# Ends the test: with failures, the tail of every daemon log in NS_RUN and
# exit 1; else "passed" and exit 0.
ns_finish()
{
    if [ "$FAILED" != 0 ]; then
        ns_log "$FAILED failure(s); logs:"
        for f in "$NS_RUN"/d*.log; do
            echo "---- $f" >&2
            tail -20 "$f" >&2
        done
        # a CI that keeps the output's tail shows why after the logs
        printf -- '---- failures\n%s' "$FAILS" >&2
        exit 1
    fi
    ns_log "passed"
    exit 0
}

# Prints a message prefixed with the test name on stderr.
ns_log()
{
    echo "[$(date +%H:%M:%S)] ${0##*/}: $*" >&2
}

# Exits 77 (skip) unless we are root and the tools and namespaces work.
ns_require()
{
    if [ "$(id -u)" != 0 ]; then
        echo "SKIP: ${0##*/} needs root for network namespaces" >&2
        exit 77
    fi
    for t in ip unshare nsenter tc nft timeout; do
        if ! command -v "$t" >/dev/null 2>&1; then
            echo "SKIP: ${0##*/} needs $t" >&2
            exit 77
        fi
    done
    if ! ip netns add "${NS_TAG}probe" 2>/dev/null; then
        echo "SKIP: cannot create network namespaces" >&2
        exit 77
    fi
    if ! ip netns exec "${NS_TAG}probe" unshare --uts --mount --ipc \
        --propagation private sh -c 'mount -t tmpfs t /tmp' 2>/dev/null; then
        ip netns del "${NS_TAG}probe" 2>/dev/null
        echo "SKIP: cannot create mount/uts/ipc namespaces" >&2
        exit 77
    fi
    ip netns del "${NS_TAG}probe"
}

# Kills a list of pids: TERM, a short grace period, then KILL.
ns_kill_pids()
{
    pids=$*
    [ -n "$pids" ] || return 0
    kill -TERM $pids 2>/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        alive=""
        for p in $pids; do
            kill -0 "$p" 2>/dev/null && alive="$alive $p"
        done
        [ -z "$alive" ] && return 0
        sleep 0.1
    done
    kill -KILL $alive 2>/dev/null
    return 0
}

# Removes everything ns_setup created.  Safe to call more than once and
# after a partial setup.
ns_teardown()
{
    rc=$?
    trap - EXIT INT TERM
    ns_kill_pids $NS_PIDS
    for ns in $NS_NAMES; do
        ns_kill_pids $(ip netns pids "$ns" 2>/dev/null)
    done
    ns_kill_pids $NS_HOLDERS
    wait 2>/dev/null
    for ns in $NS_NAMES; do
        ip netns del "$ns" 2>/dev/null
    done
    if [ -n "$NS_RUN" ] && [ -d "$NS_RUN" ]; then
        if [ -n "${NS_KEEP:-}" ]; then
            ns_log "run directory kept: $NS_RUN"
        else
            rm -rf "$NS_RUN"
        fi
    fi
    NS_NAMES=""
    NS_PIDS=""
    NS_HOLDERS=""
    exit "$rc"
}

# The namespace name of host I.
ns_name()
{
    echo "${NS_TAG}h$1"
}

# The holder pid of host I.
ns_holder()
{
    echo "$NS_HOLDERS" | tr ' ' '\n' | grep -v '^$' | sed -n "${1}p"
}

# The address of host I.
ns_addr()
{
    echo "10.77.0.$1"
}

# Creates hosts 1..N on one bridge.  Sets NS_RUN (a shared directory) and
# installs the teardown trap.  Extra directories to share on every host can
# be given in NS_SHARE_EXTRA.
ns_setup()
{
    NS_N=$1
    trap ns_teardown EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    NS_RUN=$(mktemp -d /tmp/colls-netns.XXXXXX) || exit 99
    chmod 755 "$NS_RUN"
    NS_SHARE="$NS_RUN"
    for d in "${top_builddir:-}" "${top_srcdir:-}" ${NS_SHARE_EXTRA:-}; do
        [ -n "$d" ] || continue
        d=$(cd "$d" && pwd -P)
        case "$d" in
        /tmp/*) NS_SHARE="$NS_SHARE $d" ;;
        esac
    done
    sw="${NS_TAG}sw"
    ip netns add "$sw" || exit 99
    NS_NAMES="$sw"
    ip -n "$sw" link add br0 type bridge || exit 99
    # A plain Ethernet switch: where br_netfilter is loaded (Docker loads
    # it), bridged frames also go through the switch namespace's
    # iptables, which costs every datagram about 0.5 us (perf: br_nf_*);
    # off here (the keys are per namespace; absent without the module).
    for k in iptables ip6tables arptables; do
        ip netns exec "$sw" sysctl -qw "net.bridge.bridge-nf-call-$k=0" \
            2>/dev/null
    done
    ip -n "$sw" link set br0 up
    ip -n "$sw" link set lo up
    i=1
    while [ "$i" -le "$NS_N" ]; do
        ns=$(ns_name "$i")
        ip netns add "$ns" || exit 99
        NS_NAMES="$NS_NAMES $ns"
        ip link add name eth0 netns "$ns" type veth peer name "p$i" \
            netns "$sw" || exit 99
        ip -n "$sw" link set "p$i" master br0 up
        ip -n "$ns" addr add "10.77.0.$i/24" dev eth0
        ip -n "$ns" link set eth0 up
        ip -n "$ns" link set lo up
        ns_start_holder "$i"
        i=$((i + 1))
    done
    ns_wait_links
}

# Starts the holder of host I: private hostname, /tmp, /run, /dev/shm and
# IPC namespace, with the shared directories bind-mounted back in.
ns_start_holder()
{
    i=$1
    ready="$NS_RUN/.holder$i"
    # The fd trick keeps a reference to each shared directory across the
    # tmpfs mount that hides it; --no-canonicalize stops mount from
    # resolving /proc/self/fd/N to the (now hidden) path.
    script='set -e
        hostname "host$1"
        n=3
        for d in $NS_SHARE; do
            eval "exec $n<\"\$d\""
            n=$((n + 1))
        done
        mount -t tmpfs -o mode=1777 tmpfs /tmp
        mount -t tmpfs -o mode=755 tmpfs /run
        mount -t tmpfs -o mode=1777 tmpfs /dev/shm
        n=3
        for d in $NS_SHARE; do
            mkdir -p "$d"
            mount --no-canonicalize --bind "/proc/self/fd/$n" "$d"
            eval "exec $n<&-"
            n=$((n + 1))
        done
        : > "$2"
        exec sleep 1000000'
    NS_SHARE="$NS_SHARE" ip netns exec "$(ns_name "$i")" \
        unshare --uts --mount --ipc --propagation private \
        sh -c "$script" holder "$i" "$ready" </dev/null &
    NS_HOLDERS="$NS_HOLDERS $!"
    for _ in $(seq 1 100); do
        [ -e "$ready" ] && return 0
        sleep 0.05
    done
    ns_log "host $i did not come up"
    exit 99
}

# Waits until IPv6 DAD and bridge forwarding have settled (the bridge
# forwards at once; this only waits for the links to report UP).
ns_wait_links()
{
    for _ in $(seq 1 50); do
        down=0
        i=1
        while [ "$i" -le "$NS_N" ]; do
            ip -n "$(ns_name "$i")" -br link show eth0 | grep -q 'UP' ||
                down=1
            i=$((i + 1))
        done
        [ "$down" = 0 ] && return 0
        sleep 0.1
    done
}

# Runs CMD... on host I in the foreground; returns its exit status.  The
# working directory is NS_RUN.
host_run()
{
    h=$(ns_holder "$1")
    shift
    nsenter -t "$h" -n -m -u -i --wd="$NS_RUN" -- "$@"
}

# Runs CMD... on host I in the background with stdout+stderr to LOG
# (relative to NS_RUN unless absolute).  NS_LASTPID gets the pid, which
# is also remembered for teardown.
host_bg()
{
    h=$(ns_holder "$1")
    log=$2
    shift 2
    case "$log" in
    /*) ;;
    *) log="$NS_RUN/$log" ;;
    esac
    nsenter -t "$h" -n -m -u -i --wd="$NS_RUN" -- "$@" >"$log" 2>&1 \
        </dev/null &
    NS_LASTPID=$!
    NS_PIDS="$NS_PIDS $NS_LASTPID"
}

# Kills one background process (signal SIG, default KILL) and reaps it.
ns_pin_kill()
{
    kill -"${2:-KILL}" "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    return 0
}

# Shapes the egress of host I to RATE (tbf; e.g. 100mbit), with a bucket
# of BURST (default 128kb: bursts that size pass at the veth's speed).
# "off" removes.
ns_limit()
{
    ns=$(ns_name "$1")
    tc -n "$ns" qdisc del dev eth0 root 2>/dev/null
    [ "$2" = off ] && return 0
    tc -n "$ns" qdisc add dev eth0 root tbf rate "$2" burst "${3:-128kb}" \
        latency 20ms
}

# Shapes host I's link to RATE both ways, as a full-duplex switch port
# of RATE is: its egress (ns_limit) and its ingress, a tbf on the
# bridge's port p<I>, which carries what the switch sends to host I.
# Egress alone leaves a host's ingress at the veth's speed: a flat reduce
# of 64 KiB on 8 hosts at 10 Mbit/s took 73 ms, although its root must
# receive 7 messages of 52 ms each on a real port (434 ms both ways
# shaped; tests/bench/tune-bench.sh).  "off" removes both.
ns_link()
{
    ns_limit "$@" || return 1
    tc -n "${NS_TAG}sw" qdisc del dev "p$1" root 2>/dev/null
    [ "$2" = off ] && return 0
    tc -n "${NS_TAG}sw" qdisc add dev "p$1" root tbf rate "$2" \
        burst "${3:-128kb}" latency 20ms
}

# Drops PCT percent of the UDP datagrams arriving at host I through eth0
# (nftables numgen; this kernel has no netem).  The input hook is used, not
# output: a drop on output makes the sender's sendmsg() fail with EPERM,
# which is not what a lossy network does.  0 removes the rule.
#
# Senders may hand the kernel up to 64 KB of datagrams at once (UDP GSO),
# which cross the veth as one packet: one drop would lose a whole burst.
# While any host has a loss rule, every host's eth0 segments before it
# transmits (gso_max_segs 1), so each datagram is dropped on its own.
ns_loss()
{
    ns=$(ns_name "$1")
    ip netns exec "$ns" nft delete table inet collsloss 2>/dev/null
    rm -f "$NS_RUN/.lossy$1"
    if [ "$2" != 0 ]; then
        ip netns exec "$ns" nft -f - <<EOF || return 1
table inet collsloss {
    chain in {
        type filter hook input priority 0; policy accept;
        iifname "eth0" meta l4proto udp numgen random mod 100 < $2 counter drop
    }
}
EOF
        : >"$NS_RUN/.lossy$1"
    fi
    if ls "$NS_RUN"/.lossy* >/dev/null 2>&1; then
        ns_segment on
    else
        ns_segment off
    fi
}

# on: every host's eth0 segments GSO packets before transmitting
# (gso_max_segs 1), as it must for per-datagram loss; off: the default.
# Segmenting costs throughput by itself, so a loss-free baseline for a
# lossy figure should be measured with it on (ns_segment on).
ns_segment()
{
    segs=65535
    [ "$1" = on ] && segs=1
    i=1
    while [ "$i" -le "$NS_N" ]; do
        ip -n "$(ns_name "$i")" link set dev eth0 gso_max_segs "$segs"
        i=$((i + 1))
    done
}

# Prints the packets dropped by host I's loss rule (0 if none).
ns_loss_drops()
{
    ip netns exec "$(ns_name "$1")" nft list table inet collsloss \
        2>/dev/null | sed -n 's/.*packets \([0-9]*\).*/\1/p' | head -1
}

# ---- a machine: one collsd per host ---------------------------------------
# mh_init B SOCK N PROG...: exits 77 unless every B/PROG is built (B is the
# build directory, absolute), then ns_require, ns_setup N, a shared
# $NS_RUN/hostfile listing hosts 1..N on port 7490 (name hostI) and a
# cluster key $NS_RUN/cluster.key (collsctl keygen; MH_KEY is its path).
# SOCK is the daemon socket path on every host (each host has its own
# /tmp).  Daemons get --key-file MH_KEY, or --insecure when MH_INSECURE=1
# (non-loopback addresses need one or the other).
mh_init()
{
    MH_B=$1
    MH_SOCK=$2
    mh_n=$3
    shift 3
    for b in "$@"; do
        if [ ! -x "$MH_B/$b" ]; then
            echo "SKIP: $MH_B/$b not built" >&2
            exit 77
        fi
    done
    ns_require
    top_builddir=$MH_B ns_setup "$mh_n"
    for i in $(seq 1 "$mh_n"); do
        echo "$(ns_addr "$i"):7490 name=host$i"
    done >"$NS_RUN/hostfile"
    MH_KEY=$NS_RUN/cluster.key
    "$MH_B/collsctl" keygen "$MH_KEY" >/dev/null || exit 99
}

# The trust options of a daemon: the cluster key, or --insecure.
mh_trust()
{
    if [ "${MH_INSECURE:-0}" = 1 ]; then
        echo "--insecure"
    else
        echo "--key-file $MH_KEY"
    fi
}

# mh_daemon I OPTS...: starts host I's collsd on the hostfile (log dI.log);
# its pid in NS_LASTPID.
mh_daemon()
{
    mh_i=$1
    shift
    # shellcheck disable=SC2046
    host_bg "$mh_i" "d$mh_i.log" "$MH_B/collsd" --foreground \
        --listen "$(ns_addr "$mh_i"):7490" --hostfile "$NS_RUN/hostfile" \
        --socket "$MH_SOCK" $(mh_trust) "$@"
}

# mh_ctl I ARGS...: collsctl ARGS on host I's daemon (30 s at most).
mh_ctl()
{
    mh_i=$1
    shift
    host_run "$mh_i" timeout 30 "$MH_B/collsctl" --socket "$MH_SOCK" "$@"
}

# mh_wait_up I N: 0 once host I lists at least N hosts up (10 s at most);
# else its host table on stderr and 1.
mh_wait_up()
{
    for _ in $(seq 1 100); do
        [ "$(mh_ctl "$1" hosts 2>/dev/null | grep -c ' up ')" -ge "$2" ] &&
            return 0
        sleep 0.1
    done
    mh_ctl "$1" hosts >&2
    return 1
}

# mh_measure_jobs I: host I's `measure_jobs` (stats --json), empty if
# its statistics have none.
mh_measure_jobs()
{
    mh_ctl "$1" stats --json 2>/dev/null |
        sed -n 's/.*"measure_jobs": *\([0-9]*\).*/\1/p'
}

# mh_wait_measured N: 0 once hosts 1..N (on $MH_SOCK) each report no
# measurement of their own running or waiting (`measure_jobs` of stats:
# with --measure, the quick pLogP measurement of every peer that came up,
# a second or more after it came up; docs/collectives.md, "Measuring the
# network"), 120 s at most; else the host's stats on stderr and 1.
# Benchmarks call it after mh_wait_up: the measurement's probes and
# trains would share the CPUs and links with their first figures.
mh_wait_measured()
{
    local i j
    for i in $(seq 1 "$1"); do
        for _ in $(seq 1 1200); do
            j=$(mh_measure_jobs "$i")
            [ "$j" = 0 ] && break
            sleep 0.1
        done
        if [ "$j" != 0 ]; then
            mh_ctl "$i" stats >&2
            return 1
        fi
    done
}

# mh_error_count I NAME: host I's error counter NAME (stats --json,
# "errors").
mh_error_count()
{
    mh_ctl "$1" stats --json | python3 -c '
import json, sys
print(json.load(sys.stdin)["errors"][sys.argv[1]])' "$2"
}

# mh_dgrams_sent I H: the datagrams host I has sent to hid H (stats
# --json, "peers"): where the sequence numbers of that stream are now.
mh_dgrams_sent()
{
    mh_ctl "$1" stats --json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["peers"]:
    if p["hid"] == int(sys.argv[1]):
        print(p["dgrams_sent"])' "$2"
}

# mh_inc_of H: the incarnation of hid H as host 1 sees it.
mh_inc_of()
{
    mh_ctl 1 hosts | awk -v h="$1" '$1 == h { print $5 }'
}

# ---- test-only Debian packages --------------------------------------------
# ns_packages PKG...: installs those of the Debian packages PKG that are
# not installed yet (apt-get, quietly; benchmark- and test-only
# dependencies that setup.sh does not install).  0 when all are there;
# else one SKIP line on stderr and 1.
ns_packages()
{
    missing=""
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
            grep -q "install ok installed" || missing="$missing $p"
    done
    [ -n "$missing" ] || return 0
    echo "${0##*/}: installing$missing" >&2
    apt-get update -qq >/dev/null 2>&1 &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends $missing >/dev/null 2>&1 && return 0
    echo "SKIP: ${0##*/}: cannot install$missing" >&2
    return 1
}
