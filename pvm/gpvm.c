/*
 * gpvm.c -- libgpvm3: PVM's dynamic groups on collsd.
 *
 * Membership lives in the group server pvmgs (pvmgs.c, protocol in
 * pvmgs.h), found as the pvmgs task of lowest tid and started through
 * colls_spawn on the lowest hid when there is none (gp_call copes with two
 * started at once).  The collectives
 * (pvm_reduce, pvm_gather, pvm_scatter, and pvm_barrier of a frozen
 * group) run as collsd collectives over a collsd group formed for the
 * membership they see: named "pvm.<group>.<generation>", joined by every
 * member on its first collective of that generation and left when the
 * generation changes.  collsd ranks are placed per host; instance numbers
 * are PVM's, and results are put back in instance order.
 *
 * pvm_reduce with PvmSum/PvmProduct/PvmMax/PvmMin runs collsd's reduction
 * (complex products and extrema excepted); any other function is applied
 * here: the data is gathered to the root and reduced serially in instance
 * order with PVM's signature, func(&datatype, x, y, &count, &info), x op= y.
 * pvm_bcast sends the active send buffer to every other member, received
 * with pvm_recv.  A frozen group's membership is kept here (pvm_freezegroup)
 * and asked no more.  A dynamic group's table is kept too, and trusted
 * (gp_trusted) until the server announces a newer generation
 * (PVMGS_TAG_GEN, sent to the members before a join or leave is
 * answered): a barrier whose count is its size, and the collectives, then
 * go to collsd without asking the server.  A collective that runs on a
 * trusted table while a member leaves fails (COLLS_EPEERDEAD, as PVM's
 * could not complete either); a barrier is then done through the server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvmgs.h"
#include "pvmint.h"

/* What this task knows of one group. */
struct gp_group {
    char name[PVMGS_NAME_MAX + 1];
    int frozen, gen;
    int valid; /* the table is the server's latest (no newer generation
                  announced): collectives use it without asking */
    int *tids; /* by instance, 0: free */
    int ninst;
    colls_group_t *cg; /* collsd group of generation cggen */
    int cggen;
    struct gp_group *next;
};

static struct gp_group *gp_groups;
static int gp_gs; /* the server's tid, 0: not known */

static void gp_exit(void);
static void gp_msg(colls_msg_t *m, const colls_status_t *st);

static int
gp_name_ok(const char *group)
{
    return group != NULL && group[0] != '\0' && strlen(group) <= PVMGS_NAME_MAX;
}

/* The lowest tid of a task named pvmgs, 0 if none, or a PVM code. */
static int
gp_find_server(colls_t *c)
{
    colls_taskinfo_t *ti;
    int i, n, rc, best = 0;

    rc = colls_tasks(c, COLLS_ANY, &ti, &n);
    if (rc < 0)
        return pvm__code(rc);
    for (i = 0; i < n; i++)
        if (strcmp(ti[i].name, PVMGS_NAME) == 0 &&
            (best == 0 || (int)ti[i].tid < best))
            best = (int)ti[i].tid;
    colls_free(ti);
    return best;
}

/*
 * Starts pvmgs ($PVMGS names the program, default "pvmgs") on the host
 * of lowest hid: its tid, or a PVM code.
 */
static int
gp_start_server(colls_t *c, const char *call)
{
    colls_hostinfo_t *hs;
    const char *prog = getenv("PVMGS");
    char where[16];
    colls_tid_t t;
    int i, n, low = -1, rc;

    rc = colls_hosts(c, &hs, &n);
    if (rc < 0)
        return pvm__fail(call, pvm__code(rc));
    for (i = 0; i < n; i++)
        if (hs[i].state == COLLS_HOST_UP && (low < 0 || hs[i].hid < low))
            low = hs[i].hid;
    colls_free(hs);
    snprintf(where, sizeof(where), "%d", low);
    rc = colls_spawn(c, prog != NULL ? prog : PVMGS_NAME, NULL,
                     low >= 0 ? COLLS_SPAWN_HOST : COLLS_SPAWN_ANY, where, 1,
                     &t);
    if (rc < 0 || (int32_t)t < 0) {
        fprintf(stderr,
                "libgpvm [t%x]: %s(): cannot start the group server %s: "
                "%s\n",
                (unsigned)pvm__task.tid, call, prog ? prog : PVMGS_NAME,
                colls_strerror(rc < 0 ? rc : (int32_t)t));
        return pvm__fail(call, PvmSysErr);
    }
    rc = gp_find_server(c);
    return rc > 0 ? rc : (int)t;
}

/* Finds the server, or starts one: 0 with gp_gs set, or a PVM code. */
static int
gp_server(colls_t *c, const char *call)
{
    int rc = gp_find_server(c);

    if (rc == 0)
        rc = gp_start_server(c, call);
    if (rc < 0)
        return rc;
    gp_gs = rc;
    return 0;
}

/* Is task tid still listed by the daemons? */
static int
gp_alive(colls_t *c, int tid)
{
    colls_taskinfo_t *ti;
    int i, n, alive = 0;

    if (colls_tasks(c, COLLS_TID_HID(tid), &ti, &n) < 0)
        return 1; /* cannot tell: keep waiting */
    for (i = 0; i < n; i++)
        alive |= (int)ti[i].tid == tid;
    colls_free(ti);
    return alive;
}

/*
 * One request to the server; the reply message in *rep (free it) when
 * rep is not NULL.  The server's result (>= 0 or a PVM code).
 *
 * The wait for the reply looks every second whether the server is still
 * there: a pvmgs started at the same time as another one exits before it
 * serves anything (pvmgs.c), and a client that picked it sends again to
 * the one that stayed.
 */
static int
gp_call(const char *call, int op, const char *group, int arg, colls_msg_t **rep)
{
    colls_t *c = pvm__colls(call);
    colls_msg_t *m, *r = NULL;
    int32_t v[2] = {op, arg}, res;
    int rc, send = 1;

    if (c == NULL)
        return PvmSysErr;
    pvm__task.groups_exit = gp_exit;
    pvm__task.groups_msg = gp_msg;
    if (gp_gs <= 0 && (rc = gp_server(c, call)) < 0)
        return rc;
    m = colls_msg_new(COLLS_ENC_DEFAULT);
    if (m == NULL)
        return pvm__fail(call, PvmNoMem);
    rc = colls_pack(m, COLLS_INT32, &v[0], 1);
    if (rc == 0)
        rc = pvmgs_pkstr(m, group);
    if (rc == 0)
        rc = colls_pack(m, COLLS_INT32, &v[1], 1);
    while (rc == 0) {
        if (send)
            rc = colls_msg_send(c, (colls_tid_t)gp_gs, PVMGS_TAG_REQ, m);
        send = 0;
        if (rc == 0) {
            colls_set_timeout(c, 1000);
            rc = colls_msg_recv(c, (colls_tid_t)gp_gs, PVMGS_TAG_REP, &r);
            colls_set_timeout(c, -1);
        }
        if (rc == 0)
            break;
        if (rc == COLLS_ETIMEDOUT && gp_alive(c, gp_gs)) {
            rc = 0;
            continue;
        }
        if (rc != COLLS_ETIMEDOUT && rc != COLLS_EPEERDEAD &&
            rc != COLLS_ENOENT)
            break;
        /* the server is gone: the one there is now, asked again */
        rc = gp_server(c, call);
        if (rc < 0) {
            colls_msg_free(m);
            gp_gs = 0;
            return rc;
        }
        send = 1;
    }
    colls_msg_free(m);
    if (rc == 0)
        rc = colls_unpack(r, COLLS_INT32, &res, 1);
    if (rc < 0) {
        colls_msg_free(r);
        gp_gs = 0; /* find or start one next time */
        return pvm__fail(call, pvm__code(rc));
    }
    if (rep != NULL && res >= 0)
        *rep = r;
    else
        colls_msg_free(r);
    return res < 0 ? pvm__fail(call, res) : res;
}

static struct gp_group *
gp_find(const char *group)
{
    struct gp_group *g;

    for (g = gp_groups; g != NULL; g = g->next)
        if (strcmp(g->name, group) == 0)
            return g;
    return NULL;
}

/* Forgets group g (leaves its collsd group). */
static void
gp_forget(struct gp_group *g)
{
    struct gp_group **pp;

    for (pp = &gp_groups; *pp != g; pp = &(*pp)->next)
        ;
    *pp = g->next;
    if (g->cg != NULL)
        colls_group_leave(g->cg);
    free(g->tids);
    free(g);
}

/* pvm_exit: the collsd groups are left, the server forgotten. */
static void
gp_exit(void)
{
    while (gp_groups != NULL)
        gp_forget(gp_groups);
    gp_gs = 0;
}

/* Reads the member table of reply r into the group record (made here). */
static int
gp_table(const char *call, const char *group, colls_msg_t *r,
         struct gp_group **out)
{
    struct gp_group *g = gp_find(group);
    int32_t hdr[3];
    int *tids = NULL;

    if (colls_unpack(r, COLLS_INT32, hdr, 3) < 0 || hdr[2] < 0 ||
        hdr[2] > 1 << 20 ||
        (tids = calloc((size_t)hdr[2] + 1, sizeof(int))) == NULL ||
        colls_unpack(r, COLLS_INT32, tids, (size_t)hdr[2]) < 0) {
        free(tids);
        return pvm__fail(call, PvmBadMsg);
    }
    if (g == NULL) {
        g = calloc(1, sizeof(*g));
        if (g == NULL) {
            free(tids);
            return pvm__fail(call, PvmNoMem);
        }
        snprintf(g->name, sizeof(g->name), "%s", group);
        g->next = gp_groups;
        gp_groups = g;
    }
    free(g->tids);
    g->tids = tids;
    g->ninst = hdr[2];
    g->frozen = hdr[0];
    g->gen = hdr[1];
    g->valid = 1;
    *out = g;
    return 0;
}

/*
 * libgpvm3's own message m (libpvm3's receives hand them here): a
 * PVMGS_TAG_GEN makes the table of an older generation untrusted (the
 * announcements of generations the table already has, still queued when
 * it came, change nothing); stale replies are dropped.  m is freed.
 */
static void
gp_msg(colls_msg_t *m, const colls_status_t *st)
{
    char name[PVMGS_NAME_MAX + 1];
    struct gp_group *g;
    int32_t gen;

    if (st->tag == PVMGS_TAG_GEN && pvmgs_upkstr(m, name, sizeof(name)) == 0 &&
        colls_unpack(m, COLLS_INT32, &gen, 1) == 0 &&
        (g = gp_find(name)) != NULL && !g->frozen && gen > g->gen)
        g->valid = 0;
    colls_msg_free(m);
}

/* Takes in the generation announcements that have arrived. */
static void
gp_drain(colls_t *c)
{
    colls_status_t st;
    colls_msg_t *m;

    while (colls_probe(c, (colls_tid_t)COLLS_ANY, PVMGS_TAG_GEN, 0, &st) == 1 &&
           colls_msg_recv(c, st.source, PVMGS_TAG_GEN, &m) == 0)
        gp_msg(m, &st);
}

/*
 * May a dynamic group's table be used without asking the server?  When
 * no newer generation was announced and the collsd group of its
 * generation is formed: every member formed it together (after a
 * barrier of all, or in a collective), so a member that leaves since
 * makes the others' collectives on it fail instead of waiting for it.
 */
static int
gp_trusted(const struct gp_group *g)
{
    return g->valid && g->cg != NULL && g->cggen == g->gen;
}

/* The membership of group: the frozen copy, a trusted table (above), or
   the server's now. */
static int
gp_members(const char *call, const char *group, struct gp_group **out)
{
    struct gp_group *g = gp_find(group);
    colls_msg_t *r;
    int rc;

    if (!gp_name_ok(group))
        return pvm__fail(call, PvmNullGroup);
    if (g != NULL && !g->frozen && pvm__task.c != NULL)
        gp_drain(pvm__task.c);
    if (g != NULL && (g->frozen || gp_trusted(g))) {
        *out = g;
        return 0;
    }
    rc = gp_call(call, PVMGS_MEMBERS, group, 0, &r);
    if (rc < 0)
        return rc;
    rc = gp_table(call, group, r, out);
    colls_msg_free(r);
    return rc;
}

static int
gp_inst(const struct gp_group *g, int tid)
{
    int i;

    for (i = 0; i < g->ninst; i++)
        if (g->tids[i] == tid)
            return i;
    return -1;
}

static int
gp_count(const struct gp_group *g)
{
    int i, n = 0;

    for (i = 0; i < g->ninst; i++)
        n += g->tids[i] != 0;
    return n;
}

/* The collsd group of g's membership, formed on first use; 0 or a code. */
static int
gp_cgroup(const char *call, struct gp_group *g)
{
    char name[PVMGS_NAME_MAX + 32];
    colls_t *c = pvm__colls(call);
    int rc;

    if (c == NULL)
        return PvmSysErr;
    if (g->cg != NULL && g->cggen == g->gen)
        return 0;
    if (g->cg != NULL)
        colls_group_leave(g->cg);
    g->cg = NULL;
    snprintf(name, sizeof(name), "pvm.%s.%d", g->name, g->gen);
    rc = colls_group_join(c, name, gp_count(g), &g->cg);
    if (rc < 0) {
        g->cg = NULL;
        return pvm__fail(call, pvm__code(rc));
    }
    g->cggen = g->gen;
    return 0;
}

/* The collsd rank of tid in g's collsd group, or -1. */
static int
gp_rank(const struct gp_group *g, int tid)
{
    int r, n = colls_group_size(g->cg);

    for (r = 0; r < n; r++)
        if ((int)colls_group_tid(g->cg, r) == tid)
            return r;
    return -1;
}

/*
 * Common start of a collective: the membership, this task a member, root
 * an instance, the collsd group formed; *rootrank its rank there.
 */
static int
gp_coll_start(const char *call, const char *group, int root,
              struct gp_group **gp, int *rootrank)
{
    struct gp_group *g;
    int rc;

    rc = gp_members(call, group, &g);
    if (rc < 0)
        return rc;
    if (gp_inst(g, pvm__task.tid) < 0)
        return pvm__fail(call, PvmNotInGroup);
    if (root < 0 || root >= g->ninst || g->tids[root] == 0)
        return pvm__fail(call, PvmNoInst);
    rc = gp_cgroup(call, g);
    if (rc < 0)
        return rc;
    *rootrank = gp_rank(g, g->tids[root]);
    *gp = g;
    return 0;
}

/* ---- membership --------------------------------------------------------- */

int
pvm_joingroup(char *group)
{
    struct gp_group *g;

    if (!gp_name_ok(group))
        return pvm__fail("pvm_joingroup", PvmNullGroup);
    g = gp_find(group);
    if (g != NULL && g->frozen)
        return pvm__fail("pvm_joingroup", PvmDenied);
    return gp_call("pvm_joingroup", PVMGS_JOIN, group, 0, NULL);
}

int
pvm_lvgroup(char *group)
{
    struct gp_group *g;
    int rc;

    if (!gp_name_ok(group))
        return pvm__fail("pvm_lvgroup", PvmNullGroup);
    rc = gp_call("pvm_lvgroup", PVMGS_LEAVE, group, 0, NULL);
    g = gp_find(group);
    if (g != NULL)
        gp_forget(g);
    return rc;
}

int
pvm_getinst(char *group, int tid)
{
    struct gp_group *g = gp_find(group != NULL ? group : "");
    int i;

    if (!gp_name_ok(group))
        return pvm__fail("pvm_getinst", PvmNullGroup);
    if (g != NULL && g->frozen) {
        i = gp_inst(g, tid);
        return i >= 0 ? i : pvm__fail("pvm_getinst", PvmNotInGroup);
    }
    return gp_call("pvm_getinst", PVMGS_GETINST, group, tid, NULL);
}

int
pvm_gettid(char *group, int inst)
{
    struct gp_group *g = gp_find(group != NULL ? group : "");

    if (!gp_name_ok(group))
        return pvm__fail("pvm_gettid", PvmNullGroup);
    if (g != NULL && g->frozen) {
        if (inst < 0 || inst >= g->ninst || g->tids[inst] == 0)
            return pvm__fail("pvm_gettid", PvmNoInst);
        return g->tids[inst];
    }
    return gp_call("pvm_gettid", PVMGS_GETTID, group, inst, NULL);
}

int
pvm_gsize(char *group)
{
    struct gp_group *g = gp_find(group != NULL ? group : "");

    if (!gp_name_ok(group))
        return pvm__fail("pvm_gsize", PvmNullGroup);
    if (g != NULL && g->frozen)
        return gp_count(g);
    return gp_call("pvm_gsize", PVMGS_GSIZE, group, 0, NULL);
}

int
pvm_freezegroup(char *group, int size)
{
    struct gp_group *g;
    colls_msg_t *r;
    int rc;

    if (!gp_name_ok(group))
        return pvm__fail("pvm_freezegroup", PvmNullGroup);
    if (size < -1 || size == 0)
        return pvm__fail("pvm_freezegroup", PvmBadParam);
    rc = gp_call("pvm_freezegroup", PVMGS_FREEZE, group, size, &r);
    if (rc < 0)
        return rc;
    rc = gp_table("pvm_freezegroup", group, r, &g);
    colls_msg_free(r);
    return rc < 0 ? rc : PvmOk;
}

/* ---- synchronisation and data movement ---------------------------------- */

/*
 * Through collsd when the group is frozen, or its table is trusted
 * (gp_trusted), and count is its size; a collsd barrier that fails (a
 * member left) is done again through the server.  Otherwise the server
 * counts the arrivals, answering every waiter with the same table; when
 * count was the size, all the members are there and form the table's
 * collsd group before returning, so the next barrier is collsd's.
 */
int
pvm_barrier(char *group, int count)
{
    struct gp_group *g = gp_find(group != NULL ? group : "");
    colls_msg_t *r;
    int rc;

    if (!gp_name_ok(group))
        return pvm__fail("pvm_barrier", PvmNullGroup);
    if (count < -1 || count == 0)
        return pvm__fail("pvm_barrier", PvmBadParam);
    if (g != NULL && !g->frozen && pvm__task.c != NULL)
        gp_drain(pvm__task.c);
    if (g != NULL && g->frozen && (count == -1 || count == gp_count(g))) {
        if (gp_inst(g, pvm__task.tid) < 0)
            return pvm__fail("pvm_barrier", PvmNotInGroup);
        rc = gp_cgroup("pvm_barrier", g);
        if (rc < 0)
            return rc;
        rc = colls_barrier(g->cg);
        return rc < 0 ? pvm__fail("pvm_barrier", pvm__code(rc)) : PvmOk;
    }
    if (g != NULL && gp_trusted(g) && gp_inst(g, pvm__task.tid) >= 0 &&
        (count == -1 || count == gp_count(g))) {
        if (colls_barrier(g->cg) == 0)
            return PvmOk;
        g->valid = 0; /* a member left: the server counts */
    }
    rc = gp_call("pvm_barrier", PVMGS_BARRIER, group, count, &r);
    if (rc < 0)
        return rc;
    rc = gp_table("pvm_barrier", group, r, &g);
    colls_msg_free(r);
    if (rc < 0)
        return rc;
    /* every member is here with this table: form its collsd group now */
    if (!g->frozen && gp_inst(g, pvm__task.tid) >= 0 &&
        (count == -1 || count == gp_count(g)) &&
        gp_cgroup("pvm_barrier", g) < 0)
        g->valid = 0;
    return PvmOk;
}

int
pvm_bcast(char *group, int msgtag)
{
    struct gp_group *g;
    int rc;

    rc = gp_members("pvm_bcast", group, &g);
    if (rc < 0)
        return rc;
    return pvm_mcast(g->tids, g->ninst, msgtag) < 0 ? pvm_errno : PvmOk;
}

/* collsd's operator for a predefined function on a PVM datatype, or -1:
   apply func here. */
static int
gp_builtin_op(void (*func)(int *, void *, void *, int *, int *), int dt)
{
    int cplx = dt == PVM_CPLX || dt == PVM_DCPLX;

    if (func == PvmSum)
        return dt == PVM_BYTE ? -1 : COLLS_SUM;
    if (cplx)
        return -1;
    if (func == PvmProduct)
        return dt == PVM_BYTE ? -1 : COLLS_PROD;
    if (func == PvmMax)
        return COLLS_MAX;
    if (func == PvmMin)
        return COLLS_MIN;
    return -1;
}

int
pvm_reduce(void (*func)(int *, void *, void *, int *, int *), void *data,
           int count, int datatype, int msgtag, char *group, int root)
{
    static const char call[] = "pvm_reduce";
    struct gp_group *g;
    size_t esz = pvm__dtsize(datatype);
    int per, cd = pvm__dtype(datatype, &per), op, rr, rc, i, r, info = 0;
    int me;
    char *all = NULL, *acc;

    if (func == NULL || data == NULL || count < 0 || cd < 0 || msgtag < 0)
        return pvm__fail(call, PvmBadParam);
    if ((func == PvmSum || func == PvmProduct) && datatype == PVM_BYTE)
        return pvm__fail(call, PvmBadParam);
    rc = gp_coll_start(call, group, root, &g, &rr);
    if (rc < 0)
        return rc;
    me = colls_group_rank(g->cg);
    op = gp_builtin_op(func, datatype);
    if (op >= 0) {
        acc = malloc(count ? (size_t)count * esz : 1);
        if (acc == NULL)
            return pvm__fail(call, PvmNoMem);
        rc = colls_reduce(g->cg, data, acc, (size_t)count * (size_t)per, cd, op,
                          rr);
        if (rc == 0 && me == rr)
            memcpy(data, acc, (size_t)count * esz);
        free(acc);
        return rc < 0 ? pvm__fail(call, pvm__code(rc)) : PvmOk;
    }
    /* a function applied here: gather to the root, reduce in instance
       order */
    if (me == rr) {
        all = malloc((size_t)colls_group_size(g->cg) * (size_t)count * esz + 1);
        if (all == NULL)
            return pvm__fail(call, PvmNoMem);
    }
    rc = colls_gather(g->cg, data, all, (size_t)count * esz, COLLS_BYTE, rr);
    if (rc < 0) {
        free(all);
        return pvm__fail(call, pvm__code(rc));
    }
    if (me != rr)
        return PvmOk;
    acc = NULL;
    for (i = 0; i < g->ninst; i++) {
        if (g->tids[i] == 0)
            continue;
        r = gp_rank(g, g->tids[i]);
        if (acc == NULL) {
            acc = all + (size_t)r * (size_t)count * esz;
            continue;
        }
        func(&datatype, acc, all + (size_t)r * (size_t)count * esz, &count,
             &info);
        if (info < 0)
            break;
    }
    if (info >= 0 && acc != NULL)
        memcpy(data, acc, (size_t)count * esz);
    free(all);
    return info < 0 ? pvm__fail(call, info) : PvmOk;
}

/*
 * pvm_gather (gather set) and pvm_scatter: the root's buffer (all, in
 * instance order) is reordered into collsd rank order through a block
 * per member; mine is this member's count items.
 */
static int
gp_move(const char *call, int gather, void *all, void *mine, int count,
        int datatype, int msgtag, char *group, int root)
{
    struct gp_group *g;
    size_t esz = pvm__dtsize(datatype), blk, at;
    int per, cd = pvm__dtype(datatype, &per), rr, rc, i, me;
    char *tmp = NULL;

    if (cd < 0 || count < 0 || (mine == NULL && count > 0) || msgtag < 0)
        return pvm__fail(call, PvmBadParam);
    if (datatype == PVM_BYTE)
        cd = COLLS_BYTE;
    rc = gp_coll_start(call, group, root, &g, &rr);
    if (rc < 0)
        return rc;
    me = colls_group_rank(g->cg);
    blk = (size_t)count * esz;
    if (me == rr) {
        if (all == NULL)
            return pvm__fail(call, PvmBadParam);
        tmp = malloc((size_t)colls_group_size(g->cg) * blk + 1);
        if (tmp == NULL)
            return pvm__fail(call, PvmNoMem);
    }
    for (i = 0; !gather && me == rr && i < g->ninst; i++) {
        at = (size_t)gp_rank(g, g->tids[i]) * blk;
        if (g->tids[i] != 0)
            memcpy(tmp + at, (char *)all + (size_t)i * blk, blk);
    }
    if (gather)
        rc =
            colls_gather(g->cg, mine, tmp, (size_t)count * (size_t)per, cd, rr);
    else
        rc = colls_scatter(g->cg, tmp, mine, (size_t)count * (size_t)per, cd,
                           rr);
    for (i = 0; gather && rc == 0 && me == rr && i < g->ninst; i++) {
        at = (size_t)gp_rank(g, g->tids[i]) * blk;
        if (g->tids[i] != 0)
            memcpy((char *)all + (size_t)i * blk, tmp + at, blk);
    }
    free(tmp);
    return rc < 0 ? pvm__fail(call, pvm__code(rc)) : PvmOk;
}

int
pvm_gather(void *result, void *data, int count, int datatype, int msgtag,
           char *group, int root)
{
    return gp_move("pvm_gather", 1, result, data, count, datatype, msgtag,
                   group, root);
}

int
pvm_scatter(void *result, void *data, int count, int datatype, int msgtag,
            char *group, int root)
{
    return gp_move("pvm_scatter", 0, data, result, count, datatype, msgtag,
                   group, root);
}

/* ---- the predefined reduction functions ---------------------------------- */

/* Element-wise x[i] = f(x[i], y[i]) over every real PVM datatype. */
#define GP_REAL_CASES(F)                                                       \
    case PVM_BYTE:                                                             \
        F(char);                                                               \
        break;                                                                 \
    case PVM_SHORT:                                                            \
        F(short);                                                              \
        break;                                                                 \
    case PVM_USHORT:                                                           \
        F(unsigned short);                                                     \
        break;                                                                 \
    case PVM_INT:                                                              \
        F(int);                                                                \
        break;                                                                 \
    case PVM_UINT:                                                             \
        F(unsigned int);                                                       \
        break;                                                                 \
    case PVM_LONG:                                                             \
        F(long);                                                               \
        break;                                                                 \
    case PVM_ULONG:                                                            \
        F(unsigned long);                                                      \
        break;                                                                 \
    case PVM_FLOAT:                                                            \
        F(float);                                                              \
        break;                                                                 \
    case PVM_DOUBLE:                                                           \
        F(double);                                                             \
        break;

#define GP_LOOP(T, EXPR)                                                       \
    do {                                                                       \
        T *a = x;                                                              \
        const T *b = y;                                                        \
        int i_;                                                                \
        for (i_ = 0; i_ < *num; i_++)                                          \
            a[i_] = (T)(EXPR);                                                 \
    } while (0)

#define GP_SUM(T)  GP_LOOP(T, a[i_] + b[i_])
#define GP_PROD(T) GP_LOOP(T, a[i_] * b[i_])
#define GP_MAX(T)  GP_LOOP(T, a[i_] > b[i_] ? a[i_] : b[i_])
#define GP_MIN(T)  GP_LOOP(T, a[i_] < b[i_] ? a[i_] : b[i_])

/* Complex pairs: sums and products as complex numbers; max/min keep the
   pair of larger/smaller modulus. */
#define GP_CPLX(T, KIND)                                                       \
    do {                                                                       \
        T *a = x;                                                              \
        const T *b = y;                                                        \
        int i_;                                                                \
        for (i_ = 0; i_ < *num; i_++) {                                        \
            T ar = a[2 * i_], ai = a[2 * i_ + 1];                              \
            T br = b[2 * i_], bi = b[2 * i_ + 1];                              \
            T ma = ar * ar + ai * ai, mb = br * br + bi * bi;                  \
            switch (KIND) {                                                    \
            case 0:                                                            \
                a[2 * i_] = ar + br, a[2 * i_ + 1] = ai + bi;                  \
                break;                                                         \
            case 1:                                                            \
                a[2 * i_] = ar * br - ai * bi;                                 \
                a[2 * i_ + 1] = ar * bi + ai * br;                             \
                break;                                                         \
            case 2:                                                            \
                if (mb > ma)                                                   \
                    a[2 * i_] = br, a[2 * i_ + 1] = bi;                        \
                break;                                                         \
            default:                                                           \
                if (mb < ma)                                                   \
                    a[2 * i_] = br, a[2 * i_ + 1] = bi;                        \
            }                                                                  \
        }                                                                      \
    } while (0)

#define GP_FUNC(NAME, F, KIND)                                                 \
    void NAME(int *datatype, void *x, void *y, int *num, int *info)            \
    {                                                                          \
        *info = PvmOk;                                                         \
        switch (*datatype) {                                                   \
            GP_REAL_CASES(F)                                                   \
        case PVM_CPLX:                                                         \
            GP_CPLX(float, KIND);                                              \
            break;                                                             \
        case PVM_DCPLX:                                                        \
            GP_CPLX(double, KIND);                                             \
            break;                                                             \
        default:                                                               \
            *info = PvmBadParam;                                               \
        }                                                                      \
    }

GP_FUNC(PvmSum, GP_SUM, 0)
GP_FUNC(PvmProduct, GP_PROD, 1)
GP_FUNC(PvmMax, GP_MAX, 2)
GP_FUNC(PvmMin, GP_MIN, 3)
