/*
 * raw-tcp-pingpong.c -- the TCP floor under collsd's direct route.
 *
 *   raw-tcp-pingpong server ADDR:PORT
 *       accepts connections one after the other; each starts with a
 *       16-byte request {u64 mode, u64 arg} (big-endian):
 *         mode 1 (ping-pong): echoes messages of arg bytes until EOF;
 *         mode 2 (stream): reads arg bytes, then answers one byte.
 *   raw-tcp-pingpong client ADDR:PORT [--iters N] [--sizes a,b,...]
 *       ping-pong with TCP_NODELAY: per size (default 8 B .. 8 MB doubling
 *       and 10 MB) prints "size median_us min_us max_us" of the half round
 *       trip.  Iterations shrink for large sizes (at least 5).
 *   raw-tcp-pingpong stream ADDR:PORT --bytes N [--reps R]
 *       one TCP stream of N bytes, R times: prints "stream bytes
 *       median_MBps min max" (MB = 1e6 bytes), time until the server's
 *       one-byte answer.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/bench/bench.h"
#include "tests/netutil.h"

#define CHUNK (1 << 20)

static uint64_t
get64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static void
put64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

static void
nodelay(int fd)
{
    int one = 1;

    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Serves one connection (see the file comment). */
static void
serve(int fd, uint8_t *b)
{
    uint8_t req[16];

    if (netutil_read_full(fd, req, 16) < 0)
        return;
    uint64_t mode = get64(req), arg = get64(req + 8);
    if (mode == 1 && arg <= (uint64_t)16 * CHUNK) {
        while (netutil_read_full(fd, b, arg) == 0)
            if (netutil_write_full(fd, b, arg) < 0)
                return;
    } else if (mode == 2) {
        while (arg > 0) {
            ssize_t r = read(fd, b, arg < CHUNK ? arg : CHUNK);
            if (r <= 0)
                return;
            arg -= (uint64_t)r;
        }
        netutil_write_full(fd, "k", 1);
    }
}

static int
server(const struct sockaddr_in *sa)
{
    uint8_t *b = malloc((size_t)16 * CHUNK);
    int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0);

    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (!b || bind(lfd, (const struct sockaddr *)sa, sizeof(*sa)) < 0 ||
        listen(lfd, 4) < 0) {
        perror("bind/listen");
        return 1;
    }
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            continue;
        nodelay(fd);
        serve(fd, b);
        close(fd);
    }
}

static int
connect_to(const struct sockaddr_in *sa, uint64_t mode, uint64_t arg)
{
    uint8_t req[16];
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0 || connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
        perror("connect");
        exit(1);
    }
    nodelay(fd);
    put64(req, mode);
    put64(req + 8, arg);
    if (netutil_write_full(fd, req, 16) < 0)
        exit(1);
    return fd;
}

static int
client(const struct sockaddr_in *sa, int iters, const char *sizes)
{
    size_t list[64];
    int nsz = 0;
    uint8_t *b = malloc((size_t)16 * CHUNK);
    double *v = malloc(sizeof(double) * (size_t)iters);

    if (!b || !v)
        return 1;
    if (sizes) {
        nsz = bench_size_list(sizes, list, 64);
    } else {
        for (size_t s = 8; s <= ((size_t)8 << 20); s *= 2)
            list[nsz++] = s;
        list[nsz++] = 10000000;
    }
    memset(b, 0x42, (size_t)16 * CHUNK);
    printf("# raw TCP ping-pong (TCP_NODELAY): half round trip in us\n"
           "# size median min max\n");
    for (int k = 0; k < nsz; k++) {
        size_t n = list[k] > (size_t)16 * CHUNK ? (size_t)16 * CHUNK : list[k];
        int it = iters;
        if (n >= 65536)
            it = iters / (int)(n / 65536) > 5 ? iters / (int)(n / 65536) : 5;
        if (it > iters)
            it = iters;
        int fd = connect_to(sa, 1, n);
        for (int w = 0; w < 3; w++)
            if (netutil_write_full(fd, b, n) < 0 ||
                netutil_read_full(fd, b, n) < 0)
                return 1;
        for (int i = 0; i < it; i++) {
            double t0 = bench_now();
            if (netutil_write_full(fd, b, n) < 0 ||
                netutil_read_full(fd, b, n) < 0)
                return 1;
            v[i] = (bench_now() - t0) / 2;
        }
        close(fd);
        double lo, hi, med = bench_median(v, it, &lo, &hi);
        printf("%zu %.2f %.2f %.2f\n", n, med * 1e6, lo * 1e6, hi * 1e6);
        fflush(stdout);
    }
    free(b);
    free(v);
    return 0;
}

static int
stream(const struct sockaddr_in *sa, uint64_t bytes, int reps)
{
    uint8_t *b = malloc(CHUNK);
    double v[64];

    if (!b || reps < 1 || reps > 64)
        return 1;
    memset(b, 0x17, CHUNK);
    for (int r = 0; r < reps; r++) {
        int fd = connect_to(sa, 2, bytes);
        double t0 = bench_now();
        uint64_t left = bytes;
        char k;
        while (left > 0) {
            size_t n = left < CHUNK ? left : CHUNK;
            if (netutil_write_full(fd, b, n) < 0)
                return 1;
            left -= n;
        }
        if (netutil_read_full(fd, &k, 1) < 0)
            return 1;
        v[r] = (double)bytes / (bench_now() - t0) / 1e6;
        close(fd);
    }
    double lo, hi, med = bench_median(v, reps, &lo, &hi);
    printf("stream %llu %.2f %.2f %.2f\n", (unsigned long long)bytes, med, lo,
           hi);
    free(b);
    return 0;
}

int
main(int argc, char **argv)
{
    struct sockaddr_in sa;
    int iters = 200, reps = 3;
    uint64_t bytes = 100000000;
    const char *sizes = NULL;

    signal(SIGPIPE, SIG_IGN);
    if (argc < 3 || netutil_parse_addr(argv[2], &sa) < 0) {
        fprintf(stderr,
                "usage: raw-tcp-pingpong server|client|stream ADDR:PORT "
                "[--iters N] [--sizes a,b,...] [--bytes N] [--reps R]\n");
        return 2;
    }
    for (int i = 3; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--iters") == 0)
            iters = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--sizes") == 0)
            sizes = argv[i + 1];
        else if (strcmp(argv[i], "--bytes") == 0)
            bytes = strtoull(argv[i + 1], NULL, 0);
        else if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
    }
    if (iters < 5)
        iters = 5;
    if (strcmp(argv[1], "server") == 0)
        return server(&sa);
    if (strcmp(argv[1], "stream") == 0)
        return stream(&sa, bytes, reps);
    return client(&sa, iters, sizes);
}
