/*
 * task.c -- the task server.
 *
 * Each connection is a struct task moving through enum task_state:
 * HANDSHAKE (waiting for ATTACH_REQ) -> ACTIVE (has a tid) -> CLOSING
 * (error written, then closed) -> DEAD (on the graveyard, freed from the
 * loop by task_reap).  Only ACTIVE tasks are in the tid hash, so nothing is
 * delivered to a task after it left ACTIVE.
 *
 * Input: bytes are read into t->in and whole frames are handed to
 * d->task_ops->frame (route_task_input).  A frame larger than the read buffer
 * is read straight into its own allocation (t->big, sized after frame_peek
 * validated both lengths against the limits), which then travels on with the
 * message without another copy.  A malformed frame gets ERROR and the
 * connection closes.
 *
 * Output: a list of struct task_out written with writev.  Writing is tried
 * at once when the queue was empty, else on EV_WRITE.
 *
 * Shared memory (shm.c, docs/architecture.md): a task may offer a channel
 * with its ATTACH_REQ (descriptors read with recvmsg while in HANDSHAKE).
 * Once accepted, the bytes the socket would carry go through the rings
 * instead: input is copied from the request ring into t->in (or t->big)
 * exactly where read() would put it, and output from the queue into the
 * completion ring where writev() would take it, so framing, limits,
 * back-pressure and credit are the same code for both.  The socket stays
 * open: its end means the task is gone (the request ring is drained
 * first), and an ERROR about a corrupt ring goes there.  A ring index out
 * of bounds fails the task alone (counted: shm_bad).  A full completion
 * ring waits for the task's doorbell as a full socket waits for EV_WRITE.
 *
 * Bounded output (docs/protocol.md, "Memory bounds").  Nothing queued to
 * a task is dropped, and no task is closed for being slow; instead the
 * producers of its output stop being read:
 *   - the task itself: before each of its frames is dispatched, a task
 *     with more than --task-queue-max queued towards it pauses on its own
 *     queue (replies, echoes, DATA to itself, notifications and results
 *     of what it asked for), until the queue is below half of that;
 *   - local senders: route.c pauses them on the destination's queue
 *     (task_pause_on_task) or on the transport's (task_pause_on_host);
 *   - other daemons: DATA they forward (task_queue_peer) is bounded by
 *     the credit they hold for this task (--task-credit, route.c).  As
 *     such a frame is wholly written, its cost is owed back to the
 *     sending daemon (t->credits) and returned in a CREDIT message once
 *     half a window is owed, or by the cron when the task went quiet.
 *
 * Broadcast notices (TASK_EXIT of a task anywhere, HOST_DOWN) go to
 * every task whether it reads or not, so they are not queued to a task
 * over --task-queue-max, nor to one that missed earlier ones: they are
 * kept once, packed, in a ring of the last TASK_NOTICES (d->notices,
 * shared by all tasks), and each task has a cursor (t->notice_next).  A
 * task gets the notices it missed, in order, once it has written its
 * queue down to half the limit (task_notice_catch_up).  One that lags by
 * more than the ring loses the oldest (counted: notices_lost, and
 * logged).  So a task that never reads costs its daemon at most the
 * queue limit, however many tasks exit.
 *
 * Access: access.c owns the listening socket and decides each
 * connection's rights (t->rights: attach only, or attach and change the
 * machine, which admin.c checks), then hands it over with task_adopt.  A
 * graceful shutdown tells every task COLLS_ESHUTDOWN before closing, so
 * that the library can tell a daemon that stops from one that died
 * (docs/protocol.md).
 *
 * May call: net (net_kick, net_queued, net_send_credit), platform, log,
 * proto/.  Never route, host, group, coll or admin: frames and exits go
 * up through d->task_ops, installed by collsd.c.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <event2/event.h>

#include "colls.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/log.h"
#include "daemon/net.h"
#include "daemon/platform.h"
#include "daemon/shm.h"
#include "daemon/task.h"
#include "proto/envelope.h"
#include "proto/frame.h"

#define TASK_READ_CHUNK   (64u * 1024) /* bytes per read into t->in */
#define TASK_IOV_MAX      64           /* iovecs per writev */
#define TASK_CLOSING_US   2000000u     /* give up flushing an error */
#define TASK_HANDSHAKE_US 10000000u    /* attach within this time */

static const char *const task_state_names[TASK_STATE_MAX] = {
    "handshake",
    "active",
    "closing",
    "dead",
};

static void task_read_cb(evutil_socket_t fd, short what, void *arg);
static void task_write_cb(evutil_socket_t fd, short what, void *arg);
static void task_append(struct task *t, struct task_out *o, int credit_hid,
                        uint64_t credit);
static void task_notice_catch_up(struct task *t);
static void task_process_input(struct task *t);
static void task_credit_owe(struct task *t, int hid, uint64_t bytes);
static void task_shm_read(struct task *t);
static void task_shm_cb(evutil_socket_t fd, short what, void *arg);

const char *
task_state_name(int state)
{
    return state >= 0 && state < TASK_STATE_MAX ? task_state_names[state] : "?";
}

static unsigned
task_bucket(uint32_t tid)
{
    return (tid ^ (tid >> 10)) % DAEMON_TASK_BUCKETS;
}

struct task *
task_find(struct daemon *d, uint32_t tid)
{
    struct task *t;

    for (t = d->task_hash[task_bucket(tid)]; t != NULL; t = t->hnext)
        if (t->tid == tid)
            return t;
    return NULL;
}

static void
task_hash_remove(struct task *t)
{
    struct task **pp = &t->d->task_hash[task_bucket(t->tid)];

    for (; *pp != NULL; pp = &(*pp)->hnext)
        if (*pp == t) {
            *pp = t->hnext;
            t->hnext = NULL;
            return;
        }
}

/* ---- new connections (access.c accepts them) ------------------------- */

/*
 * A new connection: fd (non-blocking, close-on-exec) from a process of
 * uid and pid with rights (access.c decided them).  The task starts in
 * HANDSHAKE; fd is closed on failure.
 */
void
task_adopt(struct daemon *d, int fd, uid_t uid, pid_t pid, int rights)
{
    struct task *t;

    t = calloc(1, sizeof(*t));
    if (t == NULL) {
        close(fd);
        return;
    }
    t->d = d;
    t->fd = fd;
    t->uid = uid;
    t->pid = pid;
    t->pidfd = -1;
    t->rights = rights;
    t->state = TASK_ST_HANDSHAKE;
    t->attached_us = platform_now_us();
    t->out_tail = &t->out_head;
    buf_init(&t->in);
    t->rev = event_new(d->base, fd, EV_READ | EV_PERSIST, task_read_cb, t);
    t->wev = event_new(d->base, fd, EV_WRITE | EV_PERSIST, task_write_cb, t);
    if (t->rev == NULL || t->wev == NULL) {
        if (t->rev != NULL)
            event_free(t->rev);
        if (t->wev != NULL)
            event_free(t->wev);
        close(fd);
        free(t);
        return;
    }
    t->next = d->tasks;
    if (d->tasks != NULL)
        d->tasks->prev = t;
    d->tasks = t;
    event_add(t->rev, NULL);
}

/* ---- output ------------------------------------------------------------- */

struct task_share *
task_share_new(void *mem)
{
    struct task_share *s = malloc(sizeof(*s));

    if (s == NULL)
        return NULL;
    s->refs = 1;
    s->mem = mem;
    return s;
}

void
task_share_put(struct task_share *s)
{
    if (s == NULL || --s->refs > 0)
        return;
    free(s->mem);
    free(s);
}

static void
task_out_free(struct task_out *o)
{
    free(o->owner);
    task_share_put(o->share);
    free(o);
}

/* Drops every queued frame (the task is gone). */
static void
task_out_clear(struct task *t)
{
    struct task_out *o, *next;

    for (o = t->out_head; o != NULL; o = next) {
        next = o->next;
        task_out_free(o);
    }
    t->out_head = NULL;
    t->out_tail = &t->out_head;
    t->out_bytes = 0;
    t->peer_bytes = 0;
}

/*
 * Writes as much queued output as the socket takes.  Returns 0, or -1 if
 * the connection broke (t is then closed).
 */
/* n bytes of the queue's head were written: frames wholly written leave. */
static void
task_written(struct task *t, size_t n)
{
    struct task_out *o;

    t->st.bytes_out += (uint64_t)n;
    t->d->st.bytes_out += (uint64_t)n;
    while (n > 0 && (o = t->out_head) != NULL) {
        size_t left = o->head_len + o->body_len - o->sent;

        if (n < left) {
            o->sent += n;
            t->out_bytes -= (uint64_t)n;
            break;
        }
        n -= left;
        t->out_bytes -= left;
        t->out_head = o->next;
        if (t->out_head == NULL)
            t->out_tail = &t->out_head;
        if (o->credit_hid != 0) {
            t->peer_bytes -= o->head_len + o->body_len;
            if (o->credit > 0)
                task_credit_owe(t, o->credit_hid, o->credit);
        }
        task_out_free(o);
    }
}

/*
 * The channel of t is corrupt (why): counted, logged, and the task
 * failed with an ERROR on the socket (what was half written to the ring
 * is dropped).  t is closed or closing afterwards.
 */
static void
task_shm_corrupt(struct task *t, const char *why)
{
    char msg[128];

    t->d->st.shm_bad++;
    t->shm->out_on = 0;
    t->shm->broken = 1;
    if (t->shm->ev != NULL)
        event_del(t->shm->ev);
    task_out_clear(t);
    snprintf(msg, sizeof(msg), "shared-memory channel: %s", why);
    task_fail(t, COLLS_EPROTO, msg);
}

/*
 * We are awake: t need not ring our doorbell until task_shm_sleep says
 * we sleep.  Lowers the sleeping flag of t's request ring (a task that
 * rang lowered it already) and marks the channel for task_shm_sleep.
 */
static void
task_shm_lower(struct task *t)
{
    struct shm_chan *c = t->shm;

    if (c->req_awake)
        return;
    ring_awake(&c->req);
    c->req_awake = 1;
    t->d->shm_awake = 1;
}

/*
 * Copies queued output into the completion ring as far as it has room
 * and rings the task's doorbell if it sleeps.  1 if everything went or
 * the ring is full (the task's doorbell brings us back), -1 if the ring
 * is corrupt (t failed).
 */
static int
task_flush_shm(struct task *t)
{
    struct shm_chan *c = t->shm;
    struct task_out *o;
    size_t total = 0;
    long n;

    while ((o = t->out_head) != NULL) {
        const uint8_t *p;
        size_t len;

        if (o->sent < o->head_len) {
            p = o->head + o->sent;
            len = o->head_len - o->sent;
        } else {
            p = o->body + (o->sent - o->head_len);
            len = o->body_len - (o->sent - o->head_len);
        }
        n = ring_write(&c->comp, p, len);
        if (n == 0) {
            /* full: ask the task to ring us once it made room */
            n = ring_wait_space(&c->comp);
            if (n == 0) {
                t->d->st.shm_full_waits++;
                break;
            }
            if (n > 0)
                continue;
        }
        if (n < 0) {
            task_shm_corrupt(t, "completion ring tail out of bounds");
            return -1;
        }
        total += (size_t)n;
        t->d->st.shm_bytes_out += (uint64_t)n;
        task_written(t, (size_t)n);
    }
    /* its answer will likely come while this turn runs: no doorbell for
       it.  Before we ring: the task may run at once, before the write
       below returns. */
    if (total > 0)
        task_shm_lower(t);
    if (total > 0 && ring_wake_consumer(&c->comp))
        shm_ring_bell(c->fds[SHM_FD_OUT]);
    return 1;
}

static int
task_flush(struct task *t)
{
    struct iovec iov[TASK_IOV_MAX];
    struct task_out *o;
    ssize_t n;
    int cnt;

    if (t->shm != NULL && t->shm->out_on) {
        if (task_flush_shm(t) < 0)
            return -1;
        goto done;
    }
    while (t->out_head != NULL) {
        cnt = 0;
        for (o = t->out_head; o != NULL && cnt < TASK_IOV_MAX - 1;
             o = o->next) {
            size_t s = o->sent;

            if (s < o->head_len) {
                iov[cnt].iov_base = o->head + s;
                iov[cnt].iov_len = o->head_len - s;
                cnt++;
                s = 0;
            } else {
                s -= o->head_len;
            }
            if (o->body_len > s) {
                iov[cnt].iov_base = (void *)(o->body + s);
                iov[cnt].iov_len = o->body_len - s;
                cnt++;
            }
        }
        n = writev(t->fd, iov, cnt);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                break;
            if (t->state != TASK_ST_ACTIVE) {
                task_close(t, strerror(errno));
                return -1;
            }
            /* The task closed its end; frames it wrote before that may
               still wait in our receive buffer and must be routed, so
               keep reading until EOF and drop output from now on. */
            log_debug("task t%x: write: %s; reading to EOF", t->tid,
                      strerror(errno));
            t->wdead = 1;
            task_out_clear(t);
            event_del(t->wev);
            return -1;
        }
        task_written(t, (size_t)n);
    }
done:
    if (t->notice_next < t->d->notice_head && t->state == TASK_ST_ACTIVE &&
        t->out_bytes <= (uint64_t)t->d->cfg->task_queue_max / 2) {
        task_notice_catch_up(t);
        if (t->out_head != NULL)
            return task_flush(t);
    }
    if (t->out_head == NULL) {
        event_del(t->wev);
        if (t->shm != NULL && t->shm->map != NULL && !t->shm->out_on &&
            !t->shm->broken && t->state == TASK_ST_ACTIVE)
            t->shm->out_on = 1; /* ATTACH_REP is out: the rings take over */
        if (t->state == TASK_ST_CLOSING) {
            task_close(t, "closed after error");
            return -1;
        }
    } else if (!event_pending(t->wev, EV_WRITE, NULL) &&
               (t->shm == NULL || !t->shm->out_on)) {
        event_add(t->wev, NULL);
    }
    if (t->d->npaused > 0)
        net_kick(t->d);
    return 0;
}

static void
task_write_cb(evutil_socket_t fd, short what, void *arg)
{
    struct task *t = arg;

    task_flush(t);
    net_kick(t->d);
}

/* Appends o to t's queue.  credit_hid: o is DATA forwarded by that
   daemon, costing credit (owed back once o is written); 0 for other
   output. */
static void
task_append(struct task *t, struct task_out *o, int credit_hid, uint64_t credit)
{
    o->next = NULL;
    o->credit_hid = credit_hid;
    o->credit = credit;
    *t->out_tail = o;
    t->out_tail = &o->next;
    t->out_bytes += o->head_len + o->body_len;
    if (credit_hid != 0)
        t->peer_bytes += o->head_len + o->body_len;
    t->st.frames_out++;
    t->d->st.frames_out++;
}

/*
 * task_append; if the queue was idle and the task reads the shared-memory
 * rings, its write is due at the end of the loop turn (task_flush_due),
 * after the turn's datagrams went out: a daemon that both forwards a
 * collective's data to the next daemon and hands it to its own task sends
 * first, and the next daemon's wake-up does not wait for this task's
 * (docs/architecture.md, "Forward before delivering").  Other tasks are
 * written at once.
 */
static int
task_enqueue(struct task *t, struct task_out *o, int credit_hid,
             uint64_t credit)
{
    int idle = t->out_head == NULL;

    task_append(t, o, credit_hid, credit);
    if (!idle || t->flush_due)
        return 0;
    /* before the rings take over (ATTACH_REP goes by the socket, and
       what follows it by the rings), at once */
    if (t->shm == NULL || !t->shm->out_on) {
        task_flush(t);
        return 0;
    }
    t->flush_due = 1;
    t->d->nflush_due++;
    net_kick(t->d);
    return 0;
}

void
task_flush_due(struct daemon *d)
{
    struct task *t, *next;

    if (d->nflush_due == 0)
        return;
    d->nflush_due = 0;
    for (t = d->tasks; t != NULL; t = next) {
        next = t->next;
        if (!t->flush_due)
            continue;
        t->flush_due = 0;
        task_flush(t);
    }
}

/* ---- broadcast notices -------------------------------------------------- */

/* One notice of the ring: a whole frame (Envelope.dst 0), and the task
   it is not for (the one whose exit it announces). */
struct task_notice {
    uint8_t *frame;
    size_t len;
    uint32_t except;
};

/* The ring slot of notice seq. */
static struct task_notice *
task_notice_at(struct daemon *d, uint64_t seq)
{
    return &d->notices[seq % TASK_NOTICES];
}

/* A queue entry holding a copy of frame (len bytes); NULL: no memory. */
static struct task_out *
task_out_copy(const uint8_t *frame, size_t len)
{
    struct task_out *o = malloc(sizeof(*o) + len);

    if (o == NULL)
        return NULL;
    memcpy(o->head, frame, len);
    o->head_len = len;
    o->sent = 0;
    o->body = NULL;
    o->body_len = 0;
    o->owner = NULL;
    o->share = NULL;
    return o;
}

/*
 * Queues to t the notices it missed, oldest first, while its queue stays
 * under the limit; those that fell out of the ring are counted lost.
 * Appends only (the caller writes).
 */
static void
task_notice_catch_up(struct task *t)
{
    struct daemon *d = t->d;
    uint64_t q = (uint64_t)d->cfg->task_queue_max;

    if (d->notices == NULL || d->notice_head - t->notice_next > TASK_NOTICES) {
        uint64_t keep = d->notices == NULL ? 0 : TASK_NOTICES;
        uint64_t lost = d->notice_head - keep - t->notice_next;

        d->st.notices_lost += lost;
        log_warn("task t%x lagged by more than %d notices: %" PRIu64
                 " task-exit or host-down notices lost",
                 t->tid, TASK_NOTICES, lost);
        t->notice_next = d->notice_head - keep;
    }
    while (t->notice_next < d->notice_head && t->out_bytes <= q) {
        const struct task_notice *n = task_notice_at(d, t->notice_next);
        struct task_out *o;

        if (n->frame != NULL && n->except != t->tid) {
            if ((o = task_out_copy(n->frame, n->len)) == NULL)
                return; /* tried again at the next write */
            task_append(t, o, 0, 0);
        }
        t->notice_next++;
    }
}

void
task_notice_all(struct daemon *d, Envelope *e, uint32_t except)
{
    struct task_notice *n;
    struct task *t;
    uint64_t q = (uint64_t)d->cfg->task_queue_max;
    uint64_t seq = d->notice_head++; /* first: a write below may catch up */
    size_t elen;
    int behind = 0;

    for (t = d->tasks; t != NULL; t = t->next) {
        if (t->state != TASK_ST_ACTIVE)
            continue;
        if (t->notice_next == seq && t->out_bytes <= q) {
            t->notice_next = seq + 1;
            if (t->tid != except) {
                e->dst = t->tid;
                task_queue_env(t, e, NULL, 0, NULL);
            }
        } else {
            behind = 1;
        }
    }
    if (behind && d->notices == NULL)
        d->notices = calloc(TASK_NOTICES, sizeof(*d->notices));
    if (behind && d->notices != NULL) {
        n = task_notice_at(d, seq);
        free(n->frame);
        e->dst = 0;
        elen = envelope_packed_size(e);
        n->frame = malloc(FRAME_HDR_LEN + elen);
        n->len = FRAME_HDR_LEN + elen;
        n->except = except;
        if (n->frame != NULL &&
            frame_put_header(n->frame, (uint32_t)elen, 0) == 0)
            envelope_pack(e, n->frame + FRAME_HDR_LEN);
        else {
            free(n->frame);
            n->frame = NULL; /* out of memory: this notice is lost */
            d->st.notices_lost++;
        }
    }
}

void
task_notice_free(struct daemon *d)
{
    int i;

    for (i = 0; d->notices != NULL && i < TASK_NOTICES; i++)
        free(d->notices[i].frame);
    free(d->notices);
    d->notices = NULL;
}

/* Can t take output? */
static int
task_writable_state(const struct task *t)
{
    return !t->wdead &&
           (t->state == TASK_ST_ACTIVE || t->state == TASK_ST_HANDSHAKE ||
            t->state == TASK_ST_CLOSING);
}

/* task_queue_env and task_queue_env_shared: share, if not NULL, holds
   the payload (a reference is taken once queued); else owner, as there. */
static int
task_queue_env_from(struct task *t, const Envelope *e, const void *payload,
                    size_t plen, void *owner, struct task_share *share)
{
    size_t elen = envelope_packed_size(e);
    size_t inl = owner != NULL || share != NULL ? 0 : plen;
    struct task_out *o;

    if (!task_writable_state(t) || elen == 0 || elen > UINT32_MAX ||
        plen > SIZE_MAX - FRAME_HDR_LEN - elen - sizeof(*o)) {
        free(owner);
        return COLLS_ENOTCONN;
    }
    o = malloc(sizeof(*o) + FRAME_HDR_LEN + elen + inl);
    if (o == NULL) {
        free(owner);
        return COLLS_ENOMEM;
    }
    if (frame_put_header(o->head, (uint32_t)elen, plen) != 0) {
        free(o);
        free(owner);
        return COLLS_EMSGSIZE;
    }
    envelope_pack(e, o->head + FRAME_HDR_LEN);
    o->sent = 0;
    o->share = share;
    if (share != NULL)
        share->refs++;
    if (owner != NULL || share != NULL) {
        o->head_len = FRAME_HDR_LEN + elen;
        o->body = payload;
        o->body_len = plen;
        o->owner = owner;
    } else {
        if (plen > 0)
            memcpy(o->head + FRAME_HDR_LEN + elen, payload, plen);
        o->head_len = FRAME_HDR_LEN + elen + plen;
        o->body = NULL;
        o->body_len = 0;
        o->owner = NULL;
    }
    return task_enqueue(t, o, 0, 0);
}

int
task_queue_env(struct task *t, const Envelope *e, const void *payload,
               size_t plen, void *owner)
{
    return task_queue_env_from(t, e, payload, plen, owner, NULL);
}

int
task_queue_env_shared(struct task *t, const Envelope *e, const void *payload,
                      size_t plen, struct task_share *share)
{
    return task_queue_env_from(t, e, payload, plen, NULL, share);
}

/* task_queue_packed, with credit_hid and credit passed to task_enqueue. */
static int
task_queue_packed_from(struct task *t, const uint8_t *body, size_t env_len,
                       size_t body_len, void *owner, int credit_hid,
                       uint64_t credit)
{
    struct task_out *o;

    if (!task_writable_state(t) || env_len == 0 || env_len > body_len) {
        free(owner);
        return COLLS_ENOTCONN;
    }
    o = malloc(sizeof(*o) + FRAME_HDR_LEN);
    if (o == NULL) {
        free(owner);
        return COLLS_ENOMEM;
    }
    if (frame_put_header(o->head, (uint32_t)env_len, body_len - env_len) != 0) {
        free(o);
        free(owner);
        return COLLS_EMSGSIZE;
    }
    o->head_len = FRAME_HDR_LEN;
    o->body = body;
    o->body_len = body_len;
    o->owner = owner;
    o->share = NULL;
    o->sent = 0;
    return task_enqueue(t, o, credit_hid, credit);
}

int
task_queue_packed(struct task *t, const uint8_t *body, size_t env_len,
                  size_t body_len, void *owner)
{
    return task_queue_packed_from(t, body, env_len, body_len, owner, 0, 0);
}

int
task_queue_peer(struct task *t, int hid, uint64_t credit, const uint8_t *body,
                size_t env_len, size_t body_len, void *owner)
{
    return task_queue_packed_from(t, body, env_len, body_len, owner, hid,
                                  credit);
}

/* ---- flow control: credit owed to sending daemons ---------------------- */

/* Sends the credit t owes daemon hid's entry c, if any (CREDIT). */
static void
task_credit_return(struct task *t, struct task_credit *c)
{
    if (c->bytes == 0)
        return;
    if (net_send_credit(t->d, c->hid, t->tid, c->bytes) == 0)
        t->d->st.credits_out++;
    c->bytes = 0;
}

/*
 * A frame DATA from daemon hid, of the given cost, was wholly written to
 * t: the cost is owed back to hid, and returned at once when half a
 * window is owed (so the sender, which may have a whole window out, never
 * waits a round trip in the common case).  A task that is not ACTIVE
 * returns nothing: its exit tells the senders to forget it.
 */
static void
task_credit_owe(struct task *t, int hid, uint64_t bytes)
{
    struct task_credit *c = NULL;
    int i;

    if (t->state != TASK_ST_ACTIVE)
        return;
    for (i = 0; i < t->ncredits && c == NULL; i++)
        if (t->credits[i].hid == hid)
            c = &t->credits[i];
    if (c == NULL) {
        c = realloc(t->credits, (size_t)(t->ncredits + 1) * sizeof(*c));
        if (c == NULL)
            abort(); /* the daemon may abort on allocation failure */
        t->credits = c;
        c = &t->credits[t->ncredits++];
        c->hid = hid;
        c->bytes = 0;
    }
    c->bytes += bytes;
    if (c->bytes >= (uint64_t)t->d->cfg->task_credit / 2)
        task_credit_return(t, c);
}

void
task_credit_forget(struct daemon *d, int hid)
{
    struct task *t;
    int i;

    for (t = d->tasks; t != NULL; t = t->next)
        for (i = 0; i < t->ncredits; i++)
            if (t->credits[i].hid == hid)
                t->credits[i].bytes = 0;
}

/* Cron: returns what every task owes, so that small amounts (a sender
   whose window differs from ours, a trickle) never wait long. */
static void
task_credit_cron(struct daemon *d)
{
    struct task *t;
    int i;

    for (t = d->tasks; t != NULL; t = t->next)
        if (t->state == TASK_ST_ACTIVE)
            for (i = 0; i < t->ncredits; i++)
                task_credit_return(t, &t->credits[i]);
}

void
task_reply_init(Envelope *r, const struct task *t, int kind, uint64_t req_id,
                int status)
{
    envelope_reply(r, COLLS_DAEMON_TID(t->d->hid), t->tid, kind, req_id,
                   status);
}

int
task_reply(struct task *t, int kind, uint64_t req_id, int status)
{
    Envelope e;

    task_reply_init(&e, t, kind, req_id, status);
    return task_queue_env(t, &e, NULL, 0, NULL);
}

int
task_error(struct task *t, uint64_t req_id, int status, const char *msg)
{
    Envelope e;
    Error er = ERROR__INIT;

    task_reply_init(&e, t, KIND__ERROR, req_id, status);
    er.message = (char *)msg;
    e.body_case = ENVELOPE__BODY_ERROR;
    e.error = &er;
    return task_queue_env(t, &e, NULL, 0, NULL);
}

/* ---- lifecycle ---------------------------------------------------------- */

/* Leaves ACTIVE: out of the tid hash, exit announced to the machine. */
static void
task_deactivate(struct task *t)
{
    struct daemon *d = t->d;

    if (t->state != TASK_ST_ACTIVE)
        return;
    task_hash_remove(t);
    d->ntasks--;
    d->st.tasks_exited++;
    t->state = TASK_ST_CLOSING;
    d->task_ops->exit(d, t->tid);
}

static void
task_unpause(struct task *t)
{
    if (t->paused) {
        t->paused = 0;
        t->d->npaused--;
    }
}

void
task_close(struct task *t, const char *why)
{
    struct daemon *d = t->d;

    if (t->state == TASK_ST_DEAD)
        return;
    if (t->tid != 0)
        log_info("task t%x (%s, pid %ld) %s: %s", t->tid, t->name, (long)t->pid,
                 t->state == TASK_ST_ACTIVE ? "exits" : "closed", why);
    task_deactivate(t);
    task_unpause(t);
    t->state = TASK_ST_DEAD;
    event_del(t->rev);
    event_del(t->wev);
    if (t->shm != NULL && t->shm->ev != NULL)
        event_del(t->shm->ev);
    close(t->fd);
    t->fd = -1;
    task_out_clear(t);
    if (t->prev != NULL)
        t->prev->next = t->next;
    else
        d->tasks = t->next;
    if (t->next != NULL)
        t->next->prev = t->prev;
    t->next = d->graveyard;
    t->prev = NULL;
    d->graveyard = t;
    net_kick(d);
}

void
task_fail(struct task *t, int status, const char *msg)
{
    if (t->state == TASK_ST_DEAD || t->state == TASK_ST_CLOSING)
        return;
    log_warn("task t%x (pid %ld): %s (%s); closing", t->tid, (long)t->pid, msg,
             log_errstr(status));
    task_error(t, 0, status, msg);
    if (t->state == TASK_ST_DEAD)
        return;
    task_deactivate(t);
    t->state = TASK_ST_CLOSING;
    t->closing_us = platform_now_us();
    event_del(t->rev);
    task_unpause(t);
    if (t->out_head == NULL)
        task_close(t, msg);
}

void
task_reap(struct daemon *d)
{
    struct task *t;

    while ((t = d->graveyard) != NULL) {
        d->graveyard = t->next;
        event_free(t->rev);
        event_free(t->wev);
        if (t->shm != NULL && t->shm->ev != NULL)
            event_free(t->shm->ev);
        shm_chan_free(t->shm); /* unmaps: the memfd goes with the task's */
        if (t->pidfd >= 0)
            close(t->pidfd);
        buf_free(&t->in);
        free(t->big);
        free(t->credits);
        free(t);
    }
}

void
task_close_all(struct daemon *d, int graceful)
{
    struct task *t, *next;

    if (!graceful) {
        while (d->tasks != NULL)
            task_close(d->tasks, "daemon shutting down");
        return;
    }
    /* Exits announced now; each connection closes once what is queued to
       it (a HALT's reply, then ERROR COLLS_ESHUTDOWN) is written, or after
       TASK_CLOSING_US. */
    for (t = d->tasks; t != NULL; t = next) {
        next = t->next;
        if (t->state == TASK_ST_DEAD || t->state == TASK_ST_CLOSING)
            continue;
        task_error(t, 0, COLLS_ESHUTDOWN, "the daemon is shutting down");
        if (t->state == TASK_ST_DEAD)
            continue;
        task_deactivate(t);
        t->state = TASK_ST_CLOSING;
        t->closing_us = platform_now_us();
        event_del(t->rev);
        task_unpause(t);
        if (t->out_head == NULL || t->wdead)
            task_close(t, "daemon shutting down");
    }
}

void
task_cron(struct daemon *d, uint64_t now_us)
{
    struct task *t, *next;

    task_credit_cron(d);
    for (t = d->tasks; t != NULL; t = next) {
        next = t->next;
        if (t->state == TASK_ST_CLOSING &&
            now_us - t->closing_us > TASK_CLOSING_US)
            task_close(t, "error not read in time");
        else if (t->state == TASK_ST_HANDSHAKE &&
                 now_us - t->attached_us > TASK_HANDSHAKE_US)
            task_close(t, "no ATTACH_REQ in time");
    }
}

/* ---- backpressure ------------------------------------------------------- */

static void
task_pause(struct task *t)
{
    if (!t->paused) {
        t->paused = 1;
        t->st.pauses++;
        t->d->npaused++;
        t->d->st.pauses++;
    }
    event_del(t->rev);
}

void
task_pause_on_task(struct task *t, uint32_t dst_tid)
{
    t->wait_tid = dst_tid;
    t->wait_hid = 0;
    t->wait_credit = 0;
    task_pause(t);
}

void
task_pause_on_host(struct task *t, int hid)
{
    t->wait_tid = 0;
    t->wait_hid = hid;
    t->wait_credit = 0;
    task_pause(t);
}

void
task_pause_on_credit(struct task *t)
{
    t->wait_tid = 0;
    t->wait_hid = 0;
    t->wait_credit = 1;
    t->d->st.credit_holds++;
    task_pause(t);
}

void
task_credit_granted(struct task *t)
{
    t->wait_credit = 0;
    net_kick(t->d);
}

void
task_resume_paused(struct daemon *d)
{
    uint64_t low = (uint64_t)d->cfg->task_queue_max / 2;
    uint64_t host_low = (uint64_t)d->cfg->task_queue_limit / 2;
    struct task *t, *next, *dst;

    for (t = d->tasks; t != NULL && d->npaused > 0; t = next) {
        next = t->next;
        if (!t->paused || t->state != TASK_ST_ACTIVE || t->wait_credit)
            continue;
        if (t->wait_tid != 0) {
            dst = task_find(d, t->wait_tid);
            if (dst != NULL && dst->out_bytes > low)
                continue;
        } else if (t->wait_hid != 0) {
            struct host *h = d->hosts[t->wait_hid];

            if (h != NULL && h->state == COLLS_HOST_UP &&
                net_queued(d, t->wait_hid) > host_low)
                continue;
        }
        task_unpause(t);
        d->st.resumes++;
        event_add(t->rev, NULL);
        task_process_input(t); /* frames already buffered */
        if (t->shm != NULL && t->shm->map != NULL)
            task_shm_read(t); /* and what waits in its ring */
        /* next may have died meanwhile: restart from the head. */
        next = d->tasks;
    }
}

/* ---- input -------------------------------------------------------------- */

/*
 * At attach: takes the channel t offered, if --shm allows and it passes
 * shm_chan_accept's checks; else the task stays on the socket (it sees
 * that the header was not marked accepted).
 */
static void
task_shm_accept(struct task *t)
{
    struct daemon *d = t->d;
    const char *why = "--shm off";

    if (t->shm == NULL)
        return;
    if (d->cfg->shm && shm_chan_accept(t->shm, &why) == 0) {
        t->shm->ev = event_new(d->base, t->shm->fds[SHM_FD_IN],
                               EV_READ | EV_PERSIST | EV_ET, task_shm_cb, t);
        if (t->shm->ev != NULL && event_add(t->shm->ev, NULL) == 0) {
            d->st.shm_tasks++;
            return;
        }
        /* the task already sees it accepted: it cannot fall back */
        why = "no doorbell event";
        t->shm->broken = 1;
        return;
    }
    if (d->cfg->shm)
        log_info("task from pid %ld stays on the socket: %s", (long)t->pid,
                 why);
    else
        log_debug("task from pid %ld stays on the socket: %s", (long)t->pid,
                  why);
    d->st.shm_fallbacks++;
    shm_chan_free(t->shm);
    t->shm = NULL;
}

/*
 * Single copy with t (docs/protocol.md, "Single copy"): the daemon reads
 * the token the task put in its memory at the address it named; only if
 * the bytes match does it copy to and from t's memory later.  The pid is
 * that of the peer credentials (never one a task claims), held as a pidfd
 * so that a process that gets the number after t died is never touched.
 * Only a task of the daemon's own uid: the kernel checks every copy
 * against the process's credentials then, so a task that turned into a
 * set-uid program cannot have a more privileged daemon write into it.
 */
static void
task_cma_probe(struct task *t, const AttachReq *ar)
{
    uint8_t got[16];
    int rc;

    /* before task_attach takes a claimed pid: t->pid is the peer
       credentials' or 0 */
    if (!t->d->cfg->cma || t->pid <= 0 || ar->cma_addr == 0 ||
        ar->cma_token.len != sizeof(got) || t->uid != geteuid())
        return;
    t->pidfd = platform_pidfd(t->pid);
    if (t->pidfd < 0)
        return;
    rc = platform_vm_copy(t->pid, 0, got, ar->cma_addr, sizeof(got));
    if (rc == 0 && !platform_pidfd_exited(t->pidfd) &&
        memcmp(got, ar->cma_token.data, sizeof(got)) == 0) {
        t->d->st.cma_tasks++;
        return;
    }
    log_debug("task pid %ld: no single copy (%s)", (long)t->pid,
              rc < 0 ? strerror(-rc) : "token differs");
    close(t->pidfd);
    t->pidfd = -1;
}

int
task_cma_granted(const struct task *t)
{
    return t->pidfd >= 0;
}

/* Copies between buf and t's memory at addr; to_t: ours to t's. */
static int
task_cma(struct task *t, int to_t, void *buf, uint64_t addr, size_t len)
{
    int rc;

    if (!task_cma_granted(t) || t->state != TASK_ST_ACTIVE ||
        platform_pidfd_exited(t->pidfd))
        return COLLS_EPERM;
    /* the pidfd said the process was alive just before: its number
       cannot have been handed on since unless the kernel went through
       every other one in between */
    rc = platform_vm_copy(t->pid, to_t, buf, addr, len);
    /* and bytes read count only if it is still there afterwards */
    if (rc == 0 && platform_pidfd_exited(t->pidfd))
        rc = -ESRCH;
    if (rc < 0) {
        t->d->st.cma_failed++;
        log_debug("task t%x: single copy of %zu bytes %s 0x%llx: %s", t->tid,
                  len, to_t ? "to" : "from", (unsigned long long)addr,
                  strerror(-rc));
        return rc == -EFAULT ? COLLS_EINVAL : COLLS_EPERM;
    }
    if (to_t)
        t->d->st.cma_bytes_out += len;
    else
        t->d->st.cma_bytes_in += len;
    return 0;
}

int
task_cma_read(struct task *t, uint64_t addr, void *buf, size_t len)
{
    return task_cma(t, 0, buf, addr, len);
}

int
task_cma_write(struct task *t, uint64_t addr, const void *buf, size_t len)
{
    return task_cma(t, 1, (void *)(uintptr_t)buf, addr, len);
}

/* Answers ATTACH_REQ: checks, assigns the tid, goes ACTIVE. */
static void
task_attach(struct task *t, Envelope *e)
{
    struct daemon *d = t->d;
    AttachRep rep = ATTACH_REP__INIT;
    Envelope r;
    int status = 0;

    /* dst is the tid, once there is one */
    task_reply_init(&r, t, KIND__ATTACH_REP, e->req_id, 0);
    if (e->kind != KIND__ATTACH_REQ ||
        e->body_case != ENVELOPE__BODY_ATTACH_REQ) {
        d->st.bad_requests++;
        task_fail(t, COLLS_EPROTO, "first message must be ATTACH_REQ");
        return;
    }
    if (e->attach_req->version != COLLS_PROTO_VERSION)
        status = COLLS_EVERSION;
    else if (t->rights == TASK_RIGHT_NONE)
        status = COLLS_EPERM;
    else if (d->stopping)
        status = COLLS_ESHUTDOWN;
    else if (d->ntasks >= d->cfg->max_tasks)
        status = COLLS_ETOOMANY;
    else if (d->next_local > DAEMON_MAX_LOCAL)
        status = COLLS_EAGAIN;
    if (status != 0 && t->shm != NULL) {
        shm_chan_free(t->shm);
        t->shm = NULL;
    }
    if (status != 0) {
        d->st.attach_refused++;
        log_warn("attach from pid %ld uid %ld refused: %s", (long)t->pid,
                 (long)t->uid, log_errstr(status));
        r.status = status;
        task_queue_env(t, &r, NULL, 0, NULL);
        if (t->state == TASK_ST_DEAD)
            return;
        t->state = TASK_ST_CLOSING;
        t->closing_us = platform_now_us();
        event_del(t->rev);
        if (t->out_head == NULL)
            task_close(t, "attach refused");
        return;
    }
    /* a spawned child gets the tid reserved at fork: matched by the pid
       of the peer credentials, never by the pid the task claims */
    if (d->task_ops->reserved != NULL && t->pid > 0)
        t->tid = d->task_ops->reserved(d, t->pid, &t->parent);
    if (t->tid == 0)
        t->tid = COLLS_DAEMON_TID(d->hid) | d->next_local++;
    task_cma_probe(t, e->attach_req);
    if (e->attach_req->pid > 0 && t->pid == 0)
        t->pid = e->attach_req->pid;
    snprintf(t->name, sizeof(t->name), "%s",
             e->attach_req->name != NULL ? e->attach_req->name : "");
    t->admin = e->attach_req->admin;
    t->attached_us = platform_now_us();
    task_shm_accept(t);
    t->notice_next = d->notice_head;
    t->state = TASK_ST_ACTIVE;
    t->hnext = d->task_hash[task_bucket(t->tid)];
    d->task_hash[task_bucket(t->tid)] = t;
    d->ntasks++;
    d->st.tasks_attached++;
    r.dst = t->tid;
    r.body_case = ENVELOPE__BODY_ATTACH_REP;
    r.attach_rep = &rep;
    rep.tid = t->tid;
    rep.hid = (uint32_t)d->hid;
    rep.incarnation = d->inc;
    rep.max_message = (uint64_t)d->cfg->max_message;
    rep.direct_addr = d->direct_ip;
    rep.parent = t->parent;
    rep.cma = task_cma_granted(t);
    log_info("task t%x attached: %s pid %ld uid %ld%s%s", t->tid, t->name,
             (long)t->pid, (long)t->uid, t->admin ? " (admin)" : "",
             t->rights == TASK_RIGHT_ADMIN ? "" : " (no admin verbs)");
    task_queue_env(t, &r, NULL, 0, NULL);
    if (d->task_ops->attached != NULL)
        d->task_ops->attached(t);
}

/*
 * One whole frame: envelope bytes at env (env_len), payload after it.
 * owner, if not NULL, is the allocation holding both (passed on).
 */
static void
task_frame(struct task *t, const uint8_t *env, size_t env_len,
           const uint8_t *payload, size_t plen, uint8_t *owner)
{
    struct envelope_arena arena;
    Envelope *e = NULL;
    int rc;

    t->st.frames_in++;
    t->d->st.frames_in++;
    rc = envelope_unpack_in(&arena, env, env_len, &e);
    if (rc != 0) {
        t->d->st.bad_envelopes++;
        free(owner);
        task_fail(t, rc,
                  rc == COLLS_EVERSION ? "protocol version mismatch"
                                       : "malformed envelope");
        return;
    }
    if (t->state == TASK_ST_HANDSHAKE) {
        free(owner);
        task_attach(t, e);
    } else {
        t->d->task_ops->frame(t, e, payload, plen, owner);
    }
    envelope_free_in(&arena, e);
}

/* Frame limits for task input. */
static void
task_limits(const struct daemon *d, struct frame_limits *lim)
{
    frame_limits_default(lim);
    lim->max_payload = (uint64_t)d->cfg->max_message;
}

/*
 * Parses and dispatches the complete frames buffered in t->in, until the
 * buffer runs dry, the task pauses or leaves the states that read.
 */
static void
task_process_input(struct task *t)
{
    struct frame_limits lim;
    struct frame_info fi;
    int rc;

    task_limits(t->d, &lim);
    while ((t->state == TASK_ST_ACTIVE || t->state == TASK_ST_HANDSHAKE) &&
           !t->paused && t->big == NULL) {
        size_t avail = buf_avail(&t->in);
        const uint8_t *p = buf_head(&t->in);

        if (t->state == TASK_ST_ACTIVE &&
            t->out_bytes > (uint64_t)t->d->cfg->task_queue_max) {
            /* It does not read what it gets: what it asks for waits. */
            task_pause_on_task(t, t->tid);
            break;
        }

        rc = frame_peek(p, avail, &lim, &fi);
        if (rc == COLLS_EAGAIN)
            break;
        if (rc != 0) {
            t->d->st.bad_frames++;
            task_fail(t, rc,
                      rc == COLLS_EMSGSIZE ? "frame over the limits"
                                           : "malformed frame");
            return;
        }
        if (t->state == TASK_ST_HANDSHAKE && fi.payload_len > 0) {
            t->d->st.bad_frames++;
            task_fail(t, COLLS_EPROTO, "payload before attach");
            return;
        }
        if (avail >= fi.total_len) {
            /* Whole frame in the buffer: route copies what it keeps. */
            task_frame(t, p + FRAME_HDR_LEN, fi.env_len,
                       p + FRAME_HDR_LEN + fi.env_len, fi.payload_len, NULL);
            buf_consume(&t->in, fi.total_len);
            continue;
        }
        if (fi.total_len > TASK_READ_CHUNK) {
            /* Large frame: the rest goes straight into its own buffer. */
            size_t body = fi.env_len + fi.payload_len;
            size_t have = avail - FRAME_HDR_LEN;

            t->big = malloc(body);
            if (t->big == NULL) {
                task_fail(t, COLLS_ENOMEM, "out of memory for a frame");
                return;
            }
            memcpy(t->big, p + FRAME_HDR_LEN, have);
            t->big_len = body;
            t->big_got = have;
            t->big_fi = fi;
            buf_consume(&t->in, avail);
        }
        break;
    }
}

/* Completes a big frame once all of it arrived. */
static void
task_big_done(struct task *t)
{
    uint8_t *big = t->big;
    struct frame_info fi = t->big_fi;

    t->big = NULL;
    t->big_len = t->big_got = 0;
    task_frame(t, big, fi.env_len, big + fi.env_len, fi.payload_len, big);
}

/* n bytes came into t->big or t->in: account them, dispatch frames. */
static void
task_got(struct task *t, size_t n)
{
    t->st.bytes_in += (uint64_t)n;
    t->d->st.bytes_in += (uint64_t)n;
    if (t->big != NULL) {
        t->big_got += n;
        if (t->big_got == t->big_len)
            task_big_done(t);
    } else {
        t->in.len += n;
    }
    task_process_input(t);
}

/* Where the next input bytes go: *p, room for *len.  -1 without memory. */
static int
task_in_room(struct task *t, uint8_t **p, size_t *len)
{
    if (t->big != NULL) {
        *p = t->big + t->big_got;
        *len = t->big_len - t->big_got;
        return 0;
    }
    if (buf_reserve(&t->in, TASK_READ_CHUNK) != 0)
        return -1;
    *p = t->in.data + t->in.len;
    *len = t->in.cap - t->in.len;
    return 0;
}

/* Still reading t? */
static int
task_reading(const struct task *t)
{
    return (t->state == TASK_ST_ACTIVE || t->state == TASK_ST_HANDSHAKE) &&
           !t->paused;
}

/*
 * Reads t's request ring as task_read_cb reads the socket, until it is
 * empty (then t's sleeping flag is up) or t stops being read; rings the
 * task's doorbell if it waits for the room made.
 */
static void
task_shm_read(struct task *t)
{
    struct shm_chan *c = t->shm;
    int freed = 0;
    uint8_t *p;
    size_t len;
    long n;

    while (task_reading(t) && !c->broken) {
        if (task_in_room(t, &p, &len) != 0) {
            task_fail(t, COLLS_ENOMEM, "out of memory");
            return;
        }
        /* ring_read, not ring_take: the flag goes up before we sleep
           (task_shm_sleep), not when the ring runs dry */
        n = ring_read(&c->req, p, len);
        if (n == 0)
            break;
        if (n < 0) {
            task_shm_corrupt(t, "request ring head out of bounds");
            return;
        }
        freed = 1;
        t->d->st.shm_bytes_in += (uint64_t)n;
        task_got(t, (size_t)n);
    }
    task_shm_lower(t);
    if (freed && t->state != TASK_ST_DEAD && !c->broken &&
        ring_wake_producer(&c->req)) {
        t->d->st.shm_task_waits++;
        shm_ring_bell(c->fds[SHM_FD_OUT]);
    }
}

/*
 * The task rang our doorbell: bytes in the request ring, or room in the
 * completion ring.  The doorbell is watched edge-triggered (EV_ET) and
 * never read: every write to an eventfd wakes its epoll watchers, counter
 * at zero or not, so each ring reports once, and the read a level-
 * triggered watch needs -- one system call per message -- is saved.  The
 * counter only grows (2^64 - 2 rings before the task's write fails; a
 * task that writes a huge value silences its own doorbell, nobody
 * else's).
 */
static void
task_shm_cb(evutil_socket_t fd, short what, void *arg)
{
    struct task *t = arg;

    (void)fd;
    (void)what;
    if (t->out_head != NULL)
        task_flush(t);
    if (t->state != TASK_ST_DEAD && !t->shm->broken)
        task_shm_read(t);
    net_kick(t->d);
}

/* 1 if t's rings have work for us now (a probe: no syscall). */
static int
task_shm_ready(struct task *t)
{
    struct shm_chan *c = t->shm;

    if (c == NULL || c->map == NULL || c->broken)
        return 0;
    if (task_reading(t) && ring_readable(&c->req) != 0)
        return 1;
    return t->out_head != NULL && c->out_on && ring_space(&c->comp) != 0;
}

const char *
task_channel(const struct task *t)
{
    return t->shm != NULL && t->shm->map != NULL && !t->shm->broken ? "shm"
                                                                    : "socket";
}

uint64_t
task_shm_count(const struct daemon *d)
{
    const struct task *t;
    uint64_t n = 0;

    for (t = d->tasks; t != NULL; t = t->next)
        if (t->state == TASK_ST_ACTIVE && strcmp(task_channel(t), "shm") == 0)
            n++;
    return n;
}

int
task_shm_probe(struct daemon *d)
{
    struct task *t;

    for (t = d->tasks; t != NULL; t = t->next)
        if (task_shm_ready(t))
            return 1;
    return 0;
}

/*
 * The sleeping flag of a task's request ring says whether we sleep, not
 * whether we drained the ring: it is lowered while we are awake
 * (task_shm_lower: when we read the ring or wrote to the task), so a
 * task that answers within our turn writes without ringing.  Before we
 * sleep every lowered flag goes up again, with a fence, and the ring is
 * looked at once more (ring_sleep), so what was written meanwhile is
 * taken now and what comes later rings.  In a ping-pong that saves the
 * task's doorbell write and our wake-up for it whenever the answer comes
 * before our turn ends: with everything on one CPU the task runs as soon
 * as we wake it, and unpinned it answers while we poll.
 */
int
task_shm_sleep(struct daemon *d)
{
    struct task *t;
    int ready = 0;

    if (!d->shm_awake)
        return 0;
    d->shm_awake = 0;
    for (t = d->tasks; t != NULL; t = t->next) {
        struct shm_chan *c = t->shm;

        if (c == NULL || !c->req_awake)
            continue;
        c->req_awake = 0;
        if (c->map == NULL || c->broken || ring_sleep(&c->req) == 0 ||
            !task_reading(t))
            continue; /* a paused task's ring is read when it resumes */
        /* input came without a ring: stay awake and marked until
           task_shm_poll took it (it serves one task per call) */
        task_shm_lower(t);
        ready = 1;
    }
    return ready;
}

int
task_shm_poll(struct daemon *d)
{
    struct task *t, *next;
    int did = 0;

    for (t = d->tasks; t != NULL; t = next) {
        next = t->next;
        if (!task_shm_ready(t))
            continue;
        did = 1;
        if (t->out_head != NULL)
            task_flush(t);
        if (t->state != TASK_ST_DEAD && !t->shm->broken)
            task_shm_read(t);
        break; /* t's frames may have closed others: next turn */
    }
    if (did)
        net_kick(d);
    return did;
}

/*
 * Reads the socket while the task is in HANDSHAKE: recvmsg, so that the
 * descriptors of a channel offered with ATTACH_REQ are taken (the first
 * offer only; later ones are closed).
 */
static ssize_t
task_recv_offer(struct task *t, uint8_t *p, size_t len)
{
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int) * SHM_NFDS)];
    } cbuf;
    struct iovec iov = {p, len};
    struct msghdr m;
    struct cmsghdr *cm;
    ssize_t n;

    memset(&m, 0, sizeof(m));
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = cbuf.b;
    m.msg_controllen = sizeof(cbuf.b);
    n = recvmsg(t->fd, &m, MSG_CMSG_CLOEXEC);
    if (n < 0)
        return n;
    for (cm = CMSG_FIRSTHDR(&m); cm != NULL; cm = CMSG_NXTHDR(&m, cm)) {
        const int *fds = (const int *)(void *)CMSG_DATA(cm);
        int i, nfds;

        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        nfds = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        if (t->shm == NULL) {
            t->shm = shm_chan_offer(fds, nfds);
            continue;
        }
        for (i = 0; i < nfds; i++)
            close(fds[i]);
    }
    if (m.msg_flags & MSG_CTRUNC)
        log_warn("task from pid %ld: descriptors beyond a channel's dropped",
                 (long)t->pid);
    return n;
}

static void
task_read_cb(evutil_socket_t fd, short what, void *arg)
{
    struct task *t = arg;
    uint8_t *p;
    size_t len;
    ssize_t n;

    (void)what;
    if (task_in_room(t, &p, &len) != 0) {
        task_fail(t, COLLS_ENOMEM, "out of memory");
        goto out;
    }
    if (t->state == TASK_ST_HANDSHAKE)
        n = task_recv_offer(t, p, len);
    else
        n = read(fd, p, len);
    if (n == 0) {
        /* frames it put in its ring before it closed still count */
        if (t->shm != NULL && t->shm->map != NULL)
            task_shm_read(t);
        if (t->state != TASK_ST_DEAD)
            task_close(t, "connection closed");
        goto out;
    }
    if (n < 0) {
        if (errno != EAGAIN && errno != EINTR)
            task_close(t, strerror(errno));
        goto out;
    }
    task_got(t, (size_t)n);
out:
    net_kick(t->d);
}
