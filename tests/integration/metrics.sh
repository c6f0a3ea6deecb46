#!/bin/bash
# metrics.sh -- the daemon's HTTP statistics (--http ADDR:PORT), on a
# machine of 3 loopback daemons where daemon 1 serves HTTP:
#   1. GET /metrics, after an allreduce bench over the 3 daemons, is
#      well-formed Prometheus text following its naming conventions:
#      every sample line is "name[{labels}] value", every family opens
#      with one HELP line and then one TYPE line, and its samples follow
#      without another family in between (the per-peer families list both
#      peers, the per-algorithm ones the allreduce runs); counters end in
#      _total, no name carries a unit other than the base ones (no _us,
#      _ms); histograms have cumulative buckets whose +Inf bucket equals
#      their count; collsd_build_info names this collsd's version, and
#      process_start_time_seconds lies between the moments before and
#      after the daemon's start;
#   2. the figures are live: collsd_tasks counts an attached task, and a
#      `collsctl ping` of 20 echoes moves collsd_dgrams_out_total and the
#      peer's bytes by at least that much, and its RTT histogram;
#   3. GET /stats.json is the JSON of `collsctl stats --json` (same keys);
#   4. other paths get 404, other methods 405;
#   5. garbage and a half-sent request on the HTTP port do not hurt the
#      daemon: it still answers HTTP and forwards messages.
. "${top_srcdir:-.}/tests/integration/lib.sh"

it_setup
HP=$(it_free_port)
while ss -Hltn "sport = :$HP" 2>/dev/null | grep -q .; do
    HP=$(it_free_port)
done
it_start 3 || exit 1
it_wait_hosts 3 || exit 1
# daemon 1 again, now with the HTTP listener
it_kill 1 TERM
IT_OPTS="--http 127.0.0.1:$HP"
t_before=$(date +%s)
it_restart 1 || exit 1
t_after=$(date +%s)
it_wait_hosts 3 || exit 1

# http METHOD PATH: the whole response (headers and body) on stdout.
http()
{
    timeout 10 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$0" || exit 1
        printf "%s %s HTTP/1.0\r\nHost: localhost\r\n\r\n" "$1" "$2" >&3
        cat <&3' "$HP" "$1" "$2" | tr -d '\r'
}

# body of a response
body()
{
    sed '1,/^$/d'
}

# value of the sample (exact name with labels) in a /metrics body
sample()
{
    awk -v n="$1" '$1 == n { print $2; f = 1 } END { if (!f) print -1 }'
}

# 1. Format.
socks="$(it_sock 1),$(it_sock 2),$(it_sock 3)"
# (--hier: the daemons run them; in auto mode small ones run among the
# tasks, libclient/dcoll.c, and no daemon counts them)
it_ctl 1 bench allreduce -n 3 --sockets "$socks" --sizes 4:4K --runs 1 --hier \
    --iters 5 >"$IT_DIR/bench.log" 2>&1 || it_fail "collsctl bench failed"
resp=$(http GET /metrics)
echo "$resp" | head -1 | grep -q '^HTTP/1\.[01] 200' ||
    it_fail "GET /metrics: $(echo "$resp" | head -1)"
echo "$resp" | grep -qi '^Content-Type: text/plain; version=0.0.4' ||
    it_fail "GET /metrics: no Prometheus content type"
m=$(echo "$resp" | body)
bad=$(echo "$m" | awk '
    /^# HELP / {
        if (NF < 4) { print "HELP without text: " $0; next }
        if ($3 in helped) { print "second HELP of " $3; next }
        helped[$3] = 1; help = $3; next }
    /^# TYPE / {
        if (NF != 4 || ($4 != "counter" && $4 != "gauge" && $4 != "histogram"))
            { print "bad TYPE: " $0; next }
        if ($3 in typed) { print "second TYPE of " $3; next }
        if ($3 != help) print "TYPE of " $3 " without its HELP line before"
        if ($4 == "counter" && $3 !~ /_total$/) print "counter without _total: " $3
        if ($4 != "counter" && $3 ~ /_total$/) print $4 " named _total: " $3
        if ($3 ~ /_(us|ms|usec|msec|kb|mb)(_|$)/) print "not a base unit: " $3
        typed[$3] = 1; open = $3; type = $4; help = ""; next }
    /^#/ || /^$/ { next }
    {
        if ($0 !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [0-9]+(\.[0-9]+)?(e[-+][0-9]+)?$/)
            { print "bad sample: " $0; next }
        name = $1; sub(/\{.*/, "", name)
        fam = name
        if (type == "histogram") sub(/_(bucket|sum|count)$/, "", fam)
        if (fam != open) { print name " outside its family (open: " open ")" }
        n++
        if (type != "histogram") next
        # one series: the labels without le; buckets cumulative, +Inf = count
        key = $1; sub(/^[^{]*/, "", key); sub(/,?le="[^"]*"/, "", key)
        sub(/^\{,/, "{", key); sub(/^\{\}$/, "", key)
        key = fam key
        if (name ~ /_bucket$/) {
            if ($1 !~ /le="/) { print "bucket without le: " $0; next }
            if ((key in last) && $2 < last[key]) print "not cumulative: " $0
            last[key] = $2
            if ($1 ~ /le="\+Inf"/) inf[key] = $2
        } else if (name ~ /_count$/) {
            cnt[key] = $2
        } }
    END {
        if (n < 30) print "only " n + 0 " samples"
        for (k in cnt)
            if (!(k in inf) || inf[k] != cnt[k])
                print k ": +Inf bucket " inf[k] " but count " cnt[k]
        for (k in inf) if (!(k in cnt)) print k ": no count" }')
[ -z "$bad" ] || it_fail "Prometheus text: $bad"
for hid in 2 3; do
    [ "$(echo "$m" | sample "collsd_peer_up{hid=\"$hid\"}")" = 1 ] ||
        it_fail "collsd_peer_up of host $hid is not 1"
done
runs=$(echo "$m" | awk '$1 ~ /^collsd_coll_alg_runs_total\{op="allreduce",/ { s += $2 }
    END { print s + 0 }')
[ "$runs" -ge 15 ] ||
    it_fail "allreduce runs by algorithm: $runs, not 3 ranks x 5 iterations"
hc=$(echo "$m" | awk '$1 ~ /^collsd_coll_alg_duration_seconds_count\{op="allreduce",/ { s += $2 }
    END { print s + 0 }')
[ "$hc" -ge 15 ] ||
    it_fail "allreduce duration histogram counts $hc operations, not >= 15"
# seconds, not microseconds: 15 allreduces of at most 4 KiB on loopback
# take far less than 15 x 1000 s in all
echo "$m" | awk '$1 ~ /^collsd_coll_alg_duration_seconds_sum\{op="allreduce",/ { s += $2 }
    END { exit !(s > 0 && s < 15000) }' ||
    it_fail "allreduce durations are not in seconds: $(echo "$m" | grep '^collsd_coll_alg_duration_seconds_sum' | head -3)"
version=$("$IT_B/collsd" --version | awk '{ print $2 }')
echo "$m" | grep -qx "collsd_build_info{version=\"$version\",protocol=\"[0-9]*\"} 1" ||
    it_fail "collsd_build_info: $(echo "$m" | grep '^collsd_build_info')"
start=$(echo "$m" | sample process_start_time_seconds)
awk -v s="$start" -v a="$t_before" -v b="$t_after" \
    'BEGIN { exit !(s >= a - 1 && s <= b + 1) }' ||
    it_fail "process_start_time_seconds $start not between $t_before and $t_after"
it_log "1. /metrics: $(echo "$m" | grep -vc '^#') samples checked; allreduce runs $runs"

# 2. Live figures.
it_bg echo.log "$IT_B/collsctl" --socket "$(it_sock 1)" echo
for _ in $(seq 1 50); do
    [ -s "$IT_DIR/echo.log" ] && break
    sleep 0.1
done
m=$(http GET /metrics | body)
[ "$(echo "$m" | sample collsd_tasks)" = 1 ] ||
    it_fail "collsd_tasks with one task attached: $(echo "$m" | sample collsd_tasks)"
out0=$(echo "$m" | sample collsd_dgrams_out_total)
sent0=$(echo "$m" | sample 'collsd_peer_bytes_sent_total{hid="2"}')
rtt0=$(echo "$m" | sample 'collsd_peer_rtt_seconds_count{hid="2"}')
it_ctl 1 ping 2 -c 20 -s 1000 -i 1 >/dev/null ||
    it_fail "collsctl ping 2 failed"
m=$(http GET /metrics | body)
out1=$(echo "$m" | sample collsd_dgrams_out_total)
sent1=$(echo "$m" | sample 'collsd_peer_bytes_sent_total{hid="2"}')
rtt1=$(echo "$m" | sample 'collsd_peer_rtt_seconds_count{hid="2"}')
[ "$out1" -ge $((out0 + 20)) ] ||
    it_fail "dgrams_out went from $out0 to $out1 over 20 pings"
[ "$sent1" -ge $((sent0 + 20 * 1000)) ] ||
    it_fail "bytes sent to host 2 went from $sent0 to $sent1 over 20 x 1000 B"
# each echo acks its request: an RTT sample (unless it was resent)
[ "$rtt1" -ge $((rtt0 + 10)) ] ||
    it_fail "RTT samples of host 2 went from $rtt0 to $rtt1 over 20 pings"
it_log "2. live: dgrams_out $out0 -> $out1, bytes to host 2 $sent0 -> $sent1, RTT samples $rtt0 -> $rtt1"

# 3. /stats.json has the keys of collsctl stats --json.
resp=$(http GET /stats.json)
echo "$resp" | grep -qi '^Content-Type: application/json' ||
    it_fail "GET /stats.json: no JSON content type"
keys()
{
    grep -oE '"[a-z_]+":' | sort -u
}
k_http=$(echo "$resp" | body | keys)
k_ctl=$(it_ctl 1 stats --json | keys)
[ -n "$k_http" ] && [ "$k_http" = "$k_ctl" ] ||
    it_fail "/stats.json and collsctl stats --json differ in keys: $(diff <(echo "$k_http") <(echo "$k_ctl") | head -5)"
it_log "3. /stats.json: $(echo "$k_http" | wc -l) keys, as collsctl stats --json"

# 4. Errors.
st=$(http GET /nothing | head -1)
echo "$st" | grep -q ' 404 ' || it_fail "GET /nothing: $st"
st=$(http POST /metrics | head -1)
echo "$st" | grep -q ' 405 ' || it_fail "POST /metrics: $st"
it_log "4. errors: 404 and 405"

# 5. Garbage, and a client that stops half-way, then still served.
head -c 200000 /dev/urandom |
    timeout 10 bash -c 'cat >"/dev/tcp/127.0.0.1/$0"' "$HP" 2>/dev/null
timeout 10 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0"; printf "GET /met" >&3
    sleep 1' "$HP"
it_alive 1 || it_fail "daemon 1 died of garbage on its HTTP port"
http GET /metrics | head -1 | grep -q ' 200 ' ||
    it_fail "no /metrics after garbage"
out=$(it_ctl 1 pingpong --host 3 --min 8 --max 65536 --reps 20 --csv 2>&1) ||
    it_fail "pingpong after garbage: $out"
it_log "5. garbage: daemon alive, serving"

it_finish
