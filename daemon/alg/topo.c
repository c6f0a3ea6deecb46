/*
 * topo.c -- trees, chunks, segments, pLogP interpolation and the
 * hierarchical plan shared by the algorithm files.
 *
 * Invariants: every function is pure except topo_hier_plan, which
 * allocates the arrays of its plan (released by topo_hier_free).  Chunk and
 * segment boundaries always fall on whole items, so a REDUCE over a chunk
 * never splits an element.
 *
 * Owns nothing but the plans it allocates.  May call: daemon/sched.h
 * (sizes), libc.
 */
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/alg/alg.h"
#include "daemon/alg/topo.h"

int
topo_vrank(int rank, int root, int P)
{
    return (rank - root + P) % P;
}

int
topo_rank(int vrank, int root, int P)
{
    return (vrank + root) % P;
}

int
topo_ceil_log2(int P)
{
    int k = 0;

    while ((1 << k) < P)
        k++;
    return k;
}

int
topo_pof2(int P)
{
    int p = 1;

    while (2 * p <= P)
        p *= 2;
    return p;
}

int
topo_binomial_parent(int v)
{
    return v == 0 ? -1 : (v & (v - 1));
}

int
topo_binomial_size(int v, int P)
{
    int low;

    if (v == 0)
        return P;
    low = v & -v;
    return v + low > P ? P - v : low;
}

int
topo_binomial_children(int v, int P, int *children)
{
    int mask, n = 0;
    int limit = v == 0 ? (1 << 30) : (v & -v);

    for (mask = 1; mask < limit && v + mask < P; mask <<= 1)
        children[n++] = v + mask;
    return n;
}

int
topo_binary_children(int v, int P, int *children)
{
    int n = 0;

    if (2 * v + 1 < P)
        children[n++] = 2 * v + 1;
    if (2 * v + 2 < P)
        children[n++] = 2 * v + 2;
    return n;
}

void
topo_split(size_t n, size_t parts, size_t esize, size_t i, size_t *off,
           size_t *len)
{
    size_t items = n / esize, q = items / parts, rem = items % parts;

    *off = (i * q + (i < rem ? i : rem)) * esize;
    *len = (q + (i < rem ? 1 : 0)) * esize;
}

size_t
topo_nseg(size_t n, size_t seg, size_t esize, size_t *segsz)
{
    size_t s = seg / esize * esize;

    if (s == 0)
        s = esize;
    *segsz = s;
    return n == 0 ? 1 : (n + s - 1) / s;
}

void
topo_seg(size_t n, size_t segsz, size_t i, size_t *off, size_t *len)
{
    size_t o = i * segsz;

    *off = o < n ? o : n;
    *len = o < n ? (n - o < segsz ? n - o : segsz) : 0;
}

/* ys at m, interpolated over p's ladder (topo_plogp_g). */
static double
plogp_curve(const struct plogp *p, const double *ys, size_t m)
{
    size_t i = 1;
    double x0, x1, y0, y1, y;

    if (p->n == 0)
        return 0.0;
    if (p->n == 1)
        return ys[0];
    while (i < p->n - 1 && p->m[i] < m)
        i++;
    x0 = (double)p->m[i - 1];
    x1 = (double)p->m[i];
    y0 = ys[i - 1];
    y1 = ys[i];
    if (x1 <= x0)
        return y1;
    y = y0 + (y1 - y0) * ((double)m - x0) / (x1 - x0);
    return y < 0.0 ? 0.0 : y;
}

double
topo_plogp_g(const struct plogp *p, size_t m)
{
    return plogp_curve(p, p->g, m);
}

double
topo_plogp_rate(const struct plogp *p, size_t m)
{
    if (p->gap == NULL)
        return topo_plogp_g(p, m);
    return plogp_curve(p, p->gap, m);
}

double
topo_plogp_gap(const struct plogp *p, size_t m)
{
    double g = topo_plogp_g(p, m), gap = topo_plogp_rate(p, m);

    return gap < g ? gap : g;
}

double
topo_plogp_relay(const struct plogp *p, int P, size_t m)
{
    double gap = topo_plogp_gap(p, m), o;

    if (P <= 2 || p->o_s == NULL || p->o_r == NULL)
        return gap;
    o = plogp_curve(p, p->o_s, m) + plogp_curve(p, p->o_r, m);
    return o > gap ? o : gap;
}

double
topo_plogp_train(const struct plogp *p, int k, size_t m)
{
    if (k <= 0)
        return 0.0;
    return p->L + topo_plogp_g(p, m) + (k - 1) * topo_plogp_gap(p, m);
}

double
topo_plogp_tree(const struct plogp *p, int d, size_t m)
{
    double hops = d * (p->L + topo_plogp_g(p, m)),
           root = topo_plogp_train(p, d, m);

    return hops > root ? hops : root;
}

double
topo_plogp_port(const struct plogp *p, int k, size_t m)
{
    return k > 0 ? k * topo_plogp_rate(p, m) : 0.0;
}

double
topo_plogp_segs_port(const struct plogp *p, size_t n, size_t segsz)
{
    size_t k;

    if (segsz == 0 || n <= segsz)
        return topo_plogp_rate(p, n);
    k = (n + segsz - 1) / segsz;
    return (double)(k - 1) * topo_plogp_rate(p, segsz) +
           topo_plogp_rate(p, n - (k - 1) * segsz);
}

/* ---- hierarchical plan ------------------------------------------------ */

int
topo_hier_plan(int P, const int *host_id, struct topo_hier *h)
{
    int *ids = NULL, r, k, nh = 0;

    memset(h, 0, sizeof(*h));
    if (P < 1)
        return COLLS_EINVAL;
    h->P = P;
    h->host = calloc((size_t)P, sizeof(int));
    h->local = calloc((size_t)P, sizeof(int));
    h->start = calloc((size_t)P + 1, sizeof(int));
    h->members = calloc((size_t)P, sizeof(int));
    h->leader = calloc((size_t)P, sizeof(int));
    ids = calloc((size_t)P, sizeof(int));
    if (!h->host || !h->local || !h->start || !h->members || !h->leader ||
        !ids) {
        free(ids);
        topo_hier_free(h);
        return COLLS_ENOMEM;
    }
    /* Host numbers in order of first appearance (P is small: quadratic). */
    for (r = 0; r < P; r++) {
        for (k = 0; k < nh && ids[k] != host_id[r]; k++)
            ;
        if (k == nh)
            ids[nh++] = host_id[r];
        h->host[r] = k;
    }
    h->nhosts = nh;
    /* Counting sort by host keeps rank order within a host. */
    for (r = 0; r < P; r++)
        h->start[h->host[r] + 1]++;
    for (k = 0; k < nh; k++)
        h->start[k + 1] += h->start[k];
    memcpy(ids, h->start, (size_t)nh * sizeof(int));
    for (r = 0; r < P; r++) {
        int hh = h->host[r];

        h->local[r] = ids[hh] - h->start[hh];
        h->members[ids[hh]++] = r;
    }
    h->contiguous = 1;
    for (k = 0; k < nh; k++)
        h->leader[k] = h->members[h->start[k]];
    for (r = 0; r < P; r++)
        if (h->members[r] != r)
            h->contiguous = 0;
    free(ids);
    return 0;
}

void
topo_hier_free(struct topo_hier *h)
{
    free(h->host);
    free(h->local);
    free(h->start);
    free(h->members);
    free(h->leader);
    memset(h, 0, sizeof(*h));
}

int
topo_hier_nlocal(const struct topo_hier *h, int host)
{
    return h->start[host + 1] - h->start[host];
}
