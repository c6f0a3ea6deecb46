/*
 * bench-proto.c -- bandwidth of the reductions and XDR conversions against
 * memcpy, measured in the same run on the same buffers.
 *
 *     bench-proto [REPS]
 *
 * For 1 MiB (cache-resident) and 64 MiB (memory-bound) buffers it prints
 * the median and the spread (min..max) over REPS rounds (default 9, at
 * least 7) of: memcpy, reduce SUM double, reduce SUM int32, XDR encode
 * double and XDR decode double, each as GB/s of buffer processed, its
 * ratio to the median memcpy figure, and the target (reductions >= 0.8x,
 * XDR >= 0.5x).  Every round times all five operations one after the
 * other, so noise from other processes on a shared machine hits them
 * alike.  All buffers are allocated, touched and warmed before timing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "proto/dtype.h"
#include "proto/reduce.h"
#include "tests/bench/bench.h"

#define BENCH_NOPS    5
#define BENCH_MAXREPS 64

enum { OP_MEMCPY, OP_SUM_DOUBLE, OP_SUM_INT32, OP_XDR_ENC, OP_XDR_DEC };

static const struct {
    const char *name;
    double target; /* minimum ratio to memcpy; 0: the baseline */
} bench_ops[BENCH_NOPS] = {
    [OP_MEMCPY] = {"memcpy", 0},
    [OP_SUM_DOUBLE] = {"reduce sum double", 0.8},
    [OP_SUM_INT32] = {"reduce sum int32", 0.8},
    [OP_XDR_ENC] = {"xdr encode double", 0.5},
    [OP_XDR_DEC] = {"xdr decode double", 0.5},
};

struct bench_bufs {
    size_t size;
    unsigned char *src;  /* operand / source */
    unsigned char *dst;  /* result / destination */
    unsigned char *wire; /* XDR bytes */
};

/* Keeps the compiler from dropping stores it thinks are dead. */
static void
bench_clobber(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

/* Runs operation op once over the buffers; aborts if it reports an error. */
static void
bench_run(int op, struct bench_bufs *b)
{
    size_t n8 = b->size / 8, n4 = b->size / 4, done;
    int rc = 0;

    switch (op) {
    case OP_MEMCPY:
        memcpy(b->dst, b->src, b->size);
        break;
    case OP_SUM_DOUBLE:
        rc = reduce_apply(COLLS_SUM, COLLS_DOUBLE, b->dst, b->src, n8);
        break;
    case OP_SUM_INT32:
        rc = reduce_apply(COLLS_SUM, COLLS_INT32, b->dst, b->src, n4);
        break;
    case OP_XDR_ENC:
        rc = xdr_encode(COLLS_DOUBLE, b->src, n8, b->wire, b->size, &done);
        break;
    case OP_XDR_DEC:
        rc = xdr_decode(COLLS_DOUBLE, b->wire, b->size, b->dst, n8, &done);
        break;
    }
    if (rc != 0) {
        fprintf(stderr, "bench-proto: %s failed: error %d\n",
                bench_ops[op].name, rc);
        exit(1);
    }
    bench_clobber(b->dst);
    bench_clobber(b->wire);
}

/*
 * Fills the buffers so the reductions stay finite and the XDR input is
 * valid, and touches every page of all three.
 */
static void
bench_fill(struct bench_bufs *b)
{
    size_t i;

    for (i = 0; i < b->size / 8; i++) {
        double v = 1e-3 * (double)(i % 1000);
        memcpy(b->src + 8 * i, &v, 8);
    }
    memset(b->dst, 0, b->size);
    memset(b->wire, 0, b->size);
}

/* Measures every operation over one buffer size and prints the table. */
static void
bench_size(size_t size, int iters, int reps)
{
    struct bench_bufs b = {.size = size};
    double gbs[BENCH_NOPS][BENCH_MAXREPS], med[BENCH_NOPS], lo, hi;
    int op, r, k;

    b.src = aligned_alloc(64, size);
    b.dst = aligned_alloc(64, size);
    b.wire = aligned_alloc(64, size);
    if (b.src == NULL || b.dst == NULL || b.wire == NULL) {
        fprintf(stderr, "bench-proto: out of memory\n");
        exit(1);
    }
    bench_fill(&b);
    for (op = 0; op < BENCH_NOPS; op++) /* warm caches and ifuncs */
        for (k = 0; k < 2; k++)
            bench_run(op, &b);
    for (r = 0; r < reps; r++) {
        for (op = 0; op < BENCH_NOPS; op++) {
            double t0 = bench_now(), t;
            for (k = 0; k < iters; k++)
                bench_run(op, &b);
            t = bench_now() - t0;
            gbs[op][r] = (double)size * iters / t / 1e9;
        }
    }
    printf("\n%zu KiB buffers, %d rounds of %d calls each:\n", size >> 10, reps,
           iters);
    printf("  %-18s %8s  %-15s %7s  %s\n", "operation", "GB/s", "min..max",
           "ratio", "target");
    for (op = 0; op < BENCH_NOPS; op++) {
        char spread[32];
        med[op] = bench_median(gbs[op], reps, &lo, &hi);
        snprintf(spread, sizeof(spread), "%.1f..%.1f", lo, hi);
        if (op == OP_MEMCPY) {
            printf("  %-18s %8.1f  %-15s %7s  %s\n", bench_ops[op].name,
                   med[op], spread, "1.00x", "baseline");
            continue;
        }
        printf("  %-18s %8.1f  %-15s %6.2fx  >= %.1fx %s\n", bench_ops[op].name,
               med[op], spread, med[op] / med[OP_MEMCPY], bench_ops[op].target,
               med[op] / med[OP_MEMCPY] >= bench_ops[op].target ? "ok"
                                                                : "MISSED");
    }
    free(b.src);
    free(b.dst);
    free(b.wire);
}

int
main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 9;

    if (reps < 7 || reps > BENCH_MAXREPS) {
        fprintf(stderr, "usage: bench-proto [REPS: 7..%d]\n", BENCH_MAXREPS);
        return 2;
    }
    printf("bench-proto: bandwidth = buffer bytes / time (median of %d)\n",
           reps);
    bench_size((size_t)1 << 20, 256, reps);
    bench_size((size_t)64 << 20, 4, reps);
    return 0;
}
