/*
 * route.c -- where messages go.
 *
 * DATA from a task: the daemon sets src (a task cannot forge it), then
 *   dst local task   -> queued to its connection (payload not copied when
 *                       it arrived in its own buffer);
 *   dst remote task  -> its daemon, over the transport (rel_sendv from the
 *                       payload in place);
 *   dst a daemon tid -> that daemon echoes it to the sender, ENV_F_ECHO;
 *   dst a spawned copy that has not attached yet
 *                    -> held until it attaches (spawn_hold);
 *   otherwise        -> SEND_FAILED {dst, status, req_id} to the sender.
 * DATA from a daemon to a local task is queued with the message buffer
 * the transport delivered (no copy, the packed envelope is reused).
 *
 * Memory bounds (docs/protocol.md, "Memory bounds" and "Flow control").
 * Nothing is dropped and no task is closed for being slow: the producers
 * of a queue stop being read instead.  A local sender is paused while its
 * destination task's queue is over --task-queue-max, or while the
 * transport queue towards the destination's host is over
 * --task-queue-limit; a task is paused on its own queue by task.c.
 *
 * Flow control.  One ordered stream per pair of hosts serves every task,
 * so the daemon receiving DATA cannot hold it back per task; the sending
 * daemon does, with credit: it forwards DATA to a remote task while less
 * than --task-credit of it (payload plus ROUTE_CREDIT_MSG per message)
 * is in flight, i.e. not yet returned by a CREDIT from the task's daemon,
 * which returns it as the task reads (task.c).  Without credit the
 * message is held (struct route_held, one per sender at most, since the
 * sender is then not read) on its destination's struct route_credit, in
 * order, and forwarded when credit comes back.  A destination that dies
 * (TASK_EXIT, SEND_FAILED from its daemon) or whose host goes down fails
 * the held messages with SEND_FAILED and forgets its credit.  Daemon tids
 * (echo) are not under credit: the sender is the one that reads the
 * echoes, and task.c pauses it on its own queue.
 *
 * Layering: route.c is the first upper layer, installed by collsd.c as
 * task_ops.frame and net_ops.message: it dispatches by kind to host,
 * join, group, coll and admin, and sends through task and net.  What a
 * task exit or a host going down sets off is not its choice: events.c
 * calls route_task_exit, route_task_gone and route_host_down in order.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/admin.h"
#include "daemon/coll.h"
#include "daemon/group.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/events.h"
#include "daemon/host.h"
#include "daemon/join.h"
#include "daemon/log.h"
#include "daemon/measure.h"
#include "daemon/net.h"
#include "daemon/route.h"
#include "daemon/spawn.h"
#include "daemon/task.h"
#include "proto/bytes.h"
#include "proto/envelope.h"

/* Flags a task may set on its DATA; the rest are the daemon's. */
#define ROUTE_TASK_FLAGS ENV_F_FPC
/* Notification requests one task may have waiting (COLLS_ENOBUFS past
   it): their memory is the daemon's, not bounded by reading. */
#define ROUTE_NOTIFY_MAX 4096u
/* Cost of a message in flow-control credit on top of its payload: it
   stands for the envelope and the receiving daemon's bookkeeping, so a
   window bounds the memory of many small messages too.  Both ends must
   agree (colls.proto, message Credit). */
#define ROUTE_CREDIT_MSG   256u
#define ROUTE_FLOW_BUCKETS 256

/* A DATA message from a local task waiting for credit; the task is not
   read meanwhile, so it has one at most. */
struct route_held {
    struct list_node node; /* on route_credit.waiters, oldest first */
    Envelope env;          /* as forwarded: scalars only, no body */
    const uint8_t *payload;
    size_t plen;
    uint8_t *owner; /* holds payload */
};

/* This daemon's credit towards one remote task; freed when nothing is in
   flight and nothing waits. */
struct route_credit {
    struct list_node node; /* on a route_flow bucket */
    uint32_t dst;
    uint64_t inflight;        /* cost forwarded, not yet credited back */
    struct list_node waiters; /* struct route_held */
};

/* Exits remembered (d->exits), so that a notification asked for after
   the TASK_EXIT still fires, with the exit status: the last ROUTE_EXITS
   tids seen to end, a ring. */
#define ROUTE_EXITS 4096
struct route_exits {
    unsigned next;
    uint32_t tid[ROUTE_EXITS];
    int32_t status[ROUTE_EXITS]; /* -1 unknown */
};

/* d->flow: the credit entries by destination tid. */
struct route_flow {
    struct list_node buckets[ROUTE_FLOW_BUCKETS];
};

/* Tells task t (if attached) that its message to dst failed. */
static void
route_send_failed_local(struct daemon *d, uint32_t sender, uint32_t dst,
                        int status, uint64_t req_id)
{
    struct task *t = task_find(d, sender);
    Envelope e;

    d->st.send_failed++;
    if (t == NULL)
        return;
    t->st.send_failed++;
    envelope_reply(&e, COLLS_DAEMON_TID(d->hid), dst, KIND__SEND_FAILED, req_id,
                   status);
    task_queue_env(t, &e, NULL, 0, NULL);
}

/* Status for a local tid that is not attached. */
static int
route_local_status(struct daemon *d, uint32_t tid)
{
    return COLLS_TID_LOCAL(tid) < d->next_local ? COLLS_EPEERDEAD
                                                : COLLS_ENOENT;
}

/* Status for a remote host that cannot take messages; 0 if it can. */
static int
route_host_status(struct daemon *d, int hid)
{
    const struct host *h =
        hid > 0 && hid <= DAEMON_MAX_HID ? d->hosts[hid] : NULL;

    if (h == NULL)
        return COLLS_ENOENT;
    return h->state == COLLS_HOST_UP ? 0 : COLLS_EHOSTDOWN;
}

/* Holds DATA f (payload plen) from a local task for a spawned copy that
   has not attached yet (spawn_hold), packed as a frame of its own: 0 if
   held, else -1 (the caller fails the send as before). */
static int
route_hold_local(struct daemon *d, const Envelope *f, const uint8_t *payload,
                 size_t plen)
{
    size_t elen = envelope_packed_size(f);
    uint8_t *body;

    if (!spawn_may_hold(d, f->dst, elen + plen) ||
        (body = malloc(elen + plen)) == NULL)
        return -1;
    envelope_pack(f, body);
    if (plen > 0)
        memcpy(body + elen, payload, plen);
    if (spawn_hold(d, f->dst, 0, 0, body, elen, elen + plen, body) != 0) {
        free(body);
        return -1;
    }
    return 0;
}

/* Pauses t when dst's queue is over the limit. */
static void
route_check_task_queue(struct task *t, const struct task *dst)
{
    if (dst->out_bytes > (uint64_t)t->d->cfg->task_queue_max && dst != t)
        task_pause_on_task(t, dst->tid);
}

/* Pauses t while the transport queue towards hid is over
   --task-queue-limit (t just sent there). */
static void
route_check_host_queue(struct task *t, int hid)
{
    struct daemon *d = t->d;

    if (hid > 0 && hid <= DAEMON_MAX_HID && hid != d->hid &&
        d->hosts[hid] != NULL &&
        net_queued(d, hid) > (uint64_t)d->cfg->task_queue_limit)
        task_pause_on_host(t, hid);
}

/* ---- flow control (sending side) ---------------------------------------- */

/* The cost in credit of a message with plen payload bytes. */
static uint64_t
route_credit_cost(size_t plen)
{
    return (uint64_t)plen + ROUTE_CREDIT_MSG;
}

/* The credit entry for remote task dst, created if create; NULL if none
   (or create and no memory). */
static struct route_credit *
route_credit_find(struct daemon *d, uint32_t dst, int create)
{
    struct list_node *h, *n;
    struct route_credit *c;
    unsigned i;

    if (d->flow == NULL) {
        if (!create || (d->flow = malloc(sizeof(*d->flow))) == NULL)
            return NULL;
        for (i = 0; i < ROUTE_FLOW_BUCKETS; i++)
            list_init(&d->flow->buckets[i]);
    }
    h = &d->flow
             ->buckets[(dst ^ (dst >> 8) ^ (dst >> 20)) % ROUTE_FLOW_BUCKETS];
    LIST_FOREACH (n, h) {
        c = list_entry(n, struct route_credit, node);
        if (c->dst == dst)
            return c;
    }
    if (!create || (c = calloc(1, sizeof(*c))) == NULL)
        return NULL;
    c->dst = dst;
    list_init(&c->waiters);
    list_add_tail(h, &c->node);
    return c;
}

/* Frees c if nothing is in flight and nothing waits. */
static void
route_credit_put(struct route_credit *c)
{
    if (c->inflight == 0 && list_empty(&c->waiters)) {
        list_del(&c->node);
        free(c);
    }
}

/*
 * Forwards DATA f (+ payload) from local task t (NULL if gone) to its
 * destination's daemon hid, and pauses t while the transport queue
 * towards hid is over --task-queue-limit.  0 or a COLLS_E* code (the
 * caller tells the sender).
 */
static int
route_forward(struct daemon *d, struct task *t, int hid, const Envelope *f,
              const void *payload, size_t plen)
{
    int rc = route_host_status(d, hid);

    if (rc == 0)
        rc = net_send(d, hid, f, payload, plen);
    if (rc != 0)
        return rc;
    d->st.data_to_peer++;
    if (t != NULL)
        route_check_host_queue(t, hid);
    return 0;
}

/*
 * Holds DATA f from task t (payload in owner, or copied) on c until
 * credit comes back, and stops reading t.  Without memory for it, the
 * sender is told COLLS_ENOMEM.
 */
static void
route_hold(struct task *t, struct route_credit *c, const Envelope *f,
           const uint8_t *payload, size_t plen, uint8_t *owner)
{
    struct route_held *h = malloc(sizeof(*h));

    if (h != NULL && owner == NULL && plen > 0) {
        owner = malloc(plen);
        if (owner != NULL)
            memcpy(owner, payload, plen);
        payload = owner;
    }
    if (h == NULL || (plen > 0 && payload == NULL)) {
        free(h);
        free(owner);
        route_send_failed_local(t->d, t->tid, f->dst, COLLS_ENOMEM, f->req_id);
        route_credit_put(c);
        return;
    }
    h->env = *f;
    h->payload = payload;
    h->plen = plen;
    h->owner = owner;
    list_add_tail(&c->waiters, &h->node);
    task_pause_on_credit(t);
}

/*
 * Forwards the held messages of c, oldest first, while credit lasts, and
 * lets their senders be read again.  May free c.
 */
static void
route_credit_release(struct daemon *d, struct route_credit *c)
{
    uint64_t window = (uint64_t)d->cfg->task_credit;
    int hid = COLLS_TID_HID(c->dst), rc;

    while (!list_empty(&c->waiters) && c->inflight < window) {
        struct route_held *h =
            list_entry(list_first(&c->waiters), struct route_held, node);
        struct task *t = task_find(d, h->env.src);

        list_del(&h->node);
        if (t != NULL) {
            task_credit_granted(t);
            rc = route_forward(d, t, hid, &h->env, h->payload, h->plen);
            if (rc == 0)
                c->inflight += route_credit_cost(h->plen);
            else
                route_send_failed_local(d, t->tid, c->dst, rc, h->env.req_id);
        }
        free(h->owner);
        free(h);
    }
    route_credit_put(c);
}

/*
 * Remote task c->dst is gone (status: COLLS_EPEERDEAD, COLLS_EHOSTDOWN,
 * or what its daemon said): the held messages fail, their senders are
 * read again, and c is freed (no credit will come back for it).
 */
static void
route_credit_fail(struct daemon *d, struct route_credit *c, int status)
{
    struct list_node *n, *tmp;

    LIST_FOREACH_SAFE (n, tmp, &c->waiters) {
        struct route_held *h = list_entry(n, struct route_held, node);
        struct task *t = task_find(d, h->env.src);

        list_del(&h->node);
        if (t != NULL)
            task_credit_granted(t);
        route_send_failed_local(d, h->env.src, c->dst, status, h->env.req_id);
        free(h->owner);
        free(h);
    }
    list_del(&c->node);
    free(c);
}

/* Host hid went down: fails the credit entries of every task on it, and
   forgets what our tasks owed it. */
static void
route_credit_host_down(struct daemon *d, int hid)
{
    struct list_node *n, *tmp;
    unsigned i;

    task_credit_forget(d, hid);
    for (i = 0; d->flow != NULL && i < ROUTE_FLOW_BUCKETS; i++)
        LIST_FOREACH_SAFE (n, tmp, &d->flow->buckets[i]) {
            struct route_credit *c = list_entry(n, struct route_credit, node);

            if (COLLS_TID_HID(c->dst) == hid)
                route_credit_fail(d, c, COLLS_EHOSTDOWN);
        }
}

/* Drops the message local task tid held (it exited). */
static void
route_credit_sender_gone(struct daemon *d, uint32_t tid)
{
    struct list_node *n, *tmp, *m, *mtmp;
    unsigned i;

    for (i = 0; d->flow != NULL && i < ROUTE_FLOW_BUCKETS; i++)
        LIST_FOREACH_SAFE (n, tmp, &d->flow->buckets[i]) {
            struct route_credit *c = list_entry(n, struct route_credit, node);

            LIST_FOREACH_SAFE (m, mtmp, &c->waiters) {
                struct route_held *h = list_entry(m, struct route_held, node);

                if (h->env.src != tid)
                    continue;
                list_del(&h->node);
                free(h->owner);
                free(h);
            }
            route_credit_release(d, c); /* others may go first now */
        }
}

/* CREDIT {task, bytes} from daemon hid: less is in flight to task. */
static void
route_peer_credit(struct daemon *d, int hid, const Envelope *e)
{
    struct route_credit *c;

    if (e->body_case != ENVELOPE__BODY_CREDIT ||
        COLLS_TID_HID(e->credit->task) != hid) {
        d->st.bad_peer_msgs++;
        return;
    }
    d->st.credits_in++;
    c = route_credit_find(d, e->credit->task, 0);
    if (c == NULL)
        return; /* forgotten: the task died, or we restarted */
    c->inflight -=
        e->credit->bytes < c->inflight ? e->credit->bytes : c->inflight;
    route_credit_release(d, c);
}

void
route_free_all(struct daemon *d)
{
    struct list_node *n, *tmp;
    unsigned i;

    for (i = 0; d->flow != NULL && i < ROUTE_FLOW_BUCKETS; i++)
        LIST_FOREACH_SAFE (n, tmp, &d->flow->buckets[i]) {
            struct route_credit *c = list_entry(n, struct route_credit, node);
            struct list_node *m, *mtmp;

            LIST_FOREACH_SAFE (m, mtmp, &c->waiters) {
                struct route_held *h = list_entry(m, struct route_held, node);

                free(h->owner);
                free(h);
            }
            free(c);
        }
    free(d->flow);
    d->flow = NULL;
    free(d->exits);
    d->exits = NULL;
}

/* Remembers that tid ended with status (-1 unknown). */
static void
route_exit_record(struct daemon *d, uint32_t tid, int status)
{
    if (d->exits == NULL && (d->exits = calloc(1, sizeof(*d->exits))) == NULL)
        return; /* only the late notifications lose their status */
    d->exits->tid[d->exits->next] = tid;
    d->exits->status[d->exits->next] = status;
    d->exits->next = (d->exits->next + 1) % ROUTE_EXITS;
}

/* 1 and *status if tid is remembered to have ended, else 0. */
static int
route_exit_known(const struct daemon *d, uint32_t tid, int *status)
{
    unsigned i;

    for (i = 0; d->exits != NULL && i < ROUTE_EXITS; i++)
        if (d->exits->tid[i] == tid && tid != 0) {
            *status = d->exits->status[i];
            return 1;
        }
    return 0;
}

/* DATA from task t. */
static void
route_data(struct task *t, const Envelope *in, const uint8_t *payload,
           size_t plen, uint8_t *owner)
{
    struct daemon *d = t->d;
    uint32_t dst = in->dst;
    int hid = COLLS_TID_HID(dst), rc;
    Envelope f;

    t->st.msgs_sent++;
    stats_hist_add(&d->st.msg_bytes, plen);
    /* What the task may say about its message; the rest is ours. */
    envelope_reply(&f, t->tid, dst, KIND__DATA, in->req_id, 0);
    f.tag = in->tag;
    f.route = in->route;
    f.flags = in->flags & ROUTE_TASK_FLAGS;
    f.dtype = in->dtype;
    f.count = in->count;
    f.encoding = in->encoding;
    f.byte_order = in->byte_order;

    if (hid == d->hid) {
        struct task *u;

        if (daemon_tid_is_daemon(dst)) {
            d->st.data_echo++;
            f.src = COLLS_DAEMON_TID(d->hid);
            f.dst = t->tid;
            f.flags |= ENV_F_ECHO;
            task_queue_env(t, &f, payload, plen, owner);
            return;
        }
        u = task_find(d, dst);
        if (u == NULL && route_hold_local(d, &f, payload, plen) == 0) {
            free(owner);
            return;
        }
        if (u == NULL) {
            free(owner);
            route_send_failed_local(d, t->tid, dst, route_local_status(d, dst),
                                    in->req_id);
            return;
        }
        d->st.data_local++;
        u->st.msgs_recv++;
        task_queue_env(u, &f, payload, plen, owner);
        route_check_task_queue(t, u);
        return;
    }
    rc = route_host_status(d, hid);
    if (rc == 0 && !daemon_tid_is_daemon(dst)) {
        struct route_credit *c = route_credit_find(d, dst, 1);

        if (c == NULL) {
            rc = COLLS_ENOMEM;
        } else if (c->inflight >= (uint64_t)d->cfg->task_credit ||
                   !list_empty(&c->waiters)) {
            route_hold(t, c, &f, payload, plen, owner);
            return;
        } else {
            rc = route_forward(d, t, hid, &f, payload, plen);
            if (rc == 0)
                c->inflight += route_credit_cost(plen);
            route_credit_put(c);
        }
    } else if (rc == 0) {
        rc = route_forward(d, t, hid, &f, payload, plen);
    }
    free(owner);
    if (rc != 0)
        route_send_failed_local(d, t->tid, dst, rc, in->req_id);
}

/* Sends the NOTIFY DATA {what, who} with tag to task tid; TASK_EXIT
   adds the exit status (-1: unknown, sent as 0xffffffff). */
static void
route_notify_fire(struct daemon *d, uint32_t tid, uint32_t what, int32_t who,
                  int32_t tag, int status)
{
    struct task *t = task_find(d, tid);
    uint8_t body[12];
    size_t len = what == COLLS_NOTIFY_TASK_EXIT ? 12 : 8;
    Envelope e;

    if (t == NULL)
        return;
    put_u32(body, what);
    put_u32(body + 4, (uint32_t)who);
    put_u32(body + 8, status < 0 ? 0xffffffffu : (uint32_t)status);
    envelope_reply(&e, COLLS_DAEMON_TID(d->hid), tid, KIND__DATA, 0, 0);
    e.tag = tag;
    e.flags = ENV_F_NOTIFY;
    e.dtype = COLLS_BYTE;
    e.count = len;
    d->st.notifies_sent++;
    task_queue_env(t, &e, body, len, NULL);
}

/* Is task tid known to be gone (its exit or host already seen)?  Its
   exit status in *status (-1 unknown). */
static int
route_tid_gone(struct daemon *d, uint32_t tid, int *status)
{
    int hid = COLLS_TID_HID(tid);

    *status = -1;
    if (route_exit_known(d, tid, status))
        return 1;
    if (hid == d->hid)
        return task_find(d, tid) == NULL && !spawn_child_alive(d, tid);
    return route_host_status(d, hid) != 0;
}

/* NOTIFY_REQ {what, who, tag}: fires at once if it already happened. */
static void
route_notify_req(struct task *t, const Envelope *e)
{
    struct daemon *d = t->d;
    const NotifyReq *r = e->notify_req;
    struct notify *n;
    int status;

    if (e->body_case != ENVELOPE__BODY_NOTIFY_REQ ||
        (r->what != COLLS_NOTIFY_TASK_EXIT &&
         r->what != COLLS_NOTIFY_HOST_DOWN &&
         r->what != COLLS_NOTIFY_HOST_ADD) ||
        (r->what == COLLS_NOTIFY_HOST_DOWN && r->who != -1 &&
         (r->who < 1 || r->who > DAEMON_MAX_HID))) {
        d->st.bad_requests++;
        task_error(t, e->req_id, COLLS_EINVAL, "bad NOTIFY_REQ");
        return;
    }
    if (t->nnotify >= ROUTE_NOTIFY_MAX) {
        task_error(t, e->req_id, COLLS_ENOBUFS,
                   "too many notification requests waiting");
        return;
    }
    if ((r->what == COLLS_NOTIFY_TASK_EXIT &&
         route_tid_gone(d, (uint32_t)r->who, &status)) ||
        (r->what == COLLS_NOTIFY_HOST_DOWN && r->who != -1 &&
         !host_is_up(d, r->who))) {
        route_notify_fire(d, t->tid, r->what, r->who, r->tag,
                          r->what == COLLS_NOTIFY_TASK_EXIT ? status : -1);
        return;
    }
    n = calloc(1, sizeof(*n));
    if (n == NULL) {
        task_error(t, e->req_id, COLLS_ENOMEM, "out of memory");
        return;
    }
    n->tid = t->tid;
    n->what = r->what;
    n->who = r->what == COLLS_NOTIFY_HOST_ADD ? -1 : r->who;
    n->tag = r->tag;
    n->next = d->notifies;
    d->notifies = n;
    t->nnotify++;
}

/*
 * Fires and removes the notifications matching (what, who); for
 * HOST_DOWN, also those asking about any host (kept) and TASK_EXIT of
 * tasks on that host; HOST_ADD fires every HOST_ADD request (kept).
 * status: TASK_EXIT's exit status, -1 unknown.
 */
static void
route_notify_event(struct daemon *d, uint32_t what, int32_t who, int status)
{
    struct notify **pp = &d->notifies, *n;

    while ((n = *pp) != NULL) {
        int fire = 0, keep = 0;

        if (what == COLLS_NOTIFY_HOST_ADD && n->what == what)
            fire = keep = 1;
        else if (n->what == what && n->who == who)
            fire = 1;
        else if (what == COLLS_NOTIFY_HOST_DOWN &&
                 n->what == COLLS_NOTIFY_HOST_DOWN && n->who == -1)
            fire = keep = 1;
        else if (what == COLLS_NOTIFY_HOST_DOWN &&
                 n->what == COLLS_NOTIFY_TASK_EXIT &&
                 COLLS_TID_HID((uint32_t)n->who) == who)
            fire = 1;
        if (fire)
            route_notify_fire(d, n->tid, n->what,
                              n->what == what ? who : n->who, n->tag,
                              what == COLLS_NOTIFY_TASK_EXIT ? status : -1);
        if (fire && !keep) {
            struct task *t = task_find(d, n->tid);

            if (t != NULL)
                t->nnotify--;
            *pp = n->next;
            free(n);
        } else {
            pp = &n->next;
        }
    }
}

/* Drops the notifications requested by tid (it exited). */
static void
route_notify_forget(struct daemon *d, uint32_t tid)
{
    struct notify **pp = &d->notifies, *n;

    while ((n = *pp) != NULL) {
        if (n->tid == tid) {
            *pp = n->next;
            free(n);
        } else {
            pp = &n->next;
        }
    }
}

/* Starts e as the TASK_EXIT of tid; x is its body when status is known. */
static void
route_exit_env(Envelope *e, TaskExit *x, uint32_t tid, int status)
{
    envelope_reply(e, tid, 0, KIND__TASK_EXIT, 0, 0);
    if (status >= 0) {
        x->known = 1;
        x->status = (uint32_t)status;
        e->body_case = ENVELOPE__BODY_TASK_EXIT;
        e->task_exit = x;
    }
}

void
route_task_gone(struct daemon *d, uint32_t tid, int status)
{
    TaskExit x = TASK_EXIT__INIT;
    struct route_credit *c;
    Envelope e;

    route_exit_record(d, tid, status);
    route_exit_env(&e, &x, tid, status);
    task_notice_all(d, &e, tid);
    route_notify_forget(d, tid);
    route_notify_event(d, COLLS_NOTIFY_TASK_EXIT, (int32_t)tid, status);
    if (COLLS_TID_HID(tid) != d->hid &&
        (c = route_credit_find(d, tid, 0)) != NULL)
        route_credit_fail(d, c, COLLS_EPEERDEAD);
}

void
route_task_exit(struct daemon *d, uint32_t tid, int status)
{
    TaskExit x = TASK_EXIT__INIT;
    Envelope e;
    int hid;

    route_credit_sender_gone(d, tid);
    route_exit_env(&e, &x, tid, status);
    for (hid = 1; hid <= DAEMON_MAX_HID; hid++)
        if (hid != d->hid && d->hosts[hid] != NULL &&
            d->hosts[hid]->state == COLLS_HOST_UP)
            net_send(d, hid, &e, NULL, 0);
}

void
route_host_down(struct daemon *d, int hid, uint32_t inc)
{
    HostOp op = HOST_OP__INIT;
    Envelope e;

    host_down_env(d, &e, &op, hid, inc);
    task_notice_all(d, &e, 0);
    route_notify_event(d, COLLS_NOTIFY_HOST_DOWN, hid, -1);
    route_credit_host_down(d, hid);
}

void
route_host_add(struct daemon *d, int hid)
{
    route_notify_event(d, COLLS_NOTIFY_HOST_ADD, hid, -1);
}

/*
 * Answers a ROUTE_REQ of task asker for a local tid: its address and the
 * asker's ticket for it (tk: COLLS_TICKET_LEN bytes the reply points to).
 */
static void
route_rep_local(struct daemon *d, uint32_t asker, uint32_t dst, RouteRep *rep,
                uint8_t tk[COLLS_TICKET_LEN], int *status)
{
    struct task *u = task_find(d, dst);

    rep->tid = dst;
    if (u == NULL)
        *status = route_local_status(d, dst);
    else if (u->direct_addr[0] == '\0')
        *status = COLLS_ENOENT;
    else {
        rep->addr = u->direct_addr;
        put_u64(tk, colls_direct_ticket(u->direct_key, asker, dst));
        rep->ticket.data = tk;
        rep->ticket.len = COLLS_TICKET_LEN;
    }
}

/* Sends ROUTE_REP to task t: dst's address and t's ticket for it (each
   may be NULL). */
static void
route_rep_to_task(struct task *t, uint64_t req_id, uint32_t dst,
                  const char *addr, const ProtobufCBinaryData *ticket,
                  int status)
{
    RouteRep rep = ROUTE_REP__INIT;
    Envelope r;

    task_reply_init(&r, t, KIND__ROUTE_REP, req_id, status);
    rep.tid = dst;
    if (addr != NULL)
        rep.addr = (char *)addr;
    if (ticket != NULL && ticket->len == COLLS_TICKET_LEN)
        rep.ticket = *ticket;
    r.body_case = ENVELOPE__BODY_ROUTE_REP;
    r.route_rep = &rep;
    task_queue_env(t, &r, NULL, 0, NULL);
}

/* ROUTE_REQ {dst}: local answer, or asks dst's daemon. */
static void
route_route_req(struct task *t, const Envelope *e)
{
    struct daemon *d = t->d;
    int hid = COLLS_TID_HID(e->dst), status = 0;
    struct pending *p;
    Envelope q;

    if (hid == d->hid) {
        RouteRep rep = ROUTE_REP__INIT;
        uint8_t tk[COLLS_TICKET_LEN];

        route_rep_local(d, t->tid, e->dst, &rep, tk, &status);
        route_rep_to_task(t, e->req_id, e->dst, rep.addr, &rep.ticket, status);
        return;
    }
    status = route_host_status(d, hid);
    if (status != 0) {
        route_rep_to_task(t, e->req_id, e->dst, NULL, NULL, status);
        return;
    }
    p = admin_pending_new(d, PEND_ROUTE, t->tid, e->req_id);
    if (p == NULL) {
        route_rep_to_task(t, e->req_id, e->dst, NULL, NULL, COLLS_ENOMEM);
        return;
    }
    p->dst = e->dst;
    p->asked[hid] = 1;
    p->waiting = 1;
    envelope_reply(&q, t->tid, e->dst, KIND__ROUTE_REQ, p->id, 0);
    status = net_send(d, hid, &q, NULL, 0);
    if (status != 0) {
        admin_pending_done(d, p);
        route_rep_to_task(t, e->req_id, e->dst, NULL, NULL, status);
    }
}

/* ROUTE_REG {route_rep: tid, addr, key}: the task's direct listener and
   the key of its tickets (a listener without one would refuse every
   connection: refused). */
static void
route_route_reg(struct task *t, const Envelope *e)
{
    const char *addr;

    if (e->body_case != ENVELOPE__BODY_ROUTE_REP ||
        (addr = e->route_rep->addr) == NULL ||
        strlen(addr) >= sizeof(t->direct_addr) ||
        e->route_rep->key.len != SIPHASH_KEY_LEN) {
        t->d->st.bad_requests++;
        task_error(t, e->req_id, COLLS_EINVAL, "bad ROUTE_REG");
        return;
    }
    snprintf(t->direct_addr, sizeof(t->direct_addr), "%s", addr);
    memcpy(t->direct_key, e->route_rep->key.data, SIPHASH_KEY_LEN);
}

void
route_task_input(struct task *t, const Envelope *e, const uint8_t *payload,
                 size_t plen, uint8_t *owner)
{
    struct daemon *d = t->d;

    switch ((int)e->kind) {
    case KIND__DATA:
        route_data(t, e, payload, plen, owner);
        return;
    case KIND__DETACH:
        free(owner);
        spawn_detach(d, t->tid);
        task_close(t, "detached");
        return;
    case KIND__COLL_REQ:
        coll_task_req(t, e, payload, plen, owner);
        return;
    case KIND__GROUP_JOIN:
        group_task_join(t, e);
        break;
    case KIND__GROUP_LEAVE:
        group_task_leave(t, e);
        break;
    case KIND__NOTIFY_REQ:
        route_notify_req(t, e);
        break;
    case KIND__ROUTE_REG:
        route_route_reg(t, e);
        break;
    case KIND__ROUTE_REQ:
        route_route_req(t, e);
        break;
    case KIND__SPAWN_REQ:
        spawn_task_req(t, e);
        break;
    case KIND__CATCHOUT:
        spawn_catchout(t, e);
        break;
    case KIND__KILL_REQ:
        spawn_kill_req(t, e);
        break;
    case KIND__PING_REQ:
        /* Its echo payload (up to 16 MiB) goes to the host in dst. */
        admin_task_request(t, e, payload, plen);
        route_check_host_queue(t, (int)e->dst);
        break;
    case KIND__PARAMS_REQ:
    case KIND__STATUS_REQ:
    case KIND__HOSTS_REQ:
    case KIND__TASKS_REQ:
    case KIND__STATS_REQ:
    case KIND__ADD_HOST:
    case KIND__DELETE_HOST:
    case KIND__HALT:
        admin_task_request(t, e, payload, plen);
        break;
    case KIND__ATTACH_REQ:
        d->st.bad_requests++;
        task_error(t, e->req_id, COLLS_EPROTO, "already attached");
        break;
    default:
        d->st.unknown_kinds++;
        log_debug("task t%x: unknown kind %d", t->tid, (int)e->kind);
        task_error(t, e->req_id, COLLS_ENOTSUP, "unknown message kind");
        break;
    }
    free(owner);
}

/* DATA from daemon hid. */
static void
route_peer_data(struct daemon *d, int hid, const Envelope *e, uint8_t *msg,
                size_t len, size_t off)
{
    struct task *u;
    Envelope f;

    /* A daemon speaks for its own tasks only, and to ours. */
    if (COLLS_TID_HID(e->dst) != d->hid || COLLS_TID_HID(e->src) != hid) {
        d->st.bad_peer_msgs++;
        free(msg);
        return;
    }
    if (daemon_tid_is_daemon(e->dst)) {
        /* Echo back to the sender, over the same stream. */
        f = *e;
        f.base.unknown_fields = NULL;
        f.base.n_unknown_fields = 0;
        f.src = COLLS_DAEMON_TID(d->hid);
        f.dst = e->src;
        f.flags |= ENV_F_ECHO;
        d->st.data_echo++;
        if (COLLS_TID_HID(e->src) == hid)
            net_send(d, hid, &f, msg + off, len - off);
        free(msg);
        return;
    }
    u = task_find(d, e->dst);
    if (u == NULL &&
        spawn_hold(d, e->dst, hid,
                   daemon_tid_is_daemon(e->src) ? 0
                                                : route_credit_cost(len - off),
                   msg + 4, off - 4, len - 4, msg) == 0)
        return; /* a copy that has not attached yet */
    if (u == NULL) {
        envelope_reply(&f, e->src, e->dst, KIND__SEND_FAILED, e->req_id,
                       route_local_status(d, e->dst));
        d->st.send_failed++;
        net_send(d, hid, &f, NULL, 0);
        free(msg);
        return;
    }
    d->st.data_from_peer++;
    u->st.msgs_recv++;
    log_trace("DATA t%x -> t%x tag %d, %zu bytes, from host %d", e->src, e->dst,
              e->tag, len - off, hid);
    /* Reuse the packed envelope and the payload where they lie.  A
       task's DATA came under hid's credit for u, owed back as u reads
       (task.c); echoes from hid's daemon did not (their sender, u, is
       paused on its own queue instead). */
    task_queue_peer(
        u, hid, daemon_tid_is_daemon(e->src) ? 0 : route_credit_cost(len - off),
        msg + 4, off - 4, len - 4, msg);
}

/* SEND_FAILED from dst's daemon: dst is not there, so no credit for it
   comes back; what waits for it fails too. */
static void
route_peer_send_failed(struct daemon *d, const Envelope *e)
{
    struct route_credit *c = route_credit_find(d, e->dst, 0);

    route_send_failed_local(d, e->src, e->dst, e->status, e->req_id);
    if (c != NULL)
        route_credit_fail(d, c, e->status);
}

/* ROUTE_REQ from daemon hid about one of our tasks. */
static void
route_peer_route_req(struct daemon *d, int hid, const Envelope *e)
{
    RouteRep rep = ROUTE_REP__INIT;
    uint8_t tk[COLLS_TICKET_LEN];
    int status = 0;
    Envelope r;

    /* a daemon asks for its own tasks only: a ticket names the asker */
    if (COLLS_TID_HID(e->src) != hid || COLLS_TID_LOCAL(e->src) == 0) {
        rep.tid = e->dst;
        status = COLLS_EINVAL;
    } else
        route_rep_local(d, e->src, e->dst, &rep, tk, &status);
    envelope_reply(&r, COLLS_DAEMON_TID(d->hid), e->src, KIND__ROUTE_REP,
                   e->req_id, status);
    r.body_case = ENVELOPE__BODY_ROUTE_REP;
    r.route_rep = &rep;
    net_send(d, hid, &r, NULL, 0);
}

/* ROUTE_REP from a daemon: relay to the task that asked. */
static void
route_peer_route_rep(struct daemon *d, int hid, const Envelope *e)
{
    struct pending *p = admin_pending_find(d, e->req_id);
    const RouteRep *rr;
    struct task *t;

    if (p == NULL || p->kind != PEND_ROUTE || !p->asked[hid])
        return; /* timed out already */
    t = task_find(d, p->task_tid);
    rr = e->body_case == ENVELOPE__BODY_ROUTE_REP ? e->route_rep : NULL;
    if (t != NULL)
        route_rep_to_task(t, p->task_req, p->dst, rr ? rr->addr : NULL,
                          rr ? &rr->ticket : NULL, e->status);
    admin_pending_done(d, p);
}

void
route_peer_input(struct daemon *d, int hid, const Envelope *e, uint8_t *msg,
                 size_t len, size_t payload_off)
{
    if (host_heard(d, hid, e) != 0) {
        free(msg);
        return;
    }
    switch ((int)e->kind) {
    case KIND__DATA:
        route_peer_data(d, hid, e, msg, len, payload_off);
        return;
    case KIND__COLL_DATA:
        coll_peer_data(d, hid, e, msg, len, payload_off);
        return;
    case KIND__GROUP_JOIN:
    case KIND__GROUP_FORMED:
    case KIND__GROUP_FAILED:
    case KIND__GROUP_LEAVE:
        group_peer_msg(d, hid, e);
        break;
    case KIND__SEND_FAILED:
        if (COLLS_TID_HID(e->src) == d->hid && COLLS_TID_HID(e->dst) == hid)
            route_peer_send_failed(d, e);
        else
            d->st.bad_peer_msgs++;
        break;
    case KIND__CREDIT:
        route_peer_credit(d, hid, e);
        break;
    case KIND__TASK_EXIT:
        log_trace("TASK_EXIT t%x from host %d", e->src, hid);
        if (COLLS_TID_HID(e->src) == hid)
            events_task_gone(d, e->src,
                             e->body_case == ENVELOPE__BODY_TASK_EXIT &&
                                     e->task_exit->known &&
                                     e->task_exit->status <= 255 + 128
                                 ? (int)e->task_exit->status
                                 : -1);
        break;
    case KIND__ROUTE_REQ:
        route_peer_route_req(d, hid, e);
        break;
    case KIND__ROUTE_REP:
        route_peer_route_rep(d, hid, e);
        break;
    case KIND__HEARTBEAT:
    case KIND__HOST_TABLE:
    case KIND__HOST_DOWN:
    case KIND__HALT_ALL:
        host_peer_msg(d, hid, e);
        break;
    case KIND__HOST_JOIN:
    case KIND__ADD_HOST:
    case KIND__DELETE_HOST:
        join_peer_msg(d, hid, e);
        break;
    case KIND__SPAWN_ORDER:
    case KIND__SPAWN_DONE:
    case KIND__SPAWN_OUTPUT:
    case KIND__KILL_ORDER:
    case KIND__KILL_DONE:
        spawn_peer_msg(d, hid, e, msg + payload_off, len - payload_off);
        break;
    case KIND__PROBE_REQ:
    case KIND__PROBE_REP:
    case KIND__PROBE_TRAIN:
    case KIND__PROBE_SPAN:
    case KIND__PARAMS_SHARE:
    case KIND__PROBE_LOAD:
    case KIND__PROBE_LOAD_DONE:
        measure_peer_msg(d, hid, e, msg + payload_off, len - payload_off);
        break;
    case KIND__ECHO_REQ:
    case KIND__ECHO_REP:
    case KIND__TASKS_QUERY:
    case KIND__TASKS_ANSWER:
        admin_peer_msg(d, hid, e, msg + payload_off, len - payload_off);
        break;
    default:
        d->st.bad_peer_msgs++;
        log_debug("host %d: unexpected kind %d", hid, (int)e->kind);
        break;
    }
    free(msg);
}
