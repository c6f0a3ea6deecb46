/*
 * conn.h -- the connection layer of libcolls (conn.c, direct.c).
 *
 * It owns the handle's uv_loop_t, the stream to the local daemon (Unix
 * socket), the direct-route TCP listener, connections and peers, framing
 * in both directions, and the deaths it holds back while a direct
 * connection may still carry a dead task's last messages (docs/protocol.md
 * §5).  It knows frames, streams and tids; it knows nothing of receives,
 * groups, collectives or control requests.
 *
 * It may call proto/ (buf, frame, envelope) and libuv, and takes only the
 * constants of colls.h (error codes, tid and route macros).  It never
 * includes internal.h nor calls the API layer (colls.c, ctl.c, p2p.c,
 * dead.c, msg.c, group.c, coll.c, admin.c): everything it has to report
 * goes up through struct colls__conn_ops, which colls.c installs at
 * attach.  The API layer calls down into the functions declared here.
 *
 * Ownership: a callback that is handed an Envelope or a payload takes it.
 * A write's buffers belong to the caller until the write's token is
 * reported written; a buffer handed out by claim() (claim_result())
 * belongs to the connection layer until claimed() (result_claimed()) or
 * colls__stream_unbind().
 */
#ifndef COLLS_LIBCLIENT_CONN_H
#define COLLS_LIBCLIENT_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <uv.h>

#include "colls.h"
#include "proto/buf.h"
#include "proto/envelope.h"
#include "proto/list.h"
#include "proto/siphash.h"

/* Send buffer asked for on the daemon socket (the kernel doubles it). */
#define COLLS__SOCK_BUF (4 << 20)

/* Bytes of a large payload's head a claim is shown (ops->claim): enough
   for the header of a direct collective's message (dcoll.c). */
#define COLLS__CLAIM_HEAD 32
/* Spare payload blocks a connection keeps (colls__conn_payload_free), of
   COLLS__SPARE_MIN .. COLLS__SPARE_MAX bytes each. */
#define COLLS__SPARES    4
#define COLLS__SPARE_MIN ((size_t)64 * 1024)
#define COLLS__SPARE_MAX ((size_t)16 * 1024 * 1024)

struct colls__conn;
struct colls__shm;
struct colls__stream;

/* A task that died, and why (COLLS_EPEERDEAD, COLLS_ENOENT, ...). */
struct colls__dead {
    colls_tid_t tid;
    int status;
};

/* A growable array of deaths. */
struct colls__deaths {
    struct colls__dead *v;
    size_t n, cap;
};

/*
 * What the connection layer reports upward.  Every callback is called
 * from the loop (or from a call into this layer) and must not block.
 */
struct colls__conn_ops {
    /* A whole frame: anything from the daemon (route COLLS_ROUTE_DEFAULT,
       src = e->src), or a DATA frame on a direct connection
       (COLLS_ROUTE_DIRECT, src = the task it named).  Takes e and payload
       (malloc'd, NULL when plen is 0). */
    void (*frame)(struct colls__conn *cn, int route, colls_tid_t src,
                  Envelope *e, uint8_t *payload, size_t plen);
    /* The head of a large DATA frame from src (len payload bytes) came,
       its first have bytes at head (at least COLLS__CLAIM_HEAD of them, or
       all): returns a buffer of at least len - *skip bytes to read the
       payload straight into, less its first *skip bytes (at most have,
       kept by the layer), with *token naming who waits for it, or NULL
       (the layer then reads into an allocation of its own and calls
       frame()). */
    void *(*claim)(struct colls__conn *cn, struct colls__stream *st,
                   colls_tid_t src, int tag, const uint8_t *head, size_t have,
                   size_t len, size_t *skip, void **token);
    /* A claimed payload is complete (status 0) or lost (status < 0: the
       stream closed). */
    void (*claimed)(struct colls__conn *cn, void *token, colls_tid_t src,
                    int tag, size_t len, int status);
    /* The head of a large COLL_RESULT frame e from the daemon (len
       payload bytes) came: returns a buffer of len bytes to read the
       payload straight into, with *token naming who waits for it, or NULL
       (then as frame()). */
    void *(*claim_result)(struct colls__conn *cn, const Envelope *e, size_t len,
                          void **token);
    /* That payload is complete (status 0: e is its frame, taken) or lost
       (status < 0, e NULL: the stream closed). */
    void (*result_claimed)(struct colls__conn *cn, void *token, Envelope *e,
                           size_t len, int status);
    /* A write counted against token is done: status 0 or COLLS_E*. */
    void (*written)(struct colls__conn *cn, void *token, int status);
    /* The daemon stream is gone; cn->err says why. */
    void (*closed)(struct colls__conn *cn);
    /* A death held back by colls__direct_hold_death() may be recorded
       now (the API layer asks colls__direct_hold_death() again). */
    void (*dead)(struct colls__conn *cn, colls_tid_t tid, int status);
    /* The direct route needs tid's address: the answer comes back down
       through colls__direct_resolved(). */
    void (*resolve)(struct colls__conn *cn, colls_tid_t tid);
};

enum colls__stream_kind { COLLS__ST_DAEMON, COLLS__ST_DIRECT };

struct colls__peer;

/* The daemon's Unix socket or a direct TCP connection. */
struct colls__stream {
    union {
        uv_handle_t h;
        uv_stream_t s;
        uv_pipe_t pipe;
        uv_tcp_t tcp;
    } u;
    struct colls__conn *cn;
    int kind;
    int closing;
    struct list_node link; /* in colls__conn.streams */
    struct buf in;         /* header + envelope bytes being assembled */
    /* A large payload read straight into its final buffer: pend_data,
       or the buffer a claim() handed out (pend_buf, for pend_token; the
       payload's first pend_skip bytes, which the claim did not take, in
       pend_head). */
    Envelope *pend_env;
    uint8_t *pend_data;
    void *pend_buf;
    void *pend_token;
    colls_tid_t pend_src;
    size_t pend_len, pend_got;
    uint8_t pend_head[COLLS__CLAIM_HEAD];
    size_t pend_skip;
    int pend_result; /* pend_buf is claim_result()'s, not claim()'s */
    /* direct streams: the task at the other end, once DIRECT_HELLO came */
    colls_tid_t peer_tid;
    int hello;
    int dead_status;          /* peer_tid exited: recorded when this closes */
    struct colls__peer *peer; /* peer that sends on this stream, or NULL */
};

/* A write of one frame: header + envelope in head, payload from bufs. */
struct colls__wreq {
    uv_write_t w;
    struct list_node link; /* in a peer's pending queue before connect */
    struct colls__conn *cn;
    void *token; /* reported written when the write is done, or NULL */
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

enum colls__peer_state {
    COLLS__PEER_NEW,
    COLLS__PEER_RESOLVING,
    COLLS__PEER_CONNECTING,
    COLLS__PEER_UP,
    COLLS__PEER_FAILED,
    COLLS__PEER_STATE_MAX
};

/* A task this one sends to over the direct route. */
struct colls__peer {
    struct list_node link; /* in colls__conn.peers */
    colls_tid_t tid;
    int state;
    struct colls__stream *st; /* outgoing or adopted incoming stream */
    struct list_node pending; /* colls__wreq waiting for the connection */
    uv_connect_t conn;
    uint8_t ticket[COLLS_TICKET_LEN]; /* what we show it (ROUTE_REP) */
};

/* The connection layer's state, embedded in colls_t. */
struct colls__conn {
    uv_loop_t loop;
    const struct colls__conn_ops *ops;
    colls_tid_t tid; /* this task once attached: src of what it sends */
    struct colls__stream *daemon;
    int err; /* non-zero once the daemon stream is gone */
    uint64_t next_req_id;
    char direct_addr[64]; /* where to listen ("" = 127.0.0.1) */
    /* TCP congestion control of direct connections ("": the system's;
       $COLLS_DIRECT_CC, colls__direct_cc_set) */
    char direct_cc[16];
    uv_tcp_t listener;
    int listening;
    /* the key of the tickets others show us in DIRECT_HELLO (ROUTE_REG) */
    uint8_t direct_key[SIPHASH_KEY_LEN];
    uint64_t direct_refused;  /* connections closed for a bad HELLO */
    struct list_node peers;   /* colls__peer */
    struct list_node streams; /* colls__stream */
    /* deaths held back while a direct connection has not said HELLO yet
       (it may carry the dead task's last messages) */
    struct colls__deaths pending;
    uv_timer_t hello_timer; /* bounds that wait */
    /* 1 while the held deaths are being reported: they are not held
       again for a connection of unknown origin (direct.c) */
    int releasing;
    uint64_t fallbacks; /* direct sends that went via the daemon */
    /* the shared-memory channel to the daemon (shm.h), NULL: socket */
    struct colls__shm *shm;
    /* single copy (coll.c): the daemon may read or write our memory at
       addresses a request in flight named; if the daemon stream fails
       meanwhile, closing it waits for the daemon's end first */
    int cma_busy;
    /* blocks kept for the payloads of large frames nobody claimed
       (colls__conn_payload): reused, they cost no page faults */
    uint8_t *spare[COLLS__SPARES];
    size_t spare_cap[COLLS__SPARES];
};

/* conn.c */
int colls__conn_init(struct colls__conn *cn, const struct colls__conn_ops *ops);
int colls__conn_open(struct colls__conn *cn, const char *path);
int colls__conn_owner_ok(uid_t owner, uid_t self, const char *env);
void colls__conn_close(struct colls__conn *cn);
/*
 * A block for the len-byte payload of a frame that arrives unclaimed: a
 * spare one of at least len and at most 2 len bytes, else malloc's.  A
 * large block fresh from malloc costs a page fault per page on every
 * frame (glibc maps it, or trims the heap it grew), which a run of large
 * messages that come before their receives are posted pays each time.
 */
uint8_t *colls__conn_payload(struct colls__conn *cn, size_t len);
/* Frees such a payload of len bytes (any malloc'd block, NULL too), or
   keeps it as a spare if it is large and at most COLLS__SPARE_MAX bytes
   (a small one is freed at once: no look at its size on the path of
   every small message). */
void colls__conn_payload_free(struct colls__conn *cn, uint8_t *p, size_t len);
uint64_t colls__conn_req_id(struct colls__conn *cn);
int colls__deaths_reserve(struct colls__deaths *d);
struct colls__stream *colls__stream_new(struct colls__conn *cn, int kind);
int colls__stream_start(struct colls__stream *st);
void colls__stream_close(struct colls__stream *st);
void colls__stream_unbind(struct colls__stream *st);
int colls__write_env(struct colls__stream *st, const Envelope *e,
                     const uv_buf_t *payload, unsigned npayload, void *token);
int colls__wreq_new(struct colls__conn *cn, const uv_buf_t *payload,
                    unsigned npayload, void *token, struct colls__wreq **out);
int colls__wreq_write(struct colls__stream *st, struct colls__wreq *wr);
void colls__wreq_fail(struct colls__wreq *wr, int status);
int colls__shm_probe(struct colls__conn *cn);
int colls__shm_poll(struct colls__conn *cn);
const char *colls__conn_channel(const struct colls__conn *cn);

/* direct.c */
int colls__direct_cc_set(struct colls__conn *cn, const char *name, char *err,
                         size_t cap);
int colls__direct_listen(struct colls__conn *cn);
int colls__direct_send(struct colls__conn *cn, struct colls__wreq *wr);
void colls__direct_resolved(struct colls__conn *cn, colls_tid_t tid,
                            const char *addr, const uint8_t *ticket,
                            size_t ticket_len);
int colls__direct_hold_death(struct colls__conn *cn, colls_tid_t tid,
                             int status);
void colls__direct_frame(struct colls__stream *st, Envelope *e,
                         uint8_t *payload, size_t plen);
void colls__direct_closed(struct colls__stream *st);
void colls__direct_free(struct colls__conn *cn);

#endif
