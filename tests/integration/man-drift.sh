#!/bin/bash
# man-drift.sh -- the manual pages in docs/man against what they document;
# fails naming exactly what is missing where:
#   1. every option of `collsd --help` (config_table[], daemon/config.c)
#      is in collsd.8;
#   2. every command of `collsctl --help` has a section (.SS COMMAND) in
#      collsctl.1, holding every option (each spelling) of its `collsctl
#      COMMAND --help`; the options before the command are in the page;
#   3. every public function of libclient/colls.h (its COLLS_EXTERN
#      declarations) has a page name docs/man/NAME.3, listed in
#      dist_man_MANS: its family's page, which names it (NAME section)
#      and declares it (SYNOPSIS), or a .so link to such a page;
#   4. every page of docs/man is installed (dist_man_MANS), and groff
#      formats each without a warning.
# Needs no daemon.
. "${top_srcdir:-.}/tests/integration/lib.sh"

it_setup
MAN=${top_srcdir:-.}/docs/man
MK=${top_srcdir:-.}/Makefile.am
HDR=${top_srcdir:-.}/libclient/colls.h

# The text of a page without roff's escapes for dashes and fonts.
plain()
{
    sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(aq/'"'"'/g' "$1"
}

# has TEXT WORD: TEXT holds WORD, not as part of a longer option name.
has()
{
    grep -qE -- "(^|[^A-Za-z0-9_-])$2([^A-Za-z0-9_-]|\$)" <<<"$1"
}

# 1. collsd options.
page=$(plain "$MAN/collsd.8")
n=0
for o in $("$IT_B/collsd" --help | grep -oE '^  --[a-z0-9-]+'); do
    n=$((n + 1))
    has "$page" "$o" ||
        it_fail "collsd option $o (collsd --help) is not in docs/man/collsd.8"
done
[ "$n" -ge 30 ] || it_fail "collsd --help listed only $n options"
it_log "1. collsd.8: $n options checked"

# 2. collsctl commands and their options.
page=$(plain "$MAN/collsctl.1")
verbs=$("$IT_B/collsctl" --help | sed -n '/^commands:/,/^$/p' |
    sed -n 's/^  \([a-z]\+\) .*/\1/p')
for o in $("$IT_B/collsctl" --help | sed -n '/^options:/,/^$/p' |
    grep -oE '^ +(-[a-zA-Z], )?--[a-z-]+' | tr -d ',' | tr ' ' '\n'); do
    has "$page" "$o" ||
        it_fail "collsctl option $o (collsctl --help) is not in docs/man/collsctl.1"
done
nv=0
no=0
for v in $verbs; do
    nv=$((nv + 1))
    sect=$(sed -n "/^\.SS $v\$/,/^\.S[SH] /p" <<<"$page" | sed '$d')
    if [ -z "$sect" ]; then
        it_fail "collsctl command $v has no section '.SS $v' in docs/man/collsctl.1"
        continue
    fi
    for o in $("$IT_B/collsctl" "$v" --help | sed -n '/^options:/,/^$/p' |
        grep -oE '^ +(-[a-zA-Z], |-[a-zA-Z] |-[a-zA-Z]$)?(--[a-z-]+)?' |
        tr -d ',' | tr ' ' '\n' | grep -v '^$'); do
        case $o in -h | --help) continue ;; esac
        no=$((no + 1))
        has "$sect" "$o" ||
            it_fail "collsctl $v option $o (collsctl $v --help) is not in the section '.SS $v' of docs/man/collsctl.1"
    done
done
[ "$nv" -ge 15 ] || it_fail "collsctl --help listed only $nv commands"
it_log "2. collsctl.1: $nv commands, $no options checked"

# 3. Public functions of colls.h.
fns=$(grep -v "^#" "$HDR" | tr "\n" " " | grep -oE 'COLLS_EXTERN [^;(]*\(' |
    sed -E 's/.*[ *]([a-z_0-9]+) *\($/\1/' | sort -u)
nf=0
for f in $fns; do
    nf=$((nf + 1))
    if [ ! -f "$MAN/$f.3" ]; then
        it_fail "$f (libclient/colls.h) has no page: add docs/man/$f.3 (a family page, or '.so man3/FAMILY.3') and list it in dist_man_MANS (Makefile.am)"
        continue
    fi
    grep -q "docs/man/$f\.3\b" "$MK" ||
        it_fail "docs/man/$f.3 is not in dist_man_MANS (Makefile.am): make install leaves out the page of $f"
    target=$f
    if head -1 "$MAN/$f.3" | grep -q '^\.so '; then
        target=$(head -1 "$MAN/$f.3" | sed -E 's|^\.so man3/([a-z_0-9]+)\.3$|\1|')
        if [ ! -f "$MAN/$target.3" ]; then
            it_fail "docs/man/$f.3 links to a page that does not exist: $(head -1 "$MAN/$f.3")"
            continue
        fi
    fi
    text=$(plain "$MAN/$target.3")
    sed -n '/^\.SH NAME/,/^\.SH /p' <<<"$text" | grep -qE "(^|[ ,])$f(,|\$| )" ||
        it_fail "$f is not in the NAME section of docs/man/$target.3"
    sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' <<<"$text" | grep -q "$f(" ||
        it_fail "$f is not declared in the SYNOPSIS of docs/man/$target.3"
done
[ "$nf" -ge 50 ] || it_fail "found only $nf functions in colls.h"
it_log "3. $nf functions of colls.h checked"

# 4. Every page installed, and clean for groff.
for p in "$MAN"/*.[138]; do
    grep -q "docs/man/${p##*/}\b" "$MK" ||
        it_fail "docs/man/${p##*/} is not in dist_man_MANS (Makefile.am)"
done
if command -v groff >/dev/null; then
    for p in "$MAN"/*.[138]; do
        head -1 "$p" | grep -q '^\.so ' && continue
        w=$(groff -man -Tutf8 -ww -z "$p" 2>&1)
        [ -z "$w" ] || it_fail "groff warns about docs/man/${p##*/}: $w"
    done
else
    it_log "4. no groff: formatting not checked"
fi
it_finish
