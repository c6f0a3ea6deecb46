/*
 * plogp.h -- measuring the pLogP parameters between daemons.
 *
 * A core without I/O or clocks, in the manner of rel.h: the daemon
 * (daemon/measure.c) gives it the time and two ways to send probes, and
 * feeds it the answers; it says what to send next and, at the end, what
 * it measured.  docs/collectives.md "Measuring the network" gives the
 * method and the file format; tests/unit/test-plogp.c runs it against a
 * simulated link whose L and g(m) are known.
 *
 * The parameters (Kielmann et al. 2000, as in daemon/alg/alg.h):
 *   L      end-to-end latency, us;
 *   g(m)   the time a message of m bytes costs on its own, beyond L: the
 *          one-way time of an isolated message is L + g(m), which is what
 *          every step of the algorithm rows' formulas charges (below
 *          gap(m) behind a shaper's bucket, which lets an isolated
 *          message through at once; the rows' busiest ports, alg.h,
 *          then bound what follows);
 *   gap(m) the gap of back-to-back messages of m bytes (saturation: the
 *          interval between arrivals of a train), kept for people: it is
 *          what a stream sustains, and g(m) - gap(m) is the part of an
 *          isolated message that a pipeline overlaps;
 *   Ll     L while every daemon echoes its next at once: half the median
 *          round trip of those echoes less g(m0), at least L;
 *   gl(m)  g(m) while every daemon sends at once: g(m) times the ratio of
 *          the gap of trains sent by all the daemons together (each to
 *          the next, in a ring) to the gap of a pair's alone, at least 1.
 *          Rings, butterflies and pairwise exchanges (ALG_ALLPAIRS), and
 *          trees and pipelines from 4 ranks on (ALG_OVERLAP), are costed
 *          with it: their daemons share whatever the hosts share, CPUs
 *          (emulated hosts), a switch's backplane or an uplink;
 *   o_s(m), o_r(m)  the send and receive overheads: the CPU time the
 *          sending and the receiving daemon spend per message of m bytes
 *          in a train (the transport's system calls, fragments, acks and
 *          copies; not the time spent polling, --poll-us), which a
 *          daemon that relays each segment of a pipeline pays both of;
 *   gamma  the local reduction, us per byte;
 *   hop    a task's hop to its daemon, hop_us + hop_byte_us * m each
 *          way, which a collective through the daemons pays twice.
 * Per size m: echoes of m bytes give the round trip RTT(m); trains of k
 * messages of m bytes give gap(m) at the receiver, from the arrivals of
 * the second half of the train (the first half pays the start of a
 * burst, which a stream in its steady state does not), so no clock is
 * shared.  Then
 *   L = min over the sizes m <= PLOGP_L_MAX of RTT(m) / 2 - gap(m)
 *       (each is at least L; one below 0, an echo that passed a shaper's
 *       bucket faster than its train, is none), and
 *   g(m) = RTT(m) / 2 - L, at least 0.
 * RTT(m) is the least of the repetitions (anything else the daemons or
 * their CPUs do only lengthens a round trip), gap(m) their median.
 * The echoes alone (PLOGP_ALONE_REPS, below) count among them: each
 * meets a shaper's bucket full again.  A train short enough to fit a
 * shaper's bucket passes at the wire's speed, which no stream sustains:
 * gap(m) is at least the largest size's gap scaled to m's bytes on the
 * wire (plogp_wire_bytes) where that is more than PLOGP_BUCKET_FACTOR
 * times the train's figure, if the largest size is PLOGP_RATE_MIN or
 * more (its trains, of PLOGP_TRAIN_BYTES at least, outlast a bucket).
 */
#ifndef COLLS_DAEMON_PLOGP_H
#define COLLS_DAEMON_PLOGP_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/alg/alg.h"

#define PLOGP_MAX_SIZES   16                 /* points of a ladder */
#define PLOGP_MAX_REPS    16                 /* repetitions per size */
#define PLOGP_MAX_BYTES   ((size_t)16 << 20) /* largest size measured */
#define PLOGP_TRAIN_MIN   8                  /* messages per train, at least */
#define PLOGP_TRAIN_MAX   64
#define PLOGP_TRAIN_BYTES ((size_t)2 << 20) /* a train's bytes, about */
#define PLOGP_VALUE_MAX   1e12              /* larger values are refused */

/* Echoes of at most PLOGP_ECHO_MANY_MAX bytes are repeated at least
   PLOGP_ECHO_MANY times, whatever the measurement's repetitions: such an
   echo costs a round trip, and RTT(m) is the least of them, which on a
   noisy machine more of them find (on 2 shared vCPUs, L of 3 echoes
   ranged 12-20 us from one tune to the next). */
#define PLOGP_ECHO_MANY     12
#define PLOGP_ECHO_MANY_MAX ((size_t)64 << 10)

/* L is the least of RTT(m) / 2 - gap(m) over the sizes up to this: on
   4 emulated hosts at 100 Mbit/s, each pinned to one of 2 vCPUs, every
   one of the 12 echoes of 1 and 64 B to two of three peers took 1.1-1.2
   ms, and those of 1 KiB 103 us; L from the smallest size alone was 614
   us and every small prediction 6-40 times too slow.  Not beyond 1 KiB:
   an isolated echo of 4 KiB passes a shaper's bucket at the wire's
   speed, faster than a train's gap says. */
#define PLOGP_L_MAX ((size_t)1024)

/* Echoes alone: after the trains, PLOGP_ALONE_REPS echoes of each size,
   each after a pause as long as the longest train took, at most
   PLOGP_PAUSE_MAX_US.  A train empties a shaper's bucket, and an echo
   sent into an empty one measures the bucket's rate, not an isolated
   message: behind tbf at 10 Mbit/s with a 4 KB bucket a message of 1 KiB
   passes at the veth's speed when the bucket is full (a chain bcast of
   1 KiB over 8 hosts took 1.0 ms where 7 x gap(1 KiB) is 6.6 ms).  Last,
   not before each size's trains: the transport's rate estimate takes the
   fastest delivery it sees, and after fast echoes it paced the next
   train faster than the bucket drains (gap(1 KiB) 1.63 ms, not 0.95). */
#define PLOGP_ALONE_REPS   2
#define PLOGP_PAUSE_MAX_US 200000u

/* The rate bound on gap(m), above.  Behind tbf at 10 Mbit/s with a
   128 KB bucket a train of 64 messages of 1 KiB took 1.19 us per
   message, and of 4 KiB 3,599 us, the rate's 3,589: a flat bcast of
   1 KiB over 8 hosts was predicted at 191 us and took 6,611, seven
   messages at the rate.  Unshaped, the largest size's rate bounds the
   small ones' gaps by far less than the factor (a message costs its
   system calls, not its bytes). */
#define PLOGP_BUCKET_FACTOR 2.0
#define PLOGP_RATE_MIN      ((size_t)256 << 10)
/* Bytes on the wire of a message of m bytes at the default --mtu with
   authentication on (plogp.c). */
double plogp_wire_bytes(size_t m);

/* A train during which the transport retransmitted to the peer measured
   its loss recovery, not the link's gap: it is sent again, at most
   PLOGP_LOSSY_REPEATS times per size (a lossy link's trains then count as
   they are).  On 4 emulated hosts at 100 Mbit/s behind tbf with a 4 kb
   bucket, the first tune after the daemons started measured gap(4 KiB)
   at 1,297 us (the wire's is about 340): the transport's first trains of
   more than a bucket were sent faster than the shaper drains, and 631-916
   datagrams per peer were retransmitted; the next tune measured 360.
   tune-bench's measurement is such a first one, and its butterfly and
   Bruck allgathers of 1 KiB were predicted at 2.9-3.0 times what they
   took. */
#define PLOGP_LOSSY_REPEATS 2

/* Repetitions per size of a measurement that asks for none. */
#define PLOGP_THOROUGH_REPS 3
/* A probe's deadline allows this many us per byte each way (100 KB/s)
   beyond the daemon's --request-timeout: at 10 Mbit/s behind tbf with a
   20 ms queue, 1 us per byte was too short for the thorough ladder's
   1 MiB echoes and 2 MiB trains. */
#define PLOGP_US_PER_BYTE 10u

/* The thorough ladder (collsctl tune), bytes. */
extern const size_t plogp_thorough[];
extern const size_t plogp_thorough_n;

/* A set of parameters: of one peer, or the machine's summary. */
struct plogp_params {
    uint64_t epoch; /* the machine's: which summary (0: none yet) */
    double L, gamma, hop_us, hop_byte_us;
    double Ll;                   /* L while every daemon echoes at once */
    size_t n;                    /* points */
    size_t m[PLOGP_MAX_SIZES];   /* bytes, increasing */
    double g[PLOGP_MAX_SIZES];   /* us: isolated message beyond L */
    double gap[PLOGP_MAX_SIZES]; /* us: saturation gap */
    double rtt[PLOGP_MAX_SIZES]; /* us: echo round trip */
    double gl[PLOGP_MAX_SIZES];  /* us: g while every daemon sends */
    double o_s[PLOGP_MAX_SIZES]; /* us: sender's CPU per message */
    double o_r[PLOGP_MAX_SIZES]; /* us: receiver's CPU per message */
};

/*
 * Repairs g, gl, o_s and o_r where a size costs more than a larger one, which
 * no link does: a disturbed measurement (on 2 shared vCPUs, the least of 3
 * echoes of 256 KiB once took 8.5 ms against 3 ms for 1 MiB, and every
 * prediction between 64 KiB and 1 MiB went wrong by up to 10x).  From
 * the largest size down, such a point becomes the linear interpolation
 * of its neighbours, or its larger neighbour's value when the smaller
 * one is above that too.  Then gl is raised to g wherever it is below.
 * Each peer's row (plogp_job_result), the summary (plogp_summarise) and
 * the loaded curve (measure.c) pass through it.
 */
void plogp_monotone(struct plogp_params *pp);

/* The view the cost formulas take (daemon/alg/alg.h); valid while pp is. */
void plogp_view(const struct plogp_params *pp, struct plogp *out);

/* 0 when pp is usable: 1 <= n <= PLOGP_MAX_SIZES, sizes increasing and
   at most PLOGP_MAX_BYTES, every value finite and in [0,
   PLOGP_VALUE_MAX].  Else COLLS_EINVAL. */
int plogp_check(const struct plogp_params *pp);

/* 1 when row agrees with old: every size of row is in old, and at each
   g (plus the RTT at the smallest) and gap are within factor of old's,
   or differ by less than floor_us; 0 otherwise (a size old lacks
   disagrees).  The gap counts since a link's rate can change while an
   isolated message's time does not: behind tbf at 10 Mbit/s with a
   128 KB bucket an echo of 4 KiB passes the full bucket as fast as on
   the unshaped link, and a check by g alone agreed with the unshaped
   row (tests/netns/tune-moves.sh). */
int plogp_agrees(const struct plogp_params *old, const struct plogp_params *row,
                 double factor, double floor_us);

/*
 * The move detector of one peer (measure.c keeps one per peer and feeds
 * it every PLOGP_MOVED_EVERY_US).  A look compares the transport's least
 * round trip now with the one taken when the peer was measured (base): a
 * move is one at least twice or at most half of base, and at least
 * PLOGP_MOVED_FLOOR_US away from it, on a quiet link (a busy link's
 * queues lengthen every round trip, which is no change of the network).
 * A look also finds a move when the delivery rate moved
 * (plogp_rate_moved, which the caller asks), busy link or not.  `need`
 * looks in a row that find a move make the peer due for a check, which
 * starts at the first quiet look (a stream's queue would delay its
 * probes past their deadlines: at 10 Mbit/s behind a bulk transfer, the
 * check's echo of 1 byte timed out at 2 s); a look that finds none
 * before that starts the count again.  The check's verdict
 * (plogp_moves_checked): a row that still agrees was a busy link's false
 * alarm, and the next move must last twice as long (need doubles, at
 * most PLOGP_MOVED_MAX); a row that disagrees sets need back to
 * PLOGP_MOVED_CHECKS, as does a new detector.
 */
#define PLOGP_MOVED_EVERY_US 10000000u
/* A move smaller than this is no move: on a quiet link the transport's
   only RTT samples are heartbeats' delayed acks (--ack-delay, 200 us),
   which made every quiet link look "moved" from a LAN's 50 us. */
#define PLOGP_MOVED_FLOOR_US 1000u
#define PLOGP_MOVED_CHECKS   3  /* in a row, 10 s apart, at first */
#define PLOGP_MOVED_MAX      96 /* after false alarms: 16 min */

struct plogp_moves {
    int moved; /* looks in a row that found a move */
    int need;  /* such looks that make the peer due */
    int due;   /* a check waits for a quiet look */
};

void plogp_moves_init(struct plogp_moves *mv);
/* One look: base_us and now_us are least round trips (0: none known,
   no move), quiet whether the link was quiet since the last look,
   rate_moved whether the delivery rate moved (plogp_rate_moved), held
   whether a check cannot start now (one is already queued: the peer
   stays due, and a later look may start it).  1 when the check should
   start now (the count starts again), else 0. */
int plogp_moves_look(struct plogp_moves *mv, uint64_t base_us, uint64_t now_us,
                     int quiet, int rate_moved, int held);

/*
 * The delivery rate's part of a look.  row_Bps is what the peer's row
 * says a stream carries (plogp_row_rate), bw_Bps the transport's
 * delivery-rate estimate now (the largest rate of its recent windows, of
 * samples that the sender's own pauses did not limit; 0: none), sent the
 * bytes sent to the peer since the last look and sent_all those sent to
 * every peer.  Only after bulk sent to the peer, at least
 * PLOGP_RATE_BULK bytes or PLOGP_RATE_BULK_US of bytes at the rate bw
 * (the estimate is fresh, and comes from streams long enough to fill the
 * path; a link of 10 Mbit/s carries 12.5 MB in a look's 10 s), a move is bw at
 * least PLOGP_RATE_MOVE times row (the path carries more than the row says: a
 * link made faster, a shaper removed) or, when the peer had nearly all the
 * bytes this host sent (PLOGP_RATE_ALONE of them: no flow of ours shared the
 * link), at most row / PLOGP_RATE_MOVE (the path carries less: a slower link,
 * or flows of other hosts crossing it, which the check tells apart).  1 when a
 * move, else 0.
 */
#define PLOGP_RATE_MOVE    2.0
#define PLOGP_RATE_BULK    ((uint64_t)16 << 20)
#define PLOGP_RATE_BULK_US 1000000.0
#define PLOGP_RATE_ALONE   0.875
int plogp_rate_moved(double row_Bps, double bw_Bps, uint64_t sent,
                     uint64_t sent_all);
/* A stream's rate by pp, bytes per second: its largest size over that
   size's gap (0: none, a row without a gap there). */
double plogp_row_rate(const struct plogp_params *pp);
/* The check's verdict: agrees 1 when the row still holds.  The count of
   looks starts again either way. */
void plogp_moves_checked(struct plogp_moves *mv, int agrees);

/* Predicted time, us, of a collective through the daemons: a task's hop
   of in bytes to its daemon, the inter-daemon algorithm's cost alg_us,
   and a hop of out bytes back (collop_task_bytes). */
double plogp_with_hops(const struct plogp_params *pp, size_t in, size_t out,
                       double alg_us);

/* ---- measuring one peer ---- */

/* Per size echoes, then trains; after the last size, PLOGP_ALONE_REPS
   echoes of each size alone (below); then done. */
enum plogp_phase { PLOGP_ECHO, PLOGP_TRAIN, PLOGP_ALONE, PLOGP_DONE };

struct plogp_job {
    int hid;
    size_t sizes[PLOGP_MAX_SIZES];
    size_t nsizes;
    int reps;
    int phase;          /* enum plogp_phase */
    size_t i;           /* size being measured */
    int r;              /* repetition */
    uint64_t id;        /* of the probe in flight (0: none) */
    uint64_t sent_us;   /* when the echo in flight left */
    int k;              /* messages of the train in flight */
    double longest_us;  /* the longest train's span, about */
    int rested;         /* PLOGP_ALONE: the pause before the next echo began */
    int lossy_left;     /* trains of this size still repeated for loss */
    int lossy_repeats;  /* trains repeated so (the whole job) */
    uint64_t resume_us; /* when that pause ends */
    double sample[PLOGP_MAX_REPS];
    double os_sample[PLOGP_MAX_REPS], or_sample[PLOGP_MAX_REPS];
    double rtt[PLOGP_MAX_SIZES], gap[PLOGP_MAX_SIZES];
    double o_s[PLOGP_MAX_SIZES], o_r[PLOGP_MAX_SIZES];
};

/* What the job asks its owner to send. */
struct plogp_ops {
    /* an echo of bytes to hid, answered by plogp_job_echoed(id) */
    int (*echo)(void *ctx, int hid, size_t bytes, uint64_t id);
    /* k messages of m bytes to hid; the receiver's plogp_rx answers
       with the span between the first and the last arrival */
    int (*train)(void *ctx, int hid, size_t m, int k, uint64_t id);
};

/*
 * Prepares a job for peer hid: sizes (nsizes of them, increasing, the
 * first small: it gives L), reps repetitions of each.  0 or COLLS_EINVAL.
 */
int plogp_job_init(struct plogp_job *j, int hid, const size_t *sizes,
                   size_t nsizes, int reps);
/*
 * Sends the next probe (ids from *next_id, incremented).  Returns 0 when
 * a probe is in flight, 1 when the job is complete, 2 while it pauses
 * before an echo alone (call again at j->resume_us), or the ops' error.
 */
int plogp_job_next(struct plogp_job *j, const struct plogp_ops *ops, void *ctx,
                   uint64_t *next_id, uint64_t now_us);
/* An echo came back at now_us.  1 if it was the job's, else 0. */
int plogp_job_echoed(struct plogp_job *j, uint64_t id, uint64_t now_us);
/* The receiver reports a train: got messages, span_us between the first
   and the last, o_r_us its CPU time per message meanwhile; o_s_us is the
   sender's CPU time per message from the train's start to this report
   (either negative: not known, 0); repaired 1 when the transport
   retransmitted to the peer meanwhile.  1 if it was the job's (a train
   that lost messages is repeated, and a repaired one up to
   PLOGP_LOSSY_REPEATS times per size), else 0.  o_s and o_r of a size
   are the medians of its trains'. */
int plogp_job_spanned(struct plogp_job *j, uint64_t id, int got, double span_us,
                      double o_s_us, double o_r_us, int repaired);
/* Repetitions of the probe in flight's kind and size: reps, or
   PLOGP_ECHO_MANY for an echo of at most PLOGP_ECHO_MANY_MAX bytes. */
int plogp_job_reps(const struct plogp_job *j);
/* The job's parameters (L, g, gap, rtt); 0, or COLLS_EAGAIN before the
   job is complete. */
int plogp_job_result(const struct plogp_job *j, struct plogp_params *out);
/* Bytes the probe in flight carries (an echo's one way, or a train). */
size_t plogp_probe_bytes(const struct plogp_job *j);
/* Gaps in the span a train of k messages reports: k - 1 - k / 2. */
int plogp_train_intervals(int k);
/* Messages in a train of m-byte messages. */
int plogp_train_len(size_t m);

/* How long a probe of bytes may take, us: request_ms plus
   PLOGP_US_PER_BYTE per byte each way. */
uint64_t plogp_deadline_us(uint64_t bytes, unsigned request_ms);

/* The sum of those over the probes of a measurement of sizes (per size and
   repetition, an echo of m and a train of plogp_train_len(m) x m, and
   PLOGP_LOSSY_REPEATS trains more per size), us: how long the daemon may
   take to answer it. */
uint64_t plogp_ladder_us(const size_t *sizes, size_t n, int reps,
                         unsigned request_ms);

/* ---- the receiver of trains (one per peer) ---- */

struct plogp_rx {
    uint64_t id;
    int k, got;
    int mid; /* the middle message arrived: first_us is its time */
    uint64_t first_us, last_us;
    uint64_t cpu_first_us, cpu_last_us; /* the receiver's CPU clock then */
};

/* Message idx (0-based) of train id of k messages arrived at now_us, when
   the receiver's CPU clock read cpu_us (its CPU time, less any spent
   polling).  Returns 1 with *got, *span_us and *o_r_us set when the
   train is complete (its last message arrived), else 0: the span from
   the middle message (idx k / 2) to the last, plogp_train_intervals(k)
   gaps, and the CPU time over the same span per gap.  A new id restarts
   the count. */
int plogp_rx_arrive(struct plogp_rx *rx, uint64_t id, int idx, int k,
                    uint64_t now_us, uint64_t cpu_us, int *got, double *span_us,
                    double *o_r_us);

/* ---- the machine's summary ---- */

/*
 * Summarises rows (nrows peers, each with the same sizes) into out: per
 * size the median over peers, L likewise; gamma and the hop as given.
 * The rest of out is zero.  0 or COLLS_EINVAL (no rows, sizes
 * that differ).
 */
int plogp_summarise(const struct plogp_params *rows, size_t nrows,
                    struct plogp_params *out);

/* Median of x[0..n) (reorders x); 0 for n == 0. */
double plogp_median(double *x, size_t n);

/*
 * The ratios of a round under load (per size of the round, increasing:
 * the gap of trains sent by every daemon at once over a pair's gap
 * alone, each at least 1) made fit for gl: each becomes at least the
 * median of the original ratios of the larger sizes.  A train is at most
 * PLOGP_TRAIN_MAX messages long, so a small size's trains are short in
 * time: on 4 emulated hosts two to a CPU those of 1 KiB lasted about
 * 75 us and those of 16 KiB 1.2 ms, while the daemons start theirs as
 * the round's probe wakes each, tens of us apart.  Such trains overlap
 * little and their ratio says little: two tunes in a row measured 1.00
 * up to 16 KiB and 1.1-2.4 from 64 KiB on, and a segmented chain of
 * 16 KiB segments, costed at gl(16 KiB) = g, took 3 times its
 * prediction (docs/collectives.md, "Measuring the network").  A ratio
 * above the larger sizes' is kept: it is contention that was seen.
 */
void plogp_load_ratios(double *r, size_t n);

/* ---- the parameter file (docs/collectives.md) ---- */

/* Writes pp as the file's text into buf (cap bytes).  Returns the length,
   or COLLS_ENOBUFS. */
int plogp_format(const struct plogp_params *pp, char *buf, size_t cap);
/* Parses the file's text (len bytes) into out and checks it
   (plogp_check).  0, or COLLS_EINVAL with the line in *bad_line. */
int plogp_parse(const char *text, size_t len, struct plogp_params *out,
                int *bad_line);

#endif
