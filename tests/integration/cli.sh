#!/bin/bash
# cli.sh -- collsctl explains itself and tells the truth:
#   1. --version; `VERB --help`, `VERB -h` and `help VERB` for every verb
#      of `collsctl --help`, without a daemon and without trying one;
#      unknown commands and options, bad option values (which option,
#      what was given, what is allowed); `delete --help` says it halts;
#   2. no daemon: "cannot reach the daemon" names the socket and the fix
#      (no socket there; a socket nobody listens on);
#   3. --json of status, hosts, ps, groups, stats and bench passes
#      python3 -m json.tool and carries the machine's values; bench
#      --latency runs a rooted operation P - 1 times as often, chained
#      through each rank, and the others as often, each after a barrier;
#   4. no terminal codes into a pipe (stats --watch), no progress lines
#      when stderr is not a terminal, a \r progress line when it is
#      (pingpong, bench under script(1));
#   5. as root: an unprivileged uid is told "permission denied" and
#      --allow-uid; a daemon refusing its uid, the same (setpriv).
. "${top_srcdir:-.}/tests/integration/lib.sh"

command -v python3 >/dev/null || {
    echo "SKIP: needs python3" >&2
    exit 77
}

it_setup
CTL=$IT_B/collsctl
NONE=$IT_DIR/none.sock

# expect_err WHAT WANT_RC WANT_TEXT CMD...: runs CMD, checks its exit
# status and that stderr holds WANT_TEXT (a fixed string).
expect_err()
{
    local what=$1 want_rc=$2 want=$3 out rc
    shift 3
    out=$("$@" 2>&1 >/dev/null)
    rc=$?
    [ "$rc" = "$want_rc" ] || it_fail "$what: exit $rc, not $want_rc ($out)"
    case "$out" in
    *"$want"*) ;;
    *) it_fail "$what: stderr lacks \"$want\": $out" ;;
    esac
}

# 1. Help, version, usage errors: no daemon anywhere (COLLS_SOCKET points
#    at nothing, so an attempt to attach would say so on stderr).
export COLLS_SOCKET=$NONE
want=$("$IT_B/collsd" --version | sed 's/^collsd/collsctl/')
got=$("$CTL" --version)
[ "$got" = "$want" ] || it_fail "--version: \"$got\", not \"$want\""
verbs=$("$CTL" --help | sed -n '/^commands:/,/^$/p' |
    sed -n 's/^  \([a-z]\+\) .*/\1/p')
[ "$(echo "$verbs" | wc -w)" -ge 14 ] || it_fail "too few verbs: $verbs"
for v in $verbs; do
    h1=$("$CTL" "$v" --help 2>"$IT_DIR/err")
    rc=$?
    [ "$rc" = 0 ] || it_fail "$v --help: exit $rc"
    [ -s "$IT_DIR/err" ] && it_fail "$v --help wrote to stderr: $(cat "$IT_DIR/err")"
    case "$h1" in
    "usage: collsctl $v"*) ;;
    *) it_fail "$v --help does not start with its usage: $h1" ;;
    esac
    echo "$h1" | grep -q -- '--help  *print this help' ||
        it_fail "$v --help does not list --help"
    [ "$("$CTL" "$v" -h 2>&1)" = "$h1" ] || it_fail "$v -h differs from --help"
    [ "$("$CTL" help "$v" 2>&1)" = "$h1" ] ||
        it_fail "help $v differs from $v --help"
done
# Every option of the synopsis is explained below it.
for v in $verbs; do
    "$CTL" "$v" --help >"$IT_DIR/h"
    for o in $(sed -n '1,/^$/p' "$IT_DIR/h" | grep -o '\[--\?[a-z-]*' |
        tr -d '['); do
        grep -qE "^ +(-[a-zA-Z], )?$o([ ,]|\$)" "$IT_DIR/h" ||
            it_fail "$v --help: $o is in the synopsis but not explained"
    done
done
"$CTL" delete --help | grep -q "halt the daemon there" ||
    it_fail "delete --help does not say that it halts the daemon there"
# Help comes before anything else, even with an operand missing or bad.
"$CTL" add --help >/dev/null 2>&1 || it_fail "add --help failed"
"$CTL" ping -c 3 --help >/dev/null 2>&1 || it_fail "ping -c 3 --help failed"
expect_err "unknown command" 2 "unknown command frob (one of: status hosts" \
    "$CTL" frob
expect_err "unknown option" 2 "collsctl ps: unknown option --bogus" \
    "$CTL" ps --bogus
expect_err "missing value" 2 "collsctl ping: --count needs a value (N)" \
    "$CTL" ping 2 -c
expect_err "ping -c 0" 2 \
    "collsctl ping: bad value '0' for --count: a whole number from 1 to 1000000" \
    "$CTL" ping -c 0 2
expect_err "stats --watch x" 2 \
    "collsctl stats: bad value 'x' for --watch: a whole number from 1 to 86400" \
    "$CTL" stats --watch x
expect_err "bench --compress" 2 \
    "collsctl bench: bad value 'maybe' for --compress: off, on or auto" \
    "$CTL" bench allreduce --compress maybe
expect_err "bench --sizes" 2 \
    "collsctl bench: bad value '9:4' for --sizes: A or A:B, bytes from 1 to 1g" \
    "$CTL" bench allreduce --sizes 9:4
expect_err "pingpong --route" 2 \
    "collsctl pingpong: bad value 'sideways' for --route: default or direct" \
    "$CTL" pingpong --route sideways
expect_err "pingpong --to" 2 \
    "collsctl pingpong: bad value 'x1' for --to: a task id" \
    "$CTL" pingpong --to x1
expect_err "compress --table-bits" 2 \
    "collsctl compress: bad value '99' for --table-bits: a whole number from 4 to 24" \
    "$CTL" compress --table-bits 99 -
expect_err "bench allfoo" 2 "unknown operation allfoo (one of: barrier bcast" \
    "$CTL" bench allfoo
it_log "1. help for $(echo $verbs | wc -w) verbs, usage errors: checked"

# 1b. algorithms: every operation, every row with its formula and rules,
#     read from the daemon's tables; unknown names rejected with the list.
ops=$("$CTL" algorithms nosuch 2>&1 | sed -n 's/.*(one of: \(.*\))$/\1/p')
[ "$(echo "$ops" | wc -w)" = 15 ] || it_fail "algorithms: operations: $ops"
"$CTL" algorithms >"$IT_DIR/algs" || it_fail "algorithms failed"
for op in $ops; do
    grep -q "^$op (force one with COLLS_ALG_$(echo "$op" | tr a-z A-Z)=NAME\[:SEG\])$" \
        "$IT_DIR/algs" || it_fail "algorithms: no section for $op"
    "$CTL" algorithms "$op" >"$IT_DIR/alg1" || it_fail "algorithms $op failed"
    grep -qF "$(cat "$IT_DIR/alg1")" "$IT_DIR/algs" ||
        it_fail "algorithms $op differs from its section of algorithms"
done
grep -q "(no formula)" "$IT_DIR/algs" && it_fail "a row has no cost formula"
"$CTL" algorithms allreduce >"$IT_DIR/alg1"
grep -qx "  butterfly          (log2 p2 + 2 \[P != p2\]) (L + g(n) + gamma n)" \
    "$IT_DIR/alg1" || it_fail "algorithms allreduce: butterfly's formula"
grep -qx "                     busiest port: (log2 p2 + \[P != p2\]) gap(n)" \
    "$IT_DIR/alg1" || it_fail "algorithms allreduce: butterfly's busiest port"
grep -qE "^ +rules row [0-9]+: any P, n <= 4 KiB$" "$IT_DIR/alg1" ||
    it_fail "algorithms allreduce: butterfly's rule"
grep -q "rules: none; runs when forced" "$IT_DIR/alg1" ||
    it_fail "algorithms allreduce: rabenseifner is not marked as forced only"
"$CTL" algorithms alltoallv | grep -q bruck &&
    it_fail "algorithms alltoallv lists bruck, which has no v-variant"
expect_err "algorithms allfoo" 2 \
    "collsctl algorithms: unknown operation allfoo (one of: barrier bcast" \
    "$CTL" algorithms allfoo
expect_err "bench --algo nosuch" 2 \
    "collsctl bench: unknown algorithm nosuch for allreduce (one of: butterfly tournament ring rabenseifner)" \
    "$CTL" bench allreduce --algo nosuch
expect_err "bench --algo ring:0" 2 "collsctl bench: bad algorithm 'ring:0'" \
    "$CTL" bench allreduce --algo ring:0
it_log "1b. algorithms: checked"

# 1c. The bash completion made from the tables completes commands,
#     options, option values and operands.
"$CTL" completion bash >"$IT_DIR/completion.bash" ||
    it_fail "completion bash failed"
bash -n "$IT_DIR/completion.bash" || it_fail "completion: not valid bash"
if [ -f "$IT_B/completion/collsctl" ]; then
    cmp -s "$IT_DIR/completion.bash" "$IT_B/completion/collsctl" ||
        it_fail "completion/collsctl (to install) differs from completion bash"
fi
# complete WORDS...: what the completion offers for the last word.
complete_words()
{
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        _collsctl; echo "${COMPREPLY[*]}"' _ "$IT_DIR/completion.bash" "$@"
}
check_completion()
{
    local want=$1 got
    shift
    got=$(complete_words "$@")
    [ "$got" = "$want" ] || it_fail "completion of '$*': '$got', not '$want'"
}
check_completion "bench" collsctl be
check_completion "ping pingpong" collsctl --socket /x pi
check_completion "--compress" collsctl bench --comp
check_completion "auto" collsctl bench allreduce --compress a
check_completion "allreduce allgather allgatherv alltoall alltoallv" \
    collsctl bench all
check_completion "reduce_scatter" collsctl algorithms reduce_
check_completion "--count" collsctl ping --co
check_completion "" collsctl ping --count ""
check_completion "default direct" collsctl pingpong --route d
check_completion "delete" collsctl help del
expect_err "completion fish" 2 "unknown shell fish (one of: bash)" \
    "$CTL" completion fish
it_log "1c. completion: checked"

# 2. No daemon: the socket's path and the fix, from --socket and from
#    COLLS_SOCKET; a socket file nobody listens on.
fix="start collsd, or give the socket of a running one with --socket PATH or COLLS_SOCKET"
expect_err "no daemon (COLLS_SOCKET)" 1 \
    "collsctl: cannot reach the daemon: no socket at $NONE; $fix" "$CTL" status
expect_err "no daemon (--socket)" 1 \
    "collsctl: cannot reach the daemon: no socket at $IT_DIR/other; $fix" \
    "$CTL" --socket "$IT_DIR/other" hosts
python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.close()' \
    "$IT_DIR/stale.sock"
expect_err "stale socket" 1 \
    "collsctl: cannot reach the daemon at $IT_DIR/stale.sock: Connection refused; $fix" \
    "$CTL" --socket "$IT_DIR/stale.sock" ps
unset COLLS_SOCKET
it_log "2. no daemon: checked"

# 3. --json of every listing verb.
it_start 2 || exit 1
it_wait_hosts 2 || exit 1
# json_check WHAT PYTHON-EXPR: the document on stdin parses and the
# expression (of d, the document) is true.
json_check()
{
    python3 -c 'import json, sys
d = json.load(sys.stdin)
if not eval(sys.argv[1]):
    print("not true:", sys.argv[1], "of", d, file=sys.stderr)
    sys.exit(1)' "$2" || it_fail "$1 --json: invalid or unexpected"
}
it_ctl 1 status --json | json_check status \
    'd["hid"] == 1 and d["name"] == "it1" and d["hosts_up"] == 2 and d["tasks"] >= 1'
it_ctl 1 hosts --json | json_check hosts \
    '[h["name"] for h in d] == ["it1", "it2"] and d[0]["self"] and not d[1]["self"] and all(h["state"] == "up" for h in d)'
it_ctl 2 ps -a --json | json_check ps \
    'any(t["name"] == "collsctl" and t["self"] and t["hid"] == 2 for t in d)'
it_ctl 1 groups --json | json_check groups 'isinstance(d, list)'
it_ctl 1 stats --json | json_check stats 'isinstance(d, dict)'
it_ctl 1 bench allreduce -n 2 --sockets "$(it_sock 1),$(it_sock 2)" \
    --sizes 4:64 --runs 1 --iters 2 --json >"$IT_DIR/bench.json" ||
    it_fail "bench --json failed"
json_check bench \
    'd["op"] == "allreduce" and d["processes"] == 2 and [r["bytes"] for r in d["results"]] == [4, 16, 64] and all(r["us_per_op"] > 0 and r["algorithm"] for r in d["results"])' \
    <"$IT_DIR/bench.json"
# --latency: a rooted operation runs P - 1 times as often (chained
# through each rank but the root in turn), the others as often as without
# it (each after a barrier, and as many barriers alone).
# lat_check OP P TIMES: OP of P members over the two daemons with
# --latency traced (COLLS_TRACE) every member TIMES times (3 warm-ups and
# 3 runs of 4 per chain), and a figure.  The figure is a difference of
# two timed runs, at least 0 (bench_latency_run): with so few operations
# it can be 0 (an allreduce of 1 KiB under ASan once measured below the
# noise of the barriers alone), so it is checked to be a number >= 0, not
# > 0; how often each operation ran is the check of the method.
lat_check()
{
    COLLS_TRACE=1 it_ctl 1 bench "$1" -n "$2" --latency --json \
        --sockets "$(it_sock 1),$(it_sock 2)" --sizes 1k --runs 3 \
        --iters 4 >"$IT_DIR/lat.json" 2>"$IT_DIR/lat.err" ||
        it_fail "bench $1 --latency failed: $(cat "$IT_DIR/lat.err")"
    json_check "bench $1 --latency" \
        "d['method'] == '$4' and len(d['results']) == 1 and d['results'][0]['us_per_op'] >= 0" \
        <"$IT_DIR/lat.json"
    n=$(grep -c "^colls-trace .* op=$1 " "$IT_DIR/lat.err")
    [ "$n" = "$3" ] ||
        it_fail "bench $1 -n $2 --latency ran $n operations, not $3"
}
lat_check bcast 3 $((3 * 2 * (3 + 3 * 4))) latency
lat_check reduce 3 $((3 * 2 * (3 + 3 * 4))) latency
lat_check scatter 2 $((2 * 1 * (3 + 3 * 4))) latency
# (and the allreduce of each size's figure)
lat_check allreduce 3 $((3 * (3 + 3 * 4 + 1))) latency
it_log "3. --json: checked"

# 4. Terminal codes and progress.
timeout 3 "$CTL" --socket "$(it_sock 1)" stats --watch 1 >"$IT_DIR/watch.txt"
grep -q "$(printf '\033')" "$IT_DIR/watch.txt" &&
    it_fail "stats --watch wrote terminal codes into a file"
[ -s "$IT_DIR/watch.txt" ] || it_fail "stats --watch printed nothing"
it_ctl 1 pingpong --min 8 --max 64 --reps 3 >/dev/null 2>"$IT_DIR/pp.err" ||
    it_fail "pingpong failed: $(cat "$IT_DIR/pp.err")"
[ -s "$IT_DIR/pp.err" ] && it_fail "pingpong wrote to a stderr that is not a terminal: $(od -c "$IT_DIR/pp.err" | head -3)"
if command -v script >/dev/null; then
    script -qec "$CTL --socket $(it_sock 1) pingpong --min 8 --max 64 --reps 3" \
        /dev/null >"$IT_DIR/pp.tty" </dev/null
    grep -q "$(printf '\r\033')\[Kcollsctl pingpong: 64 bytes, 3 round trips" "$IT_DIR/pp.tty" ||
        it_fail "pingpong on a terminal: no progress line: $(od -c "$IT_DIR/pp.tty" | head -5)"
    script -qec "$CTL --socket $(it_sock 1) bench barrier -n 2 --runs 1 --iters 2" \
        /dev/null >"$IT_DIR/bench.tty" </dev/null
    grep -q "$(printf '\r\033')\[Kcollsctl bench: 0 bytes, 1 runs of 2 ops" "$IT_DIR/bench.tty" ||
        it_fail "bench on a terminal: no progress line: $(od -c "$IT_DIR/bench.tty" | head -5)"
else
    it_log "4. no script(1): progress on a terminal not checked"
fi
it_log "4. terminal codes and progress: checked"

# 5. Permission, as uid 65534 against root's daemon 1.
as_nobody()
{
    timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
    as_nobody "$CTL" --version >/dev/null 2>&1; then
    expect_err "EACCES" 1 \
        "collsctl: cannot reach the daemon at $(it_sock 1): permission denied (you are uid 65534; the daemon lets in its own uid and those its operator names with collsd --allow-uid or --allow-gid: ask for --allow-uid 65534)" \
        as_nobody "$CTL" --socket "$(it_sock 1)" status
    # opened up by hand: now the daemon itself refuses the uid
    chmod 755 "$IT_DIR" "$IT_DIR/d1"
    chmod 777 "$(it_sock 1)"
    expect_err "refused uid" 1 \
        "collsctl: the daemon refuses uid 65534; its operator can let you in with collsd --allow-uid 65534 (or --allow-gid)" \
        as_nobody "$CTL" --socket "$(it_sock 1)" hosts
    chmod 700 "$IT_DIR/d1"
    it_log "5. permission: checked"
else
    it_log "5. not root, no setpriv, or uid 65534 cannot run collsctl: permission messages not checked"
fi
it_finish
