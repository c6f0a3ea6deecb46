/*
 * host.c -- the host table and membership.
 *
 * Table: d->hosts[hid] (1..4095), our own entry included; d->epoch grows
 * with every change.  States: JOINING (listed, never heard), UP, DOWN.
 *
 * Liveness: every --heartbeat ms each daemon sends HEARTBEAT {its
 * incarnation, table epoch, task count, interval} to every host that is
 * UP or JOINING; every --idle-heartbeat ms while it is idle (collsd.c
 * tells) and every host is UP (host_beat_want).  The interval announces
 * when the next one comes, so a peer waits that much longer
 * (host_dead_us); the first heartbeat after a change still comes at the
 * interval announced before it (host_beat_due), and a host that comes up
 * or restarts gets one at once (beat_soon).  A host not heard for
 * --dead-after (plus what its interval exceeds ours) is declared DOWN by
 * whoever notices: HOST_DOWN {hid, incarnation} to every daemon and local
 * task, its transport streams dropped (and re-created empty, so that a
 * restart can come back).  A DOWN host comes back only with a new
 * incarnation (a heartbeat of another incarnation than the one declared
 * dead).  A restart noticed before the timeout (the transport reports a newer
 * incarnation) is announced to local tasks as HOST_DOWN of the old one.
 *
 * Stalls: a daemon that did not run (stopped, descheduled, a long
 * callback) must not blame its peers.  Before declaring anyone down the
 * cron processes the datagrams waiting on the socket (its timer may fire
 * in the same loop turn before the socket is read), and a cron that runs
 * late -- more than HOST_STALL_BEATS heartbeats (at most --dead-after
 * less one) after the earliest time it was armed for since its previous
 * run (d->cron_due_us) -- grants every host a grace of one --dead-after
 * from now.  Lateness, not the time since the previous run: an idle
 * cron runs seconds apart on time, and one brought forward (a task
 * attached) keeps the time it was first due.
 *
 * Declared down while alive: a host that hears from the dead incarnation
 * of a DOWN host answers it, at most once per heartbeat, with a "you are
 * down" notice (HOST_DOWN {its hid, dead incarnation}) in a join
 * datagram, outside the transport: their streams no longer match.  A
 * daemon that gets HOST_DOWN about its own current incarnation (so, or
 * from the transport) comes back, at its next cron, as a restart would:
 * local tasks get HOST_DOWN of every other host and groups spanning them
 * fail, it takes a new incarnation (the transport starts over,
 * rel_set_inc) and heartbeats it at once; peers challenge the new
 * incarnation (rel.c), adopt it and mark the host up again.
 *
 * A host that says it leaves (HOST_DOWN about itself, on stopping) is
 * never sent that notice: it lingers, then goes.  Leaving for good
 * (deleted, or dropped from the hostfile on SIGHUP): host_depart has the
 * others remove it from their tables.  An entry `collsctl add' listed
 * that no daemon ever answered is removed by the assigner one
 * --dead-after after it went down.
 *
 * Joining, join cookies, invitations and ADD_HOST/DELETE_HOST are
 * join.c's; host.c keeps the table they change.
 *
 * May call: net, rel (downward), join.c (start a join, invitations),
 * events.c (host up/down, stop: who reacts is decided there).  Never
 * route, group, coll, admin or task directly.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <event2/event.h>

#include "colls.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/events.h"
#include "daemon/host.h"
#include "daemon/join.h"
#include "daemon/log.h"
#include "daemon/net.h"
#include "daemon/platform.h"
#include "daemon/rel.h"
#include "proto/envelope.h"

/* A cron this many heartbeats late means we stalled: grant a grace
   (host_stall_us). */
#define HOST_STALL_BEATS 3u

static void host_heartbeat(struct daemon *d, uint64_t interval_us);

/* --heartbeat in microseconds. */
static uint64_t
host_beat_us(const struct daemon *d)
{
    return (uint64_t)d->cfg->heartbeat_ms * 1000u;
}

static const char *const host_state_names[] = {"up", "down", "joining"};

static const char *
host_state_name(int s)
{
    return s >= 0 && s <= COLLS_HOST_JOINING ? host_state_names[s] : "?";
}

int
host_parse_addr(const char *s, int default_port, struct sockaddr_in *sa)
{
    char host[DAEMON_ADDR_LEN];
    const char *colon = strrchr(s, ':');
    size_t hlen = colon != NULL ? (size_t)(colon - s) : strlen(s);
    long port = default_port;
    struct addrinfo hints, *res = NULL;
    char *end;

    if (hlen == 0 || hlen >= sizeof(host))
        return COLLS_EINVAL;
    memcpy(host, s, hlen);
    host[hlen] = '\0';
    if (colon != NULL) {
        errno = 0;
        port = strtol(colon + 1, &end, 10);
        if (colon[1] == '\0' || *end != '\0' || errno != 0 || port < 0 ||
            port > 65535)
            return COLLS_EINVAL;
    }
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &sa->sin_addr) == 1)
        return 0;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_DGRAM;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL)
        return COLLS_EINVAL;
    sa->sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
    freeaddrinfo(res);
    return 0;
}

void
host_format(const struct sockaddr_in *sa, char *out, size_t len)
{
    char ip[INET_ADDRSTRLEN];

    inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof(ip));
    snprintf(out, len, "%s:%u", ip, (unsigned)ntohs(sa->sin_port));
}

int
host_sa_equal(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
    return a->sin_port == b->sin_port &&
           a->sin_addr.s_addr == b->sin_addr.s_addr;
}

/* Creates or returns the entry for hid. */
struct host *
host_get(struct daemon *d, int hid)
{
    struct host *h = d->hosts[hid];

    if (h == NULL) {
        h = calloc(1, sizeof(*h));
        if (h == NULL)
            return NULL;
        h->hid = hid;
        h->state = COLLS_HOST_JOINING;
        h->since_us = platform_now_us();
        d->hosts[hid] = h;
        if (hid > d->hid_top)
            d->hid_top = hid;
    }
    return h;
}

/* Takes a host's architecture from its heartbeat or the table; an
   empty or missing one leaves what is known. */
static void
host_set_arch(struct host *h, const char *arch)
{
    if (arch != NULL && arch[0] != '\0')
        snprintf(h->arch, sizeof(h->arch), "%s", arch);
}

/* Moves h to state; a host that comes up may take over group names
   (events_host_up). */
void
host_set_state(struct daemon *d, struct host *h, int state)
{
    if (h->state != state) {
        log_info("host %d (%s, %s) is %s", h->hid, h->name, h->addr,
                 host_state_name(state));
        h->state = state;
        h->since_us = platform_now_us();
        h->beat_ms = 0; /* its next heartbeat tells */
        /* it knows our interval from our next heartbeat only */
        if (state == COLLS_HOST_UP && h->hid != d->hid && host_beat_slow(d))
            d->beat_soon = 1;
        if (state == COLLS_HOST_UP && h->hid != d->hid)
            events_host_up(d, h->hid);
    }
}

/* Tells the transport where hid is (inc 0: whoever answers there). */
void
host_rel_set(struct daemon *d, struct host *h)
{
    if (h->hid != d->hid)
        rel_peer_set(d->rel, h->hid, (const struct sockaddr *)&h->sa,
                     sizeof(h->sa), h->inc);
}

/* The lowest hid that is up (ourselves included): assigns hids. */
int
host_assigner(struct daemon *d)
{
    int hid;

    for (hid = 1; hid <= DAEMON_MAX_HID; hid++)
        if (d->hosts[hid] != NULL &&
            (hid == d->hid || d->hosts[hid]->state == COLLS_HOST_UP))
            return hid;
    return d->hid;
}

int
host_is_up(struct daemon *d, int hid)
{
    if (hid < 1 || hid > DAEMON_MAX_HID || d->hosts[hid] == NULL)
        return 0;
    return hid == d->hid || d->hosts[hid]->state == COLLS_HOST_UP;
}

/* Sends e to every other host that is up (and JOINING ones if asked). */
void
host_broadcast(struct daemon *d, const Envelope *e, int joining_too)
{
    int hid;

    for (hid = 1; hid <= DAEMON_MAX_HID; hid++) {
        struct host *h = d->hosts[hid];

        if (h == NULL || hid == d->hid)
            continue;
        if (h->state == COLLS_HOST_UP ||
            (joining_too && h->state == COLLS_HOST_JOINING))
            net_send(d, hid, e, NULL, 0);
    }
}

/* ---- table as a message ------------------------------------------------- */

int
host_table_fill(struct daemon *d, HostTable *ht)
{
    static const HostTable init = HOST_TABLE__INIT;
    size_t n = 0;
    int hid;

    *ht = init;
    ht->epoch = d->epoch;
    for (hid = 1; hid <= DAEMON_MAX_HID; hid++)
        if (d->hosts[hid] != NULL)
            n++;
    ht->hosts = calloc(n > 0 ? n : 1, sizeof(*ht->hosts));
    if (ht->hosts == NULL)
        return COLLS_ENOMEM;
    for (hid = 1; hid <= DAEMON_MAX_HID; hid++) {
        static const HostEntry einit = HOST_ENTRY__INIT;
        struct host *h = d->hosts[hid];
        struct rel_peer_stats ps;
        HostEntry *he;

        if (h == NULL)
            continue;
        he = malloc(sizeof(*he));
        if (he == NULL) {
            host_table_free(ht);
            return COLLS_ENOMEM;
        }
        *he = einit;
        he->hid = (uint32_t)hid;
        he->state = (uint32_t)(hid == d->hid ? COLLS_HOST_UP : h->state);
        he->incarnation = h->inc != 0 ? h->inc : h->dead_inc;
        he->name = h->name;
        he->addr = h->addr;
        he->ntasks = (uint32_t)(hid == d->hid ? d->ntasks : h->ntasks);
        he->arch = (char *)(hid == d->hid ? d->arch : h->arch);
        if (hid != d->hid && rel_peer_stats(d->rel, hid, &ps) == 0)
            he->rtt_us = (double)ps.srtt_us;
        ht->hosts[ht->n_hosts++] = he;
    }
    return 0;
}

void
host_table_free(HostTable *ht)
{
    size_t i;

    for (i = 0; i < ht->n_hosts; i++)
        free(ht->hosts[i]);
    free(ht->hosts);
    ht->hosts = NULL;
    ht->n_hosts = 0;
}

void
host_table_env(const struct daemon *d, Envelope *e, HostTable *ht)
{
    envelope_reply(e, COLLS_DAEMON_TID(d->hid), 0, KIND__HOST_TABLE, 0, 0);
    e->body_case = ENVELOPE__BODY_HOST_TABLE;
    e->host_table = ht;
}

/* Pushes our table to hid (0: to every other host). */
void
host_push_table(struct daemon *d, int hid)
{
    HostTable ht;
    Envelope e;

    if (host_table_fill(d, &ht) != 0)
        return;
    host_table_env(d, &e, &ht);
    if (hid == 0)
        host_broadcast(d, &e, 1);
    else
        net_send(d, hid, &e, NULL, 0);
    host_table_free(&ht);
}

/* ---- down, restart, removal --------------------------------------------- */

void
host_down_env(const struct daemon *d, Envelope *e, HostOp *op, int hid,
              uint32_t inc)
{
    envelope_reply(e, COLLS_DAEMON_TID(d->hid), 0, KIND__HOST_DOWN, 0, 0);
    e->body_case = ENVELOPE__BODY_HOST_OP;
    e->host_op = op;
    op->hid = (uint32_t)hid;
    op->incarnation = inc;
}

/*
 * Declares h down: announced to every daemon (if announce) and local
 * task, streams to it dropped and re-created empty.
 */
static void
host_declare_down(struct daemon *d, struct host *h, int announce)
{
    HostOp op = HOST_OP__INIT;
    Envelope e;

    if (h->state == COLLS_HOST_DOWN || h->hid == d->hid)
        return;
    log_warn("host %d (%s, %s, incarnation %08x) declared down", h->hid,
             h->name, h->addr, h->inc);
    host_set_state(d, h, COLLS_HOST_DOWN);
    h->dead_inc = h->inc;
    d->st.hosts_down++;
    if (announce) {
        host_down_env(d, &e, &op, h->hid, h->inc);
        host_broadcast(d, &e, 0);
    }
    events_host_down(d, h->hid, h->inc);
    rel_peer_remove(d->rel, h->hid);
    h->inc = 0;
    host_rel_set(d, h);
}

/* h runs a new incarnation: what ran before is gone. */
void
host_new_incarnation(struct daemon *d, struct host *h, uint32_t inc)
{
    uint32_t old = h->inc;
    int restarted = old != 0 && h->state == COLLS_HOST_UP;

    if (inc == 0 || inc == h->inc)
        return;
    if (restarted) {
        log_warn("host %d (%s) restarted: incarnation %08x -> %08x", h->hid,
                 h->addr, old, inc);
        events_host_down(d, h->hid, old);
    }
    h->inc = inc;
    h->dead_inc = 0;
    h->left = 0;
    h->last_heard_us = platform_now_us();
    if (host_beat_slow(d))
        d->beat_soon = 1; /* a restart knows nothing of our interval */
    if (restarted) /* up again at once: HOST_ADD after the old one's down */
        events_host_up(d, h->hid);
    host_set_state(d, h, COLLS_HOST_UP);
}

/* Removes hid from the table (DELETE_HOST, a table without it). */
void
host_remove(struct daemon *d, int hid)
{
    struct host *h = d->hosts[hid];

    if (h == NULL || hid == d->hid)
        return;
    if (h->state == COLLS_HOST_UP)
        events_host_down(d, hid, h->inc);
    rel_peer_remove(d->rel, hid);
    log_info("host %d (%s) removed from the table", hid, h->addr);
    d->hosts[hid] = NULL;
    free(h);
}

/*
 * h is DOWN but its dead incarnation still talks to us: tells it so in a
 * join datagram (its transport streams no longer match ours), at most
 * once per heartbeat.
 */
static void
host_notify_dead(struct daemon *d, struct host *h, uint64_t now)
{
    HostOp op = HOST_OP__INIT;
    Envelope e;

    if (h->state != COLLS_HOST_DOWN || h->dead_inc == 0 || h->left ||
        now - h->notice_us < host_beat_us(d))
        return;
    h->notice_us = now;
    host_down_env(d, &e, &op, h->hid, h->dead_inc);
    log_info("host %d (%s) still runs incarnation %08x, declared down: "
             "telling it",
             h->hid, h->addr, h->dead_inc);
    net_send_join(d, &h->sa, &e);
}

/*
 * Host `by' declared this daemon down while it was alive.  Comes back as
 * a restart would: what involved other hosts fails (tasks get HOST_DOWN
 * of each, groups spanning them fail), a new incarnation restarts the
 * transport, and heartbeats of it make the peers take us back.
 */
static void
host_reincarnate(struct daemon *d, int by)
{
    uint64_t now = platform_now_us();
    uint32_t old = d->inc, inc;
    int hid;

    do
        inc = platform_incarnation();
    while (inc == 0 || inc == old);
    log_warn("host %d declared this daemon (incarnation %08x) down while "
             "it was alive: failing what involved other hosts and coming "
             "back as incarnation %08x",
             by, old, inc);
    d->inc = inc;
    d->hosts[d->hid]->inc = inc;
    rel_set_inc(d->rel, inc);
    for (hid = 1; hid <= DAEMON_MAX_HID; hid++) {
        struct host *h = d->hosts[hid];

        if (h == NULL || hid == d->hid)
            continue;
        h->notice_us = 0;
        if (h->state != COLLS_HOST_UP)
            continue;
        events_host_down(d, hid, h->inc);
        /* the events_host_down callbacks may have removed it */
        if (d->hosts[hid] != NULL)
            d->hosts[hid]->last_heard_us = now;
    }
    d->last_heartbeat_us = now;
    host_heartbeat(d, host_beat_us(d));
    net_kick(d);
}

void
host_depart(struct daemon *d)
{
    int a = host_assigner(d);
    HostOp op = HOST_OP__INIT;
    struct host *me = d->hosts[d->hid];
    HostTable ht;
    Envelope e;

    if (d->hid == 0 || d->joining || me == NULL)
        return;
    if (a != d->hid) {
        envelope_reply(&e, COLLS_DAEMON_TID(d->hid), 0, KIND__DELETE_HOST, 0,
                       0);
        e.body_case = ENVELOPE__BODY_HOST_OP;
        e.host_op = &op;
        op.hid = (uint32_t)d->hid;
        op.addr = "";
        net_send(d, a, &e, NULL, 0);
        log_info("leaving the machine: host %d removes this daemon", a);
        return;
    }
    /* the assigner: the table without this daemon, by its next epoch */
    d->hosts[d->hid] = NULL;
    d->epoch++;
    if (host_table_fill(d, &ht) == 0) {
        host_table_env(d, &e, &ht);
        host_broadcast(d, &e, 0);
        host_table_free(&ht);
    }
    d->hosts[d->hid] = me;
    log_info("leaving the machine: table epoch %llu without this daemon "
             "sent to the others",
             (unsigned long long)d->epoch);
}

void
host_leave(struct daemon *d)
{
    HostOp op = HOST_OP__INIT;
    Envelope e;

    if (d->hid > 0 && !d->joining) {
        host_down_env(d, &e, &op, d->hid, d->inc);
        host_broadcast(d, &e, 0);
    }
}

void
host_peer_reset(struct daemon *d, int hid, uint32_t new_inc)
{
    struct host *h = hid > 0 && hid <= DAEMON_MAX_HID ? d->hosts[hid] : NULL;

    if (h == NULL || new_inc == 0 || h->state == COLLS_HOST_DOWN)
        return; /* removal, or a dead host: heartbeats decide */
    host_new_incarnation(d, h, new_inc);
}

/* The incarnation a HEARTBEAT e announces; 0 for other kinds. */
static uint32_t
host_heartbeat_inc(const Envelope *e)
{
    if (e->kind != KIND__HEARTBEAT || e->body_case != ENVELOPE__BODY_HEARTBEAT)
        return 0;
    return e->heartbeat->incarnation;
}

int
host_heard(struct daemon *d, int hid, const Envelope *e)
{
    struct host *h = hid > 0 && hid <= DAEMON_MAX_HID ? d->hosts[hid] : NULL;

    if (h == NULL || hid == d->hid)
        return -1;
    if (h->state == COLLS_HOST_DOWN) {
        uint32_t inc = host_heartbeat_inc(e);

        if (e->kind != KIND__HEARTBEAT || inc == 0 || inc == h->dead_inc) {
            host_notify_dead(d, h, platform_now_us());
            return -1;
        }
        host_new_incarnation(d, h, inc);
    }
    h->msgs_in++;
    h->last_heard_us = platform_now_us();
    if (h->state == COLLS_HOST_JOINING)
        host_set_state(d, h, COLLS_HOST_UP);
    return 0;
}

/* ---- adopting a table --------------------------------------------------- */

/* Takes over a newer table: adds, updates and removes hosts. */
void
host_adopt_table(struct daemon *d, const HostTable *ht)
{
    unsigned char present[DAEMON_MAX_HID + 1];
    size_t i;
    int hid;

    if (ht->epoch <= d->epoch)
        return;
    memset(present, 0, sizeof(present));
    for (i = 0; i < ht->n_hosts; i++) {
        const HostEntry *he = ht->hosts[i];
        struct sockaddr_in sa;
        struct host *h;

        if (he->hid < 1 || he->hid > DAEMON_MAX_HID || he->addr == NULL ||
            host_parse_addr(he->addr, 0, &sa) != 0) {
            d->st.bad_peer_msgs++;
            continue;
        }
        hid = (int)he->hid;
        present[hid] = 1;
        if (hid == d->hid)
            continue;
        h = host_get(d, hid);
        if (h == NULL)
            continue;
        if (!host_sa_equal(&h->sa, &sa) ||
            (he->incarnation != 0 && he->incarnation != h->inc &&
             he->incarnation != h->dead_inc)) {
            int fresh = h->addr[0] == '\0';

            h->sa = sa;
            host_format(&sa, h->addr, sizeof(h->addr));
            if (he->incarnation != 0 && he->incarnation != h->dead_inc)
                host_new_incarnation(d, h, he->incarnation);
            if (fresh && he->state == COLLS_HOST_UP) {
                h->last_heard_us = platform_now_us();
                host_set_state(d, h, COLLS_HOST_UP);
            }
            host_rel_set(d, h);
        }
        snprintf(h->name, sizeof(h->name), "%s",
                 he->name != NULL ? he->name : "");
        host_set_arch(h, he->arch);
    }
    for (hid = 1; hid <= DAEMON_MAX_HID; hid++)
        if (d->hosts[hid] != NULL && !present[hid] && hid != d->hid)
            host_remove(d, hid);
    log_info("host table epoch %llu -> %llu (%zu hosts)",
             (unsigned long long)d->epoch, (unsigned long long)ht->epoch,
             ht->n_hosts);
    d->epoch = ht->epoch;
}

/* ---- messages from daemons ---------------------------------------------- */

/* HOST_DOWN from another daemon. */
static void
host_peer_down(struct daemon *d, int from, const HostOp *op)
{
    struct host *h;

    if (op->hid < 1 || op->hid > DAEMON_MAX_HID)
        return;
    if ((int)op->hid == d->hid) {
        log_warn("host %d says this daemon is down (incarnation %08x)", from,
                 op->incarnation);
        /* Not here: we are inside the transport's delivery, whose
           streams the new incarnation resets.  host_comeback does it. */
        if (from != d->hid && op->incarnation == d->inc)
            d->host_down_by = from;
        return;
    }
    h = d->hosts[op->hid];
    if (h == NULL || h->state == COLLS_HOST_DOWN)
        return;
    if (op->incarnation != 0 && h->inc != 0 && op->incarnation != h->inc)
        return; /* about an incarnation we no longer know */
    if ((int)op->hid == from) {
        /* it stops: what it still sends while it lingers needs no "you
           are down" notice */
        log_info("host %d leaves the machine", from);
        h->left = 1;
    }
    host_declare_down(d, h, 0);
}

void
host_peer_msg(struct daemon *d, int hid, const Envelope *e)
{
    struct host *h = d->hosts[hid];

    switch ((int)e->kind) {
    case KIND__HEARTBEAT:
        d->st.heartbeats_in++;
        if (host_heartbeat_inc(e) != 0 && host_heartbeat_inc(e) != h->inc)
            host_new_incarnation(d, h, host_heartbeat_inc(e));
        if (e->body_case == ENVELOPE__BODY_HEARTBEAT) {
            h->ntasks = (int)e->heartbeat->ntasks;
            h->epoch = e->heartbeat->table_epoch;
            host_set_arch(h, e->heartbeat->arch);
            h->beat_ms = e->heartbeat->interval_ms;
            if (h->epoch < d->epoch && host_assigner(d) == d->hid)
                host_push_table(d, hid);
        }
        break;
    case KIND__HOST_TABLE:
        if (e->body_case == ENVELOPE__BODY_HOST_TABLE)
            host_adopt_table(d, e->host_table);
        break;
    case KIND__HOST_DOWN:
        if (e->body_case == ENVELOPE__BODY_HOST_OP)
            host_peer_down(d, hid, e->host_op);
        break;
    case KIND__HALT_ALL:
        log_info("halt requested by host %d", hid);
        events_stop(d, 0, 200000);
        break;
    default:
        break;
    }
}

/* ---- hostfile ----------------------------------------------------------- */

struct host_line {
    struct sockaddr_in sa;
    char name[DAEMON_NAME_LEN];
};

/*
 * Reads the hostfile: one host per line, "addr[:port] [name=N]", blank
 * lines and # comments ignored.  Returns the number of hosts (*out
 * allocated) or a negative code.
 */
static int
host_read_file(const char *path, int default_port, struct host_line **out)
{
    struct host_line *v = NULL;
    char line[512];
    int n = 0, lineno = 0, rc = 0;
    FILE *f = fopen(path, "r");

    if (f == NULL) {
        rc = -errno;
        log_error("hostfile %s: %s", path, strerror(errno));
        return rc;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        char *s = line, *addr, *tok, *hash = strchr(line, '#');
        struct host_line *nv;

        lineno++;
        if (hash != NULL)
            *hash = '\0';
        addr = strtok(s, " \t\r\n");
        if (addr == NULL)
            continue;
        if (n >= DAEMON_MAX_HID) {
            log_error("hostfile %s: more than %d hosts", path, DAEMON_MAX_HID);
            rc = COLLS_EINVAL;
            goto out;
        }
        nv = realloc(v, (size_t)(n + 1) * sizeof(*v));
        if (nv == NULL) {
            rc = COLLS_ENOMEM;
            goto out;
        }
        v = nv;
        memset(&v[n], 0, sizeof(v[n]));
        if (host_parse_addr(addr, default_port, &v[n].sa) != 0) {
            log_error("hostfile %s:%d: bad address '%s'", path, lineno, addr);
            rc = COLLS_EINVAL;
            goto out;
        }
        while ((tok = strtok(NULL, " \t\r\n")) != NULL) {
            if (strncmp(tok, "name=", 5) == 0) {
                snprintf(v[n].name, sizeof(v[n].name), "%s", tok + 5);
            } else {
                log_error("hostfile %s:%d: unknown field '%s'", path, lineno,
                          tok);
                rc = COLLS_EINVAL;
                goto out;
            }
        }
        n++;
    }
out:
    fclose(f);
    if (rc != 0) {
        free(v);
        return rc;
    }
    *out = v;
    return n;
}

/* Finds our line: same address and port as --listen; when we listen on
   0.0.0.0, the first line with our port and an address of this host. */
static int
host_find_self(struct daemon *d, const struct host_line *v, int n)
{
    struct sockaddr_in me;
    int i;

    if (host_parse_addr(d->listen_addr, 0, &me) != 0)
        return 0;
    for (i = 0; i < n; i++)
        if (host_sa_equal(&v[i].sa, &me))
            return i + 1;
    if (me.sin_addr.s_addr != htonl(INADDR_ANY))
        return 0;
    for (i = 0; i < n; i++)
        if (v[i].sa.sin_port == me.sin_port &&
            platform_addr_is_local(v[i].sa.sin_addr.s_addr))
            return i + 1;
    return 0;
}

/* The IP tasks bind their direct listeners to: ours, or, when we listen
   on 0.0.0.0, the address the machine knows us by. */
void
host_set_direct_ip(struct daemon *d)
{
    const struct host *me = d->hosts[d->hid];
    struct sockaddr_in sa;
    char ip[INET_ADDRSTRLEN] = "127.0.0.1";

    if (host_parse_addr(d->listen_addr, 0, &sa) == 0 &&
        sa.sin_addr.s_addr != htonl(INADDR_ANY))
        inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
    else if (me != NULL && me->sa.sin_addr.s_addr != htonl(INADDR_ANY))
        inet_ntop(AF_INET, &me->sa.sin_addr, ip, sizeof(ip));
    snprintf(d->direct_ip, sizeof(d->direct_ip), "%s", ip);
}

/* Applies the hostfile lines to the table (start and SIGHUP). */
static int
host_apply_file(struct daemon *d, const struct host_line *v, int n)
{
    int hid;

    for (hid = 1; hid <= n; hid++) {
        struct host *h = host_get(d, hid);

        if (h == NULL)
            return COLLS_ENOMEM;
        h->listed = 1;
        if (hid == d->hid)
            continue;
        if (v[hid - 1].name[0] != '\0' || h->name[0] == '\0')
            snprintf(h->name, sizeof(h->name), "%s", v[hid - 1].name);
        if (!host_sa_equal(&h->sa, &v[hid - 1].sa)) {
            if (h->addr[0] != '\0') {
                log_info("host %d moves from %s", hid, h->addr);
                rel_peer_remove(d->rel, hid);
                h->inc = 0;
            }
            h->sa = v[hid - 1].sa;
            host_format(&h->sa, h->addr, sizeof(h->addr));
            host_rel_set(d, h);
        }
    }
    /* Hosts that joined later stay; lines that went away are removed. */
    for (hid = n + 1; hid <= DAEMON_MAX_HID; hid++)
        if (d->hosts[hid] != NULL && d->hosts[hid]->listed && hid != d->hid)
            host_remove(d, hid);
    return 0;
}

/* Our own entry. */
int
host_init_self(struct daemon *d)
{
    struct host *me = host_get(d, d->hid);

    if (me == NULL)
        return COLLS_ENOMEM;
    me->inc = d->inc;
    me->state = COLLS_HOST_UP;
    snprintf(me->name, sizeof(me->name), "%s", d->name);
    host_parse_addr(d->listen_addr, 0, &me->sa);
    snprintf(me->addr, sizeof(me->addr), "%s", d->listen_addr);
    rel_set_hid(d->rel, d->hid);
    return 0;
}

int
host_init(struct daemon *d)
{
    const struct config *cfg = d->cfg;
    struct host_line *v = NULL;
    struct sockaddr_in me;
    struct utsname u;
    int n, rc;

    join_init(d);
    if (uname(&u) == 0)
        snprintf(d->arch, sizeof(d->arch), "%.*s", (int)sizeof(d->arch) - 1,
                 u.machine);
    if (cfg->name[0] != '\0')
        snprintf(d->name, sizeof(d->name), "%s", cfg->name);
    else
        platform_hostname(d->name, sizeof(d->name));
    if (host_parse_addr(d->listen_addr, 0, &me) != 0)
        return COLLS_EINVAL;
    if (cfg->join[0] != '\0')
        return join_start(d);
    d->epoch = 1;
    if (cfg->hostfile[0] == '\0') {
        d->hid = 1;
        rc = host_init_self(d);
        host_set_direct_ip(d);
        return rc;
    }
    n = host_read_file(cfg->hostfile, ntohs(me.sin_port), &v);
    if (n < 0)
        return n;
    d->hid = host_find_self(d, v, n);
    if (d->hid == 0) {
        log_error("hostfile %s: no line for this daemon's --listen %s",
                  cfg->hostfile, d->listen_addr);
        free(v);
        return COLLS_ENOENT;
    }
    if (v[d->hid - 1].name[0] != '\0' && cfg->name[0] == '\0')
        snprintf(d->name, sizeof(d->name), "%s", v[d->hid - 1].name);
    rc = host_init_self(d);
    if (rc == 0 && me.sin_addr.s_addr == htonl(INADDR_ANY)) {
        /* Others know us by the hostfile's address. */
        d->hosts[d->hid]->sa = v[d->hid - 1].sa;
        host_format(&v[d->hid - 1].sa, d->hosts[d->hid]->addr,
                    sizeof(d->hosts[d->hid]->addr));
    }
    host_set_direct_ip(d);
    if (rc == 0)
        rc = host_apply_file(d, v, n);
    free(v);
    log_info("host %d of %d (hostfile %s)", d->hid, n, cfg->hostfile);
    return rc;
}

int
host_reload(struct daemon *d)
{
    struct host_line *v = NULL;
    int n, self, rc;

    if (d->cfg->hostfile[0] == '\0' || d->hid == 0)
        return 0;
    n = host_read_file(d->cfg->hostfile, ntohs(d->hosts[d->hid]->sa.sin_port),
                       &v);
    if (n < 0)
        return n;
    self = host_find_self(d, v, n);
    if (self == 0) {
        /* dropped from the machine: leave it, rather than stay up alone
           seeing every other host down */
        log_warn("hostfile %s no longer lists this daemon (--listen %s): "
                 "leaving the machine and stopping",
                 d->cfg->hostfile, d->listen_addr);
        free(v);
        host_depart(d);
        events_stop(d, 0, 500000);
        return 0;
    }
    if (self != d->hid) {
        log_error("hostfile %s: this daemon moved from line %d to %d; "
                  "kept the old table",
                  d->cfg->hostfile, d->hid, self);
        free(v);
        return COLLS_EINVAL;
    }
    rc = host_apply_file(d, v, n);
    free(v);
    d->epoch++;
    log_info("hostfile re-read: %d hosts, epoch %llu", n,
             (unsigned long long)d->epoch);
    return rc;
}

/* ---- periodic work ------------------------------------------------------ */

/* Sends HEARTBEAT {incarnation, table epoch, task count} to every host
   up or joining.  Nothing answers a heartbeat, so each asks for its ack
   at once: the receiver acks in the wake-up that read it, not in a second
   one ack_delay_us (and the timer slack of an idle daemon) later. */
static void
host_heartbeat(struct daemon *d, uint64_t interval_us)
{
    Heartbeat hb = HEARTBEAT__INIT;
    Envelope e;
    int hid;

    d->beat_us = interval_us;
    d->beat_soon = 0;

    envelope_reply(&e, COLLS_DAEMON_TID(d->hid), 0, KIND__HEARTBEAT, 0, 0);
    e.body_case = ENVELOPE__BODY_HEARTBEAT;
    e.heartbeat = &hb;
    hb.incarnation = d->inc;
    hb.table_epoch = d->epoch;
    hb.ntasks = (uint32_t)d->ntasks;
    hb.arch = d->arch;
    hb.interval_ms = (uint32_t)(interval_us / 1000u);
    for (hid = 1; hid <= DAEMON_MAX_HID; hid++) {
        struct host *h = d->hosts[hid];

        if (h == NULL || hid == d->hid || h->state == COLLS_HOST_DOWN)
            continue;
        d->st.heartbeats_out++;
        net_sendf(d, hid, &e, NULL, 0, REL_SEND_ACKNOW);
    }
}

/* The last sign of life of UP host h: a delivered message, a datagram, or
   the time it came up (or its grace started). */
static uint64_t
host_last_sign(struct daemon *d, const struct host *h)
{
    uint64_t last = rel_last_heard(d->rel, h->hid);

    if (last < h->last_heard_us)
        last = h->last_heard_us;
    if (last < h->since_us)
        last = h->since_us;
    return last;
}

/*
 * How long UP host h may be silent: --dead-after, plus what its heartbeats
 * come later than ours (an idle host announces --idle-heartbeat in them).
 * One slow heartbeat may then be lost and resent by the transport for up
 * to --dead-after less a --heartbeat.
 */
static uint64_t
host_dead_us(const struct daemon *d, const struct host *h)
{
    uint64_t dead = (uint64_t)d->cfg->dead_after_ms * 1000u;
    uint64_t beat = host_beat_us(d);
    uint64_t its = (uint64_t)h->beat_ms * 1000u;

    return its > beat ? dead + (its - beat) : dead;
}

/* 1 if UP host h has been silent for longer than it may be. */
static int
host_is_silent(struct daemon *d, const struct host *h, uint64_t now)
{
    uint64_t last = host_last_sign(d, h);

    return now > last && now - last > host_dead_us(d, h);
}

/* 1 if some UP host has been silent for longer than it may be. */
static int
host_any_silent(struct daemon *d, uint64_t now)
{
    int hid;

    for (hid = 1; hid <= d->hid_top; hid++) {
        struct host *h = d->hosts[hid];

        if (h != NULL && hid != d->hid && h->state == COLLS_HOST_UP &&
            host_is_silent(d, h, now))
            return 1;
    }
    return 0;
}

/* 1 if every other host in the table is UP.  An idle daemon that
   answers pings asks at the end of every loop turn (host_beat_early):
   the whole table's 4095 slots took 3.5 % of a pinned ping-pong's CPU,
   so the walk stops at hid_top. */
static int
host_all_up(const struct daemon *d)
{
    int hid;

    for (hid = 1; hid <= d->hid_top; hid++)
        if (d->hosts[hid] != NULL && hid != d->hid &&
            d->hosts[hid]->state != COLLS_HOST_UP)
            return 0;
    return 1;
}

/*
 * The interval of our heartbeats: --idle-heartbeat while this daemon is
 * idle (collsd.c says so) and every host is up -- nothing of ours then
 * waits on a peer, and no invitation or "you are down" notice is due --,
 * else --heartbeat.
 */
static uint64_t
host_beat_want(const struct daemon *d, int idle)
{
    uint64_t beat = host_beat_us(d);
    uint64_t slow = (uint64_t)d->cfg->idle_heartbeat_ms * 1000u;

    return idle && slow > beat && host_all_up(d) ? slow : beat;
}

uint64_t
host_beat_due(const struct daemon *d, int idle)
{
    uint64_t want = host_beat_want(d, idle);
    uint64_t gap = d->beat_us != 0 && d->beat_us < want ? d->beat_us : want;

    return d->beat_soon ? 0 : d->last_heartbeat_us + gap;
}

int
host_beat_slow(const struct daemon *d)
{
    return d->beat_us > host_beat_us(d);
}

int
host_beat_early(const struct daemon *d)
{
    return d->beat_soon || (host_beat_slow(d) && !host_all_up(d));
}

void
host_comeback(struct daemon *d)
{
    if (d->host_down_by != 0) {
        host_reincarnate(d, d->host_down_by);
        d->host_down_by = 0;
    }
}

/*
 * h was added (`collsctl add', not a hostfile line), this daemon assigns
 * hids, and no daemon ever answered there: it went down from JOINING
 * without an incarnation.
 */
static int
host_unanswered(struct daemon *d, const struct host *h)
{
    return h->state == COLLS_HOST_DOWN && !h->listed && h->inc == 0 &&
           h->dead_inc == 0 && host_assigner(d) == d->hid;
}

/*
 * How late a cron runs before this daemon counts it as stalled:
 * HOST_STALL_BEATS heartbeats (a loaded machine runs a timer some ms
 * late, not a heartbeat), but at most --dead-after less one heartbeat,
 * so that a stop that makes peers look dead is caught even with
 * --dead-after at its least, two heartbeats.
 */
static uint64_t
host_stall_us(const struct daemon *d)
{
    uint64_t beat = host_beat_us(d);
    uint64_t dead = (uint64_t)d->cfg->dead_after_ms * 1000u;
    uint64_t stall = HOST_STALL_BEATS * beat;

    return dead > beat && dead - beat < stall ? dead - beat : stall;
}

/*
 * Heartbeats (and the invitations that go with them), stall grace,
 * dead-host detection (after draining the socket), "you are down"
 * notices.  Only for a member (not stopping, not joining).
 */
void
host_cron(struct daemon *d, uint64_t now, int idle)
{
    uint64_t dead = (uint64_t)d->cfg->dead_after_ms * 1000u;
    uint64_t beat = host_beat_us(d);
    uint64_t prev = d->cron_us;
    int hid;

    if (now >= host_beat_due(d, idle)) {
        d->last_heartbeat_us = now;
        host_heartbeat(d, host_beat_want(d, idle));
        join_invite_all(d);
    }
    if (prev != 0 && d->cron_due_us != 0 && now > d->cron_due_us &&
        now - d->cron_due_us > host_stall_us(d)) {
        /* We did not run: the silence was ours, not the peers'. */
        log_warn("this daemon did not run for %llu ms (its cron ran %llu ms "
                 "late): every host gets a grace of %lld ms",
                 (unsigned long long)((now - prev) / 1000u),
                 (unsigned long long)((now - d->cron_due_us) / 1000u),
                 (long long)d->cfg->dead_after_ms);
        for (hid = 1; hid <= DAEMON_MAX_HID; hid++)
            if (d->hosts[hid] != NULL && hid != d->hid &&
                d->hosts[hid]->state == COLLS_HOST_UP &&
                d->hosts[hid]->last_heard_us < now)
                d->hosts[hid]->last_heard_us = now;
    }
    if (host_any_silent(d, now)) {
        /* What already arrived counts: read it before blaming anyone. */
        net_drain(d);
        if (d->stopping || d->joining)
            return;
    }
    for (hid = 1; hid <= DAEMON_MAX_HID; hid++) {
        struct host *h = d->hosts[hid];
        uint64_t last;

        if (h == NULL || hid == d->hid)
            continue;
        if (h->state == COLLS_HOST_UP) {
            if (host_is_silent(d, h, now))
                host_declare_down(d, h, 1);
        } else if (h->state == COLLS_HOST_DOWN && h->dead_inc != 0) {
            /* Its dead incarnation still sends: tell it. */
            last = rel_last_heard(d->rel, hid);
            if (last > h->since_us && now < last + 2 * beat)
                host_notify_dead(d, h, now);
        } else if (h->state == COLLS_HOST_JOINING && now - h->since_us > dead) {
            /* Listed but never heard: down, quietly. */
            host_set_state(d, h, COLLS_HOST_DOWN);
        } else if (host_unanswered(d, h) && now - h->since_us > dead) {
            /* `collsctl add' saw it down; no phantom stays */
            log_info("host %d (%s) was added but no daemon answered there: "
                     "removed from the table",
                     hid, h->addr);
            host_remove(d, hid);
            d->epoch++;
            host_push_table(d, 0);
        }
    }
}

void
host_free_all(struct daemon *d)
{
    int hid;

    for (hid = 1; hid <= DAEMON_MAX_HID; hid++) {
        free(d->hosts[hid]);
        d->hosts[hid] = NULL;
    }
}
