/*
 * sched.h -- schedules: what ONE participant of a collective does.
 *
 * An algorithm (daemon/alg/) compiles (operation, P, rank, size, root) into
 * a schedule for one participant; an executor runs it.  A schedule is a
 * list of rounds (libnbc style); each round is a list of steps:
 *
 *   SEND   peer, buffer range                 (send those bytes to peer)
 *   RECV   peer, buffer range                 (receive exactly len bytes)
 *   REDUCE dst range op= src range            (sched's operator and dtype)
 *   COPY   dst range = src range
 *
 * Steps of one round may run concurrently and in any order; a round starts
 * only when every step of the previous one is complete.  Builders keep the
 * steps of a round free of hazards: no step writes a byte range that
 * another step of the same round reads or writes (exec_check in
 * daemon/exec.c checks this).  REDUCE and COPY depend only on earlier
 * rounds.
 *
 * Messages between a pair of participants match in order: the k-th SEND
 * from a to b is the k-th RECV at b from a, and both have the same length.
 * Zero-length SEND/RECV steps are real messages (barrier relies on them).
 *
 * Buffers are named, never pointers, so a schedule can be cached and run
 * on any call: SCHED_BUF_SEND (the caller's input, read only),
 * SCHED_BUF_RECV (the caller's output; for bcast the data buffer, which
 * holds the root's data on entry), and SCHED_BUF_TMP + k, scratch buffers
 * of sched.tmp_size[k] bytes that the executor allocates.  Ranges are in
 * bytes.  Pipelined algorithms give each segment its own steps, so an
 * executor may start a segment's send as soon as its receive is done.
 *
 * REDUCE computes dst = dst op src, or dst = src op dst with
 * SCHED_F_SRC_FIRST; builders use the flag to combine contributions in
 * rank order where they promise it (see alg.h).
 */
#ifndef COLLS_DAEMON_SCHED_H
#define COLLS_DAEMON_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "colls.h"

/* Collective operations: COLLS_COLL_* of colls.h under the names the
   schedules use (proto/collop.h holds their traits and names). */
enum sched_op {
    SCHED_OP_BARRIER = COLLS_COLL_BARRIER,
    SCHED_OP_BCAST = COLLS_COLL_BCAST,
    SCHED_OP_REDUCE = COLLS_COLL_REDUCE,
    SCHED_OP_ALLREDUCE = COLLS_COLL_ALLREDUCE,
    SCHED_OP_GATHER = COLLS_COLL_GATHER,
    SCHED_OP_GATHERV = COLLS_COLL_GATHERV,
    SCHED_OP_SCATTER = COLLS_COLL_SCATTER,
    SCHED_OP_SCATTERV = COLLS_COLL_SCATTERV,
    SCHED_OP_ALLGATHER = COLLS_COLL_ALLGATHER,
    SCHED_OP_ALLGATHERV = COLLS_COLL_ALLGATHERV,
    SCHED_OP_ALLTOALL = COLLS_COLL_ALLTOALL,
    SCHED_OP_ALLTOALLV = COLLS_COLL_ALLTOALLV,
    SCHED_OP_REDUCE_SCATTER = COLLS_COLL_REDUCE_SCATTER,
    SCHED_OP_SCAN = COLLS_COLL_SCAN,
    SCHED_OP_EXSCAN = COLLS_COLL_EXSCAN,
    SCHED_OP_MAX = COLLS_COLL_MAX
};

enum sched_kind { SCHED_SEND = 0, SCHED_RECV, SCHED_REDUCE, SCHED_COPY };

enum { SCHED_BUF_SEND = 0, SCHED_BUF_RECV = 1, SCHED_BUF_TMP = 2 };
#define SCHED_MAX_TMP 4
#define SCHED_NBUF    (SCHED_BUF_TMP + SCHED_MAX_TMP)

/* REDUCE: dst = src op dst (the source is the left operand). */
#define SCHED_F_SRC_FIRST 0x1

struct sched_step {
    uint8_t kind;  /* enum sched_kind */
    uint8_t buf;   /* SEND: source; RECV/REDUCE/COPY: destination */
    uint8_t sbuf;  /* REDUCE/COPY: source buffer */
    uint8_t flags; /* SCHED_F_* */
    int32_t peer;  /* SEND/RECV: rank in the schedule's rank space */
    size_t off;    /* range in buf */
    size_t soff;   /* REDUCE/COPY: offset in sbuf */
    size_t len;    /* bytes */
};

struct sched {
    int op;    /* enum sched_op */
    int P;     /* participants */
    int rank;  /* this participant, 0 <= rank < P */
    int dtype; /* COLLS_* datatype of REDUCE steps */
    int rop;   /* COLLS_* reduction operator of REDUCE steps */
    int ntmp;
    size_t tmp_size[SCHED_MAX_TMP];
    size_t extent[SCHED_BUF_TMP]; /* bytes of SEND/RECV buffer touched */
    struct sched_step *steps;
    size_t nsteps, scap;
    size_t *round_end; /* round i = steps [round_end[i-1], round_end[i]) */
    size_t nrounds, rcap;
    int err; /* first error while building (sticky) */
};

/* Starts an empty schedule.  Never fails; errors surface in finish. */
void sched_init(struct sched *s, int op, int P, int rank, int dtype, int rop);
/* Releases the step arrays; s may be re-initialised afterwards. */
void sched_free(struct sched *s);

/* Declares a scratch buffer of size bytes; returns its buffer id, or -1
   (and sets s->err) when SCHED_MAX_TMP are in use. */
int sched_tmp(struct sched *s, size_t size);

/* Appends a step to the round being built. */
void sched_send(struct sched *s, int peer, int buf, size_t off, size_t len);
void sched_recv(struct sched *s, int peer, int buf, size_t off, size_t len);
void sched_reduce(struct sched *s, int dbuf, size_t doff, int sbuf, size_t soff,
                  size_t len, unsigned flags);
void sched_copy(struct sched *s, int dbuf, size_t doff, int sbuf, size_t soff,
                size_t len);

/* Closes the round being built (no-op when it is empty). */
void sched_round(struct sched *s);
/* Closes the last round; returns 0 or the first error: COLLS_ENOMEM,
   COLLS_EINVAL for a bad peer, a range past a scratch buffer's end, a
   write into SCHED_BUF_SEND, or an undeclared buffer.  s->extent[] tells
   the executor how large the caller's buffers must be. */
int sched_finish(struct sched *s);

/* Steps of round i: *n of them from the returned pointer. */
const struct sched_step *sched_round_steps(const struct sched *s, size_t i,
                                           size_t *n);

/* Writes a readable listing of s to f, one step per line ("round 2:
   recv from 3 into tmp0[64..128)").  Returns 0 or COLLS_EIO. */
int sched_print(FILE *f, const struct sched *s);

/* "send", "recv", "reduce", "copy". */
const char *sched_kind_name(int kind);

/*
 * The schedule cache.  A schedule depends on every field of the key, so the
 * key holds the exact byte size (the "size class" of the tuner is a
 * coarser thing used to choose the algorithm, which is also in the key).
 * v-variants depend on count arrays and are not cached.
 */
struct sched_key {
    int op, P, rank, root, dtype, rop;
    int alg; /* index in the operation's algorithm table */
    size_t size, seg;
};

struct sched_cache;

/* A direct-mapped cache of nslots schedules; NULL on allocation failure. */
struct sched_cache *sched_cache_new(size_t nslots);
void sched_cache_free(struct sched_cache *c);
/* The cached schedule for key, or NULL. */
const struct sched *sched_cache_get(struct sched_cache *c,
                                    const struct sched_key *key);
/* Stores s (ownership passes to the cache; s's struct is copied and the
   caller's copy must not be freed); evicts what was in the slot. */
const struct sched *sched_cache_put(struct sched_cache *c,
                                    const struct sched_key *key,
                                    struct sched *s);
/* Counters: hits, misses (lookups that found nothing), evictions. */
void sched_cache_stats(const struct sched_cache *c, uint64_t *hits,
                       uint64_t *misses, uint64_t *evictions);

#endif
