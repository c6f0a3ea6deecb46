/*
 * bench.h -- small helpers shared by the benchmark programs: a monotonic
 * clock, the median and spread of repeated measurements, and lists of
 * message sizes given on the command line.
 */
#ifndef COLLS_TESTS_BENCH_H
#define COLLS_TESTS_BENCH_H

#include <stdlib.h>
#include <string.h>
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

/* Fills list[0..max) from "a,b,..." (each strtoul base 0); the count. */
static inline int
bench_size_list(const char *csv, size_t *list, int max)
{
    char *dup = strdup(csv), *save = NULL;
    int n = 0;

    if (dup == NULL)
        return 0;
    for (char *t = strtok_r(dup, ",", &save); t && n < max;
         t = strtok_r(NULL, ",", &save))
        list[n++] = strtoul(t, NULL, 0);
    free(dup);
    return n;
}

#endif
