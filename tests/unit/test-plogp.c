/*
 * test-plogp.c -- the pLogP measurement core (daemon/plogp.c) against a
 * simulated link whose parameters are known: an echo of m bytes takes
 * 2 (L + a + b m) plus jitter, and a train's messages arrive every
 * c + d m apart.  The job must recover L, g(m) = a + b m and the gap
 * c + d m; behind a simulated token bucket, the isolated message's g
 * and the rate's gap.  The receiver, the summary and the parameter file
 * are checked on their own.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "colls.h"
#include "daemon/alg/topo.h"
#include "daemon/plogp.h"
#include "daemon/tune.h"
#include "proto/collop.h"
#include "tests/unit/suites.h"

/* The simulated link and the probes the job asked for. */
struct sim {
    double L, a, b, c, d;
    uint64_t now;
    int echoes, trains, lose_next_train;
    uint64_t id;
    size_t m;
    int k;
    int kind; /* 1 echo, 2 train */
    unsigned jitter;
    size_t slow_below; /* echoes of fewer bytes take slow_us more */
    double slow_us;
    /* a token bucket of `bucket` bytes filling at `rate` bytes per us
       (0: none): a message passes when the bucket holds its bytes, else
       waits for them; a train that the bucket holds passes at the link's
       own gap and takes its bytes, a longer one's messages arrive at
       least m / rate apart and empty it */
    double bucket, rate, tokens;
    uint64_t filled; /* when tokens was last brought up to date */
    int pauses;      /* times the job paused */
    /* trains the transport repairs (retransmits in): the next `repair`
       ones, or every one with repair_all; a repaired train's messages
       arrive 4 times as far apart as the link's gap */
    int repair, repair_all, repaired;
};

/* Brings s's bucket up to s->now. */
static void
sim_fill(struct sim *s)
{
    s->tokens += (double)(s->now - s->filled) * s->rate;
    if (s->tokens > s->bucket)
        s->tokens = s->bucket;
    s->filled = s->now;
}

/* Time, us, message of m bytes waits at s's bucket now (and takes its
   tokens). */
static double
sim_bucket_wait(struct sim *s, size_t m)
{
    double wait = 0.0;

    if (s->bucket <= 0.0)
        return 0.0;
    sim_fill(s);
    if (s->tokens < (double)m) {
        wait = ((double)m - s->tokens) / s->rate;
        s->tokens = 0.0;
    } else
        s->tokens -= (double)m;
    return wait;
}

static int
sim_echo(void *ctx, int hid, size_t bytes, uint64_t id)
{
    struct sim *s = ctx;

    ck_assert_int_eq(hid, 3);
    s->echoes++;
    s->kind = 1;
    s->id = id;
    s->m = bytes;
    return 0;
}

static int
sim_train(void *ctx, int hid, size_t m, int k, uint64_t id)
{
    struct sim *s = ctx;

    ck_assert_int_eq(hid, 3);
    ck_assert_int_ge(k, PLOGP_TRAIN_MIN);
    ck_assert_int_le(k, PLOGP_TRAIN_MAX);
    s->trains++;
    s->kind = 2;
    s->id = id;
    s->m = m;
    s->k = k;
    return 0;
}

static const struct plogp_ops sim_ops = {sim_echo, sim_train};

/* The simulated daemons' CPU per message of m bytes: sending (o_s) and
   receiving (o_r). */
#define SIM_O_S(m) (2.0 + 0.0004 * (double)(m))
#define SIM_O_R(m) (1.0 + 0.0005 * (double)(m))

/* Answers the probe in flight through the job's inputs and the
   receiver's core, as measure.c does. */
static void
sim_answer(struct sim *s, struct plogp_job *j, struct plogp_rx *rx)
{
    /* jitter: 0..3 us, deterministic */
    s->jitter = s->jitter * 1103515245u + 12345u;
    if (s->kind == 1) {
        double one = s->L + s->a + s->b * (double)s->m +
                     (s->m < s->slow_below ? s->slow_us : 0.0);

        one += sim_bucket_wait(s, s->m); /* one way shaped */
        s->now += (uint64_t)(2.0 * one) + (s->jitter >> 16) % 4;
        ck_assert_int_eq(plogp_job_echoed(j, s->id, s->now), 1);
    } else {
        double gap = s->c + s->d * (double)s->m, span = 0.0, o_r = 0.0;
        int i, got = 0, done = 0, repaired = s->repair_all || s->repair > 0;
        uint64_t t = s->now;

        if (repaired) {
            gap *= 4.0;
            s->repaired++;
            if (s->repair > 0)
                s->repair--;
        }

        if (s->bucket > 0.0) {
            sim_fill(s);
            if ((double)s->m * s->k <= s->tokens) {
                s->tokens -= (double)s->m * s->k; /* it holds the train */
            } else {
                if (gap < (double)s->m / s->rate)
                    gap = (double)s->m / s->rate;
                s->tokens = 0.0; /* the train empties it */
                s->filled = t + (uint64_t)(gap * s->k);
            }
        }

        for (i = 0; i < s->k; i++) {
            if (s->lose_next_train && i == 1)
                continue; /* the receiver never sees message 1 */
            /* the receiver's CPU clock: SIM_O_R(m) per message, from
               some earlier reading */
            done = plogp_rx_arrive(rx, s->id, i, s->k, t + (uint64_t)(gap * i),
                                   5000 + (uint64_t)(SIM_O_R(s->m) * i), &got,
                                   &span, &o_r);
            ck_assert_int_eq(done, i == s->k - 1);
        }
        s->lose_next_train = 0;
        s->now = t + (uint64_t)(gap * s->k) + 50;
        /* the sender's overhead, jittered by -1..2 us */
        ck_assert_int_eq(plogp_job_spanned(j, s->id, got, span,
                                           SIM_O_S(s->m) +
                                               (double)((s->jitter >> 16) % 4) -
                                               1.0,
                                           o_r, repaired),
                         1);
    }
}

/* The link the tests simulate: L 20 us, g(m) = 4 + 0.002 m, gap(m) = 3 +
   0.001 m. */
#define SIM_LINK .L = 20, .a = 4, .b = 0.002, .c = 3, .d = 0.001

/* plogp_job_next, the simulated time moved on over its pauses. */
static int
sim_next(struct sim *s, struct plogp_job *j, uint64_t *next)
{
    int rc;

    while ((rc = plogp_job_next(j, &sim_ops, s, next, s->now)) == 2) {
        ck_assert_uint_gt(j->resume_us, s->now);
        s->now = j->resume_us;
        s->pauses++;
    }
    return rc;
}

/* Runs a job of n sizes, reps each, against s to its end; its result in
   p. */
static void
sim_run(struct sim *s, const size_t *sizes, size_t n, int reps,
        struct plogp_params *p)
{
    struct plogp_job j;
    struct plogp_rx rx = {0};
    uint64_t next = 1;
    int rc, steps = 0;

    ck_assert_int_eq(plogp_job_init(&j, 3, sizes, n, reps), 0);
    while ((rc = sim_next(s, &j, &next)) == 0) {
        sim_answer(s, &j, &rx);
        ck_assert_int_lt(++steps, 1000);
    }
    ck_assert_int_eq(rc, 1);
    ck_assert_int_eq(plogp_job_result(&j, p), 0);
}

START_TEST(test_job_recovers_link)
{
    static const size_t sizes[] = {1, 1024, 65536, 1048576};
    struct sim s = {SIM_LINK};
    struct plogp_job j;
    struct plogp_rx rx = {0};
    struct plogp_params p;
    uint64_t next = 1;
    size_t i;
    int rc, steps = 0;

    ck_assert_int_eq(plogp_job_init(&j, 3, sizes, 4, 5), 0);
    ck_assert_int_eq(plogp_job_result(&j, &p), COLLS_EAGAIN);
    while ((rc = sim_next(&s, &j, &next)) == 0) {
        /* one probe at a time: asking again sends nothing */
        int before = s.echoes + s.trains;

        ck_assert_int_eq(plogp_job_next(&j, &sim_ops, &s, &next, s.now), 0);
        ck_assert_int_eq(s.echoes + s.trains, before);
        /* a stale or foreign answer changes nothing */
        ck_assert_int_eq(plogp_job_echoed(&j, s.id + 1000, s.now), 0);
        if (steps == 7)
            s.lose_next_train = s.kind == 2;
        sim_answer(&s, &j, &rx);
        ck_assert_int_lt(++steps, 1000);
    }
    ck_assert_int_eq(rc, 1);
    /* echoes of up to 64 KiB: PLOGP_ECHO_MANY each; 1 MiB: 5; then
       PLOGP_ALONE_REPS of each size alone, after a pause each */
    ck_assert_int_eq(s.echoes, 3 * PLOGP_ECHO_MANY + 5 + 4 * PLOGP_ALONE_REPS);
    ck_assert_int_eq(s.pauses, 4 * PLOGP_ALONE_REPS);
    ck_assert_int_ge(s.trains, 4 * 5);
    ck_assert_int_eq(plogp_job_result(&j, &p), 0);
    ck_assert_int_eq(plogp_check(&p), 0);
    ck_assert_uint_eq(p.n, 4);
    /* L = RTT(1)/2 - gap(1) = 20 + 4 + 0.002 - 3.001 */
    ck_assert_msg(fabs(p.L - (20.0 + 4.0 - 3.0)) < 2.5, "L %.2f", p.L);
    for (i = 0; i < 4; i++) {
        double m = (double)sizes[i], want_gap = s.c + s.d * m,
               want_rtt = 2.0 * (s.L + s.a + s.b * m);

        ck_assert_uint_eq(p.m[i], sizes[i]);
        ck_assert_msg(fabs(p.gap[i] - want_gap) < 0.05 * want_gap + 1.0,
                      "gap(%zu) %.2f want %.2f", sizes[i], p.gap[i], want_gap);
        ck_assert_msg(fabs(p.rtt[i] - want_rtt) < 0.01 * want_rtt + 4.0,
                      "rtt(%zu) %.2f want %.2f", sizes[i], p.rtt[i], want_rtt);
        /* an isolated message costs what the echo says beyond L */
        ck_assert_msg(
            fabs(p.L + p.g[i] - want_rtt / 2.0) < 0.01 * want_rtt + 3.0,
            "L+g(%zu) %.2f want %.2f", sizes[i], p.L + p.g[i], want_rtt / 2.0);
        ck_assert(p.g[i] >= p.gap[i]);
        /* the overheads: the medians of the trains' (the receiver's CPU
           clock counts whole us, the sender's is jittered by -1..2) */
        ck_assert_msg(fabs(p.o_s[i] - SIM_O_S(m)) <= 2.0, "o_s(%zu) %.2f",
                      sizes[i], p.o_s[i]);
        ck_assert_msg(fabs(p.o_r[i] - SIM_O_R(m)) <= 1.0, "o_r(%zu) %.2f",
                      sizes[i], p.o_r[i]);
    }
}
END_TEST

/* Trains the transport repaired are sent again, PLOGP_LOSSY_REPEATS times
   per size at most: a first repaired train of each size leaves the gaps
   the link's; on a link that repairs every train each size takes
   PLOGP_LOSSY_REPEATS more and keeps what it measured (the budget of the
   repeats: test_deadlines). */
START_TEST(test_job_repaired_trains)
{
    static const size_t sizes[] = {1, 4096, 65536};
    struct sim s = {SIM_LINK}, all = {SIM_LINK, .repair_all = 1};
    struct plogp_params p, q;
    struct plogp_job j;
    struct plogp_rx rx = {0};
    uint64_t next = 1;
    size_t i;
    int rc, steps = 0, size_trains[3] = {0, 0, 0};

    ck_assert_int_eq(plogp_job_init(&j, 3, sizes, 3, 3), 0);
    while ((rc = sim_next(&s, &j, &next)) == 0) {
        /* the first train of each size is repaired */
        if (s.kind == 2 && size_trains[j.i]++ == 0)
            s.repair = 1;
        sim_answer(&s, &j, &rx);
        ck_assert_int_lt(++steps, 1000);
    }
    ck_assert_int_eq(rc, 1);
    ck_assert_int_eq(plogp_job_result(&j, &p), 0);
    ck_assert_int_eq(s.repaired, 3);
    ck_assert_int_eq(j.lossy_repeats, 3);
    ck_assert_int_eq(s.trains, 3 * 3 + 3);
    for (i = 0; i < 3; i++) {
        double want = s.c + s.d * (double)sizes[i];

        ck_assert_msg(fabs(p.gap[i] - want) < 0.05 * want + 1.0,
                      "gap(%zu) %.2f want %.2f", sizes[i], p.gap[i], want);
    }

    sim_run(&all, sizes, 3, 3, &q);
    ck_assert_int_eq(all.trains, 3 * (3 + PLOGP_LOSSY_REPEATS));
    for (i = 0; i < 3; i++) {
        double want = 4.0 * (all.c + all.d * (double)sizes[i]);

        ck_assert_msg(fabs(q.gap[i] - want) < 0.05 * want + 1.0,
                      "lossy gap(%zu) %.2f want %.2f", sizes[i], q.gap[i],
                      want);
    }
}
END_TEST

START_TEST(test_job_init_refuses)
{
    static const size_t down[] = {1024, 1};
    static const size_t big[] = {1, PLOGP_MAX_BYTES + 1};
    size_t many[PLOGP_MAX_SIZES + 1];
    struct plogp_job j;
    size_t i;

    for (i = 0; i <= PLOGP_MAX_SIZES; i++)
        many[i] = i + 1;
    ck_assert_int_eq(plogp_job_init(&j, 1, down, 2, 3), COLLS_EINVAL);
    ck_assert_int_eq(plogp_job_init(&j, 1, big, 2, 3), COLLS_EINVAL);
    ck_assert_int_eq(plogp_job_init(&j, 1, many, PLOGP_MAX_SIZES + 1, 3),
                     COLLS_EINVAL);
    ck_assert_int_eq(plogp_job_init(&j, 1, many, 0, 3), COLLS_EINVAL);
    ck_assert_int_eq(plogp_job_init(&j, 1, many, 2, 0), COLLS_EINVAL);
    ck_assert_int_eq(plogp_job_init(&j, 1, many, 2, PLOGP_MAX_REPS + 1),
                     COLLS_EINVAL);
    ck_assert_int_eq(plogp_job_init(&j, 1, many, PLOGP_MAX_SIZES, 3), 0);
}
END_TEST

START_TEST(test_rx)
{
    struct plogp_rx rx = {0};
    double span = -1, o_r = -1;
    int got = -1;

#define ARRIVE(id, idx, k, t, cpu)                                             \
    plogp_rx_arrive(&rx, id, idx, k, t, cpu, &got, &span, &o_r)
    /* malformed positions are ignored */
    ck_assert_int_eq(ARRIVE(5, 3, 3, 10, 0), 0);
    ck_assert_int_eq(ARRIVE(5, 0, 1, 10, 0), 0);
    ck_assert_int_eq(ARRIVE(5, 0, PLOGP_TRAIN_MAX + 1, 10, 0), 0);
    /* a train interrupted by a new one: the new one counts alone, its
       span from its middle message (idx 1 of 3) to its last, and the CPU
       time over that span per gap */
    ck_assert_int_eq(ARRIVE(5, 0, 4, 100, 1000), 0);
    ck_assert_int_eq(ARRIVE(6, 0, 3, 200, 1005), 0);
    ck_assert_int_eq(ARRIVE(6, 1, 3, 210, 1010), 0);
    ck_assert_int_eq(ARRIVE(6, 2, 3, 230, 1017), 1);
    ck_assert_int_eq(got, 3);
    ck_assert(fabs(span - 20.0) < 1e-9);
    ck_assert(fabs(o_r - 7.0) < 1e-9);
    /* a train whose middle was lost reports fewer; a CPU clock that did
       not move (or could not be read) reports no overhead */
    ck_assert_int_eq(ARRIVE(7, 0, 3, 300, 0), 0);
    ck_assert_int_eq(ARRIVE(7, 2, 3, 340, 0), 1);
    ck_assert_int_eq(got, 2);
    ck_assert(o_r == 0.0);
#undef ARRIVE
}
END_TEST

/* A filled-in set of parameters. */
static void
params_fill(struct plogp_params *p, double scale)
{
    size_t i;

    memset(p, 0, sizeof(*p));
    p->epoch = 7;
    p->L = 17.25 * scale;
    p->Ll = 30.5 * scale;
    p->gamma = 0.0004;
    p->hop_us = 9.5;
    p->hop_byte_us = 0.00025;
    p->n = 5;
    for (i = 0; i < p->n; i++) {
        p->m[i] = (size_t)1 << (4 * i);
        p->gap[i] = (2.0 + 0.001 * (double)p->m[i]) * scale;
        p->g[i] = p->gap[i] * 1.5;
        p->rtt[i] = 2.0 * (p->L + p->g[i]);
        p->gl[i] = p->g[i] * 2.0;
        p->o_s[i] = p->gap[i] * 0.5;
        p->o_r[i] = p->gap[i] * 0.75;
    }
}

/* A move's check (the quick ladder: sizes 1, 16, 256 of the five) against
   the row it checks. */
START_TEST(test_agrees)
{
    struct plogp_params old, row, far;
    size_t i;

    params_fill(&old, 1.0);
    params_fill(&far, 3.0);
    memset(&row, 0, sizeof(row));
    row.n = 3;
    for (i = 0; i < row.n; i++) {
        row.m[i] = old.m[i];
        row.g[i] = old.g[i] * 1.4; /* within 1.5 */
        row.rtt[i] = old.rtt[i];
        row.gap[i] = old.gap[i] / 1.4;
    }
    ck_assert_int_eq(plogp_agrees(&old, &row, 1.5, 0.0), 1);
    /* the gap counts too: a rate changed behind a bucket that lets an
       isolated message pass as before */
    row.gap[1] = old.gap[1] * 50.0;
    ck_assert_int_eq(plogp_agrees(&old, &row, 1.5, 0.0), 0);
    ck_assert_int_eq(plogp_agrees(&old, &row, 1.5, 1000.0), 1);
    row.gap[1] = old.gap[1];
    row.g[2] = old.g[2] * 1.6;
    ck_assert_int_eq(plogp_agrees(&old, &row, 1.5, 0.0), 0);
    /* ... unless the difference is under the floor (g(256) = 3.384) */
    ck_assert_int_eq(plogp_agrees(&old, &row, 1.5, 5.0), 1);
    row.g[2] = old.g[2] / 1.6; /* either way */
    ck_assert_int_eq(plogp_agrees(&old, &row, 1.5, 0.0), 0);
    row.g[2] = old.g[2];
    /* the smallest size's round trip counts (with its g) */
    row.rtt[0] = old.rtt[0] * 2.0;
    ck_assert_int_eq(plogp_agrees(&old, &row, 1.5, 0.0), 0);
    row.rtt[0] = old.rtt[0];
    /* a size the row has and old lacks disagrees */
    row.m[1] = 17;
    ck_assert_int_eq(plogp_agrees(&old, &row, 1.5, 0.0), 0);
    row.m[1] = old.m[1];
    ck_assert_int_eq(plogp_agrees(&old, &row, 1.5, 0.0), 1);
    /* a link three times slower */
    ck_assert_int_eq(plogp_agrees(&old, &far, 1.5, 0.0), 0);
    ck_assert_int_eq(plogp_agrees(&far, &old, 1.5, 0.0), 0);
}
END_TEST

/* The delivery rate's part of a look, and a look that only it finds. */
START_TEST(test_rate_moves)
{
    struct plogp_params p;
    struct plogp_moves mv;
    const uint64_t bulk = PLOGP_RATE_BULK;
    double row;
    int i;

    params_fill(&p, 1.0);
    /* the largest size, 65536 B, in gap(65536) = 2 + 65.536 us */
    row = plogp_row_rate(&p);
    ck_assert(fabs(row - 65536.0 / 67.536 * 1e6) < 1.0);
    p.gap[p.n - 1] = 0.0;
    ck_assert(plogp_row_rate(&p) == 0.0);
    /* twice or half the row's rate after bulk to this peer alone: a
       move */
    ck_assert_int_eq(plogp_rate_moved(row, 2.0 * row, bulk, bulk), 1);
    ck_assert_int_eq(plogp_rate_moved(row, 0.5 * row, bulk, bulk), 1);
    ck_assert_int_eq(plogp_rate_moved(row, 5.0 * row, 10 * bulk, 10 * bulk), 1);
    ck_assert_int_eq(plogp_rate_moved(row, 0.5 * row, 7 * bulk, 8 * bulk), 1);
    /* a share of the link: slower is no move (the others' flows took the
       rest), faster still is */
    ck_assert_int_eq(plogp_rate_moved(row, 0.5 * row, bulk, 2 * bulk), 0);
    ck_assert_int_eq(plogp_rate_moved(row, 0.1 * row, 6 * bulk, 7 * bulk), 0);
    ck_assert_int_eq(plogp_rate_moved(row, 2.0 * row, bulk, 7 * bulk), 1);
    /* within a factor 2, too little sent (a stale or a short stream's
       estimate), nothing known: none */
    ck_assert_int_eq(plogp_rate_moved(row, 1.99 * row, bulk, bulk), 0);
    ck_assert_int_eq(plogp_rate_moved(row, 0.51 * row, bulk, bulk), 0);
    ck_assert_int_eq(plogp_rate_moved(row, 5.0 * row, bulk - 1, bulk - 1), 0);
    ck_assert_int_eq(plogp_rate_moved(row, 0.1 * row, 0, 0), 0);
    /* a slow link's bulk: a second at its rate (1.25 MB at 10 Mbit/s),
       less than PLOGP_RATE_BULK */
    ck_assert_int_eq(plogp_rate_moved(row, 1.25e6, 1250000, 1250000), 1);
    ck_assert_int_eq(plogp_rate_moved(row, 1.25e6, 1000000, 1000000), 0);
    ck_assert_int_eq(plogp_rate_moved(0.0, row, bulk, bulk), 0);
    ck_assert_int_eq(plogp_rate_moved(row, 0.0, bulk, bulk), 0);
    /* a look that finds the rate moved counts on a busy link and with
       the round trip where it was; one that does not starts again */
    plogp_moves_init(&mv);
    for (i = 0; i < PLOGP_MOVED_CHECKS - 1; i++)
        ck_assert_int_eq(plogp_moves_look(&mv, 100, 100, 0, 1, 0), 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 100, 0, 0, 0), 0);
    ck_assert_int_eq(mv.moved, 0);
    ck_assert_int_eq(mv.due, 0);
    /* due at the count, but the check waits for a quiet look, however
       many busy ones come first, and whether they see a move or not */
    for (i = 0; i < PLOGP_MOVED_CHECKS; i++)
        ck_assert_int_eq(plogp_moves_look(&mv, 100, 100, 0, 1, 0), 0);
    ck_assert_int_eq(mv.due, 1);
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 100, 0, 1, 0), 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 100, 0, 0, 0), 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 100, 1, 0, 1), 0); /* held */
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 100, 1, 0, 0), 1);
    ck_assert_int_eq(mv.due, 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 100, 1, 0, 0), 0);
    /* a verdict ends a wait */
    for (i = 0; i < PLOGP_MOVED_CHECKS; i++)
        ck_assert_int_eq(plogp_moves_look(&mv, 100, 100, 0, 1, 0), 0);
    plogp_moves_checked(&mv, 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 100, 1, 0, 0), 0);
}
END_TEST

/* The move detector: what a move is, three quiet looks in a row, and
   the back-off after a false alarm. */
START_TEST(test_moves)
{
    struct plogp_moves mv;
    int i, k;

    plogp_moves_init(&mv);
    ck_assert_int_eq(mv.need, PLOGP_MOVED_CHECKS);
    /* 100 us to 2 ms: a move; due at the third quiet look */
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 2000, 1, 0, 0), 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 2000, 1, 0, 0), 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 2000, 1, 0, 0), 1);
    ck_assert_int_eq(mv.moved, 0); /* counting starts again */
    /* a busy look in between starts the count again */
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 2000, 1, 0, 0), 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 2000, 1, 0, 0), 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 2000, 0, 0, 0), 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 2000, 1, 0, 0), 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 2000, 1, 0, 0), 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 2000, 1, 0, 0), 1);
    /* so does a look without a move */
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 2000, 1, 0, 0), 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 2000, 1, 0, 0), 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 150, 1, 0, 0), 0);
    ck_assert_int_eq(mv.moved, 0);
    /* not moves: under the 1 ms floor (50 us -> 900 us, 18x), within a
       factor 2 either way, or a round trip unknown */
    for (i = 0; i < 10; i++) {
        ck_assert_int_eq(plogp_moves_look(&mv, 50, 900, 1, 0, 0), 0);
        ck_assert_int_eq(plogp_moves_look(&mv, 3000, 5999, 1, 0, 0), 0);
        ck_assert_int_eq(plogp_moves_look(&mv, 6000, 3001, 1, 0, 0), 0);
        ck_assert_int_eq(plogp_moves_look(&mv, 0, 5000, 1, 0, 0), 0);
        ck_assert_int_eq(plogp_moves_look(&mv, 5000, 0, 1, 0, 0), 0);
    }
    /* moves: twice, half, and down as well as up */
    for (i = 0; i < 2; i++)
        ck_assert_int_eq(plogp_moves_look(&mv, 3000, 6000, 1, 0, 0), 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 3000, 6000, 1, 0, 0), 1);
    for (i = 0; i < 2; i++)
        ck_assert_int_eq(plogp_moves_look(&mv, 6000, 3000, 1, 0, 0), 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 6000, 3000, 1, 0, 0), 1);
    /* held (a check already queued): due at the first look after */
    for (i = 0; i < 5; i++)
        ck_assert_int_eq(plogp_moves_look(&mv, 100, 2000, 1, 0, 1), 0);
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 2000, 1, 0, 0), 1);
    /* false alarms double the looks needed, up to the most */
    for (k = PLOGP_MOVED_CHECKS * 2; k <= PLOGP_MOVED_MAX; k *= 2) {
        plogp_moves_checked(&mv, 1);
        ck_assert_int_eq(mv.need, k);
        for (i = 0; i < k - 1; i++)
            ck_assert_int_eq(plogp_moves_look(&mv, 100, 2000, 1, 0, 0), 0);
        ck_assert_int_eq(plogp_moves_look(&mv, 100, 2000, 1, 0, 0), 1);
    }
    plogp_moves_checked(&mv, 1);
    ck_assert_int_eq(mv.need, PLOGP_MOVED_MAX);
    /* a real change: back to three */
    ck_assert_int_eq(plogp_moves_look(&mv, 100, 2000, 1, 0, 0), 0);
    plogp_moves_checked(&mv, 0);
    ck_assert_int_eq(mv.need, PLOGP_MOVED_CHECKS);
    ck_assert_int_eq(mv.moved, 0);
}
END_TEST

/* Every echo of the smallest sizes disturbed (1 ms more each way): L
   comes from the least bound of the sizes up to 1 KiB, and g of the
   disturbed sizes is repaired down to the first good one's. */
START_TEST(test_job_slow_smallest)
{
    static const size_t sizes[] = {1, 64, 1024, 65536};
    struct sim s = {SIM_LINK, .slow_below = 1024, .slow_us = 1000};
    struct plogp_params p;

    sim_run(&s, sizes, 4, 3, &p);
    /* at 1 KiB: RTT/2 - gap = 20 + 4 + 2.048 - (3 + 1.024) */
    ck_assert_msg(fabs(p.L - 22.0) < 2.5, "L %.2f", p.L);
    ck_assert_msg(p.g[0] <= p.g[2] && p.g[1] <= p.g[2], "g %.1f %.1f %.1f",
                  p.g[0], p.g[1], p.g[2]);
    ck_assert_msg(p.g[2] < 20.0, "g(1 KiB) %.1f", p.g[2]);
}
END_TEST

/* Behind a token bucket (10 Mbit/s, 32 KiB) an isolated message passes
   at the link's own speed and a train at the bucket's rate: after the
   trains the job echoes each size alone, each after a pause that lets
   the bucket fill again, so g(m) is the isolated message's and gap(m)
   the rate's.  The tuner then costs a
   chain bcast by its busiest port (one message per port; a rooted
   operation gets no rest, tune_port_rest) and picks it over the
   binomial tree, whose root sends three. */
START_TEST(test_job_bucket)
{
    static const size_t sizes[] = {1024, 4096, 16384};
    struct sim s = {SIM_LINK, .bucket = 32768, .rate = 1.25, .tokens = 32768};
    struct plogp_params p;
    struct plogp v;
    struct alg_args a = {.op = SCHED_OP_BCAST, .P = 8, .size = 4096};
    struct tune_choice c;
    size_t i;

    sim_run(&s, sizes, 3, 3, &p);
    ck_assert_int_eq(s.pauses, 3 * PLOGP_ALONE_REPS);
    for (i = 0; i < 3; i++) {
        double rate = (double)sizes[i] / s.rate,
               alone = s.L + s.a + s.b * (double)sizes[i];

        ck_assert_msg(fabs(p.gap[i] - rate) < 0.05 * rate, "gap(%zu) %.1f",
                      sizes[i], p.gap[i]);
        ck_assert_msg(p.L + p.g[i] < alone + 5.0, "L %.1f + g(%zu) %.1f", p.L,
                      sizes[i], p.g[i]);
    }
    plogp_view(&p, &v);
    ck_assert(tune_port_rest(&a, &v) == 0.0);
    ck_assert_int_eq(tune_choose(&a, &v, "", &c), 0);
    ck_assert_str_eq(c.alg->name, "chain");
    ck_assert_msg(fabs(c.predicted - p.gap[1]) < 1.0, "chain %.1f",
                  c.predicted);
}
END_TEST

/* Parameters measured on 4 emulated hosts behind tbf at 100 Mbit/s with a
   4 kB bucket (tune-bench 4:100mbit:4kb, 5 December 2026): an isolated
   message of 1 KiB passes in 21 us, a train's take 95 us each. */
static void
params_100mbit(struct plogp_params *p)
{
    static const size_t m[] = {1, 64, 1024, 4096, 16384, 65536, 262144};
    static const double g[] = {11.29,  12.74,  20.74,  146.53,
                               1152.5, 5484.7, 22729.5};
    static const double gap[] = {9.42,   14.98,  94.90,  359.97,
                                 1439.3, 5720.9, 22987.0};
    static const double gl[] = {12.02,  13.56,  22.08,  162.09,
                                1208.9, 5747.5, 23818.4};
    size_t i;

    memset(p, 0, sizeof(*p));
    p->L = 17.21;
    p->Ll = 28.08;
    p->gamma = 0.000021;
    p->n = sizeof(m) / sizeof(m[0]);
    for (i = 0; i < p->n; i++) {
        p->m[i] = m[i];
        p->g[i] = g[i];
        p->gap[i] = gap[i];
        p->gl[i] = gl[i];
        p->rtt[i] = 2.0 * (p->L + g[i]);
    }
}

/* Between two allreduces the measurement's barrier rests the ports, long
   enough for a shaper's bucket to let the next operation's first bytes
   through: a butterfly of 1 KiB over 4 ranks, whose busiest port sends
   two messages of 1 KiB, took 131 us there against Rabenseifner's 209,
   and was predicted at 209 against 185 before the rest counted.  The
   rest is lgP (Ll + g(0) - gap(0)), at most the bucket (the largest
   gap(m) - g(m) of a train at least PLOGP_BUCKET_FACTOR times slower);
   a rooted operation has none, nor has a link without a shaper, where
   the port counts whole, or one where the barrier's messages hold the
   port longer than its rounds take. */
START_TEST(test_tune_port_rest)
{
    struct plogp_params pp;
    struct plogp v;
    struct alg_args a = {.op = SCHED_OP_ALLREDUCE,
                         .P = 4,
                         .size = 1024,
                         .dtype = COLLS_BYTE,
                         .rop = COLLS_SUM};
    struct alg_args b = a;
    const struct alg *bf = alg_find(SCHED_OP_ALLREDUCE, "butterfly", NULL);
    struct tune_choice c;
    double round, bucket = 0.0;
    size_t i, seg;

    params_100mbit(&pp);
    plogp_view(&pp, &v);
    for (i = 0; i < pp.n; i++)
        if (pp.gap[i] >= PLOGP_BUCKET_FACTOR * pp.g[i])
            bucket = fmax(bucket, pp.gap[i] - pp.g[i]);
    round = pp.Ll + topo_plogp_g(&v, 0) - topo_plogp_rate(&v, 0);
    ck_assert(round > 0.0 && 2 * round < bucket);
    ck_assert(fabs(tune_port_rest(&a, &v) - 2 * round) < 1e-9);
    ck_assert_int_eq(tune_choose(&a, &v, "", &c), 0);
    ck_assert_str_eq(c.alg->name, "butterfly");
    ck_assert_msg(
        fabs(c.predicted - (bf->port(&v, 4, 1024, 0) * pp.gl[2] / pp.g[2] -
                            2 * round)) < 1e-6,
        "butterfly %.1f", c.predicted);
    /* a rooted operation: no rest */
    b.op = SCHED_OP_BCAST;
    ck_assert(tune_port_rest(&b, &v) == 0.0);
    /* a bucket smaller than the rest bounds it */
    for (i = 0; i < pp.n; i++)
        pp.gap[i] = pp.g[i];
    pp.gap[1] = 2 * pp.g[1];
    plogp_view(&pp, &v);
    ck_assert(tune_port_rest(&a, &v) > 0.0);
    ck_assert(fabs(tune_port_rest(&a, &v) - pp.g[1]) < 1e-9);
    /* a train slower than an isolated message by less than
       PLOGP_BUCKET_FACTOR is no shaper's: no rest */
    pp.gap[1] = 1.9 * pp.g[1];
    pp.gap[pp.n - 1] = 1.5 * pp.g[pp.n - 1];
    plogp_view(&pp, &v);
    ck_assert(tune_port_rest(&a, &v) == 0.0);
    /* a barrier's message that holds the port longer than a round */
    params_100mbit(&pp);
    pp.gap[0] = pp.Ll + pp.g[0] + 1.0;
    plogp_view(&pp, &v);
    ck_assert(tune_port_rest(&a, &v) == 0.0);
    /* no shaper: no rest, and every port counts whole */
    for (i = 0; i < pp.n; i++)
        pp.gap[i] = pp.g[i];
    plogp_view(&pp, &v);
    ck_assert(tune_port_rest(&a, &v) == 0.0);
    ck_assert(tune_alg_cost(&a, &v, bf, &seg) >= bf->port(&v, 4, 1024, 0));
}
END_TEST

/* A bucket of 128 KiB at 10 Mbit/s holds a train of 64 messages of
   1 B, which then passes at the link's own gap; the largest size's
   trains pass at the rate, and gap(m) of the small sizes is that rate
   per byte on the wire, not the train's (plogp_rate_bound; here gap(1)
   would be 3 us, not 94).  Without the bound a flat bcast of 1 KiB over
   8 emulated hosts looked 35 times cheaper than it was.  L comes from
   the trains' own gaps, the 1 KiB train's (the bucket not full: at the
   rate, 819 us) no bound on it, since its echo passed in 26 us. */
START_TEST(test_job_big_bucket)
{
    static const size_t sizes[] = {1, 1024, 4096, 262144};
    struct sim s = {SIM_LINK, .bucket = 131072, .rate = 1.25, .tokens = 131072};
    struct plogp_params p;
    double per_byte;
    size_t i;

    sim_run(&s, sizes, 4, 3, &p);
    ck_assert_msg(fabs(p.gap[3] - 262144 / s.rate) < 0.05 * 262144 / s.rate,
                  "gap(256 KiB) %.1f", p.gap[3]);
    per_byte = p.gap[3] / plogp_wire_bytes(sizes[3]);
    for (i = 0; i < 3; i++) {
        double want = per_byte * plogp_wire_bytes(sizes[i]);

        ck_assert_msg(p.gap[i] >= 0.95 * want, "gap(%zu) %.1f, the rate's %.1f",
                      sizes[i], p.gap[i], want);
    }
    ck_assert_msg(fabs(p.L - s.L) < 5.0, "L %.1f", p.L);
}
END_TEST

/* The bytes of a task's two hops, per operation: P = 4 ranks, n = 100
   bytes per rank (per block). */
START_TEST(test_task_bytes)
{
    static const struct {
        int op;
        size_t in, out;
    } want[] = {
        {COLLS_COLL_BARRIER, 0, 0},
        {COLLS_COLL_BCAST, 100, 100},
        {COLLS_COLL_REDUCE, 100, 100},
        {COLLS_COLL_ALLREDUCE, 100, 100},
        {COLLS_COLL_GATHER, 100, 400},
        {COLLS_COLL_GATHERV, 100, 400},
        {COLLS_COLL_SCATTER, 400, 100},
        {COLLS_COLL_SCATTERV, 400, 100},
        {COLLS_COLL_ALLGATHER, 100, 400},
        {COLLS_COLL_ALLGATHERV, 100, 400},
        {COLLS_COLL_ALLTOALL, 400, 400},
        {COLLS_COLL_ALLTOALLV, 400, 400},
        {COLLS_COLL_REDUCE_SCATTER, 400, 100},
        {COLLS_COLL_SCAN, 100, 100},
        {COLLS_COLL_EXSCAN, 100, 100},
        {-1, 100, 100},
    };
    size_t i, in, out;

    for (i = 0; i < sizeof want / sizeof want[0]; i++) {
        collop_task_bytes(want[i].op, 4, 100, &in, &out);
        ck_assert_msg(in == want[i].in && out == want[i].out,
                      "%s: in %zu out %zu", collop_name(want[i].op), in, out);
    }
}
END_TEST

/* The deadlines: 2 s plus 10 us per byte each way, per echo and train. */
START_TEST(test_deadlines)
{
    const size_t sizes[] = {1024, 1 << 20};

    ck_assert_uint_eq(plogp_deadline_us(1000, 2000), 2000000u + 20000u);
    /* 1 KiB: echo 1024 (PLOGP_ECHO_MANY times), train 64 x 1024; 1 MiB:
       echo, train 8 x 1 MiB (PLOGP_TRAIN_MIN), 3 repetitions each, and
       PLOGP_LOSSY_REPEATS trains more of each size; and PLOGP_ALONE_REPS
       echoes of each alone, after a pause of at most PLOGP_PAUSE_MAX_US
       each */
    ck_assert_uint_eq(
        plogp_ladder_us(sizes, 2, 3, 2000),
        PLOGP_ALONE_REPS * (2u * PLOGP_PAUSE_MAX_US + 2u * 2000000u +
                            20u * (1024u + (1u << 20))) +
            PLOGP_ECHO_MANY * (2000000u + 20u * 1024u) +
            (3u + PLOGP_LOSSY_REPEATS) * (2000000u + 20u * 64u * 1024u) +
            3u * (2000000u + 20u * (1u << 20)) +
            (3u + PLOGP_LOSSY_REPEATS) * (2000000u + 20u * 8u * (1u << 20)));
}
END_TEST

START_TEST(test_summary)
{
    struct plogp_params rows[3], out;

    params_fill(&rows[0], 1.0);
    params_fill(&rows[1], 3.0);
    params_fill(&rows[2], 2.0);
    ck_assert_int_eq(plogp_summarise(rows, 3, &out), 0);
    ck_assert(fabs(out.L - rows[2].L) < 1e-9);
    ck_assert(fabs(out.g[4] - rows[2].g[4]) < 1e-9);
    ck_assert(fabs(out.gap[1] - rows[2].gap[1]) < 1e-9);
    ck_assert(fabs(out.o_s[3] - rows[2].o_s[3]) < 1e-9);
    ck_assert(fabs(out.o_r[0] - rows[2].o_r[0]) < 1e-9);
    ck_assert_int_eq(plogp_summarise(rows, 0, &out), COLLS_EINVAL);
    rows[1].m[2]++; /* not the same ladder */
    ck_assert_int_eq(plogp_summarise(rows, 3, &out), COLLS_EINVAL);
}
END_TEST

/* A size that costs more than a larger one is repaired: interpolated
   between its neighbours, or its larger neighbour's value at the start
   of the ladder or after another such point. */
START_TEST(test_monotone)
{
    struct plogp_params p, q;
    double want;
    size_t i;

    params_fill(&p, 1.0);
    q = p;
    plogp_monotone(&q); /* increasing already: unchanged */
    for (i = 0; i < p.n; i++)
        ck_assert(q.g[i] == p.g[i] && q.gl[i] == p.gl[i]);
    q.g[2] = 100.0 * p.g[4]; /* the middle one disturbed */
    q.gl[0] = 2.0 * p.gl[1]; /* the first one disturbed */
    plogp_monotone(&q);
    want = p.g[1] + (p.g[3] - p.g[1]) * (double)(p.m[2] - p.m[1]) /
                        (double)(p.m[3] - p.m[1]);
    ck_assert_msg(fabs(q.g[2] - want) < 1e-9, "g %.3f, want %.3f", q.g[2],
                  want);
    ck_assert(q.gl[0] == p.gl[1]);
    for (i = 1; i < p.n; i++)
        ck_assert(q.g[i] >= q.g[i - 1] && q.gl[i] >= q.gl[i - 1]);
    /* two in a row: the lower one takes its larger neighbour's value */
    q = p;
    q.g[2] = q.g[3] = 10.0 * p.g[4];
    plogp_monotone(&q);
    ck_assert(q.g[2] <= q.g[3] && q.g[3] <= q.g[4] && q.g[1] <= q.g[2]);
    /* gl below g at a point (each curve increasing) is raised to g */
    q = p;
    q.gl[2] = 0.5 * q.g[2];
    q.gl[1] = q.gl[0] < q.gl[2] ? q.gl[0] : q.gl[2];
    plogp_monotone(&q);
    for (i = 0; i < p.n; i++)
        ck_assert_msg(q.gl[i] >= q.g[i], "gl(%zu) %.2f < g %.2f", p.m[i],
                      q.gl[i], q.g[i]);
    /* the summary passes through it */
    {
        struct plogp_params rows[3], out;

        for (i = 0; i < 3; i++) {
            params_fill(&rows[i], 1.0);
            rows[i].g[2] = 100.0 * rows[i].g[4];
        }
        ck_assert_int_eq(plogp_summarise(rows, 3, &out), 0);
        ck_assert(out.g[2] <= out.g[3]);
    }
}
END_TEST

/* A round under load's ratios: each at least the median of the larger
   sizes' originals; one above them kept; the largest as measured. */
START_TEST(test_load_ratios)
{
    /* the 4-host tune of 2 December 2026: 1 KiB .. 4 MiB */
    double r[7] = {1.0, 1.0, 1.0, 1.73, 1.13, 1.79, 2.27};
    const double want[7] = {
        (1.13 + 1.73) / 2.0, 1.73, 1.76, 1.79, 2.03, 2.27, 2.27};
    double one[1] = {1.5}, kept[4] = {3.0, 1.2, 1.0, 1.1};
    double orig[5] = {1.0, 1.0, 1.0, 2.0, 2.0};
    size_t i;

    plogp_load_ratios(r, 7);
    for (i = 0; i < 7; i++)
        ck_assert_msg(fabs(r[i] - want[i]) < 1e-9, "ratio %zu: %.4f, want %.4f",
                      i, r[i], want[i]);
    plogp_load_ratios(one, 1);
    ck_assert(one[0] == 1.5);
    /* contention seen at a small size is not smoothed away */
    plogp_load_ratios(kept, 4);
    ck_assert(kept[0] == 3.0);
    ck_assert_msg(fabs(kept[1] - 1.2) < 1e-9, "%.4f", kept[1]);
    ck_assert_msg(fabs(kept[2] - 1.1) < 1e-9, "%.4f", kept[2]);
    ck_assert(kept[3] == 1.1);
    /* the medians are of the measured ratios, not of raised ones (which
       would give 2 everywhere) */
    plogp_load_ratios(orig, 5);
    ck_assert_msg(fabs(orig[0] - 1.5) < 1e-9, "%.4f", orig[0]);
    for (i = 1; i < 5; i++)
        ck_assert(orig[i] == 2.0);
    plogp_load_ratios(NULL, 0); /* nothing to do */
}
END_TEST

START_TEST(test_file_round_trip)
{
    struct plogp_params p, q;
    char buf[2048];
    int len, bad;
    size_t i;

    params_fill(&p, 1.0);
    len = plogp_format(&p, buf, sizeof(buf));
    ck_assert_int_gt(len, 0);
    ck_assert_int_eq(plogp_parse(buf, (size_t)len, &q, &bad), 0);
    ck_assert_uint_eq(q.epoch, p.epoch);
    ck_assert(q.L == p.L && q.Ll == p.Ll && q.gamma == p.gamma &&
              q.hop_us == p.hop_us && q.hop_byte_us == p.hop_byte_us);
    ck_assert_uint_eq(q.n, p.n);
    for (i = 0; i < p.n; i++)
        ck_assert(q.m[i] == p.m[i] && q.g[i] == p.g[i] &&
                  q.gap[i] == p.gap[i] && q.rtt[i] == p.rtt[i] &&
                  q.gl[i] == p.gl[i] && q.o_s[i] == p.o_s[i] &&
                  q.o_r[i] == p.o_r[i]);
    ck_assert_int_eq(plogp_format(&p, buf, 40), COLLS_ENOBUFS);
}
END_TEST

/* Parses text; returns the bad line (0: accepted). */
static int
parse_bad(const char *text)
{
    struct plogp_params q;
    int bad = -1, rc = plogp_parse(text, strlen(text), &q, &bad);

    ck_assert_int_eq(rc == 0, bad == 0);
    return rc == 0 ? 0 : bad;
}

START_TEST(test_file_refused)
{
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL 3\ngamma 0\nhop 1 0\n"
                               "g 1 2 1 40 2\ng 64 3 2 44 3\nend\n"),
                     0);
    /* wrong magic or version */
    ck_assert_int_eq(parse_bad("collsd-plogp 2\nL 3\ng 1 2 1 40 2\nend\n"), 1);
    ck_assert_int_eq(parse_bad(""), 1);
    /* no end: a file cut short */
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL 3\ng 1 2 1 40 2\n"), 3);
    /* not finite, negative, too large */
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL nan\ng 1 2 1 40 2\nend\n"),
                     4);
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL -1\ng 1 2 1 40 2\nend\n"), 4);
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL 1e13\ng 1 2 1 40 2\nend\n"),
                     4);
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL 1\ng 1 inf 1 40 2\nend\n"),
                     4);
    /* sizes not increasing, negative, beyond the largest */
    ck_assert_int_eq(
        parse_bad("collsd-plogp 1\nL 1\ng 64 2 1 40 2\ng 1 2 1 40 2\nend\n"),
        5);
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL 1\ng -5 2 1 40 2\nend\n"), 3);
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL 1\ng 99999999999 2 1 40 2\n"
                               "end\n"),
                     4);
    /* a point with the overheads; one with a single overhead, or an
       overhead and trailing words; a negative overhead */
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL 1\ng 1 2 1 40 2 0.5 0.25\n"
                               "end\n"),
                     0);
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL 1\ng 1 2 1 40 2 0.5\nend\n"),
                     3);
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL 1\ng 1 2 1 40 2 x\nend\n"),
                     3);
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL 1\ng 1 2 1 40 2 1 1 1\n"
                               "end\n"),
                     3);
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL 1\ng 1 2 1 40 2 -1 1\n"
                               "end\n"),
                     4);
    /* the old four-number point (no gl) */
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL 1\ng 1 2 1 40\nend\n"), 3);
    /* no points; an unknown line; trailing words */
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL 1\nend\n"), 3);
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL 1\nbogus 3\nend\n"), 3);
    ck_assert_int_eq(parse_bad("collsd-plogp 1\nL 1 2\ng 1 2 1 40 2\nend\n"),
                     2);
    /* an embedded NUL */
    {
        static const char nul[] = "collsd-plogp 1\nL 1\0\ng 1 2 1 40 2\nend\n";
        struct plogp_params q;
        int bad;

        ck_assert_int_eq(plogp_parse(nul, sizeof(nul) - 1, &q, &bad),
                         COLLS_EINVAL);
        ck_assert_int_eq(bad, 2);
    }
}
END_TEST

/* The segmented chains' middle ranks receive and send every segment: past
   the first, each costs the relay's o_r + o_s where that is more than
   gap; a chain of 2 has no relay, and without overheads gap stays. */
START_TEST(test_relay)
{
    struct plogp_params pp;
    struct plogp v, noo;
    const struct alg *bc = alg_find(SCHED_OP_BCAST, "chain_seg", NULL);
    const struct alg *rc = alg_find(SCHED_OP_REDUCE, "chain_seg", NULL);
    size_t n = (size_t)1 << 20, s = 65536;
    /* params_fill at 64 KiB: gap 2 + 65.536, g 1.5 gap, o_s 0.5 gap,
       o_r 0.75 gap */
    double gap = 2.0 + 65.536, g = 1.5 * gap, o = 1.25 * gap;

    ck_assert(bc != NULL && rc != NULL);
    params_fill(&pp, 1.0);
    plogp_view(&pp, &v);
    noo = v;
    noo.o_s = noo.o_r = NULL;
    ck_assert(fabs(topo_plogp_relay(&v, 3, s) - o) < 1e-9);
    ck_assert(fabs(topo_plogp_relay(&v, 2, s) - gap) < 1e-9);
    ck_assert(fabs(topo_plogp_relay(&noo, 3, s) - gap) < 1e-9);
    ck_assert(fabs(bc->cost(&v, 4, n, s) - (3 * (17.25 + g) + 15 * o)) < 1e-6);
    ck_assert(fabs(bc->cost(&noo, 4, n, s) - (3 * (17.25 + g) + 15 * gap)) <
              1e-6);
    ck_assert(fabs(bc->cost(&v, 2, n, s) - (17.25 + g + 15 * gap)) < 1e-6);
    ck_assert(fabs(rc->cost(&v, 4, n, s) - rc->cost(&noo, 4, n, s) -
                   15 * (o - gap)) < 1e-6);
    ck_assert(fabs(rc->cost(&v, 2, n, s) - rc->cost(&noo, 2, n, s)) < 1e-9);
    /* overheads below the gap change nothing */
    pp.o_s[4] = pp.o_r[4] = 0.25 * gap;
    plogp_view(&pp, &v);
    ck_assert(fabs(bc->cost(&v, 4, n, s) - bc->cost(&noo, 4, n, s)) < 1e-9);
}
END_TEST

/* With parameters, the tuner picks by cost, and the hops are added. */
START_TEST(test_tune_by_params)
{
    struct plogp_params pp;
    struct plogp v;
    struct alg_args a = {.op = SCHED_OP_BCAST,
                         .P = 8,
                         .size = 4,
                         .dtype = COLLS_BYTE,
                         .rop = COLLS_SUM};
    struct tune_choice c;

    params_fill(&pp, 1.0);
    plogp_view(&pp, &v);
    ck_assert_int_eq(tune_choose(&a, &v, "", &c), 0);
    ck_assert_int_eq(c.source, TUNE_COST);
    /* by hand: every row's latency is Ll = 30.5; an isolated message
       arrives Ll + g(4) after it is sent, each further one gap(4) later:
       flat costs 30.5 + g(4) + 6 gap(4) = ~45.5 us, binomial max(3 (30.5
       + g(4)), 30.5 + g(4) + 2 gap(4)) = ~100.5, the chains 7 (30.5 +
       g(4)); g(4) lies between g(1) = 3.0015 and g(16) = 3.024, gap(4)
       between 2.001 and 2.016 */
    ck_assert_str_eq(c.alg->name, "flat");
    ck_assert(c.predicted >= 30.5 + 3.0015 + 6 * 2.001 - 1e-9);
    ck_assert(c.predicted <= 30.5 + 3.024 + 6 * 2.016 + 1e-9);
    {
        /* a tree's pairs below its first level transfer at once: its
           widest level has 4 of the 8 ranks sending, so its steps cost
           Ll + g(4) + 3/7 (gl(4) - g(4)), here (1 + 3/7) g(4) */
        const struct alg *bin = alg_find(SCHED_OP_BCAST, "binomial", NULL);
        size_t seg;
        double t = tune_alg_cost(&a, &v, bin, &seg);

        ck_assert(bin->flags & ALG_OVERLAP);
        ck_assert_int_eq(bin->senders(8), 4);
        ck_assert(t >= 3 * (30.5 + 10.0 / 7 * 3.0015) - 1e-9);
        ck_assert(t <= 3 * (30.5 + 10.0 / 7 * 3.024) + 1e-9);
    }
    {
        /* every row costed under load says how many ranks send at once;
           a segmented chain, once filled, all but the last */
        static const int ops[] = {SCHED_OP_BARRIER,  SCHED_OP_BCAST,
                                  SCHED_OP_REDUCE,   SCHED_OP_ALLREDUCE,
                                  SCHED_OP_GATHER,   SCHED_OP_SCATTER,
                                  SCHED_OP_ALLGATHER};
        size_t i, j, cnt, seen = 0;

        for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
            const struct alg *t = alg_table(ops[i], &cnt);

            for (j = 0; j < cnt; j++)
                if (t[j].flags & ALG_OVERLAP) {
                    ck_assert_msg(t[j].senders != NULL, "%s", t[j].name);
                    ck_assert(t[j].senders(8) >= 1 && t[j].senders(8) < 8);
                    seen++;
                }
        }
        ck_assert_uint_ge(seen, 8);
        ck_assert_int_eq(
            alg_find(SCHED_OP_BCAST, "chain_seg", NULL)->senders(8), 7);
    }
    {
        /* the binary tree's critical path, with g and gap alone: at P = 4
           rank 3, a first child of rank 1, is last at 2 (L + g(n)); at
           P = 7 rank 6, a second child of a second child, at 2 (L + g(n)
           + gap(n)); at P = 3 rank 2 at L + g(n) + gap(n) */
        const struct alg *bin = alg_find(SCHED_OP_BCAST, "binary", NULL);
        double hop = v.L + topo_plogp_g(&v, 4096),
               gap = topo_plogp_gap(&v, 4096);

        ck_assert(fabs(bin->cost(&v, 4, 4096, 0) - 2 * hop) < 1e-9);
        ck_assert(fabs(bin->cost(&v, 3, 4096, 0) - (hop + gap)) < 1e-9);
        ck_assert(fabs(bin->cost(&v, 7, 4096, 0) - 2 * (hop + gap)) < 1e-9);
        /* P = 8: rank 7 (3 first children) against rank 6 */
        ck_assert(fabs(bin->cost(&v, 8, 4096, 0) -
                       fmax(3 * hop, 2 * (hop + gap))) < 1e-9);
        ck_assert(bin->cost(&v, 1, 4096, 0) == 0.0);
    }
    ck_assert(fabs(plogp_with_hops(&pp, 4, 4, c.predicted) -
                   (c.predicted + 2.0 * (9.5 + 0.001))) < 1e-9);
    /* a scatter's root hands its daemon P blocks: in 16, out 4 */
    ck_assert(fabs(plogp_with_hops(&pp, 16, 4, c.predicted) -
                   (c.predicted + 2.0 * 9.5 + 0.00025 * 20)) < 1e-9);
    /* rows where every rank sends at once are costed with gl (here 2 g),
       and so are the trees and pipelines from 4 ranks on (ALG_OVERLAP:
       pairs transfer at once below the first level); the chain and flat
       rows with g and gap; every row with Ll */
    {
        struct alg_args r = {.op = SCHED_OP_ALLREDUCE,
                             .P = 4,
                             .size = 65536,
                             .dtype = COLLS_DOUBLE,
                             .rop = COLLS_SUM};
        const struct alg *ring = alg_find(SCHED_OP_ALLREDUCE, "ring", NULL);
        const struct alg *tour =
            alg_find(SCHED_OP_ALLREDUCE, "tournament", NULL);
        struct plogp alone = v, nogl = v;
        size_t seg;
        double loaded, single;

        ck_assert(ring != NULL && tour != NULL);
        ck_assert(ring->flags & ALG_ALLPAIRS);
        ck_assert(!(tour->flags & ALG_ALLPAIRS));
        ck_assert(tour->flags & ALG_OVERLAP);
        alone.gl = NULL;
        alone.Ll = 0.0;
        loaded = tune_alg_cost(&r, &v, ring, &seg);
        single = tune_alg_cost(&r, &alone, ring, &seg);
        ck_assert_msg(loaded > single * 1.2, "ring %.1f loaded, %.1f alone",
                      loaded, single);
        nogl.gl = NULL;
        loaded = tune_alg_cost(&r, &v, tour, &seg);
        single = tune_alg_cost(&r, &nogl, tour, &seg);
        ck_assert_msg(loaded > single * 1.2,
                      "tournament %.1f loaded, %.1f alone", loaded, single);
        /* below 4 ranks a tree's transfers go one at a time: g */
        r.P = ALG_OVERLAP_MIN_P - 1;
        ck_assert(fabs(tune_alg_cost(&r, &v, tour, &seg) -
                       tune_alg_cost(&r, &nogl, tour, &seg)) < 1e-9);
        ck_assert(tune_alg_cost(&r, &v, ring, &seg) >
                  tune_alg_cost(&r, &nogl, ring, &seg) * 1.2);
        /* a step costs Ll + g(m): a chain of 4 B, 7 (30.5 + g(4)) instead
           of 7 (17.25 + g(4)) without Ll */
        r.op = SCHED_OP_BCAST;
        r.P = 8;
        r.size = 4;
        ck_assert(tune_alg_cost(&r, &v, alg_find(SCHED_OP_BCAST, "chain", NULL),
                                &seg) >= 7 * (30.5 + 3.0015) - 1e-9);
        ck_assert(tune_alg_cost(&r, &alone,
                                alg_find(SCHED_OP_BCAST, "chain", NULL),
                                &seg) <= 7 * (17.25 + 3.024) + 1e-9);
    }
}
END_TEST

Suite *
suite_plogp(void)
{
    Suite *s = suite_create("plogp");
    TCase *tc = tcase_create("plogp");

    tcase_add_test(tc, test_job_recovers_link);
    tcase_add_test(tc, test_job_bucket);
    tcase_add_test(tc, test_job_big_bucket);
    tcase_add_test(tc, test_job_repaired_trains);
    tcase_add_test(tc, test_task_bytes);
    tcase_add_test(tc, test_job_init_refuses);
    tcase_add_test(tc, test_rx);
    tcase_add_test(tc, test_agrees);
    tcase_add_test(tc, test_moves);
    tcase_add_test(tc, test_rate_moves);
    tcase_add_test(tc, test_deadlines);
    tcase_add_test(tc, test_summary);
    tcase_add_test(tc, test_monotone);
    tcase_add_test(tc, test_load_ratios);
    tcase_add_test(tc, test_job_slow_smallest);
    tcase_add_test(tc, test_file_round_trip);
    tcase_add_test(tc, test_file_refused);
    tcase_add_test(tc, test_tune_by_params);
    tcase_add_test(tc, test_tune_port_rest);
    tcase_add_test(tc, test_relay);
    suite_add_tcase(s, tc);
    return s;
}
