/*
 * group.c -- joining and leaving groups, and the per-group options of
 * collectives (docs/collectives.md, "Groups").
 *
 * A join is one control request: GROUP_JOIN {group, group_join {size,
 * placement}} answered, once size tasks have joined, by GROUP_FORMED
 * {group_info {gid, tids in rank order, owner, placement}} with the join's
 * req_id, or by GROUP_FAILED {status, group_failed.why: the owner's
 * words, kept for colls_errmsg}.  The reply is checked (as many tids
 * as the size, this task among them exactly once) before a colls_group_t
 * exists.  Leaving sends GROUP_LEAVE {group, group_leave.gid} and frees the
 * handle; there is no reply.  A join cut short by colls_set_timeout()
 * returns COLLS_ETIMEDOUT but stays pending in the daemons until the task
 * detaches (a second join of the same name by this task is
 * COLLS_EMEMBER).
 *
 * Options live in the handle and travel in every COLL_REQ: the mode, the
 * compression mode and one forced algorithm per operation.  The forced
 * algorithms start from the environment (COLLS_ALG_<OP>, read when the
 * group is joined); COLLS_TRACE=1 is read then too.
 *
 * API layer (internal.h): may call ctl.c, colls.c's loop and the
 * connection layer (conn.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "proto/collop.h"

/* the environment, scanned for misspelt COLLS_ALG_* names (POSIX) */
extern char **environ;

/* The variable forcing op's algorithm: COLLS_ALG_ and op's name
   (proto/collop.h) upper-cased, e.g. COLLS_ALG_REDUCE_SCATTER. */
void
colls__alg_env_var(char *var, size_t cap, int op)
{
    char *p;

    snprintf(var, cap, "COLLS_ALG_%s", collop_name(op));
    for (p = var; *p != '\0'; p++)
        *p = (char)toupper((unsigned char)*p);
}

/*
 * 0 if spec is a valid algorithm spec: "name" or "name:segment_bytes",
 * name made of [a-z0-9_] (at least one), segment a decimal number > 0, at
 * most COLLS__ALG_SPEC_MAX bytes in all; COLLS_EINVAL otherwise.  Whether
 * the name exists is for the daemon to say (it falls back and counts it).
 */
int
colls__alg_spec_check(const char *spec)
{
    const char *p = spec;
    unsigned long long seg = 0;

    if (spec == NULL || strlen(spec) > COLLS__ALG_SPEC_MAX)
        return COLLS_EINVAL;
    while (islower((unsigned char)*p) || isdigit((unsigned char)*p) ||
           *p == '_')
        p++;
    if (p == spec)
        return COLLS_EINVAL;
    if (*p == '\0')
        return 0;
    if (*p++ != ':' || !isdigit((unsigned char)*p))
        return COLLS_EINVAL;
    while (isdigit((unsigned char)*p)) {
        seg = seg * 10 + (unsigned)(*p - '0');
        if (seg > UINT32_MAX)
            return COLLS_EINVAL;
        p++;
    }
    return *p == '\0' && seg > 0 ? 0 : COLLS_EINVAL;
}

/* 0 if name can name a group: 1..COLLS__GROUP_NAME_MAX printable bytes. */
static int
group_name_check(const char *name)
{
    size_t i, n;

    if (name == NULL)
        return COLLS_EINVAL;
    n = strlen(name);
    if (n == 0 || n > COLLS__GROUP_NAME_MAX)
        return COLLS_EINVAL;
    for (i = 0; i < n; i++)
        if (!isgraph((unsigned char)name[i]))
            return COLLS_EINVAL;
    return 0;
}

/*
 * A COLLS_ALG_* variable of the environment that names no operation (a
 * misspelt COLLS_ALG_ALLREDCE would otherwise be ignored): COLLS_EINVAL
 * with the valid names in c->errmsg (for colls_errmsg) and on stderr.
 * 0 if every one names an operation.
 */
static int
group_env_unknown(colls_t *c)
{
    char var[64];
    size_t o, n;
    char **e;
    int op, w;

    for (e = environ; *e != NULL; e++) {
        if (strncmp(*e, "COLLS_ALG_", 10) != 0)
            continue;
        n = strcspn(*e, "=");
        for (op = 0; op < COLLS_COLL_MAX; op++) {
            colls__alg_env_var(var, sizeof(var), op);
            if (strlen(var) == n && strncmp(*e, var, n) == 0)
                break;
        }
        if (op < COLLS_COLL_MAX)
            continue;
        w = snprintf(c->errmsg, sizeof(c->errmsg),
                     "%.*s: no such operation (COLLS_ALG_<OP>, OP one of:",
                     (int)(n < 64 ? n : 64), *e);
        o = w > 0 ? (size_t)w : 0; /* cut: nothing to add */
        for (op = 0; op < COLLS_COLL_MAX && o < sizeof(c->errmsg); op++) {
            colls__alg_env_var(var, sizeof(var), op);
            w = snprintf(c->errmsg + o, sizeof(c->errmsg) - o, " %s", var + 10);
            o += w > 0 ? (size_t)w : 0;
        }
        if (o < sizeof(c->errmsg))
            snprintf(c->errmsg + o, sizeof(c->errmsg) - o, ")");
        fprintf(stderr, "libcolls: %s\n", c->errmsg);
        return COLLS_EINVAL;
    }
    return 0;
}

/*
 * Fills g's forced algorithms from COLLS_ALG_<OP>, its trace flag from
 * COLLS_TRACE and the largest direct collective from COLLS_DIRECT_MAX.
 * COLLS_EINVAL (naming the variable on stderr and in colls_errmsg) if a
 * variable holds an invalid spec or names no operation, so a typo does not go
 * unnoticed.  Whether a well-formed name is an algorithm the daemon says at the
 * first collective.
 */
static int
group_read_env(struct colls_group *g)
{
    const char *tr = getenv("COLLS_TRACE");
    char var[64];
    int op;

    const char *dm = getenv("COLLS_DIRECT_MAX");
    char *end;
    unsigned long long dv;

    g->trace = tr != NULL && strcmp(tr, "1") == 0;
    if (group_env_unknown(g->c) < 0)
        return COLLS_EINVAL;
    g->direct_max = COLLS__DIRECT_MAX;
    if (dm != NULL && dm[0] != '\0') {
        errno = 0;
        dv = strtoull(dm, &end, 10);
        if (*end != '\0' || errno != 0 || dm[0] == '-' || dv > SIZE_MAX) {
            snprintf(g->c->errmsg, sizeof(g->c->errmsg),
                     "COLLS_DIRECT_MAX=%s is not a number of bytes", dm);
            fprintf(stderr, "libcolls: %s\n", g->c->errmsg);
            return COLLS_EINVAL;
        }
        g->direct_max = (size_t)dv;
    }
    for (op = 0; op < COLLS_COLL_MAX; op++) {
        const char *v;
        colls__alg_env_var(var, sizeof(var), op);
        v = getenv(var);
        if (v == NULL || v[0] == '\0')
            continue;
        if (colls__alg_spec_check(v) < 0) {
            snprintf(g->c->errmsg, sizeof(g->c->errmsg),
                     "%s=%s is not an algorithm spec "
                     "(name or name:segment_bytes)",
                     var, v);
            fprintf(stderr, "libcolls: %s\n", g->c->errmsg);
            return COLLS_EINVAL;
        }
        snprintf(g->alg[op], sizeof(g->alg[op]), "%s", v);
        g->alg_env |= 1u << op;
    }
    return 0;
}

/*
 * Takes the member list of a GROUP_FORMED reply into g.  COLLS_EPROTO if
 * it does not describe a group of g->size members holding this task once.
 */
static int
group_apply_info(struct colls_group *g, const Envelope *rep)
{
    const GroupInfo *gi;
    size_t i;

    if (rep->kind != KIND__GROUP_FORMED ||
        rep->body_case != ENVELOPE__BODY_GROUP_INFO)
        return COLLS_EPROTO;
    gi = rep->group_info;
    if (gi->n_tids != (size_t)g->size || gi->gid == 0)
        return COLLS_EPROTO;
    g->tids = malloc((size_t)g->size * sizeof(*g->tids));
    if (g->tids == NULL)
        return COLLS_ENOMEM;
    g->rank = -1;
    for (i = 0; i < gi->n_tids; i++) {
        g->tids[i] = gi->tids[i];
        if (gi->tids[i] != g->c->conn.tid)
            continue;
        if (g->rank >= 0)
            return COLLS_EPROTO;
        g->rank = (int)i;
    }
    if (g->rank < 0)
        return COLLS_EPROTO;
    g->gid = gi->gid;
    /* one member per host: direct collectives pay no hop that the
       daemons' hierarchy would save (dcoll.c); a bit per hid (12 bits of
       a tid) finds a second member of a host in one pass */
    {
        uint8_t seen[(((uint32_t)UINT32_MAX >> 20) + 1) / 8] = {0};

        g->one_per_host = 1;
        for (i = 0; i < gi->n_tids && g->one_per_host; i++) {
            int hid = COLLS_TID_HID(gi->tids[i]);

            if (seen[hid / 8] & (1u << (hid % 8)))
                g->one_per_host = 0;
            seen[hid / 8] |= (uint8_t)(1u << (hid % 8));
        }
    }
    g->owner = gi->owner;
    return 0;
}

int
colls_group_join_placed(colls_t *c, const char *name, int size, int placement,
                        colls_group_t **out)
{
    struct colls_group *g;
    Envelope e, *rep = NULL;
    GroupJoin gj = GROUP_JOIN__INIT;
    int rc;

    if (out != NULL)
        *out = NULL;
    if (c == NULL || out == NULL || size < 1 ||
        (placement != COLLS_PLACE_CONTIGUOUS &&
         placement != COLLS_PLACE_ROUNDROBIN))
        return COLLS_EINVAL;
    rc = group_name_check(name);
    if (rc < 0)
        return rc;
    g = calloc(1, sizeof(*g));
    if (g == NULL)
        return COLLS_ENOMEM;
    g->c = c;
    g->size = size;
    g->placement = placement;
    g->mode = COLLS_MODE_AUTO;
    g->compress = COLLS_COMPRESS_OFF;
    g->last_mode = COLLS_MODE_AUTO;
    snprintf(g->name, sizeof(g->name), "%s", name);
    rc = group_read_env(g);
    if (rc < 0)
        goto fail;
    envelope_init(&e);
    e.kind = KIND__GROUP_JOIN;
    e.group = g->name;
    gj.size = size;
    gj.placement = (uint32_t)placement;
    e.body_case = ENVELOPE__BODY_GROUP_JOIN;
    e.group_join = &gj;
    rc = colls__ctl_call(c, &e, &rep);
    if (rc < 0)
        goto fail;
    rc = group_apply_info(g, rep);
    envelope_free(rep);
    if (rc < 0)
        goto fail;
    *out = g;
    return g->rank;
fail:
    free(g->tids);
    free(g);
    return rc;
}

int
colls_group_join(colls_t *c, const char *name, int size, colls_group_t **out)
{
    return colls_group_join_placed(c, name, size, COLLS_PLACE_CONTIGUOUS, out);
}

int
colls_group_rank(const colls_group_t *g)
{
    return g != NULL ? g->rank : COLLS_EINVAL;
}

int
colls_group_size(const colls_group_t *g)
{
    return g != NULL ? g->size : COLLS_EINVAL;
}

colls_tid_t
colls_group_tid(const colls_group_t *g, int r)
{
    if (g == NULL || r < 0 || r >= g->size)
        return 0;
    return g->tids[r];
}

/*
 * Sends GROUP_LEAVE and frees g whatever happens.  The request carries a
 * fresh req_id so that no stray reply can be taken for another request's.
 * 0, or why the request could not be written (g is freed all the same).
 */
int
colls_group_leave(colls_group_t *g)
{
    colls_t *c;
    GroupLeave gl = GROUP_LEAVE__INIT;
    Envelope e;
    int rc;

    if (g == NULL)
        return COLLS_EINVAL;
    c = g->c;
    colls__coll_drain(c, g); /* operations that returned early */
    envelope_init(&e);
    e.kind = KIND__GROUP_LEAVE;
    e.src = c->conn.tid;
    e.group = g->name;
    gl.gid = g->gid;
    e.body_case = ENVELOPE__BODY_GROUP_LEAVE;
    e.group_leave = &gl;
    e.req_id = colls__conn_req_id(&c->conn);
    rc = c->conn.daemon != NULL
             ? colls__write_env(c->conn.daemon, &e, NULL, 0, NULL)
             : (c->conn.err ? c->conn.err : COLLS_ENOTCONN);
    if (rc == 0)
        colls__poll(c);
    colls__dcoll_leave(g);
    colls__hcoll_free(g);
    free(g->tids);
    free(g);
    return rc;
}

int
colls_group_set_mode(colls_group_t *g, int mode)
{
    if (g == NULL || (mode != COLLS_MODE_AUTO && mode != COLLS_MODE_HIER &&
                      mode != COLLS_MODE_FLAT && mode != COLLS_MODE_DIRECT))
        return COLLS_EINVAL;
    g->mode = mode;
    return 0;
}

int
colls_group_set_alg(colls_group_t *g, int op, const char *spec)
{
    if (g == NULL || op < 0 || op >= COLLS_COLL_MAX)
        return COLLS_EINVAL;
    if (spec == NULL || spec[0] == '\0') {
        g->alg[op][0] = '\0';
        g->alg_env &= ~(1u << op);
        return 0;
    }
    if (colls__alg_spec_check(spec) < 0)
        return COLLS_EINVAL;
    snprintf(g->alg[op], sizeof(g->alg[op]), "%s", spec);
    g->alg_env &= ~(1u << op);
    return 0;
}

int
colls_group_set_compress(colls_group_t *g, int mode)
{
    if (g == NULL || (mode != COLLS_COMPRESS_OFF && mode != COLLS_COMPRESS_ON &&
                      mode != COLLS_COMPRESS_AUTO))
        return COLLS_EINVAL;
    g->compress = mode;
    return 0;
}

/* Both wait for the results of operations that returned early
   (docs/collectives.md, "Completion"). */
const char *
colls_group_last_alg(const colls_group_t *g)
{
    if (g == NULL)
        return "";
    colls__coll_settle(g);
    return g->last_alg;
}

int
colls_group_last_mode(const colls_group_t *g)
{
    if (g == NULL)
        return COLLS_EINVAL;
    colls__coll_settle(g);
    return g->last_mode;
}
