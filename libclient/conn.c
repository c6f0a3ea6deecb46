/*
 * conn.c -- framed I/O over libuv streams, and what the library does with
 * each frame that comes from the daemon.
 *
 * Reading: bytes land in the stream's buffer until a frame's header and
 * envelope are complete (both lengths checked by frame_peek() against the
 * limits before anything is allocated).  A small frame is taken from the
 * buffer when whole; a large payload gets its final allocation at once and
 * the rest of it is read straight into it, so it is copied only once --
 * or, when a posted raw receive matches it and has room, straight into
 * that receive's buffer (matching happens when the header arrives).
 *
 * Writing: one colls__wreq per frame: its own header + envelope bytes, then
 * the caller's payload buffers, without copying.  When nothing is queued on
 * the stream the frame is written at once (uv_try_write: one writev, no
 * loop turn), so a blocking send usually returns without running the
 * loop; what the kernel did not take goes to uv_write().  The request the
 * write belongs to completes when the last write is done.
 *
 * Bookkeeping (docs/protocol.md §5): TASK_EXIT, HOST_DOWN and SEND_FAILED
 * are recorded so receives and sends naming a dead source or destination
 * fail with COLLS_EPEERDEAD / COLLS_EHOSTDOWN / COLLS_ENOENT, once no queued
 * message matches, instead of hanging.  A death is recorded only after the
 * dead task's direct connection closed (its last messages may still be in
 * it), and waits (at most COLLS__HELLO_MS) for connections that have not
 * said who they are yet.  A host marked down is unmarked when
 * a message from it arrives (a restarted host is up again).  Sends fail
 * early only to tasks known to have exited (or never existed).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Payloads above this are read straight into their own allocation. */
#define COLLS__INLINE_MAX (64u * 1024)
#define COLLS__READ_CHUNK (64u * 1024)
/* How long a death waits for an unidentified direct connection's HELLO. */
#define COLLS__HELLO_MS 2000

/* Maps a libuv error to a COLLS_E* code. */
static int
conn_uv_err(int uverr)
{
    switch (uverr) {
    case UV_ENOMEM:
        return COLLS_ENOMEM;
    case UV_ECANCELED:
        return COLLS_ECANCELED;
    default:
        return COLLS_EIO;
    }
}

void
colls__rmsg_free(struct colls__rmsg *m)
{
    if (m == NULL)
        return;
    free(m->data);
    free(m);
}

/* Allocates a stream of the given kind, linked into c->streams.  The
   caller initialises the uv handle (pipe or tcp) before using it. */
struct colls__stream *
colls__stream_new(colls_t *c, int kind)
{
    struct colls__stream *st = calloc(1, sizeof(*st));

    if (st == NULL)
        return NULL;
    st->c = c;
    st->kind = kind;
    buf_init(&st->in);
    colls__q_init(&st->link);
    colls__q_push(&c->streams, &st->link);
    st->u.h.data = st;
    return st;
}

/* Close callback: the handle is gone, free the stream. */
static void
conn_close_cb(uv_handle_t *h)
{
    struct colls__stream *st = h->data;

    buf_free(&st->in);
    if (st->pend_env != NULL)
        envelope_free(st->pend_env);
    free(st->pend_data);
    free(st);
}

/*
 * Closes a stream: unlinks it, tells direct.c (its peer loses it), and
 * frees it from the close callback.  Safe to call twice.
 */
void
colls__stream_close(struct colls__stream *st)
{
    if (st->closing)
        return;
    st->closing = 1;
    colls__q_remove(&st->link);
    if (st->pend_req != NULL) {
        struct colls_req *r = st->pend_req;
        st->pend_req = NULL;
        r->bound = NULL;
        r->result = st->c->conn_err ? st->c->conn_err : COLLS_EIO;
        r->done = 1;
    }
    if (st->c->daemon == st)
        st->c->daemon = NULL;
    if (st->kind == COLLS__ST_DIRECT)
        colls__direct_closed(st);
    st->u.h.data = st;
    if (st->u.h.type == UV_UNKNOWN_HANDLE) {
        /* never initialised as a uv handle */
        conn_close_cb(&st->u.h);
        return;
    }
    uv_close(&st->u.h, conn_close_cb);
}

/* ---- delivery and failure bookkeeping ---------------------------------- */

/* 1 if message m matches a receive of src/tag (COLLS_ANY wildcards). */
static int
conn_match(const struct colls_req *r, const struct colls__rmsg *m)
{
    return (r->src == (colls_tid_t)COLLS_ANY || r->src == m->src) &&
           (r->tag == COLLS_ANY || r->tag == m->tag);
}

/*
 * Hands a new message to the oldest posted receive it matches, or queues
 * it as unexpected.  Takes ownership of m.  Always returns 0.
 */
int
colls__deliver(colls_t *c, struct colls__rmsg *m)
{
    struct colls__queue *q;
    int hid = COLLS_TID_HID(m->src);

    c->arrivals++;
    c->host_down[hid] = 0;
    for (q = c->posted.next; q != &c->posted; q = q->next) {
        struct colls_req *r = COLLS__CONTAINER(q, struct colls_req, link);
        if (conn_match(r, m)) {
            colls__q_remove(&r->link);
            colls__recv_fill(r, m);
            return 0;
        }
    }
    colls__q_push(&c->unexpected, &m->link);
    return 0;
}

/* Fails every posted receive for which fails(r) holds with status. */
static void
conn_fail_posted(colls_t *c, colls_tid_t tid, int hid, int status)
{
    struct colls__queue *q, *next;

    for (q = c->posted.next; q != &c->posted; q = next) {
        struct colls_req *r = COLLS__CONTAINER(q, struct colls_req, link);
        next = q->next;
        if (r->src == (colls_tid_t)COLLS_ANY)
            continue;
        if ((hid < 0 && r->src == tid) ||
            (hid >= 0 && COLLS_TID_HID(r->src) == hid)) {
            colls__q_remove(&r->link);
            r->st.source = r->src;
            r->st.tag = r->tag;
            r->st.length = 0;
            r->result = status;
            r->done = 1;
        }
    }
}

/* Index of tid in c->dead, or where it would go (bsearch on tid). */
static size_t
conn_dead_pos(const colls_t *c, colls_tid_t tid)
{
    size_t lo = 0, hi = c->ndead;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->dead[mid].tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Closes the direct connections that did not say HELLO in time. */
static void
conn_hello_timer_cb(uv_timer_t *t)
{
    colls_t *c = t->data;
    struct colls__queue *q, *next;

    for (q = c->streams.next; q != &c->streams; q = next) {
        struct colls__stream *st =
            COLLS__CONTAINER(q, struct colls__stream, link);
        next = q->next;
        if (st->kind == COLLS__ST_DIRECT && !st->hello)
            colls__stream_close(st);
    }
    colls__apply_pending(c);
}

/*
 * Holds back the death of tid while a direct connection of unknown origin
 * is open, for at most COLLS__HELLO_MS.  0, or COLLS_ENOMEM (then the
 * caller records it at once).
 */
static int
conn_hold(colls_t *c, colls_tid_t tid, int status)
{
    if (c->npending == c->cappending) {
        size_t ncap = c->cappending ? c->cappending * 2 : 8;
        struct colls__dead *np = realloc(c->pending, ncap * sizeof(*np));
        if (np == NULL)
            return COLLS_ENOMEM;
        c->pending = np;
        c->cappending = ncap;
    }
    c->pending[c->npending].tid = tid;
    c->pending[c->npending].status = status;
    c->npending++;
    if (!uv_is_active((uv_handle_t *)&c->hello_timer)) {
        c->hello_timer.data = c;
        uv_timer_start(&c->hello_timer, conn_hello_timer_cb, COLLS__HELLO_MS,
                       0);
    }
    return 0;
}

/*
 * A direct connection said HELLO from tid: if tid's death is held back,
 * returns its status (the connection records it when it closes) and
 * forgets it here; else 0.
 */
int
colls__take_pending(colls_t *c, colls_tid_t tid)
{
    size_t i;
    int status;

    for (i = 0; i < c->npending; i++) {
        if (c->pending[i].tid != tid)
            continue;
        status = c->pending[i].status;
        c->pending[i] = c->pending[--c->npending];
        return status;
    }
    return 0;
}

/* Records the held-back deaths once no connection of unknown origin is
   left. */
void
colls__apply_pending(colls_t *c)
{
    struct colls__queue *q;

    for (q = c->streams.next; q != &c->streams; q = q->next) {
        struct colls__stream *st =
            COLLS__CONTAINER(q, struct colls__stream, link);
        if (st->kind == COLLS__ST_DIRECT && !st->hello && !st->closing)
            return;
    }
    uv_timer_stop(&c->hello_timer);
    while (c->npending > 0) {
        struct colls__dead d = c->pending[--c->npending];
        colls__mark_dead(c, d.tid, d.status);
    }
}

/*
 * Records that tid is gone (status: COLLS_EPEERDEAD, COLLS_ENOENT, or
 * COLLS_EHOSTDOWN from SEND_FAILED) and fails the posted receives naming
 * it.  If a direct connection from tid is still open, its last messages
 * may still be in it: the record waits until that connection closes.
 * Out of memory the record is skipped; the posted receives still fail.
 */
void
colls__mark_dead(colls_t *c, colls_tid_t tid, int status)
{
    size_t pos = conn_dead_pos(c, tid);
    struct colls__queue *q;

    int unknown = 0;

    for (q = c->streams.next; q != &c->streams; q = q->next) {
        struct colls__stream *st =
            COLLS__CONTAINER(q, struct colls__stream, link);
        if (st->kind != COLLS__ST_DIRECT || st->closing)
            continue;
        if (!st->hello)
            unknown = 1;
        else if (st->peer_tid == tid) {
            st->dead_status = status;
            return;
        }
    }
    if (unknown && conn_hold(c, tid, status) == 0)
        return;

    if (pos < c->ndead && c->dead[pos].tid == tid) {
        c->dead[pos].status = status;
    } else {
        if (c->ndead == c->capdead) {
            size_t ncap = c->capdead ? c->capdead * 2 : 16;
            struct colls__dead *nd = realloc(c->dead, ncap * sizeof(*nd));
            if (nd == NULL)
                goto posted;
            c->dead = nd;
            c->capdead = ncap;
        }
        memmove(c->dead + pos + 1, c->dead + pos,
                (c->ndead - pos) * sizeof(*c->dead));
        c->dead[pos].tid = tid;
        c->dead[pos].status = status;
        c->ndead++;
    }
posted:
    conn_fail_posted(c, tid, -1, status);
}

/*
 * Records that host hid is down and fails receives naming its tasks.  The
 * records of its dead tasks go: the host mark covers them, and a restarted
 * host (new incarnation) may issue the same tids again.
 */
void
colls__mark_host_down(colls_t *c, int hid)
{
    size_t i, j = 0;

    if (hid <= 0 || hid >= (int)sizeof(c->host_down))
        return;
    c->host_down[hid] = 1;
    for (i = 0; i < c->ndead; i++)
        if (COLLS_TID_HID(c->dead[i].tid) != hid)
            c->dead[j++] = c->dead[i];
    c->ndead = j;
    conn_fail_posted(c, 0, hid, COLLS_EHOSTDOWN);
}

/* Why a receive from src cannot be satisfied, or 0 if it still can. */
int
colls__src_status(const colls_t *c, colls_tid_t src)
{
    size_t pos;

    if (src == (colls_tid_t)COLLS_ANY)
        return 0;
    pos = conn_dead_pos(c, src);
    if (pos < c->ndead && c->dead[pos].tid == src)
        return c->dead[pos].status;
    if (c->host_down[COLLS_TID_HID(src)])
        return COLLS_EHOSTDOWN;
    return 0;
}

/*
 * Why a send to dst is known to fail, or 0: only a task known to have
 * exited or never to have existed.  A host marked down may come back (a
 * restart), so sends to it go to the daemon, which answers SEND_FAILED.
 */
int
colls__dst_status(const colls_t *c, colls_tid_t dst)
{
    size_t pos;

    if (dst == (colls_tid_t)COLLS_ANY || COLLS_TID_HID(dst) == 0)
        return COLLS_EINVAL;
    pos = conn_dead_pos(c, dst);
    if (pos < c->ndead && c->dead[pos].tid == dst &&
        c->dead[pos].status != COLLS_EHOSTDOWN)
        return c->dead[pos].status;
    return 0;
}

/* ---- control requests --------------------------------------------------- */

void
colls__ctl_free(struct colls__ctl *ctl)
{
    if (ctl == NULL)
        return;
    colls__q_remove(&ctl->link);
    envelope_free(ctl->rep);
    free(ctl->payload);
    free(ctl);
}

/* Completes ctl with status (no reply); calls its callback if any. */
static void
conn_ctl_finish(colls_t *c, struct colls__ctl *ctl)
{
    colls__q_remove(&ctl->link);
    ctl->done = 1;
    if (ctl->cb != NULL)
        ctl->cb(c, ctl);
}

/*
 * Sends request e to the daemon with a fresh req_id and queues ctl to be
 * completed by the reply.  0 or a COLLS_E* code (ctl not queued).
 */
int
colls__ctl_send(colls_t *c, Envelope *e, struct colls__ctl *ctl)
{
    int rc;

    if (c->daemon == NULL)
        return c->conn_err ? c->conn_err : COLLS_ENOTCONN;
    ctl->req_id = colls__req_id(c);
    e->req_id = ctl->req_id;
    e->src = c->tid;
    rc = colls__write_env(c->daemon, e, NULL, 0, NULL);
    if (rc < 0)
        return rc;
    colls__q_init(&ctl->link);
    colls__q_push(&c->ctls, &ctl->link);
    return 0;
}

static int
conn_ctl_pred(void *arg)
{
    return ((struct colls__ctl *)arg)->done;
}

/*
 * Sends request e and waits (subject to the timeout) for its reply.  On
 * success *rep is the reply (free with envelope_free).  An ERROR reply or
 * a reply with a non-zero status becomes that status.
 */
int
colls__ctl_call(colls_t *c, Envelope *e, Envelope **rep)
{
    struct colls__ctl *ctl = calloc(1, sizeof(*ctl));
    int rc;

    *rep = NULL;
    if (ctl == NULL)
        return COLLS_ENOMEM;
    rc = colls__ctl_send(c, e, ctl);
    if (rc < 0) {
        free(ctl);
        return rc;
    }
    rc = colls__wait(c, conn_ctl_pred, ctl, 1);
    if (rc == 0 && ctl->status < 0)
        rc = ctl->status;
    if (rc == 0 && ctl->rep->kind == KIND__ERROR)
        rc = ctl->rep->status < 0 ? ctl->rep->status : COLLS_EPROTO;
    if (rc == 0 && ctl->rep->status < 0)
        rc = ctl->rep->status;
    if (rc == 0) {
        *rep = ctl->rep;
        ctl->rep = NULL;
    }
    colls__ctl_free(ctl);
    return rc;
}

/* Fails every posted receive and control request: the daemon is gone. */
void
colls__fail_all(colls_t *c, int status)
{
    while (!colls__q_empty(&c->posted)) {
        struct colls_req *r =
            COLLS__CONTAINER(c->posted.next, struct colls_req, link);
        colls__q_remove(&r->link);
        r->result = status;
        r->done = 1;
    }
    while (!colls__q_empty(&c->ctls)) {
        struct colls__ctl *ctl =
            COLLS__CONTAINER(c->ctls.next, struct colls__ctl, link);
        ctl->status = status;
        conn_ctl_finish(c, ctl);
    }
}

/* The reply e belongs to a control request: complete it. */
static void
conn_reply(colls_t *c, Envelope *e, uint8_t *payload, size_t plen)
{
    struct colls__queue *q;
    struct colls__ctl *ctl = NULL;

    for (q = c->ctls.next; q != &c->ctls; q = q->next) {
        struct colls__ctl *x = COLLS__CONTAINER(q, struct colls__ctl, link);
        if (x->req_id == e->req_id) {
            ctl = x;
            break;
        }
    }
    /* A reply without an id answers the oldest request (the daemon
       answers in order). */
    if (ctl == NULL && e->req_id == 0 && !colls__q_empty(&c->ctls))
        ctl = COLLS__CONTAINER(c->ctls.next, struct colls__ctl, link);
    if (ctl == NULL) {
        /* An ERROR nobody asked for says why the daemon is about to
           close the connection (e.g. COLLS_ENOBUFS: too much queued for
           this task): calls that fail on the close report it. */
        if (e->kind == KIND__ERROR && e->status < 0 && c->conn_err == 0)
            c->conn_err = e->status;
        envelope_free(e);
        free(payload);
        return;
    }
    ctl->rep = e;
    ctl->payload = payload;
    ctl->plen = plen;
    conn_ctl_finish(c, ctl);
}

/* A frame from the daemon.  Takes ownership of e and payload. */
static void
conn_daemon_frame(struct colls__stream *st, Envelope *e, uint8_t *payload,
                  size_t plen)
{
    colls_t *c = st->c;
    struct colls__rmsg *m;
    int status;

    switch (e->kind) {
    case KIND__DATA:
        m = calloc(1, sizeof(*m));
        if (m == NULL) {
            /* cannot queue it: the loss is reported as the stream's */
            free(payload);
            envelope_free(e);
            c->conn_err = COLLS_ENOMEM;
            return;
        }
        m->src = e->src;
        m->tag = e->tag;
        m->flags = e->flags;
        m->encoding = (int)e->encoding;
        m->byte_order = (int)e->byte_order;
        m->route = COLLS_ROUTE_DEFAULT;
        m->data = payload;
        m->len = plen;
        envelope_free(e);
        colls__deliver(c, m);
        return;
    case KIND__SEND_FAILED:
        status = e->status < 0 ? e->status : COLLS_ENOENT;
        colls__mark_dead(c, e->dst, status);
        break;
    case KIND__TASK_EXIT:
        colls__mark_dead(c, e->src, COLLS_EPEERDEAD);
        break;
    case KIND__HOST_DOWN:
        if (e->body_case == ENVELOPE__BODY_HOST_OP)
            colls__mark_host_down(c, (int)e->host_op->hid);
        break;
    case KIND__COLL_RESULT:
        colls__coll_frame(c, e, payload, plen);
        return;
    default:
        conn_reply(c, e, payload, plen);
        return;
    }
    free(payload);
    envelope_free(e);
}

/* Dispatches a whole frame to its stream kind. */
static void
conn_frame(struct colls__stream *st, Envelope *e, uint8_t *payload, size_t plen)
{
    if (st->kind == COLLS__ST_DAEMON)
        conn_daemon_frame(st, e, payload, plen);
    else
        colls__direct_frame(st, e, payload, plen);
}

/* The stream ended or broke: close it, and for the daemon fail all. */
static void
conn_stream_error(struct colls__stream *st, int status)
{
    colls_t *c = st->c;

    if (st->kind == COLLS__ST_DAEMON) {
        if (c->conn_err == 0)
            c->conn_err = status;
        colls__stream_close(st);
        colls__fail_all(c, c->conn_err);
        return;
    }
    colls__stream_close(st);
}

/* Read buffer: the pending large payload, else the stream's buffer. */
static void
conn_alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
    struct colls__stream *st = h->data;

    (void)hint;
    if (st->pend_req != NULL) {
        b->base = (char *)st->pend_req->buf + st->pend_got;
        b->len = st->pend_len - st->pend_got;
        return;
    }
    if (st->pend_data != NULL) {
        b->base = (char *)st->pend_data + st->pend_got;
        b->len = st->pend_len - st->pend_got;
        return;
    }
    if (st->in.off > 0)
        buf_compact(&st->in);
    if (buf_reserve(&st->in, COLLS__READ_CHUNK) < 0) {
        b->base = NULL;
        b->len = 0;
        return;
    }
    b->base = (char *)st->in.data + st->in.len;
    b->len = st->in.cap - st->in.len;
}

/*
 * A large DATA frame has started to arrive (have of len payload bytes at
 * p): if the oldest posted receive it matches takes raw bytes and has room
 * for all of it, the rest is read straight into that receive's buffer.
 * Returns 1 if so (e is kept until the payload is complete), else 0.
 */
static int
conn_bind(struct colls__stream *st, Envelope *e, const uint8_t *p, size_t have,
          size_t len)
{
    colls_t *c = st->c;
    struct colls__queue *q;
    colls_tid_t src;

    if (e->kind != KIND__DATA || (st->kind == COLLS__ST_DIRECT && !st->hello))
        return 0;
    src = st->kind == COLLS__ST_DIRECT ? st->peer_tid : e->src;
    for (q = c->posted.next; q != &c->posted; q = q->next) {
        struct colls_req *r = COLLS__CONTAINER(q, struct colls_req, link);
        if ((r->src != (colls_tid_t)COLLS_ANY && r->src != src) ||
            (r->tag != COLLS_ANY && r->tag != e->tag))
            continue;
        if (r->want_msg || r->cap < len)
            return 0; /* it takes this message, but not this way */
        colls__q_remove(&r->link);
        memcpy(r->buf, p, have);
        r->bound = st;
        st->pend_req = r;
        st->pend_env = e;
        st->pend_src = src;
        st->pend_len = len;
        st->pend_got = have;
        return 1;
    }
    return 0;
}

/* The payload bound to a receive is complete: the receive is done. */
static void
conn_bound_done(struct colls__stream *st)
{
    struct colls_req *r = st->pend_req;
    colls_t *c = st->c;

    r->st.source = st->pend_src;
    r->st.tag = st->pend_env->tag;
    r->st.length = st->pend_len;
    r->result = 0;
    r->done = 1;
    r->bound = NULL;
    c->arrivals++;
    c->host_down[COLLS_TID_HID(st->pend_src)] = 0;
    envelope_free(st->pend_env);
    st->pend_env = NULL;
    st->pend_req = NULL;
    st->pend_len = st->pend_got = 0;
}

/*
 * A receive bound to a stream's payload gives up (timeout): the rest of
 * the payload goes to a buffer of the stream's own, and the message to
 * the queue when complete.  Without memory the stream is closed.
 */
static void
conn_unbind(struct colls_req *r)
{
    struct colls__stream *st = r->bound;
    uint8_t *data = malloc(st->pend_len);

    r->bound = NULL;
    st->pend_req = NULL;
    if (data == NULL) {
        conn_stream_error(st, COLLS_ENOMEM);
        return;
    }
    memcpy(data, r->buf, st->pend_got);
    st->pend_data = data;
}

/* Withdraws a receive that is not done (timeout or lost connection). */
void
colls__recv_cancel(struct colls_req *r)
{
    if (r->bound != NULL)
        conn_unbind(r);
    else
        colls__q_remove(&r->link);
}

/* Takes every complete frame out of the stream's buffer. */
static void
conn_parse(struct colls__stream *st)
{
    struct frame_limits lim;
    struct frame_info fi;

    frame_limits_default(&lim);
    while (!st->closing) {
        size_t avail = buf_avail(&st->in);
        const uint8_t *head = buf_head(&st->in);
        size_t have;
        uint8_t *data = NULL;
        Envelope *e = NULL;
        int rc = frame_peek(head, avail, &lim, &fi);

        if (rc == COLLS_EAGAIN)
            return;
        if (rc < 0) {
            conn_stream_error(st, COLLS_EPROTO);
            return;
        }
        if (avail < FRAME_HDR_LEN + (size_t)fi.env_len)
            return;
        if (avail < fi.total_len && fi.payload_len <= COLLS__INLINE_MAX)
            return;
        rc = envelope_unpack(head + FRAME_HDR_LEN, fi.env_len, &e);
        if (rc < 0) {
            conn_stream_error(st, rc);
            return;
        }
        have = avail - FRAME_HDR_LEN - fi.env_len;
        if (have > fi.payload_len)
            have = (size_t)fi.payload_len;
        if (have < fi.payload_len &&
            conn_bind(st, e, head + FRAME_HDR_LEN + fi.env_len, have,
                      (size_t)fi.payload_len)) {
            buf_consume(&st->in, FRAME_HDR_LEN + fi.env_len + have);
            return;
        }
        if (fi.payload_len > 0) {
            data = malloc((size_t)fi.payload_len);
            if (data == NULL) {
                envelope_free(e);
                conn_stream_error(st, COLLS_ENOMEM);
                return;
            }
            memcpy(data, head + FRAME_HDR_LEN + fi.env_len, have);
        }
        buf_consume(&st->in, FRAME_HDR_LEN + fi.env_len + have);
        if (have < fi.payload_len) {
            st->pend_env = e;
            st->pend_data = data;
            st->pend_len = (size_t)fi.payload_len;
            st->pend_got = have;
            return;
        }
        conn_frame(st, e, data, (size_t)fi.payload_len);
    }
}

/* Read callback: account the bytes, then hand out whole frames. */
static void
conn_read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *b)
{
    struct colls__stream *st = s->data;

    (void)b;
    if (nread < 0) {
        conn_stream_error(st, nread == UV_EOF ? COLLS_ESHUTDOWN
                                              : conn_uv_err((int)nread));
        return;
    }
    if (nread == 0)
        return;
    if (st->pend_req != NULL) {
        st->pend_got += (size_t)nread;
        if (st->pend_got == st->pend_len)
            conn_bound_done(st);
        return;
    }
    if (st->pend_data != NULL) {
        st->pend_got += (size_t)nread;
        if (st->pend_got == st->pend_len) {
            Envelope *e = st->pend_env;
            uint8_t *data = st->pend_data;
            size_t len = st->pend_len;
            st->pend_env = NULL;
            st->pend_data = NULL;
            st->pend_len = st->pend_got = 0;
            conn_frame(st, e, data, len);
        }
        return;
    }
    st->in.len += (size_t)nread;
    conn_parse(st);
}

/* Starts reading a connected stream.  0 or COLLS_EIO. */
int
colls__stream_start(struct colls__stream *st)
{
    return uv_read_start(&st->u.s, conn_alloc_cb, conn_read_cb) == 0
               ? 0
               : COLLS_EIO;
}

/* ---- writing ------------------------------------------------------------ */

/* Frees a write request; the request it belongs to loses one write. */
static void
conn_wreq_done(struct colls__wreq *wr, int status)
{
    struct colls_req *r = wr->req;

    if (r != NULL) {
        if (status < 0 && r->result == 0)
            r->result = status;
        if (--r->pending == 0)
            r->done = 1;
    }
    buf_free(&wr->head);
    if (wr->bufs != wr->inl)
        free(wr->bufs);
    free(wr);
}

void
colls__wreq_fail(struct colls__wreq *wr, int status)
{
    conn_wreq_done(wr, status);
}

static void
conn_write_cb(uv_write_t *w, int status)
{
    struct colls__wreq *wr = COLLS__CONTAINER(w, struct colls__wreq, w);

    conn_wreq_done(wr, status < 0 ? conn_uv_err(status) : 0);
}

/*
 * A write request for payload (npayload buffers, not copied: they must
 * stay valid until req completes).  req, if not NULL, gains one pending
 * write.  0 or COLLS_ENOMEM.
 */
int
colls__wreq_new(colls_t *c, const uv_buf_t *payload, unsigned npayload,
                struct colls_req *req, struct colls__wreq **out)
{
    struct colls__wreq *wr = calloc(1, sizeof(*wr));
    unsigned i;

    if (wr == NULL)
        return COLLS_ENOMEM;
    wr->c = c;
    wr->nbufs = npayload + 1;
    if (wr->nbufs <= sizeof(wr->inl) / sizeof(wr->inl[0])) {
        wr->bufs = wr->inl;
    } else {
        wr->bufs = calloc(wr->nbufs, sizeof(*wr->bufs));
        if (wr->bufs == NULL) {
            free(wr);
            return COLLS_ENOMEM;
        }
    }
    for (i = 0; i < npayload; i++)
        wr->bufs[i + 1] = payload[i];
    buf_init(&wr->head);
    colls__q_init(&wr->link);
    wr->req = req;
    if (req != NULL)
        req->pending++;
    *out = wr;
    return 0;
}

/*
 * The fast path of a write: when nothing is queued on st, the frame goes
 * to the kernel at once (one writev, no loop turn, no poll changes).
 * Returns 1 if all of it went and wr is done (freed, its request
 * credited).  Otherwise 0: wr's buffers are advanced past what was
 * written, and the caller queues the rest with uv_write(), which keeps
 * the order (uv_try_write() refuses while anything is queued).
 */
static int
conn_try_write(struct colls__stream *st, struct colls__wreq *wr)
{
    int n = uv_try_write(&st->u.s, wr->bufs, wr->nbufs);
    size_t left;
    unsigned i;

    if (n < 0)
        return 0; /* UV_EAGAIN, or an error uv_write() reports alike */
    left = (size_t)n;
    for (i = 0; i < wr->nbufs && left >= wr->bufs[i].len; i++)
        left -= wr->bufs[i].len;
    if (i == wr->nbufs) {
        conn_wreq_done(wr, 0);
        return 1;
    }
    /* partial: drop the written buffers, trim the one cut in two */
    memmove(wr->bufs, wr->bufs + i, (wr->nbufs - i) * sizeof(*wr->bufs));
    wr->nbufs -= i;
    wr->bufs[0].base += left;
    wr->bufs[0].len -= left;
    return 0;
}

/*
 * Writes wr on st.  If wr has no head yet it is a DATA frame built from
 * wr's fields for st's route.  On failure wr is freed and its request
 * failed; the status is returned.
 */
int
colls__wreq_write(struct colls__stream *st, struct colls__wreq *wr)
{
    size_t plen = 0;
    unsigned i;
    int rc;

    if (st == NULL || st->closing) {
        rc = wr->c->conn_err ? wr->c->conn_err : COLLS_ENOTCONN;
        goto fail;
    }
    for (i = 1; i < wr->nbufs; i++)
        plen += wr->bufs[i].len;
    if (wr->head.len == 0) {
        Envelope e;
        envelope_init(&e);
        e.kind = KIND__DATA;
        e.src = wr->c->tid;
        e.dst = wr->dst;
        e.tag = wr->tag;
        e.encoding = (uint32_t)wr->encoding;
        e.byte_order = (uint32_t)wr->byte_order;
        e.req_id = wr->req_id;
        e.route = st->kind == COLLS__ST_DIRECT ? COLLS_ROUTE_DIRECT
                                               : COLLS_ROUTE_DEFAULT;
        rc = envelope_frame_head(&wr->head, &e, plen);
        if (rc < 0)
            goto fail;
    }
    wr->bufs[0] = uv_buf_init((char *)wr->head.data, (unsigned)wr->head.len);
    if (conn_try_write(st, wr))
        return 0;
    rc = uv_write(&wr->w, &st->u.s, wr->bufs, wr->nbufs, conn_write_cb);
    if (rc < 0) {
        rc = conn_uv_err(rc);
        goto fail;
    }
    return 0;
fail:
    conn_wreq_done(wr, rc);
    return rc;
}

/*
 * Writes envelope e and payload as one frame on st; req (may be NULL)
 * completes when it is written.  0 or a COLLS_E* code.
 */
int
colls__write_env(struct colls__stream *st, const Envelope *e,
                 const uv_buf_t *payload, unsigned npayload,
                 struct colls_req *req)
{
    struct colls__wreq *wr;
    size_t plen = 0;
    unsigned i;
    int rc;

    for (i = 0; i < npayload; i++)
        plen += payload[i].len;
    if (st == NULL)
        return COLLS_ENOTCONN;
    rc = colls__wreq_new(st->c, payload, npayload, req, &wr);
    if (rc < 0)
        return rc;
    rc = envelope_frame_head(&wr->head, e, plen);
    if (rc < 0) {
        conn_wreq_done(wr, rc);
        return rc;
    }
    return colls__wreq_write(st, wr);
}
