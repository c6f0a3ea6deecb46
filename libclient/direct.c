/*
 * direct.c -- the direct route: task-to-task TCP connections.
 *
 * At attach the task listens on TCP port 0 at the address the daemon gave
 * in ATTACH_REP.direct_addr (127.0.0.1 when empty) and registers host:port
 * with ROUTE_REG, with a random direct key.  The first direct send to a
 * task asks the daemon for its address (ROUTE_REQ), connects once
 * (TCP_NODELAY; the congestion control of colls__direct_cc_set -- the
 * host's, cubic where that is BBR, or $COLLS_DIRECT_CC -- on the
 * listener and on a connecting socket), sends
 * DIRECT_HELLO and then DATA frames; messages sent meanwhile wait, in
 * order, on the peer.  An accepted connection names
 * its sender in DIRECT_HELLO and shows the ticket the receiver's daemon
 * gave the sender (SipHash of both tids under our key, proto/siphash.h):
 * without the right one the connection is closed unheard, so nobody who
 * can reach our port can speak in another task's name.  A good one is
 * adopted for sending back to that task if we have no connection to it
 * yet, so connections are reused both ways.  DATA received on a direct
 * connection goes up through ops->frame like the daemon's messages.
 *
 * When the peer cannot be reached (no address, connect fails) the peer is
 * marked failed and its messages go through the daemon instead; every such
 * message is counted in colls_route_fallbacks().  A failed peer that later
 * connects to us is adopted again.  Order is kept per route.
 *
 * Deaths (docs/protocol.md §5 and "Task <-> task"): a death the API
 * layer learns of is held back here (colls__direct_hold_death) while the
 * dead task's direct connection is open (its last messages may still be
 * in it) and, for at most COLLS__HELLO_MS, while a connection has not
 * said who it is (one still waiting in the listener's backlog counts: a
 * task that connected, wrote and exited left its messages there);
 * ops->dead reports it when it may be recorded.
 *
 * Part of the connection layer (conn.h): may call conn.c, proto/ and
 * libuv; the address of a peer is asked for through ops->resolve and the
 * answer comes back through colls__direct_resolved().
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn.h"
#include "proto/bytes.h"

/* How long a death waits for an unidentified direct connection's HELLO. */
#define COLLS__HELLO_MS 2000

/* The peer record for tid, or NULL. */
static struct colls__peer *
direct_find(struct colls__conn *cn, colls_tid_t tid)
{
    struct list_node *n;

    LIST_FOREACH (n, &cn->peers) {
        struct colls__peer *p = list_entry(n, struct colls__peer, link);
        if (p->tid == tid)
            return p;
    }
    return NULL;
}

/* A new peer record for tid (state NEW), or NULL out of memory. */
static struct colls__peer *
direct_peer_new(struct colls__conn *cn, colls_tid_t tid)
{
    struct colls__peer *p = calloc(1, sizeof(*p));

    if (p == NULL)
        return NULL;
    p->tid = tid;
    p->state = COLLS__PEER_NEW;
    list_init(&p->pending);
    list_add_tail(&cn->peers, &p->link);
    return p;
}

/*
 * Parses "a.b.c.d:port" or "[v6]:port" into ss.  0 or COLLS_EINVAL.
 */
static int
direct_parse_addr(const char *s, struct sockaddr_storage *ss)
{
    char host[128];
    const char *colon;
    size_t hl;
    long port;
    char *end;

    if (s == NULL)
        return COLLS_EINVAL;
    colon = strrchr(s, ':');
    if (colon == NULL)
        return COLLS_EINVAL;
    hl = (size_t)(colon - s);
    if (hl >= sizeof(host) || hl == 0)
        return COLLS_EINVAL;
    memcpy(host, s, hl);
    host[hl] = '\0';
    port = strtol(colon + 1, &end, 10);
    if (*end != '\0' || port <= 0 || port > 65535)
        return COLLS_EINVAL;
    if (host[0] == '[' && host[hl - 1] == ']') {
        host[hl - 1] = '\0';
        return uv_ip6_addr(host + 1, (int)port, (struct sockaddr_in6 *)ss) == 0
                   ? 0
                   : COLLS_EINVAL;
    }
    return uv_ip4_addr(host, (int)port, (struct sockaddr_in *)ss) == 0
               ? 0
               : COLLS_EINVAL;
}

/*
 * Writes everything waiting on p, in order: on st, or via the daemon
 * (counted as fallbacks) when st is NULL.
 */
static void
direct_flush(struct colls__conn *cn, struct colls__peer *p,
             struct colls__stream *st)
{
    struct list_node *n;

    while ((n = list_first(&p->pending)) != NULL) {
        struct colls__wreq *wr = list_entry(n, struct colls__wreq, link);
        list_del(&wr->link);
        if (st == NULL)
            cn->fallbacks++;
        colls__wreq_write(st != NULL ? st : cn->daemon, wr);
    }
}

/* The peer cannot be reached: everything waiting goes via the daemon. */
static void
direct_peer_fail(struct colls__conn *cn, struct colls__peer *p)
{
    p->state = COLLS__PEER_FAILED;
    if (p->st != NULL) {
        struct colls__stream *st = p->st;
        p->st = NULL;
        st->peer = NULL;
        colls__stream_close(st);
    }
    direct_flush(cn, p, NULL);
}

/*
 * The TCP congestion control of this task's direct connections: name
 * ($COLLS_DIRECT_CC).  NULL or "": where the host's default
 * (net.ipv4.tcp_congestion_control, what a new socket gets) is BBR,
 * cubic, or reno where this task may not choose cubic; otherwise the
 * host's.  "system": the host's, whatever it is.  Any other name is
 * tried once on a socket of its own, so that a name the kernel does not
 * know or does not let this task choose fails the attach with the
 * kernel's reason in err.  0 or COLLS_EINVAL / COLLS_EIO.
 *
 * Why not BBR by default: between tasks of a cluster it took large
 * direct bcasts three times as long as cubic or reno, with or without
 * the fq qdisc (4 emulated hosts x 1 task, 5 December 2026: 4 MiB in
 * 4.9-5.3 ms unpinned against 1.4-1.6; docs/architecture.md, "TCP's
 * congestion control").
 */
static const char *const direct_cc_instead_of_bbr[] = {"cubic", "reno"};

/* Sets congestion control name on TCP socket fd: setsockopt's result. */
static int
direct_cc_fd(int fd, const char *name)
{
    return setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name,
                      (socklen_t)strlen(name));
}

int
colls__direct_cc_set(struct colls__conn *cn, const char *name, char *err,
                     size_t cap)
{
    char cur[sizeof(cn->direct_cc)] = "";
    socklen_t len = sizeof(cur) - 1;
    int fd, rc = 0;
    size_t i;

    cn->direct_cc[0] = '\0';
    if (name != NULL && strcmp(name, "system") == 0)
        return 0;
    if (name != NULL && name[0] != '\0' &&
        strlen(name) >= sizeof(cn->direct_cc)) {
        snprintf(err, cap, "COLLS_DIRECT_CC=%s: longer than %zu characters",
                 name, sizeof(cn->direct_cc) - 1);
        return COLLS_EINVAL;
    }
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, cap, "COLLS_DIRECT_CC: no TCP socket: %s",
                 strerror(errno));
        return COLLS_EIO;
    }
    if (name == NULL || name[0] == '\0') {
        /* the default: the host's unless it is BBR; quietly the host's
           when no alternative is allowed */
        name = NULL;
        if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cur, &len) == 0 &&
            strncmp(cur, "bbr", 3) == 0)
            for (i = 0;
                 name == NULL && i < sizeof(direct_cc_instead_of_bbr) /
                                         sizeof(direct_cc_instead_of_bbr[0]);
                 i++)
                if (direct_cc_fd(fd, direct_cc_instead_of_bbr[i]) == 0)
                    name = direct_cc_instead_of_bbr[i];
    } else if (direct_cc_fd(fd, name) < 0) {
        snprintf(err, cap,
                 "COLLS_DIRECT_CC=%s: %s (net.ipv4.tcp_allowed_congestion_"
                 "control names those a task may choose)",
                 name, strerror(errno));
        rc = COLLS_EINVAL;
        name = NULL;
    }
    if (name != NULL)
        memcpy(cn->direct_cc, name, strlen(name) + 1);
    close(fd);
    return rc;
}

/*
 * Gives TCP socket h the congestion control of colls__direct_cc_set
 * (nothing when the system's is kept; the name was checked at attach).
 * Before the connection exists: the listener's (its connections inherit
 * it) and a connecting socket's before it connects.  Switched on an open
 * connection, BBR's pacing stayed on under reno (a direct allreduce of
 * 256 KiB on 4 emulated hosts x 1 took 1.6-1.8x Open MPI's time, against
 * 0.7-0.8x with reno from the start; docs/architecture.md).
 */
static void
direct_cc_apply(struct colls__conn *cn, uv_handle_t *h)
{
    uv_os_fd_t fd;

    if (cn->direct_cc[0] != '\0' && uv_fileno(h, &fd) == 0)
        (void)direct_cc_fd(fd, cn->direct_cc);
}

/* TCP connect finished: say hello and flush what waited, or fall back. */
static void
direct_connect_cb(uv_connect_t *req, int status)
{
    struct colls__peer *p = req->data;
    struct colls__stream *st = p->st;
    struct colls__conn *cn;
    RouteRep hello = ROUTE_REP__INIT;
    Envelope e;

    if (st == NULL) {
        /* the stream was closed while connecting */
        return;
    }
    cn = st->cn;
    if (status < 0 || st->closing) {
        direct_peer_fail(cn, p);
        return;
    }
    uv_tcp_nodelay(&st->u.tcp, 1);
    envelope_init(&e);
    e.kind = KIND__DIRECT_HELLO;
    e.src = cn->tid;
    e.dst = p->tid;
    e.route = COLLS_ROUTE_DIRECT;
    hello.tid = cn->tid;
    hello.ticket.data = p->ticket;
    hello.ticket.len = COLLS_TICKET_LEN;
    e.body_case = ENVELOPE__BODY_ROUTE_REP;
    e.route_rep = &hello;
    if (colls__stream_start(st) < 0 ||
        colls__write_env(st, &e, NULL, 0, NULL) < 0) {
        direct_peer_fail(cn, p);
        return;
    }
    p->state = COLLS__PEER_UP;
    direct_flush(cn, p, st);
}

/*
 * The answer to ops->resolve: tid listens at addr ("host:port") and takes
 * ticket from us, or addr is NULL when the daemon had neither for it.
 * Connects to it, or falls back: without a ticket the peer would close
 * the connection unheard, with our messages on it.
 */
void
colls__direct_resolved(struct colls__conn *cn, colls_tid_t tid,
                       const char *addr, const uint8_t *ticket,
                       size_t ticket_len)
{
    struct colls__peer *p = direct_find(cn, tid);
    struct sockaddr_storage ss;
    struct colls__stream *st;

    if (p == NULL || p->state != COLLS__PEER_RESOLVING)
        return; /* adopted an incoming connection meanwhile */
    if (addr == NULL || ticket == NULL || ticket_len != COLLS_TICKET_LEN ||
        direct_parse_addr(addr, &ss) < 0) {
        direct_peer_fail(cn, p);
        return;
    }
    memcpy(p->ticket, ticket, COLLS_TICKET_LEN);
    st = colls__stream_new(cn, COLLS__ST_DIRECT);
    if (st == NULL) {
        direct_peer_fail(cn, p);
        return;
    }
    /* the socket now (not at connect): its congestion control first; if
       it cannot be made now, uv_tcp_connect fails and the peer with it */
    if (uv_tcp_init_ex(&cn->loop, &st->u.tcp, ss.ss_family) != 0)
        uv_tcp_init(&cn->loop, &st->u.tcp);
    direct_cc_apply(cn, &st->u.h);
    st->u.h.data = st;
    st->hello = 1;
    st->peer_tid = p->tid;
    st->peer = p;
    p->st = st;
    p->state = COLLS__PEER_CONNECTING;
    p->conn.data = p;
    if (uv_tcp_connect(&p->conn, &st->u.tcp, (struct sockaddr *)&ss,
                       direct_connect_cb) != 0)
        direct_peer_fail(cn, p);
}

/*
 * Sends DATA write wr to wr->dst over the direct route, setting up the
 * connection if needed, or via the daemon if the peer is unreachable.
 * 0 or a COLLS_E* code (wr is then freed).
 */
int
colls__direct_send(struct colls__conn *cn, struct colls__wreq *wr)
{
    struct colls__peer *p = direct_find(cn, wr->dst);

    if (p == NULL)
        p = direct_peer_new(cn, wr->dst);
    if (p == NULL) {
        cn->fallbacks++;
        return colls__wreq_write(cn->daemon, wr);
    }
    switch (p->state) {
    case COLLS__PEER_UP:
        return colls__wreq_write(p->st, wr);
    case COLLS__PEER_FAILED:
        cn->fallbacks++;
        return colls__wreq_write(cn->daemon, wr);
    case COLLS__PEER_NEW:
        list_add_tail(&p->pending, &wr->link);
        /* the answer may come at once (no daemon): queue first */
        p->state = COLLS__PEER_RESOLVING;
        cn->ops->resolve(cn, p->tid);
        return 0;
    default: /* resolving or connecting */
        list_add_tail(&p->pending, &wr->link);
        return 0;
    }
}

/* ---- deaths held back --------------------------------------------------- */

/*
 * A direct connection said HELLO from tid: if tid's death is held back,
 * returns its status (the connection records it when it closes) and
 * forgets it here; else 0.
 */
static int
direct_take_pending(struct colls__conn *cn, colls_tid_t tid)
{
    struct colls__deaths *d = &cn->pending;
    size_t i;
    int status;

    for (i = 0; i < d->n; i++) {
        if (d->v[i].tid != tid)
            continue;
        status = d->v[i].status;
        d->v[i] = d->v[--d->n];
        return status;
    }
    return 0;
}

/* 1 if cn's listener has a connection waiting in its backlog, not yet
   accepted (its listen callback has not run). */
static int
direct_backlog(struct colls__conn *cn)
{
    struct pollfd pfd = {.events = POLLIN};
    uv_os_fd_t fd;

    if (!cn->listening || uv_fileno((uv_handle_t *)&cn->listener, &fd) != 0)
        return 0;
    pfd.fd = fd;
    return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN) != 0;
}

/* 1 while a direct connection has not said who it is: open without
   HELLO, or waiting in the listener's backlog. */
static int
direct_unknown(struct colls__conn *cn)
{
    struct list_node *n;

    LIST_FOREACH (n, &cn->streams) {
        struct colls__stream *st = list_entry(n, struct colls__stream, link);
        if (st->kind == COLLS__ST_DIRECT && !st->hello && !st->closing)
            return 1;
    }
    return direct_backlog(cn);
}

/*
 * Reports the held-back deaths once no connection of unknown origin is
 * left, or, when the wait has expired, at once.  While they are being
 * reported, colls__direct_hold_death does not hold them again for such
 * a connection: when it also looked at the backlog and this did not, a
 * connection arriving in the backlog between a HELLO and this call made
 * every death go back on the list as it came off, for ever (a survivor
 * of coll-fail.sh spun at 100 % CPU instead of failing its allreduce).
 */
static void
direct_apply_pending(struct colls__conn *cn, int expired)
{
    if (cn->pending.n == 0 || (!expired && direct_unknown(cn)))
        return;
    uv_timer_stop(&cn->hello_timer);
    cn->releasing = 1;
    while (cn->pending.n > 0) {
        struct colls__dead d = cn->pending.v[--cn->pending.n];
        cn->ops->dead(cn, d.tid, d.status);
    }
    cn->releasing = 0;
}

/* Closes the direct connections that did not say HELLO in time. */
static void
direct_hello_timer_cb(uv_timer_t *t)
{
    struct colls__conn *cn = t->data;
    struct list_node *n, *tmp;

    LIST_FOREACH_SAFE (n, tmp, &cn->streams) {
        struct colls__stream *st = list_entry(n, struct colls__stream, link);
        if (st->kind == COLLS__ST_DIRECT && !st->hello)
            colls__stream_close(st);
    }
    direct_apply_pending(cn, 1);
}

/*
 * The API layer learnt that tid is gone (status: COLLS_EPEERDEAD,
 * COLLS_ENOENT, or COLLS_EHOSTDOWN from SEND_FAILED).  If a direct
 * connection from tid is open, its last messages may still be in it: the
 * death is kept on that connection and reported (ops->dead) when it
 * closes.  While a connection of unknown origin is open, or one waits
 * to be accepted, the death waits, for at most COLLS__HELLO_MS; not
 * while the held deaths are being reported (direct_apply_pending).
 * Returns 1 if the death is held back, 0 if it may be recorded now (also
 * when there is no memory to hold it).
 */
int
colls__direct_hold_death(struct colls__conn *cn, colls_tid_t tid, int status)
{
    struct list_node *n;
    int unknown = 0;

    LIST_FOREACH (n, &cn->streams) {
        struct colls__stream *st = list_entry(n, struct colls__stream, link);
        if (st->kind != COLLS__ST_DIRECT || st->closing)
            continue;
        if (!st->hello)
            unknown = 1;
        else if (st->peer_tid == tid) {
            st->dead_status = status;
            return 1;
        }
    }
    if (cn->releasing)
        return 0;
    if (!unknown)
        unknown = direct_backlog(cn);
    if (!unknown || colls__deaths_reserve(&cn->pending) < 0)
        return 0;
    cn->pending.v[cn->pending.n].tid = tid;
    cn->pending.v[cn->pending.n].status = status;
    cn->pending.n++;
    if (!uv_is_active((uv_handle_t *)&cn->hello_timer))
        uv_timer_start(&cn->hello_timer, direct_hello_timer_cb, COLLS__HELLO_MS,
                       0);
    return 1;
}

/* ---- receiving ---------------------------------------------------------- */

/* 1 if HELLO e shows the ticket our key gives its sender for us (a task
   listens only once it has drawn its key).  Compared in constant time. */
static int
direct_ticket_ok(const struct colls__conn *cn, const Envelope *e)
{
    uint8_t want[COLLS_TICKET_LEN], diff = 0;
    const uint8_t *got;
    size_t i;

    if (e->body_case != ENVELOPE__BODY_ROUTE_REP ||
        e->route_rep->ticket.len != COLLS_TICKET_LEN)
        return 0;
    got = e->route_rep->ticket.data;
    put_u64(want, colls_direct_ticket(cn->direct_key, e->src, cn->tid));
    for (i = 0; i < COLLS_TICKET_LEN; i++)
        diff |= (uint8_t)(want[i] ^ got[i]);
    return diff == 0;
}

/*
 * A frame on a direct connection.  The first must be DIRECT_HELLO naming
 * the sender; then DATA frames, which go up with that sender as source.
 */
void
colls__direct_frame(struct colls__stream *st, Envelope *e, uint8_t *payload,
                    size_t plen)
{
    struct colls__conn *cn = st->cn;
    struct colls__peer *p;

    if (!st->hello) {
        if (e->kind != KIND__DIRECT_HELLO || e->src == 0 ||
            COLLS_TID_LOCAL(e->src) == 0 || !direct_ticket_ok(cn, e)) {
            cn->direct_refused++;
            colls__stream_close(st);
            goto out;
        }
        st->hello = 1;
        st->peer_tid = e->src;
        st->dead_status = direct_take_pending(cn, e->src);
        direct_apply_pending(cn, 0);
        p = direct_find(cn, e->src);
        if (p == NULL)
            p = direct_peer_new(cn, e->src);
        if (p != NULL && p->st == NULL &&
            (p->state == COLLS__PEER_NEW || p->state == COLLS__PEER_FAILED)) {
            p->st = st;
            st->peer = p;
            p->state = COLLS__PEER_UP;
        }
        goto out;
    }
    if (e->kind != KIND__DATA)
        goto out;
    cn->ops->frame(cn, COLLS_ROUTE_DIRECT, st->peer_tid, e, payload, plen);
    return;
out:
    envelope_free(e);
    free(payload);
}

/* A direct stream is closing: its peer no longer has it, and a death
   announced while it was open is reported now. */
void
colls__direct_closed(struct colls__stream *st)
{
    struct colls__conn *cn = st->cn;
    struct colls__peer *p = st->peer;

    if (st->dead_status < 0) {
        int status = st->dead_status;
        st->dead_status = 0;
        cn->ops->dead(cn, st->peer_tid, status);
    }
    if (!st->hello)
        direct_apply_pending(cn, 0);

    if (p == NULL || p->st != st)
        return;
    p->st = NULL;
    st->peer = NULL;
    if (p->state == COLLS__PEER_UP)
        p->state = COLLS__PEER_NEW;
    else if (p->state == COLLS__PEER_CONNECTING)
        direct_peer_fail(cn, p);
}

/* A task connects to our listener. */
static void
direct_listen_cb(uv_stream_t *server, int status)
{
    struct colls__conn *cn = server->data;
    struct colls__stream *st;

    if (status < 0)
        return;
    st = colls__stream_new(cn, COLLS__ST_DIRECT);
    if (st == NULL)
        return;
    uv_tcp_init(&cn->loop, &st->u.tcp);
    st->u.h.data = st;
    if (uv_accept(server, &st->u.s) != 0 || colls__stream_start(st) < 0) {
        colls__stream_close(st);
        return;
    }
    uv_tcp_nodelay(&st->u.tcp, 1);
}

/*
 * Opens the direct listener at cn->direct_addr and registers it with the
 * daemon.  0 or a COLLS_E* code (then this task has no listener).
 */
int
colls__direct_listen(struct colls__conn *cn)
{
    struct sockaddr_storage ss;
    int sslen = sizeof(ss);
    char ip[64], addr[96];
    const char *bind_ip = cn->direct_addr[0] ? cn->direct_addr : "127.0.0.1";
    Envelope e;
    RouteRep rr = ROUTE_REP__INIT;
    int v6 = strchr(bind_ip, ':') != NULL;

    memset(&ss, 0, sizeof(ss));
    if ((v6 ? uv_ip6_addr(bind_ip, 0, (struct sockaddr_in6 *)&ss)
            : uv_ip4_addr(bind_ip, 0, (struct sockaddr_in *)&ss)) != 0)
        return COLLS_EINVAL;
    if (uv_tcp_init(&cn->loop, &cn->listener) != 0)
        return COLLS_EIO;
    cn->listener.data = cn;
    cn->listening = 1;
    if (uv_tcp_bind(&cn->listener, (struct sockaddr *)&ss, 0) != 0)
        goto fail;
    direct_cc_apply(cn, (uv_handle_t *)&cn->listener); /* bound: a socket */
    if (uv_listen((uv_stream_t *)&cn->listener, 64, direct_listen_cb) != 0 ||
        uv_tcp_getsockname(&cn->listener, (struct sockaddr *)&ss, &sslen) != 0)
        goto fail;
    if (ss.ss_family == AF_INET6) {
        uv_ip6_name((struct sockaddr_in6 *)&ss, ip, sizeof(ip));
        snprintf(addr, sizeof(addr), "[%s]:%u", ip,
                 (unsigned)ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
    } else {
        uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof(ip));
        snprintf(addr, sizeof(addr), "%s:%u", ip,
                 (unsigned)ntohs(((struct sockaddr_in *)&ss)->sin_port));
    }
    envelope_init(&e);
    e.kind = KIND__ROUTE_REG;
    e.src = cn->tid;
    e.req_id = colls__conn_req_id(cn);
    rr.tid = cn->tid;
    rr.addr = addr;
    /* no key, no listener: a peer's messages then come by the daemon */
    if (getrandom(cn->direct_key, sizeof(cn->direct_key), 0) !=
        (ssize_t)sizeof(cn->direct_key))
        goto fail;
    rr.key.data = cn->direct_key;
    rr.key.len = sizeof(cn->direct_key);
    e.body_case = ENVELOPE__BODY_ROUTE_REP;
    e.route_rep = &rr;
    if (colls__write_env(cn->daemon, &e, NULL, 0, NULL) < 0)
        goto fail;
    return 0;
fail:
    uv_close((uv_handle_t *)&cn->listener, NULL);
    cn->listening = 0;
    return COLLS_EIO;
}

/* Frees the peer records (handles are already closed). */
void
colls__direct_free(struct colls__conn *cn)
{
    struct list_node *n, *w;

    while ((n = list_first(&cn->peers)) != NULL) {
        struct colls__peer *p = list_entry(n, struct colls__peer, link);
        while ((w = list_first(&p->pending)) != NULL) {
            list_del(w);
            colls__wreq_fail(list_entry(w, struct colls__wreq, link),
                             COLLS_ECANCELED);
        }
        list_del(&p->link);
        free(p);
    }
}
