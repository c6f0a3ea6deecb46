/*
 * pvmgs.c -- the group server of libgpvm3, PVM's pvmgs on collsd.
 *
 * One per virtual machine: libgpvm3 starts it (colls_spawn on the lowest
 * hid) on the first group call that finds none.  Of two started at once
 * one stays: each joins the collsd group PVMGS_LOCK of size 1 first, and
 * the one that does not get in exits before serving anything; a client
 * that picked it asks again (gpvm.c).
 *
 * It holds the dynamic groups: name, the tid of each instance number
 * (the lowest free number is given at join), a generation counted up by
 * every join and leave, the frozen flag, and the tasks waiting in a
 * barrier or a freeze.  A join or a leave is announced to the remaining
 * members (PVMGS_TAG_GEN) before it is answered.  A member that exits
 * (collsd's task-exit notification) leaves every group.  An empty group is
 * deleted; tasks waiting on it get PvmNoGroup.  Protocol: pvmgs.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvm3.h"
#include "pvmgs.h"

struct gs_group {
    char name[PVMGS_NAME_MAX + 1];
    int *tids; /* by instance; 0: free */
    int ninst, cap;
    int gen, frozen;
    int bcount; /* count of the barrier in progress, 0: none */
    int *bwait; /* tids waiting in the barrier */
    int nbwait;
    int fsize;  /* size asked by the freeze in progress */
    int *fwait; /* tids waiting in the freeze */
    int nfwait;
    struct gs_group *next;
};

static colls_t *gs_c;
static struct gs_group *gs_groups;
static int *gs_watched; /* tids with a task-exit notification asked */
static int gs_nwatched;

static void *
gs_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);

    if (q == NULL) {
        fprintf(stderr, "pvmgs: out of memory\n");
        exit(1);
    }
    return q;
}

static struct gs_group *
gs_find(const char *name)
{
    struct gs_group *g;

    for (g = gs_groups; g != NULL; g = g->next)
        if (strcmp(g->name, name) == 0)
            return g;
    return NULL;
}

static int
gs_size(const struct gs_group *g)
{
    int i, n = 0;

    for (i = 0; i < g->ninst; i++)
        n += g->tids[i] != 0;
    return n;
}

static int
gs_inst(const struct gs_group *g, int tid)
{
    int i;

    for (i = 0; i < g->ninst; i++)
        if (g->tids[i] == tid)
            return i;
    return -1;
}

/* A reply: result, and the member table when table is set. */
static void
gs_reply(int tid, int result, const struct gs_group *g, int table)
{
    colls_msg_t *m = colls_msg_new(COLLS_ENC_DEFAULT);
    int32_t hdr[4];

    if (m == NULL)
        return;
    hdr[0] = result;
    colls_pack(m, COLLS_INT32, hdr, 1);
    if (table && g != NULL) {
        hdr[0] = g->frozen;
        hdr[1] = g->gen;
        hdr[2] = g->ninst;
        colls_pack(m, COLLS_INT32, hdr, 3);
        colls_pack(m, COLLS_INT32, g->tids, (size_t)g->ninst);
    }
    colls_msg_send(gs_c, (colls_tid_t)tid, PVMGS_TAG_REP, m);
    colls_msg_free(m);
}

/* Answers every waiter of list (n) with result, empties it. */
static void
gs_release(int *list, int *n, int result, const struct gs_group *g, int table)
{
    int i;

    for (i = 0; i < *n; i++)
        gs_reply(list[i], result, g, table);
    *n = 0;
}

/* Tells every member of g its new generation (PVMGS_TAG_GEN). */
static void
gs_gen_notify(const struct gs_group *g)
{
    colls_msg_t *m = colls_msg_new(COLLS_ENC_DEFAULT);
    int32_t gen = g->gen;
    int i;

    if (m == NULL || pvmgs_pkstr(m, g->name) < 0 ||
        colls_pack(m, COLLS_INT32, &gen, 1) < 0) {
        colls_msg_free(m);
        return;
    }
    for (i = 0; i < g->ninst; i++)
        if (g->tids[i] != 0)
            colls_msg_send(gs_c, (colls_tid_t)g->tids[i], PVMGS_TAG_GEN, m);
    colls_msg_free(m);
}

/* Completes the barrier and the freeze of g when they can be. */
static void
gs_check(struct gs_group *g)
{
    if (g->bcount > 0 && g->nbwait >= g->bcount) {
        gs_release(g->bwait, &g->nbwait, 0, g, 1);
        g->bcount = 0;
    }
    if (g->fsize > 0 && g->nfwait >= g->fsize && gs_size(g) == g->fsize) {
        g->frozen = 1;
        g->gen++;
        gs_release(g->fwait, &g->nfwait, 0, g, 1);
        g->fsize = 0;
    }
}

static void
gs_watch(int tid)
{
    int i;

    for (i = 0; i < gs_nwatched; i++)
        if (gs_watched[i] == tid)
            return;
    gs_watched =
        gs_xrealloc(gs_watched, (size_t)(gs_nwatched + 1) * sizeof(int));
    gs_watched[gs_nwatched++] = tid;
    colls_notify(gs_c, COLLS_NOTIFY_TASK_EXIT, tid, PVMGS_TAG_EXIT);
}

static void
gs_drop(int *list, int *n, int tid)
{
    int i;

    for (i = 0; i < *n; i++)
        if (list[i] == tid) {
            list[i] = list[--*n];
            return;
        }
}

/* Takes tid out of g; deletes g when it is empty. */
static void
gs_leave(struct gs_group *g, int tid)
{
    struct gs_group **pp;
    int i = gs_inst(g, tid);

    if (i < 0)
        return;
    g->tids[i] = 0;
    while (g->ninst > 0 && g->tids[g->ninst - 1] == 0)
        g->ninst--;
    g->gen++;
    gs_drop(g->bwait, &g->nbwait, tid);
    gs_drop(g->fwait, &g->nfwait, tid);
    if (gs_size(g) > 0) {
        gs_gen_notify(g);
        gs_check(g);
        return;
    }
    gs_release(g->bwait, &g->nbwait, PvmNoGroup, NULL, 0);
    gs_release(g->fwait, &g->nfwait, PvmNoGroup, NULL, 0);
    for (pp = &gs_groups; *pp != g; pp = &(*pp)->next)
        ;
    *pp = g->next;
    free(g->tids);
    free(g->bwait);
    free(g->fwait);
    free(g);
}

static int
gs_join(const char *name, int tid)
{
    struct gs_group *g = gs_find(name);
    int i;

    if (g == NULL) {
        g = gs_xrealloc(NULL, sizeof(*g));
        memset(g, 0, sizeof(*g));
        snprintf(g->name, sizeof(g->name), "%s", name);
        g->next = gs_groups;
        gs_groups = g;
    }
    if (gs_inst(g, tid) >= 0)
        return PvmDupGroup;
    if (g->frozen)
        return PvmDenied;
    for (i = 0; i < g->ninst && g->tids[i] != 0; i++)
        ;
    if (i == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 8;
        g->tids = gs_xrealloc(g->tids, (size_t)g->cap * sizeof(int));
        g->bwait = gs_xrealloc(g->bwait, (size_t)g->cap * sizeof(int));
        g->fwait = gs_xrealloc(g->fwait, (size_t)g->cap * sizeof(int));
    }
    if (i == g->ninst)
        g->ninst++;
    g->tids[i] = tid;
    g->gen++;
    gs_gen_notify(g);
    gs_watch(tid);
    gs_check(g);
    return i;
}

/* One request from tid; answers it now or records it as waiting. */
static void
gs_request(int tid, int op, const char *name, int arg)
{
    struct gs_group *g = gs_find(name);
    int r;

    if (op == PVMGS_JOIN) {
        gs_reply(tid, gs_join(name, tid), NULL, 0);
        return;
    }
    if (g == NULL) {
        gs_reply(tid, PvmNoGroup, NULL, 0);
        return;
    }
    switch (op) {
    case PVMGS_LEAVE:
        if (gs_inst(g, tid) < 0) {
            gs_reply(tid, PvmNotInGroup, NULL, 0);
            return;
        }
        gs_leave(g, tid);
        gs_reply(tid, 0, NULL, 0);
        return;
    case PVMGS_GETINST:
        r = gs_inst(g, arg);
        gs_reply(tid, r >= 0 ? r : PvmNotInGroup, NULL, 0);
        return;
    case PVMGS_GETTID:
        r = arg >= 0 && arg < g->ninst ? g->tids[arg] : 0;
        gs_reply(tid, r > 0 ? r : PvmNoInst, NULL, 0);
        return;
    case PVMGS_GSIZE:
        gs_reply(tid, gs_size(g), NULL, 0);
        return;
    case PVMGS_MEMBERS:
        gs_reply(tid, 0, g, 1);
        return;
    case PVMGS_FREEZE:
        if (gs_inst(g, tid) < 0) {
            gs_reply(tid, PvmNotInGroup, NULL, 0);
            return;
        }
        if (g->frozen) {
            gs_reply(tid, 0, g, 1);
            return;
        }
        r = arg < 0 ? gs_size(g) : arg;
        if (r < 1 || (g->fsize > 0 && g->fsize != r)) {
            gs_reply(tid, PvmMismatch, NULL, 0);
            return;
        }
        g->fsize = r;
        g->fwait[g->nfwait++] = tid;
        gs_check(g);
        return;
    case PVMGS_BARRIER:
        if (gs_inst(g, tid) < 0) {
            gs_reply(tid, PvmNotInGroup, NULL, 0);
            return;
        }
        r = arg < 0 ? gs_size(g) : arg;
        if (r < 1 || (g->bcount > 0 && g->bcount != r)) {
            gs_reply(tid, PvmMismatch, NULL, 0);
            return;
        }
        g->bcount = r;
        g->bwait[g->nbwait++] = tid;
        gs_check(g);
        return;
    default:
        gs_reply(tid, PvmBadParam, NULL, 0);
    }
}

/* A collsd task-exit notification: {what, tid[, status]}. */
static void
gs_task_exit(colls_msg_t *m, size_t len)
{
    uint32_t v[3];
    struct gs_group *g, *next;

    if (len < 8 || len > 12 || colls_unpack(m, COLLS_UINT32, v, len / 4) < 0 ||
        v[0] != COLLS_NOTIFY_TASK_EXIT)
        return;
    gs_drop(gs_watched, &gs_nwatched, (int)v[1]);
    for (g = gs_groups; g != NULL; g = next) {
        next = g->next;
        gs_leave(g, (int)v[1]);
    }
}

/*
 * Is this the one server?  Every pvmgs joins the collsd group "pvmgs" of
 * size 1 at start: the first forms it, any other gets COLLS_EFULL and
 * exits before it serves anything.  The name is free again when the
 * server ends.
 */
static int
gs_elected(colls_group_t **lock)
{
    return colls_group_join(gs_c, PVMGS_LOCK, 1, lock) >= 0;
}

int
main(void)
{
    char name[PVMGS_NAME_MAX + 1];
    colls_group_t *lock;
    colls_msg_t *m;
    colls_status_t st;
    int32_t op, arg;
    int rc;

    setenv("COLLS_TASK_NAME", PVMGS_NAME, 1);
    rc = colls_attach(NULL, &gs_c);
    if (rc < 0) {
        fprintf(stderr, "pvmgs: cannot attach: %s\n", colls_strerror(rc));
        return 1;
    }
    if (!gs_elected(&lock)) {
        colls_detach(gs_c);
        return 0;
    }
    for (;;) {
        rc = colls_msg_recv(gs_c, (colls_tid_t)COLLS_ANY, COLLS_ANY, &m);
        if (rc < 0)
            break;
        colls_msg_info(m, &st);
        if (st.tag == PVMGS_TAG_EXIT && COLLS_TID_LOCAL(st.source) == 0)
            gs_task_exit(m, st.length);
        else if (st.tag == PVMGS_TAG_REQ &&
                 colls_unpack(m, COLLS_INT32, &op, 1) == 0 &&
                 pvmgs_upkstr(m, name, sizeof(name)) == 0 &&
                 colls_unpack(m, COLLS_INT32, &arg, 1) == 0)
            gs_request((int)st.source, op, name, arg);
        colls_msg_free(m);
    }
    colls_group_leave(lock);
    colls_detach(gs_c);
    return rc == COLLS_ECONNLOST || rc == COLLS_ESHUTDOWN ? 0 : 1;
}
