/*
 * p2p.c -- point-to-point messages: send, receive, probe, their
 * non-blocking forms, and notification requests.
 *
 * Matching: a receive first looks through the queue of messages that
 * arrived before anyone asked for them (in arrival order, so COLLS_ANY
 * takes the oldest), then waits as a posted receive; a new message goes to
 * the oldest posted receive it matches (colls__deliver).  A large raw
 * payload whose head matches a posted receive with room is claimed for it
 * (colls__recv_claim), and the connection layer reads it straight into
 * the receive's buffer.  A receive naming a source known to be dead or on
 * a host known to be down fails with COLLS_EPEERDEAD / COLLS_EHOSTDOWN
 * once nothing queued matches (dead.c).
 *
 * Sends return once their bytes are handed to the kernel (the caller's
 * buffer is free again); they are not cut short by colls_set_timeout().
 * A send request counts its writes in flight (pending); the connection
 * layer reports each one through ops->written (colls__req_written).
 *
 * API layer (internal.h): may call the connection layer (conn.h), colls.c's
 * loop and dead.c.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Sends between two polls of the loop by a sender that never waits. */
#define COLLS__SEND_POLL 16

/* Completion predicate for colls__wait. */
static int
p2p_done_pred(void *arg)
{
    return ((struct colls_req *)arg)->done;
}

void
colls__rmsg_free(struct colls__rmsg *m)
{
    if (m == NULL)
        return;
    free(m->data);
    free(m);
}

/* ops->written: one write of send request token is done with status. */
void
colls__req_written(struct colls__conn *cn, void *token, int status)
{
    struct colls_req *r = token;

    (void)cn;
    if (status < 0 && r->result == 0)
        r->result = status;
    if (--r->pending == 0)
        r->done = 1;
}

/*
 * Writes envelope e and payload to the daemon as one more write of send
 * request r (done when its last write is).  0 or a COLLS_E* code; on
 * failure r has no write pending unless r->pending says so.
 */
int
colls__write_req(colls_t *c, const Envelope *e, const uv_buf_t *payload,
                 unsigned npayload, struct colls_req *r)
{
    if (c->conn.daemon == NULL)
        return COLLS_ENOTCONN;
    r->pending++;
    return colls__write_env(c->conn.daemon, e, payload, npayload, r);
}

/*
 * Sends one DATA frame to dst on route, the payload from the npayload
 * buffers (not copied; they must stay valid until req completes).  req
 * gains a pending write.  0 or a COLLS_E* code (then nothing is pending).
 */
int
colls__send_data(colls_t *c, colls_tid_t dst, int tag, int encoding,
                 int byte_order, int route, const uv_buf_t *payload,
                 unsigned npayload, struct colls_req *req)
{
    struct colls__wreq *wr;
    uint64_t len = 0;
    unsigned i;
    int rc;

    /* A send usually completes without running the loop (conn.c writes
       at once); a task that only sends still reads what the daemon says
       (SEND_FAILED, TASK_EXIT, ...) now and then, so its input does not
       pile up and sends to the dead fail early. */
    if (++c->sends_unpolled >= COLLS__SEND_POLL) {
        c->sends_unpolled = 0;
        colls__poll(c);
    }
    rc = colls__dst_status(c, dst);
    if (rc < 0)
        return rc;
    if (c->conn.daemon == NULL && c->conn.err)
        return c->conn.err;
    for (i = 0; i < npayload; i++)
        len += payload[i].len;
    if (len > c->max_message)
        return COLLS_EMSGSIZE;
    req->pending++;
    rc = colls__wreq_new(&c->conn, payload, npayload, req, &wr);
    if (rc < 0)
        return rc;
    wr->dst = dst;
    wr->tag = tag;
    wr->encoding = encoding;
    wr->byte_order = byte_order;
    wr->req_id = colls__conn_req_id(&c->conn);
    if (route == COLLS_ROUTE_DIRECT && COLLS_TID_LOCAL(dst) != 0 &&
        dst != c->conn.tid)
        return colls__direct_send(&c->conn, wr);
    return colls__wreq_write(c->conn.daemon, wr);
}

/*
 * Waits until every write of send request r is done.  Not subject to the
 * timeout: libuv holds the caller's buffers until then.
 */
int
colls__send_wait(struct colls_req *r)
{
    while (!r->done)
        uv_run(&r->c->conn.loop, UV_RUN_ONCE);
    return r->result;
}

/* 1 if a message from src with tag matches a receive of rsrc/rtag
   (COLLS_ANY wildcards). */
static int
p2p_match(colls_tid_t rsrc, int rtag, colls_tid_t src, int tag)
{
    if (tag == COLLS__TAG_DCOLL)
        return 0; /* a direct collective's (dcoll.c), never the caller's */
    return (rsrc == (colls_tid_t)COLLS_ANY || rsrc == src) &&
           (rtag == COLLS_ANY || rtag == tag);
}

/* The oldest posted receive matching a message from src with tag. */
static struct colls_req *
p2p_posted(colls_t *c, colls_tid_t src, int tag)
{
    struct list_node *n;

    LIST_FOREACH (n, &c->posted) {
        struct colls_req *r = list_entry(n, struct colls_req, link);
        if (p2p_match(r->src, r->tag, src, tag))
            return r;
    }
    return NULL;
}

/* Finds, unlinks and returns the oldest queued message matching. */
static struct colls__rmsg *
p2p_take(colls_t *c, colls_tid_t src, int tag, int remove)
{
    struct list_node *n;

    LIST_FOREACH (n, &c->unexpected) {
        struct colls__rmsg *m = list_entry(n, struct colls__rmsg, link);
        if (p2p_match(src, tag, m->src, m->tag)) {
            if (remove)
                list_del(&m->link);
            return m;
        }
    }
    return NULL;
}

/*
 * Completes receive r with message m: status filled, payload copied (or
 * the message handed over when r wants it whole), m consumed.
 */
void
colls__recv_fill(struct colls_req *r, struct colls__rmsg *m)
{
    r->st.source = m->src;
    r->st.tag = m->tag;
    r->st.length = m->len;
    r->done = 1;
    if (r->want_msg) {
        r->msg = m;
        r->result = 0;
        return;
    }
    if (m->len > 0 && r->cap > 0)
        memcpy(r->buf, m->data, m->len < r->cap ? m->len : r->cap);
    r->result = m->len > r->cap ? COLLS_ETRUNC : 0;
    /* a spare for the next */
    colls__conn_payload_free(&r->c->conn, m->data, m->len);
    m->data = NULL;
    colls__rmsg_free(m);
}

/*
 * Starts receive r: completes it from the queue, fails it if its source
 * is known dead, or posts it.  Returns 0.
 */
int
colls__recv_post(colls_t *c, struct colls_req *r)
{
    struct colls__rmsg *m = p2p_take(c, r->src, r->tag, 1);
    int st;

    if (m != NULL) {
        colls__recv_fill(r, m);
        return 0;
    }
    st = colls__src_status(c, r->src);
    if (st < 0) {
        r->st.source = r->src;
        r->st.tag = r->tag;
        r->result = st;
        r->done = 1;
        return 0;
    }
    list_add_tail(&c->posted, &r->link);
    return 0;
}

/*
 * Hands a new message to the oldest posted receive it matches, or queues
 * it as unexpected.  Takes ownership of m.  Always returns 0.
 */
int
colls__deliver(colls_t *c, struct colls__rmsg *m)
{
    struct colls_req *r;

    if (m->tag == COLLS__TAG_DCOLL)
        return colls__dcoll_deliver(c, m);
    r = p2p_posted(c, m->src, m->tag);
    c->arrivals++;
    c->host_down[COLLS_TID_HID(m->src)] = 0;
    if (r != NULL) {
        list_del(&r->link);
        colls__recv_fill(r, m);
        return 0;
    }
    list_add_tail(&c->unexpected, &m->link);
    return 0;
}

/*
 * ops->claim: the head of a large DATA frame from src came.  If the
 * oldest posted receive it matches takes raw bytes and has room for all
 * of it, that receive is bound to stream st and its buffer returned (the
 * payload is read straight into it); else NULL.  A direct collective's
 * message goes to dcoll.c, which may skip its header.
 */
void *
colls__recv_claim(struct colls__conn *cn, struct colls__stream *st,
                  colls_tid_t src, int tag, const uint8_t *head, size_t have,
                  size_t len, size_t *skip, void **token)
{
    struct colls_req *r;

    if (tag == COLLS__TAG_DCOLL) {
        r = colls__dcoll_claim(COLLS__OF(cn), src, head, have, len, skip);
        if (r == NULL)
            return NULL;
    } else {
        r = p2p_posted(COLLS__OF(cn), src, tag);
        if (r == NULL || r->want_msg || r->cap < len)
            return NULL; /* it takes this message, but not this way */
        list_del(&r->link);
    }
    r->bound = st;
    *token = r;
    return r->buf;
}

/*
 * ops->claimed: the payload read into receive token is complete (status
 * 0: the receive is done) or lost with its stream (status < 0).
 */
void
colls__recv_claimed(struct colls__conn *cn, void *token, colls_tid_t src,
                    int tag, size_t len, int status)
{
    struct colls_req *r = token;
    colls_t *c = COLLS__OF(cn);

    r->bound = NULL;
    r->result = status;
    r->done = 1;
    if (status < 0)
        return;
    r->st.source = src;
    r->st.tag = tag;
    r->st.length = len;
    c->arrivals++;
    c->host_down[COLLS_TID_HID(src)] = 0;
}

/* Withdraws a receive that is not done (timeout or lost connection). */
void
colls__recv_cancel(struct colls_req *r)
{
    if (r->bound != NULL) {
        struct colls__stream *st = r->bound;
        r->bound = NULL;
        colls__stream_unbind(st);
    } else {
        list_del(&r->link);
    }
}

/* Fails every posted receive with status: the daemon is gone. */
void
colls__recv_fail_all(colls_t *c, int status)
{
    struct list_node *n;

    while ((n = list_first(&c->posted)) != NULL) {
        struct colls_req *r = list_entry(n, struct colls_req, link);
        list_del(&r->link);
        r->result = status;
        r->done = 1;
    }
}

/*
 * Waits for receive r (subject to the timeout).  On timeout or a lost
 * connection the receive is withdrawn and that error returned; otherwise
 * r's result.
 */
int
colls__req_wait(struct colls_req *r)
{
    int rc = colls__wait(r->c, p2p_done_pred, r, 1);

    if (!r->done) {
        colls__recv_cancel(r);
        return rc < 0 ? rc : COLLS_EIO;
    }
    return r->result;
}

static void
p2p_req_init(struct colls_req *r, colls_t *c, int kind)
{
    memset(r, 0, sizeof(*r));
    r->c = c;
    r->kind = kind;
    list_init(&r->link);
}

void
colls__sends_init(struct colls_req *r, colls_t *c)
{
    p2p_req_init(r, c, COLLS__REQ_SEND);
}

static int
p2p_sent_pred(void *arg)
{
    return ((struct colls_req *)arg)->pending == 0;
}

int
colls__sends_wait(struct colls_req *r)
{
    return r->pending > 0 ? colls__wait(r->c, p2p_sent_pred, r, 0) : 0;
}

int
colls_send(colls_t *c, colls_tid_t dst, int tag, const void *buf, size_t len)
{
    if (c == NULL)
        return COLLS_EINVAL;
    return colls_send_route(c, dst, tag, buf, len, c->route);
}

/* Sends len bytes (RAW, native order) to dst by route; returns once the
   bytes are written. */
int
colls_send_route(colls_t *c, colls_tid_t dst, int tag, const void *buf,
                 size_t len, int route)
{
    struct colls_req r;
    uv_buf_t b;
    int rc;

    if (c == NULL || (buf == NULL && len > 0) || tag == COLLS__TAG_DCOLL ||
        (route != COLLS_ROUTE_DEFAULT && route != COLLS_ROUTE_DIRECT))
        return COLLS_EINVAL;
    if (len > UINT32_MAX)
        return COLLS_EMSGSIZE;
    p2p_req_init(&r, c, COLLS__REQ_SEND);
    b = uv_buf_init((char *)(uintptr_t)buf, (unsigned)len);
    rc = colls__send_data(c, dst, tag, COLLS_ENC_RAW, dtype_native_order(),
                          route, &b, len > 0 ? 1 : 0, &r);
    if (rc < 0 && r.pending == 0)
        return rc;
    return colls__send_wait(&r);
}

int
colls_recv(colls_t *c, colls_tid_t src, int tag, void *buf, size_t cap,
           colls_status_t *st)
{
    struct colls_req r;
    int rc;

    if (c == NULL || (buf == NULL && cap > 0))
        return COLLS_EINVAL;
    p2p_req_init(&r, c, COLLS__REQ_RECV);
    r.src = src;
    r.tag = tag;
    r.buf = buf;
    r.cap = cap;
    colls__recv_post(c, &r);
    rc = colls__req_wait(&r);
    if (st != NULL && r.done)
        *st = r.st;
    return rc;
}

int
colls_nrecv(colls_t *c, colls_tid_t src, int tag, void *buf, size_t cap,
            colls_status_t *st)
{
    struct colls_req r;
    struct colls__rmsg *m;
    int rc;

    if (c == NULL || (buf == NULL && cap > 0))
        return COLLS_EINVAL;
    colls__poll(c);
    m = p2p_take(c, src, tag, 1);
    if (m == NULL) {
        rc = colls__src_status(c, src);
        if (rc < 0)
            return rc;
        return c->conn.err ? c->conn.err : COLLS_EAGAIN;
    }
    p2p_req_init(&r, c, COLLS__REQ_RECV);
    r.buf = buf;
    r.cap = cap;
    colls__recv_fill(&r, m);
    if (st != NULL)
        *st = r.st;
    return r.result;
}

struct p2p_probe {
    colls_t *c;
    uint64_t seen;
    colls_tid_t src;
};

/* Something arrived, or the source died. */
static int
p2p_probe_pred(void *arg)
{
    struct p2p_probe *p = arg;

    return p->c->arrivals != p->seen || colls__src_status(p->c, p->src) < 0;
}

int
colls_probe(colls_t *c, colls_tid_t src, int tag, int block, colls_status_t *st)
{
    struct colls__rmsg *m;
    struct p2p_probe p;
    int rc;

    if (c == NULL)
        return COLLS_EINVAL;
    colls__poll(c);
    for (;;) {
        m = p2p_take(c, src, tag, 0);
        if (m != NULL) {
            if (st != NULL) {
                st->source = m->src;
                st->tag = m->tag;
                st->length = m->len;
            }
            return 1;
        }
        rc = colls__src_status(c, src);
        if (rc < 0)
            return rc;
        if (!block)
            return c->conn.err ? c->conn.err : 0;
        p.c = c;
        p.seen = c->arrivals;
        p.src = src;
        rc = colls__wait(c, p2p_probe_pred, &p, 1);
        if (rc < 0)
            return rc;
    }
}

int
colls_isend(colls_t *c, colls_tid_t dst, int tag, const void *buf, size_t len,
            colls_req_t **req)
{
    struct colls_req *r;
    uv_buf_t b;
    int rc;

    if (c == NULL || req == NULL || (buf == NULL && len > 0) ||
        tag == COLLS__TAG_DCOLL)
        return COLLS_EINVAL;
    if (len > UINT32_MAX)
        return COLLS_EMSGSIZE;
    r = malloc(sizeof(*r));
    if (r == NULL)
        return COLLS_ENOMEM;
    p2p_req_init(r, c, COLLS__REQ_SEND);
    b = uv_buf_init((char *)(uintptr_t)buf, (unsigned)len);
    rc = colls__send_data(c, dst, tag, COLLS_ENC_RAW, dtype_native_order(),
                          c->route, &b, len > 0 ? 1 : 0, r);
    if (rc < 0 && r->pending == 0) {
        free(r);
        return rc;
    }
    *req = r;
    return 0;
}

int
colls_irecv(colls_t *c, colls_tid_t src, int tag, void *buf, size_t cap,
            colls_req_t **req)
{
    struct colls_req *r;

    if (c == NULL || req == NULL || (buf == NULL && cap > 0))
        return COLLS_EINVAL;
    r = malloc(sizeof(*r));
    if (r == NULL)
        return COLLS_ENOMEM;
    p2p_req_init(r, c, COLLS__REQ_RECV);
    r->src = src;
    r->tag = tag;
    r->buf = buf;
    r->cap = cap;
    colls__recv_post(c, r);
    *req = r;
    return 0;
}

/* Result of a finished request; frees it. */
static int
p2p_finish(struct colls_req *r, colls_status_t *st)
{
    int rc = r->result;

    if (st != NULL)
        *st = r->st;
    colls__rmsg_free(r->msg);
    free(r);
    return rc;
}

/*
 * Waits for req and frees it.  A receive that times out is withdrawn
 * (COLLS_ETIMEDOUT, req freed all the same); a send always runs until its
 * bytes are written.
 */
int
colls_wait(colls_req_t *req, colls_status_t *st)
{
    int rc;

    if (req == NULL)
        return COLLS_EINVAL;
    if (req->kind == COLLS__REQ_SEND) {
        colls__send_wait(req);
        return p2p_finish(req, st);
    }
    rc = colls__req_wait(req);
    if (!req->done) {
        free(req);
        return rc;
    }
    return p2p_finish(req, st);
}

int
colls_test(colls_req_t *req, int *done, colls_status_t *st)
{
    if (req == NULL || done == NULL)
        return COLLS_EINVAL;
    colls__poll(req->c);
    if (!req->done && req->kind == COLLS__REQ_RECV && req->c->conn.err) {
        colls__recv_cancel(req);
        req->result = req->c->conn.err;
        req->done = 1;
    }
    *done = req->done;
    if (!req->done)
        return 0;
    return p2p_finish(req, st);
}

/* Asks the daemon for a notification message (see colls.h). */
int
colls_notify(colls_t *c, int what, int who, int tag)
{
    struct colls_req r;
    Envelope e;
    NotifyReq nr = NOTIFY_REQ__INIT;
    int rc;

    if (c == NULL ||
        (what != COLLS_NOTIFY_TASK_EXIT && what != COLLS_NOTIFY_HOST_DOWN &&
         what != COLLS_NOTIFY_HOST_ADD))
        return COLLS_EINVAL;
    envelope_init(&e);
    e.kind = KIND__NOTIFY_REQ;
    e.src = c->conn.tid;
    e.req_id = colls__conn_req_id(&c->conn);
    nr.what = (uint32_t)what;
    nr.who = who;
    nr.tag = tag;
    e.body_case = ENVELOPE__BODY_NOTIFY_REQ;
    e.notify_req = &nr;
    p2p_req_init(&r, c, COLLS__REQ_SEND);
    rc = colls__write_req(c, &e, NULL, 0, &r);
    if (rc < 0 && r.pending == 0)
        return rc;
    return colls__send_wait(&r);
}
