/*
 * stats.c -- log2 histograms, the JSON writer used by STATS_REP and the
 * HTTP metrics page, and the Prometheus text writers (names, HELP and
 * TYPE lines, base units: docs/service.md "Metrics").
 *
 * Owns nothing but the histograms it is given.  May call: proto/buf.h and
 * libc; every layer may call it.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "colls.h"
#include "daemon/stats.h"

unsigned
stats_hist_bucket(uint64_t v)
{
    return v == 0 ? 0 : 64u - (unsigned)__builtin_clzll(v);
}

void
stats_hist_add(struct stats_hist *h, uint64_t v)
{
    if (h->count == 0 || v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
    h->count++;
    h->sum += v;
    h->bucket[stats_hist_bucket(v)]++;
}

uint64_t
stats_hist_quantile(const struct stats_hist *h, double q)
{
    uint64_t need, seen = 0;
    unsigned b;

    if (h->count == 0)
        return 0;
    need = (uint64_t)ceil(q * (double)h->count);
    if (need == 0)
        need = 1;
    for (b = 0; b < STATS_HIST_BUCKETS; b++) {
        seen += h->bucket[b];
        if (seen >= need) {
            /* The bucket's upper bound, but never outside what was seen. */
            uint64_t v = b == 0 ? 0 : b >= 64 ? UINT64_MAX : (1ull << b) - 1;
            return v < h->min ? h->min : v > h->max ? h->max : v;
        }
    }
    return h->max;
}

/* Appends raw text, remembering the first failure. */
static void
json_raw(struct stats_json *j, const char *s, size_t n)
{
    if (j->err == 0)
        j->err = buf_append(j->b, s, n);
}

/* Writes a quoted, escaped string. */
static void
json_quoted(struct stats_json *j, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    char esc[6];

    json_raw(j, "\"", 1);
    for (; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            json_raw(j, esc, 2);
        } else if (*p < 0x20 || *p == 0x7f) {
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[*p >> 4];
            esc[5] = hex[*p & 15];
            json_raw(j, esc, 6);
        } else {
            json_raw(j, (const char *)p, 1);
        }
    }
    json_raw(j, "\"", 1);
}

/* Comma and key before a value. */
static void
json_key(struct stats_json *j, const char *key)
{
    if (j->depth > 0) {
        if (!j->first[j->depth])
            json_raw(j, ",", 1);
        j->first[j->depth] = 0;
    }
    if (key != NULL) {
        json_quoted(j, key);
        json_raw(j, ":", 1);
    }
}

void
stats_json_init(struct stats_json *j, struct buf *b)
{
    memset(j, 0, sizeof(*j));
    j->b = b;
}

/* Opens "{" or "[" (br) under key, one level deeper. */
void
stats_json_open(struct stats_json *j, const char *key, const char *br)
{
    json_key(j, key);
    json_raw(j, br, 1);
    if (j->depth + 1 < STATS_JSON_DEPTH) {
        j->depth++;
        j->first[j->depth] = 1;
    } else if (j->err == 0) {
        j->err = COLLS_EINVAL;
    }
}

/* Closes the innermost object or array with br. */
void
stats_json_close(struct stats_json *j, const char *br)
{
    json_raw(j, br, 1);
    if (j->depth > 0)
        j->depth--;
}

void
stats_json_str(struct stats_json *j, const char *key, const char *v)
{
    json_key(j, key);
    json_quoted(j, v != NULL ? v : "");
}

void
stats_json_u64(struct stats_json *j, const char *key, uint64_t v)
{
    char t[24];
    int n = snprintf(t, sizeof(t), "%llu", (unsigned long long)v);

    json_key(j, key);
    json_raw(j, t, (size_t)n);
}

void
stats_json_i64(struct stats_json *j, const char *key, int64_t v)
{
    char t[24];
    int n = snprintf(t, sizeof(t), "%lld", (long long)v);

    json_key(j, key);
    json_raw(j, t, (size_t)n);
}

void
stats_json_double(struct stats_json *j, const char *key, double v)
{
    char t[32];
    int n;

    if (!isfinite(v))
        v = 0; /* JSON has no NaN or infinity */
    n = snprintf(t, sizeof(t), "%.6g", v);
    json_key(j, key);
    json_raw(j, t, (size_t)n);
}

void
stats_json_bool(struct stats_json *j, const char *key, int v)
{
    json_key(j, key);
    json_raw(j, v ? "true" : "false", v ? 4 : 5);
}

void
stats_json_hist(struct stats_json *j, const char *key,
                const struct stats_hist *h)
{
    unsigned b, last = 0;

    stats_json_obj_begin(j, key);
    stats_json_u64(j, "count", h->count);
    stats_json_u64(j, "sum", h->sum);
    stats_json_u64(j, "min", h->min);
    stats_json_u64(j, "max", h->max);
    stats_json_u64(j, "p50", stats_hist_quantile(h, 0.5));
    stats_json_u64(j, "p99", stats_hist_quantile(h, 0.99));
    for (b = 0; b < STATS_HIST_BUCKETS; b++)
        if (h->bucket[b] != 0)
            last = b + 1;
    /* buckets[b]: values below 2^b (b = 0: zero). */
    stats_json_arr_begin(j, "log2_buckets");
    for (b = 0; b < last; b++)
        stats_json_u64(j, NULL, h->bucket[b]);
    stats_json_arr_end(j);
    stats_json_obj_end(j);
}

int
stats_json_finish(struct stats_json *j)
{
    json_raw(j, "", 1); /* NUL terminator */
    if (j->err == 0)
        j->b->len--; /* not part of the text */
    return j->err;
}

void
stats_prom(struct buf *b, int *err, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n;

    if (*err != 0)
        return;
    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n > 0)
        *err = buf_append(
            b, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

void
stats_prom_family(struct buf *b, int *err, const char *name, const char *type,
                  const char *help)
{
    stats_prom(b, err, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Appends a value: an integer when scale is 1, else value * scale as a
   real number ("%.12g": exact for any microsecond count below 2^39). */
static void
stats_prom_value(struct buf *b, int *err, const char *prefix,
                 unsigned long long v, double scale)
{
    if (scale == 1.0)
        stats_prom(b, err, "%s %llu\n", prefix, v);
    else
        stats_prom(b, err, "%s %.12g\n", prefix, (double)v * scale);
}

void
stats_prom_hist(struct buf *b, int *err, const char *name, const char *labels,
                const struct stats_hist *h, double scale)
{
    const char *sep = labels[0] != '\0' ? "," : "";
    char braced[256] = "", head[320];
    unsigned i, top = 0;
    uint64_t cum = 0;

    if (labels[0] != '\0')
        snprintf(braced, sizeof(braced), "{%s}", labels);
    for (i = 0; i < STATS_HIST_BUCKETS; i++)
        if (h->bucket[i] != 0)
            top = i;
    for (i = 0; i <= top && h->count > 0; i++) {
        /* bucket i holds v < 2^i, i.e. v <= 2^i - 1 (bucket 0: v == 0) */
        uint64_t le = i == 0 ? 0 : i >= 64 ? UINT64_MAX : (1ull << i) - 1;

        cum += h->bucket[i];
        if (scale == 1.0)
            stats_prom(b, err, "%s_bucket{%s%sle=\"%llu\"} %llu\n", name,
                       labels, sep, (unsigned long long)le,
                       (unsigned long long)cum);
        else
            stats_prom(b, err, "%s_bucket{%s%sle=\"%.12g\"} %llu\n", name,
                       labels, sep, (double)le * scale,
                       (unsigned long long)cum);
    }
    stats_prom(b, err, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep,
               (unsigned long long)h->count);
    snprintf(head, sizeof(head), "%s_sum%s", name, braced);
    stats_prom_value(b, err, head, (unsigned long long)h->sum, scale);
    stats_prom(b, err, "%s_count%s %llu\n", name, braced,
               (unsigned long long)h->count);
}

void
stats_prom_one(struct buf *b, int *err, const char *name, const char *type,
               const char *help, unsigned long long value)
{
    stats_prom_family(b, err, name, type, help);
    stats_prom(b, err, "%s %llu\n", name, value);
}

void
stats_prom_counter(struct buf *b, int *err, const char *prefix,
                   const char *field, const char *help,
                   unsigned long long value)
{
    size_t n = strlen(field);
    int us = n > 3 && strcmp(field + n - 3, "_us") == 0;
    char name[128];

    snprintf(name, sizeof(name), "%s%.*s%s_total", prefix,
             (int)(us ? n - 3 : n), field, us ? "_seconds" : "");
    stats_prom_family(b, err, name, "counter", help);
    stats_prom_value(b, err, name, value, us ? 1e-6 : 1.0);
}
