/*
 * pvm-group.c -- PVM's group library on collsd, as a PVM program.
 *
 *   pvm-group N      one of N members of group "pg" (start N of them)
 *
 * Joins, checks instances and sizes, then runs every collective twice:
 * on the dynamic group (through the group server) and after
 * pvm_freezegroup (collsd's collectives): pvm_reduce with PvmSum,
 * PvmProduct, PvmMax and PvmMin on every datatype PVM allows and with a
 * user function that is not commutative (so the instance order shows),
 * pvm_gather, pvm_scatter, pvm_bcast and pvm_barrier, each compared with
 * the result computed serially here.  The values are small integers, so
 * every result is exact whatever the order of the operations.  Errors are
 * checked by code, and pvm_siblings (all N when spawned together, else
 * itself).  Every member prints the same checks, "inst I: NAME:
 * ok" (or FAIL); the exit status is the number of failures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pvm3.h>

#include "check.h"

#define G     "pg"
#define COUNT 4

static int inst;

/* Item j of instance i: -2..2 for signed types, 1..5 for unsigned. */
static int
val(int i, int j, int dt)
{
    int v = (i * 7 + j * 3) % 5;

    return dt == PVM_USHORT || dt == PVM_UINT || dt == PVM_ULONG ? v + 1
                                                                 : v - 2;
}

/* Fills buf (COUNT items of dt) with instance i's values. */
static void
fill(void *buf, int i, int dt)
{
    int j;

    for (j = 0; j < COUNT; j++) {
        int v = val(i, j, dt), w = val(i + 1, j + 2, dt);
        switch (dt) {
        case PVM_BYTE:
            ((char *)buf)[j] = (char)v;
            break;
        case PVM_SHORT:
            ((short *)buf)[j] = (short)v;
            break;
        case PVM_USHORT:
            ((unsigned short *)buf)[j] = (unsigned short)v;
            break;
        case PVM_INT:
            ((int *)buf)[j] = v;
            break;
        case PVM_UINT:
            ((unsigned *)buf)[j] = (unsigned)v;
            break;
        case PVM_LONG:
            ((long *)buf)[j] = v;
            break;
        case PVM_ULONG:
            ((unsigned long *)buf)[j] = (unsigned long)v;
            break;
        case PVM_FLOAT:
            ((float *)buf)[j] = (float)v;
            break;
        case PVM_DOUBLE:
            ((double *)buf)[j] = v;
            break;
        case PVM_CPLX:
            ((float *)buf)[2 * j] = (float)v;
            ((float *)buf)[2 * j + 1] = (float)w;
            break;
        case PVM_DCPLX:
            ((double *)buf)[2 * j] = v;
            ((double *)buf)[2 * j + 1] = w;
            break;
        }
    }
}

static size_t
dtsize(int dt)
{
    switch (dt) {
    case PVM_BYTE:
        return 1;
    case PVM_SHORT:
    case PVM_USHORT:
        return sizeof(short);
    case PVM_INT:
    case PVM_UINT:
        return sizeof(int);
    case PVM_LONG:
    case PVM_ULONG:
        return sizeof(long);
    case PVM_FLOAT:
        return sizeof(float);
    case PVM_DOUBLE:
    case PVM_CPLX:
        return 8;
    default:
        return 16;
    }
}

/* x[j] = 2 * x[j] + y[j] on ints: the order of instances matters. */
static void
twice_plus(int *dt, void *x, void *y, int *num, int *info)
{
    int j, *a = x, *b = y;

    (void)dt;
    for (j = 0; j < *num; j++)
        a[j] = 2 * a[j] + b[j];
    *info = PvmOk;
}

static void
collectives(const char *phase, int n)
{
    static const int dts[] = {PVM_BYTE,   PVM_SHORT, PVM_USHORT, PVM_INT,
                              PVM_UINT,   PVM_LONG,  PVM_ULONG,  PVM_FLOAT,
                              PVM_DOUBLE, PVM_CPLX,  PVM_DCPLX};
    static const struct {
        void (*f)(int *, void *, void *, int *, int *);
        const char *name;
    } fs[] = {
        {PvmSum, "sum"},
        {PvmProduct, "product"},
        {PvmMax, "max"},
        {PvmMin, "min"},
        {(void (*)(int *, void *, void *, int *, int *))twice_plus, "user"}};
    char data[COUNT * 16], want[COUNT * 16], other[COUNT * 16], name[96];
    int d, f, i, j, rc, root, c = COUNT, info, dt;
    int gin[COUNT], gout[64 * COUNT], x[COUNT], src, id;
    double sdata[64 * COUNT], sout[COUNT];

    for (d = 0; d < 11; d++) {
        for (f = 0; f < 5; f++) {
            dt = dts[d];
            if (f == 4 && dt != PVM_INT)
                continue;
            if (dt == PVM_BYTE && f < 2)
                continue; /* PVM: no sum or product of bytes */
            root = (d + f) % n;
            fill(data, inst, dt);
            rc = pvm_reduce(fs[f].f, data, COUNT, dt, 100 + d, G, root);
            snprintf(name, sizeof(name), "%s reduce %s type %d root %d", phase,
                     fs[f].name, dt, root);
            if (inst != root) {
                fill(other, inst, dt);
                CHECK(name, rc == 0, "rc %d", rc);
                continue;
            }
            fill(want, 0, dt);
            for (i = 1; i < n; i++) {
                fill(other, i, dt);
                fs[f].f(&dt, want, other, &c, &info);
            }
            CHECK(name, rc == 0 && memcmp(data, want, COUNT * dtsize(dt)) == 0,
                  "rc %d", rc);
        }
    }
    /* gather to the last instance */
    for (j = 0; j < COUNT; j++)
        gin[j] = inst * 100 + j;
    memset(gout, 0, sizeof(gout));
    rc = pvm_gather(gout, gin, COUNT, PVM_INT, 200, G, n - 1);
    for (i = 0, j = 1; inst == n - 1 && i < n * COUNT; i++)
        j &= gout[i] == (i / COUNT) * 100 + i % COUNT;
    snprintf(name, sizeof(name), "%s gather", phase);
    CHECK(name, rc == 0 && j, "rc %d", rc);
    /* scatter from instance 0 */
    for (i = 0; i < n * COUNT; i++)
        sdata[i] = (i / COUNT) * 1000.0 + i % COUNT + 0.5;
    rc = pvm_scatter(sout, sdata, COUNT, PVM_DOUBLE, 201, G, 0);
    for (j = 0, i = 1; j < COUNT; j++)
        i &= sout[j] == inst * 1000.0 + j + 0.5;
    snprintf(name, sizeof(name), "%s scatter", phase);
    CHECK(name, rc == 0 && i, "rc %d", rc);
    /* bcast from instance 1, received with pvm_recv */
    snprintf(name, sizeof(name), "%s bcast", phase);
    if (inst == 1) {
        for (j = 0; j < COUNT; j++)
            x[j] = 31 * j + 7;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(x, COUNT, 1);
        CHECK(name, pvm_bcast(G, 202) == 0, "failed");
    } else {
        id = pvm_recv(-1, 202);
        memset(x, 0, sizeof(x));
        rc = pvm_upkint(x, COUNT, 1);
        pvm_bufinfo(id, NULL, NULL, &src);
        for (j = 0, i = 1; j < COUNT; j++)
            i &= x[j] == 31 * j + 7;
        CHECK(name, id > 0 && rc == 0 && i && src == pvm_gettid(G, 1),
              "id %d rc %d src t%x", id, rc, src);
    }
    snprintf(name, sizeof(name), "%s barrier", phase);
    CHECK(name, pvm_barrier(G, n) == 0, "failed");
}

int
main(int argc, char **argv)
{
    int n = argc == 2 ? atoi(argv[1]) : 0, me, i, ok, rc, *sib, idx;

    if (n < 2 || n > 64) {
        fprintf(stderr, "usage: pvm-group N (2..64)\n");
        return 2;
    }
    me = pvm_mytid();
    if (me < 0)
        return 1;
    inst = pvm_joingroup(G);
    snprintf(check_prefix, sizeof(check_prefix), "inst %d: ", inst);
    CHECK("joingroup", inst >= 0 && inst < n, "inst %d", inst);
    CHECK("joingroup twice", pvm_joingroup(G) == PvmDupGroup, "no");
    CHECK("barrier of joins", pvm_barrier(G, n) == 0, "failed");
    CHECK("gsize", pvm_gsize(G) == n, "%d", pvm_gsize(G));
    CHECK("gettid", pvm_gettid(G, inst) == me, "t%x", pvm_gettid(G, inst));
    CHECK("getinst", pvm_getinst(G, me) == inst, "%d", pvm_getinst(G, me));
    for (i = 0, ok = 1; i < n; i++)
        ok &= pvm_gettid(G, i) > 0;
    CHECK("every instance", ok, "a hole");
    CHECK("error NoInst", pvm_gettid(G, 99) == PvmNoInst, "no");
    CHECK("error NoGroup", pvm_getinst("nosuch", me) == PvmNoGroup, "no");
    CHECK("error NullGroup", pvm_joingroup("") == PvmNullGroup, "no");
    CHECK("error NotInGroup", pvm_getinst(G, me + 4000) == PvmNotInGroup, "no");
    CHECK("error NoGroup reduce",
          pvm_reduce(PvmSum, &i, 1, PVM_INT, 1, "nosuch", 0) == PvmNoGroup,
          "no");
    rc = pvm_siblings(&sib);
    for (i = 0, ok = 0; i < rc; i++)
        ok += sib[i] == me;
    /* in the spawn's order: this copy at its index */
    idx = getenv("COLLS_SPAWN_INDEX") != NULL
              ? atoi(getenv("COLLS_SPAWN_INDEX"))
              : 0;
    CHECK("siblings",
          ok == 1 && rc == (getenv("COLLS_SPAWN_COUNT") != NULL ? n : 1) &&
              idx >= 0 && idx < rc && sib[idx] == me,
          "%d siblings", rc);
    collectives("dynamic", n);
    /* the last instance leaves and joins again while the others go on to
       a barrier on the membership they know: their collsd barrier fails
       and is done through the server, and everyone ends with the new one */
    if (inst == n - 1) {
        rc = pvm_lvgroup(G);
        i = pvm_joingroup(G);
        CHECK("rejoin", rc == 0 && i == n - 1, "rc %d inst %d", rc, i);
    } else {
        CHECK("rejoin", 1, "-");
    }
    CHECK("rejoin barrier", pvm_barrier(G, n) == 0, "failed");
    i = inst;
    rc = pvm_reduce(PvmSum, &i, 1, PVM_INT, 300, G, 0);
    CHECK("rejoin reduce", rc == 0 && (inst != 0 || i == n * (n - 1) / 2),
          "rc %d sum %d", rc, i);
    CHECK("rejoin gettid", pvm_gettid(G, inst) == me, "t%x",
          pvm_gettid(G, inst));
    rc = pvm_freezegroup(G, n);
    CHECK("freezegroup", rc == 0, "rc %d", rc);
    CHECK("frozen gsize", pvm_gsize(G) == n, "%d", pvm_gsize(G));
    CHECK("frozen gettid", pvm_gettid(G, inst) == me, "no");
    collectives("frozen", n);
    CHECK("lvgroup", pvm_lvgroup(G) == 0, "failed");
    rc = pvm_lvgroup(G);
    CHECK("lvgroup twice", rc == PvmNotInGroup || rc == PvmNoGroup, "%d", rc);
    pvm_exit();
    return failures;
}
