/*
 * direct.c -- the direct route: task-to-task TCP connections.
 *
 * At attach the task listens on TCP port 0 at the address the daemon gave
 * in ATTACH_REP.direct_addr (127.0.0.1 when empty) and registers host:port
 * with ROUTE_REG.  The first direct send to a task asks the daemon for its
 * address (ROUTE_REQ), connects once (TCP_NODELAY), sends DIRECT_HELLO and
 * then DATA frames; messages sent meanwhile wait, in order, on the peer.
 * An accepted connection names its sender in DIRECT_HELLO and is adopted
 * for sending back to that task if we have no connection to it yet, so
 * connections are reused both ways.  Everything received on a direct
 * connection goes to the same receive queue as the daemon's messages.
 *
 * When the peer cannot be reached (no address, connect fails) the peer is
 * marked failed and its messages go through the daemon instead; every such
 * message is counted in colls_route_fallbacks().  A failed peer that later
 * connects to us is adopted again.  Order is kept per route.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The peer record for tid, or NULL. */
static struct colls__peer *
direct_find(colls_t *c, colls_tid_t tid)
{
    struct colls__queue *q;

    for (q = c->peers.next; q != &c->peers; q = q->next) {
        struct colls__peer *p = COLLS__CONTAINER(q, struct colls__peer, link);
        if (p->tid == tid)
            return p;
    }
    return NULL;
}

/* A new peer record for tid (state NEW), or NULL out of memory. */
static struct colls__peer *
direct_peer_new(colls_t *c, colls_tid_t tid)
{
    struct colls__peer *p = calloc(1, sizeof(*p));

    if (p == NULL)
        return NULL;
    p->tid = tid;
    p->state = COLLS__PEER_NEW;
    colls__q_init(&p->pending);
    colls__q_init(&p->link);
    colls__q_push(&c->peers, &p->link);
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

/* The peer cannot be reached: everything waiting goes via the daemon. */
static void
direct_peer_fail(colls_t *c, struct colls__peer *p)
{
    p->state = COLLS__PEER_FAILED;
    if (p->st != NULL) {
        struct colls__stream *st = p->st;
        p->st = NULL;
        st->peer = NULL;
        colls__stream_close(st);
    }
    while (!colls__q_empty(&p->pending)) {
        struct colls__wreq *wr =
            COLLS__CONTAINER(p->pending.next, struct colls__wreq, link);
        colls__q_remove(&wr->link);
        c->fallbacks++;
        colls__wreq_write(c->daemon, wr);
    }
}

/* TCP connect finished: say hello and flush what waited, or fall back. */
static void
direct_connect_cb(uv_connect_t *req, int status)
{
    struct colls__peer *p = req->data;
    struct colls__stream *st = p->st;
    colls_t *c;
    Envelope e;

    if (st == NULL) {
        /* the stream was closed while connecting */
        return;
    }
    c = st->c;
    if (status < 0 || st->closing) {
        direct_peer_fail(c, p);
        return;
    }
    uv_tcp_nodelay(&st->u.tcp, 1);
    envelope_init(&e);
    e.kind = KIND__DIRECT_HELLO;
    e.src = c->tid;
    e.dst = p->tid;
    e.route = COLLS_ROUTE_DIRECT;
    if (colls__stream_start(st) < 0 ||
        colls__write_env(st, &e, NULL, 0, NULL) < 0) {
        direct_peer_fail(c, p);
        return;
    }
    p->state = COLLS__PEER_UP;
    while (!colls__q_empty(&p->pending)) {
        struct colls__wreq *wr =
            COLLS__CONTAINER(p->pending.next, struct colls__wreq, link);
        colls__q_remove(&wr->link);
        colls__wreq_write(st, wr);
    }
}

/* ROUTE_REP (or its failure) for a peer being resolved. */
static void
direct_route_cb(colls_t *c, struct colls__ctl *ctl)
{
    struct colls__peer *p = ctl->arg;
    struct sockaddr_storage ss;
    struct colls__stream *st;
    Envelope *e = ctl->rep;

    if (p->state != COLLS__PEER_RESOLVING)
        goto out; /* adopted an incoming connection meanwhile */
    if (ctl->status < 0 || e == NULL || e->kind != KIND__ROUTE_REP ||
        e->status < 0 || e->body_case != ENVELOPE__BODY_ROUTE_REP ||
        direct_parse_addr(e->route_rep->addr, &ss) < 0) {
        direct_peer_fail(c, p);
        goto out;
    }
    st = colls__stream_new(c, COLLS__ST_DIRECT);
    if (st == NULL) {
        direct_peer_fail(c, p);
        goto out;
    }
    uv_tcp_init(&c->loop, &st->u.tcp);
    st->u.h.data = st;
    st->hello = 1;
    st->peer_tid = p->tid;
    st->peer = p;
    p->st = st;
    p->state = COLLS__PEER_CONNECTING;
    p->conn.data = p;
    if (uv_tcp_connect(&p->conn, &st->u.tcp, (struct sockaddr *)&ss,
                       direct_connect_cb) != 0)
        direct_peer_fail(c, p);
out:
    colls__ctl_free(ctl);
}

/* Asks the daemon where p listens.  On failure p falls back at once. */
static void
direct_resolve(colls_t *c, struct colls__peer *p)
{
    struct colls__ctl *ctl = calloc(1, sizeof(*ctl));
    Envelope e;

    if (ctl == NULL) {
        direct_peer_fail(c, p);
        return;
    }
    ctl->cb = direct_route_cb;
    ctl->arg = p;
    envelope_init(&e);
    e.kind = KIND__ROUTE_REQ;
    e.dst = p->tid;
    p->state = COLLS__PEER_RESOLVING;
    if (colls__ctl_send(c, &e, ctl) < 0) {
        free(ctl);
        direct_peer_fail(c, p);
    }
}

/*
 * Sends DATA write wr to wr->dst over the direct route, setting up the
 * connection if needed, or via the daemon if the peer is unreachable.
 * 0 or a COLLS_E* code (wr is then freed).
 */
int
colls__direct_send(colls_t *c, struct colls__wreq *wr)
{
    struct colls__peer *p = direct_find(c, wr->dst);

    if (p == NULL)
        p = direct_peer_new(c, wr->dst);
    if (p == NULL) {
        c->fallbacks++;
        return colls__wreq_write(c->daemon, wr);
    }
    switch (p->state) {
    case COLLS__PEER_UP:
        return colls__wreq_write(p->st, wr);
    case COLLS__PEER_FAILED:
        c->fallbacks++;
        return colls__wreq_write(c->daemon, wr);
    case COLLS__PEER_NEW:
        colls__q_push(&p->pending, &wr->link);
        direct_resolve(c, p);
        return 0;
    default: /* resolving or connecting */
        colls__q_push(&p->pending, &wr->link);
        return 0;
    }
}

/*
 * A frame on a direct connection.  The first must be DIRECT_HELLO naming
 * the sender; then DATA frames, delivered with that sender as source.
 */
void
colls__direct_frame(struct colls__stream *st, Envelope *e, uint8_t *payload,
                    size_t plen)
{
    colls_t *c = st->c;
    struct colls__rmsg *m;
    struct colls__peer *p;

    if (!st->hello) {
        if (e->kind != KIND__DIRECT_HELLO || e->src == 0 ||
            COLLS_TID_LOCAL(e->src) == 0) {
            colls__stream_close(st);
            goto out;
        }
        st->hello = 1;
        st->peer_tid = e->src;
        st->dead_status = colls__take_pending(c, e->src);
        colls__apply_pending(c);
        p = direct_find(c, e->src);
        if (p == NULL)
            p = direct_peer_new(c, e->src);
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
    m = calloc(1, sizeof(*m));
    if (m == NULL)
        goto out;
    m->src = st->peer_tid;
    m->tag = e->tag;
    m->flags = e->flags;
    m->encoding = (int)e->encoding;
    m->byte_order = (int)e->byte_order;
    m->route = COLLS_ROUTE_DIRECT;
    m->data = payload;
    m->len = plen;
    envelope_free(e);
    colls__deliver(c, m);
    return;
out:
    envelope_free(e);
    free(payload);
}

/* A direct stream is closing: its peer no longer has it, and a death
   announced while it was open is recorded now. */
void
colls__direct_closed(struct colls__stream *st)
{
    struct colls__peer *p = st->peer;

    if (st->dead_status < 0) {
        int status = st->dead_status;
        st->dead_status = 0;
        colls__mark_dead(st->c, st->peer_tid, status);
    }
    if (!st->hello)
        colls__apply_pending(st->c);

    if (p == NULL || p->st != st)
        return;
    p->st = NULL;
    st->peer = NULL;
    if (p->state == COLLS__PEER_UP)
        p->state = COLLS__PEER_NEW;
    else if (p->state == COLLS__PEER_CONNECTING)
        direct_peer_fail(st->c, p);
}

/* A task connects to our listener. */
static void
direct_listen_cb(uv_stream_t *server, int status)
{
    colls_t *c = server->data;
    struct colls__stream *st;

    if (status < 0)
        return;
    st = colls__stream_new(c, COLLS__ST_DIRECT);
    if (st == NULL)
        return;
    uv_tcp_init(&c->loop, &st->u.tcp);
    st->u.h.data = st;
    if (uv_accept(server, &st->u.s) != 0 || colls__stream_start(st) < 0) {
        colls__stream_close(st);
        return;
    }
    uv_tcp_nodelay(&st->u.tcp, 1);
}

/*
 * Opens the direct listener and registers it with the daemon.  0 or a
 * COLLS_E* code (then this task has no listener).
 */
int
colls__direct_listen(colls_t *c)
{
    struct sockaddr_storage ss;
    int sslen = sizeof(ss);
    char ip[64], addr[96];
    const char *bind_ip = c->direct_addr[0] ? c->direct_addr : "127.0.0.1";
    Envelope e;
    RouteRep rr = ROUTE_REP__INIT;
    int v6 = strchr(bind_ip, ':') != NULL;

    memset(&ss, 0, sizeof(ss));
    if ((v6 ? uv_ip6_addr(bind_ip, 0, (struct sockaddr_in6 *)&ss)
            : uv_ip4_addr(bind_ip, 0, (struct sockaddr_in *)&ss)) != 0)
        return COLLS_EINVAL;
    if (uv_tcp_init(&c->loop, &c->listener) != 0)
        return COLLS_EIO;
    c->listener.data = c;
    c->listening = 1;
    if (uv_tcp_bind(&c->listener, (struct sockaddr *)&ss, 0) != 0 ||
        uv_listen((uv_stream_t *)&c->listener, 64, direct_listen_cb) != 0 ||
        uv_tcp_getsockname(&c->listener, (struct sockaddr *)&ss, &sslen) != 0)
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
    e.src = c->tid;
    e.req_id = colls__req_id(c);
    rr.tid = c->tid;
    rr.addr = addr;
    e.body_case = ENVELOPE__BODY_ROUTE_REP;
    e.route_rep = &rr;
    if (colls__write_env(c->daemon, &e, NULL, 0, NULL) < 0)
        goto fail;
    return 0;
fail:
    uv_close((uv_handle_t *)&c->listener, NULL);
    c->listening = 0;
    return COLLS_EIO;
}

/* Frees the peer records (handles are already closed). */
void
colls__direct_free(colls_t *c)
{
    while (!colls__q_empty(&c->peers)) {
        struct colls__peer *p =
            COLLS__CONTAINER(c->peers.next, struct colls__peer, link);
        while (!colls__q_empty(&p->pending)) {
            struct colls__wreq *wr =
                COLLS__CONTAINER(p->pending.next, struct colls__wreq, link);
            colls__q_remove(&wr->link);
            colls__wreq_fail(wr, COLLS_ECANCELED);
        }
        colls__q_remove(&p->link);
        free(p);
    }
}
