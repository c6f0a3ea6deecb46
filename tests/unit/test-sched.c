/*
 * test-sched.c -- schedules, the algorithm library, the tuner and the
 * hierarchical plan, proven in the in-memory simulator (simnet.c).
 *
 * Every operation x every algorithm x P = 1..9 x sizes (0, 1, 1009 items,
 * the last larger than the 1001-byte test segment) x datatypes (int32,
 * int64, double, uint8; every datatype at 1009 items) x operators x roots
 * (0, middle, P-1) runs in the simulator, and every rank's RECV buffer is
 * compared byte for byte with a serial reference -- including the bytes the
 * operation must not touch (non-root RECV of reduce, gaps of v-layouts).
 * Floating data are small integers so any order of summation is exact; one
 * test checks that allreduce of random doubles is bitwise identical on all
 * ranks.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "proto/collop.h"
#include "proto/dtype.h"
#include "proto/reduce.h"
#include "daemon/exec.h"
#include "daemon/sched.h"
#include "daemon/tune.h"
#include "daemon/alg/alg.h"
#include "daemon/alg/topo.h"
#include "tests/unit/simnet.h"
#include "tests/unit/suites.h"

#define SEG      1001
#define MAXP     16
#define SENTINEL 0x5c

static const size_t test_counts[] = {0, 1, 1009};
static const int test_dtypes[] = {COLLS_INT32, COLLS_INT64, COLLS_DOUBLE,
                                  COLLS_UINT8};

static size_t n_cases; /* simulator runs, for the report */

/* ---- data ------------------------------------------------------------- */

/* Stores integer v as one item of dtype (wrapping for narrow types). */
static void
put_item(int dtype, uint8_t *p, int64_t v)
{
    union {
        int8_t i8;
        int16_t i16;
        int32_t i32;
        int64_t i64;
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
        float f;
        double d;
    } u;

    switch (dtype) {
    case COLLS_BYTE:
    case COLLS_UINT8:
        u.u8 = (uint8_t)v;
        break;
    case COLLS_INT8:
        u.i8 = (int8_t)v;
        break;
    case COLLS_INT16:
        u.i16 = (int16_t)v;
        break;
    case COLLS_UINT16:
        u.u16 = (uint16_t)v;
        break;
    case COLLS_INT32:
        u.i32 = (int32_t)v;
        break;
    case COLLS_UINT32:
        u.u32 = (uint32_t)v;
        break;
    case COLLS_INT64:
        u.i64 = v;
        break;
    case COLLS_UINT64:
        u.u64 = (uint64_t)v;
        break;
    case COLLS_FLOAT:
        u.f = (float)v;
        break;
    default:
        u.d = (double)v;
        break;
    }
    memcpy(p, &u, dtype_size(dtype));
}

/* Value of item i of rank r's input for operator rop: small integers, so
   floating sums and products are exact in any order. */
static int64_t
gen(int rop, int r, size_t i)
{
    switch (rop) {
    case COLLS_PROD:
        return 1 + (int64_t)((r + i) % 2);
    case COLLS_LAND:
    case COLLS_LOR:
    case COLLS_LXOR:
        return (int64_t)((r * 3 + i) % 3);
    case COLLS_BAND:
    case COLLS_BOR:
    case COLLS_BXOR:
        return (int64_t)((r * 37 + i * 11 + 5) % 256);
    default:
        return (int64_t)((r * 31 + i * 7) % 23) - 11;
    }
}

/* Fills items of rank r (input for a reduction, or an opaque pattern). */
static void
fill(uint8_t *p, int dtype, int rop, int r, size_t items, size_t first)
{
    size_t e = dtype_size(dtype), i;

    for (i = 0; i < items; i++)
        put_item(dtype, p + i * e, gen(rop, r, first + i));
}

/* Opaque bytes, different per rank and position. */
static void
fill_bytes(uint8_t *p, int r, size_t len)
{
    size_t k;

    for (k = 0; k < len; k++)
        p[k] = (uint8_t)(r * 37 + k * 11 + 5);
}

/* ---- one case ------------------------------------------------------------ */

struct tcase_args {
    int op, P, root, dtype, rop;
    size_t count; /* items per rank (regular ops) */
    const struct alg *alg;
    int v; /* the v-variant with uneven counts */
};

/* Items of rank k's block in the v-layouts: uneven, some zero. */
static size_t
vitems(size_t count, int k)
{
    return (size_t)((k * 7 + 3) % 5) * count / 2;
}

/* Block layouts of one case: counts/displs for the gather family,
   per-rank send/receive blocks for alltoallv (bytes). */
struct layout {
    size_t counts[MAXP], displs[MAXP], total;
    size_t sc[MAXP][MAXP], sd[MAXP][MAXP], rc[MAXP][MAXP], rd[MAXP][MAXP];
    size_t ssz[MAXP], rsz[MAXP];
};

/* Fills L for case c (n = bytes per rank, e = item size). */
static void
make_layout(const struct tcase_args *c, size_t e, struct layout *L)
{
    int P = c->P, r, j;
    size_t n = c->count * e, cur = 0;

    memset(L, 0, sizeof(*L));
    for (r = P - 1; r >= 0; r--) {
        /* v: reversed order, gaps of 3 items; else the plain layout */
        L->counts[r] = c->v ? vitems(c->count, r) * e : n;
        L->displs[r] = c->v ? cur : (size_t)r * n;
        cur += c->v ? L->counts[r] + 3 * e : n;
    }
    L->total = cur;
    for (r = 0; r < P; r++) {
        size_t so = 0, ro = 0;

        for (j = 0; j < P; j++) {
            L->sc[r][j] = c->v ? vitems(c->count, r * P + j) * e : n;
            L->sd[r][j] = so;
            so += L->sc[r][j] + (c->v ? e : 0);
        }
        for (j = P - 1; j >= 0; j--) {
            L->rc[r][j] = c->v ? vitems(c->count, j * P + r) * e : n;
            L->rd[r][j] = c->v ? ro : (size_t)j * n;
            ro += L->rc[r][j] + (c->v ? 2 * e : 0);
        }
        switch (c->op) {
        case SCHED_OP_BARRIER:
            L->ssz[r] = L->rsz[r] = 0;
            break;
        case SCHED_OP_BCAST:
            L->ssz[r] = 0;
            L->rsz[r] = n;
            break;
        case SCHED_OP_GATHER:
        case SCHED_OP_GATHERV:
        case SCHED_OP_ALLGATHER:
        case SCHED_OP_ALLGATHERV:
            L->ssz[r] = L->counts[r];
            L->rsz[r] = L->total;
            break;
        case SCHED_OP_SCATTER:
        case SCHED_OP_SCATTERV:
            L->ssz[r] = L->total;
            L->rsz[r] = L->counts[r];
            break;
        case SCHED_OP_ALLTOALL:
        case SCHED_OP_ALLTOALLV:
            L->ssz[r] = so;
            L->rsz[r] = ro;
            break;
        case SCHED_OP_REDUCE_SCATTER:
            L->ssz[r] = (size_t)P * n;
            L->rsz[r] = n;
            break;
        default:
            L->ssz[r] = L->rsz[r] = n;
            break;
        }
    }
}

/*
 * The serial reference: exp[r] (pre-filled with SENTINEL) gets what rank
 * r's RECV must hold after the operation, given every rank's SEND and, for
 * bcast, the root's data.  Reductions combine in rank order.  0 or -1.
 */
static int
expect(const struct tcase_args *c, const struct layout *L, uint8_t *const *sbuf,
       const uint8_t *bdata, uint8_t *const *exp)
{
    int P = c->P, r, j;
    size_t e = dtype_size(c->dtype), n = c->count * e, len = 0;
    uint8_t *acc = NULL;

    if (collop_is_reduction(c->op)) {
        len = c->op == SCHED_OP_REDUCE_SCATTER ? (size_t)P * n : n;
        /* acc + r * len: reduction of ranks 0..r */
        acc = malloc((size_t)P * len + 1);
        if (acc == NULL)
            return -1;
        memcpy(acc, sbuf[0], len);
        for (r = 1; r < P; r++) {
            memcpy(acc + (size_t)r * len, acc + (size_t)(r - 1) * len, len);
            reduce_apply(c->rop, c->dtype, acc + (size_t)r * len, sbuf[r],
                         len / e);
        }
    }
    for (r = 0; r < P; r++) {
        uint8_t *all = acc != NULL ? acc + (size_t)(P - 1) * len : NULL;

        switch (c->op) {
        case SCHED_OP_BCAST:
            memcpy(exp[r], bdata, n);
            break;
        case SCHED_OP_REDUCE:
            if (r == c->root)
                memcpy(exp[r], all, n);
            break;
        case SCHED_OP_ALLREDUCE:
            memcpy(exp[r], all, n);
            break;
        case SCHED_OP_SCAN:
            memcpy(exp[r], acc + (size_t)r * n, n);
            break;
        case SCHED_OP_EXSCAN:
            if (r > 0)
                memcpy(exp[r], acc + (size_t)(r - 1) * n, n);
            break;
        case SCHED_OP_REDUCE_SCATTER:
            memcpy(exp[r], all + (size_t)r * n, n);
            break;
        case SCHED_OP_GATHER:
        case SCHED_OP_GATHERV:
            if (r != c->root)
                break;
            /* fall through */
        case SCHED_OP_ALLGATHER:
        case SCHED_OP_ALLGATHERV:
            for (j = 0; j < P; j++)
                memcpy(exp[r] + L->displs[j], sbuf[j], L->counts[j]);
            break;
        case SCHED_OP_SCATTER:
        case SCHED_OP_SCATTERV:
            memcpy(exp[r], sbuf[c->root] + L->displs[r], L->counts[r]);
            break;
        case SCHED_OP_ALLTOALL:
        case SCHED_OP_ALLTOALLV:
            for (j = 0; j < P; j++)
                memcpy(exp[r] + L->rd[r][j], sbuf[j] + L->sd[j][r],
                       L->sc[j][r]);
            break;
        default:
            break;
        }
    }
    free(acc);
    return 0;
}

/* Fills rank r's arguments for case c. */
static void
case_args(const struct tcase_args *c, const struct layout *L, int r,
          struct alg_args *a)
{
    int v = c->v;

    memset(a, 0, sizeof(*a));
    a->op = c->op;
    a->P = c->P;
    a->rank = r;
    a->root = c->root;
    a->dtype = c->dtype;
    a->rop = c->rop;
    a->size = c->count * dtype_size(c->dtype);
    a->seg = SEG;
    if (v && c->op != SCHED_OP_ALLTOALLV) {
        a->counts = L->counts;
        a->displs = L->displs;
    }
    if (v && c->op == SCHED_OP_ALLTOALLV) {
        a->scounts = L->sc[r];
        a->sdispls = L->sd[r];
        a->rcounts = L->rc[r];
        a->rdispls = L->rd[r];
    }
}

/* Builds and runs the P schedules of alg for the given arguments; 0 or -1
   with why set. */
static int
simulate(const struct alg *alg, const struct alg_args *args, int P,
         uint8_t *const *sbuf, const size_t *ssz, uint8_t *const *rbuf,
         const size_t *rsz, struct simnet_result *res, char *why, size_t cap)
{
    struct sched sch[MAXP], *sp[MAXP] = {0};
    int r, built = 0, rc = -1;

    n_cases++;
    for (r = 0; r < P; r++) {
        int brc = alg_build(alg, &args[r], &sch[r]);

        if (brc != 0) {
            snprintf(why, cap, "build rank %d: error %d", r, brc);
            goto out;
        }
        sp[r] = &sch[r];
        built++;
    }
    if (simnet_run(sp, P, sbuf, ssz, rbuf, rsz, res) != 0) {
        snprintf(why, cap, "simnet: %s", res->err);
        goto out;
    }
    rc = 0;
out:
    for (r = 0; r < built; r++)
        sched_free(&sch[r]);
    return rc;
}

/* Compares RECV buffers with the expected bytes; 0 or -1 with why. */
static int
compare(int P, uint8_t *const *got, uint8_t *const *exp, const size_t *len,
        char *why, size_t cap)
{
    int r;

    for (r = 0; r < P; r++)
        if (memcmp(exp[r], got[r], len[r]) != 0) {
            size_t k = 0;

            while (exp[r][k] == got[r][k])
                k++;
            snprintf(why, cap,
                     "rank %d: byte %zu of %zu is %#x, expected "
                     "%#x",
                     r, k, len[r], got[r][k], exp[r][k]);
            return -1;
        }
    return 0;
}

/* Allocates and fills the buffers of case c: inputs in sbuf, SENTINEL in
   rbuf and exp, the root's data in rbuf for bcast. */
static int
case_buffers(const struct tcase_args *c, const struct layout *L, uint8_t **sbuf,
             uint8_t **rbuf, uint8_t **exp)
{
    size_t e = dtype_size(c->dtype);
    int r;

    for (r = 0; r < c->P; r++) {
        sbuf[r] = malloc(L->ssz[r] + 1);
        rbuf[r] = malloc(L->rsz[r] + 1);
        exp[r] = malloc(L->rsz[r] + 1);
        if (!sbuf[r] || !rbuf[r] || !exp[r])
            return -1;
        if (collop_is_reduction(c->op))
            fill(sbuf[r], c->dtype, c->rop, r, L->ssz[r] / e, 0);
        else
            fill_bytes(sbuf[r], r, L->ssz[r]);
        memset(rbuf[r], SENTINEL, L->rsz[r]);
        memset(exp[r], SENTINEL, L->rsz[r]);
    }
    if (c->op == SCHED_OP_BCAST)
        fill_bytes(rbuf[c->root], 1000 + c->root, L->rsz[c->root]);
    return 0;
}

static void
free_buffers(int P, uint8_t **a, uint8_t **b, uint8_t **c)
{
    int r;

    for (r = 0; r < P; r++) {
        free(a[r]);
        free(b[r]);
        free(c[r]);
    }
}

/*
 * Runs one case; returns 0, or -1 with why set.  Builds the P schedules,
 * runs them, and compares every RECV buffer with the serial reference.
 */
static int
run_case(const struct tcase_args *c, char *why, size_t cap)
{
    int P = c->P, r, rc = -1;
    uint8_t *sbuf[MAXP] = {0}, *rbuf[MAXP] = {0}, *exp[MAXP] = {0};
    struct alg_args args[MAXP];
    struct layout L;
    struct simnet_result res;

    make_layout(c, dtype_size(c->dtype), &L);
    if (case_buffers(c, &L, sbuf, rbuf, exp) != 0 ||
        expect(c, &L, sbuf, rbuf[c->root], exp) != 0) {
        snprintf(why, cap, "out of memory");
        goto out;
    }
    for (r = 0; r < P; r++)
        case_args(c, &L, r, &args[r]);
    if (simulate(c->alg, args, P, sbuf, L.ssz, rbuf, L.rsz, &res, why, cap) !=
        0)
        goto out;
    /* in the all-to-all families every rank's end must causally follow
       every rank's start, whatever the data size */
    if ((c->op == SCHED_OP_BARRIER || c->op == SCHED_OP_ALLREDUCE ||
         c->op == SCHED_OP_ALLGATHER || c->op == SCHED_OP_ALLGATHERV ||
         c->op == SCHED_OP_ALLTOALL || c->op == SCHED_OP_ALLTOALLV ||
         c->op == SCHED_OP_REDUCE_SCATTER) &&
        !res.knows_all) {
        snprintf(why, cap, "a rank finished before hearing from everyone");
        goto out;
    }
    rc = compare(P, rbuf, exp, L.rsz, why, cap);
out:
    free_buffers(P, sbuf, rbuf, exp);
    return rc;
}

/* Runs c with every algorithm of c->op that is usable; fails the test on
   the first wrong case with a description of it. */
static void
run_all_algs(struct tcase_args *c)
{
    size_t i, nalg;
    const struct alg *t = alg_table(c->op, &nalg);
    char why[400];

    ck_assert_ptr_nonnull(t);
    for (i = 0; i < nalg; i++) {
        struct alg_args a = {.op = c->op, .P = c->P, .rop = c->rop};

        if (!alg_usable(&t[i], &a))
            continue;
        c->alg = &t[i];
        if (run_case(c, why, sizeof(why)) != 0)
            ck_abort_msg(
                "%s/%s P=%d root=%d count=%zu %s %s%s: %s", collop_name(c->op),
                t[i].name, c->P, c->root, c->count, dtype_name(c->dtype),
                collop_is_reduction(c->op) ? reduce_op_name(c->rop) : "",
                c->v ? " (v)" : "", why);
    }
}

/* Roots tried for P ranks: 0, the middle, P - 1. */
static int
roots(int P, int *out)
{
    int n = 0;

    out[n++] = 0;
    if (P / 2 != 0)
        out[n++] = P / 2;
    if (P - 1 != 0 && P - 1 != P / 2)
        out[n++] = P - 1;
    return n;
}

/*
 * The full matrix for one operation: P = 1..9, sizes, datatypes (every
 * datatype at the prime size), operators valid for the datatype (all of
 * them at the prime size, SUM/BXOR otherwise), roots.
 */
static void
matrix(int op, int v)
{
    int P, ri, nroots, rt[3], d, o;
    size_t ci, di;

    for (P = 1; P <= 9; P++) {
        nroots = collop_is_rooted(op) ? roots(P, rt) : (rt[0] = 0, 1);
        for (ci = 0; ci < sizeof(test_counts) / sizeof(test_counts[0]); ci++) {
            size_t count = test_counts[ci];
            int big = count == 1009;

            for (di = 0; di < (big ? (size_t)COLLS_DTYPE_MAX : 4); di++) {
                d = big ? (int)di : test_dtypes[di];
                if (!collop_is_reduction(op) && op != SCHED_OP_BARRIER &&
                    big == 0 && d == COLLS_UINT8 && P % 2)
                    continue; /* opaque data: dtype hardly matters */
                for (o = 0; o < COLLS_OP_MAX; o++) {
                    if (collop_is_reduction(op)) {
                        if (reduce_check(o, d) != 0)
                            continue;
                        /* every operator for the four main types at the
                           prime size; SUM (BXOR for bytes) elsewhere */
                        if (!(big && (d == COLLS_INT32 || d == COLLS_INT64 ||
                                      d == COLLS_DOUBLE || d == COLLS_UINT8)) &&
                            o != (d == COLLS_BYTE ? COLLS_BXOR : COLLS_SUM))
                            continue;
                    } else if (o > 0) {
                        break;
                    }
                    for (ri = 0; ri < nroots; ri++) {
                        struct tcase_args c = {.op = op,
                                               .P = P,
                                               .root = rt[ri],
                                               .dtype = d,
                                               .rop = o,
                                               .count = count,
                                               .v = v};

                        run_all_algs(&c);
                    }
                }
                if (op == SCHED_OP_BARRIER)
                    break;
            }
            if (op == SCHED_OP_BARRIER)
                break;
        }
    }
}

static const struct {
    int op, v;
} matrix_ops[] = {
    {SCHED_OP_BARRIER, 0},        {SCHED_OP_BCAST, 0},
    {SCHED_OP_REDUCE, 0},         {SCHED_OP_ALLREDUCE, 0},
    {SCHED_OP_GATHER, 0},         {SCHED_OP_GATHERV, 1},
    {SCHED_OP_SCATTER, 0},        {SCHED_OP_SCATTERV, 1},
    {SCHED_OP_ALLGATHER, 0},      {SCHED_OP_ALLGATHERV, 1},
    {SCHED_OP_ALLTOALL, 0},       {SCHED_OP_ALLTOALLV, 1},
    {SCHED_OP_REDUCE_SCATTER, 0}, {SCHED_OP_SCAN, 0},
    {SCHED_OP_EXSCAN, 0},
};

START_TEST(test_matrix)
{
    matrix(matrix_ops[_i].op, matrix_ops[_i].v);
}
END_TEST

/* P = 10..16: every power-of-two remainder of pof2 = 8, one size. */
START_TEST(test_matrix_large_p)
{
    size_t i;
    int P, rt[3], nroots, ri;

    for (i = 0; i < sizeof(matrix_ops) / sizeof(matrix_ops[0]); i++)
        for (P = 10; P <= MAXP; P++) {
            int op = matrix_ops[i].op;

            nroots = collop_is_rooted(op) ? roots(P, rt) : (rt[0] = 0, 1);
            for (ri = 0; ri < nroots; ri++) {
                struct tcase_args c = {.op = op,
                                       .P = P,
                                       .root = rt[ri],
                                       .dtype = COLLS_INT32,
                                       .rop = COLLS_SUM,
                                       .count = 97,
                                       .v = matrix_ops[i].v};

                run_all_algs(&c);
            }
        }
}
END_TEST

/* ---- the two-level hierarchical plan ---------------------------------- */

/* Ranks of host h, in rank order. */
#define MEMBERS(h, i) (H->members[H->start[(h)] + (i)])

/* acc (items) = op over the SEND buffers of host h's members, in rank
   order, of len bytes. */
static void
hier_combine(const struct topo_hier *H, int h, const struct tcase_args *c,
             uint8_t *const *sbuf, size_t len, uint8_t *acc)
{
    int i, nl = topo_hier_nlocal(H, h);

    memcpy(acc, sbuf[MEMBERS(h, 0)], len);
    for (i = 1; i < nl; i++)
        reduce_apply(c->rop, c->dtype, acc, sbuf[MEMBERS(h, i)],
                     len / dtype_size(c->dtype));
}

/*
 * Runs operation c over the plan H: each host's local part is done here,
 * serially, as its daemon would; the leaders run alg (a schedule of the
 * leader-level operation over nhosts "leader ranks") in the simulator.
 * Every rank's RECV is compared with the flat serial reference.
 */
static int
hier_case(const struct tcase_args *c, const struct topo_hier *H,
          const struct alg *alg, char *why, size_t cap)
{
    int P = c->P, NH = H->nhosts, r, h, b, i, j, rc = -1;
    int lop = collop_get(c->op)->leader, hroot = H->host[c->root];
    size_t e = dtype_size(c->dtype), n = c->count * e;
    uint8_t *sbuf[MAXP] = {0}, *rbuf[MAXP] = {0}, *exp[MAXP] = {0};
    uint8_t *ls[MAXP] = {0}, *lr[MAXP] = {0}, *unused[MAXP] = {0};
    size_t lss[MAXP] = {0}, lrs[MAXP] = {0};
    size_t cnt[MAXP], dsp[MAXP];
    size_t sc[MAXP][MAXP], sd[MAXP][MAXP], rcn[MAXP][MAXP], rd[MAXP][MAXP];
    struct alg_args la[MAXP];
    struct layout L;
    struct simnet_result res;

    make_layout(c, e, &L);
    if (case_buffers(c, &L, sbuf, rbuf, exp) != 0 ||
        expect(c, &L, sbuf, rbuf[c->root], exp) != 0)
        goto nomem;
    /* leader-level layout: host h's block is its members' blocks */
    for (h = 0; h < NH; h++) {
        cnt[h] = (size_t)topo_hier_nlocal(H, h) * n;
        dsp[h] = (size_t)H->start[h] * n;
    }
    for (h = 0; h < NH; h++) {
        size_t so = 0, ro = 0;

        for (b = 0; b < NH; b++) {
            sc[h][b] = cnt[h] * (size_t)topo_hier_nlocal(H, b);
            sd[h][b] = so;
            so += sc[h][b];
            rcn[h][b] = cnt[b] * (size_t)topo_hier_nlocal(H, h);
            rd[h][b] = ro;
            ro += rcn[h][b];
        }
    }
    /* local part, in: each leader's SEND and RECV */
    for (h = 0; h < NH; h++) {
        int nl = topo_hier_nlocal(H, h);

        switch (c->op) {
        case SCHED_OP_BCAST:
            lrs[h] = n;
            break;
        case SCHED_OP_REDUCE:
        case SCHED_OP_ALLREDUCE:
        case SCHED_OP_SCAN:
        case SCHED_OP_EXSCAN:
            lss[h] = lrs[h] = n;
            break;
        case SCHED_OP_REDUCE_SCATTER:
            lss[h] = lrs[h] = (size_t)P * n;
            break;
        case SCHED_OP_GATHER:
        case SCHED_OP_ALLGATHER:
            lss[h] = cnt[h];
            lrs[h] = (size_t)P * n;
            break;
        case SCHED_OP_SCATTER:
            lss[h] = (size_t)P * n;
            lrs[h] = cnt[h];
            break;
        case SCHED_OP_ALLTOALL:
            lss[h] = lrs[h] = (size_t)nl * (size_t)P * n;
            break;
        default:
            break;
        }
        ls[h] = malloc(lss[h] + 1);
        lr[h] = malloc(lrs[h] + 1);
        if (ls[h] == NULL || lr[h] == NULL)
            goto nomem;
        memset(lr[h], SENTINEL, lrs[h]);
        switch (c->op) {
        case SCHED_OP_BCAST:
            if (h == hroot)
                memcpy(lr[h], rbuf[c->root], n);
            break;
        case SCHED_OP_REDUCE:
        case SCHED_OP_ALLREDUCE:
        case SCHED_OP_SCAN:
        case SCHED_OP_EXSCAN:
        case SCHED_OP_REDUCE_SCATTER:
            hier_combine(H, h, c, sbuf, lss[h], ls[h]);
            break;
        case SCHED_OP_GATHER:
        case SCHED_OP_ALLGATHER:
            for (i = 0; i < nl; i++)
                memcpy(ls[h] + (size_t)i * n, sbuf[MEMBERS(h, i)], n);
            break;
        case SCHED_OP_SCATTER:
            if (h == hroot)
                memcpy(ls[h], sbuf[c->root], (size_t)P * n);
            break;
        case SCHED_OP_ALLTOALL:
            /* to host b: for each own member i, its blocks for b's members */
            for (b = 0; b < NH; b++)
                for (i = 0; i < nl; i++)
                    for (j = 0; j < topo_hier_nlocal(H, b); j++)
                        memcpy(ls[h] + sd[h][b] +
                                   ((size_t)i * topo_hier_nlocal(H, b) + j) * n,
                               sbuf[MEMBERS(h, i)] + (size_t)MEMBERS(b, j) * n,
                               n);
            break;
        default:
            break;
        }
    }
    /* the connecting subspace: an ordinary schedule over leader ranks */
    for (h = 0; h < NH; h++) {
        la[h] = (struct alg_args){.op = lop,
                                  .P = NH,
                                  .rank = h,
                                  .root = hroot,
                                  .dtype = c->dtype,
                                  .rop = c->rop,
                                  .size = lss[h],
                                  .seg = SEG};
        if (lop == SCHED_OP_BCAST)
            la[h].size = n;
        if (lop == SCHED_OP_GATHERV || lop == SCHED_OP_SCATTERV ||
            lop == SCHED_OP_ALLGATHERV) {
            la[h].counts = cnt;
            la[h].displs = dsp;
        }
        if (lop == SCHED_OP_ALLTOALLV) {
            la[h].scounts = sc[h];
            la[h].sdispls = sd[h];
            la[h].rcounts = rcn[h];
            la[h].rdispls = rd[h];
        }
    }
    if (simulate(alg, la, NH, ls, lss, lr, lrs, &res, why, cap) != 0)
        goto out;
    if (c->op == SCHED_OP_BARRIER && !res.knows_all) {
        snprintf(why, cap, "leader barrier: a leader left early");
        goto out;
    }
    /* local part, out */
    for (r = 0; r < P; r++) {
        int hr = H->host[r], nl = topo_hier_nlocal(H, hr);

        switch (c->op) {
        case SCHED_OP_BCAST:
        case SCHED_OP_ALLREDUCE:
            memcpy(rbuf[r], lr[hr], n);
            break;
        case SCHED_OP_REDUCE:
            if (r == c->root)
                memcpy(rbuf[r], lr[hr], n);
            break;
        case SCHED_OP_REDUCE_SCATTER:
            memcpy(rbuf[r], lr[hr] + (size_t)r * n, n);
            break;
        case SCHED_OP_GATHER:
            if (r == c->root)
                memcpy(rbuf[r], lr[hr], (size_t)P * n);
            break;
        case SCHED_OP_ALLGATHER:
            memcpy(rbuf[r], lr[hr], (size_t)P * n);
            break;
        case SCHED_OP_SCATTER:
            memcpy(rbuf[r], lr[hr] + (size_t)H->local[r] * n, n);
            break;
        case SCHED_OP_ALLTOALL:
            for (b = 0; b < NH; b++)
                for (i = 0; i < topo_hier_nlocal(H, b); i++)
                    memcpy(rbuf[r] + (size_t)MEMBERS(b, i) * n,
                           lr[hr] + rd[hr][b] +
                               ((size_t)i * nl + H->local[r]) * n,
                           n);
            break;
        default:
            break;
        }
    }
    if (c->op == SCHED_OP_SCAN || c->op == SCHED_OP_EXSCAN) {
        /* prefix of earlier hosts (leader exscan), then the host's own */
        for (h = 0; h < NH; h++) {
            uint8_t *acc = malloc(n + 1);
            int valid = h > 0;

            if (acc == NULL)
                goto nomem;
            if (valid)
                memcpy(acc, lr[h], n);
            for (i = 0; i < topo_hier_nlocal(H, h); i++) {
                r = MEMBERS(h, i);
                if (c->op == SCHED_OP_EXSCAN && valid)
                    memcpy(rbuf[r], acc, n);
                if (valid)
                    reduce_apply(c->rop, c->dtype, acc, sbuf[r], c->count);
                else
                    memcpy(acc, sbuf[r], n);
                valid = 1;
                if (c->op == SCHED_OP_SCAN)
                    memcpy(rbuf[r], acc, n);
            }
            free(acc);
        }
    }
    rc = compare(P, rbuf, exp, L.rsz, why, cap);
    goto out;
nomem:
    snprintf(why, cap, "out of memory");
out:
    free_buffers(P, sbuf, rbuf, exp);
    free_buffers(NH, ls, lr, unused);
    return rc;
}

#undef MEMBERS

static const struct {
    const char *name;
    int P;
    int hosts[MAXP];
} hier_layouts[] = {
    {"1x8", 8, {1, 1, 1, 1, 1, 1, 1, 1}},
    {"8x1", 8, {1, 2, 3, 4, 5, 6, 7, 8}},
    {"2x4", 8, {3, 3, 3, 3, 4, 4, 4, 4}},
    {"3x3", 9, {1, 1, 1, 2, 2, 2, 3, 3, 3}},
    {"1+2+4", 7, {9, 8, 8, 7, 7, 7, 7}},
    {"4+2+1", 7, {1, 1, 1, 1, 2, 2, 3}},
    {"interleaved", 7, {5, 9, 5, 9, 7, 5, 9}},
};

START_TEST(test_hier_plan)
{
    struct topo_hier h;
    int ids[7] = {5, 9, 5, 9, 7, 5, 9};

    ck_assert_int_eq(topo_hier_plan(7, ids, &h), 0);
    ck_assert_int_eq(h.nhosts, 3);
    ck_assert_int_eq(h.contiguous, 0);
    /* hosts numbered by first appearance: 5 -> 0, 9 -> 1, 7 -> 2 */
    ck_assert_int_eq(h.host[4], 2);
    ck_assert_int_eq(h.start[0], 0);
    ck_assert_int_eq(h.start[1], 3);
    ck_assert_int_eq(h.start[2], 6);
    ck_assert_int_eq(h.start[3], 7);
    ck_assert_int_eq(h.members[0], 0);
    ck_assert_int_eq(h.members[1], 2);
    ck_assert_int_eq(h.members[2], 5);
    ck_assert_int_eq(h.members[3], 1);
    ck_assert_int_eq(h.members[6], 4);
    ck_assert_int_eq(h.leader[0], 0);
    ck_assert_int_eq(h.leader[1], 1);
    ck_assert_int_eq(h.leader[2], 4);
    ck_assert_int_eq(h.local[5], 2);
    ck_assert_int_eq(h.local[6], 2);
    ck_assert_int_eq(topo_hier_nlocal(&h, 2), 1);
    topo_hier_free(&h);
    ck_assert_int_eq(topo_hier_plan(8, hier_layouts[2].hosts, &h), 0);
    ck_assert_int_eq(h.nhosts, 2);
    ck_assert_int_eq(h.contiguous, 1);
    ck_assert_int_eq(h.leader[1], 4);
    topo_hier_free(&h);
    ck_assert_int_eq(topo_hier_plan(0, ids, &h), COLLS_EINVAL);
}
END_TEST

/* Every operation over every layout with every leader-level algorithm,
   compared with the flat reference. */
START_TEST(test_hier_ops)
{
    static const int ops[] = {
        SCHED_OP_BARRIER,   SCHED_OP_BCAST,    SCHED_OP_REDUCE,
        SCHED_OP_ALLREDUCE, SCHED_OP_GATHER,   SCHED_OP_SCATTER,
        SCHED_OP_ALLGATHER, SCHED_OP_ALLTOALL, SCHED_OP_REDUCE_SCATTER,
        SCHED_OP_SCAN,      SCHED_OP_EXSCAN};
    static const size_t counts[] = {1, 1009};
    size_t li, oi, ci, ai, nalg;
    char why[400];

    for (li = 0; li < sizeof(hier_layouts) / sizeof(hier_layouts[0]); li++) {
        struct topo_hier H;
        int P = hier_layouts[li].P;

        ck_assert_int_eq(topo_hier_plan(P, hier_layouts[li].hosts, &H), 0);
        for (oi = 0; oi < sizeof(ops) / sizeof(ops[0]); oi++) {
            int op = ops[oi], lop = collop_get(op)->leader, ri, nroots, rt[3];
            const struct alg *t = alg_table(lop, &nalg);

            /* decomposing the gather family and scan by host needs the
               contiguous layout group formation produces */
            if (!H.contiguous &&
                (op == SCHED_OP_GATHER || op == SCHED_OP_SCATTER ||
                 op == SCHED_OP_ALLGATHER || op == SCHED_OP_SCAN ||
                 op == SCHED_OP_EXSCAN))
                continue;
            nroots = collop_is_rooted(op) ? roots(P, rt) : (rt[0] = 0, 1);
            for (ci = 0; ci < 2; ci++)
                for (ai = 0; ai < nalg; ai++)
                    for (ri = 0; ri < nroots; ri++) {
                        struct tcase_args c = {
                            .op = op,
                            .P = P,
                            .root = rt[ri],
                            .dtype = ci ? COLLS_DOUBLE : COLLS_INT32,
                            .rop = ci ? COLLS_SUM : COLLS_MAX,
                            .count = counts[ci]};
                        struct alg_args ua = {
                            .op = lop, .P = H.nhosts, .rop = c.rop};

                        if (!alg_usable(&t[ai], &ua))
                            continue;
                        ck_assert_msg(
                            hier_case(&c, &H, &t[ai], why, sizeof(why)) == 0,
                            "layout %s %s (leaders: %s/%s) root=%d "
                            "count=%zu: %s",
                            hier_layouts[li].name, collop_name(op),
                            collop_name(lop), t[ai].name, rt[ri], c.count, why);
                    }
        }
        topo_hier_free(&H);
    }
}
END_TEST

/* ---- bitwise identity of allreduce with random doubles --------------- */

/* xorshift64*: reproducible pseudo-random doubles of mixed magnitude. */
static double
rnd_double(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return (double)((*x * 2685821657736338717ull) >> 11) / 9007199254740992.0 *
           (double)(1ull << (*x % 40)) * ((*x & 1) ? -1.0 : 1.0);
}

START_TEST(test_allreduce_bitwise)
{
    size_t nalg, i, k;
    const struct alg *t = alg_table(SCHED_OP_ALLREDUCE, &nalg);
    const size_t count = 1009;
    int P, r, ops[] = {COLLS_SUM, COLLS_PROD, COLLS_MAX};
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    size_t differs = 0; /* algorithms whose result is not the serial sum */

    for (i = 0; i < nalg; i++)
        for (P = 2; P <= 9; P++)
            for (k = 0; k < 3; k++) {
                uint8_t *sbuf[MAXP], *rbuf[MAXP];
                size_t sz[MAXP];
                struct alg_args args[MAXP];
                struct simnet_result res;
                char why[300];
                double serial[1009];
                size_t j;

                ck_assert(t[i].flags & ALG_SAME_RESULT);
                for (r = 0; r < P; r++) {
                    double *d;

                    sz[r] = count * sizeof(double);
                    sbuf[r] = malloc(sz[r]);
                    rbuf[r] = malloc(sz[r]);
                    ck_assert(sbuf[r] && rbuf[r]);
                    d = (double *)(void *)sbuf[r];
                    for (j = 0; j < count; j++) {
                        uint64_t nan =
                            0x7ff8000000000000ull | (uint64_t)r << 8 | j;

                        d[j] = k == 1 ? 1.0 + rnd_double(&seed) / 1e13
                                      : rnd_double(&seed);
                        /* MAX keeps the left operand's NaN: NaNs with
                           per-rank payloads make the order visible */
                        if (k == 2 && (j + (size_t)r) % 3 == 0)
                            memcpy(&d[j], &nan, sizeof(nan));
                    }
                    args[r] = (struct alg_args){.op = SCHED_OP_ALLREDUCE,
                                                .P = P,
                                                .rank = r,
                                                .dtype = COLLS_DOUBLE,
                                                .rop = ops[k],
                                                .size = sz[r],
                                                .seg = SEG};
                }
                ck_assert_msg(simulate(&t[i], args, P, sbuf, sz, rbuf, sz, &res,
                                       why, sizeof(why)) == 0,
                              "%s P=%d: %s", t[i].name, P, why);
                for (r = 1; r < P; r++)
                    ck_assert_msg(memcmp(rbuf[0], rbuf[r], sz[0]) == 0,
                                  "allreduce/%s P=%d %s: rank %d differs "
                                  "from rank 0",
                                  t[i].name, P, reduce_op_name(ops[k]), r);
                /* the rank-order algorithm equals the serial loop */
                memcpy(serial, sbuf[0], sz[0]);
                for (r = 1; r < P; r++)
                    reduce_apply(ops[k], COLLS_DOUBLE, serial, sbuf[r], count);
                if (t[i].flags & ALG_RANK_ORDER) {
                    /* the tree order (x0+x1)+(x2+x3) is not the serial
                       ((x0+x1)+x2)+x3 for sums, so only P = 2 must
                       match; for MAX the first NaN in rank order wins
                       in both */
                    if (P == 2 || ops[k] == COLLS_MAX)
                        ck_assert_msg(memcmp(serial, rbuf[0], sz[0]) == 0,
                                      "%s P=%d %s: not in rank order",
                                      t[i].name, P, reduce_op_name(ops[k]));
                } else if (memcmp(serial, rbuf[0], sz[0]) != 0) {
                    differs++;
                }
                for (r = 0; r < P; r++) {
                    free(sbuf[r]);
                    free(rbuf[r]);
                }
            }
    /* random doubles do expose the order: some algorithm's sum differs
       from the serial one, so the identity above is not vacuous */
    ck_assert_uint_gt(differs, 0);
}
END_TEST

/* ---- schedule builders and cache -------------------------------------- */

START_TEST(test_sched_builder)
{
    struct sched s;
    size_t n;
    const struct sched_step *st;
    int t;

    sched_init(&s, SCHED_OP_BCAST, 4, 1, COLLS_INT32, COLLS_SUM);
    t = sched_tmp(&s, 64);
    ck_assert_int_eq(t, SCHED_BUF_TMP);
    sched_send(&s, 0, SCHED_BUF_SEND, 8, 16);
    sched_recv(&s, 2, t, 0, 64);
    sched_round(&s);
    sched_round(&s); /* empty: no new round */
    sched_reduce(&s, SCHED_BUF_RECV, 0, t, 0, 32, SCHED_F_SRC_FIRST);
    sched_copy(&s, SCHED_BUF_RECV, 100, SCHED_BUF_RECV, 100, 4); /* no-op */
    ck_assert_int_eq(sched_finish(&s), 0);
    ck_assert_uint_eq(s.nrounds, 2);
    ck_assert_uint_eq(s.extent[SCHED_BUF_SEND], 24);
    ck_assert_uint_eq(s.extent[SCHED_BUF_RECV], 32);
    st = sched_round_steps(&s, 0, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(st[0].kind, SCHED_SEND);
    ck_assert_int_eq(st[1].kind, SCHED_RECV);
    ck_assert_int_eq(st[1].peer, 2);
    st = sched_round_steps(&s, 1, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(st[0].kind, SCHED_REDUCE);
    ck_assert_uint_eq(st[0].flags, SCHED_F_SRC_FIRST);
    ck_assert_ptr_null(sched_round_steps(&s, 2, &n));
    sched_free(&s);

    /* errors are sticky and reported by finish */
    sched_init(&s, SCHED_OP_BCAST, 4, 1, COLLS_INT32, COLLS_SUM);
    sched_send(&s, 1, SCHED_BUF_SEND, 0, 1); /* to itself */
    ck_assert_int_eq(sched_finish(&s), COLLS_EINVAL);
    sched_init(&s, SCHED_OP_BCAST, 4, 1, COLLS_INT32, COLLS_SUM);
    sched_recv(&s, 0, SCHED_BUF_SEND, 0, 1); /* writes the input */
    ck_assert_int_eq(sched_finish(&s), COLLS_EINVAL);
    sched_init(&s, SCHED_OP_BCAST, 4, 1, COLLS_INT32, COLLS_SUM);
    t = sched_tmp(&s, 8);
    sched_recv(&s, 0, t, 4, 8); /* past the scratch buffer */
    ck_assert_int_eq(sched_finish(&s), COLLS_EINVAL);
    sched_init(&s, SCHED_OP_BCAST, 4, 1, COLLS_INT32, COLLS_SUM);
    sched_recv(&s, 0, SCHED_BUF_TMP, 0, 1); /* undeclared buffer */
    ck_assert_int_eq(sched_finish(&s), COLLS_EINVAL);
    sched_init(&s, SCHED_OP_BCAST, 4, 9, COLLS_INT32, COLLS_SUM);
    ck_assert_int_eq(sched_finish(&s), COLLS_EINVAL);
    sched_init(&s, SCHED_OP_BCAST, 4, 0, COLLS_INT32, COLLS_SUM);
    for (t = 0; t < SCHED_MAX_TMP; t++)
        ck_assert_int_eq(sched_tmp(&s, 1), SCHED_BUF_TMP + t);
    ck_assert_int_eq(sched_tmp(&s, 1), -1);
    ck_assert_int_eq(sched_finish(&s), COLLS_EINVAL);

    /* the listing */
    {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        struct alg_args a = {.op = SCHED_OP_ALLREDUCE,
                             .P = 3,
                             .rank = 2,
                             .dtype = COLLS_INT32,
                             .rop = COLLS_SUM,
                             .size = 12};

        ck_assert_int_eq(
            alg_build(alg_find(SCHED_OP_ALLREDUCE, "butterfly", NULL), &a, &s),
            0);
        ck_assert_int_eq(sched_print(f, &s), 0);
        fclose(f);
        ck_assert_ptr_nonnull(strstr(buf, "allreduce rank 2 of 3"));
        ck_assert_ptr_nonnull(strstr(buf, "send to 1 from recv[0..12)"));
        ck_assert_ptr_nonnull(strstr(buf, "recv from 1 into tmp0[0..12)"));
        ck_assert_ptr_nonnull(strstr(buf, "reduce recv[0..12) =op tmp0[0..)"));
        free(buf);
        sched_free(&s);
    }
    ck_assert_str_eq(collop_name(SCHED_OP_REDUCE_SCATTER), "reduce_scatter");
    ck_assert_int_eq(collop_lookup("ALLGATHERV"), SCHED_OP_ALLGATHERV);
    ck_assert_int_eq(collop_lookup("nope"), -1);
}
END_TEST

/* Segmented algorithms give each segment its own steps. */
START_TEST(test_segments)
{
    struct alg_args a = {.op = SCHED_OP_BCAST,
                         .P = 4,
                         .rank = 0,
                         .dtype = COLLS_INT32,
                         .size = 4036,
                         .seg = 1001};
    const char *names[] = {"chain_seg", "binomial_seg"};
    struct sched s;
    size_t i, r, n, k, sends;

    for (i = 0; i < 2; i++) {
        const struct sched_step *st;

        ck_assert_int_eq(
            alg_build(alg_find(SCHED_OP_BCAST, names[i], NULL), &a, &s), 0);
        for (sends = 0, r = 0; r < s.nrounds; r++) {
            st = sched_round_steps(&s, r, &n);
            for (k = 0; k < n; k++)
                if (st[k].kind == SCHED_SEND) {
                    /* 1001 bytes of the 4036 are cut to 1000 */
                    ck_assert_uint_le(st[k].len, 1000);
                    sends++;
                }
        }
        /* five segments, to 1 (chain) or 2 (binomial root of 4) peers */
        ck_assert_uint_eq(sends, i == 0 ? 5 : 10);
        sched_free(&s);
    }
    /* a reduce pipeline never splits an item: segments of 8-byte items */
    a = (struct alg_args){.op = SCHED_OP_REDUCE,
                          .P = 3,
                          .rank = 1,
                          .dtype = COLLS_INT64,
                          .rop = COLLS_SUM,
                          .size = 800,
                          .seg = 100};
    ck_assert_int_eq(
        alg_build(alg_find(SCHED_OP_REDUCE, "chain_seg", NULL), &a, &s), 0);
    for (r = 0; r < s.nrounds; r++) {
        const struct sched_step *st = sched_round_steps(&s, r, &n);

        for (k = 0; k < n; k++)
            ck_assert_uint_eq(st[k].len % 8, 0);
    }
    sched_free(&s);
}
END_TEST

START_TEST(test_sched_cache)
{
    struct sched_cache *c = sched_cache_new(4);
    struct sched_key k = {.op = SCHED_OP_BCAST,
                          .P = 4,
                          .rank = 1,
                          .dtype = COLLS_INT32,
                          .alg = 4,
                          .size = 400};
    struct alg_args a = {.op = SCHED_OP_BCAST,
                         .P = 4,
                         .rank = 1,
                         .dtype = COLLS_INT32,
                         .size = 400};
    const struct sched *got;
    struct sched s;
    uint64_t h, m, ev;
    int i;

    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_null(sched_cache_new(0));
    ck_assert_ptr_null(sched_cache_get(c, &k));
    ck_assert_int_eq(
        alg_build(alg_find(SCHED_OP_BCAST, "binomial", NULL), &a, &s), 0);
    got = sched_cache_put(c, &k, &s);
    ck_assert_ptr_eq(sched_cache_get(c, &k), got);
    ck_assert_uint_eq(got->nrounds, s.nrounds);
    k.size = 404; /* another size: another schedule */
    ck_assert_ptr_null(sched_cache_get(c, &k));
    /* fill the cache until something is evicted */
    for (i = 0; i < 16; i++) {
        k.size = 1000 + 4 * (size_t)i;
        a.size = k.size;
        ck_assert_int_eq(alg_build(&alg_bcast_table[0], &a, &s), 0);
        sched_cache_put(c, &k, &s);
    }
    sched_cache_stats(c, &h, &m, &ev);
    ck_assert_uint_eq(h, 1);
    ck_assert_uint_eq(m, 2);
    ck_assert_uint_ge(ev, 13);
    sched_cache_free(c);
}
END_TEST

/* alg_build rejects what it must, before any builder runs. */
START_TEST(test_alg_args)
{
    const struct alg *ar = alg_find(SCHED_OP_ALLREDUCE, "ring", NULL);
    const struct alg *bf = alg_find(SCHED_OP_BARRIER, "butterfly", NULL);
    struct alg_args a = {.op = SCHED_OP_ALLREDUCE,
                         .P = 4,
                         .rank = 0,
                         .dtype = COLLS_INT32,
                         .rop = COLLS_SUM,
                         .size = 16};
    struct sched s;

    ck_assert_ptr_nonnull(ar);
    ck_assert_int_eq(alg_build(ar, &a, &s), 0);
    sched_free(&s);
    a.size = 15; /* not whole items */
    ck_assert_int_eq(alg_build(ar, &a, &s), COLLS_EINVAL);
    a.size = 16;
    a.dtype = COLLS_DTYPE_MAX;
    ck_assert_int_eq(alg_build(ar, &a, &s), COLLS_EDTYPE);
    a.dtype = COLLS_DOUBLE;
    a.rop = COLLS_BXOR;
    ck_assert_int_eq(alg_build(ar, &a, &s), COLLS_EOP);
    a.rop = COLLS_SUM;
    a.rank = 4;
    ck_assert_int_eq(alg_build(ar, &a, &s), COLLS_EINVAL);
    a.rank = 0;
    a.size = SIZE_MAX / 2; /* P * size overflows */
    a.dtype = COLLS_BYTE;
    a.rop = COLLS_BXOR;
    ck_assert_int_eq(alg_build(ar, &a, &s), COLLS_EINVAL);
    a = (struct alg_args){.op = SCHED_OP_GATHERV, .P = 3, .dtype = COLLS_BYTE};
    ck_assert_int_eq(alg_build(&alg_gather_table[0], &a, &s), COLLS_EINVAL);
    {
        size_t cnt[3] = {4, 6, 4}, dsp[3] = {0, 4, 12};

        a = (struct alg_args){.op = SCHED_OP_GATHERV,
                              .P = 3,
                              .dtype = COLLS_INT16,
                              .counts = cnt,
                              .displs = dsp};
        ck_assert_int_eq(alg_build(&alg_gather_table[1], &a, &s), 0);
        sched_free(&s);
        a.dtype = COLLS_INT32; /* 6 bytes are not whole items */
        ck_assert_int_eq(alg_build(&alg_gather_table[1], &a, &s), COLLS_EINVAL);
        a = (struct alg_args){
            .op = SCHED_OP_BCAST, .P = 3, .dtype = COLLS_DOUBLE, .size = 12};
        ck_assert_int_eq(alg_build(&alg_bcast_table[0], &a, &s), COLLS_EINVAL);
    }
    a = (struct alg_args){.op = SCHED_OP_BARRIER, .P = 6};
    ck_assert_ptr_nonnull(bf);
    ck_assert_int_eq(alg_build(bf, &a, &s), COLLS_ENOTSUP);
    a.P = 8;
    ck_assert_int_eq(alg_build(bf, &a, &s), 0);
    sched_free(&s);
    /* every row of every table has a name, a builder and a cost */
    for (a.op = 0; a.op < SCHED_OP_MAX; a.op++) {
        size_t n, i;
        const struct alg *t = alg_table(a.op, &n);

        ck_assert_uint_gt(n, 1);
        for (i = 0; i < n; i++) {
            ck_assert(t[i].name && t[i].build && t[i].cost);
            ck_assert_ptr_eq(alg_find(a.op, t[i].name, NULL), &t[i]);
        }
    }
}
END_TEST

/* ---- tuning ----------------------------------------------------------- */

/* A sample network: L = 10 us, g(m) = 10 us + m / (1 GB/s). */
static const size_t pl_m[] = {0, 1024, 65536, 1048576, 16777216};
static const double pl_g[] = {10.0, 11.024, 75.536, 1058.576, 16787.216};
static const struct plogp sample_pl = {
    .L = 10.0, .gamma = 0.0002, .n = 5, .m = pl_m, .g = pl_g};

/* The rules' choice for (op, P, size), by name. */
static const char *
rule_choice(int op, int P, size_t size, size_t *seg)
{
    struct alg_args a = {.op = op,
                         .P = P,
                         .size = size,
                         .dtype = COLLS_DOUBLE,
                         .rop = COLLS_SUM};
    struct tune_choice c;

    ck_assert_int_eq(tune_choose(&a, NULL, "", &c), 0);
    ck_assert_int_eq(c.source, TUNE_RULES);
    ck_assert_int_eq(c.fallback, TUNE_FALLBACK_NONE);
    ck_assert(c.predicted < 0.0);
    if (seg)
        *seg = c.seg;
    return c.alg->name;
}

/* The busiest port of every rank's schedule of row t: the larger of the
   gaps of its sends and of its receives, summed, at most over the
   ranks.  -1 when the row cannot run there. */
static double
port_of_schedules(const struct alg *t, struct alg_args a)
{
    double most = 0.0;
    int r;

    for (r = 0; r < a.P; r++) {
        struct sched s;
        double out = 0.0, in = 0.0;
        size_t i;

        a.rank = r;
        if (alg_build(t, &a, &s) != 0) {
            sched_free(&s);
            return -1.0;
        }
        for (i = 0; i < s.nsteps; i++) {
            const struct sched_step *st = &s.steps[i];
            if (st->kind == SCHED_SEND)
                out += topo_plogp_rate(&sample_pl, st->len);
            else if (st->kind == SCHED_RECV)
                in += topo_plogp_rate(&sample_pl, st->len);
        }
        sched_free(&s);
        if (out > most)
            most = out;
        if (in > most)
            most = in;
    }
    return most;
}

/* Every row's port formula is what its schedules send and receive at
   the busiest participant (v-variants aside: their blocks differ), with
   g = gap = 10 us + 1 ns per byte. */
START_TEST(test_port_formulas)
{
    static const size_t sizes[] = {8, 1024, 40000, 1 << 20};
    static const int Ps[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16};
    struct alg_args a = {.dtype = COLLS_DOUBLE, .rop = COLLS_SUM};
    int bad = 0;

    for (a.op = 0; a.op < SCHED_OP_MAX; a.op++) {
        size_t n, i, k, j;
        const struct alg *t = alg_table(a.op, &n);

        if (collop_get(a.op)->base != a.op)
            continue; /* a v-variant */
        for (i = 0; i < n; i++)
            for (k = 0; k < sizeof(Ps) / sizeof(Ps[0]); k++)
                for (j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
                    double want, got;

                    a.P = Ps[k];
                    a.size = a.op == SCHED_OP_BARRIER ? 0 : sizes[j];
                    a.seg = (t[i].flags & ALG_SEGMENTED) ? 16384 : 0;
                    want = port_of_schedules(&t[i], a);
                    if (want < 0.0)
                        continue;
                    ck_assert_ptr_nonnull(t[i].port);
                    got = t[i].port(&sample_pl, a.P, a.size, a.seg);
                    /* exact (but for chunks that do not divide evenly)
                       with P a power of two; else the formulas of
                       allgather's butterfly and reduce_scatter's halving
                       leave out some of the folded ranks' messages */
                    if (got > want * 1.01 + 1e-9 ||
                        got < want * (a.P == topo_pof2(a.P) ? 0.99 : 0.74)) {
                        fprintf(stderr, "%s %s P=%d n=%zu: %g, schedules %g\n",
                                collop_name(a.op), t[i].name, a.P, a.size, got,
                                want);
                        bad++;
                    }
                }
    }
    ck_assert_int_eq(bad, 0);
}
END_TEST

START_TEST(test_tune_rules)
{
    size_t seg;

    ck_assert_str_eq(rule_choice(SCHED_OP_BARRIER, 7, 0, NULL),
                     "dissemination");
    ck_assert_str_eq(rule_choice(SCHED_OP_ALLREDUCE, 8, 64, NULL), "butterfly");
    ck_assert_str_eq(rule_choice(SCHED_OP_ALLREDUCE, 8, 64 * 1024, NULL),
                     "tournament");
    ck_assert_str_eq(rule_choice(SCHED_OP_ALLREDUCE, 8, 4 << 20, NULL), "ring");
    ck_assert_str_eq(rule_choice(SCHED_OP_ALLGATHER, 6, 8, NULL), "butterfly");
    ck_assert_str_eq(rule_choice(SCHED_OP_ALLGATHER, 6, 8192, NULL),
                     "butterfly");
    ck_assert_str_eq(rule_choice(SCHED_OP_ALLGATHER, 6, 1 << 20, NULL), "ring");
    ck_assert_str_eq(rule_choice(SCHED_OP_BCAST, 8, 100, NULL), "binomial");
    ck_assert_str_eq(rule_choice(SCHED_OP_BCAST, 8, 64 * 1024, &seg),
                     "binomial_seg");
    ck_assert_uint_eq(seg, 64 * 1024);
    ck_assert_str_eq(rule_choice(SCHED_OP_BCAST, 32, 64 * 1024, NULL),
                     "scatter_allgather");
    ck_assert_str_eq(rule_choice(SCHED_OP_BCAST, 8, 8 << 20, &seg),
                     "chain_seg");
    ck_assert_uint_eq(seg, 64 * 1024);
    ck_assert_str_eq(rule_choice(SCHED_OP_REDUCE, 8, 8 << 20, &seg),
                     "chain_seg");
    ck_assert_str_eq(rule_choice(SCHED_OP_ALLTOALL, 8, 16, NULL), "bruck");
    ck_assert_str_eq(rule_choice(SCHED_OP_ALLTOALL, 8, 4096, NULL), "pairwise");
    ck_assert_str_eq(rule_choice(SCHED_OP_REDUCE_SCATTER, 5, 64, NULL),
                     "halving");
    ck_assert_str_eq(rule_choice(SCHED_OP_SCAN, 9, 64, NULL),
                     "recursive_doubling");
    ck_assert_str_eq(rule_choice(SCHED_OP_EXSCAN, 2, 64, NULL), "linear");
    /* a row whose algorithm cannot run is skipped: bruck has no v */
    {
        size_t cnt[3] = {4, 4, 4}, dsp[3] = {0, 4, 8};
        struct alg_args a = {.op = SCHED_OP_ALLTOALLV,
                             .P = 3,
                             .dtype = COLLS_BYTE,
                             .scounts = cnt,
                             .sdispls = dsp,
                             .rcounts = cnt,
                             .rdispls = dsp};
        struct tune_choice c;

        ck_assert_int_eq(tune_choose(&a, NULL, "", &c), 0);
        ck_assert_str_eq(c.alg->name, "pairwise");
    }
    /* every operation has a rule-based answer for P = 1..64 */
    {
        struct alg_args a = {.dtype = COLLS_DOUBLE, .rop = COLLS_SUM};
        struct tune_choice c;

        for (a.op = 0; a.op < SCHED_OP_MAX; a.op++)
            for (a.P = 1; a.P <= 64; a.P++) {
                ck_assert_int_eq(tune_choose(&a, NULL, "", &c), 0);
                ck_assert(alg_usable(c.alg, &a));
            }
    }
}
END_TEST

START_TEST(test_tune_force)
{
    struct alg_args a = {.op = SCHED_OP_BARRIER, .P = 6};
    struct tune_choice c;
    char name[16];
    size_t seg;

    /* applicable: forced */
    a.P = 8;
    ck_assert_int_eq(tune_choose(&a, NULL, "butterfly", &c), 0);
    ck_assert_str_eq(c.alg->name, "butterfly");
    ck_assert_int_eq(c.source, TUNE_FORCED);
    ck_assert_int_eq(c.fallback, TUNE_FALLBACK_NONE);
    /* needs a power of two: the fallback, flagged */
    a.P = 6;
    ck_assert_int_eq(tune_choose(&a, NULL, "butterfly", &c), 0);
    ck_assert_str_eq(c.alg->name, "dissemination");
    ck_assert_int_eq(c.source, TUNE_RULES);
    ck_assert_int_eq(c.fallback, TUNE_FALLBACK_UNUSABLE);
    ck_assert(alg_usable(c.alg, &a));
    /* unknown name, malformed segment */
    ck_assert_int_eq(tune_choose(&a, NULL, "nosuch", &c), 0);
    ck_assert_int_eq(c.fallback, TUNE_FALLBACK_UNKNOWN);
    ck_assert_int_eq(tune_choose(&a, &sample_pl, "flat:x", &c), 0);
    ck_assert_int_eq(c.fallback, TUNE_FALLBACK_UNKNOWN);
    ck_assert_int_eq(c.source, TUNE_COST);
    /* alltoallv cannot use bruck */
    {
        size_t cnt[3] = {4, 4, 4}, dsp[3] = {0, 4, 8};
        struct alg_args v = {.op = SCHED_OP_ALLTOALLV,
                             .P = 3,
                             .dtype = COLLS_BYTE,
                             .scounts = cnt,
                             .sdispls = dsp,
                             .rcounts = cnt,
                             .rdispls = dsp};

        ck_assert_int_eq(tune_choose(&v, NULL, "bruck", &c), 0);
        ck_assert_str_eq(c.alg->name, "pairwise");
        ck_assert_int_eq(c.fallback, TUNE_FALLBACK_UNUSABLE);
    }
    /* the daemon refuses a name the operation has no row of (with the
       names there are) before choosing; empty, known or segmented pass */
    {
        char why[120];

        ck_assert_int_eq(tune_check_force(SCHED_OP_BARRIER, "", why, 8), 0);
        ck_assert_int_eq(
            tune_check_force(SCHED_OP_BARRIER, "butterfly", why, 8), 0);
        ck_assert_int_eq(
            tune_check_force(SCHED_OP_BCAST, "chain_seg:64k", why, 8), 0);
        ck_assert_int_eq(
            tune_check_force(SCHED_OP_BARRIER, "nosuch", why, sizeof(why)),
            COLLS_EINVAL);
        ck_assert_str_eq(why, "unknown algorithm \"nosuch\" for barrier (one "
                              "of: dissemination, butterfly, tournament, "
                              "flat)");
        ck_assert_int_eq(
            tune_check_force(SCHED_OP_BARRIER, "flat:x", why, sizeof(why)),
            COLLS_EINVAL);
        /* a short buffer: cut, still a string */
        ck_assert_int_eq(tune_check_force(SCHED_OP_BARRIER, "nosuch", why, 41),
                         COLLS_EINVAL);
        ck_assert_str_eq(why, "unknown algorithm \"nosuch\" for barrier (");
    }
    /* segment syntax, and the environment */
    ck_assert_int_eq(
        tune_parse_force("chain_seg:32k", name, sizeof(name), &seg), 0);
    ck_assert_str_eq(name, "chain_seg");
    ck_assert_uint_eq(seg, 32768);
    ck_assert_int_eq(tune_parse_force("x:0", name, sizeof(name), &seg),
                     COLLS_EINVAL);
    ck_assert_int_eq(tune_parse_force(":5", name, sizeof(name), &seg),
                     COLLS_EINVAL);
    ck_assert_int_eq(
        tune_parse_force("averyveryverylongname", name, sizeof(name), &seg),
        COLLS_EINVAL);
    setenv("COLLS_ALG_BCAST", "chain_seg:2m", 1);
    a = (struct alg_args){
        .op = SCHED_OP_BCAST, .P = 5, .size = 100, .dtype = COLLS_BYTE};
    ck_assert_int_eq(tune_choose(&a, NULL, NULL, &c), 0);
    ck_assert_str_eq(c.alg->name, "chain_seg");
    ck_assert_uint_eq(c.seg, 2u << 20);
    ck_assert_int_eq(c.source, TUNE_FORCED);
    /* the group's option wins over the environment; "" means none */
    ck_assert_int_eq(tune_choose(&a, NULL, "flat", &c), 0);
    ck_assert_str_eq(c.alg->name, "flat");
    ck_assert_int_eq(tune_choose(&a, NULL, "", &c), 0);
    ck_assert_str_eq(c.alg->name, "binomial");
    unsetenv("COLLS_ALG_BCAST");
}
END_TEST

START_TEST(test_tune_cost)
{
    struct alg_args a = {
        .op = SCHED_OP_BCAST, .P = 8, .size = 8, .dtype = COLLS_BYTE};
    struct tune_choice c;
    const struct alg *bin = alg_find(SCHED_OP_BCAST, "binomial", NULL);
    const struct alg *chs = alg_find(SCHED_OP_BCAST, "chain_seg", NULL);
    size_t n, i;
    const struct alg *t = alg_table(SCHED_OP_BCAST, &n);

    ck_assert_int_eq(tune_choose(&a, &sample_pl, "", &c), 0);
    ck_assert_int_eq(c.source, TUNE_COST);
    ck_assert_str_eq(c.alg->name, "binomial");
    /* 3 (L + g(8)) */
    ck_assert(c.predicted > 3 * (10.0 + 10.0) &&
              c.predicted < 3 * (10.0 + 10.1));
    ck_assert(c.predicted == bin->cost(&sample_pl, 8, 8, 0));
    for (i = 0; i < n; i++)
        ck_assert(t[i].cost(&sample_pl, 8, 8, 4096) >= c.predicted);

    a.size = 16 << 20;
    ck_assert_int_eq(tune_choose(&a, &sample_pl, "", &c), 0);
    ck_assert_str_eq(c.alg->name, "chain_seg");
    ck_assert_uint_gt(c.seg, 0);
    ck_assert(c.predicted == chs->cost(&sample_pl, 8, a.size, c.seg));
    ck_assert(c.predicted < bin->cost(&sample_pl, 8, a.size, 0) / 2);

    /* interpolation of g between and beyond the ladder */
    ck_assert(topo_plogp_g(&sample_pl, 512) > 10.0 &&
              topo_plogp_g(&sample_pl, 512) < 11.024);
    ck_assert(topo_plogp_g(&sample_pl, 32u << 20) > 16787.216);

    /* the decision table */
    {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        int Ps[] = {4, 16};
        size_t sizes[] = {8, 1 << 20};
        int lines;

        ck_assert_ptr_nonnull(f);
        lines = tune_print(f, &sample_pl, Ps, 2, sizes, 2);
        fclose(f);
        ck_assert_int_eq(lines, 1 + 11 * 2 * 2);
        ck_assert_ptr_nonnull(strstr(buf, "bcast"));
        ck_assert_ptr_nonnull(strstr(buf, "chain_seg:"));
        ck_assert_ptr_nonnull(strstr(buf, "predicted_us"));
        free(buf);
    }
}
END_TEST

/* The executor's checks: hazards within a round (exec_check), a RECV of
   another length than its SEND, a message nobody receives. */
START_TEST(test_exec_checks)
{
    struct sched a, b, *sp[2] = {&a, &b};
    uint8_t buf[4][16] = {{0}};
    uint8_t *sb[2] = {buf[0], buf[1]}, *rb[2] = {buf[2], buf[3]};
    size_t sz[2] = {16, 16};
    struct simnet_result res;
    char why[200];

    /* two steps of one round writing overlapping bytes */
    sched_init(&a, SCHED_OP_BCAST, 2, 0, COLLS_BYTE, COLLS_SUM);
    sched_copy(&a, SCHED_BUF_RECV, 0, SCHED_BUF_SEND, 0, 8);
    sched_copy(&a, SCHED_BUF_RECV, 4, SCHED_BUF_SEND, 8, 8);
    ck_assert_int_eq(sched_finish(&a), 0);
    ck_assert_int_eq(exec_check(&a, why, sizeof(why)), COLLS_EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "hazard"));
    sched_free(&a);
    /* a send and a receive of other bytes in one round: fine */
    sched_init(&a, SCHED_OP_BCAST, 2, 0, COLLS_BYTE, COLLS_SUM);
    sched_send(&a, 1, SCHED_BUF_SEND, 0, 8);
    sched_recv(&a, 1, SCHED_BUF_RECV, 0, 8);
    ck_assert_int_eq(sched_finish(&a), 0);
    ck_assert_int_eq(exec_check(&a, why, sizeof(why)), 0);
    /* rank 1 expects 4 bytes where rank 0 sends 8 */
    sched_init(&b, SCHED_OP_BCAST, 2, 1, COLLS_BYTE, COLLS_SUM);
    sched_send(&b, 0, SCHED_BUF_SEND, 0, 8);
    sched_recv(&b, 0, SCHED_BUF_RECV, 0, 4);
    ck_assert_int_eq(sched_finish(&b), 0);
    ck_assert_int_eq(simnet_run(sp, 2, sb, sz, rb, sz, &res), -1);
    ck_assert_ptr_nonnull(strstr(res.err, "8 bytes from rank 0, 4 expected"));
    sched_free(&b);
    /* rank 1 receives nothing: rank 0's message is left over */
    sched_init(&b, SCHED_OP_BCAST, 2, 1, COLLS_BYTE, COLLS_SUM);
    sched_send(&b, 0, SCHED_BUF_SEND, 0, 8);
    ck_assert_int_eq(sched_finish(&b), 0);
    ck_assert_int_eq(simnet_run(sp, 2, sb, sz, rb, sz, &res), -1);
    ck_assert_ptr_nonnull(strstr(res.err, "never received"));
    sched_free(&a);
    sched_free(&b);
}
END_TEST

Suite *
suite_sched(void)
{
    Suite *s = suite_create("sched");
    TCase *tc = tcase_create("matrix");
    TCase *tb = tcase_create("basics");

    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_matrix, 0,
                        (int)(sizeof(matrix_ops) / sizeof(matrix_ops[0])));
    tcase_add_test(tc, test_matrix_large_p);
    tcase_add_test(tc, test_allreduce_bitwise);
    tcase_add_test(tc, test_hier_ops);
    suite_add_tcase(s, tc);
    tcase_set_timeout(tb, 60);
    tcase_add_test(tb, test_sched_builder);
    tcase_add_test(tb, test_hier_plan);
    tcase_add_test(tb, test_sched_cache);
    tcase_add_test(tb, test_segments);
    tcase_add_test(tb, test_alg_args);
    tcase_add_test(tb, test_tune_rules);
    tcase_add_test(tb, test_tune_force);
    tcase_add_test(tb, test_tune_cost);
    tcase_add_test(tb, test_port_formulas);
    tcase_add_test(tb, test_exec_checks);
    suite_add_tcase(s, tb);
    return s;
}
