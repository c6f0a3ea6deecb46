/*
 * cmd_stats.c -- `collsctl stats [--json] [--watch SECONDS]`: the daemon's
 * statistics.  --json prints the document as the daemon sent it; otherwise
 * it is flattened into a two-column table, one row per counter, named by
 * its path in the document (peers.2.rtt_us), so every counter the daemon
 * reports is shown whatever its layout.  --watch redraws every SECONDS.
 */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "colls.h"
#include "tools/collsctl.h"

#define STATS_MAX_DEPTH 32
#define STATS_PATH_MAX 256

struct stats_parser {
    const char *p;
    char path[STATS_PATH_MAX];
    int depth;
    int rows;
};

static void
stats_ws(struct stats_parser *sp)
{
    while (isspace((unsigned char)*sp->p))
        sp->p++;
}

/* Reads a JSON string at sp->p into out (truncated to cap).  0 or -1. */
static int
stats_string(struct stats_parser *sp, char *out, size_t cap)
{
    size_t n = 0;

    if (*sp->p != '"')
        return -1;
    sp->p++;
    while (*sp->p != '"') {
        char ch = *sp->p;
        if (ch == '\0')
            return -1;
        if (ch == '\\') {
            sp->p++;
            switch (*sp->p) {
            case 'n':
                ch = ' ';
                break;
            case 't':
                ch = ' ';
                break;
            case 'u':
                ch = '?';
                if (strlen(sp->p) < 5)
                    return -1;
                sp->p += 4;
                break;
            case '\0':
                return -1;
            default:
                ch = *sp->p;
                break;
            }
        }
        if (n + 1 < cap)
            out[n++] = ch;
        sp->p++;
    }
    sp->p++;
    if (cap > 0)
        out[n] = '\0';
    return 0;
}

static int stats_value(struct stats_parser *sp);

/* Extends the path with key for the duration of one value. */
static int
stats_child(struct stats_parser *sp, const char *key)
{
    size_t old = strlen(sp->path);
    int rc;

    if (old > 0 && old + 1 < sizeof(sp->path))
        strcat(sp->path, ".");
    strncat(sp->path, key, sizeof(sp->path) - strlen(sp->path) - 1);
    rc = stats_value(sp);
    sp->path[old] = '\0';
    return rc;
}

/* Prints one leaf row. */
static void
stats_row(struct stats_parser *sp, const char *val, size_t len)
{
    printf("  %-48s %.*s\n", sp->path[0] ? sp->path : "(value)", (int)len,
           val);
    sp->rows++;
}

/* Parses one JSON value at sp->p, printing its leaves.  0 or -1. */
static int
stats_value(struct stats_parser *sp)
{
    char key[128];
    int idx = 0;

    stats_ws(sp);
    if (++sp->depth > STATS_MAX_DEPTH)
        return -1;
    if (*sp->p == '{') {
        sp->p++;
        stats_ws(sp);
        if (*sp->p == '}') {
            sp->p++;
            goto done;
        }
        for (;;) {
            stats_ws(sp);
            if (stats_string(sp, key, sizeof(key)) < 0)
                return -1;
            stats_ws(sp);
            if (*sp->p++ != ':')
                return -1;
            if (stats_child(sp, key) < 0)
                return -1;
            stats_ws(sp);
            if (*sp->p == ',') {
                sp->p++;
                continue;
            }
            if (*sp->p++ != '}')
                return -1;
            goto done;
        }
    }
    if (*sp->p == '[') {
        sp->p++;
        stats_ws(sp);
        if (*sp->p == ']') {
            sp->p++;
            goto done;
        }
        for (;;) {
            snprintf(key, sizeof(key), "%d", idx++);
            if (stats_child(sp, key) < 0)
                return -1;
            stats_ws(sp);
            if (*sp->p == ',') {
                sp->p++;
                continue;
            }
            if (*sp->p++ != ']')
                return -1;
            goto done;
        }
    }
    if (*sp->p == '"') {
        char val[256];
        if (stats_string(sp, val, sizeof(val)) < 0)
            return -1;
        stats_row(sp, val, strlen(val));
        goto done;
    }
    {
        const char *start = sp->p;
        while (*sp->p && strchr("+-.0123456789eEtruefalsn", *sp->p))
            sp->p++;
        if (sp->p == start)
            return -1;
        stats_row(sp, start, (size_t)(sp->p - start));
    }
done:
    sp->depth--;
    return 0;
}

/* Prints json as a table; falls back to the raw text if it is not JSON. */
static void
stats_table(const char *json)
{
    struct stats_parser sp;

    memset(&sp, 0, sizeof(sp));
    sp.p = json;
    printf("  %-48s %s\n", "COUNTER", "VALUE");
    if (stats_value(&sp) < 0) {
        printf("(the daemon's statistics are not valid JSON; raw text:)\n%s\n",
               json);
        return;
    }
}

static int
stats_exec(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"watch", required_argument, NULL, 'w'},
        {NULL, 0, NULL, 0}};
    colls_t *c;
    char *json, *end;
    int raw = 0, opt, rc;
    long watch = 0;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "jw:", opts, NULL)) != -1) {
        switch (opt) {
        case 'j':
            raw = 1;
            break;
        case 'w':
            watch = strtol(optarg, &end, 10);
            if (*end != '\0' || watch <= 0 || watch > 86400)
                return collsctl_usage(&cmd_stats);
            break;
        default:
            return collsctl_usage(&cmd_stats);
        }
    }
    if (optind != argc)
        return collsctl_usage(&cmd_stats);
    if (collsctl_attach(&c) < 0)
        return 1;
    for (;;) {
        rc = colls_stats_json(c, &json);
        if (rc < 0) {
            fprintf(stderr, "collsctl stats: %s\n", colls_strerror(rc));
            colls_detach(c);
            return 1;
        }
        if (watch > 0 && !raw)
            printf("\033[H\033[2J");
        if (raw)
            printf("%s\n", json);
        else
            stats_table(json);
        fflush(stdout);
        colls_free(json);
        if (watch == 0)
            break;
        sleep((unsigned)watch);
    }
    colls_detach(c);
    return 0;
}

const struct collsctl_cmd cmd_stats = {
    .name = "stats",
    .usage = "[--json] [--watch SECONDS]",
    .help = "the daemon's counters as a table (--json: the raw document)",
    .needs_daemon = 1,
    .exec = stats_exec,
};
