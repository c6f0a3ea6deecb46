/*
 * errs-check.c -- one task that makes the group and collective mistakes
 * of tests/integration/coll-errors.sh and prints what the library says
 * about each, one line per step on stdout:
 *
 *   join: rank R                       or  join: ENAME: daemon's words
 *   join2: ENAME: daemon's words       (--twice: the same join again)
 *   allreduce: OK                      or  allreduce: ENAME: words
 *                                      or  allreduce: WRONG item I
 *   gather: OK                         or  gather: ENAME: words / WRONG
 *   held                               (--hold-ms: after the pause)
 *
 * ENAME is colls_err_name() of the code, the words colls_errmsg().
 *
 * usage: errs-check --socket S --group G --size N [--twice]
 *                   [--count C] [--gather] [--mode hier|flat]
 *                   [--hold-ms T] [--timeout-ms T]
 *   --count C     an allreduce of C int32 (sum) once the group formed;
 *                 rank r's item i is (r + 1)(i + 1), the result checked
 *   --gather      then a gather of C int32 a rank to rank 0, checked
 *   --mode M      the group's mode for both (colls_group_set_mode)
 *   --hold-ms T   stays a member T ms before leaving (a full group for
 *                 a third joiner to meet)
 *   --timeout-ms  for every blocking call (default 20000)
 *
 * Exits 0 when every step ran (whatever it returned), 2 on a usage error,
 * 1 when the daemon cannot be reached.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "colls.h"

/* Prints "step: rank R" / "step: OK" for rc >= 0, else the code's name
   and the daemon's words. */
static void
report(const colls_t *c, const char *step, int rc, int is_join)
{
    if (rc >= 0 && is_join)
        printf("%s: rank %d\n", step, rc);
    else if (rc >= 0)
        printf("%s: OK\n", step);
    else
        printf("%s: %s: %s\n", step, colls_err_name(rc), colls_errmsg(c));
    fflush(stdout);
}

static void
usage(void)
{
    fprintf(stderr, "usage: errs-check --socket S --group G --size N "
                    "[--twice] [--count C] [--gather] [--mode hier|flat] "
                    "[--hold-ms T] [--timeout-ms T]\n");
    exit(2);
}

int
main(int argc, char **argv)
{
    const char *sock = NULL, *group = NULL;
    long size = 0, count = -1, hold = 0, tmo = 20000;
    int twice = 0, gather = 0, mode = -1, i, rc;
    colls_group_t *g = NULL, *g2 = NULL;
    colls_t *c;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--twice") == 0) {
            twice = 1;
            continue;
        }
        if (strcmp(a, "--gather") == 0) {
            gather = 1;
            continue;
        }
        if (v == NULL)
            usage();
        i++;
        if (strcmp(a, "--socket") == 0)
            sock = v;
        else if (strcmp(a, "--group") == 0)
            group = v;
        else if (strcmp(a, "--size") == 0)
            size = strtol(v, NULL, 10);
        else if (strcmp(a, "--count") == 0)
            count = strtol(v, NULL, 10);
        else if (strcmp(a, "--mode") == 0 && strcmp(v, "hier") == 0)
            mode = COLLS_MODE_HIER;
        else if (strcmp(a, "--mode") == 0 && strcmp(v, "flat") == 0)
            mode = COLLS_MODE_FLAT;
        else if (strcmp(a, "--hold-ms") == 0)
            hold = strtol(v, NULL, 10);
        else if (strcmp(a, "--timeout-ms") == 0)
            tmo = strtol(v, NULL, 10);
        else
            usage();
    }
    if (sock == NULL || group == NULL || size < 1 || count > 1 << 20)
        usage();
    rc = colls_attach(sock, &c);
    if (rc < 0) {
        fprintf(stderr, "errs-check: attach %s: %s\n", sock,
                colls_strerror(rc));
        return 1;
    }
    colls_set_timeout(c, (int)tmo);
    rc = colls_group_join(c, group, (int)size, &g);
    report(c, "join", rc, 1);
    if (twice) {
        rc = colls_group_join(c, group, (int)size, &g2);
        report(c, "join2", rc, 1);
    }
    if (g != NULL && mode >= 0 && colls_group_set_mode(g, mode) != 0)
        return 1;
    if (g != NULL && count >= 0) {
        size_t n = (size_t)count, j, k, bad = SIZE_MAX;
        long r = colls_group_rank(g);
        uint32_t *in = calloc(n + 1, sizeof(uint32_t));
        uint32_t *out = calloc(n * (size_t)size + 1, sizeof(uint32_t));

        if (in == NULL || out == NULL)
            return 1;
        for (j = 0; j < n; j++)
            in[j] = (uint32_t)(r + 1) * (uint32_t)(j + 1);
        rc = colls_allreduce(g, in, out, n, COLLS_INT32, COLLS_SUM);
        /* the sum over ranks of (r + 1)(j + 1), wrapping like int32 */
        for (j = 0; rc == 0 && j < n && bad == SIZE_MAX; j++)
            if (out[j] != (uint32_t)(size * (size + 1) / 2) * (uint32_t)(j + 1))
                bad = j;
        if (bad != SIZE_MAX)
            printf("allreduce: WRONG item %zu\n", bad);
        else
            report(c, "allreduce", rc, 0);
        if (gather) {
            bad = SIZE_MAX;
            memset(out, 0, n * (size_t)size * sizeof(uint32_t));
            rc = colls_gather(g, in, out, n, COLLS_INT32, 0);
            for (k = 0; rc == 0 && r == 0 && k < (size_t)size; k++)
                for (j = 0; j < n && bad == SIZE_MAX; j++)
                    if (out[k * n + j] != (uint32_t)(k + 1) * (uint32_t)(j + 1))
                        bad = k * n + j;
            if (bad != SIZE_MAX)
                printf("gather: WRONG item %zu\n", bad);
            else
                report(c, "gather", rc, 0);
        }
        fflush(stdout);
        free(in);
        free(out);
    }
    if (hold > 0) {
        struct timespec ts = {hold / 1000, (hold % 1000) * 1000000L};

        nanosleep(&ts, NULL);
        printf("held\n");
        fflush(stdout);
    }
    if (g2 != NULL)
        colls_group_leave(g2);
    if (g != NULL)
        colls_group_leave(g);
    colls_detach(c);
    return 0;
}
