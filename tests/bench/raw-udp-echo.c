/*
 * raw-udp-echo.c -- the UDP floor under collsd's default route.
 *
 *   raw-udp-echo server ADDR:PORT
 *       echoes every datagram back to its sender, forever.
 *   raw-udp-echo client ADDR:PORT [--iters N] [--sizes a,b,...]
 *       for each size (default 8 B .. 64 KB, doubling, and 65507), sends a
 *       datagram and waits for the echo, N times (after a warm-up); prints
 *       one line per size: "size median_us min_us max_us" of the half
 *       round trip (RTT / 2).  A lost datagram (200 ms without echo) is
 *       retried and counted, not measured.
 *
 * Output lines starting with '#' are comments; the rest are for awk.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/bench/bench.h"
#include "tests/netutil.h"

/* Echo server: never returns unless the socket fails. */
static int
server(const struct sockaddr_in *sa)
{
    static uint8_t b[65536];
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    int sz = 4 << 20;

    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
    if (bind(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
        perror("bind");
        return 1;
    }
    for (;;) {
        struct sockaddr_in from;
        socklen_t fl = sizeof(from);
        ssize_t n =
            recvfrom(fd, b, sizeof(b), 0, (struct sockaddr *)&from, &fl);
        if (n < 0)
            return 1;
        sendto(fd, b, (size_t)n, 0, (struct sockaddr *)&from, fl);
    }
}

/* One round trip of n bytes; returns seconds, or -1 on a lost datagram. */
static double
round_trip(int fd, uint8_t *b, size_t n)
{
    double t0 = bench_now();

    if (send(fd, b, n, 0) < 0)
        return -1;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 200) <= 0)
            return -1;
        ssize_t r = recv(fd, b, 65536, 0);
        if (r == (ssize_t)n)
            return bench_now() - t0;
        if (r < 0)
            return -1;
        /* a late echo of an earlier, retried datagram: keep waiting */
    }
}

static int
client(const struct sockaddr_in *sa, int iters, const char *sizes)
{
    static uint8_t b[65536];
    size_t list[64];
    int nsz = 0, lost = 0;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    double *v = malloc(sizeof(double) * (size_t)iters);

    if (!v || connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
        perror("connect");
        return 1;
    }
    if (sizes) {
        nsz = bench_size_list(sizes, list, 64);
    } else {
        for (size_t s = 8; s <= 32768; s *= 2)
            list[nsz++] = s;
        list[nsz++] = 65507;
    }
    memset(b, 0x42, sizeof(b));
    printf("# raw UDP echo: half round trip in us\n# size median min max\n");
    for (int k = 0; k < nsz; k++) {
        size_t n = list[k] > 65507 ? 65507 : list[k];
        int got = 0, tries = 0;
        for (int w = 0; w < 10; w++)
            round_trip(fd, b, n);
        while (got < iters && tries < iters * 3) {
            double t = round_trip(fd, b, n);
            tries++;
            if (t < 0) {
                lost++;
                continue;
            }
            v[got++] = t / 2;
        }
        if (got == 0) {
            printf("# %zu: every datagram lost\n", n);
            continue;
        }
        double lo, hi, med = bench_median(v, got, &lo, &hi);
        printf("%zu %.2f %.2f %.2f\n", n, med * 1e6, lo * 1e6, hi * 1e6);
        fflush(stdout);
    }
    if (lost)
        printf("# %d datagrams lost and retried\n", lost);
    free(v);
    close(fd);
    return 0;
}

int
main(int argc, char **argv)
{
    struct sockaddr_in sa;
    int iters = 200;
    const char *sizes = NULL;

    if (argc < 3 || netutil_parse_addr(argv[2], &sa) < 0) {
        fprintf(stderr, "usage: raw-udp-echo server|client ADDR:PORT "
                        "[--iters N] [--sizes a,b,...]\n");
        return 2;
    }
    for (int i = 3; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--iters") == 0)
            iters = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--sizes") == 0)
            sizes = argv[i + 1];
    }
    if (iters < 1)
        iters = 1;
    if (strcmp(argv[1], "server") == 0)
        return server(&sa);
    return client(&sa, iters, sizes);
}
