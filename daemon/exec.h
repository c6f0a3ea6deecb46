/*
 * exec.h -- the schedule executor: runs ONE participant's schedule
 * (daemon/sched.h) round by round, with no I/O and no clock
 * (docs/collectives.md, "Collectives").
 *
 * A struct exec owns a run's state: the schedule (borrowed, or taken),
 * its buffers (the caller's or its own), the current round, the RECVs of
 * that round not yet matched and a done flag per step.  Starting a round
 * runs its REDUCE and COPY steps at once and hands its SENDs to
 * exec_ops.send; the round completes when its RECVs have matched
 * messages of an inbox, which match per (phase, source rank, destination
 * rank) in arrival order: the k-th message from a to b is the k-th RECV
 * at b from a, and both have the same length (else COLLS_ECOUNT, the
 * ranks disagree on counts, with the lengths in x->why).  Several runs may
 * share one inbox (a daemon's local ranks in flat mode, the two bcasts of the
 * FPC protocol): each takes only the messages addressed to its (phase, rank).
 *
 * Invariants: a message is either on an inbox or handed back through
 * exec_ops.consumed, exactly once; nothing here frees what it did not
 * allocate.  exec_check verifies what the builders promise (no step of a
 * round writes bytes another step of the same round reads or writes); it
 * costs O(n log n) per round, so callers run it once per built schedule
 * (the daemon on a schedule-cache miss, the tests on every run), not per
 * message.
 *
 * May call: daemon/sched.h, proto/reduce.h, proto/dtype.h, proto/list.h.
 */
#ifndef COLLS_DAEMON_EXEC_H
#define COLLS_DAEMON_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/sched.h"
#include "proto/list.h"

/* One message of an inbox.  The caller allocates it and owns data. */
struct exec_msg {
    struct list_node node;
    int phase, src, dst;
    const uint8_t *data;
    size_t len;
};

/* How a run talks to the world; arg is passed back unchanged. */
struct exec_ops {
    /* Sends len bytes at data from (phase, src) to (phase, dst); data is
       only valid during the call.  0 or a COLLS_E* code (fails the run). */
    int (*send)(void *arg, int phase, int src, int dst, const uint8_t *data,
                size_t len);
    /* m was matched with a RECV (its bytes copied) and is off the inbox:
       the callee frees it. */
    void (*consumed)(void *arg, struct exec_msg *m);
};

struct exec {
    int phase, rank;
    int started, finished;
    const struct sched *s; /* the schedule being run */
    struct sched mine;     /* s when the run took it (exec_init take) */
    uint8_t *buf[SCHED_NBUF];
    size_t bsz[SCHED_NBUF];
    uint8_t *own[SCHED_NBUF]; /* buffers this run allocated */
    size_t round;             /* current round */
    size_t pending;           /* its RECVs not yet matched */
    const struct sched_step *st;
    size_t nst;
    uint8_t *done; /* per step of the current round */
    size_t esize;  /* bytes of an item of REDUCE steps */
    char why[160]; /* the reason of the last COLLS_EINVAL or COLLS_ECOUNT */
};

/*
 * Sets up x to run s in phase.  take: x owns s's arrays from now on (the
 * struct is copied; the caller must not free s), else s must outlive x.
 * sbuf / rbuf: the caller's SEND and RECV buffers of ssz / rsz bytes, or
 * NULL for buffers of max(size, the schedule's extent) bytes that x
 * allocates zeroed.  Scratch buffers are allocated (not initialised).
 * 0, COLLS_EINVAL (a caller's buffer smaller than the schedule's extent)
 * or COLLS_ENOMEM; on error x is still freed with exec_free.
 */
int exec_init(struct exec *x, int phase, const struct sched *s, int take,
              uint8_t *sbuf, size_t ssz, uint8_t *rbuf, size_t rsz);
/* Releases what x allocated (and its schedule if it took it). */
void exec_free(struct exec *x);

/* Starts round 0.  0 or an error of a step or of ops->send. */
int exec_start(struct exec *x, const struct exec_ops *ops, void *arg);
/*
 * Matches x's open RECVs with inbox and starts the following rounds as
 * long as the current one completes; *moved is set when anything did.
 * 0 or a COLLS_E* code (x->why says why for COLLS_EINVAL, COLLS_ECOUNT).
 */
int exec_advance(struct exec *x, struct list_node *inbox,
                 const struct exec_ops *ops, void *arg, int *moved);

/* Checks every round of s for hazards (see the top).  0, or COLLS_EINVAL
   with the first one described in why (cap bytes). */
int exec_check(const struct sched *s, char *why, size_t cap);

#endif
