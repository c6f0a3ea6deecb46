/*
 * cmd_pingpong.c -- `collsctl pingpong` and `collsctl echo`.
 *
 * pingpong measures the task-level half round trip for message sizes from
 * --min to --max (doubling, --max included): each repetition packs the
 * data in the chosen encoding (doubles when the size is a multiple of 8,
 * else bytes), sends it, receives the echo and unpacks it; the first
 * repetition of each size also checks the echoed bytes.  Per size the
 * median of the repetitions is kept, then t(n) = alpha + n / beta is fitted
 * by least squares over all sizes, weighted by 1/t^2 (relative errors).
 *   default route: the partner is a daemon's built-in echo, by default the
 *                  first other host that is up (--to names any tid,
 *                  --host a hid);
 *   direct route:  the partner is a `collsctl echo` task (--to TID).
 *
 * echo prints its tid, then sends every message back to its sender with
 * the same tag and encoding on the route it came by, until killed or
 * --count messages were answered.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "colls.h"
#include "tools/collsctl.h"

#define PP_TAG 0x5050

#define PP_SIZE_MAX (256ULL * 1024 * 1024)
#define PP_SIZE_ALLOWED                                                        \
    "bytes from 1 to 268435456, with an optional k or m suffix (x1024)"

/* Picks the default-route partner: the first other host that is up. */
static int
pp_default_partner(colls_t *c, colls_tid_t *to)
{
    colls_hostinfo_t *h;
    int n, i, rc, me = COLLS_TID_HID(colls_mytid(c));

    rc = colls_hosts(c, &h, &n);
    if (rc < 0)
        return rc;
    *to = COLLS_DAEMON_TID(me);
    for (i = 0; i < n; i++)
        if (h[i].hid != me && h[i].state == COLLS_HOST_UP) {
            *to = COLLS_DAEMON_TID(h[i].hid);
            break;
        }
    colls_free(h);
    return 0;
}

/* One round trip of n bytes: pack, send, receive, unpack. */
static int
pp_round(colls_t *c, colls_tid_t to, int enc, int route, const void *sbuf,
         void *rbuf, size_t n)
{
    int dbl = n % 8 == 0;
    int dtype = dbl ? COLLS_DOUBLE : COLLS_BYTE;
    size_t count = dbl ? n / 8 : n;
    colls_msg_t *m = colls_msg_new(enc);
    colls_status_t st;
    int rc;

    if (m == NULL)
        return COLLS_ENOMEM;
    rc = colls_msg_set_route(m, route);
    if (rc == 0)
        rc = colls_pack(m, dtype, sbuf, count);
    if (rc == 0)
        rc = colls_msg_send(c, to, PP_TAG, m);
    colls_msg_free(m);
    if (rc < 0)
        return rc;
    rc = colls_msg_recv(c, to, PP_TAG, &m);
    if (rc < 0)
        return rc;
    rc = colls_msg_info(m, &st);
    if (rc == 0)
        rc = colls_unpack(m, dtype, rbuf, count);
    colls_msg_free(m);
    return rc;
}

static int
pingpong_exec(int argc, char **argv)
{
    static const char *const enc_names[] = {"default", "raw", "inplace"};
    colls_t *c;
    colls_tid_t to = 0;
    unsigned tid;
    size_t min = 8, max = 10485760, n, nsizes = 0, i;
    long reps = 0, hosts_hid = 0, r;
    int route = COLLS_ROUTE_DEFAULT, enc = COLLS_ENC_DEFAULT, csv = 0;
    int opt, rc = 0, have_to = 0;
    uint8_t *sbuf = NULL, *rbuf = NULL;
    double *t = NULL, sizes[64], medians[64];
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, alpha, beta, slope;
    char what[64];

    optind = 1;
    while ((opt = collsctl_getopt(argc, argv, &cmd_pingpong)) != -1) {
        switch (opt) {
        case 'r':
            if (strcmp(optarg, "default") == 0)
                route = COLLS_ROUTE_DEFAULT;
            else if (strcmp(optarg, "direct") == 0)
                route = COLLS_ROUTE_DIRECT;
            else
                return collsctl_badopt(&cmd_pingpong, opt, optarg,
                                       "default or direct");
            break;
        case 'e':
            for (enc = 0; enc < 3; enc++)
                if (strcmp(optarg, enc_names[enc]) == 0)
                    break;
            if (enc == 3)
                return collsctl_badopt(&cmd_pingpong, opt, optarg,
                                       "default, raw or inplace");
            break;
        case 't':
            if (collsctl_parse_tid(optarg, &tid) < 0)
                return collsctl_badopt(&cmd_pingpong, opt, optarg,
                                       "a task id: t<hex>, 0x<hex> or "
                                       "decimal");
            to = tid;
            have_to = 1;
            break;
        case 'H':
            if (collsctl_opt_long(&cmd_pingpong, opt, optarg, 1, 4095,
                                  &hosts_hid) != 0)
                return COLLSCTL_USAGE;
            to = COLLS_DAEMON_TID(hosts_hid);
            have_to = 1;
            break;
        case 'm':
            if (collsctl_parse_size(optarg, NULL, PP_SIZE_MAX, &min) < 0 ||
                min == 0)
                return collsctl_badopt(&cmd_pingpong, opt, optarg,
                                       PP_SIZE_ALLOWED);
            break;
        case 'M':
            if (collsctl_parse_size(optarg, NULL, PP_SIZE_MAX, &max) < 0 ||
                max == 0)
                return collsctl_badopt(&cmd_pingpong, opt, optarg,
                                       PP_SIZE_ALLOWED);
            break;
        case 'n':
            if (collsctl_opt_long(&cmd_pingpong, opt, optarg, 1, 1000000,
                                  &reps) != 0)
                return COLLSCTL_USAGE;
            break;
        case 'c':
            csv = 1;
            break;
        default:
            return collsctl_usage(&cmd_pingpong);
        }
    }
    if (optind != argc)
        return collsctl_usage(&cmd_pingpong);
    if (max < min) {
        fprintf(stderr,
                "collsctl pingpong: --max %zu is below --min %zu bytes\n", max,
                min);
        return COLLSCTL_USAGE;
    }
    if (route == COLLS_ROUTE_DIRECT && !have_to) {
        fprintf(stderr, "collsctl pingpong: the direct route needs --to TID "
                        "of a `collsctl echo` task\n");
        return 2;
    }
    if (collsctl_attach(&c) < 0)
        return 1;
    if (!have_to) {
        rc = pp_default_partner(c, &to);
        if (rc < 0)
            goto out;
    }
    sbuf = malloc(max);
    rbuf = malloc(max);
    t = calloc(reps > 0 ? (size_t)reps : 200, sizeof(*t));
    if (sbuf == NULL || rbuf == NULL || t == NULL) {
        rc = COLLS_ENOMEM;
        goto out;
    }
    for (i = 0; i + 8 <= max; i += 8) {
        double v = (double)i * 0.5 + 1.0 / 3.0;
        memcpy(sbuf + i, &v, 8);
    }
    for (; i < max; i++)
        sbuf[i] = (uint8_t)i;
    if (csv)
        printf("bytes,half_rtt_us,mb_per_s\n");
    else
        printf("pingpong t%x -> t%x, route %s, encoding %s\n%12s %14s "
               "%10s\n",
               (unsigned)colls_mytid(c), (unsigned)to,
               route == COLLS_ROUTE_DIRECT ? "direct" : "default",
               enc_names[enc], "bytes", "half-rtt(us)", "MB/s");
    for (n = min;; n = n * 2 > max && n < max ? max : n * 2) {
        long nreps = reps;
        if (nreps == 0) {
            nreps = (long)((64u << 20) / n);
            nreps = nreps < 5 ? 5 : nreps > 200 ? 200 : nreps;
        }
        snprintf(what, sizeof(what), "%zu bytes, %ld round trips", n, nreps);
        collsctl_progress("pingpong", what);
        /* warm-up round, checked byte for byte */
        memset(rbuf, 0, n);
        rc = pp_round(c, to, enc, route, sbuf, rbuf, n);
        if (rc == 0 && memcmp(sbuf, rbuf, n) != 0) {
            collsctl_progress("pingpong", NULL);
            fprintf(stderr,
                    "collsctl pingpong: %zu bytes came back "
                    "different\n",
                    n);
            rc = COLLS_EBADMSG;
        }
        if (rc < 0)
            goto out;
        for (r = 0; r < nreps; r++) {
            double t0 = collsctl_now_us();
            rc = pp_round(c, to, enc, route, sbuf, rbuf, n);
            if (rc < 0)
                goto out;
            t[r] = (collsctl_now_us() - t0) / 2;
        }
        medians[nsizes] = collsctl_median(t, (int)nreps);
        sizes[nsizes] = (double)n;
        collsctl_progress("pingpong", NULL);
        if (csv)
            printf("%zu,%.2f,%.2f\n", n, medians[nsizes],
                   (double)n / medians[nsizes]);
        else
            printf("%12zu %14.2f %10.2f\n", n, medians[nsizes],
                   (double)n / medians[nsizes]);
        fflush(stdout);
        nsizes++;
        if (n >= max || nsizes == 64)
            break;
    }
    /* Weighted least squares, weights 1/t^2: minimises relative errors,
       so the small sizes fix alpha and the large ones beta. */
    for (i = 0; i < nsizes; i++) {
        double w = 1.0 / (medians[i] * medians[i]);
        sw += w;
        sx += w * sizes[i];
        sy += w * medians[i];
        sxx += w * sizes[i] * sizes[i];
        sxy += w * sizes[i] * medians[i];
    }
    if (nsizes >= 2 && sw * sxx - sx * sx > 0) {
        slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
        alpha = (sy - slope * sx) / sw;
        beta = slope > 0 ? 1.0 / slope : INFINITY;
        if (csv)
            printf("# fit t(n) = alpha + n/beta: alpha_us=%.2f "
                   "beta_mb_per_s=%.1f\n",
                   alpha, beta);
        else
            printf("fit t(n) = alpha + n/beta: alpha = %.2f us, "
                   "beta = %.1f MB/s\n",
                   alpha, beta);
    }
    if (route == COLLS_ROUTE_DIRECT && colls_route_fallbacks(c) > 0)
        printf("%s%llu messages fell back to the default route (peer "
               "unreachable directly)\n",
               csv ? "# " : "", (unsigned long long)colls_route_fallbacks(c));
out:
    if (rc < 0) {
        collsctl_progress("pingpong", NULL);
        fprintf(stderr, "collsctl pingpong: %s\n", colls_strerror(rc));
    }
    free(sbuf);
    free(rbuf);
    free(t);
    colls_detach(c);
    return rc < 0 ? 1 : 0;
}

static int
echo_exec(int argc, char **argv)
{
    colls_t *c;
    colls_msg_t *m;
    colls_status_t st;
    long count = -1, done = 0;
    int opt, rc = 0;

    optind = 1;
    while ((opt = collsctl_getopt(argc, argv, &cmd_echo)) != -1) {
        if (opt != 'n')
            return collsctl_usage(&cmd_echo);
        if (collsctl_opt_long(&cmd_echo, opt, optarg, 1, 1000000000, &count) !=
            0)
            return COLLSCTL_USAGE;
    }
    if (optind != argc)
        return collsctl_usage(&cmd_echo);
    unsetenv("COLLS_ADMIN");
    if (collsctl_attach(&c) < 0)
        return 1;
    printf("t%x\n", (unsigned)colls_mytid(c));
    fflush(stdout);
    while (count < 0 || done < count) {
        rc = colls_msg_recv(c, COLLS_ANY, COLLS_ANY, &m);
        if (rc < 0)
            break;
        colls_msg_info(m, &st);
        /* never answer a daemon: its echo would come back forever */
        if (COLLS_TID_LOCAL(st.source) != 0) {
            rc = colls_msg_send(c, st.source, st.tag, m);
            if (rc < 0)
                fprintf(stderr, "collsctl echo: to t%x: %s\n",
                        (unsigned)st.source, colls_strerror(rc));
            done++;
        }
        colls_msg_free(m);
    }
    if (rc < 0 && rc != COLLS_ESHUTDOWN)
        fprintf(stderr, "collsctl echo: %s\n", colls_strerror(rc));
    colls_detach(c);
    return rc < 0 && rc != COLLS_ESHUTDOWN ? 1 : 0;
}

static const struct collsctl_opt pingpong_opts[] = {
    {"route", 'r', 0, "ROUTE",
     "default (through the daemons) or direct (task to task over TCP; "
     "needs --to); default: default",
     "default direct"},
    {"enc", 'e', 0, "ENC",
     "encoding of the messages: default (XDR), raw or inplace; default: "
     "default",
     "default raw inplace"},
    {"to", 't', 0, "TID",
     "the partner task (t<hex>, 0x<hex> or decimal), e.g. a `collsctl "
     "echo`, or a daemon's tid"},
    {"host", 'H', 0, "HID",
     "the partner is the built-in echo of host HID's daemon (default: the "
     "first other host that is up, else this daemon)"},
    {"min", 'm', 0, "BYTES",
     "smallest message (default 8; k and m suffixes, x1024)"},
    {"max", 'M', 0, "BYTES",
     "largest message, at most 256m (default 10485760); sizes double from "
     "--min to --max"},
    {"reps", 'n', 0, "N",
     "round trips per size, 1 to 1000000 (default: 64 MiB worth, 5 to 200)"},
    {"csv", 'c', 0, NULL,
     "print comma-separated values (bytes,half_rtt_us,mb_per_s)"},
    {NULL, 0, 0, NULL, NULL},
};

const struct collsctl_cmd cmd_pingpong = {
    .name = "pingpong",
    .args = "",
    .help = "task-level half round trip per size, fit alpha + n/beta",
    .detail = "Per size, the median half round trip of the repetitions (the "
              "first one checks the echoed bytes), then a least-squares fit "
              "of t(n) = alpha + n/beta weighted by 1/t^2.  With stderr on a "
              "terminal a progress line shows the size being measured.",
    .opts = pingpong_opts,
    .needs_daemon = 1,
    .exec = pingpong_exec,
};

static const struct collsctl_opt echo_opts[] = {
    {"count", 'n', 0, "N",
     "exit after answering N messages, 1 to 1000000000 (default: run until "
     "killed or the daemon stops)"},
    {NULL, 0, 0, NULL, NULL},
};

const struct collsctl_cmd cmd_echo = {
    .name = "echo",
    .args = "",
    .help = "print own tid, echo every message back on its route",
    .detail = "A partner for `collsctl pingpong --to TID` (print the tid, "
              "then answer every message with the same tag and encoding on "
              "the route it came by).  It attaches as an ordinary task, not "
              "an admin one.",
    .opts = echo_opts,
    .needs_daemon = 1,
    .exec = echo_exec,
};
