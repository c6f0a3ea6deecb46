/*
 * colls.c -- attaching to and detaching from the local daemon, and the
 * machinery every blocking call uses to run the handle's loop.
 *
 * colls_attach() connects a uv_pipe_t to the daemon's socket, exchanges
 * ATTACH_REQ / ATTACH_REP, then opens the direct-route listener and
 * registers it (direct.c).  colls_detach() says DETACH, waits (at most
 * COLLS__DETACH_MS) for the daemon to close the connection, so everything
 * sent before was read, then closes every handle, runs the loop until the
 * close callbacks ran and frees everything.
 *
 * Socket path: the argument, else $COLLS_SOCKET, else
 * $XDG_RUNTIME_DIR/collsd/collsd.sock, else /tmp/collsd-<uid>/collsd.sock
 * (docs/protocol.md).  $COLLS_ADMIN=1 makes the attach an admin one
 * (collsctl sets it); $COLLS_TASK_NAME overrides the program name reported.
 * The attach handshake itself waits at most COLLS__ATTACH_MS.  Attaching
 * sets SIGPIPE to be ignored if it is at its default action.
 *
 * Waiting (colls__wait): while something this task started is in flight
 * (a collective, a control request, a posted receive), the loop is first
 * polled without blocking for $COLLS_POLL_US microseconds (default
 * COLLS__POLL_US, 0 never; stretched to twice the average wait while waits
 * are short, colls__poll_window_ns), yielding between probes when the machine
 * has more runnable processes than this process has CPUs; then it sleeps in
 * epoll (UV_RUN_ONCE).  docs/architecture.md, "The event loop and
 * polling".
 *
 * This file also installs the connection layer's callbacks (struct
 * colls__conn_ops, conn.h) and holds the one dispatcher of the frames the
 * daemon sends, by envelope kind: DATA to p2p.c, TASK_EXIT / SEND_FAILED
 * / HOST_DOWN to dead.c, COLL_RESULT to coll.c, everything else (replies)
 * to ctl.c.
 *
 * API layer (internal.h): may call the connection layer (conn.h) and the
 * other API files.
 */
#include <config.h> /* autoconf: _GNU_SOURCE for sched_getaffinity */

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "internal.h"

#define COLLS__ATTACH_MS 10000
#define COLLS__DETACH_MS 2000
/* The polling window of a wait when $COLLS_POLL_US is not set, and its
   largest value. */
#define COLLS__POLL_US     60
#define COLLS__POLL_US_MAX 1000000
/* A wait's window stretches to twice the average wait while that average
   is at most COLLS__STRETCH_US (colls__poll_window_ns). */
#define COLLS__STRETCH_US     500
#define COLLS__CROWD_CHECK_NS 1000000u
/* A wait on a board runs the loop once every this many probes. */
#define COLLS__BOARD_PROBES 16u

/* Timer callback: the current blocking call ran out of time. */
static void
colls_timer_cb(uv_timer_t *t)
{
    colls_t *c = t->data;

    c->timer_fired = 1;
}

/* The polling window of waits: $COLLS_POLL_US (microseconds, 0 never
   poll) when it is a number in range, else COLLS__POLL_US. */
static uint64_t
colls_poll_ns(void)
{
    const char *env = getenv("COLLS_POLL_US");
    char *end;
    long us;

    if (env == NULL || env[0] == '\0')
        return (uint64_t)COLLS__POLL_US * 1000u;
    us = strtol(env, &end, 10);
    if (*end != '\0' || us < 0 || us > COLLS__POLL_US_MAX)
        return (uint64_t)COLLS__POLL_US * 1000u;
    return (uint64_t)us * 1000u;
}

/*
 * The polling window of the next wait, from the base window (COLLS_POLL_US,
 * 0: never poll) and the average of the last waits that did not end at
 * once (avg_ns; 0 before any): while that average is at most
 * COLLS__STRETCH_US, twice the average (at least the base), else the base.
 * A task whose answers come within a few hundred microseconds then polls
 * through its waits instead of sleeping just before an answer: with two
 * CPUs and more pollers than CPUs, a wait longer than the base window
 * (answers delayed by the pollers sharing a CPU) ended in a sleep, and the
 * wake-up of an idle virtual CPU cost 50 us more per message, so the
 * 8 B ping-pong of a PVM program took 20-40 us instead of 13-15
 * (docs/architecture.md, "The window").  Waits longer than that keep the
 * base window: spinning through them would only burn the CPU.
 */
uint64_t
colls__poll_window_ns(uint64_t base_ns, uint64_t avg_ns)
{
    if (base_ns == 0 || avg_ns > (uint64_t)COLLS__STRETCH_US * 1000u)
        return base_ns;
    return 2 * avg_ns > base_ns ? 2 * avg_ns : base_ns;
}

/* Folds the duration of a wait that did not end at once into the average
   colls__poll_window_ns reads (weight 1/4: a change of pace shows within
   a few waits; the first wait is the average).  A wait counts for at most
   4 COLLS__STRETCH_US: one long wait (a worker's hour of work) ends the
   stretching at once, and short waits bring it back within a few, not
   dozens. */
uint64_t
colls__wait_avg_ns(uint64_t avg_ns, uint64_t took_ns)
{
    const uint64_t most = 4u * COLLS__STRETCH_US * 1000u;

    if (took_ns > most)
        took_ns = most;
    return avg_ns == 0 ? took_ns : (3 * avg_ns + took_ns) / 4;
}

/*
 * Refreshes c->solo and c->crowded, at most every COLLS__CROWD_CHECK_NS:
 * solo when this thread may run on one CPU only (then /proc/loadavg is
 * not read: three system calls a solo wait has no use for); else crowded
 * when /proc/loadavg counts more runnable processes (this one included) than
 * the CPUs this thread may run on.  Then a probe that found nothing
 * yields, so that the daemon this task waits for gets the CPU; else the
 * poll keeps it.  Unreadable: crowded, the polite guess.
 */
static void
colls_crowd_check(colls_t *c, uint64_t now_ns)
{
    char line[128];
    cpu_set_t cpus;
    ssize_t got = -1;
    int fd, nrun = 0, ncpu;

    if (c->crowd_checked_ns != 0 &&
        now_ns - c->crowd_checked_ns < COLLS__CROWD_CHECK_NS)
        return;
    c->crowd_checked_ns = now_ns;
    ncpu = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
    c->solo = ncpu <= 1;
    if (c->solo)
        return; /* a solo task does not poll: no yields to decide */
    fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        got = read(fd, line, sizeof line - 1);
        close(fd);
    }
    line[got > 0 ? got : 0] = '\0';
    c->crowded =
        got <= 0 || sscanf(line, "%*s %*s %*s %d", &nrun) != 1 || nrun > ncpu;
}

/* 1 while something this task started awaits the daemon or a peer: a
   collective's result, a direct collective's message, a control reply, a
   posted receive. */
static int
colls_in_flight(const colls_t *c)
{
    return c->coll_wait != NULL || c->dcoll_busy || !list_empty(&c->ctls) ||
           !list_empty(&c->posted);
}

/*
 * Before a wait sleeps: runs the loop without blocking (UV_RUN_NOWAIT)
 * until pred(arg) holds, the wait must end (connection gone, its timer
 * fired when armed), nothing is in flight any more, or the window
 * passed.  Yields between probes when the machine is crowded.  1 if the
 * wait should look again at once, 0 if it should sleep.
 */
static int
colls_poll_window(colls_t *c, int (*pred)(void *), void *arg, int armed)
{
    uint64_t start, now, window;
    unsigned probe = 0;
    int board = c->sleep_word != NULL;

    window = colls__poll_window_ns(c->poll_ns, c->wait_avg_ns);
    if (window == 0 || !colls_in_flight(c))
        return 0;
    start = uv_hrtime();
    colls_crowd_check(c, start);
    /* one CPU: the daemon we wait for needs it (collsd.c); a member of
       our host that we wait for on a board gets it at each yield, and
       so do the peers of a direct collective among hosts where they
       share it (emulated hosts; docs/architecture.md, "One CPU: direct
       collectives among hosts poll") */
    if (c->solo && !board && c->dcoll_remote == 0)
        return 0;
    for (;;) {
        /* a board is memory: the loop runs every COLLS__BOARD_PROBES
           probes only (deaths, ABORTs, the timer) */
        if (!board || probe++ % COLLS__BOARD_PROBES == 0) {
            /* the shared-memory ring first: no system call for it */
            if (colls__shm_poll(&c->conn) &&
                (pred(arg) || c->conn.err || (armed && c->timer_fired)))
                return 1;
            if (uv_run(&c->conn.loop, UV_RUN_NOWAIT) == 0)
                return 0; /* nothing alive: UV_RUN_ONCE reports it */
        }
        if (pred(arg) || c->conn.err || (armed && c->timer_fired))
            return 1;
        now = uv_hrtime();
        if (now - start >= window || !colls_in_flight(c))
            return 0;
        if (c->crowded || c->solo)
            sched_yield();
    }
}

/*
 * Runs the loop until pred(arg) holds.  With timed != 0 and a timeout set
 * (colls_set_timeout), gives up with COLLS_ETIMEDOUT.  Returns 0, the
 * connection's error once the daemon stream is gone, or COLLS_EIO if the
 * loop has nothing left that could make pred true.
 */
int
colls__wait(colls_t *c, int (*pred)(void *), void *arg, int timed)
{
    int rc = 0, n;
    int armed = 0;
    uint64_t start;

    if (pred(arg))
        return 0;
    start = uv_hrtime();
    if (timed && c->timeout_ms >= 0) {
        c->timer_fired = 0;
        uv_timer_start(&c->timer, colls_timer_cb, (uint64_t)c->timeout_ms, 0);
        armed = 1;
    }
    for (;;) {
        if (pred(arg))
            break;
        if (armed && c->timer_fired) {
            rc = COLLS_ETIMEDOUT;
            break;
        }
        if (c->conn.err) {
            rc = c->conn.err;
            break;
        }
        /* frames already in the shared-memory ring: no sleep for them;
           then a bounded polling window before the loop may sleep */
        if (colls__shm_poll(&c->conn) || colls_poll_window(c, pred, arg, armed))
            continue;
        /* a wait on a board (hcoll.c) says what it sleeps for, then
           looks once more: who changes that after rings our bell */
        if (c->sleep_word != NULL) {
            atomic_store(c->sleep_word, c->sleep_what);
            if (pred(arg)) {
                atomic_store(c->sleep_word, 0);
                break;
            }
        }
        n = uv_run(&c->conn.loop, UV_RUN_ONCE);
        if (c->sleep_word != NULL)
            atomic_store(c->sleep_word, 0);
        if (n == 0 && !pred(arg)) {
            rc = COLLS_EIO;
            break;
        }
    }
    if (armed)
        uv_timer_stop(&c->timer);
    c->wait_avg_ns = colls__wait_avg_ns(c->wait_avg_ns, uv_hrtime() - start);
    return rc;
}

/* Handles whatever is ready without blocking. */
int
colls__poll(colls_t *c)
{
    uv_run(&c->conn.loop, UV_RUN_NOWAIT);
    return c->conn.err;
}

/* ---- what the connection layer reports --------------------------------- */

/* A DATA frame from src by route: a message for p2p.c.  Takes e and
   payload. */
static void
colls_data(colls_t *c, int route, colls_tid_t src, Envelope *e,
           uint8_t *payload, size_t plen)
{
    struct colls__rmsg *m = calloc(1, sizeof(*m));

    if (m == NULL) {
        /* cannot queue it: from the daemon, the loss is reported as the
           connection's */
        free(payload);
        envelope_free(e);
        if (route == COLLS_ROUTE_DEFAULT)
            c->conn.err = COLLS_ENOMEM;
        return;
    }
    m->src = src;
    m->tag = e->tag;
    m->flags = e->flags;
    m->encoding = (int)e->encoding;
    m->byte_order = (int)e->byte_order;
    m->route = route;
    m->data = payload;
    m->len = plen;
    envelope_free(e);
    colls__deliver(c, m);
}

/*
 * ops->frame: dispatches a whole frame by its kind.  Direct connections
 * only pass DATA up.  Takes e and payload.
 */
static void
colls_frame_cb(struct colls__conn *cn, int route, colls_tid_t src, Envelope *e,
               uint8_t *payload, size_t plen)
{
    colls_t *c = COLLS__OF(cn);

    switch (e->kind) {
    case KIND__DATA:
        colls_data(c, route, src, e, payload, plen);
        return;
    case KIND__SEND_FAILED:
        colls__mark_dead(c, e->dst, e->status < 0 ? e->status : COLLS_ENOENT);
        break;
    case KIND__TASK_EXIT:
        colls__mark_dead(c, e->src, COLLS_EPEERDEAD);
        break;
    case KIND__HOST_DOWN:
        if (e->body_case == ENVELOPE__BODY_HOST_OP)
            colls__mark_host_down(c, (int)e->host_op->hid);
        break;
    case KIND__COLL_RESULT:
        colls__coll_frame(c, e, payload, plen);
        return;
    case KIND__SPAWN_OUTPUT:
        colls__spawn_output(c, e, payload, plen);
        return;
    default:
        colls__ctl_reply(c, e, payload, plen);
        return;
    }
    free(payload);
    envelope_free(e);
}

/* ops->closed: the daemon is gone; every receive and request fails. */
static void
colls_closed_cb(struct colls__conn *cn)
{
    colls_t *c = COLLS__OF(cn);

    colls__recv_fail_all(c, cn->err);
    colls__ctl_fail_all(c, cn->err);
}

/* ops->dead: a death the connection layer held back may be recorded. */
static void
colls_dead_cb(struct colls__conn *cn, colls_tid_t tid, int status)
{
    colls__mark_dead(COLLS__OF(cn), tid, status);
}

static const struct colls__conn_ops colls_conn_ops = {
    .frame = colls_frame_cb,
    .claim = colls__recv_claim,
    .claimed = colls__recv_claimed,
    .claim_result = colls__coll_claim_result,
    .result_claimed = colls__coll_result_claimed,
    .written = colls__req_written,
    .closed = colls_closed_cb,
    .dead = colls_dead_cb,
    .resolve = colls__ctl_resolve,
};

/*
 * A write on a connection the other end closed raises SIGPIPE, whose
 * default action ends the process; the library reports such a write as
 * an error instead.  So SIGPIPE is set to be ignored, unless the program
 * chose its own disposition.
 */
static void
colls_ignore_sigpipe(void)
{
    struct sigaction sa;

    if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL &&
        !(sa.sa_flags & SA_SIGINFO)) {
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = SIG_IGN;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGPIPE, &sa, NULL);
    }
}

/* Fills path with the socket path to use (see the file comment). */
static int
colls_socket_path(const char *arg, char *path, size_t cap)
{
    const char *env = getenv("COLLS_SOCKET");
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n;

    if (arg != NULL && arg[0] != '\0')
        n = snprintf(path, cap, "%s", arg);
    else if (env != NULL && env[0] != '\0')
        n = snprintf(path, cap, "%s", env);
    else if (xdg != NULL && xdg[0] != '\0')
        n = snprintf(path, cap, "%s/collsd/collsd.sock", xdg);
    else
        n = snprintf(path, cap, "/tmp/collsd-%u/collsd.sock",
                     (unsigned)getuid());
    if (n < 0 || (size_t)n >= cap)
        return COLLS_EINVAL;
    return 0;
}

/* The program name reported in ATTACH_REQ. */
static void
colls_prog_name(char *name, size_t cap)
{
    char exe[4096];
    size_t sz = sizeof(exe);
    const char *env = getenv("COLLS_TASK_NAME");
    const char *base;
    size_t n;

    if (env != NULL && env[0] != '\0') {
        snprintf(name, cap, "%s", env);
        return;
    }
    if (uv_exepath(exe, &sz) != 0) {
        snprintf(name, cap, "task");
        return;
    }
    base = strrchr(exe, '/');
    base = base != NULL ? base + 1 : exe;
    n = strlen(base);
    if (n >= cap)
        n = cap - 1;
    memcpy(name, base, n);
    name[n] = '\0';
}

/* Sends ATTACH_REQ and applies ATTACH_REP.  0 or a COLLS_E* code. */
static int
colls_handshake(colls_t *c)
{
    Envelope e;
    AttachReq ar = ATTACH_REQ__INIT;
    Envelope *rep = NULL;
    const char *adm = getenv("COLLS_ADMIN");
    const char *cma = getenv("COLLS_CMA");
    char name[64];
    int saved = c->timeout_ms;
    int rc;

    colls_prog_name(name, sizeof(name));
    envelope_init(&e);
    e.kind = KIND__ATTACH_REQ;
    ar.version = COLLS_PROTO_VERSION;
    ar.pid = (int32_t)getpid();
    ar.name = name;
    ar.admin = adm != NULL && strcmp(adm, "1") == 0;
    if (cma == NULL || strcmp(cma, "0") != 0) {
        /* the daemon proves it can read our memory by reading this */
        if (getrandom(c->cma_token, sizeof(c->cma_token), 0) ==
            (ssize_t)sizeof(c->cma_token)) {
            ar.cma_addr = (uint64_t)(uintptr_t)c->cma_token;
            ar.cma_token.data = c->cma_token;
            ar.cma_token.len = sizeof(c->cma_token);
        }
    }
    e.body_case = ENVELOPE__BODY_ATTACH_REQ;
    e.attach_req = &ar;
    c->timeout_ms = COLLS__ATTACH_MS;
    rc = colls__ctl_call(c, &e, &rep);
    c->timeout_ms = saved;
    if (rc < 0)
        return rc;
    if (rep->kind != KIND__ATTACH_REP ||
        rep->body_case != ENVELOPE__BODY_ATTACH_REP) {
        rc = COLLS_EPROTO;
        goto out;
    }
    c->conn.tid = rep->attach_rep->tid;
    c->hid = (int)rep->attach_rep->hid;
    c->incarnation = rep->attach_rep->incarnation;
    c->max_message = rep->attach_rep->max_message;
    c->parent = rep->attach_rep->parent;
    c->cma = ar.cma_addr != 0 && rep->attach_rep->cma;
    if (c->max_message == 0 || c->max_message > FRAME_DEFAULT_MAX_PAYLOAD)
        c->max_message = FRAME_DEFAULT_MAX_PAYLOAD;
    snprintf(c->conn.direct_addr, sizeof(c->conn.direct_addr), "%s",
             rep->attach_rep->direct_addr != NULL ? rep->attach_rep->direct_addr
                                                  : "");
    if (c->conn.tid == 0 || COLLS_TID_HID(c->conn.tid) != c->hid)
        rc = COLLS_EPROTO;
out:
    envelope_free(rep);
    return rc;
}

/* Frees what a colls_t holds after its handles are closed. */
static void
colls_free_handle(colls_t *c)
{
    struct list_node *n;

    while ((n = list_first(&c->unexpected)) != NULL) {
        list_del(n);
        colls__rmsg_free(list_entry(n, struct colls__rmsg, link));
    }
    while ((n = list_first(&c->posted)) != NULL) {
        list_del(n);
        free(list_entry(n, struct colls_req, link));
    }
    while ((n = list_first(&c->ctls)) != NULL)
        colls__ctl_free(list_entry(n, struct colls__ctl, link));
    colls__dcoll_forget(c, 0, 1);
    free(c->dcoll_scratch);
    free(c->siblings);
    free(c->dead.v);
    if (c->bell_fd >= 0)
        close(c->bell_fd);
    free(c);
}

/* Closes every handle of c and runs the loop until they are all closed. */
static void
colls_close_all(colls_t *c)
{
    if (!uv_is_closing((uv_handle_t *)&c->timer))
        uv_close((uv_handle_t *)&c->timer, NULL);
    if (c->bell_fd >= 0 && !uv_is_closing((uv_handle_t *)&c->bell_poll))
        uv_close((uv_handle_t *)&c->bell_poll, NULL);
    colls__conn_close(&c->conn);
}

/* The daemon's words on this thread's last failed attach (colls_errmsg
   with NULL): the handle that held them is gone by then. */
_Thread_local char colls__attach_errmsg[512];

/*
 * Attaches to the local daemon.  On success *out is the new handle; on
 * failure nothing is left behind and a COLLS_E* code is returned
 * (COLLS_ECONNREFUSED when no daemon listens on the socket).
 */
int
colls_attach(const char *socket_path, colls_t **out)
{
    colls_t *c;
    char path[4096];
    int rc;

    if (out == NULL)
        return COLLS_EINVAL;
    *out = NULL;
    colls_ignore_sigpipe();
    rc = colls_socket_path(socket_path, path, sizeof(path));
    if (rc < 0)
        return rc;
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return COLLS_ENOMEM;
    c->timeout_ms = -1;
    c->catch_fd = -1;
    c->bell_fd = -1;
    c->route = COLLS_ROUTE_DEFAULT;
    c->poll_ns = colls_poll_ns();
    list_init(&c->unexpected);
    list_init(&c->posted);
    list_init(&c->ctls);
    list_init(&c->dcoll_inbox);
    list_init(&c->dcoll_posted);
    rc = colls__conn_init(&c->conn, &colls_conn_ops);
    if (rc < 0) {
        free(c);
        return rc;
    }
    uv_timer_init(&c->conn.loop, &c->timer);
    c->timer.data = c;
    rc = colls__direct_cc_set(&c->conn, getenv("COLLS_DIRECT_CC"), c->errmsg,
                              sizeof(c->errmsg));
    if (rc < 0)
        goto fail;
    rc = colls__conn_open(&c->conn, path);
    if (rc < 0)
        goto fail;
    rc = colls_handshake(c);
    if (rc < 0)
        goto fail;
    /* Without a listener this task still sends directly; it just cannot
       be reached directly, and peers fall back to the daemon. */
    colls__direct_listen(&c->conn);
    *out = c;
    colls__attach_errmsg[0] = '\0';
    return 0;
fail:
    snprintf(colls__attach_errmsg, sizeof(colls__attach_errmsg), "%s",
             c->errmsg);
    colls_close_all(c);
    colls_free_handle(c);
    return rc;
}

/* DETACH was written (or failed). */
static int
colls_req_done_pred(void *arg)
{
    return ((struct colls_req *)arg)->done;
}

/* The daemon closed the connection. */
static int
colls_conn_gone_pred(void *arg)
{
    return ((colls_t *)arg)->conn.err != 0;
}

/*
 * Detaches: tells the daemon, closes every connection and frees c.
 * Requests still outstanding are abandoned (complete them first).
 */
int
colls_detach(colls_t *c)
{
    struct colls_req r;
    Envelope e;

    if (c == NULL)
        return COLLS_EINVAL;
    colls__coll_drain(c, NULL); /* operations that returned early */
    if (c->conn.err == 0 && c->conn.daemon != NULL) {
        memset(&r, 0, sizeof(r));
        r.c = c;
        r.kind = COLLS__REQ_SEND;
        envelope_init(&e);
        e.kind = KIND__DETACH;
        e.src = c->conn.tid;
        if (colls__write_req(c, &e, NULL, 0, &r) == 0) {
            colls__wait(c, colls_req_done_pred, &r, 0);
            /* Linger until the daemon closes: closing first could make
               its next write fail before it read our last messages. */
            c->timeout_ms = COLLS__DETACH_MS;
            colls__wait(c, colls_conn_gone_pred, c, 1);
        }
    }
    colls_close_all(c);
    colls_free_handle(c);
    return 0;
}

colls_tid_t
colls_mytid(const colls_t *c)
{
    return c != NULL ? c->conn.tid : 0;
}

/* Route of later sends: COLLS_ROUTE_DEFAULT or COLLS_ROUTE_DIRECT. */
int
colls_set_route(colls_t *c, int route)
{
    if (c == NULL ||
        (route != COLLS_ROUTE_DEFAULT && route != COLLS_ROUTE_DIRECT))
        return COLLS_EINVAL;
    c->route = route;
    return 0;
}

/* Timeout of blocking receives, probes and admin calls; -1 waits forever.
   Sends are not cut short: they return once the bytes are written. */
int
colls_set_timeout(colls_t *c, int ms)
{
    if (c == NULL || ms < -1)
        return COLLS_EINVAL;
    c->timeout_ms = ms;
    return 0;
}

/* Direct-route sends that had to go through the daemon instead. */
uint64_t
colls_route_fallbacks(const colls_t *c)
{
    return c != NULL ? c->conn.fallbacks : 0;
}

/* Releases an array or string returned by the library. */
void
colls_free(void *p)
{
    free(p);
}
