/*
 * shm.c -- makes and unmakes the task's shared-memory channel (shm.h).
 *
 * The task creates the memfd, so it seals it itself: F_SEAL_SHRINK and
 * F_SEAL_GROW (then F_SEAL_SEAL), which the daemon checks before it maps
 * the memfd -- a mapping that could be truncated would kill the daemon
 * with SIGBUS.  The memfd and both eventfds are close-on-exec; the memfd
 * is closed once sent (the mappings keep it), so a task that dies leaves
 * nothing behind once the daemon unmaps.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shm.h"

int
colls__shm_new(struct colls__shm **out)
{
    struct colls__shm *s = calloc(1, sizeof(*s));
    int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
    int rc;

    if (s == NULL)
        return -ENOMEM;
    s->memfd = s->bell_daemon = s->bell_task = -1;
    list_init(&s->wq);
    s->memfd = memfd_create("colls-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (s->memfd < 0 || ftruncate(s->memfd, SHM_MAP_LEN) != 0 ||
        fcntl(s->memfd, F_ADD_SEALS, seals) != 0)
        goto fail;
    s->map = mmap(NULL, SHM_MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
                  s->memfd, 0);
    if (s->map == MAP_FAILED) {
        s->map = NULL;
        goto fail;
    }
    s->bell_daemon = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    s->bell_task = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (s->bell_daemon < 0 || s->bell_task < 0)
        goto fail;
    shm_layout_init(s->map);
    shm_rings(s->map, 1, &s->req, &s->comp);
    s->state = COLLS__SHM_OFFER;
    *out = s;
    return 0;
fail:
    rc = errno ? -errno : -EIO;
    colls__shm_free(s);
    return rc;
}

void
colls__shm_free(struct colls__shm *s)
{
    if (s == NULL)
        return;
    if (s->map != NULL)
        munmap(s->map, SHM_MAP_LEN);
    if (s->memfd >= 0)
        close(s->memfd);
    if (s->bell_daemon >= 0)
        close(s->bell_daemon);
    if (s->bell_task >= 0)
        close(s->bell_task);
    free(s);
}

void
colls__shm_rights(struct msghdr *m, union colls__shm_cmsg *cbuf,
                  const int fds[3])
{
    struct cmsghdr *cm;

    memset(cbuf, 0, sizeof(*cbuf));
    m->msg_control = cbuf->b;
    m->msg_controllen = sizeof(cbuf->b);
    cm = CMSG_FIRSTHDR(m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * 3);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * 3);
}

void
colls__shm_ring(struct colls__shm *s)
{
    uint64_t one = 1;

    (void)!write(s->bell_daemon, &one, sizeof(one));
}
