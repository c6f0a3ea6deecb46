/*
 * coll.c -- the collective operations of a group (docs/collectives.md,
 * "Collectives").
 *
 * Every call checks its arguments here first (group, datatype, operator
 * against the datatype with reduce_check(), root range, buffers, counts
 * and their products against size_t and the daemon's largest message), so
 * a bad call costs no round trip and leaves the group's sequence alone.
 * Then it writes one COLL_REQ whose payload is the caller's memory itself
 * (header + the caller's buffer; a v-variant's blocks as one buffer each,
 * in rank order: packed on the wire, never copied here), waits until the
 * write is done and for the COLL_RESULT of the same (group name, seq),
 * and copies the result into the caller's buffer (v-variants: block j to
 * displacement j).
 *
 * One call waits per handle (calls block), so the handle holds a single
 * pointer to the waiting call (colls_t.coll_wait).  A member whose result
 * is empty or already at hand (the root of bcast, scatter and scatterv,
 * which copies its own block itself; a non-root of reduce, gather and
 * gatherv) returns as soon as its COLL_REQ is written, as MPI's
 * completion semantics allow: its buffer may be reused then.  Its result
 * is still due; the call leaves an entry (group, seq) in colls_t.
 * coll_early, and the frame dispatcher consumes that result whenever it
 * arrives.  A failure of such an operation is reported by the next call
 * on the group: every call that waits for its own result also waits for
 * the group's earlier ones and returns the first earlier failure when its
 * own succeeded (its own output is valid then); a call that returns early
 * reports a failure that has already arrived.  At most COLL_EARLY_MAX
 * operations per group are outstanding; the next call waits for the
 * oldest.  Leaving the group and detaching wait for them all
 * (colls__coll_drain).  docs/collectives.md, "Completion".
 *
 * A result that matches nothing (one of a call that timed out) is
 * dropped.  A result with COLLS_EPEERDEAD or COLLS_EHOSTDOWN makes the
 * group unusable: later calls fail with the same status without asking
 * the daemon.  A failed result's words (coll_result.why: what differed,
 * the algorithm names there are) are kept for colls_errmsg().
 *
 * With COLLS_TRACE=1 (read when the group was joined) each successful
 * collective writes one line to stderr:
 *   colls-trace group=NAME op=bcast bytes=N P=8 alg=binomial mode=hier us=T
 * bytes: the caller's block (v-variants: its input bytes), us: the call's
 * time as seen by the caller.  A direct one on a group with several
 * members on a host adds local=board or local=direct (hcoll.c: how the
 * members of this host handed each other the data).  A call that returned early
 * writes alg=- (the algorithm is not known yet) and early=1.
 *
 * API layer (internal.h): may call p2p.c (writes of a request), colls.c's
 * loop and the connection layer (conn.h); its results come from the
 * frame dispatcher in colls.c (colls__coll_frame).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "proto/collop.h"
#include "proto/reduce.h"

/* The collective waiting for its result (colls_t.coll_wait). */
struct colls__coll_wait {
    const struct colls_group *g;
    uint64_t seq;
    int done;
    Envelope *rep;
    uint8_t *payload;
    size_t plen;
    /* Where the caller wants the whole result (cap bytes), or NULL: a
       large result is read straight there (colls__coll_claim_result)
       once the request is written (sent).  bound: being read there;
       placed: it was, and payload is NULL. */
    void *out;
    size_t cap;
    int sent, bound, placed;
    int cma_out;    /* the daemon may write the result at out itself */
    int cma_placed; /* ... and says it did */
};

/* An operation that returned before its result (colls_t.coll_early). */
struct colls__coll_early {
    struct colls__coll_early *next;
    struct colls_group *g;
    uint64_t seq;
};

/* Most operations of one group that may have returned early and still
   await their result. */
#define COLL_EARLY_MAX 64

/* What one collective sends and expects back. */
struct coll_args {
    int op, dtype, rop, root;
    uint64_t count; /* envelope count: items of this member */
    uv_buf_t *in;   /* input payload pieces */
    unsigned nin;
    uint64_t *counts; /* v-variants, NULL otherwise */
    size_t ncounts;
    uint64_t *rcounts; /* alltoallv receive side */
    size_t nrcounts;
    size_t expect; /* result bytes */
    int empty_ok;  /* an empty result is fine too (bcast root) */
    int early;     /* may return once written: the result is not needed */
    size_t trace_bytes;
};

/* Keeps the algorithm and mode of successful result rep of collective
   seq unless a later collective's are kept already. */
static void
coll_keep_alg(struct colls_group *g, uint64_t seq, const Envelope *rep)
{
    const CollResult *r;

    if (rep->body_case != ENVELOPE__BODY_COLL_RESULT ||
        (g->last_alg[0] != '\0' && seq < g->last_seq))
        return;
    r = rep->coll_result;
    snprintf(g->last_alg, sizeof(g->last_alg), "%s",
             r->alg != NULL ? r->alg : "");
    g->last_mode = (int)r->mode;
    g->last_seq = seq;
}

/*
 * The result of an operation that returned early, if e is one: takes its
 * entry off c->coll_early and keeps a failure for the group's next call.
 * 1 if it was one.
 */
static int
coll_early_result(colls_t *c, const Envelope *e)
{
    struct colls__coll_early **pp, *x;
    struct colls_group *g;
    int st = e->status;

    for (pp = &c->coll_early; (x = *pp) != NULL; pp = &x->next)
        if (x->seq == e->seq && strcmp(x->g->name, e->group) == 0)
            break;
    if (x == NULL)
        return 0;
    g = x->g;
    *pp = x->next;
    free(x);
    g->early--;
    if (st < 0 && g->early_err == 0) {
        g->early_err = st;
        snprintf(g->early_why, sizeof(g->early_why), "%s",
                 e->body_case == ENVELOPE__BODY_COLL_RESULT &&
                         e->coll_result->why != NULL
                     ? e->coll_result->why
                     : "");
    }
    if (st == COLLS_EPEERDEAD || st == COLLS_EHOSTDOWN)
        g->failed = st;
    if (st >= 0)
        coll_keep_alg(g, e->seq, e);
    return 1;
}

/*
 * A COLL_RESULT arrived: hand it to the waiting call if it is the result
 * of that call's (group, seq), else consume it if it is one of an
 * operation that returned early, else drop it.  Takes e and payload.
 */
void
colls__coll_frame(colls_t *c, Envelope *e, uint8_t *payload, size_t plen)
{
    struct colls__coll_wait *w = c->coll_wait;

    if (w == NULL || w->done || e->group == NULL ||
        strcmp(e->group, w->g->name) != 0 || e->seq != w->seq) {
        if (e->group != NULL)
            coll_early_result(c, e);
        envelope_free(e);
        free(payload);
        return;
    }
    w->rep = e;
    w->payload = payload;
    w->plen = plen;
    w->done = 1;
    if (e->body_case == ENVELOPE__BODY_COLL_RESULT && e->coll_result->placed &&
        e->status >= 0) {
        /* written at out by the daemon (single copy); coll_run checks
           that it was asked to */
        free(payload);
        w->payload = NULL;
        w->plen = w->cap;
        w->placed = 1;
        w->cma_placed = 1;
    }
}

/* ops->claim_result: a large result for the waiting call is read into
   its output buffer, if it has one of exactly len bytes. */
void *
colls__coll_claim_result(struct colls__conn *cn, const Envelope *e, size_t len,
                         void **token)
{
    struct colls__coll_wait *w = COLLS__OF(cn)->coll_wait;

    if (w == NULL || w->out == NULL || !w->sent || w->done || w->bound ||
        len != w->cap || e->status < 0 || e->group == NULL ||
        e->seq != w->seq || strcmp(e->group, w->g->name) != 0)
        return NULL;
    w->bound = 1;
    *token = w;
    return w->out;
}

/* ops->result_claimed: that result is in place (e its frame), or lost
   with the daemon stream (whose end fails the wait). */
void
colls__coll_result_claimed(struct colls__conn *cn, void *token, Envelope *e,
                           size_t len, int status)
{
    struct colls__coll_wait *w = token;

    (void)cn;
    w->bound = 0;
    if (status < 0)
        return;
    w->rep = e;
    w->plen = len;
    w->placed = 1;
    w->done = 1;
}

/* The waiting call has its result and the group's earlier operations
   have theirs. */
static int
coll_all_pred(void *arg)
{
    const struct colls__coll_wait *w = arg;

    return w->done && w->g->early == 0;
}

/* Fewer than n of the group's operations await their result. */
struct coll_early_below {
    const struct colls_group *g;
    unsigned n;
};

static int
coll_early_below_pred(void *arg)
{
    const struct coll_early_below *b = arg;

    return b->g->early < b->n;
}

/*
 * Waits (timed) until fewer than n of g's operations await their result.
 * 0, or the wait's COLLS_E* code.
 */
static int
coll_early_wait(const struct colls_group *g, unsigned n)
{
    struct coll_early_below b = {g, n};

    if (g->early < n)
        return 0;
    return colls__wait(g->c, coll_early_below_pred, &b, 1);
}

/* Forgets every entry of g (every entry when g is NULL). */
static void
coll_early_forget(colls_t *c, struct colls_group *g)
{
    struct colls__coll_early **pp = &c->coll_early, *x;

    while ((x = *pp) != NULL) {
        if (g != NULL && x->g != g) {
            pp = &x->next;
            continue;
        }
        *pp = x->next;
        x->g->early--;
        free(x);
    }
}

void
colls__coll_drain(colls_t *c, struct colls_group *g)
{
    struct colls__coll_early *x;

    if (g != NULL) {
        if (c->conn.daemon != NULL)
            (void)coll_early_wait(g, 1);
        coll_early_forget(c, g);
        return;
    }
    while ((x = c->coll_early) != NULL) {
        if (c->conn.daemon == NULL || coll_early_wait(x->g, 1) < 0)
            break;
    }
    coll_early_forget(c, NULL);
}

void
colls__coll_settle(const struct colls_group *g)
{
    if (g->early > 0 && g->c->conn.daemon != NULL && g->c->coll_wait == NULL)
        (void)coll_early_wait(g, 1);
}

/* An earlier operation's failure not reported yet, for the call ending
   with rc (its output already in place): rc if it failed itself, else
   that failure (once). */
static int
coll_early_report(struct colls_group *g, int rc)
{
    int err = g->early_err;

    if (rc < 0 || err == 0)
        return rc;
    g->early_err = 0;
    snprintf(g->c->errmsg, sizeof(g->c->errmsg), "%s", g->early_why);
    return err;
}

static int
coll_sent_pred(void *arg)
{
    return ((struct colls_req *)arg)->done;
}

/* *out = a * b; COLLS_EMSGSIZE if that does not fit a size_t. */
static int
coll_mul(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return COLLS_EMSGSIZE;
    *out = a * b;
    return 0;
}

/* *sum += a; COLLS_EMSGSIZE on overflow. */
static int
coll_add(size_t *sum, size_t a)
{
    if (a > SIZE_MAX - *sum)
        return COLLS_EMSGSIZE;
    *sum += a;
    return 0;
}

/* Microseconds of the monotonic clock. */
static double
coll_now_us(void)
{
    return (double)uv_hrtime() / 1e3;
}

/* "hier", "flat" or "auto" for a COLLS_MODE_*. */
static const char *
coll_mode_name(int mode)
{
    return mode == COLLS_MODE_HIER   ? "hier"
           : mode == COLLS_MODE_FLAT ? "flat"
                                     : "auto";
}

/*
 * The checks every call of op on g makes first, by op's traits
 * (proto/collop.h): 0, or the group's sticky failure, COLLS_EINVAL (no
 * group; a rooted op's root out of range), COLLS_EDTYPE, or for a
 * reduction reduce_check()'s verdict on operator rop.
 */
static int
coll_check(const struct colls_group *g, int op, int dtype, int rop, int root)
{
    if (g == NULL)
        return COLLS_EINVAL;
    if (g->failed)
        return g->failed;
    if (!dtype_valid(dtype))
        return COLLS_EDTYPE;
    if (collop_is_rooted(op) && (root < 0 || root >= g->size))
        return COLLS_EINVAL;
    if (collop_is_reduction(op))
        return reduce_check(rop, dtype);
    return 0;
}

/*
 * Keeps the daemon's words on failed COLL_RESULT rep for colls_errmsg().
 * The daemon names an algorithm it does not have as "unknown algorithm
 * ..."; when op's spec came from the environment, the variable is named
 * first ("COLLS_ALG_ALLREDUCE=nosuch: unknown algorithm ...").
 */
static void
coll_keep_why(struct colls_group *g, int op, const Envelope *rep)
{
    const char *why = rep->body_case == ENVELOPE__BODY_COLL_RESULT &&
                              rep->coll_result->why != NULL
                          ? rep->coll_result->why
                          : "";
    char var[64];

    if ((g->alg_env & (1u << op)) &&
        strncmp(why, "unknown algorithm", 17) == 0) {
        colls__alg_env_var(var, sizeof(var), op);
        snprintf(g->c->errmsg, sizeof(g->c->errmsg), "%s=%s: %s", var,
                 g->alg[op], why);
        return;
    }
    snprintf(g->c->errmsg, sizeof(g->c->errmsg), "%s", why);
}

/*
 * Runs one collective on g: writes the COLL_REQ with a's payload, waits
 * for it to be written and for its result, checks the result's length
 * against a->expect.  On success *res is the result payload (malloc'd,
 * NULL when empty; the caller frees it) and *rlen its length, in native
 * byte order.  A large result may instead be read straight into out
 * (a->expect bytes, unless NULL): *res is then NULL and *rlen its length.
 * Returns 0 or a COLLS_E* code.
 */
static int
coll_run(struct colls_group *g, const struct coll_args *a, void *out,
         uint8_t **res, size_t *rlen)
{
    colls_t *c = g->c;
    struct colls__coll_wait w;
    struct colls_req wr;
    Envelope e;
    CollReq cr = COLL_REQ__INIT;
    size_t inlen = 0, ds = dtype_size(a->dtype);
    double t0 = coll_now_us();
    unsigned i, nin = a->nin;
    int rc;

    *res = NULL;
    *rlen = 0;
    for (i = 0; i < a->nin; i++)
        inlen += a->in[i].len;
    if (inlen > c->max_message || a->expect > c->max_message)
        return COLLS_EMSGSIZE;
    if (c->conn.daemon == NULL)
        return c->conn.err ? c->conn.err : COLLS_ENOTCONN;
    if (c->coll_wait != NULL)
        return COLLS_EINVAL; /* a collective from inside a callback */
    rc = coll_early_wait(g, COLL_EARLY_MAX);
    if (rc < 0)
        return rc;
    if (g->failed)
        return g->failed; /* an earlier operation's result said so */

    envelope_init(&e);
    e.kind = KIND__COLL_REQ;
    e.src = c->conn.tid;
    e.group = g->name;
    e.seq = g->seq;
    e.dtype = (uint32_t)a->dtype;
    e.count = a->count;
    e.encoding = COLLS_ENC_RAW;
    e.byte_order = (uint32_t)dtype_native_order();
    e.req_id = colls__conn_req_id(&c->conn);
    cr.gid = g->gid;
    cr.op = (uint32_t)a->op;
    cr.rop = (uint32_t)a->rop;
    cr.root = a->root;
    /* DIRECT is the library's: what it does not run direct is AUTO's */
    cr.mode =
        (uint32_t)(g->mode == COLLS_MODE_DIRECT ? COLLS_MODE_AUTO : g->mode);
    cr.alg = g->alg[a->op];
    cr.counts = a->counts;
    cr.n_counts = a->counts != NULL ? a->ncounts : 0;
    cr.rcounts = a->rcounts;
    cr.n_rcounts = a->rcounts != NULL ? a->nrcounts : 0;
    cr.compress = (uint32_t)g->compress;
    e.body_case = ENVELOPE__BODY_COLL_REQ;
    e.coll_req = &cr;

    memset(&w, 0, sizeof(w));
    w.g = g;
    w.seq = g->seq;
    w.out = a->expect > 0 ? out : NULL;
    w.cap = a->expect;
    /* Single copy: large input and result straight between the caller's
       buffers and the daemon (docs/protocol.md).  Only for a call that
       waits for its result without a time limit, since the daemon may
       copy until the result comes: a timed call could have returned. */
    if (c->cma && c->timeout_ms < 0 && !a->early) {
        if (a->nin == 1 && inlen > COLLS__CMA_MIN) {
            cr.in_addr = (uint64_t)(uintptr_t)a->in[0].base;
            cr.in_len = inlen;
            nin = 0;
        }
        if (w.out != NULL && a->expect > COLLS__CMA_MIN) {
            cr.out_addr = (uint64_t)(uintptr_t)w.out;
            cr.out_len = a->expect;
            w.cma_out = 1;
        }
        c->conn.cma_busy = cr.in_addr != 0 || w.cma_out;
    }
    memset(&wr, 0, sizeof(wr));
    wr.c = c;
    wr.kind = COLLS__REQ_SEND;
    c->coll_wait = &w;
    rc = colls__write_req(c, &e, a->in, nin, &wr);
    if (rc < 0 && wr.pending == 0)
        goto out;
    g->seq++;
    /* The caller's buffers are in the write: it must end first, whatever
       the timeout says. */
    rc = colls__wait(c, coll_sent_pred, &wr, 0);
    if (rc == 0)
        rc = wr.result;
    if (rc < 0)
        goto out;
    w.sent = 1;
    if (a->early && !w.done) {
        struct colls__coll_early *x = malloc(sizeof(*x));
        if (x != NULL) {
            x->g = g;
            x->seq = w.seq;
            x->next = c->coll_early;
            c->coll_early = x;
            g->early++;
            if (g->trace)
                fprintf(stderr,
                        "colls-trace group=%s op=%s bytes=%zu P=%d alg=- "
                        "mode=%s us=%.1f early=1\n",
                        g->name, collop_name(a->op), a->trace_bytes, g->size,
                        coll_mode_name(g->mode), coll_now_us() - t0);
            goto out;
        }
        /* no memory for the entry: wait for the result here */
    }
    /* an early call whose result is already here needs no other */
    if (!(a->early && w.done))
        rc = colls__wait(c, coll_all_pred, &w, 1);
    if (rc < 0)
        goto out;
    if (w.rep->status < 0) {
        rc = w.rep->status;
        coll_keep_why(g, a->op, w.rep);
        if (rc == COLLS_EPEERDEAD || rc == COLLS_EHOSTDOWN)
            g->failed = rc;
        goto out;
    }
    if ((w.plen != a->expect && !(a->empty_ok && w.plen == 0)) ||
        (w.cma_placed && !w.cma_out)) {
        rc = COLLS_EPROTO;
        goto out;
    }
    if (w.plen > 0 && ds > 1 && (int)w.rep->byte_order != dtype_native_order())
        dtype_swap(a->dtype, w.placed ? out : w.payload, w.plen / ds);
    coll_keep_alg(g, w.seq, w.rep);
    if (g->trace)
        fprintf(stderr,
                "colls-trace group=%s op=%s bytes=%zu P=%d alg=%s mode=%s "
                "us=%.1f\n",
                g->name, collop_name(a->op), a->trace_bytes, g->size,
                g->last_alg[0] ? g->last_alg : "?",
                coll_mode_name(g->last_mode), coll_now_us() - t0);
    *res = w.payload;
    *rlen = w.plen;
    w.payload = NULL;
out:
    if (w.bound && c->conn.daemon != NULL)
        /* timed out while the result is read into out: the rest goes to
           a buffer of the stream's own, and is dropped when complete */
        colls__stream_unbind(c->conn.daemon);
    c->conn.cma_busy = 0;
    c->coll_wait = NULL;
    envelope_free(w.rep);
    free(w.payload);
    return rc;
}

/* 0 if a direct collective (dcoll.c) may start on g now, as coll_run
   checks for itself. */
static int
coll_direct_begin(const struct colls_group *g)
{
    colls_t *c = g->c;

    if (c->conn.daemon == NULL)
        return c->conn.err ? c->conn.err : COLLS_ENOTCONN;
    if (c->coll_wait != NULL)
        return COLLS_EINVAL; /* a collective from inside a callback */
    return 0;
}

/*
 * Ends direct collective op of g, started at t0 (us) and finished with
 * rc: like a call of coll_run that waits, it waits for the results of the
 * group's earlier operations that returned early and reports their first
 * failure; what ran is kept for colls_group_last_alg (mode
 * COLLS_MODE_DIRECT) and traced.
 */
static int
coll_direct_end(struct colls_group *g, int op, size_t bytes, double t0, int rc)
{
    const char *alg = colls__dcoll_alg(g, op, bytes);
    int hier;

    if (rc == 0)
        rc = coll_early_wait(g, 1);
    if (rc < 0) {
        /* unless dcoll.c or hcoll.c said more (which counts differ, a
           corrupt board) */
        if (g->c->errmsg[0] == '\0')
            snprintf(g->c->errmsg, sizeof(g->c->errmsg),
                     "direct %s among the tasks: %s", collop_name(op),
                     colls_strerror(rc));
        return rc;
    }
    snprintf(g->last_alg, sizeof(g->last_alg), "%s", alg);
    g->last_mode = COLLS_MODE_DIRECT;
    g->last_seq = g->seq;
    /* a hierarchical one (hcoll.c) says how its host handed the data */
    hier = strncmp(alg, "host+", 5) == 0 && g->last_local != NULL;
    if (g->trace)
        fprintf(stderr,
                "colls-trace group=%s op=%s bytes=%zu P=%d alg=%s mode=direct "
                "%s%s%sus=%.1f\n",
                g->name, collop_name(op), bytes, g->size, alg,
                hier ? "local=" : "", hier ? g->last_local : "",
                hier ? " " : "", coll_now_us() - t0);
    return coll_early_report(g, rc);
}

/*
 * Runs op direct among g's tasks (dcoll.c): bcast in place in rbuf,
 * n bytes; allgather of n bytes per member; allreduce of count items;
 * barrier.
 */
static int
coll_direct(struct colls_group *g, int op, const void *sbuf, void *rbuf,
            size_t count, size_t n, int dtype, int rop, int root)
{
    double t0 = coll_now_us();
    int rc = coll_direct_begin(g);

    if (rc < 0)
        return rc;
    g->c->errmsg[0] = '\0';
    switch (op) {
    case COLLS_COLL_BARRIER:
        rc = colls__dcoll_barrier(g);
        break;
    case COLLS_COLL_BCAST:
        rc = colls__dcoll_bcast(g, rbuf, n, dtype, root);
        break;
    case COLLS_COLL_ALLGATHER:
        rc = colls__dcoll_allgather(g, sbuf, rbuf, n, dtype);
        break;
    default:
        rc = colls__dcoll_allreduce(g, sbuf, rbuf, count, dtype, rop);
        break;
    }
    return coll_direct_end(g, op, n, t0, rc);
}

/* Runs a and copies the whole result (if any) to out. */
static int
coll_run_copy(struct colls_group *g, const struct coll_args *a, void *out)
{
    uint8_t *res;
    size_t rlen;
    int rc = coll_run(g, a, out, &res, &rlen);

    if (rc == 0 && res != NULL && out != NULL) /* else: read into out */
        memcpy(out, res, rlen);
    free(res);
    return coll_early_report(g, rc);
}

/* A single input piece: len bytes at p (none when len is 0). */
static void
coll_one_in(struct coll_args *a, uv_buf_t *b, const void *p, size_t len)
{
    if (len == 0) {
        a->nin = 0;
        return;
    }
    *b = uv_buf_init((char *)(uintptr_t)p, (unsigned)len);
    a->in = b;
    a->nin = 1;
}

/* Fresh arguments of operation op. */
static void
coll_args_init(struct coll_args *a, int op, int dtype, int rop, int root)
{
    memset(a, 0, sizeof(*a));
    a->op = op;
    a->dtype = dtype;
    a->rop = rop;
    a->root = root;
}

/* n = count items of dtype in bytes, checked against max_message too. */
static int
coll_bytes(const struct colls_group *g, size_t count, int dtype, size_t *n)
{
    int rc = coll_mul(count, dtype_size(dtype), n);

    if (rc == 0 && *n > g->c->max_message)
        rc = COLLS_EMSGSIZE;
    return rc;
}

int
colls_barrier(colls_group_t *g)
{
    struct coll_args a;
    int rc = coll_check(g, COLLS_COLL_BARRIER, COLLS_BYTE, 0, 0);

    if (rc == 0 && colls__dcoll_pick(g, COLLS_COLL_BARRIER, COLLS_BYTE))
        return coll_direct(g, COLLS_COLL_BARRIER, NULL, NULL, 0, 0, COLLS_BYTE,
                           0, 0);
    if (rc < 0)
        return rc;
    coll_args_init(&a, COLLS_COLL_BARRIER, COLLS_BYTE, 0, 0);
    return coll_run_copy(g, &a, NULL);
}

int
colls_bcast(colls_group_t *g, void *buf, size_t count, int dtype, int root)
{
    struct coll_args a;
    uv_buf_t b;
    size_t n = 0;
    int rc = coll_check(g, COLLS_COLL_BCAST, dtype, 0, root);

    if (rc == 0)
        rc = coll_bytes(g, count, dtype, &n);
    if (rc == 0 && n > 0 && buf == NULL)
        rc = COLLS_EINVAL;
    if (rc == 0 && colls__dcoll_pick(g, COLLS_COLL_BCAST, dtype))
        return coll_direct(g, COLLS_COLL_BCAST, NULL, buf, count, n, dtype, 0,
                           root);
    if (rc < 0)
        return rc;
    coll_args_init(&a, COLLS_COLL_BCAST, dtype, 0, root);
    a.count = count;
    a.expect = n;
    a.trace_bytes = n;
    if (g->rank == root) {
        coll_one_in(&a, &b, buf, n);
        a.empty_ok = 1;
        a.early = 1;
        /* the root's buffer already holds the data */
        return coll_run_copy(g, &a, NULL);
    }
    return coll_run_copy(g, &a, buf);
}

/*
 * The reductions with count items in and out on every member (allreduce,
 * scan, exscan) or at the root (reduce): checks, then runs.
 */
static int
coll_reduction(colls_group_t *g, int op, const void *sbuf, void *rbuf,
               size_t count, int dtype, int rop, int root)
{
    struct coll_args a;
    uv_buf_t b;
    size_t n = 0;
    int gets, rc = coll_check(g, op, dtype, rop, root);

    if (rc == 0)
        rc = coll_bytes(g, count, dtype, &n);
    if (rc < 0)
        return rc;
    /* who gets a result: the root of a rooted reduction; every member
       but rank 0 of an exclusive scan; everyone else */
    gets = collop_is_rooted(op)      ? g->rank == root
           : op == COLLS_COLL_EXSCAN ? g->rank != 0
                                     : 1;
    if (n > 0 && (sbuf == NULL || (gets && rbuf == NULL)))
        return COLLS_EINVAL;
    if (op == COLLS_COLL_ALLREDUCE && colls__dcoll_pick(g, op, dtype))
        return coll_direct(g, op, sbuf, rbuf, count, n, dtype, rop, 0);
    coll_args_init(&a, op, dtype, rop, root);
    a.count = count;
    a.expect = gets ? n : 0;
    a.early = !gets;
    a.trace_bytes = n;
    coll_one_in(&a, &b, sbuf, n);
    return coll_run_copy(g, &a, rbuf);
}

int
colls_reduce(colls_group_t *g, const void *sbuf, void *rbuf, size_t count,
             int dtype, int op, int root)
{
    return coll_reduction(g, COLLS_COLL_REDUCE, sbuf, rbuf, count, dtype, op,
                          root);
}

int
colls_allreduce(colls_group_t *g, const void *sbuf, void *rbuf, size_t count,
                int dtype, int op)
{
    return coll_reduction(g, COLLS_COLL_ALLREDUCE, sbuf, rbuf, count, dtype, op,
                          0);
}

int
colls_scan(colls_group_t *g, const void *sbuf, void *rbuf, size_t count,
           int dtype, int op)
{
    return coll_reduction(g, COLLS_COLL_SCAN, sbuf, rbuf, count, dtype, op, 0);
}

int
colls_exscan(colls_group_t *g, const void *sbuf, void *rbuf, size_t count,
             int dtype, int op)
{
    return coll_reduction(g, COLLS_COLL_EXSCAN, sbuf, rbuf, count, dtype, op,
                          0);
}

int
colls_reduce_scatter(colls_group_t *g, const void *sbuf, void *rbuf,
                     size_t count, int dtype, int op)
{
    struct coll_args a;
    uv_buf_t b;
    size_t n = 0, all = 0;
    int rc = coll_check(g, COLLS_COLL_REDUCE_SCATTER, dtype, op, 0);

    if (rc == 0)
        rc = coll_bytes(g, count, dtype, &n);
    if (rc == 0)
        rc = coll_mul(n, (size_t)g->size, &all);
    if (rc < 0)
        return rc;
    if (n > 0 && (sbuf == NULL || rbuf == NULL))
        return COLLS_EINVAL;
    coll_args_init(&a, COLLS_COLL_REDUCE_SCATTER, dtype, op, 0);
    a.count = count;
    a.expect = n;
    a.trace_bytes = n;
    coll_one_in(&a, &b, sbuf, all);
    return coll_run_copy(g, &a, rbuf);
}

/*
 * gather, scatter, allgather, alltoall: blocks of count items per rank;
 * this member sends in_blocks and receives out_blocks of them (0, 1 or
 * the group's size).
 */
static int
coll_blocks(colls_group_t *g, int op, const void *sbuf, void *rbuf,
            size_t count, int dtype, int root, int in_blocks, int out_blocks)
{
    struct coll_args a;
    uv_buf_t b;
    size_t n = 0, in = 0, out = 0;
    int rc = coll_check(g, op, dtype, 0, root);

    if (rc == 0)
        rc = coll_bytes(g, count, dtype, &n);
    if (rc == 0)
        rc = coll_mul(n, (size_t)in_blocks, &in);
    if (rc == 0)
        rc = coll_mul(n, (size_t)out_blocks, &out);
    if (rc < 0)
        return rc;
    if ((in > 0 && sbuf == NULL) || (out > 0 && rbuf == NULL))
        return COLLS_EINVAL;
    if (op == COLLS_COLL_ALLGATHER && colls__dcoll_pick(g, op, dtype))
        return coll_direct(g, op, sbuf, rbuf, count, n, dtype, 0, 0);
    coll_args_init(&a, op, dtype, 0, root);
    a.count = count;
    a.expect = out;
    a.trace_bytes = n;
    if (op == COLLS_COLL_SCATTER && g->rank == root) {
        /* the root's own block is at hand */
        if (n > 0)
            memmove(rbuf, (const uint8_t *)sbuf + (size_t)root * n, n);
        a.early = 1;
    } else {
        a.early = out == 0 && collop_is_rooted(op);
    }
    coll_one_in(&a, &b, sbuf, in);
    return coll_run_copy(g, &a, rbuf);
}

int
colls_gather(colls_group_t *g, const void *sbuf, void *rbuf, size_t count,
             int dtype, int root)
{
    int me = g != NULL && g->rank == root;

    return coll_blocks(g, COLLS_COLL_GATHER, sbuf, rbuf, count, dtype, root, 1,
                       me ? g->size : 0);
}

int
colls_scatter(colls_group_t *g, const void *sbuf, void *rbuf, size_t count,
              int dtype, int root)
{
    int me = g != NULL && g->rank == root;

    return coll_blocks(g, COLLS_COLL_SCATTER, sbuf, rbuf, count, dtype, root,
                       me ? g->size : 0, 1);
}

int
colls_allgather(colls_group_t *g, const void *sbuf, void *rbuf, size_t count,
                int dtype)
{
    return coll_blocks(g, COLLS_COLL_ALLGATHER, sbuf, rbuf, count, dtype, 0, 1,
                       g != NULL ? g->size : 0);
}

int
colls_alltoall(colls_group_t *g, const void *sbuf, void *rbuf, size_t count,
               int dtype)
{
    int p = g != NULL ? g->size : 0;

    return coll_blocks(g, COLLS_COLL_ALLTOALL, sbuf, rbuf, count, dtype, 0, p,
                       p);
}

/* ---- v-variants --------------------------------------------------------- */

/*
 * Checks P blocks (counts[j] items at displs[j]) of dtype: every block's
 * size, and its end in bytes when displs is not NULL, fits a size_t, and
 * the total (*total bytes) is at most the daemon's largest message.  Fills
 * wire[j] = counts[j].  0, COLLS_EINVAL (no counts) or COLLS_EMSGSIZE.
 */
static int
coll_vcheck(const struct colls_group *g, const size_t *counts,
            const size_t *displs, int dtype, uint64_t *wire, size_t *total)
{
    size_t ds = dtype_size(dtype), end, nb;
    int j;

    *total = 0;
    if (counts == NULL)
        return COLLS_EINVAL;
    for (j = 0; j < g->size; j++) {
        if (coll_mul(counts[j], ds, &nb) < 0 || coll_add(total, nb) < 0)
            return COLLS_EMSGSIZE;
        if (displs != NULL && (counts[j] > SIZE_MAX - displs[j] ||
                               coll_mul(displs[j] + counts[j], ds, &end) < 0))
            return COLLS_EMSGSIZE;
        wire[j] = counts[j];
    }
    return *total > g->c->max_message ? COLLS_EMSGSIZE : 0;
}

/* Input pieces of P blocks of base (counts[j] items at displs[j]), in
   rank order, empty blocks left out.  *bufs is malloc'd. */
static int
coll_vpieces(const struct colls_group *g, const void *base,
             const size_t *counts, const size_t *displs, int dtype,
             uv_buf_t **bufs, unsigned *n)
{
    size_t ds = dtype_size(dtype);
    uv_buf_t *b = malloc((size_t)g->size * sizeof(*b));
    int j;

    *n = 0;
    *bufs = b;
    if (b == NULL)
        return COLLS_ENOMEM;
    for (j = 0; j < g->size; j++)
        if (counts[j] > 0)
            b[(*n)++] = uv_buf_init((char *)(uintptr_t)base + displs[j] * ds,
                                    (unsigned)(counts[j] * ds));
    return 0;
}

/* Copies a packed result of P blocks to counts[j] items at displs[j]. */
static void
coll_vunpack(const struct colls_group *g, const uint8_t *res, void *rbuf,
             const size_t *counts, const size_t *displs, int dtype)
{
    size_t ds = dtype_size(dtype), off = 0;
    int j;

    for (j = 0; j < g->size; j++) {
        size_t nb = counts[j] * ds;
        if (nb > 0)
            memcpy((uint8_t *)rbuf + displs[j] * ds, res + off, nb);
        off += nb;
    }
}

/* Runs a and unpacks the packed result into the displacements. */
static int
coll_run_vunpack(struct colls_group *g, const struct coll_args *a, void *rbuf,
                 const size_t *counts, const size_t *displs)
{
    uint8_t *res;
    size_t rlen;
    int rc = coll_run(g, a, NULL, &res, &rlen);

    if (rc == 0 && rlen > 0)
        coll_vunpack(g, res, rbuf, counts, displs, a->dtype);
    free(res);
    return coll_early_report(g, rc);
}

/*
 * gatherv and allgatherv (all != 0): scount items in, blocks out.  Every
 * member passes rcounts (the daemons build their schedules from them,
 * docs/collectives.md); displs matter where blocks are received.
 */
static int
coll_gatherv(colls_group_t *g, int all, const void *sbuf, size_t scount,
             void *rbuf, const size_t *rcounts, const size_t *displs, int dtype,
             int root)
{
    struct coll_args a;
    uv_buf_t b;
    uint64_t *wire;
    size_t n = 0, total = 0;
    int op = all ? COLLS_COLL_ALLGATHERV : COLLS_COLL_GATHERV;
    int gets, rc = coll_check(g, op, dtype, 0, root);

    if (rc == 0)
        rc = coll_bytes(g, scount, dtype, &n);
    if (rc < 0)
        return rc;
    gets = all || g->rank == root;
    if ((n > 0 && sbuf == NULL) || rcounts == NULL || (gets && displs == NULL))
        return COLLS_EINVAL;
    wire = malloc((size_t)g->size * sizeof(*wire));
    if (wire == NULL)
        return COLLS_ENOMEM;
    rc = coll_vcheck(g, rcounts, gets ? displs : NULL, dtype, wire, &total);
    if (rc == 0 && rcounts[g->rank] != scount)
        rc = COLLS_EINVAL;
    if (rc == 0 && gets && total > 0 && rbuf == NULL)
        rc = COLLS_EINVAL;
    if (rc < 0)
        goto out;
    coll_args_init(&a, op, dtype, 0, collop_is_rooted(op) ? root : 0);
    a.counts = wire;
    a.ncounts = (size_t)g->size;
    a.expect = gets ? total : 0;
    a.early = !gets;
    a.trace_bytes = n;
    coll_one_in(&a, &b, sbuf, n);
    rc = coll_run_vunpack(g, &a, rbuf, rcounts, displs);
out:
    free(wire);
    return rc;
}

int
colls_gatherv(colls_group_t *g, const void *sbuf, size_t scount, void *rbuf,
              const size_t *rcounts, const size_t *displs, int dtype, int root)
{
    return coll_gatherv(g, 0, sbuf, scount, rbuf, rcounts, displs, dtype, root);
}

int
colls_allgatherv(colls_group_t *g, const void *sbuf, size_t scount, void *rbuf,
                 const size_t *rcounts, const size_t *displs, int dtype)
{
    return coll_gatherv(g, 1, sbuf, scount, rbuf, rcounts, displs, dtype, 0);
}

/* Every member passes scounts (as gatherv's rcounts); displs and sbuf
   matter at the root. */
int
colls_scatterv(colls_group_t *g, const void *sbuf, const size_t *scounts,
               const size_t *displs, void *rbuf, size_t rcount, int dtype,
               int root)
{
    struct coll_args a;
    uv_buf_t *pieces = NULL;
    uint64_t *wire;
    size_t n = 0, total = 0;
    int me, rc = coll_check(g, COLLS_COLL_SCATTERV, dtype, 0, root);

    if (rc == 0)
        rc = coll_bytes(g, rcount, dtype, &n);
    if (rc < 0)
        return rc;
    me = g->rank == root;
    if ((n > 0 && rbuf == NULL) || scounts == NULL || (me && displs == NULL))
        return COLLS_EINVAL;
    wire = malloc((size_t)g->size * sizeof(*wire));
    if (wire == NULL)
        return COLLS_ENOMEM;
    rc = coll_vcheck(g, scounts, me ? displs : NULL, dtype, wire, &total);
    if (rc == 0 && scounts[g->rank] != rcount)
        rc = COLLS_EINVAL;
    if (rc == 0 && me && total > 0 && sbuf == NULL)
        rc = COLLS_EINVAL;
    coll_args_init(&a, COLLS_COLL_SCATTERV, dtype, 0, root);
    if (rc == 0 && me)
        rc = coll_vpieces(g, sbuf, scounts, displs, dtype, &pieces, &a.nin);
    if (rc < 0)
        goto out;
    a.in = pieces;
    a.counts = wire;
    a.ncounts = (size_t)g->size;
    a.expect = n;
    a.trace_bytes = n;
    if (me) {
        /* the root's own block is at hand */
        if (n > 0)
            memmove(rbuf,
                    (const uint8_t *)sbuf + displs[root] * dtype_size(dtype),
                    n);
        a.early = 1;
    }
    rc = coll_run_copy(g, &a, rbuf);
out:
    free(pieces);
    free(wire);
    return rc;
}

int
colls_alltoallv(colls_group_t *g, const void *sbuf, const size_t *scounts,
                const size_t *sdispls, void *rbuf, const size_t *rcounts,
                const size_t *rdispls, int dtype)
{
    struct coll_args a;
    uv_buf_t *pieces = NULL;
    uint64_t *wire = NULL;
    size_t stotal = 0, rtotal = 0;
    int rc = coll_check(g, COLLS_COLL_ALLTOALLV, dtype, 0, 0);

    if (rc < 0)
        return rc;
    wire = malloc(2 * (size_t)g->size * sizeof(*wire));
    if (wire == NULL)
        return COLLS_ENOMEM;
    rc = coll_vcheck(g, scounts, sdispls, dtype, wire, &stotal);
    if (rc == 0)
        rc = coll_vcheck(g, rcounts, rdispls, dtype, wire + g->size, &rtotal);
    if (rc == 0 && scounts[g->rank] != rcounts[g->rank])
        rc = COLLS_EINVAL;
    if (rc == 0 &&
        ((stotal > 0 && sbuf == NULL) || (rtotal > 0 && rbuf == NULL)))
        rc = COLLS_EINVAL;
    if (rc < 0)
        goto out;
    coll_args_init(&a, COLLS_COLL_ALLTOALLV, dtype, 0, 0);
    rc = coll_vpieces(g, sbuf, scounts, sdispls, dtype, &pieces, &a.nin);
    if (rc < 0)
        goto out;
    a.in = pieces;
    a.counts = wire;
    a.ncounts = (size_t)g->size;
    a.rcounts = wire + g->size;
    a.nrcounts = (size_t)g->size;
    a.expect = rtotal;
    a.trace_bytes = stotal;
    rc = coll_run_vunpack(g, &a, rbuf, rcounts, rdispls);
out:
    free(pieces);
    free(wire);
    return rc;
}
