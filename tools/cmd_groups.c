/*
 * cmd_groups.c -- `collsctl groups [--json]`: the groups this daemon holds,
 * from the `groups` array of its statistics JSON (docs/collectives.md,
 * "Statistics"): one row per group with name, gid, size, members here,
 * state and collectives run, then any other scalar keys the daemon adds.
 * --json prints the array as the daemon sent it.
 *
 * The scanner below reads only what it needs: it finds the top-level key
 * "groups", then walks the array's flat objects; nested values are
 * skipped, so a richer document still renders.
 */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "tools/collsctl.h"

#define GROUPS_MAX_KEYS 16
#define GROUPS_FIELD    64

/* One group: key/value pairs in document order (values as text). */
struct grow {
    int n;
    char key[GROUPS_MAX_KEYS][GROUPS_FIELD];
    char val[GROUPS_MAX_KEYS][GROUPS_FIELD];
};

static const char *
gws(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/*
 * Skips one JSON value at p; copies a scalar's text (strings unquoted,
 * escapes kept as the character after the backslash) into out if not
 * NULL.  Returns the position after the value, or NULL if malformed.
 */
static const char *
gskip(const char *p, char *out, size_t cap)
{
    size_t o = 0;
    int depth = 0;

    p = gws(p);
    if (*p == '"') {
        for (p++; *p != '"'; p++) {
            if (*p == '\0')
                return NULL;
            if (*p == '\\' && *++p == '\0')
                return NULL;
            if (out != NULL && o + 1 < cap)
                out[o++] = *p;
        }
        if (out != NULL)
            out[o] = '\0';
        return p + 1;
    }
    if (*p == '{' || *p == '[') {
        do {
            if (*p == '\0')
                return NULL;
            if (*p == '"') {
                p = gskip(p, NULL, 0);
                if (p == NULL)
                    return NULL;
                continue;
            }
            if (*p == '{' || *p == '[')
                depth++;
            else if (*p == '}' || *p == ']')
                depth--;
            p++;
        } while (depth > 0);
        if (out != NULL && cap > 0)
            snprintf(out, cap, "...");
        return p;
    }
    while (*p != '\0' && *p != ',' && *p != '}' && *p != ']' &&
           !isspace((unsigned char)*p)) {
        if (out != NULL && o + 1 < cap)
            out[o++] = *p;
        p++;
    }
    if (out != NULL)
        out[o] = '\0';
    return o > 0 || out == NULL ? p : NULL;
}

/*
 * Reads the next member's key of an object at p (after its '{' or after
 * a member and its ','): copies the key into k and returns the position
 * of its value.  At the object's end sets *end and returns the position
 * after the '}'.  NULL if malformed.
 */
static const char *
gkey(const char *p, char *k, size_t cap, int *end)
{
    p = gws(p);
    *end = *p == '}';
    if (*end)
        return p + 1;
    p = gskip(p, k, cap);
    if (p == NULL)
        return NULL;
    p = gws(p);
    return *p == ':' ? p + 1 : NULL;
}

/* Past the ',' after a member's value at p, if there is one. */
static const char *
gnext(const char *p)
{
    p = gws(p);
    return *p == ',' ? p + 1 : p;
}

/*
 * Finds the value of the top-level key in the object at doc; returns a
 * pointer to it or NULL.
 */
static const char *
gfind(const char *doc, const char *key)
{
    char k[GROUPS_FIELD];
    const char *p = gws(doc);

    if (*p++ != '{')
        return NULL;
    for (;;) {
        int end;
        p = gkey(p, k, sizeof(k), &end);
        if (p == NULL || end)
            return NULL;
        if (strcmp(k, key) == 0)
            return gws(p);
        p = gskip(p, NULL, 0);
        if (p == NULL)
            return NULL;
        p = gnext(p);
    }
}

/* Reads one flat object at p into r; returns the position after it. */
static const char *
gobject(const char *p, struct grow *r)
{
    p = gws(p);
    r->n = 0;
    if (*p++ != '{')
        return NULL;
    for (;;) {
        char k[GROUPS_FIELD], v[GROUPS_FIELD];
        int end;
        p = gkey(p, k, sizeof(k), &end);
        if (p == NULL || end)
            return p;
        p = gskip(p, v, sizeof(v));
        if (p == NULL)
            return NULL;
        if (r->n < GROUPS_MAX_KEYS) {
            memcpy(r->key[r->n], k, sizeof(k));
            memcpy(r->val[r->n], v, sizeof(v));
            r->n++;
        }
        p = gnext(p);
    }
}

static const char *
gget(const struct grow *r, const char *key)
{
    int i;

    for (i = 0; i < r->n; i++)
        if (strcmp(r->key[i], key) == 0)
            return r->val[i];
    return "-";
}

/* 1 if key is one of the standard columns. */
static int
gstandard(const char *key)
{
    static const char *const std[] = {"name",  "gid",   "size",
                                      "local", "state", "collectives"};
    size_t i;

    for (i = 0; i < sizeof(std) / sizeof(std[0]); i++)
        if (strcmp(key, std[i]) == 0)
            return 1;
    return 0;
}

/* Prints the rows of the array at p; returns 0 or -1 if malformed. */
static int
gprint(const char *p)
{
    struct grow r;
    int n = 0, i;

    p = gws(p);
    if (*p++ != '[')
        return -1;
    for (;;) {
        p = gws(p);
        if (*p == ']')
            break;
        p = gobject(p, &r);
        if (p == NULL)
            return -1;
        if (n++ == 0)
            printf("%-20s %-18s %5s %5s %-8s %8s\n", "NAME", "GID", "SIZE",
                   "LOCAL", "STATE", "COLLS");
        printf("%-20s %-18s %5s %5s %-8s %8s", gget(&r, "name"),
               gget(&r, "gid"), gget(&r, "size"), gget(&r, "local"),
               gget(&r, "state"), gget(&r, "collectives"));
        for (i = 0; i < r.n; i++)
            if (!gstandard(r.key[i]))
                printf(" %s=%s", r.key[i], r.val[i]);
        printf("\n");
        p = gws(p);
        if (*p == ',')
            p++;
    }
    if (n == 0)
        printf("no groups\n");
    return 0;
}

static int
groups_exec(int argc, char **argv)
{
    colls_t *c;
    char *json = NULL;
    const char *arr, *end;
    int json_out = 0, rc, opt;

    optind = 1;
    while ((opt = collsctl_getopt(argc, argv, &cmd_groups)) != -1) {
        if (opt != 'j')
            return collsctl_usage(&cmd_groups);
        json_out = 1;
    }
    if (optind != argc)
        return collsctl_usage(&cmd_groups);
    if (collsctl_attach(&c) < 0)
        return 1;
    rc = colls_stats_json(c, &json);
    colls_detach(c);
    if (rc < 0) {
        fprintf(stderr, "collsctl groups: %s\n", colls_strerror(rc));
        return 1;
    }
    arr = gfind(json, "groups");
    if (arr == NULL) {
        fprintf(stderr, "collsctl groups: the daemon reports no groups "
                        "array\n");
        colls_free(json);
        return 1;
    }
    rc = 0;
    if (json_out) {
        end = gskip(arr, NULL, 0);
        if (end == NULL)
            rc = -1;
        else
            printf("%.*s\n", (int)(end - arr), arr);
    } else {
        rc = gprint(arr);
    }
    if (rc < 0)
        fprintf(stderr, "collsctl groups: malformed groups array\n");
    colls_free(json);
    return rc < 0 ? 1 : 0;
}

static const struct collsctl_opt groups_opts[] = {
    {"json", 'j', COLLSCTL_OPT_SHORT, NULL,
     "print the groups as a JSON array, as the daemon reports them"},
    {NULL, 0, 0, NULL, NULL},
};

const struct collsctl_cmd cmd_groups = {
    .name = "groups",
    .args = "",
    .help = "groups this daemon holds (name, gid, size, members, state)",
    .detail = "One row per group this daemon holds: NAME, GID, SIZE (the "
              "size it was formed with), LOCAL (members attached here), "
              "STATE and COLLS (collectives run), then any other field the "
              "daemon reports as name=value.",
    .opts = groups_opts,
    .needs_daemon = 1,
    .exec = groups_exec,
};
