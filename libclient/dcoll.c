/*
 * dcoll.c -- direct collectives: small barrier, bcast, allreduce and
 * allgather run among the group's tasks themselves, over the direct
 * route, without the daemons (docs/collectives.md, "Direct collectives").
 *
 * A hierarchical collective costs two hops between each task and its
 * daemon plus the daemons' rounds; for a few bytes those hops are most of
 * the time.  In COLLS_MODE_AUTO, with no algorithm forced and no FPC
 * asked for, these four operations run here at any size
 * (colls__dcoll_pick): with several members on a host hierarchically
 * through the boards (hcoll.c; an allgather larger than g->direct_max as
 * one such bcast per member, dcoll_bcasts), with one member per host
 * flat, since the daemons would only relay; COLLS_MODE_DIRECT runs them
 * here at any size unless an algorithm is forced.  The choice depends only on
 * the call's arguments and the group's settings, so every member makes the same
 * one (COLLS_DIRECT_MAX must be the same for every member, as COLLS_ALG_<OP>
 * must).
 *
 * Algorithms, over the ranks of the group:
 *   barrier    dissemination: round k sends to rank + 2^k, waits for
 *              rank - 2^k (mod P); ceil(log2 P) rounds, any P.
 *   bcast      binomial tree from the root.
 *   allgather  below COLLS__DCOLL_RSAG bytes of P blocks: Bruck: round k
 *              sends the first min(2^k, P - 2^k) blocks it holds to
 *              rank - 2^k and appends as many from rank + 2^k; ceil(log2
 *              P) rounds, any P; then rotated into rank order.  From
 *              there: pairwise, every block straight to every member.
 *   allreduce  below COLLS__DCOLL_RSAG bytes of P inputs: Bruck's
 *              allgather of the inputs, then every member reduces the P
 *              blocks in rank order itself; from there: reduce-scatter +
 *              allgather, pairwise (dcoll_rsag), each block reduced in
 *              rank order by its owner.  Either way every member's result
 *              is bit-identical, the same at any size class, and does not
 *              depend on P's factors.
 *
 * Every message is a DATA frame with tag COLLS__TAG_DCOLL (which no
 * receive of the application can match, and no application may send;
 * those of gid 0 are spawn.c's, colls__dcoll_deliver passes them on) to
 * a member's tid by COLLS_ROUTE_DIRECT (direct.c falls back to the daemon
 * when a peer cannot be reached: slower, still correct), its payload a
 * 24-byte header {u64 gid, u64 seq, u32 step, u32 kind} (little-endian)
 * followed by data.  seq counts the group's direct collectives (every
 * member runs the same ones in the same order); step tells a collective's
 * messages apart; kind is DCOLL_DATA, or DCOLL_CTS for a header alone
 * that clears its sender to send that step: a message of
 * COLLS__DCOLL_RNDV bytes or more waits for it (rendezvous, dcoll_clear
 * and dcoll_cleared), so it is read straight into the posted receive.
 * Data travels little-endian whatever the members' byte
 * orders: a big-endian member swaps what it contributes before sending
 * and what it received once the collective is done.
 *
 * Messages that arrive before they are waited for wait in c->dcoll_inbox.
 * A wait for a member known dead or on a host known down fails with
 * COLLS_EPEERDEAD / COLLS_EHOSTDOWN; the member that failed so sends an
 * ABORT (step 0xffffffff, data = the status) to every other member, and a
 * wait fails with that status once an ABORT of this collective or an
 * earlier one of the group has come, so that no member waits for ever for
 * one that stopped.  (Not every member's death: a member that finished
 * its part may exit while others still wait.)  Counts that differ between
 * members show as a message of the wrong length: COLLS_ECOUNT, and an
 * ABORT of that collective.  A member leaving a group that ran direct
 * collectives sends an ABORT of the next one through the daemons (no
 * connection to open), so that members still in a direct collective
 * with it fail (COLLS_EPEERDEAD) as the daemons fail theirs; messages of
 * the last COLLS__DCOLL_LEFT groups left are dropped on arrival.
 * COLLS_ETIMEDOUT after colls_set_timeout().  A malformed message is dropped
 * and counted.
 *
 * API layer (internal.h): may call p2p.c (sends), colls.c's loop and
 * dead.c, proto/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcoll.h"
#include "internal.h"
#include "proto/bytes.h"
#include "proto/reduce.h"

/* The step of an ABORT: data = the failure's status (i32). */
#define DCOLL_ABORT 0xffffffffu
/* The last word of the header: data, or a receiver's clear-to-send for a
   message of COLLS__DCOLL_RNDV bytes or more (the header alone). */
#define DCOLL_DATA 0u
#define DCOLL_CTS  1u

static void dcoll_abort(struct colls_group *g, uint64_t seq, int status,
                        int route);

/* A message waiting to be waited for. */
struct colls__dmsg {
    struct list_node link;
    colls_tid_t src;
    uint64_t gid, seq;
    uint32_t step;
    uint32_t kind; /* DCOLL_DATA, or DCOLL_CTS: step may be sent now */
    uint8_t *data; /* the whole payload; the data is after the header */
    size_t len;    /* of the data */
};

/* What a wait looks for; got is the message once found. */
struct dcoll_wait {
    struct dcoll *d;
    colls_tid_t src;
    uint32_t step;
    struct colls__dmsg *got;
    int err;
    int drained; /* the loop ran once more after src was known dead */
    struct dcoll_post *post; /* posted for it, or NULL */
    uint32_t kind;           /* of the message: DCOLL_DATA or DCOLL_CTS */
};

static int dcoll_wait_pred(void *arg);

/* The status of wait w that found no message: the wait's own failure
   (rc, the time limit), else the sender's death or an ABORT. */
static int
dcoll_wait_failed(const struct dcoll_wait *w, int rc)
{
    return rc < 0 ? rc : w->err < 0 ? w->err : COLLS_EIO;
}

static void
dcoll_dmsg_free(colls_t *c, struct colls__dmsg *m)
{
    colls__conn_payload_free(&c->conn, m->data, DCOLL_HDR + m->len);
    free(m);
}

int
colls__dcoll_deliver(colls_t *c, struct colls__rmsg *m)
{
    struct colls__dmsg *d;
    size_t i;

    if (m->len >= DCOLL_HDR && get_u64(m->data) == 0)
        return colls__siblings_deliver(c, m); /* not a group's */
    if (m->len < DCOLL_HDR ||
        (get_u32(m->data + 20) != DCOLL_DATA &&
         (get_u32(m->data + 20) != DCOLL_CTS || m->len != DCOLL_HDR)) ||
        (d = calloc(1, sizeof(*d))) == NULL) {
        colls__rmsg_free(m);
        return 0;
    }
    d->src = m->src;
    d->gid = get_u64(m->data);
    for (i = 0; i < COLLS__DCOLL_LEFT; i++)
        if (c->dcoll_left[i] == d->gid && d->gid != 0) {
            free(d);
            colls__rmsg_free(m);
            return 0; /* of a group this task left */
        }
    d->seq = get_u64(m->data + 8);
    d->step = get_u32(m->data + 16);
    d->kind = get_u32(m->data + 20);
    d->data = m->data;
    d->len = m->len - DCOLL_HDR;
    m->data = NULL;
    colls__rmsg_free(m);
    list_add_tail(&c->dcoll_inbox, &d->link);
    return 0;
}

struct colls_req *
colls__dcoll_claim(colls_t *c, colls_tid_t src, const uint8_t *head,
                   size_t have, size_t len, size_t *skip)
{
    struct list_node *n;
    uint64_t gid, seq;
    uint32_t step;

    if (have < DCOLL_HDR || len < DCOLL_HDR || get_u32(head + 20) != DCOLL_DATA)
        return NULL;
    gid = get_u64(head);
    seq = get_u64(head + 8);
    step = get_u32(head + 16);
    LIST_FOREACH (n, &c->dcoll_posted) {
        struct dcoll_post *p = list_entry(n, struct dcoll_post, r.link);
        if (p->r.src != src || p->gid != gid || p->seq != seq ||
            p->step != step)
            continue;
        if (p->r.cap != len - DCOLL_HDR)
            return NULL; /* counts differ: dcoll_recv says so */
        list_del(&p->r.link);
        *skip = DCOLL_HDR;
        return &p->r;
    }
    return NULL;
}

void
colls__dcoll_leave(struct colls_group *g)
{
    size_t i;

    if (g->dseq > 0 && !g->failed)
        dcoll_abort(g, g->dseq, COLLS_EPEERDEAD, COLLS_ROUTE_DEFAULT);
    colls__dcoll_forget(g->c, g->gid, 0);
    /* what the others still send for it is dropped on arrival */
    for (i = 0; i < COLLS__DCOLL_LEFT; i++)
        if (g->c->dcoll_left[i] == g->gid)
            return;
    g->c->dcoll_left[g->c->dcoll_nleft++ % COLLS__DCOLL_LEFT] = g->gid;
}

void
colls__dcoll_forget(colls_t *c, uint64_t gid, int all)
{
    struct list_node *n, *tmp;

    LIST_FOREACH_SAFE (n, tmp, &c->dcoll_inbox) {
        struct colls__dmsg *d = list_entry(n, struct colls__dmsg, link);
        if (all || d->gid == gid) {
            list_del(&d->link);
            dcoll_dmsg_free(c, d);
        }
    }
}

/* 1 if op, whose largest item is item bytes (bcast: the message;
   allreduce: one input; allgather: all blocks), runs
   hierarchically (hcoll.c) as one collective: several members on a host;
   bcast and allreduce at any size (chunk by chunk), allgather when all
   its blocks fit in one item of at most direct_max bytes (a larger one
   runs as one such bcast per member, dcoll_bcasts). */
static int
dcoll_hier(const struct colls_group *g, int op, size_t item)
{
    return !g->one_per_host &&
           (op != COLLS_COLL_ALLGATHER || item <= g->direct_max);
}

int
colls__dcoll_pick(const struct colls_group *g, int op, int dtype)
{
    if (op != COLLS_COLL_BARRIER && op != COLLS_COLL_BCAST &&
        op != COLLS_COLL_ALLREDUCE && op != COLLS_COLL_ALLGATHER)
        return 0;
    if (g->alg[op][0] != '\0')
        return 0; /* a forced algorithm is the daemons' */
    if (g->mode == COLLS_MODE_DIRECT)
        return 1;
    if (g->mode != COLLS_MODE_AUTO || g->direct_max == 0)
        return 0; /* COLLS_DIRECT_MAX=0: never */
    /* with one member per host the daemons would only relay: large
       operations gain too (4 hosts x 1, unpinned: bcast of 1 MiB 1777 us
       direct against 2741 through the daemons, allreduce of 1 MiB about
       3300 against 6589, allgather of 64 KiB 282 against 854) */
    /* with several members on a host, up to direct_max the members of
       a host hand each other the data through their board and only the
       hosts' leaders talk (hcoll.c).  On 2 hosts x 4 tasks, unpinned,
       us, against the daemons' hierarchy: barrier 27-38 / 89, allreduce
       of 4 B 24-37 / 74, of 64 KiB 140-160 / 400-542, of 1 MiB (in
       chunks of a slot) 1627-2032 / 3087-3184, bcast of 64 KiB 37-51 /
       271-349, of 4 MiB 4384-5063 / 7542-8227.  Items larger than a
       slot handed over the direct route instead lost (bcast of 256 KiB
       823-923 / 350-460): hence the chunks.  Since allreduce's chunks
       are pipelined (hcoll.c, HC_DEPTH) the chunks win at 4 MiB pinned
       to one CPU too (6 alternating runs, medians: bcast 6.5 / 17.8 ms,
       allreduce 15.5 / 24.7 ms; unpinned 4.2 / 12.2 and 9.2 / 13.1) */
    /* FPC compresses doubles in bcast: the daemons' path does that */
    return !(op == COLLS_COLL_BCAST && dtype == COLLS_DOUBLE &&
             g->compress != COLLS_COMPRESS_OFF);
}

/* Swaps count items of dtype between native and little-endian order
   (nothing on a little-endian machine). */
void
colls__dc_le(int dtype, void *buf, size_t bytes)
{
    size_t ds = dtype_size(dtype);

    if (ds > 1 && bytes > 0 && dtype_native_order() != COLLS_ORDER_LITTLE)
        dtype_swap(dtype, buf, bytes / ds);
}

int
colls__dc_le_copy(int dtype, const void *src, size_t bytes, uint8_t **copy)
{
    *copy = NULL;
    if (bytes == 0 || dtype_size(dtype) <= 1 ||
        dtype_native_order() == COLLS_ORDER_LITTLE)
        return 0;
    *copy = malloc(bytes);
    if (*copy == NULL)
        return COLLS_ENOMEM;
    memcpy(*copy, src, bytes);
    colls__dc_le(dtype, *copy, bytes);
    return 0;
}

/*
 * Waits for rank r's clear-to-send of step (dcoll_clear).  0, or the
 * error of a wait for r's message (r dead, an ABORT, the time limit).
 */
static int
dcoll_cleared(struct dcoll *d, int r, uint32_t step)
{
    struct dcoll_wait w = {
        .d = d, .src = d->g->tids[r], .step = step, .kind = DCOLL_CTS};
    int rc = colls__wait(d->g->c, dcoll_wait_pred, &w, 1);

    if (w.got == NULL)
        return dcoll_wait_failed(&w, rc);
    list_del(&w.got->link);
    dcoll_dmsg_free(d->g->c, w.got);
    return 0;
}

/*
 * Sends len bytes at data (which must stay put until the collective's
 * sends are done) to rank r as step; from COLLS__DCOLL_RNDV bytes once r
 * has cleared it.  0 or a COLLS_E* code.
 */
int
colls__dc_send(struct dcoll *d, int r, uint32_t step, const void *data,
               size_t len)
{
    struct colls_group *g = d->g;
    uint8_t *h;
    uv_buf_t b[2];
    int rc;

    if (d->nsent >= d->maxsent)
        return COLLS_EINVAL; /* cannot happen: dcoll_room made room */
    if (len >= COLLS__DCOLL_RNDV && (rc = dcoll_cleared(d, r, step)) != 0)
        return rc;
    h = d->hdr[d->nsent++];
    put_u64(h, g->gid);
    put_u64(h + 8, d->seq);
    put_u32(h + 16, step);
    put_u32(h + 20, 0);
    b[0] = uv_buf_init((char *)h, DCOLL_HDR);
    b[1] = uv_buf_init((char *)(uintptr_t)data, (unsigned)len);
    rc = colls__send_data(g->c, g->tids[r], COLLS__TAG_DCOLL, COLLS_ENC_RAW,
                          COLLS_ORDER_LITTLE, COLLS_ROUTE_DIRECT, b,
                          len > 0 ? 2 : 1, &d->sent);
    return rc;
}

/*
 * The status of an ABORT of g's direct collective seq, or of an earlier
 * one for a death (that member stopped taking part from there on), or 0.
 */
int
colls__dc_aborted(colls_t *c, const struct colls_group *g, uint64_t seq)
{
    struct list_node *n;

    LIST_FOREACH (n, &c->dcoll_inbox) {
        struct colls__dmsg *m = list_entry(n, struct colls__dmsg, link);
        int st;
        if (m->step != DCOLL_ABORT || m->gid != g->gid || m->seq > seq)
            continue;
        st = m->len == 4 ? (int32_t)get_u32(m->data + DCOLL_HDR) : 0;
        if (st == COLLS_EHOSTDOWN || st == COLLS_EPEERDEAD)
            return st; /* that member stopped there for good */
        if (m->seq == seq)
            return st == COLLS_ECOUNT ? st : COLLS_EPEERDEAD;
    }
    return 0;
}

/*
 * Tells every other member by route that g's collective seq failed here
 * with status (a member died or its host went down, counts differ) or,
 * with COLLS_EPEERDEAD, that this member takes no part in it or later
 * ones: members waiting for this one, or for one that waits for it, fail
 * too instead of waiting for ever.  The ABORT messages are written
 * before this returns.
 */
static void
dcoll_abort(struct colls_group *g, uint64_t seq, int status, int route)
{
    struct colls_req req;
    uint8_t *msg;
    uv_buf_t b;
    int r;

    msg = malloc((size_t)g->size * (DCOLL_HDR + 4));
    if (msg == NULL)
        return; /* the others fail when their timeout ends */
    colls__sends_init(&req, g->c);
    for (r = 0; r < g->size; r++) {
        uint8_t *h = msg + (size_t)r * (DCOLL_HDR + 4);
        if (r == g->rank || colls__src_status(g->c, g->tids[r]) < 0)
            continue;
        put_u64(h, g->gid);
        put_u64(h + 8, seq);
        put_u32(h + 16, DCOLL_ABORT);
        put_u32(h + 20, 0);
        put_u32(h + 24, (uint32_t)status);
        b = uv_buf_init((char *)h, DCOLL_HDR + 4);
        (void)colls__send_data(g->c, g->tids[r], COLLS__TAG_DCOLL,
                               COLLS_ENC_RAW, COLLS_ORDER_LITTLE, route, &b, 1,
                               &req);
    }
    (void)colls__sends_wait(&req);
    free(msg);
}

static int
dcoll_wait_pred(void *arg)
{
    struct dcoll_wait *w = arg;
    colls_t *c = w->d->g->c;
    struct list_node *n;

    if (w->post != NULL && w->post->r.done && w->post->r.result == 0)
        return 1; /* read into place (a lost stream: as if not sent) */
    LIST_FOREACH (n, &c->dcoll_inbox) {
        struct colls__dmsg *m = list_entry(n, struct colls__dmsg, link);
        if (m->src == w->src && m->gid == w->d->g->gid && m->seq == w->d->seq &&
            m->step == w->step && m->kind == w->kind) {
            w->got = m;
            return 1;
        }
    }
    w->err = colls__src_status(c, w->src);
    if (w->err < 0 && !w->drained) {
        /* a member that finished its part may have exited right after
           its message: the message is in a socket's buffer, read it
           before calling the member lost */
        w->drained = 1;
        colls__poll(c);
        return dcoll_wait_pred(arg);
    }
    if (w->err == 0)
        w->err = colls__dc_aborted(c, w->d->g, w->d->seq);
    return w->err < 0;
}

/*
 * Tells rank r that it may send step's message (of COLLS__DCOLL_RNDV
 * bytes or more), whose receive is posted: a header of kind DCOLL_CTS.
 * Its failure shows as the collective's (d->sent) or as r's death in the
 * wait for the message.
 */
static void
dcoll_clear(struct dcoll *d, int r, uint32_t step)
{
    struct colls_group *g = d->g;
    struct dcoll_cts *t = malloc(sizeof(*t));
    uv_buf_t b;

    if (t == NULL) {
        if (d->sent.result == 0)
            d->sent.result = COLLS_ENOMEM;
        return;
    }
    t->next = d->cts;
    d->cts = t;
    put_u64(t->h, g->gid);
    put_u64(t->h + 8, d->seq);
    put_u32(t->h + 16, step);
    put_u32(t->h + 20, DCOLL_CTS);
    b = uv_buf_init((char *)t->h, DCOLL_HDR);
    (void)colls__send_data(g->c, g->tids[r], COLLS__TAG_DCOLL, COLLS_ENC_RAW,
                           COLLS_ORDER_LITTLE, COLLS_ROUTE_DIRECT, &b, 1,
                           &d->sent);
}

/*
 * Posts a receive of step's message from rank r, len bytes into out:
 * from now on its payload may be written there.  NULL when d has no room
 * (the message then waits in the inbox and is copied).
 */
static struct dcoll_post *
dcoll_post(struct dcoll *d, int r, uint32_t step, void *out, size_t len)
{
    struct dcoll_post *p = NULL;
    unsigned i;

    for (i = 0; i < d->maxpost && p == NULL; i++)
        if (!d->post[i].live)
            p = &d->post[i];
    if (p == NULL)
        return NULL;
    memset(&p->r, 0, sizeof(p->r));
    p->r.c = d->g->c;
    p->r.kind = COLLS__REQ_RECV;
    p->r.src = d->g->tids[r];
    p->r.tag = COLLS__TAG_DCOLL;
    p->r.buf = out;
    p->r.cap = len;
    p->gid = d->g->gid;
    p->seq = d->seq;
    p->step = step;
    p->live = 1;
    list_add_tail(&d->g->c->dcoll_posted, &p->r.link);
    if (len >= COLLS__DCOLL_RNDV)
        dcoll_clear(d, r, step);
    return p;
}

/* Withdraws post p: no more is written to its buffer after this. */
static void
dcoll_unpost(struct dcoll_post *p)
{
    if (p == NULL || !p->live)
        return;
    if (p->r.bound != NULL)
        colls__recv_cancel(&p->r); /* the rest goes to the inbox */
    else if (!p->r.done)
        list_del(&p->r.link);
    p->live = 0;
}

/* Makes room for n posts at once (before any is posted).  0 or
   COLLS_ENOMEM. */
static int
dcoll_posts(struct dcoll *d, size_t n)
{
    if (n <= d->maxpost)
        return 0;
    d->post = calloc(n, sizeof(*d->post));
    if (d->post == NULL) {
        d->post = d->post0;
        return COLLS_ENOMEM;
    }
    d->maxpost = (unsigned)n;
    return 0;
}

/*
 * Waits for step's message from rank r and copies its data, which must be
 * exactly len bytes, to out (unless it was read there through a post of
 * dcoll_post: made here if the caller did not).  0 or a COLLS_E* code.
 */
int
colls__dc_recv(struct dcoll *d, int r, uint32_t step, void *out, size_t len)
{
    struct dcoll_wait w = {
        .d = d, .src = d->g->tids[r], .step = step, .kind = DCOLL_DATA};
    unsigned i;
    int rc;

    for (i = 0; i < d->maxpost && w.post == NULL; i++)
        if (d->post[i].live && d->post[i].r.src == w.src &&
            d->post[i].step == step)
            w.post = &d->post[i];
    if (w.post == NULL) {
        w.post = dcoll_post(d, r, step, out, len);
        if (w.post == NULL && len >= COLLS__DCOLL_RNDV)
            dcoll_clear(d, r, step); /* no room to post: into the inbox */
    }
    rc = colls__wait(d->g->c, dcoll_wait_pred, &w, 1);
    if (w.post != NULL && w.post->r.done && w.post->r.result == 0) {
        w.post->live = 0;
        return 0; /* its length was checked by the claim */
    }
    dcoll_unpost(w.post);
    if (w.got == NULL)
        return dcoll_wait_failed(&w, rc);
    list_del(&w.got->link);
    rc = 0;
    if (w.got->len != len) {
        /* the members' counts differ: the daemons' words for it */
        snprintf(d->g->c->errmsg, sizeof(d->g->c->errmsg),
                 "%zu bytes from rank %d, %zu expected", w.got->len, r, len);
        rc = COLLS_ECOUNT;
    }
    if (rc == 0 && len > 0)
        memcpy(out, w.got->data + DCOLL_HDR, len);
    if (rc == 0 && len >= COLLS__DCOLL_RNDV)
        d->g->c->dcoll_copied += len;
    dcoll_dmsg_free(d->g->c, w.got);
    return rc;
}

/* Starts a direct collective of g (takes the group's next seq). */
void
colls__dc_begin(struct dcoll *d, struct colls_group *g)
{
    colls__sends_init(&d->sent, g->c);
    d->g = g;
    d->seq = g->dseq++;
    d->hdr = d->hdr0;
    d->nsent = 0;
    d->maxsent = DCOLL_SENDS_MAX;
    d->post = d->post0;
    d->maxpost = DCOLL_POSTS_INLINE;
    memset(d->post0, 0, sizeof(d->post0));
    d->cts = NULL;
    g->c->dcoll_busy++;
    g->c->dcoll_remote += g->one_per_host; /* fixed at the join */
}

/* Makes room for n sends in all (more than DCOLL_SENDS_MAX: the headers
   are allocated).  0 or COLLS_ENOMEM. */
int
colls__dc_room(struct dcoll *d, size_t n)
{
    if (n <= d->maxsent)
        return 0;
    d->hdr = malloc(n * DCOLL_HDR);
    if (d->hdr == NULL) {
        d->hdr = d->hdr0;
        return COLLS_ENOMEM;
    }
    d->maxsent = (unsigned)n;
    return 0;
}

/* Ends it: every send written (the buffers are in them); rc or the
   first send's failure. */
int
colls__dc_end(struct dcoll *d, int rc)
{
    unsigned i;
    int wrc;

    wrc = colls__sends_wait(&d->sent);
    if (rc == 0)
        rc = wrc;
    if (rc == 0)
        rc = d->sent.result;
    if (rc == COLLS_EPEERDEAD || rc == COLLS_EHOSTDOWN) {
        if (!d->g->failed)
            dcoll_abort(d->g, d->seq, rc, COLLS_ROUTE_DIRECT);
        d->g->failed = rc;
    } else if (rc == COLLS_ECOUNT) {
        dcoll_abort(d->g, d->seq, rc, COLLS_ROUTE_DIRECT);
    }
    if (d->hdr != d->hdr0)
        free(d->hdr); /* the sends are done with them */
    while (d->cts != NULL) {
        struct dcoll_cts *t = d->cts;
        d->cts = t->next;
        free(t);
    }
    for (i = 0; i < d->maxpost; i++)
        dcoll_unpost(&d->post[i]); /* a failure left them posted */
    if (d->post != d->post0)
        free(d->post);
    d->g->c->dcoll_busy--;
    d->g->c->dcoll_remote -= d->g->one_per_host;
    return rc;
}

int
colls__dcoll_barrier(struct colls_group *g)
{
    struct dcoll d;
    uint32_t k = 0;
    size_t dist;
    int p = g->size, r = g->rank, rc = 0;

    if (dcoll_hier(g, COLLS_COLL_BARRIER, 0))
        return colls__hcoll_barrier(g);
    colls__dc_begin(&d, g);
    for (dist = 1; rc == 0 && dist < (size_t)p; dist <<= 1, k++) {
        rc = colls__dc_send(&d, (int)((r + dist) % (size_t)p), k, NULL, 0);
        if (rc == 0)
            rc = colls__dc_recv(&d, (int)((r + (size_t)p - dist) % (size_t)p),
                                k, NULL, 0);
    }
    return colls__dc_end(&d, rc);
}

const char *
colls__dcoll_alg(const struct colls_group *g, int op, size_t bytes)
{
    size_t item = op == COLLS_COLL_ALLGATHER ? bytes * (size_t)g->size : bytes;

    if (dcoll_hier(g, op, item))
        return op == COLLS_COLL_BARRIER     ? "host+dissemination"
               : op == COLLS_COLL_BCAST     ? "host+binomial"
               : op == COLLS_COLL_ALLGATHER ? "host+pairwise"
                                            : "host+pairwise+reduce";
    if (!g->one_per_host && op == COLLS_COLL_ALLGATHER)
        return "host+bcasts";
    switch (op) {
    case COLLS_COLL_BARRIER:
        return "dissemination";
    case COLLS_COLL_BCAST:
        return "binomial";
    case COLLS_COLL_ALLGATHER:
        return bytes * (size_t)g->size >= COLLS__DCOLL_RSAG ? "pairwise"
                                                            : "bruck";
    default:
        return bytes * (size_t)g->size >= COLLS__DCOLL_RSAG ? "rsag"
                                                            : "bruck+reduce";
    }
}

int
colls__dcoll_bcast(struct colls_group *g, void *buf, size_t bytes, int dtype,
                   int root)
{
    struct dcoll d;
    size_t p = (size_t)g->size, vr = ((size_t)g->rank + p - (size_t)root) % p;
    size_t mask = 1;
    uint8_t *data = buf, *copy = NULL;
    int rc = 0;

    if (dcoll_hier(g, COLLS_COLL_BCAST, bytes))
        return colls__hcoll_bcast(g, buf, bytes, dtype, root);
    colls__dc_begin(&d, g);
    /* the root's buffer stays as it is */
    if (vr == 0 && colls__dc_le_copy(dtype, buf, bytes, &copy) < 0)
        return colls__dc_end(&d, COLLS_ENOMEM);
    if (copy != NULL)
        data = copy;
    for (; mask < p; mask <<= 1)
        if (vr & mask) {
            rc = colls__dc_recv(&d, (int)((vr - mask + (size_t)root) % p), 0,
                                buf, bytes);
            break;
        }
    for (mask >>= 1; rc == 0 && mask > 0; mask >>= 1)
        if (vr + mask < p)
            rc = colls__dc_send(&d, (int)((vr + mask + (size_t)root) % p), 0,
                                data, bytes);
    rc = colls__dc_end(&d, rc);
    free(copy);
    if (rc == 0 && vr != 0)
        colls__dc_le(dtype, buf, bytes);
    return rc;
}

/* Each round of Bruck's (dcoll_bruck, below) sends before it receives,
   and a send of COLLS__DCOLL_RNDV bytes or more waits for its receiver's
   clear-to-send, which that member gives only once its own send is out:
   every member would wait for ever.  Bruck runs below COLLS__DCOLL_RSAG
   bytes of P blocks, and no round sends more than P - 1 blocks.  (Tried
   with Bruck up to 1 MiB: an allreduce of 64 KiB on 4 hosts hung in its
   second round, whose messages of 128 KiB each waited for a
   clear-to-send.) */
_Static_assert(COLLS__DCOLL_RSAG <= COLLS__DCOLL_RNDV,
               "Bruck's messages must stay below the rendezvous");

/*
 * Bruck's allgather of one block of m bytes (items of dtype) per member,
 * mine in native order, into all (P blocks, rank order, native order).
 * Blocks travel little-endian: mine is swapped once it is copied to the
 * working buffer, all once it is complete.
 */
static int
dcoll_bruck(struct dcoll *d, const void *mine, uint8_t *all, size_t m,
            int dtype)
{
    size_t p = (size_t)d->g->size, r = (size_t)d->g->rank, dist, k;
    size_t have = 1;
    uint32_t step = 0;
    uint8_t *w;
    int rc = 0;

    w = malloc(p * m > 0 ? p * m : 1);
    if (w == NULL)
        return colls__dc_end(d, COLLS_ENOMEM); /* the collective ends here */
    if (m > 0)
        memcpy(w, mine, m);
    colls__dc_le(dtype, w, m);
    /* w holds the blocks of ranks r, r+1, ..., r+have-1 (mod P) */
    for (dist = 1; rc == 0 && dist < p; dist <<= 1, step++) {
        k = dist < p - dist ? dist : p - dist;
        rc = colls__dc_send(d, (int)((r + p - dist) % p), step, w, k * m);
        if (rc == 0)
            rc = colls__dc_recv(d, (int)((r + dist) % p), step, w + have * m,
                                k * m);
        have += k;
    }
    /* sends read w: done before it is freed */
    rc = colls__dc_end(d, rc);
    if (rc == 0) {
        for (k = 0; k < p && m > 0; k++)
            memcpy(all + ((r + k) % p) * m, w + k * m, m);
        colls__dc_le(dtype, all, p * m);
    }
    free(w);
    return rc;
}

/* Item block j of count items cut into p: its first item and length. */
static void
dcoll_block(size_t count, size_t p, size_t j, size_t *first, size_t *n)
{
    size_t q = count / p, rem = count % p;

    *first = j * q + (j < rem ? j : rem);
    *n = q + (j < rem ? 1 : 0);
}

/*
 * n bytes of working memory for the running direct collective, kept in c
 * for the next one (a fresh allocation of a large block costs a page
 * fault per page each time), or NULL.
 */
static uint8_t *
dcoll_scratch(colls_t *c, size_t n)
{
    uint8_t *p;

    if (n <= c->dcoll_scratch_cap)
        return c->dcoll_scratch;
    p = realloc(c->dcoll_scratch, n);
    if (p == NULL)
        return NULL;
    c->dcoll_scratch = p;
    c->dcoll_scratch_cap = n;
    return p;
}

/* 1 if the n bytes at a and at b overlap. */
static int
dcoll_overlap(const void *a, const void *b, size_t n)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

    return n > 0 && x < y + n && y < x + n;
}

/*
 * Posts the receives of step's blocks from every other member: block j of
 * total items of ds bytes (dcoll_block) into out from rank j.
 */
static void
dcoll_post_blocks(struct dcoll *d, uint32_t step, uint8_t *out, size_t total,
                  size_t ds)
{
    size_t p = (size_t)d->g->size, r = (size_t)d->g->rank, k, j, first, n;

    for (k = 1; k < p; k++) {
        j = (r + p - k) % p;
        dcoll_block(total, p, j, &first, &n);
        (void)dcoll_post(d, (int)j, step, out + first * ds, n * ds);
    }
}

/*
 * A pairwise allgather of blocks as step: sends mine (this member's block
 * of total items of dtype, little-endian, which stays put until the
 * collective's sends are done) to every other member and receives block
 * j from rank j into its place in out (native order).  Does not touch
 * this member's own block of out.  0 or a COLLS_E* code.
 */
static int
dcoll_gather_blocks(struct dcoll *d, uint32_t step, const uint8_t *mine,
                    uint8_t *out, size_t total, int dtype)
{
    size_t p = (size_t)d->g->size, r = (size_t)d->g->rank, k, j, first, n;
    size_t ds = dtype_size(dtype);
    int rc = 0;

    dcoll_block(total, p, r, &first, &n);
    for (k = 1; rc == 0 && k < p; k++)
        rc = colls__dc_send(d, (int)((r + k) % p), step, mine, n * ds);
    for (k = 1; rc == 0 && k < p; k++) {
        j = (r + p - k) % p;
        dcoll_block(total, p, j, &first, &n);
        rc = colls__dc_recv(d, (int)j, step, out + first * ds, n * ds);
        if (rc == 0)
            colls__dc_le(dtype, out + first * ds, n * ds);
    }
    return rc;
}

/*
 * Large allgather: every member sends its block to every other member
 * (P - 1 sends at once) and receives theirs straight into place, posted
 * first: the bytes of Bruck's, without its working copy and rotation.
 */
static int
dcoll_pairwise(struct dcoll *d, const void *sbuf, uint8_t *all, size_t m,
               int dtype)
{
    size_t p = (size_t)d->g->size, r = (size_t)d->g->rank;
    size_t ds = dtype_size(dtype), count = m / ds;
    const uint8_t *mine = sbuf;
    uint8_t *le = NULL;
    int rc = colls__dc_room(d, p - 1);

    if (rc == 0)
        rc = dcoll_posts(d, p - 1);
    /* my block as it travels: a copy when it must be swapped, or when
       it lies in all other than at its place (the receives write there) */
    if (rc == 0 && m > 0 &&
        ((ds > 1 && dtype_native_order() != COLLS_ORDER_LITTLE) ||
         (dcoll_overlap(sbuf, all, p * m) &&
          (const uint8_t *)sbuf != all + r * m))) {
        le = malloc(m);
        if (le == NULL)
            return colls__dc_end(d, COLLS_ENOMEM);
        memcpy(le, sbuf, m);
        colls__dc_le(dtype, le, m);
        mine = le;
    }
    if (rc == 0) {
        dcoll_post_blocks(d, 0, all, p * count, ds);
        rc = dcoll_gather_blocks(d, 0, mine, all, p * count, dtype);
    }
    rc = colls__dc_end(d, rc); /* the sends read mine */
    if (rc == 0 && le != NULL) {
        memcpy(all + r * m, le, m);
        colls__dc_le(dtype, all + r * m, m); /* back to native order */
    } else if (rc == 0 && m > 0 && all + r * m != (const uint8_t *)sbuf) {
        memcpy(all + r * m, sbuf, m);
    }
    free(le);
    return rc;
}

/*
 * An allgather of several members on a host too large for a board's slot:
 * each member's block broadcast in turn (colls__dcoll_bcast through the
 * boards, chunked), rank 0's first.  Every block crosses between the
 * hosts once per host and is handed within a host through its board, and
 * as in back-to-back bcasts a root goes on once its block is out.  2 hosts
 * x 4 tasks, ms, 3 runs unpinned and 2 pinned to one CPU, blocks of
 * 16 KiB .. 4 MiB: 0.33-0.44, 0.58-0.87, 2.0-2.8, 9.5-14.3, 49-59
 * unpinned (the daemons' hierarchical ring 0.51-0.69, 1.03-1.17, 4.4-5.4,
 * 18.6-25.0, 128-148; pairwise among all the tasks 0.71-0.79, 1.33-1.45,
 * 3.5-5.8, 20-22, 81-84), pinned 0.69-0.70, 1.37-1.58, 3.6-4.0,
 * 20.6-22.7, 80-83 (daemons 0.86-0.90, 2.1-2.2, 6.2-6.5, 25.9-26.3,
 * 142-170).
 */
static int
dcoll_bcasts(struct colls_group *g, const void *sbuf, uint8_t *rbuf, size_t m,
             int dtype)
{
    size_t p = (size_t)g->size, r;
    int rc = 0;

    if (m > 0)
        memmove(rbuf + (size_t)g->rank * m, sbuf, m);
    for (r = 0; rc == 0 && r < p; r++)
        rc = colls__dcoll_bcast(g, rbuf + r * m, m, dtype, (int)r);
    return rc;
}

int
colls__dcoll_allgather(struct colls_group *g, const void *sbuf, void *rbuf,
                       size_t m, int dtype)
{
    struct dcoll d;

    if (dcoll_hier(g, COLLS_COLL_ALLGATHER, (size_t)g->size * m))
        return colls__hcoll_allgather(g, sbuf, rbuf, m, dtype);
    if (!g->one_per_host)
        return dcoll_bcasts(g, sbuf, rbuf, m, dtype);
    colls__dc_begin(&d, g);
    if ((size_t)g->size * m >= COLLS__DCOLL_RSAG)
        return dcoll_pairwise(&d, sbuf, rbuf, m, dtype);
    return dcoll_bruck(&d, sbuf, rbuf, m, dtype);
}

/*
 * The P contributions to a block of mn items of an allreduce folded in
 * rank order, 0 op 1 op ... op P - 1, into dst: member j's in part's
 * block j, this member's (rank r) at own.  dst may be part's block 0 and
 * own part's block r.
 */
static int
dcoll_fold(int rop, int dtype, uint8_t *dst, const uint8_t *part,
           const uint8_t *own, size_t r, size_t p, size_t mn)
{
    size_t ds = dtype_size(dtype), j;
    int rc;

    if (p < 2) {
        memmove(dst, own, mn * ds);
        return 0;
    }
    rc = reduce_apply3(rop, dtype, dst, r == 0 ? own : part,
                       r == 1 ? own : part + mn * ds, mn);
    for (j = 2; rc == 0 && j < p; j++)
        rc = reduce_apply(rop, dtype, dst, j == r ? own : part + j * mn * ds,
                          mn);
    return rc;
}

/*
 * Large allreduce: reduce-scatter then allgather, both pairwise.  The
 * count items are cut into P blocks; rank j owns block j.  Step 0: every
 * member sends block j of its input to rank j (all P - 1 sends at once)
 * and receives its own block of every other input; it reduces the P
 * contributions in rank order (0 op 1 op ...), as bruck+reduce does, so
 * the result is bit-identical to that and to every other member's.  Step
 * 1: it sends its reduced block to every other member and receives
 * theirs.  Each member sends and receives 2 (P - 1) / P of the data,
 * what a ring moves, in two rounds instead of 2 (P - 1).  Every receive
 * is posted before its step's sends (step 1's at once unless the output
 * is the input that step 0's sends read), so that large blocks are read
 * straight into place.
 */
static int
dcoll_rsag(struct dcoll *d, const void *sbuf, void *rbuf, size_t count,
           int dtype, int rop)
{
    size_t p = (size_t)d->g->size, r = (size_t)d->g->rank;
    size_t ds = dtype_size(dtype), k, j, first, n, mf, mn;
    const uint8_t *in = sbuf, *mine, *own;
    uint8_t *le = NULL, *part, *out = rbuf, *acc;
    int ovl = dcoll_overlap(sbuf, rbuf, count * ds), alias;
    int rc = colls__dc_room(d, 2 * (p - 1));

    if (rc == 0)
        rc = dcoll_posts(d, 2 * (p - 1));
    dcoll_block(count, p, r, &mf, &mn);
    part = dcoll_scratch(d->g->c, p * mn * ds > 0 ? p * mn * ds : 1);
    if (part == NULL)
        return colls__dc_end(d, COLLS_ENOMEM);
    /* the input as it travels */
    if (colls__dc_le_copy(dtype, sbuf, count * ds, &le) < 0)
        return colls__dc_end(d, COLLS_ENOMEM);
    if (le != NULL)
        in = le;
    /* step 0's sends read the output before it is written */
    alias = in == sbuf && ovl;
    for (k = 1; rc == 0 && k < p; k++) {
        j = (r + p - k) % p;
        (void)dcoll_post(d, (int)j, 0, part + j * mn * ds, mn * ds);
    }
    if (rc == 0 && !alias)
        dcoll_post_blocks(d, 1, out, count, ds);
    for (k = 1; rc == 0 && k < p; k++) {
        j = (r + k) % p;
        dcoll_block(count, p, j, &first, &n);
        rc = colls__dc_send(d, (int)j, 0, in + first * ds, n * ds);
    }
    /* where the output overlaps the input, a block received in step 1
       may land on this member's own: it is copied among the others, folded
       in part's block 0 and copied out; else folded straight into place,
       read where it stands (two copies of 1/P of the data fewer) */
    own = (const uint8_t *)sbuf + mf * ds;
    acc = out + mf * ds;
    if (mn > 0 && ovl) {
        memcpy(part + r * mn * ds, own, mn * ds);
        own = part + r * mn * ds;
        acc = part;
    }
    for (k = 1; rc == 0 && k < p; k++) {
        j = (r + p - k) % p;
        rc = colls__dc_recv(d, (int)j, 0, part + j * mn * ds, mn * ds);
        if (rc == 0)
            colls__dc_le(dtype, part + j * mn * ds, mn * ds);
    }
    if (rc == 0 && mn > 0)
        rc = dcoll_fold(rop, dtype, acc, part, own, r, p, mn);
    /* so they are done first (le's block r is not among them) */
    if (rc == 0 && alias)
        rc = colls__sends_wait(&d->sent);
    if (rc == 0 && mn > 0 && ovl)
        memcpy(out + mf * ds, acc, mn * ds);
    if (rc == 0 && mn > 0 && le != NULL) {
        memcpy(le + mf * ds, out + mf * ds, mn * ds);
        colls__dc_le(dtype, le + mf * ds, mn * ds);
    }
    mine = le != NULL ? le + mf * ds : out + mf * ds;
    if (rc == 0 && alias)
        dcoll_post_blocks(d, 1, out, count, ds);
    if (rc == 0)
        rc = dcoll_gather_blocks(d, 1, mine, out, count, dtype);
    rc = colls__dc_end(d, rc); /* the sends read le */
    free(le);
    return rc;
}

int
colls__dcoll_allreduce(struct colls_group *g, const void *sbuf, void *rbuf,
                       size_t count, int dtype, int rop)
{
    struct dcoll d;
    size_t m = count * dtype_size(dtype), p = (size_t)g->size, j;
    uint8_t *all;
    int rc;

    if (dcoll_hier(g, COLLS_COLL_ALLREDUCE, m))
        return colls__hcoll_allreduce(g, sbuf, rbuf, count, dtype, rop);
    colls__dc_begin(&d, g);
    if (p * m >= COLLS__DCOLL_RSAG)
        return dcoll_rsag(&d, sbuf, rbuf, count, dtype, rop);
    all = malloc(p * m > 0 ? p * m : 1);
    if (all == NULL)
        return colls__dc_end(&d, COLLS_ENOMEM);
    rc = dcoll_bruck(&d, sbuf, all, m, dtype);
    for (j = 1; rc == 0 && j < p && m > 0; j++)
        rc = reduce_apply(rop, dtype, all, all + j * m, count);
    if (rc == 0 && m > 0)
        memcpy(rbuf, all, m);
    free(all);
    return rc;
}
