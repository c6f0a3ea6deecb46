/*
 * bench-rel.c -- goodput of the reliable UDP transport (daemon/rel.c over
 * daemon/udp.c) against one TCP stream, in the same run.
 *
 *   bench-rel [options]                 both ends on loopback (fork)
 *   bench-rel --role server --bind A:P  receiving end (e.g. in a netns)
 *   bench-rel --role client --bind B:0 --peer A:P   sending end
 *
 * Options: --mib N (bytes per run, default 256), --msg-kib N (message
 * size, 1024), --reps N (>= 3, default 5), --mtu N (1472), --window N
 * (1024), --rate BYTES/S (pacing, 0), --loss F (injected drop fraction
 * for the lossy row, 0.05), --no-tcp, --no-loss, --pin (local mode:
 * client on CPU 0, server on CPU 1), --zero-copy (fragment data sent by
 * reference, rel_ops.send_ref/flush, instead of copied into the udp
 * batch as the daemon does).
 *
 * The client drives: over a TCP control connection to the server's port
 * it asks for a run ("rel ..." or "tcp ..."), then pushes the bytes.  A
 * rel run: both ends build a fresh struct rel (new incarnations) on their
 * UDP socket; the client queues messages while less than 8 MiB are
 * unacknowledged and stops the clock when every byte is acknowledged.  A
 * tcp run: the client connects a second TCP connection, writes the bytes
 * in messages of the same size, and stops the clock at the server's
 * one-byte answer after the last byte.  Each loss setting gets --reps
 * rounds, interleaved with the TCP rounds so machine noise hits both; the
 * median and min..max in MB/s (1e6 bytes/s) and the ratios are printed
 * (targets: rel >= 0.8x tcp; rel at 5 % loss >= 0.5x rel loss-free).
 * The server checks every message's length and index.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "colls.h"
#include "daemon/platform.h"
#include "daemon/rel.h"
#include "daemon/udp.h"
#include "tests/bench/bench.h"

#define BR_QLIMIT  (8u << 20) /* unacked bytes the client keeps queued */
#define BR_MAXREPS 32

struct opts {
    const char *role, *bind, *peer;
    size_t bytes, msg, mtu;
    unsigned window, reps;
    uint64_t rate;
    double loss;
    int tcp, lossy, pin, zc;
};

/* One rel endpoint on a UDP socket. */
struct ep {
    struct udp *u;
    struct rel *r;
    int peer; /* peer hid */
    /* receiving side */
    uint64_t got_bytes, got_msgs, expect_msgs;
    size_t msg;
    size_t total;
    int bad;
};

static uint64_t
now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void
die(const char *what)
{
    perror(what);
    exit(1);
}

static int
parse_addr(const char *s, struct sockaddr_in *sin)
{
    char host[64];
    const char *c = strrchr(s, ':');

    if (c == NULL || (size_t)(c - s) >= sizeof host)
        return -1;
    memcpy(host, s, (size_t)(c - s));
    host[c - s] = '\0';
    memset(sin, 0, sizeof *sin);
    sin->sin_family = AF_INET;
    sin->sin_port = htons((uint16_t)atoi(c + 1));
    return inet_pton(AF_INET, host, &sin->sin_addr) == 1 ? 0 : -1;
}

/* ---- control connection: lines of text -------------------------------- */

static void
ctl_write(int fd, const char *line)
{
    size_t n = strlen(line), off = 0;

    while (off < n) {
        ssize_t w = write(fd, line + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("control write");
        off += (size_t)w;
    }
}

/* Reads one line (without '\n'); returns 0, or -1 at end of stream. */
static int
ctl_read(int fd, char *buf, size_t cap)
{
    size_t n = 0;

    while (n + 1 < cap) {
        ssize_t r = read(fd, buf + n, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        if (buf[n] == '\n')
            break;
        n++;
    }
    buf[n] = '\0';
    return 0;
}

/* ---- rel endpoints ---------------------------------------------------- */

static void
ep_deliver(void *ctx, int hid, uint8_t *msg, size_t len)
{
    struct ep *e = ctx;
    uint64_t idx;
    size_t want = e->msg;

    if (e->got_msgs + 1 == e->expect_msgs && e->total % e->msg != 0)
        want = e->total % e->msg;
    memcpy(&idx, msg, sizeof idx < len ? sizeof idx : len);
    if (len != want || (len >= sizeof idx && idx != e->got_msgs))
        e->bad++;
    e->got_msgs++;
    e->got_bytes += len;
    free(msg);
    (void)hid;
}

/* rel's send: the ctx is the endpoint, the datagram goes to its udp. */
static int
ep_send(void *ctx, const struct sockaddr *addr, socklen_t alen,
        const struct iovec *iov, int iovcnt)
{
    struct ep *e = ctx;

    return udp_send(e->u, addr, alen, iov, iovcnt);
}

/* rel's send_ref: the fragment data is referenced until ep_flush. */
static int
ep_send_ref(void *ctx, const struct sockaddr *addr, socklen_t alen,
            const struct iovec *iov, int iovcnt)
{
    struct ep *e = ctx;

    return udp_send_ref(e->u, addr, alen, iov, iovcnt);
}

static int
ep_flush(void *ctx)
{
    struct ep *e = ctx;

    return udp_flush(e->u);
}

/* Builds e's transport: hid me, one peer; zero copy with --zero-copy. */
static void
ep_rel(struct ep *e, const struct opts *o, double drop, int me, int peer,
       const struct sockaddr_in *peer_addr, uint32_t inc)
{
    struct rel_config cfg;
    struct rel_ops ops = {ep_send, ep_deliver, NULL, ep_send_ref, ep_flush};

    if (!o->zc) {
        ops.send_ref = NULL;
        ops.flush = NULL;
    }
    rel_config_default(&cfg);
    cfg.mtu = o->mtu;
    cfg.window = o->window;
    cfg.rate_bps = o->rate;
    cfg.drop = drop;
    cfg.seed = inc;
    if (o->msg > cfg.max_message)
        cfg.max_message = o->msg;
    e->r = rel_new(&cfg, &ops, e, me, inc);
    if (e->r == NULL ||
        rel_peer_set(e->r, peer, (const struct sockaddr *)peer_addr,
                     sizeof *peer_addr, 0) != 0) {
        fprintf(stderr, "bench-rel: bad transport configuration\n");
        exit(1);
    }
    e->peer = peer;
}

static void
ep_recv_cb(void *arg, const struct sockaddr *from, socklen_t alen,
           const uint8_t *data, size_t len)
{
    struct ep *e = arg;

    rel_input(e->r, from, alen, data, len, now_us());
}

/*
 * One turn of the endpoint's loop: waits (at most max_us, less if the
 * transport has a timer due) for the UDP socket or extra_fd, reads what
 * came, runs timers, flushes.  Returns poll's revents for extra_fd.
 */
static short
ep_turn(struct ep *e, int extra_fd, uint64_t max_us)
{
    struct pollfd pf[2];
    struct timespec ts;
    uint64_t now = now_us(), t = rel_next_timeout(e->r), wait = max_us;
    int n = 1, k;

    if (t != UINT64_MAX)
        wait = t > now ? (t - now < wait ? t - now : wait) : 0;
    pf[0].fd = udp_fd(e->u);
    pf[0].events = POLLIN | (udp_pending(e->u) ? POLLOUT : 0);
    pf[0].revents = 0;
    if (extra_fd >= 0) {
        pf[1].fd = extra_fd;
        pf[1].events = POLLIN;
        pf[1].revents = 0;
        n = 2;
    }
    ts.tv_sec = (time_t)(wait / 1000000u);
    ts.tv_nsec = (long)(wait % 1000000u) * 1000;
    if (ppoll(pf, (nfds_t)n, &ts, NULL) < 0 && errno != EINTR)
        die("ppoll");
    if (pf[0].revents & POLLIN)
        for (k = 0; k < 64 && udp_recv_batch(e->u, ep_recv_cb, e) > 0; k++)
            ;
    if (rel_next_timeout(e->r) <= now_us())
        rel_timer(e->r, now_us());
    if (udp_pending(e->u)) {
        if (udp_flush(e->u) == 0)
            rel_writable(e->r, now_us());
        udp_flush(e->u);
    }
    return n == 2 ? pf[1].revents : 0;
}

/* ---- server ----------------------------------------------------------- */

static void
discard_cb(void *arg, const struct sockaddr *from, socklen_t alen,
           const uint8_t *data, size_t len)
{
    (void)arg;
    (void)from;
    (void)alen;
    (void)data;
    (void)len;
}

/* A rel run, receiving end: until the client says "done". */
static void
serve_rel(struct udp *u, int ctl, const char *cmd, const struct opts *o)
{
    struct ep e;
    struct sockaddr_in caddr;
    char caddr_s[64], line[256];
    unsigned long long total, msg, mtu, window, rate, inc;
    double drop;
    struct opts ro = *o;

    memset(&e, 0, sizeof e);
    if (sscanf(cmd, "rel %llu %llu %llu %llu %llu %lf %63s %llu", &total, &msg,
               &mtu, &window, &rate, &drop, caddr_s, &inc) != 8 ||
        parse_addr(caddr_s, &caddr) != 0 || msg == 0) {
        ctl_write(ctl, "error\n");
        return;
    }
    ro.msg = msg;
    ro.mtu = mtu;
    ro.window = (unsigned)window;
    ro.rate = rate;
    e.u = u;
    e.msg = msg;
    e.total = total;
    e.expect_msgs = (total + msg - 1) / msg;
    /* leftovers of an earlier run would only be dropped: drain them */
    while (udp_recv_batch(u, discard_cb, NULL) > 0)
        ;
    ep_rel(&e, &ro, drop, 2, 1, &caddr, (uint32_t)inc + 1000000u);
    ctl_write(ctl, "ok\n");
    for (;;) {
        short ev = ep_turn(&e, ctl, 100000);
        if (ev & (POLLIN | POLLHUP | POLLERR)) {
            if (ctl_read(ctl, line, sizeof line) != 0 ||
                strcmp(line, "done") == 0)
                break;
        }
    }
    snprintf(line, sizeof line, "got %llu %llu %d\n",
             (unsigned long long)e.got_bytes, (unsigned long long)e.got_msgs,
             e.bad);
    ctl_write(ctl, line);
    rel_free(e.r);
}

/* A tcp run, receiving end: one data connection, total bytes. */
static void
serve_tcp(int lfd, int ctl, const char *cmd)
{
    unsigned long long total, got = 0;
    static char buf[1 << 20];
    int fd;

    if (sscanf(cmd, "tcp %llu", &total) != 1) {
        ctl_write(ctl, "error\n");
        return;
    }
    ctl_write(ctl, "ok\n");
    fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        die("accept");
    while (got < total) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (unsigned long long)r;
    }
    if (write(fd, "k", 1) != 1)
        die("tcp answer");
    close(fd);
}

/* The receiving end: serves one client's runs until it quits. */
static void
server(int lfd, struct udp *u, const struct opts *o)
{
    char line[256];
    int ctl = accept(lfd, NULL, NULL);

    if (ctl < 0)
        die("accept");
    while (ctl_read(ctl, line, sizeof line) == 0) {
        if (strncmp(line, "rel ", 4) == 0)
            serve_rel(u, ctl, line, o);
        else if (strncmp(line, "tcp ", 4) == 0)
            serve_tcp(lfd, ctl, line);
        else
            break;
    }
    close(ctl);
}

/* ---- client ----------------------------------------------------------- */

/*
 * One rel run, sending end.  Each run has a fresh UDP socket: datagrams
 * of the last run still on their way are then from an unknown address
 * for the server, and ours never see the old server's.
 */
static double
client_rel(const char *bind, int ctl, const struct sockaddr_in *saddr,
           const struct opts *o, double drop, uint32_t inc,
           struct rel_peer_stats *ps)
{
    struct ep e;
    struct udp *u;
    char line[256];
    uint8_t *buf = malloc(o->msg);
    uint64_t sent = 0, idx = 0, gb, gm;
    int bad;
    double t0, t1;

    if (buf == NULL)
        die("malloc");
    if (udp_open(bind, &u) != 0)
        die("udp_open");
    memset(buf, 0x5a, o->msg);
    memset(&e, 0, sizeof e);
    e.u = u;
    snprintf(line, sizeof line, "rel %zu %zu %zu %u %llu %g %s %u\n", o->bytes,
             o->msg, o->mtu, o->window, (unsigned long long)o->rate, drop,
             udp_local_name(u), inc);
    ctl_write(ctl, line);
    if (ctl_read(ctl, line, sizeof line) != 0 || strcmp(line, "ok") != 0) {
        fprintf(stderr, "bench-rel: server refused the run\n");
        exit(1);
    }
    ep_rel(&e, o, drop, 1, 2, saddr, inc);
    t0 = bench_now();
    while (sent < o->bytes || rel_queued(e.r, 2) > 0) {
        while (sent < o->bytes && rel_queued(e.r, 2) < BR_QLIMIT) {
            size_t n = o->bytes - sent < o->msg ? o->bytes - sent : o->msg;
            struct iovec iov = {buf, n};
            if (n >= sizeof idx)
                memcpy(buf, &idx, sizeof idx);
            if (rel_sendv(e.r, 2, &iov, 1, now_us()) != 0)
                die("rel_sendv");
            sent += n;
            idx++;
        }
        udp_flush(u);
        ep_turn(&e, -1, 100000);
    }
    t1 = bench_now();
    rel_peer_stats(e.r, 2, ps);
    /* keep acking the server's last datagrams while it finishes */
    ctl_write(ctl, "done\n");
    if (ctl_read(ctl, line, sizeof line) != 0 ||
        sscanf(line, "got %llu %llu %d", (unsigned long long *)&gb,
               (unsigned long long *)&gm, &bad) != 3)
        die("control");
    if (gb != o->bytes || bad != 0) {
        fprintf(stderr, "bench-rel: server got %llu of %zu bytes, %d bad\n",
                (unsigned long long)gb, o->bytes, bad);
        exit(1);
    }
    rel_free(e.r);
    udp_close(u);
    free(buf);
    return (double)o->bytes / (t1 - t0) / 1e6;
}

static double
client_tcp(int ctl, const struct sockaddr_in *saddr, const struct opts *o)
{
    char line[256], k;
    uint8_t *buf = malloc(o->msg);
    size_t sent = 0;
    int fd, one = 1;
    double t0, t1;

    if (buf == NULL)
        die("malloc");
    memset(buf, 0x5a, o->msg);
    snprintf(line, sizeof line, "tcp %zu\n", o->bytes);
    ctl_write(ctl, line);
    if (ctl_read(ctl, line, sizeof line) != 0 || strcmp(line, "ok") != 0)
        die("control");
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        die("socket");
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    t0 = bench_now();
    if (connect(fd, (const struct sockaddr *)saddr, sizeof *saddr) != 0)
        die("connect");
    while (sent < o->bytes) {
        size_t n = o->bytes - sent < o->msg ? o->bytes - sent : o->msg, off = 0;
        while (off < n) {
            ssize_t w = write(fd, buf + off, n - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                die("tcp write");
            off += (size_t)w;
        }
        sent += n;
    }
    if (read(fd, &k, 1) != 1)
        die("tcp read");
    t1 = bench_now();
    close(fd);
    free(buf);
    return (double)o->bytes / (t1 - t0) / 1e6;
}

static void
report(const char *name, double *v, unsigned n, double base,
       const char *base_name, double target)
{
    double lo, hi, med = bench_median(v, (int)n, &lo, &hi);

    printf("%-22s median %9.1f MB/s  (min %9.1f .. max %9.1f)", name, med, lo,
           hi);
    if (base > 0)
        printf("  %.2fx %s (target >= %.1fx)", med / base, base_name, target);
    printf("\n");
}

/* The sending end: runs every round and prints the table. */
static void
client(const char *bind, const struct sockaddr_in *saddr, const struct opts *o)
{
    double tcp[BR_MAXREPS], rel0[BR_MAXREPS], rel5[BR_MAXREPS];
    double lo, hi, mt = 0, m0;
    struct rel_peer_stats ps0, ps5, ps;
    unsigned i;
    int ctl = socket(AF_INET, SOCK_STREAM, 0);

    memset(&ps0, 0, sizeof ps0);
    memset(&ps5, 0, sizeof ps5);
    if (ctl < 0 ||
        connect(ctl, (const struct sockaddr *)saddr, sizeof *saddr) != 0)
        die("connect control");
    printf("bench-rel: %zu MiB per run in %zu KiB messages, mtu %zu, "
           "window %u, rate %llu B/s, %u reps\n",
           o->bytes >> 20, o->msg >> 10, o->mtu, o->window,
           (unsigned long long)o->rate, o->reps);
    for (i = 0; i < o->reps; i++) {
        if (o->tcp)
            tcp[i] = client_tcp(ctl, saddr, o);
        rel0[i] = client_rel(bind, ctl, saddr, o, 0, 2 * i + 1, &ps);
        ps0.retransmits += ps.retransmits;
        ps0.timeouts += ps.timeouts;
        ps0.dgrams_sent += ps.dgrams_sent;
        ps0.srtt_us = ps.srtt_us;
        if (o->lossy) {
            rel5[i] = client_rel(bind, ctl, saddr, o, o->loss, 2 * i + 2, &ps);
            ps5.retransmits += ps.retransmits;
            ps5.timeouts += ps.timeouts;
            ps5.fast_retransmits += ps.fast_retransmits;
            ps5.dgrams_sent += ps.dgrams_sent;
            ps5.srtt_us = ps.srtt_us;
        }
    }
    ctl_write(ctl, "quit\n");
    close(ctl);
    if (o->tcp) {
        mt = bench_median(tcp, (int)o->reps, &lo, &hi);
        report("tcp (1 stream)", tcp, o->reps, 0, "", 0);
    }
    m0 = bench_median(rel0, (int)o->reps, &lo, &hi);
    report("rel, no loss", rel0, o->reps, mt, "tcp", 0.8);
    printf("%-22s %llu datagrams, %llu retransmits, %llu timeouts, "
           "srtt %llu us\n",
           "", (unsigned long long)ps0.dgrams_sent,
           (unsigned long long)ps0.retransmits,
           (unsigned long long)ps0.timeouts, (unsigned long long)ps0.srtt_us);
    if (o->lossy) {
        char name[64];
        snprintf(name, sizeof name, "rel, %.0f%% loss", o->loss * 100);
        report(name, rel5, o->reps, m0, "loss-free", 0.5);
        printf("%-22s %llu datagrams, %llu retransmits (%llu fast), "
               "%llu timeouts, srtt %llu us\n",
               "", (unsigned long long)ps5.dgrams_sent,
               (unsigned long long)ps5.retransmits,
               (unsigned long long)ps5.fast_retransmits,
               (unsigned long long)ps5.timeouts,
               (unsigned long long)ps5.srtt_us);
    }
}

/* ---- main ------------------------------------------------------------- */

static void
usage(void)
{
    fprintf(stderr, "usage: bench-rel [--role server|client] [--bind A:P] "
                    "[--peer A:P]\n"
                    "       [--mib N] [--msg-kib N] [--reps N] [--mtu N] "
                    "[--window N]\n"
                    "       [--rate BYTES/S] [--loss F] [--no-tcp] [--no-loss] "
                    "[--pin] [--zero-copy]\n");
    exit(2);
}

/* --pin: client and server on different CPUs. */
static void
pin_cpu(int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        perror("sched_setaffinity");
}

static int
tcp_listen(const char *addr, struct sockaddr_in *bound)
{
    struct sockaddr_in sin;
    socklen_t slen = sizeof sin;
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

    if (fd < 0 || parse_addr(addr, &sin) != 0)
        die("tcp listen address");
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0 ||
        listen(fd, 4) != 0 ||
        getsockname(fd, (struct sockaddr *)&sin, &slen) != 0)
        die("tcp listen");
    *bound = sin;
    return fd;
}

int
main(int argc, char **argv)
{
    struct opts o = {NULL, NULL, NULL, 256u << 20, 1u << 20, 1472, 1024,
                     5,    0,    0.05, 1,          1,        0,    0};
    struct udp *u;
    struct sockaddr_in saddr;
    char name[64];
    int i, lfd;

    platform_tune_malloc(); /* message buffers managed as in collsd */
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--no-tcp") == 0) {
            o.tcp = 0;
            continue;
        }
        if (strcmp(a, "--no-loss") == 0) {
            o.lossy = 0;
            continue;
        }
        if (strcmp(a, "--pin") == 0) {
            o.pin = 1;
            continue;
        }
        if (strcmp(a, "--zero-copy") == 0) {
            o.zc = 1;
            continue;
        }
        if (v == NULL)
            usage();
        i++;
        if (strcmp(a, "--role") == 0)
            o.role = v;
        else if (strcmp(a, "--bind") == 0)
            o.bind = v;
        else if (strcmp(a, "--peer") == 0)
            o.peer = v;
        else if (strcmp(a, "--mib") == 0)
            o.bytes = (size_t)strtoull(v, NULL, 10) << 20;
        else if (strcmp(a, "--msg-kib") == 0)
            o.msg = (size_t)strtoull(v, NULL, 10) << 10;
        else if (strcmp(a, "--reps") == 0)
            o.reps = (unsigned)atoi(v);
        else if (strcmp(a, "--mtu") == 0)
            o.mtu = (size_t)atoi(v);
        else if (strcmp(a, "--window") == 0)
            o.window = (unsigned)atoi(v);
        else if (strcmp(a, "--rate") == 0)
            o.rate = strtoull(v, NULL, 10);
        else if (strcmp(a, "--loss") == 0)
            o.loss = atof(v);
        else
            usage();
    }
    if (o.reps < 3)
        o.reps = 3;
    if (o.reps > BR_MAXREPS)
        o.reps = BR_MAXREPS;
    if (o.bytes == 0 || o.msg == 0)
        usage();
    signal(SIGPIPE, SIG_IGN);

    if (o.role != NULL && strcmp(o.role, "server") == 0) {
        if (o.bind == NULL)
            usage();
        lfd = tcp_listen(o.bind, &saddr);
        if (udp_open(o.bind, &u) != 0)
            die("udp_open");
        fprintf(stderr, "bench-rel server on %s\n", udp_local_name(u));
        for (;;)
            server(lfd, u, &o);
    }
    if (o.role != NULL && strcmp(o.role, "client") == 0) {
        if (o.peer == NULL || parse_addr(o.peer, &saddr) != 0)
            usage();
        client(o.bind ? o.bind : "0.0.0.0:0", &saddr, &o);
        return 0;
    }
    if (o.role != NULL)
        usage();

    /* both ends here: the server's sockets first, then fork */
    {
        struct udp *su;
        pid_t pid;
        int st;

        lfd = tcp_listen("127.0.0.1:0", &saddr);
        snprintf(name, sizeof name, "127.0.0.1:%u", ntohs(saddr.sin_port));
        if (udp_open(name, &su) != 0)
            die("udp_open");
        pid = fork();
        if (pid < 0)
            die("fork");
        if (pid == 0) {
            if (o.pin)
                pin_cpu(1);
            server(lfd, su, &o);
            _exit(0);
        }
        if (o.pin)
            pin_cpu(0);
        udp_close(su);
        close(lfd);
        client("127.0.0.1:0", &saddr, &o);
        if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            fprintf(stderr, "bench-rel: server exited badly\n");
    }
    return 0;
}
