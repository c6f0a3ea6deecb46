/*
 * internal.h -- the API layer of libcolls: the state its files share
 * (colls.c, ctl.c, dead.c, p2p.c, msg.c, group.c, coll.c, admin.c).
 *
 * One colls_t owns one uv_loop_t and everything hanging off it.  Its
 * first member is the connection layer's part (struct colls__conn,
 * conn.h: the loop, the stream to the local daemon, the direct-route
 * listener, connections and peers); the rest is the API layer's: the
 * queue of received messages nobody asked for yet ("unexpected"), the
 * posted receives, the outstanding control requests, the bookkeeping of
 * dead tasks and hosts, and the collective awaiting its result.  Nothing
 * is global; a colls_t is used by one thread at a time.  Blocking calls
 * run the loop (colls__wait: polled, then UV_RUN_ONCE) until their request
 * completes, so every callback only records facts and never blocks.
 *
 * Layers: the API files may call down into the connection layer (conn.h);
 * the connection layer never includes this header and reaches the API
 * layer only through colls__conn_ops (colls.c), which gets colls_t back
 * with COLLS__OF().  Internal non-static functions are named colls__*.
 */
#ifndef COLLS_LIBCLIENT_INTERNAL_H
#define COLLS_LIBCLIENT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "board.h"
#include "colls.h"
#include "conn.h"
#include "proto/dtype.h"
#include "proto/envelope.h"
#include "proto/frame.h"
#include "proto/list.h"

/* The colls_t holding connection layer state cn. */
#define COLLS__OF(cn) list_entry(cn, struct colls, conn)

/* ---- received messages ------------------------------------------------- */

/* A message that arrived and has not been handed to the caller yet. */
struct colls__rmsg {
    struct list_node link; /* in colls_t.unexpected */
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
    struct list_node link; /* in colls_t.posted while a recv waits */
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

/* ---- control requests (attach, groups, admin, ROUTE_REQ) --------------- */

struct colls__ctl;
typedef void (*colls__ctl_cb)(colls_t *c, struct colls__ctl *ctl);

struct colls__ctl {
    struct list_node link; /* in colls_t.ctls */
    uint64_t req_id;
    int done;
    int status;    /* 0, or why there is no reply */
    Envelope *rep; /* the reply; owned by the ctl */
    uint8_t *payload;
    size_t plen;
    colls__ctl_cb cb; /* NULL for a blocking call */
    colls_tid_t tid;  /* ROUTE_REQ: the task whose address is asked */
};

/* ---- the handle --------------------------------------------------------- */

/* Inputs and results above this many bytes are copied straight between
   the caller's buffers and the daemon where it can (coll.c, single
   copy). */
#define COLLS__CMA_MIN (64u * 1024)

/* Groups left whose direct collectives' messages are dropped (dcoll.c). */
#define COLLS__DCOLL_LEFT 16

struct colls {
    struct colls__conn conn; /* the connection layer's part (conn.h) */
    uv_timer_t timer;
    int timer_fired;
    int timeout_ms;
    int route;
    int hid;
    uint32_t incarnation;
    uint64_t max_message;
    struct list_node unexpected; /* colls__rmsg, in arrival order */
    struct list_node posted;     /* colls_req receives, in post order */
    struct list_node ctls;       /* colls__ctl awaiting their reply */
    uint64_t arrivals;           /* messages received so far (probe) */
    /* sends since the loop last ran: a send written at once does not run
       it, so every COLLS__SEND_POLL-th send polls (daemon notices) */
    unsigned sends_unpolled;
    /* dead tids, sorted by tid, and hosts declared down */
    struct colls__deaths dead;
    uint8_t host_down[4096];
    struct colls__coll_wait *coll_wait;   /* collective awaiting its result */
    struct colls__coll_early *coll_early; /* returned, result still due */
    char errmsg[512];   /* the text of the daemon's last ERROR (colls_errmsg) */
    colls_tid_t parent; /* the task that spawned this one, 0 none */
    /* colls_siblings (spawn.c): the copies of this one's spawn as its
       spawner listed them, in index order; NULL until the list came */
    colls_tid_t *siblings;
    int nsiblings;
    int catch_fd; /* colls_catchout's fd, -1 none */
    /* adaptive polling of a wait (colls.c): the window (COLLS_POLL_US, in
       ns; 0 never poll), and whether the machine has more runnable
       processes than our CPUs (then probes yield), checked at most every
       COLLS__CROWD_CHECK_NS */
    uint64_t poll_ns, crowd_checked_ns;
    uint64_t wait_avg_ns; /* average of the waits that did not end at once */
    int crowded;
    int solo; /* this thread may run on one CPU only: no polling but on
                 a board or in a direct collective among hosts */
    /* direct collectives (dcoll.c): their messages not waited for yet
       (colls__dmsg) */
    struct list_node dcoll_inbox;
    struct list_node dcoll_posted; /* dcoll.c's receives, for claims */
    int dcoll_busy;   /* how many run: their waits poll (colls_in_flight) */
    int dcoll_remote; /* of those, of groups with one member per host:
                         a solo wait polls for them (colls.c) */
    uint8_t *dcoll_scratch; /* its working memory, kept for the next */
    size_t dcoll_scratch_cap;
    uint64_t dcoll_left[COLLS__DCOLL_LEFT]; /* gids of groups left */
    /* bytes of direct collectives' messages of COLLS__DCOLL_RNDV or more
       that came before their receive was posted (from a task without
       clear-to-send) and were copied out of the inbox */
    uint64_t dcoll_copied;
    size_t dcoll_nleft;
    /* single copy (coll.c): the daemon read cma_token at attach, so it
       may copy large collective inputs and results straight from and to
       our buffers; off with COLLS_CMA=0 */
    int cma;
    uint8_t cma_token[16];
    /* hierarchical direct collectives (hcoll.c): this task's bell (-1
       until its first board), and while a wait on a board may sleep, the
       word of our line that says so and what it waits for */
    int bell_fd;
    uv_poll_t bell_poll;
    char bell_name[BOARD_BELL_MAX];
    _Atomic uint32_t *sleep_word;
    uint32_t sleep_what;
};

/* colls.c: the daemon's words on this thread's last failed attach */
extern _Thread_local char colls__attach_errmsg[512];

/* colls.c: running the loop (it also installs the colls__conn_ops) */
int colls__wait(colls_t *c, int (*pred)(void *), void *arg, int timed);
/* The polling window of a wait (colls.c): base_ns stretched by the
   average wait avg_ns while waits are short. */
uint64_t colls__poll_window_ns(uint64_t base_ns, uint64_t avg_ns);
/* The average of waits avg_ns after one that took took_ns (colls.c). */
uint64_t colls__wait_avg_ns(uint64_t avg_ns, uint64_t took_ns);
int colls__poll(colls_t *c);

/* ctl.c: control requests, answered by a reply with the same req_id */
int colls__ctl_send(colls_t *c, Envelope *e, struct colls__ctl *ctl);
int colls__ctl_call(colls_t *c, Envelope *e, Envelope **rep);
void colls__ctl_reply(colls_t *c, Envelope *e, uint8_t *payload, size_t plen);
void colls__ctl_free(struct colls__ctl *ctl);
void colls__ctl_fail_all(colls_t *c, int status);
void colls__ctl_resolve(struct colls__conn *cn, colls_tid_t tid);

/* spawn.c: a library message of gid 0 (takes m) */
int colls__siblings_deliver(colls_t *c, struct colls__rmsg *m);

/* dead.c: what this task knows of dead tasks and down hosts */
void colls__mark_dead(colls_t *c, colls_tid_t tid, int status);
void colls__mark_host_down(colls_t *c, int hid);
int colls__src_status(const colls_t *c, colls_tid_t src);
int colls__dst_status(const colls_t *c, colls_tid_t dst);

/* p2p.c */
int colls__send_data(colls_t *c, colls_tid_t dst, int tag, int encoding,
                     int byte_order, int route, const uv_buf_t *payload,
                     unsigned npayload, struct colls_req *req);
int colls__send_wait(struct colls_req *r);
/* A request that counts the sends made with it (colls__send_data's req),
   so that they are waited for together: colls__sends_wait runs the loop
   until every one is written (0, or colls__wait's error). */
void colls__sends_init(struct colls_req *r, colls_t *c);
int colls__sends_wait(struct colls_req *r);
int colls__write_req(colls_t *c, const Envelope *e, const uv_buf_t *payload,
                     unsigned npayload, struct colls_req *req);
void colls__req_written(struct colls__conn *cn, void *token, int status);
int colls__deliver(colls_t *c, struct colls__rmsg *m);
void *colls__recv_claim(struct colls__conn *cn, struct colls__stream *st,
                        colls_tid_t src, int tag, const uint8_t *head,
                        size_t have, size_t len, size_t *skip, void **token);
void colls__recv_claimed(struct colls__conn *cn, void *token, colls_tid_t src,
                         int tag, size_t len, int status);
int colls__recv_post(colls_t *c, struct colls_req *r);
void colls__recv_fill(struct colls_req *r, struct colls__rmsg *m);
void colls__recv_cancel(struct colls_req *r);
void colls__recv_fail_all(colls_t *c, int status);
int colls__req_wait(struct colls_req *r);

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
    unsigned alg_env; /* bit op: alg[op] came from COLLS_ALG_<OP> */
    char last_alg[COLLS__ALG_SPEC_MAX + 1];
    int last_mode;
    uint64_t last_seq;      /* the collective last_alg and last_mode are of */
    uint64_t seq;           /* next collective's sequence number */
    uint64_t dseq;          /* next direct collective's (dcoll.c) */
    size_t direct_max;      /* COLLS_DIRECT_MAX: AUTO runs direct up to it */
    int one_per_host;       /* no two members on one host */
    int failed;             /* sticky COLLS_EPEERDEAD / EHOSTDOWN, or 0 */
    unsigned early;         /* its entries in c->coll_early */
    int early_err;          /* first failure of one of them, not yet reported */
    char early_why[512];    /* the daemon's words on early_err */
    struct colls__hc *hc;   /* its hosts and this host's board (hcoll.c) */
    const char *last_local; /* how the last hierarchical direct one handed
                               data within the host: "board", "direct" */
};

/* The tag of the library's own messages: no receive of the application
   matches it, and it may not send it.  Their payload starts with a
   header of COLLS__LIB_HDR bytes, {u64 gid, u64 seq, u32 step, u32 0}
   little-endian: direct collectives' (dcoll.c) have their group's gid;
   gid 0 (no group's) with step COLLS__STEP_SIBLINGS is a spawner's list
   of the copies it started (spawn.c). */
#define COLLS__TAG_DCOLL     INT32_MIN
#define COLLS__LIB_HDR       24
#define COLLS__STEP_SIBLINGS 0xfffffffeu
/* COLLS_DIRECT_MAX's default: the chunk of a hierarchical direct bcast
   or allreduce, and the largest allgather (all blocks) that runs so
   (hcoll.c); the most a board's slot holds */
#define COLLS__DIRECT_MAX 65536

/* From this many bytes gathered into each member (P x the input) a
   direct allreduce runs as reduce-scatter + allgather, below as Bruck's
   allgather + reduce (dcoll.c; measured on 4 hosts x 1: equal at 16 KiB
   of input, at 32 KiB 98-154 us against 141-184). */
#define COLLS__DCOLL_RSAG ((size_t)128 * 1024)

/* A direct collective's message of this many bytes or more is sent only
   once its receiver has posted the receive and said so (a clear-to-send,
   dcoll.c): it is read straight into place, and a sender of back-to-back
   collectives does not run ahead into the socket buffers. */
#define COLLS__DCOLL_RNDV ((size_t)128 * 1024)

/* dcoll.c: direct collectives */
/* The algorithm a direct op of g with bytes per member runs. */
const char *colls__dcoll_alg(const struct colls_group *g, int op, size_t bytes);
/* 1 if op (of items of dtype) on g runs direct. */
int colls__dcoll_pick(const struct colls_group *g, int op, int dtype);
int colls__dcoll_barrier(struct colls_group *g);
int colls__dcoll_bcast(struct colls_group *g, void *buf, size_t bytes,
                       int dtype, int root);
int colls__dcoll_allgather(struct colls_group *g, const void *sbuf, void *rbuf,
                           size_t m, int dtype);
int colls__dcoll_allreduce(struct colls_group *g, const void *sbuf, void *rbuf,
                           size_t count, int dtype, int rop);
/* ops->claim for a large direct collective's message from src (have
   bytes of its head at head, len in all): the receive posted for it,
   removed from c->dcoll_posted, with *skip = its header; or NULL. */
struct colls_req *colls__dcoll_claim(colls_t *c, colls_tid_t src,
                                     const uint8_t *head, size_t have,
                                     size_t len, size_t *skip);
/* A message with tag COLLS__TAG_DCOLL arrived (takes m). */
int colls__dcoll_deliver(colls_t *c, struct colls__rmsg *m);
/* g is being left: tells the others, forgets its messages. */
void colls__dcoll_leave(struct colls_group *g);
/* Drops the waiting messages of group gid (all: of every group). */
void colls__dcoll_forget(colls_t *c, uint64_t gid, int all);

/* hcoll.c: hierarchical direct collectives, for groups with several
   members on a host */
int colls__hcoll_barrier(struct colls_group *g);
int colls__hcoll_bcast(struct colls_group *g, void *buf, size_t bytes,
                       int dtype, int root);
int colls__hcoll_allgather(struct colls_group *g, const void *sbuf, void *rbuf,
                           size_t m, int dtype);
int colls__hcoll_allreduce(struct colls_group *g, const void *sbuf, void *rbuf,
                           size_t count, int dtype, int rop);
/* Unmaps g's board, frees its hosts. */
void colls__hcoll_free(struct colls_group *g);
/* g's board on this host, NULL without, and in *full (unless NULL) how
   many of this member's puts waited for room (tests/integration/
   board-check.c reads and scribbles on it, as a corrupted member
   could). */
struct board *colls__hcoll_board(struct colls_group *g, uint64_t *full);
/* The most chunks this member had in flight in g's last allreduce of
   more than a chunk (board-check.c checks that they overlap). */
unsigned colls__hcoll_inflight(const struct colls_group *g);

/* group.c */
int colls__alg_spec_check(const char *spec);
/* The variable forcing op's algorithm, e.g. COLLS_ALG_REDUCE_SCATTER. */
void colls__alg_env_var(char *var, size_t cap, int op);

/* spawn.c: a SPAWN_OUTPUT line from the daemon (takes e and payload). */
void colls__spawn_output(colls_t *c, Envelope *e, uint8_t *payload,
                         size_t plen);

/* coll.c: a COLL_RESULT frame from the daemon (takes e and payload). */
void colls__coll_frame(colls_t *c, Envelope *e, uint8_t *payload, size_t plen);
/* coll.c: the connection layer's claim_result and result_claimed. */
void *colls__coll_claim_result(struct colls__conn *cn, const Envelope *e,
                               size_t len, void **token);
void colls__coll_result_claimed(struct colls__conn *cn, void *token,
                                Envelope *e, size_t len, int status);
/* coll.c: waits for the results of g's operations that returned early
   (every group's when g is NULL), then forgets whatever is left. */
void colls__coll_drain(colls_t *c, struct colls_group *g);
/* coll.c: waits (timed) for the results of g's operations that returned
   early, so that last_alg and last_mode are those of its last call. */
void colls__coll_settle(const struct colls_group *g);

#endif
