/*
 * pvmmsg.c -- sending and receiving PVM messages through libcolls:
 * pvm_send, pvm_mcast, pvm_psend, pvm_recv, pvm_nrecv, pvm_trecv,
 * pvm_probe, pvm_precv, and pvm_notify.
 *
 * A received message becomes a new buffer and the active receive buffer;
 * the previous active receive buffer is freed, as PVM does.  pvm_probe
 * answers with a placeholder buffer (source, tag, length for
 * pvm_bufinfo) that the next probe replaces.
 *
 * Notifications: collsd's daemon sends big-endian u32s {what, who[,
 * status]}; PVM programs unpack an int.  A message from a daemon tid with
 * the tag of a pvm_notify() of this task is rewritten on receipt into
 * PVM's layout: PvmTaskExit the tid, PvmHostDelete the host's daemon tid,
 * PvmHostAdd a count (1) and the new host's daemon tid, packed as ints in
 * the default encoding.  PvmHostAdd messages beyond the count asked for
 * are dropped.
 *
 * The group library's own messages (tags PVMGS_TAG_MIN..MAX, pvmgs.h) are
 * never a program's: once libgpvm3 is in use, a receive or probe that
 * meets one hands it to libgpvm3 (pvm__task.groups_msg) and goes on.
 */
#include <stdlib.h>
#include <string.h>

#include "pvmgs.h"
#include "pvmint.h"

/* The probe placeholder of the last pvm_probe (0: none). */
static int pvm_probe_buf;

int
pvm__groups_tag(int tag)
{
    return pvm__task.groups_msg != NULL && tag >= PVMGS_TAG_MIN &&
           tag <= PVMGS_TAG_MAX;
}

int
pvm_send(int tid, int msgtag)
{
    colls_t *c = pvm__colls("pvm_send");
    struct pvm__buf *b = pvm__buf_get(pvm__task.sbuf);
    int rc;

    if (c == NULL)
        return PvmSysErr;
    if (b == NULL || b->m == NULL)
        return pvm__fail("pvm_send", PvmNoBuf);
    if (tid <= 0 || msgtag < 0)
        return pvm__fail("pvm_send", PvmBadParam);
    rc = colls_msg_send(c, (colls_tid_t)tid, msgtag, b->m);
    return rc < 0 ? pvm__fail("pvm_send", pvm__code(rc)) : PvmOk;
}

int
pvm_mcast(int *tids, int ntask, int msgtag)
{
    colls_t *c = pvm__colls("pvm_mcast");
    struct pvm__buf *b = pvm__buf_get(pvm__task.sbuf);
    int i, rc, first = 0;

    if (c == NULL)
        return PvmSysErr;
    if (b == NULL || b->m == NULL)
        return pvm__fail("pvm_mcast", PvmNoBuf);
    if (ntask < 0 || (tids == NULL && ntask > 0) || msgtag < 0)
        return pvm__fail("pvm_mcast", PvmBadParam);
    for (i = 0; i < ntask; i++) {
        if (tids[i] == pvm__task.tid)
            continue;
        rc = colls_msg_send(c, (colls_tid_t)tids[i], msgtag, b->m);
        if (rc < 0 && first == 0)
            first = pvm__code(rc);
    }
    return first < 0 ? pvm__fail("pvm_mcast", first) : PvmOk;
}

int
pvm_psend(int tid, int msgtag, void *buf, int len, int datatype)
{
    colls_t *c = pvm__colls("pvm_psend");
    colls_msg_t *m;
    int per, cd, rc;

    if (c == NULL)
        return PvmSysErr;
    cd = datatype == PVM_STR ? COLLS_BYTE : pvm__dtype(datatype, &per);
    if (datatype == PVM_STR || datatype == PVM_BYTE) {
        cd = COLLS_BYTE;
        per = 1;
    }
    if (cd < 0 || len < 0 || (buf == NULL && len > 0) || tid <= 0 || msgtag < 0)
        return pvm__fail("pvm_psend", PvmBadParam);
    m = colls_msg_new(COLLS_ENC_INPLACE);
    if (m == NULL)
        return pvm__fail("pvm_psend", PvmNoMem);
    rc = colls_pack(m, cd, buf, (size_t)len * (size_t)per);
    if (rc == 0)
        rc = colls_msg_send(c, (colls_tid_t)tid, msgtag, m);
    colls_msg_free(m);
    return rc < 0 ? pvm__fail("pvm_psend", pvm__code(rc)) : PvmOk;
}

/* The registration of tag for a notification of kind what, or NULL. */
static struct pvm__notify *
pvm_notify_find(int what, int tag)
{
    int i;

    for (i = 0; i < pvm__task.nnotifies; i++)
        if (pvm__task.notifies[i].tag == tag &&
            (what == 0 || pvm__task.notifies[i].what == what))
            return &pvm__task.notifies[i];
    return NULL;
}

/*
 * Rewrites *mp when it is a daemon's notification for this task: 1 kept
 * (maybe rewritten), 0 to drop (a PvmHostAdd beyond its count).
 */
static int
pvm_notify_rewrite(colls_msg_t **mp, colls_status_t *st)
{
    colls_status_t nst;
    uint32_t v[3];
    int out[2], nout;
    size_t n = st->length / 4;
    struct pvm__notify *nf;
    colls_msg_t *nm;

    if (COLLS_TID_LOCAL(st->source) != 0 || n < 2 || n > 3 ||
        st->length % 4 != 0 || (nf = pvm_notify_find(0, st->tag)) == NULL)
        return 1;
    if (colls_unpack(*mp, COLLS_UINT32, v, n) < 0)
        return 1;
    switch (v[0]) {
    case COLLS_NOTIFY_TASK_EXIT:
        out[0] = (int)v[1];
        nout = 1;
        break;
    case COLLS_NOTIFY_HOST_DOWN:
        out[0] = (int)COLLS_DAEMON_TID(v[1]);
        nout = 1;
        break;
    case COLLS_NOTIFY_HOST_ADD:
        nf = pvm_notify_find(PvmHostAdd, st->tag);
        if (nf == NULL || nf->left == 0)
            return 0;
        if (nf->left > 0)
            nf->left--;
        out[0] = 1;
        out[1] = (int)COLLS_DAEMON_TID(v[1]);
        nout = 2;
        break;
    default:
        return 1;
    }
    nm = colls_msg_new(COLLS_ENC_DEFAULT);
    if (nm == NULL || colls_pack(nm, COLLS_INT32, out, (size_t)nout) < 0) {
        colls_msg_free(nm);
        return 1;
    }
    colls_msg_free(*mp);
    *mp = nm;
    colls_msg_info(nm, &nst);
    st->length = nst.length;
    return 1;
}

/*
 * Receives the next message from tid with msgtag (-1: any): ms < 0 waits,
 * 0 only looks, > 0 waits that many milliseconds.  1 with *mp and *st, 0
 * when nothing came, or a PVM code.
 */
static int
pvm_recv_msg(const char *call, int tid, int msgtag, int ms, colls_msg_t **mp,
             colls_status_t *st)
{
    colls_t *c = pvm__colls(call);
    colls_tid_t src = tid == -1 ? (colls_tid_t)COLLS_ANY : (colls_tid_t)tid;
    int tag = msgtag == -1 ? COLLS_ANY : msgtag, rc;

    if (c == NULL)
        return PvmSysErr;
    if (tid < -1 || tid == 0 || msgtag < -1)
        return pvm__fail(call, PvmBadParam);
    for (;;) {
        if (ms == 0) {
            rc = colls_probe(c, src, tag, 0, st);
            if (rc <= 0)
                return rc < 0 ? pvm__fail(call, pvm__code(rc)) : 0;
        } else if (ms > 0) {
            colls_set_timeout(c, ms);
        }
        rc = colls_msg_recv(c, src, tag, mp);
        if (ms > 0)
            colls_set_timeout(c, -1);
        if (rc == COLLS_ETIMEDOUT && ms > 0)
            return 0;
        if (rc < 0)
            return pvm__fail(call, pvm__code(rc));
        colls_msg_info(*mp, st);
        if (pvm__groups_tag(st->tag)) {
            pvm__task.groups_msg(*mp, st);
            *mp = NULL;
            continue;
        }
        if (pvm_notify_rewrite(mp, st))
            break;
        colls_msg_free(*mp);
        *mp = NULL;
    }
    return 1;
}

/* pvm_recv and friends: the message as the new active receive buffer. */
static int
pvm_recv_buf(const char *call, int tid, int msgtag, int ms)
{
    colls_msg_t *m = NULL;
    colls_status_t st;
    int rc, id;

    rc = pvm_recv_msg(call, tid, msgtag, ms, &m, &st);
    if (rc <= 0)
        return rc;
    if (pvm__task.rbuf > 0)
        pvm_freebuf(pvm__task.rbuf);
    id = pvm__buf_add(m, PvmDataDefault, (int)st.source, st.tag, st.length);
    if (id < 0)
        return pvm__fail(call, id);
    pvm__task.rbuf = id;
    return id;
}

int
pvm_recv(int tid, int msgtag)
{
    return pvm_recv_buf("pvm_recv", tid, msgtag, -1);
}

int
pvm_nrecv(int tid, int msgtag)
{
    return pvm_recv_buf("pvm_nrecv", tid, msgtag, 0);
}

int
pvm_trecv(int tid, int msgtag, struct timeval *tmout)
{
    long ms;

    if (tmout == NULL)
        return pvm_recv_buf("pvm_trecv", tid, msgtag, -1);
    if (tmout->tv_sec < 0 || tmout->tv_usec < 0)
        return pvm__fail("pvm_trecv", PvmBadParam);
    ms = (long)tmout->tv_sec * 1000 + (tmout->tv_usec + 999) / 1000;
    if (ms > 0x7fffffffL)
        ms = 0x7fffffffL;
    return pvm_recv_buf("pvm_trecv", tid, msgtag, (int)ms);
}

int
pvm_probe(int tid, int msgtag)
{
    colls_t *c = pvm__colls("pvm_probe");
    colls_msg_t *m;
    colls_status_t st;
    int rc;

    if (c == NULL)
        return PvmSysErr;
    if (tid < -1 || tid == 0 || msgtag < -1)
        return pvm__fail("pvm_probe", PvmBadParam);
    for (;;) {
        rc = colls_probe(c,
                         tid == -1 ? (colls_tid_t)COLLS_ANY : (colls_tid_t)tid,
                         msgtag == -1 ? COLLS_ANY : msgtag, 0, &st);
        if (rc <= 0 || !pvm__groups_tag(st.tag))
            break;
        /* libgpvm3's own message: taken out of the program's way */
        if (colls_msg_recv(c, st.source, st.tag, &m) == 0)
            pvm__task.groups_msg(m, &st);
    }
    if (rc < 0)
        return pvm__fail("pvm_probe", pvm__code(rc));
    if (rc == 0)
        return 0;
    if (pvm__buf_get(pvm_probe_buf) != NULL &&
        pvm__buf_get(pvm_probe_buf)->m == NULL)
        pvm_freebuf(pvm_probe_buf);
    pvm_probe_buf =
        pvm__buf_add(NULL, PvmDataDefault, (int)st.source, st.tag, st.length);
    return pvm_probe_buf;
}

int
pvm_precv(int tid, int msgtag, void *buf, int len, int datatype, int *rtid,
          int *rtag, int *rlen)
{
    colls_msg_t *m = NULL;
    colls_status_t st;
    size_t esz = datatype == PVM_STR ? 1 : pvm__dtsize(datatype), n;
    int per, cd, rc;

    cd = pvm__dtype(datatype, &per);
    if (datatype == PVM_STR || datatype == PVM_BYTE) {
        cd = COLLS_BYTE;
        per = 1;
    }
    if (cd < 0 || esz == 0 || len < 0 || (buf == NULL && len > 0))
        return pvm__fail("pvm_precv", PvmBadParam);
    rc = pvm_recv_msg("pvm_precv", tid, msgtag, -1, &m, &st);
    if (rc < 0)
        return rc;
    n = st.length / esz;
    if (n > (size_t)len)
        n = (size_t)len;
    rc = colls_unpack(m, cd, buf, n * (size_t)per);
    colls_msg_free(m);
    if (rtid != NULL)
        *rtid = (int)st.source;
    if (rtag != NULL)
        *rtag = st.tag;
    if (rlen != NULL)
        *rlen = (int)(st.length / esz);
    return rc < 0 ? pvm__fail("pvm_precv", pvm__code(rc)) : PvmOk;
}

int
pvm_notify(int what, int msgtag, int cnt, int *tids)
{
    colls_t *c = pvm__colls("pvm_notify");
    struct pvm__notify *nf, *nn;
    int i, rc = 0;

    if (c == NULL)
        return PvmSysErr;
    if (what & PvmNotifyCancel)
        return pvm__notimpl("pvm_notify(PvmNotifyCancel)");
    if (what == PvmRouteAdd || what == PvmRouteDelete)
        return pvm__notimpl("pvm_notify(PvmRouteAdd/PvmRouteDelete)");
    if ((what != PvmTaskExit && what != PvmHostDelete && what != PvmHostAdd) ||
        msgtag < 0 ||
        (what != PvmHostAdd && (cnt < 0 || (tids == NULL && cnt > 0))))
        return pvm__fail("pvm_notify", PvmBadParam);
    nf = pvm_notify_find(what, msgtag);
    if (nf == NULL) {
        nn = realloc(pvm__task.notifies,
                     (size_t)(pvm__task.nnotifies + 1) * sizeof(*nn));
        if (nn == NULL)
            return pvm__fail("pvm_notify", PvmNoMem);
        pvm__task.notifies = nn;
        nf = &nn[pvm__task.nnotifies++];
        nf->what = what;
        nf->tag = msgtag;
        nf->left = -1;
        if (what == PvmHostAdd)
            rc = colls_notify(c, COLLS_NOTIFY_HOST_ADD, 0, msgtag);
    }
    if (what == PvmHostAdd) {
        /* the count replaces every earlier one, as in PVM */
        for (i = 0; i < pvm__task.nnotifies; i++)
            if (pvm__task.notifies[i].what == PvmHostAdd)
                pvm__task.notifies[i].left = cnt;
    }
    for (i = 0; what != PvmHostAdd && i < cnt && rc == 0; i++) {
        if (what == PvmTaskExit)
            rc = colls_notify(c, COLLS_NOTIFY_TASK_EXIT, tids[i], msgtag);
        else
            rc = colls_notify(c, COLLS_NOTIFY_HOST_DOWN, COLLS_TID_HID(tids[i]),
                              msgtag);
    }
    return rc < 0 ? pvm__fail("pvm_notify", pvm__code(rc)) : PvmOk;
}
