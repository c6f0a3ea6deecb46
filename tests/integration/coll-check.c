/*
 * coll-check.c -- correctness check of groups and collectives.
 *
 * Each process is one member task.  Roles:
 *   (default)       one member: --socket S --group NAME --size P
 *   -n P --sockets A,B,C [--layout 1,2,4]
 *                   forks P members, layout[i] of them on daemon i (default
 *                   one per daemon, in turn); exits 0 iff every child did.
 * Checks (--check, default matrix):
 *   matrix          joins NAME-c (contiguous) and/or NAME-r (round-robin)
 *                   (--placement contig|rr|both) and runs every operation
 *                   x every algorithm of the daemon's table for it (forced
 *                   with colls_group_set_alg, plus the default choice and a
 *                   small segment for segmented ones) x sizes x datatypes
 *                   and operators x roots, each in hierarchical and flat
 *                   mode, and the daemon's choice of barrier, bcast,
 *                   allreduce and allgather also in direct mode (among
 *                   the tasks, libclient/dcoll.c; last_mode and last_alg
 *                   must say so; the allreduce once more with the input
 *                   in the output buffer).  Outputs are compared bytewise
 *                   with a serial reference computed from deterministic
 *                   per-rank inputs (rank r's items are a hash of (seed,
 *                   case, r, index)); floating data are small integers so
 *                   every order of combination is exact.  The hierarchical
 *                   and flat outputs must be bitwise equal, untouched
 *                   parts of the output (non-roots, gaps between v-blocks,
 *                   exscan's rank 0) must keep their sentinel bytes, and
 *                   colls_group_last_alg must name the forced algorithm
 *                   when it applies (alg_usable over the ranks or leaders
 *                   the daemon reports it ran over) and another one when
 *                   it does not (fallback).  --level full|thin|smoke sets
 *                   how many sizes, datatypes and operators.  First, calls
 *                   with an invalid operator, datatype or root must fail
 *                   with COLLS_EOP / EDTYPE / EINVAL at every member and
 *                   leave the group usable; every allreduce algorithm
 *                   must give bitwise the same sum of inexact doubles on
 *                   every rank (ALG_SAME_RESULT).
 *   conc            joins two groups NAME-a (contiguous) and NAME-b (round-
 *                   robin) and alternates --iters collectives between them,
 *                   each with inputs salted by (group, iteration); several
 *                   of these running at once (other NAMEs) must not
 *                   cross-talk.
 *   b2b             joins NAME-bc and/or NAME-br (--placement) and runs
 *                   --iters rooted operations from varying roots (bcast,
 *                   scatter, scatterv, reduce, gather, gatherv; mostly
 *                   small, every 16th larger than a segment) mixed with
 *                   allreduces, back to back with no barrier, in
 *                   hierarchical, flat and direct mode (bcast and
 *                   allreduce among the tasks, the others through the
 *                   daemons); each input buffer
 *                   is overwritten as soon as its call returned (a root
 *                   may return before the operation ended) and each
 *                   output compared with the serial reference.  After
 *                   each mode a bcast with an unknown algorithm: its
 *                   failure must reach the root, at the latest from the
 *                   next allreduce, whose result stays valid.
 *   fail            back-to-back allreduces until one fails.  With
 *                   --expect peerdead the member of rank --victim kills
 *                   itself (SIGKILL) in iteration --after; with --expect
 *                   hostdown the script kills a daemon after rank 0 wrote
 *                   --ready FILE (members marked --victim, or on daemon
 *                   --victim-daemon in fork mode, are on that host).  Every
 *                   survivor must get exactly that error; with --reform N
 *                   the survivors then join the same name again (N
 *                   members) and check an allreduce and a barrier.  With
 *                   --mode direct the allreduces run direct among the
 *                   tasks (libclient/dcoll.c).
 *   bench           (for tests/bench/coll-bench.sh, which needs the round-
 *                   robin placement collsctl bench does not offer) times
 *                   --ops OP of --bytes per block with --alg and --mode
 *                   hier|flat the classic way: 5 runs of --iters calls
 *                   after a barrier, each member's best run, the maximum
 *                   over members printed by rank 0 as "bench OP BYTES
 *                   us/op ALG MODE".  Results are not checked there.
 *                   With --compress, bcast sends doubles (--data smooth
 *                   or random) so that FPC applies.
 *   fpc             (tests/integration/coll-fpc.sh) hierarchical bcasts
 *                   of doubles with --compress: --data smooth (a ramp),
 *                   random (any 64-bit pattern), special (NaN payloads,
 *                   -0.0, infinities, denormals, DBL_MAX among a ramp) or
 *                   all, sizes 0, 1, 1009, 70001 and 140001 (more than
 *                   one FPC block of 65536 doubles), roots 0 and P-1, the
 *                   daemon's algorithm or --alg; every member's result is
 *                   compared bytewise with the root's data.
 * --compress off|on|auto sets colls_group_set_compress on every group
 * joined (matrix, bench, fpc).  check_alg then wants "+fpc" after the
 * algorithm exactly where compression applies with on (a hierarchical
 * bcast of doubles over more than one host, count > 0) and never where it
 * does not; with auto it may be absent (the root's daemon decided).
 * The first mismatch is printed in detail and the process exits 1.  Every
 * blocking call is bounded by colls_set_timeout (--timeout-ms).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "colls.h"
#include "daemon/alg/alg.h"
#include "daemon/sched.h"
#include "proto/collop.h"
#include "proto/dtype.h"
#include "proto/reduce.h"
#include "tests/integration/mix.h"

#define MAX_P       64
#define SENTINEL    0xa5
#define LARGE_COUNT 70001 /* items; more bytes than a default segment */

enum {
    CHECK_MATRIX,
    CHECK_CONC,
    CHECK_FAIL,
    CHECK_BENCH,
    CHECK_FPC,
    CHECK_B2B
};
enum { DATA_ALL, DATA_SMOOTH, DATA_RANDOM, DATA_SPECIAL };
enum { LEVEL_SMOKE, LEVEL_THIN, LEVEL_FULL };
enum { EXPECT_NONE, EXPECT_PEERDEAD, EXPECT_HOSTDOWN };

struct opts {
    const char *socket;
    const char *sockets; /* fork mode */
    const char *layout;
    const char *group;
    const char *ops; /* comma list of operation names, NULL: all */
    const char *ready;
    int n; /* fork mode: members to fork */
    int size;
    int place; /* bit 0 contiguous, bit 1 round-robin */
    int level;
    int check;
    int expect;
    int victim;        /* fail: rank that dies / this task's host dies */
    int victim_daemon; /* fork mode: index of the daemon to be killed */
    int after;
    int reform;
    int iters;
    int timeout_ms;
    int verbose;
    uint64_t seed;
    const char *alg; /* bench: forced algorithm */
    int mode;        /* bench: COLLS_MODE_* */
    size_t bytes;    /* bench: bytes per rank's block */
    int compress;    /* COLLS_COMPRESS_* for every group joined */
    int data;        /* fpc, bench: DATA_* */
};

/* One member's state. */
struct ctx {
    const struct opts *o;
    colls_t *c;
    colls_group_t *g;
    const char *gname;
    int place;
    int rank, P, nhosts;
    int retry_eexist; /* join: retry while the name is still taken */
    unsigned long ncases, ncalls;
};

/* One collective to check. */
struct ccase {
    int op;          /* COLLS_COLL_* */
    const char *alg; /* forced spec, NULL for the daemon's choice */
    int dtype, rop;  /* rop -1: not a reduction */
    size_t count;
    int root;
    uint64_t salt; /* distinguishes cases (and groups, iterations) */
};

static const char *prog = "coll-check";

/* One line on stderr, written at once so members' lines do not mix. */
static void
say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    int n;

    n = snprintf(line, sizeof line, "%s[%d]: ", prog, (int)getpid());
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    n = (int)strlen(line);
    line[n++] = '\n';
    fflush(stderr);
    if (write(2, line, (size_t)n) < 0)
        return;
}

static double
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- inputs and the serial reference ---------------------------------- */

static int
is_float(int dtype)
{
    return dtype == COLLS_FLOAT || dtype == COLLS_DOUBLE;
}

static int
is_signed(int dtype)
{
    return dtype == COLLS_INT8 || dtype == COLLS_INT16 ||
           dtype == COLLS_INT32 || dtype == COLLS_INT64;
}

/*
 * Writes item k of rank r's input for case cs at dst.  Integers are hash
 * bits (a seventh of them zero, for the logical operators).  Floating
 * values of reductions are small integers: |x| <= 4 for SUM (partial sums
 * stay far below 2^24) and |x| <= 2 for PROD (2^P is exact in float for
 * P <= 64), so every order of combination gives the same bits.  Data that
 * are only moved are sixteenths over a wider range.
 */
static void
gen_item(const struct ccase *cs, uint64_t seed, int r, size_t k, void *dst)
{
    uint64_t h = mix(mix(mix(seed ^ cs->salt) ^ (uint64_t)r) ^ (uint64_t)k);
    uint64_t v = h % 7 == 0 ? 0 : h >> 7;
    double d;

    if (is_float(cs->dtype)) {
        if (cs->rop == COLLS_PROD)
            d = (double)((int)(h % 5) - 2);
        else if (cs->rop >= 0)
            d = (double)((int)(h % 9) - 4);
        else
            d = ((double)(h % 100001) - 50000.0) / 16.0;
        if (cs->dtype == COLLS_FLOAT) {
            float f = (float)d;
            memcpy(dst, &f, sizeof f);
        } else {
            memcpy(dst, &d, sizeof d);
        }
        return;
    }
    switch (dtype_size(cs->dtype)) {
    case 1: {
        uint8_t x = (uint8_t)v;
        memcpy(dst, &x, 1);
        break;
    }
    case 2: {
        uint16_t x = (uint16_t)v;
        memcpy(dst, &x, 2);
        break;
    }
    case 4: {
        uint32_t x = (uint32_t)v;
        memcpy(dst, &x, 4);
        break;
    }
    default:
        memcpy(dst, &v, 8);
        break;
    }
}

/* Fills n items of rank r's input, items k0 .. k0+n-1, at dst. */
static void
gen_fill(const struct ccase *cs, uint64_t seed, int r, size_t k0, size_t n,
         void *dst)
{
    size_t es = dtype_size(cs->dtype), i;

    for (i = 0; i < n; i++)
        gen_item(cs, seed, r, k0 + i, (unsigned char *)dst + i * es);
}

/* One integer operator on values widened to 64 bits. */
static uint64_t
ref_int(int rop, uint64_t a, uint64_t b, int64_t sa, int64_t sb, int sgn)
{
    switch (rop) {
    case COLLS_SUM:
        return a + b;
    case COLLS_PROD:
        return a * b;
    case COLLS_MIN:
        return sgn ? (sb < sa ? b : a) : (b < a ? b : a);
    case COLLS_MAX:
        return sgn ? (sb > sa ? b : a) : (b > a ? b : a);
    case COLLS_LAND:
        return a != 0 && b != 0;
    case COLLS_LOR:
        return a != 0 || b != 0;
    case COLLS_LXOR:
        return (a != 0) != (b != 0);
    case COLLS_BAND:
        return a & b;
    case COLLS_BOR:
        return a | b;
    default:
        return a ^ b;
    }
}

#define REF_INT(T, UT)                                                         \
    do {                                                                       \
        T *x = acc;                                                            \
        const T *y = in;                                                       \
        for (i = 0; i < n; i++)                                                \
            x[i] = (T)(UT)ref_int(rop, (uint64_t)(UT)x[i], (uint64_t)(UT)y[i], \
                                  (int64_t)x[i], (int64_t)y[i], sgn);          \
    } while (0)

#define REF_FLOAT(T)                                                           \
    do {                                                                       \
        T *x = acc;                                                            \
        const T *y = in;                                                       \
        for (i = 0; i < n; i++) {                                              \
            if (rop == COLLS_SUM)                                              \
                x[i] = x[i] + y[i];                                            \
            else if (rop == COLLS_PROD)                                        \
                x[i] = x[i] * y[i];                                            \
            else if (rop == COLLS_MIN)                                         \
                x[i] = y[i] < x[i] ? y[i] : x[i];                              \
            else                                                               \
                x[i] = y[i] > x[i] ? y[i] : x[i];                              \
        }                                                                      \
    } while (0)

/* acc[i] = acc[i] rop in[i], the serial reference (written independently
   of proto/reduce.c). */
static void
ref_combine(int rop, int dtype, void *acc, const void *in, size_t n)
{
    size_t i;
    int sgn = is_signed(dtype);

    switch (dtype) {
    case COLLS_BYTE:
    case COLLS_UINT8:
        REF_INT(uint8_t, uint8_t);
        break;
    case COLLS_INT8:
        REF_INT(int8_t, uint8_t);
        break;
    case COLLS_INT16:
        REF_INT(int16_t, uint16_t);
        break;
    case COLLS_UINT16:
        REF_INT(uint16_t, uint16_t);
        break;
    case COLLS_INT32:
        REF_INT(int32_t, uint32_t);
        break;
    case COLLS_UINT32:
        REF_INT(uint32_t, uint32_t);
        break;
    case COLLS_INT64:
        REF_INT(int64_t, uint64_t);
        break;
    case COLLS_UINT64:
        REF_INT(uint64_t, uint64_t);
        break;
    case COLLS_FLOAT:
        REF_FLOAT(float);
        break;
    default:
        REF_FLOAT(double);
        break;
    }
}

/* Reference of a reduction over ranks lo..hi-1 of items k0..k0+n-1. */
static void
ref_reduce(const struct ccase *cs, uint64_t seed, int lo, int hi, size_t k0,
           size_t n, void *out)
{
    size_t es = dtype_size(cs->dtype);
    unsigned char *tmp = malloc(n * es + 1);
    int r;

    if (tmp == NULL) {
        say("out of memory");
        exit(1);
    }
    gen_fill(cs, seed, lo, k0, n, out);
    for (r = lo + 1; r < hi; r++) {
        gen_fill(cs, seed, r, k0, n, tmp);
        ref_combine(cs->rop, cs->dtype, out, tmp, n);
    }
    free(tmp);
}

/* ---- v-variant layouts ------------------------------------------------- */

/* Items rank r contributes (gatherv family) for base count; some zero. */
static size_t
vcount(size_t count, int r)
{
    if (count == 0 || r % 3 == 1)
        return 0;
    return count / (size_t)(r + 1) + (size_t)r;
}

/* Items rank i sends to rank j in alltoallv. */
static size_t
vcount2(size_t count, int i, int j)
{
    if (count == 0 || (i + 2 * j) % 4 == 3)
        return 0;
    return count / (size_t)(1 + (i + j) % 3) + (size_t)j;
}

/* Displacements for blocks cnt[0..P-1]: placed in reverse rank order with
   a one-item gap before each; returns the buffer's length in items. */
static size_t
vdispls(int P, const size_t *cnt, size_t *displs)
{
    size_t off = 0;
    int r;

    for (r = P - 1; r >= 0; r--) {
        off += 1;
        displs[r] = off;
        off += cnt[r];
    }
    return off + 1;
}

/* ---- running and checking one case ------------------------------------ */

static void
describe(const struct ctx *x, const struct ccase *cs, int mode, char *s,
         size_t cap)
{
    snprintf(s, cap,
             "op=%s alg=%s dtype=%s rop=%s count=%zu root=%d mode=%s "
             "place=%s P=%d hosts=%d rank=%d group=%s",
             collop_name(cs->op), cs->alg ? cs->alg : "(auto)",
             dtype_name(cs->dtype),
             cs->rop >= 0 ? reduce_op_name(cs->rop) : "-", cs->count, cs->root,
             mode == COLLS_MODE_HIER     ? "hier"
             : mode == COLLS_MODE_FLAT   ? "flat"
             : mode == COLLS_MODE_DIRECT ? "direct"
                                         : "auto",
             x->place == COLLS_PLACE_ROUNDROBIN ? "rr" : "contig", x->P,
             x->nhosts, x->rank, x->gname);
}

/* Prints item i of buf (dtype) into s. */
static void
item_str(int dtype, const unsigned char *p, char *s, size_t cap)
{
    size_t es = dtype_size(dtype), j;
    int n = 0;

    for (j = 0; j < es; j++)
        n += snprintf(s + n, cap - (size_t)n, "%02x", p[j]);
    if (dtype == COLLS_DOUBLE) {
        double d;
        memcpy(&d, p, 8);
        snprintf(s + n, cap - (size_t)n, " (%g)", d);
    } else if (dtype == COLLS_FLOAT) {
        float f;
        memcpy(&f, p, 4);
        snprintf(s + n, cap - (size_t)n, " (%g)", (double)f);
    }
}

/* Compares got with want (len bytes, items of dtype); prints the first
   mismatch.  what names the buffer. */
static int
compare(const struct ctx *x, const struct ccase *cs, int mode, const char *what,
        const unsigned char *want, const unsigned char *got, size_t len)
{
    char d[512], a[64], b[64];
    size_t es = dtype_size(cs->dtype), i, bad = 0;

    if (memcmp(want, got, len) == 0)
        return 0;
    for (i = 0; i < len; i++)
        if (want[i] != got[i]) {
            if (bad++ == 0) {
                describe(x, cs, mode, d, sizeof d);
                item_str(cs->dtype, want + i / es * es, a, sizeof a);
                item_str(cs->dtype, got + i / es * es, b, sizeof b);
                say("FAIL %s: %s: first mismatch at byte %zu (item %zu of "
                    "%zu): want %s got %s",
                    what, d, i, i / es, len / es, a, b);
            }
        }
    say("FAIL %s: %zu of %zu bytes differ", what, bad, len);
    return -1;
}

/* Output buffers of one run: rbuf and its expected contents. */
struct run {
    unsigned char *sbuf, *rbuf, *want;
    size_t slen, rlen;
};

static void *
xalloc(size_t n)
{
    void *p = malloc(n > 0 ? n : 1);

    if (p == NULL) {
        say("out of memory (%zu bytes)", n);
        exit(1);
    }
    return p;
}

/*
 * Calls the collective of cs on x's group in the current mode with this
 * rank's input, and fills r->want with the reference output.  Returns the
 * call's result.
 */
static int
call_case(struct ctx *x, const struct ccase *cs, struct run *r)
{
    size_t es = dtype_size(cs->dtype), n = cs->count, P = (size_t)x->P;
    size_t cnt[MAX_P], dsp[MAX_P], rcnt[MAX_P], rdsp[MAX_P], off[MAX_P];
    uint64_t seed = x->o->seed;
    int me = x->rank, j, rc = COLLS_EINVAL;
    size_t len, k;

    memset(r, 0, sizeof *r);
    switch (cs->op) {
    case COLLS_COLL_BARRIER:
        return colls_barrier(x->g);
    case COLLS_COLL_BCAST:
        r->rlen = n * es;
        r->rbuf = xalloc(r->rlen);
        r->want = xalloc(r->rlen);
        gen_fill(cs, seed, cs->root, 0, n, r->want);
        if (me == cs->root)
            memcpy(r->rbuf, r->want, r->rlen);
        else
            memset(r->rbuf, SENTINEL, r->rlen);
        return colls_bcast(x->g, r->rbuf, n, cs->dtype, cs->root);
    case COLLS_COLL_REDUCE:
    case COLLS_COLL_ALLREDUCE:
    case COLLS_COLL_SCAN:
    case COLLS_COLL_EXSCAN:
        r->slen = r->rlen = n * es;
        r->sbuf = xalloc(r->slen);
        r->rbuf = xalloc(r->rlen);
        r->want = xalloc(r->rlen);
        gen_fill(cs, seed, me, 0, n, r->sbuf);
        memset(r->rbuf, SENTINEL, r->rlen);
        memset(r->want, SENTINEL, r->rlen);
        if (cs->op == COLLS_COLL_SCAN)
            ref_reduce(cs, seed, 0, me + 1, 0, n, r->want);
        else if (cs->op == COLLS_COLL_EXSCAN) {
            if (me > 0)
                ref_reduce(cs, seed, 0, me, 0, n, r->want);
        } else if (cs->op == COLLS_COLL_ALLREDUCE || me == cs->root)
            ref_reduce(cs, seed, 0, x->P, 0, n, r->want);
        if (cs->op == COLLS_COLL_REDUCE)
            rc = colls_reduce(x->g, r->sbuf, r->rbuf, n, cs->dtype, cs->rop,
                              cs->root);
        else if (cs->op == COLLS_COLL_ALLREDUCE)
            rc = colls_allreduce(x->g, r->sbuf, r->rbuf, n, cs->dtype, cs->rop);
        else if (cs->op == COLLS_COLL_SCAN)
            rc = colls_scan(x->g, r->sbuf, r->rbuf, n, cs->dtype, cs->rop);
        else
            rc = colls_exscan(x->g, r->sbuf, r->rbuf, n, cs->dtype, cs->rop);
        return rc;
    case COLLS_COLL_REDUCE_SCATTER:
        r->slen = P * n * es;
        r->rlen = n * es;
        r->sbuf = xalloc(r->slen);
        r->rbuf = xalloc(r->rlen);
        r->want = xalloc(r->rlen);
        gen_fill(cs, seed, me, 0, P * n, r->sbuf);
        memset(r->rbuf, SENTINEL, r->rlen);
        ref_reduce(cs, seed, 0, x->P, (size_t)me * n, n, r->want);
        return colls_reduce_scatter(x->g, r->sbuf, r->rbuf, n, cs->dtype,
                                    cs->rop);
    case COLLS_COLL_GATHER:
    case COLLS_COLL_ALLGATHER:
        r->slen = n * es;
        r->rlen = P * n * es;
        r->sbuf = xalloc(r->slen);
        r->rbuf = xalloc(r->rlen);
        r->want = xalloc(r->rlen);
        gen_fill(cs, seed, me, 0, n, r->sbuf);
        memset(r->rbuf, SENTINEL, r->rlen);
        memset(r->want, SENTINEL, r->rlen);
        if (cs->op == COLLS_COLL_ALLGATHER || me == cs->root)
            for (j = 0; j < x->P; j++)
                gen_fill(cs, seed, j, 0, n, r->want + (size_t)j * n * es);
        if (cs->op == COLLS_COLL_GATHER)
            return colls_gather(x->g, r->sbuf, r->rbuf, n, cs->dtype, cs->root);
        return colls_allgather(x->g, r->sbuf, r->rbuf, n, cs->dtype);
    case COLLS_COLL_SCATTER:
        r->slen = P * n * es;
        r->rlen = n * es;
        r->sbuf = xalloc(r->slen);
        r->rbuf = xalloc(r->rlen);
        r->want = xalloc(r->rlen);
        if (me == cs->root)
            gen_fill(cs, seed, me, 0, P * n, r->sbuf);
        else
            memset(r->sbuf, SENTINEL, r->slen);
        memset(r->rbuf, SENTINEL, r->rlen);
        gen_fill(cs, seed, cs->root, (size_t)me * n, n, r->want);
        return colls_scatter(x->g, r->sbuf, r->rbuf, n, cs->dtype, cs->root);
    case COLLS_COLL_ALLTOALL:
        r->slen = r->rlen = P * n * es;
        r->sbuf = xalloc(r->slen);
        r->rbuf = xalloc(r->rlen);
        r->want = xalloc(r->rlen);
        gen_fill(cs, seed, me, 0, P * n, r->sbuf);
        memset(r->rbuf, SENTINEL, r->rlen);
        for (j = 0; j < x->P; j++)
            gen_fill(cs, seed, j, (size_t)me * n, n,
                     r->want + (size_t)j * n * es);
        return colls_alltoall(x->g, r->sbuf, r->rbuf, n, cs->dtype);
    case COLLS_COLL_GATHERV:
    case COLLS_COLL_ALLGATHERV:
        for (j = 0; j < x->P; j++)
            cnt[j] = vcount(n, j);
        len = vdispls(x->P, cnt, dsp);
        r->slen = cnt[me] * es;
        r->rlen = len * es;
        r->sbuf = xalloc(r->slen);
        r->rbuf = xalloc(r->rlen);
        r->want = xalloc(r->rlen);
        gen_fill(cs, seed, me, 0, cnt[me], r->sbuf);
        memset(r->rbuf, SENTINEL, r->rlen);
        memset(r->want, SENTINEL, r->rlen);
        if (cs->op == COLLS_COLL_ALLGATHERV || me == cs->root)
            for (j = 0; j < x->P; j++)
                gen_fill(cs, seed, j, 0, cnt[j], r->want + dsp[j] * es);
        if (cs->op == COLLS_COLL_GATHERV)
            return colls_gatherv(x->g, r->sbuf, cnt[me], r->rbuf, cnt, dsp,
                                 cs->dtype, cs->root);
        return colls_allgatherv(x->g, r->sbuf, cnt[me], r->rbuf, cnt, dsp,
                                cs->dtype);
    case COLLS_COLL_SCATTERV:
        for (j = 0, k = 0; j < x->P; j++) {
            cnt[j] = vcount(n, j);
            off[j] = k;
            k += cnt[j];
        }
        len = vdispls(x->P, cnt, dsp);
        r->slen = len * es;
        r->rlen = cnt[me] * es;
        r->sbuf = xalloc(r->slen);
        r->rbuf = xalloc(r->rlen);
        r->want = xalloc(r->rlen);
        memset(r->sbuf, SENTINEL, r->slen);
        if (me == cs->root)
            for (j = 0; j < x->P; j++)
                gen_fill(cs, seed, me, off[j], cnt[j], r->sbuf + dsp[j] * es);
        memset(r->rbuf, SENTINEL, r->rlen);
        gen_fill(cs, seed, cs->root, off[me], cnt[me], r->want);
        return colls_scatterv(x->g, r->sbuf, cnt, dsp, r->rbuf, cnt[me],
                              cs->dtype, cs->root);
    case COLLS_COLL_ALLTOALLV:
        for (j = 0, k = 0; j < x->P; j++) {
            cnt[j] = vcount2(n, me, j);
            rcnt[j] = vcount2(n, j, me);
            off[j] = k;
            k += cnt[j];
        }
        len = vdispls(x->P, cnt, dsp);
        r->slen = len * es;
        r->sbuf = xalloc(r->slen);
        memset(r->sbuf, SENTINEL, r->slen);
        for (j = 0; j < x->P; j++)
            gen_fill(cs, seed, me, off[j], cnt[j], r->sbuf + dsp[j] * es);
        len = vdispls(x->P, rcnt, rdsp);
        r->rlen = len * es;
        r->rbuf = xalloc(r->rlen);
        r->want = xalloc(r->rlen);
        memset(r->rbuf, SENTINEL, r->rlen);
        memset(r->want, SENTINEL, r->rlen);
        for (j = 0; j < x->P; j++) {
            /* Rank j's packed offset of its block for me. */
            int t;
            size_t o = 0;
            for (t = 0; t < me; t++)
                o += vcount2(n, j, t);
            gen_fill(cs, seed, j, o, rcnt[j], r->want + rdsp[j] * es);
        }
        return colls_alltoallv(x->g, r->sbuf, cnt, dsp, r->rbuf, rcnt, rdsp,
                               cs->dtype);
    default:
        return COLLS_EINVAL;
    }
}

static void
run_free(struct run *r)
{
    free(r->sbuf);
    free(r->rbuf);
    free(r->want);
}

/* The algorithm name of spec "name[:seg]" into buf. */
static void
spec_name(const char *spec, char *buf, size_t cap)
{
    size_t n = strcspn(spec, ":");

    if (n >= cap)
        n = cap - 1;
    memcpy(buf, spec, n);
    buf[n] = '\0';
}

/* The operations hierarchical mode can only run with ranks contiguous
   per host (daemon/coll.c, coll_choose). */
static int
needs_contig(int op)
{
    const struct collop *o = collop_get(op);

    return (o->blocks && o->family != COLLOP_ALL_TO_ALL2) ||
           o->family == COLLOP_PREFIX;
}

/*
 * Checks what the library says ran: flat when flat was asked for, and
 * the forced algorithm when it is usable for the operation over the ranks
 * (flat) or leaders (hier) it ran over, another one when not (fallback:
 * the name is not in that table, or alg_usable refuses it).
 */
static int
check_alg(struct ctx *x, const struct ccase *cs, int mode)
{
    const char *ran = colls_group_last_alg(x->g);
    int ran_mode = colls_group_last_mode(x->g);
    const struct alg *a;
    struct alg_args args;
    char name[64], d[512], base[64];
    size_t len;
    int usable, fpc, may_fpc;

    describe(x, cs, mode, d, sizeof d);
    if (ran == NULL || ran[0] == '\0') {
        say("FAIL: %s: colls_group_last_alg is empty", d);
        return -1;
    }
    /* "+fpc" where FPC applies (always with on), nowhere else */
    len = strlen(ran);
    fpc = len > 4 && strcmp(ran + len - 4, "+fpc") == 0;
    may_fpc = cs->op == COLLS_COLL_BCAST && cs->dtype == COLLS_DOUBLE &&
              ran_mode == COLLS_MODE_HIER && x->nhosts > 1 && cs->count > 0 &&
              x->o->compress != COLLS_COMPRESS_OFF;
    if (fpc && !may_fpc) {
        say("FAIL: %s: last_alg %s, but FPC does not apply", d, ran);
        return -1;
    }
    if (!fpc && may_fpc && x->o->compress == COLLS_COMPRESS_ON) {
        say("FAIL: %s: compression on, last_alg %s has no +fpc", d, ran);
        return -1;
    }
    snprintf(base, sizeof base, "%.*s", (int)(fpc ? len - 4 : len), ran);
    ran = base;
    if (mode == COLLS_MODE_FLAT && ran_mode != COLLS_MODE_FLAT) {
        say("FAIL: %s: flat asked, last_mode %d", d, ran_mode);
        return -1;
    }
    if (ran_mode != COLLS_MODE_FLAT && ran_mode != COLLS_MODE_HIER) {
        say("FAIL: %s: last_mode %d", d, ran_mode);
        return -1;
    }
    /* hier asked: hier ran, unless the operation needs ranks contiguous
       per host and round-robin placement may have broken that (the
       daemon then runs it flat and counts hier_as_flat) */
    if (mode == COLLS_MODE_HIER && ran_mode != COLLS_MODE_HIER &&
        !(needs_contig(cs->op) && x->place == COLLS_PLACE_ROUNDROBIN &&
          x->nhosts > 1)) {
        say("FAIL: %s: hier asked, ran flat", d);
        return -1;
    }
    if (cs->alg == NULL)
        return 0;
    spec_name(cs->alg, name, sizeof name);
    memset(&args, 0, sizeof args);
    args.op = ran_mode == COLLS_MODE_HIER ? collop_get(cs->op)->leader : cs->op;
    args.P = ran_mode == COLLS_MODE_HIER ? x->nhosts : x->P;
    args.dtype = cs->dtype;
    args.rop = cs->rop >= 0 ? cs->rop : COLLS_SUM;
    args.size = cs->count * dtype_size(cs->dtype);
    a = alg_find(args.op, name, NULL);
    usable = a != NULL && alg_usable(a, &args);
    if (usable && strcmp(ran, name) != 0) {
        say("FAIL: %s: forced %s (usable for %s over %d), last_alg says %s", d,
            name, collop_name(args.op), args.P, ran);
        return -1;
    }
    if (!usable && strcmp(ran, name) == 0) {
        say("FAIL: %s: forced %s is not usable for %s over %d but last_alg "
            "says it ran",
            d, name, collop_name(args.op), args.P);
        return -1;
    }
    if (x->o->verbose > 1)
        say("ok %s -> %s/%s", d, ran,
            ran_mode == COLLS_MODE_HIER ? "hier" : "flat");
    return 0;
}

/* The algorithm a direct collective of op of bytes per member among P
   members on nhosts hosts reports (libclient/dcoll.c and hcoll.c,
   docs/collectives.md "Direct collectives"), NULL if op never runs
   direct. */
static const char *
direct_alg(int op, size_t bytes, int P, int nhosts)
{
    const char *dm = getenv("COLLS_DIRECT_MAX");
    size_t max = dm != NULL ? (size_t)strtoull(dm, NULL, 10) : 65536;
    size_t item = op == COLLS_COLL_ALLGATHER ? bytes * (size_t)P : bytes;

    /* several members on a host: hierarchically (hcoll.c), bcast and
       allreduce at any size (chunk by chunk), allgather when all its
       blocks are at most COLLS_DIRECT_MAX (65536) bytes and as one bcast
       per member when larger */
    if (nhosts < P && op == COLLS_COLL_ALLGATHER && item > max)
        return "host+bcasts";
    if (nhosts < P)
        switch (op) {
        case COLLS_COLL_BARRIER:
            return "host+dissemination";
        case COLLS_COLL_BCAST:
            return "host+binomial";
        case COLLS_COLL_ALLGATHER:
            return "host+pairwise";
        case COLLS_COLL_ALLREDUCE:
            return "host+pairwise+reduce";
        default:
            return NULL;
        }
    /* from COLLS__DCOLL_RSAG (libclient/internal.h) gathered into each
       member, allgather and allreduce send each block straight to every
       member */
    switch (op) {
    case COLLS_COLL_BARRIER:
        return "dissemination";
    case COLLS_COLL_BCAST:
        return "binomial";
    case COLLS_COLL_ALLGATHER:
        return bytes * (size_t)P >= 131072 ? "pairwise" : "bruck";
    case COLLS_COLL_ALLREDUCE:
        return bytes * (size_t)P >= 131072 ? "rsag" : "bruck+reduce";
    default:
        return NULL;
    }
}

/* After cs ran in COLLS_MODE_DIRECT: mode and algorithm must say it ran
   direct.  0 or -1. */
static int
check_direct(struct ctx *x, const struct ccase *cs)
{
    const char *ran = colls_group_last_alg(x->g);
    int ran_mode = colls_group_last_mode(x->g);
    const char *want =
        direct_alg(cs->op, cs->count * dtype_size(cs->dtype), x->P, x->nhosts);
    char d[512];

    if (ran_mode == COLLS_MODE_DIRECT && strcmp(ran, want) == 0)
        return 0;
    describe(x, cs, COLLS_MODE_DIRECT, d, sizeof d);
    say("FAIL: %s: direct asked, last_mode %d last_alg %s (want %s)", d,
        ran_mode, ran, want);
    return -1;
}

/*
 * A direct allreduce with the input in the output buffer (sbuf == rbuf),
 * after run r of cs: the result must be the reference (rsag's first sends
 * read the buffer its result goes to).  0 or -1.
 */
static int
check_in_place(struct ctx *x, const struct ccase *cs, const struct run *r)
{
    unsigned char *io = xalloc(r->slen);
    char d[512];
    int rc;

    memcpy(io, r->sbuf, r->slen);
    rc = colls_group_set_mode(x->g, COLLS_MODE_DIRECT);
    if (rc == 0)
        rc = colls_allreduce(x->g, io, io, cs->count, cs->dtype, cs->rop);
    x->ncalls++;
    if (rc != 0) {
        describe(x, cs, COLLS_MODE_DIRECT, d, sizeof d);
        say("FAIL: %s: in place: returned %s", d, colls_err_name(rc));
    } else if (r->rlen > 0 &&
               compare(x, cs, COLLS_MODE_DIRECT, "in place vs reference",
                       r->want, io, r->rlen) != 0) {
        rc = -1;
    }
    free(io);
    return rc != 0 ? -1 : 0;
}

/*
 * Runs cs in hierarchical and in flat mode, and for the default choice of
 * an operation that can run direct, in direct mode; every result must
 * equal the reference and the hierarchical one.
 */
static int
check_case(struct ctx *x, struct ccase *cs)
{
    static const int modes[3] = {COLLS_MODE_HIER, COLLS_MODE_FLAT,
                                 COLLS_MODE_DIRECT};
    struct run run[3];
    char d[512];
    int m, rc, bad = 0;
    int nm = cs->alg == NULL && direct_alg(cs->op, 0, 1, 1) != NULL ? 3 : 2;

    memset(run, 0, sizeof run);
    for (m = 0; m < nm && !bad; m++) {
        rc = colls_group_set_mode(x->g, modes[m]);
        if (rc == 0)
            rc = colls_group_set_alg(x->g, cs->op, cs->alg);
        if (rc != 0) {
            describe(x, cs, modes[m], d, sizeof d);
            say("FAIL: %s: setting mode/alg: %s", d, colls_err_name(rc));
            return -1;
        }
        rc = call_case(x, cs, &run[m]);
        x->ncalls++;
        if (rc != 0) {
            describe(x, cs, modes[m], d, sizeof d);
            say("FAIL: %s: returned %s", d, colls_err_name(rc));
            bad = 1;
            break;
        }
        if (run[m].rlen > 0 &&
            compare(x, cs, modes[m], "result vs reference", run[m].want,
                    run[m].rbuf, run[m].rlen) != 0)
            bad = 1;
        else if (modes[m] == COLLS_MODE_DIRECT
                     ? check_direct(x, cs) != 0
                     : check_alg(x, cs, modes[m]) != 0)
            bad = 1;
    }
    for (m = 1; m < nm && !bad; m++)
        if (run[0].rlen > 0 && compare(x, cs, modes[m], "vs hier", run[0].rbuf,
                                       run[m].rbuf, run[0].rlen) != 0)
            bad = 1;
    if (!bad && nm == 3 && cs->op == COLLS_COLL_ALLREDUCE)
        bad = check_in_place(x, cs, &run[2]) != 0;
    for (m = 0; m < nm; m++)
        run_free(&run[m]);
    colls_group_set_mode(x->g, COLLS_MODE_FLAT);
    colls_group_set_alg(x->g, cs->op, NULL);
    x->ncases++;
    return bad ? -1 : 0;
}

/* ---- the matrix -------------------------------------------------------- */

static const int all_dtypes[] = {
    COLLS_BYTE,   COLLS_INT8,  COLLS_INT16,  COLLS_INT32,
    COLLS_INT64,  COLLS_UINT8, COLLS_UINT16, COLLS_UINT32,
    COLLS_UINT64, COLLS_FLOAT, COLLS_DOUBLE,
};
#define N_ALL_DTYPES (sizeof all_dtypes / sizeof all_dtypes[0])

/* The operator used with dtype where one is enough. */
static int
default_rop(int dtype)
{
    return dtype == COLLS_BYTE ? COLLS_BXOR : COLLS_SUM;
}

/* Calls check_case for every (dtype, rop) of the level at cs->count and
   both roots; cs->dtype/rop/root/salt are set here. */
static int
sweep_types(struct ctx *x, struct ccase *cs, int sizeidx)
{
    static const int three[] = {COLLS_INT32, COLLS_DOUBLE, COLLS_UINT8};
    int pairs[64][2], np = 0, lv = x->o->level,
                      red = collop_is_reduction(cs->op);
    int roots[2] = {0, x->P - 1}, nroots, i, t, ri, rop;
    size_t d;

    if (cs->count == 0 || (lv == LEVEL_SMOKE && sizeidx != 2)) {
        pairs[np][0] = COLLS_INT32;
        pairs[np++][1] = red ? COLLS_SUM : -1;
    } else if (sizeidx == 1 && lv == LEVEL_FULL && red) {
        /* int32, double, uint8 with every valid operator. */
        for (t = 0; t < 3; t++)
            for (rop = 0; rop < COLLS_OP_MAX; rop++)
                if (reduce_check(rop, three[t]) == 0) {
                    pairs[np][0] = three[t];
                    pairs[np++][1] = rop;
                }
    } else if (sizeidx == 1 && lv == LEVEL_THIN && red) {
        /* One operator of each kind: arithmetic, logical, bitwise. */
        static const int thin[4][2] = {
            {COLLS_INT32, COLLS_PROD},
            {COLLS_INT32, COLLS_LXOR},
            {COLLS_DOUBLE, COLLS_MIN},
            {COLLS_UINT8, COLLS_BAND},
        };
        for (t = 0; t < 4; t++) {
            pairs[np][0] = thin[t][0];
            pairs[np++][1] = thin[t][1];
        }
    } else if (sizeidx == 2 && lv == LEVEL_FULL) {
        for (d = 0; d < N_ALL_DTYPES; d++) {
            pairs[np][0] = all_dtypes[d];
            pairs[np++][1] = red ? default_rop(all_dtypes[d]) : -1;
        }
    } else {
        pairs[np][0] = COLLS_DOUBLE;
        pairs[np++][1] = red ? COLLS_SUM : -1;
        if (sizeidx != 3) {
            pairs[np][0] = COLLS_INT32;
            pairs[np++][1] = red ? COLLS_MAX : -1;
        }
    }
    nroots = collop_is_rooted(cs->op) && x->P > 1 ? 2 : 1;
    if (!collop_is_rooted(cs->op))
        roots[0] = 0;
    for (i = 0; i < np; i++)
        for (ri = 0; ri < nroots; ri++) {
            cs->dtype = pairs[i][0];
            cs->rop = pairs[i][1];
            cs->root = roots[ri];
            cs->salt = mix((uint64_t)cs->op << 40 ^ (uint64_t)cs->count << 8 ^
                           (uint64_t)cs->dtype << 4 ^ (uint64_t)(cs->rop + 1));
            if (check_case(x, cs) != 0)
                return -1;
        }
    return 0;
}

/* 1 if op is in the --ops list (or there is none). */
static int
op_selected(const struct opts *o, int op)
{
    const char *p = o->ops, *name = collop_name(op);
    size_t n = strlen(name);

    if (p == NULL)
        return 1;
    while (*p != '\0') {
        size_t m = strcspn(p, ",");
        if (m == n && strncmp(p, name, n) == 0)
            return 1;
        p += m;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* Every selected operation x algorithm x size x types x roots. */
static int
run_matrix(struct ctx *x)
{
    static const size_t sizes[] = {0, 1, 1009, LARGE_COUNT};
    size_t ntab, i, s;
    int op;

    for (op = 0; op < COLLS_COLL_MAX; op++) {
        const struct alg *tab = alg_table(op, &ntab);
        char specs[24][80];
        size_t nspecs = 0;
        unsigned long before = x->ncalls;

        if (!op_selected(x->o, op))
            continue;
        for (i = 0; i < ntab && nspecs + 2 < 24; i++) {
            snprintf(specs[nspecs++], sizeof specs[0], "%s", tab[i].name);
            if ((tab[i].flags & ALG_SEGMENTED) && x->o->level != LEVEL_SMOKE)
                snprintf(specs[nspecs++], sizeof specs[0], "%s:8192",
                         tab[i].name);
        }
        for (i = 0; i <= nspecs; i++) {
            struct ccase cs;

            memset(&cs, 0, sizeof cs);
            cs.op = op;
            cs.alg = i == nspecs ? NULL : specs[i];
            for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                if (op == COLLS_COLL_BARRIER && s > 0)
                    break;
                if (x->o->level == LEVEL_SMOKE && s == 1)
                    continue;
                cs.count = sizes[s];
                /* Blocks of P per rank: keep the whole buffer near the
                   large size. */
                if (s == 3 &&
                    (op == COLLS_COLL_ALLTOALL || op == COLLS_COLL_ALLTOALLV ||
                     op == COLLS_COLL_REDUCE_SCATTER ||
                     op == COLLS_COLL_SCATTER || op == COLLS_COLL_SCATTERV))
                    cs.count = sizes[s] / (size_t)x->P + 1;
                if (sweep_types(x, &cs, (int)s) != 0)
                    return -1;
            }
        }
        if (x->rank == 0 && x->o->verbose)
            say("%s: %s: %lu calls passed", x->gname, collop_name(op),
                x->ncalls - before);
    }
    return 0;
}

/* ---- groups -------------------------------------------------------------*/

/*
 * Joins name with placement, records rank, size and hosts, and checks the
 * rank order the placement promises (docs/collectives.md, Formation).
 */
static int
join(struct ctx *x, const char *name, int size, int place)
{
    int hids[MAX_P], order[MAX_P], uniq[MAX_P], cnt[MAX_P], used[MAX_P];
    int rc, r, h, nh = 0, k = 0, round, tries = 0;

    /* With retry_eexist (re-forming after a failure): the owner may learn
       of the death after this survivor did (the news and this join travel
       between different pairs of daemons), so the name can still be taken
       for a moment. */
    while ((rc = colls_group_join_placed(x->c, name, size, place, &x->g)) ==
               COLLS_EEXIST &&
           x->retry_eexist && tries < 100) {
        tries++;
        usleep(50000);
    }
    if (tries > 0)
        say("join %s: EEXIST %d time(s) before %s", name, tries,
            colls_err_name(rc < 0 ? rc : 0));
    if (rc < 0) {
        say("FAIL: join %s (size %d): %s", name, size, colls_err_name(rc));
        return rc;
    }
    x->gname = name;
    x->place = place;
    x->rank = colls_group_rank(x->g);
    x->P = colls_group_size(x->g);
    if (rc != x->rank || x->P != size || x->P > MAX_P ||
        colls_group_tid(x->g, x->rank) != colls_mytid(x->c) ||
        colls_group_tid(x->g, x->P) != 0) {
        say("FAIL: join %s: returned %d, rank %d, size %d, tid %x vs mine %x",
            name, rc, x->rank, x->P, colls_group_tid(x->g, x->rank),
            colls_mytid(x->c));
        return -1;
    }
    rc = colls_group_set_compress(x->g, x->o->compress);
    if (rc != 0) {
        say("FAIL: join %s: set_compress %d: %s", name, x->o->compress,
            colls_err_name(rc));
        return -1;
    }
    for (r = 0; r < x->P; r++) {
        hids[r] = COLLS_TID_HID(colls_group_tid(x->g, r));
        for (h = 0; h < nh && uniq[h] != hids[r]; h++)
            ;
        if (h == nh) {
            uniq[nh] = hids[r];
            cnt[nh++] = 0;
        }
        cnt[h]++;
    }
    x->nhosts = nh;
    /* The expected host sequence: hosts ascending, contiguous blocks or
       dealt round-robin. */
    for (r = 0; r < nh; r++)
        for (h = r + 1; h < nh; h++)
            if (uniq[h] < uniq[r]) {
                int t = uniq[h], c = cnt[h];
                uniq[h] = uniq[r];
                cnt[h] = cnt[r];
                uniq[r] = t;
                cnt[r] = c;
            }
    memset(used, 0, sizeof used);
    if (place == COLLS_PLACE_CONTIGUOUS) {
        for (h = 0; h < nh; h++)
            for (r = 0; r < cnt[h]; r++)
                order[k++] = uniq[h];
    } else {
        for (round = 0; k < x->P; round++)
            for (h = 0; h < nh; h++)
                if (used[h] < cnt[h]) {
                    order[k++] = uniq[h];
                    used[h]++;
                }
    }
    for (r = 0; r < x->P; r++)
        if (order[r] != hids[r]) {
            say("FAIL: join %s: rank %d is on host %d, placement %s wants %d",
                name, r, hids[r], place ? "round-robin" : "contiguous",
                order[r]);
            return -1;
        }
    return 0;
}

static int
leave(struct ctx *x)
{
    int rc = colls_group_leave(x->g);

    x->g = NULL;
    if (rc != 0)
        say("FAIL: leave %s: %s", x->gname, colls_err_name(rc));
    return rc;
}

/*
 * Invalid arguments, the same at every member: each call must fail with
 * its code, and the group must stay usable (a checked barrier and
 * allreduce follow).
 */
static int
check_invalid(struct ctx *x)
{
    int32_t a[4] = {1, 2, 3, 4}, b[4];
    uint8_t u[4] = {1, 2, 3, 4}, v[4];
    struct {
        const char *what;
        int rc, want;
    } t[5];
    struct ccase cs;
    struct run r;
    int i, rc;

    t[0].what = "allreduce byte sum";
    t[0].rc = colls_allreduce(x->g, u, v, 4, COLLS_BYTE, COLLS_SUM);
    t[0].want = COLLS_EOP;
    t[1].what = "allreduce double band";
    t[1].rc = colls_allreduce(x->g, a, b, 2, COLLS_DOUBLE, COLLS_BAND);
    t[1].want = COLLS_EOP;
    t[2].what = "bcast dtype 99";
    t[2].rc = colls_bcast(x->g, a, 4, 99, 0);
    t[2].want = COLLS_EDTYPE;
    t[3].what = "bcast root P";
    t[3].rc = colls_bcast(x->g, a, 4, COLLS_INT32, x->P);
    t[3].want = COLLS_EINVAL;
    t[4].what = "reduce op 99";
    t[4].rc = colls_reduce(x->g, a, b, 4, COLLS_INT32, 99, 0);
    t[4].want = COLLS_EOP;
    for (i = 0; i < 5; i++)
        if (t[i].rc != t[i].want) {
            say("FAIL: %s on %s rank %d: %s, want %s", t[i].what, x->gname,
                x->rank, colls_err_name(t[i].rc), colls_err_name(t[i].want));
            return -1;
        }
    rc = colls_barrier(x->g);
    memset(&cs, 0, sizeof cs);
    cs.op = COLLS_COLL_ALLREDUCE;
    cs.dtype = COLLS_INT64;
    cs.rop = COLLS_BXOR;
    cs.count = 17;
    cs.salt = 77;
    if (rc == 0) {
        rc = call_case(x, &cs, &r);
        if (rc == 0 && compare(x, &cs, COLLS_MODE_AUTO, "after invalid calls",
                               r.want, r.rbuf, r.rlen) != 0)
            rc = -1;
        run_free(&r);
    }
    if (rc != 0) {
        say("FAIL: %s rank %d: group after invalid calls: %s", x->gname,
            x->rank, colls_err_name(rc));
        return -1;
    }
    return 0;
}

/* FNV-1a 64 of len bytes. */
static uint64_t
fnv64(const unsigned char *p, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;

    for (i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/*
 * allreduce promises bitwise the same result on every rank for every
 * algorithm (ALG_SAME_RESULT in daemon/alg/alg.h), also when floating
 * SUM depends on the order: doubles of widely spread magnitudes are
 * summed with each algorithm in both modes, and the ranks' result hashes
 * (allgathered) must all be equal.
 */
static int
check_same_result(struct ctx *x)
{
    static const int modes[3] = {COLLS_MODE_HIER, COLLS_MODE_FLAT,
                                 COLLS_MODE_DIRECT};
    size_t ntab, i, n = 1009, k;
    const struct alg *tab = alg_table(COLLS_COLL_ALLREDUCE, &ntab);
    double *in = xalloc(n * sizeof *in), *out = xalloc(n * sizeof *out);
    uint64_t h, all[MAX_P];
    int m, r, rc = 0;

    for (k = 0; k < n; k++) {
        uint64_t v = mix(mix(x->o->seed ^ 0x5a5e) ^ (uint64_t)x->rank) + k;
        v = mix(v);
        in[k] =
            ldexp((double)(v >> 11), (int)(v % 60) - 80) * (v & 1 ? -1.0 : 1.0);
    }
    for (i = 0; i <= ntab && rc == 0; i++)
        for (m = 0; m < (i < ntab ? 2 : 3) && rc == 0; m++) {
            colls_group_set_mode(x->g, modes[m]);
            colls_group_set_alg(x->g, COLLS_COLL_ALLREDUCE,
                                i < ntab ? tab[i].name : NULL);
            rc = colls_allreduce(x->g, in, out, n, COLLS_DOUBLE, COLLS_SUM);
            h = fnv64((const unsigned char *)out, n * sizeof *out);
            if (rc == 0)
                rc = colls_allgather(x->g, &h, all, 1, COLLS_UINT64);
            if (rc != 0) {
                say("FAIL: %s rank %d: same-result allreduce %s: %s", x->gname,
                    x->rank, i < ntab ? tab[i].name : "(auto)",
                    colls_err_name(rc));
                break;
            }
            for (r = 0; r < x->P; r++)
                if (all[r] != h) {
                    say("FAIL: %s: allreduce %s (%s) of inexact doubles: "
                        "rank %d's result hash %016" PRIx64 " differs from "
                        "rank %d's %016" PRIx64,
                        x->gname, i < ntab ? tab[i].name : "(auto)",
                        m == 0   ? "hier"
                        : m == 1 ? "flat"
                                 : "direct",
                        r, all[r], x->rank, h);
                    rc = -1;
                    break;
                }
        }
    colls_group_set_alg(x->g, COLLS_COLL_ALLREDUCE, NULL);
    free(in);
    free(out);
    return rc;
}

static int
do_matrix(struct ctx *x)
{
    static char names[2][128];
    int p;

    for (p = 0; p < 2; p++) {
        if (!(x->o->place & (1 << p)))
            continue;
        snprintf(names[p], sizeof names[p], "%s-%c", x->o->group,
                 p == 0 ? 'c' : 'r');
        if (join(x, names[p], x->o->size,
                 p == 0 ? COLLS_PLACE_CONTIGUOUS : COLLS_PLACE_ROUNDROBIN) != 0)
            return 1;
        x->ncases = x->ncalls = 0;
        if (check_invalid(x) != 0 || check_same_result(x) != 0 ||
            run_matrix(x) != 0)
            return 1;
        if (x->rank == 0)
            say("%s: P=%d hosts=%d: %lu cases, %lu calls passed", names[p],
                x->P, x->nhosts, x->ncases, x->ncalls);
        if (leave(x) != 0)
            return 1;
    }
    return 0;
}

/* Concurrency: two groups of this process, alternated. */
static int
do_conc(struct ctx *x)
{
    static const int ops[] = {
        COLLS_COLL_ALLREDUCE, COLLS_COLL_BCAST,     COLLS_COLL_ALLTOALL,
        COLLS_COLL_SCAN,      COLLS_COLL_ALLGATHER, COLLS_COLL_BARRIER,
        COLLS_COLL_REDUCE,    COLLS_COLL_GATHERV,
    };
    struct ctx gx[2];
    char names[2][128];
    int it, k;

    for (k = 0; k < 2; k++) {
        gx[k] = *x;
        snprintf(names[k], sizeof names[k], "%s-%c", x->o->group, 'a' + k);
        if (join(&gx[k], names[k], x->o->size,
                 k == 0 ? COLLS_PLACE_CONTIGUOUS : COLLS_PLACE_ROUNDROBIN))
            return 1;
    }
    for (it = 0; it < x->o->iters; it++) {
        struct ctx *y = &gx[it % 2];
        struct ccase cs;
        struct run r;
        char d[512];
        int rc;

        memset(&cs, 0, sizeof cs);
        cs.op = ops[(it / 2) % (sizeof ops / sizeof ops[0])];
        cs.dtype = it % 3 == 0 ? COLLS_DOUBLE : COLLS_INT32;
        cs.rop = collop_is_reduction(cs.op) ? COLLS_SUM : -1;
        cs.count = 1 + (size_t)(mix((uint64_t)it) % 3000);
        cs.root = collop_is_rooted(cs.op) ? it % y->P : 0;
        /* Salted by group name and iteration: a result delivered to the
           wrong group or call cannot match. */
        cs.salt = mix((uint64_t)it * 31 + (uint64_t)names[it % 2][0] +
                      (uint64_t)(it % 2) * 0x1000 + y->o->seed);
        for (k = 0; names[it % 2][k] != '\0'; k++)
            cs.salt = mix(cs.salt ^ (uint64_t)(unsigned char)names[it % 2][k]);
        rc = call_case(y, &cs, &r);
        if (rc != 0) {
            describe(y, &cs, COLLS_MODE_AUTO, d, sizeof d);
            say("FAIL: conc iteration %d: %s: %s", it, d, colls_err_name(rc));
            run_free(&r);
            return 1;
        }
        if (r.rlen > 0 && compare(y, &cs, COLLS_MODE_AUTO, "conc", r.want,
                                  r.rbuf, r.rlen) != 0) {
            say("(iteration %d)", it);
            run_free(&r);
            return 1;
        }
        run_free(&r);
    }
    if (gx[0].rank == 0)
        say("%s and %s: %d alternated collectives passed", names[0], names[1],
            x->o->iters);
    for (k = 0; k < 2; k++)
        if (leave(&gx[k]) != 0)
            return 1;
    return 0;
}

/*
 * Back to back: --iters rooted operations (runs of bcasts, scatters,
 * reduces, gathers from varying roots, the v-variants among them) mixed
 * with allreduces, no barrier anywhere, on each placement in hierarchical
 * and then flat mode.  A root or sender may return before the operation
 * ended (docs/collectives.md, "Completion"): its input buffer is
 * overwritten and freed at once, and every output is compared with the
 * serial reference as soon as its call returned.
 */
static int
b2b_run(struct ctx *x, int mode)
{
    static const int ops[] = {
        COLLS_COLL_BCAST,   COLLS_COLL_BCAST,     COLLS_COLL_BCAST,
        COLLS_COLL_SCATTER, COLLS_COLL_REDUCE,    COLLS_COLL_BCAST,
        COLLS_COLL_REDUCE,  COLLS_COLL_SCATTERV,  COLLS_COLL_GATHER,
        COLLS_COLL_BCAST,   COLLS_COLL_GATHERV,   COLLS_COLL_ALLREDUCE,
        COLLS_COLL_BCAST,   COLLS_COLL_ALLREDUCE, COLLS_COLL_REDUCE,
        COLLS_COLL_SCATTER,
    };
    const char *mname = mode == COLLS_MODE_HIER   ? "hier"
                        : mode == COLLS_MODE_FLAT ? "flat"
                                                  : "direct";
    int it, rc = colls_group_set_mode(x->g, mode);

    if (rc != 0) {
        say("FAIL: b2b %s: set mode: %s", mname, colls_err_name(rc));
        return 1;
    }
    for (it = 0; it < x->o->iters; it++) {
        struct ccase cs;
        struct run r;
        char d[512];
        uint64_t h = mix(x->o->seed ^ (uint64_t)it * 0x9e37 ^
                         (uint64_t)mode << 32 ^ (uint64_t)x->place << 40);

        memset(&cs, 0, sizeof cs);
        cs.op = ops[it % (int)(sizeof ops / sizeof ops[0])];
        cs.dtype = it % 3 == 0 ? COLLS_DOUBLE : COLLS_INT32;
        cs.rop = collop_is_reduction(cs.op) ? COLLS_SUM : -1;
        /* mostly small (latency-bound, where returning early matters
           most), every 16th larger than a segment */
        cs.count = it % 16 == 7 ? LARGE_COUNT : 1 + (size_t)(h % 64);
        if (it % 16 == 7 &&
            (cs.op == COLLS_COLL_SCATTER || cs.op == COLLS_COLL_SCATTERV))
            cs.count = LARGE_COUNT / (size_t)x->P + 1;
        cs.root =
            collop_is_rooted(cs.op) ? (int)((h >> 20) % (uint64_t)x->P) : 0;
        cs.salt = mix(h ^ 0xb2b);
        rc = call_case(x, &cs, &r);
        x->ncalls++;
        if (rc != 0) {
            describe(x, &cs, mode, d, sizeof d);
            say("FAIL: b2b %s iteration %d: %s: %s", mname, it, d,
                colls_err_name(rc));
            run_free(&r);
            return 1;
        }
        /* the input may be reused at once */
        if (r.slen > 0)
            memset(r.sbuf, 0x5a, r.slen);
        if (r.rlen > 0 &&
            compare(x, &cs, mode, "b2b", r.want, r.rbuf, r.rlen) != 0) {
            say("(b2b %s iteration %d)", mname, it);
            run_free(&r);
            return 1;
        }
        run_free(&r);
    }
    return 0;
}

/* rc is COLLS_EINVAL with the daemon's "unknown algorithm" words. */
static int
b2b_unknown_alg(struct ctx *x, const char *what, int rc)
{
    const char *m = colls_errmsg(x->c);

    if (rc == COLLS_EINVAL && strstr(m, "unknown algorithm") != NULL)
        return 0;
    say("FAIL: %s rank %d: %s returned %s (\"%s\"), want COLLS_EINVAL and "
        "unknown algorithm",
        x->gname, x->rank, what, colls_err_name(rc), m);
    return 1;
}

/*
 * A failure of an operation that returned early is reported by the next
 * call on the group: a bcast with an algorithm the daemons do not have
 * fails everywhere; at the root it either failed itself or returned 0 and
 * then the next allreduce returns that failure, its own result valid.
 * The allreduce after that succeeds everywhere.
 */
static int
b2b_deferred(struct ctx *x)
{
    int32_t buf[4] = {1, 2, 3, 4}, in = x->rank + 1, out, k;
    int32_t want = x->P * (x->P + 1) / 2;
    int rc, early;

    rc = colls_group_set_alg(x->g, COLLS_COLL_BCAST, "nosuch");
    if (rc != 0) {
        say("FAIL: set alg nosuch: %s", colls_err_name(rc));
        return 1;
    }
    rc = colls_bcast(x->g, buf, 4, COLLS_INT32, 0);
    colls_group_set_alg(x->g, COLLS_COLL_BCAST, NULL);
    early = x->rank == 0 && rc == 0;
    if (!early && b2b_unknown_alg(x, "bcast nosuch", rc) != 0)
        return 1;
    for (k = 0; k < 2; k++) {
        out = -1;
        rc = colls_allreduce(x->g, &in, &out, 1, COLLS_INT32, COLLS_SUM);
        if (k == 0 && early) {
            if (b2b_unknown_alg(x, "allreduce after bcast nosuch", rc) != 0)
                return 1;
        } else if (rc != 0) {
            say("FAIL: %s rank %d: allreduce %d after bcast nosuch: %s",
                x->gname, x->rank, k, colls_err_name(rc));
            return 1;
        }
        if (out != want) {
            say("FAIL: %s rank %d: allreduce %d after bcast nosuch gave %d, "
                "want %d",
                x->gname, x->rank, k, (int)out, (int)want);
            return 1;
        }
    }
    if (x->rank == 0)
        say("%s: bcast nosuch: the root had its failure from %s", x->gname,
            early ? "the next allreduce" : "the bcast itself");
    return 0;
}

static int
do_b2b(struct ctx *x)
{
    static const int modes[3] = {COLLS_MODE_HIER, COLLS_MODE_FLAT,
                                 COLLS_MODE_DIRECT};
    char name[128];
    int p, m;

    for (p = 0; p < 2; p++) {
        if (!(x->o->place & (1 << p)))
            continue;
        snprintf(name, sizeof name, "%s-b%c", x->o->group, p == 0 ? 'c' : 'r');
        if (join(x, name, x->o->size,
                 p == 0 ? COLLS_PLACE_CONTIGUOUS : COLLS_PLACE_ROUNDROBIN) != 0)
            return 1;
        x->ncalls = 0;
        for (m = 0; m < 3; m++)
            if (b2b_run(x, modes[m]) != 0 || b2b_deferred(x) != 0)
                return 1;
        if (x->rank == 0)
            say("%s: P=%d hosts=%d: %lu back-to-back calls passed", name, x->P,
                x->nhosts, x->ncalls);
        if (leave(x) != 0)
            return 1;
    }
    return 0;
}

/* One allreduce (count ints) checked against the reference; the result
   code of the call, or 1 on a wrong result. */
static int
fail_round(struct ctx *x, int it, size_t count)
{
    struct ccase cs;
    struct run r;
    int rc;

    memset(&cs, 0, sizeof cs);
    cs.op = COLLS_COLL_ALLREDUCE;
    cs.dtype = COLLS_INT32;
    cs.rop = COLLS_SUM;
    cs.count = count;
    cs.salt = mix((uint64_t)it);
    rc = call_case(x, &cs, &r);
    if (rc == 0 && compare(x, &cs, COLLS_MODE_AUTO, "fail-mode allreduce",
                           r.want, r.rbuf, r.rlen) != 0)
        rc = 1;
    run_free(&r);
    return rc;
}

/*
 * Failure: loop until a collective fails; survivors must see the expected
 * code, then optionally form the group again.
 */
static int
do_fail(struct ctx *x, int victim)
{
    const struct opts *o = x->o;
    int want = o->expect == EXPECT_PEERDEAD ? COLLS_EPEERDEAD : COLLS_EHOSTDOWN;
    double t0 = now_ms(), tcall = 0;
    int it, rc = 0;

    if (join(x, o->group, o->size, COLLS_PLACE_CONTIGUOUS) != 0)
        return victim ? 0 : 1;
    /* --mode direct: the allreduces run among the tasks (dcoll.c) */
    if (o->mode == COLLS_MODE_DIRECT)
        colls_group_set_mode(x->g, COLLS_MODE_DIRECT);
    for (it = 0; now_ms() - t0 < o->timeout_ms; it++) {
        if (it == o->after && x->rank == 0 && o->ready != NULL) {
            FILE *f = fopen(o->ready, "w");
            if (f != NULL)
                fclose(f);
        }
        if (o->expect == EXPECT_PEERDEAD && it == o->after &&
            x->rank == o->victim) {
            fflush(NULL);
            raise(SIGKILL);
        }
        tcall = now_ms();
        rc = fail_round(x, it, 16384);
        if (rc != 0)
            break;
    }
    tcall = now_ms() - tcall;
    if (victim) {
        say("rank %d (on the killed host): %s after %d rounds", x->rank,
            colls_err_name(rc), it);
        return 0;
    }
    if (rc != want) {
        say("FAIL: survivor rank %d: round %d returned %s (%d), want %s",
            x->rank, it, rc == 0 ? "no error" : colls_err_name(rc), rc,
            colls_err_name(want));
        return 1;
    }
    printf("survivor rank %d: %s after %d rounds; failing call took %.0f ms\n",
           x->rank, colls_err_name(rc), it, tcall);
    fflush(stdout);
    /* The group is unusable: a later call fails the same way. */
    rc = colls_barrier(x->g);
    if (rc != want) {
        say("FAIL: survivor rank %d: barrier after failure: %s, want %s",
            x->rank, colls_err_name(rc), colls_err_name(want));
        return 1;
    }
    colls_group_leave(x->g);
    x->g = NULL;
    if (o->reform <= 0)
        return 0;
    x->retry_eexist = 1;
    if (join(x, o->group, o->reform, COLLS_PLACE_CONTIGUOUS) != 0)
        return 1;
    rc = fail_round(x, 1000000, 1009);
    if (rc == 0)
        rc = colls_barrier(x->g);
    if (rc != 0) {
        say("FAIL: re-formed %s rank %d: %s", o->group, x->rank,
            colls_err_name(rc));
        return 1;
    }
    printf("re-formed %s: rank %d of %d passed\n", o->group, x->rank, x->P);
    return leave(x) != 0;
}

/* ---- FPC compression ---------------------------------------------------*/

/*
 * Bit pattern of double k of the data kind (salted): smooth is a ramp
 * (FPC's predictors get it nearly right), random any 64-bit pattern (FPC
 * cannot shrink it), special a ramp with one item in four replaced by a
 * NaN with a payload, -0.0, an infinity, a denormal or DBL_MAX.
 */
static uint64_t
fpc_item(int kind, uint64_t salt, size_t k)
{
    static const uint64_t special[8] = {
        0x7ff8000000000001ull, /* quiet NaN, payload 1 */
        0xfff40000000abcdeull, /* negative signalling NaN with a payload */
        0x8000000000000000ull, /* -0.0 */
        0x7ff0000000000000ull, /* +inf */
        0xfff0000000000000ull, /* -inf */
        0x0000000000000001ull, /* smallest denormal */
        0x800fffffffffffffull, /* largest negative denormal */
        0x7fefffffffffffffull, /* DBL_MAX */
    };
    uint64_t u, h = mix(salt ^ mix(k));
    double v;

    if (kind == DATA_RANDOM)
        return h;
    if (kind == DATA_SPECIAL && h % 4 == 0)
        return special[(h >> 8) % 8];
    v = 1.0 + (double)(salt % 7) + (double)k * 1e-3;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* Fills buf with n doubles of the data kind. */
static void
fpc_fill(int kind, uint64_t salt, unsigned char *buf, size_t n)
{
    size_t k;

    for (k = 0; k < n; k++) {
        uint64_t u = fpc_item(kind, salt, k);

        memcpy(buf + k * 8, &u, 8);
    }
}

/* The fpc check (see the header). */
static int
do_fpc(struct ctx *x)
{
    static const size_t sizes[] = {0, 1, 1009, LARGE_COUNT, 140001};
    static const char *const kname[] = {"all", "smooth", "random", "special"};
    const struct opts *o = x->o;
    int place = o->place == 2 ? COLLS_PLACE_ROUNDROBIN : COLLS_PLACE_CONTIGUOUS;
    int kind, si, ri, rc, bad = 0;
    char d[512];

    if (join(x, o->group, o->size, place) != 0)
        return 1;
    rc = colls_group_set_mode(x->g, COLLS_MODE_HIER);
    if (rc == 0)
        rc = colls_group_set_alg(x->g, COLLS_COLL_BCAST, o->alg);
    if (rc != 0) {
        say("FAIL: fpc: setting mode/alg: %s", colls_err_name(rc));
        return 1;
    }
    for (kind = DATA_SMOOTH; kind <= DATA_SPECIAL && !bad; kind++) {
        if (o->data != DATA_ALL && o->data != kind)
            continue;
        for (si = 0; si < (int)(sizeof sizes / sizeof sizes[0]) && !bad; si++)
            for (ri = 0; ri < 2 && !bad; ri++) {
                struct ccase cs;
                size_t len = sizes[si] * 8;
                unsigned char *want, *buf;

                if (ri == 1 && x->P == 1)
                    break;
                memset(&cs, 0, sizeof cs);
                cs.op = COLLS_COLL_BCAST;
                cs.alg = o->alg;
                cs.dtype = COLLS_DOUBLE;
                cs.rop = -1;
                cs.count = sizes[si];
                cs.root = ri == 0 ? 0 : x->P - 1;
                cs.salt = o->seed + (uint64_t)(kind * 16 + si * 2 + ri);
                want = xalloc(len);
                buf = xalloc(len);
                fpc_fill(kind, cs.salt, want, cs.count);
                if (x->rank == cs.root)
                    memcpy(buf, want, len);
                else
                    memset(buf, SENTINEL, len);
                rc = colls_bcast(x->g, buf, cs.count, COLLS_DOUBLE, cs.root);
                x->ncalls++;
                describe(x, &cs, COLLS_MODE_HIER, d, sizeof d);
                if (rc != 0) {
                    say("FAIL: %s data=%s: returned %s", d, kname[kind],
                        colls_err_name(rc));
                    bad = 1;
                } else if (compare(x, &cs, COLLS_MODE_HIER,
                                   "bcast vs the root's data", want, buf,
                                   len) != 0 ||
                           check_alg(x, &cs, COLLS_MODE_HIER) != 0) {
                    say("(data=%s)", kname[kind]);
                    bad = 1;
                } else if (o->verbose > 0 && x->rank == 0) {
                    say("ok %s data=%s -> %s", d, kname[kind],
                        colls_group_last_alg(x->g));
                }
                free(want);
                free(buf);
            }
    }
    if (bad) {
        /* the group is broken: free the handle, whatever leave says */
        (void)colls_group_leave(x->g);
        x->g = NULL;
        return 1;
    }
    if (x->rank == 0)
        say("fpc: %lu bcasts passed (compress %d)", x->ncalls, o->compress);
    return leave(x) != 0;
}

/* One call of op on buffers prepared by do_bench (count int32 per block). */
static int
bench_call(struct ctx *x, int op, void *sbuf, void *rbuf, size_t count)
{
    switch (op) {
    case COLLS_COLL_BARRIER:
        return colls_barrier(x->g);
    case COLLS_COLL_BCAST:
        if (x->o->data != DATA_ALL) /* doubles, count / 2 of them */
            return colls_bcast(x->g, rbuf, count / 2, COLLS_DOUBLE, 0);
        return colls_bcast(x->g, rbuf, count, COLLS_INT32, 0);
    case COLLS_COLL_REDUCE:
        return colls_reduce(x->g, sbuf, rbuf, count, COLLS_INT32, COLLS_SUM, 0);
    case COLLS_COLL_ALLREDUCE:
        return colls_allreduce(x->g, sbuf, rbuf, count, COLLS_INT32, COLLS_SUM);
    case COLLS_COLL_GATHER:
        return colls_gather(x->g, sbuf, rbuf, count, COLLS_INT32, 0);
    case COLLS_COLL_SCATTER:
        return colls_scatter(x->g, sbuf, rbuf, count, COLLS_INT32, 0);
    case COLLS_COLL_ALLGATHER:
        return colls_allgather(x->g, sbuf, rbuf, count, COLLS_INT32);
    case COLLS_COLL_ALLTOALL:
        return colls_alltoall(x->g, sbuf, rbuf, count, COLLS_INT32);
    case COLLS_COLL_REDUCE_SCATTER:
        return colls_reduce_scatter(x->g, sbuf, rbuf, count, COLLS_INT32,
                                    COLLS_SUM);
    case COLLS_COLL_SCAN:
        return colls_scan(x->g, sbuf, rbuf, count, COLLS_INT32, COLLS_SUM);
    default:
        return COLLS_ENOTSUP;
    }
}

/* Timing of one operation (see the header); int32 data, SUM; bcast with
   --data: doubles of that kind. */
static int
do_bench(struct ctx *x)
{
    const struct opts *o = x->o;
    int place = o->place == 2 ? COLLS_PLACE_ROUNDROBIN : COLLS_PLACE_CONTIGUOUS;
    size_t count = (o->bytes + 3) / 4, len;
    unsigned char *sbuf, *rbuf;
    double best = 1e30, worst = 0, t;
    char ran[64];
    int op, run, it, n, ran_mode, rc = 0;

    for (op = 0; op < COLLS_COLL_MAX && !op_selected(o, op); op++)
        ;
    if (op == COLLS_COLL_MAX || o->ops == NULL)
        return 2;
    if (join(x, o->group, o->size, place) != 0)
        return 1;
    len = (size_t)x->P * (count > 0 ? count : 1) * 4;
    sbuf = xalloc(len);
    rbuf = xalloc(len);
    memset(sbuf, 1, len);
    memset(rbuf, 1, len);
    if (o->data != DATA_ALL)
        fpc_fill(o->data, o->seed, rbuf, len / 8);
    rc = colls_group_set_mode(x->g, o->mode);
    if (rc == 0)
        rc = colls_group_set_alg(x->g, op, o->alg);
    /* Run -1 is the warm-up (3 calls). */
    for (run = -1; rc == 0 && run < 5; run++) {
        n = run < 0 ? 3 : o->iters;
        rc = colls_barrier(x->g);
        t = now_ms();
        for (it = 0; rc == 0 && it < n; it++)
            rc = bench_call(x, op, sbuf, rbuf, count);
        t = (now_ms() - t) * 1e3 / n;
        if (run >= 0 && t < best)
            best = t;
    }
    free(sbuf);
    free(rbuf);
    /* What ran, before the allreduce below replaces it. */
    snprintf(ran, sizeof ran, "%s", colls_group_last_alg(x->g));
    ran_mode = colls_group_last_mode(x->g);
    if (rc == 0)
        rc = colls_allreduce(x->g, &best, &worst, 1, COLLS_DOUBLE, COLLS_MAX);
    if (rc != 0) {
        say("FAIL: bench %s: %s", collop_name(op), colls_err_name(rc));
        return 1;
    }
    if (x->rank == 0) {
        printf("bench %s %zu %.2f %s %s\n", collop_name(op), o->bytes, worst,
               ran, ran_mode == COLLS_MODE_HIER ? "hier" : "flat");
        fflush(stdout);
    }
    return leave(x) != 0;
}

/* One member: attach, run the check, detach.  Exit status. */
static int
member(const struct opts *o, const char *sock, int victim)
{
    struct ctx x;
    int rc;

    memset(&x, 0, sizeof x);
    x.o = o;
    rc = colls_attach(sock, &x.c);
    if (rc != 0) {
        say("FAIL: attach %s: %s", sock ? sock : "(default)",
            colls_err_name(rc));
        return 1;
    }
    colls_set_timeout(x.c, o->timeout_ms);
    if (o->check == CHECK_MATRIX)
        rc = do_matrix(&x);
    else if (o->check == CHECK_CONC)
        rc = do_conc(&x);
    else if (o->check == CHECK_BENCH)
        rc = do_bench(&x);
    else if (o->check == CHECK_FPC)
        rc = do_fpc(&x);
    else if (o->check == CHECK_B2B)
        rc = do_b2b(&x);
    else
        rc = do_fail(&x, victim);
    colls_detach(x.c);
    return rc;
}

/* Fork mode: layout[i] members on sockets[i]. */
static int
fork_members(struct opts *o)
{
    char *socks[MAX_P], *buf = strdup(o->sockets), *p;
    int lay[MAX_P], nsock = 0, total = 0, i, k, failed = 0, killed = 0;
    pid_t pids[MAX_P];
    int vict[MAX_P], dmn[MAX_P], nkids = 0;

    if (buf == NULL)
        return 1;
    for (p = strtok(buf, ","); p != NULL && nsock < MAX_P;
         p = strtok(NULL, ","))
        socks[nsock++] = p;
    if (o->layout != NULL) {
        const char *q = o->layout;
        for (i = 0; i < nsock; i++) {
            lay[i] = (int)strtol(q, (char **)&q, 10);
            if (*q == ',')
                q++;
        }
    } else {
        for (i = 0; i < nsock; i++)
            lay[i] = o->n / nsock + (i < o->n % nsock);
    }
    for (i = 0; i < nsock; i++)
        total += lay[i];
    if (total != o->n || total > MAX_P) {
        say("layout %s has %d members, -n says %d", o->layout, total, o->n);
        free(buf);
        return 2;
    }
    if (o->size == 0)
        o->size = o->n;
    fflush(NULL);
    for (i = 0; i < nsock; i++)
        for (k = 0; k < lay[i]; k++) {
            pid_t pid = fork();
            if (pid < 0) {
                say("fork: %s", strerror(errno));
                failed++;
                continue;
            }
            if (pid == 0) {
                int rc = member(o, socks[i], i == o->victim_daemon);
                fflush(NULL);
                _exit(rc);
            }
            vict[nkids] = i == o->victim_daemon;
            dmn[nkids] = i;
            pids[nkids++] = pid;
        }
    for (i = 0; i < nkids; i++) {
        int st;
        if (waitpid(pids[i], &st, 0) < 0) {
            failed++;
            continue;
        }
        if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL &&
            o->expect == EXPECT_PEERDEAD) {
            killed++;
            continue;
        }
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            say("member %d (pid %d, daemon %d%s) failed: %s %d", i,
                (int)pids[i], dmn[i], vict[i] ? ", victim" : "",
                WIFEXITED(st) ? "exit" : "signal",
                WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
            failed++;
        }
    }
    if (o->expect == EXPECT_PEERDEAD && killed != 1) {
        say("FAIL: %d members died of SIGKILL, want exactly 1", killed);
        failed++;
    }
    free(buf);
    return failed ? 1 : 0;
}

static void
usage(void)
{
    fprintf(stderr,
            "usage: coll-check [--socket S | -n P --sockets A,B,..."
            " [--layout 1,2,...]]\n"
            "  --group NAME [--size P] [--check matrix|conc|b2b|fail|fpc]\n"
            "  [--placement contig|rr|both] [--level full|thin|smoke]\n"
            "  [--ops bcast,allreduce,...] [--seed N] [--iters N]\n"
            "  [--expect peerdead|hostdown] [--victim R] [--victim-daemon I]\n"
            "  [--after N] [--ready FILE] [--reform N] [--timeout-ms MS]"
            " [-v]\n"
            "  bench: --check bench --ops OP --bytes N [--alg SPEC]"
            " [--mode hier|flat|direct] [--iters N]\n"
            "  [--compress off|on|auto] [--data smooth|random|special|all]"
            " [--alg SPEC]\n");
    exit(2);
}

int
main(int argc, char **argv)
{
    struct opts o;
    int i;

    memset(&o, 0, sizeof o);
    o.place = 3;
    o.level = LEVEL_FULL;
    o.victim = -1;
    o.victim_daemon = -1;
    o.after = 20;
    o.iters = 200;
    o.timeout_ms = 60000;
    o.seed = 12345;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int used = 1;

        if (strcmp(a, "-v") == 0) {
            o.verbose++;
            continue;
        }
        if (v == NULL)
            usage();
        if (strcmp(a, "--socket") == 0)
            o.socket = v;
        else if (strcmp(a, "--sockets") == 0)
            o.sockets = v;
        else if (strcmp(a, "--layout") == 0)
            o.layout = v;
        else if (strcmp(a, "-n") == 0)
            o.n = atoi(v);
        else if (strcmp(a, "--group") == 0)
            o.group = v;
        else if (strcmp(a, "--size") == 0)
            o.size = atoi(v);
        else if (strcmp(a, "--ops") == 0)
            o.ops = v;
        else if (strcmp(a, "--ready") == 0)
            o.ready = v;
        else if (strcmp(a, "--seed") == 0)
            o.seed = strtoull(v, NULL, 0);
        else if (strcmp(a, "--iters") == 0)
            o.iters = atoi(v);
        else if (strcmp(a, "--victim") == 0)
            o.victim = atoi(v);
        else if (strcmp(a, "--victim-daemon") == 0)
            o.victim_daemon = atoi(v);
        else if (strcmp(a, "--after") == 0)
            o.after = atoi(v);
        else if (strcmp(a, "--reform") == 0)
            o.reform = atoi(v);
        else if (strcmp(a, "--timeout-ms") == 0)
            o.timeout_ms = atoi(v);
        else if (strcmp(a, "--placement") == 0)
            o.place = strcmp(v, "contig") == 0 ? 1
                      : strcmp(v, "rr") == 0   ? 2
                                               : 3;
        else if (strcmp(a, "--level") == 0)
            o.level = strcmp(v, "smoke") == 0  ? LEVEL_SMOKE
                      : strcmp(v, "thin") == 0 ? LEVEL_THIN
                                               : LEVEL_FULL;
        else if (strcmp(a, "--check") == 0)
            o.check = strcmp(v, "conc") == 0    ? CHECK_CONC
                      : strcmp(v, "fail") == 0  ? CHECK_FAIL
                      : strcmp(v, "bench") == 0 ? CHECK_BENCH
                      : strcmp(v, "fpc") == 0   ? CHECK_FPC
                      : strcmp(v, "b2b") == 0   ? CHECK_B2B
                                                : CHECK_MATRIX;
        else if (strcmp(a, "--compress") == 0)
            o.compress = strcmp(v, "on") == 0     ? COLLS_COMPRESS_ON
                         : strcmp(v, "auto") == 0 ? COLLS_COMPRESS_AUTO
                         : strcmp(v, "off") == 0  ? COLLS_COMPRESS_OFF
                                                  : -1;
        else if (strcmp(a, "--data") == 0)
            o.data = strcmp(v, "smooth") == 0    ? DATA_SMOOTH
                     : strcmp(v, "random") == 0  ? DATA_RANDOM
                     : strcmp(v, "special") == 0 ? DATA_SPECIAL
                                                 : DATA_ALL;
        else if (strcmp(a, "--alg") == 0)
            o.alg = v;
        else if (strcmp(a, "--bytes") == 0)
            o.bytes = (size_t)strtoull(v, NULL, 0);
        else if (strcmp(a, "--mode") == 0)
            o.mode = strcmp(v, "hier") == 0     ? COLLS_MODE_HIER
                     : strcmp(v, "flat") == 0   ? COLLS_MODE_FLAT
                     : strcmp(v, "direct") == 0 ? COLLS_MODE_DIRECT
                                                : COLLS_MODE_AUTO;
        else if (strcmp(a, "--expect") == 0)
            o.expect = strcmp(v, "peerdead") == 0   ? EXPECT_PEERDEAD
                       : strcmp(v, "hostdown") == 0 ? EXPECT_HOSTDOWN
                                                    : EXPECT_NONE;
        else
            used = 0;
        if (!used)
            usage();
        i++;
    }
    if (o.group == NULL || o.compress < 0 ||
        (o.check == CHECK_FAIL && o.expect == EXPECT_NONE))
        usage();
    if (o.sockets != NULL) {
        if (o.n < 1 || o.n > MAX_P)
            usage();
        return fork_members(&o);
    }
    if (o.size < 1 || o.size > MAX_P)
        usage();
    return member(&o, o.socket,
                  o.victim >= 0 && o.check == CHECK_FAIL &&
                      o.expect == EXPECT_HOSTDOWN);
}
