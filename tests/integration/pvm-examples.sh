#!/bin/bash
# pvm-examples.sh -- the C programs of Debian's pvm-examples (PVM 3.4.6),
# built unchanged against a pvm3.h and PVM libraries, run, and their
# output compared with what they print under real PVM
# (tests/pvm/expected/NAME.out, recorded with --real --record).
#
#   pvm-examples.sh            our pvm/pvm3.h, libgpvm3.la and libpvm3.la
#                              of the build tree (BUILD/pvm/, or BUILD/),
#                              on one collsd on loopback
#                              (skips with "libpvm3 not built" without them)
#   pvm-examples.sh --real     Debian's pvm3.h, -lgpvm3 -lpvm3, on a pvmd
#   pvm-examples.sh --real --record
#                              the same, writing tests/pvm/expected/
#   PVMEX_INCLUDE=DIR PVMEX_LIBS="..." PVMEX_LINK="cc"
#                              any other pvm3.h (directory) and libraries
#                              (PVMEX_LINK links; default: libtool's link
#                              with -no-install for ours, cc for --real)
#   PVMEX_ONLY="hello spmd"    only these examples
#
# The examples (sources from /usr/share/doc/pvm-examples/examples.tar.gz
# and gexamples.tar.gz, found with dpkg -L), how each is run from the
# directory they are built in, its standard input, and the example-specific
# normalisation (besides the common one below):
#
#   name      programs built      command             stdin   normalise
#   hello     hello hello_other   ./hello             -       host
#   master1   master1 slave1      ./master1           -       sort
#   spmd      spmd                ./pvm-run 4 spmd    -       dectid
#   gexample  gexample            ./gexample          "10 4"  -
#   trsg      trsg                ./trsg              "4 20"  -
#   gexamp    gexamp              ./gexamp 4          -       -
#   joinleave joinleave           ./joinleave 200     -       -
#   thb       thb tnb             ./thb 3             -       -
#   tjf       tjf                 ./tjf               -       -
#   tjl       tjl                 ./tjl               -       -
#   tst       tst                 ./tst               -       -
#
# hello spawns hello_other, master1 spawns 3 slave1 per host, gexample
# and trsg read their sizes from stdin and spawn copies of themselves,
# gexamp and thb spawn N-1 and N copies; spmd is PVM's console example
# ("spawn -4 -> spmd"), started here by pvm-run (below), a PVM program of
# this script that spawns N copies of a program, catches their output
# (pvm_catchout) and waits for their exits (pvm_notify PvmTaskExit).  The
# programs find each other by name: on collsd through the daemon's
# --spawn-path (the build directory of the examples, then the build
# tree's pvm/ and top directory for the group server), on PVM through the
# hostfile's ep= (the same directory, then /usr/lib/pvm3/lib for pvmgs).
# Every example runs on one host (one collsd, or one pvmd), so master1
# spawns 3 workers under both.
#
# Not run: the Fortran examples (fgexample, fmaster1/fslave1, fspmd, frsg,
# hitc), the X ones (xep, mtile); timing/timing_slave and the bwtest
# variants print measurements; inherit*, task0/task1/task_end, mbox, rme,
# lmbi/gmbi and mhf_server/mhf_tickle use contexts, mailboxes and message
# handlers (and lmbi, gmbi, task0, task1 link against internals of PVM's
# own libpvm3); starter does not compile with a current C compiler (exit()
# without its argument); gs and ge do not finish under PVM 3.4.6 either;
# ptest waits for a console.
#
# What legitimately differs between runs and systems, and how each output
# is normalised before it is compared (stdout and stderr together; stdout
# is a file, so it is flushed after stderr's lines):
#   - output caught from spawned tasks is prefixed "[tTID] " by PVM and by
#     collsd: the prefix is removed, and PVM's "BEGIN"/"EOF" lines around
#     each task's output are dropped;
#   - tids: "t40002"-style (t and 5 or more hex digits) become tTID and
#     "0x40012"-style become 0xTID; with "dectid", decimal numbers of 6 or
#     more digits (tids printed with %d) become TID;
#   - runs of spaces become one (the %6d columns of a tid change width),
#     and a space at the end of a line goes;
#   - "host": the machine's host name (hostname) becomes HOST;
#   - "sort": the lines are sorted (master1 prints its workers' results in
#     the order they arrive).
# Exit codes are not compared (spmd exits 1 on purpose, trsg's main falls
# off its end); a run that times out (60 s) or dies of a signal fails.
#
# Installs pvm, pvm-dev and pvm-examples when missing (test-only
# dependencies); skips with one line when that is not possible.
top_srcdir=${top_srcdir:-$(dirname "$0")/../..}
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/netns/lib.sh"

SRC=$(cd "$top_srcdir" && pwd -P)
B=$(cd "${top_builddir:-.}" && pwd -P)
EXPECTED=$SRC/tests/pvm/expected
REAL=0
RECORD=0
for a in "$@"; do
    case "$a" in
    --real) REAL=1 ;;
    --record) RECORD=1 ;;
    *)
        echo "usage: pvm-examples.sh [--real [--record]]" >&2
        exit 2
        ;;
    esac
done
if [ "$RECORD" = 1 ] && [ "$REAL" = 0 ]; then
    echo "pvm-examples.sh: --record records real PVM's output: add --real" >&2
    exit 2
fi

# name|programs|command|stdin|normalise -- the table above.
EXAMPLES='hello|hello hello_other|./hello||host
master1|master1 slave1|./master1||sort
spmd|spmd|./pvm-run 4 spmd||dectid
gexample|gexample|./gexample|10 4|
trsg|trsg|./trsg|4 20|
gexamp|gexamp|./gexamp 4||
joinleave|joinleave|./joinleave 200||
thb|thb tnb|./thb 3||
tjf|tjf|./tjf||
tjl|tjl|./tjl||
tst|tst|./tst||'

# Our pvm3 library: BUILD/pvm/ (where Makefile.am builds it) or BUILD/.
OURS=""
for d in "$B/pvm" "$B"; do
    [ -e "$d/libpvm3.la" ] && [ -e "$d/libgpvm3.la" ] && OURS=$d && break
done
if [ "$REAL" = 0 ] && [ -z "${PVMEX_LIBS:-}" ] && [ -z "$OURS" ]; then
    echo "SKIP: ${0##*/}: libpvm3 not built" >&2
    exit 77
fi
if [ "$(id -u)" = 0 ]; then
    ns_packages pvm pvm-dev pvm-examples || exit 77
fi
for p in pvm-examples pvm-dev; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
        grep -q "install ok installed"; then
        echo "SKIP: ${0##*/}: $p is not installed" >&2
        exit 77
    fi
done
TARS=$(dpkg -L pvm-examples | grep -E '/g?examples\.tar\.gz$')
if [ -z "$TARS" ]; then
    echo "SKIP: ${0##*/}: pvm-examples has no example sources" >&2
    exit 77
fi

SANFLAGS=
if [ "$REAL" = 1 ]; then
    INC=${PVMEX_INCLUDE:-/usr/include}
    LIBS=${PVMEX_LIBS:--lgpvm3 -lpvm3}
    LINK=${PVMEX_LINK:-cc}
else
    INC=${PVMEX_INCLUDE:-$SRC/pvm}
    LIBS=${PVMEX_LIBS:-$OURS/libgpvm3.la $OURS/libpvm3.la}
    LINK=${PVMEX_LINK:-$B/libtool --mode=link --quiet cc -no-install}
    # A sanitizer build of our library (configure --enable-sanitizers)
    # needs its runtime first in the programs that link it: the examples
    # are linked with the same -fsanitize flags then, but not compiled
    # with them (tjf.c writes one past an array, a bug of the example).
    SANFLAGS=$(sed -n 's/^COLLS_LDFLAGS = *//p' "$B/Makefile" 2>/dev/null |
        grep -o -- '-fsanitize=[^ ]*' | head -1)
fi

it_setup
EX=$IT_DIR/ex
mkdir -p "$EX" "$IT_DIR/src"
for t in $TARS; do
    tar -xzf "$t" -C "$IT_DIR/src" || it_fail "cannot unpack $t"
done

# pvm-run N PROG ARGS...: spawns N copies of PROG, prints their output
# (pvm_catchout) and waits until every copy has exited (pvm_notify).
cat >"$IT_DIR/pvm-run.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <pvm3.h>

int
main(int argc, char **argv)
{
    int n, tids[64], i, started;

    if (argc < 3 || (n = atoi(argv[1])) < 1 || n > 64) {
        fprintf(stderr, "usage: pvm-run N PROGRAM [ARGS...]\n");
        return 2;
    }
    if (pvm_mytid() < 0)
        return 2;
    pvm_catchout(stdout);
    started = pvm_spawn(argv[2], argc > 3 ? argv + 3 : (char **)0,
                        PvmTaskDefault, "", n, tids);
    for (i = started < 0 ? 0 : started; i < n; i++)
        printf("pvm-run: copy %d of %s did not start: %d\n", i, argv[2],
               started < 0 ? started : tids[i]);
    if (started > 0) {
        pvm_notify(PvmTaskExit, 9999, started, tids);
        for (i = 0; i < started; i++)
            pvm_recv(-1, 9999);
    }
    pvm_exit();
    return started == n ? 0 : 1;
}
EOF

# Compiles and links PROG (from SOURCE.c) into EX.
build()
{
    local prog=$1 c=$2
    # ARCHCFLAGS of PVM's LINUX64.def that the examples test; -w: the
    # examples are K&R-era C (implicit int and declarations).
    # shellcheck disable=SC2086
    cc -O2 -w -DHASSTDLIB -DSYSVSTR -I"$INC" -c -o "$EX/$prog.o" "$c" \
        2>"$EX/$prog.err" &&
        $LINK $SANFLAGS -o "$EX/$prog" "$EX/$prog.o" $LIBS 2>>"$EX/$prog.err"
}

build pvm-run "$IT_DIR/pvm-run.c" ||
    it_fail "cannot build pvm-run: $(head -3 "$EX/pvm-run.err")"
while IFS='|' read -r name progs _; do
    for p in $progs; do
        c=$(ls "$IT_DIR"/src/*/"$p.c" 2>/dev/null | head -1)
        if [ -z "$c" ]; then
            it_fail "$name: no $p.c in pvm-examples"
        elif ! build "$p" "$c"; then
            it_fail "$name: $p.c does not build: $(head -3 "$EX/$p.err")"
        fi
    done
done <<<"$EXAMPLES"
[ "$IT_FAILED" = 0 ] || it_finish

# The virtual machine: one pvmd (a private PVM_TMP, so that no other pvmd
# of this user is disturbed), or one collsd.
if [ "$REAL" = 1 ]; then
    export PVM_ROOT=/usr/lib/pvm3 PVM_ARCH=LINUX64 PVM_ALLOW_ROOT=1
    export PVM_TMP=$IT_DIR/pvmtmp
    mkdir -p "$PVM_TMP"
    printf '* ep=%s:/usr/lib/pvm3/lib\n%s\n' "$EX" "$(hostname)" \
        >"$IT_DIR/pvm.hosts"
    it_bg pvmd.log pvmd "$IT_DIR/pvm.hosts"
    PVMD_PID=$IT_LASTPID
    # The console starts a pvmd of its own when it finds none: ask it
    # only once pvmd has written its address file.
    up=0
    for _ in $(seq 1 50); do
        [ -e "$PVM_TMP/pvmd.$(id -u)" ] &&
            echo conf | timeout 10 pvm 2>/dev/null | grep -q '^1 host' && {
            up=1
            break
        }
        sleep 0.2
    done
    [ "$up" = 1 ] || {
        it_fail "pvmd did not start"
        cat "$IT_DIR/pvmd.log" >&2
        it_finish
    }
    SYSTEM="PVM $(dpkg-query -W -f='${Version}' pvm)"
else
    it_start 1 --spawn-path "$EX:$B/pvm:$B" || it_finish
    export COLLS_SOCKET
    COLLS_SOCKET=$(it_sock 1)
    SYSTEM="collsd"
fi

# Normalises the output of example $1 (flags $2) from stdin; see above.
normalise()
{
    local flags=$2 host
    host=$(hostname)
    sed -E -e 's/^\[t[0-9a-f]+\] //' -e '/^(BEGIN|EOF)$/d' \
        -e 's/\bt[0-9a-f]{5,}\b/tTID/g' -e 's/\b0x[0-9a-f]{5,}\b/0xTID/g' |
        if [[ " $flags " == *" dectid "* ]]; then
            sed -E 's/\b[0-9]{6,}\b/TID/g'
        else
            cat
        fi |
        if [[ " $flags " == *" host "* ]]; then
            sed "s/\b$host\b/HOST/g"
        else
            cat
        fi |
        sed -E -e 's/ +/ /g' -e 's/ $//' |
        if [[ " $flags " == *" sort "* ]]; then
            LC_ALL=C sort
        else
            cat
        fi
}

[ "$RECORD" = 1 ] && mkdir -p "$EXPECTED"
n=0
while IFS='|' read -r name _ cmd input flags; do
    if [ -n "${PVMEX_ONLY:-}" ] && [[ " $PVMEX_ONLY " != *" $name "* ]]; then
        continue
    fi
    n=$((n + 1))
    out=$IT_DIR/$name.out
    # shellcheck disable=SC2086
    (cd "$EX" && printf '%s\n' $input | timeout 60 $cmd) >"$out.raw" 2>&1
    rc=$?
    normalise "$name" "$flags" <"$out.raw" >"$out"
    if [ "$rc" -ge 124 ]; then
        it_fail "$name ($cmd) on $SYSTEM: exit status $rc (timeout or signal)"
        tail -5 "$out.raw" >&2
    elif [ "$RECORD" = 1 ]; then
        cp "$out" "$EXPECTED/$name.out"
        it_log "$name: recorded ($(wc -l <"$out") lines)"
    elif ! diff -u "$EXPECTED/$name.out" "$out" >"$out.diff"; then
        it_fail "$name ($cmd) on $SYSTEM: output differs from $EXPECTED/$name.out"
        head -20 "$out.diff" >&2
    else
        it_log "$name: same output as PVM's on $SYSTEM"
    fi
done <<<"$EXAMPLES"
[ "$n" -gt 0 ] || it_fail "no example selected by PVMEX_ONLY=$PVMEX_ONLY"

if [ "$REAL" = 1 ]; then
    (echo halt | timeout 10 pvm) >/dev/null 2>&1
    it_wait "$PVMD_PID" 10 2>/dev/null
fi
it_finish
