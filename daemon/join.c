/*
 * join.c -- changes of membership: joining a machine, join cookies,
 * invitations (`collsctl add'), ADD_HOST, DELETE_HOST and HALT_ALL.
 *
 * host.c owns the table (struct host, the epoch, liveness); join.c
 * decides who enters and leaves it, through host.c's table functions,
 * and speaks the join datagrams (net.h) that travel before a daemon has
 * a hid.
 *
 * Join: a daemon started with --join sends join datagrams (net.h) with
 * HOST_JOIN to the given daemon until it gets a HOST_TABLE back.  The
 * daemon with the lowest live hid (the "assigner") gives it a hid (the
 * one already recorded for its address, else the lowest free one),
 * raises the epoch and pushes HOST_TABLE to every daemon; a member that
 * is not the assigner forwards the HOST_JOIN to it.  ADD_HOST and
 * DELETE_HOST are likewise carried out by the assigner.
 *
 * Join cookies: a join datagram is not part of the transport (and
 * without a cluster key not authenticated at all), and a HOST_JOIN from
 * the address of a member with another incarnation makes that member a
 * restart (its state is dropped).  So a member acts on a HOST_JOIN only
 * when it carries (HostJoin.cookie) the cookie of its source address and
 * incarnation: a random 64-bit challenge that the member sends, as a
 * HOST_JOIN with status COLLS_EAGAIN, to that address when asked without
 * it.  Only a daemon that receives at the claimed address can answer;
 * the member keeps the last JOIN_CHALS challenges (struct join_chal),
 * each for JOIN_CHAL_US, and drops those of an address's other
 * incarnations when one asks.  So a HOST_JOIN recorded earlier and
 * replayed (sealed and genuine, with a key) is refused once its
 * challenge expired or its joiner restarted: it cannot move a member
 * back to an old incarnation.  Within its life a replay repeats a join
 * that happened (the same incarnation: nothing changes).  A forged or
 * stale HOST_JOIN is dropped and counted (bad_join_dgrams).  The joiner
 * takes a HOST_TABLE only when its own entry carries its incarnation
 * (random per process), so an old table cannot be replayed to it either;
 * with a key both directions are sealed, which proves the key.
 *
 * Add: `collsctl add ADDR' makes the assigner list ADDR as JOINING and
 * invite the daemon there, once per heartbeat while it stays JOINING,
 * with an ADD_HOST join datagram (HostOp.cookie: the cookie of ADDR).  A daemon
 * that runs its own one-host machine with no task attached drops its
 * table and joins the inviter (from the invitation's source); one that
 * is a member of a machine with other hosts, or serves tasks, refuses
 * with an ADD_HOST datagram carrying the status and the cookie, and the
 * assigner removes the entry and logs why.  An invited daemon whose join
 * does not complete within --join-timeout goes back to running alone.
 *
 * With a cluster key (d->auth) every join datagram is sealed and opened
 * by net.c, so only key holders take part; on top, an invitation proves
 * it is fresh and meant for this daemon before the invitee drops its
 * table (a replayed genuine one cannot capture a lone daemon): the
 * invitee answers the first ADD_HOST with ADD_HOST status COLLS_EAGAIN
 * carrying a random challenge and its incarnation; the inviter repeats
 * the invitation with a proof, a MAC under the key's subkey 2 of
 * (challenge, inviter's incarnation, invitee's incarnation, hid,
 * invitee's address as the invitation names it) (join_proof_msg).  One
 * challenge is pending at a time, for one inviter address, for
 * JOIN_CHAL_US.  Without a key the cookie scheme above is all there is.
 *
 * May call: host.c (the table), net, rel (downward), events.c (joined,
 * rejoining, stop).  Never route, group, coll, admin or task.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/auth.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/events.h"
#include "daemon/host.h"
#include "daemon/join.h"
#include "daemon/log.h"
#include "daemon/net.h"
#include "daemon/platform.h"
#include "daemon/rel.h"
#include "proto/siphash.h"
#include "proto/bytes.h"
#include "proto/envelope.h"

#define JOIN_RETRY_US 250000u
#define JOIN_CHAL_US  5000000u /* life of a challenge (join or invite) */
#define JOIN_CHALS    16       /* join challenges kept by a member */
/* challenge u64, two incarnations, hid, address */
#define JOIN_PROOF_MSG_MAX (8 + 4 + 4 + 4 + DAEMON_ADDR_LEN)

/* Key of the join cookies (join_cookie): random, set once by join_init,
   never sent.  File scope because only the cookies use it. */
static uint8_t join_key[SIPHASH_KEY_LEN];

/* A member's challenge to a joiner at sa of incarnation inc. */
struct join_chal {
    struct sockaddr_in sa;
    uint32_t inc;
    uint64_t cookie; /* 0: slot free */
    uint64_t since_us;
};
static struct join_chal join_chals[JOIN_CHALS];

/* The invitee's pending challenge (keyed invitations); chal 0: none. */
static struct {
    uint64_t chal;
    struct sockaddr_in sa; /* the inviter's address */
    uint64_t since_us;
} join_pending;

/*
 * The message an invitation's proof is a MAC of (see the top of the
 * file); returns its length.
 */
static size_t
join_proof_msg(uint8_t *m, uint64_t chal, uint32_t inviter_inc,
               uint32_t invitee_inc, uint32_t hid, const char *addr)
{
    size_t alen = addr != NULL ? strnlen(addr, DAEMON_ADDR_LEN) : 0;

    put_u64(m, chal);
    put_u32(m + 8, inviter_inc);
    put_u32(m + 12, invitee_inc);
    put_u32(m + 16, hid);
    memcpy(m + 20, addr, alen);
    return 20 + alen;
}

void
join_init(struct daemon *d)
{
    int n;

    (void)d;
    for (n = 0; n < SIPHASH_KEY_LEN; n += 4) {
        uint32_t r = platform_random_u32();

        memcpy(join_key + n, &r, 4);
    }
}

/*
 * The invitation cookie of the daemon at sa (inc 0; see "Add" above):
 * SipHash of address, port and inc under join_key, never 0.
 */
static uint64_t
join_cookie(const struct sockaddr_in *sa, uint32_t inc)
{
    uint8_t m[10];
    uint64_t z;

    memcpy(m, &sa->sin_addr.s_addr, 4); /* network order as it is */
    memcpy(m + 4, &sa->sin_port, 2);
    put_u32(m + 6, inc);
    z = siphash24(join_key, m, sizeof(m));
    return z != 0 ? z : 1;
}

/* ---- joining ------------------------------------------------------------ */

/* The joiner's side: sends (again) HOST_JOIN to the contact daemon,
   with the cookie it challenged us with (0: none yet). */
static void
join_send(struct daemon *d, uint64_t cookie)
{
    HostJoin hj = HOST_JOIN__INIT;
    Envelope e;

    envelope_reply(&e, 0, 0, KIND__HOST_JOIN, 0, 0);
    e.body_case = ENVELOPE__BODY_HOST_JOIN;
    e.host_join = &hj;
    hj.cookie = cookie;
    hj.name = d->name;
    hj.addr = d->listen_addr;
    hj.incarnation = d->inc;
    net_send_join(d, &d->join_sa, &e);
    d->join_last_us = platform_now_us();
}

/* A random 64-bit number, never 0 (the CSPRNG with a key). */
static uint64_t
join_random(const struct daemon *d)
{
    uint64_t z = d->auth != NULL ? auth_random64()
                                 : (uint64_t)platform_random_u32() << 32 |
                                       platform_random_u32();

    return z != 0 ? z : 1;
}

/*
 * The live challenge of (sa, inc), made if there is none (in a free or
 * expired slot, else the oldest); challenges of sa's other incarnations
 * are dropped.
 */
static const struct join_chal *
join_chal_get(const struct daemon *d, const struct sockaddr_in *sa,
              uint32_t inc, uint64_t now)
{
    struct join_chal *c, *pick = NULL;
    int i;

    for (i = 0; i < JOIN_CHALS; i++) {
        c = &join_chals[i];
        if (c->cookie != 0 && now - c->since_us > JOIN_CHAL_US)
            c->cookie = 0;
        if (c->cookie != 0 && host_sa_equal(&c->sa, sa)) {
            if (c->inc == inc)
                return c;
            c->cookie = 0; /* the joiner restarted */
        }
        if (pick == NULL || (pick->cookie != 0 &&
                             (c->cookie == 0 || c->since_us < pick->since_us)))
            pick = c;
    }
    pick->sa = *sa;
    pick->inc = inc;
    pick->cookie = join_random(d);
    pick->since_us = now;
    return pick;
}

/* 1 if cookie is the live challenge of (sa, inc). */
static int
join_chal_ok(const struct sockaddr_in *sa, uint32_t inc, uint64_t cookie,
             uint64_t now)
{
    int i;

    for (i = 0; i < JOIN_CHALS; i++) {
        const struct join_chal *c = &join_chals[i];

        if (c->cookie == cookie && c->inc == inc &&
            now - c->since_us <= JOIN_CHAL_US && host_sa_equal(&c->sa, sa))
            return 1;
    }
    return 0;
}

/* A member's side: a HOST_JOIN of incarnation inc came from sa without
   its cookie: challenges sa with it (HOST_JOIN, status COLLS_EAGAIN). */
static void
join_challenge(struct daemon *d, const struct sockaddr_in *sa, uint32_t inc)
{
    HostJoin hj = HOST_JOIN__INIT;
    Envelope e;

    envelope_reply(&e, COLLS_DAEMON_TID(d->hid), 0, KIND__HOST_JOIN, 0,
                   COLLS_EAGAIN);
    e.body_case = ENVELOPE__BODY_HOST_JOIN;
    e.host_join = &hj;
    hj.cookie = join_chal_get(d, sa, inc, platform_now_us())->cookie;
    hj.incarnation = inc;
    net_send_join(d, sa, &e);
}

/* The joiner got its table: adopt hid and table, open for tasks. */
static void
join_done(struct daemon *d, const HostTable *ht)
{
    struct host *me;
    size_t i;
    int hid = 0;

    for (i = 0; i < ht->n_hosts; i++)
        if (ht->hosts[i]->incarnation == d->inc && ht->hosts[i]->hid >= 1 &&
            ht->hosts[i]->hid <= DAEMON_MAX_HID)
            hid = (int)ht->hosts[i]->hid;
    if (hid == 0) {
        d->st.bad_join_dgrams++;
        return;
    }
    d->hid = hid;
    rel_set_hid(d->rel, hid);
    me = host_get(d, hid);
    if (me == NULL)
        return;
    me->inc = d->inc;
    me->state = COLLS_HOST_UP;
    snprintf(me->name, sizeof(me->name), "%s", d->name);
    host_parse_addr(d->listen_addr, 0, &me->sa);
    snprintf(me->addr, sizeof(me->addr), "%s", d->listen_addr);
    /* Listening on 0.0.0.0: keep the address the assigner saw. */
    for (i = 0; i < ht->n_hosts; i++)
        if ((int)ht->hosts[i]->hid == hid && ht->hosts[i]->addr != NULL &&
            me->sa.sin_addr.s_addr == htonl(INADDR_ANY) &&
            host_parse_addr(ht->hosts[i]->addr, 0, &me->sa) == 0)
            snprintf(me->addr, sizeof(me->addr), "%s", ht->hosts[i]->addr);
    d->joining = 0;
    d->epoch = 0;
    host_adopt_table(d, ht);
    host_set_direct_ip(d);
    log_info("joined the machine as host %d (epoch %llu)", hid,
             (unsigned long long)d->epoch);
    events_joined(d);
}

/* The assigner's side: gives the daemon at sa a hid and tells all. */
static void
join_assign(struct daemon *d, const struct sockaddr_in *sa, const char *name,
            uint32_t inc)
{
    struct host *h = NULL;
    HostTable ht;
    Envelope e;
    int hid, changed = 0;

    for (hid = 1; hid <= DAEMON_MAX_HID; hid++)
        if (d->hosts[hid] != NULL && hid != d->hid &&
            host_sa_equal(&d->hosts[hid]->sa, sa)) {
            h = d->hosts[hid];
            break;
        }
    if (h == NULL) {
        for (hid = 1; hid <= DAEMON_MAX_HID && d->hosts[hid] != NULL; hid++)
            ;
        if (hid > DAEMON_MAX_HID) {
            log_warn("join refused: the host table is full");
            return;
        }
        h = host_get(d, hid);
        if (h == NULL)
            return;
        h->sa = *sa;
        host_format(sa, h->addr, sizeof(h->addr));
        changed = 1;
        d->st.hosts_joined++;
    }
    if (h->inc != inc) {
        if (h->state == COLLS_HOST_DOWN)
            h->dead_inc = 0;
        host_new_incarnation(d, h, inc);
        changed = 1;
    }
    h->last_heard_us = platform_now_us();
    host_set_state(d, h, COLLS_HOST_UP);
    snprintf(h->name, sizeof(h->name), "%s", name != NULL ? name : "");
    if (changed) {
        d->epoch++;
        log_info("host %d (%s, %s) joins; epoch %llu", h->hid, h->name, h->addr,
                 (unsigned long long)d->epoch);
        rel_peer_remove(d->rel, h->hid);
        host_rel_set(d, h);
        host_push_table(d, 0);
    }
    /* The joiner has no hid yet: answer with a join datagram. */
    if (host_table_fill(d, &ht) != 0)
        return;
    host_table_env(d, &e, &ht);
    net_send_join(d, &h->sa, &e);
    host_table_free(&ht);
}

/* A HOST_JOIN, from a join datagram (from) or forwarded by a member. */
static void
join_request(struct daemon *d, const HostJoin *hj,
             const struct sockaddr_in *from)
{
    int assigner = host_assigner(d);
    char addr[DAEMON_ADDR_LEN];

    if (assigner != d->hid) {
        HostJoin fwd = *hj;
        Envelope e;

        host_format(from, addr, sizeof(addr));
        fwd.addr = addr;
        envelope_reply(&e, COLLS_DAEMON_TID(d->hid), 0, KIND__HOST_JOIN, 0, 0);
        e.body_case = ENVELOPE__BODY_HOST_JOIN;
        e.host_join = &fwd;
        net_send(d, assigner, &e, NULL, 0);
        return;
    }
    join_assign(d, from, hj->name, hj->incarnation);
}

/* The hid of the daemon tid src if it is a known host at address sa, else
   0 (a "you are down" notice is believed only from such a host). */
static int
join_dgram_sender(struct daemon *d, const struct sockaddr_in *sa, uint32_t src)
{
    int hid = COLLS_TID_HID(src);

    if (hid < 1 || hid > DAEMON_MAX_HID || hid == d->hid ||
        d->hosts[hid] == NULL || !host_sa_equal(&d->hosts[hid]->sa, sa))
        return 0;
    return hid;
}

/* Sends an ADD_HOST join datagram to sa: an invitation (status 0) to
   become host hid at addr, or a refusal of one (status < 0). */
static void
join_add_dgram(struct daemon *d, const struct sockaddr_in *sa, int hid,
               const char *addr, uint64_t cookie, int status)
{
    HostOp op = HOST_OP__INIT;
    Envelope e;

    envelope_reply(&e, COLLS_DAEMON_TID(d->hid), 0, KIND__ADD_HOST, 0, status);
    e.body_case = ENVELOPE__BODY_HOST_OP;
    e.host_op = &op;
    op.cookie = cookie;
    op.hid = (uint32_t)hid;
    op.addr = (char *)(addr != NULL ? addr : "");
    op.incarnation = d->inc;
    net_send_join(d, sa, &e);
}

/*
 * The invitee's side of a keyed invitation from sa: 1 if it carries the
 * proof of our pending challenge to sa; else 0, after (re)sending the
 * challenge (the same one while it lives) or counting a wrong proof.
 */
static int
join_invite_proven(struct daemon *d, const struct sockaddr_in *sa,
                   const HostOp *op)
{
    uint8_t m[JOIN_PROOF_MSG_MAX];
    uint64_t now = platform_now_us();
    HostOp ch = HOST_OP__INIT;
    Envelope e;
    size_t n;

    if (join_pending.chal == 0 || !host_sa_equal(&join_pending.sa, sa) ||
        now - join_pending.since_us > JOIN_CHAL_US) {
        if (op->proof.len > 0) {
            d->st.bad_join_dgrams++; /* a proof of nothing we asked */
            return 0;
        }
        join_pending.chal = auth_random64() | 1;
        join_pending.sa = *sa;
        join_pending.since_us = now;
    }
    if (op->proof.len > 0) {
        n = join_proof_msg(m, join_pending.chal, op->incarnation, d->inc,
                           op->hid, op->addr);
        if (auth_proof_check(d->auth, m, n, op->proof.data, op->proof.len)) {
            join_pending.chal = 0;
            return 1;
        }
        d->st.bad_join_dgrams++;
        return 0;
    }
    envelope_reply(&e, COLLS_DAEMON_TID(d->hid), 0, KIND__ADD_HOST, 0,
                   COLLS_EAGAIN);
    e.body_case = ENVELOPE__BODY_HOST_OP;
    e.host_op = &ch;
    ch.hid = op->hid;
    ch.addr = op->addr;
    ch.cookie = op->cookie;
    ch.incarnation = d->inc;
    ch.challenge = join_pending.chal;
    net_send_join(d, sa, &e);
    return 0;
}

/*
 * The inviter's side: the daemon at sa, which we invited as host h,
 * challenges the invitation (ADD_HOST, COLLS_EAGAIN): invite it again
 * with the proof.
 */
static void
join_invite_answer(struct daemon *d, const struct sockaddr_in *sa,
                   const HostOp *ch)
{
    uint8_t m[JOIN_PROOF_MSG_MAX], proof[AUTH_PROOF_LEN];
    HostOp op = HOST_OP__INIT;
    struct host *h;
    Envelope e;
    size_t n;

    if (ch->hid < 1 || ch->hid > DAEMON_MAX_HID ||
        (h = d->hosts[ch->hid]) == NULL || h->hid == d->hid || h->listed ||
        h->inc != 0 || h->state != COLLS_HOST_JOINING ||
        !host_sa_equal(&h->sa, sa) || ch->cookie != join_cookie(sa, 0) ||
        ch->challenge == 0) {
        d->st.bad_join_dgrams++;
        return;
    }
    n = join_proof_msg(m, ch->challenge, d->inc, ch->incarnation,
                       (uint32_t)h->hid, h->addr);
    auth_proof(d->auth, m, n, proof);
    envelope_reply(&e, COLLS_DAEMON_TID(d->hid), 0, KIND__ADD_HOST, 0, 0);
    e.body_case = ENVELOPE__BODY_HOST_OP;
    e.host_op = &op;
    op.cookie = ch->cookie;
    op.hid = (uint32_t)h->hid;
    op.addr = h->addr;
    op.incarnation = d->inc;
    op.proof.data = proof;
    op.proof.len = sizeof proof;
    net_send_join(d, sa, &e);
}

/*
 * An invitation (ADD_HOST join datagram) from the assigner at sa.  A
 * daemon alone in its machine, with no task, drops its table and joins
 * the inviter; any other refuses with the reason, echoing the cookie.
 */
static void
join_invited(struct daemon *d, const struct sockaddr_in *sa,
             const Envelope *inv)
{
    char from[DAEMON_ADDR_LEN];
    int hid, others = 0, rc = 0;

    host_format(sa, from, sizeof(from));
    for (hid = 1; hid <= DAEMON_MAX_HID; hid++)
        if (hid != d->hid && d->hosts[hid] != NULL)
            others++;
    if (others > 0)
        rc = COLLS_EEXIST;
    else if (d->ntasks > 0)
        rc = COLLS_EPERM;
    if (rc != 0) {
        log_warn("%s invites this daemon to join its machine: refused, %s",
                 from,
                 rc == COLLS_EEXIST ? "it belongs to a machine of other hosts"
                                    : "tasks are attached here");
        join_add_dgram(d, sa, (int)inv->host_op->hid, NULL,
                       inv->host_op->cookie, rc);
        return;
    }
    if (d->auth != NULL && !join_invite_proven(d, sa, inv->host_op))
        return; /* challenged, or a wrong proof */
    log_info("%s invites this daemon to join its machine: joining", from);
    events_rejoining(d);
    host_free_all(d);
    d->hid = 0;
    d->epoch = 0;
    d->joining = 1;
    d->join_sa = *sa;
    d->join_start_us = platform_now_us();
    join_send(d, 0);
}

/*
 * The join of an invited daemon did not complete: back to its own
 * one-host machine (as started without --hostfile or --join).
 */
static void
join_abandon(struct daemon *d)
{
    char to[DAEMON_ADDR_LEN];

    host_format(&d->join_sa, to, sizeof(to));
    log_error("no answer from %s: could not join; running alone again", to);
    d->joining = 0;
    d->hid = 1;
    d->epoch = 1;
    if (host_init_self(d) != 0)
        events_stop(d, 1, 0);
    else
        events_joined(d);
}

/* ADD_HOST refused by the daemon at sa, which the assigner invited. */
static void
join_add_refused(struct daemon *d, const struct sockaddr_in *sa,
                 const Envelope *e)
{
    int hid;

    for (hid = 1; hid <= DAEMON_MAX_HID; hid++) {
        struct host *h = d->hosts[hid];

        if (h != NULL && hid != d->hid && !h->listed && h->inc == 0 &&
            h->state != COLLS_HOST_UP && host_sa_equal(&h->sa, sa) &&
            e->body_case == ENVELOPE__BODY_HOST_OP &&
            e->host_op->cookie == join_cookie(sa, 0))
            break;
    }
    if (hid > DAEMON_MAX_HID) {
        d->st.bad_join_dgrams++;
        return;
    }
    log_error("host %d (%s) refuses to join: %s", hid, d->hosts[hid]->addr,
              e->status == COLLS_EEXIST  ? "it belongs to another machine"
              : e->status == COLLS_EPERM ? "it serves tasks of its own machine"
                                         : log_errstr(e->status));
    host_remove(d, hid);
    d->epoch++;
    host_push_table(d, 0);
}

/* Invites the daemon at h's address (added, never heard) to join. */
static void
join_invite(struct daemon *d, const struct host *h)
{
    join_add_dgram(d, &h->sa, h->hid, h->addr, join_cookie(&h->sa, 0), 0);
}

/* 1 if h was added by `collsctl add' and has not answered yet. */
static int
join_is_invited(struct daemon *d, const struct host *h)
{
    return h->hid != d->hid && !h->listed && h->inc == 0 &&
           h->state == COLLS_HOST_JOINING;
}

/*
 * A join datagram from a daemon of another protocol version: says so in
 * the log (COLLS_EVERSION, its address, both versions), at most once a
 * second.  It cannot join, nor invite us.
 */
static void
join_version_refused(struct daemon *d, const struct sockaddr *from,
                     const uint8_t *env, size_t len)
{
    static uint64_t last_us;
    uint64_t now = platform_now_us();
    char addr[DAEMON_ADDR_LEN];
    struct sockaddr_in sa;

    if (now - last_us < 1000000u)
        return;
    last_us = now;
    memcpy(&sa, from, sizeof(sa));
    host_format(&sa, addr, sizeof(addr));
    log_warn("join datagram from %s dropped: COLLS_EVERSION, it speaks "
             "protocol version %u, this daemon %u",
             addr, envelope_peek_version(env, len), COLLS_PROTO_VERSION);
}

void
join_dgram(struct daemon *d, const struct sockaddr *from, socklen_t alen,
           const uint8_t *p, size_t len)
{
    struct sockaddr_in sa;
    Envelope *e = NULL;
    uint32_t elen;
    int member, rc = COLLS_EPROTO;

    if (from->sa_family != AF_INET || alen < sizeof(sa) || len < 4 ||
        (elen = get_u32(p)) != len - 4 || elen == 0 ||
        (rc = envelope_unpack(p + 4, elen, &e)) != 0) {
        d->st.bad_join_dgrams++;
        if (rc == COLLS_EVERSION)
            join_version_refused(d, from, p + 4, elen);
        return;
    }
    memcpy(&sa, from, sizeof(sa));
    member = !d->joining && d->hid > 0 && !d->stopping;
    if (e->kind == KIND__HOST_JOIN &&
        e->body_case == ENVELOPE__BODY_HOST_JOIN && e->status == 0 && member &&
        e->host_join->incarnation != 0) {
        /* act only on a proof that the joiner receives at sa */
        if (e->host_join->cookie == 0)
            join_challenge(d, &sa, e->host_join->incarnation);
        else if (!join_chal_ok(&sa, e->host_join->incarnation,
                               e->host_join->cookie, platform_now_us()))
            d->st.bad_join_dgrams++;
        else
            join_request(d, e->host_join, &sa);
    } else if (e->kind == KIND__HOST_JOIN && e->status == COLLS_EAGAIN &&
               e->body_case == ENVELOPE__BODY_HOST_JOIN &&
               e->host_join->cookie != 0 && d->joining &&
               host_sa_equal(&sa, &d->join_sa)) {
        join_send(d, e->host_join->cookie);
    } else if (e->kind == KIND__HOST_DOWN &&
               e->body_case == ENVELOPE__BODY_HOST_OP && member &&
               (int)e->host_op->hid == d->hid &&
               e->host_op->incarnation == d->inc &&
               join_dgram_sender(d, &sa, e->src) > 0) {
        d->host_down_by = join_dgram_sender(d, &sa, e->src);
    } else if (e->kind == KIND__HOST_TABLE &&
               e->body_case == ENVELOPE__BODY_HOST_TABLE && d->joining) {
        /* from our contact or from the assigner; our entry (the one
           with our incarnation) tells the answer is for us */
        join_done(d, e->host_table);
    } else if (e->kind == KIND__ADD_HOST &&
               e->body_case == ENVELOPE__BODY_HOST_OP && e->status == 0 &&
               e->host_op->cookie != 0 && member) {
        join_invited(d, &sa, e);
    } else if (e->kind == KIND__ADD_HOST && e->status == COLLS_EAGAIN &&
               e->body_case == ENVELOPE__BODY_HOST_OP && member &&
               d->auth != NULL) {
        join_invite_answer(d, &sa, e->host_op);
    } else if (e->kind == KIND__ADD_HOST && e->status < 0 && member) {
        join_add_refused(d, &sa, e);
    } else if (e->kind == KIND__ADD_HOST && e->status == 0 && d->joining) {
        /* the invitation again, while we join: nothing new */
    } else {
        d->st.bad_join_dgrams++;
    }
    envelope_free(e);
}

/* ---- admin operations --------------------------------------------------- */

/* Forwards an admin operation to the assigner; 1 if forwarded. */
static int
join_forward(struct daemon *d, int kind, int hid, const char *addr)
{
    int assigner = host_assigner(d);
    HostOp op = HOST_OP__INIT;
    Envelope e;

    if (assigner == d->hid)
        return 0;
    envelope_reply(&e, COLLS_DAEMON_TID(d->hid), 0, kind, 0, 0);
    e.body_case = ENVELOPE__BODY_HOST_OP;
    e.host_op = &op;
    op.hid = (uint32_t)hid;
    op.addr = (char *)(addr != NULL ? addr : "");
    net_send(d, assigner, &e, NULL, 0);
    return 1;
}

int
join_add_host(struct daemon *d, const char *addr)
{
    struct sockaddr_in sa;
    struct host *h;
    int hid, port = 0;

    if (d->hosts[d->hid] != NULL)
        port = ntohs(d->hosts[d->hid]->sa.sin_port);
    if (host_parse_addr(addr, port, &sa) != 0)
        return COLLS_EINVAL;
    for (hid = 1; hid <= DAEMON_MAX_HID; hid++)
        if (d->hosts[hid] != NULL && host_sa_equal(&d->hosts[hid]->sa, &sa))
            return COLLS_EEXIST;
    if (join_forward(d, KIND__ADD_HOST, 0, addr))
        return 0;
    for (hid = 1; hid <= DAEMON_MAX_HID && d->hosts[hid] != NULL; hid++)
        ;
    if (hid > DAEMON_MAX_HID)
        return COLLS_ENOBUFS;
    h = host_get(d, hid);
    if (h == NULL)
        return COLLS_ENOMEM;
    h->sa = sa;
    host_format(&sa, h->addr, sizeof(h->addr));
    d->epoch++;
    log_info("host %d (%s) added; epoch %llu", hid, h->addr,
             (unsigned long long)d->epoch);
    host_rel_set(d, h);
    host_push_table(d, 0);
    return 0; /* invited from the next heartbeat on (host_cron) */
}

int
join_delete_host(struct daemon *d, int hid)
{
    Envelope e;

    if (hid < 1 || hid > DAEMON_MAX_HID || d->hosts[hid] == NULL)
        return COLLS_ENOENT;
    if (hid == d->hid) {
        host_depart(d); /* the others remove it, not list it down */
        events_stop(d, 0, 200000);
        return 0;
    }
    if (join_forward(d, KIND__DELETE_HOST, hid, NULL))
        return 0;
    envelope_reply(&e, COLLS_DAEMON_TID(d->hid), 0, KIND__HALT_ALL, 0, 0);
    if (d->hosts[hid]->state == COLLS_HOST_UP)
        net_send(d, hid, &e, NULL, 0);
    host_remove(d, hid);
    d->epoch++;
    host_push_table(d, 0);
    return 0;
}

void
join_halt_all(struct daemon *d)
{
    Envelope e;

    envelope_reply(&e, COLLS_DAEMON_TID(d->hid), 0, KIND__HALT_ALL, 0, 0);
    host_broadcast(d, &e, 0);
    log_info("halting the machine");
    events_stop(d, 0, 500000);
}

int
join_start(struct daemon *d)
{
    const struct config *cfg = d->cfg;

    if (host_parse_addr(cfg->join, 0, &d->join_sa) != 0) {
        log_error("--join %s: bad address", cfg->join);
        return COLLS_EINVAL;
    }
    d->joining = 1;
    d->join_start_us = platform_now_us();
    log_info("joining the machine at %s", cfg->join);
    join_send(d, 0);
    return 1;
}

void
join_cron(struct daemon *d, uint64_t now)
{
    uint64_t limit = (uint64_t)d->cfg->join_timeout_ms * 1000u;

    if (now - d->join_start_us > limit && d->cfg->join[0] == '\0') {
        join_abandon(d); /* we were invited */
    } else if (now - d->join_start_us > limit) {
        log_error("no answer from %s: could not join", d->cfg->join);
        events_stop(d, 1, 0);
    } else if (now - d->join_last_us >= JOIN_RETRY_US) {
        join_send(d, 0);
    }
}

void
join_invite_all(struct daemon *d)
{
    int hid;

    for (hid = 1; hid <= DAEMON_MAX_HID; hid++)
        if (d->hosts[hid] != NULL && join_is_invited(d, d->hosts[hid]) &&
            host_assigner(d) == d->hid)
            join_invite(d, d->hosts[hid]);
}

void
join_peer_msg(struct daemon *d, int hid, const Envelope *e)
{
    struct sockaddr_in sa;

    switch ((int)e->kind) {
    case KIND__HOST_JOIN:
        if (e->body_case == ENVELOPE__BODY_HOST_JOIN &&
            e->host_join->addr != NULL &&
            host_parse_addr(e->host_join->addr, 0, &sa) == 0)
            join_request(d, e->host_join, &sa);
        break;
    case KIND__ADD_HOST:
        if (e->body_case == ENVELOPE__BODY_HOST_OP && e->host_op->addr != NULL)
            join_add_host(d, e->host_op->addr);
        break;
    case KIND__DELETE_HOST:
        if (e->body_case == ENVELOPE__BODY_HOST_OP)
            join_delete_host(d, (int)e->host_op->hid);
        break;
    default:
        break;
    }
}
