/*
 * bench.h -- small helpers shared by the benchmark programs: a monotonic
 * clock, and the median and spread of repeated measurements.
 */
#ifndef COLLS_TESTS_BENCH_H
#define COLLS_TESTS_BENCH_H

#include <stdlib.h>
#include <time.h>

static inline double
bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n) and returns the median; *lo and *hi get min and max. */
static inline double
bench_median(double *v, int n, double *lo, double *hi)
{
    qsort(v, (size_t)n, sizeof(double), bench_cmp_double);
    if (lo)
        *lo = v[0];
    if (hi)
        *hi = v[n - 1];
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
