/*
 * internal.h -- libcolls internals shared by the library's files.
 *
 * One colls_t owns one uv_loop_t and everything hanging off it: the stream
 * to the local daemon, the direct-route TCP listener and connections, the
 * queue of received messages nobody asked for yet ("unexpected"), the
 * posted receives, the outstanding control requests and the bookkeeping of
 * dead tasks and hosts.  Nothing is global; a colls_t is used by one thread
 * at a time.  Blocking calls run the loop (UV_RUN_ONCE) until their request
 * completes, so every callback here only records facts and never blocks.
 *
 * Internal non-static functions are named colls__*.
 */
#ifndef COLLS_LIBCLIENT_INTERNAL_H
#define COLLS_LIBCLIENT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "colls.h"
#include "proto/buf.h"
#include "proto/dtype.h"
#include "proto/envelope.h"
#include "proto/frame.h"

/* ---- intrusive circular doubly-linked lists ----------------------------- */

struct colls__queue {
    struct colls__queue *next, *prev;
};

static inline void
colls__q_init(struct colls__queue *q)
{
    q->next = q->prev = q;
}

static inline int
colls__q_empty(const struct colls__queue *q)
{
    return q->next == q;
}

static inline void
colls__q_push(struct colls__queue *q, struct colls__queue *e)
{
    e->prev = q->prev;
    e->next = q;
    q->prev->next = e;
    q->prev = e;
}

static inline void
colls__q_remove(struct colls__queue *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->next = e->prev = e;
}

/* Send buffer asked for on the daemon socket (the kernel doubles it). */
#define COLLS__SOCK_BUF (4 << 20)

#define COLLS__CONTAINER(ptr, type, field)                                     \
    ((type *)(void *)((char *)(ptr)-offsetof(type, field)))

/* ---- received messages ------------------------------------------------- */

/* A message that arrived and has not been handed to the caller yet. */
struct colls__rmsg {
    struct colls__queue link; /* in colls_t.unexpected */
    colls_tid_t src;
    int tag;
    uint32_t flags; /* ENV_F_* */
    int encoding;
    int byte_order;
    int route;     /* COLLS_ROUTE_* it arrived by */
    uint8_t *data; /* malloc'd, len bytes (NULL when len is 0) */
    size_t len;
};

void colls__rmsg_free(struct colls__rmsg *m);

/* ---- requests ----------------------------------------------------------- */

enum colls__req_kind { COLLS__REQ_SEND, COLLS__REQ_RECV };

struct colls_req {
    colls_t *c;
    int kind;
    int done;
    int result;
    colls_status_t st;
    struct colls__queue link; /* in colls_t.posted while a recv waits */
    /* receive: what to match and where to put it */
    colls_tid_t src;
    int tag;
    void *buf;
    size_t cap;
    int want_msg; /* 1: keep the whole message in msg */
    struct colls__rmsg *msg;
    /* send: writes still in flight */
    int pending;
    /* receive: a large payload is being read straight into buf */
    struct colls__stream *bound;
};

/* ---- streams: the daemon's Unix socket and direct TCP connections ------- */

enum colls__stream_kind { COLLS__ST_DAEMON, COLLS__ST_DIRECT };

struct colls__peer;

struct colls__stream {
    union {
        uv_handle_t h;
        uv_stream_t s;
        uv_pipe_t pipe;
        uv_tcp_t tcp;
    } u;
    colls_t *c;
    int kind;
    int closing;
    struct colls__queue link; /* in colls_t.streams */
    struct buf in;            /* header + envelope bytes being assembled */
    /* A large payload read straight into its final buffer: pend_data,
       or the buffer of the posted receive it matched (pend_req). */
    Envelope *pend_env;
    uint8_t *pend_data;
    struct colls_req *pend_req;
    colls_tid_t pend_src;
    size_t pend_len, pend_got;
    /* direct streams: the task at the other end, once DIRECT_HELLO came */
    colls_tid_t peer_tid;
    int hello;
    int dead_status;          /* peer_tid exited: recorded when this closes */
    struct colls__peer *peer; /* peer that sends on this stream, or NULL */
};

/* A write of one frame: header + envelope in head, payload from bufs. */
struct colls__wreq {
    uv_write_t w;
    struct colls__queue link; /* in a peer's pending queue before connect */
    colls_t *c;
    struct colls_req *req; /* completed when the last write is done */
    struct buf head;
    /* DATA parameters, so the frame can be built for whichever route */
    colls_tid_t dst;
    int tag;
    int encoding;
    int byte_order;
    uint64_t req_id;
    uv_buf_t *bufs; /* bufs[0] is head, the rest the payload */
    unsigned nbufs;
    uv_buf_t inl[3];
};

/* ---- direct-route peers ------------------------------------------------ */

enum colls__peer_state {
    COLLS__PEER_NEW,
    COLLS__PEER_RESOLVING,
    COLLS__PEER_CONNECTING,
    COLLS__PEER_UP,
    COLLS__PEER_FAILED,
    COLLS__PEER_STATE_MAX
};

struct colls__peer {
    struct colls__queue link; /* in colls_t.peers */
    colls_tid_t tid;
    int state;
    struct colls__stream *st;    /* outgoing or adopted incoming stream */
    struct colls__queue pending; /* colls__wreq waiting for the connection */
    uv_connect_t conn;
};

/* ---- control requests (admin, ROUTE_REQ) ------------------------------- */

struct colls__ctl;
typedef void (*colls__ctl_cb)(colls_t *c, struct colls__ctl *ctl);

struct colls__ctl {
    struct colls__queue link; /* in colls_t.ctls */
    uint64_t req_id;
    int done;
    int status;    /* 0, or why there is no reply */
    Envelope *rep; /* the reply; owned by the ctl */
    uint8_t *payload;
    size_t plen;
    colls__ctl_cb cb; /* NULL for a blocking call */
    void *arg;
};

/* ---- the handle --------------------------------------------------------- */

struct colls__dead {
    colls_tid_t tid;
    int status;
};

struct colls {
    uv_loop_t loop;
    uv_timer_t timer;
    int timer_fired;
    int timeout_ms;
    int route;
    colls_tid_t tid;
    int hid;
    uint32_t incarnation;
    uint64_t max_message;
    char direct_addr[64];
    struct colls__stream *daemon;
    int conn_err; /* non-zero once the daemon stream is gone */
    uv_tcp_t listener;
    int listening;
    struct colls__queue unexpected; /* colls__rmsg, in arrival order */
    struct colls__queue posted;     /* colls_req receives, in post order */
    struct colls__queue ctls;
    struct colls__queue peers;
    struct colls__queue streams;
    uint64_t next_req_id;
    uint64_t arrivals; /* messages received so far (probe) */
    /* sends since the loop last ran: a send written at once does not run
       it, so every COLLS__SEND_POLL-th send polls (daemon notices) */
    unsigned sends_unpolled;
    /* dead tids, sorted by tid, and hosts declared down */
    struct colls__dead *dead;
    size_t ndead, capdead;
    /* deaths held back while a direct connection has not said HELLO yet
       (it may carry the dead task's last messages) */
    struct colls__dead *pending;
    size_t npending, cappending;
    uv_timer_t hello_timer; /* bounds that wait */
    uint8_t host_down[4096];
    uint64_t fallbacks; /* direct sends that went via the daemon */
    struct colls__coll_wait *coll_wait; /* collective awaiting its result */
};

/* colls.c */
int colls__wait(colls_t *c, int (*pred)(void *), void *arg, int timed);
int colls__poll(colls_t *c);
uint64_t colls__req_id(colls_t *c);

/* conn.c */
int colls__stream_start(struct colls__stream *st);
void colls__stream_close(struct colls__stream *st);
struct colls__stream *colls__stream_new(colls_t *c, int kind);
int colls__write_env(struct colls__stream *st, const Envelope *e,
                     const uv_buf_t *payload, unsigned npayload,
                     struct colls_req *req);
int colls__wreq_new(colls_t *c, const uv_buf_t *payload, unsigned npayload,
                    struct colls_req *req, struct colls__wreq **out);
int colls__wreq_write(struct colls__stream *st, struct colls__wreq *wr);
void colls__wreq_fail(struct colls__wreq *wr, int status);
int colls__deliver(colls_t *c, struct colls__rmsg *m);
void colls__mark_dead(colls_t *c, colls_tid_t tid, int status);
void colls__mark_host_down(colls_t *c, int hid);
int colls__take_pending(colls_t *c, colls_tid_t tid);
void colls__apply_pending(colls_t *c);
int colls__src_status(const colls_t *c, colls_tid_t src);
int colls__dst_status(const colls_t *c, colls_tid_t dst);
int colls__ctl_send(colls_t *c, Envelope *e, struct colls__ctl *ctl);
int colls__ctl_call(colls_t *c, Envelope *e, Envelope **rep);
void colls__ctl_free(struct colls__ctl *ctl);
void colls__fail_all(colls_t *c, int status);

/* p2p.c */
int colls__send_data(colls_t *c, colls_tid_t dst, int tag, int encoding,
                     int byte_order, int route, const uv_buf_t *payload,
                     unsigned npayload, struct colls_req *req);
int colls__recv_post(colls_t *c, struct colls_req *r);
void colls__recv_fill(struct colls_req *r, struct colls__rmsg *m);
void colls__recv_cancel(struct colls_req *r);
int colls__req_wait(struct colls_req *r);

/* direct.c */
int colls__direct_listen(colls_t *c);
int colls__direct_send(colls_t *c, struct colls__wreq *wr);
void colls__direct_frame(struct colls__stream *st, Envelope *e,
                         uint8_t *payload, size_t plen);
void colls__direct_closed(struct colls__stream *st);
void colls__direct_free(colls_t *c);

/* msg.c: building a message from / flattening it to payload bytes */
colls_msg_t *colls__msg_from_rmsg(struct colls__rmsg *m);
int colls__msg_bufs(colls_msg_t *m, uv_buf_t **bufs, unsigned *nbufs,
                    size_t *len);
int colls__msg_encoding(const colls_msg_t *m);
int colls__msg_route(const colls_msg_t *m);
int colls__msg_order(const colls_msg_t *m);

/* ---- groups and collectives (group.c, coll.c) -------------------------- */

#define COLLS__GROUP_NAME_MAX 255 /* bytes of a group name */
#define COLLS__ALG_SPEC_MAX   63  /* bytes of a "name[:segment]" spec */

/* A formed group, as this member sees it (docs/collectives.md). */
struct colls_group {
    colls_t *c;
    char name[COLLS__GROUP_NAME_MAX + 1];
    uint64_t gid;
    int rank, size;
    colls_tid_t *tids; /* size entries, rank order */
    uint32_t owner;
    int placement;
    int mode;     /* COLLS_MODE_* asked for */
    int compress; /* COLLS_COMPRESS_* */
    int trace;    /* COLLS_TRACE=1 when the group formed */
    char alg[COLLS_COLL_MAX][COLLS__ALG_SPEC_MAX + 1]; /* "" = choose */
    char last_alg[COLLS__ALG_SPEC_MAX + 1];
    int last_mode;
    uint64_t seq; /* next collective's sequence number */
    int failed;   /* sticky COLLS_EPEERDEAD / EHOSTDOWN, or 0 */
};

/* group.c */
int colls__alg_spec_check(const char *spec);

/* coll.c: a COLL_RESULT frame from the daemon (takes e and payload). */
void colls__coll_frame(colls_t *c, Envelope *e, uint8_t *payload, size_t plen);

#endif
