/*
 * garbage.c -- hostile input for a running collsd (tests/integration).
 *
 *   garbage unix PATH
 *       Connections to the task socket that send random bytes, impossible
 *       frame lengths, malformed envelopes, truncated frames, oversized
 *       payload claims, requests before attaching and unknown kinds.  For
 *       every malformed frame the daemon must close the connection (an
 *       ERROR frame first is allowed) within a few seconds; for a
 *       well-formed but invalid request it must answer ERROR and may keep
 *       the connection.  Exit 0 when every case behaved so.
 *   garbage udp ADDR:PORT --from IP [--count N] [--seed S]
 *       Random datagrams, and datagrams with a valid header but nonsense
 *       fields, sent from an address that is not in the host table.
 *   garbage replay ADDR:PORT --capture-ms MS [--count N] [--times K]
 *                  [--delay-ms D]
 *       Needs root: captures datagrams sent to ADDR:PORT (by the daemons
 *       of the machine) with a raw socket, then, D ms after the capture
 *       ended (0), re-injects each of them K
 *       times with its original source address and port (exact replays
 *       from a known host), followed by random datagrams forged from the
 *       same known sources (--forge-valid 1: also header-valid ones with
 *       random fields, incarnations included).
 *   garbage probe ADDR:PORT --src IP:PORT --src-hid H --dst-hid H
 *                 --src-inc X
 *       one PROBE datagram with a forged source (needs root).
 *   garbage join ADDR:PORT --src IP:PORT --src-inc X [--cookie C]
 *       one HOST_JOIN join datagram (daemon/net.h) of incarnation X with
 *       a forged source (needs root): a blind spoofer's try to make a
 *       member look restarted; C is its guess of the join cookie.
 *   garbage attack ADDR:PORT --src IP:PORT --src-hid H --dst-hid H
 *                  --src-inc X --dst-inc Y --what W [--seq S] [--count N]
 *       the attacks of issue #15 from a forged member source (needs
 *       root), each sent twice: without a trailer, and with DGRAM_F_AUTH
 *       and a made-up trailer (a keyless attacker's best guess).  W is
 *       data (DATA to a task), halt (HALT_ALL), delete (DELETE_HOST of
 *       --dst-hid), spray (HALT_ALL at seq 1..N), frags (N fragments of
 *       one message from seq S on), hostdown (a HOST_DOWN join datagram
 *       about the target) or invite (an ADD_HOST invitation).  Prints
 *       "sent N" (datagrams).
 *   garbage cma PATH
 *       Single copy (docs/protocol.md) from a hostile task: a token that
 *       differs from what its address holds is not granted; a granted
 *       task's collectives with an input or an output address that is not
 *       mapped, an input too large or next to a payload, and an ungranted
 *       task's input address each fail that collective with an error (or,
 *       for an output, answer in the frame instead), while a good one is
 *       answered in place.  Exit 0 when every case behaved so.
 *   garbage version ADDR:PORT [--version V]
 *       one HOST_JOIN join datagram of protocol version V (default 1, the
 *       previous one) from an ordinary socket: the daemon must drop it
 *       and log COLLS_EVERSION with both versions.
 *
 * The daemon's survival and its counters are checked by badinput.sh.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "colls.h"
#include "proto/dgram.h"
#include "proto/dtype.h"
#include "proto/envelope.h"
#include "proto/frame.h"
#include "tests/netutil.h"

static int nfail;
static uint64_t rng = 88172645463325252ull;

static uint64_t
rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void
rnd_fill(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd();
}

static double
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- the task socket ----------------------------------------------------- */

static int
unix_connect(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);

    if (fd < 0 || strlen(path) >= sizeof(sa.sun_path)) {
        perror("socket");
        exit(2);
    }
    strcpy(sa.sun_path, path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        perror(path);
        exit(2);
    }
    return fd;
}

/* Writes all of p; a daemon that closed early makes this stop quietly. */
static void
write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;

    while (n > 0) {
        ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        b += w;
        n -= (size_t)w;
    }
}

/*
 * Reads what the daemon sends until it closes or ms pass.  Returns 1 if it
 * closed, 0 if still open; *kind gets the kind of the first frame (0 if
 * none or undecodable).
 */
static int
drain(int fd, int ms, int *kind)
{
    uint8_t b[65536];
    size_t have = 0;
    double end = now_ms() + ms;

    *kind = 0;
    for (;;) {
        int left = (int)(end - now_ms());
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0)
            return 0;
        if (poll(&p, 1, left) <= 0)
            return 0;
        ssize_t r = recv(fd, b + have, sizeof(b) - have, 0);
        if (r <= 0)
            return 1; /* EOF or reset: closed */
        have += (size_t)r;
        if (*kind == 0 && have >= FRAME_HDR_LEN) {
            struct frame_limits lim;
            struct frame_info fi;
            frame_limits_default(&lim);
            if (frame_peek(b, have, &lim, &fi) == 0 &&
                have >= FRAME_HDR_LEN + fi.env_len) {
                Envelope *e;
                if (envelope_unpack(b + FRAME_HDR_LEN, fi.env_len, &e) == 0) {
                    *kind = e->kind;
                    envelope_free(e);
                } else {
                    *kind = -1;
                }
            }
        }
        if (have == sizeof(b))
            have = 0;
    }
}

/* Sends a frame for envelope e with plen payload bytes from p. */
static void
send_env(int fd, const Envelope *e, const void *p, size_t plen)
{
    struct buf b;

    buf_init(&b);
    if (envelope_frame(&b, e, p, plen) != 0) {
        fprintf(stderr, "garbage: envelope_frame failed\n");
        exit(2);
    }
    write_all(fd, buf_head(&b), buf_avail(&b));
    buf_free(&b);
}

/* Reads frames until one of kind comes (others are skipped; kind 0: any)
   or 5 s pass; 0 with *e (and its payload, malloc'd, in *pl, *plen) or
   -1. */
static int
recv_env(int fd, int kind, Envelope **e, uint8_t **pl, size_t *plen)
{
    double end = now_ms() + 5000;

    for (;;) {
        uint8_t h[FRAME_HDR_LEN], *rest;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        uint32_t fl, el;
        int left = (int)(end - now_ms());
        if (left <= 0 || poll(&p, 1, left) != 1 ||
            recv(fd, h, sizeof(h), MSG_WAITALL) != (ssize_t)sizeof(h))
            return -1;
        fl = (uint32_t)h[0] << 24 | h[1] << 16 | h[2] << 8 | h[3];
        el = (uint32_t)h[4] << 24 | h[5] << 16 | h[6] << 8 | h[7];
        if (fl < 4 || el > fl - 4 || fl > (64u << 20) ||
            (rest = malloc(fl - 4 + 1)) == NULL)
            return -1;
        if (recv(fd, rest, fl - 4, MSG_WAITALL) != (ssize_t)(fl - 4) ||
            envelope_unpack(rest, el, e) != 0) {
            free(rest);
            return -1;
        }
        if (kind == 0 || (int)(*e)->kind == kind) {
            *plen = fl - 4 - el;
            *pl = malloc(*plen + 1);
            if (*pl != NULL)
                memcpy(*pl, rest + el, *plen);
            free(rest);
            return *pl != NULL ? 0 : -1;
        }
        envelope_free(*e);
        free(rest);
    }
}

/* A well-formed ATTACH_REQ; returns the kind of the reply frame. */
static int
do_attach(int fd)
{
    Envelope e, *r;
    AttachReq a = ATTACH_REQ__INIT;
    uint8_t *pl;
    size_t plen;
    int kind = 0;

    envelope_init(&e);
    e.kind = KIND__ATTACH_REQ;
    a.version = COLLS_PROTO_VERSION;
    a.pid = (int)getpid();
    a.name = "garbage";
    e.body_case = ENVELOPE__BODY_ATTACH_REQ;
    e.attach_req = &a;
    send_env(fd, &e, NULL, 0);
    /* Read just the reply frame (the connection stays open). */
    if (recv_env(fd, 0, &r, &pl, &plen) == 0) {
        kind = (int)r->kind;
        envelope_free(r);
        free(pl);
    }
    return kind;
}

static void
put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Checks that the daemon closed a connection after bad input. */
static void
expect_close(const char *name, int fd)
{
    int kind;
    int closed = drain(fd, 5000, &kind);

    if (!closed) {
        fprintf(stderr, "garbage: FAIL %s: connection still open after 5 s\n",
                name);
        nfail++;
    } else {
        printf("garbage: %s: closed by the daemon (first reply kind %d)\n",
               name, kind);
    }
    close(fd);
}

static int
run_unix(const char *path)
{
    uint8_t b[8192];
    int fd;
    Envelope e;

    /* 1. Random bytes after a frame header claiming more than the limit. */
    fd = unix_connect(path);
    rnd_fill(b, sizeof(b));
    put_be32(b, 0xfffffff0u);
    write_all(fd, b, sizeof(b));
    expect_close("huge frame length", fd);

    /* 2. env_len larger than the frame. */
    fd = unix_connect(path);
    put_be32(b, 16);
    put_be32(b + 4, 1000);
    write_all(fd, b, 20);
    expect_close("env_len > frame_len", fd);

    /* 3. env_len 0. */
    fd = unix_connect(path);
    put_be32(b, 8);
    put_be32(b + 4, 0);
    write_all(fd, b, 12);
    expect_close("env_len 0", fd);

    /* 4. An envelope that is not protobuf. */
    fd = unix_connect(path);
    put_be32(b, 4 + 64);
    put_be32(b + 4, 64);
    memset(b + 8, 0xff, 64);
    write_all(fd, b, 8 + 64);
    expect_close("garbage envelope", fd);

    /* 5. Envelope over the envelope limit (1 MiB). */
    fd = unix_connect(path);
    put_be32(b, 4 + (1u << 20));
    put_be32(b + 4, 1u << 20);
    write_all(fd, b, sizeof(b));
    expect_close("oversized envelope", fd);

    /* 6. A frame whose first bytes come, then the connection closes. */
    fd = unix_connect(path);
    put_be32(b, 1000);
    put_be32(b + 4, 10);
    write_all(fd, b, 12);
    close(fd);
    printf("garbage: truncated frame sent and connection closed\n");

    /* 7. DATA before ATTACH. */
    fd = unix_connect(path);
    envelope_init(&e);
    e.kind = KIND__DATA;
    e.dst = COLLS_DAEMON_TID(1);
    send_env(fd, &e, "abc", 3);
    {
        int kind, closed = drain(fd, 3000, &kind);
        printf("garbage: DATA before ATTACH: reply kind %d, %s\n", kind,
               closed ? "closed" : "open");
        if (kind != KIND__ERROR && !closed) {
            fprintf(stderr, "garbage: FAIL DATA before ATTACH accepted\n");
            nfail++;
        }
    }
    close(fd);

    /* 8. Wrong protocol version in the envelope. */
    fd = unix_connect(path);
    envelope_init(&e);
    e.version = 999;
    e.kind = KIND__ATTACH_REQ;
    send_env(fd, &e, NULL, 0);
    expect_close("wrong envelope version", fd);

    /* 9. Attached, then a DATA claiming a 300 MiB payload (over the
          default max-message of 256 MiB), then a few bytes only. */
    fd = unix_connect(path);
    int k = do_attach(fd);
    if (k != KIND__ATTACH_REP) {
        fprintf(stderr, "garbage: FAIL attach reply kind %d\n", k);
        nfail++;
    }
    {
        struct buf hb;
        buf_init(&hb);
        envelope_init(&e);
        e.kind = KIND__DATA;
        e.dst = COLLS_DAEMON_TID(1);
        envelope_frame_head(&hb, &e, 300u << 20);
        write_all(fd, buf_head(&hb), buf_avail(&hb));
        buf_free(&hb);
        write_all(fd, b, 100);
    }
    expect_close("attached, 300 MiB payload claimed", fd);

    /* 10. Attached, then an unknown kind: an ERROR reply. */
    fd = unix_connect(path);
    do_attach(fd);
    envelope_init(&e);
    e.kind = 9999;
    send_env(fd, &e, NULL, 0);
    {
        int kind, closed = drain(fd, 2000, &kind);
        printf("garbage: unknown kind: reply kind %d, %s\n", kind,
               closed ? "closed" : "open");
        if (kind != KIND__ERROR && !closed) {
            fprintf(stderr, "garbage: FAIL unknown kind ignored silently\n");
            nfail++;
        }
    }
    close(fd);

    /* 11. Attached, then a DATA with an invalid encoding. */
    fd = unix_connect(path);
    do_attach(fd);
    envelope_init(&e);
    e.kind = KIND__DATA;
    e.dst = COLLS_DAEMON_TID(1);
    e.encoding = 77;
    send_env(fd, &e, "abc", 3);
    {
        int kind, closed = drain(fd, 2000, &kind);
        printf("garbage: bad encoding: reply kind %d, %s\n", kind,
               closed ? "closed" : "open");
        if (kind != KIND__ERROR && !closed) {
            fprintf(stderr, "garbage: FAIL bad encoding accepted\n");
            nfail++;
        }
    }
    close(fd);

    /* 12. Attached, then truncated frames mid-payload and close. */
    fd = unix_connect(path);
    do_attach(fd);
    {
        struct buf hb;
        buf_init(&hb);
        envelope_init(&e);
        e.kind = KIND__DATA;
        e.dst = COLLS_DAEMON_TID(1);
        envelope_frame_head(&hb, &e, 5000);
        write_all(fd, buf_head(&hb), buf_avail(&hb));
        buf_free(&hb);
        write_all(fd, b, 1000);
    }
    close(fd);
    printf("garbage: attached task closed mid-frame\n");

    /* 13. Many random frames with plausible lengths. */
    for (int i = 0; i < 50; i++) {
        size_t n = 8 + rnd() % 600;
        fd = unix_connect(path);
        rnd_fill(b, n);
        put_be32(b, (uint32_t)(n - 4));
        put_be32(b + 4, (uint32_t)(rnd() % (n - 8 + 1)));
        write_all(fd, b, n);
        int kind;
        drain(fd, 200, &kind);
        close(fd);
    }
    printf("garbage: 50 random short frames sent\n");
    return nfail ? 1 : 0;
}

/* ---- single copy -------------------------------------------------------- */

/* Attaches offering single copy with token; 1 if granted, 0 if not, -1
   if the attach failed.  at: where the daemon is told the token is. */
static int
cma_attach(int fd, const uint8_t *token, const uint8_t *at)
{
    Envelope e, *r;
    AttachReq a = ATTACH_REQ__INIT;
    uint8_t *pl;
    size_t plen;
    int granted;

    envelope_init(&e);
    e.kind = KIND__ATTACH_REQ;
    a.version = COLLS_PROTO_VERSION;
    a.pid = (int)getpid();
    a.name = "garbage-cma";
    a.cma_addr = (uint64_t)(uintptr_t)at;
    a.cma_token.data = (uint8_t *)(uintptr_t)token;
    a.cma_token.len = 16;
    e.body_case = ENVELOPE__BODY_ATTACH_REQ;
    e.attach_req = &a;
    send_env(fd, &e, NULL, 0);
    if (recv_env(fd, KIND__ATTACH_REP, &r, &pl, &plen) != 0)
        return -1;
    granted = r->status == 0 && r->body_case == ENVELOPE__BODY_ATTACH_REP
                  ? r->attach_rep->cma
                  : -1;
    envelope_free(r);
    free(pl);
    return granted;
}

/* Joins a fresh group of one; its gid, or 0. */
static uint64_t
cma_join(int fd, const char *name)
{
    Envelope e, *r;
    GroupJoin j = GROUP_JOIN__INIT;
    uint8_t *pl;
    size_t plen;
    uint64_t gid = 0;

    envelope_init(&e);
    e.kind = KIND__GROUP_JOIN;
    e.group = (char *)(uintptr_t)name;
    j.size = 1;
    e.body_case = ENVELOPE__BODY_GROUP_JOIN;
    e.group_join = &j;
    send_env(fd, &e, NULL, 0);
    if (recv_env(fd, KIND__GROUP_FORMED, &r, &pl, &plen) != 0)
        return 0;
    if (r->body_case == ENVELOPE__BODY_GROUP_INFO)
        gid = r->group_info->gid;
    envelope_free(r);
    free(pl);
    return gid;
}

/*
 * One allreduce (sum, int32, n items) of group name/gid: the input from
 * in_addr (in_len bytes; 0: none) and in the frame from in (NULL: none),
 * the result to out_addr (0: none); the result's status, whether it was
 * placed, and its payload.
 */
struct cma_res {
    int status, placed;
    size_t plen;
    uint8_t *pl;
};

static int
cma_coll(int fd, const char *name, uint64_t gid, size_t n, const void *in,
         uint64_t in_addr, uint64_t in_len, uint64_t out_addr,
         struct cma_res *res)
{
    Envelope e, *r;
    CollReq q = COLL_REQ__INIT;

    envelope_init(&e);
    e.kind = KIND__COLL_REQ;
    e.group = (char *)(uintptr_t)name;
    e.seq = 0;
    e.dtype = COLLS_INT32;
    e.count = n;
    e.byte_order = (uint32_t)dtype_native_order();
    q.gid = gid;
    q.op = COLLS_COLL_ALLREDUCE;
    q.rop = COLLS_SUM;
    q.in_addr = in_addr;
    q.in_len = in_len;
    q.out_addr = out_addr;
    q.out_len = out_addr != 0 ? n * 4 : 0;
    e.body_case = ENVELOPE__BODY_COLL_REQ;
    e.coll_req = &q;
    send_env(fd, &e, in, in != NULL ? n * 4 : 0);
    if (recv_env(fd, KIND__COLL_RESULT, &r, &res->pl, &res->plen) != 0)
        return -1;
    res->status = r->status;
    res->placed =
        r->body_case == ENVELOPE__BODY_COLL_RESULT && r->coll_result->placed;
    envelope_free(r);
    return 0;
}

static void
cma_expect(const char *what, int ok)
{
    printf("garbage: single copy, %s: %s\n", what, ok ? "ok" : "FAIL");
    if (!ok) {
        fprintf(stderr, "garbage: FAIL single copy: %s\n", what);
        nfail++;
    }
}

static int
run_cma(const char *path)
{
    enum { N = 32768 }; /* 128 KiB of int32 */
    static uint8_t token[16], other[16];
    static int32_t in[N], out[N];
    /* an address no process maps (the first page) */
    const uint64_t bad = 4096;
    struct cma_res res;
    char name[64];
    int fd, fd2, i, g;
    uint64_t gid;

    rnd_fill(token, sizeof(token));
    memcpy(other, token, sizeof(other));
    other[3] ^= 1;
    for (i = 0; i < N; i++)
        in[i] = (int32_t)(i * 7919);

    /* a token whose address holds other bytes: not granted */
    fd2 = unix_connect(path);
    cma_expect("wrong token not granted", cma_attach(fd2, token, other) == 0);
    snprintf(name, sizeof(name), "cma-u%d", (int)getpid());
    gid = cma_join(fd2, name);
    res.pl = NULL;
    cma_expect("ungranted input address refused",
               gid != 0 &&
                   cma_coll(fd2, name, gid, N, NULL, (uintptr_t)in, N * 4, 0,
                            &res) == 0 &&
                   res.status == COLLS_EINVAL);
    free(res.pl);
    close(fd2);

    fd = unix_connect(path);
    g = cma_attach(fd, token, token);
    cma_expect("granted", g == 1);
    if (g != 1) {
        close(fd);
        return 1;
    }
    for (i = 0; i < 6; i++) {
        int ok = 0;
        snprintf(name, sizeof(name), "cma-%d-%d", (int)getpid(), i);
        if ((gid = cma_join(fd, name)) == 0) {
            cma_expect("join", 0);
            continue;
        }
        memset(out, 0, sizeof(out));
        res.pl = NULL;
        switch (i) {
        case 0: /* good: in place both ways */
            ok = cma_coll(fd, name, gid, N, NULL, (uintptr_t)in, N * 4,
                          (uintptr_t)out, &res) == 0 &&
                 res.status == 0 && res.placed && res.plen == 0 &&
                 memcmp(in, out, sizeof(in)) == 0;
            cma_expect("input and result in place", ok);
            break;
        case 1: /* input address not mapped */
            ok = cma_coll(fd, name, gid, N, NULL, bad, N * 4, 0, &res) == 0 &&
                 res.status == COLLS_EINVAL;
            cma_expect("unmapped input address", ok);
            break;
        case 2: /* result address not mapped: the frame carries it */
            ok = cma_coll(fd, name, gid, N, NULL, (uintptr_t)in, N * 4, bad,
                          &res) == 0 &&
                 res.status == 0 && !res.placed && res.plen == N * 4 &&
                 memcmp(res.pl, in, sizeof(in)) == 0;
            cma_expect("unmapped result address", ok);
            break;
        case 3: /* input address and a payload too */
            ok = cma_coll(fd, name, gid, N, in, (uintptr_t)in, N * 4, 0,
                          &res) == 0 &&
                 res.status == COLLS_EINVAL;
            cma_expect("input address and a payload", ok);
            break;
        case 4: /* more than max-message */
            ok = cma_coll(fd, name, gid, N, NULL, (uintptr_t)in,
                          (uint64_t)1 << 40, 0, &res) == 0 &&
                 res.status == COLLS_EINVAL;
            cma_expect("input larger than max-message", ok);
            break;
        default: { /* a region that runs off its mapping */
            long pg = sysconf(_SC_PAGESIZE);
            uint8_t *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            ok =
                m != MAP_FAILED && munmap(m + pg, (size_t)pg) == 0 &&
                cma_coll(fd, name, gid, N, NULL, (uintptr_t)m + (size_t)pg - 64,
                         N * 4, 0, &res) == 0 &&
                res.status == COLLS_EINVAL;
            if (m != MAP_FAILED)
                munmap(m, (size_t)pg);
            cma_expect("input running off its mapping", ok);
            break;
        }
        }
        free(res.pl);
    }
    close(fd);
    return nfail ? 1 : 0;
}

/* ---- UDP --------------------------------------------------------------- */

/* Fills a datagram with a valid-looking header and random fields.
   Returns its length. */
static size_t
fake_dgram(uint8_t *b, size_t cap)
{
    struct dgram_hdr h;
    size_t dl = rnd() % 200;

    memset(&h, 0, sizeof(h));
    h.version = DGRAM_VERSION;
    h.type = (uint8_t)(1 + rnd() % (DGRAM_TYPE_MAX - 1));
    h.flags = (uint16_t)(rnd() & DGRAM_F_ALL);
    h.src_hid = (uint16_t)(1 + rnd() % 4);
    h.dst_hid = (uint16_t)(1 + rnd() % 4);
    h.src_inc = (uint32_t)rnd();
    h.dst_inc = rnd() % 2 ? 0 : (uint32_t)rnd();
    h.seq = (uint32_t)(rnd() % 100);
    h.ack = (uint32_t)(rnd() % 100);
    h.sack = rnd();
    h.msg_id = (uint32_t)(rnd() % 10);
    h.msg_len = (uint32_t)(dl + rnd() % 1000);
    h.frag_cnt = (uint16_t)(1 + rnd() % 3);
    h.frag_idx = (uint16_t)(rnd() % h.frag_cnt);
    h.len = (uint16_t)dl;
    if (DGRAM_HDR_LEN + dl > cap)
        dl = 0;
    dgram_put(b, &h);
    rnd_fill(b + DGRAM_HDR_LEN, dl);
    return DGRAM_HDR_LEN + dl;
}

static int
run_udp(const char *target, const char *from, int count)
{
    struct sockaddr_in to, me = {.sin_family = AF_INET};
    uint8_t b[2048];
    int fd = socket(AF_INET, SOCK_DGRAM, 0);

    if (netutil_parse_addr(target, &to) < 0 ||
        inet_pton(AF_INET, from, &me.sin_addr) != 1) {
        fprintf(stderr, "garbage: bad address\n");
        return 2;
    }
    if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0) {
        perror("bind");
        return 2;
    }
    for (int i = 0; i < count; i++) {
        size_t n;
        if (i % 2) {
            n = fake_dgram(b, sizeof(b));
        } else {
            n = rnd() % sizeof(b);
            rnd_fill(b, n);
        }
        sendto(fd, b, n, 0, (struct sockaddr *)&to, sizeof(to));
        if (i % 64 == 63)
            usleep(1000);
    }
    close(fd);
    printf("garbage: %d datagrams sent to %s from %s\n", count, target, from);
    return 0;
}

/* One captured datagram: IPv4 source and the UDP payload. */
struct cap {
    struct sockaddr_in from;
    uint8_t *data;
    size_t len;
};

/* Sends payload with a forged source via a raw socket (IP_HDRINCL). */
static void
forge(int raw, const struct sockaddr_in *from, const struct sockaddr_in *to,
      const uint8_t *p, size_t n)
{
    uint8_t pkt[65536];
    struct iphdr *ip = (struct iphdr *)pkt;
    struct udphdr *u = (struct udphdr *)(pkt + sizeof(*ip));

    if (n > sizeof(pkt) - sizeof(*ip) - sizeof(*u))
        return;
    memset(pkt, 0, sizeof(*ip) + sizeof(*u));
    ip->version = 4;
    ip->ihl = 5;
    ip->ttl = 64;
    ip->protocol = IPPROTO_UDP;
    ip->saddr = from->sin_addr.s_addr;
    ip->daddr = to->sin_addr.s_addr;
    ip->tot_len = htons((uint16_t)(sizeof(*ip) + sizeof(*u) + n));
    u->source = from->sin_port;
    u->dest = to->sin_port;
    u->len = htons((uint16_t)(sizeof(*u) + n));
    u->check = 0; /* IPv4: no checksum */
    memcpy(pkt + sizeof(*ip) + sizeof(*u), p, n);
    sendto(raw, pkt, sizeof(*ip) + sizeof(*u) + n, 0,
           (const struct sockaddr *)to, sizeof(*to));
}

static int
run_replay(const char *target, int capture_ms, int count, int times,
           int forge_valid, int delay_ms)
{
    struct sockaddr_in to;
    struct cap *caps = calloc((size_t)count, sizeof(*caps));
    int ncap = 0;
    int snif = socket(AF_INET, SOCK_RAW, IPPROTO_UDP);
    int raw = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
    static uint8_t pkt[65536];

    if (netutil_parse_addr(target, &to) < 0 || !caps) {
        fprintf(stderr, "garbage: bad address\n");
        return 2;
    }
    if (snif < 0 || raw < 0) {
        perror("raw socket (needs root)");
        return 77;
    }
    double end = now_ms() + capture_ms;
    while (ncap < count && now_ms() < end) {
        struct pollfd p = {.fd = snif, .events = POLLIN};
        if (poll(&p, 1, (int)(end - now_ms()) + 1) <= 0)
            continue;
        ssize_t r = recv(snif, pkt, sizeof(pkt), 0);
        if (r < (ssize_t)(sizeof(struct iphdr) + sizeof(struct udphdr)))
            continue;
        struct iphdr *ip = (struct iphdr *)pkt;
        size_t ihl = (size_t)ip->ihl * 4;
        struct udphdr *u = (struct udphdr *)(pkt + ihl);
        if (ip->daddr != to.sin_addr.s_addr || u->dest != to.sin_port ||
            (size_t)r < ihl + sizeof(*u))
            continue;
        size_t n = (size_t)r - ihl - sizeof(*u);
        caps[ncap].from.sin_family = AF_INET;
        caps[ncap].from.sin_addr.s_addr = ip->saddr;
        caps[ncap].from.sin_port = u->source;
        caps[ncap].data = malloc(n ? n : 1);
        if (!caps[ncap].data)
            break;
        memcpy(caps[ncap].data, pkt + ihl + sizeof(*u), n);
        caps[ncap].len = n;
        ncap++;
    }
    if (delay_ms > 0)
        usleep((useconds_t)delay_ms * 1000);
    for (int t = 0; t < times; t++)
        for (int i = 0; i < ncap; i++) {
            forge(raw, &caps[i].from, &to, caps[i].data, caps[i].len);
            if (i % 64 == 63)
                usleep(1000);
        }
    /* Random bytes from the known sources (and, with forge_valid,
       datagrams with valid headers and random fields, incarnations
       included: a spoofing attack the unauthenticated transport cannot
       fully resist, so it is not part of the default run). */
    int forged = 0;
    for (int i = 0; i < ncap && i < 200; i++) {
        uint8_t b[2048];
        size_t n;
        if (forge_valid && i % 2) {
            n = fake_dgram(b, sizeof(b));
        } else {
            n = 1 + rnd() % (sizeof(b) - 1);
            rnd_fill(b, n);
            if (b[0] == DGRAM_VERSION)
                b[0] ^= 0x80;
        }
        forge(raw, &caps[i].from, &to, b, n);
        forged++;
    }
    printf("garbage: captured %d datagrams to %s, replayed each %d times, "
           "%d forged garbage datagrams from known sources\n",
           ncap, target, times, forged);
    for (int i = 0; i < ncap; i++)
        free(caps[i].data);
    free(caps);
    close(snif);
    close(raw);
    return ncap > 0 ? 0 : 1;
}

/* Sends one PROBE datagram with the given header fields from a forged
   source address and port (a reproduction helper). */
static int
run_probe(const char *target, const char *src, int src_hid, int dst_hid,
          uint32_t src_inc)
{
    struct sockaddr_in to, from;
    struct dgram_hdr h;
    uint8_t b[DGRAM_HDR_LEN];
    int raw = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);

    if (!src || netutil_parse_addr(target, &to) < 0 ||
        netutil_parse_addr(src, &from) < 0) {
        fprintf(stderr, "garbage: probe needs ADDR:PORT and --src IP:PORT\n");
        return 2;
    }
    if (raw < 0) {
        perror("raw socket (needs root)");
        return 77;
    }
    memset(&h, 0, sizeof(h));
    h.version = DGRAM_VERSION;
    h.type = DGRAM_PROBE;
    h.src_hid = (uint16_t)src_hid;
    h.dst_hid = (uint16_t)dst_hid;
    h.src_inc = src_inc;
    dgram_put(b, &h);
    forge(raw, &from, &to, b, sizeof(b));
    close(raw);
    printf("garbage: PROBE hid %d inc %#x sent to %s from %s\n", src_hid,
           src_inc, target, src);
    return 0;
}

/* Sends one HOST_JOIN join datagram ("CJN1" | u32 len | envelope) of
   incarnation inc with cookie guess `cookie' from a forged source. */
static int
run_join(const char *target, const char *src, uint32_t inc, uint64_t cookie)
{
    struct sockaddr_in to, from;
    HostJoin hj = HOST_JOIN__INIT;
    Envelope e;
    uint8_t b[512];
    size_t n;
    int raw = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);

    if (!src || netutil_parse_addr(target, &to) < 0 ||
        netutil_parse_addr(src, &from) < 0) {
        fprintf(stderr, "garbage: join needs ADDR:PORT and --src IP:PORT\n");
        return 2;
    }
    if (raw < 0) {
        perror("raw socket (needs root)");
        return 77;
    }
    envelope_init(&e);
    e.kind = KIND__HOST_JOIN;
    e.body_case = ENVELOPE__BODY_HOST_JOIN;
    e.host_join = &hj;
    hj.cookie = cookie;
    hj.name = (char *)"spoof";
    hj.addr = (char *)src;
    hj.incarnation = inc;
    n = envelope__get_packed_size(&e);
    if (n > sizeof(b) - 8) {
        close(raw);
        return 2;
    }
    memcpy(b, "CJN1", 4);
    put_be32(b + 4, (uint32_t)n);
    envelope__pack(&e, b + 8);
    forge(raw, &from, &to, b, n + 8);
    close(raw);
    printf("garbage: HOST_JOIN inc %#x cookie %#llx sent to %s from %s\n", inc,
           (unsigned long long)cookie, target, src);
    return 0;
}

/* What run_attack forges: the member it claims to be, and where. */
struct attack {
    int raw;
    struct sockaddr_in from, to;
    struct dgram_hdr h;
    unsigned sent;
};

/* Sends b (n bytes, a dgram header first when hdr) twice: as it is, and
   with DGRAM_F_AUTH and 32 made-up trailer bytes. */
static void
attack_send(struct attack *a, uint8_t *b, size_t n, int hdr)
{
    forge(a->raw, &a->from, &a->to, b, n);
    if (hdr)
        b[3] |= DGRAM_F_AUTH;
    rnd_fill(b + n, 32);
    forge(a->raw, &a->from, &a->to, b, n + 32);
    if (hdr)
        b[3] &= (uint8_t)~DGRAM_F_AUTH;
    a->sent += 2;
}

/* A transport DATA datagram carrying fragment idx of cnt of a message
   (u32 envelope length, envelope e) at seq. */
static void
attack_data(struct attack *a, const Envelope *e, uint32_t seq, uint32_t id,
            uint16_t idx, uint16_t cnt)
{
    uint8_t b[1500];
    size_t elen = envelope__get_packed_size(e), flen;

    if (elen + 4 > 1000)
        return;
    put_be32(b + DGRAM_HDR_LEN, (uint32_t)elen);
    envelope__pack(e, b + DGRAM_HDR_LEN + 4);
    flen = cnt > 1 ? 1000 : elen + 4;
    a->h.type = DGRAM_DATA;
    a->h.seq = seq;
    a->h.ack = 1;
    a->h.msg_id = id;
    a->h.msg_len = (uint32_t)(cnt > 1 ? 1000u * cnt : flen);
    a->h.frag_idx = idx;
    a->h.frag_cnt = cnt;
    a->h.len = (uint16_t)flen;
    dgram_put(b, &a->h);
    attack_send(a, b, DGRAM_HDR_LEN + flen, 1);
}

/* A join datagram (magic | u32 len | envelope), sent unsealed, then as
   "sealed" with a made-up trailer. */
static void
attack_join(struct attack *a, const Envelope *e)
{
    uint8_t b[600];
    size_t n = envelope__get_packed_size(e);

    if (n > 500)
        return;
    memcpy(b, "CJN1", 4);
    put_be32(b + 4, (uint32_t)n);
    envelope__pack(e, b + 8);
    forge(a->raw, &a->from, &a->to, b, n + 8);
    memcpy(b, "CJS1", 4);
    rnd_fill(b + 8 + n, 32);
    forge(a->raw, &a->from, &a->to, b, n + 8 + 32);
    a->sent += 2;
}

static int
run_attack(const char *target, const char *src, const char *what,
           const struct dgram_hdr *h0, uint32_t seq, int count)
{
    struct attack a;
    HostOp op = HOST_OP__INIT;
    Envelope e;
    int k;

    memset(&a, 0, sizeof(a));
    if (!src || !what || netutil_parse_addr(target, &a.to) < 0 ||
        netutil_parse_addr(src, &a.from) < 0) {
        fprintf(stderr, "garbage: attack needs ADDR:PORT, --src, --what\n");
        return 2;
    }
    a.raw = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
    if (a.raw < 0) {
        perror("raw socket (needs root)");
        return 77;
    }
    a.h = *h0;
    a.h.version = DGRAM_VERSION;
    envelope_init(&e);
    e.src = COLLS_DAEMON_TID(h0->src_hid);
    if (strcmp(what, "data") == 0) {
        e.kind = KIND__DATA;
        e.src = 0x00ffff01u; /* a tid that never existed */
        e.dst = COLLS_DAEMON_TID(h0->dst_hid) | 1;
        attack_data(&a, &e, seq, 1, 0, 1);
    } else if (strcmp(what, "halt") == 0) {
        e.kind = KIND__HALT_ALL;
        attack_data(&a, &e, seq, 1, 0, 1);
    } else if (strcmp(what, "delete") == 0) {
        e.kind = KIND__DELETE_HOST;
        e.body_case = ENVELOPE__BODY_HOST_OP;
        e.host_op = &op;
        op.hid = h0->dst_hid;
        attack_data(&a, &e, seq, 1, 0, 1);
    } else if (strcmp(what, "spray") == 0) {
        e.kind = KIND__HALT_ALL;
        for (k = 1; k <= count; k++) {
            attack_data(&a, &e, (uint32_t)k, (uint32_t)k, 0, 1);
            if (k % 64 == 0)
                usleep(1000);
        }
    } else if (strcmp(what, "frags") == 0) {
        e.kind = KIND__DATA;
        e.dst = COLLS_DAEMON_TID(h0->dst_hid) | 1;
        for (k = 0; k < count && k < 60000; k++)
            attack_data(&a, &e, seq + (uint32_t)k, 0x7777, (uint16_t)k,
                        (uint16_t)count);
    } else if (strcmp(what, "hostdown") == 0) {
        e.kind = KIND__HOST_DOWN;
        e.body_case = ENVELOPE__BODY_HOST_OP;
        e.host_op = &op;
        op.hid = h0->dst_hid;
        op.incarnation = h0->dst_inc;
        attack_join(&a, &e);
    } else if (strcmp(what, "invite") == 0) {
        e.kind = KIND__ADD_HOST;
        e.body_case = ENVELOPE__BODY_HOST_OP;
        e.host_op = &op;
        op.hid = 2;
        op.addr = (char *)target;
        op.cookie = 0x1234567;
        attack_join(&a, &e);
    } else {
        fprintf(stderr, "garbage: unknown attack %s\n", what);
        close(a.raw);
        return 2;
    }
    close(a.raw);
    printf("sent %u\n", a.sent);
    return 0;
}

/* Sends one HOST_JOIN join datagram of protocol version `version' to
   target from an ordinary UDP socket. */
static int
run_version(const char *target, uint32_t version)
{
    struct sockaddr_in to;
    HostJoin hj = HOST_JOIN__INIT;
    Envelope e;
    uint8_t b[512];
    size_t n;
    int fd;

    if (netutil_parse_addr(target, &to) < 0) {
        fprintf(stderr, "garbage: version needs ADDR:PORT\n");
        return 2;
    }
    envelope_init(&e);
    e.version = version;
    e.kind = KIND__HOST_JOIN;
    e.body_case = ENVELOPE__BODY_HOST_JOIN;
    e.host_join = &hj;
    hj.name = (char *)"old";
    hj.addr = (char *)"127.0.0.1:1";
    hj.incarnation = 0x1234;
    n = envelope__get_packed_size(&e);
    memcpy(b, "CJN1", 4);
    put_be32(b + 4, (uint32_t)n);
    envelope__pack(&e, b + 8);
    fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0 || sendto(fd, b, n + 8, 0, (struct sockaddr *)&to, sizeof(to)) !=
                      (ssize_t)(n + 8)) {
        perror("garbage: version");
        if (fd >= 0)
            close(fd);
        return 1;
    }
    close(fd);
    printf("garbage: version %u HOST_JOIN sent to %s\n", version, target);
    return 0;
}

int
main(int argc, char **argv)
{
    const char *from = "127.0.0.5";
    int count = 1000, capture_ms = 2000, times = 3, forge_valid = 0;
    int delay_ms = 0;
    int src_hid = 0, dst_hid = 0;
    uint32_t src_inc = 0;
    uint64_t cookie = 0;
    uint32_t version = 1;
    const char *src = NULL, *what = NULL;
    struct dgram_hdr ah;
    uint32_t seq = 1;

    if (argc < 3) {
        fprintf(stderr, "usage: garbage unix PATH | udp ADDR:PORT [--from IP]"
                        " [--count N] [--seed S] | replay ADDR:PORT "
                        "[--capture-ms MS] [--count N] [--times K] "
                        "[--delay-ms D] "
                        "[--forge-valid 1] | probe ADDR:PORT --src IP:PORT "
                        "--src-hid H --dst-hid H --src-inc X | join "
                        "ADDR:PORT --src IP:PORT --src-inc X [--cookie C] "
                        "| version ADDR:PORT [--version V] | cma PATH | attack "
                        "ADDR:PORT --src IP:PORT --src-hid H --dst-hid H "
                        "--src-inc X --dst-inc Y --what W [--seq S] "
                        "[--count N]\n");
        return 2;
    }
    memset(&ah, 0, sizeof(ah));
    for (int i = 3; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--from") == 0)
            from = argv[i + 1];
        else if (strcmp(argv[i], "--count") == 0)
            count = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--seed") == 0)
            rng = strtoull(argv[i + 1], NULL, 0) | 1;
        else if (strcmp(argv[i], "--capture-ms") == 0)
            capture_ms = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--delay-ms") == 0)
            delay_ms = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--times") == 0)
            times = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--forge-valid") == 0)
            forge_valid = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--src") == 0)
            src = argv[i + 1];
        else if (strcmp(argv[i], "--src-hid") == 0)
            src_hid = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--dst-hid") == 0)
            dst_hid = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--src-inc") == 0)
            src_inc = (uint32_t)strtoul(argv[i + 1], NULL, 0);
        else if (strcmp(argv[i], "--cookie") == 0)
            cookie = strtoull(argv[i + 1], NULL, 0);
        else if (strcmp(argv[i], "--version") == 0)
            version = (uint32_t)strtoul(argv[i + 1], NULL, 0);
        else if (strcmp(argv[i], "--dst-inc") == 0)
            ah.dst_inc = (uint32_t)strtoul(argv[i + 1], NULL, 0);
        else if (strcmp(argv[i], "--what") == 0)
            what = argv[i + 1];
        else if (strcmp(argv[i], "--seq") == 0)
            seq = (uint32_t)strtoul(argv[i + 1], NULL, 0);
    }
    if (count < 1 || count > 1000000)
        count = 1000;
    if (strcmp(argv[1], "unix") == 0)
        return run_unix(argv[2]);
    if (strcmp(argv[1], "cma") == 0)
        return run_cma(argv[2]);
    if (strcmp(argv[1], "udp") == 0)
        return run_udp(argv[2], from, count);
    if (strcmp(argv[1], "replay") == 0)
        return run_replay(argv[2], capture_ms, count, times, forge_valid,
                          delay_ms);
    if (strcmp(argv[1], "probe") == 0)
        return run_probe(argv[2], src, src_hid, dst_hid, src_inc);
    if (strcmp(argv[1], "join") == 0)
        return run_join(argv[2], src, src_inc, cookie);
    if (strcmp(argv[1], "version") == 0)
        return run_version(argv[2], version);
    if (strcmp(argv[1], "attack") == 0) {
        ah.src_hid = (uint16_t)src_hid;
        ah.dst_hid = (uint16_t)dst_hid;
        ah.src_inc = src_inc;
        return run_attack(argv[2], src, what, &ah, seq,
                          count == 1000 ? 2000 : count);
    }
    fprintf(stderr, "garbage: unknown mode %s\n", argv[1]);
    return 2;
}
