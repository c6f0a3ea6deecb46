/*
 * cmd_compress.c -- collsctl compress: tries FPC on a file of raw native-
 * endian doubles without a daemon.  Compresses, decompresses, checks the
 * round trip bit for bit, and reports the ratio, the speeds (median of
 * CMD_COMPRESS_REPS runs) and whether compressing would pay on 100 Mbit/s,
 * 1 Gbit/s and 10 Gbit/s links: sending raw takes bytes/rate, sending
 * compressed takes compress + compressed bytes/rate + decompress (no
 * overlap of the three, i.e. the unpipelined case).
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "colls.h"
#include "proto/fpc.h"
#include "tools/collsctl.h"

#define CMD_COMPRESS_REPS      5
#define CMD_COMPRESS_MAX_BLOCK (1ul << 31) /* bytes; FPC caps at 2^28 */
/* A number macro as a string, for the help text. */
#define CMD_COMPRESS_STR(x)  CMD_COMPRESS_STR_(x)
#define CMD_COMPRESS_STR_(x) #x
_Static_assert(FPC_DEFAULT_BLOCK * 8 == 524288, "the help of --block");

static double
cmd_compress_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Parses a decimal unsigned number in [lo, hi] from s; 0 or -1.
 */
static int
cmd_compress_num(const char *s, unsigned long lo, unsigned long hi,
                 unsigned long *out)
{
    char *end;
    unsigned long v;

    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/*
 * Reads all of f into a malloc'd buffer (*len bytes).  0 or -1 with errno
 * set.  Grows by doubling, so stdin of unknown size works.
 */
static int
cmd_compress_slurp(FILE *f, unsigned char **data, size_t *len)
{
    size_t cap = 1 << 16, n = 0, r;
    unsigned char *p = malloc(cap), *q;

    if (p == NULL)
        return -1;
    for (;;) {
        if (n == cap) {
            if (cap > SIZE_MAX / 2 || (q = realloc(p, cap * 2)) == NULL) {
                free(p);
                errno = ENOMEM;
                return -1;
            }
            p = q;
            cap *= 2;
        }
        r = fread(p + n, 1, cap - n, f);
        n += r;
        if (r == 0) {
            if (ferror(f)) {
                free(p);
                errno = EIO;
                return -1;
            }
            break;
        }
    }
    *data = p;
    *len = n;
    return 0;
}

/*
 * Times CMD_COMPRESS_REPS compressions and decompressions of v[0..n),
 * verifying each round trip; fills the median times (seconds) and the
 * compressed size.  Returns 0, or 1 after printing what went wrong.
 */
static int
cmd_compress_measure(const double *v, size_t n, unsigned bits, size_t block,
                     size_t *clen, double *tc, double *td)
{
    size_t cap = fpc_bound(n, block), m = 0;
    uint8_t *c = malloc(cap);
    double *d = malloc(n * sizeof(double));
    double t_c[CMD_COMPRESS_REPS], t_d[CMD_COMPRESS_REPS];
    int r, rc, ret = 1;

    if (c == NULL || d == NULL) {
        fprintf(stderr, "compress: out of memory\n");
        goto out;
    }
    for (r = 0; r < CMD_COMPRESS_REPS; r++) {
        double t0 = cmd_compress_now();

        rc = fpc_compress(v, n, bits, block, c, cap, clen);
        t_c[r] = cmd_compress_now() - t0;
        if (rc != 0) {
            fprintf(stderr, "compress: %s\n", colls_strerror(rc));
            goto out;
        }
        memset(d, 0, n * sizeof(double));
        t0 = cmd_compress_now();
        rc = fpc_decompress(c, *clen, d, n, &m);
        t_d[r] = cmd_compress_now() - t0;
        if (rc != 0) {
            fprintf(stderr, "compress: decompression failed: %s\n",
                    colls_strerror(rc));
            goto out;
        }
        if (m != n || memcmp(d, v, n * sizeof(double)) != 0) {
            fprintf(stderr,
                    "compress: round trip mismatch: %zu of %zu "
                    "doubles back, contents differ\n",
                    m, n);
            goto out;
        }
    }
    /* A floor of 1 ns keeps the speeds finite on tiny inputs. */
    *tc = collsctl_median(t_c, CMD_COMPRESS_REPS) + 1e-9;
    *td = collsctl_median(t_d, CMD_COMPRESS_REPS) + 1e-9;
    ret = 0;
out:
    free(c);
    free(d);
    return ret;
}

/* Prints raw vs compressed transfer times on a few link speeds. */
static void
cmd_compress_links(size_t raw, size_t comp, double tc, double td)
{
    static const struct {
        const char *name;
        double bps;
    } links[] = {
        {"100 Mbit/s", 100e6},
        {"1 Gbit/s", 1e9},
        {"10 Gbit/s", 10e9},
    };
    size_t i;

    printf("%-11s %12s %24s  %s\n", "link", "raw send",
           "compress+send+decompress", "compress?");
    for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
        double t_raw = (double)raw * 8 / links[i].bps;
        double t_comp = tc + (double)comp * 8 / links[i].bps + td;

        printf("%-11s %9.3f ms %21.3f ms  %s\n", links[i].name, t_raw * 1e3,
               t_comp * 1e3, t_comp < t_raw ? "yes" : "no");
    }
}

/*
 * collsctl compress [--table-bits N] [--block BYTES] FILE|-
 * Exit status: 0 done, 1 I/O error or round-trip failure, 2 usage.
 */
static int
cmd_compress_exec(int argc, char **argv)
{
    unsigned long bits = FPC_DEFAULT_TABLE_BITS;
    unsigned long block = (unsigned long)FPC_DEFAULT_BLOCK * 8;
    const char *path = NULL;
    unsigned char *data = NULL;
    double *v = NULL, tc = 0, td = 0;
    size_t len = 0, n, clen = 0;
    char allowed[80];
    FILE *f;
    int opt, ret = 1;

    optind = 1;
    while ((opt = collsctl_getopt(argc, argv, &cmd_compress)) != -1) {
        switch (opt) {
        case 'b':
            if (cmd_compress_num(optarg, FPC_MIN_TABLE_BITS, FPC_MAX_TABLE_BITS,
                                 &bits) != 0) {
                snprintf(allowed, sizeof(allowed),
                         "a whole number from %d to %d", FPC_MIN_TABLE_BITS,
                         FPC_MAX_TABLE_BITS);
                return collsctl_badopt(&cmd_compress, opt, optarg, allowed);
            }
            break;
        case 'B':
            if (cmd_compress_num(optarg, 8, CMD_COMPRESS_MAX_BLOCK, &block) !=
                    0 ||
                block % 8 != 0) {
                snprintf(allowed, sizeof(allowed),
                         "a multiple of 8 from 8 to %lu bytes",
                         CMD_COMPRESS_MAX_BLOCK);
                return collsctl_badopt(&cmd_compress, opt, optarg, allowed);
            }
            break;
        default:
            return collsctl_usage(&cmd_compress);
        }
    }
    if (optind != argc - 1)
        return collsctl_usage(&cmd_compress);
    path = argv[optind];

    f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "compress: %s: %s\n", path, strerror(errno));
        return 1;
    }
    if (cmd_compress_slurp(f, &data, &len) != 0) {
        fprintf(stderr, "compress: %s: %s\n", path, strerror(errno));
        if (f != stdin)
            fclose(f);
        return 1;
    }
    if (f != stdin)
        fclose(f);
    if (len % sizeof(double) != 0) {
        fprintf(stderr,
                "compress: %s: %zu bytes is not a whole number of "
                "doubles (8 bytes each)\n",
                path, len);
        goto out;
    }
    n = len / sizeof(double);
    if (n == 0) {
        printf("%s: empty, nothing to compress\n", path);
        ret = 0;
        goto out;
    }
    v = malloc(len); /* aligned for double, unlike an arbitrary buffer */
    if (v == NULL) {
        fprintf(stderr, "compress: out of memory\n");
        goto out;
    }
    memcpy(v, data, len);
    if (cmd_compress_measure(v, n, (unsigned)bits, block / 8, &clen, &tc,
                             &td) != 0)
        goto out;

    printf("input:       %s, %zu doubles, %zu bytes\n", path, n, len);
    printf("compressed:  %zu bytes, ratio %.3f (table bits %lu, block %lu "
           "bytes)\n",
           clen, (double)len / (double)clen, bits, block);
    printf("round trip:  bit-exact\n");
    printf("compress:    %.1f MB/s\n", (double)len / tc / 1e6);
    printf("decompress:  %.1f MB/s   (median of %d runs)\n",
           (double)len / td / 1e6, CMD_COMPRESS_REPS);
    cmd_compress_links(len, clen, tc, td);
    ret = 0;
out:
    free(data);
    free(v);
    return ret;
}

static const struct collsctl_opt compress_opts[] = {
    {"table-bits", 'b', 0, "N",
     "predictor tables of 2^N entries, " CMD_COMPRESS_STR(FPC_MIN_TABLE_BITS) " to " CMD_COMPRESS_STR(
         FPC_MAX_TABLE_BITS) " (default " CMD_COMPRESS_STR(FPC_DEFAULT_TABLE_BITS) ")"},
    {"block", 'B', 0, "BYTES",
     "compress in independent blocks of BYTES, a multiple of 8 (default "
     "524288, the daemons' block)"},
    {NULL, 0, 0, NULL, NULL},
};

const struct collsctl_cmd cmd_compress = {
    .name = "compress",
    .args = "FILE|-",
    .help = "try FPC compression on a file of raw doubles",
    .detail = "FILE (- for standard input) holds raw native-endian doubles.  "
              "Prints the ratio, the speeds (median of 5 runs), checks the "
              "round trip bit for bit, and says whether compressing would "
              "pay on 100 Mbit/s, 1 Gbit/s and 10 Gbit/s links.  Runs "
              "without a daemon.",
    .opts = compress_opts,
    .operands = COLLSCTL_FILES,
    .needs_daemon = 0,
    .exec = cmd_compress_exec,
};
