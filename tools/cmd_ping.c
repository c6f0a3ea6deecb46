/*
 * cmd_ping.c -- `collsctl ping HOST [-c N] [-s BYTES] [-i MS]`: echo from
 * the local daemon to HOST's daemon and back (daemon to daemon, the floor
 * under every other figure).  Prints each round trip and min/median/max.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "colls.h"
#include "tools/collsctl.h"

/* Parses a non-negative integer option; -1 if invalid. */
static long
ping_num(const char *s, long max)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (*s == '\0' || *end != '\0' || v < 0 || v > max)
        return -1;
    return v;
}

static int
ping_exec(int argc, char **argv)
{
    colls_t *c;
    long count = 4, size = 64, interval = 0;
    double *rtt;
    int opt, hid, i, ok = 0, rc;

    optind = 1;
    while ((opt = getopt(argc, argv, "c:s:i:")) != -1) {
        switch (opt) {
        case 'c':
            count = ping_num(optarg, 1000000);
            if (count <= 0)
                return collsctl_usage(&cmd_ping);
            break;
        case 's':
            size = ping_num(optarg, 64L * 1024 * 1024);
            if (size < 0)
                return collsctl_usage(&cmd_ping);
            break;
        case 'i':
            interval = ping_num(optarg, 60000);
            if (interval < 0)
                return collsctl_usage(&cmd_ping);
            break;
        default:
            return collsctl_usage(&cmd_ping);
        }
    }
    if (optind + 1 != argc)
        return collsctl_usage(&cmd_ping);
    if (collsctl_attach(&c) < 0)
        return 1;
    hid = collsctl_resolve_host(c, argv[optind]);
    if (hid < 0) {
        fprintf(stderr, "collsctl ping: host %s: %s\n", argv[optind],
                colls_strerror(hid));
        colls_detach(c);
        return 1;
    }
    rtt = calloc((size_t)count, sizeof(*rtt));
    if (rtt == NULL) {
        colls_detach(c);
        return 1;
    }
    printf("PING host %d, %ld bytes\n", hid, size);
    for (i = 0; i < count; i++) {
        double t;
        rc = colls_ping(c, hid, (size_t)size, &t);
        if (rc < 0) {
            printf("seq %d: %s\n", i, colls_strerror(rc));
        } else {
            printf("seq %d: %ld bytes from host %d: rtt %.1f us\n", i, size,
                   hid, t);
            rtt[ok++] = t;
        }
        fflush(stdout);
        if (interval > 0 && i + 1 < count)
            usleep((useconds_t)interval * 1000);
    }
    if (ok > 0) {
        double med = collsctl_median(rtt, ok);
        printf("%d sent, %d answered; rtt min/median/max = "
               "%.1f/%.1f/%.1f us\n",
               (int)count, ok, rtt[0], med, rtt[ok - 1]);
    } else {
        printf("%d sent, 0 answered\n", (int)count);
    }
    free(rtt);
    colls_detach(c);
    return ok == count ? 0 : 1;
}

const struct collsctl_cmd cmd_ping = {
    .name = "ping",
    .usage = "HOST [-c N] [-s BYTES] [-i MS]",
    .help = "daemon-to-daemon echo to HOST (hid, name or address)",
    .needs_daemon = 1,
    .exec = ping_exec,
};
