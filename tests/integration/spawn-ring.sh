# tests/integration/spawn-ring.sh -- the check of `collsctl spawn -n 6
# examples/ring` over hosts 1, 2 and 3 (sourced by the loopback and the
# emulated-hosts spawn tests).
#
# spawn_ring_problems OUT: prints what is wrong with OUT (the output of
# collsctl spawn), one problem a line, nothing when it is right: each
# rank's line, copies on all three hosts, "exit 0" for each copy.
spawn_ring_problems()
{
    local out=$1 r hosts
    for r in 1 2 3 4 5; do
        echo "$out" | grep -Eq "^\[t[0-9a-f]+\] ring: rank $r of 6 \(t[0-9a-f]+, host [123]\): token $r$" ||
            echo "ring: no line of rank $r"
    done
    echo "$out" | grep -Eq "^\[t[0-9a-f]+\] ring: rank 0 of 6 .*: the token came back as 6$" ||
        echo "ring: no line of rank 0"
    [ "$(echo "$out" | grep -Ec '^copy [0-5]: t[0-9a-f]+ exit 0$')" = 6 ] ||
        echo "ring: not six 'exit 0' lines"
    hosts=$(echo "$out" | sed -n 's/.*(t[0-9a-f]*, host \([0-9]\)).*/\1/p' |
        sort -u | tr -d '\n')
    [ "$hosts" = 123 ] || echo "ring: copies on hosts '$hosts', not 1, 2 and 3"
}
