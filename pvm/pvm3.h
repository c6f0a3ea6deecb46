/*
 * pvm3.h -- the PVM 3.4 programming interface of collsd's compatibility
 * libraries: libpvm3 (tasks, messages, options, errors) and libgpvm3
 * (dynamic groups).  A PVM program builds unchanged with
 *
 *     cc prog.c -lgpvm3 -lpvm3
 *
 * and runs on the collsd virtual machine: its tids are collsd tids
 * (hid << 20 | local number), its messages are libcolls messages, its
 * groups are kept by the group server pvmgs and run collsd's collectives.
 * The numeric values below are PVM 3.4's, so code that stores or prints
 * them behaves as it did.  Calls that exist only for PVM's own daemon
 * (mailboxes, contexts, message handlers, resource managers, tracing)
 * answer PvmNotImpl and write one line to stderr naming the call;
 * docs/man/pvm3.3 lists them.
 */
#ifndef _PVM3_H_
#define _PVM3_H_

#include <stdio.h>
#include <sys/time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PVM_VER           "3.4.6"
#define PVM_MAJOR_VERSION 3
#define PVM_MINOR_VERSION 4
#define PVM_PATCH_VERSION 6

/* Encodings for pvm_initsend() and pvm_mkbuf(). */
#define PvmDataDefault 0 /* portable (XDR) */
#define PvmDataRaw     1 /* the sender's native bytes */
#define PvmDataInPlace                                                         \
    2 /* native bytes, read from the packed memory at send                     \
       */
#define PvmDataFoo   PvmDataDefault
#define PvmDataTrace 4 /* PVM's tracer encoding: not supported */

/* pvm_spawn() flags. */
#define PvmTaskDefault   0
#define PvmTaskHost      1  /* where names a host */
#define PvmTaskArch      2  /* where names an architecture */
#define PvmTaskDebug     4  /* ignored: no debugger start */
#define PvmTaskTrace     8  /* ignored: no tracing */
#define PvmMppFront      16 /* ignored */
#define PvmHostCompl     32 /* every host but where: not supported */
#define PvmNoSpawnParent 64 /* the children get no parent */

/* pvm_notify() events. */
#define PvmTaskExit     1
#define PvmHostDelete   2
#define PvmHostAdd      3
#define PvmRouteAdd     4
#define PvmRouteDelete  5
#define PvmNotifyCancel 256

/* pvm_setopt() / pvm_getopt() options and their values. */
#define PvmRoute             1
#define PvmDontRoute         1
#define PvmAllowDirect       2
#define PvmRouteDirect       3
#define PvmDebugMask         2
#define PvmAutoErr           3
#define PvmOutputTid         4
#define PvmOutputCode        5
#define PvmTraceTid          6
#define PvmTraceCode         7
#define PvmTraceBuffer       8
#define PvmTraceOptions      9
#define PvmTraceFull         1
#define PvmTraceTime         2
#define PvmTraceCount        3
#define PvmFragSize          10
#define PvmResvTids          11
#define PvmSelfOutputTid     12
#define PvmSelfOutputCode    13
#define PvmSelfTraceTid      14
#define PvmSelfTraceCode     15
#define PvmSelfTraceBuffer   16
#define PvmSelfTraceOptions  17
#define PvmShowTids          18
#define PvmPollType          19
#define PvmPollConstant      1
#define PvmPollSleep         2
#define PvmPollTime          20
#define PvmOutputContext     21
#define PvmTraceContext      22
#define PvmSelfOutputContext 23
#define PvmSelfTraceContext  24
#define PvmNoReset           25

/* pvm_settmask() / pvm_gettmask(). */
#define PvmTaskSelf  0
#define PvmTaskChild 1

#define PvmBaseContext 0

/* Mailbox flags (pvm_putinfo and friends: not supported). */
#define PvmMboxDefault          0
#define PvmMboxPersistent       1
#define PvmMboxMultiInstance    2
#define PvmMboxOverWritable     4
#define PvmMboxFirstAvail       8
#define PvmMboxReadAndDelete    16
#define PvmMboxWaitForInfo      32
#define PvmMboxMaxFlag          512
#define PvmMboxDirectIndexShift 10
#define PvmMboxMaxDirectIndex   ((1 << (31 - PvmMboxDirectIndexShift)) - 1)
#define PvmMboxDirectIndexOf(flags)                                            \
    (((flags) >> PvmMboxDirectIndexShift) & PvmMboxMaxDirectIndex)
#define PvmMboxDirectIndex(index)                                              \
    (((index)&PvmMboxMaxDirectIndex) << PvmMboxDirectIndexShift)

#define PVMNORESETCLASS "###_PVM_NO_RESET_###"
#define PVMHOSTERCLASS  "###_PVM_HOSTER_###"
#define PVMTASKERCLASS  "###_PVM_TASKER_###"
#define PVMTRACERCLASS  "###_PVM_TRACER_###"
#define PVMRMCLASS      "###_PVM_RM_###"

/* Error codes (PVM 3.4's values). */
#define PvmOk           0
#define PvmBadParam     -2
#define PvmMismatch     -3
#define PvmOverflow     -4
#define PvmNoData       -5
#define PvmNoHost       -6
#define PvmNoFile       -7
#define PvmDenied       -8
#define PvmNoMem        -10
#define PvmBadMsg       -12
#define PvmSysErr       -14
#define PvmNoBuf        -15
#define PvmNoSuchBuf    -16
#define PvmNullGroup    -17
#define PvmDupGroup     -18
#define PvmNoGroup      -19
#define PvmNotInGroup   -20
#define PvmNoInst       -21
#define PvmHostFail     -22
#define PvmNoParent     -23
#define PvmNotImpl      -24
#define PvmDSysErr      -25
#define PvmBadVersion   -26
#define PvmOutOfRes     -27
#define PvmDupHost      -28
#define PvmCantStart    -29
#define PvmAlready      -30
#define PvmNoTask       -31
#define PvmNotFound     -32
#define PvmExists       -33
#define PvmHostrNMstr   -34
#define PvmParentNotSet -35
#define PvmIPLoopback   -36
#define PvmNoEntry      PvmNotFound
#define PvmDupEntry     PvmDenied

/* Datatypes of pvm_psend, pvm_precv, pvm_reduce, pvm_gather, ... */
#define PVM_STR    0
#define PVM_BYTE   1
#define PVM_SHORT  2
#define PVM_INT    3
#define PVM_FLOAT  4
#define PVM_CPLX   5
#define PVM_DOUBLE 6
#define PVM_DCPLX  7
#define PVM_LONG   8
#define PVM_USHORT 9
#define PVM_UINT   10
#define PVM_ULONG  11

/* One host of pvm_config(); hi_tid is the host's daemon tid (hid << 20). */
struct pvmhostinfo {
    int hi_tid;
    char *hi_name;
    char *hi_arch;
    int hi_speed;
    int hi_dsig;
};

/* One task of pvm_tasks(). */
struct pvmtaskinfo {
    int ti_tid;
    int ti_ptid;
    int ti_host;
    int ti_flag;
    char *ti_a_out;
    int ti_pid;
};

/* pvm_getminfo() / pvm_setminfo(). */
struct pvmminfo {
    int len;
    int ctx;
    int tag;
    int wid;
    int enc;
    int crc;
    int src;
    int dst;
};

/* pvm_getmboxinfo(). */
struct pvmmboxinfo {
    char *mi_name;
    int mi_nentries;
    int *mi_indices;
    int *mi_owners;
    int *mi_flags;
};

#define PVMTMPNAMLEN 128

/* ---- libpvm3 ------------------------------------------------------------ */

/* Tasks and the machine. */
int pvm_mytid(void);
int pvm_parent(void);
int pvm_exit(void);
int pvm_spawn(char *file, char **argv, int flag, char *where, int ntask,
              int *tids);
int pvm_kill(int tid);
int pvm_pstat(int tid);
int pvm_mstat(char *host);
int pvm_tasks(int where, int *ntask, struct pvmtaskinfo **taskp);
int pvm_config(int *nhost, int *narch, struct pvmhostinfo **hostp);
int pvm_addhosts(char **hosts, int nhost, int *infos);
int pvm_delhosts(char **hosts, int nhost, int *infos);
int pvm_notify(int what, int msgtag, int cnt, int *tids);
int pvm_catchout(FILE *ff);
int pvm_tidtohost(int tid);
int pvm_siblings(int **tids);
int pvm_halt(void);
int pvm_archcode(char *arch);
char *pvm_version(void);

/* Message buffers. */
int pvm_initsend(int encoding);
int pvm_mkbuf(int encoding);
int pvm_freebuf(int bufid);
int pvm_setsbuf(int bufid);
int pvm_setrbuf(int bufid);
int pvm_getsbuf(void);
int pvm_getrbuf(void);
int pvm_bufinfo(int bufid, int *bytes, int *msgtag, int *tid);

/* Packing: nitem items, every stride-th one. */
int pvm_pkbyte(char *cp, int nitem, int stride);
int pvm_pkcplx(float *xp, int nitem, int stride);
int pvm_pkdcplx(double *zp, int nitem, int stride);
int pvm_pkdouble(double *dp, int nitem, int stride);
int pvm_pkfloat(float *fp, int nitem, int stride);
int pvm_pkint(int *np, int nitem, int stride);
int pvm_pklong(long *np, int nitem, int stride);
int pvm_pkshort(short *np, int nitem, int stride);
int pvm_pkuint(unsigned int *np, int nitem, int stride);
int pvm_pkulong(unsigned long *np, int nitem, int stride);
int pvm_pkushort(unsigned short *np, int nitem, int stride);
int pvm_pkstr(char *cp);
int pvm_upkbyte(char *cp, int nitem, int stride);
int pvm_upkcplx(float *xp, int nitem, int stride);
int pvm_upkdcplx(double *zp, int nitem, int stride);
int pvm_upkdouble(double *dp, int nitem, int stride);
int pvm_upkfloat(float *fp, int nitem, int stride);
int pvm_upkint(int *np, int nitem, int stride);
int pvm_upklong(long *np, int nitem, int stride);
int pvm_upkshort(short *np, int nitem, int stride);
int pvm_upkuint(unsigned int *np, int nitem, int stride);
int pvm_upkulong(unsigned long *np, int nitem, int stride);
int pvm_upkushort(unsigned short *np, int nitem, int stride);
int pvm_upkstr(char *cp);
int pvm_packf(const char *fmt, ...);
int pvm_unpackf(const char *fmt, ...);
int pvm_pkmesg(int bufid);
int pvm_pkmesgbody(int bufid);
int pvm_upkmesg(void);

/* Sending and receiving. */
int pvm_send(int tid, int msgtag);
int pvm_mcast(int *tids, int ntask, int msgtag);
int pvm_psend(int tid, int msgtag, void *buf, int len, int datatype);
int pvm_recv(int tid, int msgtag);
int pvm_nrecv(int tid, int msgtag);
int pvm_trecv(int tid, int msgtag, struct timeval *tmout);
int pvm_probe(int tid, int msgtag);
int pvm_precv(int tid, int msgtag, void *buf, int len, int datatype, int *rtid,
              int *rtag, int *rlen);
int (*pvm_recvf(int (*new)(int, int, int)))(int, int, int);
int pvm_getminfo(int bufid, struct pvmminfo *info);
int pvm_setminfo(int bufid, struct pvmminfo *info);
int pvm_sendsig(int tid, int signum);

/* Options and errors. */
int pvm_setopt(int what, int val);
int pvm_getopt(int what);
int pvm_perror(char *msg);
char *pvm_strerror(void);
int pvm_settmask(int who, char *mask);
int pvm_gettmask(int who, char *mask);

/* Answered PvmNotImpl on collsd (PVM daemon services). */
int pvm_addmhf(int src, int tag, int ctx, int (*f)(int));
int pvm_delmhf(int mhid);
int pvm_newcontext(void);
int pvm_setcontext(int ctx);
int pvm_getcontext(void);
int pvm_freecontext(int ctx);
int pvm_putinfo(char *name, int bufid, int flags);
int pvm_recvinfo(char *name, int index, int flags);
int pvm_delinfo(char *name, int index, int flags);
int pvm_getmboxinfo(char *pattern, int *nclasses, struct pvmmboxinfo **classes);
int pvm_insert(char *name, int req, int data);
int pvm_lookup(char *name, int req, int *datap);
int pvm_delete(char *name, int req);
int pvm_export(char *name);
int pvm_unexport(char *name);
int pvm_getfds(int **fds);
int pvm_getnoresets(int **tids, int *ntids);
int pvm_hostsync(int host, struct timeval *sltime, struct timeval *delta);
int pvm_start_pvmd(int argc, char **argv, int block);
int pvm_reg_hoster(void);
int pvm_reg_rm(struct pvmhostinfo **hip);
int pvm_reg_tasker(void);
int pvm_reg_tracer(int tctx, int ttag, int octx, int otag, char *tmask,
                   int tbuf, int topt);
int pvm_tickle(int narg, int *argp, int *nresp, int *resp);
int pvm_getmwid(int bufid);
int pvm_setmwid(int bufid, int waitid);
char *pvmgetrsh(void);
char *pvmgettmp(void);

/* ---- libgpvm3 ----------------------------------------------------------- */

int pvm_joingroup(char *group);
int pvm_lvgroup(char *group);
int pvm_getinst(char *group, int tid);
int pvm_gettid(char *group, int inst);
int pvm_gsize(char *group);
int pvm_freezegroup(char *group, int size);
int pvm_barrier(char *group, int count);
int pvm_bcast(char *group, int msgtag);
int pvm_reduce(void (*func)(int *, void *, void *, int *, int *), void *data,
               int count, int datatype, int msgtag, char *group, int root);
int pvm_gather(void *result, void *data, int count, int datatype, int msgtag,
               char *group, int root);
int pvm_scatter(void *result, void *data, int count, int datatype, int msgtag,
                char *group, int root);

/* The predefined reduction functions: x[i] = x[i] op y[i]. */
void PvmMax(int *datatype, void *x, void *y, int *num, int *info);
void PvmMin(int *datatype, void *x, void *y, int *num, int *info);
void PvmSum(int *datatype, void *x, void *y, int *num, int *info);
void PvmProduct(int *datatype, void *x, void *y, int *num, int *info);

#ifdef __cplusplus
}
#endif
#endif /* _PVM3_H_ */
