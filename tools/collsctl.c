/*
 * collsctl.c -- the operator's tool: `collsctl [--socket PATH] COMMAND
 * [args]`.  Each command is an entry of the table below, defined in its own
 * tools/cmd_*.c, with its options as a table (collsctl.h): getopt, the
 * synopsis, `collsctl COMMAND --help` and the completion are made from
 * it here.  Exit status: 0 success, 1 failure, 2 usage error.
 *
 * `COMMAND --help` (or -h, or `collsctl help COMMAND`) never attaches.
 * --socket sets $COLLS_SOCKET for the command, so every attach (including
 * those of commands that fork) uses it; collsctl attaches as an admin task
 * ($COLLS_ADMIN=1) except where a command says otherwise (echo).
 */
#include <config.h> /* autoconf: PACKAGE_VERSION */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "colls.h"
#include "proto/collop.h"
#include "proto/envelope.h"
#include "proto/size.h"
#include "tools/collsctl.h"

const struct collsctl_cmd *const collsctl_cmds[] = {
    &cmd_status,     &cmd_hosts,  &cmd_ps,         &cmd_stats,  &cmd_groups,
    &cmd_spawn,      &cmd_ping,   &cmd_pingpong,   &cmd_echo,   &cmd_bench,
    &cmd_algorithms, &cmd_tune,   &cmd_add,        &cmd_delete, &cmd_halt,
    &cmd_compress,   &cmd_keygen, &cmd_completion,
};
const size_t collsctl_ncmds = sizeof(collsctl_cmds) / sizeof(collsctl_cmds[0]);

const struct collsctl_opt collsctl_global_opts[] = {
    {"socket", 'S', 0, "PATH",
     "the daemon's socket (default: $COLLS_SOCKET, else "
     "$XDG_RUNTIME_DIR/collsd/collsd.sock, else /tmp/collsd-$UID/collsd.sock)",
     COLLSCTL_FILES},
    {"version", 'V', 0, NULL, "print collsctl's version and protocol version"},
    {"help", 'h', COLLSCTL_OPT_SHORT, NULL,
     "print this help (COMMAND --help: the command's)"},
    {NULL, 0, 0, NULL, NULL},
};

/* Columns of the help text. */
#define HELP_WIDTH   79
#define HELP_OPT_COL 24

void
collsctl_socket_path(char *path, size_t cap)
{
    const char *sock = getenv("COLLS_SOCKET");
    const char *xdg = getenv("XDG_RUNTIME_DIR");

    if (sock != NULL && sock[0] != '\0')
        snprintf(path, cap, "%s", sock);
    else if (xdg != NULL && xdg[0] != '\0')
        snprintf(path, cap, "%s/collsd/collsd.sock", xdg);
    else
        snprintf(path, cap, "/tmp/collsd-%u/collsd.sock", (unsigned)getuid());
}

/*
 * After COLLS_EOWNER: names who owns the socket the library refused and
 * its directory.
 */
static void
collsctl_explain_owner(const char *sock)
{
    char path[4096], *slash;
    struct stat sb;
    int i;

    snprintf(path, sizeof(path), "%s", sock);
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

/* The fix for a daemon that is not there. */
#define COLLSCTL_START_HINT                                                    \
    "start collsd, or give the socket of a running one with --socket PATH "    \
    "or COLLS_SOCKET"

/*
 * After COLLS_ECONNREFUSED: connects to path once more, with a plain
 * socket, for the reason the library does not pass on (errno), and says
 * it with the fix.
 */
static void
collsctl_explain_unreachable(const char *path)
{
    struct sockaddr_un sa;
    int fd, err = 0;

    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa.sun_path)) {
        fprintf(stderr,
                "collsctl: cannot reach the daemon at %s: the path is longer "
                "than a Unix socket's may be (%zu bytes); give a shorter one "
                "with --socket PATH or COLLS_SOCKET\n",
                path, sizeof(sa.sun_path) - 1);
        return;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
        err = errno;
    if (fd >= 0)
        close(fd);
    if (err == EACCES || err == EPERM)
        fprintf(stderr,
                "collsctl: cannot reach the daemon at %s: permission denied "
                "(you are uid %lu; the daemon lets in its own uid and those "
                "its operator names with collsd --allow-uid or --allow-gid: "
                "ask for --allow-uid %lu)\n",
                path, (unsigned long)geteuid(), (unsigned long)geteuid());
    else if (err == ENOENT || err == ENOTDIR)
        fprintf(stderr,
                "collsctl: cannot reach the daemon: no socket at "
                "%s; " COLLSCTL_START_HINT "\n",
                path);
    else
        fprintf(
            stderr,
            "collsctl: cannot reach the daemon at %s: %s; " COLLSCTL_START_HINT
            "\n",
            path, err != 0 ? strerror(err) : "no daemon answers there");
}

int
collsctl_attach(struct colls **out)
{
    char path[4096];
    int rc = colls_attach(NULL, out);
    const char *why;

    if (rc == 0)
        return 0;
    collsctl_socket_path(path, sizeof(path));
    if (rc == COLLS_ECONNREFUSED) {
        collsctl_explain_unreachable(path);
        return rc;
    }
    why = colls_errmsg(NULL);
    fprintf(stderr, "collsctl: cannot attach to the daemon at %s: %s%s%s\n",
            path, colls_strerror(rc), why[0] != '\0' ? ": " : "", why);
    if (rc == COLLS_EPERM)
        fprintf(stderr,
                "collsctl: the daemon refuses uid %lu; its operator can let "
                "you in with collsd --allow-uid %lu (or --allow-gid)\n",
                (unsigned long)geteuid(), (unsigned long)geteuid());
    else if (rc == COLLS_EOWNER)
        collsctl_explain_owner(path);
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

/* ---- options: getopt, synopsis and help from a command's table ---- */

/* Rows of opts before its zero row (opts may be NULL). */
static size_t
collsctl_nopts(const struct collsctl_opt *opts)
{
    size_t n = 0;

    while (opts != NULL && opts[n].key != 0)
        n++;
    return n;
}

/* The row of cmd's option key, or NULL. */
static const struct collsctl_opt *
collsctl_opt_of(const struct collsctl_cmd *cmd, int key)
{
    size_t i, n = collsctl_nopts(cmd->opts);

    for (i = 0; i < n; i++)
        if (cmd->opts[i].key == key)
            return &cmd->opts[i];
    return NULL;
}

/* "--name" (or "-k" when it has no long name) of o into buf. */
static const char *
collsctl_opt_name(const struct collsctl_opt *o, char *buf, size_t cap)
{
    if (o->name != NULL)
        snprintf(buf, cap, "--%s", o->name);
    else
        snprintf(buf, cap, "-%c", o->key);
    return buf;
}

/*
 * Writes text to f from column col, wrapping words at HELP_WIDTH; a
 * continuation line (and a line after a '\n' of text) starts at column
 * indent.  Ends with a newline.
 */
static void
collsctl_wrap(FILE *f, const char *text, int col, int indent)
{
    const char *p = text;
    int bol = 1; /* nothing written on this line yet */

    while (*p != '\0') {
        size_t w = strcspn(p, " \n");

        if (!bol && col + 1 + (int)w > HELP_WIDTH) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (!bol) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", (int)w, p);
        col += (int)w;
        bol = 0;
        p += w;
        if (*p == '\n') {
            /* an empty line stays empty; a line break keeps the indent */
            fprintf(f, "\n%*s", p[1] == '\n' || p[1] == '\0' ? 0 : indent, "");
            col = indent;
            bol = 1;
            p++;
        } else if (*p == ' ') {
            p += strspn(p, " ");
        }
    }
    fputc('\n', f);
}

/* Writes item to f at *col, first on a new line (at indent) if it would
   pass HELP_WIDTH. */
static void
collsctl_item(FILE *f, const char *item, int *col, int indent)
{
    int len = (int)strlen(item);

    if (*col > indent && *col + 1 + len > HELP_WIDTH) {
        fprintf(f, "\n%*s", indent, "");
        *col = indent;
    } else {
        fputc(' ', f);
        (*col)++;
    }
    fputs(item, f);
    *col += len;
}

/* The synopsis: "usage: collsctl NAME [-c N] [--flag] ARGS", wrapped
   between items. */
static void
collsctl_synopsis(FILE *f, const struct collsctl_cmd *cmd)
{
    size_t i, n = collsctl_nopts(cmd->opts);
    char item[128], name[64];
    int col, indent;

    col = fprintf(f, "usage: collsctl %s", cmd->name);
    indent = col + 1;
    for (i = 0; i < n; i++) {
        const struct collsctl_opt *op = &cmd->opts[i];

        if (op->flags & COLLSCTL_OPT_SHORT)
            snprintf(name, sizeof(name), "-%c", op->key);
        else
            collsctl_opt_name(op, name, sizeof(name));
        snprintf(item, sizeof(item), "[%s%s%s]", name, op->arg ? " " : "",
                 op->arg ? op->arg : "");
        collsctl_item(f, item, &col, indent);
    }
    if (cmd->args[0] != '\0')
        collsctl_item(f, cmd->args, &col, indent);
    fputc('\n', f);
}

int
collsctl_usage(const struct collsctl_cmd *cmd)
{
    collsctl_synopsis(stderr, cmd);
    fprintf(stderr, "(collsctl %s --help explains every option)\n", cmd->name);
    return COLLSCTL_USAGE;
}

/* One option's help line(s): "  -c, --count N     meaning". */
static void
collsctl_opt_help(FILE *f, const struct collsctl_opt *o)
{
    char lead[128];
    int n;

    if (o->name != NULL && (o->flags & COLLSCTL_OPT_SHORT))
        n = snprintf(lead, sizeof(lead), "  -%c, --%s%s%s", o->key, o->name,
                     o->arg ? " " : "", o->arg ? o->arg : "");
    else if (o->name != NULL)
        n = snprintf(lead, sizeof(lead), "      --%s%s%s", o->name,
                     o->arg ? " " : "", o->arg ? o->arg : "");
    else
        n = snprintf(lead, sizeof(lead), "  -%c%s%s", o->key, o->arg ? " " : "",
                     o->arg ? o->arg : "");
    fputs(lead, f);
    if (n + 2 > HELP_OPT_COL) {
        fprintf(f, "\n%*s", HELP_OPT_COL, "");
        n = HELP_OPT_COL;
    } else {
        fprintf(f, "%*s", HELP_OPT_COL - n, "");
        n = HELP_OPT_COL;
    }
    collsctl_wrap(f, o->help, n, HELP_OPT_COL);
}

void
collsctl_cmd_help(FILE *f, const struct collsctl_cmd *cmd)
{
    static const struct collsctl_opt help = {
        "help", 'h', COLLSCTL_OPT_SHORT, NULL,
        "print this help and exit (never attaches)"};
    size_t i, n = collsctl_nopts(cmd->opts);

    collsctl_synopsis(f, cmd);
    fprintf(f, "\n");
    collsctl_wrap(f, cmd->help, 0, 0);
    fprintf(f, "\noptions:\n");
    for (i = 0; i < n; i++)
        collsctl_opt_help(f, &cmd->opts[i]);
    collsctl_opt_help(f, &help);
    if (cmd->detail != NULL) {
        fprintf(f, "\n");
        collsctl_wrap(f, cmd->detail, 0, 0);
    }
    if (cmd->needs_daemon) {
        fprintf(f, "\n");
        collsctl_wrap(f,
                      "It talks to the daemon at --socket PATH (given before "
                      "the command), $COLLS_SOCKET or the default socket "
                      "(collsctl --help).",
                      0, 0);
    }
}

int
collsctl_badopt(const struct collsctl_cmd *cmd, int key, const char *value,
                const char *allowed)
{
    const struct collsctl_opt *o = collsctl_opt_of(cmd, key);
    char name[64] = "?";

    if (o != NULL)
        collsctl_opt_name(o, name, sizeof(name));
    fprintf(stderr, "collsctl %s: bad value '%s' for %s: %s\n", cmd->name,
            value, name, allowed);
    fprintf(stderr, "(collsctl %s --help explains every option)\n", cmd->name);
    return COLLSCTL_USAGE;
}

int
collsctl_opt_long(const struct collsctl_cmd *cmd, int key, const char *s,
                  long min, long max, long *out)
{
    char *end, allowed[96];
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno != 0 || v < min || v > max) {
        snprintf(allowed, sizeof(allowed), "a whole number from %ld to %ld",
                 min, max);
        return collsctl_badopt(cmd, key, s, allowed);
    }
    *out = v;
    return 0;
}

/* Long options a subcommand may have (collsctl_getopt). */
#define COLLSCTL_MAX_OPTS 24

/*
 * getopt_long() over cmd's table.  The getopt tables are built when cmd
 * changes (one subcommand runs per process).  getopt's own messages are
 * off: an unknown option or a missing argument is said here, with the
 * command's name.
 */
int
collsctl_getopt(int argc, char **argv, const struct collsctl_cmd *cmd)
{
    static struct option lopts[COLLSCTL_MAX_OPTS + 1];
    static char sopts[2 * COLLSCTL_MAX_OPTS + 2];
    static const struct collsctl_cmd *built;
    const struct collsctl_opt *o;
    size_t i, n, k = 0, s = 0;
    char name[64];
    int opt;

    if (built != cmd) {
        n = collsctl_nopts(cmd->opts);
        if (n > COLLSCTL_MAX_OPTS)
            return '?';
        memset(lopts, 0, sizeof(lopts));
        sopts[s++] = ':';
        for (i = 0; i < n; i++) {
            o = &cmd->opts[i];
            if (o->flags & COLLSCTL_OPT_SHORT) {
                sopts[s++] = (char)o->key;
                if (o->arg != NULL)
                    sopts[s++] = ':';
            }
            if (o->name != NULL) {
                lopts[k].name = o->name;
                lopts[k].has_arg = o->arg ? required_argument : no_argument;
                lopts[k].val = o->key;
                k++;
            }
        }
        sopts[s] = '\0';
        built = cmd;
    }
    opterr = 0;
    opt = getopt_long(argc, argv, sopts, lopts, NULL);
    if (opt == ':') {
        o = collsctl_opt_of(cmd, optopt);
        fprintf(stderr, "collsctl %s: %s needs a value (%s)\n", cmd->name,
                o != NULL ? collsctl_opt_name(o, name, sizeof(name))
                          : argv[optind - 1],
                o != NULL ? o->arg : "?");
        return '?';
    }
    if (opt == '?') {
        if (optopt != 0)
            fprintf(stderr, "collsctl %s: unknown option -%c\n", cmd->name,
                    optopt);
        else
            fprintf(stderr, "collsctl %s: unknown option %s\n", cmd->name,
                    argv[optind - 1]);
    }
    return opt;
}

/*
 * 1 if argv[1..argc) asks for help (-h or --help as an option, not as an
 * option's value nor after "--"), read with cmd's table.
 */
static int
collsctl_wants_help(const struct collsctl_cmd *cmd, int argc, char **argv)
{
    size_t j, n = collsctl_nopts(cmd->opts);
    int i;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "--") == 0)
            return 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return 1;
        if (a[0] != '-' || a[1] == '\0' || strchr(a, '=') != NULL)
            continue;
        /* skip the value of an option that takes one */
        for (j = 0; j < n; j++) {
            const struct collsctl_opt *o = &cmd->opts[j];

            if (o->arg == NULL)
                continue;
            if ((a[1] == '-' && o->name != NULL &&
                 strcmp(a + 2, o->name) == 0) ||
                ((o->flags & COLLSCTL_OPT_SHORT) && a[1] == o->key &&
                 a[2] == '\0')) {
                i++;
                break;
            }
        }
    }
    return 0;
}

int
collsctl_parse_op(const struct collsctl_cmd *cmd, const char *name)
{
    int op, i;

    for (op = 0; op < COLLS_COLL_MAX; op++)
        if (strcmp(name, collop_name(op)) == 0)
            return op;
    fprintf(stderr, "collsctl %s: unknown operation %s (one of:", cmd->name,
            name);
    for (i = 0; i < COLLS_COLL_MAX; i++)
        fprintf(stderr, " %s", collop_name(i));
    fprintf(stderr, ")\n");
    return -1;
}

int
collsctl_progress_on(void)
{
    return isatty(STDERR_FILENO);
}

void
collsctl_progress(const char *what, const char *text)
{
    if (!collsctl_progress_on())
        return;
    /* "\r" back to the line's start, ESC[K clears it: a terminal only */
    if (text == NULL)
        fprintf(stderr, "\r\033[K");
    else
        fprintf(stderr, "\r\033[Kcollsctl %s: %s", what, text);
    fflush(stderr);
}

void
collsctl_json_str(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    fputc('"', f);
    for (; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* Where the value of the first "KEY": in json starts, or NULL. */
static const char *
collsctl_json_find(const char *json, const char *key)
{
    char pat[64];
    const char *p;

    if (json == NULL ||
        (size_t)snprintf(pat, sizeof(pat), "\"%s\":", key) >= sizeof(pat) ||
        (p = strstr(json, pat)) == NULL)
        return NULL;
    return p + strlen(pat);
}

long
collsctl_json_long(const char *json, const char *key, long dflt)
{
    const char *p = collsctl_json_find(json, key);
    long v;

    if (p == NULL || sscanf(p, "%ld", &v) != 1)
        return dflt;
    return v;
}

void
collsctl_json_text(const char *json, const char *key, char *out, size_t cap)
{
    const char *p = collsctl_json_find(json, key);
    size_t n = 0;

    if (cap == 0)
        return;
    if (p != NULL && *p == '"')
        for (p++; p[n] != '"' && p[n] != '\\' && p[n] != '\0' && n + 1 < cap;
             n++)
            out[n] = p[n];
    out[n] = '\0';
}

/* `collsctl --help`: the commands with their one line, the options
   before the command, the exit statuses. */
static void
collsctl_help(FILE *f)
{
    size_t i;

    fprintf(f, "usage: collsctl [--socket PATH] COMMAND [OPTIONS] [ARGS]\n"
               "       collsctl help [COMMAND]\n"
               "       collsctl COMMAND --help\n"
               "       collsctl --version\n\ncommands:\n");
    for (i = 0; i < collsctl_ncmds; i++) {
        fprintf(f, "  %-11s", collsctl_cmds[i]->name);
        collsctl_wrap(f, collsctl_cmds[i]->help, 13, 13);
    }
    fprintf(f, "\noptions:\n");
    for (i = 0; collsctl_global_opts[i].key != 0; i++)
        collsctl_opt_help(f, &collsctl_global_opts[i]);
    fprintf(f, "\nexit status: 0 done, 1 failed, 2 usage error.\n");
}

/* The command called name, or NULL. */
static const struct collsctl_cmd *
collsctl_find(const char *name)
{
    size_t i;

    for (i = 0; i < collsctl_ncmds; i++)
        if (strcmp(collsctl_cmds[i]->name, name) == 0)
            return collsctl_cmds[i];
    return NULL;
}

/* "unknown command X" and the list of commands; returns 2. */
static int
collsctl_unknown(const char *name)
{
    size_t i;

    fprintf(stderr, "collsctl: unknown command %s (one of:", name);
    for (i = 0; i < collsctl_ncmds; i++)
        fprintf(stderr, " %s", collsctl_cmds[i]->name);
    fprintf(stderr, ")\n");
    return COLLSCTL_USAGE;
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
            return COLLSCTL_OK;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("collsctl %s (protocol %d)\n", PACKAGE_VERSION,
                   COLLS_PROTO_VERSION);
            return COLLSCTL_OK;
        } else {
            fprintf(stderr, "collsctl: unknown option %s%s\n", argv[i],
                    strcmp(argv[i], "--socket") == 0 ? " without PATH" : "");
            fprintf(stderr, "(collsctl --help lists the commands and "
                            "options)\n");
            return COLLSCTL_USAGE;
        }
    }
    if (i >= argc) {
        collsctl_help(stderr);
        return COLLSCTL_USAGE;
    }
    if (strcmp(argv[i], "help") == 0) {
        if (i + 1 < argc) {
            cmd = collsctl_find(argv[i + 1]);
            if (cmd == NULL)
                return collsctl_unknown(argv[i + 1]);
            collsctl_cmd_help(stdout, cmd);
            return COLLSCTL_OK;
        }
        collsctl_help(stdout);
        return COLLSCTL_OK;
    }
    cmd = collsctl_find(argv[i]);
    if (cmd == NULL)
        return collsctl_unknown(argv[i]);
    if (collsctl_wants_help(cmd, argc - i, argv + i)) {
        collsctl_cmd_help(stdout, cmd);
        return COLLSCTL_OK;
    }
    setenv("COLLS_ADMIN", "1", 1);
    setenv("COLLS_TASK_NAME", "collsctl", 0);
    return cmd->exec(argc - i, argv + i);
}
