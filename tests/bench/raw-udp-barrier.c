/*
 * raw-udp-barrier.c -- the UDP floor under collsd's barrier: P processes
 * (one per emulated host) run a dissemination barrier among themselves
 * with plain blocking UDP sockets, no daemon in between.
 *
 *   raw-udp-barrier --rank R --peers A0:P0,A1:P1,... [--iters N] [--runs K]
 *
 * Rank R binds the R-th address of --peers.  In round k of a barrier it
 * sends one datagram to rank R + 2^k and waits for the one from R - 2^k
 * (mod P), as daemon/alg/barrier.c's dissemination does.  A datagram names
 * its round; the sender of round k is unique, so a count per round tells
 * whether this barrier's datagram of that round has arrived, even when a
 * faster rank's datagram of the next barrier comes first.
 *
 * Start-up: every rank sends HELLO to the ranks it has not heard from
 * every 20 ms and answers every HELLO that asks for it, until it has heard
 * from all; datagrams sent before a peer bound its port are thus resent.
 * Then 3 warm-up barriers and K runs of N barriers.  Prints
 * "barrier R best_us median_us" (µs per barrier over the runs).  The
 * network is assumed loss-free (no retransmission after start-up): a
 * barrier that waits 5 s fails with exit status 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/bench/bench.h"
#include "tests/netutil.h"

#define MAXP      64
#define MAXRUNS   64
#define ROUNDS    6 /* ceil(log2 MAXP) */
#define T_HELLO   0
#define T_BARRIER 1
#define WAIT_MS   5000

struct dgram {
    uint8_t type;  /* T_HELLO or T_BARRIER */
    uint8_t reply; /* HELLO: 1 asks the receiver to answer */
    uint8_t round; /* BARRIER: its round */
    uint8_t from;  /* sender's rank */
};

static int fd, P, me;
static struct sockaddr_in peer[MAXP];
static uint64_t got[ROUNDS]; /* barrier datagrams received per round */
static int heard[MAXP], nheard;

static void
send_to(int r, uint8_t type, uint8_t reply, uint8_t round)
{
    struct dgram d = {type, reply, round, (uint8_t)me};

    (void)sendto(fd, &d, sizeof d, 0, (const struct sockaddr *)&peer[r],
                 sizeof peer[r]);
}

/* Receives one datagram (waits at most ms); 0, or -1 on timeout. */
static int
recv_one(int ms)
{
    struct pollfd pfd = {fd, POLLIN, 0};
    struct dgram d;
    ssize_t n;

    if (ms >= 0 && poll(&pfd, 1, ms) <= 0)
        return -1;
    n = recv(fd, &d, sizeof d, 0);
    if (n != (ssize_t)sizeof d || d.from >= P)
        return 0;
    if (!heard[d.from]) {
        heard[d.from] = 1;
        nheard++;
    }
    if (d.type == T_HELLO && d.reply)
        send_to(d.from, T_HELLO, 0, 0);
    else if (d.type == T_BARRIER && d.round < ROUNDS)
        got[d.round]++;
    return 0;
}

static void
hello_all(void)
{
    heard[me] = 1;
    nheard = 1;
    while (nheard < P) {
        for (int r = 0; r < P; r++)
            if (!heard[r])
                send_to(r, T_HELLO, 1, 0);
        double until = bench_now() + 0.02;
        while (nheard < P && bench_now() < until)
            (void)recv_one(5);
    }
}

/* Barrier number i (0-based): 0, or -1 when a round waited too long. */
static int
barrier(uint64_t i)
{
    int k = 0;

    for (int d = 1; d < P; d <<= 1, k++) {
        send_to((me + d) % P, T_BARRIER, 0, (uint8_t)k);
        while (got[k] <= i)
            if (recv_one(WAIT_MS) < 0)
                return -1;
    }
    return 0;
}

static int
usage(void)
{
    fprintf(stderr, "usage: raw-udp-barrier --rank R --peers A:P,A:P,... "
                    "[--iters N] [--runs K]\n");
    return 2;
}

int
main(int argc, char **argv)
{
    int iters = 200, runs = 5, sz = 1 << 20;
    char *peers = NULL, *save = NULL;
    double t[MAXRUNS], lo, hi, med;
    uint64_t n = 0;

    me = -1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--rank") == 0)
            me = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--peers") == 0)
            peers = argv[i + 1];
        else if (strcmp(argv[i], "--iters") == 0)
            iters = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--runs") == 0)
            runs = atoi(argv[i + 1]);
        else
            return usage();
    }
    if (peers == NULL || iters < 1 || runs < 1 || runs > MAXRUNS)
        return usage();
    for (char *s = strtok_r(peers, ",", &save); s != NULL;
         s = strtok_r(NULL, ",", &save)) {
        if (P == MAXP || netutil_parse_addr(s, &peer[P]) < 0)
            return usage();
        P++;
    }
    if (me < 0 || me >= P)
        return usage();
    fd = socket(AF_INET, SOCK_DGRAM, 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
    if (fd < 0 ||
        bind(fd, (const struct sockaddr *)&peer[me], sizeof peer[me]) < 0) {
        perror("raw-udp-barrier: bind");
        return 1;
    }
    hello_all();
    for (int w = 0; w < 3; w++)
        if (barrier(n++) < 0)
            goto timeout;
    for (int r = 0; r < runs; r++) {
        double t0 = bench_now();
        for (int i = 0; i < iters; i++)
            if (barrier(n++) < 0)
                goto timeout;
        t[r] = (bench_now() - t0) * 1e6 / iters;
    }
    med = bench_median(t, runs, &lo, &hi);
    printf("barrier %d %.2f %.2f\n", me, lo, med);
    /* Late HELLO answers for a slow peer: linger briefly. */
    while (recv_one(100) == 0)
        ;
    return 0;
timeout:
    fprintf(stderr, "raw-udp-barrier: rank %d: barrier %llu timed out\n", me,
            (unsigned long long)n);
    return 1;
}
