/*
 * collsctl.c -- the operator's tool: `collsctl [--socket PATH] COMMAND
 * [args]`.  Each command is an entry of the table below, defined in its own
 * tools/cmd_*.c.  Exit status: 0 success, 1 failure, 2 usage error.
 *
 * --socket sets $COLLS_SOCKET for the command, so every attach (including
 * those of commands that fork) uses it; collsctl attaches as an admin task
 * ($COLLS_ADMIN=1) except where a command says otherwise (echo).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "colls.h"
#include "proto/size.h"
#include "tools/collsctl.h"

static const struct collsctl_cmd *const collsctl_cmds[] = {
    &cmd_status,   &cmd_hosts, &cmd_ps,     &cmd_stats,  &cmd_ping,
    &cmd_pingpong, &cmd_echo,  &cmd_add,    &cmd_delete, &cmd_halt,
    &cmd_compress, &cmd_bench, &cmd_groups, &cmd_keygen,
};

#define COLLSCTL_NCMDS (sizeof(collsctl_cmds) / sizeof(collsctl_cmds[0]))

int
collsctl_usage(const struct collsctl_cmd *cmd)
{
    fprintf(stderr, "usage: collsctl %s%s%s\n", cmd->name,
            cmd->usage[0] ? " " : "", cmd->usage);
    return 2;
}

/*
 * After COLLS_EOWNER: names who owns the socket the library refused (the
 * path as libcolls picks it: $COLLS_SOCKET, else $XDG_RUNTIME_DIR/collsd,
 * else /tmp/collsd-UID) and its directory.
 */
static void
collsctl_explain_owner(const char *sock)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    char path[4096], *slash;
    struct stat sb;
    int i;

    if (sock != NULL && sock[0] != '\0')
        snprintf(path, sizeof(path), "%s", sock);
    else if (xdg != NULL && xdg[0] != '\0')
        snprintf(path, sizeof(path), "%s/collsd/collsd.sock", xdg);
    else
        snprintf(path, sizeof(path), "/tmp/collsd-%u/collsd.sock",
                 (unsigned)getuid());
    for (i = 0; i < 2; i++) {
        if (stat(path, &sb) == 0)
            fprintf(stderr, "collsctl: %s belongs to uid %lu\n", path,
                    (unsigned long)sb.st_uid);
        slash = strrchr(path, '/');
        if (slash == NULL || slash == path)
            break;
        *slash = '\0';
    }
    fprintf(stderr,
            "collsctl: you are uid %lu; to use a daemon of another user "
            "(that lets you in), set COLLS_DAEMON_UID=<its uid>\n",
            (unsigned long)geteuid());
}

int
collsctl_attach(struct colls **out)
{
    int rc = colls_attach(NULL, out);
    const char *sock = getenv("COLLS_SOCKET");

    if (rc < 0) {
        const char *why = colls_errmsg(NULL);

        fprintf(stderr, "collsctl: cannot attach to the daemon%s%s: %s%s%s\n",
                sock ? " at " : "", sock ? sock : "", colls_strerror(rc),
                why[0] != '\0' ? ": " : "", why);
    }
    if (rc == COLLS_EOWNER)
        collsctl_explain_owner(sock);
    return rc;
}

void
collsctl_perror(colls_t *c, const char *what, int rc)
{
    const char *why = c != NULL ? colls_errmsg(c) : "";

    fprintf(stderr, "collsctl %s: %s%s%s\n", what, colls_strerror(rc),
            why[0] != '\0' ? ": " : "", why);
}

int
collsctl_parse_tid(const char *s, unsigned *tid)
{
    char *end;
    unsigned long v;

    if (s == NULL || *s == '\0')
        return -1;
    if (s[0] == 't')
        v = strtoul(s + 1, &end, 16);
    else
        v = strtoul(s, &end, 0);
    if (*end != '\0' || end == s || v > 0xffffffffUL)
        return -1;
    *tid = (unsigned)v;
    return 0;
}

double
collsctl_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int
collsctl_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double
collsctl_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), collsctl_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int
collsctl_parse_size(const char *s, const char *end_at, unsigned long long max,
                    size_t *out)
{
    const char *end;
    uint64_t v;

    if (size_parse(s, &end, max, &v) != 0 ||
        end != (end_at != NULL ? end_at : s + strlen(s)))
        return -1;
    *out = (size_t)v;
    return 0;
}

/*
 * Host by hid (decimal), name, address, or address without the port.  A
 * name or full address must match exactly; an address without the port
 * only when one host has it (several daemons may share an IP): otherwise
 * COLLS_EINVAL after saying it is ambiguous.
 */
int
collsctl_resolve_host(struct colls *c, const char *s)
{
    colls_hostinfo_t *h;
    char *end;
    long v = strtol(s, &end, 10);
    size_t l = strlen(s);
    int n, i, rc, exact = COLLS_ENOENT, prefix = COLLS_ENOENT, nprefix = 0;

    if (*s != '\0' && *end == '\0')
        return v > 0 && v < 4096 ? (int)v : COLLS_EINVAL;
    rc = colls_hosts(c, &h, &n);
    if (rc < 0)
        return rc;
    for (i = 0; i < n; i++) {
        if (strcmp(h[i].name, s) == 0 || strcmp(h[i].addr, s) == 0) {
            exact = h[i].hid;
            break;
        }
        if (strncmp(h[i].addr, s, l) == 0 && h[i].addr[l] == ':') {
            prefix = h[i].hid;
            nprefix++;
        }
    }
    colls_free(h);
    if (exact > 0)
        return exact;
    if (nprefix > 1) {
        fprintf(stderr,
                "collsctl: %d hosts have address %s; give the port "
                "or the host id\n",
                nprefix, s);
        return COLLS_EINVAL;
    }
    return prefix;
}

/* Long options a subcommand may have (collsctl_getopt). */
#define COLLSCTL_MAX_LONGOPTS 16

/*
 * Builds opts (NUL-terminated names in names) from longopts, written as
 * collsctl.h says.  0, or -1 if it does not fit or is malformed.
 */
static int
collsctl_longopts(const char *longopts, struct option *opts, char *names,
                  size_t cap)
{
    const char *p = longopts;
    size_t used = 0, len;
    int n = 0;

    memset(opts, 0, (COLLSCTL_MAX_LONGOPTS + 1) * sizeof(*opts));
    for (p += strspn(p, " "); *p != '\0'; p += strspn(p, " ")) {
        len = strcspn(p, ":. ");
        if ((p[len] != ':' && p[len] != '.') || p[len + 1] == '\0' ||
            n == COLLSCTL_MAX_LONGOPTS || used + len + 1 > cap)
            return -1;
        memcpy(names + used, p, len);
        names[used + len] = '\0';
        opts[n].name = names + used;
        opts[n].has_arg = p[len] == ':' ? required_argument : no_argument;
        opts[n].val = (unsigned char)p[len + 1];
        n++;
        used += len + 1;
        p += len + 2;
    }
    return 0;
}

/*
 * getopt_long() over the long options in longopts (see collsctl.h).  A
 * subcommand calls it in its option loop; the table is built when
 * longopts changes (one subcommand runs per process).
 */
int
collsctl_getopt(int argc, char **argv, const char *shortopts,
                const char *longopts)
{
    static struct option opts[COLLSCTL_MAX_LONGOPTS + 1];
    static char names[256];
    static const char *built;

    if (built != longopts) {
        if (collsctl_longopts(longopts, opts, names, sizeof(names)) < 0)
            return '?';
        built = longopts;
    }
    return getopt_long(argc, argv, shortopts, opts, NULL);
}

/* Waits for one child; forgets it in pids[0..n).  1 if it failed, 0 if
   it exited 0, -1 when there is no child left. */
static int
collsctl_reap(pid_t *pids, int n)
{
    int status, i;
    pid_t p = wait(&status);

    if (p < 0)
        return -1;
    for (i = 0; i < n; i++)
        if (pids[i] == p)
            pids[i] = 0;
    return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/*
 * Forks n children running member(i, arg) and waits for them.  The first
 * failure kills the rest (they would wait for the failed one forever).
 * A fork that fails stops the forking; those started are waited for.
 */
int
collsctl_fork_members(int n, int (*member)(int i, void *arg), void *arg,
                      const char *what)
{
    pid_t *pids = calloc((size_t)n, sizeof(*pids));
    int i, started, r, failed = 0;

    if (pids == NULL)
        return 1;
    fflush(stdout);
    fflush(stderr);
    for (started = 0; started < n && !failed; started++) {
        pids[started] = fork();
        if (pids[started] == 0) {
            fflush(stdout);
            _exit(member(started, arg));
        }
        failed = pids[started] < 0;
        if (failed)
            perror(what);
    }
    if (failed)
        started--;
    for (; started > 0 && (r = collsctl_reap(pids, n)) >= 0; started--) {
        if (r && !failed)
            for (i = 0; i < n; i++)
                if (pids[i] > 0)
                    kill(pids[i], SIGTERM);
        failed |= r;
    }
    free(pids);
    return failed;
}

static void
collsctl_help(FILE *f)
{
    size_t i;

    fprintf(f, "usage: collsctl [--socket PATH] COMMAND [ARGS]\n"
               "       collsctl help [COMMAND]\n\ncommands:\n");
    for (i = 0; i < COLLSCTL_NCMDS; i++)
        fprintf(f, "  %-9s %s\n", collsctl_cmds[i]->name,
                collsctl_cmds[i]->help);
    fprintf(f, "\n--socket PATH  the daemon's socket (default: $COLLS_SOCKET,"
               "\n               else $XDG_RUNTIME_DIR/collsd/collsd.sock,"
               "\n               else /tmp/collsd-$UID/collsd.sock)\n");
}

static const struct collsctl_cmd *
collsctl_find(const char *name)
{
    size_t i;

    for (i = 0; i < COLLSCTL_NCMDS; i++)
        if (strcmp(collsctl_cmds[i]->name, name) == 0)
            return collsctl_cmds[i];
    return NULL;
}

int
main(int argc, char **argv)
{
    const struct collsctl_cmd *cmd;
    int i = 1;

    while (i < argc && argv[i][0] == '-') {
        if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
            setenv("COLLS_SOCKET", argv[i + 1], 1);
            i += 2;
        } else if (strncmp(argv[i], "--socket=", 9) == 0) {
            setenv("COLLS_SOCKET", argv[i] + 9, 1);
            i++;
        } else if (strcmp(argv[i], "-h") == 0 ||
                   strcmp(argv[i], "--help") == 0) {
            collsctl_help(stdout);
            return 0;
        } else {
            fprintf(stderr, "collsctl: unknown option %s\n", argv[i]);
            collsctl_help(stderr);
            return 2;
        }
    }
    if (i >= argc) {
        collsctl_help(stderr);
        return 2;
    }
    if (strcmp(argv[i], "help") == 0) {
        if (i + 1 < argc) {
            cmd = collsctl_find(argv[i + 1]);
            if (cmd == NULL) {
                fprintf(stderr, "collsctl: no command %s\n", argv[i + 1]);
                return 2;
            }
            printf("usage: collsctl %s %s\n  %s\n", cmd->name, cmd->usage,
                   cmd->help);
            return 0;
        }
        collsctl_help(stdout);
        return 0;
    }
    cmd = collsctl_find(argv[i]);
    if (cmd == NULL) {
        fprintf(stderr, "collsctl: unknown command %s\n", argv[i]);
        collsctl_help(stderr);
        return 2;
    }
    setenv("COLLS_ADMIN", "1", 1);
    setenv("COLLS_TASK_NAME", "collsctl", 0);
    return cmd->exec(argc - i, argv + i);
}
