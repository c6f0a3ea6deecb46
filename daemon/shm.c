/*
 * shm.c -- the daemon's end of a task's shared-memory channel (shm.h).
 *
 * The task creates the memfd and both eventfds and sends them with its
 * ATTACH_REQ, so the daemon never needs to pass descriptors into the
 * library's libuv stream.  Because the task made the memfd, its seals are
 * what protect the daemon: without F_SEAL_SHRINK the task could truncate
 * it under the daemon's mapping and the daemon would die of SIGBUS on the
 * next access, so an offer without it is refused.  The doorbells are
 * checked to be eventfds (a write to anything else could block or mean
 * something else).
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/shm.h"

struct shm_chan *
shm_chan_offer(const int *fds, int n)
{
    struct shm_chan *c = calloc(1, sizeof(*c));
    int i;

    if (c == NULL) {
        for (i = 0; i < n; i++)
            close(fds[i]);
        return NULL;
    }
    for (i = 0; i < SHM_NFDS; i++)
        c->fds[i] = i < n ? fds[i] : -1;
    for (; i < n; i++)
        close(fds[i]); /* more than a channel has: not ours to keep */
    return c;
}

/* 1 if fd is an eventfd (its /proc link names the anonymous inode). */
static int
shm_is_eventfd(int fd)
{
    char path[64], link[64];
    ssize_t n;

    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    n = readlink(path, link, sizeof(link) - 1);
    if (n < 0)
        return 0;
    link[n] = '\0';
    return strcmp(link, "anon_inode:[eventfd]") == 0;
}

int
shm_chan_accept(struct shm_chan *c, const char **why)
{
    int need = F_SEAL_SHRINK | F_SEAL_GROW;
    struct shm_hdr *h;
    struct stat sb;
    int seals;
    void *map;

    if (c->fds[SHM_FD_OUT] < 0) {
        *why = "fewer than three descriptors";
        return -1;
    }
    seals = fcntl(c->fds[SHM_FD_MEM], F_GET_SEALS);
    if (seals < 0) {
        *why = "not a memfd";
        return -1;
    }
    if ((seals & need) != need) {
        *why = "memfd not sealed against shrinking and growing";
        return -1;
    }
    if (fstat(c->fds[SHM_FD_MEM], &sb) != 0 || !S_ISREG(sb.st_mode) ||
        sb.st_size != (off_t)SHM_MAP_LEN) {
        *why = "memfd of the wrong size";
        return -1;
    }
    if (!shm_is_eventfd(c->fds[SHM_FD_IN]) ||
        !shm_is_eventfd(c->fds[SHM_FD_OUT])) {
        *why = "doorbells are not eventfds";
        return -1;
    }
    if (fcntl(c->fds[SHM_FD_IN], F_SETFL, O_NONBLOCK) != 0 ||
        fcntl(c->fds[SHM_FD_OUT], F_SETFL, O_NONBLOCK) != 0) {
        *why = "doorbells cannot be made non-blocking";
        return -1;
    }
    map = mmap(NULL, SHM_MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
               c->fds[SHM_FD_MEM], 0);
    if (map == MAP_FAILED) {
        *why = "mmap failed";
        return -1;
    }
    /* The rings' indices are native integers: a task of the other byte
       order (its magic reads reversed) or of another layout stays on its
       socket, which carries frames in wire order (docs/architecture.md). */
    h = map;
    if (h->magic != SHM_MAGIC || h->version != SHM_VERSION) {
        *why = h->magic == __builtin_bswap64(SHM_MAGIC)
                   ? "task of the other byte order"
                   : "not our ring layout (magic or version)";
        munmap(map, SHM_MAP_LEN);
        return -1;
    }
    close(c->fds[SHM_FD_MEM]);
    c->fds[SHM_FD_MEM] = -1;
    c->map = map;
    /* our indices start at 0 whatever the task wrote there */
    shm_rings(map, 0, &c->req, &c->comp);
    atomic_store_explicit(&h->accepted, SHM_ACCEPTED, memory_order_release);
    return 0;
}

void
shm_chan_free(struct shm_chan *c)
{
    int i;

    if (c == NULL)
        return;
    if (c->map != NULL)
        munmap(c->map, SHM_MAP_LEN);
    for (i = 0; i < SHM_NFDS; i++)
        if (c->fds[i] >= 0)
            close(c->fds[i]);
    free(c);
}

void
shm_ring_bell(int fd)
{
    uint64_t one = 1;

    (void)!write(fd, &one, sizeof(one));
}
