/*
 * shm.h -- the daemon's end of a task's shared-memory channel
 * (docs/architecture.md, "The shared-memory channel").
 *
 * A task offers the channel with its ATTACH_REQ: three descriptors
 * passed with SCM_RIGHTS (the memfd, the daemon's doorbell, the task's
 * doorbell; both doorbells eventfds).  task.c keeps the offer and, at
 * attach, asks shm_chan_accept() to check and map it; the rings
 * (proto/ring.h) then carry the task's frames both ways instead of the
 * socket.  Nothing in the mapping is trusted: ring.c checks every index,
 * and the bytes are parsed as socket bytes are.
 *
 * May call: proto/ring, log.  Knows nothing of tasks.
 */
#ifndef COLLS_DAEMON_SHM_H
#define COLLS_DAEMON_SHM_H

#include "proto/ring.h"

struct event;

/* A channel offered (fds) or accepted (map). */
struct shm_chan {
    int fds[3]; /* as offered: memfd, our doorbell, the task's; -1 closed */
    void *map;  /* SHM_MAP_LEN bytes once accepted, else NULL */
    struct ring req, comp; /* we consume req, produce comp */
    struct event *ev;      /* our doorbell (task.c's) */
    int out_on;            /* output goes to comp (after ATTACH_REP) */
    int broken;            /* a bad index was seen: never used again */
    int req_awake;         /* req's sleeping flag lowered while we are awake
                              (task.c, task_shm_sleep raises it again) */
};

#define SHM_FD_MEM 0
#define SHM_FD_IN  1 /* the daemon's doorbell: the task rings it */
#define SHM_FD_OUT 2 /* the task's doorbell */
#define SHM_NFDS   3

/* An offer of the n descriptors fds (taken: closed when freed); NULL
   without memory (the fds are then closed). */
struct shm_chan *shm_chan_offer(const int *fds, int n);
/*
 * Checks the offer -- three descriptors; a memfd of SHM_MAP_LEN bytes
 * sealed against shrinking and growing; two eventfds -- maps it, closes
 * the memfd (the mapping keeps it) and marks it accepted for the task.
 * 0, or -1 with *why saying what was wrong (the offer stays to be freed).
 */
int shm_chan_accept(struct shm_chan *c, const char **why);
/* Unmaps and closes everything (the event is task.c's to free first). */
void shm_chan_free(struct shm_chan *c);
/* Rings a doorbell (an eventfd).  Errors are ignored: a full or bad
   eventfd belongs to a task that will be found out otherwise. */
void shm_ring_bell(int fd);

#endif
