/*
 * plogp.c -- the pLogP measurement core (daemon/plogp.h): one peer's job,
 * the receiver of trains, the machine's summary and the parameter file.
 *
 * No I/O and no clock of its own.  May call daemon/alg/ (struct plogp)
 * and colls.h's codes; called by daemon/measure.c and the unit tests.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/auth.h"
#include "daemon/plogp.h"
#include "proto/dgram.h"

const size_t plogp_thorough[] = {1,     64,     1024,    4096,   16384,
                                 65536, 262144, 1048576, 4194304};
const size_t plogp_thorough_n =
    sizeof(plogp_thorough) / sizeof(plogp_thorough[0]);

void
plogp_view(const struct plogp_params *pp, struct plogp *out)
{
    out->L = pp->L;
    out->Ll = pp->Ll;
    out->gamma = pp->gamma;
    out->n = pp->n;
    out->m = pp->m;
    out->g = pp->g;
    out->gl = pp->gl;
    out->gap = pp->gap;
    out->o_s = pp->o_s;
    out->o_r = pp->o_r;
}

/* 1 when v is finite and in [0, PLOGP_VALUE_MAX]. */
static int
plogp_ok(double v)
{
    return isfinite(v) && v >= 0.0 && v <= PLOGP_VALUE_MAX;
}

int
plogp_check(const struct plogp_params *pp)
{
    size_t i;

    if (pp->n < 1 || pp->n > PLOGP_MAX_SIZES || !plogp_ok(pp->L) ||
        !plogp_ok(pp->Ll) || !plogp_ok(pp->gamma) || !plogp_ok(pp->hop_us) ||
        !plogp_ok(pp->hop_byte_us))
        return COLLS_EINVAL;
    for (i = 0; i < pp->n; i++) {
        if (pp->m[i] > PLOGP_MAX_BYTES || (i > 0 && pp->m[i] <= pp->m[i - 1]))
            return COLLS_EINVAL;
        if (!plogp_ok(pp->g[i]) || !plogp_ok(pp->gap[i]) ||
            !plogp_ok(pp->rtt[i]) || !plogp_ok(pp->gl[i]) ||
            !plogp_ok(pp->o_s[i]) || !plogp_ok(pp->o_r[i]))
            return COLLS_EINVAL;
    }
    return 0;
}

/* 1 when a and b are within factor of each other, or closer than
   floor_us. */
static int
plogp_near(double a, double b, double factor, double floor_us)
{
    return fabs(a - b) < floor_us || (a <= factor * b && b <= factor * a);
}

int
plogp_agrees(const struct plogp_params *old, const struct plogp_params *row,
             double factor, double floor_us)
{
    size_t i, j;

    for (i = 0; i < row->n; i++) {
        double a = row->g[i], b;

        for (j = 0; j < old->n && old->m[j] != row->m[i]; j++)
            ;
        if (j == old->n)
            return 0;
        b = old->g[j];
        if (i == 0) {
            a += row->rtt[i];
            b += old->rtt[j];
        }
        if (!plogp_near(a, b, factor, floor_us) ||
            !plogp_near(row->gap[i], old->gap[j], factor, floor_us))
            return 0;
    }
    return 1;
}

void
plogp_moves_init(struct plogp_moves *mv)
{
    mv->moved = 0;
    mv->due = 0;
    mv->need = PLOGP_MOVED_CHECKS;
}

int
plogp_moves_look(struct plogp_moves *mv, uint64_t base_us, uint64_t now_us,
                 int quiet, int rate_moved, int held)
{
    uint64_t a = now_us, b = base_us;
    int rtt_moved = quiet && a != 0 && b != 0 &&
                    (a > b ? a - b : b - a) >= PLOGP_MOVED_FLOOR_US &&
                    (a >= 2 * b || 2 * a <= b);

    int moved = rtt_moved || rate_moved;

    if (!moved && !mv->due) {
        mv->moved = 0;
        return 0;
    }
    if (moved && !mv->due && ++mv->moved >= mv->need) {
        mv->due = 1;
        mv->moved = 0;
    }
    /* a check measures: not while a queue on the link (a stream, which a
       rate is seen in) would time its probes */
    if (!mv->due || held || !quiet)
        return 0;
    mv->due = 0;
    return 1;
}

int
plogp_rate_moved(double row_Bps, double bw_Bps, uint64_t sent,
                 uint64_t sent_all)
{
    if (!(row_Bps > 0.0) || !(bw_Bps > 0.0) ||
        (sent < PLOGP_RATE_BULK &&
         (double)sent < bw_Bps * PLOGP_RATE_BULK_US / 1e6))
        return 0;
    if (bw_Bps >= PLOGP_RATE_MOVE * row_Bps)
        return 1;
    return bw_Bps * PLOGP_RATE_MOVE <= row_Bps &&
           (double)sent >= PLOGP_RATE_ALONE * (double)sent_all;
}

double
plogp_row_rate(const struct plogp_params *pp)
{
    if (pp->n == 0 || !(pp->gap[pp->n - 1] > 0.0))
        return 0.0;
    return (double)pp->m[pp->n - 1] / pp->gap[pp->n - 1] * 1e6;
}

void
plogp_moves_checked(struct plogp_moves *mv, int agrees)
{
    mv->moved = 0;
    mv->due = 0;
    if (!agrees)
        mv->need = PLOGP_MOVED_CHECKS;
    else
        mv->need =
            mv->need > PLOGP_MOVED_MAX / 2 ? PLOGP_MOVED_MAX : mv->need * 2;
}

double
plogp_with_hops(const struct plogp_params *pp, size_t in, size_t out,
                double alg_us)
{
    return alg_us + 2.0 * pp->hop_us +
           pp->hop_byte_us * ((double)in + (double)out);
}

/* ---- one peer ---- */

int
plogp_train_len(size_t m)
{
    size_t k = PLOGP_TRAIN_BYTES / (m ? m : 1);

    if (k < PLOGP_TRAIN_MIN)
        k = PLOGP_TRAIN_MIN;
    if (k > PLOGP_TRAIN_MAX)
        k = PLOGP_TRAIN_MAX;
    return (int)k;
}

uint64_t
plogp_deadline_us(uint64_t bytes, unsigned request_ms)
{
    return (uint64_t)request_ms * 1000u + 2u * PLOGP_US_PER_BYTE * bytes;
}

uint64_t
plogp_ladder_us(const size_t *sizes, size_t n, int reps, unsigned request_ms)
{
    uint64_t t = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        int echoes = sizes[i] <= PLOGP_ECHO_MANY_MAX && reps < PLOGP_ECHO_MANY
                         ? PLOGP_ECHO_MANY
                         : reps;

        t +=
            (uint64_t)PLOGP_ALONE_REPS *
                (PLOGP_PAUSE_MAX_US + plogp_deadline_us(sizes[i], request_ms)) +
            (uint64_t)echoes * plogp_deadline_us(sizes[i], request_ms) +
            (uint64_t)(reps + PLOGP_LOSSY_REPEATS) *
                plogp_deadline_us((uint64_t)sizes[i] *
                                      (uint64_t)plogp_train_len(sizes[i]),
                                  request_ms);
    }
    return t;
}

size_t
plogp_probe_bytes(const struct plogp_job *j)
{
    size_t m = j->phase == PLOGP_DONE ? 0 : j->sizes[j->i];

    return j->phase == PLOGP_TRAIN ? m * (size_t)j->k : m;
}

int
plogp_job_init(struct plogp_job *j, int hid, const size_t *sizes, size_t nsizes,
               int reps)
{
    size_t i;

    memset(j, 0, sizeof(*j));
    if (nsizes < 1 || nsizes > PLOGP_MAX_SIZES || reps < 1 ||
        reps > PLOGP_MAX_REPS)
        return COLLS_EINVAL;
    for (i = 0; i < nsizes; i++)
        if (sizes[i] > PLOGP_MAX_BYTES || (i > 0 && sizes[i] <= sizes[i - 1]))
            return COLLS_EINVAL;
    j->hid = hid;
    memcpy(j->sizes, sizes, nsizes * sizeof(sizes[0]));
    j->nsizes = nsizes;
    j->reps = reps;
    j->phase = PLOGP_ECHO;
    return 0;
}

int
plogp_job_reps(const struct plogp_job *j)
{
    if (j->phase == PLOGP_ALONE)
        return PLOGP_ALONE_REPS;
    if (j->phase == PLOGP_ECHO && j->sizes[j->i] <= PLOGP_ECHO_MANY_MAX &&
        j->reps < PLOGP_ECHO_MANY)
        return PLOGP_ECHO_MANY;
    return j->reps;
}

/* One repetition recorded: on to the next, the next phase or size. */
static void
plogp_job_advance(struct plogp_job *j, double sample)
{
    int reps = plogp_job_reps(j);

    j->id = 0;
    j->rested = 0;
    j->sample[j->r++] = sample;
    if (j->phase == PLOGP_TRAIN && sample * (double)(j->k - 1) > j->longest_us)
        j->longest_us = sample * (double)(j->k - 1); /* the whole train */
    if (j->r < reps)
        return;
    if (j->phase != PLOGP_TRAIN) {
        /* the least: a round trip is only ever lengthened by whatever
           else the two daemons or their CPUs do meanwhile */
        int k;

        if (j->phase == PLOGP_ECHO)
            j->rtt[j->i] = j->sample[0];
        for (k = 0; k < reps; k++)
            if (j->sample[k] < j->rtt[j->i])
                j->rtt[j->i] = j->sample[k];
    } else {
        j->gap[j->i] = plogp_median(j->sample, (size_t)reps);
        j->o_s[j->i] = plogp_median(j->os_sample, (size_t)reps);
        j->o_r[j->i] = plogp_median(j->or_sample, (size_t)reps);
    }
    j->r = 0;
    if (j->phase == PLOGP_ECHO) {
        j->phase = PLOGP_TRAIN;
        j->lossy_left = PLOGP_LOSSY_REPEATS;
        return;
    }
    if (j->phase == PLOGP_TRAIN && ++j->i < j->nsizes) {
        j->phase = PLOGP_ECHO;
        return;
    }
    if (j->phase == PLOGP_ALONE && ++j->i < j->nsizes)
        return;
    j->i = 0;
    j->phase = j->phase == PLOGP_TRAIN ? PLOGP_ALONE : PLOGP_DONE;
}

int
plogp_job_next(struct plogp_job *j, const struct plogp_ops *ops, void *ctx,
               uint64_t *next_id, uint64_t now_us)
{
    size_t m;
    int rc;

    if (j->phase == PLOGP_DONE)
        return 1;
    if (j->id != 0)
        return 0; /* one probe at a time */
    if (j->phase == PLOGP_ALONE && !j->rested) {
        j->rested = 1;
        j->resume_us = now_us + (j->longest_us < PLOGP_PAUSE_MAX_US
                                     ? (uint64_t)j->longest_us
                                     : PLOGP_PAUSE_MAX_US);
    }
    if (j->phase == PLOGP_ALONE && now_us < j->resume_us)
        return 2;
    m = j->sizes[j->i];
    j->id = (*next_id)++;
    if (j->phase != PLOGP_TRAIN) {
        j->sent_us = now_us;
        rc = ops->echo(ctx, j->hid, m, j->id);
    } else {
        j->k = plogp_train_len(m);
        rc = ops->train(ctx, j->hid, m, j->k, j->id);
    }
    if (rc != 0)
        j->id = 0;
    return rc;
}

int
plogp_job_echoed(struct plogp_job *j, uint64_t id, uint64_t now_us)
{
    if ((j->phase != PLOGP_ECHO && j->phase != PLOGP_ALONE) || id == 0 ||
        id != j->id)
        return 0;
    plogp_job_advance(j, now_us >= j->sent_us ? (double)(now_us - j->sent_us)
                                              : 0.0);
    return 1;
}

int
plogp_job_spanned(struct plogp_job *j, uint64_t id, int got, double span_us,
                  double o_s_us, double o_r_us, int repaired)
{
    if (j->phase != PLOGP_TRAIN || id == 0 || id != j->id)
        return 0;
    if (got != j->k || !plogp_ok(span_us)) {
        j->id = 0; /* lost part of it: send it again */
        return 1;
    }
    if (repaired && j->lossy_left > 0) {
        j->lossy_left--; /* its span is the loss recovery's (plogp.h) */
        j->lossy_repeats++;
        j->id = 0;
        return 1;
    }
    j->os_sample[j->r] = plogp_ok(o_s_us) ? o_s_us : 0.0;
    j->or_sample[j->r] = plogp_ok(o_r_us) ? o_r_us : 0.0;
    plogp_job_advance(j, span_us / (double)plogp_train_intervals(j->k));
    return 1;
}

/* plogp_wire_bytes: at the default --mtu with authentication on, each
   datagram carries up to PLOGP_DGRAM_PAYLOAD bytes of the message (rel.c's
   fragment) and PLOGP_DGRAM_WIRE more (the transport's header, the
   authentication trailer, UDP, IPv4, Ethernet). */
#define PLOGP_DGRAM_PAYLOAD                                                    \
    ((size_t)(DGRAM_MTU_DEFAULT - DGRAM_HDR_LEN - AUTH_TRAILER_LEN))
#define PLOGP_DGRAM_WIRE                                                       \
    ((size_t)(DGRAM_HDR_LEN + AUTH_TRAILER_LEN + DGRAM_FRAME_LEN))

double
plogp_wire_bytes(size_t m)
{
    size_t dgrams = m / PLOGP_DGRAM_PAYLOAD + (m % PLOGP_DGRAM_PAYLOAD != 0);

    return (double)m + (double)(dgrams ? dgrams : 1) * PLOGP_DGRAM_WIRE;
}

/* gap(m) of pp at least the largest size's rate, where a bucket let a
   train through faster (plogp.h); L was taken from the trains' own. */
static void
plogp_rate_bound(struct plogp_params *pp)
{
    size_t i, last = pp->n - 1;
    double per_byte;

    if (pp->n < 2 || pp->m[last] < PLOGP_RATE_MIN)
        return;
    per_byte = pp->gap[last] / plogp_wire_bytes(pp->m[last]);
    for (i = 0; i < last; i++) {
        double bound = per_byte * plogp_wire_bytes(pp->m[i]);

        if (bound > PLOGP_BUCKET_FACTOR * pp->gap[i])
            pp->gap[i] = bound;
    }
}

int
plogp_job_result(const struct plogp_job *j, struct plogp_params *out)
{
    size_t i;
    double L;

    if (j->phase != PLOGP_DONE)
        return COLLS_EAGAIN;
    memset(out, 0, sizeof(*out));
    /* every size's echo is L + g(m) >= L + gap(m) one way: each small
       one bounds L from above, and the least bound is L.  A bound below
       0 is no bound: the echo passed a shaper's bucket faster than the
       train that emptied it (8 hosts at 10 Mbit/s: RTT(1 KiB) 201 us,
       gap(1 KiB) 925, and L came out 0 where the smaller sizes said
       16-29 us) */
    L = -1.0;
    for (i = 0; i < j->nsizes && (i == 0 || j->sizes[i] <= PLOGP_L_MAX); i++) {
        double bound = j->rtt[i] / 2.0 - j->gap[i];

        if (bound >= 0.0 && (L < 0.0 || bound < L))
            L = bound;
    }
    out->L = out->Ll = L > 0.0 ? L : 0.0;
    out->n = j->nsizes;
    for (i = 0; i < j->nsizes; i++) {
        double iso = j->rtt[i] / 2.0 - out->L;

        out->m[i] = j->sizes[i];
        out->rtt[i] = j->rtt[i];
        out->gap[i] = j->gap[i];
        /* an isolated message: below gap(m) where a shaper lets a burst
           pass (the busiest port bounds what follows, tune.c) */
        out->g[i] = iso > 0.0 ? iso : 0.0;
        out->gl[i] = out->g[i]; /* a pair alone */
        out->o_s[i] = j->o_s[i];
        out->o_r[i] = j->o_r[i];
    }
    plogp_rate_bound(out);
    plogp_monotone(out);
    return 0;
}

/* ---- receiver ---- */

int
plogp_train_intervals(int k)
{
    return k - 1 - k / 2;
}

int
plogp_rx_arrive(struct plogp_rx *rx, uint64_t id, int idx, int k,
                uint64_t now_us, uint64_t cpu_us, int *got, double *span_us,
                double *o_r_us)
{
    if (k < 2 || k > PLOGP_TRAIN_MAX || idx < 0 || idx >= k)
        return 0;
    if (id != rx->id) {
        rx->id = id;
        rx->k = k;
        rx->got = 0;
        rx->mid = 0;
    }
    rx->got++;
    /* the span starts at the middle message: the first half carries
       whatever the start of a burst costs (windows opening, a queue
       overflowing), which a stream in its steady state does not pay */
    if (!rx->mid && idx >= k / 2) {
        rx->mid = 1;
        rx->first_us = now_us;
        rx->cpu_first_us = cpu_us;
    }
    rx->last_us = now_us;
    rx->cpu_last_us = cpu_us;
    if (idx != k - 1)
        return 0;
    *got = rx->got;
    *span_us = (double)(rx->last_us - rx->first_us);
    *o_r_us = rx->cpu_last_us > rx->cpu_first_us
                  ? (double)(rx->cpu_last_us - rx->cpu_first_us) /
                        plogp_train_intervals(k)
                  : 0.0;
    rx->id = 0;
    return 1;
}

/* ---- summary ---- */

static int
plogp_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

double
plogp_median(double *x, size_t n)
{
    if (n == 0)
        return 0.0;
    qsort(x, n, sizeof(*x), plogp_cmp);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2.0;
}

void
plogp_load_ratios(double *r, size_t n)
{
    double orig[PLOGP_MAX_SIZES], tail[PLOGP_MAX_SIZES], med;
    size_t i;

    if (n < 2)
        return; /* the largest size's stays as measured */
    if (n > PLOGP_MAX_SIZES)
        n = PLOGP_MAX_SIZES;
    memcpy(orig, r, n * sizeof(*r));
    for (i = 0; i + 1 < n; i++) {
        memcpy(tail, orig + i + 1, (n - i - 1) * sizeof(*r));
        med = plogp_median(tail, n - i - 1);
        if (med > r[i])
            r[i] = med;
    }
}

/* One curve of plogp_monotone. */
static void
plogp_monotone_curve(const size_t *m, double *g, size_t n)
{
    size_t i;

    for (i = n - 1; i-- > 0;) {
        if (g[i] <= g[i + 1])
            continue;
        if (i > 0 && g[i - 1] <= g[i + 1])
            g[i] = g[i - 1] + (g[i + 1] - g[i - 1]) *
                                  (double)(m[i] - m[i - 1]) /
                                  (double)(m[i + 1] - m[i - 1]);
        else
            g[i] = g[i + 1];
    }
}

void
plogp_monotone(struct plogp_params *pp)
{
    size_t i;

    if (pp->n < 2)
        return;

    plogp_monotone_curve(pp->m, pp->g, pp->n);
    plogp_monotone_curve(pp->m, pp->gl, pp->n);
    plogp_monotone_curve(pp->m, pp->o_s, pp->n);
    plogp_monotone_curve(pp->m, pp->o_r, pp->n);
    /* each curve repaired on its own can leave gl below g at a point
       (tests/netns/tune.sh once saw gl(4 KiB) 27.8 us, g 41.6): g under
       load is never less than g */
    for (i = 0; i < pp->n; i++)
        if (pp->gl[i] < pp->g[i])
            pp->gl[i] = pp->g[i];
}

/* The median over nrows rows of the double at byte offset off of each
   (a field, or element i of an array field); v has room for nrows. */
static double
plogp_median_at(const struct plogp_params *rows, size_t nrows, size_t off,
                double *v)
{
    size_t r;

    for (r = 0; r < nrows; r++)
        memcpy(&v[r], (const char *)&rows[r] + off, sizeof(double));
    return plogp_median(v, nrows);
}

int
plogp_summarise(const struct plogp_params *rows, size_t nrows,
                struct plogp_params *out)
{
    double v[64];
    size_t i, r, n;

    if (nrows == 0 || nrows > sizeof(v) / sizeof(v[0]))
        return COLLS_EINVAL;
    n = rows[0].n;
    for (r = 1; r < nrows; r++)
        if (rows[r].n != n ||
            memcmp(rows[r].m, rows[0].m, n * sizeof(rows[0].m[0])) != 0)
            return COLLS_EINVAL;
    memset(out, 0, sizeof(*out));
    out->n = n;
    memcpy(out->m, rows[0].m, sizeof(out->m));
#define AT(field) offsetof(struct plogp_params, field)
    out->L = plogp_median_at(rows, nrows, AT(L), v);
    out->Ll = plogp_median_at(rows, nrows, AT(Ll), v);
    for (i = 0; i < n; i++) {
        size_t d = i * sizeof(double);

        out->g[i] = plogp_median_at(rows, nrows, AT(g) + d, v);
        out->gap[i] = plogp_median_at(rows, nrows, AT(gap) + d, v);
        out->rtt[i] = plogp_median_at(rows, nrows, AT(rtt) + d, v);
        out->gl[i] = plogp_median_at(rows, nrows, AT(gl) + d, v);
        out->o_s[i] = plogp_median_at(rows, nrows, AT(o_s) + d, v);
        out->o_r[i] = plogp_median_at(rows, nrows, AT(o_r) + d, v);
    }
#undef AT
    plogp_monotone(out);
    return plogp_check(out);
}

/* ---- the file ---- */

#define PLOGP_MAGIC "collsd-plogp 1"

int
plogp_format(const struct plogp_params *pp, char *buf, size_t cap)
{
    size_t o = 0, i;
    int w;

#define PUT(...)                                                               \
    do {                                                                       \
        w = snprintf(buf + o, cap - o, __VA_ARGS__);                           \
        if (w < 0 || (size_t)w >= cap - o)                                     \
            return COLLS_ENOBUFS;                                              \
        o += (size_t)w;                                                        \
    } while (0)
    if (cap == 0)
        return COLLS_ENOBUFS;
    PUT("%s\n# pLogP parameters of this machine (docs/collectives.md)\n",
        PLOGP_MAGIC);
    PUT("epoch %llu\n", (unsigned long long)pp->epoch);
    PUT("L %.17g\n", pp->L);
    PUT("Ll %.17g\n", pp->Ll);
    PUT("gamma %.17g\n", pp->gamma);
    PUT("hop %.17g %.17g\n", pp->hop_us, pp->hop_byte_us);
    PUT("# size g gap rtt gl o_s o_r\n");
    for (i = 0; i < pp->n; i++)
        PUT("g %zu %.17g %.17g %.17g %.17g %.17g %.17g\n", pp->m[i], pp->g[i],
            pp->gap[i], pp->rtt[i], pp->gl[i], pp->o_s[i], pp->o_r[i]);
    PUT("end\n");
#undef PUT
    return (int)o;
}

/* Parses one line (NUL-terminated, no newline) into out.  1 at "end",
   0 on success, -1 when malformed. */
static int
plogp_line(const char *s, struct plogp_params *out)
{
    unsigned long long u;
    double a, b, c, e, os = 0.0, orr = 0.0;
    size_t m;
    char tail;
    int got;

    if (s[0] == '\0' || s[0] == '#')
        return 0;
    if (strcmp(s, "end") == 0)
        return 1;
    if (sscanf(s, "epoch %llu %c", &u, &tail) == 1) {
        out->epoch = u;
        return 0;
    }
    if (sscanf(s, "L %lf %c", &a, &tail) == 1) {
        out->L = a;
        return 0;
    }
    if (sscanf(s, "Ll %lf %c", &a, &tail) == 1) {
        out->Ll = a;
        return 0;
    }
    if (sscanf(s, "gamma %lf %c", &a, &tail) == 1) {
        out->gamma = a;
        return 0;
    }
    if (sscanf(s, "hop %lf %lf %c", &a, &b, &tail) == 2) {
        out->hop_us = a;
        out->hop_byte_us = b;
        return 0;
    }
    /* a file written before o_s and o_r were measured has 5 fields:
       both 0 (no overheads known) */
    if (s[0] == 'g' && s[1] == ' ' && s[2] != '-' &&
        ((got = sscanf(s, "g %zu %lf %lf %lf %lf %lf %lf %c", &m, &a, &b, &c,
                       &e, &os, &orr, &tail)) == 7 ||
         (got == 5 && sscanf(s, "g %zu %lf %lf %lf %lf %c", &m, &a, &b, &c, &e,
                             &tail) == 5)) &&
        out->n < PLOGP_MAX_SIZES) {
        out->m[out->n] = m;
        out->g[out->n] = a;
        out->gap[out->n] = b;
        out->rtt[out->n] = c;
        out->gl[out->n] = e;
        out->o_s[out->n] = os;
        out->o_r[out->n] = orr;
        out->n++;
        return 0;
    }
    return -1;
}

int
plogp_parse(const char *text, size_t len, struct plogp_params *out,
            int *bad_line)
{
    char line[256];
    size_t o = 0;
    int ln = 0, ended = 0;

    memset(out, 0, sizeof(*out));
    *bad_line = 0;
    while (o < len && !ended) {
        const char *nl = memchr(text + o, '\n', len - o);
        size_t l = nl != NULL ? (size_t)(nl - (text + o)) : len - o;
        int rc;

        ln++;
        if (l >= sizeof(line) || memchr(text + o, '\0', l) != NULL ||
            (ln == 1 && (l != strlen(PLOGP_MAGIC) ||
                         memcmp(text + o, PLOGP_MAGIC, l) != 0))) {
            *bad_line = ln;
            return COLLS_EINVAL;
        }
        memcpy(line, text + o, l);
        line[l] = '\0';
        o += l + (nl != NULL);
        if (ln == 1)
            continue;
        rc = plogp_line(line, out);
        if (rc < 0) {
            *bad_line = ln;
            return COLLS_EINVAL;
        }
        ended = rc == 1;
    }
    if (!ended || plogp_check(out) != 0) {
        *bad_line = ln > 0 ? ln : 1;
        return COLLS_EINVAL;
    }
    return 0;
}
