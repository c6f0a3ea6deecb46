/*
 * sched.c -- building schedules, and a small schedule cache.
 *
 * Builders append steps with sched_send() & co. and close rounds with
 * sched_round(); the first error (allocation, bad argument) is kept in
 * s->err and every later call is a no-op, so builders check once, at
 * sched_finish().  Nothing here does I/O.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "colls.h"
#include "daemon/sched.h"
#include "proto/collop.h"

void
sched_init(struct sched *s, int op, int P, int rank, int dtype, int rop)
{
    memset(s, 0, sizeof(*s));
    s->op = op;
    s->P = P;
    s->rank = rank;
    s->dtype = dtype;
    s->rop = rop;
    if (P < 1 || rank < 0 || rank >= P)
        s->err = COLLS_EINVAL;
}

void
sched_free(struct sched *s)
{
    free(s->steps);
    free(s->round_end);
    s->steps = NULL;
    s->round_end = NULL;
    s->nsteps = s->scap = s->nrounds = s->rcap = 0;
}

int
sched_tmp(struct sched *s, size_t size)
{
    if (s->err)
        return -1;
    if (s->ntmp >= SCHED_MAX_TMP) {
        s->err = COLLS_EINVAL;
        return -1;
    }
    s->tmp_size[s->ntmp] = size;
    return SCHED_BUF_TMP + s->ntmp++;
}

/*
 * Checks that [off, off + len) lies in buffer buf and records how far the
 * caller's buffers are used.  Returns 0 or sets s->err.
 */
static int
sched_range(struct sched *s, int buf, size_t off, size_t len, int write)
{
    size_t end = off + len;

    if (end < off || buf < 0 || buf >= SCHED_BUF_TMP + s->ntmp ||
        (write && buf == SCHED_BUF_SEND)) {
        s->err = COLLS_EINVAL;
        return -1;
    }
    if (buf >= SCHED_BUF_TMP) {
        if (end > s->tmp_size[buf - SCHED_BUF_TMP]) {
            s->err = COLLS_EINVAL;
            return -1;
        }
    } else if (end > s->extent[buf]) {
        s->extent[buf] = end;
    }
    return 0;
}

/* Appends one step to the open round; grows the array geometrically. */
static void
sched_add(struct sched *s, const struct sched_step *st)
{
    if (s->err)
        return;
    if (s->nsteps == s->scap) {
        size_t ncap = s->scap ? 2 * s->scap : 16;
        struct sched_step *n = realloc(s->steps, ncap * sizeof(*n));

        if (n == NULL) {
            s->err = COLLS_ENOMEM;
            return;
        }
        s->steps = n;
        s->scap = ncap;
    }
    s->steps[s->nsteps++] = *st;
}

/* Appends a SEND or RECV step (peer checked, range recorded). */
static void
sched_xfer(struct sched *s, int kind, int peer, int buf, size_t off, size_t len)
{
    struct sched_step st = {.kind = (uint8_t)kind,
                            .buf = (uint8_t)buf,
                            .peer = peer,
                            .off = off,
                            .len = len};

    if (s->err)
        return;
    if (peer < 0 || peer >= s->P || peer == s->rank) {
        s->err = COLLS_EINVAL;
        return;
    }
    if (sched_range(s, buf, off, len, kind == SCHED_RECV) == 0)
        sched_add(s, &st);
}

void
sched_send(struct sched *s, int peer, int buf, size_t off, size_t len)
{
    sched_xfer(s, SCHED_SEND, peer, buf, off, len);
}

void
sched_recv(struct sched *s, int peer, int buf, size_t off, size_t len)
{
    sched_xfer(s, SCHED_RECV, peer, buf, off, len);
}

void
sched_reduce(struct sched *s, int dbuf, size_t doff, int sbuf, size_t soff,
             size_t len, unsigned flags)
{
    struct sched_step st = {.kind = SCHED_REDUCE,
                            .buf = (uint8_t)dbuf,
                            .sbuf = (uint8_t)sbuf,
                            .flags = (uint8_t)flags,
                            .peer = -1,
                            .off = doff,
                            .soff = soff,
                            .len = len};

    if (s->err || len == 0)
        return;
    if (sched_range(s, dbuf, doff, len, 1) == 0 &&
        sched_range(s, sbuf, soff, len, 0) == 0)
        sched_add(s, &st);
}

void
sched_copy(struct sched *s, int dbuf, size_t doff, int sbuf, size_t soff,
           size_t len)
{
    struct sched_step st = {.kind = SCHED_COPY,
                            .buf = (uint8_t)dbuf,
                            .sbuf = (uint8_t)sbuf,
                            .peer = -1,
                            .off = doff,
                            .soff = soff,
                            .len = len};

    if (s->err || len == 0 || (dbuf == sbuf && doff == soff))
        return;
    if (sched_range(s, dbuf, doff, len, 1) == 0 &&
        sched_range(s, sbuf, soff, len, 0) == 0)
        sched_add(s, &st);
}

void
sched_round(struct sched *s)
{
    size_t start = s->nrounds ? s->round_end[s->nrounds - 1] : 0;

    if (s->err || s->nsteps == start)
        return;
    if (s->nrounds == s->rcap) {
        size_t ncap = s->rcap ? 2 * s->rcap : 8;
        size_t *n = realloc(s->round_end, ncap * sizeof(*n));

        if (n == NULL) {
            s->err = COLLS_ENOMEM;
            return;
        }
        s->round_end = n;
        s->rcap = ncap;
    }
    s->round_end[s->nrounds++] = s->nsteps;
}

int
sched_finish(struct sched *s)
{
    sched_round(s);
    if (s->err)
        sched_free(s);
    return s->err;
}

const struct sched_step *
sched_round_steps(const struct sched *s, size_t i, size_t *n)
{
    size_t start;

    if (i >= s->nrounds) {
        *n = 0;
        return NULL;
    }
    start = i ? s->round_end[i - 1] : 0;
    *n = s->round_end[i] - start;
    return s->steps + start;
}

/* Name of buffer b for listings: "send", "recv", "tmp0".. */
static const char *
sched_buf_name(int b, char *tmp, size_t cap)
{
    if (b == SCHED_BUF_SEND)
        return "send";
    if (b == SCHED_BUF_RECV)
        return "recv";
    snprintf(tmp, cap, "tmp%d", b - SCHED_BUF_TMP);
    return tmp;
}

int
sched_print(FILE *f, const struct sched *s)
{
    size_t r, i, n;
    char b1[16], b2[16];
    int w;

    w = fprintf(f, "%s rank %d of %d: %zu rounds, %zu steps\n",
                collop_name(s->op), s->rank, s->P, s->nrounds, s->nsteps);
    for (r = 0; r < s->nrounds && w >= 0; r++) {
        const struct sched_step *st = sched_round_steps(s, r, &n);

        for (i = 0; i < n && w >= 0; i++) {
            const char *d = sched_buf_name(st[i].buf, b1, sizeof(b1));

            if (st[i].kind == SCHED_SEND || st[i].kind == SCHED_RECV)
                w = fprintf(f, "round %zu: %s %s %d %s %s[%zu..%zu)\n", r,
                            sched_kind_name(st[i].kind),
                            st[i].kind == SCHED_SEND ? "to" : "from",
                            st[i].peer,
                            st[i].kind == SCHED_SEND ? "from" : "into", d,
                            st[i].off, st[i].off + st[i].len);
            else
                w = fprintf(f, "round %zu: %s %s[%zu..%zu) %s %s[%zu..)\n", r,
                            sched_kind_name(st[i].kind), d, st[i].off,
                            st[i].off + st[i].len,
                            st[i].kind == SCHED_COPY            ? "="
                            : (st[i].flags & SCHED_F_SRC_FIRST) ? "=op"
                                                                : "op=",
                            sched_buf_name(st[i].sbuf, b2, sizeof(b2)),
                            st[i].soff);
        }
    }
    return w < 0 ? COLLS_EIO : 0;
}

const char *
sched_kind_name(int kind)
{
    static const char *const names[] = {"send", "recv", "reduce", "copy"};

    if (kind < 0 || kind > SCHED_COPY)
        return "?";
    return names[kind];
}

/* ---- cache ------------------------------------------------------------ */

struct sched_cache_slot {
    int used;
    struct sched_key key;
    struct sched s;
};

struct sched_cache {
    size_t nslots;
    uint64_t hits, misses, evictions;
    struct sched_cache_slot slot[];
};

struct sched_cache *
sched_cache_new(size_t nslots)
{
    struct sched_cache *c;

    if (nslots == 0 || nslots > (1u << 20))
        return NULL;
    c = calloc(1, sizeof(*c) + nslots * sizeof(c->slot[0]));
    if (c != NULL)
        c->nslots = nslots;
    return c;
}

void
sched_cache_free(struct sched_cache *c)
{
    size_t i;

    if (c == NULL)
        return;
    for (i = 0; i < c->nslots; i++)
        if (c->slot[i].used)
            sched_free(&c->slot[i].s);
    free(c);
}

/* FNV-1a over the key's fields (not its padding). */
static size_t
sched_key_hash(const struct sched_key *k)
{
    uint64_t v[9] = {(uint64_t)k->op,   (uint64_t)k->P,     (uint64_t)k->rank,
                     (uint64_t)k->root, (uint64_t)k->dtype, (uint64_t)k->rop,
                     (uint64_t)k->alg,  (uint64_t)k->size,  (uint64_t)k->seg};
    uint64_t h = 1469598103934665603ull;
    size_t i, b;

    for (i = 0; i < 9; i++)
        for (b = 0; b < 8; b++) {
            h ^= (v[i] >> (8 * b)) & 0xff;
            h *= 1099511628211ull;
        }
    return (size_t)h;
}

static int
sched_key_eq(const struct sched_key *a, const struct sched_key *b)
{
    return a->op == b->op && a->P == b->P && a->rank == b->rank &&
           a->root == b->root && a->dtype == b->dtype && a->rop == b->rop &&
           a->alg == b->alg && a->size == b->size && a->seg == b->seg;
}

const struct sched *
sched_cache_get(struct sched_cache *c, const struct sched_key *key)
{
    struct sched_cache_slot *sl = &c->slot[sched_key_hash(key) % c->nslots];

    if (sl->used && sched_key_eq(&sl->key, key)) {
        c->hits++;
        return &sl->s;
    }
    c->misses++;
    return NULL;
}

const struct sched *
sched_cache_put(struct sched_cache *c, const struct sched_key *key,
                struct sched *s)
{
    struct sched_cache_slot *sl = &c->slot[sched_key_hash(key) % c->nslots];

    if (sl->used) {
        sched_free(&sl->s);
        c->evictions++;
    }
    sl->used = 1;
    sl->key = *key;
    sl->s = *s;
    return &sl->s;
}

void
sched_cache_stats(const struct sched_cache *c, uint64_t *hits, uint64_t *misses,
                  uint64_t *evictions)
{
    *hits = c->hits;
    *misses = c->misses;
    *evictions = c->evictions;
}
