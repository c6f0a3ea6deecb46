/*
 * spawn-check.c -- colls_spawn and friends, driven by
 * tests/integration/spawn.sh.  One program, three roles:
 *
 *   spawn-check parent --self PATH --out FILE --copies N
 *       attached to its daemon (COLLS_SOCKET): catches its children's
 *       output into FILE, spawns N copies of PATH ("child" role) over the
 *       machine and checks, printing one line per step on stdout:
 *         spawn: N started
 *         child I: tid ok, parent ok, count N, index ok, fds ok
 *         siblings: ok                   (the even copies' colls_siblings)
 *         spread: ok                     (copies on two hosts or more)
 *         exit I: status S               (S = 10 + I, from the notice)
 *         output: ok                     (FILE holds every line, in order)
 *         ps: parent ok
 *         missing: ENOENT ENOENT         (no such file, per copy)
 *         bare missing: ENOENT           (a name not in --spawn-path)
 *         outside: EPERM EPERM           (outside --spawn-path, per copy)
 *         bad env: EINVAL                (an entry that is not NAME=value)
 *         kill: status 143               (SIGTERM, from the notice)
 *         late: ok                       (copies attaching after the spawn
 *                                         returned get what was sent)
 *         kill unknown: ENOENT
 *         parent: ENOENT                 (this task was not spawned)
 *       or "STEP: FAIL why".
 *   spawn-check child [--sleep]
 *       (spawned) sends its parent {index, count, parent, mytid,
 *       descriptors it was started with beyond 0-2 (none)}, and if its
 *       index is even its colls_siblings list (tag TAG_SIBS); writes
 *       its lines (see child_lines), exits 10 + index; --sleep: waits in
 *       colls_recv until it is killed.
 *   spawn-check late
 *       (spawned) attaches after LATE_MS, receives its parent's message
 *       and its siblings, answers {message came, number of siblings}.
 *   spawn-check master N
 *       (spawned) spawns N copies of itself ("child" role) without
 *       catching their output, so their lines pass up to whoever catches
 *       this task's; waits for their exits and prints "master: N
 *       workers, exits 10 11 ..."; exit status 0 when they were right.
 *   spawn-check hostadd
 *       asks for COLLS_NOTIFY_HOST_ADD, prints "ready", then the first
 *       notice: "host_add: host H".
 *   spawn-check env NAME...
 *       prints "NAME=value" or "NAME unset" for each NAME, in order.
 *
 * Exit status 0 when every step passed, 1 otherwise, 2 on usage errors.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "colls.h"

enum {
    TAG_HELLO = 60,
    TAG_EXIT = 61,
    TAG_KILLED = 62,
    TAG_SIBS = 63,
    TAG_LATE = 64,
    TAG_ADD = 70
};

/* Lines of one copy: LINES short ones, one of LONG bytes (cut by the
   daemon at 4096), one on stderr, and a last one without a newline. */
#define LINES 5
#define LONG  5000
/* A child's hello: index, count, parent, its tid, its extra descriptors
   (u32 each, this machine's order). */
#define HELLO_LEN 20

static int failed;

static void
fail(const char *step, const char *why)
{
    printf("%s: FAIL %s\n", step, why);
    fflush(stdout);
    failed = 1;
}

static uint32_t
get32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 |
           b[3];
}

static void
put32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 24);
    b[1] = (uint8_t)(v >> 16);
    b[2] = (uint8_t)(v >> 8);
    b[3] = (uint8_t)v;
}

/* ---- child -------------------------------------------------------------- */

/* The descriptors open beyond 0, 1 and 2 (the daemon's own must not
   reach a spawned program), or -1 if /proc/self/fd is unreadable. */
static int
extra_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && atoi(e->d_name) > 2 &&
            atoi(e->d_name) != dirfd(d))
            n++;
    closedir(d);
    return n;
}

static int
child(int sleep_forever)
{
    const char *count = getenv("COLLS_SPAWN_COUNT");
    const char *index = getenv("COLLS_SPAWN_INDEX");
    colls_tid_t parent = 0;
    uint8_t b[HELLO_LEN];
    colls_t *c;
    int i, idx = index != NULL ? atoi(index) : -1, fds = extra_fds();
    char *big;

    if (colls_attach(NULL, &c) < 0)
        return 99;
    if (colls_parent(c, &parent) < 0)
        return 98;
    put32(b, (uint32_t)idx);
    put32(b + 4, count != NULL ? (uint32_t)atoi(count) : 0);
    put32(b + 8, parent);
    put32(b + 12, colls_mytid(c));
    put32(b + 16, (uint32_t)fds);
    if (colls_send(c, parent, TAG_HELLO, b, sizeof(b)) < 0)
        return 97;
    if (sleep_forever) {
        colls_recv(c, COLLS_ANY, 12345, b, sizeof(b), NULL);
        return 96;
    }
    if (idx % 2 == 0) {
        /* the even copies only: the others need not ask */
        colls_tid_t sib[64];
        uint8_t list[4 * 64];
        int k, n = colls_siblings(c, sib, 64);

        for (k = 0; k < n && k < 64; k++)
            put32(list + 4 * k, sib[k]);
        if (n < 1 || n > 64 || colls_siblings(c, sib, 64) != n ||
            colls_send(c, parent, TAG_SIBS, list, 4 * (size_t)n) < 0)
            return 94;
    }
    for (i = 0; i < LINES; i++)
        printf("copy %d line %d\n", idx, i);
    big = malloc(LONG + 1);
    if (big == NULL)
        return 95;
    memset(big, 'x', LONG);
    big[LONG] = '\0';
    printf("%s\n", big);
    free(big);
    printf("copy %d tail", idx);
    fflush(stdout);
    fprintf(stderr, "copy %d on stderr\n", idx);
    colls_detach(c);
    return 10 + idx;
}

/* The "late" role: attaches only after LATE_MS, later than the daemon
   waits for a copy to attach before it answers the spawn, then expects
   the message its parent sent at once (held for it) and the list of
   its siblings; answers {1 if the message came, siblings}. */
#define LATE_MS 4000

static int
late(void)
{
    colls_tid_t parent, sib[8];
    uint8_t b[8];
    char msg[16];
    colls_t *c;
    int n;

    usleep(LATE_MS * 1000);
    if (colls_attach(NULL, &c) < 0 || colls_parent(c, &parent) < 0)
        return 99;
    colls_set_timeout(c, 30000);
    memset(msg, 0, sizeof(msg));
    put32(b, colls_recv(c, parent, TAG_LATE, msg, sizeof(msg), NULL) == 0 &&
                 strcmp(msg, "early") == 0);
    n = colls_siblings(c, sib, 8);
    put32(b + 4, (uint32_t)n);
    if (colls_send(c, parent, TAG_LATE, b, sizeof(b)) < 0)
        return 98;
    colls_detach(c);
    return 0;
}

/* ---- parent ------------------------------------------------------------- */

/* Waits for the TASK_EXIT notice of tid (tag); the status, or -1. */
static long
exit_status(colls_t *c, colls_tid_t tid, int tag)
{
    uint8_t b[12];
    colls_status_t st;

    if (colls_notify(c, COLLS_NOTIFY_TASK_EXIT, (int)tid, tag) < 0)
        return -2;
    if (colls_recv(c, COLLS_ANY, tag, b, sizeof(b), &st) < 0 ||
        st.length != 12 || get32(b) != COLLS_NOTIFY_TASK_EXIT ||
        get32(b + 4) != tid)
        return -3;
    return get32(b + 8) == 0xffffffffu ? -1 : (long)get32(b + 8);
}

/* The lines FILE must hold for copy i (tid), in order, stdout only. */
static int
check_output(const char *path, int n, const colls_tid_t *tids)
{
    FILE *f = fopen(path, "r");
    char *line = NULL, prefix[32], want[LONG + 64];
    size_t cap = 0;
    int *next = calloc((size_t)n, sizeof(int)), *err = calloc((size_t)n, 4);
    int i, ok = 1;
    ssize_t len;

    if (f == NULL || next == NULL || err == NULL) {
        fail("output", "cannot read the output file");
        return -1;
    }
    while ((len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] == '\n')
            line[--len] = '\0';
        for (i = 0; i < n; i++) {
            int k = snprintf(prefix, sizeof(prefix), "[t%x] ", tids[i]);

            if (strncmp(line, prefix, (size_t)k) != 0)
                continue;
            snprintf(want, sizeof(want), "copy %d on stderr", i);
            if (strcmp(line + k, want) == 0) {
                err[i]++;
                break;
            }
            if (next[i] < LINES)
                snprintf(want, sizeof(want), "copy %d line %d", i, next[i]);
            else if (next[i] == LINES)
                memset(want, 'x', 4096), want[4096] = '\0';
            else if (next[i] == LINES + 1)
                memset(want, 'x', LONG - 4096), want[LONG - 4096] = '\0';
            else if (next[i] == LINES + 2)
                snprintf(want, sizeof(want), "copy %d tail", i);
            else
                snprintf(want, sizeof(want), "(nothing more)");
            if (strcmp(line + k, want) != 0) {
                char why[128];

                snprintf(why, sizeof(why), "copy %d line %d: got %.40s", i,
                         next[i], line + k);
                fail("output", why);
                ok = 0;
            }
            next[i]++;
            break;
        }
        if (i == n) {
            fail("output", "a line from no child");
            ok = 0;
        }
    }
    for (i = 0; i < n; i++)
        if (next[i] != LINES + 3 || err[i] != 1) {
            char why[96];

            snprintf(why, sizeof(why), "copy %d: %d stdout lines, %d stderr", i,
                     next[i], err[i]);
            fail("output", why);
            ok = 0;
        }
    if (ok)
        printf("output: ok\n");
    free(line);
    free(next);
    free(err);
    fclose(f);
    return ok ? 0 : -1;
}

/* Spawns n copies of file expecting code for each; prints "step: NAMES". */
static void
spawn_fails(colls_t *c, const char *step, const char *file, int n, int code)
{
    char *argv[] = {"child", NULL};
    colls_tid_t tids[4];
    int rc = colls_spawn(c, file, argv, COLLS_SPAWN_ANY, NULL, n, tids), i;

    if (rc != 0) {
        fail(step, "copies started");
        return;
    }
    printf("%s:", step);
    for (i = 0; i < n; i++) {
        printf(" %s", colls_err_name((int)tids[i]));
        failed |= (int)tids[i] != code;
    }
    printf("\n");
}

static int
parent(const char *self, const char *out, int n)
{
    char *argv[] = {"child", NULL}, *sleep_argv[] = {"child", "--sleep", NULL};
    colls_tid_t *tids = calloc((size_t)n, sizeof(*tids)), p, killed;
    colls_taskinfo_t *ti;
    uint8_t b[HELLO_LEN];
    colls_t *c;
    FILE *f = fopen(out, "w");
    int i, rc, nt, seen;

    if (tids == NULL || f == NULL || colls_attach(NULL, &c) < 0)
        return 1;
    colls_set_timeout(c, 30000);
    if (colls_catchout(c, fileno(f)) < 0)
        fail("catchout", "refused");
    rc = colls_spawn(c, self, argv, COLLS_SPAWN_ANY, NULL, n, tids);
    printf("spawn: %d started\n", rc);
    if (rc != n)
        return 1;
    for (seen = 0; seen < n; seen++) {
        colls_status_t st;
        uint32_t idx;

        if (colls_recv(c, COLLS_ANY, TAG_HELLO, b, sizeof(b), &st) < 0) {
            fail("child", "no hello");
            break;
        }
        idx = get32(b);
        if (idx >= (uint32_t)n) {
            fail("child", "bad index");
            continue;
        }
        printf("child %u: tid %s, parent %s, count %u, index %s, fds ", idx,
               get32(b + 12) == tids[idx] ? "ok" : "WRONG",
               get32(b + 8) == colls_mytid(c) ? "ok" : "WRONG", get32(b + 4),
               st.source == tids[idx] ? "ok" : "WRONG");
        if (get32(b + 16) == 0)
            printf("ok\n");
        else
            printf("%d open\n", (int)get32(b + 16));
        failed |= get32(b + 12) != tids[idx] || get32(b + 4) != (uint32_t)n ||
                  get32(b + 16) != 0;
    }
    /* the even copies' colls_siblings: every copy, in index order */
    for (i = 0, seen = 0; i < n; i += 2) {
        uint8_t list[4 * 64];
        colls_status_t st;
        int k, ok;

        if (colls_recv(c, tids[i], TAG_SIBS, list, sizeof(list), &st) < 0) {
            fail("siblings", "no list");
            seen = -1;
            break;
        }
        ok = st.length == 4 * (size_t)n;
        for (k = 0; ok && k < n; k++)
            ok = get32(list + 4 * k) == tids[k];
        if (!ok) {
            char why[64];

            snprintf(why, sizeof(why), "copy %d: a list of %zu bytes differs",
                     i, st.length);
            fail("siblings", why);
            seen = -1;
        }
    }
    if (seen == 0)
        printf("siblings: ok\n");
    for (i = 1, seen = 0; i < n; i++)
        seen |= COLLS_TID_HID(tids[i]) != COLLS_TID_HID(tids[0]);
    if (seen)
        printf("spread: ok\n");
    else
        fail("spread", "every copy on one host");
    for (i = 0; i < n; i++) {
        long s = exit_status(c, tids[i], TAG_EXIT);

        printf("exit %d: status %ld\n", i, s);
        failed |= s != 10 + i;
    }
    fflush(f);
    check_output(out, n, tids);

    /* the task table knows who spawned whom */
    rc = colls_spawn(c, self, sleep_argv, COLLS_SPAWN_ANY, NULL, 1, &killed);
    if (rc != 1 || colls_recv(c, killed, TAG_HELLO, b, sizeof(b), NULL) < 0) {
        fail("kill", "the sleeper did not start");
    } else {
        rc = colls_tasks(c, COLLS_ANY, &ti, &nt);
        for (i = 0; rc == 0 && i < nt; i++)
            if (ti[i].tid == killed)
                printf("ps: parent %s\n",
                       ti[i].parent == colls_mytid(c) ? "ok" : "WRONG");
        if (rc == 0)
            colls_free(ti);
        rc = colls_kill(c, killed);
        if (rc < 0)
            fail("kill", colls_err_name(rc));
        printf("kill: status %ld\n", exit_status(c, killed, TAG_KILLED));
    }
    /* copies that attach after the spawn was answered: what was sent to
       them at once, the list of siblings included, waits for them */
    {
        char *late_argv[] = {"late", NULL};
        colls_tid_t lt[2];
        int ok = 0;

        rc = colls_spawn(c, self, late_argv, COLLS_SPAWN_ANY, NULL, 2, lt);
        for (i = 0; rc == 2 && i < 2; i++)
            ok += colls_send(c, lt[i], TAG_LATE, "early", 6) == 0;
        for (i = 0; rc == 2 && i < 2; i++)
            ok += colls_recv(c, lt[i], TAG_LATE, b, 8, NULL) == 0 &&
                  get32(b) == 1 && get32(b + 4) == 2;
        if (ok == 4)
            printf("late: ok\n");
        else
            fail("late", "a message for a copy not attached yet was lost");
    }
    spawn_fails(c, "missing", "/nonexistent/spawn-check", 2, COLLS_ENOENT);
    spawn_fails(c, "bare missing", "no-such-program", 1, COLLS_ENOENT);
    spawn_fails(c, "outside", "/bin/true", 2, COLLS_EPERM);
    {
        char *bad[] = {"1A=x", NULL}, *args[] = {"env", NULL};
        colls_tid_t t;

        printf("bad env: %s\n",
               colls_err_name(colls_spawn_env(c, self, args, bad,
                                              COLLS_SPAWN_ANY, NULL, 1, &t)));
    }
    printf("kill unknown: %s\n",
           colls_err_name(colls_kill(c, colls_mytid(c) + 0xfff)));
    printf("parent: %s\n", colls_err_name(colls_parent(c, &p)));
    fflush(stdout);
    colls_detach(c);
    fclose(f);
    free(tids);
    return failed;
}

/* ---- master ------------------------------------------------------------- */

static int
master(const char *self, int n)
{
    char *argv[] = {"child", NULL};
    colls_tid_t tids[16];
    uint8_t b[HELLO_LEN];
    colls_t *c;
    int i, ok;

    if (n < 1 || n > 16 || colls_attach(NULL, &c) < 0 ||
        colls_spawn(c, self, argv, COLLS_SPAWN_ANY, NULL, n, tids) != n)
        return 1;
    for (i = 0; i < n; i++)
        if (colls_recv(c, COLLS_ANY, TAG_HELLO, b, sizeof(b), NULL) < 0)
            return 1;
    printf("master: %d workers, exits", n);
    for (i = 0, ok = 1; i < n; i++) {
        long s = exit_status(c, tids[i], TAG_EXIT);

        printf(" %ld", s);
        ok &= s == 10 + i;
    }
    printf("\n");
    colls_detach(c);
    return ok ? 0 : 1;
}

/* ---- env ---------------------------------------------------------------- */

/* Prints "NAME=value" or "NAME unset" for each name, in order. */
static int
env(int argc, char **argv)
{
    int i;

    for (i = 0; i < argc; i++) {
        const char *v = getenv(argv[i]);

        if (v != NULL)
            printf("%s=%s\n", argv[i], v);
        else
            printf("%s unset\n", argv[i]);
    }
    return 0;
}

/* ---- hostadd ------------------------------------------------------------ */

static int
hostadd(void)
{
    uint8_t b[12];
    colls_status_t st;
    colls_t *c;

    if (colls_attach(NULL, &c) < 0 ||
        colls_notify(c, COLLS_NOTIFY_HOST_ADD, 0, TAG_ADD) < 0)
        return 1;
    printf("ready\n");
    fflush(stdout);
    if (colls_recv(c, COLLS_ANY, TAG_ADD, b, sizeof(b), &st) < 0 ||
        st.length != 8 || get32(b) != COLLS_NOTIFY_HOST_ADD)
        return 1;
    printf("host_add: host %u\n", get32(b + 4));
    colls_detach(c);
    return 0;
}

int
main(int argc, char **argv)
{
    const char *self = NULL, *out = NULL;
    int i, n = 4;

    if (argc >= 2 && strcmp(argv[1], "child") == 0)
        return child(argc >= 3 && strcmp(argv[2], "--sleep") == 0);
    if (argc >= 2 && strcmp(argv[1], "late") == 0)
        return late();
    if (argc >= 2 && strcmp(argv[1], "hostadd") == 0)
        return hostadd();
    if (argc >= 2 && strcmp(argv[1], "env") == 0)
        return env(argc - 2, argv + 2);
    if (argc == 3 && strcmp(argv[1], "master") == 0)
        return master(argv[0], atoi(argv[2]));
    if (argc < 2 || strcmp(argv[1], "parent") != 0)
        goto usage;
    for (i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--self") == 0)
            self = argv[i + 1];
        else if (strcmp(argv[i], "--out") == 0)
            out = argv[i + 1];
        else if (strcmp(argv[i], "--copies") == 0)
            n = atoi(argv[i + 1]);
        else
            goto usage;
    }
    if (self != NULL && out != NULL && n >= 1 && n <= 64 && i == argc)
        return parent(self, out, n);
usage:
    fprintf(stderr, "usage: spawn-check parent --self PATH --out FILE "
                    "[--copies N] | child [--sleep] | late | master N | "
                    "hostadd | env NAME...\n");
    return 2;
}
