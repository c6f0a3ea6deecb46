/*
 * exec.c -- the schedule executor; see exec.h.
 *
 * Owns nothing beyond one run: its buffers, its copy of the schedule when
 * it took one, and the per-step done flags.  Messages come from the
 * caller's inbox and go back through exec_ops.consumed; sends go out
 * through exec_ops.send.  No I/O, no clock, no logging: errors are codes,
 * with a sentence in x->why.
 *
 * May call: daemon/sched.h, proto/reduce.h, proto/dtype.h, proto/list.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/exec.h"
#include "proto/dtype.h"
#include "proto/reduce.h"

/* Points buffer b of x at the caller's p (size bytes, at least need), or
   allocates max(size, need) zeroed bytes when p is NULL. */
static int
exec_buf(struct exec *x, int b, uint8_t *p, size_t size, size_t need)
{
    if (p != NULL) {
        if (need > size)
            return COLLS_EINVAL;
        x->buf[b] = p;
        x->bsz[b] = size;
        return 0;
    }
    if (need > size)
        size = need;
    x->own[b] = calloc(1, size ? size : 1);
    if (x->own[b] == NULL)
        return COLLS_ENOMEM;
    x->buf[b] = x->own[b];
    x->bsz[b] = size;
    return 0;
}

int
exec_init(struct exec *x, int phase, const struct sched *s, int take,
          uint8_t *sbuf, size_t ssz, uint8_t *rbuf, size_t rsz)
{
    size_t maxst = 0, i, n;
    int rc, t;

    memset(x, 0, sizeof(*x));
    x->phase = phase;
    x->rank = s->rank;
    if (take) {
        x->mine = *s;
        x->s = &x->mine;
    } else {
        x->s = s;
    }
    x->esize = s->op == SCHED_OP_BARRIER ? 1 : dtype_size(s->dtype);
    if ((rc = exec_buf(x, SCHED_BUF_SEND, sbuf, ssz,
                       s->extent[SCHED_BUF_SEND])) != 0 ||
        (rc = exec_buf(x, SCHED_BUF_RECV, rbuf, rsz,
                       s->extent[SCHED_BUF_RECV])) != 0)
        return rc;
    for (t = 0; t < s->ntmp; t++) {
        size_t sz = s->tmp_size[t];

        x->own[SCHED_BUF_TMP + t] = malloc(sz ? sz : 1);
        x->buf[SCHED_BUF_TMP + t] = x->own[SCHED_BUF_TMP + t];
        x->bsz[SCHED_BUF_TMP + t] = sz;
        if (x->buf[SCHED_BUF_TMP + t] == NULL)
            return COLLS_ENOMEM;
    }
    for (i = 0; i < s->nrounds; i++) {
        sched_round_steps(s, i, &n);
        if (n > maxst)
            maxst = n;
    }
    x->done = calloc(maxst + 1, 1);
    return x->done == NULL ? COLLS_ENOMEM : 0;
}

void
exec_free(struct exec *x)
{
    int b;

    if (x->s == &x->mine)
        sched_free(&x->mine);
    for (b = 0; b < SCHED_NBUF; b++)
        free(x->own[b]);
    free(x->done);
    memset(x, 0, sizeof(*x));
}

/* Runs a REDUCE step of x.  0 or a COLLS_E* code. */
static int
exec_reduce(struct exec *x, const struct sched_step *st)
{
    uint8_t *d = x->buf[st->buf] + st->off;
    const uint8_t *src = x->buf[st->sbuf] + st->soff;

    if (x->esize == 0 || st->len % x->esize != 0) {
        snprintf(x->why, sizeof(x->why),
                 "rank %d: reduce of %zu bytes, item %zu", x->rank, st->len,
                 x->esize);
        return COLLS_EINVAL;
    }
    if (st->flags & SCHED_F_SRC_FIRST)
        return reduce_apply3(x->s->rop, x->s->dtype, d, src, d,
                             st->len / x->esize);
    return reduce_apply(x->s->rop, x->s->dtype, d, src, st->len / x->esize);
}

/* Starts round x->round: local steps now, sends out, RECVs counted. */
static int
exec_round(struct exec *x, const struct exec_ops *ops, void *arg)
{
    size_t i;
    int rc;

    x->pending = 0;
    x->nst = 0;
    if (x->round >= x->s->nrounds) {
        x->finished = 1;
        return 0;
    }
    x->st = sched_round_steps(x->s, x->round, &x->nst);
    for (i = 0; i < x->nst; i++) {
        const struct sched_step *st = &x->st[i];

        x->done[i] = 1;
        switch (st->kind) {
        case SCHED_SEND:
            rc = ops->send(arg, x->phase, x->rank, st->peer,
                           x->buf[st->buf] + st->off, st->len);
            break;
        case SCHED_RECV:
            x->done[i] = 0;
            x->pending++;
            rc = 0;
            break;
        case SCHED_COPY:
            memmove(x->buf[st->buf] + st->off, x->buf[st->sbuf] + st->soff,
                    st->len);
            rc = 0;
            break;
        case SCHED_REDUCE:
            rc = exec_reduce(x, st);
            break;
        default:
            rc = COLLS_EINVAL;
            break;
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

int
exec_start(struct exec *x, const struct exec_ops *ops, void *arg)
{
    x->started = 1;
    x->round = 0;
    return exec_round(x, ops, arg);
}

/* Matches x's open RECVs with inbox, in step order; *moved if any. */
static int
exec_match(struct exec *x, struct list_node *inbox, const struct exec_ops *ops,
           void *arg, int *moved)
{
    size_t i;

    for (i = 0; i < x->nst && x->pending > 0; i++) {
        const struct sched_step *st = &x->st[i];
        struct list_node *n;
        struct exec_msg *m = NULL;

        if (x->done[i] || st->kind != SCHED_RECV)
            continue;
        LIST_FOREACH (n, inbox) {
            struct exec_msg *c = list_entry(n, struct exec_msg, node);

            if (c->phase == x->phase && c->dst == x->rank &&
                c->src == st->peer) {
                m = c;
                break;
            }
        }
        if (m == NULL)
            continue;
        list_del(&m->node);
        if (m->len != st->len) {
            snprintf(x->why, sizeof(x->why),
                     "%zu bytes from rank %d, %zu expected", m->len, m->src,
                     st->len);
            ops->consumed(arg, m);
            return COLLS_ECOUNT;
        }
        memcpy(x->buf[st->buf] + st->off, m->data, m->len);
        ops->consumed(arg, m);
        x->done[i] = 1;
        x->pending--;
        *moved = 1;
    }
    return 0;
}

int
exec_advance(struct exec *x, struct list_node *inbox,
             const struct exec_ops *ops, void *arg, int *moved)
{
    int rc;

    if (!x->started || x->finished)
        return 0;
    if ((rc = exec_match(x, inbox, ops, arg, moved)) != 0)
        return rc;
    while (!x->finished && x->pending == 0) {
        x->round++;
        *moved = 1;
        if ((rc = exec_round(x, ops, arg)) != 0 ||
            (rc = exec_match(x, inbox, ops, arg, moved)) != 0)
            return rc;
    }
    return 0;
}

/* ---- hazards ---------------------------------------------------------- */

/* One byte range a step reads or writes. */
struct exec_range {
    size_t off, end;
    int buf, write;
    size_t step;
};

/* Order by (buffer, offset). */
static int
exec_range_cmp(const void *a, const void *b)
{
    const struct exec_range *x = a, *y = b;

    if (x->buf != y->buf)
        return x->buf < y->buf ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* The non-empty ranges of st into r; how many. */
static int
exec_ranges(const struct sched_step *st, size_t i, struct exec_range *r)
{
    int n = 0;

    if (st->len == 0)
        return 0;
    r[n++] = (struct exec_range){st->off, st->off + st->len, st->buf,
                                 st->kind != SCHED_SEND, i};
    if (st->kind == SCHED_REDUCE || st->kind == SCHED_COPY)
        r[n++] =
            (struct exec_range){st->soff, st->soff + st->len, st->sbuf, 0, i};
    return n;
}

/*
 * Round rd of s: sorts its ranges by (buffer, offset) and sweeps them,
 * keeping the furthest end of any range and of any written range seen so
 * far; a write starting before the first, or a read before the second,
 * overlaps an earlier range with a write on one side.  r: scratch room
 * for 2 ranges per step.
 */
static int
exec_check_round(const struct sched *s, size_t rd, struct exec_range *r,
                 char *why, size_t cap)
{
    size_t n, i, nr = 0, all_end = 0, w_end = 0, all_st = 0, w_st = 0;
    const struct sched_step *st = sched_round_steps(s, rd, &n);
    int buf = -1;

    for (i = 0; i < n; i++)
        nr += (size_t)exec_ranges(&st[i], i, r + nr);
    qsort(r, nr, sizeof(*r), exec_range_cmp);
    for (i = 0; i < nr; i++) {
        size_t other;

        if (r[i].buf != buf) {
            buf = r[i].buf;
            all_end = w_end = 0;
        }
        if (r[i].write ? r[i].off < all_end : r[i].off < w_end) {
            other = r[i].write ? all_st : w_st;
            snprintf(why, cap,
                     "rank %d round %zu: hazard between step %zu (%s) and "
                     "step %zu (%s) on buffer %d",
                     s->rank, rd, other, sched_kind_name(st[other].kind),
                     r[i].step, sched_kind_name(st[r[i].step].kind), buf);
            return COLLS_EINVAL;
        }
        if (r[i].end > all_end) {
            all_end = r[i].end;
            all_st = r[i].step;
        }
        if (r[i].write && r[i].end > w_end) {
            w_end = r[i].end;
            w_st = r[i].step;
        }
    }
    return 0;
}

int
exec_check(const struct sched *s, char *why, size_t cap)
{
    size_t rd, n, max = 0;
    struct exec_range *r;
    int rc = 0;

    for (rd = 0; rd < s->nrounds; rd++) {
        sched_round_steps(s, rd, &n);
        if (n > max)
            max = n;
    }
    r = malloc((2 * max + 1) * sizeof(*r));
    if (r == NULL)
        return COLLS_ENOMEM;
    for (rd = 0; rd < s->nrounds && rc == 0; rd++)
        rc = exec_check_round(s, rd, r, why, cap);
    free(r);
    return rc;
}
