/*
 * collsctl.h -- subcommands of collsctl.  Each lives in tools/cmd_*.c and
 * exports one entry; collsctl.c holds the table and dispatches.
 */
#ifndef COLLS_TOOLS_COLLSCTL_H
#define COLLS_TOOLS_COLLSCTL_H

#include <stddef.h>

struct collsctl_cmd {
    const char *name;
    const char *usage; /* arguments, e.g. "[--json] [--watch]" */
    const char *help;  /* one line */
    int needs_daemon;  /* 0: runs without attaching (compress) */
    /* argv[0] is the subcommand name; returns the process exit status. */
    int (*exec)(int argc, char **argv);
};

extern const struct collsctl_cmd cmd_status, cmd_hosts, cmd_ps, cmd_stats,
    cmd_ping, cmd_pingpong, cmd_echo, cmd_add, cmd_delete, cmd_halt,
    cmd_compress, cmd_bench, cmd_groups, cmd_keygen;

/* Helpers shared by the subcommands (tools/collsctl.c). */
struct colls;
/* Attaches to the daemon (--socket / $COLLS_SOCKET); prints why not.
   0 or a COLLS_E* code. */
int collsctl_attach(struct colls **out);
/* Prints "collsctl WHAT: <text of rc>[: <the daemon's words>]" to stderr
   (colls_errmsg of c; c may be NULL). */
void collsctl_perror(struct colls *c, const char *what, int rc);
/* Prints "usage: collsctl NAME USAGE" to stderr; returns 2. */
int collsctl_usage(const struct collsctl_cmd *cmd);
/* Parses a tid written as t<hex>, 0x<hex> or decimal.  0 or -1. */
int collsctl_parse_tid(const char *s, unsigned *tid);
/* A host given as hid, name or address (from the host table); the hid or
   a COLLS_E* code. */
int collsctl_resolve_host(struct colls *c, const char *s);
/* Microseconds on the monotonic clock. */
double collsctl_now_us(void);
/* Median of v[0..n), n > 0; sorts v. */
double collsctl_median(double *v, int n);
/* A size from s up to end (NULL: the end of s), decimal with an optional
   k/K or m/M suffix (powers of 1024), at most max.  0, or -1 if bad. */
int collsctl_parse_size(const char *s, const char *end, unsigned long long max,
                        size_t *out);
/* getopt_long() with the long options as one string of words "name:c"
   (takes an argument, returned as c) or "name.c" (a flag), e.g.
   "count:n json.j".  Returns as getopt_long(); '?' for a bad spec. */
int collsctl_getopt(int argc, char **argv, const char *shortopts,
                    const char *longopts);
/* Runs member(i, arg) in n forked children and waits for them all; when
   one fails the others are killed.  0 if all exited 0, else 1 (perror
   says what on a failed fork). */
int collsctl_fork_members(int n, int (*member)(int i, void *arg), void *arg,
                          const char *what);

#endif
