/*
 * collint.h -- the records the collective engine's files share: coll.c
 * (instances, requests, peer messages, aborts, progress), collplan.c
 * (request checks, mode and algorithm choice, schedules) and collrun.c
 * (starting and finishing the schedules of an instance).  Nothing outside
 * daemon/coll*.c includes it; the rest of the daemon sees daemon/coll.h.
 *
 * Ownership: struct coll_state is the daemon's (d->gs->cs, made by
 * coll_init); an instance belongs to its group's list (g->insts) and owns
 * its inputs, runs (ex), inbox and FPC state; messages on an inbox or the
 * early list own their bytes (owner).
 */
#ifndef COLLS_DAEMON_COLLINT_H
#define COLLS_DAEMON_COLLINT_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/alg/alg.h"
#include "daemon/collfpc.h"
#include "daemon/exec.h"
#include "daemon/hier.h"
#include "daemon/sched.h"
#include "daemon/stats.h"
#include "proto/colls.pb-c.h"
#include "proto/list.h"

struct daemon;
struct group;
struct task_share;

#define COLL_ALG_SPEC_MAX 64
#define PHASE_LEADER      0
#define PHASE_FLAT        1

/* One COLL_DATA message (or an in-memory one between local ranks); m is
   on an instance's inbox or on the early list. */
struct coll_msg {
    struct exec_msg m;
    uint64_t gid, seq;
    int hid;
    void *owner; /* allocation holding data */
    char *why;   /* an abort: the failing daemon's words, or NULL */
    uint64_t at_us;
};

/* Counters per (operation, algorithm row). */
#define COLL_MAX_ALGS 16
struct coll_opstats {
    uint64_t runs, bytes, fallbacks;
    struct stats_hist us;
};

struct coll_counters {
    uint64_t hier_runs, flat_runs, hier_as_flat, fallbacks, aborts;
    uint64_t bad_requests, early_msgs, stale_msgs, failed_ops;
};

/* The collective state of a daemon (d->gs->cs). */
struct coll_state {
    struct list_node early; /* COLL_DATA for groups not installed yet */
    size_t early_bytes;
    struct sched_cache *cache; /* schedules of non-v operations */
    struct coll_counters cnt;
    /* [op][0 hier, 1 flat][row in the table of the schedule's op] */
    struct coll_opstats ops[SCHED_OP_MAX][2][COLL_MAX_ALGS];
    struct collfpc_counters fpc;
};

enum coll_inst_state { CI_COLLECT = 0, CI_RUN, CI_FAILED };

struct coll_inst {
    struct list_node node; /* on g->insts */
    struct daemon *d;
    struct group *g;
    uint64_t seq;
    int state, status;
    char why[256]; /* a failed instance: what went wrong, or "" */
    /* parameters, from the first request (of rank first_rank) */
    int have, first_rank;
    int op, dtype, rop, root, reqmode, mode, P;
    size_t count, esize, n;
    char spec[COLL_ALG_SPEC_MAX];
    int compress;   /* COLLS_COMPRESS_* of the request */
    uint64_t *rawv; /* gatherv family: counts of the request */
    size_t nrawv;
    size_t *vb, *vd; /* gatherv family: bytes and packed offsets per rank */
    size_t vtotal;
    /* the algorithm */
    const struct alg *alg;
    int alg_index, fallback;
    size_t seg;
    /* per local member */
    int nreq, nans;
    uint8_t *reqd, *answered;
    uint64_t *req_id;
    /* per local member: where its result may be written in its memory
       (single copy, task_cma_write), addr 0 none */
    struct coll_out {
        uint64_t addr, len;
    } * out;
    uint8_t **in;
    size_t *inlen;
    void **inown;
    size_t **a2a; /* alltoallv: 4 * P entries: sc, sd, rc, rd (bytes) */
    /* execution */
    struct list_node inbox; /* struct exec_msg of struct coll_msg */
    struct exec *ex;        /* hier: 1 (FPC: 2); flat: nlocal */
    int nex;
    size_t *cnt, *dsp;     /* hier: per host, bytes (6 arrays, hl's) */
    struct hier_layout hl; /* hier: the host-local phase */
    uint64_t t0;
    /* FPC protocol (hier bcast of doubles; ex[0] header, ex[1] payload) */
    int fpc;            /* this instance runs it */
    int wire_dtype;     /* datatype stamped on COLL_DATA being sent */
    struct collfpc fpx; /* its state */
};

/* ---- coll.c ---- */

/* Frees m and its bytes. */
void coll_msg_free(struct coll_msg *m);
/* Sends COLL_RESULT to local member i of ci (once). */
void coll_answer(struct daemon *d, struct coll_inst *ci, int i, int status,
                 const uint8_t *data, size_t len);
/* As coll_answer with status 0, for the last use of x's result: when data
   lies in the receive buffer x allocated, the answer takes that buffer
   (x no longer has it) instead of copying data. */
void coll_answer_last(struct daemon *d, struct coll_inst *ci, int i,
                      struct exec *x, const uint8_t *data, size_t len);
/* As coll_answer with status 0 for one of several members whose results
   lie in the receive buffer x allocated: the first call moves that buffer
   into *share (x no longer has it; the caller puts its reference when
   done), and each answer holds a reference instead of a copy.  0 (nothing
   sent: data is not there, or no memory) or 1. */
int coll_answer_shared(struct daemon *d, struct coll_inst *ci, int i,
                       struct exec *x, struct task_share **share,
                       const uint8_t *data, size_t len);

/* ---- collplan.c ---- */

/* The gatherv family: one count per rank (alltoallv has count pairs). */
int collplan_is_gv(int op);
/* Checks the first request's parameters into ci; 0 or COLLS_E*. */
int collplan_params(struct daemon *d, struct coll_inst *ci, const Envelope *e);
/* Does a later request e of rank r agree with ci's parameters?  0, or
   COLLS_ECOUNT (counts differ) or COLLS_EINVAL (anything else) with the
   difference in ci->why. */
int collplan_same(struct coll_inst *ci, const Envelope *e, int r);
/* alltoallv: a member's byte counts and offsets, 4 * P entries. */
int collplan_a2a_counts(struct daemon *d, struct coll_inst *ci,
                        const CollReq *q, size_t **out);
/* Input / output bytes of rank r (alltoallv: from its counts a2a). */
size_t collplan_in_len(const struct coll_inst *ci, int r, const size_t *a2a);
size_t collplan_out_len(const struct coll_inst *ci, int r, const size_t *a2a);
/* The arguments of ci's schedule over the P ranks (hier 0) or the hosts'
   leaders (hier 1) for rank, size bytes, with the per-rank counts of the
   gatherv family; alltoallv's count arrays are the caller's. */
void collplan_args(const struct coll_inst *ci, int hier, int rank, size_t size,
                   struct alg_args *a);
/* Chooses mode and algorithm (the same on every daemon). */
int collplan_choose(struct daemon *d, struct coll_inst *ci);
/* Chooses the algorithm for a (spec forced if it can run) into ci. */
int collplan_choose_alg(struct daemon *d, struct coll_inst *ci,
                        const struct alg_args *a, const char *spec);
/* Sets up x to run the schedule of a (cached or built). */
int collplan_exec_init(struct daemon *d, struct exec *x,
                       const struct coll_inst *ci, int phase,
                       const struct alg_args *a, uint8_t *sbuf, size_t ssz,
                       size_t rsz);

/* ---- collrun.c ---- */

/* How an instance's runs send and hand back messages (arg: the inst). */
extern const struct exec_ops collrun_ops;
/* Starts the leader schedule (hier) or local member i's (flat). */
int collrun_hier_start(struct daemon *d, struct coll_inst *ci);
int collrun_flat_start(struct daemon *d, struct coll_inst *ci, int i);
/* The leader schedule finished: answers every local member. */
int collrun_hier_finish(struct daemon *d, struct coll_inst *ci);
/* FPC: the header is in, start the payload's bcast; the payload is in,
   decode it.  0 or a COLLS_E* code. */
int collrun_fpc_payload(struct daemon *d, struct coll_inst *ci);
int collrun_fpc_finish(struct daemon *d, struct coll_inst *ci);

#endif
