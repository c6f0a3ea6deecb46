/*
 * shm.h -- the task's end of the shared-memory channel to its daemon
 * (docs/architecture.md, "The shared-memory channel"): the memfd, its
 * mapping and the two doorbells.  The connection layer (conn.c) drives
 * it; this file only makes and unmakes it.
 *
 * May call: proto/ring, libc.  Part of the connection layer: never
 * includes internal.h.
 */
#ifndef COLLS_LIBCLIENT_SHM_H
#define COLLS_LIBCLIENT_SHM_H

#include <sys/socket.h>

#include <uv.h>

#include "proto/list.h"
#include "proto/ring.h"

enum colls__shm_state {
    COLLS__SHM_OFFER, /* made: its fds go with the first write */
    COLLS__SHM_SENT,  /* offered with ATTACH_REQ: ATTACH_REP decides */
    COLLS__SHM_ON,    /* the daemon took it: frames go through it */
    COLLS__SHM_STATE_MAX
};

struct colls__shm {
    int state;
    void *map;             /* SHM_MAP_LEN bytes */
    struct ring req, comp; /* we produce req, consume comp */
    int memfd;             /* until it is sent, else -1 */
    int bell_daemon;       /* eventfd: we ring it */
    int bell_task;         /* eventfd: the daemon rings it */
    uv_poll_t poll;        /* on bell_task while ON */
    int polling;
    struct list_node wq; /* colls__wreq waiting for room in req */
    uint64_t full_waits; /* times a write waited for room */
};

/*
 * Makes a channel: a memfd of SHM_MAP_LEN bytes sealed against shrinking
 * and growing, mapped and laid out, and the two eventfds.  0, or a
 * negative errno (the caller stays on the socket).
 */
int colls__shm_new(struct colls__shm **out);
/* Unmaps and closes everything (the poll handle must be closed). */
void colls__shm_free(struct colls__shm *s);
/* Room for the SCM_RIGHTS message of an offer's three descriptors. */
union colls__shm_cmsg {
    struct cmsghdr h;
    char b[CMSG_SPACE(sizeof(int) * 3)];
};

/* Attaches the three descriptors fds (memfd, the daemon's doorbell, the
   task's) to m as SCM_RIGHTS, in cbuf. */
void colls__shm_rights(struct msghdr *m, union colls__shm_cmsg *cbuf,
                       const int fds[3]);
/* Rings the daemon's doorbell. */
void colls__shm_ring(struct colls__shm *s);

#endif
