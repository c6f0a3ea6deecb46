/*
 * pvmgs.h -- the protocol between libgpvm3 and the group server pvmgs.
 *
 * A request is a message with tag PVMGS_TAG_REQ in the default encoding:
 * int op, string group (int length with the NUL, then the bytes), int
 * arg.  The server answers with tag PVMGS_TAG_REP: int result (>= 0 or a
 * PVM error code), and for PVMGS_MEMBERS and PVMGS_FREEZE also int frozen,
 * int generation, int n, then n ints: the tid of each instance number
 * (0 where no task holds it).  The generation changes with every join and
 * leave; a collsd group formed for one membership is named after it.
 * Requests are answered in order, except PVMGS_BARRIER and PVMGS_FREEZE,
 * answered when enough members have called them, every waiter with the
 * same member table.  After a join or a leave, before answering it, the
 * server sends each remaining member a PVMGS_TAG_GEN message: string
 * group, int generation; a member that holds the table of an older
 * generation stops trusting it.
 */
#ifndef PVMGS_H
#define PVMGS_H

#include <stdlib.h>
#include <string.h>

#include "colls.h"

#define PVMGS_NAME     "pvmgs" /* program name clients look for */
#define PVMGS_TAG_REQ  0x7ffff001
#define PVMGS_TAG_REP  0x7ffff002
#define PVMGS_TAG_EXIT 0x7ffff003 /* the server's task-exit notifications */
#define PVMGS_TAG_GEN  0x7ffff004 /* to members: the group changed */
/* Tags PVMGS_TAG_MIN..MAX are the group library's own: libpvm3's receives
   hand them to it, never to the program. */
#define PVMGS_TAG_MIN 0x7ffff001
#define PVMGS_TAG_MAX 0x7ffff004
#define PVMGS_LOCK    "pvmgs" /* collsd group of size 1: the one server */

enum {
    PVMGS_JOIN = 1, /* arg unused; result: instance number */
    PVMGS_LEAVE,    /* result: 0 */
    PVMGS_GETINST,  /* arg: tid; result: instance number */
    PVMGS_GETTID,   /* arg: instance; result: tid */
    PVMGS_GSIZE,    /* result: members */
    PVMGS_MEMBERS,  /* result: 0, then the member table */
    PVMGS_FREEZE,   /* arg: size or -1; answered once frozen, as MEMBERS */
    PVMGS_BARRIER   /* arg: count or -1; answered when count arrived, as
                       MEMBERS */
};

#define PVMGS_NAME_MAX 255

/* Packs a string as pvm_pkstr does: int length with the NUL, the bytes. */
static inline int
pvmgs_pkstr(colls_msg_t *m, const char *s)
{
    int32_t n = (int32_t)strlen(s) + 1;
    int rc = colls_pack(m, COLLS_INT32, &n, 1);

    return rc < 0 ? rc : colls_pack(m, COLLS_BYTE, s, (size_t)n);
}

/* Unpacks such a string into s (cap bytes): 0, or a COLLS_E* code. */
static inline int
pvmgs_upkstr(colls_msg_t *m, char *s, size_t cap)
{
    int32_t n;
    int rc = colls_unpack(m, COLLS_INT32, &n, 1);

    if (rc < 0)
        return rc;
    if (n < 1 || (size_t)n > cap)
        return COLLS_EMSGSIZE;
    rc = colls_unpack(m, COLLS_BYTE, s, (size_t)n);
    s[n - 1] = '\0';
    return rc;
}

#endif /* PVMGS_H */
