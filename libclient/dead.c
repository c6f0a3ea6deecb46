/*
 * dead.c -- what this task knows of dead tasks and down hosts
 * (docs/protocol.md §5), so that receives and sends naming them fail
 * instead of hanging.
 *
 * TASK_EXIT, SEND_FAILED and HOST_DOWN from the daemon (dispatched by
 * colls.c) end up here.  A dead tid is recorded in colls_t.dead, sorted
 * by tid, and the posted receives naming it fail with its status
 * (COLLS_EPEERDEAD, COLLS_ENOENT, or COLLS_EHOSTDOWN from SEND_FAILED),
 * once no queued message matches them.  A death is recorded only when
 * the connection layer does not hold it back (colls__direct_hold_death:
 * the dead task's direct connection may still carry its last messages);
 * it reports the death again through ops->dead when it may be recorded.
 * A host marked down is unmarked when a message from it arrives (a
 * restarted host is up again, p2p.c).  Sends fail early only to tasks
 * known to have exited (or never existed).
 *
 * API layer (internal.h): may call the connection layer (conn.h).
 */
#include <string.h>

#include "internal.h"

/* Fails every posted receive naming tid (hid < 0) or a task of host hid
   with status. */
static void
dead_fail_posted(colls_t *c, colls_tid_t tid, int hid, int status)
{
    struct list_node *n, *tmp;

    LIST_FOREACH_SAFE (n, tmp, &c->posted) {
        struct colls_req *r = list_entry(n, struct colls_req, link);
        if (r->src == (colls_tid_t)COLLS_ANY)
            continue;
        if ((hid < 0 && r->src == tid) ||
            (hid >= 0 && COLLS_TID_HID(r->src) == hid)) {
            list_del(&r->link);
            r->st.source = r->src;
            r->st.tag = r->tag;
            r->st.length = 0;
            r->result = status;
            r->done = 1;
        }
    }
}

/* Index of tid in c->dead, or where it would go (bsearch on tid). */
static size_t
dead_pos(const colls_t *c, colls_tid_t tid)
{
    size_t lo = 0, hi = c->dead.n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->dead.v[mid].tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/*
 * Records that tid is gone with status and fails the posted receives
 * naming it, unless the connection layer holds the death back (it calls
 * again through ops->dead).  Out of memory the record is skipped; the
 * posted receives still fail.
 */
void
colls__mark_dead(colls_t *c, colls_tid_t tid, int status)
{
    struct colls__deaths *d = &c->dead;
    size_t pos;

    if (colls__direct_hold_death(&c->conn, tid, status))
        return;
    pos = dead_pos(c, tid);
    if (pos < d->n && d->v[pos].tid == tid) {
        d->v[pos].status = status;
    } else if (colls__deaths_reserve(d) == 0) {
        memmove(d->v + pos + 1, d->v + pos, (d->n - pos) * sizeof(*d->v));
        d->v[pos].tid = tid;
        d->v[pos].status = status;
        d->n++;
    }
    dead_fail_posted(c, tid, -1, status);
}

/*
 * Records that host hid is down and fails receives naming its tasks.  The
 * records of its dead tasks go: the host mark covers them, and a restarted
 * host (new incarnation) may issue the same tids again.
 */
void
colls__mark_host_down(colls_t *c, int hid)
{
    size_t i, j = 0;

    if (hid <= 0 || hid >= (int)sizeof(c->host_down))
        return;
    c->host_down[hid] = 1;
    for (i = 0; i < c->dead.n; i++)
        if (COLLS_TID_HID(c->dead.v[i].tid) != hid)
            c->dead.v[j++] = c->dead.v[i];
    c->dead.n = j;
    dead_fail_posted(c, 0, hid, COLLS_EHOSTDOWN);
}

/* Why a receive from src cannot be satisfied, or 0 if it still can. */
int
colls__src_status(const colls_t *c, colls_tid_t src)
{
    size_t pos;

    if (src == (colls_tid_t)COLLS_ANY)
        return 0;
    pos = dead_pos(c, src);
    if (pos < c->dead.n && c->dead.v[pos].tid == src)
        return c->dead.v[pos].status;
    if (c->host_down[COLLS_TID_HID(src)])
        return COLLS_EHOSTDOWN;
    return 0;
}

/*
 * Why a send to dst is known to fail, or 0: only a task known to have
 * exited or never to have existed.  A host marked down may come back (a
 * restart), so sends to it go to the daemon, which answers SEND_FAILED.
 */
int
colls__dst_status(const colls_t *c, colls_tid_t dst)
{
    size_t pos;

    if (dst == (colls_tid_t)COLLS_ANY || COLLS_TID_HID(dst) == 0)
        return COLLS_EINVAL;
    pos = dead_pos(c, dst);
    if (pos < c->dead.n && c->dead.v[pos].tid == dst &&
        c->dead.v[pos].status != COLLS_EHOSTDOWN)
        return c->dead.v[pos].status;
    return 0;
}
