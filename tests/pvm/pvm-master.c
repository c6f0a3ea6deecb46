/*
 * pvm-master.c -- a PVM master/worker program on collsd's spawn.
 *
 *   pvm-master N        the master: spawns N workers of this program
 *   pvm-master worker   a worker (started by the master)
 *
 * The master catches its children's output (pvm_catchout), exports a
 * variable (pvm_export; pvm_unexport takes another back) and checks that
 * every worker sees it and our COLLS_* settings, not the other; checks
 * that a missing program gives PvmNoFile per copy, spawns N workers anywhere
 * (PvmTaskDefault), one on host "host3" (PvmTaskHost) and one on its own
 * architecture (PvmTaskArch), asks for their exits (PvmTaskExit), hands
 * each a block of numbers and checks the sums that come back with the
 * workers' host names; the workers check pvm_parent, join the group
 * "workers", and the master checks their pvm_reduce of instance numbers
 * against the serial sum; pvm_tasks lists them with the master as parent;
 * one more worker is ended with pvm_kill.  Every exit is notified.  Lines
 * "master: NAME: ok" (or FAIL); the exit status counts failures.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <pvm3.h>

#include "check.h"

#define MAXW  32
#define BLOCK 100

/* A variable's value, or "-" when unset. */
static const char *
envof(const char *name)
{
    const char *v = getenv(name);

    return v != NULL ? v : "-";
}

static int
worker(void)
{
    double v[BLOCK], sum = 0;
    char host[64] = "", envs[256];
    int idx, j, parent = pvm_parent(), me = pvm_mytid(), inst, n, total = 0;

    gethostname(host, sizeof(host) - 1);
    snprintf(envs, sizeof(envs), "%s|%s|%s|%s", envof("PVM_EXPORT"),
             envof("PVMM_PROBE"), envof("PVMM_GONE"), envof("COLLS_PVMM"));
    printf("worker t%x on %s\n", (unsigned)me, host);
    fflush(stdout);
    pvm_recv(parent, 1);
    pvm_upkint(&idx, 1, 1);
    pvm_upkint(&n, 1, 1);
    pvm_upkdouble(v, BLOCK, 1);
    for (j = 0; j < BLOCK; j++)
        sum += v[j];
    pvm_initsend(PvmDataRaw);
    pvm_pkint(&idx, 1, 1);
    pvm_pkdouble(&sum, 1, 1);
    pvm_pkstr(host);
    pvm_pkstr(envs);
    pvm_send(parent, 2);
    if (n > 0) {
        /* the group part: every worker of the first set */
        inst = pvm_joingroup("workers");
        pvm_barrier("workers", n);
        total = inst;
        pvm_reduce(PvmSum, &total, 1, PVM_INT, 3, "workers", 0);
        if (inst == 0) {
            pvm_initsend(PvmDataDefault);
            pvm_pkint(&total, 1, 1);
            pvm_send(parent, 4);
        }
        pvm_barrier("workers", n);
        pvm_lvgroup("workers");
    }
    pvm_recv(parent, 5); /* until the master says go */
    pvm_exit();
    return 0;
}

static int
hostof(int tid)
{
    return (tid >> 20) & 0xfff;
}

int
main(int argc, char **argv)
{
    static char *wargs[] = {"worker", NULL};
    int n, tids[MAXW + 2], i, j, k, rc, idx, exited, hosts, ntask, sum;
    double v[BLOCK], got;
    char host[64], name[64], envs[256];
    struct pvmtaskinfo *ti;
    struct utsname u;
    unsigned seen = 0;

    if (argc == 2 && strcmp(argv[1], "worker") == 0)
        return worker();
    n = argc == 2 ? atoi(argv[1]) : 0;
    if (n < 1 || n > MAXW) {
        fprintf(stderr, "usage: pvm-master N (1..%d) | pvm-master worker\n",
                MAXW);
        return 2;
    }
    snprintf(check_prefix, sizeof(check_prefix), "master: ");
    if (pvm_mytid() < 0)
        return 1;
    CHECK("catchout", pvm_catchout(stdout) == 0, "failed");
    /* the workers' environment: what PVM_EXPORT names (pvm_export,
       pvm_unexport), and our COLLS_* settings */
    unsetenv("PVM_EXPORT");
    setenv("PVMM_PROBE", "x=1 y", 1);
    setenv("PVMM_GONE", "no", 1);
    setenv("COLLS_PVMM", "shared", 1);
    CHECK("export",
          pvm_export("PVMM_PROBE") == PvmOk && pvm_export("PVMM_GONE") == 0 &&
              pvm_export("PVMM_PROBE") == 0 && pvm_unexport("PVMM_GONE") == 0 &&
              pvm_export("A:B") == PvmBadParam &&
              pvm_unexport("") == PvmBadParam &&
              strcmp(envof("PVM_EXPORT"), "PVMM_PROBE") == 0,
          "PVM_EXPORT=%s", envof("PVM_EXPORT"));
    rc = pvm_spawn("pvm-nosuch", NULL, PvmTaskDefault, "", 2, tids);
    CHECK("spawn missing",
          rc == 0 && tids[0] == PvmNoFile && tids[1] == PvmNoFile,
          "rc %d tids %d %d", rc, tids[0], tids[1]);
    rc = pvm_spawn("pvm-master", wargs, PvmTaskDefault, "", n, tids);
    CHECK("spawn", rc == n, "%d of %d", rc, n);
    if (rc != n)
        return failures;
    rc = pvm_spawn("pvm-master", wargs, PvmTaskHost, "host3", 1, &tids[n]);
    CHECK("spawn on host3", rc == 1 && hostof(tids[n]) == 3, "rc %d tid t%x",
          rc, tids[n]);
    uname(&u);
    rc =
        pvm_spawn("pvm-master", wargs, PvmTaskArch, u.machine, 1, &tids[n + 1]);
    CHECK("spawn on arch", rc == 1 && tids[n + 1] > 0, "rc %d", rc);
    CHECK("notify", pvm_notify(PvmTaskExit, 9, n + 2, tids) == 0, "failed");
    for (i = 0; i < n + 2; i++) {
        for (j = 0; j < BLOCK; j++)
            v[j] = i * 1000 + j;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&i, 1, 1);
        k = i < n ? n : 0;
        pvm_pkint(&k, 1, 1);
        pvm_pkdouble(v, BLOCK, 1);
        pvm_send(tids[i], 1);
    }
    for (k = 0, hosts = 0; k < n + 2; k++) {
        pvm_recv(-1, 2);
        pvm_upkint(&idx, 1, 1);
        pvm_upkdouble(&got, 1, 1);
        pvm_upkstr(host);
        pvm_upkstr(envs);
        snprintf(name, sizeof(name), "environment %d", idx);
        CHECK(name, strcmp(envs, "PVMM_PROBE|x=1 y|-|shared") == 0, "%s", envs);
        snprintf(name, sizeof(name), "result %d", idx);
        CHECK(name,
              idx >= 0 && idx < n + 2 &&
                  got == idx * 1000.0 * BLOCK + BLOCK * (BLOCK - 1) / 2 &&
                  strncmp(host, "host", 4) == 0 &&
                  atoi(host + 4) == hostof(tids[idx]),
              "idx %d sum %g host %s", idx, got, host);
        if (idx >= 0 && idx < n && !(seen & (1u << hostof(tids[idx])))) {
            seen |= 1u << hostof(tids[idx]);
            hosts++;
        }
    }
    printf("master: workers on %d hosts\n", hosts);
    pvm_recv(-1, 4);
    pvm_upkint(&sum, 1, 1);
    CHECK("group reduce", sum == n * (n - 1) / 2, "%d", sum);
    rc = pvm_tasks(0, &ntask, &ti);
    for (i = k = 0; rc == 0 && i < ntask; i++)
        k += ti[i].ti_ptid == pvm_mytid();
    CHECK("tasks", rc == 0 && k == n + 2, "%d children listed", k);
    /* one more, ended by pvm_kill */
    rc = pvm_spawn("pvm-master", wargs, PvmTaskDefault, "", 1, &j);
    CHECK("kill",
          rc == 1 && pvm_notify(PvmTaskExit, 10, 1, &j) == 0 &&
              pvm_kill(j) == 0 && pvm_recv(-1, 10) > 0,
          "rc %d", rc);
    pvm_initsend(PvmDataDefault);
    pvm_mcast(tids, n + 2, 5);
    for (exited = 0, k = 0; k < n + 2; k++) {
        pvm_recv(-1, 9);
        pvm_upkint(&j, 1, 1);
        for (i = 0; i < n + 2; i++)
            if (tids[i] == j)
                exited++, tids[i] = 0;
    }
    CHECK("every exit notified", exited == n + 2, "%d of %d", exited, n + 2);
    pvm_exit();
    return failures;
}
