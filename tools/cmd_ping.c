/*
 * cmd_ping.c -- `collsctl ping [-c N] [-s BYTES] [-i MS] HOST`: echo from
 * the local daemon to HOST's daemon and back (daemon to daemon, the floor
 * under every other figure).  Prints each round trip and min/median/max.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "colls.h"
#include "tools/collsctl.h"

static int
ping_exec(int argc, char **argv)
{
    colls_t *c;
    long count = 4, size = 64, interval = 0;
    double *rtt;
    int opt, hid, i, ok = 0, rc;

    optind = 1;
    while ((opt = collsctl_getopt(argc, argv, &cmd_ping)) != -1) {
        switch (opt) {
        case 'c':
            if (collsctl_opt_long(&cmd_ping, opt, optarg, 1, 1000000, &count) !=
                0)
                return COLLSCTL_USAGE;
            break;
        case 's':
            if (collsctl_opt_long(&cmd_ping, opt, optarg, 0, 64L * 1024 * 1024,
                                  &size) != 0)
                return COLLSCTL_USAGE;
            break;
        case 'i':
            if (collsctl_opt_long(&cmd_ping, opt, optarg, 0, 60000,
                                  &interval) != 0)
                return COLLSCTL_USAGE;
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

static const struct collsctl_opt ping_opts[] = {
    {"count", 'c', COLLSCTL_OPT_SHORT, "N",
     "round trips to make (default 4; 1 to 1000000)"},
    {"size", 's', COLLSCTL_OPT_SHORT, "BYTES",
     "bytes of each echo (default 64; 0 to 67108864)"},
    {"interval", 'i', COLLSCTL_OPT_SHORT, "MS",
     "milliseconds to wait between round trips (default 0; 0 to 60000)"},
    {NULL, 0, 0, NULL, NULL},
};

const struct collsctl_cmd cmd_ping = {
    .name = "ping",
    .args = "HOST",
    .help = "daemon-to-daemon echo to HOST (hid, name or address)",
    .detail = "The local daemon echoes COUNT messages off HOST's daemon and "
              "prints each round trip, then min/median/max: the floor under "
              "every other figure.  Exit status 1 if any echo was lost.",
    .opts = ping_opts,
    .needs_daemon = 1,
    .exec = ping_exec,
};
