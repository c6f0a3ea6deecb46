/*
 * simnet.h -- an in-memory network that runs the P schedules of one
 * collective operation on the daemon's executor (daemon/exec.h) and
 * checks them.
 *
 * Messages are eager, as in the daemon: a SEND is queued when its round
 * starts, and messages between a pair match in sending order and must
 * have equal lengths (the executor checks that).  The run fails on a
 * deadlock (ranks unfinished and nothing can move), on a hazard (a step
 * writing bytes another step of the same round reads or writes; the
 * executor's exec_check), on a caller buffer smaller than the schedule's
 * extent, on a REDUCE whose length is not whole items, and on a message
 * nobody received.  Vector clocks record which ranks' start each rank
 * has causally seen by its end (barrier semantics).
 */
#ifndef COLLS_TESTS_SIMNET_H
#define COLLS_TESTS_SIMNET_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/sched.h"

struct simnet_result {
    size_t messages;   /* matched SEND/RECV pairs */
    size_t bytes;      /* bytes carried */
    size_t max_rounds; /* longest schedule, in rounds */
    int knows_all;     /* every rank's end causally follows every start */
    char err[256];     /* why the run failed */
};

/*
 * Runs s[0..P-1] (s[r] is rank r's schedule).  sbuf[r]/ssz[r] and
 * rbuf[r]/rsz[r] are rank r's SEND and RECV buffers (NULL with size 0 is
 * fine).  Scratch buffers are allocated and poisoned.  Returns 0, or -1
 * with res->err set.
 */
int simnet_run(struct sched *const *s, int P, uint8_t *const *sbuf,
               const size_t *ssz, uint8_t *const *rbuf, const size_t *rsz,
               struct simnet_result *res);

#endif
