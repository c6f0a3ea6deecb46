/*
 * spawn.c -- starting programs through the daemons (docs/spawn.md):
 * colls_spawn, colls_parent, colls_catchout, colls_kill, and the lines of
 * spawned children's output the daemon delivers (SPAWN_OUTPUT) to a task
 * that catches them.
 *
 * API layer (internal.h): calls ctl.c only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* Copies and arguments one request may carry (the daemon's bounds). */
#define SPAWN_MAX_COPIES 4096
#define SPAWN_MAX_ARGS   4096

int
colls_spawn(colls_t *c, const char *file, char *const argv[], int flags,
            const char *where, int n, colls_tid_t *tids)
{
    SpawnReq q = SPAWN_REQ__INIT;
    Envelope e, *rep = NULL;
    const SpawnRep *r;
    size_t nargs = 0;
    int rc, i, started = 0;

    if (c == NULL || file == NULL || file[0] == '\0' || tids == NULL || n < 1 ||
        n > SPAWN_MAX_COPIES ||
        (flags != COLLS_SPAWN_ANY && flags != COLLS_SPAWN_HOST &&
         flags != COLLS_SPAWN_ARCH) ||
        (flags != COLLS_SPAWN_ANY && (where == NULL || where[0] == '\0')))
        return COLLS_EINVAL;
    while (argv != NULL && argv[nargs] != NULL)
        if (++nargs > SPAWN_MAX_ARGS)
            return COLLS_EINVAL;
    q.file = (char *)file;
    q.n_argv = nargs;
    q.argv = (char **)argv;
    q.flags = (uint32_t)flags;
    q.where = flags == COLLS_SPAWN_ANY ? (char *)"" : (char *)where;
    q.n = (uint32_t)n;
    envelope_init(&e);
    e.kind = KIND__SPAWN_REQ;
    e.body_case = ENVELOPE__BODY_SPAWN_REQ;
    e.spawn_req = &q;
    rc = colls__ctl_call(c, &e, &rep);
    if (rc < 0)
        return rc;
    if (rep->kind != KIND__SPAWN_REP ||
        rep->body_case != ENVELOPE__BODY_SPAWN_REP ||
        rep->spawn_rep->n_tids != (size_t)n ||
        rep->spawn_rep->n_status != (size_t)n) {
        envelope_free(rep);
        return COLLS_EPROTO;
    }
    r = rep->spawn_rep;
    for (i = 0; i < n; i++) {
        if (r->status[i] == 0 && r->tids[i] != 0) {
            tids[i] = r->tids[i];
            started++;
        } else {
            tids[i] =
                (colls_tid_t)(r->status[i] < 0 ? r->status[i] : COLLS_EPROTO);
        }
    }
    envelope_free(rep);
    return started;
}

int
colls_parent(colls_t *c, colls_tid_t *parent)
{
    if (c == NULL || parent == NULL)
        return COLLS_EINVAL;
    if (c->parent == 0)
        return COLLS_ENOENT;
    *parent = c->parent;
    return 0;
}

/* A request with no body answered by ADMIN_REP: kind, dst, tag. */
static int
spawn_simple(colls_t *c, Kind kind, uint32_t dst, int tag)
{
    Envelope e, *rep = NULL;
    int rc;

    envelope_init(&e);
    e.kind = kind;
    e.dst = dst;
    e.tag = tag;
    rc = colls__ctl_call(c, &e, &rep);
    if (rc < 0)
        return rc;
    rc = rep->kind == KIND__ADMIN_REP ? 0 : COLLS_EPROTO;
    envelope_free(rep);
    return rc;
}

int
colls_catchout(colls_t *c, int fd)
{
    int rc;

    if (c == NULL || fd < -1)
        return COLLS_EINVAL;
    rc = spawn_simple(c, KIND__CATCHOUT, 0, fd >= 0);
    if (rc == 0)
        c->catch_fd = fd;
    return rc;
}

int
colls_kill(colls_t *c, colls_tid_t tid)
{
    if (c == NULL || tid == 0 || COLLS_TID_LOCAL(tid) == 0)
        return COLLS_EINVAL;
    return spawn_simple(c, KIND__KILL_REQ, tid, 0);
}

/* Writes all of len bytes to fd; gives up on an error. */
static void
spawn_write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        p += n;
        len -= (size_t)n;
    }
}

void
colls__spawn_output(colls_t *c, Envelope *e, uint8_t *payload, size_t plen)
{
    char *line;
    int head;

    if (c->catch_fd >= 0 && (line = malloc(plen + 32)) != NULL) {
        head = snprintf(line, 32, "[t%x] ", e->src);
        if (plen > 0)
            memcpy(line + head, payload, plen);
        line[(size_t)head + plen] = '\n';
        spawn_write_all(c->catch_fd, line, (size_t)head + plen + 1);
        free(line);
    }
    free(payload);
    envelope_free(e);
}
