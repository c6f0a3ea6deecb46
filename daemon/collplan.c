/*
 * collplan.c -- what an instance will run: the checks of a request's
 * parameters (every size against max_message before anything is
 * allocated), agreement of later requests, input and output lengths,
 * the choice of mode and algorithm (from inputs every daemon shares, so
 * all choose alike) and the schedules, copied from the cache or built and
 * checked for hazards once.  See collint.h.
 *
 * May call: daemon/tune.h, daemon/alg/, daemon/sched.h, daemon/exec.h,
 * daemon/hier.h, daemon/collfpc.h, daemon/log.h; reads the group and the
 * configuration; sends nothing.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/collint.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/group.h"
#include "daemon/log.h"
#include "daemon/plogp.h"
#include "daemon/tune.h"
#include "proto/collop.h"
#include "proto/dtype.h"
#include "proto/reduce.h"

/* The gatherv family: one count per rank (alltoallv has count pairs). */
int
collplan_is_gv(int op)
{
    return collop_is_vector(op) && op != SCHED_OP_ALLTOALLV;
}

/* a * b, or 0 with *ovf set on overflow or above lim. */
static size_t
collplan_mul(size_t a, size_t b, size_t lim, int *ovf)
{
    if (a != 0 && b > lim / a) {
        *ovf = 1;
        return 0;
    }
    return a * b;
}

/* Checks a request's parameters and stores them in ci (first request).
   0 or a COLLS_E* code (COLLS_EINVAL with the valid names in ci->why for
   a forced algorithm the operation has none of). */
int
collplan_params(struct daemon *d, struct coll_inst *ci, const Envelope *e)
{
    const CollReq *q = e->coll_req;
    size_t lim = (size_t)d->cfg->max_message, total = 0;
    int ovf = 0, r, op = (int)q->op;

    if (q->op >= SCHED_OP_MAX || q->mode > COLLS_MODE_FLAT ||
        q->compress > COLLS_COMPRESS_AUTO ||
        (q->alg != NULL && strlen(q->alg) >= COLL_ALG_SPEC_MAX))
        return COLLS_EINVAL;
    if (op == SCHED_OP_BARRIER) {
        ci->dtype = COLLS_BYTE;
        ci->count = 0;
    } else {
        if (!dtype_valid((int)e->dtype))
            return COLLS_EDTYPE;
        ci->dtype = (int)e->dtype;
        ci->count = (size_t)e->count;
    }
    ci->op = op;
    ci->rop = collop_is_reduction(op) ? (int)q->rop : COLLS_SUM;
    if (collop_is_reduction(op) && reduce_check(ci->rop, ci->dtype) != 0)
        return reduce_check(ci->rop, ci->dtype);
    ci->root = collop_is_rooted(op) ? q->root : 0;
    if (ci->root < 0 || ci->root >= ci->P)
        return COLLS_EINVAL;
    ci->reqmode = (int)q->mode;
    ci->compress = (int)q->compress;
    ci->wire_dtype = ci->dtype;
    snprintf(ci->spec, sizeof(ci->spec), "%s", q->alg ? q->alg : "");
    /* a name the operation has no algorithm of fails the collective, with
       the names there are; a known one that cannot run (or has no row at
       the leader level of the hierarchy) falls back when chosen */
    if (tune_check_force(op, ci->spec, ci->why, sizeof(ci->why)) != 0)
        return COLLS_EINVAL;
    ci->esize = dtype_size(ci->dtype);
    ci->n = collplan_mul(ci->count, ci->esize, lim, &ovf);
    /* P blocks of n bytes in one buffer: the gather family's, reduce_
       scatter's input, and reduce's flat row keeps P - 1 of them at the
       root.  bcast, allreduce and scan hold n bytes a buffer at any P
       (an allreduce of 16 MiB over 32 tasks is 16 MiB, not 512) */
    if (collop_get(op)->blocks || op == SCHED_OP_REDUCE_SCATTER ||
        op == SCHED_OP_REDUCE)
        collplan_mul(ci->n, (size_t)ci->P, lim, &ovf);
    if (ovf)
        return COLLS_EMSGSIZE;
    if (collplan_is_gv(op)) {
        if (q->n_counts != (size_t)ci->P)
            return COLLS_EINVAL;
        ci->rawv = calloc((size_t)ci->P, sizeof(uint64_t));
        ci->vb = calloc(2 * (size_t)ci->P, sizeof(size_t));
        if (ci->rawv == NULL || ci->vb == NULL)
            return COLLS_ENOMEM;
        ci->nrawv = (size_t)ci->P;
        ci->vd = ci->vb + ci->P;
        for (r = 0; r < ci->P; r++) {
            ci->rawv[r] = q->counts[r];
            if (q->counts[r] > lim) /* items; bytes checked next */
                return COLLS_EMSGSIZE;
            ci->vb[r] =
                collplan_mul((size_t)q->counts[r], ci->esize, lim, &ovf);
            ci->vd[r] = total;
            total += ci->vb[r];
            if (ovf || total > lim)
                return COLLS_EMSGSIZE;
        }
        ci->vtotal = total;
    }
    ci->have = 1;
    return 0;
}

/* Writes "WHAT MINE at rank R, FIRST at rank F" (F: the rank whose
   request set ci's parameters) into ci->why; returns code. */
static int
collplan_differ(struct coll_inst *ci, int code, const char *what,
                unsigned long long mine, unsigned long long first, int r)
{
    snprintf(ci->why, sizeof(ci->why), "%s %llu at rank %d, %llu at rank %d",
             what, mine, r, first, ci->first_rank);
    return code;
}

/* See collint.h. */
int
collplan_same(struct coll_inst *ci, const Envelope *e, int r)
{
    const CollReq *q = e->coll_req;
    size_t k;

    if ((int)q->op != ci->op)
        return collplan_differ(ci, COLLS_EINVAL, "operation", q->op,
                               (unsigned)ci->op, r);
    if ((int)q->mode != ci->reqmode)
        return collplan_differ(ci, COLLS_EINVAL, "mode", q->mode,
                               (unsigned)ci->reqmode, r);
    if (strcmp(q->alg ? q->alg : "", ci->spec) != 0) {
        snprintf(ci->why, sizeof(ci->why),
                 "forced algorithm \"%s\" at rank %d, \"%s\" at rank %d",
                 q->alg ? q->alg : "", r, ci->spec, ci->first_rank);
        return COLLS_EINVAL;
    }
    if (ci->op == SCHED_OP_BARRIER)
        return 0;
    if ((int)e->dtype != ci->dtype)
        return collplan_differ(ci, COLLS_EINVAL, "datatype", e->dtype,
                               (unsigned)ci->dtype, r);
    if (e->count != ci->count)
        return collplan_differ(ci, COLLS_ECOUNT, "count", e->count, ci->count,
                               r);
    if (collop_is_reduction(ci->op) && (int)q->rop != ci->rop)
        return collplan_differ(ci, COLLS_EINVAL, "operator", q->rop,
                               (unsigned)ci->rop, r);
    if (collop_is_rooted(ci->op) && q->root != ci->root)
        return collplan_differ(ci, COLLS_EINVAL, "root",
                               (unsigned long long)q->root,
                               (unsigned long long)ci->root, r);
    /* the FPC protocol must be agreed */
    if (ci->op == SCHED_OP_BCAST && ci->dtype == COLLS_DOUBLE &&
        (int)q->compress != ci->compress)
        return collplan_differ(ci, COLLS_EINVAL, "compression", q->compress,
                               (unsigned)ci->compress, r);
    if (collplan_is_gv(ci->op)) {
        if (q->n_counts != ci->nrawv)
            return collplan_differ(ci, COLLS_ECOUNT, "number of counts",
                                   q->n_counts, ci->nrawv, r);
        for (k = 0; k < ci->nrawv; k++)
            if (q->counts[k] != ci->rawv[k]) {
                snprintf(ci->why, sizeof(ci->why),
                         "count of rank %zu: %llu at rank %d, %llu at rank %d",
                         k, (unsigned long long)q->counts[k], r,
                         (unsigned long long)ci->rawv[k], ci->first_rank);
                return COLLS_ECOUNT;
            }
    }
    return 0;
}

/* Input bytes rank r must send; alltoallv: from its counts (a2a). */
size_t
collplan_in_len(const struct coll_inst *ci, int r, const size_t *a2a)
{
    size_t P = (size_t)ci->P;

    switch (ci->op) {
    case SCHED_OP_BARRIER:
        return 0;
    case SCHED_OP_BCAST:
    case SCHED_OP_SCATTER:
        return r == ci->root ? (ci->op == SCHED_OP_BCAST ? ci->n : P * ci->n)
                             : 0;
    case SCHED_OP_SCATTERV:
        return r == ci->root ? ci->vtotal : 0;
    case SCHED_OP_GATHERV:
    case SCHED_OP_ALLGATHERV:
        return ci->vb[r];
    case SCHED_OP_ALLTOALL:
    case SCHED_OP_REDUCE_SCATTER:
        return P * ci->n;
    case SCHED_OP_ALLTOALLV: {
        size_t t = 0, j;

        for (j = 0; j < P; j++)
            t += a2a[j];
        return t;
    }
    default:
        return ci->n;
    }
}

/* Output bytes of rank r. */
size_t
collplan_out_len(const struct coll_inst *ci, int r, const size_t *a2a)
{
    size_t P = (size_t)ci->P, j, t = 0;

    switch (ci->op) {
    case SCHED_OP_BARRIER:
        return 0;
    case SCHED_OP_REDUCE:
        return r == ci->root ? ci->n : 0;
    case SCHED_OP_GATHER:
        return r == ci->root ? P * ci->n : 0;
    case SCHED_OP_GATHERV:
        return r == ci->root ? ci->vtotal : 0;
    case SCHED_OP_SCATTERV:
        return ci->vb[r];
    case SCHED_OP_ALLGATHER:
    case SCHED_OP_ALLTOALL:
        return P * ci->n;
    case SCHED_OP_ALLGATHERV:
        return ci->vtotal;
    case SCHED_OP_ALLTOALLV:
        for (j = 0; j < P; j++)
            t += a2a[2 * P + j];
        return t;
    case SCHED_OP_EXSCAN:
        return r == 0 ? 0 : ci->n;
    default:
        return ci->n;
    }
}

/* Chooses the algorithm for a (forced by spec if it can run) into ci;
   logs and counts a fallback.  0 or a COLLS_E* code. */
int
collplan_choose_alg(struct daemon *d, struct coll_inst *ci,
                    const struct alg_args *a, const char *spec)
{
    struct tune_choice ch;
    struct plogp view;
    int rc;

    if (ci->g->params != NULL)
        plogp_view(ci->g->params, &view);
    rc = tune_choose(a, ci->g->params != NULL ? &view : NULL, spec, &ch);
    if (rc != 0)
        return rc;
    ci->alg = ch.alg;
    ci->alg_index = ch.index;
    ci->seg = ch.seg;
    if (ch.fallback != TUNE_FALLBACK_NONE) {
        ci->fallback = 1;
        d->gs->cs->cnt.fallbacks++;
        if (ch.index >= 0 && ch.index < COLL_MAX_ALGS)
            d->gs->cs->ops[ci->op][ci->mode == COLLS_MODE_FLAT][ch.index]
                .fallbacks++;
        log_warn(
            "group %s collective %llu: forced algorithm \"%s\" for "
            "%s cannot run (%s); running %s",
            ci->g->name, (unsigned long long)ci->seq, spec, collop_name(a->op),
            ch.fallback == TUNE_FALLBACK_UNKNOWN ? "unknown" : "not applicable",
            ch.alg->name);
    }
    return 0;
}

/* Chooses mode and algorithm (same inputs on every daemon). */
void
collplan_args(const struct coll_inst *ci, int hier, int rank, size_t size,
              struct alg_args *a)
{
    const struct group *g = ci->g;

    *a = (struct alg_args){.op = hier ? collop_get(ci->op)->leader : ci->op,
                           .P = hier ? g->H.nhosts : ci->P,
                           .rank = rank,
                           .root = hier ? g->H.host[ci->root] : ci->root,
                           .dtype = ci->dtype,
                           .rop = ci->rop,
                           .size = size,
                           .seg = ci->seg};
    if (!hier) {
        a->counts = ci->vb;
        a->displs = ci->vd;
    } else if (collplan_is_gv(a->op)) {
        a->counts = ci->cnt;
        a->displs = ci->dsp;
    }
}

int
collplan_choose(struct daemon *d, struct coll_inst *ci)
{
    struct group *g = ci->g;
    const struct collop *o = collop_get(ci->op);
    struct alg_args a;
    int needs_contig;

    ci->mode =
        ci->reqmode == COLLS_MODE_FLAT ? COLLS_MODE_FLAT : COLLS_MODE_HIER;
    /* the host-local phase packs blocks per host in rank order */
    needs_contig = (o->blocks && o->family != COLLOP_ALL_TO_ALL2) ||
                   o->family == COLLOP_PREFIX;
    if (ci->mode == COLLS_MODE_HIER && needs_contig && !g->H.contiguous) {
        ci->mode = COLLS_MODE_FLAT;
        d->gs->cs->cnt.hier_as_flat++;
    }
    if (ci->mode == COLLS_MODE_FLAT) {
        collplan_args(ci, 0, 0, ci->op == SCHED_OP_ALLTOALLV ? 0 : ci->n, &a);
    } else {
        int NH = g->H.nhosts;
        struct hier_layout *L = &ci->hl;

        /* per-host block bytes of the gather family (global knowledge) */
        ci->cnt = calloc(6 * (size_t)NH, sizeof(size_t));
        if (ci->cnt == NULL)
            return COLLS_ENOMEM;
        ci->dsp = ci->cnt + NH;
        *L = (struct hier_layout){
            .op = ci->op,
            .dtype = ci->dtype,
            .rop = ci->rop,
            .root = ci->root,
            .count = ci->count,
            .n = ci->n,
            .P = ci->P,
            .H = &g->H,
            .myhost = g->myhost,
            .vb = ci->vb,
            .a2a = ci->op == SCHED_OP_ALLTOALLV ? ci->a2a : NULL,
            .cnt = ci->cnt,
            .dsp = ci->dsp,
            .sc = ci->dsp + NH,
            .sd = ci->dsp + 2 * NH,
            .rc = ci->dsp + 3 * NH,
            .rd = ci->dsp + 4 * NH,
        };
        hier_blocks(L);
        collplan_args(ci, 1, 0,
                      ci->op == SCHED_OP_REDUCE_SCATTER ? ci->n * (size_t)ci->P
                                                        : ci->n,
                      &a);
    }
    ci->fpc =
        collfpc_applies(ci->op, ci->dtype, ci->compress,
                        ci->mode == COLLS_MODE_HIER, g->H.nhosts, ci->count);
    if (ci->fpc) {
        /* the header's bcast; the payload's is chosen once its length is
           known (collrun_fpc_payload) */
        a.dtype = COLLS_BYTE;
        a.size = COLLFPC_HDR;
        return collplan_choose_alg(d, ci, &a, "");
    }
    return collplan_choose_alg(d, ci, &a, ci->spec);
}

/* ---- the executor --------------------------------------------------- */

/* Deep copy of a finished schedule; 0 or COLLS_ENOMEM. */
static int
collplan_sched_copy(struct sched *dst, const struct sched *src)
{
    *dst = *src;
    dst->steps = malloc((src->nsteps ? src->nsteps : 1) * sizeof(*src->steps));
    dst->round_end =
        malloc((src->nrounds ? src->nrounds : 1) * sizeof(*src->round_end));
    if (dst->steps == NULL || dst->round_end == NULL) {
        sched_free(dst);
        return COLLS_ENOMEM;
    }
    if (src->nsteps)
        memcpy(dst->steps, src->steps, src->nsteps * sizeof(*src->steps));
    if (src->nrounds)
        memcpy(dst->round_end, src->round_end,
               src->nrounds * sizeof(*src->round_end));
    dst->scap = src->nsteps;
    dst->rcap = src->nrounds;
    return 0;
}

/*
 * The schedule of a into s: a copy of the cached one, or built (and a
 * copy cached).  v-variants depend on count arrays and are not cached.
 * Each execution owns its copy, so evictions never touch a running one.
 * A built schedule is checked for hazards (exec_check) once, before it is
 * cached: a builder's bug fails the operation with COLLS_EINVAL.
 */
static int
collplan_sched_get(struct daemon *d, const struct coll_inst *ci,
                   const struct alg_args *a, struct sched *s)
{
    struct sched_key key;
    const struct sched *c;
    struct sched keep;
    char why[160];
    int rc, v = a->counts != NULL || a->scounts != NULL;

    key = (struct sched_key){.op = a->op,
                             .P = a->P,
                             .rank = a->rank,
                             .root = a->root,
                             .dtype = a->dtype,
                             .rop = a->rop,
                             .alg = ci->alg_index,
                             .size = a->size,
                             .seg = a->seg};
    if (!v && (c = sched_cache_get(d->gs->cs->cache, &key)) != NULL)
        return collplan_sched_copy(s, c);
    rc = alg_build(ci->alg, a, s);
    if (rc == 0 && (rc = exec_check(s, why, sizeof(why))) != 0)
        log_warn("algorithm %s of %s: %s", ci->alg->name, collop_name(a->op),
                 why);
    if (rc != 0) {
        sched_free(s);
        return rc;
    }
    if (!v && collplan_sched_copy(&keep, s) == 0)
        sched_cache_put(d->gs->cs->cache, &key, &keep);
    return 0;
}

/* Sets up x to run schedule args a with SEND/RECV buffers of at least
   ssz / rsz bytes (allocated when sbuf is NULL; RECV always is). */
int
collplan_exec_init(struct daemon *d, struct exec *x, const struct coll_inst *ci,
                   int phase, const struct alg_args *a, uint8_t *sbuf,
                   size_t ssz, size_t rsz)
{
    struct sched s;
    int rc;

    memset(x, 0, sizeof(*x));
    rc = collplan_sched_get(d, ci, a, &s);
    if (rc != 0)
        return rc;
    return exec_init(x, phase, &s, 1, sbuf, ssz, NULL, rsz);
}

/* alltoallv: member's byte counts and packed offsets, 4 * P entries. */
int
collplan_a2a_counts(struct daemon *d, struct coll_inst *ci, const CollReq *q,
                    size_t **out)
{
    size_t P = (size_t)ci->P, lim = (size_t)d->cfg->max_message, j;
    size_t so = 0, ro = 0, *v;
    int ovf = 0;

    *out = NULL;
    if (q->n_counts != P || q->n_rcounts != P)
        return COLLS_EINVAL;
    v = calloc(4 * P, sizeof(size_t));
    if (v == NULL)
        return COLLS_ENOMEM;
    for (j = 0; j < P; j++) {
        if (q->counts[j] > lim || q->rcounts[j] > lim)
            ovf = 1;
        v[j] = collplan_mul((size_t)q->counts[j], ci->esize, lim, &ovf);
        v[P + j] = so;
        so += v[j];
        v[2 * P + j] =
            collplan_mul((size_t)q->rcounts[j], ci->esize, lim, &ovf);
        v[3 * P + j] = ro;
        ro += v[2 * P + j];
        if (ovf || so > lim || ro > lim) {
            free(v);
            return COLLS_EMSGSIZE;
        }
    }
    *out = v;
    return 0;
}
