/*
 * conn.c -- the connection layer's streams: the loop, the daemon's Unix
 * socket, and framed I/O over any libuv stream (conn.h).
 *
 * Reading: bytes land in the stream's buffer until a frame's header and
 * envelope are complete (both lengths checked by frame_peek() against the
 * limits before anything is allocated).  A small frame is taken from the
 * buffer when whole; a large payload gets its final allocation at once and
 * the rest of it is read straight into it, so it is copied only once --
 * or, when the API layer claims it (a posted raw receive that matches it
 * and has room, matched when the header arrives), straight into that
 * receive's buffer.  Whole frames go up through ops->frame (daemon
 * frames) or to direct.c (direct frames, which says HELLO first).
 *
 * Writing: one colls__wreq per frame: its own header + envelope bytes, then
 * the caller's payload buffers, without copying.  When nothing is queued on
 * the stream the frame is written at once (uv_try_write: one writev, no
 * loop turn), so a blocking send usually returns without running the
 * loop; what the kernel did not take goes to uv_write().  A write given a
 * token reports ops->written(token) once when it is done or failed.
 *
 * Shared memory (shm.c, docs/architecture.md): unless COLLS_SHM=0, the
 * connection makes a channel before it writes and sends its descriptors
 * (SCM_RIGHTS) with the first frame, ATTACH_REQ.  If the daemon marked it
 * accepted when ATTACH_REP comes, every later frame to the daemon is
 * copied into the request ring instead of written to the socket (a write
 * that finds no room waits in order on shm->wq until the daemon rings our
 * doorbell), and the daemon's frames are read from the completion ring
 * into the same buffers, through the same parser, as socket bytes.  The
 * socket still tells us the daemon is gone (after the ring is drained).
 *
 * Trust: before anything is written to the daemon's socket,
 * conn_check_owner makes sure the process listening there (its peer
 * credentials, which cannot be faked by renaming files), the socket file
 * and its directory belong to root, to us, or to $COLLS_DAEMON_UID
 * (colls.h, colls_attach).  An end of stream from the daemon that no
 * ERROR announced is COLLS_ECONNLOST: a daemon shutting down says
 * COLLS_ESHUTDOWN first, so silence means it died.
 *
 * May call: proto/, libuv, direct.c.  Reports up only through cn->ops.
 */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conn.h"
#include "shm.h"

/* Payloads above this are read straight into their own allocation. */
#define COLLS__INLINE_MAX (64u * 1024)
#define COLLS__READ_CHUNK (64u * 1024)

static void conn_shm_close(struct colls__conn *cn, int status);
static void conn_shm_answer(struct colls__conn *cn);
static void conn_shm_drain(struct colls__conn *cn);
static int conn_shm_write(struct colls__stream *st, struct colls__wreq *wr);
static void conn_shm_poll_cb(uv_poll_t *p, int status, int events);

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

/*
 * Sets up the connection layer in cn: its loop, lists and timers; events
 * go to ops.  0 or COLLS_ENOMEM (nothing to undo).
 */
int
colls__conn_init(struct colls__conn *cn, const struct colls__conn_ops *ops)
{
    cn->ops = ops;
    list_init(&cn->peers);
    list_init(&cn->streams);
    if (uv_loop_init(&cn->loop) != 0)
        return COLLS_ENOMEM;
    uv_timer_init(&cn->loop, &cn->hello_timer);
    cn->hello_timer.data = cn;
    return 0;
}

/* Pipe connect: the outcome, set by conn_connect_cb. */
struct conn_connect {
    int done;
    int status;
};

/* Pipe connect callback: records the outcome. */
static void
conn_connect_cb(uv_connect_t *req, int status)
{
    struct conn_connect *cc = req->data;

    cc->done = 1;
    cc->status = status;
}

/*
 * May the library talk to a daemon whose files or process belong to
 * owner?  Yes for root, for self (the caller's euid) and for the uid in
 * env ($COLLS_DAEMON_UID; NULL or "" when unset; text that is not a
 * plain number trusts nobody more).  1 or 0; pure.
 */
int
colls__conn_owner_ok(uid_t owner, uid_t self, const char *env)
{
    unsigned long v;
    char *end;

    if (owner == 0 || owner == self)
        return 1;
    if (env == NULL || env[0] < '0' || env[0] > '9')
        return 0;
    errno = 0;
    v = strtoul(env, &end, 10);
    return *end == '\0' && errno == 0 && v == (unsigned long)owner;
}

/* The uid of the daemon at the other end of fd, or -1 if unknown. */
static long
conn_peer_uid(int fd)
{
#ifdef SO_PEERCRED
    struct ucred cr;
    socklen_t len = sizeof(cr);

    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0)
        return (long)cr.uid;
#else
    uid_t u;
    gid_t g;

    if (getpeereid(fd, &u, &g) == 0)
        return (long)u;
#endif
    return -1;
}

/*
 * Checks that the daemon listening on the connected socket fd, the
 * socket file at path and its directory belong to someone the library
 * trusts (colls__conn_owner_ok).  0, or COLLS_EOWNER (the library does
 * not print; collsctl names the path and its owner itself).
 */
static int
conn_check_owner(int fd, const char *path)
{
    const char *env = getenv("COLLS_DAEMON_UID");
    uid_t self = geteuid();
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    struct stat sb;
    long peer = conn_peer_uid(fd);

    if (peer < 0 || !colls__conn_owner_ok((uid_t)peer, self, env))
        return COLLS_EOWNER;
    if (stat(path, &sb) == 0 && !colls__conn_owner_ok(sb.st_uid, self, env))
        return COLLS_EOWNER;
    if (slash == NULL)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == path)
        snprintf(dir, sizeof(dir), "/");
    else
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    if (stat(dir, &sb) == 0 && !colls__conn_owner_ok(sb.st_uid, self, env))
        return COLLS_EOWNER;
    return 0;
}

/*
 * Connects to the daemon's socket at path (running the loop until the
 * connect is done), checks who listens there (conn_check_owner) and
 * starts reading.  0, COLLS_ECONNREFUSED when no daemon listens,
 * COLLS_EOWNER, COLLS_ENOMEM or COLLS_EIO.  On failure the caller still
 * calls colls__conn_close().
 */
int
colls__conn_open(struct colls__conn *cn, const char *path)
{
    struct conn_connect cc = {0, 0};
    uv_connect_t creq;
    uv_os_fd_t fd;
    const char *shm;
    int sndbuf, rc;

    cn->daemon = colls__stream_new(cn, COLLS__ST_DAEMON);
    if (cn->daemon == NULL)
        return COLLS_ENOMEM;
    uv_pipe_init(&cn->loop, &cn->daemon->u.pipe, 0);
    creq.data = &cc;
    uv_pipe_connect(&creq, &cn->daemon->u.pipe, path, conn_connect_cb);
    while (!cc.done)
        uv_run(&cn->loop, UV_RUN_ONCE);
    if (cc.status != 0)
        return cc.status == UV_ENOMEM ? COLLS_ENOMEM : COLLS_ECONNREFUSED;
    if (uv_fileno((uv_handle_t *)&cn->daemon->u.pipe, &fd) != 0)
        return COLLS_EIO;
    rc = conn_check_owner(fd, path);
    if (rc != 0)
        return rc;
    /* Large messages to the daemon go in one write instead of many
       wake-ups of 208 KiB each; capped by net.core.wmem_max. */
    sndbuf = COLLS__SOCK_BUF;
    (void)uv_send_buffer_size((uv_handle_t *)&cn->daemon->u.pipe, &sndbuf);
    shm = getenv("COLLS_SHM");
    if ((shm == NULL || strcmp(shm, "0") != 0) && colls__shm_new(&cn->shm) != 0)
        cn->shm = NULL; /* cannot map: the socket carries everything */
    return colls__stream_start(cn->daemon);
}

/*
 * Closes every handle of the layer, runs the loop until all (and any
 * other handle the caller closed before) are closed, frees the peers and
 * closes the loop.
 */
void
colls__conn_close(struct colls__conn *cn)
{
    struct list_node *n, *tmp;
    unsigned i;

    LIST_FOREACH_SAFE (n, tmp, &cn->streams) {
        colls__stream_close(list_entry(n, struct colls__stream, link));
    }
    if (cn->listening) {
        uv_close((uv_handle_t *)&cn->listener, NULL);
        cn->listening = 0;
    }
    if (!uv_is_closing((uv_handle_t *)&cn->hello_timer))
        uv_close((uv_handle_t *)&cn->hello_timer, NULL);
    conn_shm_close(cn, COLLS_ECONNLOST); /* never opened a stream */
    uv_run(&cn->loop, UV_RUN_DEFAULT);
    colls__direct_free(cn);
    free(cn->pending.v);
    for (i = 0; i < COLLS__SPARES; i++) {
        free(cn->spare[i]);
        cn->spare[i] = NULL;
    }
    uv_loop_close(&cn->loop);
}

uint8_t *
colls__conn_payload(struct colls__conn *cn, size_t len)
{
    unsigned i;

    if (len >= COLLS__SPARE_MIN)
        for (i = 0; i < COLLS__SPARES; i++)
            if (cn->spare[i] != NULL && cn->spare_cap[i] >= len &&
                cn->spare_cap[i] / 2 <= len) {
                uint8_t *p = cn->spare[i];

                cn->spare[i] = NULL;
                return p;
            }
    return malloc(len > 0 ? len : 1);
}

void
colls__conn_payload_free(struct colls__conn *cn, uint8_t *p, size_t len)
{
    size_t cap =
        p != NULL && len >= COLLS__SPARE_MIN ? malloc_usable_size(p) : 0;
    unsigned i, k = 0;

    if (cap < COLLS__SPARE_MIN || cap > COLLS__SPARE_MAX) {
        free(p);
        return;
    }
    /* an empty place, else the smallest spare gives way */
    for (i = 0; i < COLLS__SPARES; i++) {
        if (cn->spare[i] == NULL) {
            k = i;
            break;
        }
        if (cn->spare_cap[i] < cn->spare_cap[k])
            k = i;
    }
    if (cn->spare[k] != NULL && cn->spare_cap[k] >= cap) {
        free(p);
        return;
    }
    free(cn->spare[k]);
    cn->spare[k] = p;
    cn->spare_cap[k] = cap;
}

/* A fresh request id (never 0, so 0 can mean "no id" on the wire). */
uint64_t
colls__conn_req_id(struct colls__conn *cn)
{
    return ++cn->next_req_id;
}

/* Makes room for one more death in d.  0 or COLLS_ENOMEM. */
int
colls__deaths_reserve(struct colls__deaths *d)
{
    size_t ncap;
    struct colls__dead *nv;

    if (d->n < d->cap)
        return 0;
    ncap = d->cap ? d->cap * 2 : 16;
    nv = realloc(d->v, ncap * sizeof(*nv));
    if (nv == NULL)
        return COLLS_ENOMEM;
    d->v = nv;
    d->cap = ncap;
    return 0;
}

/* Allocates a stream of the given kind, linked into cn->streams.  The
   caller initialises the uv handle (pipe or tcp) before using it. */
struct colls__stream *
colls__stream_new(struct colls__conn *cn, int kind)
{
    struct colls__stream *st = calloc(1, sizeof(*st));

    if (st == NULL)
        return NULL;
    st->cn = cn;
    st->kind = kind;
    buf_init(&st->in);
    list_add_tail(&cn->streams, &st->link);
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
 * The daemon stream fails while the daemon may still copy to or from our
 * memory for a request in flight (single copy, coll.c): says we are done
 * (shutdown) and blocks until the daemon closes its end, which it does
 * only after its last copy; until then the caller's buffers stay in use.
 */
static void
conn_daemon_hangup(struct colls__stream *st)
{
    uv_os_fd_t fd;
    char sink[4096];

    if (uv_fileno(&st->u.h, &fd) != 0)
        return;
    (void)shutdown(fd, SHUT_WR);
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        ssize_t n;
        if (poll(&p, 1, -1) < 0 && errno != EINTR)
            return;
        n = read(fd, sink, sizeof(sink));
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
                       errno != EINTR))
            return;
    }
}

/*
 * Closes a stream: unlinks it, fails a claim of its payload, tells
 * direct.c (its peer loses it), and frees it from the close callback.
 * Safe to call twice.
 */
void
colls__stream_close(struct colls__stream *st)
{
    struct colls__conn *cn = st->cn;

    if (st->closing)
        return;
    st->closing = 1;
    list_del(&st->link);
    if (st->pend_token != NULL) {
        void *token = st->pend_token;
        int err = cn->err ? cn->err : COLLS_EIO;
        st->pend_token = NULL;
        st->pend_buf = NULL;
        if (st->pend_result)
            cn->ops->result_claimed(cn, token, NULL, 0, err);
        else
            cn->ops->claimed(cn, token, st->pend_src, 0, 0, err);
        st->pend_result = 0;
    }
    if (cn->daemon == st) {
        cn->daemon = NULL;
        if (cn->cma_busy)
            conn_daemon_hangup(st);
        conn_shm_close(cn, cn->err ? cn->err : COLLS_ECONNLOST);
    }
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

/* Dispatches a whole frame by the stream it came on. */
static void
conn_frame(struct colls__stream *st, Envelope *e, uint8_t *payload, size_t plen)
{
    struct colls__conn *cn = st->cn;

    if (st->kind == COLLS__ST_DAEMON && cn->shm != NULL &&
        cn->shm->state == COLLS__SHM_SENT && e->kind == KIND__ATTACH_REP)
        conn_shm_answer(cn);
    if (st->kind == COLLS__ST_DAEMON)
        cn->ops->frame(cn, COLLS_ROUTE_DEFAULT, e->src, e, payload, plen);
    else
        colls__direct_frame(st, e, payload, plen);
}

/* The stream ended or broke: close it; for the daemon, report it. */
static void
conn_stream_error(struct colls__stream *st, int status)
{
    struct colls__conn *cn = st->cn;

    if (st->kind == COLLS__ST_DAEMON) {
        if (cn->err == 0)
            cn->err = status;
        colls__stream_close(st);
        cn->ops->closed(cn);
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
    if (st->pend_buf != NULL) {
        b->base = (char *)st->pend_buf + st->pend_got;
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
    /* READ_CHUNK at most, however far the buffer grew for a large
       inline frame: the head of a large payload that lands here is
       copied to the buffer a claim hands out, the rest is read there */
    b->base = (char *)st->in.data + st->in.len;
    b->len = st->in.cap - st->in.len;
    if (b->len > COLLS__READ_CHUNK)
        b->len = COLLS__READ_CHUNK;
}

/* A large payload of frame e starts: have of its len bytes are in. */
static void
conn_pend(struct colls__stream *st, Envelope *e, size_t len, size_t have)
{
    st->pend_env = e;
    st->pend_len = len;
    st->pend_got = have;
}

/*
 * A large DATA frame, or a collective's large result from the daemon, has
 * started to arrive (have of len payload bytes at p): if the API layer
 * claims it (ops->claim, ops->claim_result), the rest is read straight
 * into the buffer it hands out, less the head it skips.  Returns 1 if so
 * (e is kept until the payload is complete), else 0.
 */
static int
conn_bind(struct colls__stream *st, Envelope *e, const uint8_t *p, size_t have,
          size_t len)
{
    struct colls__conn *cn = st->cn;
    colls_tid_t src = st->kind == COLLS__ST_DIRECT ? st->peer_tid : e->src;
    int result = e->kind == KIND__COLL_RESULT && st->kind == COLLS__ST_DAEMON;
    void *buf, *token = NULL;
    size_t skip = 0;

    if (result)
        buf = cn->ops->claim_result(cn, e, len, &token);
    else if (e->kind == KIND__DATA &&
             (st->kind != COLLS__ST_DIRECT || st->hello))
        buf = cn->ops->claim(cn, st, src, e->tag, p, have, len, &skip, &token);
    else
        return 0;
    if (buf == NULL)
        return 0;
    if (skip > have || skip > sizeof(st->pend_head))
        skip = 0; /* cannot happen: the claim keeps within the head */
    memcpy(st->pend_head, p, skip);
    st->pend_skip = skip;
    memcpy(buf, p + skip, have - skip);
    st->pend_buf = buf;
    st->pend_token = token;
    st->pend_src = src;
    st->pend_result = result;
    conn_pend(st, e, len - skip, have - skip);
    return 1;
}

/* The payload bound to a claim is complete: report it. */
static void
conn_bound_done(struct colls__stream *st)
{
    struct colls__conn *cn = st->cn;
    void *token = st->pend_token;
    Envelope *e = st->pend_env;
    int tag = e->tag, result = st->pend_result;
    size_t len = st->pend_len;

    st->pend_env = NULL;
    st->pend_buf = NULL;
    st->pend_token = NULL;
    st->pend_len = st->pend_got = 0;
    st->pend_skip = 0;
    st->pend_result = 0;
    if (result) {
        cn->ops->result_claimed(cn, token, e, len, 0);
        return;
    }
    envelope_free(e);
    cn->ops->claimed(cn, token, st->pend_src, tag, len, 0);
}

/*
 * The claim of st's payload is withdrawn (the receive timed out): the
 * rest of the payload goes to a buffer of the stream's own, and the
 * message up through ops->frame when complete.  Without memory the stream
 * is closed.
 */
void
colls__stream_unbind(struct colls__stream *st)
{
    size_t skip = st->pend_skip;
    uint8_t *data = malloc(skip + st->pend_len);
    const void *got = st->pend_buf;

    st->pend_buf = NULL;
    st->pend_token = NULL;
    st->pend_skip = 0;
    st->pend_result = 0;
    if (data == NULL) {
        conn_stream_error(st, COLLS_ENOMEM);
        return;
    }
    /* the whole payload again, with the head the claim skipped */
    memcpy(data, st->pend_head, skip);
    memcpy(data + skip, got, st->pend_got);
    st->pend_data = data;
    st->pend_len += skip;
    st->pend_got += skip;
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
        have = avail - FRAME_HDR_LEN - fi.env_len;
        if (have > fi.payload_len)
            have = (size_t)fi.payload_len;
        if (have < fi.payload_len && have < COLLS__CLAIM_HEAD)
            return; /* a claim is shown the payload's head */
        rc = envelope_unpack(head + FRAME_HDR_LEN, fi.env_len, &e);
        if (rc < 0) {
            conn_stream_error(st, rc);
            return;
        }
        if (have < fi.payload_len &&
            conn_bind(st, e, head + FRAME_HDR_LEN + fi.env_len, have,
                      (size_t)fi.payload_len)) {
            buf_consume(&st->in, FRAME_HDR_LEN + fi.env_len + have);
            return;
        }
        if (fi.payload_len > 0) {
            data = colls__conn_payload(st->cn, (size_t)fi.payload_len);
            if (data == NULL) {
                envelope_free(e);
                conn_stream_error(st, COLLS_ENOMEM);
                return;
            }
            memcpy(data, head + FRAME_HDR_LEN + fi.env_len, have);
        }
        buf_consume(&st->in, FRAME_HDR_LEN + fi.env_len + have);
        if (have < fi.payload_len) {
            st->pend_data = data;
            conn_pend(st, e, (size_t)fi.payload_len, have);
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
    if (nread < 0 && st->kind == COLLS__ST_DAEMON && st->cn->shm != NULL &&
        st->cn->shm->state == COLLS__SHM_ON) {
        /* what the daemon put in the ring before it closed comes first */
        conn_shm_drain(st->cn);
        if (st->closing)
            return;
    }
    if (nread < 0) {
        /* For the daemon stream: a daemon that shuts down says so with
           ERROR COLLS_ESHUTDOWN first (cn->err is then set already). */
        conn_stream_error(st, nread == UV_EOF || nread == UV_ECONNRESET
                                  ? COLLS_ECONNLOST
                                  : conn_uv_err((int)nread));
        return;
    }
    if (nread == 0)
        return;
    if (st->pend_buf != NULL) {
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

/* Frees a write request and reports its token written with status. */
static void
conn_wreq_done(struct colls__wreq *wr, int status)
{
    struct colls__conn *cn = wr->cn;
    void *token = wr->token;

    buf_free(&wr->head);
    if (wr->bufs != wr->inl)
        free(wr->bufs);
    free(wr);
    if (token != NULL)
        cn->ops->written(cn, token, status);
}

/* Drops a write that will not be written (its token is told status). */
void
colls__wreq_fail(struct colls__wreq *wr, int status)
{
    conn_wreq_done(wr, status);
}

static void
conn_write_cb(uv_write_t *w, int status)
{
    struct colls__wreq *wr = list_entry(w, struct colls__wreq, w);
    const struct colls__stream *st = w->handle->data;

    /* the daemon's end went away under the write: it died */
    if (st->kind == COLLS__ST_DAEMON &&
        (status == UV_EPIPE || status == UV_ECONNRESET))
        status = COLLS_ECONNLOST;
    else if (status < 0)
        status = conn_uv_err(status);
    conn_wreq_done(wr, status);
}

/*
 * A write request for payload (npayload buffers, not copied: they must
 * stay valid until token is reported written).  With a token, the write
 * reports ops->written(token) exactly once, also when this call fails
 * (COLLS_ENOMEM).  0 or COLLS_ENOMEM.
 */
int
colls__wreq_new(struct colls__conn *cn, const uv_buf_t *payload,
                unsigned npayload, void *token, struct colls__wreq **out)
{
    struct colls__wreq *wr = calloc(1, sizeof(*wr));
    unsigned i;

    if (wr == NULL)
        goto nomem;
    wr->cn = cn;
    wr->nbufs = npayload + 1;
    if (wr->nbufs <= sizeof(wr->inl) / sizeof(wr->inl[0])) {
        wr->bufs = wr->inl;
    } else {
        wr->bufs = calloc(wr->nbufs, sizeof(*wr->bufs));
        if (wr->bufs == NULL) {
            free(wr);
            goto nomem;
        }
    }
    for (i = 0; i < npayload; i++)
        wr->bufs[i + 1] = payload[i];
    buf_init(&wr->head);
    list_init(&wr->link);
    wr->token = token;
    *out = wr;
    return 0;
nomem:
    if (token != NULL)
        cn->ops->written(cn, token, COLLS_ENOMEM);
    return COLLS_ENOMEM;
}

/*
 * n bytes of wr went out: 1 if that is all of it (wr is done: freed, its
 * token reported), else 0 with wr's buffers advanced past them.
 */
static int
conn_wrote(struct colls__wreq *wr, size_t n)
{
    size_t left = n;
    unsigned i;

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
 * The fast path of a write: when nothing is queued on st, the frame goes
 * to the kernel at once (one writev, no loop turn, no poll changes).
 * Returns 1 if all of it went and wr is done (freed, its token
 * reported).  Otherwise 0: wr's buffers are advanced past what was
 * written, and the caller queues the rest with uv_write(), which keeps
 * the order (uv_try_write() refuses while anything is queued).
 */
static int
conn_try_write(struct colls__stream *st, struct colls__wreq *wr)
{
    int n = uv_try_write(&st->u.s, wr->bufs, wr->nbufs);

    if (n < 0)
        return 0; /* UV_EAGAIN, or an error uv_write() reports alike */
    return conn_wrote(wr, (size_t)n);
}

/*
 * Writes wr on st.  If wr has no head yet it is a DATA frame built from
 * wr's fields for st's route.  On failure wr is freed and its token
 * reported; the status is returned.
 */
int
colls__wreq_write(struct colls__stream *st, struct colls__wreq *wr)
{
    size_t plen = 0;
    unsigned i;
    int rc;

    /* A daemon that sent an ERROR saying why it closes (cn->err) reads
       nothing more: fail at once rather than write into the close. */
    if (st == NULL || st->closing ||
        (st->kind == COLLS__ST_DAEMON && wr->cn->err != 0)) {
        rc = wr->cn->err ? wr->cn->err : COLLS_ENOTCONN;
        goto fail;
    }
    for (i = 1; i < wr->nbufs; i++)
        plen += wr->bufs[i].len;
    if (wr->head.len == 0) {
        Envelope e;
        envelope_init(&e);
        e.kind = KIND__DATA;
        e.src = wr->cn->tid;
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
    if (st->kind == COLLS__ST_DAEMON && wr->cn->shm != NULL) {
        rc = conn_shm_write(st, wr);
        if (rc <= 0)
            return rc;
    }
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
 * Writes envelope e and payload as one frame on st; token (may be NULL)
 * is reported written once, as by colls__wreq_new().  st must not be NULL
 * when a token is given.  0 or a COLLS_E* code.
 */
int
colls__write_env(struct colls__stream *st, const Envelope *e,
                 const uv_buf_t *payload, unsigned npayload, void *token)
{
    struct colls__wreq *wr;
    size_t plen = 0;
    unsigned i;
    int rc;

    for (i = 0; i < npayload; i++)
        plen += payload[i].len;
    if (st == NULL)
        return COLLS_ENOTCONN;
    rc = colls__wreq_new(st->cn, payload, npayload, token, &wr);
    if (rc < 0)
        return rc;
    rc = envelope_frame_head(&wr->head, e, plen);
    if (rc < 0) {
        conn_wreq_done(wr, rc);
        return rc;
    }
    return colls__wreq_write(st, wr);
}

/* ---- the shared-memory channel ------------------------------------------ */

static void
conn_shm_closed_cb(uv_handle_t *h)
{
    colls__shm_free(list_entry(h, struct colls__shm, poll));
}

/* Ends the channel: queued writes fail with status, the mapping goes
   (once the poll handle is closed). */
static void
conn_shm_close(struct colls__conn *cn, int status)
{
    struct colls__shm *s = cn->shm;
    struct list_node *n;

    if (s == NULL)
        return;
    cn->shm = NULL;
    while ((n = list_first(&s->wq)) != NULL) {
        list_del(n);
        conn_wreq_done(list_entry(n, struct colls__wreq, link), status);
    }
    if (s->polling)
        uv_close((uv_handle_t *)&s->poll, conn_shm_closed_cb);
    else
        colls__shm_free(s);
}

/*
 * Writes the first frame (ATTACH_REQ) with the channel's descriptors
 * (SCM_RIGHTS).  0 if wr is done; 1 if the caller writes (the rest of)
 * wr as usual -- also when the offer could not be sent (the channel is
 * then dropped: the socket carries everything).
 */
static int
conn_shm_offer(struct colls__stream *st, struct colls__wreq *wr)
{
    struct colls__conn *cn = st->cn;
    struct colls__shm *s = cn->shm;
    union colls__shm_cmsg cbuf;
    struct iovec iov[8];
    struct msghdr m;
    int fds[3] = {s->memfd, s->bell_daemon, s->bell_task};
    uv_os_fd_t fd;
    unsigned i;
    ssize_t n;

    memset(&m, 0, sizeof(m));
    for (i = 0; i < wr->nbufs && i < 8; i++) {
        iov[i].iov_base = wr->bufs[i].base;
        iov[i].iov_len = wr->bufs[i].len;
    }
    m.msg_iov = iov;
    m.msg_iovlen = i;
    colls__shm_rights(&m, &cbuf, fds);
    if (uv_fileno(&st->u.h, &fd) != 0)
        n = -1;
    else
        n = sendmsg(fd, &m, MSG_NOSIGNAL);
    if (n < 0) {
        conn_shm_close(cn, 0); /* nothing queued yet */
        return 1;
    }
    close(s->memfd);
    s->memfd = -1;
    s->state = COLLS__SHM_SENT;
    return conn_wrote(wr, (size_t)n) ? 0 : 1;
}

/* ATTACH_REP came: the daemon took the channel (it marked the header)
   or the socket carries everything from now on. */
static void
conn_shm_answer(struct colls__conn *cn)
{
    struct colls__shm *s = cn->shm;
    struct shm_hdr *h = s->map;

    if (atomic_load_explicit(&h->accepted, memory_order_acquire) !=
        SHM_ACCEPTED) {
        conn_shm_close(cn, 0);
        return;
    }
    s->state = COLLS__SHM_ON;
    if (uv_poll_init(&cn->loop, &s->poll, s->bell_task) != 0)
        goto fail;
    s->polling = 1;
    s->poll.data = cn;
    if (uv_poll_start(&s->poll, UV_READABLE, conn_shm_poll_cb) != 0)
        goto fail;
    return;
fail:
    /* the daemon now writes only to the ring: without a doorbell we
       would not hear it */
    if (cn->daemon != NULL)
        conn_stream_error(cn->daemon, COLLS_EIO);
}

/* Copies what fits of wr into the request ring.  1 if all of it went,
   0 if the ring is full (wr advanced), -1 if the ring is corrupt. */
static int
conn_shm_push(struct colls__shm *s, struct colls__wreq *wr, int *wrote)
{
    while (wr->nbufs > 0) {
        long n = ring_write(&s->req, wr->bufs[0].base, wr->bufs[0].len);

        if (n < 0)
            return -1;
        if (n > 0)
            *wrote = 1;
        wr->bufs[0].base += n;
        wr->bufs[0].len -= (size_t)n;
        if (wr->bufs[0].len > 0)
            return 0;
        memmove(wr->bufs, wr->bufs + 1, (wr->nbufs - 1) * sizeof(*wr->bufs));
        wr->nbufs--;
    }
    return 1;
}

/*
 * Writes the queued frames into the request ring, in order, as far as
 * it has room; each wholly written is reported written.  Rings the
 * daemon's doorbell if it sleeps; when the ring is full, raises our
 * "waiting" flag so that the daemon rings ours once it made room.
 */
static void
conn_shm_flush(struct colls__conn *cn)
{
    struct colls__shm *s = cn->shm;
    struct list_node *n;
    int wrote = 0;
    long space;

    while (cn->shm == s && (n = list_first(&s->wq)) != NULL) {
        struct colls__wreq *wr = list_entry(n, struct colls__wreq, link);
        int rc = conn_shm_push(s, wr, &wrote);

        if (rc < 0)
            goto corrupt;
        if (rc == 0) {
            if (wrote && ring_wake_consumer(&s->req))
                colls__shm_ring(s);
            wrote = 0;
            space = ring_wait_space(&s->req);
            if (space < 0)
                goto corrupt;
            if (space > 0)
                continue;
            s->full_waits++;
            return;
        }
        list_del(n);
        conn_wreq_done(wr, 0);
    }
    if (cn->shm == s && wrote && ring_wake_consumer(&s->req))
        colls__shm_ring(s);
    return;
corrupt:
    if (cn->daemon != NULL)
        conn_stream_error(cn->daemon, COLLS_EPROTO);
}

/* Writes wr through the channel: 0 (done or queued), < 0 (wr failed),
   or 1: not through the channel, the caller writes it to the socket. */
static int
conn_shm_write(struct colls__stream *st, struct colls__wreq *wr)
{
    struct colls__shm *s = st->cn->shm;

    if (s->state == COLLS__SHM_OFFER)
        return conn_shm_offer(st, wr);
    if (s->state != COLLS__SHM_ON)
        return 1;
    list_add_tail(&s->wq, &wr->link);
    conn_shm_flush(st->cn);
    return 0;
}

/*
 * Reads the completion ring into the daemon stream's buffers, as
 * conn_read_cb reads the socket, until it is empty (our sleeping flag is
 * then up); rings the daemon's doorbell if it waits for the room made.
 */
static void
conn_shm_drain(struct colls__conn *cn)
{
    struct colls__shm *s = cn->shm;
    struct colls__stream *st = cn->daemon;
    int freed = 0;
    uv_buf_t b;
    long n;

    while (cn->shm == s && cn->daemon == st && st != NULL && !st->closing) {
        conn_alloc_cb(&st->u.h, 0, &b);
        if (b.base == NULL) {
            conn_stream_error(st, COLLS_ENOMEM);
            return;
        }
        n = ring_take(&s->comp, b.base, b.len);
        if (n == 0)
            break;
        if (n < 0) {
            conn_stream_error(st, COLLS_EPROTO);
            return;
        }
        freed = 1;
        conn_read_cb(&st->u.s, n, &b);
    }
    if (cn->shm == s && freed && ring_wake_producer(&s->comp))
        colls__shm_ring(s);
}

/* Our doorbell: frames in the completion ring, or room in the request
   ring. */
static void
conn_shm_poll_cb(uv_poll_t *p, int status, int events)
{
    struct colls__conn *cn = p->data;
    struct colls__shm *s = cn->shm;
    uint64_t v;

    (void)status;
    (void)events;
    if (s == NULL)
        return;
    (void)!read(s->bell_task, &v, sizeof(v));
    conn_shm_drain(cn);
    if (cn->shm == s)
        conn_shm_flush(cn);
}

/*
 * For a wait loop that polls: 1 if the channel has work now -- frames
 * in the completion ring, or room for a write that waits (no syscall).
 */
int
colls__shm_probe(struct colls__conn *cn)
{
    struct colls__shm *s = cn->shm;

    if (s == NULL || s->state != COLLS__SHM_ON)
        return 0;
    return ring_readable(&s->comp) != 0 ||
           (!list_empty(&s->wq) && ring_space(&s->req) != 0);
}

/* Does that work, as the doorbell would (without reading it).  1 if
   there was any. */
int
colls__shm_poll(struct colls__conn *cn)
{
    struct colls__shm *s = cn->shm;

    if (!colls__shm_probe(cn))
        return 0;
    conn_shm_drain(cn);
    if (cn->shm == s)
        conn_shm_flush(cn);
    return 1;
}

/* What carries this task's frames to its daemon: "shm" or "socket". */
const char *
colls__conn_channel(const struct colls__conn *cn)
{
    return cn->shm != NULL && cn->shm->state == COLLS__SHM_ON ? "shm"
                                                              : "socket";
}
