/*
 * netutil.c -- socket helpers shared by the test programs (netutil.h).
 * Blocking descriptors only; a short read or write is retried until the
 * whole buffer is through.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/netutil.h"

/* The port is taken as atoi of what follows the last ':'. */
int
netutil_parse_addr(const char *s, struct sockaddr_in *sa)
{
    char host[64];
    const char *colon = strrchr(s, ':');

    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    if (!colon || (size_t)(colon - s) >= sizeof(host))
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = 0;
    sa->sin_port = htons((uint16_t)atoi(colon + 1));
    return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

int
netutil_read_full(int fd, void *p, size_t n)
{
    uint8_t *b = p;

    while (n > 0) {
        ssize_t r = read(fd, b, n);
        if (r <= 0)
            return -1;
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

int
netutil_write_full(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;

    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}
