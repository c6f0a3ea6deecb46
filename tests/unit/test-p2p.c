/*
 * test-p2p.c -- libcolls against a scripted daemon.
 *
 * Each test forks a small fake daemon on a Unix socket in a fresh
 * directory.  It answers the attach handshake and the admin requests with
 * fixed data, and for DATA frames acts by tag: by default it sends the
 * message back as if the destination had answered (source = destination,
 * same tag, encoding, byte order and payload); special tags make it send
 * TASK_EXIT, HOST_DOWN, SEND_FAILED or a burst of messages instead.
 * ROUTE_REQ is answered with the address the task registered with
 * ROUTE_REG, so a direct send connects to the task's own listener.
 *
 * What is checked: the handshake, matching (COLLS_ANY in arrival order,
 * specific tags out of order), COLLS_ETRUNC, probe and nrecv, failure
 * bookkeeping (EPEERDEAD, EHOSTDOWN, ENOENT instead of hanging),
 * timeouts, non-blocking requests, packed messages in every encoding, a
 * large message read into its own buffer, the admin calls, the direct
 * route and its fallback to the daemon, a daemon that goes away, and the
 * spawner's list of siblings (malformed ones dropped).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libclient/internal.h"
#include "proto/bytes.h"
#include "tests/netutil.h"
#include "tests/unit/fakedaemon.h"
#include "tests/unit/suites.h"

#define ME          0x100005u /* the tid the fake daemon hands out */
#define PEER        0x100009u
#define REMOTE      0x300001u /* a task on host 3 */
#define UNREACHABLE 0x10000au /* its direct address refuses connections */
#define UNKNOWN     0x10000bu /* ROUTE_REQ answers ENOENT */
#define OTHER1      0x10000cu /* say HELLO on connections the test opens */
#define OTHER2      0x10000du

enum {
    T_EXIT = 901,  /* send TASK_EXIT {src = dst} */
    T_DOWN = 902,  /* send HOST_DOWN {hid of dst} */
    T_BURST = 903, /* send three messages from dst, tags 1, 2, 3 */
    T_FAIL = 904,  /* send SEND_FAILED {dst, ENOENT} */
    T_HALF = 905,  /* start a message of u32 N bytes: header + N/2 bytes */
    T_REST = 906,  /* send the rest of that message */
    T_SIBS = 907,  /* send siblings lists from dst, bad ones first (below) */
};

#define PATTERN(i) ((uint8_t)((i)*13u + 5u))

static void
fake_data(int fd, uint32_t src, int tag, const Envelope *like,
          const void *payload, size_t plen)
{
    Envelope e;

    envelope_init(&e);
    e.kind = KIND__DATA;
    e.src = src;
    e.dst = ME;
    e.tag = tag;
    if (like != NULL) {
        e.encoding = like->encoding;
        e.byte_order = like->byte_order;
    }
    fake_send(fd, &e, payload, plen);
}

/* A spawner's list of copies (libclient/spawn.c): the library's tag,
   header {gid 0, seq, step, zero}, u32 count, count tids; header fields
   and the count as given, n tids of list. */
static void
fake_sibling_list(int fd, uint32_t src, uint64_t seq, uint32_t step,
                  uint32_t zero, uint32_t count, const uint32_t *list, int n)
{
    uint8_t p[COLLS__LIB_HDR + 4 + 4 * 8];
    int i;

    memset(p, 0, sizeof(p));
    put_u64(p + 8, seq);
    put_u32(p + 16, step);
    put_u32(p + 20, zero);
    put_u32(p + COLLS__LIB_HDR, count);
    for (i = 0; i < n; i++)
        put_u32(p + COLLS__LIB_HDR + 4 + 4 * i, list[i]);
    fake_data(fd, src, COLLS__TAG_DCOLL, NULL, p,
              (size_t)(COLLS__LIB_HDR + 4 + 4 * n));
}

/* T_SIBS: lists from parent that the task must drop, one from another
   task, then the right one {parent + 2, ME, parent + 3}, then one more
   that must not replace it; and a header cut short. */
static void
fake_siblings(int fd, uint32_t parent)
{
    const uint32_t good[3] = {parent + 2, ME, parent + 3};
    const uint32_t other[3] = {7, 8, 9};
    const uint8_t cut[10] = {0};
    const uint32_t s = COLLS__STEP_SIBLINGS;

    fake_data(fd, parent, COLLS__TAG_DCOLL, NULL, cut, sizeof(cut));
    fake_sibling_list(fd, parent + 1, 0, s, 0, 3, other, 3); /* not parent */
    fake_sibling_list(fd, parent, 1, s, 0, 3, other, 3);     /* seq */
    fake_sibling_list(fd, parent, 0, s - 1, 0, 3, other, 3); /* step */
    fake_sibling_list(fd, parent, 0, s, 1, 3, other, 3);     /* zero */
    fake_sibling_list(fd, parent, 0, s, 0, 4, other, 3);     /* count > */
    fake_sibling_list(fd, parent, 0, s, 0, 2, other, 3);     /* count < */
    fake_sibling_list(fd, parent, 0, s, 0, 0, other, 0);     /* none */
    fake_sibling_list(fd, parent, 0, s, 0, 0xffffffffu, other, 3);
    fake_sibling_list(fd, parent, 0, s, 0, 3, good, 3);
    fake_sibling_list(fd, parent, 0, s, 0, 3, other, 3); /* a second */
    fake_data(fd, parent, 5, NULL, "after", 5);
}

/* What the fake daemon remembers between frames (the child's copy). */
static struct {
    char route_addr[128];               /* registered with ROUTE_REG */
    uint8_t route_key[SIPHASH_KEY_LEN]; /* its direct key */
    int route_keyed;
    uint8_t *hbuf; /* the message T_HALF started, hlen bytes */
    uint32_t hlen;
} fake_st;

/* The fake daemon's handler, as described in the file comment. */
static void
fake_handle(int fd, const Envelope *in, const uint8_t *pl, size_t plen,
            void *arg)
{
    Envelope e;
    HostEntry he[2] = {HOST_ENTRY__INIT, HOST_ENTRY__INIT};
    HostEntry *hp[2] = {&he[0], &he[1]};
    HostTable ht = HOST_TABLE__INIT;
    TaskEntry te = TASK_ENTRY__INIT;
    TaskEntry *tp[1] = {&te};
    TaskList tl = TASK_LIST__INIT;
    StatsRep sr = STATS_REP__INIT;
    PingRep pr = PING_REP__INIT;
    Error er = ERROR__INIT;
    RouteRep rr = ROUTE_REP__INIT;
    HostOp op = HOST_OP__INIT;
    uint8_t ticket[COLLS_TICKET_LEN];

    (void)arg;
    envelope_init(&e);
    e.req_id = in->req_id;
    switch (in->kind) {
    case KIND__ROUTE_REG:
        if (in->body_case == ENVELOPE__BODY_ROUTE_REP) {
            snprintf(fake_st.route_addr, sizeof(fake_st.route_addr), "%s",
                     in->route_rep->addr);
            fake_st.route_keyed = in->route_rep->key.len == SIPHASH_KEY_LEN;
            if (fake_st.route_keyed)
                memcpy(fake_st.route_key, in->route_rep->key.data,
                       SIPHASH_KEY_LEN);
        }
        break;
    case KIND__ROUTE_REQ:
        e.kind = KIND__ROUTE_REP;
        if (in->dst == UNREACHABLE) {
            /* nothing listens on port 1 */
            rr.addr = "127.0.0.1:1";
        } else if (in->dst == UNKNOWN) {
            e.status = COLLS_ENOENT;
            fake_send(fd, &e, NULL, 0);
            break;
        } else {
            /* every tid listens where this task does: the ticket is the
               one its own key gives it for itself */
            rr.addr = fake_st.route_addr;
            if (fake_st.route_keyed) {
                put_u64(ticket, colls_direct_ticket(fake_st.route_key, ME, ME));
                rr.ticket.data = ticket;
                rr.ticket.len = sizeof(ticket);
            }
        }
        rr.tid = in->dst;
        e.body_case = ENVELOPE__BODY_ROUTE_REP;
        e.route_rep = &rr;
        fake_send(fd, &e, NULL, 0);
        break;
    case KIND__DATA:
        switch (in->tag) {
        case T_SIBS:
            fake_siblings(fd, in->dst);
            break;
        case T_EXIT:
            e.kind = KIND__TASK_EXIT;
            e.src = in->dst;
            fake_send(fd, &e, NULL, 0);
            break;
        case T_DOWN:
            e.kind = KIND__HOST_DOWN;
            op.hid = (uint32_t)COLLS_TID_HID(in->dst);
            e.body_case = ENVELOPE__BODY_HOST_OP;
            e.host_op = &op;
            fake_send(fd, &e, NULL, 0);
            break;
        case T_FAIL:
            e.kind = KIND__SEND_FAILED;
            e.dst = in->dst;
            e.status = COLLS_ENOENT;
            fake_send(fd, &e, NULL, 0);
            break;
        case T_HALF:
            if (plen != 4)
                _exit(6);
            fake_st.hlen = get_u32(pl);
            fake_st.hbuf = malloc(fake_st.hlen);
            if (fake_st.hbuf == NULL)
                _exit(7);
            for (size_t i = 0; i < fake_st.hlen; i++)
                fake_st.hbuf[i] = PATTERN(i);
            e.kind = KIND__DATA;
            e.src = in->dst;
            e.dst = ME;
            e.tag = T_HALF;
            {
                struct buf hb;
                buf_init(&hb);
                if (envelope_frame_head(&hb, &e, fake_st.hlen) != 0 ||
                    netutil_write_full(fd, hb.data, hb.len) != 0 ||
                    netutil_write_full(fd, fake_st.hbuf, fake_st.hlen / 2) != 0)
                    _exit(8);
                buf_free(&hb);
            }
            break;
        case T_REST:
            if (fake_st.hbuf == NULL ||
                netutil_write_full(fd, fake_st.hbuf + fake_st.hlen / 2,
                                   fake_st.hlen - fake_st.hlen / 2) != 0)
                _exit(9);
            free(fake_st.hbuf);
            fake_st.hbuf = NULL;
            break;
        case T_BURST:
            fake_data(fd, in->dst, 1, NULL, "a", 1);
            fake_data(fd, in->dst, 2, NULL, "bb", 2);
            fake_data(fd, in->dst, 3, NULL, "ccc", 3);
            break;
        default:
            fake_data(fd, in->dst, in->tag, in, pl, plen);
            break;
        }
        break;
    case KIND__HOSTS_REQ:
        e.kind = KIND__HOSTS_REP;
        he[0].hid = 1;
        he[0].name = "alpha";
        he[0].addr = "127.0.0.1:5001";
        he[0].ntasks = 2;
        he[1].hid = 2;
        he[1].state = COLLS_HOST_DOWN;
        he[1].name = "beta";
        he[1].addr = "127.0.0.1:5002";
        he[1].rtt_us = 41.5;
        ht.n_hosts = 2;
        ht.hosts = hp;
        e.body_case = ENVELOPE__BODY_HOST_TABLE;
        e.host_table = &ht;
        fake_send(fd, &e, NULL, 0);
        break;
    case KIND__TASKS_REQ:
        e.kind = KIND__TASKS_REP;
        te.tid = ME;
        /* shows what was asked */
        te.pid = in->body_case != ENVELOPE__BODY_ADMIN_TARGET ? 0
                 : in->admin_target->all                      ? -1
                                         : (int32_t)in->admin_target->hid;
        te.name = "test";
        tl.n_tasks = 1;
        tl.tasks = tp;
        e.body_case = ENVELOPE__BODY_TASK_LIST;
        e.task_list = &tl;
        fake_send(fd, &e, NULL, 0);
        break;
    case KIND__STATS_REQ:
        e.kind = KIND__STATS_REP;
        sr.json = "{\"msgs\": 3}";
        e.body_case = ENVELOPE__BODY_STATS_REP;
        e.stats_rep = &sr;
        fake_send(fd, &e, NULL, 0);
        break;
    case KIND__PING_REQ:
        e.kind = KIND__PING_REP;
        if (in->body_case == ENVELOPE__BODY_ADMIN_TARGET)
            pr.rtt_us = (double)in->admin_target->hid * 1000 +
                        (double)in->admin_target->bytes;
        e.body_case = ENVELOPE__BODY_PING_REP;
        e.ping_rep = &pr;
        fake_send(fd, &e, NULL, 0);
        break;
    case KIND__ADD_HOST:
        if (in->body_case == ENVELOPE__BODY_HOST_OP &&
            strcmp(in->host_op->addr, "h:1") == 0) {
            e.kind = KIND__ADMIN_REP;
        } else {
            e.kind = KIND__ERROR;
            e.status = COLLS_EINVAL;
        }
        fake_send(fd, &e, NULL, 0);
        break;
    case KIND__DELETE_HOST:
        /* hid 7: refused as collsd refuses a task without admin rights;
           hid 9: the daemon dies without a word */
        if (in->body_case == ENVELOPE__BODY_HOST_OP && in->host_op->hid == 9)
            _exit(0);
        e.kind = KIND__ERROR;
        e.status = COLLS_EPERM;
        er.message = "admin verbs need uid 0 or --admin-uid/--admin-gid";
        e.body_case = ENVELOPE__BODY_ERROR;
        e.error = &er;
        fake_send(fd, &e, NULL, 0);
        break;
    case KIND__HALT:
        /* as collsd: the reply, then ERROR ESHUTDOWN, then the close */
        e.kind = KIND__ADMIN_REP;
        fake_send(fd, &e, NULL, 0);
        envelope_init(&e);
        e.kind = KIND__ERROR;
        e.status = COLLS_ESHUTDOWN;
        fake_send(fd, &e, NULL, 0);
        _exit(0);
    default:
        break;
    }
}

/* Attaches as a task that parent spawned (0: none). */
static colls_t *
attach_spawned(struct fake *f, uint32_t parent)
{
    colls_t *c;

    memset(f, 0, sizeof(*f));
    memset(&fake_st, 0, sizeof(fake_st));
    f->tid = ME;
    f->parent = parent;
    f->handler = fake_handle;
    c = fake_attach(f);
    ck_assert_uint_eq(colls_mytid(c), ME);
    return c;
}

static colls_t *
attach(struct fake *f)
{
    return attach_spawned(f, 0);
}

static void
detach(struct fake *f, colls_t *c)
{
    fake_detach(f, c);
}

START_TEST(test_attach_refused)
{
    colls_t *c = (colls_t *)1;

    ck_assert_int_eq(colls_attach("/nonexistent/dir/sock", &c),
                     COLLS_ECONNREFUSED);
    ck_assert_ptr_null(c);
    ck_assert_int_eq(colls_attach(NULL, NULL), COLLS_EINVAL);
}
END_TEST

START_TEST(test_echo_and_trunc)
{
    struct fake f;
    colls_t *c = attach(&f);
    char out[16];
    colls_status_t st;

    ck_assert_int_eq(colls_send(c, PEER, 7, "hello, ring", 11), 0);
    memset(out, 0, sizeof(out));
    ck_assert_int_eq(colls_recv(c, PEER, 7, out, sizeof(out), &st), 0);
    ck_assert_str_eq(out, "hello, ring");
    ck_assert_uint_eq(st.source, PEER);
    ck_assert_int_eq(st.tag, 7);
    ck_assert_uint_eq(st.length, 11);
    /* too small a buffer: consumed, cap bytes stored, full length told */
    ck_assert_int_eq(colls_send(c, PEER, 8, "0123456789", 10), 0);
    memset(out, 0, sizeof(out));
    ck_assert_int_eq(colls_recv(c, COLLS_ANY, COLLS_ANY, out, 4, &st),
                     COLLS_ETRUNC);
    ck_assert_str_eq(out, "0123");
    ck_assert_uint_eq(st.length, 10);
    ck_assert_int_eq(colls_nrecv(c, COLLS_ANY, COLLS_ANY, out, 4, &st),
                     COLLS_EAGAIN);
    /* the library's own tag (direct collectives, libclient/dcoll.c) */
    ck_assert_int_eq(colls_send(c, PEER, INT_MIN, "x", 1), COLLS_EINVAL);
    {
        colls_req_t *rq = NULL;
        ck_assert_int_eq(colls_isend(c, PEER, INT_MIN, "x", 1, &rq),
                         COLLS_EINVAL);
        ck_assert_ptr_null(rq);
    }
    ck_assert_int_eq(colls_nrecv(c, COLLS_ANY, COLLS_ANY, out, 4, &st),
                     COLLS_EAGAIN);
    /* zero-length message */
    ck_assert_int_eq(colls_send(c, PEER, 9, NULL, 0), 0);
    ck_assert_int_eq(colls_recv(c, PEER, 9, NULL, 0, &st), 0);
    ck_assert_uint_eq(st.length, 0);
    detach(&f, c);
}
END_TEST

START_TEST(test_matching_order)
{
    struct fake f;
    colls_t *c = attach(&f);
    char out[8];
    colls_status_t st;

    ck_assert_int_eq(colls_send(c, PEER, T_BURST, "", 0), 0);
    /* wait until all three are queued, without taking any */
    while (colls_probe(c, PEER, 3, 1, &st) != 1)
        ;
    ck_assert_uint_eq(st.length, 3);
    ck_assert_int_eq(colls_probe(c, PEER, 2, 0, &st), 1);
    ck_assert_int_eq(colls_probe(c, PEER, 4, 0, &st), 0);
    /* a specific tag takes its message out of order ... */
    ck_assert_int_eq(colls_recv(c, PEER, 2, out, sizeof(out), &st), 0);
    ck_assert_int_eq(st.tag, 2);
    ck_assert_mem_eq(out, "bb", 2);
    /* ... and COLLS_ANY then takes the rest in arrival order */
    ck_assert_int_eq(colls_recv(c, COLLS_ANY, COLLS_ANY, out, sizeof(out), &st),
                     0);
    ck_assert_int_eq(st.tag, 1);
    ck_assert_int_eq(
        colls_nrecv(c, COLLS_ANY, COLLS_ANY, out, sizeof(out), &st), 0);
    ck_assert_int_eq(st.tag, 3);
    ck_assert_mem_eq(out, "ccc", 3);
    detach(&f, c);
}
END_TEST

START_TEST(test_peer_dead)
{
    struct fake f;
    colls_t *c = attach(&f);
    colls_req_t *req;
    colls_status_t st;
    char out[8];

    /* a message from PEER is queued, then PEER exits */
    ck_assert_int_eq(colls_send(c, PEER, 5, "last", 4), 0);
    ck_assert_int_eq(colls_send(c, PEER, T_EXIT, "", 0), 0);
    /* a posted receive that nothing queued matches fails when the news
       arrives; the queued message is still delivered first */
    ck_assert_int_eq(colls_irecv(c, PEER, 6, out, sizeof(out), &req), 0);
    ck_assert_int_eq(colls_wait(req, &st), COLLS_EPEERDEAD);
    ck_assert_int_eq(colls_recv(c, PEER, COLLS_ANY, out, sizeof(out), &st), 0);
    ck_assert_mem_eq(out, "last", 4);
    ck_assert_int_eq(colls_recv(c, PEER, COLLS_ANY, out, sizeof(out), &st),
                     COLLS_EPEERDEAD);
    ck_assert_int_eq(colls_probe(c, PEER, COLLS_ANY, 1, &st), COLLS_EPEERDEAD);
    ck_assert_int_eq(colls_send(c, PEER, 1, "x", 1), COLLS_EPEERDEAD);
    /* SEND_FAILED: the destination does not exist */
    ck_assert_int_eq(colls_send(c, PEER + 1, T_FAIL, "", 0), 0);
    ck_assert_int_eq(colls_recv(c, PEER + 1, 1, out, sizeof(out), &st),
                     COLLS_ENOENT);
    ck_assert_int_eq(colls_send(c, PEER + 1, 1, "x", 1), COLLS_ENOENT);
    detach(&f, c);
}
END_TEST

/* colls_siblings: the spawner's list, kept from the first well-formed
   one from the parent; nothing of it reaches the program's receives. */
START_TEST(test_siblings)
{
    struct fake f;
    colls_status_t st;
    colls_tid_t t[8];
    colls_t *c;
    char out[8];

    setenv("COLLS_SPAWN_COUNT", "3", 1);
    c = attach_spawned(&f, PEER);
    ck_assert_int_eq(colls_send(c, PEER, T_SIBS, "", 0), 0);
    /* the program's own message, sent after the lists, comes alone */
    ck_assert_int_eq(colls_recv(c, COLLS_ANY, COLLS_ANY, out, sizeof(out), &st),
                     0);
    ck_assert_int_eq(st.tag, 5);
    ck_assert_mem_eq(out, "after", 5);
    ck_assert_int_eq(
        colls_nrecv(c, COLLS_ANY, COLLS_ANY, out, sizeof(out), &st),
        COLLS_EAGAIN);
    memset(t, 0, sizeof(t));
    ck_assert_int_eq(colls_siblings(c, t, 8), 3);
    ck_assert_uint_eq(t[0], PEER + 2);
    ck_assert_uint_eq(t[1], ME);
    ck_assert_uint_eq(t[2], PEER + 3);
    ck_assert_uint_eq(t[3], 0);
    /* max bounds what is written, not the count */
    memset(t, 0, sizeof(t));
    ck_assert_int_eq(colls_siblings(c, t, 1), 3);
    ck_assert_uint_eq(t[0], PEER + 2);
    ck_assert_uint_eq(t[1], 0);
    ck_assert_int_eq(colls_siblings(c, NULL, 0), 3);
    ck_assert_int_eq(colls_siblings(c, NULL, 1), COLLS_EINVAL);
    ck_assert_int_eq(colls_siblings(c, t, -1), COLLS_EINVAL);
    ck_assert_int_eq(colls_siblings(NULL, t, 8), COLLS_EINVAL);
    detach(&f, c);

    /* the spawner ended without sending it */
    c = attach_spawned(&f, PEER);
    ck_assert_int_eq(colls_send(c, PEER, T_EXIT, "", 0), 0);
    ck_assert_int_eq(colls_siblings(c, t, 8), COLLS_EPEERDEAD);
    detach(&f, c);

    /* spawned alone, or not spawned: its own only sibling */
    setenv("COLLS_SPAWN_COUNT", "1", 1);
    c = attach_spawned(&f, PEER);
    ck_assert_int_eq(colls_siblings(c, t, 8), 1);
    ck_assert_uint_eq(t[0], ME);
    detach(&f, c);
    setenv("COLLS_SPAWN_COUNT", "3", 1);
    c = attach(&f);
    ck_assert_int_eq(colls_siblings(c, t, 8), 1);
    ck_assert_uint_eq(t[0], ME);
    detach(&f, c);
    unsetenv("COLLS_SPAWN_COUNT");
}
END_TEST

START_TEST(test_host_down)
{
    struct fake f;
    colls_t *c = attach(&f);
    colls_req_t *req;
    colls_status_t st;
    char out[8];
    int done = 0;

    ck_assert_int_eq(colls_irecv(c, REMOTE, 1, out, sizeof(out), &req), 0);
    ck_assert_int_eq(colls_test(req, &done, &st), 0);
    ck_assert_int_eq(done, 0);
    ck_assert_int_eq(colls_send(c, REMOTE, T_DOWN, "", 0), 0);
    ck_assert_int_eq(colls_wait(req, &st), COLLS_EHOSTDOWN);
    ck_assert_int_eq(colls_recv(c, REMOTE + 1, 1, out, sizeof(out), &st),
                     COLLS_EHOSTDOWN);
    /* sends still go to the daemon (the host may be restarted); here
       the echo comes back, so host 3 is up again */
    ck_assert_int_eq(colls_send(c, REMOTE + 1, 1, "x", 1), 0);
    ck_assert_int_eq(colls_recv(c, COLLS_ANY, 1, out, sizeof(out), &st), 0);
    ck_assert_uint_eq(st.source, REMOTE + 1);
    ck_assert_int_eq(out[0], 'x');
    ck_assert_int_eq(colls_send(c, REMOTE + 1, 1, "w", 1), 0);
    ck_assert_int_eq(colls_recv(c, REMOTE + 1, 1, out, sizeof(out), &st), 0);
    ck_assert_int_eq(out[0], 'w');
    /* tasks on other hosts are not affected */
    ck_assert_int_eq(colls_send(c, PEER, 1, "y", 1), 0);
    ck_assert_int_eq(colls_recv(c, PEER, 1, out, sizeof(out), &st), 0);
    detach(&f, c);
}
END_TEST

START_TEST(test_timeout)
{
    struct fake f;
    colls_t *c = attach(&f);
    colls_status_t st;
    colls_req_t *req;
    char out[8];

    ck_assert_int_eq(colls_set_timeout(c, -2), COLLS_EINVAL);
    ck_assert_int_eq(colls_set_timeout(c, 20), 0);
    ck_assert_int_eq(colls_recv(c, COLLS_ANY, 77, out, sizeof(out), &st),
                     COLLS_ETIMEDOUT);
    ck_assert_int_eq(colls_irecv(c, PEER, 77, out, sizeof(out), &req), 0);
    ck_assert_int_eq(colls_wait(req, &st), COLLS_ETIMEDOUT);
    ck_assert_int_eq(colls_probe(c, PEER, 77, 1, &st), COLLS_ETIMEDOUT);
    /* the withdrawn receives do not swallow a later message */
    ck_assert_int_eq(colls_send(c, PEER, 77, "z", 1), 0);
    ck_assert_int_eq(colls_set_timeout(c, -1), 0);
    ck_assert_int_eq(colls_recv(c, PEER, 77, out, sizeof(out), &st), 0);
    ck_assert_int_eq(out[0], 'z');
    detach(&f, c);
}
END_TEST

START_TEST(test_nonblocking)
{
    struct fake f;
    colls_t *c = attach(&f);
    colls_req_t *rr[4], *sr;
    colls_status_t st;
    int32_t in[4][16], out[16];
    int i, j, done;

    for (i = 0; i < 4; i++)
        ck_assert_int_eq(
            colls_irecv(c, PEER, 40 + i, in[i], sizeof(in[i]), &rr[i]), 0);
    /* sent in reverse order: each lands in its own posted receive */
    for (i = 3; i >= 0; i--) {
        for (j = 0; j < 16; j++)
            out[j] = i * 100 + j;
        ck_assert_int_eq(colls_isend(c, PEER, 40 + i, out, sizeof(out), &sr),
                         0);
        ck_assert_int_eq(colls_wait(sr, NULL), 0);
    }
    for (i = 0; i < 4; i++) {
        do
            ck_assert_int_eq(colls_test(rr[i], &done, &st), 0);
        while (!done);
        ck_assert_int_eq(st.tag, 40 + i);
        ck_assert_uint_eq(st.length, sizeof(out));
        for (j = 0; j < 16; j++)
            ck_assert_int_eq(in[i][j], i * 100 + j);
    }
    detach(&f, c);
}
END_TEST

/* Packed messages in each encoding, through the echo. */
START_TEST(test_msg_encodings)
{
    struct fake f;
    colls_t *c = attach(&f);
    int enc = _i;
    double d[5] = {0.1, -2, 3e100, 4, 5.5}, d2[5];
    int16_t s[3] = {-7, 0, 32000}, s2[3];
    colls_msg_t *m = colls_msg_new(enc), *r;
    colls_status_t st;

    ck_assert_int_eq(colls_pack(m, COLLS_DOUBLE, d, 5), 0);
    ck_assert_int_eq(colls_pack(m, COLLS_INT16, s, 3), 0);
    ck_assert_int_eq(colls_msg_send(c, PEER, 12, m), 0);
    colls_msg_free(m);
    ck_assert_int_eq(colls_msg_recv(c, PEER, 12, &r), 0);
    ck_assert_int_eq(colls_msg_info(r, &st), 0);
    ck_assert_uint_eq(st.source, PEER);
    ck_assert_uint_eq(st.length, enc == COLLS_ENC_DEFAULT ? 52 : 46);
    ck_assert_int_eq(colls_unpack(r, COLLS_DOUBLE, d2, 5), 0);
    ck_assert_int_eq(colls_unpack(r, COLLS_INT16, s2, 3), 0);
    ck_assert_mem_eq(d2, d, sizeof(d));
    ck_assert_mem_eq(s2, s, sizeof(s));
    colls_msg_free(r);
    detach(&f, c);
}
END_TEST

/* A 5 MiB message both ways (read straight into its own buffer). */
START_TEST(test_large)
{
    struct fake f;
    colls_t *c = attach(&f);
    size_t n = 5u << 20, i;
    uint8_t *a = malloc(n), *b = malloc(n);
    colls_status_t st;

    for (i = 0; i < n; i++)
        a[i] = (uint8_t)(i * 7 + (i >> 13));
    ck_assert_int_eq(colls_send(c, PEER, 3, a, n), 0);
    ck_assert_int_eq(colls_recv(c, PEER, 3, b, n, &st), 0);
    ck_assert_uint_eq(st.length, n);
    ck_assert_int_eq(memcmp(a, b, n), 0);
    free(a);
    free(b);
    detach(&f, c);
}
END_TEST

/* Large messages read straight into a posted receive's buffer, and a
   receive that times out while its message is half read. */
START_TEST(test_bound_recv)
{
    struct fake f;
    colls_t *c = attach(&f);
    size_t n = 3u << 20, i;
    uint8_t *a = malloc(n), *b = malloc(n), *small = malloc(n / 2);
    uint32_t want = (uint32_t)n;
    uint8_t nbuf[4];
    colls_req_t *rq, *rs;
    colls_status_t st;

    for (i = 0; i < n; i++)
        a[i] = (uint8_t)(i * 31 + (i >> 11));
    /* posted first: the payload goes straight into b */
    memset(b, 0, n);
    ck_assert_int_eq(colls_irecv(c, PEER, 70, b, n, &rq), 0);
    ck_assert_int_eq(colls_send(c, PEER, 70, a, n), 0);
    ck_assert_int_eq(colls_wait(rq, &st), 0);
    ck_assert_uint_eq(st.length, n);
    ck_assert_uint_eq(st.source, PEER);
    ck_assert_int_eq(memcmp(a, b, n), 0);
    /* posted with too little room: consumed, truncated, nothing lost */
    ck_assert_int_eq(colls_irecv(c, PEER, 71, small, n / 2, &rs), 0);
    ck_assert_int_eq(colls_irecv(c, PEER, 72, b, n, &rq), 0);
    ck_assert_int_eq(colls_send(c, PEER, 71, a, n), 0);
    ck_assert_int_eq(colls_send(c, PEER, 72, a + 1, n - 1), 0);
    ck_assert_int_eq(colls_wait(rs, &st), COLLS_ETRUNC);
    ck_assert_uint_eq(st.length, n);
    ck_assert_int_eq(memcmp(a, small, n / 2), 0);
    ck_assert_int_eq(colls_wait(rq, &st), 0);
    ck_assert_uint_eq(st.length, n - 1);
    ck_assert_int_eq(memcmp(a + 1, b, n - 1), 0);
    /* half a message arrives for a posted receive that then times out:
       the message is kept and complete once the rest arrives */
    put_u32(nbuf, want);
    memset(b, 0, n);
    ck_assert_int_eq(colls_irecv(c, PEER, T_HALF, b, n, &rq), 0);
    ck_assert_int_eq(colls_send(c, PEER, T_HALF, nbuf, 4), 0);
    ck_assert_int_eq(colls_set_timeout(c, 200), 0);
    ck_assert_int_eq(colls_wait(rq, &st), COLLS_ETIMEDOUT);
    ck_assert_int_eq(colls_set_timeout(c, -1), 0);
    ck_assert_int_eq(colls_send(c, PEER, T_REST, "", 0), 0);
    memset(a, 0, n);
    ck_assert_int_eq(colls_recv(c, PEER, T_HALF, a, n, &st), 0);
    ck_assert_uint_eq(st.length, n);
    for (i = 0; i < n; i++)
        if (a[i] != PATTERN(i))
            ck_abort_msg("byte %zu: %u, want %u", i, a[i], PATTERN(i));
    free(a);
    free(b);
    free(small);
    detach(&f, c);
}
END_TEST

START_TEST(test_admin)
{
    struct fake f;
    colls_t *c = attach(&f);
    colls_hostinfo_t *h;
    colls_taskinfo_t *t;
    char *json;
    double rtt;
    int n;
    char out[4];

    ck_assert_int_eq(colls_hosts(c, &h, &n), 0);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(h[0].name, "alpha");
    ck_assert_str_eq(h[1].addr, "127.0.0.1:5002");
    ck_assert_int_eq(h[1].state, COLLS_HOST_DOWN);
    ck_assert(h[1].rtt_us == 41.5);
    colls_free(h);
    ck_assert_int_eq(colls_tasks(c, COLLS_ANY, &t, &n), 0);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(t[0].pid, -1); /* asked for 0xffffffff: all hosts */
    colls_free(t);
    ck_assert_int_eq(colls_tasks(c, 3, &t, &n), 0);
    ck_assert_int_eq(t[0].pid, 3);
    colls_free(t);
    ck_assert_int_eq(colls_stats_json(c, &json), 0);
    ck_assert_str_eq(json, "{\"msgs\": 3}");
    colls_free(json);
    ck_assert_int_eq(colls_ping(c, 2, 100, &rtt), 0);
    ck_assert(rtt == 2100.0);
    ck_assert_int_eq(colls_ping(c, 0, 100, &rtt), COLLS_EINVAL);
    ck_assert_int_eq(colls_add_host(c, "h:1"), 0);
    ck_assert_int_eq(colls_add_host(c, "other:2"), COLLS_EINVAL);
    ck_assert_int_eq(colls_delete_host(c, 0), COLLS_EINVAL);
    ck_assert_str_eq(colls_errmsg(c), "");
    ck_assert_int_eq(colls_delete_host(c, 7), COLLS_EPERM);
    ck_assert_str_eq(colls_errmsg(c),
                     "admin verbs need uid 0 or --admin-uid/--admin-gid");
    /* halt: the daemon answers and goes away; receives then fail */
    ck_assert_int_eq(colls_halt(c), 0);
    ck_assert_int_eq(
        colls_recv(c, COLLS_ANY, COLLS_ANY, out, sizeof(out), NULL),
        COLLS_ESHUTDOWN);
    ck_assert_int_eq(colls_send(c, PEER, 1, "x", 1), COLLS_ESHUTDOWN);
    detach(&f, c);
}
END_TEST

/* A daemon that dies without a word (killed) is told apart from one that
   shuts down: COLLS_ECONNLOST, for the call in progress and later ones. */
START_TEST(test_daemon_died)
{
    struct fake f;
    colls_t *c = attach(&f);
    char out[4];

    ck_assert_int_eq(colls_delete_host(c, 9), COLLS_ECONNLOST);
    ck_assert_int_eq(
        colls_recv(c, COLLS_ANY, COLLS_ANY, out, sizeof(out), NULL),
        COLLS_ECONNLOST);
    ck_assert_int_eq(colls_send(c, PEER, 1, "x", 1), COLLS_ECONNLOST);
    ck_assert_str_eq(colls_strerror(COLLS_ECONNLOST),
                     "connection to the daemon lost (daemon died?)");
    detach(&f, c);
}
END_TEST

/* Direct route: the fake resolves every tid to this task's own
   listener, so the message comes back over TCP, not via the daemon. */
START_TEST(test_direct)
{
    struct fake f;
    colls_t *c = attach(&f);
    colls_msg_t *m, *r;
    colls_status_t st;
    char out[16];
    int i;

    ck_assert_int_eq(colls_set_route(c, 7), COLLS_EINVAL);
    for (i = 0; i < 3; i++) {
        char msg[16];
        snprintf(msg, sizeof(msg), "d%d", i);
        ck_assert_int_eq(
            colls_send_route(c, PEER, 20 + i, msg, 3, COLLS_ROUTE_DIRECT), 0);
    }
    for (i = 0; i < 3; i++) {
        ck_assert_int_eq(
            colls_recv(c, COLLS_ANY, COLLS_ANY, out, sizeof(out), &st), 0);
        /* the hello named this task, and order is kept on the route */
        ck_assert_uint_eq(st.source, ME);
        ck_assert_int_eq(st.tag, 20 + i);
        ck_assert_int_eq(out[1], '0' + i);
    }
    ck_assert_uint_eq(colls_route_fallbacks(c), 0);
    /* a packed message keeps its route; received, it remembers it */
    m = colls_msg_new(COLLS_ENC_INPLACE);
    ck_assert_int_eq(colls_pack(m, COLLS_BYTE, "inplace", 7), 0);
    ck_assert_int_eq(colls_msg_set_route(m, COLLS_ROUTE_DIRECT), 0);
    ck_assert_int_eq(colls_msg_send(c, PEER, 30, m), 0);
    colls_msg_free(m);
    ck_assert_int_eq(colls_msg_recv(c, COLLS_ANY, 30, &r), 0);
    ck_assert_int_eq(colls__msg_route(r), COLLS_ROUTE_DIRECT);
    ck_assert_int_eq(colls_unpack(r, COLLS_BYTE, out, 7), 0);
    ck_assert_mem_eq(out, "inplace", 7);
    colls_msg_free(r);
    detach(&f, c);
}
END_TEST

/* Number of direct-route connections the handle has open. */
static int
direct_streams(colls_t *c)
{
    struct list_node *q;
    int n = 0;

    LIST_FOREACH (q, &c->conn.streams) {
        n +=
            list_entry(q, struct colls__stream, link)->kind == COLLS__ST_DIRECT;
    }
    return n;
}

/* Opens a TCP connection to c's direct listener and writes b to it. */
static int
direct_connect_write(colls_t *c, const struct buf *b)
{
    struct sockaddr_storage ss;
    int sslen = sizeof(ss), fd;

    ck_assert_int_eq(
        uv_tcp_getsockname(&c->conn.listener, (struct sockaddr *)&ss, &sslen),
        0);
    fd = socket(ss.ss_family, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&ss, (socklen_t)sslen), 0);
    ck_assert_int_eq(netutil_write_full(fd, b->data, b->len), 0);
    return fd;
}

/* Appends to b a DIRECT_HELLO from src showing ticket (NULL: none), then
   a DATA frame "forged" with tag 9. */
static void
hello_and_data(struct buf *b, colls_tid_t src, const uint8_t *ticket)
{
    RouteRep rr = ROUTE_REP__INIT;
    Envelope e;

    envelope_init(&e);
    e.kind = KIND__DIRECT_HELLO;
    e.src = src;
    e.dst = ME;
    if (ticket != NULL) {
        rr.tid = src;
        rr.ticket.data = (uint8_t *)ticket;
        rr.ticket.len = COLLS_TICKET_LEN;
        e.body_case = ENVELOPE__BODY_ROUTE_REP;
        e.route_rep = &rr;
    }
    ck_assert_int_eq(envelope_frame(b, &e, NULL, 0), 0);
    envelope_init(&e);
    e.kind = KIND__DATA;
    e.src = src;
    e.dst = ME;
    e.tag = 9;
    ck_assert_int_eq(envelope_frame(b, &e, "forged", 6), 0);
}

/* Garbage on the direct listener, and HELLOs naming a task without the
   ticket its daemon would have given that task: each connection is
   dropped unheard, nothing else is disturbed; the right ticket is let
   in. */
START_TEST(test_direct_garbage)
{
    struct fake f;
    colls_t *c = attach(&f);
    int k, i, fd;
    uint8_t bad[64], tk[COLLS_TICKET_LEN];
    struct buf b;
    Envelope e;
    colls_status_t st;
    char out[8];

    ck_assert(c->conn.listening); /* and so keyed */
    for (k = 0; k < 7; k++) {
        buf_init(&b);
        envelope_init(&e);
        switch (k) {
        case 0: /* a frame length over the limit */
            memset(bad, 0xff, sizeof(bad));
            buf_append(&b, bad, sizeof(bad));
            break;
        case 1: /* DATA before DIRECT_HELLO */
            e.kind = KIND__DATA;
            e.src = PEER;
            ck_assert_int_eq(envelope_frame(&b, &e, "x", 1), 0);
            break;
        case 2: /* an envelope that is not protobuf */
            put_u32(bad, 12);
            put_u32(bad + 4, 8);
            memset(bad + 8, 0xee, 8);
            buf_append(&b, bad, 16);
            break;
        case 3: /* a HELLO claiming to be a daemon */
            e.kind = KIND__DIRECT_HELLO;
            e.src = COLLS_DAEMON_TID(1);
            ck_assert_int_eq(envelope_frame(&b, &e, NULL, 0), 0);
            break;
        case 4: /* a task's name without a ticket (as before version 3) */
            hello_and_data(&b, PEER, NULL);
            break;
        case 5: /* a made-up ticket */
            memset(tk, 0xa5, sizeof(tk));
            hello_and_data(&b, PEER, tk);
            break;
        default: /* the ticket of another task, shown in PEER's name */
            put_u64(tk, colls_direct_ticket(c->conn.direct_key, UNKNOWN, ME));
            hello_and_data(&b, PEER, tk);
            break;
        }
        fd = direct_connect_write(c, &b);
        buf_free(&b);
        /* the library drops the connection: this end sees it closed */
        for (i = 0; i < 5000; i++) {
            struct pollfd pfd = {.fd = fd, .events = POLLIN};
            ck_assert_int_eq(colls_probe(c, COLLS_ANY, COLLS_ANY, 0, &st), 0);
            if (poll(&pfd, 1, 1) == 1)
                break;
        }
        {
            ssize_t n = recv(fd, bad, sizeof(bad), MSG_DONTWAIT);
            /* EOF, or a reset; not "still open" */
            ck_assert(n == 0 || (n < 0 && errno != EAGAIN));
        }
        ck_assert_int_eq(direct_streams(c), 0);
        close(fd);
    }
    /* nothing was delivered, the five bad HELLOs (and the DATA that
       came first) were counted, and the handle still works */
    ck_assert_int_eq(
        colls_nrecv(c, COLLS_ANY, COLLS_ANY, out, sizeof(out), &st),
        COLLS_EAGAIN);
    ck_assert_uint_eq(c->conn.direct_refused, 5);
    /* PEER's own ticket (what its daemon would give it) is let in */
    buf_init(&b);
    put_u64(tk, colls_direct_ticket(c->conn.direct_key, PEER, ME));
    hello_and_data(&b, PEER, tk);
    fd = direct_connect_write(c, &b);
    buf_free(&b);
    ck_assert_int_eq(colls_recv(c, COLLS_ANY, 9, out, sizeof(out), &st), 0);
    ck_assert_uint_eq(st.source, PEER);
    ck_assert_mem_eq(out, "forged", 6);
    ck_assert_uint_eq(c->conn.direct_refused, 5);
    close(fd);
    ck_assert_int_eq(colls_send(c, PEER, 4, "ok", 2), 0);
    ck_assert_int_eq(colls_recv(c, PEER, 4, out, sizeof(out), &st), 0);
    ck_assert_mem_eq(out, "ok", 2);
    detach(&f, c);
}
END_TEST

/* Runs c's loop until it has a direct stream and holds `pending` deaths
   (a few seconds at most). */
static void
spin_until(colls_t *c, size_t pending)
{
    colls_status_t st;
    int i;

    for (i = 0; i < 5000; i++) {
        if (direct_streams(c) > 0 && c->conn.pending.n == pending)
            return;
        ck_assert_int_eq(colls_probe(c, COLLS_ANY, COLLS_ANY, 0, &st), 0);
        usleep(1000);
    }
}

/* Writes to fd a HELLO from src with the ticket its daemon would have
   given it, and a DATA frame with tag 9. */
static void
say_hello(colls_t *c, int fd, colls_tid_t src)
{
    uint8_t tk[COLLS_TICKET_LEN];
    struct buf b;

    buf_init(&b);
    put_u64(tk, colls_direct_ticket(c->conn.direct_key, src, ME));
    hello_and_data(&b, src, tk);
    ck_assert_int_eq(netutil_write_full(fd, b.data, b.len), 0);
    buf_free(&b);
}

/* Opens a connection to c's listener that says nothing, lets c accept
   it, then makes PEER exit: c holds the death back.  Returns the fd. */
static int
hold_peer_death(colls_t *c)
{
    struct buf empty;
    int fd;

    buf_init(&empty);
    fd = direct_connect_write(c, &empty);
    spin_until(c, 0);
    ck_assert_int_eq(direct_streams(c), 1);
    ck_assert_int_eq(colls_send(c, PEER, T_EXIT, "", 0), 0);
    spin_until(c, 1);
    ck_assert_uint_eq(c->conn.pending.n, 1);
    return fd;
}

/* A death is held back while a direct connection has not said who it
   is (it may be the dead task's, with its last messages), also while
   one waits in the listener's backlog, and reported once the last of
   them says HELLO.  A HELLO read while another connection was in the
   backlog used to put the death back on the list as it came off, for
   ever: the handle spun and the receive never failed. */
START_TEST(test_direct_death_held)
{
    struct fake f;
    colls_t *c = attach(&f);
    struct buf empty;
    colls_status_t st;
    char out[8];
    int fa, fb;

    buf_init(&empty);
    fa = hold_peer_death(c); /* A */
    ck_assert_int_eq(colls_nrecv(c, PEER, COLLS_ANY, out, sizeof(out), &st),
                     COLLS_EAGAIN);
    /* A says HELLO, B connects behind it: both wait for the next turn
       of the loop, A's HELLO first */
    say_hello(c, fa, OTHER1);
    fb = direct_connect_write(c, &empty);
    ck_assert_int_eq(colls_recv(c, OTHER1, 9, out, sizeof(out), &st), 0);
    ck_assert_mem_eq(out, "forged", 6);
    ck_assert_uint_eq(c->conn.pending.n, 1); /* B is still unknown */
    ck_assert_int_eq(colls_nrecv(c, PEER, COLLS_ANY, out, sizeof(out), &st),
                     COLLS_EAGAIN);
    say_hello(c, fb, OTHER2);
    ck_assert_int_eq(colls_recv(c, OTHER2, 9, out, sizeof(out), &st), 0);
    ck_assert_uint_eq(c->conn.pending.n, 0);
    ck_assert_int_eq(colls_recv(c, PEER, COLLS_ANY, out, sizeof(out), &st),
                     COLLS_EPEERDEAD);
    close(fa);
    close(fb);
    detach(&f, c);
}
END_TEST

/* A connection that never says who it is holds a death back for
   COLLS__HELLO_MS at most: then it is closed and the death reported. */
START_TEST(test_direct_death_expired)
{
    struct fake f;
    colls_t *c = attach(&f);
    colls_status_t st;
    char out[8];
    ssize_t n;
    int fa;

    fa = hold_peer_death(c);
    ck_assert_int_eq(colls_recv(c, PEER, COLLS_ANY, out, sizeof(out), &st),
                     COLLS_EPEERDEAD);
    ck_assert_uint_eq(c->conn.pending.n, 0);
    ck_assert_int_eq(direct_streams(c), 0);
    n = recv(fa, out, sizeof(out), 0); /* closed unheard: EOF or reset */
    ck_assert(n == 0 || (n < 0 && errno != EAGAIN));
    close(fa);
    detach(&f, c);
}
END_TEST

/* Direct sends to peers that cannot be reached go via the daemon, in
   order, and are counted. */
START_TEST(test_direct_fallback)
{
    struct fake f;
    colls_t *c = attach(&f);
    colls_status_t st;
    char out[8];
    int i;

    ck_assert_int_eq(colls_set_route(c, COLLS_ROUTE_DIRECT), 0);
    for (i = 0; i < 3; i++) {
        char b = (char)('a' + i);
        ck_assert_int_eq(colls_send(c, UNREACHABLE, 50 + i, &b, 1), 0);
        ck_assert_int_eq(colls_send(c, UNKNOWN, 60 + i, &b, 1), 0);
    }
    for (i = 0; i < 3; i++) {
        /* the fake daemon's echo: the source is the destination */
        ck_assert_int_eq(
            colls_recv(c, UNREACHABLE, COLLS_ANY, out, sizeof(out), &st), 0);
        ck_assert_int_eq(st.tag, 50 + i);
        ck_assert_int_eq(out[0], 'a' + i);
        ck_assert_int_eq(
            colls_recv(c, UNKNOWN, COLLS_ANY, out, sizeof(out), &st), 0);
        ck_assert_int_eq(st.tag, 60 + i);
    }
    ck_assert_uint_eq(colls_route_fallbacks(c), 6);
    detach(&f, c);
}
END_TEST

/* The polling window of a wait: the base until waits are known, twice
   the average wait while that is at most 500 us, the base for longer
   waits, and never a window when polling is off. */
START_TEST(test_poll_window)
{
    const uint64_t base = 60000;

    ck_assert_uint_eq(colls__poll_window_ns(base, 0), base);
    ck_assert_uint_eq(colls__poll_window_ns(base, 10000), base);
    ck_assert_uint_eq(colls__poll_window_ns(base, 30000), base);
    ck_assert_uint_eq(colls__poll_window_ns(base, 30001), 60002);
    ck_assert_uint_eq(colls__poll_window_ns(base, 150000), 300000);
    ck_assert_uint_eq(colls__poll_window_ns(base, 500000), 1000000);
    ck_assert_uint_eq(colls__poll_window_ns(base, 500001), base);
    ck_assert_uint_eq(colls__poll_window_ns(base, 5000000000u), base);
    ck_assert_uint_eq(colls__poll_window_ns(0, 150000), 0);
    /* a base above the stretch is kept */
    ck_assert_uint_eq(colls__poll_window_ns(2000000, 150000), 2000000);
}
END_TEST

/* The average of the waits that window reads: the first wait is it,
   then weight 1/4, one wait counting for 2 ms at most. */
START_TEST(test_wait_avg)
{
    uint64_t avg = 0;
    int i;

    avg = colls__wait_avg_ns(avg, 40000);
    ck_assert_uint_eq(avg, 40000);
    avg = colls__wait_avg_ns(avg, 80000);
    ck_assert_uint_eq(avg, (3 * 40000 + 80000) / 4);
    /* one long wait (an hour) counts as 2 ms: the window stops stretching
       at once (the average is over 500 us) */
    avg = colls__wait_avg_ns(avg, 3600ull * 1000000000u);
    ck_assert_uint_eq(avg, (3 * 50000 + 2000000) / 4);
    ck_assert_uint_eq(colls__poll_window_ns(60000, avg), 60000);
    /* and short waits bring it back under 500 us within a few */
    for (i = 0; i < 4; i++)
        avg = colls__wait_avg_ns(avg, 20000);
    ck_assert_uint_lt(avg, 500000);
    ck_assert_uint_gt(colls__poll_window_ns(60000, avg), 60000);
}
END_TEST

Suite *
suite_p2p(void)
{
    Suite *s = suite_create("p2p");
    TCase *tc = tcase_create("p2p");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_attach_refused);
    tcase_add_test(tc, test_echo_and_trunc);
    tcase_add_test(tc, test_matching_order);
    tcase_add_test(tc, test_peer_dead);
    tcase_add_test(tc, test_host_down);
    tcase_add_test(tc, test_timeout);
    tcase_add_test(tc, test_nonblocking);
    tcase_add_loop_test(tc, test_msg_encodings, COLLS_ENC_DEFAULT,
                        COLLS_ENC_INPLACE + 1);
    tcase_add_test(tc, test_large);
    tcase_add_test(tc, test_bound_recv);
    tcase_add_test(tc, test_admin);
    tcase_add_test(tc, test_daemon_died);
    tcase_add_test(tc, test_direct);
    tcase_add_test(tc, test_direct_fallback);
    tcase_add_test(tc, test_direct_garbage);
    tcase_add_test(tc, test_direct_death_held);
    tcase_add_test(tc, test_direct_death_expired);
    tcase_add_test(tc, test_poll_window);
    tcase_add_test(tc, test_wait_avg);
    tcase_add_test(tc, test_siblings);
    suite_add_tcase(s, tc);
    return s;
}
