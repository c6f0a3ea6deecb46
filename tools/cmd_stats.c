/*
 * cmd_stats.c -- `collsctl stats [--json] [--watch SECONDS]`: the daemon's
 * statistics.  --json prints the document as the daemon sent it; otherwise
 * each top-level section is rendered by its shape, so every counter the
 * daemon reports is shown whatever its layout: an object of counters as
 * name/value pairs, an object of objects (histograms) one line each with
 * their scalars, an array of objects (peers, tasks) as a table with one
 * row per field and one column per element.  --watch prints again every
 * SECONDS: on a terminal it redraws the screen, elsewhere (a pipe, a
 * file) it writes no terminal codes and separates the snapshots by a
 * blank line.
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
#define STATS_COLS      3 /* elements side by side in a transposed table */

enum { J_SCALAR, J_ARRAY, J_OBJECT };

/* A parsed JSON value; scalars keep their text (strings unescaped). */
struct jnode {
    int type;
    char *key;          /* member name inside an object, else NULL */
    char *text;         /* J_SCALAR */
    struct jnode **kid; /* J_ARRAY, J_OBJECT */
    size_t n, cap;
};

static void
jfree(struct jnode *j)
{
    size_t i;

    if (j == NULL)
        return;
    for (i = 0; i < j->n; i++)
        jfree(j->kid[i]);
    free(j->kid);
    free(j->key);
    free(j->text);
    free(j);
}

static void
jws(const char **p)
{
    while (isspace((unsigned char)**p))
        (*p)++;
}

/* A JSON string at *p, unescaped into a new allocation; NULL if bad. */
static char *
jstring(const char **p)
{
    const char *q = *p;
    char *out, *o;

    if (*q != '"')
        return NULL;
    out = malloc(strlen(q) + 1);
    if (out == NULL)
        return NULL;
    o = out;
    for (q++; *q != '"'; q++) {
        if (*q == '\0')
            goto bad;
        if (*q != '\\') {
            *o++ = *q;
            continue;
        }
        q++;
        switch (*q) {
        case 'n':
        case 't':
        case 'r':
            *o++ = ' ';
            break;
        case 'u':
            if (strlen(q) < 5)
                goto bad;
            *o++ = '?';
            q += 4;
            break;
        case '\0':
            goto bad;
        default:
            *o++ = *q;
            break;
        }
    }
    *o = '\0';
    *p = q + 1;
    return out;
bad:
    free(out);
    return NULL;
}

static int
jadd(struct jnode *parent, struct jnode *kid)
{
    if (parent->n == parent->cap) {
        size_t ncap = parent->cap ? parent->cap * 2 : 8;
        struct jnode **nk = realloc(parent->kid, ncap * sizeof(*nk));
        if (nk == NULL)
            return -1;
        parent->kid = nk;
        parent->cap = ncap;
    }
    parent->kid[parent->n++] = kid;
    return 0;
}

/* Parses one value at *p; NULL on malformed input or out of memory. */
static struct jnode *
jparse(const char **p, int depth)
{
    struct jnode *j = calloc(1, sizeof(*j)), *kid;
    char close;
    char *key = NULL;

    if (j == NULL || depth > STATS_MAX_DEPTH)
        goto bad;
    jws(p);
    if (**p == '{' || **p == '[') {
        j->type = **p == '{' ? J_OBJECT : J_ARRAY;
        close = **p == '{' ? '}' : ']';
        (*p)++;
        jws(p);
        if (**p == close) {
            (*p)++;
            return j;
        }
        for (;;) {
            jws(p);
            if (j->type == J_OBJECT) {
                key = jstring(p);
                jws(p);
                if (key == NULL || **p != ':')
                    goto bad;
                (*p)++;
            }
            kid = jparse(p, depth + 1);
            if (kid == NULL)
                goto bad;
            kid->key = key;
            key = NULL;
            if (jadd(j, kid) < 0) {
                jfree(kid);
                goto bad;
            }
            jws(p);
            if (**p == ',') {
                (*p)++;
                continue;
            }
            if (**p != close)
                goto bad;
            (*p)++;
            return j;
        }
    }
    j->type = J_SCALAR;
    if (**p == '"') {
        j->text = jstring(p);
    } else {
        const char *start = *p;
        while (**p && strchr("+-.0123456789eEtruefalsn", **p))
            (*p)++;
        if (*p == start)
            goto bad;
        j->text = strndup(start, (size_t)(*p - start));
    }
    if (j->text == NULL)
        goto bad;
    return j;
bad:
    free(key);
    jfree(j);
    return NULL;
}

/* 1 if every child of j is a scalar. */
static int
jflat(const struct jnode *j)
{
    size_t i;

    for (i = 0; i < j->n; i++)
        if (j->kid[i]->type != J_SCALAR)
            return 0;
    return 1;
}

/* Object of scalars: name/value pairs, two to a line. */
static void
stats_pairs(const struct jnode *j)
{
    size_t i;

    for (i = 0; i < j->n; i++)
        printf("%s  %-22s %14s%s", i % 2 ? "  " : "", j->kid[i]->key,
               j->kid[i]->text, i % 2 || i + 1 == j->n ? "\n" : "");
}

/* One line of name=value for the scalars of j (arrays are left out). */
static void
stats_inline(const struct jnode *j)
{
    size_t i;

    for (i = 0; i < j->n; i++)
        if (j->kid[i]->type == J_SCALAR && j->kid[i]->key != NULL)
            printf(" %s=%s", j->kid[i]->key, j->kid[i]->text);
    printf("\n");
}

/* The text of scalar member key of object j, or NULL. */
static const char *
jget(const struct jnode *j, const char *key)
{
    size_t i;

    for (i = 0; j->type == J_OBJECT && i < j->n; i++)
        if (j->kid[i]->type == J_SCALAR && j->kid[i]->key != NULL &&
            strcmp(j->kid[i]->key, key) == 0)
            return j->kid[i]->text;
    return NULL;
}

/* Is j a histogram (stats_json_hist: count, p50, p99, ...)? */
static int
jhist(const struct jnode *j)
{
    return j->type == J_OBJECT && jget(j, "p50") != NULL &&
           jget(j, "p99") != NULL;
}

/* Array of objects: one row per field, one column per element; a
   histogram field is one row "NAME p50/p99". */
static void
stats_transposed(const struct jnode *j)
{
    size_t from, i, e;

    for (from = 0; from < j->n; from += STATS_COLS) {
        const struct jnode *first = j->kid[from];
        if (first->type != J_OBJECT)
            continue;
        for (i = 0; i < first->n; i++) {
            const struct jnode *f = first->kid[i];
            char name[64];

            if (f->type != J_SCALAR && !jhist(f))
                continue;
            snprintf(name, sizeof(name), "%s%s", f->key,
                     f->type == J_SCALAR ? "" : " p50/p99");
            printf("  %-20s", name);
            for (e = from; e < j->n && e < from + STATS_COLS; e++) {
                const struct jnode *el = j->kid[e];
                char v[64] = "-";

                if (el->type == J_OBJECT && i < el->n &&
                    el->kid[i]->type == J_SCALAR)
                    snprintf(v, sizeof(v), "%s", el->kid[i]->text);
                else if (el->type == J_OBJECT && i < el->n && jhist(el->kid[i]))
                    snprintf(v, sizeof(v), "%s/%s", jget(el->kid[i], "p50"),
                             jget(el->kid[i], "p99"));
                printf(" %18.18s", v);
            }
            printf("\n");
        }
        if (from + STATS_COLS < j->n)
            printf("\n");
    }
}

/* Renders the document section by section; raw text if not JSON. */
static void
stats_table(const char *json)
{
    const char *p = json;
    struct jnode *root = jparse(&p, 0);
    size_t i, k;

    if (root == NULL || root->type != J_OBJECT) {
        printf("%s\n", json);
        jfree(root);
        return;
    }
    for (i = 0; i < root->n; i++) {
        const struct jnode *v = root->kid[i];
        switch (v->type) {
        case J_SCALAR:
            printf("%-24s %s\n", v->key, v->text);
            break;
        case J_OBJECT:
            printf("%s\n", v->key);
            if (jflat(v)) {
                stats_pairs(v);
                break;
            }
            for (k = 0; k < v->n; k++) {
                const struct jnode *x = v->kid[k];
                printf("  %-20s", x->key);
                if (x->type == J_SCALAR)
                    printf(" %s\n", x->text);
                else
                    stats_inline(x);
            }
            break;
        default:
            printf("%s (%zu)\n", v->key, v->n);
            if (jflat(v)) {
                for (k = 0; k < v->n; k++)
                    printf(" %s", v->kid[k]->text);
                printf("\n");
            } else {
                stats_transposed(v);
            }
            break;
        }
    }
    jfree(root);
}

static int
stats_exec(int argc, char **argv)
{
    colls_t *c;
    char *json;
    int raw = 0, opt, rc, first = 1, tty = isatty(STDOUT_FILENO);
    long watch = 0;

    optind = 1;
    while ((opt = collsctl_getopt(argc, argv, &cmd_stats)) != -1) {
        switch (opt) {
        case 'j':
            raw = 1;
            break;
        case 'w':
            if (collsctl_opt_long(&cmd_stats, opt, optarg, 1, 86400, &watch) !=
                0)
                return COLLSCTL_USAGE;
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
        /* redraw a terminal (cursor home, clear); into a pipe or file the
           snapshots follow each other, a blank line apart */
        if (watch > 0 && !raw && tty)
            printf("\033[H\033[2J");
        else if (watch > 0 && !first)
            printf("\n");
        first = 0;
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

static const struct collsctl_opt stats_opts[] = {
    {"json", 'j', COLLSCTL_OPT_SHORT, NULL,
     "print the daemon's statistics document (JSON) as it sent it"},
    {"watch", 'w', COLLSCTL_OPT_SHORT, "SECONDS",
     "print again every SECONDS (1 to 86400) until interrupted; on a "
     "terminal the screen is redrawn"},
    {NULL, 0, 0, NULL, NULL},
};

const struct collsctl_cmd cmd_stats = {
    .name = "stats",
    .args = "",
    .help = "the daemon's counters as a table (--json: the raw document)",
    .detail = "Counters of the transport (datagrams, retransmits, drops), "
              "per-peer RTT, tasks, per-operation latency histograms, "
              "algorithm choices and compression ratios, as the daemon's "
              "/stats.json serves them (collsd --http).",
    .opts = stats_opts,
    .needs_daemon = 1,
    .exec = stats_exec,
};
