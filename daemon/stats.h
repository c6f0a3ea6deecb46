/*
 * stats.h -- counters, log2 histograms and a small JSON writer.
 *
 * Histograms keep one bucket per power of two: bucket b counts values v
 * with 2^(b-1) <= v < 2^b (bucket 0 counts v == 0), so 64 buckets hold any
 * uint64.  The JSON writer appends to a struct buf, escapes strings, and
 * inserts commas itself; nesting is tracked up to STATS_JSON_DEPTH.
 */
#ifndef COLLS_DAEMON_STATS_H
#define COLLS_DAEMON_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "proto/buf.h"

#define STATS_HIST_BUCKETS 65

struct stats_hist {
    uint64_t count, sum, min, max;
    uint64_t bucket[STATS_HIST_BUCKETS];
};

void stats_hist_add(struct stats_hist *h, uint64_t v);
/* Bucket index of v (0..64). */
unsigned stats_hist_bucket(uint64_t v);
/* Smallest upper bound of a bucket holding at least q of the values
   (0 < q <= 1); 0 when empty. */
uint64_t stats_hist_quantile(const struct stats_hist *h, double q);

#define STATS_JSON_DEPTH 16

struct stats_json {
    struct buf *b;
    int depth;
    int err; /* first error (COLLS_ENOMEM) */
    unsigned char first[STATS_JSON_DEPTH];
};

void stats_json_init(struct stats_json *j, struct buf *b);
/* Opens an object ("{") or array ("[") under key, closes it with "}" or
   "]".  key may be NULL inside arrays (and for the top level value). */
void stats_json_open(struct stats_json *j, const char *key, const char *br);
void stats_json_close(struct stats_json *j, const char *br);
#define stats_json_obj_begin(j, key) stats_json_open((j), (key), "{")
#define stats_json_obj_end(j)        stats_json_close((j), "}")
#define stats_json_arr_begin(j, key) stats_json_open((j), (key), "[")
#define stats_json_arr_end(j)        stats_json_close((j), "]")
void stats_json_str(struct stats_json *j, const char *key, const char *v);
void stats_json_u64(struct stats_json *j, const char *key, uint64_t v);
void stats_json_i64(struct stats_json *j, const char *key, int64_t v);
void stats_json_double(struct stats_json *j, const char *key, double v);
void stats_json_bool(struct stats_json *j, const char *key, int v);
/* Writes h as {"count","sum","min","max","p50","p99","buckets":[...]}. */
void stats_json_hist(struct stats_json *j, const char *key,
                     const struct stats_hist *h);
/* 0, or the first error; the buffer then holds a NUL-terminated text. */
int stats_json_finish(struct stats_json *j);

/* Appends printf-style text (one line of at most 511 bytes) to b; *err
   keeps the first error, after which nothing more is appended. */
void stats_prom(struct buf *b, int *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends "# HELP name help" and "# TYPE name type" (counter, gauge,
   histogram): it opens the family of name, whose samples must all follow
   before another family opens.  Names follow Prometheus' conventions:
   collsd_ prefix, base units (_seconds, _bytes), _total on counters. */
void stats_prom_family(struct buf *b, int *err, const char *name,
                       const char *type, const char *help);
/* Appends the samples of h as a Prometheus histogram: name_bucket with
   labels (e.g. "op=\"bcast\"", or "" for none) and cumulative le="2^b-1"
   up to the highest bucket in use, le="+Inf", name_sum, name_count; le
   and sum are multiplied by scale (1e-6: a histogram of microseconds
   exported in seconds; 1: integers as they are).  The family's lines
   (stats_prom_family, histogram) are the caller's. */
void stats_prom_hist(struct buf *b, int *err, const char *name,
                     const char *labels, const struct stats_hist *h,
                     double scale);
/* Appends one unlabelled sample "name value" with its HELP and TYPE
   lines: a family of its own. */
void stats_prom_one(struct buf *b, int *err, const char *name, const char *type,
                    const char *help, unsigned long long value);
/* Appends the counter named prefix + field + "_total", a family of its
   own.  A field ending in "_us" counts microseconds: it is exported as
   prefix + field-without-_us + "_seconds_total", in seconds. */
void stats_prom_counter(struct buf *b, int *err, const char *prefix,
                        const char *field, const char *help,
                        unsigned long long value);

#endif
