/*
 * tune.h -- choosing an algorithm (and segment size) for a collective.
 *
 * Three sources, in order of precedence:
 *   forced   per-group option, or environment COLLS_ALG_<OP>=name[:segment]
 *            (<OP> is collop_name() in upper case, e.g. COLLS_ALG_BCAST);
 *            a forced algorithm that cannot run (unknown name, or not
 *            applicable: needs a power of two, no v-variant, ...) yields
 *            the choice the other sources make, with choice.fallback set
 *            so the caller logs and counts it -- never silently;
 *   cost     with measured pLogP parameters, every applicable algorithm's
 *            cost formula (and a ladder of segment sizes for segmented
 *            ones) is evaluated and the cheapest wins;
 *   rules    without them, the default rules table (data, below).
 * Nothing here does I/O except tune_print (to a stdio stream).
 */
#ifndef COLLS_DAEMON_TUNE_H
#define COLLS_DAEMON_TUNE_H

#include <stddef.h>
#include <stdio.h>

#include "daemon/alg/alg.h"

/* One row of the rules table: op, P in [pmin, pmax], size (bytes per
   rank, alg_args.size) in [smin, smax] -> algorithm and segment. */
struct tune_rule {
    int op;
    int pmin, pmax;
    size_t smin, smax;
    const char *alg;
    size_t seg;
};

extern const struct tune_rule tune_default_rules[];
extern const size_t tune_default_nrules;

enum tune_source { TUNE_RULES = 0, TUNE_COST, TUNE_FORCED };

enum tune_fallback {
    TUNE_FALLBACK_NONE = 0,
    TUNE_FALLBACK_UNKNOWN, /* forced name unknown or malformed */
    TUNE_FALLBACK_UNUSABLE /* forced algorithm not applicable here */
};

struct tune_choice {
    const struct alg *alg; /* never NULL on success */
    int index;             /* row in alg_table(op) (for sched_key.alg) */
    size_t seg;            /* segment bytes (0: not segmented) */
    double predicted;      /* us; negative when no pLogP parameters */
    int source;            /* enum tune_source */
    int fallback;          /* enum tune_fallback */
};

/*
 * Chooses for a (op, P, size, dtype/operator, v-counts).  p: measured
 * parameters or NULL.  force: the group's option "name[:segment]", NULL to
 * consult COLLS_ALG_<OP>, or "" for no forcing.  Returns 0, or
 * COLLS_EINVAL when the operation has no usable algorithm at all.
 */
int tune_choose(const struct alg_args *a, const struct plogp *p,
                const char *force, struct tune_choice *out);

/* alg's predicted time (us) for a with p, at its best segment size
   (*seg; 0 for unsegmented rows): the larger of its formula and its
   busiest port (struct alg.port) less tune_port_rest; ALG_ALLPAIRS rows,
   and ALG_OVERLAP rows from 4 ranks on, with p->gl for g.
   alg must be usable for a. */
double tune_alg_cost(const struct alg_args *a, const struct plogp *p,
                     const struct alg *alg, size_t *seg);

/* What the busiest port of a's operation gains from the barrier before
   it (collsctl bench --latency puts one before each operation that is
   not rooted), us: while the barrier's rounds wait, a shaper's token
   bucket fills again, up to what it holds, and lets the operation's
   first bytes through at the wire's speed.  lgP (Ll + g(0) - gap(0)),
   each round's time less what its own empty message holds the port,
   at most the bucket: the most an isolated message passes faster than a
   train's gap, the largest gap(m) - g(m) where gap(m) is at least
   PLOGP_BUCKET_FACTOR g(m).  0 for rooted operations, on a link without
   a shaper (no such m) and where a round's message holds the port
   longer than the round (docs/collectives.md, "The busiest port"). */
double tune_port_rest(const struct alg_args *a, const struct plogp *p);

/* Parses "name[:segment]" (segment in bytes, optional k/m suffix) into
   name (cap bytes) and *seg (0 when absent).  0 or COLLS_EINVAL. */
int tune_parse_force(const char *spec, char *name, size_t cap, size_t *seg);

/*
 * Checks the name of forced algorithm spec ("name[:segment]") against
 * op's rows.  0 when spec is empty or names a row (whether it can run is
 * tune_choose's question); else COLLS_EINVAL with, in why (cap bytes),
 * "unknown algorithm \"NAME\" for OP (one of: a, b, ...)".
 */
int tune_check_force(int op, const char *spec, char *why, size_t cap);

/* The environment's forced algorithm for op, or NULL. */
const char *tune_env_force(int op);

/*
 * Prints the decision table: for every operation (v-variants share their
 * base operation's rows), each P of Ps and each size of sizes, the rules'
 * choice and, with p, the cost-based choice and its predicted time.
 * Returns the number of lines written or a negative COLLS_E* code.
 */
int tune_print(FILE *f, const struct plogp *p, const int *Ps, size_t nP,
               const size_t *sizes, size_t nsizes);

#endif
