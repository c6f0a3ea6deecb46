/*
 * fuzz-plogp.c -- the parameter file's parser (daemon/plogp.c,
 * plogp_parse), as a daemon reads --params-file at start.
 *
 * The input is the file's text.  Checked (abort() on failure): nothing
 * crashes, leaks or reads out of bounds; a file the parser takes passes
 * plogp_check, and written back (plogp_format) parses again to the same
 * values; a refused one names a line.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon/plogp.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_PLOGP_MAX 8192

int
fuzz_plogp(const uint8_t *data, size_t size)
{
    struct plogp_params p, q;
    char buf[4096];
    int bad, len;
    size_t i;

    if (size > FUZZ_PLOGP_MAX)
        return 0;
    if (plogp_parse((const char *)data, size, &p, &bad) != 0) {
        if (bad < 1)
            abort();
        return 0;
    }
    if (bad != 0 || plogp_check(&p) != 0)
        abort();
    len = plogp_format(&p, buf, sizeof(buf));
    if (len <= 0 || plogp_parse(buf, (size_t)len, &q, &bad) != 0)
        abort();
    if (q.epoch != p.epoch || q.L != p.L || q.Ll != p.Ll || q.n != p.n ||
        q.gamma != p.gamma || q.hop_us != p.hop_us ||
        q.hop_byte_us != p.hop_byte_us)
        abort();
    for (i = 0; i < p.n; i++)
        if (q.m[i] != p.m[i] || q.g[i] != p.g[i] || q.gap[i] != p.gap[i] ||
            q.rtt[i] != p.rtt[i] || q.gl[i] != p.gl[i])
            abort();
    return 0;
}
