/*
 * test-hier.c -- the host-local phase of hierarchical collectives
 * (daemon/hier.c) against a serial reference.
 *
 * For each operation, layout of ranks over hosts (1, 2 and 3 members per
 * host, contiguous or round-robin), root (on a host with one member or
 * with several, first or last rank), and datatype (int32, double): every
 * host combines its members' inputs with hier_combine, the leaders'
 * operation is computed serially over those inputs here, every host
 * distributes the leader's output with hier_result, and each rank's
 * result is compared with the operation computed serially over all
 * ranks.  Data are small integers, so double sums are exact in any order.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/alg/topo.h"
#include "daemon/hier.h"
#include "proto/collop.h"
#include "proto/dtype.h"
#include "proto/reduce.h"
#include "tests/unit/suites.h"

#define MAXP  8
#define COUNT 3    /* items per block */
#define BUF   2048 /* bytes of every buffer here */

/* Ranks over hosts: the host id of each rank. */
static const struct {
    const char *name;
    int P;
    int hid[MAXP];
} layouts[] = {
    {"1+1+1", 3, {1, 2, 3}},
    {"2+2+2", 6, {1, 1, 2, 2, 3, 3}},
    {"3+3+1", 7, {1, 1, 1, 2, 2, 2, 3}},
    {"1+3", 4, {1, 2, 2, 2}},
    {"roundrobin", 6, {1, 2, 3, 1, 2, 3}},
};

/* One case and every buffer of it. */
struct hcase {
    int op, dtype, P, root;
    size_t esize, n;
    struct topo_hier H;
    size_t vb[MAXP];            /* gatherv family: block bytes */
    size_t a2a[MAXP][4 * MAXP]; /* alltoallv: per rank sc, sd, rc, rd */
    uint8_t in[MAXP][BUF];
    size_t inlen[MAXP];
    /* per host */
    size_t arr[MAXP][6 * MAXP];
    struct hier_layout L[MAXP];
    uint8_t ls[MAXP][BUF], lr[MAXP][BUF];
    size_t lss[MAXP], lrs[MAXP];
};

static void
put_item(int dtype, uint8_t *p, size_t k, int v)
{
    if (dtype == COLLS_DOUBLE) {
        double d = v;

        memcpy(p + k * 8, &d, 8);
    } else {
        int32_t x = v;

        memcpy(p + k * 4, &x, 4);
    }
}

/* Block items of rank r in the v-layouts: uneven, some zero. */
static size_t
vitems(int r)
{
    return (size_t)((r * 7 + 3) % 4);
}

/* Rank r's input: its length by operation, items (r * 31 + k) % 23 + 1. */
static void
make_inputs(struct hcase *c)
{
    size_t P = (size_t)c->P, e = c->esize, off;
    int r, j;

    for (r = 0; r < c->P; r++) {
        c->vb[r] = vitems(r) * e;
        for (j = 0, off = 0; j < c->P; j++) { /* alltoallv sends */
            c->a2a[r][j] = (size_t)((r * 3 + j) % 3) * e;
            c->a2a[r][P + (size_t)j] = off;
            off += c->a2a[r][j];
        }
    }
    for (r = 0; r < c->P; r++) {
        size_t k;

        for (j = 0, off = 0; j < c->P; j++) { /* what each j sends r */
            c->a2a[r][2 * P + (size_t)j] = c->a2a[j][r];
            c->a2a[r][3 * P + (size_t)j] = off;
            off += c->a2a[j][r];
        }
        switch (c->op) {
        case COLLS_COLL_BARRIER:
            c->inlen[r] = 0;
            break;
        case COLLS_COLL_BCAST:
            c->inlen[r] = r == c->root ? c->n : 0;
            break;
        case COLLS_COLL_SCATTER:
            c->inlen[r] = r == c->root ? P * c->n : 0;
            break;
        case COLLS_COLL_SCATTERV:
            for (j = 0, off = 0; j < c->P; j++)
                off += c->vb[j];
            c->inlen[r] = r == c->root ? off : 0;
            break;
        case COLLS_COLL_GATHERV:
        case COLLS_COLL_ALLGATHERV:
            c->inlen[r] = c->vb[r];
            break;
        case COLLS_COLL_ALLTOALL:
        case COLLS_COLL_REDUCE_SCATTER:
            c->inlen[r] = P * c->n;
            break;
        case COLLS_COLL_ALLTOALLV:
            c->inlen[r] = c->a2a[r][P + P - 1] + c->a2a[r][P - 1];
            break;
        default:
            c->inlen[r] = c->n;
            break;
        }
        for (k = 0; k < c->inlen[r] / e; k++)
            put_item(c->dtype, c->in[r], k, (int)((r * 31 + (int)k) % 23) + 1);
    }
}

/* acc = fold of len bytes of the buffers of ranks/hosts idx[0..m). */
static void
fold(const struct hcase *c, uint8_t *acc, uint8_t (*bufs)[BUF], size_t at,
     const int *idx, int m, size_t len)
{
    int i;

    memcpy(acc, bufs[idx[0]] + at, len);
    for (i = 1; i < m; i++)
        ck_assert_int_eq(reduce_apply(COLLS_SUM, c->dtype, acc,
                                      bufs[idx[i]] + at, len / c->esize),
                         0);
}

/* Every host's layout, sizes and combined leader input. */
static void
combine_all(struct hcase *c)
{
    int h, i;

    for (h = 0; h < c->H.nhosts; h++) {
        struct hier_layout *L = &c->L[h];
        const uint8_t *in[MAXP];
        size_t inlen[MAXP], *a = c->arr[h];
        static size_t *a2a[MAXP][MAXP];
        int NH = c->H.nhosts, nl;

        memset(L, 0, sizeof(*L));
        L->op = c->op;
        L->dtype = c->dtype;
        L->rop = COLLS_SUM;
        L->root = c->root;
        L->count = COUNT;
        L->n = c->n;
        L->P = c->P;
        L->H = &c->H;
        L->myhost = h;
        L->vb = collop_is_vector(c->op) && c->op != COLLS_COLL_ALLTOALLV ? c->vb
                                                                         : NULL;
        L->cnt = a;
        L->dsp = a + NH;
        L->sc = a + 2 * NH;
        L->sd = a + 3 * NH;
        L->rc = a + 4 * NH;
        L->rd = a + 5 * NH;
        nl = hier_nlocal(L);
        for (i = 0; i < nl; i++) {
            int r = c->H.members[c->H.start[h] + i];

            in[i] = c->in[r];
            inlen[i] = c->inlen[r];
            a2a[h][i] = c->a2a[r];
        }
        L->a2a = c->op == COLLS_COLL_ALLTOALLV ? a2a[h] : NULL;
        hier_blocks(L);
        hier_sizes(L, &c->lss[h], &c->lrs[h]);
        ck_assert(c->lss[h] <= BUF && c->lrs[h] <= BUF);
        memset(c->ls[h], 0xee, BUF);
        memset(c->lr[h], 0xee, BUF);
        ck_assert_int_eq(hier_combine(L, in, inlen, c->ls[h], c->lr[h]), 0);
    }
}

/* The leaders' operation, serially, from every ls[] into every lr[]. */
static void
leaders(struct hcase *c)
{
    int NH = c->H.nhosts, hr = c->H.host[c->root], h, b, idx[MAXP];
    const struct hier_layout *R = &c->L[hr];

    for (h = 0; h < NH; h++)
        idx[h] = h;
    switch (collop_get(c->op)->leader) {
    case COLLS_COLL_BCAST:
        for (h = 0; h < NH; h++)
            memcpy(c->lr[h], c->lr[hr], c->n);
        break;
    case COLLS_COLL_REDUCE:
        fold(c, c->lr[hr], c->ls, 0, idx, NH, c->lss[hr]);
        break;
    case COLLS_COLL_ALLREDUCE:
        for (h = 0; h < NH; h++)
            fold(c, c->lr[h], c->ls, 0, idx, NH, c->lss[h]);
        break;
    case COLLS_COLL_EXSCAN:
        for (h = 1; h < NH; h++)
            fold(c, c->lr[h], c->ls, 0, idx, h, c->lss[h]);
        break;
    case COLLS_COLL_GATHERV:
    case COLLS_COLL_ALLGATHERV:
        for (h = 0; h < NH; h++)
            if (h == hr || c->op == COLLS_COLL_ALLGATHER ||
                c->op == COLLS_COLL_ALLGATHERV)
                for (b = 0; b < NH; b++)
                    memcpy(c->lr[h] + R->dsp[b], c->ls[b], R->cnt[b]);
        break;
    case COLLS_COLL_SCATTERV:
        for (h = 0; h < NH; h++)
            memcpy(c->lr[h], c->ls[hr] + R->dsp[h], R->cnt[h]);
        break;
    case COLLS_COLL_ALLTOALLV:
        for (h = 0; h < NH; h++)
            for (b = 0; b < NH; b++) {
                ck_assert(c->L[b].sc[h] == c->L[h].rc[b]);
                memcpy(c->lr[h] + c->L[h].rd[b], c->ls[b] + c->L[b].sd[h],
                       c->L[b].sc[h]);
            }
        break;
    default: /* barrier */
        break;
    }
}

/* Rank r's expected result into exp; its length. */
static size_t
expected(struct hcase *c, int r, uint8_t *exp)
{
    size_t P = (size_t)c->P, n = c->n, off = 0;
    int all[MAXP], j;

    for (j = 0; j < c->P; j++)
        all[j] = j;
    switch (c->op) {
    case COLLS_COLL_BCAST:
        if (r == c->root)
            return 0; /* the root is answered without data */
        memcpy(exp, c->in[c->root], n);
        return n;
    case COLLS_COLL_REDUCE:
        if (r != c->root)
            return 0;
        fold(c, exp, c->in, 0, all, c->P, n);
        return n;
    case COLLS_COLL_ALLREDUCE:
        fold(c, exp, c->in, 0, all, c->P, n);
        return n;
    case COLLS_COLL_REDUCE_SCATTER:
        fold(c, exp, c->in, (size_t)r * n, all, c->P, n);
        return n;
    case COLLS_COLL_SCAN:
        fold(c, exp, c->in, 0, all, r + 1, n);
        return n;
    case COLLS_COLL_EXSCAN:
        if (r == 0)
            return 0;
        fold(c, exp, c->in, 0, all, r, n);
        return n;
    case COLLS_COLL_GATHER:
    case COLLS_COLL_GATHERV:
    case COLLS_COLL_ALLGATHER:
    case COLLS_COLL_ALLGATHERV:
        if (r != c->root &&
            (c->op == COLLS_COLL_GATHER || c->op == COLLS_COLL_GATHERV))
            return 0;
        for (j = 0; j < c->P; j++) {
            memcpy(exp + off, c->in[j], c->inlen[j]);
            off += c->inlen[j];
        }
        return off;
    case COLLS_COLL_SCATTER:
        memcpy(exp, c->in[c->root] + (size_t)r * n, n);
        return n;
    case COLLS_COLL_SCATTERV:
        for (j = 0; j < r; j++)
            off += c->vb[j];
        memcpy(exp, c->in[c->root] + off, c->vb[r]);
        return c->vb[r];
    case COLLS_COLL_ALLTOALL:
        for (j = 0; j < c->P; j++)
            memcpy(exp + (size_t)j * n, c->in[j] + (size_t)r * n, n);
        return P * n;
    case COLLS_COLL_ALLTOALLV:
        for (j = 0; j < c->P; j++) {
            memcpy(exp + c->a2a[r][3 * P + (size_t)j],
                   c->in[j] + c->a2a[j][P + (size_t)r], c->a2a[j][r]);
            off += c->a2a[j][r];
        }
        return off;
    default: /* barrier */
        return 0;
    }
}

/* Runs one case; fails the test with the case's name on a mismatch. */
static void
run_case(int op, int li, int root, int dtype)
{
    static struct hcase c;
    uint8_t exp[BUF], scratch[BUF];
    int h, i;

    memset(&c, 0, sizeof(c));
    c.op = op;
    c.dtype = dtype;
    c.P = layouts[li].P;
    c.root = root;
    c.esize = dtype_size(dtype);
    c.n = COUNT * c.esize;
    ck_assert_int_eq(topo_hier_plan(c.P, layouts[li].hid, &c.H), 0);
    make_inputs(&c);
    combine_all(&c);
    leaders(&c);
    for (h = 0; h < c.H.nhosts; h++) {
        const uint8_t *in[MAXP];
        int nl = hier_nlocal(&c.L[h]);

        ck_assert(hier_scratch(&c.L[h]) <= BUF);
        for (i = 0; i < nl; i++)
            in[i] = c.in[c.H.members[c.H.start[h] + i]];
        for (i = 0; i < nl; i++) {
            int r = c.H.members[c.H.start[h] + i];
            const uint8_t *got;
            size_t len, elen = expected(&c, r, exp);

            ck_assert_int_eq(
                hier_result(&c.L[h], i, c.lr[h], in, scratch, &got, &len), 0);
            ck_assert_msg(len == elen && (len == 0 || !memcmp(got, exp, len)),
                          "%s, layout %s, root %d, %s: rank %d got %zu bytes, "
                          "expected %zu%s",
                          collop_name(op), layouts[li].name, root,
                          dtype_name(dtype), r, len, elen,
                          len == elen ? " (different)" : "");
        }
    }
    topo_hier_free(&c.H);
}

/* Every layout (contiguous ones only where the operation needs them),
   root and datatype for op. */
static void
run_op(int op)
{
    static const int dtypes[] = {COLLS_INT32, COLLS_DOUBLE};
    const struct collop *o = collop_get(op);
    int contig = (o->blocks && o->family != COLLOP_ALL_TO_ALL2) ||
                 o->family == COLLOP_PREFIX;
    size_t li, di;

    for (li = 0; li < sizeof(layouts) / sizeof(layouts[0]); li++) {
        int P = layouts[li].P, roots[] = {0, P - 1}, k;

        if (contig && strcmp(layouts[li].name, "roundrobin") == 0)
            continue;
        for (di = 0; di < 2; di++)
            for (k = 0; k < (o->rooted ? 2 : 1); k++)
                run_case(op, (int)li, roots[k], dtypes[di]);
    }
}

#define HIER_TEST(name, op)                                                    \
    START_TEST(test_##name)                                                    \
    {                                                                          \
        run_op(op);                                                            \
    }                                                                          \
    END_TEST

HIER_TEST(barrier, COLLS_COLL_BARRIER)
HIER_TEST(bcast, COLLS_COLL_BCAST)
HIER_TEST(reduce, COLLS_COLL_REDUCE)
HIER_TEST(allreduce, COLLS_COLL_ALLREDUCE)
HIER_TEST(gather, COLLS_COLL_GATHER)
HIER_TEST(gatherv, COLLS_COLL_GATHERV)
HIER_TEST(scatter, COLLS_COLL_SCATTER)
HIER_TEST(scatterv, COLLS_COLL_SCATTERV)
HIER_TEST(allgather, COLLS_COLL_ALLGATHER)
HIER_TEST(allgatherv, COLLS_COLL_ALLGATHERV)
HIER_TEST(alltoall, COLLS_COLL_ALLTOALL)
HIER_TEST(alltoallv, COLLS_COLL_ALLTOALLV)
HIER_TEST(reduce_scatter, COLLS_COLL_REDUCE_SCATTER)
HIER_TEST(scan, COLLS_COLL_SCAN)
HIER_TEST(exscan, COLLS_COLL_EXSCAN)

Suite *
suite_hier(void)
{
    Suite *s = suite_create("hier");
    TCase *tc = tcase_create("ops");

    tcase_add_test(tc, test_barrier);
    tcase_add_test(tc, test_bcast);
    tcase_add_test(tc, test_reduce);
    tcase_add_test(tc, test_allreduce);
    tcase_add_test(tc, test_gather);
    tcase_add_test(tc, test_gatherv);
    tcase_add_test(tc, test_scatter);
    tcase_add_test(tc, test_scatterv);
    tcase_add_test(tc, test_allgather);
    tcase_add_test(tc, test_allgatherv);
    tcase_add_test(tc, test_alltoall);
    tcase_add_test(tc, test_alltoallv);
    tcase_add_test(tc, test_reduce_scatter);
    tcase_add_test(tc, test_scan);
    tcase_add_test(tc, test_exscan);
    suite_add_tcase(s, tc);
    return s;
}
