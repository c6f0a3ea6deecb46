/*
 * pvm.c -- libpvm3's core: the process's task (attached on first use),
 * PVM's error codes and their mapping from COLLS_E*, pvm_perror, the
 * options of pvm_setopt/pvm_getopt, and the calls answered PvmNotImpl.
 *
 * Options: PvmRoute switches libcolls' route (PvmDontRoute and
 * PvmAllowDirect: through the daemons, PvmRouteDirect: task-to-task TCP);
 * PvmAutoErr decides whether failing calls print their error; the others
 * are stored and returned as PVM does, and those whose effect belongs to
 * PVM's daemon (output and trace redirection as messages) answer
 * PvmNotImpl with a log line.  PvmDebugMask is stored and logged.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pvmint.h"

struct pvm__task pvm__task = {.opts = {[PvmRoute] = PvmDontRoute,
                                       [PvmAutoErr] = 1,
                                       [PvmFragSize] = 4096,
                                       [PvmShowTids] = 1,
                                       [PvmPollType] = PvmPollConstant,
                                       [PvmPollTime] = 10000}};

int pvm_errno;

/* PVM's codes, their texts, and the COLLS_E* codes that map onto them. */
static const struct {
    int code;
    const char *text;
} pvm_errtab[] = {
    {PvmOk, "Ok"},
    {PvmBadParam, "Bad parameter"},
    {PvmMismatch, "Parameter mismatch"},
    {PvmOverflow, "Value too large"},
    {PvmNoData, "End of buffer"},
    {PvmNoHost, "No such host"},
    {PvmNoFile, "No such file"},
    {PvmDenied, "Permission denied"},
    {PvmNoMem, "Malloc failed"},
    {PvmBadMsg, "Can't decode message"},
    {PvmSysErr, "Can't contact local daemon"},
    {PvmNoBuf, "No current buffer"},
    {PvmNoSuchBuf, "No such buffer"},
    {PvmNullGroup, "Null group name"},
    {PvmDupGroup, "Already in group"},
    {PvmNoGroup, "No such group"},
    {PvmNotInGroup, "Not in group"},
    {PvmNoInst, "No such instance"},
    {PvmHostFail, "Host failed"},
    {PvmNoParent, "No parent task"},
    {PvmNotImpl, "Not implemented"},
    {PvmDSysErr, "Pvmd system error"},
    {PvmBadVersion, "Version mismatch"},
    {PvmOutOfRes, "Out of resources"},
    {PvmDupHost, "Duplicate host"},
    {PvmCantStart, "Can't start pvmd"},
    {PvmAlready, "Already in progress"},
    {PvmNoTask, "No such task"},
    {PvmNotFound, "Not Found"},
    {PvmExists, "Already exists"},
    {PvmHostrNMstr, "Hoster run on non-master host"},
    {PvmParentNotSet, "Spawning parent set PvmNoSpawnParent"},
    {PvmIPLoopback, "Master Host IP is Loopback"},
};

static const struct {
    int colls, pvm;
} pvm_codemap[] = {
    {COLLS_EINVAL, PvmBadParam},   {COLLS_EDTYPE, PvmBadParam},
    {COLLS_EOP, PvmBadParam},      {COLLS_EENCODING, PvmBadParam},
    {COLLS_ENOMEM, PvmNoMem},      {COLLS_ENOENT, PvmNoTask},
    {COLLS_EPEERDEAD, PvmNoTask},  {COLLS_EPERM, PvmDenied},
    {COLLS_EOWNER, PvmDenied},     {COLLS_EHOSTDOWN, PvmHostFail},
    {COLLS_ETOOMANY, PvmOutOfRes}, {COLLS_ENOBUFS, PvmOutOfRes},
    {COLLS_ETRUNC, PvmNoData},     {COLLS_EPROTO, PvmBadMsg},
    {COLLS_EBADMSG, PvmBadMsg},    {COLLS_EVERSION, PvmBadVersion},
    {COLLS_EEXIST, PvmExists},     {COLLS_ENOTSUP, PvmNotImpl},
    {COLLS_EMSGSIZE, PvmOverflow}, {COLLS_EMEMBER, PvmDupGroup},
    {COLLS_ECOUNT, PvmMismatch},   {COLLS_ESIZE, PvmMismatch},
    {COLLS_EFULL, PvmMismatch},    {COLLS_ECONNREFUSED, PvmSysErr},
    {COLLS_ENOTCONN, PvmSysErr},   {COLLS_ECONNLOST, PvmSysErr},
    {COLLS_ESHUTDOWN, PvmSysErr},  {COLLS_ETIMEDOUT, PvmSysErr},
    {COLLS_EIO, PvmSysErr},        {COLLS_ECANCELED, PvmSysErr},
    {COLLS_EAGAIN, PvmOutOfRes},
};

int
pvm__code(int err)
{
    size_t i;

    if (err >= 0)
        return err;
    for (i = 0; i < sizeof(pvm_codemap) / sizeof(pvm_codemap[0]); i++)
        if (pvm_codemap[i].colls == err)
            return pvm_codemap[i].pvm;
    return PvmSysErr;
}

static const char *
pvm_errtext(int code)
{
    size_t i;

    for (i = 0; i < sizeof(pvm_errtab) / sizeof(pvm_errtab[0]); i++)
        if (pvm_errtab[i].code == code)
            return pvm_errtab[i].text;
    return "Unknown error";
}

/* "libpvm [t40001]: " or, before attaching, "libpvm [pid123]: ". */
static void
pvm_logf(const char *fmt, ...)
{
    va_list ap;

    if (pvm__task.tid > 0)
        fprintf(stderr, "libpvm [t%x]: ", (unsigned)pvm__task.tid);
    else
        fprintf(stderr, "libpvm [pid%ld]: ", (long)getpid());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int
pvm__fail(const char *call, int code)
{
    pvm_errno = code;
    if (code < 0 && pvm__task.opts[PvmAutoErr] != 0)
        pvm_logf("%s(): %s", call, pvm_errtext(code));
    return code;
}

int
pvm_perror(char *msg)
{
    pvm_logf("%s: %s", msg != NULL ? msg : "(null)", pvm_errtext(pvm_errno));
    return 0;
}

char *
pvm_strerror(void)
{
    return (char *)pvm_errtext(pvm_errno);
}

/* Call names already logged as not implemented (one line per name). */
static const char *pvm_notimpl_seen[64];
static int pvm_notimpl_n;

int
pvm__notimpl(const char *call)
{
    int i;

    pvm_errno = PvmNotImpl;
    for (i = 0; i < pvm_notimpl_n; i++)
        if (strcmp(pvm_notimpl_seen[i], call) == 0)
            return PvmNotImpl;
    if (pvm_notimpl_n < 64)
        pvm_notimpl_seen[pvm_notimpl_n++] = call;
    pvm_logf("%s(): not implemented on collsd (PvmNotImpl)", call);
    return PvmNotImpl;
}

int
pvm__attach(const char *call)
{
    int rc;

    if (pvm__task.c != NULL)
        return 0;
    rc = colls_attach(NULL, &pvm__task.c);
    if (rc < 0) {
        pvm__task.c = NULL;
        return pvm__fail(call, PvmSysErr);
    }
    pvm__task.tid = (int)colls_mytid(pvm__task.c);
    if (pvm__task.opts[PvmRoute] == PvmRouteDirect)
        colls_set_route(pvm__task.c, COLLS_ROUTE_DIRECT);
    return 0;
}

colls_t *
pvm__colls(const char *call)
{
    return pvm__attach(call) == 0 ? pvm__task.c : NULL;
}

int
pvm_mytid(void)
{
    int rc = pvm__attach("pvm_mytid");

    return rc < 0 ? rc : pvm__task.tid;
}

char *
pvm_version(void)
{
    return PVM_VER;
}

/* ---- options ------------------------------------------------------------ */

/* Options that only PVM's daemon can honour (output and trace as
   messages to a collector task). */
static int
pvm_opt_daemon_only(int what)
{
    switch (what) {
    case PvmOutputTid:
    case PvmOutputCode:
    case PvmTraceTid:
    case PvmTraceCode:
    case PvmTraceBuffer:
    case PvmTraceOptions:
    case PvmSelfOutputTid:
    case PvmSelfOutputCode:
    case PvmSelfTraceTid:
    case PvmSelfTraceCode:
    case PvmSelfTraceBuffer:
    case PvmSelfTraceOptions:
    case PvmOutputContext:
    case PvmTraceContext:
    case PvmSelfOutputContext:
    case PvmSelfTraceContext:
        return 1;
    default:
        return 0;
    }
}

int
pvm_setopt(int what, int val)
{
    int old, rc;

    if (what < 1 || what > PvmNoReset)
        return pvm__fail("pvm_setopt", PvmBadParam);
    if (pvm_opt_daemon_only(what))
        return pvm__notimpl("pvm_setopt");
    old = pvm__task.opts[what];
    switch (what) {
    case PvmRoute:
        if (val != PvmDontRoute && val != PvmAllowDirect &&
            val != PvmRouteDirect)
            return pvm__fail("pvm_setopt", PvmBadParam);
        if (pvm__task.c != NULL) {
            rc = colls_set_route(pvm__task.c, val == PvmRouteDirect
                                                  ? COLLS_ROUTE_DIRECT
                                                  : COLLS_ROUTE_DEFAULT);
            if (rc < 0)
                return pvm__fail("pvm_setopt", pvm__code(rc));
        }
        break;
    case PvmDebugMask:
        pvm_logf("pvm_setopt(): debug mask 0x%x (collsd: COLLS_TRACE=1 "
                 "traces collectives; the daemon logs with --log-level)",
                 (unsigned)val);
        break;
    case PvmFragSize:
        if (val <= 0)
            return pvm__fail("pvm_setopt", PvmBadParam);
        break;
    default:
        break;
    }
    pvm__task.opts[what] = val;
    return old;
}

int
pvm_getopt(int what)
{
    if (what < 1 || what > PvmNoReset)
        return pvm__fail("pvm_getopt", PvmBadParam);
    if (pvm_opt_daemon_only(what))
        return pvm__notimpl("pvm_getopt");
    return pvm__task.opts[what];
}

/* ---- PVM daemon services collsd does not have -------------------------- */

#define PVM_NOTIMPL(name, params)                                              \
    int name params                                                            \
    {                                                                          \
        return pvm__notimpl(#name);                                            \
    }

/* clang-format off */
PVM_NOTIMPL(pvm_addmhf, (int src, int tag, int ctx, int (*f)(int)))
PVM_NOTIMPL(pvm_delmhf, (int mhid))
PVM_NOTIMPL(pvm_newcontext, (void))
PVM_NOTIMPL(pvm_freecontext, (int ctx))
PVM_NOTIMPL(pvm_putinfo, (char *name, int bufid, int flags))
PVM_NOTIMPL(pvm_recvinfo, (char *name, int index, int flags))
PVM_NOTIMPL(pvm_delinfo, (char *name, int index, int flags))
PVM_NOTIMPL(pvm_getmboxinfo, (char *pattern, int *nclasses,
                              struct pvmmboxinfo **classes))
PVM_NOTIMPL(pvm_insert, (char *name, int req, int data))
PVM_NOTIMPL(pvm_lookup, (char *name, int req, int *datap))
PVM_NOTIMPL(pvm_delete, (char *name, int req))
PVM_NOTIMPL(pvm_getfds, (int **fds))
PVM_NOTIMPL(pvm_getnoresets, (int **tids, int *ntids))
PVM_NOTIMPL(pvm_hostsync, (int host, struct timeval *sltime,
                           struct timeval *delta))
PVM_NOTIMPL(pvm_start_pvmd, (int argc, char **argv, int block))
PVM_NOTIMPL(pvm_reg_hoster, (void))
PVM_NOTIMPL(pvm_reg_rm, (struct pvmhostinfo **hip))
PVM_NOTIMPL(pvm_reg_tasker, (void))
PVM_NOTIMPL(pvm_reg_tracer, (int tctx, int ttag, int octx, int otag,
                             char *tmask, int tbuf, int topt))
PVM_NOTIMPL(pvm_tickle, (int narg, int *argp, int *nresp, int *resp))
PVM_NOTIMPL(pvm_getmwid, (int bufid))
PVM_NOTIMPL(pvm_setmwid, (int bufid, int waitid))
PVM_NOTIMPL(pvm_settmask, (int who, char *mask))
PVM_NOTIMPL(pvm_gettmask, (int who, char *mask))
PVM_NOTIMPL(pvm_pkmesg, (int bufid))
PVM_NOTIMPL(pvm_pkmesgbody, (int bufid))
PVM_NOTIMPL(pvm_upkmesg, (void))
PVM_NOTIMPL(pvm_setminfo, (int bufid, struct pvmminfo *info))
PVM_NOTIMPL(pvm_archcode, (char *arch))
/* clang-format on */

/* The base context is the only one: setting it is a no-op. */
int
pvm_getcontext(void)
{
    return PvmBaseContext;
}

int
pvm_setcontext(int ctx)
{
    if (ctx != PvmBaseContext)
        return pvm__notimpl("pvm_setcontext");
    return PvmBaseContext;
}

int (*pvm_recvf(int (*new)(int, int, int)))(int, int, int)
{
    (void)new;
    pvm__notimpl("pvm_recvf");
    return NULL;
}

char *
pvmgetrsh(void)
{
    pvm__notimpl("pvmgetrsh");
    return NULL;
}

char *
pvmgettmp(void)
{
    const char *t = getenv("TMPDIR");

    return (char *)(t != NULL ? t : "/tmp");
}

/* ---- libpvm3 helpers some PVM programs call (not in pvm3.h) ------------ */

int pvmdebmask;
int pvmsleep(int secs);
int pvmgetclock(struct timeval *tm);
int lpvmerr(const char *f, int n);

int
pvmsleep(int secs)
{
    return (int)sleep(secs > 0 ? (unsigned)secs : 0);
}

int
pvmgetclock(struct timeval *tm)
{
    return gettimeofday(tm, NULL);
}

/* libpvm3's error report: as a failing call of name f reports code n. */
int
lpvmerr(const char *f, int n)
{
    return pvm__fail(f, n);
}
