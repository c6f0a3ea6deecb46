/*
 * p2p-check.c -- point-to-point correctness check of a running machine.
 *
 * Roles (one process each):
 *   --coord N --tidfile F   coordinator: writes its tid to F, waits for N
 *                           workers' HELLO, sends every worker the sorted
 *                           list of worker tids, collects their DONE
 *                           reports, releases them, exits 0 iff all passed.
 *   --worker F              worker (F: the coordinator's tid file, or a
 *                           tid given as t<hex>): every pair of workers
 *                           exchanges a plan of messages in both
 *                           directions -- raw bytes over a ladder of sizes
 *                           and packed messages of every datatype in each
 *                           encoding, on both routes, interleaved.
 *   --mode etrunc|enoent|peerdead|lastwords   single-process checks of
 *                           error codes and of a dead task's last
 *                           messages (a forked child task plays the peer).
 *   --mode victim|waitdown  host-down check across emulated hosts.
 *   --mode sink|stream|attach-many   helpers of tests/bench/net-bench.sh.
 *   --mode soak-recv|soak-send   tests/bench/soak.sh: --count messages in
 *                           order, each checked (sequence, length, bytes).
 *
 * Invariants checked for every message: source and tag, length, the bytes
 * against a generator keyed by (src, dst, route, seq) with FNV-1a hashes
 * printed on mismatch, and in-order arrival per pair and route (the tag
 * carries the route and a per-route sequence number; the receiver probes
 * with a wildcard tag and checks that the next message of each route is
 * the next one in sequence).  Pairs meet in the rounds of a round-robin
 * tournament; in each pair the lower index sends its plan and then
 * receives, the other the reverse, so the check is deadlock-free even if
 * sends are synchronous.  Every blocking call has a timeout
 * (colls_set_timeout), so nothing hangs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "colls.h"

enum {
    TAG_HELLO = 1,
    TAG_LIST = 2,
    TAG_DONE = 3,
    TAG_FINISH = 4,
    TAG_DATA = 0x10000, /* + route * 0x8000 + seq */
    ROUTE_SPAN = 0x8000,
};

/* One message of a pair's plan. */
struct entry {
    int route;    /* COLLS_ROUTE_* */
    int packed;   /* 0: raw bytes; 1: colls_pack message */
    int encoding; /* packed: COLLS_ENC_* */
    size_t size;  /* raw: bytes; packed: scale of the item counts */
    int seq;      /* per-route sequence number */
};

struct opts {
    const char *socket;
    const char *mode;
    const char *tidfile;
    const char *coord;
    const char *peer;
    const char *peer_socket;
    const char *ready;
    int ntasks;
    int timeout_ms;
    int routes; /* bit 0 default, bit 1 direct */
    int big;    /* add 32 MiB messages between the first and last */
    int rounds;
    int quick;
    int count;
    uint64_t bytes;
    size_t msg_size;
};

static struct opts opt = {
    .mode = "exchange",
    .timeout_ms = 60000,
    .routes = 3,
    .rounds = 1,
};

static int nerrors;
static char me[32] = "p2p-check";

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reports one failure (and counts it); the test fails at the end. */
static void
fail(const char *fmt, ...)
{
    va_list ap;

    nerrors++;
    fprintf(stderr, "%s: FAIL: ", me);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Prints a progress line on stdout. */
static void
note(const char *fmt, ...)
{
    va_list ap;

    printf("%s: ", me);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

static double
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Wall-clock seconds, for comparing with events in other processes. */
static double
wall_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *
ename(int r)
{
    return r >= 0 ? "OK" : colls_err_name(r);
}

/* ---- deterministic data ------------------------------------------------- */

static uint64_t
splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The generator state for a message identified by its endpoints, route
   and per-route sequence number. */
static uint64_t
gen_key(colls_tid_t src, colls_tid_t dst, int route, int seq)
{
    uint64_t s = ((uint64_t)src << 32 | dst) ^ 0x5eedull;

    s ^= (uint64_t)route << 61 ^ (uint64_t)seq * 0x100000001b3ull;
    (void)splitmix(&s);
    return s;
}

/* Fills n bytes from the generator state *s. */
static void
gen_fill(uint64_t *s, uint8_t *p, size_t n)
{
    size_t i = 0;

    while (i < n) {
        uint64_t v = splitmix(s);
        size_t k = n - i < 8 ? n - i : 8;
        memcpy(p + i, &v, k);
        i += k;
    }
}

/* FNV-1a, 64 bit. */
static uint64_t
fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Compares got with want; on mismatch reports hashes and the first
   differing offset.  Returns 0 if equal. */
static int
compare_bytes(const char *what, const uint8_t *got, const uint8_t *want,
              size_t n)
{
    if (n == 0 || memcmp(got, want, n) == 0)
        return 0;
    size_t i = 0;
    while (got[i] == want[i])
        i++;
    fail("%s: %zu bytes differ: fnv got %016" PRIx64 " want %016" PRIx64
         ", first difference at offset %zu (got 0x%02x want 0x%02x)",
         what, n, fnv1a(got, n), fnv1a(want, n), i, got[i], want[i]);
    return -1;
}

/* ---- packed messages: one item list per size ---------------------------- */

struct item {
    int dtype;
    size_t width;
    size_t count;
};

#define NITEMS 11

/* The datatypes and counts a packed message of scale s holds: every
   datatype, in an order mixing widths, none empty. */
static void
packed_items(size_t s, struct item it[NITEMS])
{
    static const struct {
        int dtype;
        size_t width, div, add;
    } t[NITEMS] = {
        {COLLS_INT8, 1, 5, 1},    {COLLS_DOUBLE, 8, 32, 1},
        {COLLS_UINT16, 2, 64, 3}, {COLLS_INT32, 4, 16, 1},
        {COLLS_BYTE, 1, 4, 7},    {COLLS_FLOAT, 4, 64, 2},
        {COLLS_UINT64, 8, 64, 1}, {COLLS_INT16, 2, 128, 1},
        {COLLS_UINT8, 1, 50, 1},  {COLLS_INT64, 8, 256, 1},
        {COLLS_UINT32, 4, 32, 5},
    };

    for (int i = 0; i < NITEMS; i++) {
        it[i].dtype = t[i].dtype;
        it[i].width = t[i].width;
        it[i].count = s / t[i].div + t[i].add;
    }
}

/* Fills an array of one datatype from the generator.  Floating point
   values are finite (integers scaled), so no NaN payload question arises. */
static void
gen_items(uint64_t *s, const struct item *it, void *out)
{
    if (it->dtype == COLLS_DOUBLE) {
        double *d = out;
        for (size_t i = 0; i < it->count; i++)
            d[i] = (double)(int32_t)splitmix(s) / 7.0;
    } else if (it->dtype == COLLS_FLOAT) {
        float *f = out;
        for (size_t i = 0; i < it->count; i++)
            f[i] = (float)(int16_t)splitmix(s) / 3.0f;
    } else {
        gen_fill(s, out, it->count * it->width);
    }
}

/* ---- plans -------------------------------------------------------------- */

static const size_t raw_sizes[] = {
    0,    1,    7,    8,    100,  1000,  1400,  1424,  1425,   1448,
    1472, 1473, 2944, 4096, 9000, 65507, 65536, 65537, 262144, 1048576,
};
static const size_t raw_sizes_quick[] = {0, 1, 7, 1000, 1473, 65536, 200000};
static const size_t packed_sizes[] = {0, 1, 100, 1472, 65536, 262144};
static const size_t packed_sizes_quick[] = {0, 100, 65536};
#define BIG_SIZE ((size_t)32 << 20)
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Appends one entry per selected route, numbering per route. */
static void
plan_add(struct entry *e, int *n, int seq[2], int packed, int enc, size_t size)
{
    for (int r = 0; r < 2; r++) {
        if (!(opt.routes & (1 << r)))
            continue;
        e[*n] = (struct entry){r, packed, enc, size, seq[r]++};
        (*n)++;
    }
}

/* Builds the plan of messages one worker sends to its partner (the same
   both ways).  big: this pair also exchanges 32 MiB messages.  Returns
   the number of entries. */
static int
plan_build(struct entry *e, int big)
{
    const size_t *rs = opt.quick ? raw_sizes_quick : raw_sizes;
    size_t nrs = opt.quick ? NELEM(raw_sizes_quick) : NELEM(raw_sizes);
    const size_t *ps = opt.quick ? packed_sizes_quick : packed_sizes;
    size_t nps = opt.quick ? NELEM(packed_sizes_quick) : NELEM(packed_sizes);
    int n = 0, seq[2] = {0, 0};

    for (size_t i = 0; i < nrs; i++) {
        plan_add(e, &n, seq, 0, COLLS_ENC_RAW, rs[i]);
        if (i < nps)
            for (int enc = 0; enc < 3; enc++)
                plan_add(e, &n, seq, 1, enc, ps[i]);
    }
    /* A burst of small messages back to back: ordering under pipelining. */
    for (int i = 0; i < 50; i++)
        plan_add(e, &n, seq, 0, COLLS_ENC_RAW, (size_t)(i * 37 % 300));
    if (big)
        plan_add(e, &n, seq, 0, COLLS_ENC_RAW, BIG_SIZE);
    return n;
}

#define PLAN_MAX 512

static int
entry_tag(const struct entry *e)
{
    return TAG_DATA + e->route * ROUTE_SPAN + e->seq;
}

static const char *
route_name(int r)
{
    return r == COLLS_ROUTE_DIRECT ? "direct" : "default";
}

static const char *
enc_name(int e)
{
    return e == COLLS_ENC_DEFAULT ? "DEFAULT"
           : e == COLLS_ENC_RAW   ? "RAW"
                                  : "INPLACE";
}

/* ---- sending and receiving one entry ------------------------------------ */

static uint8_t *scratch; /* raw send and receive buffer */
static size_t scratch_len;
static uint8_t *expect; /* expected bytes */

/* Sends entry e from self to dst.  Returns 0 or the error. */
static int
send_entry(colls_t *c, colls_tid_t self, colls_tid_t dst, const struct entry *e)
{
    uint64_t s = gen_key(self, dst, e->route, e->seq);
    int r;

    if (!e->packed) {
        gen_fill(&s, scratch, e->size);
        r = colls_send_route(c, dst, entry_tag(e), scratch, e->size, e->route);
        if (r < 0)
            fail("send raw %zu B route %s to t%x seq %d: %s", e->size,
                 route_name(e->route), dst, e->seq, ename(r));
        return r;
    }

    struct item it[NITEMS];
    void *arr[NITEMS] = {0};
    colls_msg_t *m = colls_msg_new(e->encoding);

    packed_items(e->size, it);
    r = m ? 0 : COLLS_ENOMEM;
    if (m)
        r = colls_msg_set_route(m, e->route);
    for (int i = 0; i < NITEMS && r == 0; i++) {
        arr[i] = malloc(it[i].count * it[i].width);
        if (!arr[i]) {
            r = COLLS_ENOMEM;
            break;
        }
        gen_items(&s, &it[i], arr[i]);
        r = colls_pack(m, it[i].dtype, arr[i], it[i].count);
    }
    if (r == 0)
        r = colls_msg_send(c, dst, entry_tag(e), m);
    if (r < 0)
        fail("send packed %s scale %zu route %s to t%x seq %d: %s",
             enc_name(e->encoding), e->size, route_name(e->route), dst, e->seq,
             ename(r));
    for (int i = 0; i < NITEMS; i++)
        free(arr[i]);
    colls_msg_free(m);
    return r;
}

/* Receives entry e (already identified by its tag) from src and checks it.
   Returns 0, -1 on a content mismatch, or a colls error. */
static int
recv_entry(colls_t *c, colls_tid_t self, colls_tid_t src, const struct entry *e)
{
    uint64_t s = gen_key(src, self, e->route, e->seq);
    colls_status_t st = {0};
    char what[160];
    int r, tag = entry_tag(e);

    snprintf(what, sizeof(what), "%s %s %zu from t%x route %s seq %d",
             e->packed ? "packed" : "raw",
             e->packed ? enc_name(e->encoding) : "bytes", e->size, src,
             route_name(e->route), e->seq);
    if (!e->packed) {
        r = colls_recv(c, src, tag, scratch, e->size + 16, &st);
        if (r < 0) {
            fail("recv %s: %s", what, ename(r));
            return r;
        }
        if (st.source != src || st.tag != tag || st.length != e->size) {
            fail("recv %s: status source t%x tag %#x length %zu", what,
                 st.source, st.tag, st.length);
            return -1;
        }
        gen_fill(&s, expect, e->size);
        return compare_bytes(what, scratch, expect, e->size);
    }

    colls_msg_t *m = NULL;
    struct item it[NITEMS];
    int bad = 0;

    r = colls_msg_recv(c, src, tag, &m);
    if (r < 0) {
        fail("recv %s: %s", what, ename(r));
        return r;
    }
    r = colls_msg_info(m, &st);
    if (r < 0 || st.source != src || st.tag != tag) {
        fail("recv %s: info %s source t%x tag %#x", what, ename(r), st.source,
             st.tag);
        bad = -1;
    }
    packed_items(e->size, it);
    for (int i = 0; i < NITEMS && !bad; i++) {
        size_t n = it[i].count * it[i].width;
        char w2[200];

        gen_items(&s, &it[i], expect);
        memset(scratch, 0xa5, n);
        r = colls_unpack(m, it[i].dtype, scratch, it[i].count);
        snprintf(w2, sizeof(w2), "%s item %d (dtype %d x %zu)", what, i,
                 it[i].dtype, it[i].count);
        if (r < 0) {
            fail("unpack %s: %s", w2, ename(r));
            bad = -1;
        } else if (compare_bytes(w2, scratch, expect, n)) {
            bad = -1;
        }
    }
    if (!bad) {
        uint8_t extra;
        r = colls_unpack(m, COLLS_INT8, &extra, 1);
        if (r >= 0) {
            fail("unpack past the end of %s succeeded", what);
            bad = -1;
        }
    }
    colls_msg_free(m);
    return bad;
}

/*
 * Receives a whole plan from src.  Arrival order is checked per route:
 * a blocking probe with a wildcard tag names the next message, whose
 * per-route sequence number must be the next expected one.
 */
static int
recv_plan(colls_t *c, colls_tid_t self, colls_tid_t src,
          const struct entry *plan, int n, uint64_t *bytes)
{
    int next[2] = {0, 0};
    const struct entry *byseq[2][PLAN_MAX];
    int nseq[2] = {0, 0};

    for (int i = 0; i < n; i++)
        byseq[plan[i].route][nseq[plan[i].route]++] = &plan[i];
    for (int k = 0; k < n; k++) {
        colls_status_t st = {0};
        int r = colls_probe(c, src, COLLS_ANY, 1, &st);
        if (r != 1) {
            fail("probe from t%x (message %d of %d): %s", src, k, n,
                 r == 0 ? "nothing" : ename(r));
            return -1;
        }
        int rel = st.tag - TAG_DATA;
        int route = rel / ROUTE_SPAN, seq = rel % ROUTE_SPAN;
        if (rel < 0 || route > 1 || seq >= nseq[route]) {
            fail("message from t%x with unexpected tag %#x", src, st.tag);
            return -1;
        }
        if (seq != next[route]) {
            fail("out of order from t%x route %s: got seq %d, expected %d", src,
                 route_name(route), seq, next[route]);
            return -1;
        }
        next[route]++;
        if (recv_entry(c, self, src, byseq[route][seq]) < 0)
            return -1;
        *bytes += st.length;
    }
    return 0;
}

/* ---- workers and coordinator --------------------------------------------- */

static void
put32(uint8_t *p, uint32_t v)
{
    v = htonl(v);
    memcpy(p, &v, 4);
}

static uint32_t
get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return ntohl(v);
}

/* Parses "t<hex>" or a decimal/hex number. */
static int
parse_tid(const char *s, colls_tid_t *out)
{
    char *end;
    unsigned long v;

    while (*s == ' ' || *s == '\n')
        s++;
    if (*s == 't')
        v = strtoul(s + 1, &end, 16);
    else
        v = strtoul(s, &end, 0);
    if (end == s || v == 0 || v > 0xffffffffu)
        return -1;
    *out = (colls_tid_t)v;
    return 0;
}

/* Reads a tid from a file written by another process, waiting for it to
   appear (up to the timeout); a literal tid is accepted too. */
static int
read_tid(const char *arg, colls_tid_t *out)
{
    double end = now_ms() + opt.timeout_ms;

    if (access(arg, F_OK) != 0 && parse_tid(arg, out) == 0)
        return 0;
    while (now_ms() < end) {
        FILE *f = fopen(arg, "r");
        char line[64];
        if (f) {
            int ok = fgets(line, sizeof(line), f) != NULL &&
                     parse_tid(line, out) == 0;
            fclose(f);
            if (ok)
                return 0;
        }
        usleep(20000);
    }
    fprintf(stderr, "%s: no tid in %s\n", me, arg);
    return -1;
}

/* Writes our tid to path atomically (tmp + rename). */
static int
write_tid(const char *path, colls_tid_t tid)
{
    char tmp[4096];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
    f = fopen(tmp, "w");
    if (!f || fprintf(f, "t%x\n", tid) < 0 || fclose(f) != 0 ||
        rename(tmp, path) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

static int
attach(const char *path, colls_t **c)
{
    int r = colls_attach(path, c);

    if (r < 0) {
        fprintf(stderr, "%s: attach %s: %s\n", me, path ? path : "(default)",
                colls_strerror(r));
        return r;
    }
    colls_set_timeout(*c, opt.timeout_ms);
    return 0;
}

/* Exchanges the plan with one partner, in both directions. */
static void
exchange_pair(colls_t *c, colls_tid_t self, colls_tid_t peer, int lower,
              int big, uint64_t *msgs, uint64_t *bytes)
{
    static struct entry plan[PLAN_MAX];
    int n = plan_build(plan, big);
    int e0 = nerrors;

    for (int pass = 0; pass < 2; pass++) {
        if ((pass == 0) == lower) {
            for (int i = 0; i < n; i++)
                if (send_entry(c, self, peer, &plan[i]) < 0)
                    break;
        } else {
            recv_plan(c, self, peer, plan, n, bytes);
        }
        if (nerrors != e0)
            break;
    }
    *msgs += (uint64_t)n;
    note("pair with t%x: %d messages each way%s%s", peer, n,
         big ? " (incl. 32 MiB)" : "", nerrors != e0 ? ": FAILED" : ": ok");
}

/*
 * A worker: HELLO to the coordinator, the tid list back, the round-robin
 * tournament of pair exchanges, DONE with the counters, then wait for
 * FINISH so no worker detaches while another might still need it.
 */
static int
run_worker(void)
{
    colls_t *c = NULL;
    colls_tid_t coord, self, tids[256];
    uint8_t buf[4 + 4 * 256];
    colls_status_t st;
    uint64_t msgs = 0, bytes = 0;
    int r, n, my = -1;

    if (read_tid(opt.coord, &coord) < 0 || attach(opt.socket, &c) < 0)
        return 2;
    self = colls_mytid(c);
    snprintf(me, sizeof(me), "worker t%x", self);
    r = colls_send(c, coord, TAG_HELLO, "", 0);
    if (r < 0) {
        fail("HELLO to coordinator t%x: %s", coord, ename(r));
        goto out;
    }
    r = colls_recv(c, coord, TAG_LIST, buf, sizeof(buf), &st);
    if (r < 0 || st.length < 4) {
        fail("tid list from coordinator: %s", ename(r));
        goto out;
    }
    n = (int)get32(buf);
    if (n < 1 || n > 256 || st.length != 4 + 4 * (size_t)n) {
        fail("bad tid list (%d tids, %zu bytes)", n, st.length);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        tids[i] = get32(buf + 4 + 4 * i);
        if (tids[i] == self)
            my = i;
    }
    if (my < 0) {
        fail("own tid t%x missing from the list", self);
        goto out;
    }
    scratch_len = BIG_SIZE + 64;
    scratch = malloc(scratch_len);
    expect = malloc(scratch_len);
    if (!scratch || !expect) {
        fail("out of memory");
        goto out;
    }
    /* Circle method: with m (even) slots, in round k slot 0 meets slot k
       and slot k+j meets slot k-j (mod m-1, slots 1..m-1). */
    int m = n % 2 ? n + 1 : n;
    for (int rep = 0; rep < opt.rounds && nerrors == 0; rep++) {
        for (int k = 0; k < m - 1 && nerrors == 0; k++) {
            int partner = -1;
            if (my == 0) {
                partner = k + 1;
            } else if (my == k + 1) {
                partner = 0;
            } else {
                int a = my - 1, b = k; /* positions on the circle */
                partner = ((2 * b - a) % (m - 1) + (m - 1)) % (m - 1) + 1;
            }
            if (partner >= n || partner == my)
                continue;
            /* The first and last tids: on different daemons when the
               workers span several (tids sort by host id). */
            int big = opt.big && n > 1 &&
                      ((my == 0 && partner == n - 1) ||
                       (my == n - 1 && partner == 0));
            exchange_pair(c, self, tids[partner], my < partner, big, &msgs,
                          &bytes);
        }
    }
out:;
    uint8_t done[20];
    put32(done, (uint32_t)nerrors);
    put32(done + 4, (uint32_t)(msgs >> 32));
    put32(done + 8, (uint32_t)msgs);
    put32(done + 12, (uint32_t)(bytes >> 32));
    put32(done + 16, (uint32_t)bytes);
    if (c) {
        r = colls_send(c, coord, TAG_DONE, done, sizeof(done));
        if (r == 0)
            r = colls_recv(c, coord, TAG_FINISH, buf, sizeof(buf), &st);
        if (r < 0)
            fail("DONE/FINISH with coordinator: %s", ename(r));
        /* Every pair is done: nothing may be left (a duplicate). */
        if (r == 0 && colls_probe(c, COLLS_ANY, COLLS_ANY, 0, &st) == 1)
            fail("extra message after the exchange: from t%x tag %#x, "
                 "%zu bytes",
                 st.source, st.tag, st.length);
        colls_detach(c);
    }
    free(scratch);
    free(expect);
    note("%s: %" PRIu64 " messages, %" PRIu64 " bytes received, %d errors",
         nerrors ? "FAILED" : "passed", msgs, bytes, nerrors);
    return nerrors ? 1 : 0;
}

static int
cmp_tid(const void *a, const void *b)
{
    colls_tid_t x = *(const colls_tid_t *)a, y = *(const colls_tid_t *)b;
    return (x > y) - (x < y);
}

/* The coordinator: see the file comment. */
static int
run_coord(void)
{
    colls_t *c;
    colls_tid_t tids[256];
    uint8_t buf[4 + 4 * 256];
    colls_status_t st;
    int n = opt.ntasks, r, failed = 0;

    if (n < 1 || n > 256) {
        fprintf(stderr, "%s: --coord N: 1..256\n", me);
        return 2;
    }
    if (attach(opt.socket, &c) < 0)
        return 2;
    snprintf(me, sizeof(me), "coord t%x", colls_mytid(c));
    if (write_tid(opt.tidfile, colls_mytid(c)) < 0)
        goto fail;
    for (int i = 0; i < n; i++) {
        r = colls_recv(c, COLLS_ANY, TAG_HELLO, buf, sizeof(buf), &st);
        if (r < 0) {
            fail("waiting for HELLO %d of %d: %s", i + 1, n, ename(r));
            goto fail;
        }
        tids[i] = st.source;
    }
    qsort(tids, (size_t)n, sizeof(tids[0]), cmp_tid);
    put32(buf, (uint32_t)n);
    for (int i = 0; i < n; i++)
        put32(buf + 4 + 4 * i, tids[i]);
    for (int i = 0; i < n; i++) {
        r = colls_send(c, tids[i], TAG_LIST, buf, 4 + 4 * (size_t)n);
        if (r < 0) {
            fail("LIST to t%x: %s", tids[i], ename(r));
            goto fail;
        }
    }
    note("%d workers registered", n);
    for (int i = 0; i < n; i++) {
        uint8_t d[20];
        r = colls_recv(c, COLLS_ANY, TAG_DONE, d, sizeof(d), &st);
        if (r < 0 || st.length != sizeof(d)) {
            fail("waiting for DONE %d of %d: %s", i + 1, n, ename(r));
            goto fail;
        }
        uint32_t errs = get32(d);
        uint64_t msgs = (uint64_t)get32(d + 4) << 32 | get32(d + 8);
        uint64_t bytes = (uint64_t)get32(d + 12) << 32 | get32(d + 16);
        note("worker t%x: %" PRIu64 " messages sent, %" PRIu64
             " bytes received, %u errors",
             st.source, msgs, bytes, errs);
        if (errs)
            failed++;
    }
    for (int i = 0; i < n; i++) {
        r = colls_send(c, tids[i], TAG_FINISH, "", 0);
        if (r < 0)
            fail("FINISH to t%x: %s", tids[i], ename(r));
    }
    colls_detach(c);
    if (failed)
        fail("%d of %d workers reported errors", failed, n);
    note("%s", nerrors ? "FAILED" : "all pairs passed");
    return nerrors ? 1 : 0;
fail:
    colls_detach(c);
    return 1;
}

/* ---- error-code checks with a forked peer -------------------------------- */

/* A child task attached to path: reports its tid through a pipe, then runs
   fn.  Returns the child's pid, its tid in *tid. */
static pid_t
spawn_peer(const char *path, int (*fn)(colls_t *, colls_tid_t),
           colls_tid_t parent, colls_tid_t *tid, int *fd_out)
{
    int tp[2], gp[2];
    pid_t pid;

    if (pipe(tp) < 0 || pipe(gp) < 0)
        return -1;
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        colls_t *c;
        uint32_t t = 0;
        char go;

        close(tp[0]);
        close(gp[1]);
        snprintf(me, sizeof(me), "child");
        if (attach(path, &c) == 0)
            t = colls_mytid(c);
        if (write(tp[1], &t, 4) != 4 || t == 0)
            _exit(2);
        /* Wait for the parent's go (it may attach after forking). */
        if (read(gp[0], &go, 1) != 1)
            _exit(2);
        if (read(gp[0], &parent, sizeof(parent)) != sizeof(parent))
            _exit(2);
        int r = fn(c, parent);
        colls_detach(c);
        _exit(r ? 1 : 0);
    }
    close(tp[1]);
    close(gp[0]);
    uint32_t t = 0;
    if (read(tp[0], &t, 4) != 4 || t == 0) {
        close(tp[0]);
        close(gp[1]);
        waitpid(pid, NULL, 0);
        return -1;
    }
    close(tp[0]);
    *tid = t;
    *fd_out = gp[1];
    return pid;
}

/* Lets the child go, telling it the parent's tid. */
static void
release_peer(int fd, colls_tid_t parent)
{
    char go = 'g';

    if (write(fd, &go, 1) != 1 ||
        write(fd, &parent, sizeof(parent)) != sizeof(parent))
        perror("release_peer");
    close(fd);
}

/* The single-process checks' start: a child task running fn on
   --peer-socket (default --socket), and this process attached to
   --socket.  The child's pid, or -1 (said on stderr). */
static pid_t
start_peer(int (*fn)(colls_t *, colls_tid_t), colls_t **c, colls_tid_t *ctid,
           int *fd)
{
    pid_t pid = spawn_peer(opt.peer_socket ? opt.peer_socket : opt.socket, fn,
                           0, ctid, fd);

    if (pid < 0 || attach(opt.socket, c) < 0) {
        fprintf(stderr, "%s: cannot start the peer\n", me);
        return -1;
    }
    return pid;
}

static int
wait_child(pid_t pid)
{
    int status;

    if (waitpid(pid, &status, 0) < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Child of the ETRUNC check: a long and a short message on each route,
   then wait for the parent's "done". */
static int
child_etrunc(colls_t *c, colls_tid_t parent)
{
    uint8_t big[1000];
    colls_status_t st;
    int r = 0;

    for (int route = 0; route < 2 && r == 0; route++) {
        uint64_t s = gen_key(colls_mytid(c), parent, route, 0);
        gen_fill(&s, big, sizeof(big));
        r = colls_send_route(c, parent, 10 + route * 2, big, sizeof(big),
                             route);
        if (r == 0)
            r = colls_send_route(c, parent, 11 + route * 2, big, 10, route);
    }
    if (r == 0)
        r = colls_recv(c, parent, 99, big, sizeof(big), &st);
    if (r < 0)
        fprintf(stderr, "child: %s\n", ename(r));
    return r;
}

/*
 * ETRUNC: a 1000-byte message received into 10 bytes gives COLLS_ETRUNC,
 * the full length in the status and the first 10 bytes; the message is
 * consumed, so the next (short) one is received normally.  Both routes.
 */
static int
run_etrunc(void)
{
    colls_t *c;
    colls_tid_t ctid;
    int fd;
    pid_t pid = start_peer(child_etrunc, &c, &ctid, &fd);

    if (pid < 0)
        return 2;
    release_peer(fd, colls_mytid(c));
    for (int route = 0; route < 2; route++) {
        uint8_t got[64], want[1000];
        colls_status_t st = {0};
        uint64_t s = gen_key(ctid, colls_mytid(c), route, 0);
        int r;

        gen_fill(&s, want, sizeof(want));
        memset(got, 0, sizeof(got));
        r = colls_recv(c, ctid, 10 + route * 2, got, 10, &st);
        if (r != COLLS_ETRUNC)
            fail("route %s: recv 1000 B into 10 B: %s, expected ETRUNC",
                 route_name(route), ename(r));
        else if (st.length != 1000 || st.source != ctid ||
                 st.tag != 10 + route * 2)
            fail("route %s: ETRUNC status length %zu source t%x tag %d",
                 route_name(route), st.length, st.source, st.tag);
        else
            compare_bytes("truncated prefix", got, want, 10);
        if (got[10] != 0)
            fail("route %s: recv wrote past cap", route_name(route));
        r = colls_recv(c, ctid, 11 + route * 2, got, sizeof(got), &st);
        if (r != 0 || st.length != 10)
            fail("route %s: message after the truncated one: %s len %zu",
                 route_name(route), ename(r), st.length);
        else
            compare_bytes("message after ETRUNC", got, want, 10);
    }
    int r = colls_send(c, ctid, 99, "", 0);
    if (r < 0)
        fail("done to child: %s", ename(r));
    if (wait_child(pid) != 0)
        fail("child failed");
    colls_detach(c);
    note("%s", nerrors ? "FAILED" : "ETRUNC ok on both routes");
    return nerrors ? 1 : 0;
}

/*
 * ENOENT: messages to tids that do not exist (a free local number on this
 * host; a host id not in the machine) fail with COLLS_ENOENT, reported by
 * the send itself or, since the daemon answers asynchronously, by the next
 * receive naming that tid.  Nothing may hang.
 */
static int
run_enoent(void)
{
    colls_t *c;

    if (attach(opt.socket, &c) < 0)
        return 2;
    colls_set_timeout(c, 10000);
    colls_tid_t self = colls_mytid(c);
    colls_tid_t bogus[3] = {
        COLLS_DAEMON_TID(COLLS_TID_HID(self)) | 0xffffe,
        COLLS_DAEMON_TID(4000) | 5,
        COLLS_DAEMON_TID(COLLS_TID_HID(self)) | 0xffffd,
    };
    for (int i = 0; i < 3; i++) {
        colls_status_t st;
        uint8_t b[8];
        int r =
            colls_send_route(c, bogus[i], 5, "xyz", 3,
                             i == 2 ? COLLS_ROUTE_DIRECT : COLLS_ROUTE_DEFAULT);
        int r2 = r;
        if (r == 0)
            r2 = colls_recv(c, bogus[i], COLLS_ANY, b, sizeof(b), &st);
        if (r2 != COLLS_ENOENT)
            fail("send to bogus t%x (%s route): send %s, then recv %s; "
                 "expected ENOENT",
                 bogus[i], i == 2 ? "direct" : "default", ename(r), ename(r2));
        else
            note("bogus t%x: %s reported ENOENT", bogus[i],
                 r ? "send" : "recv");
    }
    /* The handle still works: an echo from our own daemon. */
    uint8_t b[4];
    colls_status_t st;
    int r = colls_send(c, COLLS_DAEMON_TID(COLLS_TID_HID(self)), 7, "ping", 4);
    if (r == 0)
        r = colls_recv(c, COLLS_DAEMON_TID(COLLS_TID_HID(self)), 7, b,
                       sizeof(b), &st);
    if (r < 0 || memcmp(b, "ping", 4) != 0)
        fail("daemon echo after ENOENT: %s", ename(r));
    colls_detach(c);
    return nerrors ? 1 : 0;
}

/* Child of the EPEERDEAD check: one message, then death without detach
   while the parent is blocked in a receive naming it. */
static int
child_die(colls_t *c, colls_tid_t parent)
{
    int r = colls_send(c, parent, 11, "last words", 10);

    if (r < 0)
        fprintf(stderr, "child: send: %s\n", ename(r));
    usleep(500000);
    raise(SIGKILL);
    return 1;
}

/*
 * EPEERDEAD and task-exit notification: the parent asks to be notified of
 * the child's exit, receives the child's one message, then blocks in a
 * receive from the child, which dies: the receive fails with
 * COLLS_EPEERDEAD, the notification arrives from the local daemon, and a
 * send to the dead tid fails too.
 */
static int
run_peerdead(void)
{
    colls_t *c;
    colls_tid_t ctid;
    int fd, r;
    pid_t pid = start_peer(child_die, &c, &ctid, &fd);

    if (pid < 0)
        return 2;
    colls_set_timeout(c, 20000);
    colls_tid_t self = colls_mytid(c);
    colls_tid_t dtid = COLLS_DAEMON_TID(COLLS_TID_HID(self));
    r = colls_notify(c, COLLS_NOTIFY_TASK_EXIT, (int)ctid, 77);
    if (r < 0)
        fail("notify TASK_EXIT t%x: %s", ctid, ename(r));
    release_peer(fd, self);

    uint8_t b[64];
    colls_status_t st = {0};
    r = colls_recv(c, ctid, 11, b, sizeof(b), &st);
    if (r < 0 || st.length != 10 || memcmp(b, "last words", 10) != 0)
        fail("message sent before death: %s len %zu", ename(r), st.length);
    double t0 = now_ms();
    r = colls_recv(c, ctid, 12, b, sizeof(b), &st);
    double dt = now_ms() - t0;
    if (r != COLLS_EPEERDEAD)
        fail("recv from a task that died: %s, expected EPEERDEAD", ename(r));
    else
        note("recv from the dead task: EPEERDEAD after %.0f ms", dt);
    int cs = wait_child(pid);
    if (cs != 128 + SIGKILL)
        fail("child exit status %d, expected death by SIGKILL", cs);

    /* The notification: from our daemon, tag 77, {TASK_EXIT, tid,
       status}: the status is unknown (0xffffffff), the child was not
       spawned by a daemon. */
    memset(&st, 0, sizeof(st));
    r = colls_recv(c, COLLS_ANY, 77, b, sizeof(b), &st);
    if (r < 0)
        fail("task-exit notification: %s", ename(r));
    else if (st.source != dtid || st.length != 12 ||
             get32(b) != COLLS_NOTIFY_TASK_EXIT || get32(b + 4) != ctid ||
             get32(b + 8) != 0xffffffffu)
        fail("notification: source t%x length %zu what %u who t%x "
             "(expected t%x, 12, %d, t%x, status unknown)",
             st.source, st.length, st.length >= 4 ? get32(b) : 0,
             st.length >= 8 ? get32(b + 4) : 0, dtid, COLLS_NOTIFY_TASK_EXIT,
             ctid);
    else
        note("task-exit notification received");

    /* Sends to the dead task fail (now or at the next receive). */
    r = colls_send(c, ctid, 13, "x", 1);
    int r2 = r;
    if (r == 0)
        r2 = colls_recv(c, ctid, COLLS_ANY, b, sizeof(b), &st);
    if (r2 != COLLS_EPEERDEAD && r2 != COLLS_ENOENT)
        fail("send to the dead task: %s then %s, expected EPEERDEAD or "
             "ENOENT",
             ename(r), ename(r2));
    colls_detach(c);
    return nerrors ? 1 : 0;
}

/* Child of the last-words check: its first direct message to the parent,
   then a normal exit. */
static int
child_lastwords(colls_t *c, colls_tid_t parent)
{
    int r =
        colls_send_route(c, parent, 11, "last words", 10, COLLS_ROUTE_DIRECT);

    if (r < 0)
        fprintf(stderr, "child: send: %s\n", ename(r));
    else if (colls_route_fallbacks(c) != 0)
        fprintf(stderr, "child: the message went through the daemon\n");
    return r < 0 || colls_route_fallbacks(c) != 0;
}

/*
 * A task's last message on a direct connection that the receiver has not
 * yet accepted: the child connects, writes its one message and exits
 * while the parent runs no loop (it waits for the child's exit, then for
 * the daemon's TASK_EXIT to be on its way).  The message waits in the
 * parent's listener's backlog when the parent learns of the death; the
 * receive must still return it (docs/protocol.md, "Task <-> task"),
 * and the next one fail with COLLS_EPEERDEAD.
 */
static int
run_lastwords(void)
{
    colls_t *c;
    colls_tid_t ctid;
    int fd, r;
    pid_t pid = start_peer(child_lastwords, &c, &ctid, &fd);

    if (pid < 0)
        return 2;
    colls_set_timeout(c, 20000);
    release_peer(fd, colls_mytid(c));
    int cs = wait_child(pid);
    if (cs != 0)
        fail("child exit status %d, expected 0 (a direct send)", cs);
    usleep(300000); /* the TASK_EXIT reaches our socket meanwhile */

    uint8_t b[64];
    colls_status_t st = {0};
    r = colls_recv(c, ctid, 11, b, sizeof(b), &st);
    if (r < 0 || st.length != 10 || memcmp(b, "last words", 10) != 0)
        fail("last message of a task that exited: %s len %zu", ename(r),
             st.length);
    else
        note("last words of an exited task received (direct route)");
    r = colls_recv(c, ctid, 12, b, sizeof(b), &st);
    if (r != COLLS_EPEERDEAD)
        fail("recv from a task that exited: %s, expected EPEERDEAD", ename(r));
    colls_detach(c);
    return nerrors ? 1 : 0;
}

/* ---- host-down check ----------------------------------------------------- */

/* A task that publishes its tid and consumes messages until its daemon
   goes away (or it is killed). */
static int
run_victim(void)
{
    colls_t *c;
    static uint8_t b[1 << 20];
    colls_status_t st;
    long n = 0;
    int r;

    if (attach(opt.socket, &c) < 0)
        return 2;
    colls_set_timeout(c, opt.timeout_ms);
    if (write_tid(opt.tidfile, colls_mytid(c)) < 0)
        return 2;
    while ((r = colls_recv(c, COLLS_ANY, COLLS_ANY, b, sizeof(b), &st)) >= 0 ||
           r == COLLS_ETRUNC)
        n++;
    note("victim: %ld messages, then %s", n, ename(r));
    colls_detach(c);
    return 0;
}

/*
 * Streams messages to a task on another host until that host is killed:
 * sends (or the receive after them) must start failing with
 * COLLS_EHOSTDOWN; then a blocking receive from that task fails with
 * COLLS_EHOSTDOWN, and the host-down notification arrives.  The elapsed
 * times are printed for the script to compare with --dead-after.
 */
static int
run_waitdown(void)
{
    colls_t *c;
    colls_tid_t peer;
    static uint8_t b[16384];
    colls_status_t st;
    int r = 0;
    long sent = 0;

    if (read_tid(opt.peer, &peer) < 0 || attach(opt.socket, &c) < 0)
        return 2;
    colls_set_timeout(c, opt.timeout_ms);
    colls_tid_t dtid = COLLS_DAEMON_TID(COLLS_TID_HID(colls_mytid(c)));
    int phid = COLLS_TID_HID(peer);
    r = colls_notify(c, COLLS_NOTIFY_HOST_DOWN, phid, 78);
    if (r < 0)
        fail("notify HOST_DOWN %d: %s", phid, ename(r));
    if (opt.ready) {
        FILE *f = fopen(opt.ready, "w");
        if (f)
            fclose(f);
    }
    double t0 = now_ms(), tfail = 0;
    memset(b, 0x5a, sizeof(b));
    /* Stream until a call fails; bounded by the timeout. */
    while (now_ms() - t0 < opt.timeout_ms) {
        r = colls_send(c, peer, 20, b, sizeof(b));
        if (r < 0)
            break;
        sent++;
        r = colls_nrecv(c, peer, COLLS_ANY, b, sizeof(b), &st);
        if (r < 0 && r != COLLS_EAGAIN)
            break;
        r = 0;
        usleep(5000);
    }
    tfail = now_ms();
    if (r != COLLS_EHOSTDOWN)
        fail("streaming to t%x (host %d): stopped with %s after %ld "
             "messages, expected EHOSTDOWN",
             peer, phid, ename(r), sent);
    else
        note("stream to t%x: EHOSTDOWN after %ld messages, %.0f ms "
             "(wall clock %.3f s)",
             peer, sent, tfail - t0, wall_s());
    double t1 = now_ms();
    r = colls_recv(c, peer, COLLS_ANY, b, sizeof(b), &st);
    if (r != COLLS_EHOSTDOWN)
        fail("recv from t%x on the down host: %s, expected EHOSTDOWN", peer,
             ename(r));
    else
        note("recv from the down host: EHOSTDOWN after %.0f ms", now_ms() - t1);
    r = colls_recv(c, dtid, 78, b, sizeof(b), &st);
    if (r < 0 || st.length != 8 || get32(b) != COLLS_NOTIFY_HOST_DOWN ||
        get32(b + 4) != (uint32_t)phid)
        fail("host-down notification: %s length %zu", ename(r), st.length);
    else
        note("host-down notification for host %d received", phid);
    colls_detach(c);
    return nerrors ? 1 : 0;
}

static void usage(void);

/* ---- benchmark helpers ------------------------------------------------- */

enum { TAG_STREAM = 30, TAG_END = 31, TAG_ACK = 32 };

/* Receives streamed messages from anyone until an END, answers ACK with
   the byte count, and goes on (several streams one after the other)
   until killed or the timeout expires with nothing arriving. */
static int
run_sink(void)
{
    colls_t *c;
    colls_status_t st;
    uint8_t *b = malloc(BIG_SIZE);
    uint64_t bytes = 0;
    int r;

    if (!b || attach(opt.socket, &c) < 0)
        return 2;
    if (write_tid(opt.tidfile, colls_mytid(c)) < 0)
        return 2;
    for (;;) {
        r = colls_recv(c, COLLS_ANY, COLLS_ANY, b, BIG_SIZE, &st);
        if (r < 0)
            break;
        if (st.tag == TAG_END) {
            uint8_t a[8];
            put32(a, (uint32_t)(bytes >> 32));
            put32(a + 4, (uint32_t)bytes);
            r = colls_send_route(c, st.source, TAG_ACK, a, 8,
                                 b[0] ? COLLS_ROUTE_DIRECT
                                      : COLLS_ROUTE_DEFAULT);
            bytes = 0;
            if (r < 0)
                break;
        } else {
            bytes += st.length;
        }
    }
    colls_detach(c);
    free(b);
    return r == COLLS_ETIMEDOUT ? 0 : 1;
}

/*
 * Streams --bytes in messages of --msg-size to the sink (--peer), on the
 * route of --routes (default or direct), then waits for the ACK: prints
 * "stream BYTES MBps" (MB = 1e6 bytes), the best of --rounds runs.
 */
static int
run_stream(void)
{
    colls_t *c;
    colls_tid_t peer;
    colls_status_t st;
    uint8_t *b;
    int route = opt.routes == 2 ? COLLS_ROUTE_DIRECT : COLLS_ROUTE_DEFAULT;
    double best = 0;
    int r = 0;

    if (opt.msg_size < 1 || opt.msg_size > BIG_SIZE || opt.bytes < 1)
        usage();
    b = malloc(opt.msg_size);
    if (!b || read_tid(opt.peer, &peer) < 0 || attach(opt.socket, &c) < 0)
        return 2;
    memset(b, 0x33, opt.msg_size);
    for (int k = 0; k < opt.rounds && r == 0; k++) {
        uint64_t left = opt.bytes;
        uint8_t a[8], flag = route == COLLS_ROUTE_DIRECT;
        double t0 = now_ms();
        while (left > 0 && r == 0) {
            size_t n = left < opt.msg_size ? (size_t)left : opt.msg_size;
            r = colls_send_route(c, peer, TAG_STREAM, b, n, route);
            left -= n;
        }
        if (r == 0)
            r = colls_send_route(c, peer, TAG_END, &flag, 1, route);
        if (r == 0)
            r = colls_recv(c, peer, TAG_ACK, a, sizeof(a), &st);
        if (r < 0) {
            fail("stream: %s", ename(r));
            break;
        }
        uint64_t got = (uint64_t)get32(a) << 32 | get32(a + 4);
        if (got != opt.bytes)
            fail("stream: sink counted %" PRIu64 " of %" PRIu64 " bytes", got,
                 opt.bytes);
        double mbps = (double)opt.bytes / (now_ms() - t0) / 1e3;
        if (mbps > best)
            best = mbps;
    }
    if (nerrors == 0)
        printf("stream %" PRIu64 " %.2f\n", opt.bytes, best);
    colls_detach(c);
    free(b);
    return nerrors ? 1 : 0;
}

/*
 * The soak pair (tests/bench/soak.sh).  Message k (k = 0..count-1) has
 * soak_len(k) bytes: its sequence number k (8 bytes, big-endian) and then
 * bytes of the generator keyed by k.  The receiver checks every message
 * against the next k it expects: a higher k is a loss (or a reordering,
 * told apart when the missing one arrives later), a lower one a
 * duplicate or reordering, wrong bytes corruption.  It prints
 * "soak recv N lost L dup D reordered R corrupt C" (and progress every
 * 10^5 messages to stderr) and exits 0 only if all four are 0.
 */
static size_t
soak_len(uint64_t k)
{
    static const size_t lens[8] = {8, 16, 100, 1000, 1472, 4096, 9000, 65536};

    return k % 97 == 0 ? lens[k / 97 % 8] : 8 + (size_t)(k % 5) * 60;
}

static void
soak_fill(uint64_t k, uint8_t *b, size_t n)
{
    uint64_t s = gen_key(1, 2, 0, (int)(k & 0x7fffffff)) ^ k << 32;

    put32(b, (uint32_t)(k >> 32));
    put32(b + 4, (uint32_t)k);
    gen_fill(&s, b + 8, n - 8);
}

static int
run_soak_recv(void)
{
    colls_t *c;
    colls_status_t st;
    uint8_t *b = malloc(65536), *want = malloc(65536);
    uint64_t next = 0, got = 0, lost = 0, dup = 0, reord = 0, corrupt = 0;
    int r = 0;

    if (!b || !want || attach(opt.socket, &c) < 0 ||
        write_tid(opt.tidfile, colls_mytid(c)) < 0)
        return 2;
    while (next < (uint64_t)opt.count) {
        r = colls_recv(c, COLLS_ANY, TAG_STREAM, b, 65536, &st);
        if (r < 0)
            break;
        uint64_t k = st.length >= 8 ? (uint64_t)get32(b) << 32 | get32(b + 4)
                                    : UINT64_MAX;
        got++;
        if (k == UINT64_MAX || st.length != soak_len(k)) {
            corrupt++;
            continue;
        }
        soak_fill(k, want, st.length);
        if (memcmp(b, want, st.length) != 0) {
            corrupt++;
            continue;
        }
        if (k < next) {
            dup++; /* or a late one already counted lost: see reord */
            if (lost > 0) {
                lost--;
                dup--;
                reord++;
            }
        } else {
            lost += k - next;
            next = k + 1;
        }
        if (got % 100000 == 0)
            fprintf(stderr, "soak: %" PRIu64 " messages\n", got);
    }
    printf("soak recv %" PRIu64 " lost %" PRIu64 " dup %" PRIu64
           " reordered %" PRIu64 " corrupt %" PRIu64 "%s%s\n",
           got, lost, dup, reord, corrupt, r < 0 ? " error " : "",
           r < 0 ? ename(r) : "");
    colls_detach(c);
    free(b);
    free(want);
    return r < 0 || lost || dup || reord || corrupt ? 1 : 0;
}

static int
run_soak_send(void)
{
    colls_t *c;
    colls_tid_t peer;
    uint8_t *b = malloc(65536);
    int r = 0;

    if (!b || read_tid(opt.peer, &peer) < 0 || attach(opt.socket, &c) < 0)
        return 2;
    for (uint64_t k = 0; k < (uint64_t)opt.count && r == 0; k++) {
        size_t n = soak_len(k);

        soak_fill(k, b, n);
        r = colls_send(c, peer, TAG_STREAM, b, n);
    }
    if (r < 0)
        fail("soak send: %s", ename(r));
    else
        printf("soak sent %d\n", opt.count);
    colls_detach(c);
    free(b);
    return r < 0 ? 1 : 0;
}

/* Attaches --count tasks from this process, creates the --ready file,
   holds them until the --tidfile path disappears (or the timeout), then
   detaches them all: the daemon's memory with many tasks. */
static int
run_attach_many(void)
{
    colls_t **cs = calloc((size_t)opt.count, sizeof(*cs));
    int n = 0;

    if (!cs || !opt.ready || !opt.tidfile)
        usage();
    for (; n < opt.count; n++)
        if (attach(opt.socket, &cs[n]) < 0)
            break;
    FILE *f = fopen(opt.ready, "w");
    if (f) {
        fprintf(f, "%d\n", n);
        fclose(f);
    }
    double end = now_ms() + opt.timeout_ms;
    while (access(opt.tidfile, F_OK) == 0 && now_ms() < end)
        usleep(50000);
    for (int i = 0; i < n; i++)
        colls_detach(cs[i]);
    free(cs);
    return n == opt.count ? 0 : 1;
}

static void
usage(void)
{
    fprintf(stderr,
            "usage: p2p-check [--socket PATH] [--timeout-ms MS]\n"
            "  --coord N --tidfile FILE           coordinator of N workers\n"
            "  --worker FILE|tid [--routes default|direct|both] [--big]\n"
            "                   [--quick] [--rounds R]\n"
            "  --mode etrunc|enoent|peerdead|lastwords [--peer-socket PATH]\n"
            "  --mode victim --tidfile FILE\n"
            "  --mode waitdown --peer FILE|tid [--ready FILE]\n"
            "  --mode sink --tidfile FILE\n"
            "  --mode stream --peer FILE|tid --bytes N --msg-size S\n"
            "                [--routes default|direct] [--rounds R]\n"
            "  --mode attach-many --count N --ready FILE --tidfile HOLD\n"
            "  --mode soak-recv --tidfile FILE --count N\n"
            "  --mode soak-send --peer FILE|tid --count N\n");
    exit(2);
}

int
main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (strcmp(a, name) == 0 && v && (i++, 1))
        if (ARG("--socket"))
            opt.socket = v;
        else if (ARG("--coord")) {
            opt.mode = "coord";
            opt.ntasks = atoi(v);
        } else if (ARG("--tidfile"))
            opt.tidfile = v;
        else if (ARG("--worker")) {
            opt.mode = "exchange";
            opt.coord = v;
        } else if (ARG("--mode"))
            opt.mode = v;
        else if (ARG("--peer"))
            opt.peer = v;
        else if (ARG("--peer-socket"))
            opt.peer_socket = v;
        else if (ARG("--ready"))
            opt.ready = v;
        else if (ARG("--timeout-ms"))
            opt.timeout_ms = atoi(v);
        else if (ARG("--count"))
            opt.count = atoi(v);
        else if (ARG("--bytes"))
            opt.bytes = strtoull(v, NULL, 0);
        else if (ARG("--msg-size"))
            opt.msg_size = strtoull(v, NULL, 0);
        else if (ARG("--rounds"))
            opt.rounds = atoi(v);
        else if (ARG("--routes")) {
            opt.routes = strcmp(v, "default") == 0  ? 1
                         : strcmp(v, "direct") == 0 ? 2
                         : strcmp(v, "both") == 0   ? 3
                                                    : 0;
            if (!opt.routes)
                usage();
        } else if (strcmp(a, "--big") == 0)
            opt.big = 1;
        else if (strcmp(a, "--quick") == 0)
            opt.quick = 1;
        else
            usage();
#undef ARG
    }
    signal(SIGPIPE, SIG_IGN);
    if (strcmp(opt.mode, "coord") == 0) {
        if (!opt.tidfile)
            usage();
        return run_coord();
    }
    if (strcmp(opt.mode, "exchange") == 0) {
        if (!opt.coord)
            usage();
        return run_worker();
    }
    if (strcmp(opt.mode, "etrunc") == 0)
        return run_etrunc();
    if (strcmp(opt.mode, "enoent") == 0)
        return run_enoent();
    if (strcmp(opt.mode, "peerdead") == 0)
        return run_peerdead();
    if (strcmp(opt.mode, "lastwords") == 0)
        return run_lastwords();
    if (strcmp(opt.mode, "victim") == 0 && opt.tidfile)
        return run_victim();
    if (strcmp(opt.mode, "waitdown") == 0 && opt.peer)
        return run_waitdown();
    if (strcmp(opt.mode, "sink") == 0 && opt.tidfile)
        return run_sink();
    if (strcmp(opt.mode, "stream") == 0 && opt.peer)
        return run_stream();
    if (strcmp(opt.mode, "attach-many") == 0 && opt.count > 0)
        return run_attach_many();
    if (strcmp(opt.mode, "soak-recv") == 0 && opt.tidfile && opt.count > 0)
        return run_soak_recv();
    if (strcmp(opt.mode, "soak-send") == 0 && opt.peer && opt.count > 0)
        return run_soak_send();
    usage();
    return 2;
}
