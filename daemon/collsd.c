/*
 * collsd.c -- main(): options, start-up, the loop, shutdown.
 *
 * Start-up order: options; unless --foreground, the fork into the
 * background (platform_daemonize: the command's own process waits on a
 * pipe until the daemon is ready or has failed, and exits with its
 * status); the socket directory (0700) and a check that no daemon serves
 * the socket already; the log; the cluster key (collsd_trust: a key file,
 * or loopback only unless --insecure); the UDP socket and transport; the
 * host table (hostfile, join or one host); the task socket (after the
 * join, when joining); the HTTP listener; the pid file.  Then the daemon
 * is ready: it tells the waiting process and, under systemd, the service
 * manager, from that one point (collsd_ready).
 *
 * Every start-up failure names its cause once, on the terminal the
 * command was typed on: log.c's start-up mode writes errors there as
 * "collsd: TEXT" until collsd_ready, and main() adds nothing when a cause
 * was written.  OS errors are printed with strerror, not as COLLS_E*
 * texts.
 *
 * The loop: one event_base, three priorities (0 signals, 1 I/O and the
 * end-of-turn flush, net.c; 2 unused).  collsd_run turns it: it blocks in
 * epoll while the daemon is idle; after a turn that leaves work in flight
 * (collsd_busy) it polls the sockets for --poll-us before blocking again
 * (collsd_poll; docs/architecture.md "The event loop and polling").
 *
 * Wiring: collsd.c installs the upcalls of the lower layers: net_ops
 * (messages to route.c, transport resets to host.c, join datagrams to
 * join.c, the end-of-turn hook) and task_ops (frames to route.c, exits
 * to events.c, which decides who reacts to what).  It owns the periodic
 * jobs (collsd_cron_cb, one timer), the end-of-loop-turn hook
 * (collsd_turn_end, Redis' beforeSleep), the task socket's set-up, and
 * shutdown (events_stop starts it, collsd_linger ends the loop).
 *
 * SIGTERM/SIGINT: stop; every task connection is closed, the socket and
 * the pid file are removed, exit 0.  SIGHUP: re-read the hostfile and
 * reopen the log file.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/buffer.h>
#include <event2/http.h>

#include "colls.h"
#include "daemon/admin.h"
#include "daemon/auth.h"
#include "daemon/coll.h"
#include "daemon/access.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/events.h"
#include "daemon/group.h"
#include "daemon/host.h"
#include "daemon/join.h"
#include "daemon/log.h"
#include "daemon/measure.h"
#include "daemon/net.h"
#include "daemon/platform.h"
#include "daemon/rel.h"
#include "daemon/route.h"
#include "daemon/spawn.h"
#include "daemon/task.h"
#include "proto/envelope.h"
#include "proto/list.h"

extern char **environ;

#define CRON_US 20000u
/* The idle cron's longest period (collsd_cron_arm). */
#define CRON_IDLE_US 1000000u

/*
 * While stopping: ends the loop once no task is left and the transport
 * has delivered what is queued to the hosts that are up, or at
 * d->stop_at_us (events_stop) whatever is left.
 */
static void
collsd_linger(struct daemon *d, uint64_t now)
{
    int hid, busy = d->tasks != NULL;

    for (hid = 1; hid <= DAEMON_MAX_HID; hid++)
        if (hid != d->hid && d->hosts[hid] != NULL &&
            d->hosts[hid]->state == COLLS_HOST_UP && net_queued(d, hid) > 0)
            busy = 1;
    if (!busy || now >= d->stop_at_us)
        event_base_loopbreak(d->base);
}

/* Tells the service manager once that the daemon is stopping, whoever
   started the stop (a signal, collsctl halt, a failed join). */
static void
collsd_notify_stopping(void)
{
    static int told;

    if (!told)
        platform_notify("STOPPING=1");
    told = 1;
}

/* 1 for a member with nothing of its own to do: no task, no group, no
   request of its own pending, no spawn, neither joining nor stopping. */
static int
collsd_idle(const struct daemon *d)
{
    return d->tasks == NULL && !d->stopping && !d->joining &&
           list_empty(&d->pending) && !spawn_busy(d) && !measure_busy(d) &&
           (d->gs == NULL || list_empty(&d->gs->groups));
}

/*
 * Arms the cron's next run: in CRON_US while anything it watches may be
 * due soon -- a task, a group, a request, a spawn, a join or a stop in
 * progress; else (an idle member) when its next heartbeat is due
 * (host_beat_due), at least CRON_US and, unless its heartbeats are slow
 * (--idle-heartbeat, every host up), at most CRON_IDLE_US: a silence is
 * then judged at most a heartbeat late (--dead-after is at least two)
 * and a stall is a cron run late (host_cron, d->cron_due_us).  An idle daemon
 * of 4 emulated hosts woke about 90 times a second with the cron at 20 ms and
 * used 0.5 % of a CPU; with the cron at a quarter heartbeat (and
 * collsd_slack, collsd_poll) 17 times, 0.14 %; with this and heartbeats
 * acked at once (host_heartbeat) 9.8 times, 0.08 %; with heartbeats
 * every --idle-heartbeat (10 s) 0.55 times, 0.005 %
 * (tests/bench/idle-bench.sh and mpi-bench.sh's idle line measure it;
 * docs/architecture.md "Cron").
 */
static void
collsd_cron_arm(struct daemon *d)
{
    uint64_t us = CRON_US, now, due;
    struct timeval tv;

    now = platform_now_us();
    d->cron_idle = collsd_idle(d);
    if (d->cron_idle) {
        due = host_beat_due(d, 1);
        us = due > now ? due - now : 0;
        if (us > CRON_IDLE_US && !host_beat_slow(d))
            us = CRON_IDLE_US;
        if (us < CRON_US)
            us = CRON_US;
    }
    d->cron_gap_us = us;
    /* brought forward, it was still due at the earlier time */
    if (d->cron_due_us == 0 || now + us < d->cron_due_us)
        d->cron_due_us = now + us;
    tv.tv_sec = (time_t)(us / 1000000u);
    tv.tv_usec = (suseconds_t)(us % 1000000u);
    event_add(d->cron_ev, &tv);
}

/*
 * The periodic jobs, every CRON_US (less often when idle: collsd_cron_arm),
 * in this order:
 *   membership: stopping -> collsd_linger; joining -> join_cron; a member
 *     -> host_comeback (declared down while alive), group_cron (group
 *     timeouts), host_cron (heartbeats, invitations, dead hosts);
 *   then always admin_cron and spawn_cron (request timeouts), task_cron (stuck
 *   connections), coll_cron (stale early collective data).
 */
static void
collsd_cron_cb(evutil_socket_t fd, short what, void *arg)
{
    struct daemon *d = arg;
    uint64_t now = platform_now_us();

    if (d->stopping) {
        collsd_notify_stopping();
        collsd_linger(d, now);
    } else if (d->joining) {
        join_cron(d, now);
    } else {
        host_comeback(d);
        group_cron(d, now);
        host_cron(d, now, collsd_idle(d));
    }
    d->cron_us = now;
    d->cron_due_us = 0;
    admin_cron(d, now);
    spawn_cron(d, now);
    task_cron(d, now);
    coll_cron(d, now);
    measure_cron(d, now);
    net_kick(d);
    collsd_cron_arm(d);
}

/*
 * The end-of-loop-turn hook (net_ops.turn_end, run by net.c after the
 * callbacks of each turn and after its datagrams went out, Redis'
 * beforeSleep): writes what the turn queued for tasks (task_flush_due:
 * a daemon forwards before it delivers), frees the tasks that died
 * during the turn, then resumes readers whose destinations drained; a
 * daemon that was idle and now is not (a task came, a request, a stop)
 * brings its cron forward from the idle period to CRON_US, so a stop
 * lingers and a request times out on time; so does one whose heartbeat
 * cannot wait for a slow cron (host_beat_early: a host came up, or one
 * joins and waits for its invitation).
 */
static void
collsd_turn_end(struct daemon *d)
{
    task_flush_due(d);
    task_reap(d);
    if (d->npaused > 0)
        task_resume_paused(d);
    if (d->cron_idle && d->cron_gap_us > CRON_US &&
        (!collsd_idle(d) || host_beat_early(d)))
        collsd_cron_arm(d);
}

static const struct net_ops collsd_net_ops = {
    .message = route_peer_input,
    .peer_reset = host_peer_reset,
    .join_dgram = join_dgram,
    .turn_end = collsd_turn_end,
};

/* task_ops.exit: a spawned child's exit waits for its status and its
   output (spawn.c announces it); any other task's is announced now. */
static void
collsd_task_exit(struct daemon *d, uint32_t tid)
{
    if (!spawn_task_exit(d, tid))
        events_task_exit(d, tid, -1);
}

static const struct task_ops collsd_task_ops = {
    .frame = route_task_input,
    .exit = collsd_task_exit,
    .reserved = spawn_attach,
    .attached = spawn_attached,
};

static void
collsd_signal_cb(evutil_socket_t sig, short what, void *arg)
{
    struct daemon *d = arg;
    int rc;

    switch (sig) {
    case SIGHUP:
        log_info("SIGHUP: re-reading the hostfile, reopening the log");
        platform_notify("RELOADING=1");
        log_reopen();
        rc = host_reload(d);
        if (rc != 0)
            log_warn("hostfile not applied: %s", log_errstr(rc));
        net_kick(d);
        platform_notify("READY=1");
        break;
    default:
        log_info("signal %d: shutting down", (int)sig);
        collsd_notify_stopping();
        events_stop(d, 0, 300000);
        break;
    }
}

/* ---- the loop: block when idle, poll while work is in flight ---------- */

/*
 * 1 while the daemon waits for something that should come soon: a
 * collective instance not finished (its group's list), output queued to
 * a task or a reader paused, a request to another daemon unanswered, or
 * a transport timer armed (data not yet acknowledged, an ack owed,
 * pacing).  An idle daemon has none of these, so it never polls.
 */
static int
collsd_busy(const struct daemon *d)
{
    const struct task *t;
    struct list_node *n;

    if (d->rel_deadline_us != UINT64_MAX || d->npaused > 0 ||
        !list_empty(&d->pending))
        return 1;
    for (t = d->tasks; t != NULL; t = t->next)
        if (t->out_head != NULL)
            return 1;
    if (d->gs != NULL)
        LIST_FOREACH (n, &d->gs->groups) {
            if (!list_empty(&list_entry(n, struct group, node)->insts))
                return 1;
        }
    return 0;
}

/* A number that grows whenever input arrives: bytes read from tasks and
   datagrams received. */
static uint64_t
collsd_input_mark(const struct daemon *d)
{
    struct rel_stats rs;

    rel_stats(d->rel, &rs);
    return d->st.bytes_in + rs.dgrams_in;
}

/* The polling state of the loop: whether to yield between probes. */
struct collsd_poller {
    int loadavg_fd;    /* /proc/loadavg, -1 if unreadable */
    uint64_t solo_us;  /* when solo and ncpu were last refreshed */
    uint64_t crowd_us; /* when crowded was */
    int ncpu;          /* CPUs of our affinity mask */
    int crowded;       /* more runnable processes than CPUs we may run on */
    int solo;          /* we may run on one CPU only: polling never pays */
};

#define COLLSD_CROWD_CHECK_US 1000u
/* The timer slack of a solo daemon's sleeps when no paced send is due:
   a scheduler tick at HZ=250, the common kernels' rate (collsd_slack). */
#define COLLSD_SOLO_SLACK_NS 4000000u

/* Refreshes p->solo and p->ncpu from our affinity mask, at most every
   COLLSD_CROWD_CHECK_US: one system call, which every sleep's slack
   needs (collsd_slack). */
static void
collsd_solo_check(struct collsd_poller *p, uint64_t now)
{
    cpu_set_t set;

    if (p->solo_us != 0 && now - p->solo_us < COLLSD_CROWD_CHECK_US)
        return;
    p->solo_us = now;
    p->ncpu = 1;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        p->ncpu = CPU_COUNT(&set);
    p->solo = p->ncpu <= 1;
}

/*
 * For a polling window: refreshes p->solo, and p->crowded at most every
 * COLLSD_CROWD_CHECK_US: crowded when the running count of /proc/loadavg
 * (runnable processes on the machine, this one included) exceeds the
 * CPUs of our affinity mask.  A solo daemon does not poll: /proc/loadavg
 * is not read for it, nor before a sleep (only polling needs it; an idle
 * daemon read it at every wake-up).  When the machine has more runnable
 * processes than we have CPUs, a probe that finds nothing yields, so that
 * the process we wait for (a task, the other daemon on the same CPU) runs
 * instead of us; otherwise polling keeps the CPU.
 */
static void
collsd_crowd_check(struct collsd_poller *p, uint64_t now)
{
    char text[128];
    ssize_t n;
    int running = 0;

    collsd_solo_check(p, now);
    if (p->solo ||
        (p->crowd_us != 0 && now - p->crowd_us < COLLSD_CROWD_CHECK_US))
        return;
    p->crowd_us = now;
    n = p->loadavg_fd >= 0 ? pread(p->loadavg_fd, text, sizeof text - 1, 0)
                           : -1;
    if (n <= 0) {
        p->crowded = 1; /* cannot tell: be polite */
        return;
    }
    text[n] = '\0';
    p->crowded =
        sscanf(text, "%*s %*s %*s %d", &running) != 1 || running > p->ncpu;
}

/* 1 once the loop was told to end (events_stop, collsd_linger). */
static int
collsd_loop_ended(struct daemon *d)
{
    return event_base_got_break(d->base) || event_base_got_exit(d->base);
}

/*
 * One polling window, after a loop turn: while work is in flight, runs
 * the loop without blocking (EVLOOP_NONBLOCK: epoll with no timeout, the
 * callbacks of what is ready, the end-of-turn flush) until input arrives
 * or --poll-us passed; yields between probes when the machine is crowded.
 * Counts the window (poll_rounds), a window that got input (poll_hits)
 * and the CPU time the polling cost (polled_us: the window's, without
 * the probe that found input, whose callbacks are the daemon's work; a
 * yield that lets another process run costs nothing).  1 if input
 * arrived (poll again), 0 if the loop should block.
 */
static int
collsd_poll(struct daemon *d, struct collsd_poller *p)
{
    uint64_t window = (uint64_t)d->cfg->poll_us, start, now, mark;
    uint64_t cpu0, cpu;
    int hit = 0;

    /* p->solo is at most COLLSD_CROWD_CHECK_US old (collsd_slack): a solo
       daemon does not walk its tasks and groups for collsd_busy.  Nor
       does an idle one poll: what it owes (the ack of a heartbeat) is not
       worth a window. */
    if (window == 0 || p->solo || collsd_loop_ended(d) || collsd_idle(d) ||
        !collsd_busy(d))
        return 0;
    start = platform_now_us();
    collsd_crowd_check(p, start);
    /* Pinned to one CPU, whatever we wait for (a task, another daemon
       there) needs the CPU we would spin on: sleep at once.  Measured on
       4 emulated hosts, everything on CPU 0: a 60 us window took a PVM
       barrier from 268 to 546 us and 8 B ping-pong from 30 to 48 us.
       Decided before the CPU clock is read: that clock is a system call
       (no vDSO for CLOCK_THREAD_CPUTIME_ID), once per turn for nothing. */
    if (p->solo)
        return 0;
    cpu0 = cpu = platform_cpu_us();
    mark = collsd_input_mark(d);
    d->st.poll_rounds++;
    for (;;) {
        /* a task's shared-memory ring first: no system call for it */
        task_shm_poll(d);
        if (event_base_loop(d->base, EVLOOP_NONBLOCK) < 0)
            break;
        if (collsd_input_mark(d) != mark) {
            hit = 1;
            d->st.poll_hits++;
            break;
        }
        now = platform_now_us();
        if (now - start >= window || collsd_loop_ended(d) || !collsd_busy(d))
            break;
        if (p->crowded)
            sched_yield();
        cpu = platform_cpu_us();
    }
    if (!hit)
        cpu = platform_cpu_us();
    d->st.polled_us += cpu - cpu0;
    return hit && !collsd_loop_ended(d);
}

/*
 * Before the loop may sleep: the timer slack of that sleep.  A solo
 * daemon (affinity of one CPU) with no paced send due lets its timers
 * (delayed acks, loss probes, retransmissions, the cron) fire up to
 * COLLSD_SOLO_SLACK_NS late, that is at the next scheduler tick: a sleep
 * whose deadline is less than a tick away otherwise programs the timer
 * hardware as it starts and again when input ends it early -- on a VM
 * each is an exit to the hypervisor -- and a daemon in a ping-pong always
 * sleeps so, an ack or a probe being due within a millisecond.  Measured
 * with everything on CPU 0, 8 B ping-pong, half round trip: PVM's programs
 * on 2 emulated hosts 35 -> 25.5 us (long runs; tests/bench/pvm-bench.sh
 * on 4 hosts 33.2 -> 27.8), `collsctl pingpong --route default` 25.7 ->
 * 18.0 (raw UDP 7.85); an eventfd ping-pong of two processes: 3.4 us per
 * wake-up with an epoll timeout of 1 ms, 0 with 5 ms or more.  A paced send
 * keeps the default slack (its lateness would cost throughput), and so
 * does a busy daemon with more than one CPU: unpinned the slack did not
 * pay.  An idle daemon (collsd_idle) takes the slack too: libevent judges
 * its timers by the coarse monotonic clock, which moves once a tick (4 ms
 * at HZ=250), so a delayed ack due in 200 us took four 1 ms sleeps
 * before it fired; with the slack the first sleep reaches the tick.
 * A system call only when the slack changes (platform_timer_slack); a
 * spawned child gets the daemon's own slack (spawn.c).
 */
static void
collsd_slack(struct daemon *d, struct collsd_poller *p)
{
    collsd_solo_check(p, platform_now_us());
    (void)platform_timer_slack((p->solo || collsd_idle(d)) &&
                                       rel_next_pace(d->rel) == UINT64_MAX
                                   ? COLLSD_SOLO_SLACK_NS
                                   : 0);
}

/* Turns in a row the loop may take from the tasks' rings alone
   (task_shm_sleep) before it runs libevent's without blocking. */
#define COLLSD_QUIET_MAX 16

/*
 * The daemon's loop, until events_stop or collsd_linger ends it: one
 * blocking turn (EVLOOP_ONCE), then polling windows for as long as each
 * brings input.
 */
static void
collsd_run(struct daemon *d)
{
    struct collsd_poller p = {-1, 0, 0, 1, 0, 0};
    int quiet = 0; /* turns in a row taken from the rings alone */

    p.loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    for (;;) {
        int flags = EVLOOP_ONCE;

        collsd_slack(d, &p);
        if (task_shm_sleep(d)) {
            /* a task wrote without ringing: its input and the turn's
               flush, without an epoll_wait that would find nothing --
               but the socket's turn comes after COLLSD_QUIET_MAX */
            task_shm_poll(d);
            if (++quiet < COLLSD_QUIET_MAX) {
                net_flush_now(d);
                if (collsd_loop_ended(d))
                    break;
                continue;
            }
            flags = EVLOOP_NONBLOCK;
        }
        quiet = 0;
        if (event_base_loop(d->base, flags) != 0 || collsd_loop_ended(d))
            break;
        while (collsd_poll(d, &p))
            ;
        if (collsd_loop_ended(d))
            break;
    }
    if (p.loadavg_fd >= 0)
        close(p.loadavg_fd);
}

/* GET /metrics (Prometheus text) and /stats.json. */
static void
collsd_http_cb(struct evhttp_request *req, void *arg)
{
    struct daemon *d = arg;
    const char *uri = evhttp_request_get_uri(req);
    struct evbuffer *out;
    struct buf b;
    int rc, json;

    if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
        evhttp_send_error(req, 405, "only GET");
        return;
    }
    json = strncmp(uri, "/stats.json", 11) == 0;
    if (!json && strncmp(uri, "/metrics", 8) != 0) {
        evhttp_send_error(req, HTTP_NOTFOUND, "try /metrics or /stats.json");
        return;
    }
    buf_init(&b);
    rc = json ? admin_stats_json(d, &b) : admin_stats_prometheus(d, &b);
    out = evbuffer_new();
    if (rc != 0 || out == NULL) {
        buf_free(&b);
        if (out != NULL)
            evbuffer_free(out);
        evhttp_send_error(req, HTTP_INTERNAL, "no memory");
        return;
    }
    evbuffer_add(out, buf_head(&b), buf_avail(&b));
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      json ? "application/json" : "text/plain; version=0.0.4");
    evhttp_send_reply(req, HTTP_OK, "OK", out);
    evbuffer_free(out);
    buf_free(&b);
}

/* Starts the HTTP metrics listener; 0 or a negative code. */
static int
collsd_http_start(struct daemon *d)
{
    char host[DAEMON_ADDR_LEN];
    const char *spec = d->cfg->http, *colon = strrchr(spec, ':');

    if (colon == NULL || (size_t)(colon - spec) >= sizeof(host))
        return COLLS_EINVAL;
    memcpy(host, spec, (size_t)(colon - spec));
    host[colon - spec] = '\0';
    d->http = evhttp_new(d->base);
    if (d->http == NULL)
        return COLLS_ENOMEM;
    if (evhttp_bind_socket(d->http, host, (uint16_t)atoi(colon + 1)) != 0) {
        int e = errno;

        log_error("--http %s: cannot listen: %s", spec, strerror(e));
        return e != 0 ? -e : COLLS_EIO;
    }
    evhttp_set_gencb(d->http, collsd_http_cb, d);
    log_info("metrics at http://%s/metrics", spec);
    return 0;
}

/* The pid file path: --pidfile, else collsd.pid next to the socket. */
static char *
collsd_pid_path(const struct config *cfg)
{
    const char *slash = strrchr(cfg->socket, '/');
    char path[PATH_MAX];

    if (cfg->pidfile[0] != '\0')
        return strdup(cfg->pidfile);
    if (slash == NULL)
        snprintf(path, sizeof(path), "collsd.pid");
    else
        snprintf(path, sizeof(path), "%.*s/collsd.pid",
                 (int)(slash - cfg->socket), cfg->socket);
    return strdup(path);
}

/* Writes our pid to path; 0 or -errno. */
static int
collsd_write_pid(const char *path)
{
    FILE *f = fopen(path, "w");

    if (f == NULL)
        return -errno;
    fprintf(f, "%ld\n", (long)getpid());
    if (fclose(f) != 0)
        return errno != 0 ? -errno : COLLS_EIO;
    return 0;
}

/*
 * Before anything else is opened: if a process answers on the socket
 * path, another daemon serves it (its pid from the peer credentials when
 * the system tells them).  Reported here, so that neither its log file
 * nor its UDP port hides the cause.  0, or COLLS_EEXIST (logged).
 */
static int
collsd_check_socket(const char *path)
{
    struct sockaddr_un sa;
    uid_t uid;
    pid_t pid;
    int fd, rc = 0;

    if (strlen(path) >= sizeof(sa.sun_path))
        return 0; /* access_listen says so */
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
        if (platform_peer_cred(fd, &uid, &pid) == 0 && pid > 0)
            log_error("socket %s: a daemon already serves it (pid %ld); "
                      "stop it, or choose another --socket",
                      path, (long)pid);
        else
            log_error("socket %s: a daemon already serves it; stop it, or "
                      "choose another --socket",
                      path);
        rc = COLLS_EEXIST;
    }
    close(fd);
    return rc;
}

/* The exit status of a failed start: 2 for a usage error, else 1. */
#define COLLSD_EXIT_USAGE 2

/*
 * Reads the cluster key from path into a: the file must be a regular
 * file readable by its owner only and hold 64 hex digits (and a
 * newline).  0, or -1 with err set.
 */
static int
collsd_load_key(const char *path, const struct config *cfg, struct auth *a,
                char *err, size_t errlen)
{
    char text[AUTH_KEY_FILE_LEN + 2];
    uint8_t key[AUTH_KEY_LEN];
    struct stat st;
    ssize_t n;
    int fd, cipher = AUTH_CIPHER_AUTO, rc = -1;

    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        snprintf(err, errlen, "key file %s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "key file %s: not a regular file", path);
        goto out;
    }
    if ((st.st_mode & 077) != 0) {
        snprintf(err, errlen,
                 "key file %s is readable by group or others (mode %03o): "
                 "chmod 600 %s",
                 path, (unsigned)(st.st_mode & 0777), path);
        goto out;
    }
    n = read(fd, text, sizeof text);
    if (n < 0 || auth_key_parse(text, (size_t)n, key) != 0) {
        snprintf(err, errlen,
                 "key file %s: not a key (64 hex digits; collsctl keygen "
                 "writes one)",
                 path);
        goto out;
    }
    (void)auth_cipher_parse(cfg->cipher, &cipher); /* config_check did */
    rc = auth_init(a, key, cfg->encrypt, cipher);
    if (rc != 0) {
        if (rc == COLLS_ENOTSUP)
            snprintf(err, errlen,
                     "--cipher aes256gcm: this CPU has no AES-NI (use "
                     "xchacha20 on every daemon of the machine)");
        else
            snprintf(err, errlen, "key file %s: libsodium cannot start", path);
        rc = -1;
        goto out;
    }
    rc = 0;
out:
    auth_wipe(key, sizeof key);
    auth_wipe(text, sizeof text);
    close(fd);
    return rc;
}

/* 1 if the "ADDR:PORT" address is in 127.0.0.0/8. */
static int
collsd_loopback(const char *addr_port)
{
    return strncmp(addr_port, "127.", 4) == 0;
}

/*
 * Decides how this daemon trusts its peers: with --key-file, d->auth (a)
 * seals every datagram; without, --listen must be a loopback address
 * unless --insecure, which is logged as a warning.  0, or -1 with err
 * set (a message for the terminal).
 */
static int
collsd_trust(struct daemon *d, const struct config *cfg, struct auth *a,
             char *err, size_t errlen)
{
    if (cfg->key_file[0] != '\0') {
        if (collsd_load_key(cfg->key_file, cfg, a, err, errlen) != 0)
            return -1;
        d->auth = a;
        return 0;
    }
    if (cfg->encrypt) {
        snprintf(err, errlen, "--encrypt needs a cluster key (--key-file)");
        return -1;
    }
    if (collsd_loopback(cfg->listen))
        return 0;
    if (!cfg->insecure) {
        snprintf(err, errlen,
                 "refusing to listen on %s without a cluster key: anyone who "
                 "can reach it could command this daemon.  Create a key with "
                 "'collsctl keygen FILE', copy it to every host and start "
                 "with --key-file FILE (or --insecure on a trusted network)",
                 cfg->listen);
        return -1;
    }
    log_warn("INSECURE: listening on %s without a cluster key (--insecure): "
             "datagrams are not authenticated, anyone who can reach the port "
             "can forge them",
             cfg->listen);
    return 0;
}

/* Frees what survived the loop. */
static void
collsd_cleanup(struct daemon *d)
{
    task_close_all(d, 0);
    task_reap(d);
    task_notice_free(d);
    access_unlisten(d);
    admin_pending_free_all(d);
    spawn_free(d);
    route_free_all(d);
    while (d->notifies != NULL) {
        struct notify *n = d->notifies;

        d->notifies = n->next;
        free(n);
    }
    group_free_all(d);
    measure_free(d);
    if (d->http != NULL)
        evhttp_free(d->http);
    net_close(d);
    host_free_all(d);
    if (d->cron_ev != NULL)
        event_free(d->cron_ev);
}

/*
 * The daemon is ready: socket listening, joined, pid file written.  From
 * this one point the waiting parent (platform_daemonize) is released,
 * systemd is told (READY=1, Type=notify) and start-up mode ends.
 * *ready_fd becomes -1.
 */
static void
collsd_ready(struct daemon *d, int *ready_fd)
{
    char state[PATH_MAX + 64];

    log_info("ready: host %d, pid %ld, socket %s", d->hid, (long)getpid(),
             d->cfg->socket);
    snprintf(state, sizeof(state), "READY=1\nSTATUS=host %d, socket %s", d->hid,
             d->cfg->socket);
    platform_notify(state);
    log_startup_end();
    platform_daemonize_done(*ready_fd, 0);
    *ready_fd = -1;
}

/*
 * The log file (--log, --log-file): --log-file; else for --log file, or
 * --log auto in the background (no terminal there), collsd.log next to
 * the socket.  NULL: stderr or syslog.
 */
static char *
collsd_log_path(const struct config *cfg)
{
    const char *slash = strrchr(cfg->socket, '/');
    char *path = NULL;

    if (cfg->log_file[0] != '\0')
        return strdup(cfg->log_file);
    if (strcmp(cfg->log_to, "stderr") == 0 ||
        strcmp(cfg->log_to, "syslog") == 0 || slash == NULL ||
        (strcmp(cfg->log_to, "auto") == 0 && cfg->foreground))
        return NULL;
    if (asprintf(&path, "%.*s/collsd.log", (int)(slash - cfg->socket),
                 cfg->socket) < 0)
        return NULL;
    return path;
}

int
main(int argc, char **argv)
{
    static struct daemon dd; /* large: not on the stack */
    static struct auth key;  /* the cluster key's subkeys */
    struct daemon *d = &dd;
    struct config cfg;
    struct event *sigs[3] = {NULL, NULL, NULL};
    const int signums[3] = {SIGTERM, SIGINT, SIGHUP};
    char err[CONFIG_ERR_LEN];
    struct timeval tv = {0, CRON_US};
    char *logpath = NULL;
    int rc, i, joining, pid_written = 0, ready_fd = -1, ready = 0, status;

    rc = config_parse(&cfg, argc, argv, environ, err, sizeof(err));
    if (rc != 0) {
        fprintf(stderr, "collsd: %s\n", err);
        config_free(&cfg);
        return COLLSD_EXIT_USAGE;
    }
    if (cfg.help) {
        config_usage(stdout, "collsd");
        config_free(&cfg);
        return 0;
    }
    if (cfg.version) {
        printf("collsd %s (protocol %d)\n", PACKAGE_VERSION,
               COLLS_PROTO_VERSION);
        config_free(&cfg);
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    platform_tune_malloc();
    log_set_level(cfg.log_level);
    log_detect_journal();
    log_startup_begin();
    logpath = collsd_log_path(&cfg);

    d->cfg = &cfg;
    d->listen_fd = -1;
    list_init(&d->pending);
    d->task_ops = &collsd_task_ops;
    d->next_local = 1;
    if (!cfg.foreground && (rc = platform_daemonize(&ready_fd)) != 0) {
        log_error("cannot go to the background: %s", strerror(-rc));
        goto out;
    }
    d->inc = platform_incarnation();
    d->start_us = platform_now_us();
    rc = platform_secure_dir(cfg.socket, err, sizeof(err));
    if (rc != 0) {
        log_error("socket directory: %s", err);
        goto out;
    }
    rc = collsd_check_socket(cfg.socket);
    if (rc != 0)
        goto out;
    if (strcmp(cfg.log_to, "syslog") == 0)
        log_open_syslog();
    if (logpath != NULL && (rc = log_open(logpath)) != 0) {
        log_error("log file %s: %s", logpath, strerror(-rc));
        goto out;
    }
    d->pid_path = collsd_pid_path(&cfg);
    if (collsd_trust(d, &cfg, &key, err, sizeof(err)) != 0) {
        log_error("%s", err);
        rc = 1;
        goto out;
    }

    d->base = event_base_new();
    if (d->base == NULL || event_base_priority_init(d->base, 3) != 0) {
        rc = COLLS_ENOMEM;
        goto out;
    }
    rc = group_init(d);
    if (rc != 0)
        goto out;
    rc = measure_new(d);
    if (rc != 0)
        goto out;
    rc = spawn_init(d);
    if (rc != 0)
        goto out;
    rc = net_open(d, &collsd_net_ops);
    if (rc != 0)
        goto out;
    rc = host_init(d);
    if (rc < 0)
        goto out;
    joining = rc == 1;
    if (!joining && (rc = access_listen(d)) != 0)
        goto out;
    if (cfg.http[0] != '\0' && (rc = collsd_http_start(d)) != 0)
        goto out;
    log_info("collsd %s: host %d, incarnation %08x, udp %s, socket %s",
             PACKAGE_VERSION, d->hid, d->inc, d->listen_addr, cfg.socket);

    for (i = 0; i < 3; i++) {
        sigs[i] = evsignal_new(d->base, signums[i], collsd_signal_cb, d);
        if (sigs[i] == NULL) {
            rc = COLLS_ENOMEM;
            goto out;
        }
        event_priority_set(sigs[i], 0);
        evsignal_add(sigs[i], NULL);
    }
    d->cron_ev = event_new(d->base, -1, 0, collsd_cron_cb, d);
    if (d->cron_ev == NULL) {
        rc = COLLS_ENOMEM;
        goto out;
    }
    event_add(d->cron_ev, &tv);
    /* A join is finished before the daemon reports ready, so that its
       failure reaches the terminal and the exit status. */
    while (joining && d->joining && !d->stopping)
        event_base_loop(d->base, EVLOOP_ONCE);
    if (d->stopping) {
        if (log_startup_errors() == 0) /* else join.c said why */
            log_error("could not join the machine at %s", cfg.join);
        rc = 1;
        goto out;
    }
    if (d->pid_path != NULL) {
        rc = collsd_write_pid(d->pid_path);
        if (rc != 0) {
            log_error("pid file %s: %s", d->pid_path, strerror(-rc));
            goto out;
        }
        pid_written = 1;
    }
    collsd_ready(d, &ready_fd);
    ready = 1;

    collsd_run(d);
    rc = d->exit_code;
    log_info("collsd host %d stopping (exit %d)", d->hid, rc);
out:
    /* A start that failed without saying why (out of memory...). */
    if (rc != 0 && !ready && log_startup_errors() == 0)
        log_error("start-up failed: %s",
                  rc < 0 && rc > -4000 ? strerror(-rc) : log_errstr(rc));
    status = rc == 0 ? 0 : 1;
    collsd_cleanup(d);
    for (i = 0; i < 3; i++)
        if (sigs[i] != NULL)
            event_free(sigs[i]);
    if (pid_written)
        unlink(d->pid_path);
    free(d->pid_path);
    if (d->base != NULL)
        event_base_free(d->base);
    auth_clear(&key);
    log_close();
    free(logpath);
    config_free(&cfg);
    platform_daemonize_done(ready_fd, status);
    return status;
}
