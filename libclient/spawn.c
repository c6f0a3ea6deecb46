/*
 * spawn.c -- starting programs through the daemons (docs/spawn.md):
 * colls_spawn, colls_parent, colls_siblings, colls_catchout, colls_kill,
 * and the lines of spawned children's output the daemon delivers
 * (SPAWN_OUTPUT) to a task that catches them.
 *
 * Siblings.  A spawn of more than one copy ends with the spawner sending
 * every copy that started the list of them all, in index order (only the
 * spawner knows every tid: each host's daemon starts its own copies).  It
 * is a library message (internal.h): tag COLLS__TAG_DCOLL, header gid 0,
 * seq 0, step COLLS__STEP_SIBLINGS, then u32 count and count u32 tids,
 * little-endian.  A copy keeps the first list from its parent and drops
 * any other; colls_siblings waits for it.  The spawn is answered once
 * every copy attached, ended, or ran 3 s without attaching; the daemon
 * of a copy still to attach holds what is sent to it until it does
 * (docs/spawn.md), the list included.
 *
 * API layer (internal.h): calls ctl.c, p2p.c's sends, colls.c's loop and
 * dead.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "proto/bytes.h"

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

/*
 * Sends the k tids of list (room for COLLS__LIB_HDR + 4 + 4 k bytes,
 * filled from COLLS__LIB_HDR + 4 on) to each of them (see the top).  A
 * copy that cannot be sent to (ended already) is skipped.
 */
static void
spawn_tell_siblings(colls_t *c, uint8_t *list, int k)
{
    struct colls_req req;
    uv_buf_t b;
    int i;

    memset(list, 0, COLLS__LIB_HDR);
    put_u32(list + 16, COLLS__STEP_SIBLINGS);
    put_u32(list + COLLS__LIB_HDR, (uint32_t)k);
    colls__sends_init(&req, c);
    b = uv_buf_init((char *)list, (unsigned)(COLLS__LIB_HDR + 4 + 4 * k));
    for (i = 0; i < k; i++)
        (void)colls__send_data(c, get_u32(list + COLLS__LIB_HDR + 4 + 4 * i),
                               COLLS__TAG_DCOLL, COLLS_ENC_RAW,
                               COLLS_ORDER_LITTLE, COLLS_ROUTE_DEFAULT, &b, 1,
                               &req);
    (void)colls__sends_wait(&req);
}

int
colls__siblings_deliver(colls_t *c, struct colls__rmsg *m)
{
    const uint8_t *p = m->data;
    size_t i, k;

    if (c->siblings == NULL && c->parent != 0 && m->src == c->parent &&
        m->len >= COLLS__LIB_HDR + 4 && get_u64(p + 8) == 0 &&
        get_u32(p + 16) == COLLS__STEP_SIBLINGS && get_u32(p + 20) == 0 &&
        (k = get_u32(p + COLLS__LIB_HDR)) >= 1 && k <= SPAWN_MAX_COPIES &&
        m->len == COLLS__LIB_HDR + 4 + 4 * k &&
        (c->siblings = malloc(k * sizeof(*c->siblings))) != NULL) {
        for (i = 0; i < k; i++)
            c->siblings[i] = get_u32(p + COLLS__LIB_HDR + 4 + 4 * i);
        c->nsiblings = (int)k;
    }
    colls__rmsg_free(m); /* anything else: dropped */
    return 0;
}

static int
spawn_siblings_pred(void *arg)
{
    colls_t *c = arg;

    return c->siblings != NULL || colls__src_status(c, c->parent) < 0;
}

int
colls_siblings(colls_t *c, colls_tid_t *tids, int max)
{
    const char *count = getenv("COLLS_SPAWN_COUNT");
    int i, rc;

    if (c == NULL || max < 0 || (tids == NULL && max > 0))
        return COLLS_EINVAL;
    if (c->siblings == NULL && c->parent != 0 && count != NULL &&
        atoi(count) > 1) {
        rc = colls__wait(c, spawn_siblings_pred, c, 1);
        if (rc < 0)
            return rc;
        if (c->siblings == NULL) {
            rc = colls__src_status(c, c->parent);
            return rc < 0 ? rc : COLLS_EPEERDEAD;
        }
    }
    if (c->siblings == NULL) {
        if (max > 0)
            tids[0] = c->conn.tid;
        return 1; /* not spawned, or alone */
    }
    for (i = 0; i < c->nsiblings && i < max; i++)
        tids[i] = c->siblings[i];
    return c->nsiblings;
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
    uint8_t *list;
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
    /* allocated first: once copies run, they wait for it */
    list = n > 1 ? malloc(COLLS__LIB_HDR + 4 + 4 * (size_t)n) : NULL;
    if (n > 1 && list == NULL)
        return COLLS_ENOMEM;
    nvars = spawn_env(env, &vars);
    if (nvars < 0) {
        free(list);
        return (int)nvars;
    }
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
    if (rc < 0) {
        free(list);
        return rc;
    }
    if (rep->kind != KIND__SPAWN_REP ||
        rep->body_case != ENVELOPE__BODY_SPAWN_REP ||
        rep->spawn_rep->n_tids != (size_t)n ||
        rep->spawn_rep->n_status != (size_t)n) {
        envelope_free(rep);
        free(list);
        return COLLS_EPROTO;
    }
    r = rep->spawn_rep;
    for (i = 0; i < n; i++) {
        if (r->status[i] == 0 && r->tids[i] != 0) {
            tids[i] = r->tids[i];
            if (list != NULL)
                put_u32(list + COLLS__LIB_HDR + 4 + 4 * (size_t)started,
                        r->tids[i]);
            started++;
        } else {
            tids[i] =
                (colls_tid_t)(r->status[i] < 0 ? r->status[i] : COLLS_EPROTO);
        }
    }
    envelope_free(rep);
    if (list != NULL && started > 0)
        spawn_tell_siblings(c, list, started);
    free(list);
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
