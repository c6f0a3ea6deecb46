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

/* Copies, arguments and environment entries one request may carry (the
   daemon's bounds). */
#define SPAWN_MAX_COPIES 4096
#define SPAWN_MAX_ARGS   4096
#define SPAWN_MAX_ENV    4096

extern char **environ;

/* Variables of ours that are the daemon's to set for each copy. */
static int
spawn_env_own(const char *v)
{
    static const char *const own[] = {"COLLS_SOCKET=", "COLLS_SPAWN_COUNT=",
                                      "COLLS_SPAWN_INDEX=", "COLLS_TASK_NAME="};
    size_t i;

    for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if (strncmp(v, own[i], strlen(own[i])) == 0)
            return 1;
    return 0;
}

/* 1 if the ':'-separated list names the variable of entry v ("NAME=..."). */
static int
spawn_env_listed(const char *list, const char *v)
{
    size_t len = strcspn(v, "=");
    const char *p = list;

    while (p != NULL && *p != '\0') {
        size_t k = strcspn(p, ":");

        if (k == len && strncmp(p, v, len) == 0)
            return 1;
        p += k;
        if (*p == ':')
            p++;
    }
    return 0;
}

/*
 * The copies' environment entries, into *out (malloc'd; the strings are
 * environ's and extra's, not copied): every COLLS_* variable of ours but
 * the daemon's own (so that settings every member must share, such as
 * COLLS_DIRECT_MAX and COLLS_ALG_<OP>, are shared), the variables
 * COLLS_EXPORT names (':'-separated, as PVM_EXPORT), then extra
 * (NULL-terminated, may be NULL): later entries win.  The count, or
 * COLLS_ENOMEM / COLLS_EINVAL (over SPAWN_MAX_ENV).
 */
static long
spawn_env(char *const extra[], char ***out)
{
    const char *list = getenv("COLLS_EXPORT");
    size_t n = 0, cap = 0, i;
    char **v;

    for (i = 0; environ != NULL && environ[i] != NULL; i++)
        cap++;
    for (i = 0; extra != NULL && extra[i] != NULL; i++)
        cap++;
    v = malloc((cap + 1) * sizeof(*v));
    if (v == NULL)
        return COLLS_ENOMEM;
    for (i = 0; environ != NULL && environ[i] != NULL; i++) {
        char *e = environ[i];

        if (strchr(e, '=') == NULL || spawn_env_own(e))
            continue;
        if (strncmp(e, "COLLS_", 6) == 0 ||
            (list != NULL && spawn_env_listed(list, e)))
            v[n++] = e;
    }
    for (i = 0; extra != NULL && extra[i] != NULL; i++)
        v[n++] = extra[i];
    if (n > SPAWN_MAX_ENV) {
        free(v);
        return COLLS_EINVAL;
    }
    *out = v;
    return (long)n;
}

int
colls_spawn(colls_t *c, const char *file, char *const argv[], int flags,
            const char *where, int n, colls_tid_t *tids)
{
    return colls_spawn_env(c, file, argv, NULL, flags, where, n, tids);
}

int
colls_spawn_env(colls_t *c, const char *file, char *const argv[],
                char *const env[], int flags, const char *where, int n,
                colls_tid_t *tids)
{
    SpawnReq q = SPAWN_REQ__INIT;
    Envelope e, *rep = NULL;
    const SpawnRep *r;
    size_t nargs = 0;
    char **vars = NULL;
    long nvars;
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
    nvars = spawn_env(env, &vars);
    if (nvars < 0)
        return (int)nvars;
    q.file = (char *)file;
    q.n_argv = nargs;
    q.argv = (char **)argv;
    q.flags = (uint32_t)flags;
    q.where = flags == COLLS_SPAWN_ANY ? (char *)"" : (char *)where;
    q.n = (uint32_t)n;
    q.n_env = (size_t)nvars;
    q.env = vars;
    envelope_init(&e);
    e.kind = KIND__SPAWN_REQ;
    e.body_case = ENVELOPE__BODY_SPAWN_REQ;
    e.spawn_req = &q;
    rc = colls__ctl_call(c, &e, &rep);
    free(vars);
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

/* Sends request e, answered by ADMIN_REP. */
static int
spawn_simple(colls_t *c, Envelope *e)
{
    Envelope *rep = NULL;
    int rc;

    rc = colls__ctl_call(c, e, &rep);
    if (rc < 0)
        return rc;
    rc = rep->kind == KIND__ADMIN_REP ? 0 : COLLS_EPROTO;
    envelope_free(rep);
    return rc;
}

int
colls_catchout(colls_t *c, int fd)
{
    Catchout co = CATCHOUT__INIT;
    Envelope e;
    int rc;

    if (c == NULL || fd < -1)
        return COLLS_EINVAL;
    envelope_init(&e);
    e.kind = KIND__CATCHOUT;
    co.on = fd >= 0;
    e.body_case = ENVELOPE__BODY_CATCHOUT;
    e.catchout = &co;
    rc = spawn_simple(c, &e);
    if (rc == 0)
        c->catch_fd = fd;
    return rc;
}

int
colls_kill(colls_t *c, colls_tid_t tid)
{
    Envelope e;

    if (c == NULL || tid == 0 || COLLS_TID_LOCAL(tid) == 0)
        return COLLS_EINVAL;
    envelope_init(&e);
    e.kind = KIND__KILL_REQ;
    e.dst = tid;
    return spawn_simple(c, &e);
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
