/*
 * test-coll.c -- groups and collectives of libcolls against a scripted
 * daemon (docs/collectives.md).
 *
 * A forked fake daemon answers the attach handshake, GROUP_JOIN (by group
 * name: "fail" -> GROUP_FAILED EEXIST, "notme" -> a member list without
 * the task, else a group of the asked size with the task at rank 1, or 0
 * when alone) and COLL_REQ.  Its COLL_RESULT names in `alg` what the
 * request said ("op/rop/root/mode/compress/count/seq/ncounts/nrcounts/alg")
 * and carries a payload computed as if every member had sent what this
 * one sent: allreduce SUM int32 = P * x; bcast = the root's data (a known
 * pattern when the task is not the root); gatherv at the root (nothing
 * elsewhere) = block j
 * filled with byte j + 1, counts[j] items each; alltoallv = the packed
 * input itself.  Groups named "dead" answer COLLS_EPEERDEAD, "short" one
 * byte less than asked, "stale" first a result of another seq, "swap" in
 * the other byte order, and "slow" its frame up to half the payload, then
 * the rest 400 ms later.
 *
 * What is checked: argument validation (error codes, and that a rejected
 * call sends nothing: the next request still has seq 0), join replies and
 * their checks, the option fields of COLL_REQ, unpacking of v-results into
 * displacements, packing of v-inputs in rank order, sticky failure, a
 * result of the wrong length, a stale result ignored; large results (read
 * straight into the caller's buffer): their values, in either byte order,
 * and a buffer left alone once its call timed out mid-result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libclient/internal.h"
#include "proto/buf.h"
#include "proto/dtype.h"
#include "tests/netutil.h"
#include "tests/unit/fakedaemon.h"
#include "tests/unit/suites.h"

#define ME               0x100005u
#define BCAST_PATTERN(i) ((uint8_t)(0xa0 ^ (i)))

/* Answers a GROUP_JOIN; returns the size of the group formed (0: none). */
static int
fake_join(int fd, const Envelope *in)
{
    Envelope e;
    GroupInfo gi = GROUP_INFO__INIT;
    uint32_t tids[64];
    int size =
        in->body_case == ENVELOPE__BODY_GROUP_JOIN ? in->group_join->size : 0;
    int i;

    envelope_init(&e);
    e.req_id = in->req_id;
    e.group = in->group;
    if (strcmp(in->group, "fail") == 0 || size < 1 || size > 64) {
        e.kind = KIND__GROUP_FAILED;
        e.status = size < 1 || size > 64 ? COLLS_EINVAL : COLLS_EEXIST;
        fake_send(fd, &e, NULL, 0);
        return 0;
    }
    for (i = 0; i < size; i++)
        tids[i] = 0x200001u + (uint32_t)i;
    if (strcmp(in->group, "notme") != 0)
        tids[size > 1 ? 1 : 0] = ME;
    e.kind = KIND__GROUP_FORMED;
    gi.gid = 7;
    gi.n_tids = (size_t)size;
    gi.tids = tids;
    gi.owner = 1;
    gi.placement = in->group_join->placement;
    e.body_case = ENVELOPE__BODY_GROUP_INFO;
    e.group_info = &gi;
    fake_send(fd, &e, NULL, 0);
    return size;
}

/* Answers a COLL_REQ as described in the file comment. */
static void
fake_coll(int fd, const Envelope *in, const uint8_t *pl, size_t plen, int P)
{
    Envelope e;
    CollResult cr = COLL_RESULT__INIT;
    const CollReq *q = in->coll_req;
    char desc[128];
    uint8_t *out = NULL;
    size_t olen = 0, i, j, off = 0;

    if (in->body_case != ENVELOPE__BODY_COLL_REQ)
        _exit(6);
    snprintf(desc, sizeof(desc), "%u/%u/%d/%u/%u/%llu/%llu/%zu/%zu/%s", q->op,
             q->rop, q->root, q->mode, q->compress,
             (unsigned long long)in->count, (unsigned long long)in->seq,
             q->n_counts, q->n_rcounts, q->alg);
    switch (q->op) {
    case COLLS_COLL_ALLREDUCE:
        out = malloc(plen + 1);
        for (i = 0; i + 4 <= plen; i += 4) { /* native int32 */
            uint32_t v;
            memcpy(&v, pl + i, 4);
            v *= (uint32_t)P;
            memcpy(out + i, &v, 4);
        }
        olen = plen;
        break;
    case COLLS_COLL_BCAST:
        olen = (size_t)in->count * 4;
        out = malloc(olen + 1);
        for (i = 0; i < olen; i++)
            out[i] = plen > 0 ? pl[i] : BCAST_PATTERN(i);
        break;
    case COLLS_COLL_GATHERV:
        if (q->root != (P > 1 ? 1 : 0)) /* the task is not the root */
            break;
        for (j = 0; j < q->n_counts; j++)
            olen += (size_t)q->counts[j] * 4;
        out = malloc(olen + 1);
        for (j = 0; j < q->n_counts; j++) {
            memset(out + off, (int)(j + 1), (size_t)q->counts[j] * 4);
            off += (size_t)q->counts[j] * 4;
        }
        break;
    case COLLS_COLL_ALLTOALLV:
        out = malloc(plen + 1);
        memcpy(out, pl, plen);
        olen = plen;
        break;
    default:
        break;
    }
    envelope_init(&e);
    e.kind = KIND__COLL_RESULT;
    e.group = in->group;
    e.byte_order = in->byte_order;
    if (strcmp(in->group, "stale") == 0) {
        e.seq = in->seq + 100;
        fake_send(fd, &e, "junk", 4);
    }
    e.seq = in->seq;
    if (strcmp(in->group, "dead") == 0) {
        e.status = COLLS_EPEERDEAD;
        olen = 0;
    }
    if (strcmp(in->group, "short") == 0 && olen > 0)
        olen--;
    if (strcmp(in->group, "swap") == 0 && olen > 0) {
        dtype_swap(COLLS_INT32, out, olen / 4);
        e.byte_order = in->byte_order == COLLS_ORDER_LITTLE
                           ? COLLS_ORDER_BIG
                           : COLLS_ORDER_LITTLE;
    }
    cr.alg = desc;
    cr.mode = COLLS_MODE_HIER;
    e.body_case = ENVELOPE__BODY_COLL_RESULT;
    e.coll_result = &cr;
    if (strcmp(in->group, "slow") == 0) {
        struct buf b;
        size_t half;
        buf_init(&b);
        if (envelope_frame(&b, &e, out, olen) != 0)
            _exit(3);
        half = b.len - olen / 2;
        if (netutil_write_full(fd, b.data, half) != 0)
            _exit(3);
        usleep(400000);
        if (netutil_write_full(fd, b.data + half, b.len - half) != 0)
            _exit(3);
        buf_free(&b);
    } else {
        fake_send(fd, &e, out, olen);
    }
    free(out);
}

/* Group size of the last GROUP_JOIN answered (the child's copy only). */
static int fake_P;

/* The fake daemon's handler: GROUP_JOIN and COLL_REQ. */
static void
fake_handle(int fd, const Envelope *in, const uint8_t *pl, size_t plen,
            void *arg)
{
    (void)arg;
    switch (in->kind) {
    case KIND__GROUP_JOIN: {
        int n = fake_join(fd, in);
        if (n > 0)
            fake_P = n;
        break;
    }
    case KIND__COLL_REQ:
        fake_coll(fd, in, pl, plen, fake_P);
        break;
    default:
        break;
    }
}

static colls_t *
attach(struct fake *f)
{
    memset(f, 0, sizeof(*f));
    f->tid = ME;
    f->max_message = 1u << 20;
    f->handler = fake_handle;
    fake_P = 1;
    /* the fake daemon plays the other members: nothing may run direct
       among tasks that do not exist (libclient/dcoll.c) */
    setenv("COLLS_DIRECT_MAX", "0", 1);
    return fake_attach(f);
}

static void
detach(struct fake *f, colls_t *c)
{
    fake_detach(f, c);
}

START_TEST(test_join)
{
    struct fake f;
    colls_t *c = attach(&f);
    colls_group_t *g = (colls_group_t *)1;

    ck_assert_int_eq(colls_group_join(c, "", 2, &g), COLLS_EINVAL);
    ck_assert_ptr_null(g);
    ck_assert_int_eq(colls_group_join(c, "a b", 2, &g), COLLS_EINVAL);
    ck_assert_int_eq(colls_group_join(c, "g", 0, &g), COLLS_EINVAL);
    ck_assert_int_eq(colls_group_join_placed(c, "g", 2, 7, &g), COLLS_EINVAL);
    ck_assert_int_eq(colls_group_join(NULL, "g", 2, &g), COLLS_EINVAL);
    ck_assert_int_eq(colls_group_join(c, "fail", 2, &g), COLLS_EEXIST);
    ck_assert_int_eq(colls_group_join(c, "notme", 2, &g), COLLS_EPROTO);
    ck_assert_ptr_null(g);

    ck_assert_int_eq(colls_group_join(c, "g", 3, &g), 1);
    ck_assert_int_eq(colls_group_rank(g), 1);
    ck_assert_int_eq(colls_group_size(g), 3);
    ck_assert_uint_eq(colls_group_tid(g, 0), 0x200001u);
    ck_assert_uint_eq(colls_group_tid(g, 1), ME);
    ck_assert_uint_eq(colls_group_tid(g, 3), 0);
    ck_assert_uint_eq(colls_group_tid(g, -1), 0);
    ck_assert_str_eq(colls_group_last_alg(g), "");
    ck_assert_int_eq(colls_group_set_mode(g, 9), COLLS_EINVAL);
    ck_assert_int_eq(colls_group_set_compress(g, 3), COLLS_EINVAL);
    ck_assert_int_eq(colls_group_set_alg(g, COLLS_COLL_MAX, "ring"),
                     COLLS_EINVAL);
    ck_assert_int_eq(colls_group_set_alg(g, COLLS_COLL_BCAST, "Ring"),
                     COLLS_EINVAL);
    ck_assert_int_eq(colls_group_set_alg(g, COLLS_COLL_BCAST, "ring:"),
                     COLLS_EINVAL);
    ck_assert_int_eq(colls_group_set_alg(g, COLLS_COLL_BCAST, "ring:0"),
                     COLLS_EINVAL);
    ck_assert_int_eq(colls_group_set_alg(g, COLLS_COLL_BCAST, "ring:1x"),
                     COLLS_EINVAL);
    ck_assert_int_eq(
        colls_group_set_alg(g, COLLS_COLL_BCAST, "chain_seg:65536"), 0);
    ck_assert_int_eq(colls_group_leave(g), 0);

    /* so is a COLLS_DIRECT_MAX that is no number of bytes */
    setenv("COLLS_DIRECT_MAX", "12x", 1);
    ck_assert_int_eq(colls_group_join(c, "g2", 1, &g), COLLS_EINVAL);
    setenv("COLLS_DIRECT_MAX", "-1", 1);
    ck_assert_int_eq(colls_group_join(c, "g2", 1, &g), COLLS_EINVAL);
    setenv("COLLS_DIRECT_MAX", "0", 1);

    /* an invalid COLLS_ALG_<OP> is refused before anything is sent */
    setenv("COLLS_ALG_SCAN", "no spec!", 1);
    ck_assert_int_eq(colls_group_join(c, "g2", 1, &g), COLLS_EINVAL);
    unsetenv("COLLS_ALG_SCAN");
    detach(&f, c);
}
END_TEST

START_TEST(test_validation)
{
    struct fake f;
    colls_t *c = attach(&f);
    colls_group_t *g;
    int32_t x[8] = {0}, y[8] = {0};
    size_t counts[3] = {1, 2, 3}, displs[3] = {0, 1, 3};
    size_t big[3] = {SIZE_MAX / 2, 1, 1};

    ck_assert_int_eq(colls_group_join(c, "v", 3, &g), 1);
    ck_assert_int_eq(colls_barrier(NULL), COLLS_EINVAL);
    ck_assert_int_eq(colls_bcast(g, x, 1, COLLS_DTYPE_MAX, 0), COLLS_EDTYPE);
    ck_assert_int_eq(colls_bcast(g, x, 1, COLLS_INT32, 3), COLLS_EINVAL);
    ck_assert_int_eq(colls_bcast(g, x, 1, COLLS_INT32, -1), COLLS_EINVAL);
    ck_assert_int_eq(colls_bcast(g, NULL, 1, COLLS_INT32, 0), COLLS_EINVAL);
    ck_assert_int_eq(colls_allreduce(g, x, y, 1, COLLS_BYTE, COLLS_SUM),
                     COLLS_EOP);
    ck_assert_int_eq(colls_allreduce(g, x, y, 1, COLLS_DOUBLE, COLLS_BAND),
                     COLLS_EOP);
    ck_assert_int_eq(colls_allreduce(g, x, y, 1, COLLS_INT32, COLLS_OP_MAX),
                     COLLS_EOP);
    ck_assert_int_eq(colls_allreduce(g, x, y, 1, -1, COLLS_SUM), COLLS_EDTYPE);
    ck_assert_int_eq(colls_reduce(g, x, y, 1, COLLS_INT32, COLLS_SUM, 5),
                     COLLS_EINVAL);
    /* products that do not fit, or exceed the daemon's largest message */
    ck_assert_int_eq(
        colls_allreduce(g, x, y, SIZE_MAX / 2, COLLS_INT32, COLLS_SUM),
        COLLS_EMSGSIZE);
    ck_assert_int_eq(colls_allgather(g, x, y, (1u << 20) / 4, COLLS_INT32),
                     COLLS_EMSGSIZE);
    ck_assert_int_eq(colls_alltoall(g, x, y, SIZE_MAX / 8, COLLS_INT64),
                     COLLS_EMSGSIZE);
    /* v-variants: arrays, own count, overflow */
    ck_assert_int_eq(colls_allgatherv(g, x, 2, y, NULL, displs, COLLS_INT32),
                     COLLS_EINVAL);
    ck_assert_int_eq(colls_allgatherv(g, x, 1, y, counts, displs, COLLS_INT32),
                     COLLS_EINVAL);
    ck_assert_int_eq(colls_allgatherv(g, x, 1, y, big, displs, COLLS_INT32),
                     COLLS_EMSGSIZE);
    ck_assert_int_eq(colls_gatherv(g, x, 2, y, NULL, NULL, COLLS_INT32, 1),
                     COLLS_EINVAL);
    ck_assert_int_eq(colls_scatterv(g, x, counts, displs, y, 1, COLLS_INT32, 1),
                     COLLS_EINVAL);
    ck_assert_int_eq(
        colls_alltoallv(g, x, counts, displs, y, big, displs, COLLS_INT32),
        COLLS_EMSGSIZE);
    /* nothing was sent: the first request goes out with seq 0 */
    ck_assert_int_eq(colls_barrier(g), 0);
    ck_assert_str_eq(colls_group_last_alg(g), "0/0/0/0/0/0/0/0/0/");
    ck_assert_int_eq(colls_group_last_mode(g), COLLS_MODE_HIER);
    ck_assert_int_eq(colls_barrier(g), 0);
    ck_assert_str_eq(colls_group_last_alg(g), "0/0/0/0/0/0/1/0/0/");
    ck_assert_int_eq(colls_group_leave(g), 0);
    detach(&f, c);
}
END_TEST

START_TEST(test_results)
{
    struct fake f;
    colls_t *c;
    colls_group_t *g;
    int32_t x[5] = {1, -2, 3, 40000, 5}, y[5];
    uint8_t b[12], rb[64];
    size_t counts[3] = {2, 0, 3}, displs[3] = {10, 0, 2};
    size_t sc[3] = {1, 2, 1}, sd[3] = {3, 1, 0}, rd[3] = {0, 1, 3};
    int32_t s[4] = {100, 200, 300, 400}, r[4] = {0};
    size_t i;

    setenv("COLLS_ALG_BCAST", "chain_seg:4096", 1);
    c = attach(&f);
    ck_assert_int_eq(colls_group_join(c, "r", 3, &g), 1);
    unsetenv("COLLS_ALG_BCAST");
    ck_assert_int_eq(colls_group_set_mode(g, COLLS_MODE_FLAT), 0);
    ck_assert_int_eq(colls_group_set_compress(g, COLLS_COMPRESS_AUTO), 0);
    ck_assert_int_eq(colls_allreduce(g, x, y, 5, COLLS_INT32, COLLS_MAX), 0);
    for (i = 0; i < 5; i++)
        ck_assert_int_eq(y[i], 3 * x[i]);
    ck_assert_str_eq(colls_group_last_alg(g), "3/3/0/2/2/5/0/0/0/");

    /* bcast: not the root gets the root's data; the forced algorithm */
    memset(b, 0, sizeof(b));
    ck_assert_int_eq(colls_bcast(g, b, 3, COLLS_INT32, 2), 0);
    for (i = 0; i < sizeof(b); i++)
        ck_assert_uint_eq(b[i], BCAST_PATTERN(i));
    ck_assert_str_eq(colls_group_last_alg(g),
                     "1/0/2/2/2/3/1/0/0/chain_seg:4096");
    ck_assert_int_eq(colls_group_set_alg(g, COLLS_COLL_BCAST, NULL), 0);
    memset(b, 7, sizeof(b));
    ck_assert_int_eq(colls_bcast(g, b, 3, COLLS_INT32, 1), 0);
    for (i = 0; i < sizeof(b); i++)
        ck_assert_uint_eq(b[i], 7);

    /* gatherv at the root: block j (filled with j + 1) at displs[j] */
    memset(rb, 0, sizeof(rb));
    ck_assert_int_eq(colls_gatherv(g, x, 0, rb, counts, displs, COLLS_INT32, 1),
                     0);
    ck_assert_str_eq(colls_group_last_alg(g), "5/0/1/2/2/0/3/3/0/");
    for (i = 0; i < sizeof(rb); i++) {
        uint8_t want = i >= 40 && i < 48 ? 1 : i >= 8 && i < 20 ? 3 : 0;
        ck_assert_uint_eq(rb[i], want);
    }
    /* not the root: counts still required and sent, displs not needed,
       nothing comes back */
    ck_assert_int_eq(colls_gatherv(g, x, 0, NULL, NULL, NULL, COLLS_INT32, 0),
                     COLLS_EINVAL);
    ck_assert_int_eq(colls_gatherv(g, x, 0, NULL, counts, NULL, COLLS_INT32, 0),
                     0);
    ck_assert_str_eq(colls_group_last_alg(g), "5/0/0/2/2/0/4/3/0/");

    /* alltoallv: input packed in rank order, result unpacked likewise */
    ck_assert_int_eq(colls_alltoallv(g, s, sc, sd, r, sc, rd, COLLS_INT32), 0);
    /* packed: s[3], s[1..2], s[0] -> r[0], r[1..2], r[3] */
    ck_assert_int_eq(r[0], 400);
    ck_assert_int_eq(r[1], 200);
    ck_assert_int_eq(r[2], 300);
    ck_assert_int_eq(r[3], 100);
    ck_assert_int_eq(colls_group_leave(g), 0);
    detach(&f, c);
}
END_TEST

START_TEST(test_failures)
{
    struct fake f;
    colls_t *c = attach(&f);
    colls_group_t *g;
    int32_t x[2] = {1, 2}, y[2] = {0, 0};

    /* a stale result is ignored */
    ck_assert_int_eq(colls_group_join(c, "stale", 2, &g), 1);
    ck_assert_int_eq(colls_allreduce(g, x, y, 2, COLLS_INT32, COLLS_SUM), 0);
    ck_assert_int_eq(y[0], 2);
    ck_assert_int_eq(y[1], 4);
    ck_assert_int_eq(colls_group_leave(g), 0);

    /* a result of the wrong length */
    ck_assert_int_eq(colls_group_join(c, "short", 2, &g), 1);
    ck_assert_int_eq(colls_allreduce(g, x, y, 2, COLLS_INT32, COLLS_SUM),
                     COLLS_EPROTO);
    ck_assert_int_eq(colls_group_leave(g), 0);

    /* a dead peer makes the group unusable */
    ck_assert_int_eq(colls_group_join(c, "dead", 2, &g), 1);
    ck_assert_int_eq(colls_barrier(g), COLLS_EPEERDEAD);
    ck_assert_int_eq(colls_allreduce(g, x, y, 2, COLLS_INT32, COLLS_SUM),
                     COLLS_EPEERDEAD);
    ck_assert_int_eq(colls_group_leave(g), 0);
    detach(&f, c);
}
END_TEST

/* Large results: read straight into the caller's buffer (conn.c,
   colls__coll_claim_result), swapped there, and never written there once
   the call returned. */
START_TEST(test_large)
{
    enum { N = 65536 }; /* 256 KiB: more than a frame's inline payload */
    struct fake f;
    colls_t *c = attach(&f);
    colls_group_t *g, *sw, *slow;
    int32_t *x = malloc(N * 4), *y = malloc(N * 4);
    size_t i;

    for (i = 0; i < N; i++)
        x[i] = (int32_t)(i * 2654435761u);
    ck_assert_int_eq(colls_group_join(c, "big", 3, &g), 1);
    ck_assert_int_eq(colls_group_join(c, "swap", 3, &sw), 1);
    ck_assert_int_eq(colls_group_join(c, "slow", 3, &slow), 1);
    for (i = 0; i < 2; i++) {
        size_t k;
        memset(y, 0, N * 4);
        ck_assert_int_eq(
            colls_allreduce(i ? sw : g, x, y, N, COLLS_INT32, COLLS_SUM), 0);
        for (k = 0; k < N; k++)
            if ((uint32_t)y[k] != (uint32_t)x[k] * 3u)
                ck_abort_msg("%s: item %zu: %d", i ? "swap" : "big", k, y[k]);
    }
    /* in place: the input is written before the result is read there */
    memcpy(y, x, N * 4);
    ck_assert_int_eq(colls_allreduce(g, y, y, N, COLLS_INT32, COLLS_SUM), 0);
    for (i = 0; i < N; i++)
        ck_assert_uint_eq((uint32_t)y[i], (uint32_t)x[i] * 3u);

    /* half the result, then the call times out; the rest, read after it
       returned, must not land in its buffer */
    ck_assert_int_eq(colls_set_timeout(c, 150), 0);
    ck_assert_int_eq(colls_bcast(slow, y, N, COLLS_INT32, 0), COLLS_ETIMEDOUT);
    ck_assert_int_eq(colls_set_timeout(c, -1), 0);
    memset(y, 0x11, N * 4);
    ck_assert_int_eq(colls_allreduce(g, x, x, 1, COLLS_INT32, COLLS_SUM), 0);
    for (i = 0; i < N; i++)
        ck_assert_uint_eq((uint32_t)y[i], 0x11111111u);
    ck_assert_int_eq(colls_group_leave(g), 0);
    ck_assert_int_eq(colls_group_leave(sw), 0);
    ck_assert_int_eq(colls_group_leave(slow), 0);
    free(x);
    free(y);
    detach(&f, c);
}
END_TEST

Suite *
suite_coll(void)
{
    Suite *s = suite_create("coll");
    TCase *tc = tcase_create("coll");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_join);
    tcase_add_test(tc, test_validation);
    tcase_add_test(tc, test_results);
    tcase_add_test(tc, test_failures);
    tcase_add_test(tc, test_large);
    suite_add_tcase(s, tc);
    return s;
}
