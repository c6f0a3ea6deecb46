/*
 * bo-check.c -- one member task of tests/integration/byteorder.sh: every
 * collective and packed point-to-point messages between tasks and
 * daemons of both byte orders, compared bit for bit with a serial
 * reference (docs/protocol.md, "Byte order").
 *
 *   bo-check --socket S --group NAME --size P [--count N] [--big N]
 *            [--seed S] [--timeout-ms MS]
 *
 * Joins NAME (P members) and runs, in hierarchical, flat and direct mode
 * (barrier, bcast, allreduce and allgather among the tasks, libclient/dcoll.c;
 * the other operations as in auto):
 *   - every operation x every datatype; the reductions (reduce,
 *     allreduce, reduce_scatter, scan, exscan) x every valid operator;
 *     the v-variants with unequal counts (one of them 0) and blocks
 *     placed in reverse rank order; rooted ones with a root that moves;
 *   - bcast of doubles with compression off, on and auto (FPC applies
 *     in hierarchical mode: with on, colls_group_last_alg must say
 *     "+fpc" there and not in flat mode), small and of --big doubles
 *     with chain_seg (4 KiB segments: the stream or the raw doubles are
 *     pipelined);
 *   - in direct mode, allreduces of --big items of three datatypes and
 *     allgathers of two (blocks sent pairwise among the tasks);
 *   - every algorithm of the daemons' tables forced in turn, on --big / 4
 *     items of a datatype per operation (segmented ones with 4 KiB
 *     segments), so that every way of splitting data meets both orders;
 * then, from each rank to the next, a message packed with every datatype
 * in each encoding (DEFAULT/XDR, RAW, INPLACE) on each route (default,
 * direct).
 *
 * Every member computes every rank's input from (seed, case, rank,
 * block, index) in integer arithmetic and writes it in its own byte
 * order, so members of either order agree on the values without a word
 * exchanged; floating values are handled as bit patterns only (no load
 * into a floating register could quiet a signaling NaN).  Inputs of the
 * operations without arithmetic are any bits, with the special floating
 * values among them: NaN payloads (quiet and signaling, both signs),
 * -0.0, denormals, infinities.  Inputs of the reductions are chosen per
 * index so that every order of combination gives the same bits (small
 * integers, sums of denormals, powers of two, -0.0 throughout, one
 * infinity or one quiet NaN among finite values, any non-NaN bits for
 * MIN and MAX), and the reference folds them in rank order with
 * proto/reduce.c's operators.  Untouched outputs (exscan's rank 0, gaps
 * between v-blocks) must keep their sentinel bytes.
 *
 * Prints one line per failure ("FAIL: ...") and a summary; exits 0 iff
 * nothing failed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "proto/dtype.h"
#include "proto/reduce.h"
#include "tests/integration/mix.h"

#define MAX_P    16
#define SENTINEL 0xa5

struct bo {
    colls_t *c;
    colls_group_t *g;
    int P, rank, mode;
    const char *alg; /* the forced algorithm, "" for the default */
    size_t count, big;
    uint64_t seed;
    int fails, cases;
};

/* ---- values ----------------------------------------------------------- */

/* The hash of a case, a rank, a block and an item. */
static uint64_t
h5(uint64_t seed, uint64_t cs, int rank, size_t blk, size_t i)
{
    return mix(mix(mix(mix(seed ^ cs) + (uint64_t)rank) + blk) + i);
}

/* Stores the low bytes of v as item i of dtype at p, in this CPU's order. */
static void
put_item(int dtype, uint8_t *p, size_t i, uint64_t v)
{
    size_t es = dtype_size(dtype);
    uint8_t b8 = (uint8_t)v;
    uint16_t b16 = (uint16_t)v;
    uint32_t b32 = (uint32_t)v;

    switch (es) {
    case 1:
        memcpy(p + i, &b8, 1);
        break;
    case 2:
        memcpy(p + i * 2, &b16, 2);
        break;
    case 4:
        memcpy(p + i * 4, &b32, 4);
        break;
    default:
        memcpy(p + i * 8, &v, 8);
    }
}

/* Floating bit patterns, for float (f32) or double. */
struct fbits {
    uint64_t sign, expmask, mant, qbit, one, two, half, inf;
    unsigned mbits;
};

static struct fbits
fbits_of(int dtype)
{
    struct fbits f;

    if (dtype == COLLS_FLOAT) {
        f.sign = 1ull << 31;
        f.expmask = 0xffull << 23;
        f.mbits = 23;
        f.one = 0x3f800000ull;
        f.two = 0x40000000ull;
        f.half = 0x3f000000ull;
    } else {
        f.sign = 1ull << 63;
        f.expmask = 0x7ffull << 52;
        f.mbits = 52;
        f.one = 0x3ff0000000000000ull;
        f.two = 0x4000000000000000ull;
        f.half = 0x3fe0000000000000ull;
    }
    f.mant = (1ull << f.mbits) - 1;
    f.qbit = 1ull << (f.mbits - 1);
    f.inf = f.expmask;
    return f;
}

/* The bits of the small integer k (|k| < 2^20) as a float or double. */
static uint64_t
fint(const struct fbits *f, int64_t k)
{
    uint64_t m = (uint64_t)(k < 0 ? -k : k), bias, e;
    unsigned top = 0;

    if (m == 0)
        return 0;
    while ((m >> top) > 1)
        top++;
    bias = f->mbits == 23 ? 127 : 1023;
    e = (bias + top) << f->mbits;
    m = (m << (f->mbits - top)) & f->mant;
    return (k < 0 ? f->sign : 0) | e | m;
}

/* Any bits of a float or double, the special values among them. */
static uint64_t
fany(const struct fbits *f, uint64_t h)
{
    uint64_t s = (h >> 7) & 1 ? f->sign : 0, m = (h >> 11) & f->mant;

    switch (h % 8) {
    case 0: /* quiet NaN with a payload */
        return s | f->inf | f->qbit | (m & (f->qbit - 1));
    case 1: /* signaling NaN: a non-zero payload, quiet bit clear */
        return s | f->inf | ((m & (f->qbit - 1)) | 1);
    case 2:
        return f->sign; /* -0.0 */
    case 3:
        return s | (m ? m : 1); /* a denormal */
    case 4:
        return s | f->inf;
    default:
        return f->mbits == 23 ? (h >> 16) & 0xffffffffull : h;
    }
}

/* Any non-NaN bits. */
static uint64_t
fnonnan(const struct fbits *f, uint64_t h)
{
    uint64_t v = fany(f, h);

    if ((v & f->expmask) == f->expmask && (v & f->mant) != 0)
        v &= ~f->qbit & ~(1ull << f->mbits); /* clears an exponent bit */
    return v;
}

/*
 * Item i of rank's input for reduction rop: values that give the same
 * bits in every order of combination (see the top of the file).
 */
static uint64_t
red_value(int dtype, int rop, int P, int rank, size_t i, uint64_t h)
{
    struct fbits f;
    int one = (int)(i % (size_t)P) == rank; /* this rank is "the one" */
    int64_t k = (int64_t)(h % 2001) - 1000;

    if (dtype != COLLS_FLOAT && dtype != COLLS_DOUBLE) {
        if (rop >= COLLS_LAND && rop <= COLLS_LXOR)
            return (h >> 20) & 1 ? h : 0;
        return h;
    }
    f = fbits_of(dtype);
    switch (rop) {
    case COLLS_SUM:
        switch (i % 6) {
        case 0:
            return fint(&f, k);
        case 1: /* k times the smallest denormal: sums are exact */
            return (k < 0 ? f.sign : 0) | (uint64_t)(k < 0 ? -k : k);
        case 2:
            return f.sign; /* -0.0 + -0.0 = -0.0 */
        case 3:
            return one ? f.inf : fint(&f, k);
        case 4:
            return one ? f.sign | f.inf : fint(&f, k);
        default: /* one quiet NaN among finite values */
            return one ? ((h & 1) ? f.sign : 0) | f.inf | f.qbit |
                             ((h >> 8) & (f.qbit - 1))
                       : fint(&f, k);
        }
    case COLLS_PROD: {
        /* powers of two: products exact, in any order */
        uint64_t pw = h % 3 == 0 ? f.one : h % 3 == 1 ? f.two : f.half;
        uint64_t s = (h >> 9) & 1 ? f.sign : 0;

        switch (i % 5) {
        case 0:
            return s | pw;
        case 1:
            return one ? s : s | f.one; /* a signed zero */
        case 2:
            return one ? s | f.inf : s | pw;
        case 3: /* a denormal times +-1 */
            return one ? s | ((h >> 12) & f.mant) | 1 : s | f.one;
        default:
            return one ? f.inf | f.qbit | ((h >> 8) & (f.qbit - 1)) : s | pw;
        }
    }
    default: /* MIN, MAX: any non-NaN bits, or one NaN */
        if (i % 7 == 6 && one)
            return ((h & 1) ? f.sign : 0) | f.inf | f.qbit |
                   ((h >> 8) & (f.qbit - 1));
        if (i % 7 == 5)
            return (h & 1) ? f.sign : 0; /* +-0.0 */
        return fnonnan(&f, h);
    }
}

/* Fills n items of dtype at p: rank's block blk of case cs; rop < 0 for
   any bits, else values for that reduction operator. */
static void
fill(const struct bo *b, uint64_t cs, int dtype, int rop, int rank, size_t blk,
     uint8_t *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        uint64_t h = h5(b->seed, cs, rank, blk, i);
        uint64_t v;

        if (rop >= 0) {
            v = red_value(dtype, rop, b->P, rank, i + blk * n, h);
        } else if (dtype == COLLS_FLOAT || dtype == COLLS_DOUBLE) {
            struct fbits f = fbits_of(dtype);
            v = fany(&f, h);
        } else {
            v = h;
        }
        put_item(dtype, p, i, v);
    }
}

/* ---- checks ------------------------------------------------------------ */

static const char *const op_name[COLLS_COLL_MAX] = {
    "barrier",  "bcast",     "reduce",         "allreduce", "gather",
    "gatherv",  "scatter",   "scatterv",       "allgather", "allgatherv",
    "alltoall", "alltoallv", "reduce_scatter", "scan",      "exscan",
};

static const char *
mode_name(int mode)
{
    return mode == COLLS_MODE_FLAT     ? "flat"
           : mode == COLLS_MODE_DIRECT ? "direct"
                                       : "hier";
}

/* Compares n bytes of got with want; reports the first differing item. */
static void
expect(struct bo *b, const char *what, int dtype, int rop, const uint8_t *got,
       const uint8_t *want, size_t n)
{
    size_t es = dtype_size(dtype), k, j;

    b->cases++;
    if (memcmp(got, want, n) == 0)
        return;
    for (k = 0; k + es <= n && memcmp(got + k, want + k, es) == 0; k += es)
        ;
    b->fails++;
    printf("FAIL: rank %d %s %s %s%s%s%s%s: item %zu of %zu: got ", b->rank,
           mode_name(b->mode), what, dtype_name(dtype), rop >= 0 ? " " : "",
           rop >= 0 ? reduce_op_name(rop) : "", b->alg[0] ? " alg=" : "",
           b->alg, k / es, n / es);
    for (j = 0; j < es && k + j < n; j++)
        printf("%02x", got[k + j]);
    printf(", want ");
    for (j = 0; j < es && k + j < n; j++)
        printf("%02x", want[k + j]);
    printf("\n");
}

/* A call that failed. */
static void
failed(struct bo *b, const char *what, int dtype, int rop, int rc)
{
    b->cases++;
    b->fails++;
    printf("FAIL: rank %d %s %s %s%s%s%s%s: %s (%s)\n", b->rank,
           mode_name(b->mode), what, dtype_name(dtype), rop >= 0 ? " " : "",
           rop >= 0 ? reduce_op_name(rop) : "", b->alg[0] ? " alg=" : "",
           b->alg, colls_err_name(rc), colls_errmsg(b->c));
}

/* The case number of (op, dtype, rop, extra). */
static uint64_t
case_of(const struct bo *b, int op, int dtype, int rop, int extra)
{
    return ((uint64_t)b->mode << 40) | ((uint64_t)op << 32) |
           ((uint64_t)dtype << 24) | ((uint64_t)(rop + 1) << 16) |
           (uint64_t)extra;
}

/* v-variants: items rank r has for rank j (alltoallv), or r's block. */
static size_t
vcount(const struct bo *b, int r, int j)
{
    return (b->count / 2 + (size_t)(3 * r + j) % 5) *
           (size_t)((r + j) % 4 != 1);
}

/* Reverse-order displacements (in items) with a one-item gap; returns
   the total span. */
static size_t
vdispls(int P, const size_t *cnt, size_t *dsp)
{
    size_t off = 0;
    int r;

    for (r = P - 1; r >= 0; r--) {
        dsp[r] = off;
        off += cnt[r] + 1;
    }
    return off;
}

/* One reduction op (reduce, allreduce, reduce_scatter, scan, exscan). */
static void
run_reduction(struct bo *b, int op, int dtype, int rop)
{
    size_t es = dtype_size(dtype), n = b->count, blocks, bytes;
    uint64_t cs = case_of(b, op, dtype, rop, 0);
    int root = (int)(((unsigned)op + (unsigned)dtype) % (unsigned)b->P), r, rc;
    uint8_t *in, *acc, *tmp, *out, *want;

    blocks = op == COLLS_COLL_REDUCE_SCATTER ? (size_t)b->P : 1;
    bytes = n * es * blocks;
    in = malloc(bytes);
    acc = malloc(bytes);
    tmp = malloc(bytes);
    out = malloc(bytes);
    want = malloc(bytes);
    if (!in || !acc || !tmp || !out || !want) {
        failed(b, op_name[op], dtype, rop, COLLS_ENOMEM);
        goto out;
    }
    fill(b, cs, dtype, rop, b->rank, 0, in, n * blocks);
    memset(out, SENTINEL, bytes);
    memset(want, SENTINEL, bytes);
    /* the fold in rank order, up to the rank the op needs */
    fill(b, cs, dtype, rop, 0, 0, acc, n * blocks);
    if (op == COLLS_COLL_EXSCAN && b->rank == 0) {
        /* rank 0's output is left alone */
    } else if (op == COLLS_COLL_SCAN || op == COLLS_COLL_EXSCAN) {
        int upto = op == COLLS_COLL_SCAN ? b->rank : b->rank - 1;
        for (r = 1; r <= upto; r++) {
            fill(b, cs, dtype, rop, r, 0, tmp, n);
            reduce_apply(rop, dtype, acc, tmp, n);
        }
        memcpy(want, acc, n * es);
    } else {
        for (r = 1; r < b->P; r++) {
            fill(b, cs, dtype, rop, r, 0, tmp, n * blocks);
            reduce_apply(rop, dtype, acc, tmp, n * blocks);
        }
        if (op == COLLS_COLL_REDUCE_SCATTER)
            memcpy(want, acc + (size_t)b->rank * n * es, n * es);
        else if (op != COLLS_COLL_REDUCE || b->rank == root)
            memcpy(want, acc, n * es);
    }
    switch (op) {
    case COLLS_COLL_REDUCE:
        rc = colls_reduce(b->g, in, out, n, dtype, rop, root);
        break;
    case COLLS_COLL_ALLREDUCE:
        rc = colls_allreduce(b->g, in, out, n, dtype, rop);
        break;
    case COLLS_COLL_REDUCE_SCATTER:
        rc = colls_reduce_scatter(b->g, in, out, n, dtype, rop);
        break;
    case COLLS_COLL_SCAN:
        rc = colls_scan(b->g, in, out, n, dtype, rop);
        break;
    default:
        rc = colls_exscan(b->g, in, out, n, dtype, rop);
        break;
    }
    if (rc != 0)
        failed(b, op_name[op], dtype, rop, rc);
    else if (op != COLLS_COLL_REDUCE || b->rank == root)
        expect(b, op_name[op], dtype, rop, out, want, n * es);
out:
    free(in);
    free(acc);
    free(tmp);
    free(out);
    free(want);
}

/* bcast of n items from root (any bits). */
static void
run_bcast(struct bo *b, int dtype, size_t n, int root, int extra,
          const char *what)
{
    size_t bytes = n * dtype_size(dtype);
    uint64_t cs = case_of(b, COLLS_COLL_BCAST, dtype, -1, extra);
    uint8_t *buf = malloc(bytes ? bytes : 1), *want = malloc(bytes ? bytes : 1);
    int rc;

    if (buf == NULL || want == NULL) {
        failed(b, what, dtype, -1, COLLS_ENOMEM);
        goto out;
    }
    fill(b, cs, dtype, -1, root, 0, want, n);
    if (b->rank == root)
        memcpy(buf, want, bytes);
    else
        memset(buf, SENTINEL, bytes);
    rc = colls_bcast(b->g, buf, n, dtype, root);
    if (rc != 0)
        failed(b, what, dtype, -1, rc);
    else
        expect(b, what, dtype, -1, buf, want, bytes);
out:
    free(buf);
    free(want);
}

/* The operations without arithmetic but bcast, on any bits. */
static void
run_move(struct bo *b, int op, int dtype)
{
    size_t es = dtype_size(dtype), n = b->count, P = (size_t)b->P;
    uint64_t cs = case_of(b, op, dtype, -1, 0);
    int root = (int)(((unsigned)op + (unsigned)dtype) % (unsigned)b->P);
    size_t cnt[MAX_P], dsp[MAX_P], rcnt[MAX_P], rdsp[MAX_P], span, rspan;
    size_t cap = (n + 8) * P * 2 * es + 64;
    uint8_t *in = malloc(cap), *out = malloc(cap), *want = malloc(cap);
    int r, rc = 0, me = b->rank, check = 1;

    if (in == NULL || out == NULL || want == NULL) {
        failed(b, op_name[op], dtype, -1, COLLS_ENOMEM);
        goto out;
    }
    memset(out, SENTINEL, cap);
    memset(want, SENTINEL, cap);
    for (r = 0; r < b->P; r++)
        cnt[r] = vcount(b, r, 0);
    span = vdispls(b->P, cnt, dsp);
    switch (op) {
    case COLLS_COLL_GATHER:
    case COLLS_COLL_ALLGATHER:
        fill(b, cs, dtype, -1, me, 0, in, n);
        for (r = 0; r < b->P; r++)
            fill(b, cs, dtype, -1, r, 0, want + (size_t)r * n * es, n);
        if (op == COLLS_COLL_GATHER) {
            rc = colls_gather(b->g, in, out, n, dtype, root);
            check = me == root;
        } else {
            rc = colls_allgather(b->g, in, out, n, dtype);
        }
        span = n * P;
        break;
    case COLLS_COLL_SCATTER:
        for (r = 0; r < b->P; r++)
            fill(b, cs, dtype, -1, root, (size_t)r, in + (size_t)r * n * es, n);
        fill(b, cs, dtype, -1, root, (size_t)me, want, n);
        rc = colls_scatter(b->g, in, out, n, dtype, root);
        span = n;
        break;
    case COLLS_COLL_ALLTOALL:
        for (r = 0; r < b->P; r++) {
            fill(b, cs, dtype, -1, me, (size_t)r, in + (size_t)r * n * es, n);
            fill(b, cs, dtype, -1, r, (size_t)me, want + (size_t)r * n * es, n);
        }
        rc = colls_alltoall(b->g, in, out, n, dtype);
        span = n * P;
        break;
    case COLLS_COLL_GATHERV:
    case COLLS_COLL_ALLGATHERV:
        fill(b, cs, dtype, -1, me, 0, in, cnt[me]);
        for (r = 0; r < b->P; r++)
            fill(b, cs, dtype, -1, r, 0, want + dsp[r] * es, cnt[r]);
        if (op == COLLS_COLL_GATHERV) {
            rc = colls_gatherv(b->g, in, cnt[me], out, cnt, dsp, dtype, root);
            check = me == root;
        } else {
            rc = colls_allgatherv(b->g, in, cnt[me], out, cnt, dsp, dtype);
        }
        break;
    case COLLS_COLL_SCATTERV:
        for (r = 0; r < b->P; r++)
            fill(b, cs, dtype, -1, root, (size_t)r, in + dsp[r] * es, cnt[r]);
        fill(b, cs, dtype, -1, root, (size_t)me, want, cnt[me]);
        rc = colls_scatterv(b->g, in, cnt, dsp, out, cnt[me], dtype, root);
        span = cnt[me];
        break;
    default: /* alltoallv: rank me sends vcount(me, j) items to j */
        for (r = 0; r < b->P; r++) {
            cnt[r] = vcount(b, me, r);
            rcnt[r] = vcount(b, r, me);
        }
        span = vdispls(b->P, cnt, dsp);
        rspan = vdispls(b->P, rcnt, rdsp);
        memset(in, SENTINEL, span * es);
        for (r = 0; r < b->P; r++) {
            fill(b, cs, dtype, -1, me, (size_t)r, in + dsp[r] * es, cnt[r]);
            fill(b, cs, dtype, -1, r, (size_t)me, want + rdsp[r] * es, rcnt[r]);
        }
        rc = colls_alltoallv(b->g, in, cnt, dsp, out, rcnt, rdsp, dtype);
        span = rspan;
        break;
    }
    if (rc != 0)
        failed(b, op_name[op], dtype, -1, rc);
    else if (check)
        expect(b, op_name[op], dtype, -1, out, want, span * es);
out:
    free(in);
    free(out);
    free(want);
}

/* Every algorithm of the daemons' tables, forced (one that cannot run
   here falls back to the default choice: not an error), on --big / 4
   items, segmented ones with 4 KiB segments so that pipelines split the
   data; the datatypes vary the item size the splits must respect. */
static const struct {
    int op, dtype, rop;
    const char *algs[8];
} bo_algs[] = {
    {COLLS_COLL_BARRIER,
     COLLS_BYTE,
     -1,
     {"dissemination", "butterfly", "tournament", "flat"}},
    {COLLS_COLL_BCAST,
     COLLS_DOUBLE,
     -1,
     {"flat", "chain", "chain_seg:4096", "binary", "binomial",
      "binomial_seg:4096", "scatter_allgather"}},
    {COLLS_COLL_REDUCE,
     COLLS_DOUBLE,
     COLLS_SUM,
     {"flat", "binomial", "chain_seg:4096", "rsag"}},
    {COLLS_COLL_ALLREDUCE,
     COLLS_DOUBLE,
     COLLS_SUM,
     {"butterfly", "tournament", "ring", "rabenseifner"}},
    {COLLS_COLL_ALLREDUCE,
     COLLS_INT16,
     COLLS_PROD,
     {"butterfly", "tournament", "ring", "rabenseifner"}},
    {COLLS_COLL_REDUCE_SCATTER, COLLS_FLOAT, COLLS_MAX, {"halving", "ring"}},
    {COLLS_COLL_SCAN, COLLS_INT64, COLLS_SUM, {"linear", "recursive_doubling"}},
    {COLLS_COLL_EXSCAN,
     COLLS_UINT32,
     COLLS_BXOR,
     {"linear", "recursive_doubling"}},
    {COLLS_COLL_GATHER, COLLS_UINT64, -1, {"flat", "binomial"}},
    {COLLS_COLL_SCATTER, COLLS_INT32, -1, {"flat", "binomial"}},
    {COLLS_COLL_ALLGATHER,
     COLLS_INT16,
     -1,
     {"butterfly", "bruck", "ring", "tournament"}},
    {COLLS_COLL_ALLTOALL, COLLS_FLOAT, -1, {"pairwise", "bruck"}},
    {COLLS_COLL_ALLTOALLV, COLLS_UINT16, -1, {"pairwise"}},
};

static void
run_algs(struct bo *b)
{
    size_t keep = b->count, k, j;
    int rc;

    b->count = b->big / 4;
    for (k = 0; k < sizeof(bo_algs) / sizeof(bo_algs[0]); k++) {
        int op = bo_algs[k].op, dtype = bo_algs[k].dtype;

        for (j = 0; j < 8 && bo_algs[k].algs[j] != NULL; j++) {
            b->alg = bo_algs[k].algs[j];
            rc = colls_group_set_alg(b->g, op, b->alg);
            if (rc != 0) {
                failed(b, op_name[op], dtype, -1, rc);
            } else if (op == COLLS_COLL_BARRIER) {
                if ((rc = colls_barrier(b->g)) != 0)
                    failed(b, "barrier", dtype, -1, rc);
                else
                    b->cases++;
            } else if (op == COLLS_COLL_BCAST) {
                run_bcast(b, dtype, b->count, (int)j % b->P, 10 + (int)j,
                          "bcast");
            } else if (bo_algs[k].rop >= 0) {
                run_reduction(b, op, dtype, bo_algs[k].rop);
            } else {
                run_move(b, op, dtype);
            }
            colls_group_set_alg(b->g, op, NULL);
            b->alg = "";
        }
    }
    b->count = keep;
}

/* The whole matrix in the current mode. */
static void
run_colls(struct bo *b)
{
    int op, dtype, rop, rc, cm;
    static const int compress[3] = {COLLS_COMPRESS_OFF, COLLS_COMPRESS_ON,
                                    COLLS_COMPRESS_AUTO};
    static const char *const cname[3] = {
        "bcast compress=off", "bcast compress=on", "bcast compress=auto"};

    rc = colls_barrier(b->g);
    if (rc != 0)
        failed(b, "barrier", COLLS_BYTE, -1, rc);
    else
        b->cases++;
    for (dtype = 0; dtype < COLLS_DTYPE_MAX; dtype++) {
        for (op = COLLS_COLL_BCAST; op < COLLS_COLL_MAX; op++) {
            if (op == COLLS_COLL_BCAST) {
                run_bcast(b, dtype, b->count, (dtype + 1) % b->P, 0, "bcast");
            } else if (op == COLLS_COLL_REDUCE || op == COLLS_COLL_ALLREDUCE ||
                       op == COLLS_COLL_REDUCE_SCATTER ||
                       op == COLLS_COLL_SCAN || op == COLLS_COLL_EXSCAN) {
                for (rop = 0; rop < COLLS_OP_MAX; rop++)
                    if (reduce_check(rop, dtype) == 0)
                        run_reduction(b, op, dtype, rop);
            } else {
                run_move(b, op, dtype);
            }
        }
    }
    /* FPC: hierarchical bcast of doubles, off / on / auto, small and big
       (segmented: chain_seg pipelines the stream or the raw doubles) */
    for (cm = 0; cm < 3; cm++) {
        colls_group_set_compress(b->g, compress[cm]);
        run_bcast(b, COLLS_DOUBLE, b->count, cm % b->P, 1 + cm, cname[cm]);
        colls_group_set_alg(b->g, COLLS_COLL_BCAST, "chain_seg:4096");
        run_bcast(b, COLLS_DOUBLE, b->big, (cm + 1) % b->P, 4 + cm, cname[cm]);
        colls_group_set_alg(b->g, COLLS_COLL_BCAST, NULL);
        /* on: compressed exactly where FPC applies (hierarchical, and the
           groups here span two daemons; in direct mode the forced
           algorithm ran through the daemons, as in auto: hierarchical) */
        b->cases++;
        if (compress[cm] == COLLS_COMPRESS_ON &&
            (strstr(colls_group_last_alg(b->g), "+fpc") != NULL) !=
                (b->mode != COLLS_MODE_FLAT)) {
            b->fails++;
            printf("FAIL: rank %d %s bcast compress=on ran as \"%s\"\n",
                   b->rank, mode_name(b->mode), colls_group_last_alg(b->g));
        }
    }
    colls_group_set_compress(b->g, COLLS_COMPRESS_OFF);
    run_algs(b);
}

/* ---- point to point ----------------------------------------------------- */

/* A message with every datatype (count items each, any bits) from rank
   src, packed with encoding enc. */
static int
pack_all(struct bo *b, colls_msg_t *m, int src, int enc, uint8_t **keep)
{
    int dtype, rc;

    for (dtype = 0; dtype < COLLS_DTYPE_MAX; dtype++) {
        size_t bytes = b->count * dtype_size(dtype);

        keep[dtype] = malloc(bytes);
        if (keep[dtype] == NULL)
            return COLLS_ENOMEM;
        fill(b, case_of(b, 100 + enc, dtype, -1, 0), dtype, -1, src, 0,
             keep[dtype], b->count);
        rc = colls_pack(m, dtype, keep[dtype], b->count);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static void
run_p2p(struct bo *b)
{
    static const char *const ename[3] = {"xdr", "raw", "inplace"};
    int enc, route, dtype, rc;
    int to = (b->rank + 1) % b->P, from = (b->rank + b->P - 1) % b->P;
    char what[64];

    b->mode = COLLS_MODE_HIER; /* (names the cases) */
    for (route = 0; route < 2; route++)
        for (enc = 0; enc < 3; enc++) {
            uint8_t *keep[COLLS_DTYPE_MAX] = {0};
            colls_msg_t *m = colls_msg_new(enc), *rm = NULL;

            snprintf(what, sizeof(what), "p2p %s route=%s", ename[enc],
                     route ? "direct" : "default");
            rc = m != NULL ? pack_all(b, m, b->rank, enc, keep) : COLLS_ENOMEM;
            if (rc == 0 && route)
                rc = colls_msg_set_route(m, COLLS_ROUTE_DIRECT);
            if (rc == 0)
                rc = colls_msg_send(b->c, colls_group_tid(b->g, to),
                                    100 + route * 3 + enc, m);
            if (rc != 0)
                failed(b, what, COLLS_BYTE, -1, rc);
            colls_msg_free(m);
            for (dtype = 0; dtype < COLLS_DTYPE_MAX; dtype++)
                free(keep[dtype]);
            rc = colls_msg_recv(b->c, colls_group_tid(b->g, from),
                                100 + route * 3 + enc, &rm);
            if (rc != 0) {
                failed(b, what, COLLS_BYTE, -1, rc);
                continue;
            }
            for (dtype = 0; dtype < COLLS_DTYPE_MAX; dtype++) {
                size_t bytes = b->count * dtype_size(dtype);
                uint8_t *got = malloc(bytes), *want = malloc(bytes);

                if (got == NULL || want == NULL) {
                    failed(b, what, dtype, -1, COLLS_ENOMEM);
                } else {
                    fill(b, case_of(b, 100 + enc, dtype, -1, 0), dtype, -1,
                         from, 0, want, b->count);
                    rc = colls_unpack(rm, dtype, got, b->count);
                    if (rc != 0)
                        failed(b, what, dtype, -1, rc);
                    else
                        expect(b, what, dtype, -1, got, want, bytes);
                }
                free(got);
                free(want);
            }
            colls_msg_free(rm);
        }
}

/* ---- main ---------------------------------------------------------------- */

int
main(int argc, char **argv)
{
    struct bo b;
    const char *sock = NULL, *name = NULL;
    int i, rc, timeout = 120000, m;

    memset(&b, 0, sizeof(b));
    b.alg = "";
    b.count = 37;
    b.big = 20000;
    b.seed = 16;
    for (i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];

        if (strcmp(a, "--socket") == 0)
            sock = v;
        else if (strcmp(a, "--group") == 0)
            name = v;
        else if (strcmp(a, "--size") == 0)
            b.P = atoi(v);
        else if (strcmp(a, "--count") == 0)
            b.count = (size_t)strtoul(v, NULL, 10);
        else if (strcmp(a, "--big") == 0)
            b.big = (size_t)strtoul(v, NULL, 10);
        else if (strcmp(a, "--seed") == 0)
            b.seed = strtoull(v, NULL, 10);
        else if (strcmp(a, "--timeout-ms") == 0)
            timeout = atoi(v);
        else
            break;
    }
    if (i < argc || sock == NULL || name == NULL || b.P < 2 || b.P > MAX_P ||
        b.count < 4) {
        fprintf(stderr, "usage: bo-check --socket S --group NAME --size P "
                        "(2..16) [--count N (>= 4)] [--big N] [--seed S] "
                        "[--timeout-ms MS]\n");
        return 2;
    }
    rc = colls_attach(sock, &b.c);
    if (rc != 0) {
        printf("FAIL: attach %s: %s\n", sock, colls_err_name(rc));
        return 1;
    }
    colls_set_timeout(b.c, timeout);
    rc = colls_group_join(b.c, name, b.P, &b.g);
    if (rc < 0) {
        printf("FAIL: join %s: %s (%s)\n", name, colls_err_name(rc),
               colls_errmsg(b.c));
        colls_detach(b.c);
        return 1;
    }
    b.rank = rc;
    /* direct: barrier, bcast, allreduce and allgather among the tasks,
       little-endian on the wire whatever their orders (dcoll.c) */
    for (m = 0; m < 3; m++) {
        b.mode = m == 0   ? COLLS_MODE_HIER
                 : m == 1 ? COLLS_MODE_FLAT
                          : COLLS_MODE_DIRECT;
        colls_group_set_mode(b.g, b.mode);
        run_colls(&b);
        if (b.mode == COLLS_MODE_DIRECT) {
            /* large allreduces and allgathers: blocks sent pairwise
               (dcoll.c, from 128 KiB of P inputs), each block swapped on
               its own */
            size_t keep = b.count;
            b.count = b.big;
            run_reduction(&b, COLLS_COLL_ALLREDUCE, COLLS_DOUBLE, COLLS_SUM);
            run_reduction(&b, COLLS_COLL_ALLREDUCE, COLLS_INT32, COLLS_MAX);
            run_reduction(&b, COLLS_COLL_ALLREDUCE, COLLS_UINT64, COLLS_BXOR);
            run_move(&b, COLLS_COLL_ALLGATHER, COLLS_DOUBLE);
            run_move(&b, COLLS_COLL_ALLGATHER, COLLS_INT32);
            b.count = keep;
        }
    }
    run_p2p(&b);
    printf("rank %d (%s-endian): %d cases, %d failed\n", b.rank,
           dtype_native_order() == COLLS_ORDER_BIG ? "big" : "little", b.cases,
           b.fails);
    colls_group_leave(b.g);
    colls_detach(b.c);
    return b.fails == 0 ? 0 : 1;
}
