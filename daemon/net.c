/*
 * net.c -- the UDP socket and the reliable transport, wired to the loop.
 *
 * Receive: udp fd readable -> udp_recv_batch -> join datagrams to
 * net_ops.join_dgram, everything else to rel_input -> rel delivers whole
 * messages to net_deliver, which unpacks the envelope and hands it to
 * net_ops.message.  Send: net_send packs the envelope and calls
 * rel_sendv; rel calls net_rel_send -> udp_send (batched).  The flush
 * event, run after the callbacks of the same loop turn, then pushes the
 * batch out with udp_flush, runs net_ops.turn_end and arms the transport
 * timer at rel_next_timeout().  net_send_credit is the one message this
 * layer builds itself (for task.c, which owes flow-control credit).
 *
 * With a cluster key (d->auth) rel seals and opens the transport's
 * datagrams; join datagrams are sealed and opened here (NET_JOIN_SEALED),
 * and a failure of either is logged at most once a second
 * (net_auth_fail).
 *
 * May call: udp, rel, auth, platform, log, proto/.  Never route, host, group,
 * coll or admin: those are reached through d->net_ops only.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <event2/event.h>

#include "colls.h"
#include "daemon/auth.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/log.h"
#include "daemon/net.h"
#include "daemon/platform.h"
#include "daemon/rel.h"
#include "daemon/udp.h"
#include "proto/bytes.h"
#include "proto/envelope.h"

/* Batches read per readable event before giving other events a turn
   (a batch that came back shorter than udp_recv_vlen drained the socket,
   so no recvmmsg is spent to learn EAGAIN). */
#define NET_READ_BATCHES 16

static int
net_rel_send(void *ctx, const struct sockaddr *addr, socklen_t alen,
             const struct iovec *iov, int iovcnt)
{
    struct daemon *d = ctx;

    return udp_send(d->udp, addr, alen, iov, iovcnt);
}

static uint8_t *
net_rel_send_buf(void *ctx, const struct sockaddr *addr, socklen_t alen,
                 size_t len)
{
    struct daemon *d = ctx;

    return udp_send_buf(d->udp, addr, alen, len);
}

/*
 * A message from hid in protocol version `version' (not ours) was
 * dropped: counted, and said once per peer and version at warning level
 * (COLLS_EVERSION, the host, both versions), then at debug level.  The
 * host is then declared down by its silence, as any peer that cannot be
 * understood.
 */
static void
net_version_mismatch(struct daemon *d, int hid, uint32_t version)
{
    d->st.bad_peer_msgs++;
    if (d->peer_version[hid] == version) {
        log_debug("host %d: protocol version %u message dropped", hid, version);
        return;
    }
    d->peer_version[hid] = version;
    log_warn("host %d: COLLS_EVERSION, it speaks protocol version %u, this "
             "daemon %u: its messages are dropped",
             hid, version, COLLS_PROTO_VERSION);
}

/*
 * rel's deliver callback: one whole message from daemon hid.  Checks the
 * envelope length, unpacks it and passes envelope, payload and the
 * message buffer (ownership) to net_ops.message.
 */
static void
net_deliver(void *ctx, int hid, uint8_t *msg, size_t len)
{
    struct daemon *d = ctx;
    struct envelope_arena arena;
    Envelope *e = NULL;
    uint32_t env_len;
    int rc;

    if (len < 4 || (env_len = get_u32(msg)) > len - 4 || env_len == 0 ||
        env_len > NET_MAX_ENV) {
        d->st.bad_peer_msgs++;
        log_warn("host %d: malformed message (%zu bytes) dropped", hid, len);
        free(msg);
        return;
    }
    rc = envelope_unpack_in(&arena, msg + 4, env_len, &e);
    if (rc == COLLS_EVERSION) {
        net_version_mismatch(d, hid, envelope_peek_version(msg + 4, env_len));
        free(msg);
        return;
    }
    if (rc != 0) {
        d->st.bad_peer_msgs++;
        log_warn("host %d: bad envelope (%s) dropped", hid, log_errstr(rc));
        free(msg);
        return;
    }
    d->st.peer_msgs_in++;
    d->net_ops->message(d, hid, e, msg, len, 4 + env_len);
    envelope_free_in(&arena, e);
    net_kick(d);
}

/* rel's reset callback: hid restarted or was dropped. */
static void
net_reset(void *ctx, int hid, uint32_t new_inc)
{
    struct daemon *d = ctx;

    d->net_ops->peer_reset(d, hid, new_inc);
    net_kick(d);
}

/*
 * rel's auth_fail callback (and ours for join datagrams): a datagram
 * from addr failed authentication.  Logged at most once a second, with
 * the number suppressed since.
 */
static void
net_auth_fail(void *ctx, const struct sockaddr *addr, socklen_t alen)
{
    static uint64_t last_us, suppressed;
    struct daemon *d = ctx;
    uint64_t now = platform_now_us();
    char name[64] = "?";

    if (last_us != 0 && now - last_us < 1000000) {
        suppressed++;
        return;
    }
    if (addr != NULL && addr->sa_family == AF_INET &&
        alen >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;

        if (inet_ntop(AF_INET, &sin->sin_addr, name, sizeof name) != NULL)
            snprintf(name + strlen(name), sizeof name - strlen(name), ":%u",
                     ntohs(sin->sin_port));
    }
    log_warn(
        "auth failure from %s: key mismatch? (%s; %" PRIu64 " more suppressed)",
        name, d->auth != NULL ? "we have a key" : "we have none", suppressed);
    last_us = now;
    suppressed = 0;
}

/* Replay windows of sealed join datagrams, per source address. */
#define NET_JOIN_SENDERS 32
static struct net_join_seen {
    struct sockaddr_in sa;
    struct auth_replay w;
} net_join_seen[NET_JOIN_SENDERS];
static unsigned net_join_next; /* the slot to reuse next */

/*
 * 1 if a sealed join datagram (salt, pn) from sa was seen before: the
 * window of sa (taken, round robin, if sa has none) for its sender's
 * salt; a new salt (the sender restarted) starts a new window.
 */
static int
net_join_replayed(const struct sockaddr *from, socklen_t alen, uint64_t salt,
                  uint64_t pn)
{
    const struct sockaddr_in *sa = (const struct sockaddr_in *)from;
    struct net_join_seen *s = NULL;
    int i;

    if (from->sa_family != AF_INET || alen < sizeof *sa)
        return 0; /* join_dgram drops it */
    for (i = 0; i < NET_JOIN_SENDERS && s == NULL; i++)
        if (net_join_seen[i].w.used &&
            net_join_seen[i].sa.sin_addr.s_addr == sa->sin_addr.s_addr &&
            net_join_seen[i].sa.sin_port == sa->sin_port)
            s = &net_join_seen[i];
    if (s == NULL) {
        s = &net_join_seen[net_join_next++ % NET_JOIN_SENDERS];
        memset(s, 0, sizeof *s);
        s->sa = *sa;
    }
    return auth_replay_check(&s->w, (uint32_t)(salt ^ salt >> 32), salt, pn);
}

/*
 * A join datagram: opened with the key when we have one (and checked
 * against its sender's replay window), passed to net_ops.join_dgram from
 * the length on.  One sealed when we have no key, or not sealed when we
 * have one, is an auth failure; a replay is counted and dropped.
 */
static void
net_join_recv(struct daemon *d, const struct sockaddr *from, socklen_t alen,
              const uint8_t *data, size_t len, int sealed)
{
    uint8_t *plain;
    uint64_t salt, pn;
    long n;

    if (d->auth == NULL || !sealed) {
        if (d->auth != NULL || sealed) {
            rel_auth_failed(d->rel, from, alen);
            return;
        }
        d->net_ops->join_dgram(d, from, alen, data + NET_JOIN_MAGIC_LEN,
                               len - NET_JOIN_MAGIC_LEN);
        return;
    }
    plain = malloc(len);
    if (plain == NULL)
        return;
    memcpy(plain, data, len < 8 ? len : 8);
    n = auth_open(d->auth, data, data, 8, len, plain + 8, &salt, &pn);
    if (n < 0) {
        rel_auth_failed(d->rel, from, alen);
    } else if (net_join_replayed(from, alen, salt, pn)) {
        d->st.join_replays++;
    } else {
        if (!d->auth->encrypt)
            memcpy(plain, data, (size_t)n);
        d->net_ops->join_dgram(d, from, alen, plain + NET_JOIN_MAGIC_LEN,
                               (size_t)n - NET_JOIN_MAGIC_LEN);
    }
    free(plain);
}

/* One received datagram: a join datagram or one for the transport. */
static void
net_udp_recv(void *arg, const struct sockaddr *from, socklen_t alen,
             const uint8_t *data, size_t len)
{
    struct daemon *d = arg;

    if (len >= NET_JOIN_MAGIC_LEN &&
        (memcmp(data, NET_JOIN_MAGIC, NET_JOIN_MAGIC_LEN) == 0 ||
         memcmp(data, NET_JOIN_SEALED, NET_JOIN_MAGIC_LEN) == 0)) {
        net_join_recv(d, from, alen, data, len,
                      memcmp(data, NET_JOIN_SEALED, NET_JOIN_MAGIC_LEN) == 0);
        return;
    }
    rel_input(d->rel, from, alen, data, len, platform_now_us());
}

static void
net_udp_read_cb(evutil_socket_t fd, short what, void *arg)
{
    net_drain(arg);
}

void
net_drain(struct daemon *d)
{
    int i;

    for (i = 0; i < NET_READ_BATCHES; i++) {
        int n;
        rel_input_begin(d->rel); /* one ACK per peer for the batch */
        n = udp_recv_batch(d->udp, net_udp_recv, d);
        rel_input_end(d->rel);
        if (n < udp_recv_vlen(d->udp))
            break;
    }
    net_kick(d);
}

static void
net_udp_write_cb(evutil_socket_t fd, short what, void *arg)
{
    struct daemon *d = arg;

    if (udp_flush(d->udp) == 0)
        rel_writable(d->rel, platform_now_us());
    net_kick(d);
}

static void
net_rel_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    struct daemon *d = arg;

    d->rel_deadline_us = UINT64_MAX;
    rel_timer(d->rel, platform_now_us());
    net_kick(d);
}

/* Arms the transport timer at rel_next_timeout() if that moved. */
static void
net_arm_timer(struct daemon *d)
{
    uint64_t next = rel_next_timeout(d->rel), now;
    struct timeval tv;

    if (next == d->rel_deadline_us)
        return;
    d->rel_deadline_us = next;
    if (next == UINT64_MAX) {
        evtimer_del(d->rel_ev);
        return;
    }
    now = platform_now_us();
    next = next > now ? next - now : 0;
    tv.tv_sec = (time_t)(next / 1000000u);
    tv.tv_usec = (suseconds_t)(next % 1000000u);
    evtimer_add(d->rel_ev, &tv);
}

/* Pushes batched datagrams out; watches for writability if the kernel
   refused some, or if the transport is still blocked by a refusal earlier
   in the turn: this flush may have got the batch out, but only
   rel_writable lets the transport send again (else it waited for its
   next timer, a probe or retransmission timeout away, or with nothing in
   flight for the next datagram that needs an ack) */
static void
net_flush_udp(struct daemon *d)
{
    int refused = udp_pending(d->udp) && udp_flush(d->udp) != 0;

    if ((refused || rel_blocked(d->rel)) &&
        !event_pending(d->udp_wev, EV_WRITE, NULL))
        event_add(d->udp_wev, NULL);
}

/*
 * End of a loop turn: push batched datagrams out, run the end-of-turn
 * hook (collsd.c: free dead tasks, resume readers whose destinations
 * drained), push out what it sent, re-arm the transport timer.
 */
static void
net_flush_cb(evutil_socket_t fd, short what, void *arg)
{
    struct daemon *d = arg;

    net_flush_udp(d);
    d->net_ops->turn_end(d);
    net_flush_udp(d); /* the hook may have sent more */
    net_arm_timer(d);
}

void
net_kick(struct daemon *d)
{
    if (d->flush_ev != NULL)
        event_active(d->flush_ev, EV_TIMEOUT, 0);
}

void
net_flush_now(struct daemon *d)
{
    if (d->flush_ev == NULL || !event_pending(d->flush_ev, EV_TIMEOUT, NULL))
        return;
    event_del(d->flush_ev);
    net_flush_cb(-1, EV_TIMEOUT, d);
}

int
net_open(struct daemon *d, const struct net_ops *ops)
{
    static const struct rel_ops rops = {
        .send = net_rel_send,
        .send_buf = net_rel_send_buf,
        .deliver = net_deliver,
        .reset = net_reset,
        .auth_fail = net_auth_fail,
    };
    const struct config *cfg = d->cfg;
    struct rel_config rc;
    int err;

    d->net_ops = ops;
    err = udp_open(cfg->listen, &d->udp);
    if (err != 0) {
        const char *colon = strrchr(cfg->listen, ':');

        /* udp_open returns the OS's errno: say it as the OS does. */
        if (err == -EADDRINUSE && colon != NULL)
            log_error("UDP port %s on %.*s: %s (another collsd? choose "
                      "another port with --listen)",
                      colon + 1, (int)(colon - cfg->listen), cfg->listen,
                      strerror(EADDRINUSE));
        else if (err == -EADDRNOTAVAIL)
            log_error("UDP address %s: %s (not an address of this host: "
                      "see --listen)",
                      cfg->listen, strerror(EADDRNOTAVAIL));
        else
            log_error("UDP socket on %s: %s", cfg->listen, strerror(-err));
        return err;
    }
    if (udp_set_offload(d->udp, strcmp(cfg->gso, "off") == 0 ? UDP_OFFLOAD_OFF
                                : strcmp(cfg->gso, "on") == 0
                                    ? UDP_OFFLOAD_ON
                                    : UDP_OFFLOAD_AUTO) != 0) {
        log_error("--gso on: UDP offloads missing here (in use: %s); use "
                  "--gso auto or --gso off",
                  udp_offload_name(d->udp));
        return COLLS_ENOTSUP;
    }
    snprintf(d->listen_addr, sizeof(d->listen_addr), "%s",
             udp_local_name(d->udp));
    rel_config_default(&rc);
    rc.mtu = (size_t)cfg->mtu;
    rc.max_message = (size_t)cfg->max_message + NET_MAX_ENV + 4;
    rc.window = (unsigned)cfg->window;
    rc.rto_min_us = (uint64_t)cfg->rto_min_us;
    if (rc.rto_init_us < rc.rto_min_us)
        rc.rto_init_us = rc.rto_min_us;
    rc.rate_bps = (uint64_t)cfg->rate;
    rc.drop = cfg->fault_drop;
    rc.dup = cfg->fault_dup;
    rc.reorder = cfg->fault_reorder;
    rc.seed = (uint64_t)cfg->fault_seed;
    rc.auth = d->auth;
    d->rel = rel_new(&rc, &rops, d, d->hid, d->inc);
    if (d->rel == NULL)
        return COLLS_ENOMEM;
    d->rel_deadline_us = UINT64_MAX;
    d->udp_rev = event_new(d->base, udp_fd(d->udp), EV_READ | EV_PERSIST,
                           net_udp_read_cb, d);
    d->udp_wev =
        event_new(d->base, udp_fd(d->udp), EV_WRITE, net_udp_write_cb, d);
    d->rel_ev = evtimer_new(d->base, net_rel_timer_cb, d);
    d->flush_ev = event_new(d->base, -1, 0, net_flush_cb, d);
    if (d->udp_rev == NULL || d->udp_wev == NULL || d->rel_ev == NULL ||
        d->flush_ev == NULL)
        return COLLS_ENOMEM;
    /* The I/O priority: activated by the first callback of a turn that
       sends, it joins the tail of the active queue and runs after the
       callbacks already active, in the same turn.  (At a lower priority
       libevent would keep it for the next turn: another epoll_wait and
       a later datagram on every forward.) */
    event_priority_set(d->flush_ev, 1);
    event_add(d->udp_rev, NULL);
    return 0;
}

void
net_close(struct daemon *d)
{
    struct event **evs[] = {&d->udp_rev, &d->udp_wev, &d->rel_ev, &d->flush_ev};
    size_t i;

    for (i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
        if (*evs[i] != NULL)
            event_free(*evs[i]);
        *evs[i] = NULL;
    }
    if (d->rel != NULL)
        rel_free(d->rel);
    d->rel = NULL;
    if (d->udp != NULL)
        udp_close(d->udp);
    d->udp = NULL;
}

/* Packs e into buf (stack) or a fresh allocation; returns the pointer. */
static uint8_t *
net_pack(const Envelope *e, uint8_t *stackbuf, size_t stacklen, size_t *len)
{
    size_t n = envelope_packed_size(e);
    uint8_t *p = n <= stacklen ? stackbuf : malloc(n);

    if (p == NULL)
        return NULL;
    *len = envelope_pack(e, p);
    return p;
}

int
net_send(struct daemon *d, int hid, const Envelope *e, const void *payload,
         size_t plen)
{
    return net_sendf(d, hid, e, payload, plen, 0);
}

int
net_sendf(struct daemon *d, int hid, const Envelope *e, const void *payload,
          size_t plen, unsigned flags)
{
    uint8_t stackbuf[1024], lenbuf[4], *env;
    struct iovec iov[3];
    size_t elen;
    int rc;

    if (hid == d->hid || hid <= 0 || hid > DAEMON_MAX_HID)
        return COLLS_EINVAL;
    env = net_pack(e, stackbuf, sizeof(stackbuf), &elen);
    if (env == NULL)
        return COLLS_ENOMEM;
    if (elen > NET_MAX_ENV) {
        rc = COLLS_EMSGSIZE;
        goto out;
    }
    put_u32(lenbuf, (uint32_t)elen);
    iov[0].iov_base = lenbuf;
    iov[0].iov_len = 4;
    iov[1].iov_base = env;
    iov[1].iov_len = elen;
    iov[2].iov_base = (void *)payload;
    iov[2].iov_len = plen;
    rc = rel_sendvf(d->rel, hid, iov, plen > 0 ? 3 : 2, flags,
                    platform_now_us());
    if (rc == 0) {
        d->st.peer_msgs_out++;
        if (d->hosts[hid] != NULL)
            d->hosts[hid]->msgs_out++;
    } else {
        d->st.peer_send_errors++;
        log_debug("send to host %d failed: %s", hid, log_errstr(rc));
    }
    net_kick(d);
out:
    if (env != stackbuf)
        free(env);
    return rc;
}

int
net_send_credit(struct daemon *d, int hid, uint32_t task, uint64_t bytes)
{
    Credit c = CREDIT__INIT;
    Envelope e;

    envelope_reply(&e, COLLS_DAEMON_TID(d->hid), COLLS_DAEMON_TID(hid),
                   KIND__CREDIT, 0, 0);
    c.task = task;
    c.bytes = bytes;
    e.body_case = ENVELOPE__BODY_CREDIT;
    e.credit = &c;
    return net_send(d, hid, &e, NULL, 0);
}

int
net_send_join(struct daemon *d, const struct sockaddr_in *to, const Envelope *e)
{
    uint8_t stackbuf[1024], lenbuf[4], *env, *sealed = NULL;
    struct iovec iov[3];
    size_t elen;
    int rc;

    env = net_pack(e, stackbuf, sizeof(stackbuf), &elen);
    if (env == NULL)
        return COLLS_ENOMEM;
    if (elen + 8 + AUTH_TRAILER_LEN > DGRAM_MAX_LEN) {
        rc = COLLS_EMSGSIZE;
        goto out;
    }
    put_u32(lenbuf, (uint32_t)elen);
    iov[0].iov_base = (void *)NET_JOIN_MAGIC;
    iov[0].iov_len = NET_JOIN_MAGIC_LEN;
    iov[1].iov_base = lenbuf;
    iov[1].iov_len = 4;
    iov[2].iov_base = env;
    iov[2].iov_len = elen;
    if (d->auth != NULL) {
        /* magic | len | envelope | trailer, in one piece */
        sealed = malloc(8 + elen + AUTH_TRAILER_LEN);
        if (sealed == NULL) {
            rc = COLLS_ENOMEM;
            goto out;
        }
        memcpy(sealed, NET_JOIN_SEALED, NET_JOIN_MAGIC_LEN);
        memcpy(sealed + 4, lenbuf, 4);
        memcpy(sealed + 8, env, elen);
        iov[0].iov_base = sealed;
        iov[0].iov_len = auth_seal(d->auth, sealed, sealed, 8, 8 + elen);
    }
    rc = udp_send(d->udp, (const struct sockaddr *)to, sizeof(*to), iov,
                  sealed != NULL ? 1 : 3) == 0
             ? 0
             : COLLS_EAGAIN;
    net_kick(d);
out:
    free(sealed);
    if (env != stackbuf)
        free(env);
    return rc;
}

uint64_t
net_queued(struct daemon *d, int hid)
{
    return rel_queued(d->rel, hid);
}
