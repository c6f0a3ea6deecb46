/*
 * bench-fpc.c -- compression ratio and speed of FPC (proto/fpc.c) on the
 * data sets of the FPC broadcast experiments, generated here:
 *     linear   f(x) = a*x, x = 0..n-1, a = 0.1 (32K, 64K, 128K doubles)
 *     gauss    f(x,y) = exp(-x^2)*exp(-y^2) on [-2,2]^2, N^2 grid points
 *     sincos   f(x,y) = sin(x)*cos(y) on [-6,6]^2, N^2 grid points
 * for N = 256, 512, 1024, row-major and sorted ascending, plus uniform
 * random doubles in [0,1).  Each figure is the median (and min..max) of
 * REPS repetitions; each repetition codes about 32 MB so the clock is
 * never the limit.  memcpy bandwidth of the same run is printed for
 * reference, and the 1 GB/s per core target next to the speeds.
 * Finally one smooth set is coded at table sizes 10, 16 and 20 bits.
 *     usage: bench-fpc [REPS]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/fpc.h"
#include "tests/bench/bench.h"

#define REPS_DEFAULT 5
#define REPS_MAX     51
#define WORK_BYTES   (32u << 20) /* bytes coded per repetition */

static int reps = REPS_DEFAULT;

/* A generated data set. */
struct set {
    char name[48];
    double *v;
    size_t n;
};

static int
cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double *
xalloc(size_t n)
{
    double *p = malloc(n * sizeof(double));
    if (p == NULL) {
        fprintf(stderr, "bench-fpc: out of memory\n");
        exit(1);
    }
    return p;
}

/* f(x) = a*x over n points. */
static void
gen_linear(struct set *s, size_t n)
{
    size_t i;

    s->v = xalloc(n);
    s->n = n;
    for (i = 0; i < n; i++)
        s->v[i] = 0.1 * (double)i;
    snprintf(s->name, sizeof(s->name), "linear a*x %zuK", n / 1024);
}

/* f on an side x side grid over [-r,r]^2, row-major or sorted. */
static void
gen_grid(struct set *s, const char *fname, int sine, double r, size_t side,
         int sorted)
{
    size_t i, j;

    s->v = xalloc(side * side);
    s->n = side * side;
    for (i = 0; i < side; i++) {
        double y = -r + 2 * r * (double)i / (double)(side - 1);
        for (j = 0; j < side; j++) {
            double x = -r + 2 * r * (double)j / (double)(side - 1);
            s->v[i * side + j] =
                sine ? sin(x) * cos(y) : exp(-x * x) * exp(-y * y);
        }
    }
    if (sorted)
        qsort(s->v, s->n, sizeof(double), cmp_dbl);
    snprintf(s->name, sizeof(s->name), "%s %zu^2%s", fname, side,
             sorted ? " sorted" : "");
}

/* Uniform doubles in [0,1), 53 random bits each (xorshift64*). */
static void
gen_random(struct set *s, size_t n)
{
    uint64_t x = 88172645463325252ull;
    size_t i;

    s->v = xalloc(n);
    s->n = n;
    for (i = 0; i < n; i++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s->v[i] = (double)((x * 2685821657736338717ull) >> 11) * 0x1p-53;
    }
    snprintf(s->name, sizeof(s->name), "random [0,1) %zuK", n / 1024);
}

/* Iterations per repetition so that one repetition codes ~WORK_BYTES. */
static int
iters_for(size_t bytes)
{
    size_t it = WORK_BYTES / (bytes ? bytes : 1);
    return it < 1 ? 1 : (int)it;
}

/* memcpy bandwidth (GB/s, median) on an 8 MB buffer. */
static double
bench_memcpy(double *lo, double *hi)
{
    size_t bytes = 8u << 20;
    char *a = malloc(bytes), *b = malloc(bytes);
    double t[REPS_MAX];
    int r, k, it = iters_for(bytes);

    if (a == NULL || b == NULL) {
        fprintf(stderr, "bench-fpc: out of memory\n");
        exit(1);
    }
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    for (r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (k = 0; k < it; k++) {
            memcpy(k & 1 ? a : b, k & 1 ? b : a, bytes);
            __asm__ volatile("" : : "r"(a), "r"(b) : "memory");
        }
        t[r] = (double)bytes * it / (bench_now() - t0) / 1e9;
    }
    free(a);
    free(b);
    return bench_median(t, reps, lo, hi);
}

/* Results of coding one set. */
struct result {
    double ratio;
    double c_med, c_lo, c_hi; /* compress GB/s */
    double d_med, d_lo, d_hi; /* decompress GB/s */
};

/*
 * Compresses and decompresses s at table_bits, verifies the round trip
 * bit for bit, and times both.  Exits on any failure.
 */
static void
run_set(const struct set *s, unsigned bits, struct result *res)
{
    size_t bytes = s->n * sizeof(double), cap = fpc_bound(s->n, 0);
    size_t clen = 0, n_out = 0;
    uint8_t *c = malloc(cap ? cap : 1);
    double *d = xalloc(s->n), tc[REPS_MAX], td[REPS_MAX];
    int r, k, it = iters_for(bytes), rc;

    if (c == NULL) {
        fprintf(stderr, "bench-fpc: out of memory\n");
        exit(1);
    }
    for (r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (k = 0; k < it; k++) {
            rc = fpc_compress(s->v, s->n, bits, 0, c, cap, &clen);
            if (rc != 0) {
                fprintf(stderr, "%s: compress: error %d\n", s->name, rc);
                exit(1);
            }
        }
        tc[r] = (double)bytes * it / (bench_now() - t0) / 1e9;
    }
    for (r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (k = 0; k < it; k++) {
            rc = fpc_decompress(c, clen, d, s->n, &n_out);
            if (rc != 0) {
                fprintf(stderr, "%s: decompress: error %d\n", s->name, rc);
                exit(1);
            }
        }
        td[r] = (double)bytes * it / (bench_now() - t0) / 1e9;
    }
    if (n_out != s->n || memcmp(d, s->v, bytes) != 0) {
        fprintf(stderr, "%s: round trip mismatch\n", s->name);
        exit(1);
    }
    res->ratio = (double)bytes / (double)clen;
    res->c_med = bench_median(tc, reps, &res->c_lo, &res->c_hi);
    res->d_med = bench_median(td, reps, &res->d_lo, &res->d_hi);
    free(c);
    free(d);
}

static void
print_row(const char *name, const struct result *r)
{
    printf("%-26s %6.2f   %5.2f (%5.2f..%5.2f)   %5.2f (%5.2f..%5.2f)\n", name,
           r->ratio, r->c_med, r->c_lo, r->c_hi, r->d_med, r->d_lo, r->d_hi);
}

int
main(int argc, char **argv)
{
    static const size_t lin[] = {32 * 1024, 64 * 1024, 128 * 1024};
    static const size_t sides[] = {256, 512, 1024};
    static const unsigned tbits[] = {10, 16, 20};
    struct set sets[3 + 12 + 1];
    struct result res;
    double mlo, mhi, mc;
    size_t ns = 0, i, j;

    if (argc > 1) {
        reps = atoi(argv[1]);
        if (reps < 1 || reps > REPS_MAX) {
            fprintf(stderr, "usage: bench-fpc [REPS 1..%d]\n", REPS_MAX);
            return 2;
        }
    }
    for (i = 0; i < 3; i++)
        gen_linear(&sets[ns++], lin[i]);
    for (j = 0; j < 2; j++)
        for (i = 0; i < 3; i++)
            gen_grid(&sets[ns++], "gauss", 0, 2.0, sides[i], (int)j);
    for (j = 0; j < 2; j++)
        for (i = 0; i < 3; i++)
            gen_grid(&sets[ns++], "sincos", 1, 6.0, sides[i], (int)j);
    gen_random(&sets[ns++], 1024 * 1024);

    mc = bench_memcpy(&mlo, &mhi);
    printf("FPC, table bits %u, block %u doubles, %d repetitions "
           "(median (min..max))\n",
           FPC_DEFAULT_TABLE_BITS, FPC_DEFAULT_BLOCK, reps);
    printf("memcpy 8 MB: %.2f GB/s (%.2f..%.2f); target: >= 1 GB/s per "
           "core\n\n",
           mc, mlo, mhi);
    printf("%-26s %6s   %-20s   %-20s\n", "data set", "ratio", "compress GB/s",
           "decompress GB/s");
    for (i = 0; i < ns; i++) {
        run_set(&sets[i], FPC_DEFAULT_TABLE_BITS, &res);
        print_row(sets[i].name, &res);
    }
    printf("\ntable size, on %s:\n", sets[5].name);
    for (i = 0; i < 3; i++) {
        char name[48];
        snprintf(name, sizeof(name), "  table bits %u", tbits[i]);
        run_set(&sets[5], tbits[i], &res);
        print_row(name, &res);
    }
    for (i = 0; i < ns; i++)
        free(sets[i].v);
    return 0;
}
