/*
 * pvmint.h -- what the files of libpvm3 and libgpvm3 share: the one
 * attached task of the process, the message buffer table, the mapping of
 * COLLS_E* codes to PVM's, and the PvmNotImpl log.
 *
 * State: PVM's interface has no handle, so the process has one task
 * (pvm__task): attached by the first call that needs the daemon, detached
 * by pvm_exit().  Buffer ids index pvm__task.bufs; 0 is "no buffer".  The
 * active send and receive buffers are ids into that table.  A buffer owns
 * its colls_msg_t.  Nothing here is thread-safe, as in PVM.
 *
 * Layer: libpvm3 and libgpvm3 sit on libcolls' public API (colls.h) only;
 * names starting pvm__ are internal and not part of pvm3.h.
 */
#ifndef PVMINT_H
#define PVMINT_H

#include <stddef.h>

#include "colls.h"
#include "pvm3.h"

/* A message buffer of pvm_mkbuf / pvm_recv / pvm_probe. */
struct pvm__buf {
    int used;
    colls_msg_t *m; /* NULL for a probe's placeholder */
    int encoding;   /* PvmData* */
    int src, tag;   /* received: who sent it, with which tag */
    size_t len;     /* received or probed: packed length */
    void **owned;   /* memory an in-place message refers to (pvm_pkstr) */
    int nowned;
};

/* One pvm_notify(PvmHostAdd) or other registration seen from here. */
struct pvm__notify {
    int what; /* PvmTaskExit, PvmHostDelete, PvmHostAdd */
    int tag;
    int left; /* PvmHostAdd messages still to deliver; -1: forever */
};

struct pvm__task {
    colls_t *c;
    int tid;
    struct pvm__buf *bufs;
    int nbufs;
    int sbuf, rbuf;
    int opts[PvmNoReset + 1]; /* pvm_setopt values by option */
    struct pvm__notify *notifies;
    int nnotifies;
    /* pvm_tasks() and pvm_config() results, valid until the next call */
    struct pvmtaskinfo *tinfo;
    int ntinfo;
    struct pvmhostinfo *hinfo;
    int nhinfo;
    /* libgpvm3's cleanup, run by pvm_exit() before detaching (NULL if
       no group call was made) */
    void (*groups_exit)(void);
    /* libgpvm3's own messages (tags PVMGS_TAG_MIN..MAX, pvmgs.h): a
       receive that gets one hands it here (m taken over) and goes on */
    void (*groups_msg)(colls_msg_t *m, const colls_status_t *st);
};

/* Is tag one of libgpvm3's own, when libgpvm3 is in use? */
int pvm__groups_tag(int tag);

extern struct pvm__task pvm__task;
/* The last error code (PVM's libpvm3 has it too). */
extern int pvm_errno;

/* Attaches when not yet attached: 0 or a PVM code (PvmSysErr). */
int pvm__attach(const char *call);
/* The libcolls handle, attaching first; NULL when that failed. */
colls_t *pvm__colls(const char *call);
/* PVM's code for COLLS_E* code err (0 for 0). */
int pvm__code(int err);
/* Records code as pvm_errno, prints it when PvmAutoErr is on; returns it. */
int pvm__fail(const char *call, int code);
/* Writes "libpvm [t..]: call: not implemented on collsd" once per call
   name and returns PvmNotImpl. */
int pvm__notimpl(const char *call);
/* A new buffer around message m (taken over) with encoding enc: its id, or
   PvmNoMem (m freed). */
int pvm__buf_add(colls_msg_t *m, int enc, int src, int tag, size_t len);
/* Frees what buffer b holds (message, owned memory) and clears it. */
void pvm__buf_clear(struct pvm__buf *b);
/* The buffer of id, or NULL. */
struct pvm__buf *pvm__buf_get(int id);
/* colls datatype and items per element for PVM datatype dt; -1 if none. */
int pvm__dtype(int dt, int *per);
/* Bytes per element of PVM datatype dt (0 for an invalid one). */
size_t pvm__dtsize(int dt);

#endif /* PVMINT_H */
