/*
 * pvmtask.c -- PVM's process control on collsd: pvm_parent, pvm_exit,
 * pvm_spawn, pvm_kill, pvm_sendsig, pvm_pstat, pvm_mstat, pvm_tasks,
 * pvm_config, pvm_addhosts, pvm_delhosts, pvm_catchout, pvm_tidtohost,
 * pvm_siblings, pvm_halt.
 *
 * A host's "pvmd tid" is its daemon's tid, COLLS_DAEMON_TID(hid).  Host
 * names in pvm_addhosts/pvm_delhosts/pvm_spawn are collsd's: a name, an
 * address[:port] or a hid; architectures are as uname -m prints them.
 * pvm_tasks() and pvm_config() return arrays that stay valid until the
 * next call of the same function, as in PVM.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pvmint.h"

int
pvm_parent(void)
{
    colls_t *c = pvm__colls("pvm_parent");
    colls_tid_t p;

    if (c == NULL)
        return PvmSysErr;
    if (colls_parent(c, &p) < 0 || p == 0)
        return PvmNoParent;
    return (int)p;
}

int
pvm_exit(void)
{
    int i;

    for (i = 1; i < pvm__task.nbufs; i++)
        if (pvm__task.bufs[i].used)
            pvm__buf_clear(&pvm__task.bufs[i]);
    pvm__task.sbuf = pvm__task.rbuf = 0;
    free(pvm__task.notifies);
    pvm__task.notifies = NULL;
    pvm__task.nnotifies = 0;
    if (pvm__task.c == NULL)
        return PvmOk;
    if (pvm__task.groups_exit != NULL)
        pvm__task.groups_exit();
    fflush(stdout);
    fflush(stderr);
    colls_detach(pvm__task.c);
    pvm__task.c = NULL;
    pvm__task.tid = 0;
    return PvmOk;
}

/* PVM's code for a copy colls_spawn() could not start. */
static int
pvm_spawn_code(int err)
{
    switch (err) {
    case COLLS_ENOENT:
        return PvmNoFile;
    case COLLS_EHOSTDOWN:
        return PvmNoHost;
    case COLLS_EPERM:
        return PvmDenied;
    case COLLS_ETOOMANY:
        return PvmOutOfRes;
    default:
        return pvm__code(err);
    }
}

extern char **environ;

/* The ':'-separated list names the variable of entry e ("NAME=..."). */
static int
pvm_listed(const char *list, const char *e, size_t len)
{
    const char *p = list;

    while (*p != '\0') {
        size_t k = strcspn(p, ":");

        if (k == len && strncmp(p, e, len) == 0)
            return 1;
        p += k + (p[k] == ':');
    }
    return 0;
}

/*
 * What PVM passes to spawned tasks: PVM_EXPORT and the variables it
 * names, as environ holds them (NULL-terminated; the strings are
 * environ's).  NULL without memory.
 */
static char **
pvm_exports(void)
{
    const char *list = getenv("PVM_EXPORT");
    size_t n = 0, i;
    char **v;

    for (i = 0; environ != NULL && environ[i] != NULL; i++)
        ;
    v = calloc(i + 1, sizeof(*v));
    if (v == NULL || list == NULL)
        return v;
    for (i = 0; environ[i] != NULL; i++) {
        char *e = environ[i];
        size_t len = strcspn(e, "=");

        if (e[len] == '=' &&
            (strncmp(e, "PVM_EXPORT=", 11) == 0 || pvm_listed(list, e, len)))
            v[n++] = e;
    }
    return v;
}

/* Rewrites PVM_EXPORT without name (and with it if add), keeping the
   order of the others. */
static int
pvm_export_edit(const char *call, const char *name, int add)
{
    const char *list = getenv("PVM_EXPORT"), *p;
    size_t len, cap;
    char *out;
    int rc;

    if (name == NULL || name[0] == '\0' || strpbrk(name, ":=") != NULL)
        return pvm__fail(call, PvmBadParam);
    len = strlen(name);
    if (list == NULL)
        list = "";
    cap = strlen(list) + len + 2;
    out = malloc(cap);
    if (out == NULL)
        return pvm__fail(call, PvmNoMem);
    out[0] = '\0';
    for (p = list; *p != '\0';) {
        size_t k = strcspn(p, ":");

        if (k > 0 && !(k == len && strncmp(p, name, len) == 0)) {
            if (out[0] != '\0')
                strcat(out, ":");
            strncat(out, p, k);
        }
        p += k + (p[k] == ':');
    }
    if (add) {
        if (out[0] != '\0')
            strcat(out, ":");
        strcat(out, name);
    }
    rc = setenv("PVM_EXPORT", out, 1);
    free(out);
    return rc == 0 ? PvmOk : pvm__fail(call, PvmNoMem);
}

int
pvm_export(char *name)
{
    return pvm_export_edit("pvm_export", name, 1);
}

int
pvm_unexport(char *name)
{
    return pvm_export_edit("pvm_unexport", name, 0);
}

int
pvm_spawn(char *file, char **argv, int flag, char *where, int ntask, int *tids)
{
    colls_t *c = pvm__colls("pvm_spawn");
    colls_tid_t *t;
    char **env;
    int i, n, how = COLLS_SPAWN_ANY;

    if (c == NULL)
        return PvmSysErr;
    if (file == NULL || ntask < 1 || tids == NULL)
        return pvm__fail("pvm_spawn", PvmBadParam);
    if (flag & PvmHostCompl)
        return pvm__notimpl("pvm_spawn(PvmHostCompl)");
    if (flag & PvmNoSpawnParent)
        return pvm__notimpl("pvm_spawn(PvmNoSpawnParent)");
    if ((flag & PvmTaskHost) && where != NULL && where[0] != '\0')
        how = COLLS_SPAWN_HOST;
    else if ((flag & PvmTaskArch) && where != NULL && where[0] != '\0')
        how = COLLS_SPAWN_ARCH;
    t = calloc((size_t)ntask, sizeof(*t));
    env = pvm_exports();
    if (t == NULL || env == NULL) {
        free(t);
        free(env);
        return pvm__fail("pvm_spawn", PvmNoMem);
    }
    fflush(stdout);
    n = colls_spawn_env(c, file, argv, env, how, where, ntask, t);
    free(env);
    if (n < 0) {
        free(t);
        return pvm__fail("pvm_spawn", pvm_spawn_code(n));
    }
    for (i = 0; i < ntask; i++)
        tids[i] = (int32_t)t[i] < 0 ? pvm_spawn_code((int32_t)t[i]) : (int)t[i];
    free(t);
    return n;
}

/*
 * The tasks started by the same spawn as this one, in the spawn's order,
 * this one included (colls_siblings: the spawner sends the list to each
 * copy as its spawn returns; a task that was not spawned is its own only
 * sibling).  The array is kept for later calls, as in PVM.
 */
int
pvm_siblings(int **tids)
{
    static int *sib, nsib;
    colls_t *c = pvm__colls("pvm_siblings");
    colls_tid_t *t;
    int n, i;

    if (c == NULL)
        return PvmSysErr;
    if (tids == NULL)
        return pvm__fail("pvm_siblings", PvmBadParam);
    if (sib != NULL) {
        *tids = sib;
        return nsib;
    }
    n = colls_siblings(c, NULL, 0);
    if (n < 0)
        return pvm__fail("pvm_siblings", pvm__code(n));
    t = calloc((size_t)n, sizeof(*t));
    sib = calloc((size_t)n, sizeof(*sib));
    i = t == NULL || sib == NULL       ? PvmNoMem
        : colls_siblings(c, t, n) != n ? PvmSysErr
                                       : PvmOk;
    if (i != PvmOk) {
        free(t);
        free(sib);
        sib = NULL;
        return pvm__fail("pvm_siblings", i);
    }
    for (i = 0; i < n; i++)
        sib[i] = (int)t[i];
    free(t);
    nsib = n;
    *tids = sib;
    return n;
}

int
pvm_kill(int tid)
{
    colls_t *c = pvm__colls("pvm_kill");
    int rc;

    if (c == NULL)
        return PvmSysErr;
    if (tid <= 0)
        return pvm__fail("pvm_kill", PvmBadParam);
    rc = colls_kill(c, (colls_tid_t)tid);
    return rc < 0 ? pvm__fail("pvm_kill", pvm__code(rc)) : PvmOk;
}

/* Only termination travels: SIGTERM and SIGKILL end the task (SIGTERM). */
int
pvm_sendsig(int tid, int signum)
{
    if (signum != SIGTERM && signum != SIGKILL)
        return pvm__notimpl("pvm_sendsig");
    return pvm_kill(tid);
}

/* Is task tid running?  PvmOk, PvmNoTask, or another PVM code. */
int
pvm_pstat(int tid)
{
    colls_t *c = pvm__colls("pvm_pstat");
    colls_taskinfo_t *ti;
    int i, n, rc, found = 0;

    if (c == NULL)
        return PvmSysErr;
    if (tid <= 0)
        return pvm__fail("pvm_pstat", PvmBadParam);
    rc = colls_tasks(c, COLLS_TID_HID(tid), &ti, &n);
    if (rc == COLLS_ENOENT || rc == COLLS_EHOSTDOWN)
        return PvmNoTask;
    if (rc < 0)
        return pvm__fail("pvm_pstat", pvm__code(rc));
    for (i = 0; i < n; i++)
        if ((int)ti[i].tid == tid)
            found = 1;
    colls_free(ti);
    return found ? PvmOk : PvmNoTask;
}

/* Fills the host table of pvm_config(); 0 or a PVM code. */
static int
pvm_hosts(colls_hostinfo_t **hs, int *n)
{
    colls_t *c = pvm__colls("pvm_config");
    int rc;

    if (c == NULL)
        return PvmSysErr;
    rc = colls_hosts(c, hs, n);
    return rc < 0 ? pvm__code(rc) : 0;
}

/* The host matching name (name, address, address:port or hid), or -1. */
static int
pvm_host_find(const colls_hostinfo_t *hs, int n, const char *name)
{
    size_t l = strlen(name);
    char *end;
    long hid = strtol(name, &end, 10);
    int i;

    for (i = 0; i < n; i++) {
        if (strcmp(hs[i].name, name) == 0 || strcmp(hs[i].addr, name) == 0 ||
            (*end == '\0' && end != name && hs[i].hid == hid) ||
            (strncmp(hs[i].addr, name, l) == 0 && hs[i].addr[l] == ':'))
            return i;
    }
    return -1;
}

int
pvm_mstat(char *host)
{
    colls_hostinfo_t *hs;
    int n, i, rc;

    if (host == NULL)
        return pvm__fail("pvm_mstat", PvmBadParam);
    rc = pvm_hosts(&hs, &n);
    if (rc < 0)
        return pvm__fail("pvm_mstat", rc);
    i = pvm_host_find(hs, n, host);
    rc = i < 0 ? PvmNoHost : hs[i].state == COLLS_HOST_UP ? PvmOk : PvmHostFail;
    colls_free(hs);
    return rc;
}

int
pvm_tasks(int where, int *ntask, struct pvmtaskinfo **taskp)
{
    colls_t *c = pvm__colls("pvm_tasks");
    colls_taskinfo_t *ti;
    struct pvmtaskinfo *out;
    int i, k, n, rc, hid;

    if (c == NULL)
        return PvmSysErr;
    if (where < 0)
        return pvm__fail("pvm_tasks", PvmBadParam);
    hid = where == 0 ? COLLS_ANY : COLLS_TID_HID(where);
    rc = colls_tasks(c, hid, &ti, &n);
    if (rc < 0)
        return pvm__fail("pvm_tasks",
                         rc == COLLS_ENOENT ? PvmNoHost : pvm__code(rc));
    for (i = 0; i < pvm__task.ntinfo; i++)
        free(pvm__task.tinfo[i].ti_a_out);
    free(pvm__task.tinfo);
    pvm__task.tinfo = NULL;
    pvm__task.ntinfo = 0;
    out = calloc((size_t)(n ? n : 1), sizeof(*out));
    if (out == NULL) {
        colls_free(ti);
        return pvm__fail("pvm_tasks", PvmNoMem);
    }
    for (i = k = 0; i < n; i++) {
        if (where != 0 && COLLS_TID_LOCAL(where) != 0 &&
            (int)ti[i].tid != where)
            continue;
        out[k].ti_tid = (int)ti[i].tid;
        out[k].ti_ptid = (int)ti[i].parent;
        out[k].ti_host = (int)COLLS_DAEMON_TID(COLLS_TID_HID(ti[i].tid));
        out[k].ti_a_out = strdup(ti[i].name);
        out[k].ti_pid = ti[i].pid;
        k++;
    }
    colls_free(ti);
    pvm__task.tinfo = out;
    pvm__task.ntinfo = k;
    if (ntask != NULL)
        *ntask = k;
    if (taskp != NULL)
        *taskp = out;
    if (k == 0 && where != 0 && COLLS_TID_LOCAL(where) != 0)
        return pvm__fail("pvm_tasks", PvmNoTask);
    return PvmOk;
}

int
pvm_config(int *nhost, int *narch, struct pvmhostinfo **hostp)
{
    colls_hostinfo_t *hs;
    struct pvmhostinfo *out;
    int i, j, k, n, rc, na = 0;

    rc = pvm_hosts(&hs, &n);
    if (rc < 0)
        return pvm__fail("pvm_config", rc);
    for (i = 0; i < pvm__task.nhinfo; i++) {
        free(pvm__task.hinfo[i].hi_name);
        free(pvm__task.hinfo[i].hi_arch);
    }
    free(pvm__task.hinfo);
    pvm__task.hinfo = NULL;
    pvm__task.nhinfo = 0;
    out = calloc((size_t)(n ? n : 1), sizeof(*out));
    if (out == NULL) {
        colls_free(hs);
        return pvm__fail("pvm_config", PvmNoMem);
    }
    for (i = k = 0; i < n; i++) {
        if (hs[i].state != COLLS_HOST_UP)
            continue;
        out[k].hi_tid = (int)COLLS_DAEMON_TID(hs[i].hid);
        out[k].hi_name = strdup(hs[i].name);
        out[k].hi_arch = strdup(hs[i].arch);
        out[k].hi_speed = 1000;
        for (j = 0; j < k; j++)
            if (strcmp(out[j].hi_arch, hs[i].arch) == 0)
                break;
        if (j == k)
            na++;
        k++;
    }
    colls_free(hs);
    pvm__task.hinfo = out;
    pvm__task.nhinfo = k;
    if (nhost != NULL)
        *nhost = k;
    if (narch != NULL)
        *narch = na;
    if (hostp != NULL)
        *hostp = out;
    return PvmOk;
}

/*
 * Follows the entry that colls_add_host(name) made (a hid not in seen,
 * preferably one listing name): its daemon tid once it is up; PvmCantStart
 * when it goes down (no daemon answered), disappears (refused: that daemon
 * belongs to another machine) or still joins after a minute.
 */
static int
pvm_add_wait(const char *name, const unsigned char *seen)
{
    colls_hostinfo_t *hs;
    int n, i, k, tries, rc, listed = 0;

    for (tries = 0; tries < 1200; tries++) {
        if (tries > 0)
            usleep(50000);
        if ((rc = pvm_hosts(&hs, &n)) < 0)
            return rc;
        k = pvm_host_find(hs, n, name);
        if (k >= 0 && seen[hs[k].hid & 4095])
            k = -1;
        for (i = 0; i < n && k < 0; i++)
            if (!seen[hs[i].hid & 4095])
                k = i;
        rc = k < 0                            ? 0
             : hs[k].state == COLLS_HOST_UP   ? (int)COLLS_DAEMON_TID(hs[k].hid)
             : hs[k].state == COLLS_HOST_DOWN ? PvmCantStart
                                              : 0;
        colls_free(hs);
        if (rc != 0)
            return rc;
        if (k >= 0)
            listed = 1;
        else if (listed || tries >= 100)
            return PvmCantStart;
    }
    return PvmCantStart;
}

int
pvm_addhosts(char **hosts, int nhost, int *infos)
{
    colls_t *c = pvm__colls("pvm_addhosts");
    colls_hostinfo_t *hs;
    unsigned char seen[4096];
    int i, j, n, rc, ok = 0;

    if (c == NULL)
        return PvmSysErr;
    if (hosts == NULL || nhost < 1)
        return pvm__fail("pvm_addhosts", PvmBadParam);
    for (i = 0; i < nhost; i++) {
        memset(seen, 0, sizeof(seen));
        rc = pvm_hosts(&hs, &n);
        if (rc == 0) {
            for (j = 0; j < n; j++)
                seen[hs[j].hid & 4095] = 1;
            j = hosts[i] == NULL ? -1 : pvm_host_find(hs, n, hosts[i]);
            if (j >= 0 && hs[j].state == COLLS_HOST_UP)
                rc = PvmDupHost;
            colls_free(hs);
        }
        if (rc == 0) {
            rc = hosts[i] == NULL ? COLLS_EINVAL : colls_add_host(c, hosts[i]);
            if (rc == COLLS_EEXIST)
                rc = PvmDupHost;
            else if (rc < 0)
                rc = pvm__code(rc) == PvmBadParam ? PvmNoHost : pvm__code(rc);
            else
                rc = pvm_add_wait(hosts[i], seen);
        }
        if (rc > 0)
            ok++;
        if (infos != NULL)
            infos[i] = rc;
    }
    return ok;
}

int
pvm_delhosts(char **hosts, int nhost, int *infos)
{
    colls_t *c = pvm__colls("pvm_delhosts");
    colls_hostinfo_t *hs;
    int i, j, n, rc, ok = 0;

    if (c == NULL)
        return PvmSysErr;
    if (hosts == NULL || nhost < 1)
        return pvm__fail("pvm_delhosts", PvmBadParam);
    rc = pvm_hosts(&hs, &n);
    if (rc < 0)
        return pvm__fail("pvm_delhosts", rc);
    for (i = 0; i < nhost; i++) {
        j = hosts[i] == NULL ? -1 : pvm_host_find(hs, n, hosts[i]);
        rc = j < 0 ? PvmNoHost : colls_delete_host(c, hs[j].hid);
        if (rc < 0)
            rc = rc == PvmNoHost ? rc : pvm__code(rc);
        else
            ok++;
        if (infos != NULL)
            infos[i] = rc;
    }
    colls_free(hs);
    return ok;
}

int
pvm_catchout(FILE *ff)
{
    colls_t *c = pvm__colls("pvm_catchout");
    int rc;

    if (c == NULL)
        return PvmSysErr;
    if (ff != NULL)
        fflush(ff);
    rc = colls_catchout(c, ff != NULL ? fileno(ff) : -1);
    return rc < 0 ? pvm__fail("pvm_catchout", pvm__code(rc)) : PvmOk;
}

int
pvm_tidtohost(int tid)
{
    if (tid <= 0)
        return pvm__fail("pvm_tidtohost", PvmBadParam);
    return (int)COLLS_DAEMON_TID(COLLS_TID_HID(tid));
}

int
pvm_halt(void)
{
    colls_t *c = pvm__colls("pvm_halt");
    int rc;

    if (c == NULL)
        return PvmSysErr;
    rc = colls_halt(c);
    return rc < 0 ? pvm__fail("pvm_halt", pvm__code(rc)) : PvmOk;
}
