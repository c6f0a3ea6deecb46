/*
 * group.c -- group membership: the owner's name table, formation and rank
 * assignment, installation on the members' daemons, leave and failure.
 *
 * Daemon-to-daemon messages (kinds 300s; docs/collectives.md):
 *   GROUP_JOIN    joiner's daemon -> owner: src = task, req_id = the task's,
 *                 group, body group_join;
 *   GROUP_FAILED  owner -> joiner's daemon: dst = task, req_id, status,
 *                 body group_failed.owner_hint (COLLS_EAGAIN: the owner it
 *                 believes in) and .why (the owner's words on a refusal,
 *                 e.g. ESIZE, EFULL, EMEMBER); or owner -> member daemons:
 *                 dst = daemon, status, body group_failed.gid (a member
 *                 died before the group was installed there);
 *   GROUP_FORMED  owner -> every member daemon: group, body group_info;
 *   GROUP_LEAVE   leaver's daemon -> every member daemon and the owner:
 *                 src = task, body group_leave (gid, ncoll = collectives
 *                 it made).  (From the task itself: body group_leave
 *                 with the gid only.)
 * The leave notice travels on the same ordered stream as that daemon's
 * later TASK_EXIT of the task, so every daemon sees the leave first and
 * collectives the member completed are not failed by its exit.
 *
 * Owners: every host of the table (up or not) has a weight for a name, a
 * hash of (name, hid) (rendezvous hashing); the owner is the heaviest
 * host that is up in this daemon's view.  Daemons that disagree about
 * whether some host is up agree on every name that host does not own.
 * A daemon that gets a GROUP_JOIN for a name it does not own in its view
 * answers GROUP_FAILED with status COLLS_EAGAIN and owner_hint = the owner
 * it believes in; the joiner's daemon follows that if the host is in its
 * table and heavier than the one it asked (so redirections cannot loop):
 * at once if the host is up in its view, else when it comes up, or the
 * join fails with COLLS_EAGAIN after --dead-after (the daemons disagree
 * about which hosts are up; a new join can succeed once they agree).
 * When a host comes up, a daemon hands the unformed names it no longer
 * owns over the same way.  A join whose owner goes down fails with
 * COLLS_EHOSTDOWN.  So a join either reaches the owner every daemon
 * agrees on or ends with a clear code; it does not wait on a split.
 *
 * Owns struct group_state (d->gs): groups, names, joins.  May call:
 * daemon/coll.h (a group's instances), task.h (answers), net.h and host.h
 * (messages to owners), events.h (group failed), stats.h, log.h.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/coll.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/events.h"
#include "daemon/group.h"
#include "daemon/host.h"
#include "daemon/log.h"
#include "daemon/measure.h"
#include "daemon/net.h"
#include "daemon/platform.h"
#include "daemon/stats.h"
#include "daemon/task.h"
#include "proto/envelope.h"

int
group_init(struct daemon *d)
{
    d->gs = calloc(1, sizeof(*d->gs));
    if (d->gs == NULL)
        return COLLS_ENOMEM;
    list_init(&d->gs->groups);
    list_init(&d->gs->names);
    list_init(&d->gs->joins);
    if (coll_init(d) != 0) {
        free(d->gs);
        d->gs = NULL;
        return COLLS_ENOMEM;
    }
    return 0;
}

/* FNV-1a, 32 bits, of a NUL-terminated string. */
static uint32_t
group_fnv1a32(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s != '\0'; s++) {
        h ^= (uint8_t)*s;
        h *= 16777619u;
    }
    return h;
}

/* The rendezvous weight of host hid for a name of hash h (the murmur3
   64-bit finaliser of both). */
static uint64_t
group_weight(uint32_t h, int hid)
{
    uint64_t z = (uint64_t)h << 32 | (uint32_t)hid;

    z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdull;
    z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ull;
    return z ^ (z >> 33);
}

/* The owner of name: the heaviest host that is up (self included). */
static int
group_owner_of(struct daemon *d, const char *name)
{
    uint32_t h = group_fnv1a32(name);
    uint64_t best_w = group_weight(h, d->hid), w;
    int hid, best = d->hid;

    for (hid = 1; hid <= DAEMON_MAX_HID; hid++) {
        if (hid == d->hid || !host_is_up(d, hid))
            continue;
        w = group_weight(h, hid);
        if (w > best_w || (w == best_w && hid < best)) {
            best_w = w;
            best = hid;
        }
    }
    return best;
}

static void group_owner_join(struct daemon *d, uint32_t tid, uint64_t req_id,
                             const char *name, const GroupJoin *gj);

/* 1 if host a weighs more than host b for name (the same order as
   group_owner_of). */
static int
group_outranks(const char *name, int a, int b)
{
    uint32_t h = group_fnv1a32(name);
    uint64_t wa = group_weight(h, a), wb = group_weight(h, b);

    return wa > wb || (wa == wb && a < b);
}

/* A valid group name: 1..GROUP_NAME_MAX bytes. */
static int
group_name_ok(const char *name)
{
    return name != NULL && name[0] != '\0' && strlen(name) <= GROUP_NAME_MAX;
}

struct group *
group_find(struct daemon *d, uint64_t gid)
{
    struct list_node *n;

    LIST_FOREACH (n, &d->gs->groups) {
        struct group *g = list_entry(n, struct group, node);

        if (g->gid == gid)
            return g;
    }
    return NULL;
}

int
group_rank_of(const struct group *g, uint32_t tid)
{
    int r;

    for (r = 0; r < g->P; r++)
        if (g->tids[r] == tid)
            return r;
    return -1;
}

int
group_local_index(const struct group *g, int rank)
{
    int i;

    for (i = 0; i < g->nlocal; i++)
        if (g->local[i] == rank)
            return i;
    return -1;
}

/* Sends e to daemon hid, or handles it here when hid is us. */
static void
group_send(struct daemon *d, int hid, const Envelope *e)
{
    if (hid == d->hid)
        group_peer_msg(d, hid, e);
    else if (host_is_up(d, hid))
        net_send(d, hid, e, NULL, 0);
}

/* See group.h. */
void
group_reply_env(const struct daemon *d, Envelope *e, int kind, uint32_t tid,
                uint64_t req_id, const char *name, int status)
{
    envelope_init(e);
    e->kind = (Kind)kind;
    e->src = COLLS_DAEMON_TID(d->hid);
    e->dst = tid;
    e->group = (char *)name;
    e->req_id = req_id;
    e->status = status;
}

/* Answers local task tid's join (req_id) with GROUP_FAILED status and
   the owner's words why (or NULL), and forgets the join (name and why may
   point into it). */
static void
group_join_failed_local(struct daemon *d, uint32_t tid, uint64_t req_id,
                        const char *name, int status, const char *why)
{
    struct task *t = task_find(d, tid);
    struct list_node *n, *tmp;
    GroupFailed gf = GROUP_FAILED__INIT;
    Envelope e;

    if (t != NULL) {
        group_reply_env(d, &e, KIND__GROUP_FAILED, tid, req_id, name, status);
        if (why != NULL && why[0] != '\0') {
            gf.why = (char *)why;
            e.body_case = ENVELOPE__BODY_GROUP_FAILED;
            e.group_failed = &gf;
        }
        task_queue_env(t, &e, NULL, 0, NULL);
    }
    LIST_FOREACH_SAFE (n, tmp, &d->gs->joins) {
        struct group_join *j = list_entry(n, struct group_join, node);

        if (j->tid == tid && j->req_id == req_id) {
            list_del(n);
            free(j);
        }
    }
}

/* The local join of tid (req_id), or NULL. */
static struct group_join *
group_join_find(struct daemon *d, uint32_t tid, uint64_t req_id)
{
    struct list_node *n;

    LIST_FOREACH (n, &d->gs->joins) {
        struct group_join *j = list_entry(n, struct group_join, node);

        if (j->tid == tid && j->req_id == req_id)
            return j;
    }
    return NULL;
}

/* Sends local join j to its owner (or takes it here); a join that cannot
   be sent fails with COLLS_EHOSTDOWN. */
static void
group_join_send(struct daemon *d, struct group_join *j)
{
    GroupJoin gj = GROUP_JOIN__INIT;
    Envelope f;

    gj.size = j->size;
    gj.placement = (uint32_t)j->placement;
    if (j->owner == d->hid) {
        group_owner_join(d, j->tid, j->req_id, j->name, &gj);
        return;
    }
    envelope_init(&f);
    f.kind = KIND__GROUP_JOIN;
    f.src = j->tid;
    f.dst = COLLS_DAEMON_TID(j->owner);
    f.group = j->name;
    f.req_id = j->req_id;
    f.body_case = ENVELOPE__BODY_GROUP_JOIN;
    f.group_join = &gj;
    if (!host_is_up(d, j->owner) || net_send(d, j->owner, &f, NULL, 0) != 0)
        group_join_failed_local(d, j->tid, j->req_id, j->name, COLLS_EHOSTDOWN,
                                NULL);
}

/*
 * The daemon j was sent to says host `to' owns the name.  Followed if
 * `to' is in the table and weighs more than that daemon (else the join
 * fails with COLLS_EAGAIN): sent at once if `to' is up here, else parked
 * until it comes up (group_host_up) or --dead-after passes (group_cron).
 */
static void
group_join_redirect(struct daemon *d, struct group_join *j, int to)
{
    if (to < 1 || to > DAEMON_MAX_HID || to == j->owner ||
        d->hosts[to] == NULL || !group_outranks(j->name, to, j->owner)) {
        log_info("join of t%x to %s: host %d says host %d owns it: not "
                 "a host to follow, try again",
                 j->tid, j->name, j->owner, to);
        group_join_failed_local(d, j->tid, j->req_id, j->name, COLLS_EAGAIN,
                                NULL);
        return;
    }
    log_debug("join of t%x to %s: redirected from host %d to host %d", j->tid,
              j->name, j->owner, to);
    j->owner = to;
    if (host_is_up(d, to)) {
        group_join_send(d, j);
    } else {
        j->parked_us = platform_now_us();
        if (j->parked_us == 0)
            j->parked_us = 1;
    }
}

/* Owner: tells joiner tid (req_id) that its join failed (status, the
   reason why or NULL), or, hint > 0, that host hint owns the name (status
   COLLS_EAGAIN). */
static void
group_owner_answer(struct daemon *d, uint32_t tid, uint64_t req_id,
                   const char *name, int status, int hint, const char *why)
{
    GroupFailed gf = GROUP_FAILED__INIT;
    struct group_join *j;
    Envelope e;

    if (COLLS_TID_HID(tid) == d->hid) {
        j = group_join_find(d, tid, req_id);
        if (hint > 0 && j != NULL)
            group_join_redirect(d, j, hint);
        else
            group_join_failed_local(d, tid, req_id, name, status, why);
        return;
    }
    group_reply_env(d, &e, KIND__GROUP_FAILED, tid, req_id, name, status);
    gf.owner_hint = (uint32_t)(hint > 0 ? hint : 0);
    gf.why = (char *)(why != NULL ? why : "");
    e.body_case = ENVELOPE__BODY_GROUP_FAILED;
    e.group_failed = &gf;
    if (host_is_up(d, COLLS_TID_HID(tid)))
        net_send(d, COLLS_TID_HID(tid), &e, NULL, 0);
}

/* Owner: tells joiner tid (req_id) that its join failed, and why (or
   NULL). */
static void
group_owner_refuse(struct daemon *d, uint32_t tid, uint64_t req_id,
                   const char *name, int status, const char *why)
{
    group_owner_answer(d, tid, req_id, name, status, 0, why);
}

static void
group_name_free(struct group_name *n)
{
    free(n->joiners);
    free(n->req_ids);
    free(n->tids);
    free(n->left);
    free(n);
}

/* Owner: takes name entry n out of the table. */
static void
group_name_unlink(struct daemon *d, struct group_name *n)
{
    (void)d;
    list_del(&n->node);
}

/* Owner: forgets name entry n. */
static void
group_name_forget(struct daemon *d, struct group_name *n)
{
    group_name_unlink(d, n);
    group_name_free(n);
}

static struct group_name *
group_name_find(struct daemon *d, const char *name)
{
    struct list_node *x;

    LIST_FOREACH (x, &d->gs->names) {
        struct group_name *n = list_entry(x, struct group_name, node);

        if (strcmp(n->name, name) == 0)
            return n;
    }
    return NULL;
}

/*
 * Owner: n has all its members.  Ranks: CONTIGUOUS by (hid, join order);
 * ROUNDROBIN deals the hosts' members out in hid order.  Sends
 * GROUP_FORMED to every member daemon.
 */
static void
group_form(struct daemon *d, struct group_name *n)
{
    GroupInfo gi = GROUP_INFO__INIT;
    const struct plogp_params *cur = measure_current(d);
    struct measure_wire_store st;
    Plogp pw;
    int i, k = 0, hid, round, any;
    unsigned char *sent = NULL;
    Envelope e;

    n->tids = calloc((size_t)n->size, sizeof(uint32_t));
    n->left = calloc((size_t)n->size, 1);
    sent = calloc(DAEMON_MAX_HID + 1, 1);
    if (n->tids == NULL || n->left == NULL || sent == NULL) {
        for (i = 0; i < n->njoin; i++)
            group_owner_refuse(d, n->joiners[i], n->req_ids[i], n->name,
                               COLLS_ENOMEM, NULL);
        free(sent);
        group_name_forget(d, n);
        return;
    }
    if (n->placement == COLLS_PLACE_ROUNDROBIN) {
        for (round = 0, any = 1; any; round++) {
            any = 0;
            for (hid = 1; hid <= DAEMON_MAX_HID; hid++) {
                int seen = 0;

                for (i = 0; i < n->njoin; i++)
                    if (COLLS_TID_HID(n->joiners[i]) == hid &&
                        seen++ == round) {
                        n->tids[k++] = n->joiners[i];
                        any = 1;
                        break;
                    }
            }
        }
    } else {
        for (hid = 1; hid <= DAEMON_MAX_HID && k < n->njoin; hid++)
            for (i = 0; i < n->njoin; i++)
                if (COLLS_TID_HID(n->joiners[i]) == hid)
                    n->tids[k++] = n->joiners[i];
    }
    n->formed = 1;
    /* 16 bits of our incarnation: a restarted daemon's counter starts
       again at 1, and another daemon may still hold data of our previous
       incarnation's group of that number (COLL_DATA kept for groups not
       installed yet, coll.c), which the new group must not take */
    n->gid = (uint64_t)d->hid << 48 | (uint64_t)(d->inc & 0xffffu) << 32 |
             (++d->gs->next_gid & 0xffffffffu);
    d->gs->cnt.groups_formed++;
    log_info("group %s formed: gid %016llx, %d members", n->name,
             (unsigned long long)n->gid, n->size);
    gi.gid = n->gid;
    gi.n_tids = (size_t)n->size;
    gi.tids = n->tids;
    gi.owner = (uint32_t)d->hid;
    gi.placement = (uint32_t)n->placement;
    if (cur != NULL) {
        measure_wire(cur, &pw, &st);
        gi.params = &pw;
    }
    envelope_init(&e);
    e.kind = KIND__GROUP_FORMED;
    e.src = COLLS_DAEMON_TID(d->hid);
    e.group = n->name;
    e.body_case = ENVELOPE__BODY_GROUP_INFO;
    e.group_info = &gi;
    for (i = 0; i < n->size; i++) {
        hid = COLLS_TID_HID(n->tids[i]);
        if (sent[hid])
            continue;
        sent[hid] = 1;
        e.dst = COLLS_DAEMON_TID(hid);
        group_send(d, hid, &e);
    }
    free(sent);
}

/*
 * Owner: joiner tid (req_id) asks for another size or placement than the
 * joiners of forming group n: nobody can tell which is right, so every
 * one of them fails at once (COLLS_ESIZE, or COLLS_EINVAL for the
 * placement) with both values in the words, and the name starts over.
 * name may belong to tid's join, so tid is answered last.
 */
static void
group_owner_mismatch(struct daemon *d, struct group_name *n, uint32_t tid,
                     uint64_t req_id, const char *name, const GroupJoin *gj)
{
    int size = n->size != (int)gj->size, i, status;
    char why[384];

    status = size ? COLLS_ESIZE : COLLS_EINVAL;
    snprintf(why, sizeof(why),
             "group %s: %s %d asked by t%x, %d by t%x (%d of %d joined); "
             "every joiner refused",
             n->name, size ? "size" : "placement",
             size ? (int)gj->size : (int)gj->placement, tid,
             size ? n->size : n->placement, n->njoin ? n->joiners[0] : 0,
             n->njoin, n->size);
    log_info("%s", why);
    group_name_unlink(d, n);
    for (i = 0; i < n->njoin; i++)
        group_owner_refuse(d, n->joiners[i], n->req_ids[i], n->name, status,
                           why);
    group_name_free(n);
    group_owner_refuse(d, tid, req_id, name, status, why);
}

/* Owner: GROUP_JOIN of tid (req_id) for name. */
static void
group_owner_join(struct daemon *d, uint32_t tid, uint64_t req_id,
                 const char *name, const GroupJoin *gj)
{
    struct group_name *n = group_name_find(d, name);
    char why[384];
    int i;

    if (gj == NULL || gj->size < 1 || gj->size > GROUP_SIZE_MAX ||
        (gj->placement != COLLS_PLACE_CONTIGUOUS &&
         gj->placement != COLLS_PLACE_ROUNDROBIN)) {
        group_owner_refuse(d, tid, req_id, name, COLLS_EINVAL, NULL);
        return;
    }
    /* a member of the formed group that left joins again: the group is
       finished for everyone, the name starts over */
    if (n != NULL && n->formed)
        for (i = 0; i < n->size; i++)
            if (n->tids[i] == tid && n->left[i]) {
                group_name_forget(d, n);
                n = NULL;
                break;
            }
    if (n == NULL) {
        n = calloc(1, sizeof(*n));
        if (n != NULL) {
            n->joiners = calloc((size_t)gj->size, sizeof(uint32_t));
            n->req_ids = calloc((size_t)gj->size, sizeof(uint64_t));
        }
        if (n == NULL || n->joiners == NULL || n->req_ids == NULL) {
            if (n != NULL)
                group_name_free(n);
            group_owner_refuse(d, tid, req_id, name, COLLS_ENOMEM, NULL);
            return;
        }
        snprintf(n->name, sizeof(n->name), "%s", name);
        n->size = gj->size;
        n->placement = (int)gj->placement;
        list_add_head(&d->gs->names, &n->node);
    }
    if (n->formed) {
        for (i = 0; i < n->size && n->tids[i] != tid; i++)
            ;
        if (i < n->size)
            snprintf(why, sizeof(why),
                     "t%x is already rank %d of group %s (gid %016llx)", tid, i,
                     n->name, (unsigned long long)n->gid);
        else
            snprintf(why, sizeof(why),
                     "group %s is full: formed with its %d members (gid "
                     "%016llx); join another name",
                     n->name, n->size, (unsigned long long)n->gid);
        group_owner_refuse(d, tid, req_id, name,
                           i < n->size ? COLLS_EMEMBER : COLLS_EFULL, why);
        return;
    }
    for (i = 0; i < n->njoin; i++)
        if (n->joiners[i] == tid) {
            snprintf(why, sizeof(why),
                     "t%x has already asked to join group %s (%d of %d "
                     "joined)",
                     tid, n->name, n->njoin, n->size);
            group_owner_refuse(d, tid, req_id, name, COLLS_EMEMBER, why);
            return;
        }
    if (n->size != gj->size || n->placement != (int)gj->placement) {
        group_owner_mismatch(d, n, tid, req_id, name, gj);
        return;
    }
    n->req_ids[n->njoin] = req_id;
    n->joiners[n->njoin++] = tid;
    if (n->njoin == n->size)
        group_form(d, n);
}

void
group_task_join(struct task *t, const Envelope *e)
{
    struct daemon *d = t->d;
    struct group_join *j;

    if (!group_name_ok(e->group) || e->body_case != ENVELOPE__BODY_GROUP_JOIN) {
        d->gs->cnt.bad_requests++;
        group_join_failed_local(d, t->tid, e->req_id,
                                e->group != NULL ? e->group : "", COLLS_EINVAL,
                                NULL);
        return;
    }
    j = calloc(1, sizeof(*j));
    if (j == NULL) {
        group_join_failed_local(d, t->tid, e->req_id, e->group, COLLS_ENOMEM,
                                NULL);
        return;
    }
    j->tid = t->tid;
    j->req_id = e->req_id;
    j->owner = group_owner_of(d, e->group);
    j->size = e->group_join->size;
    j->placement = (int)e->group_join->placement;
    snprintf(j->name, sizeof(j->name), "%s", e->group);
    list_add_head(&d->gs->joins, &j->node);
    group_join_send(d, j);
}

/* Frees g (its instances first) after unlinking it. */
static void
group_drop(struct daemon *d, struct group *g)
{
    list_del(&g->node);
    log_debug("group %s (gid %016llx) dropped", g->name,
              (unsigned long long)g->gid);
    coll_group_free(d, g);
    topo_hier_free(&g->H);
    free(g->tids);
    free(g->hids);
    free(g->local);
    free(g->next_seq);
    free(g->gone);
    free(g->params);
    free(g);
}

/* Drops g if every local member has left or died. */
static void
group_maybe_drop(struct daemon *d, struct group *g)
{
    int i;

    for (i = 0; i < g->nlocal; i++)
        if (!g->gone[g->local[i]])
            return;
    group_drop(d, g);
}

/* Fails g's collectives from seq from on with status; death: a member
   died or its host went down (else a member left). */
static void
group_fail(struct daemon *d, struct group *g, int status, uint64_t from,
           int death)
{
    if (death && !g->died) {
        g->died = 1;
        d->gs->cnt.groups_failed++;
    }
    if (g->status != 0 && g->fail_from <= from)
        return;
    if (death)
        log_info("group %s (gid %016llx) failed from collective %llu: %s",
                 g->name, (unsigned long long)g->gid, (unsigned long long)from,
                 log_errstr(status));
    g->status = status;
    g->fail_from = from;
    events_group_failed(d, g);
}

/* Installs the group of GROUP_FORMED e and answers the local joiners. */
static void
group_install(struct daemon *d, const Envelope *e)
{
    const GroupInfo *gi = e->group_info;
    GroupInfo plain;
    struct list_node *n, *tmp;
    struct group_join *j;
    struct group *g;
    int r, i, k;
    Envelope f;

    if (e->body_case != ENVELOPE__BODY_GROUP_INFO || !group_name_ok(e->group) ||
        gi->n_tids < 1 || gi->n_tids > GROUP_SIZE_MAX ||
        group_find(d, gi->gid) != NULL) {
        d->st.bad_peer_msgs++;
        return;
    }
    g = calloc(1, sizeof(*g));
    if (g == NULL)
        return;
    list_init(&g->insts);
    g->gid = gi->gid;
    snprintf(g->name, sizeof(g->name), "%s", e->group);
    g->P = (int)gi->n_tids;
    g->owner = (int)gi->owner;
    g->placement = (int)gi->placement;
    /* parameters every member daemon checks alike: a set one refuses,
       all refuse, and the group runs by the rules everywhere */
    if (gi->params != NULL &&
        (g->params = malloc(sizeof(*g->params))) != NULL &&
        measure_unwire(gi->params, g->params) != 0) {
        free(g->params);
        g->params = NULL;
        d->st.bad_peer_msgs++;
    }
    g->tids = calloc((size_t)g->P, sizeof(uint32_t));
    g->hids = calloc((size_t)g->P, sizeof(int));
    g->local = calloc((size_t)g->P, sizeof(int));
    if (g->tids == NULL || g->hids == NULL || g->local == NULL)
        goto fail;
    for (r = 0; r < g->P; r++) {
        g->tids[r] = gi->tids[r];
        g->hids[r] = COLLS_TID_HID(gi->tids[r]);
        if (g->hids[r] < 1 || g->hids[r] > DAEMON_MAX_HID ||
            COLLS_TID_LOCAL(gi->tids[r]) == 0)
            goto bad;
        for (k = 0; k < r; k++)
            if (g->tids[k] == g->tids[r])
                goto bad;
        if (g->hids[r] == d->hid)
            g->local[g->nlocal++] = r;
    }
    if (g->nlocal == 0)
        goto bad;
    if (topo_hier_plan(g->P, g->hids, &g->H) != 0)
        goto fail;
    g->myhost = g->H.host[g->local[0]];
    g->next_seq = calloc((size_t)g->nlocal, sizeof(uint64_t));
    g->gone = calloc((size_t)g->P, 1);
    if (g->next_seq == NULL || g->gone == NULL) {
        topo_hier_free(&g->H);
        goto fail;
    }
    list_add_head(&d->gs->groups, &g->node);
    coll_group_installed(d, g);
    /* answer the joiners here */
    envelope_init(&f);
    f.kind = KIND__GROUP_FORMED;
    f.src = COLLS_DAEMON_TID(d->hid);
    f.group = g->name;
    f.body_case = ENVELOPE__BODY_GROUP_INFO;
    plain = *gi; /* the tasks need no parameters */
    plain.params = NULL;
    f.group_info = &plain;
    LIST_FOREACH_SAFE (n, tmp, &d->gs->joins) {
        j = list_entry(n, struct group_join, node);
        if (strcmp(j->name, g->name) == 0 && group_rank_of(g, j->tid) >= 0) {
            struct task *t = task_find(d, j->tid);

            if (t != NULL) {
                f.dst = j->tid;
                f.req_id = j->req_id;
                task_queue_env(t, &f, NULL, 0, NULL);
            }
            list_del(n);
            free(j);
        }
    }
    /* members that are already gone */
    for (i = 0; i < g->nlocal; i++)
        if (task_find(d, g->tids[g->local[i]]) == NULL) {
            g->gone[g->local[i]] = 1;
            group_fail(d, g, COLLS_EPEERDEAD, 0, 1);
        }
    for (r = 0; r < g->P; r++)
        if (g->hids[r] != d->hid && !host_is_up(d, g->hids[r]))
            group_fail(d, g, COLLS_EHOSTDOWN, 0, 1);
    group_maybe_drop(d, g);
    return;
bad:
    d->st.bad_peer_msgs++;
fail:
    free(g->params);
    free(g->tids);
    free(g->hids);
    free(g->local);
    free(g);
}

/* Member tid of g is gone (left after count collectives, or died). */
static void
group_member_gone(struct daemon *d, struct group *g, uint32_t tid, int status,
                  uint64_t count, int death)
{
    int r = group_rank_of(g, tid);

    if (r < 0 || g->gone[r])
        return; /* left before: its exit changes nothing */
    g->gone[r] = 1;
    group_fail(d, g, status, count, death);
}

/* GROUP_LEAVE notice: task src left gid after ncoll collectives. */
static void
group_leave_notice(struct daemon *d, uint32_t src, uint64_t gid, uint64_t ncoll)
{
    struct group *g = group_find(d, gid);
    struct group_name *n;
    struct list_node *x;
    int r, all = 1;

    if (g != NULL) {
        group_member_gone(d, g, src, COLLS_EPEERDEAD, ncoll, 0);
        group_maybe_drop(d, g);
    }
    /* the owner: forget the name once everyone has left */
    n = NULL;
    LIST_FOREACH (x, &d->gs->names) {
        n = list_entry(x, struct group_name, node);
        if (n->formed && n->gid == gid)
            break;
        n = NULL;
    }
    if (n == NULL)
        return;
    for (r = 0; r < n->size; r++) {
        if (n->tids[r] == src)
            n->left[r] = 1;
        all &= n->left[r];
    }
    if (all)
        group_name_forget(d, n);
}

void
group_task_leave(struct task *t, const Envelope *e)
{
    struct daemon *d = t->d;
    struct group *g = e->body_case == ENVELOPE__BODY_GROUP_LEAVE
                          ? group_find(d, e->group_leave->gid)
                          : NULL;
    GroupLeave gl = GROUP_LEAVE__INIT;
    unsigned char *sent;
    int r, i, hid;
    Envelope f;

    if (g == NULL || (r = group_rank_of(g, t->tid)) < 0 ||
        (i = group_local_index(g, r)) < 0 || g->gone[r])
        return;
    sent = calloc(DAEMON_MAX_HID + 1, 1);
    if (sent == NULL)
        return;
    envelope_init(&f);
    f.kind = KIND__GROUP_LEAVE;
    f.src = t->tid;
    gl.gid = g->gid;
    gl.ncoll = g->next_seq[i];
    f.body_case = ENVELOPE__BODY_GROUP_LEAVE;
    f.group_leave = &gl;
    f.group = g->name;
    sent[d->hid] = 1;
    for (r = 0; r < g->P; r++) {
        hid = g->hids[r];
        if (!sent[hid]) {
            sent[hid] = 1;
            f.dst = COLLS_DAEMON_TID(hid);
            if (host_is_up(d, hid))
                net_send(d, hid, &f, NULL, 0);
        }
    }
    if (!sent[g->owner] && host_is_up(d, g->owner)) {
        f.dst = COLLS_DAEMON_TID(g->owner);
        net_send(d, g->owner, &f, NULL, 0);
    }
    free(sent);
    group_leave_notice(d, t->tid, gl.gid, gl.ncoll); /* may free g */
}

/* GROUP_FAILED from the owner: to a local joiner, or about a gid. */
static void
group_peer_failed(struct daemon *d, int hid, const Envelope *e)
{
    struct group *g;
    uint32_t hint;

    if (!daemon_tid_is_daemon(e->dst)) {
        struct group_join *j;

        j = group_join_find(d, e->dst, e->req_id);
        if (j == NULL || j->owner != hid)
            return;
        hint = e->body_case == ENVELOPE__BODY_GROUP_FAILED
                   ? e->group_failed->owner_hint
                   : 0;
        if (e->status == COLLS_EAGAIN && hint > 0 && hint <= DAEMON_MAX_HID)
            group_join_redirect(d, j, (int)hint);
        else
            group_join_failed_local(d, j->tid, j->req_id, j->name,
                                    e->status < 0 ? e->status : COLLS_EIO,
                                    e->body_case == ENVELOPE__BODY_GROUP_FAILED
                                        ? e->group_failed->why
                                        : NULL);
        return;
    }
    if (e->body_case != ENVELOPE__BODY_GROUP_FAILED) {
        d->st.bad_peer_msgs++;
        return;
    }
    g = group_find(d, e->group_failed->gid);
    if (g != NULL && g->owner == hid && e->status < 0)
        group_fail(d, g, e->status, 0, 1);
}

void
group_peer_msg(struct daemon *d, int hid, const Envelope *e)
{
    int owner;

    switch ((int)e->kind) {
    case KIND__GROUP_JOIN:
        if (COLLS_TID_HID(e->src) != hid || daemon_tid_is_daemon(e->src) ||
            !group_name_ok(e->group) ||
            e->body_case != ENVELOPE__BODY_GROUP_JOIN) {
            d->st.bad_peer_msgs++;
            return;
        }
        owner = group_owner_of(d, e->group);
        if (owner != d->hid)
            group_owner_answer(d, e->src, e->req_id, e->group, COLLS_EAGAIN,
                               owner, NULL);
        else
            group_owner_join(d, e->src, e->req_id, e->group, e->group_join);
        break;
    case KIND__GROUP_FORMED:
        group_install(d, e);
        break;
    case KIND__GROUP_FAILED:
        group_peer_failed(d, hid, e);
        break;
    case KIND__GROUP_LEAVE:
        if (COLLS_TID_HID(e->src) != hid ||
            e->body_case != ENVELOPE__BODY_GROUP_LEAVE) {
            d->st.bad_peer_msgs++;
            return;
        }
        group_leave_notice(d, e->src, e->group_leave->gid,
                           e->group_leave->ncoll);
        break;
    default:
        d->st.bad_peer_msgs++;
        break;
    }
}

/*
 * Owner side of a death: drops tid from joiner lists; a formed name with
 * tid (or, hid > 0, any member on host hid) as a member is forgotten and
 * its member daemons told (status).
 */
static void
group_owner_death(struct daemon *d, uint32_t tid, int hid, int status)
{
    struct list_node *x, *tmp;
    int i, k, r, dead;

    LIST_FOREACH_SAFE (x, tmp, &d->gs->names) {
        struct group_name *n = list_entry(x, struct group_name, node);

        if (!n->formed) {
            for (i = k = 0; i < n->njoin; i++)
                if (!(n->joiners[i] == tid ||
                      (hid > 0 && COLLS_TID_HID(n->joiners[i]) == hid))) {
                    n->req_ids[k] = n->req_ids[i];
                    n->joiners[k++] = n->joiners[i];
                }
            n->njoin = k;
            if (n->njoin == 0)
                group_name_forget(d, n);
            continue;
        }
        for (r = 0, dead = 0; r < n->size; r++)
            if (!n->left[r] && (n->tids[r] == tid ||
                                (hid > 0 && COLLS_TID_HID(n->tids[r]) == hid)))
                dead = 1;
        if (dead) {
            unsigned char sent[DAEMON_MAX_HID + 1];
            GroupFailed gf = GROUP_FAILED__INIT;
            Envelope e;

            memset(sent, 0, sizeof(sent));
            envelope_init(&e);
            e.kind = KIND__GROUP_FAILED;
            e.src = COLLS_DAEMON_TID(d->hid);
            gf.gid = n->gid;
            e.body_case = ENVELOPE__BODY_GROUP_FAILED;
            e.group_failed = &gf;
            e.status = status;
            e.group = n->name;
            for (r = 0; r < n->size; r++) {
                int h = COLLS_TID_HID(n->tids[r]);

                if (sent[h] || h == d->hid || h == hid)
                    continue;
                sent[h] = 1;
                e.dst = COLLS_DAEMON_TID(h);
                if (host_is_up(d, h))
                    net_send(d, h, &e, NULL, 0);
            }
            group_name_forget(d, n);
        }
    }
}

void
group_task_exit(struct daemon *d, uint32_t tid)
{
    struct list_node *n, *tmp;

    if (d->gs == NULL)
        return;
    LIST_FOREACH_SAFE (n, tmp, &d->gs->joins) {
        struct group_join *j = list_entry(n, struct group_join, node);

        if (j->tid == tid) {
            list_del(n);
            free(j);
        }
    }
    LIST_FOREACH_SAFE (n, tmp, &d->gs->groups) {
        struct group *g = list_entry(n, struct group, node);

        if (group_rank_of(g, tid) >= 0) {
            group_member_gone(d, g, tid, COLLS_EPEERDEAD, 0, 1);
            group_maybe_drop(d, g);
        }
    }
    group_owner_death(d, tid, 0, COLLS_EPEERDEAD);
}

void
group_host_down(struct daemon *d, int hid)
{
    struct list_node *n, *tmp;
    int r;

    if (d->gs == NULL)
        return;
    LIST_FOREACH_SAFE (n, tmp, &d->gs->joins) {
        struct group_join *j = list_entry(n, struct group_join, node);

        if (j->owner == hid)
            group_join_failed_local(d, j->tid, j->req_id, j->name,
                                    COLLS_EHOSTDOWN, NULL);
    }
    LIST_FOREACH_SAFE (n, tmp, &d->gs->groups) {
        struct group *g = list_entry(n, struct group, node);

        /* members there that left already took part in all they will */
        for (r = 0; r < g->P; r++)
            if (g->hids[r] == hid && !g->gone[r]) {
                group_fail(d, g, COLLS_EHOSTDOWN, 0, 1);
                break;
            }
    }
    group_owner_death(d, 0, hid, COLLS_EHOSTDOWN);
}

void
group_host_up(struct daemon *d, int hid)
{
    struct list_node *x, *tmp;
    int owner, i;

    if (d->gs == NULL)
        return;
    LIST_FOREACH_SAFE (x, tmp, &d->gs->joins) {
        struct group_join *j = list_entry(x, struct group_join, node);

        if (j->parked_us != 0 && j->owner == hid) {
            j->parked_us = 0;
            group_join_send(d, j); /* may free j */
        }
    }
    LIST_FOREACH_SAFE (x, tmp, &d->gs->names) {
        struct group_name *n = list_entry(x, struct group_name, node);

        if (n->formed || (owner = group_owner_of(d, n->name)) == d->hid)
            continue;
        log_info("group %s: host %d came up, host %d owns the name now: "
                 "%d joiner(s) sent there",
                 n->name, hid, owner, n->njoin);
        /* unlinked first: a local redirect may not find it half-done */
        group_name_unlink(d, n);
        for (i = 0; i < n->njoin; i++)
            group_owner_answer(d, n->joiners[i], n->req_ids[i], n->name,
                               COLLS_EAGAIN, owner, NULL);
        group_name_free(n);
    }
}

void
group_cron(struct daemon *d, uint64_t now_us)
{
    uint64_t wait = (uint64_t)d->cfg->dead_after_ms * 1000u;
    struct list_node *n, *tmp;

    if (d->gs == NULL)
        return;
    LIST_FOREACH_SAFE (n, tmp, &d->gs->joins) {
        struct group_join *j = list_entry(n, struct group_join, node);

        if (j->parked_us != 0 && now_us > j->parked_us &&
            now_us - j->parked_us > wait) {
            log_info("join of t%x to %s: host %d, its owner elsewhere, did "
                     "not come up here: try again",
                     j->tid, j->name, j->owner);
            group_join_failed_local(d, j->tid, j->req_id, j->name, COLLS_EAGAIN,
                                    NULL);
        }
    }
}

void
group_free_all(struct daemon *d)
{
    if (d->gs == NULL)
        return;
    while (!list_empty(&d->gs->groups))
        group_drop(d, list_entry(d->gs->groups.next, struct group, node));
    while (!list_empty(&d->gs->names))
        group_name_forget(
            d, list_entry(d->gs->names.next, struct group_name, node));
    while (!list_empty(&d->gs->joins)) {
        struct list_node *n = d->gs->joins.next;

        list_del(n);
        free(list_entry(n, struct group_join, node));
    }
    coll_free(d);
    free(d->gs);
    d->gs = NULL;
}

/* Local joiners of name waiting for their group. */
static int
group_joins_here(struct daemon *d, const char *name)
{
    struct list_node *n;
    int k = 0;

    LIST_FOREACH (n, &d->gs->joins) {
        struct group_join *x = list_entry(n, struct group_join, node);

        k += strcmp(x->name, name) == 0;
    }
    return k;
}

/* One group still forming: name, size, joiners here, owner, placement,
   and (joined >= 0, on the owner) how many have asked. */
static void
group_forming_obj(struct stats_json *j, struct daemon *d, const char *name,
                  int size, int owner, int placement, int joined)
{
    stats_json_obj_begin(j, NULL);
    stats_json_str(j, "name", name);
    stats_json_str(j, "gid", "-");
    stats_json_u64(j, "size", (uint64_t)size);
    stats_json_u64(j, "local", (uint64_t)group_joins_here(d, name));
    stats_json_u64(j, "owner", (uint64_t)owner);
    stats_json_str(j, "placement",
                   placement == COLLS_PLACE_ROUNDROBIN ? "roundrobin"
                                                       : "contiguous");
    stats_json_str(j, "state", "forming");
    if (joined >= 0)
        stats_json_u64(j, "joined", (uint64_t)joined);
    stats_json_obj_end(j);
}

/*
 * The groups not formed yet, state "forming": the names this daemon owns
 * (joined: how many have asked, of size), then, once per name, the names
 * its tasks wait for at another owner.
 */
static void
group_forming_json(struct daemon *d, struct stats_json *j)
{
    struct list_node *n, *m;

    LIST_FOREACH (n, &d->gs->names) {
        struct group_name *x = list_entry(n, struct group_name, node);

        if (!x->formed)
            group_forming_obj(j, d, x->name, x->size, d->hid, x->placement,
                              x->njoin);
    }
    LIST_FOREACH (n, &d->gs->joins) {
        struct group_join *x = list_entry(n, struct group_join, node);
        int seen = 0;

        if (x->owner == d->hid)
            continue;
        for (m = d->gs->joins.next; m != n && !seen; m = m->next) {
            struct group_join *y = list_entry(m, struct group_join, node);

            seen = y->owner != d->hid && strcmp(y->name, x->name) == 0;
        }
        if (!seen)
            group_forming_obj(j, d, x->name, x->size, x->owner, x->placement,
                              -1);
    }
}

void
group_stats_json(struct daemon *d, struct stats_json *j)
{
    static const char *const places[] = {"contiguous", "roundrobin"};
    struct list_node *n;
    struct group *g;
    char gid[24];
    int i, here;

    stats_json_arr_begin(j, "groups");
    LIST_FOREACH (n, &d->gs->groups) {
        g = list_entry(n, struct group, node);
        for (i = here = 0; i < g->nlocal; i++)
            here += !g->gone[g->local[i]];
        snprintf(gid, sizeof(gid), "%016llx", (unsigned long long)g->gid);
        stats_json_obj_begin(j, NULL);
        stats_json_str(j, "name", g->name);
        stats_json_str(j, "gid", gid);
        stats_json_u64(j, "size", (uint64_t)g->P);
        stats_json_u64(j, "local", (uint64_t)here);
        stats_json_u64(j, "hosts", (uint64_t)g->H.nhosts);
        stats_json_u64(j, "owner", (uint64_t)g->owner);
        stats_json_str(j, "placement",
                       g->placement == 1 ? places[1] : places[0]);
        stats_json_str(j, "state",
                       g->status == 0                 ? "ok"
                       : !g->died                     ? "closing"
                       : g->status == COLLS_EHOSTDOWN ? "hostdown"
                                                      : "failed");
        stats_json_u64(j, "collectives", g->ncoll);
        stats_json_obj_end(j);
    }
    group_forming_json(d, j);
    stats_json_arr_end(j);
}
