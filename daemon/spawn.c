/*
 * spawn.c -- starting programs through the daemons (docs/spawn.md).
 *
 * Spawner's side.  SPAWN_REQ from a task becomes a struct spawn_req:
 * placement (spawn_place, over the host table) gives each copy a host,
 * the copies of one host become one SPAWN_ORDER {first, n, total} to its
 * daemon (or are executed here), and the SPAWN_DONE answers fill the
 * request's per-copy results until SPAWN_REP goes back to the task.  A
 * KILL_REQ for a task on another host waits the same way (one answer).
 * Requests fail per copy when their host goes down or after the deadline.
 *
 * Executing side.  A struct spawn_order holds the copies of one order;
 * each copy is a struct spawn_child: the file is checked against
 * --spawn-path (spawn_resolve), then fork/exec as the daemon's user in a
 * new session, stdin /dev/null, stdout and stderr on pipes, every other
 * descriptor closed; a CLOEXEC pipe brings exec's errno back (read at
 * once: it closes when exec succeeds).  A child that started gets its tid
 * at once (reserved: task.c gives it to the connection whose peer pid is
 * the child's, through task_ops.reserved = spawn_attach).  The order is
 * answered when every copy has attached, ended, or not attached within
 * SPAWN_ATTACH_US (a program that does not use colls).
 *
 * Output.  Each pipe is read by the loop and split into lines of at most
 * SPAWN_LINE_MAX bytes; each line goes as SPAWN_OUTPUT {src child, dst
 * parent} to the parent's daemon, which logs it "[t%x] line" and
 * delivers it to the parent if it called colls_catchout, else passes it
 * to the parent's own parent (so a spawned master's workers reach
 * whoever catches the master's output).  A catcher that does not read
 * (over --task-queue-max) loses lines (counted, logged once per line).
 *
 * Exit.  SIGCHLD -> waitpid: the status (code, or 128 + signal) is kept
 * until the child's task connection has closed and both pipes are at EOF;
 * then its exit is announced once, with the status, by events_task_exit
 * (so output always precedes the TASK_EXIT on every stream).  A child that
 * detached (DETACH) and has not ended SPAWN_DETACH_US later is announced
 * then, with status unknown.
 *
 * Layering: an upper module beside route.c (which dispatches to it); may
 * call events, host, task, net, log, platform, proto/.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "colls.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/events.h"
#include "daemon/log.h"
#include "daemon/net.h"
#include "daemon/platform.h"
#include "daemon/spawn.h"
#include "daemon/task.h"
#include "proto/envelope.h"
#include "proto/list.h"

/* A copy that starts but does not attach within this time is answered
   with its tid anyway (a program that does not use colls). */
#define SPAWN_ATTACH_US 3000000u
/* A child that detached and does not end within this time is announced
   gone with its exit status unknown. */
#define SPAWN_DETACH_US 2000000u
/* Nesting of parents a line of output is passed up through. */
#define SPAWN_OUTPUT_DEPTH 16
/* Arguments of one program. */
#define SPAWN_MAX_ARGS 4096

enum { SPAWN_STDOUT = 1, SPAWN_STDERR = 2 };

struct spawn_order;

/* One started copy (executing side). */
struct spawn_child {
    struct list_node node; /* on spawn_state.children */
    struct daemon *d;
    uint32_t tid, parent;
    pid_t pid;
    struct spawn_order *order; /* NULL once the order is answered */
    int index;                 /* in the order */
    int fd[3];                 /* [SPAWN_STDOUT], [SPAWN_STDERR]; -1 EOF */
    struct event *ev[3];
    struct spawn_lines lines[3];
    int used;              /* its tid went to a connection (once only) */
    int attached;          /* its connection is ACTIVE */
    int detached;          /* it sent DETACH */
    uint64_t detach_until; /* ... its exit waits for the status till then */
    int reaped;            /* waitpid returned its status */
    int status;            /* exit code or 128 + signal, once reaped */
    int announced;         /* its TASK_EXIT went out */
    struct list_node held; /* DATA for it before it attached (spawn_held) */
    uint64_t held_bytes;
};

/* A frame held for a copy that has not attached (spawn_hold). */
struct spawn_held {
    struct list_node node;
    int hid; /* the daemon it came from; 0 a local sender */
    uint64_t credit;
    const uint8_t *body;
    size_t env_len, body_len;
    void *owner;
};

/* The copies of one order (executing side). */
struct spawn_order {
    struct list_node node; /* on spawn_state.orders */
    int from_hid;          /* the spawner's daemon */
    uint64_t id;           /* its req_id (the spawner's request) */
    uint32_t spawner;
    uint32_t first;
    int n, unsettled;
    uint32_t *tids;
    int32_t *status; /* 1: started, not settled yet */
    uint64_t deadline_us;
};

/* A SPAWN_REQ or KILL_REQ waiting for other daemons (spawner's side). */
struct spawn_req {
    struct list_node node; /* on spawn_state.reqs */
    uint64_t id;           /* req_id on the daemon wire */
    int kill;              /* KILL_REQ: one answer, ADMIN_REP */
    uint32_t task;
    uint64_t task_req;
    int n, waiting;
    int *hid; /* per copy: the daemon asked */
    uint32_t *tids;
    int32_t *status;
    uint64_t deadline_us;
};

struct spawn_state {
    struct list_node children, orders, reqs;
    struct list_node dead; /* children over and done, freed by the cron */
    struct event *sigchld;
    uint64_t next_id;
};

/* ---- pure parts --------------------------------------------------------- */

void
spawn_lines_feed(struct spawn_lines *l, const char *data, size_t n,
                 spawn_line_fn fn, void *arg)
{
    while (n > 0) {
        const char *nl = memchr(data, '\n', n);
        size_t take = nl != NULL ? (size_t)(nl - data) : n;
        size_t room = sizeof(l->buf) - l->len;

        if (take > room)
            take = room;
        memcpy(l->buf + l->len, data, take);
        l->len += take;
        data += take;
        n -= take;
        if (take > 0)
            l->cut = 0;
        if (n > 0 && *data == '\n') {
            if (l->len > 0 || !l->cut)
                fn(arg, l->buf, l->len);
            l->len = 0;
            l->cut = 0;
            data++;
            n--;
        } else if (l->len == sizeof(l->buf)) {
            fn(arg, l->buf, l->len); /* cut: the rest is the next line */
            l->len = 0;
            l->cut = 1;
        }
    }
}

void
spawn_lines_flush(struct spawn_lines *l, spawn_line_fn fn, void *arg)
{
    if (l->len > 0)
        fn(arg, l->buf, l->len);
    l->len = 0;
}

/* Does host h answer to where (name, address, address without port, or
   hid in decimal)? */
static int
spawn_host_named(const struct spawn_host *h, const char *where)
{
    const char *colon;
    char *end;
    long v;

    if (h->name != NULL && strcmp(h->name, where) == 0)
        return 1;
    if (h->addr != NULL) {
        if (strcmp(h->addr, where) == 0)
            return 1;
        colon = strrchr(h->addr, ':');
        if (colon != NULL && strlen(where) == (size_t)(colon - h->addr) &&
            strncmp(h->addr, where, (size_t)(colon - h->addr)) == 0)
            return 1;
    }
    errno = 0;
    v = strtol(where, &end, 10);
    return where[0] != '\0' && *end == '\0' && errno == 0 && v == h->hid;
}

static int
spawn_host_eligible(const struct spawn_host *h, int flags, const char *where)
{
    if (!h->up)
        return 0;
    switch (flags) {
    case COLLS_SPAWN_HOST:
        return spawn_host_named(h, where);
    case COLLS_SPAWN_ARCH:
        return h->arch != NULL && strcmp(h->arch, where) == 0;
    default:
        return 1;
    }
}

int
spawn_place(const struct spawn_host *hosts, int nhosts, int flags,
            const char *where, int n, int *hids)
{
    int *given, i, j, best, first = -1;

    if ((flags != COLLS_SPAWN_ANY && flags != COLLS_SPAWN_HOST &&
         flags != COLLS_SPAWN_ARCH) ||
        (flags != COLLS_SPAWN_ANY && (where == NULL || where[0] == '\0')) ||
        n < 0 || nhosts < 0)
        return COLLS_EINVAL;
    for (j = 0; j < nhosts; j++)
        if (spawn_host_eligible(&hosts[j], flags, where)) {
            first = j;
            break;
        }
    if (first < 0)
        return COLLS_EHOSTDOWN;
    if (flags == COLLS_SPAWN_HOST) {
        /* a named host: the first that answers to the name takes all */
        for (i = 0; i < n; i++)
            hids[i] = hosts[first].hid;
        return 0;
    }
    given = calloc((size_t)nhosts, sizeof(*given));
    if (given == NULL)
        return COLLS_ENOMEM;
    for (i = 0; i < n; i++) {
        best = -1;
        for (j = 0; j < nhosts; j++) {
            long load, bload;

            if (!spawn_host_eligible(&hosts[j], flags, where))
                continue;
            if (best < 0) {
                best = j;
                continue;
            }
            load = (long)hosts[j].ntasks + given[j];
            bload = (long)hosts[best].ntasks + given[best];
            if (load < bload ||
                (load == bload && hosts[j].hid < hosts[best].hid))
                best = j;
        }
        given[best]++;
        hids[i] = hosts[best].hid;
    }
    free(given);
    return 0;
}

int
spawn_path_inside(const char *path, const char *dir)
{
    size_t n = strlen(dir);

    if (n == 1 && dir[0] == '/')
        return path[0] == '/';
    return n > 0 && strncmp(path, dir, n) == 0 && path[n] == '/';
}

/*
 * The next directory of the colon-separated list at *p into dir: 1, or 0
 * at the end.  Empty and overlong entries are skipped.
 */
static int
spawn_path_next(const char **p, char *dir, size_t cap)
{
    while (**p != '\0') {
        const char *end = strchr(*p, ':');
        size_t n = end != NULL ? (size_t)(end - *p) : strlen(*p);
        const char *at = *p;

        *p += n;
        if (**p == ':')
            (*p)++;
        if (n > 0 && n < cap) {
            memcpy(dir, at, n);
            dir[n] = '\0';
            return 1;
        }
    }
    return 0;
}

/* Is real inside one of the directories of spawn_path? */
static int
spawn_path_allowed(const char *spawn_path, const char *real)
{
    char dir[PATH_MAX], rdir[PATH_MAX];

    while (spawn_path_next(&spawn_path, dir, sizeof(dir)))
        if (realpath(dir, rdir) != NULL && spawn_path_inside(real, rdir))
            return 1;
    return 0;
}

/* Checks the real path real: allowed, an executable regular file. */
static int
spawn_check_real(const char *spawn_path, const char *real)
{
    struct stat st;

    if (!spawn_path_allowed(spawn_path, real))
        return COLLS_EPERM;
    if (stat(real, &st) != 0 || !S_ISREG(st.st_mode) || access(real, X_OK) != 0)
        return COLLS_ENOENT;
    return 0;
}

int
spawn_resolve(const char *spawn_path, const char *file, char *out, size_t cap)
{
    char cand[2 * PATH_MAX], real[PATH_MAX], dir[PATH_MAX];
    const char *p;

    if (file == NULL || file[0] == '\0' || cap < PATH_MAX)
        return COLLS_EINVAL;
    if (spawn_path == NULL || spawn_path[0] == '\0')
        return COLLS_EPERM;
    if (file[0] == '/') {
        if (realpath(file, real) == NULL)
            return COLLS_ENOENT;
        snprintf(out, cap, "%s", real);
        return spawn_check_real(spawn_path, real);
    }
    /* like PVM's ep: each directory in turn, the first that has it */
    for (p = spawn_path; spawn_path_next(&p, dir, sizeof(dir));) {
        int len = snprintf(cand, sizeof(cand), "%s/%s", dir, file);

        if (len > 0 && (size_t)len < sizeof(cand) &&
            realpath(cand, real) != NULL) {
            snprintf(out, cap, "%s", real);
            return spawn_check_real(spawn_path, real);
        }
    }
    return COLLS_ENOENT;
}

/* ---- lookups ------------------------------------------------------------ */

static struct spawn_child *
spawn_child_by_tid(struct daemon *d, uint32_t tid)
{
    struct list_node *n;

    if (d->spawn == NULL || tid == 0)
        return NULL;
    LIST_FOREACH (n, &d->spawn->children) {
        struct spawn_child *c = list_entry(n, struct spawn_child, node);
        if (c->tid == tid)
            return c;
    }
    return NULL;
}

static struct spawn_req *
spawn_req_find(struct daemon *d, uint64_t id)
{
    struct list_node *n;

    LIST_FOREACH (n, &d->spawn->reqs) {
        struct spawn_req *r = list_entry(n, struct spawn_req, node);
        if (r->id == id)
            return r;
    }
    return NULL;
}

/* ---- output ------------------------------------------------------------- */

/* Logs a line of tid's output, control bytes shown as '?'. */
static void
spawn_log_line(uint32_t tid, const uint8_t *line, size_t len)
{
    char text[SPAWN_LINE_MAX + 1];
    size_t i;

    if (len > SPAWN_LINE_MAX)
        len = SPAWN_LINE_MAX;
    for (i = 0; i < len; i++)
        text[i] = line[i] < 0x20 || line[i] == 0x7f ? '?' : (char)line[i];
    text[len] = '\0';
    log_info("[t%x] %s", tid, text);
}

static void spawn_output_send(struct daemon *d, uint32_t dst, uint32_t src,
                              int stream, const uint8_t *line, size_t len,
                              int depth);

/* Starts e as SPAWN_OUTPUT of a line of src's for dst (body so). */
static void
spawn_output_env(Envelope *e, SpawnOutput *so, uint32_t src, uint32_t dst,
                 int stream, int hops)
{
    envelope_reply(e, src, dst, KIND__SPAWN_OUTPUT, 0, 0);
    so->stream = (uint32_t)stream;
    so->hops = (uint32_t)hops;
    e->body_case = ENVELOPE__BODY_SPAWN_OUTPUT;
    e->spawn_output = so;
}

/*
 * A line of child src's output for local task dst: delivered if dst
 * catches, else passed to dst's parent.  logged: the line was logged
 * already on this daemon.
 */
static void
spawn_output_local(struct daemon *d, uint32_t dst, uint32_t src, int stream,
                   const uint8_t *line, size_t len, int depth, int logged)
{
    struct task *t = task_find(d, dst);
    SpawnOutput so = SPAWN_OUTPUT__INIT;
    Envelope e;

    if (!logged)
        spawn_log_line(src, line, len);
    if (t == NULL)
        return;
    if (t->catching) {
        if (t->out_bytes > (uint64_t)d->cfg->task_queue_max) {
            d->st.spawn_lines_lost++;
            log_debug("t%x does not read: a line of t%x's output lost", dst,
                      src);
            return;
        }
        spawn_output_env(&e, &so, src, dst, stream, depth);
        d->st.spawn_lines++;
        task_queue_env(t, &e, line, len, NULL);
    } else if (t->parent != 0 && depth < SPAWN_OUTPUT_DEPTH) {
        spawn_output_send(d, t->parent, src, stream, line, len, depth + 1);
    }
}

/* Sends a line of src's output towards task dst, wherever it is. */
static void
spawn_output_send(struct daemon *d, uint32_t dst, uint32_t src, int stream,
                  const uint8_t *line, size_t len, int depth)
{
    int hid = COLLS_TID_HID(dst);
    SpawnOutput so = SPAWN_OUTPUT__INIT;
    Envelope e;

    if (hid == d->hid) {
        spawn_output_local(d, dst, src, stream, line, len, depth, depth > 0);
        return;
    }
    spawn_output_env(&e, &so, src, dst, stream, depth);
    net_send(d, hid, &e, line, len);
}

struct spawn_line_ctx {
    struct spawn_child *c;
    int stream;
};

static void
spawn_line_cb(void *arg, const char *line, size_t len)
{
    struct spawn_line_ctx *x = arg;

    spawn_output_send(x->c->d, x->c->parent, x->c->tid, x->stream,
                      (const uint8_t *)line, len, 0);
}

static void spawn_child_check(struct spawn_child *c);

/* Output of a child is readable. */
static void
spawn_pipe_cb(evutil_socket_t fd, short what, void *arg)
{
    struct spawn_child *c = arg;
    int stream = fd == c->fd[SPAWN_STDOUT] ? SPAWN_STDOUT : SPAWN_STDERR;
    struct spawn_line_ctx x = {c, stream};
    char buf[SPAWN_LINE_MAX];
    ssize_t n;

    (void)what;
    n = read(fd, buf, sizeof(buf));
    if (n > 0) {
        spawn_lines_feed(&c->lines[stream], buf, (size_t)n, spawn_line_cb, &x);
        return;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    spawn_lines_flush(&c->lines[stream], spawn_line_cb, &x);
    event_free(c->ev[stream]);
    c->ev[stream] = NULL;
    close(c->fd[stream]);
    c->fd[stream] = -1;
    spawn_child_check(c);
}

/* ---- orders (executing side) -------------------------------------------- */

/* Sends the order's answer and frees it. */
static void spawn_req_answer(struct daemon *d, uint64_t id, int hid,
                             uint32_t first, size_t n, const uint32_t *tids,
                             const int32_t *status);

static void
spawn_order_answer(struct daemon *d, struct spawn_order *o)
{
    struct list_node *n;
    SpawnRep rep = SPAWN_REP__INIT;
    Envelope e;
    int i;

    LIST_FOREACH (n, &d->spawn->children) {
        struct spawn_child *c = list_entry(n, struct spawn_child, node);
        if (c->order == o)
            c->order = NULL;
    }
    for (i = 0; i < o->n; i++)
        if (o->status[i] == 1)
            o->status[i] = 0; /* started; did not attach in time */
    if (o->from_hid == d->hid) {
        spawn_req_answer(d, o->id, d->hid, o->first, (size_t)o->n, o->tids,
                         o->status);
    } else {
        envelope_reply(&e, COLLS_DAEMON_TID(d->hid), o->spawner,
                       KIND__SPAWN_DONE, o->id, 0);
        rep.n_tids = (size_t)o->n;
        rep.tids = o->tids;
        rep.n_status = (size_t)o->n;
        rep.status = o->status;
        rep.first = o->first;
        e.body_case = ENVELOPE__BODY_SPAWN_REP;
        e.spawn_rep = &rep;
        net_send(d, o->from_hid, &e, NULL, 0);
    }
    list_del(&o->node);
    free(o->tids);
    free(o->status);
    free(o);
}

/* Copy i of o is settled (attached, ended, failed or timed out). */
static void
spawn_order_settle(struct daemon *d, struct spawn_order *o, int i)
{
    if (o->status[i] == 1) {
        o->status[i] = 0;
        o->unsettled--;
    }
    if (o->unsettled == 0)
        spawn_order_answer(d, o);
}

/* Drops what c held (it ended without attaching, or the daemon stops). */
static void
spawn_held_drop(struct spawn_child *c)
{
    struct list_node *n;

    while ((n = list_first(&c->held)) != NULL) {
        struct spawn_held *h = list_entry(n, struct spawn_held, node);

        list_del(&h->node);
        free(h->owner);
        free(h);
    }
    c->held_bytes = 0;
}

/* Frees c's pipes and record. */
static void
spawn_child_free(struct spawn_child *c)
{
    int s;

    spawn_held_drop(c);

    for (s = SPAWN_STDOUT; s <= SPAWN_STDERR; s++) {
        if (c->ev[s] != NULL)
            event_free(c->ev[s]);
        if (c->fd[s] >= 0)
            close(c->fd[s]);
    }
    list_del(&c->node);
    free(c);
}

/* Announces c's exit once everything about it is over; frees it once
   also reaped. */
static void
spawn_child_check(struct spawn_child *c)
{
    struct daemon *d = c->d;
    int done = c->reaped && c->fd[SPAWN_STDOUT] < 0 && c->fd[SPAWN_STDERR] < 0;

    if (c->reaped && c->order != NULL)
        spawn_order_settle(d, c->order, c->index);
    if (done && !c->attached && !c->announced) {
        c->announced = 1;
        spawn_held_drop(c);
        log_info("spawned t%x (pid %ld) ended: status %d", c->tid, (long)c->pid,
                 c->status);
        events_task_exit(d, c->tid, c->status);
    }
    if (done && c->announced) {
        /* freed by spawn_cron, never inside its own pipe callback */
        list_del(&c->node);
        list_add_tail(&d->spawn->dead, &c->node);
    }
}

int
spawn_env_check(char *const *env, size_t n, long uid, long self,
                const char **why)
{
    size_t i, k;

    if (n > SPAWN_MAX_ENV) {
        *why = "too many environment entries";
        return COLLS_EINVAL;
    }
    for (i = 0; i < n; i++) {
        const char *v = env[i];

        if (v == NULL || !(v[0] == '_' || (v[0] >= 'A' && v[0] <= 'Z') ||
                           (v[0] >= 'a' && v[0] <= 'z'))) {
            *why = "an environment entry is not NAME=value";
            return COLLS_EINVAL;
        }
        for (k = 1; v[k] != '=' && v[k] != '\0'; k++)
            if (!(v[k] == '_' || (v[k] >= 'A' && v[k] <= 'Z') ||
                  (v[k] >= 'a' && v[k] <= 'z') || (v[k] >= '0' && v[k] <= '9')))
                break;
        if (v[k] != '=') {
            *why = "an environment entry is not NAME=value";
            return COLLS_EINVAL;
        }
        if (uid != 0 && uid != self && strncmp(v, "COLLS_", 6) != 0 &&
            strncmp(v, "PVM_", 4) != 0) {
            *why = "a task of another uid may pass only COLLS_* and PVM_* "
                   "variables to the daemon's user";
            return COLLS_EPERM;
        }
    }
    return 0;
}

/*
 * In the child before exec: closes every descriptor from first on but
 * keep.  close_range (Linux 5.9, glibc 2.34) does it in two system calls;
 * the loop it replaces made one per possible descriptor, 20,000 per
 * spawned copy under a daemon whose `ulimit -n` is 20,000.  Without it
 * (or on a kernel that refuses it), the loop, up to 65,536.
 */
static void
spawn_close_from(int first, int keep)
{
    long fd, max;

#ifdef HAVE_CLOSE_RANGE
    if ((keep <= first ||
         close_range((unsigned)first, (unsigned)keep - 1, 0) == 0) &&
        close_range((unsigned)(keep < first ? first : keep + 1), ~0u, 0) == 0)
        return;
#endif
    max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536)
        max = 65536;
    for (fd = first; fd < max; fd++)
        if (fd != keep)
            close((int)fd);
}

/*
 * Sets up the child process: session, descriptors, signals, the
 * spawner's environment entries (checked), then the daemon's own
 * (COLLS_SOCKET and the spawn's count and index win), exec.
 */
static void
spawn_exec_child(const char *path, char **argv, char **env, size_t nenv,
                 int out, int err, int errfd, const struct daemon *d,
                 uint32_t total, uint32_t index)
{
    size_t i;
    char num[32];
    sigset_t none;
    int nul, e;

    setsid();
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (e = 1; e < NSIG; e++)
        signal(e, SIG_DFL);
    nul = open("/dev/null", O_RDONLY);
    if (nul < 0 || dup2(nul, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        goto fail;
    spawn_close_from(3, errfd);
    for (i = 0; i < nenv; i++)
        putenv(env[i]); /* this process's copy of the order: lives to exec */
    setenv("COLLS_SOCKET", d->sock_path != NULL ? d->sock_path : "", 1);
    snprintf(num, sizeof(num), "%u", total);
    setenv("COLLS_SPAWN_COUNT", num, 1);
    snprintf(num, sizeof(num), "%u", index);
    setenv("COLLS_SPAWN_INDEX", num, 1);
    unsetenv("COLLS_TASK_NAME");
    execv(path, argv);
fail:
    e = errno;
    if (write(errfd, &e, sizeof(e)) < 0)
        _exit(127);
    _exit(127);
}

/* Maps exec's errno to a COLLS_E* code. */
static int
spawn_exec_status(int e)
{
    switch (e) {
    case ENOENT:
    case EACCES:
    case ENOEXEC:
    case ENOTDIR:
    case ELOOP:
    case ENAMETOOLONG:
        return COLLS_ENOENT;
    case EPERM:
        return COLLS_EPERM;
    default:
        return -e;
    }
}

/* Opens a pipe whose read end is non-blocking; both ends CLOEXEC.  On
   failure p is {-1, -1}. */
static int
spawn_pipe(int p[2])
{
    int e;

    if (pipe2(p, O_CLOEXEC) != 0) {
        p[0] = p[1] = -1;
        return -1;
    }
    if (fcntl(p[0], F_SETFL, O_NONBLOCK) != 0) {
        e = errno;
        close(p[0]);
        close(p[1]);
        p[0] = p[1] = -1;
        errno = e;
        return -1;
    }
    return 0;
}

/*
 * Starts one copy: path resolved already, argv with argv[0].  0 and the
 * child on c, or a COLLS_E* code.
 */
static int
spawn_start(struct daemon *d, struct spawn_child *c, const char *path,
            char **argv, const SpawnReq *r, uint32_t index)
{
    int po[2], pe[2] = {-1, -1}, px[2] = {-1, -1}, e = 0, rc = 0, s;
    ssize_t got;
    pid_t pid;

    if (spawn_pipe(po) != 0)
        return -errno;
    if (spawn_pipe(pe) != 0 || pipe2(px, O_CLOEXEC) != 0) {
        rc = -errno;
        px[0] = px[1] = -1;
        goto fail;
    }
    /* the child's timers are its own: the slack the daemon started with,
       not a solo daemon's tick (collsd.c collsd_slack sets it again) */
    (void)platform_timer_slack(0);
    pid = fork();
    if (pid < 0) {
        rc = -errno;
        goto fail;
    }
    if (pid == 0)
        spawn_exec_child(path, argv, r->env, r->n_env, po[1], pe[1], px[1], d,
                         r->total, index);
    close(po[1]);
    close(pe[1]);
    close(px[1]);
    /* exec's errno, or EOF once exec succeeded (the pipe is CLOEXEC) */
    do
        got = read(px[0], &e, sizeof(e));
    while (got < 0 && errno == EINTR);
    close(px[0]);
    if (got == (ssize_t)sizeof(e)) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        close(po[0]);
        close(pe[0]);
        return spawn_exec_status(e);
    }
    c->pid = pid;
    c->fd[SPAWN_STDOUT] = po[0];
    c->fd[SPAWN_STDERR] = pe[0];
    for (s = SPAWN_STDOUT; s <= SPAWN_STDERR; s++) {
        c->ev[s] = event_new(d->base, c->fd[s], EV_READ | EV_PERSIST,
                             spawn_pipe_cb, c);
        if (c->ev[s] == NULL) {
            log_error("spawn: out of memory for an output event");
            abort();
        }
        event_add(c->ev[s], NULL);
    }
    return 0;
fail:
    close(po[0]);
    close(po[1]);
    if (pe[0] >= 0) {
        close(pe[0]);
        close(pe[1]);
    }
    if (px[0] >= 0) {
        close(px[0]);
        close(px[1]);
    }
    return rc;
}

/*
 * Executes an order: n copies of r->file for spawner (on daemon
 * from_hid, request id).  Answers at once where nothing waits.
 */
static void
spawn_order_exec(struct daemon *d, int from_hid, uint64_t id, uint32_t spawner,
                 const SpawnReq *r)
{
    struct spawn_order *o = calloc(1, sizeof(*o));
    char path[PATH_MAX], **argv = NULL;
    const char *why = NULL;
    int rc, i;
    size_t k;

    if (o == NULL || r->n == 0 || r->n > SPAWN_MAX_COPIES ||
        r->n_argv > SPAWN_MAX_ARGS) {
        log_error("spawn: bad or unsatisfiable order");
        free(o);
        return;
    }
    o->from_hid = from_hid;
    o->id = id;
    o->spawner = spawner;
    o->first = r->first;
    o->n = (int)r->n;
    o->tids = calloc(r->n, sizeof(*o->tids));
    o->status = calloc(r->n, sizeof(*o->status));
    argv = calloc(r->n_argv + 2, sizeof(*argv));
    if (o->tids == NULL || o->status == NULL || argv == NULL) {
        log_error("spawn: out of memory");
        abort();
    }
    list_add_tail(&d->spawn->orders, &o->node);
    o->deadline_us = platform_now_us() + SPAWN_ATTACH_US;
    rc = spawn_env_check(r->env, r->n_env, (long)r->uid, (long)geteuid(), &why);
    if (rc != 0)
        log_warn("spawn of %s for t%x refused: %s", r->file, spawner, why);
    else
        rc = spawn_resolve(d->cfg->spawn_path, r->file, path, sizeof(path));
    if (rc == COLLS_EPERM && why == NULL)
        log_warn("spawn of %s for t%x refused: %s", r->file, spawner,
                 d->cfg->spawn_path[0] == '\0' ? "no --spawn-path set"
                                               : "outside --spawn-path");
    argv[0] = rc == 0 ? path : r->file;
    for (k = 0; k < r->n_argv; k++)
        argv[k + 1] = r->argv[k];
    for (i = 0; i < o->n; i++) {
        struct spawn_child *c;

        if (rc == 0 && d->next_local > DAEMON_MAX_LOCAL)
            rc = COLLS_EAGAIN;
        if (rc == 0 && d->ntasks >= d->cfg->max_tasks)
            rc = COLLS_ETOOMANY;
        if (rc != 0) {
            o->status[i] = rc;
            d->st.spawn_refused++;
            continue;
        }
        c = calloc(1, sizeof(*c));
        if (c == NULL) {
            log_error("spawn: out of memory");
            abort();
        }
        c->d = d;
        c->parent = spawner;
        c->fd[0] = c->fd[SPAWN_STDOUT] = c->fd[SPAWN_STDERR] = -1;
        list_init(&c->held);
        o->status[i] = spawn_start(d, c, path, argv, r, r->first + i);
        if (o->status[i] != 0) {
            log_info("spawn of %s for t%x: copy %u did not start: %s", path,
                     spawner, r->first + i, log_errstr(o->status[i]));
            d->st.spawn_refused++;
            free(c);
            continue;
        }
        c->tid = COLLS_DAEMON_TID(d->hid) | d->next_local++;
        c->order = o;
        c->index = i;
        o->tids[i] = c->tid;
        o->status[i] = 1;
        o->unsettled++;
        list_add_tail(&d->spawn->children, &c->node);
        d->st.spawned++;
        log_info("spawned t%x: %s (pid %ld) for t%x", c->tid, path,
                 (long)c->pid, spawner);
    }
    free(argv);
    if (o->unsettled == 0)
        spawn_order_answer(d, o);
}

/* ---- requests (spawner's side) ------------------------------------------ */

static void
spawn_req_free(struct spawn_req *r)
{
    list_del(&r->node);
    free(r->hid);
    free(r->tids);
    free(r->status);
    free(r);
}

/* Answers the task and frees r. */
static void
spawn_req_finish(struct daemon *d, struct spawn_req *r)
{
    struct task *t = task_find(d, r->task);
    SpawnRep rep = SPAWN_REP__INIT;
    Envelope e;

    if (t != NULL && r->kill) {
        task_reply(t, KIND__ADMIN_REP, r->task_req, r->status[0]);
    } else if (t != NULL) {
        task_reply_init(&e, t, KIND__SPAWN_REP, r->task_req, 0);
        rep.n_tids = (size_t)r->n;
        rep.tids = r->tids;
        rep.n_status = (size_t)r->n;
        rep.status = r->status;
        e.body_case = ENVELOPE__BODY_SPAWN_REP;
        e.spawn_rep = &rep;
        task_queue_env(t, &e, NULL, 0, NULL);
    }
    spawn_req_free(r);
}

/* Copies first .. first + n - 1 of request id answered by daemon hid. */
static void
spawn_req_answer(struct daemon *d, uint64_t id, int hid, uint32_t first,
                 size_t n, const uint32_t *tids, const int32_t *status)
{
    struct spawn_req *r = spawn_req_find(d, id);
    size_t i;

    if (r == NULL || r->kill || first > (uint32_t)r->n ||
        n > (size_t)r->n - first)
        return; /* timed out, or not ours */
    for (i = 0; i < n; i++) {
        size_t k = first + i;

        if (r->hid[k] != hid || r->status[k] != 1)
            continue;
        r->status[k] = status[i];
        r->tids[k] = status[i] == 0 ? tids[i] : 0;
        if (status[i] == 0 && COLLS_TID_HID(tids[i]) != hid)
            r->status[k] = COLLS_EPROTO;
        r->waiting--;
    }
    if (r->waiting == 0)
        spawn_req_finish(d, r);
}

/* Fails the copies of r still waiting on hid (any: -1) with status. */
static void
spawn_req_fail(struct daemon *d, struct spawn_req *r, int hid, int status)
{
    int i;

    for (i = 0; i < r->n; i++)
        if (r->status[i] == 1 && (hid < 0 || r->hid[i] == hid)) {
            r->status[i] = status;
            r->waiting--;
        }
    if (r->waiting == 0)
        spawn_req_finish(d, r);
}

static struct spawn_req *
spawn_req_new(struct daemon *d, struct task *t, uint64_t task_req, int n,
              int kill)
{
    struct spawn_req *r = calloc(1, sizeof(*r));

    if (r == NULL || (r->hid = calloc((size_t)n, sizeof(int))) == NULL ||
        (r->tids = calloc((size_t)n, sizeof(uint32_t))) == NULL ||
        (r->status = calloc((size_t)n, sizeof(int32_t))) == NULL) {
        log_error("spawn: out of memory");
        abort();
    }
    r->id = ++d->spawn->next_id;
    r->kill = kill;
    r->task = t->tid;
    r->task_req = task_req;
    r->n = n;
    r->deadline_us = platform_now_us() + SPAWN_ATTACH_US +
                     (uint64_t)d->cfg->request_timeout_ms * 1000u;
    list_add_tail(&d->spawn->reqs, &r->node);
    return r;
}

static int
spawn_int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return (x > y) - (x < y);
}

/* Fills hs with the host table for placement; returns the count. */
static int
spawn_hosts(struct daemon *d, struct spawn_host *hs)
{
    int hid, n = 0;

    for (hid = 1; hid <= DAEMON_MAX_HID; hid++) {
        const struct host *h = d->hosts[hid];

        if (h == NULL)
            continue;
        hs[n].hid = hid;
        hs[n].up = hid == d->hid || h->state == COLLS_HOST_UP;
        hs[n].ntasks = hid == d->hid ? d->ntasks : h->ntasks;
        hs[n].name = hid == d->hid ? d->name : h->name;
        hs[n].addr = h->addr;
        hs[n].arch = hid == d->hid ? d->arch : h->arch;
        n++;
    }
    return n;
}

void
spawn_task_req(struct task *t, const Envelope *e)
{
    struct daemon *d = t->d;
    const SpawnReq *q = e->spawn_req;
    struct spawn_host *hs = NULL;
    struct spawn_req *r;
    const char *why;
    uint64_t id;
    int nh, rc, i, j, hid;

    if (e->body_case != ENVELOPE__BODY_SPAWN_REQ || q->file == NULL ||
        q->file[0] == '\0' || q->n == 0 || q->n > SPAWN_MAX_COPIES ||
        q->n_argv > SPAWN_MAX_ARGS) {
        d->st.bad_requests++;
        task_error(t, e->req_id, COLLS_EINVAL, "bad SPAWN_REQ");
        return;
    }
    if (d->stopping) {
        task_error(t, e->req_id, COLLS_ESHUTDOWN, "the daemon is stopping");
        return;
    }
    /* copies run as the daemons' user: a task of another user (not root)
       may start them only with the right to change the machine */
    if (t->uid != 0 && t->uid != geteuid() && t->rights != TASK_RIGHT_ADMIN) {
        task_error(t, e->req_id, COLLS_EPERM,
                   "spawned programs run as the daemon's user: a task of "
                   "another uid needs --admin-uid or --admin-gid");
        return;
    }
    rc = spawn_env_check(q->env, q->n_env, (long)t->uid, (long)geteuid(), &why);
    if (rc != 0) {
        if (rc == COLLS_EINVAL)
            d->st.bad_requests++;
        task_error(t, e->req_id, rc, why);
        return;
    }
    hs = calloc(DAEMON_MAX_HID, sizeof(*hs));
    if (hs == NULL) {
        task_error(t, e->req_id, COLLS_ENOMEM, "out of memory");
        return;
    }
    nh = spawn_hosts(d, hs);
    r = spawn_req_new(d, t, e->req_id, (int)q->n, 0);
    rc = spawn_place(hs, nh, (int)q->flags, q->where, r->n, r->hid);
    free(hs);
    if (rc != 0) {
        spawn_req_free(r);
        task_error(t, e->req_id, rc,
                   rc == COLLS_EHOSTDOWN ? "no such host up" : "bad placement");
        return;
    }
    /* copies are alike: order them by host, one order per host */
    qsort(r->hid, (size_t)r->n, sizeof(int), spawn_int_cmp);
    for (i = 0; i < r->n; i++)
        r->status[i] = 1;
    r->waiting = r->n;
    id = r->id;
    for (i = 0; i < r->n; i = j) {
        SpawnReq o = *q;
        Envelope f;

        hid = r->hid[i];
        for (j = i + 1; j < r->n && r->hid[j] == hid; j++)
            ;
        o.base.unknown_fields = NULL;
        o.base.n_unknown_fields = 0;
        o.first = (uint32_t)i;
        o.n = (uint32_t)(j - i);
        o.total = (uint32_t)r->n;
        o.uid = (int32_t)t->uid; /* for the executing daemon's check */
        if (hid == d->hid) {
            spawn_order_exec(d, d->hid, id, t->tid, &o);
        } else {
            envelope_reply(&f, t->tid, COLLS_DAEMON_TID(hid), KIND__SPAWN_ORDER,
                           id, 0);
            f.body_case = ENVELOPE__BODY_SPAWN_REQ;
            f.spawn_req = &o;
            rc = net_send(d, hid, &f, NULL, 0);
            if (rc != 0 && (r = spawn_req_find(d, id)) != NULL)
                spawn_req_fail(d, r, hid, rc);
        }
        /* an answer may have finished (and freed) the request */
        if ((r = spawn_req_find(d, id)) == NULL)
            return;
    }
}

/* CATCHOUT {on}. */
void
spawn_catchout(struct task *t, const Envelope *e)
{
    if (e->body_case != ENVELOPE__BODY_CATCHOUT) {
        t->d->st.bad_requests++;
        task_error(t, e->req_id, COLLS_EINVAL, "bad CATCHOUT");
        return;
    }
    t->catching = e->catchout->on;
    task_reply(t, KIND__ADMIN_REP, e->req_id, 0);
}

/*
 * Ends local task tid for a task of uid: SIGTERM to its process (to the
 * process group of a spawned child, which leads one).  0 or a COLLS_E*
 * code.
 */
static int
spawn_kill_local(struct daemon *d, uint32_t tid, int uid)
{
    struct spawn_child *c = spawn_child_by_tid(d, tid);
    struct task *u = task_find(d, tid);
    pid_t pid;
    long owner;

    if (u != NULL) {
        pid = u->pid;
        owner = (long)u->uid;
    } else if (c != NULL && !c->reaped) {
        pid = c->pid;
        owner = (long)geteuid();
    } else {
        return COLLS_ENOENT;
    }
    if (uid != 0 && (long)uid != owner)
        return COLLS_EPERM;
    if (pid <= 0)
        return COLLS_ENOENT;
    if (c != NULL && !c->reaped && c->pid == pid)
        pid = -pid;
    log_info("t%x ends by request of uid %d", tid, uid);
    if (kill(pid, SIGTERM) != 0)
        return errno == ESRCH ? COLLS_ENOENT : -errno;
    return 0;
}

/* KILL_REQ {dst}. */
void
spawn_kill_req(struct task *t, const Envelope *e)
{
    struct daemon *d = t->d;
    int hid = COLLS_TID_HID(e->dst), rc;
    KillOrder ko = KILL_ORDER__INIT;
    struct spawn_req *r;
    Envelope f;

    if (e->dst == 0 || daemon_tid_is_daemon(e->dst)) {
        task_reply(t, KIND__ADMIN_REP, e->req_id, COLLS_EINVAL);
        return;
    }
    if (hid == d->hid) {
        task_reply(t, KIND__ADMIN_REP, e->req_id,
                   spawn_kill_local(d, e->dst, (int)t->uid));
        return;
    }
    if (hid < 1 || hid > DAEMON_MAX_HID || d->hosts[hid] == NULL ||
        d->hosts[hid]->state != COLLS_HOST_UP) {
        task_reply(t, KIND__ADMIN_REP, e->req_id,
                   hid >= 1 && hid <= DAEMON_MAX_HID && d->hosts[hid] != NULL
                       ? COLLS_EHOSTDOWN
                       : COLLS_ENOENT);
        return;
    }
    r = spawn_req_new(d, t, e->req_id, 1, 1);
    r->hid[0] = hid;
    r->status[0] = 1;
    r->waiting = 1;
    envelope_reply(&f, t->tid, e->dst, KIND__KILL_ORDER, r->id, 0);
    ko.uid = (int32_t)t->uid;
    f.body_case = ENVELOPE__BODY_KILL_ORDER;
    f.kill_order = &ko;
    rc = net_send(d, hid, &f, NULL, 0);
    if (rc != 0)
        spawn_req_fail(d, r, hid, rc);
}

void
spawn_peer_msg(struct daemon *d, int hid, const Envelope *e,
               const uint8_t *payload, size_t plen)
{
    struct spawn_req *r;
    Envelope f;

    switch ((int)e->kind) {
    case KIND__SPAWN_ORDER:
        if (e->body_case != ENVELOPE__BODY_SPAWN_REQ ||
            COLLS_TID_HID(e->src) != hid || e->spawn_req->file == NULL ||
            e->spawn_req->n == 0 || e->spawn_req->n > SPAWN_MAX_COPIES) {
            d->st.bad_peer_msgs++;
            return;
        }
        spawn_order_exec(d, hid, e->req_id, e->src, e->spawn_req);
        return;
    case KIND__SPAWN_DONE:
        if (e->body_case != ENVELOPE__BODY_SPAWN_REP ||
            e->spawn_rep->n_tids != e->spawn_rep->n_status) {
            d->st.bad_peer_msgs++;
            return;
        }
        spawn_req_answer(d, e->req_id, hid, e->spawn_rep->first,
                         e->spawn_rep->n_tids, e->spawn_rep->tids,
                         e->spawn_rep->status);
        return;
    case KIND__SPAWN_OUTPUT:
        /* from the child's daemon (hops 0), or passed up by the daemon
           of a parent that does not catch, for a task of ours */
        if (e->body_case != ENVELOPE__BODY_SPAWN_OUTPUT ||
            (e->spawn_output->hops == 0 && COLLS_TID_HID(e->src) != hid) ||
            COLLS_TID_HID(e->dst) != d->hid || plen > SPAWN_LINE_MAX ||
            e->spawn_output->hops > SPAWN_OUTPUT_DEPTH) {
            d->st.bad_peer_msgs++;
            return;
        }
        spawn_output_local(d, e->dst, e->src,
                           e->spawn_output->stream == SPAWN_STDERR
                               ? SPAWN_STDERR
                               : SPAWN_STDOUT,
                           payload, plen, (int)e->spawn_output->hops, 0);
        return;
    case KIND__KILL_ORDER:
        if (e->body_case != ENVELOPE__BODY_KILL_ORDER ||
            COLLS_TID_HID(e->dst) != d->hid) {
            d->st.bad_peer_msgs++;
            return;
        }
        envelope_reply(&f, COLLS_DAEMON_TID(d->hid), e->src, KIND__KILL_DONE,
                       e->req_id,
                       spawn_kill_local(d, e->dst, e->kill_order->uid));
        net_send(d, hid, &f, NULL, 0);
        return;
    case KIND__KILL_DONE:
        r = spawn_req_find(d, e->req_id);
        if (r != NULL && r->kill && r->hid[0] == hid) {
            r->status[0] = e->status;
            r->waiting = 0;
            spawn_req_finish(d, r);
        }
        return;
    default:
        d->st.bad_peer_msgs++;
        return;
    }
}

/* ---- the children's lifetimes ------------------------------------------- */

uint32_t
spawn_attach(struct daemon *d, pid_t pid, uint32_t *parent)
{
    struct list_node *n;

    if (d->spawn == NULL || pid <= 0)
        return 0;
    LIST_FOREACH (n, &d->spawn->children) {
        struct spawn_child *c = list_entry(n, struct spawn_child, node);

        if (c->pid != pid || c->used || c->announced || c->reaped)
            continue;
        c->used = 1;
        c->attached = 1;
        *parent = c->parent;
        if (c->order != NULL)
            spawn_order_settle(d, c->order, c->index);
        return c->tid;
    }
    return 0;
}

/* The copy tid if it may hold len bytes more (spawn_hold), else NULL. */
static struct spawn_child *
spawn_holder(struct daemon *d, uint32_t tid, size_t len)
{
    struct spawn_child *c = spawn_child_by_tid(d, tid);

    if (c == NULL || c->used || c->reaped || c->announced ||
        c->held_bytes + len > (uint64_t)d->cfg->task_queue_max)
        return NULL;
    return c;
}

int
spawn_may_hold(struct daemon *d, uint32_t tid, size_t len)
{
    return spawn_holder(d, tid, len) != NULL;
}

int
spawn_hold(struct daemon *d, uint32_t tid, int hid, uint64_t credit,
           const uint8_t *body, size_t env_len, size_t body_len, void *owner)
{
    struct spawn_child *c = spawn_holder(d, tid, body_len);
    struct spawn_held *h;

    if (c == NULL || (h = malloc(sizeof(*h))) == NULL)
        return -1;
    *h = (struct spawn_held){.hid = hid,
                             .credit = credit,
                             .body = body,
                             .env_len = env_len,
                             .body_len = body_len,
                             .owner = owner};
    list_add_tail(&c->held, &h->node);
    c->held_bytes += body_len;
    d->st.data_held++;
    return 0;
}

void
spawn_attached(struct task *t)
{
    struct spawn_child *c = spawn_child_by_tid(t->d, t->tid);
    struct list_node *n;

    if (c == NULL)
        return;
    while ((n = list_first(&c->held)) != NULL) {
        struct spawn_held *h = list_entry(n, struct spawn_held, node);

        list_del(&h->node);
        if (h->hid != 0)
            (void)task_queue_peer(t, h->hid, h->credit, h->body, h->env_len,
                                  h->body_len, h->owner);
        else
            (void)task_queue_packed(t, h->body, h->env_len, h->body_len,
                                    h->owner);
        free(h);
    }
    c->held_bytes = 0;
}

int
spawn_task_exit(struct daemon *d, uint32_t tid)
{
    struct spawn_child *c = spawn_child_by_tid(d, tid);

    if (c == NULL || !c->attached || c->announced)
        return 0;
    c->attached = 0;
    spawn_child_check(c);
    return 1;
}

void
spawn_detach(struct daemon *d, uint32_t tid)
{
    struct spawn_child *c = spawn_child_by_tid(d, tid);

    if (c != NULL) {
        c->detached = 1;
        c->detach_until = platform_now_us() + SPAWN_DETACH_US;
    }
}

int
spawn_child_alive(struct daemon *d, uint32_t tid)
{
    struct spawn_child *c = spawn_child_by_tid(d, tid);

    return c != NULL && !c->announced;
}

/* SIGCHLD: reaps every child that ended. */
static void
spawn_sigchld_cb(evutil_socket_t sig, short what, void *arg)
{
    struct daemon *d = arg;
    struct list_node *n;
    int ws;
    pid_t pid;

    (void)sig;
    (void)what;
    while ((pid = waitpid(-1, &ws, WNOHANG)) > 0) {
        LIST_FOREACH (n, &d->spawn->children) {
            struct spawn_child *c = list_entry(n, struct spawn_child, node);

            if (c->pid != pid || c->reaped)
                continue;
            c->reaped = 1;
            c->status = WIFEXITED(ws)     ? WEXITSTATUS(ws)
                        : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws)
                                          : 255;
            spawn_child_check(c);
            break;
        }
    }
}

void
spawn_host_down(struct daemon *d, int hid)
{
    struct list_node *n, *next;

    if (d->spawn == NULL)
        return;
    for (n = d->spawn->reqs.next; n != &d->spawn->reqs; n = next) {
        struct spawn_req *r = list_entry(n, struct spawn_req, node);
        int i, hit = 0;

        next = n->next;
        for (i = 0; i < r->n; i++)
            hit |= r->status[i] == 1 && r->hid[i] == hid;
        if (hit)
            spawn_req_fail(d, r, hid, COLLS_EHOSTDOWN);
    }
}

int
spawn_busy(const struct daemon *d)
{
    const struct spawn_state *s = d->spawn;

    return s != NULL && (!list_empty(&s->children) || !list_empty(&s->orders) ||
                         !list_empty(&s->reqs) || !list_empty(&s->dead));
}

void
spawn_cron(struct daemon *d, uint64_t now_us)
{
    struct list_node *n, *next;

    if (d->spawn == NULL)
        return;
    while ((n = list_first(&d->spawn->dead)) != NULL)
        spawn_child_free(list_entry(n, struct spawn_child, node));
    LIST_FOREACH (n, &d->spawn->children) {
        struct spawn_child *c = list_entry(n, struct spawn_child, node);

        /* detached and living on: gone from the machine, status unknown
           (the child stays listed until it is reaped) */
        if (c->detached && !c->attached && !c->announced &&
            now_us >= c->detach_until) {
            c->announced = 1;
            events_task_exit(d, c->tid, -1);
        }
    }
    for (n = d->spawn->orders.next; n != &d->spawn->orders; n = next) {
        struct spawn_order *o = list_entry(n, struct spawn_order, node);

        next = n->next;
        if (now_us >= o->deadline_us)
            spawn_order_answer(d, o);
    }
    for (n = d->spawn->reqs.next; n != &d->spawn->reqs; n = next) {
        struct spawn_req *r = list_entry(n, struct spawn_req, node);

        next = n->next;
        if (now_us >= r->deadline_us)
            spawn_req_fail(d, r, -1, COLLS_ETIMEDOUT);
    }
}

int
spawn_init(struct daemon *d)
{
    d->spawn = calloc(1, sizeof(*d->spawn));
    if (d->spawn == NULL)
        return COLLS_ENOMEM;
    list_init(&d->spawn->children);
    list_init(&d->spawn->orders);
    list_init(&d->spawn->reqs);
    list_init(&d->spawn->dead);
    d->spawn->sigchld = evsignal_new(d->base, SIGCHLD, spawn_sigchld_cb, d);
    if (d->spawn->sigchld == NULL || evsignal_add(d->spawn->sigchld, NULL))
        return COLLS_ENOMEM;
    return 0;
}

void
spawn_free(struct daemon *d)
{
    struct list_node *n;

    if (d->spawn == NULL)
        return;
    while ((n = list_first(&d->spawn->children)) != NULL) {
        struct spawn_child *c = list_entry(n, struct spawn_child, node);

        if (!c->reaped && c->pid > 0)
            kill(-c->pid, SIGTERM);
        spawn_child_free(c);
    }
    while ((n = list_first(&d->spawn->dead)) != NULL)
        spawn_child_free(list_entry(n, struct spawn_child, node));
    while ((n = list_first(&d->spawn->orders)) != NULL) {
        struct spawn_order *o = list_entry(n, struct spawn_order, node);

        list_del(&o->node);
        free(o->tids);
        free(o->status);
        free(o);
    }
    while ((n = list_first(&d->spawn->reqs)) != NULL)
        spawn_req_free(list_entry(n, struct spawn_req, node));
    if (d->spawn->sigchld != NULL)
        event_free(d->spawn->sigchld);
    free(d->spawn);
    d->spawn = NULL;
}
