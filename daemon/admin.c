/*
 * admin.c -- collsctl's requests and the requests waiting on other
 * daemons.
 *
 * Every request from a task carries a req_id that its reply repeats.  A
 * request that needs another daemon (ps of a remote host, ping, a remote
 * route) becomes a struct pending with its own id, sent on the daemon
 * wire; the answer finds it by that id, or admin_cron times it out after
 * --request-timeout, or admin_host_down answers it when the host dies.
 * A pending request never points at the task: the reply goes to the
 * task's tid if it is still attached.
 *
 * Rights: the verbs that change the machine (add, delete, halt) need
 * TASK_RIGHT_ADMIN, which task.c gave the connection from its peer
 * credentials; a task that only may attach gets ERROR COLLS_EPERM saying
 * how to get it (admin_verbs[], admin_refuse).
 *
 * May call: host and join (the table, add/delete/halt), task, net and udp
 * (downward; udp for its drop counter), stats, group and coll (their
 * statistics).  admin_host_down
 * is called by events.c, admin_cron by collsd.c's cron.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "colls.h"
#include "daemon/admin.h"
#include "daemon/auth.h"
#include "daemon/coll.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/group.h"
#include "daemon/host.h"
#include "daemon/join.h"
#include "daemon/log.h"
#include "daemon/measure.h"
#include "daemon/net.h"
#include "daemon/platform.h"
#include "daemon/rel.h"
#include "daemon/stats.h"
#include "daemon/task.h"
#include "daemon/udp.h"
#include "proto/envelope.h"
#include "proto/list.h"

#define ADMIN_TASKS_ALL 0xffffffffu
#define ADMIN_PING_MAX  (16u * 1024 * 1024) /* bytes per daemon echo */

/* ---- pending requests --------------------------------------------------- */

struct pending *
admin_pending_new(struct daemon *d, int kind, uint32_t task_tid,
                  uint64_t task_req)
{
    static const TaskList init = TASK_LIST__INIT;
    struct pending *p = calloc(1, sizeof(*p));

    if (p == NULL)
        return NULL;
    p->kind = (enum pending_kind)kind;
    p->id = ++d->next_req;
    p->task_tid = task_tid;
    p->task_req = task_req;
    p->start_us = platform_now_us();
    p->deadline_us = p->start_us + (uint64_t)d->cfg->request_timeout_ms * 1000u;
    p->list = init;
    list_add_head(&d->pending, &p->node); /* newest first */
    return p;
}

struct pending *
admin_pending_find(struct daemon *d, uint64_t id)
{
    struct list_node *n;

    LIST_FOREACH (n, &d->pending) {
        struct pending *p = list_entry(n, struct pending, node);

        if (p->id == id)
            return p;
    }
    return NULL;
}

void
admin_pending_free_all(struct daemon *d)
{
    struct list_node *n;

    while ((n = list_first(&d->pending)) != NULL)
        admin_pending_done(d, list_entry(n, struct pending, node));
}

/* Frees the task entries collected by a PEND_TASKS. */
static void
admin_list_free(TaskList *l)
{
    size_t i;

    for (i = 0; i < l->n_tasks; i++) {
        free(l->tasks[i]->name);
        free(l->tasks[i]->direct_addr);
        free(l->tasks[i]->channel);
        free(l->tasks[i]);
    }
    free(l->tasks);
    l->tasks = NULL;
    l->n_tasks = 0;
}

void
admin_pending_done(struct daemon *d, struct pending *p)
{
    list_del(&p->node);
    admin_list_free(&p->list);
    free(p);
}

/* Appends one task entry (strings copied) to l; 0 or COLLS_ENOMEM. */
static int
admin_list_add(TaskList *l, uint32_t tid, int pid, int uid, const char *name,
               const char *direct, uint32_t parent, const char *channel)
{
    static const TaskEntry init = TASK_ENTRY__INIT;
    TaskEntry **nv, *te;

    nv = realloc(l->tasks, (l->n_tasks + 1) * sizeof(*nv));
    if (nv == NULL)
        return COLLS_ENOMEM;
    l->tasks = nv;
    te = malloc(sizeof(*te));
    if (te == NULL)
        return COLLS_ENOMEM;
    *te = init;
    te->tid = tid;
    te->pid = pid;
    te->uid = uid;
    te->parent = parent;
    te->name = strdup(name != NULL ? name : "");
    te->direct_addr = strdup(direct != NULL ? direct : "");
    te->channel = strdup(channel != NULL ? channel : "");
    if (te->name == NULL || te->direct_addr == NULL || te->channel == NULL) {
        free(te->name);
        free(te->direct_addr);
        free(te->channel);
        free(te);
        return COLLS_ENOMEM;
    }
    l->tasks[l->n_tasks++] = te;
    return 0;
}

/* Adds this daemon's attached tasks to l. */
static int
admin_list_local(struct daemon *d, TaskList *l)
{
    struct task *t;
    int rc;

    for (t = d->tasks; t != NULL; t = t->next) {
        if (t->state != TASK_ST_ACTIVE)
            continue;
        rc = admin_list_add(l, t->tid, (int)t->pid, (int)t->uid, t->name,
                            t->direct_addr, t->parent, task_channel(t));
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Sends r (a reply: kind, req_id, status and body set) from this daemon
   to task tid, if it is still attached. */
static void
admin_reply_to(struct daemon *d, uint32_t tid, Envelope *r)
{
    struct task *t = task_find(d, tid);

    if (t == NULL)
        return;
    r->src = COLLS_DAEMON_TID(d->hid);
    r->dst = tid;
    task_queue_env(t, r, NULL, 0, NULL);
}

/* Sends TASKS_REP with list l to task tid (if still attached). */
static void
admin_tasks_reply(struct daemon *d, uint32_t tid, uint64_t req_id, TaskList *l,
                  int status)
{
    Envelope r;

    envelope_reply(&r, 0, 0, KIND__TASKS_REP, req_id, status);
    r.body_case = ENVELOPE__BODY_TASK_LIST;
    r.task_list = l;
    admin_reply_to(d, tid, &r);
}

/* Sends PING_REP to task tid. */
static void
admin_ping_reply(struct daemon *d, uint32_t tid, uint64_t req_id, double rtt_us,
                 int status)
{
    PingRep pr = PING_REP__INIT;
    Envelope r;

    envelope_reply(&r, 0, 0, KIND__PING_REP, req_id, status);
    pr.rtt_us = rtt_us;
    r.body_case = ENVELOPE__BODY_PING_REP;
    r.ping_rep = &pr;
    admin_reply_to(d, tid, &r);
}

/* Sends ROUTE_REP with an error to the task that asked p. */
static void
admin_route_fail(struct daemon *d, struct pending *p, int status)
{
    RouteRep rep = ROUTE_REP__INIT;
    Envelope r;

    envelope_reply(&r, 0, 0, KIND__ROUTE_REP, p->task_req, status);
    rep.tid = p->dst;
    r.body_case = ENVELOPE__BODY_ROUTE_REP;
    r.route_rep = &rep;
    admin_reply_to(d, p->task_tid, &r);
}

/* Ends p with status (timeout, host down). */
static void
admin_pending_fail(struct daemon *d, struct pending *p, int status)
{
    switch (p->kind) {
    case PEND_TASKS:
        /* What was collected is the answer; hosts that did not answer
           are missing from it. */
        admin_tasks_reply(d, p->task_tid, p->task_req, &p->list,
                          p->list.n_tasks > 0 ? 0 : status);
        break;
    case PEND_ROUTE:
        admin_route_fail(d, p, status);
        break;
    case PEND_PING:
        admin_ping_reply(d, p->task_tid, p->task_req, 0, status);
        break;
    }
    admin_pending_done(d, p);
}

void
admin_cron(struct daemon *d, uint64_t now_us)
{
    struct list_node *n, *tmp;

    LIST_FOREACH_SAFE (n, tmp, &d->pending) {
        struct pending *p = list_entry(n, struct pending, node);

        if (now_us >= p->deadline_us) {
            d->st.requests_timed_out++;
            admin_pending_fail(d, p, COLLS_ETIMEDOUT);
        }
    }
}

void
admin_host_down(struct daemon *d, int hid)
{
    struct list_node *n, *tmp;

    LIST_FOREACH_SAFE (n, tmp, &d->pending) {
        struct pending *p = list_entry(n, struct pending, node);

        if (!p->asked[hid])
            continue;
        if (p->kind == PEND_TASKS) {
            p->asked[hid] = 0;
            if (--p->waiting <= 0) {
                admin_tasks_reply(d, p->task_tid, p->task_req, &p->list, 0);
                admin_pending_done(d, p);
            }
        } else {
            admin_pending_fail(d, p, COLLS_EHOSTDOWN);
        }
    }
}

/* ---- requests from tasks ------------------------------------------------ */

/* The AdminTarget of a TASKS_REQ or PING_REQ; all zero if it has none. */
static const AdminTarget *
admin_target(const Envelope *e)
{
    static const AdminTarget none = ADMIN_TARGET__INIT;

    return e->body_case == ENVELOPE__BODY_ADMIN_TARGET ? e->admin_target
                                                       : &none;
}

/* TASKS_REQ {admin_target: hid (0 local) or all}. */
static void
admin_tasks_req(struct task *t, const Envelope *e)
{
    struct daemon *d = t->d;
    const AdminTarget *at = admin_target(e);
    uint32_t dst = at->all ? ADMIN_TASKS_ALL : at->hid;
    struct pending *p;
    Envelope q;
    int hid;

    if (dst == 0 || dst == (uint32_t)d->hid) {
        TaskList l = TASK_LIST__INIT;
        int rc = admin_list_local(d, &l);

        admin_tasks_reply(d, t->tid, e->req_id, &l, rc);
        admin_list_free(&l);
        return;
    }
    if (dst != ADMIN_TASKS_ALL && !host_is_up(d, (int)dst)) {
        TaskList l = TASK_LIST__INIT;

        admin_tasks_reply(d, t->tid, e->req_id, &l,
                          dst <= DAEMON_MAX_HID && d->hosts[dst] != NULL
                              ? COLLS_EHOSTDOWN
                              : COLLS_ENOENT);
        return;
    }
    p = admin_pending_new(d, PEND_TASKS, t->tid, e->req_id);
    if (p == NULL) {
        task_error(t, e->req_id, COLLS_ENOMEM, "out of memory");
        return;
    }
    envelope_reply(&q, COLLS_DAEMON_TID(d->hid), 0, KIND__TASKS_QUERY, p->id,
                   0);
    for (hid = 1; hid <= DAEMON_MAX_HID; hid++) {
        if (hid == d->hid || !host_is_up(d, hid) ||
            (dst != ADMIN_TASKS_ALL && (uint32_t)hid != dst))
            continue;
        if (net_send(d, hid, &q, NULL, 0) == 0) {
            p->asked[hid] = 1;
            p->waiting++;
        }
    }
    if (dst == ADMIN_TASKS_ALL && admin_list_local(d, &p->list) != 0) {
        admin_pending_fail(d, p, COLLS_ENOMEM);
        return;
    }
    if (p->waiting == 0) {
        admin_tasks_reply(d, t->tid, e->req_id, &p->list, 0);
        admin_pending_done(d, p);
    }
}

/* PING_REQ {admin_target: hid, bytes}: ECHO_REQ of that many bytes, RTT
   on ECHO_REP. */
static void
admin_ping_req(struct task *t, const Envelope *e)
{
    struct daemon *d = t->d;
    const AdminTarget *at = admin_target(e);
    uint64_t bytes = at->bytes;
    int hid = at->hid <= DAEMON_MAX_HID ? (int)at->hid : -1, rc;
    struct pending *p;
    uint8_t *payload = NULL;
    Envelope q;

    if (bytes > ADMIN_PING_MAX) {
        admin_ping_reply(d, t->tid, e->req_id, 0, COLLS_EMSGSIZE);
        return;
    }
    if (hid == 0 || hid == d->hid) {
        admin_ping_reply(d, t->tid, e->req_id, 0, 0);
        return;
    }
    if (!host_is_up(d, hid)) {
        admin_ping_reply(d, t->tid, e->req_id, 0,
                         hid > 0 && hid <= DAEMON_MAX_HID &&
                                 d->hosts[hid] != NULL
                             ? COLLS_EHOSTDOWN
                             : COLLS_ENOENT);
        return;
    }
    if (bytes > 0 && (payload = calloc(1, (size_t)bytes)) == NULL) {
        admin_ping_reply(d, t->tid, e->req_id, 0, COLLS_ENOMEM);
        return;
    }
    p = admin_pending_new(d, PEND_PING, t->tid, e->req_id);
    if (p == NULL) {
        free(payload);
        admin_ping_reply(d, t->tid, e->req_id, 0, COLLS_ENOMEM);
        return;
    }
    p->asked[hid] = 1;
    p->waiting = 1;
    envelope_reply(&q, COLLS_DAEMON_TID(d->hid), COLLS_DAEMON_TID(hid),
                   KIND__ECHO_REQ, p->id, 0);
    q.count = bytes; /* bytes: the payload is COLLS_BYTE */
    p->start_us = platform_now_us();
    rc = net_send(d, hid, &q, payload, (size_t)bytes);
    free(payload);
    if (rc != 0)
        admin_pending_fail(d, p, rc);
}

/* PARAMS_REQ: reading the parameters is for everyone; measuring and
   committing change what the machine chooses, so they are machine verbs. */
static void
admin_params_req(struct task *t, const Envelope *e)
{
    if (e->body_case == ENVELOPE__BODY_PARAMS_REQ &&
        e->params_req->action != PARAMS_GET && t->rights != TASK_RIGHT_ADMIN) {
        t->d->st.admin_refused++;
        task_error(
            t, e->req_id, COLLS_EPERM,
            "measuring needs the daemon's uid or --admin-uid/--admin-gid");
        return;
    }
    measure_task_request(t, e);
}

/* HOSTS_REQ: the table as this daemon sees it. */
static void
admin_hosts_req(struct task *t, const Envelope *e)
{
    HostTable ht;
    Envelope r;
    int rc = host_table_fill(t->d, &ht);

    if (rc != 0) {
        task_error(t, e->req_id, rc, "out of memory");
        return;
    }
    task_reply_init(&r, t, KIND__HOSTS_REP, e->req_id, 0);
    r.body_case = ENVELOPE__BODY_HOST_TABLE;
    r.host_table = &ht;
    task_queue_env(t, &r, NULL, 0, NULL);
    host_table_free(&ht);
}

/* STATS_REQ: the JSON document. */
static void
admin_stats_req(struct task *t, const Envelope *e)
{
    StatsRep sr = STATS_REP__INIT;
    struct buf b;
    Envelope r;
    int rc;

    buf_init(&b);
    rc = admin_stats_json(t->d, &b);
    if (rc != 0) {
        buf_free(&b);
        task_error(t, e->req_id, rc, "cannot build statistics");
        return;
    }
    task_reply_init(&r, t, KIND__STATS_REP, e->req_id, 0);
    sr.json = (char *)buf_head(&b);
    r.body_case = ENVELOPE__BODY_STATS_REP;
    r.stats_rep = &sr;
    task_queue_env(t, &r, NULL, 0, NULL);
    buf_free(&b);
}

/* STATUS_REQ: the daemon is alive. */
static void
admin_status_req(struct task *t, const Envelope *e)
{
    task_reply(t, KIND__ADMIN_REP, e->req_id, 0);
}

/* ADD_HOST {host_op: addr}: list the host and invite it (join.c). */
static void
admin_add_host(struct task *t, const Envelope *e)
{
    int rc;

    if (e->body_case != ENVELOPE__BODY_HOST_OP || e->host_op->addr == NULL ||
        e->host_op->addr[0] == '\0') {
        t->d->st.bad_requests++;
        task_error(t, e->req_id, COLLS_EINVAL, "ADD_HOST needs addr");
        return;
    }
    rc = join_add_host(t->d, e->host_op->addr);
    log_info("task t%x: add host %s: %s", t->tid, e->host_op->addr,
             log_errstr(rc));
    task_reply(t, KIND__ADMIN_REP, e->req_id, rc);
}

/* DELETE_HOST {host_op: hid}: remove it from the machine (join.c): its
   daemon is halted and every table drops it.  Refused (COLLS_EPERM) for
   this daemon itself. */
static void
admin_delete_host(struct task *t, const Envelope *e)
{
    int rc;

    if (e->body_case != ENVELOPE__BODY_HOST_OP) {
        t->d->st.bad_requests++;
        task_error(t, e->req_id, COLLS_EINVAL, "DELETE_HOST needs hid");
        return;
    }
    if ((int)e->host_op->hid == t->d->hid) {
        /* as PVM refuses to delete the master: the daemon that carries
           out the verb would stop under the one who asked */
        char why[200];

        snprintf(why, sizeof(why),
                 "host %d is this daemon, the one you are connected to: "
                 "delete it from another host's daemon (collsctl --socket), "
                 "or stop the whole machine with collsctl halt",
                 t->d->hid);
        log_info("task t%x: delete host %u refused: it is this daemon", t->tid,
                 e->host_op->hid);
        task_error(t, e->req_id, COLLS_EPERM, why);
        return;
    }
    rc = join_delete_host(t->d, (int)e->host_op->hid);
    log_info("task t%x: delete host %u: %s", t->tid, e->host_op->hid,
             log_errstr(rc));
    task_reply(t, KIND__ADMIN_REP, e->req_id, rc);
}

/* HALT: answer, then stop every daemon of the machine. */
static void
admin_halt(struct task *t, const Envelope *e)
{
    log_info("task t%x (%s) halts the machine", t->tid, t->name);
    task_reply(t, KIND__ADMIN_REP, e->req_id, 0);
    join_halt_all(t->d);
}

/*
 * The requests a task may make of its daemon.  machine: the verb changes
 * the machine, so it needs TASK_RIGHT_ADMIN (the daemon's uid,
 * --admin-uid or --admin-gid); the others are open to every attached
 * task.  A verb added here that adds, removes, stops or starts anything
 * (spawn, say) is a machine verb.
 */
static const struct admin_verb {
    int kind;
    const char *name; /* for the log */
    void (*fn)(struct task *t, const Envelope *e);
    int machine;
} admin_verbs[] = {
    {KIND__STATUS_REQ, "status", admin_status_req, 0},
    {KIND__HOSTS_REQ, "hosts", admin_hosts_req, 0},
    {KIND__TASKS_REQ, "ps", admin_tasks_req, 0},
    {KIND__STATS_REQ, "stats", admin_stats_req, 0},
    {KIND__PING_REQ, "ping", admin_ping_req, 0},
    {KIND__PARAMS_REQ, "tune", admin_params_req, 0},
    {KIND__ADD_HOST, "add", admin_add_host, 1},
    {KIND__DELETE_HOST, "delete", admin_delete_host, 1},
    {KIND__HALT, "halt", admin_halt, 1},
};

/* Refuses machine verb v (request e) to t, which lacks the right: ERROR
   COLLS_EPERM with the way to get it, logged with the uid and counted. */
static void
admin_refuse(struct task *t, const Envelope *e, const struct admin_verb *v)
{
    char msg[160];

    t->d->st.admin_refused++;
    snprintf(msg, sizeof(msg),
             "admin verbs need uid %lu or --admin-uid/--admin-gid",
             (unsigned long)geteuid());
    log_warn("task t%x (%s, pid %ld) of uid %ld: %s refused: %s", t->tid,
             t->name, (long)t->pid, (long)t->uid, v->name, msg);
    task_error(t, e->req_id, COLLS_EPERM, msg);
}

void
admin_task_request(struct task *t, const Envelope *e, const uint8_t *payload,
                   size_t plen)
{
    size_t i;

    (void)payload;
    (void)plen;
    for (i = 0; i < sizeof(admin_verbs) / sizeof(admin_verbs[0]); i++) {
        if (admin_verbs[i].kind != (int)e->kind)
            continue;
        if (admin_verbs[i].machine && t->rights != TASK_RIGHT_ADMIN)
            admin_refuse(t, e, &admin_verbs[i]);
        else
            admin_verbs[i].fn(t, e);
        return;
    }
    t->d->st.unknown_kinds++;
    task_error(t, e->req_id, COLLS_ENOTSUP, "unknown admin request");
}

/* ---- from other daemons ------------------------------------------------- */

void
admin_peer_msg(struct daemon *d, int hid, const Envelope *e,
               const uint8_t *payload, size_t plen)
{
    struct pending *p;
    Envelope r;
    size_t i;

    switch ((int)e->kind) {
    case KIND__TASKS_QUERY: {
        TaskList l = TASK_LIST__INIT;
        int rc = admin_list_local(d, &l);

        envelope_reply(&r, COLLS_DAEMON_TID(d->hid), 0, KIND__TASKS_ANSWER,
                       e->req_id, rc);
        r.body_case = ENVELOPE__BODY_TASK_LIST;
        r.task_list = &l;
        net_send(d, hid, &r, NULL, 0);
        admin_list_free(&l);
        break;
    }
    case KIND__TASKS_ANSWER:
        p = admin_pending_find(d, e->req_id);
        if (p == NULL || p->kind != PEND_TASKS || !p->asked[hid])
            break;
        p->asked[hid] = 0;
        if (e->body_case == ENVELOPE__BODY_TASK_LIST)
            for (i = 0; i < e->task_list->n_tasks; i++) {
                const TaskEntry *te = e->task_list->tasks[i];

                if (COLLS_TID_HID(te->tid) != hid)
                    continue; /* a daemon speaks for its own tasks */
                admin_list_add(&p->list, te->tid, te->pid, te->uid, te->name,
                               te->direct_addr, te->parent, te->channel);
            }
        if (--p->waiting <= 0) {
            admin_tasks_reply(d, p->task_tid, p->task_req, &p->list, 0);
            admin_pending_done(d, p);
        }
        break;
    case KIND__ECHO_REQ:
        envelope_reply(&r, COLLS_DAEMON_TID(d->hid), e->src, KIND__ECHO_REP,
                       e->req_id, 0);
        r.count = plen;
        net_send(d, hid, &r, payload, plen);
        break;
    case KIND__ECHO_REP:
        p = admin_pending_find(d, e->req_id);
        if (p == NULL || p->kind != PEND_PING || !p->asked[hid])
            break;
        {
            uint64_t rtt = platform_now_us() - p->start_us;

            stats_hist_add(&d->st.ping_rtt_us, rtt);
            admin_ping_reply(d, p->task_tid, p->task_req, (double)rtt,
                             plen == e->count ? 0 : COLLS_EBADMSG);
        }
        admin_pending_done(d, p);
        break;
    default:
        break;
    }
}

/* ---- statistics --------------------------------------------------------- */

/* The daemon counters (struct daemon_stats) with their Prometheus HELP
   text, for JSON and Prometheus. */
/* clang-format off: one counter per line (clang-format is not stable on
   X-macro lists). */
#define ADMIN_COUNTERS(d, X)                                                   \
    X(tasks_attached, "Tasks that attached to this daemon.")                   \
    X(tasks_exited, "Tasks that detached or died.")                            \
    X(attach_refused, "Connections refused at attach (rights, limits).")       \
    X(frames_in, "Frames read from tasks.")                                    \
    X(frames_out, "Frames written to tasks.")                                  \
    X(bytes_in, "Bytes read from tasks.")                                      \
    X(bytes_out, "Bytes written to tasks.")                                    \
    X(data_local, "Messages from a task to a task of this daemon.")            \
    X(data_to_peer, "Messages from a task here to another host.")              \
    X(data_from_peer, "Messages from another host to a task here.")            \
    X(data_echo, "Messages a task sent to a daemon and got back (echo).")      \
    X(data_held, "Messages held for a spawned copy until it attached.")        \
    X(send_failed, "Messages that could not be delivered (SEND_FAILED).")      \
    X(notifies_sent, "Notifications sent to tasks.")                           \
    X(peer_msgs_out, "Messages handed to the transport for other hosts.")      \
    X(peer_msgs_in, "Messages the transport delivered from other hosts.")      \
    X(peer_send_errors, "Messages the transport refused.")                     \
    X(heartbeats_out, "Heartbeats sent to other hosts.")                       \
    X(heartbeats_in, "Heartbeats received from other hosts.")                  \
    X(hosts_down, "Hosts declared down.")                                      \
    X(hosts_joined, "Hosts that joined the machine through this daemon.")      \
    X(requests_timed_out, "Requests to other daemons that timed out.")         \
    X(pauses, "Times a task stopped being read (back-pressure).")              \
    X(resumes, "Times a paused task was read again.")                          \
    X(admin_refused, "Admin verbs refused for lack of rights.")                \
    X(credits_out, "Flow-control credit messages sent.")                       \
    X(credits_in, "Flow-control credit messages received.")                    \
    X(credit_holds, "Messages held for want of flow-control credit.")          \
    X(spawned, "Programs this daemon started for tasks (colls_spawn).")        \
    X(spawn_refused, "Copies refused or failed to start (path, exec).")        \
    X(spawn_lines, "Output lines of spawned tasks delivered to a catcher.")    \
    X(spawn_lines_lost, "Output lines dropped: their catcher did not read.")   \
    X(poll_rounds, "Polling windows opened after a busy loop turn.")           \
    X(poll_hits, "Polling windows in which input arrived.")                    \
    X(polled_us, "CPU time spent polling sockets instead of sleeping.")        \
    X(shm_tasks, "Tasks attached over a shared-memory channel.")               \
    X(shm_fallbacks,                                                           \
      "Shared-memory channels refused: the task uses its socket.")             \
    X(shm_bytes_in, "Bytes read from tasks' request rings.")                   \
    X(shm_bytes_out, "Bytes written to tasks' completion rings.")              \
    X(shm_full_waits, "Times output waited for room in a completion ring.")    \
    X(shm_task_waits, "Times a task waited for room in its request ring.")     \
    X(cma_tasks, "Tasks attached with single copy (process_vm_readv).")        \
    X(cma_bytes_in, "Bytes of collective inputs read from tasks' memory.")     \
    X(cma_bytes_out, "Bytes of collective results written to tasks' memory.")  \
    X(cma_failed, "Single copies that failed (an input: its collective "       \
                  "failed; a result: it went in the frame).")
#define ADMIN_ERRORS(d, X)                                                     \
    X(bad_frames, "Malformed frames from tasks.")                              \
    X(bad_envelopes, "Frames whose envelope did not unpack.")                  \
    X(unknown_kinds, "Messages of an unknown kind.")                           \
    X(bad_requests, "Requests refused as malformed or out of range.")          \
    X(bad_peer_msgs, "Malformed messages from other daemons.")                 \
    X(bad_join_dgrams, "Join datagrams refused (bad cookie or format).")       \
    X(join_replays, "Sealed join datagrams dropped as replays.")               \
    X(notices_lost, "Task-exit and host-down notices a lagging task lost.")    \
    X(shm_bad, "Tasks disconnected for a corrupt shared-memory ring.")
/* How datagrams are protected: "key", "key+encrypt", "loopback" (no
   key, loopback only) or "insecure" (no key, --insecure). */
static const char *
admin_trust(const struct daemon *d)
{
    if (d->auth != NULL)
        return d->auth->encrypt ? "key+encrypt" : "key";
    return strncmp(d->listen_addr, "127.", 4) == 0 ? "loopback" : "insecure";
}

/* clang-format on */

static const char *const admin_host_states[] = {"up", "down", "joining"};

int
admin_stats_json(struct daemon *d, struct buf *b)
{
    struct stats_json j;
    struct rel_stats rs;
    struct task *t;
    int hid;

    rel_stats(d->rel, &rs);
    stats_json_init(&j, b);
    stats_json_obj_begin(&j, NULL);

    stats_json_obj_begin(&j, "daemon");
    stats_json_u64(&j, "hid", (uint64_t)d->hid);
    stats_json_u64(&j, "incarnation", d->inc);
    stats_json_str(&j, "name", d->name);
    stats_json_str(&j, "addr", d->listen_addr);
    stats_json_str(&j, "trust", admin_trust(d));
    if (d->udp != NULL)
        stats_json_str(&j, "offload", udp_offload_name(d->udp));
    stats_json_i64(&j, "pid", (int64_t)getpid());
    stats_json_double(&j, "uptime_s",
                      (double)(platform_now_us() - d->start_us) / 1e6);
    stats_json_u64(&j, "epoch", d->epoch);
    stats_json_u64(&j, "tasks", (uint64_t)d->ntasks);
    stats_json_i64(&j, "poll_us", d->cfg->poll_us);
    stats_json_i64(&j, "request_timeout_ms", d->cfg->request_timeout_ms);
    stats_json_u64(&j, "tasks_on_shm", task_shm_count(d));
    stats_json_u64(&j, "measure_jobs", measure_jobs(d));
    stats_json_obj_end(&j);

    stats_json_obj_begin(&j, "counters");
#define X(n, help) stats_json_u64(&j, #n, d->st.n);
    ADMIN_COUNTERS(d, X)
#undef X
    stats_json_obj_end(&j);

    stats_json_obj_begin(&j, "errors");
#define X(n, help) stats_json_u64(&j, #n, d->st.n);
    ADMIN_ERRORS(d, X)
#undef X
    stats_json_u64(&j, "bad_dgrams", rs.bad_dgrams);
    stats_json_u64(&j, "unknown_src", rs.unknown_src);
    stats_json_u64(&j, "stale_inc", rs.stale_inc);
    stats_json_u64(&j, "auth_failures", rs.auth_failures);
    stats_json_u64(&j, "replays", rs.replays);
    stats_json_obj_end(&j);

    stats_json_obj_begin(&j, "transport");
    stats_json_u64(&j, "dgrams_in", rs.dgrams_in);
    stats_json_u64(&j, "dgrams_out", rs.dgrams_out);
    stats_json_u64(&j, "injected_drops", rs.injected_drops);
    stats_json_u64(&j, "injected_dups", rs.injected_dups);
    stats_json_u64(&j, "injected_reorders", rs.injected_reorders);
    stats_json_u64(&j, "rcvbuf_drops",
                   d->udp != NULL ? udp_rcvbuf_drops(d->udp) : 0);
    stats_json_obj_end(&j);

    stats_json_obj_begin(&j, "histograms");
    stats_json_hist(&j, "msg_bytes", &d->st.msg_bytes);
    stats_json_hist(&j, "ping_rtt_us", &d->st.ping_rtt_us);
    stats_json_obj_end(&j);

    stats_json_arr_begin(&j, "peers");
    for (hid = 1; hid <= DAEMON_MAX_HID; hid++) {
        struct host *h = d->hosts[hid];
        struct rel_peer_stats ps;

        if (h == NULL || hid == d->hid)
            continue;
        stats_json_obj_begin(&j, NULL);
        stats_json_u64(&j, "hid", (uint64_t)hid);
        stats_json_str(&j, "name", h->name);
        stats_json_str(&j, "addr", h->addr);
        stats_json_str(
            &j, "state",
            h->state >= 0 && h->state <= 2 ? admin_host_states[h->state] : "?");
        stats_json_u64(&j, "incarnation", h->inc);
        stats_json_u64(&j, "msgs_in", h->msgs_in);
        stats_json_u64(&j, "msgs_out", h->msgs_out);
        if (rel_peer_stats(d->rel, hid, &ps) == 0) {
            stats_json_u64(&j, "srtt_us", ps.srtt_us);
            stats_json_u64(&j, "rttvar_us", ps.rttvar_us);
            stats_json_u64(&j, "rto_us", ps.rto_us);
            stats_json_u64(&j, "msgs_sent", ps.msgs_sent);
            stats_json_u64(&j, "msgs_recv", ps.msgs_recv);
            stats_json_u64(&j, "bytes_sent", ps.bytes_sent);
            stats_json_u64(&j, "bytes_recv", ps.bytes_recv);
            stats_json_u64(&j, "dgrams_sent", ps.dgrams_sent);
            stats_json_u64(&j, "dgrams_recv", ps.dgrams_recv);
            stats_json_u64(&j, "retransmits", ps.retransmits);
            stats_json_u64(&j, "fast_retransmits", ps.fast_retransmits);
            stats_json_u64(&j, "timeouts", ps.timeouts);
            stats_json_u64(&j, "overflow_rounds", ps.overflow_rounds);
            stats_json_u64(&j, "dups_recv", ps.dups_recv);
            stats_json_u64(&j, "auth_failures", ps.auth_failures);
            stats_json_u64(&j, "replays", ps.replays);
            stats_json_u64(&j, "acks_sent", ps.acks_sent);
            stats_json_u64(&j, "acks_recv", ps.acks_recv);
            stats_json_u64(&j, "queued_bytes", ps.queued_bytes);
            stats_json_u64(&j, "inflight", ps.inflight);
            stats_json_u64(&j, "pacing_bps", ps.pacing_bps);
            stats_json_u64(&j, "bw_bps", ps.bw_bps);
            stats_json_hist(&j, "rtt_us", &ps.rtt_us);
        }
        stats_json_obj_end(&j);
    }
    stats_json_arr_end(&j);

    stats_json_arr_begin(&j, "tasks");
    for (t = d->tasks; t != NULL; t = t->next) {
        char tid[16];

        if (t->state != TASK_ST_ACTIVE)
            continue;
        snprintf(tid, sizeof(tid), "t%x", t->tid);
        stats_json_obj_begin(&j, NULL);
        stats_json_str(&j, "tid", tid);
        stats_json_str(&j, "name", t->name);
        stats_json_i64(&j, "pid", (int64_t)t->pid);
        stats_json_bool(&j, "admin", t->admin);
        stats_json_u64(&j, "frames_in", t->st.frames_in);
        stats_json_u64(&j, "frames_out", t->st.frames_out);
        stats_json_u64(&j, "bytes_in", t->st.bytes_in);
        stats_json_u64(&j, "bytes_out", t->st.bytes_out);
        stats_json_u64(&j, "msgs_sent", t->st.msgs_sent);
        stats_json_u64(&j, "msgs_recv", t->st.msgs_recv);
        stats_json_u64(&j, "send_failed", t->st.send_failed);
        stats_json_u64(&j, "pauses", t->st.pauses);
        stats_json_u64(&j, "queued_bytes", t->out_bytes);
        stats_json_u64(&j, "queued_from_peers", t->peer_bytes);
        stats_json_bool(&j, "paused", t->paused);
        stats_json_obj_end(&j);
    }
    stats_json_arr_end(&j);

    if (d->gs != NULL) {
        coll_stats_json(d, &j);
        group_stats_json(d, &j);
    }

    stats_json_obj_end(&j);
    return stats_json_finish(&j);
}

/* The per-peer families of the Prometheus text, in the order of the
   values admin_stats_prometheus takes from struct rel_peer_stats;
   scale 1e-6: a microsecond value exported in seconds. */
#define ADMIN_PEER_FAMILIES 8
static const struct {
    const char *name, *type, *help;
    double scale;
} admin_peer_family[ADMIN_PEER_FAMILIES] = {
    {"collsd_peer_up", "gauge", "1 if the host is up, else 0.", 1},
    {"collsd_peer_srtt_seconds", "gauge",
     "Smoothed round-trip time of the transport to the host.", 1e-6},
    {"collsd_peer_retransmits_total", "counter",
     "Datagrams retransmitted to the host.", 1},
    {"collsd_peer_bytes_sent_total", "counter",
     "Message bytes sent to the host.", 1},
    {"collsd_peer_bytes_recv_total", "counter",
     "Message bytes received from the host.", 1},
    {"collsd_peer_queued_bytes", "gauge",
     "Bytes queued in the transport towards the host.", 1},
    {"collsd_peer_auth_failures_total", "counter",
     "Datagrams from the host that failed authentication.", 1},
    {"collsd_peer_replays_total", "counter",
     "Datagrams from the host refused as replays.", 1},
};

/* The transport counters (struct rel_stats) and their HELP texts. */
#define ADMIN_REL_COUNTERS(X)                                                  \
    X(dgrams_in, "Datagrams received.")                                        \
    X(dgrams_out, "Datagrams sent.")                                           \
    X(bad_dgrams, "Datagrams refused as malformed.")                           \
    X(unknown_src, "Datagrams from an address not in the host table.")         \
    X(stale_inc, "Datagrams from an earlier incarnation of a host.")           \
    X(auth_failures, "Datagrams that failed authentication (cluster key).")    \
    X(replays, "Datagrams refused as replays.")

/* The information metrics: this build, this daemon, its start time. */
static void
admin_prom_info(struct daemon *d, struct buf *b, int *err)
{
    uint64_t wall = platform_wall_us(), now = platform_now_us();

    stats_prom_family(b, err, "collsd_build_info", "gauge",
                      "The version of this collsd, as labels; always 1.");
    stats_prom(b, err, "collsd_build_info{version=\"%s\",protocol=\"%d\"} 1\n",
               PACKAGE_VERSION, COLLS_PROTO_VERSION);
    stats_prom_family(b, err, "collsd_host_info", "gauge",
                      "This daemon's host id and incarnation, as labels; "
                      "always 1.");
    stats_prom(b, err, "collsd_host_info{hid=\"%d\",incarnation=\"%08x\"} 1\n",
               d->hid, d->inc);
    stats_prom_family(b, err, "process_start_time_seconds", "gauge",
                      "Start time of the process since the Unix epoch.");
    stats_prom(b, err, "process_start_time_seconds %.3f\n",
               (double)(wall - (now - d->start_us)) / 1e6);
}

int
admin_stats_prometheus(struct daemon *d, struct buf *b)
{
    struct rel_stats rs;
    int err = 0, hid, f;

    rel_stats(d->rel, &rs);
    admin_prom_info(d, b, &err);
    stats_prom_one(b, &err, "collsd_tasks", "gauge",
                   "Tasks attached to this daemon.",
                   (unsigned long long)d->ntasks);
    stats_prom_one(b, &err, "collsd_tasks_on_shm", "gauge",
                   "Attached tasks whose frames go through shared memory.",
                   (unsigned long long)task_shm_count(d));
    stats_prom_one(b, &err, "collsd_epoch", "gauge",
                   "Membership epoch of the machine, as this daemon knows it.",
                   (unsigned long long)d->epoch);
    stats_prom_one(b, &err, "collsd_measure_jobs", "gauge",
                   "Measurements of peers running or waiting (pLogP).",
                   (unsigned long long)measure_jobs(d));
#define X(n, help)                                                             \
    stats_prom_counter(b, &err, "collsd_", #n, help,                           \
                       (unsigned long long)d->st.n);
    ADMIN_COUNTERS(d, X)
    ADMIN_ERRORS(d, X)
#undef X
#define X(n, help) stats_prom_counter(b, &err, "collsd_", #n, help, rs.n);
    ADMIN_REL_COUNTERS(X)
#undef X
    stats_prom_counter(b, &err, "collsd_", "udp_rcvbuf_drops",
                       "Datagrams the kernel dropped, the socket buffer full.",
                       d->udp != NULL ? udp_rcvbuf_drops(d->udp) : 0);
    stats_prom_family(b, &err, "collsd_msg_bytes", "histogram",
                      "Payload sizes of the messages tasks sent.");
    stats_prom_hist(b, &err, "collsd_msg_bytes", "", &d->st.msg_bytes, 1);
    stats_prom_family(b, &err, "collsd_ping_rtt_seconds", "histogram",
                      "Round trips of daemon echoes (collsctl ping).");
    stats_prom_hist(b, &err, "collsd_ping_rtt_seconds", "", &d->st.ping_rtt_us,
                    1e-6);
    /* per peer: one family after the other, every peer in each */
    for (f = 0; f < ADMIN_PEER_FAMILIES; f++) {
        stats_prom_family(b, &err, admin_peer_family[f].name,
                          admin_peer_family[f].type, admin_peer_family[f].help);
        for (hid = 1; hid <= DAEMON_MAX_HID; hid++) {
            struct host *h = d->hosts[hid];
            struct rel_peer_stats ps;
            unsigned long long v;

            if (h == NULL || hid == d->hid)
                continue;
            if (f == 0) {
                v = h->state == COLLS_HOST_UP;
            } else if (rel_peer_stats(d->rel, hid, &ps) != 0) {
                continue;
            } else {
                const uint64_t vals[ADMIN_PEER_FAMILIES] = {0,
                                                            ps.srtt_us,
                                                            ps.retransmits,
                                                            ps.bytes_sent,
                                                            ps.bytes_recv,
                                                            ps.queued_bytes,
                                                            ps.auth_failures,
                                                            ps.replays};

                v = vals[f];
            }
            if (admin_peer_family[f].scale == 1)
                stats_prom(b, &err, "%s{hid=\"%d\"} %llu\n",
                           admin_peer_family[f].name, hid, v);
            else
                stats_prom(b, &err, "%s{hid=\"%d\"} %.12g\n",
                           admin_peer_family[f].name, hid,
                           (double)v * admin_peer_family[f].scale);
        }
    }
    stats_prom_family(b, &err, "collsd_peer_rtt_seconds", "histogram",
                      "Round-trip samples of the transport, per host.");
    for (hid = 1; hid <= DAEMON_MAX_HID; hid++) {
        struct rel_peer_stats ps;
        char label[32];

        if (d->hosts[hid] == NULL || hid == d->hid ||
            rel_peer_stats(d->rel, hid, &ps) != 0)
            continue;
        snprintf(label, sizeof(label), "hid=\"%d\"", hid);
        stats_prom_hist(b, &err, "collsd_peer_rtt_seconds", label, &ps.rtt_us,
                        1e-6);
    }
    if (err == 0 && d->gs != NULL)
        err = coll_stats_prometheus(d, b);
    return err;
}
