/*
 * collsctl.h -- subcommands of collsctl.  Each lives in tools/cmd_*.c and
 * exports one entry; collsctl.c holds the table and dispatches.
 *
 * An entry carries its options as a table (struct collsctl_opt): the
 * getopt specification (collsctl_getopt), the synopsis and the
 * `collsctl VERB --help` text, the bash completion and the check of the
 * manual page are all produced from it, so what is parsed, what is
 * explained and what is completed cannot differ.
 */
#ifndef COLLS_TOOLS_COLLSCTL_H
#define COLLS_TOOLS_COLLSCTL_H

#include <stddef.h>
#include <stdio.h>

/* The option may also be written as -KEY (a short option). */
#define COLLSCTL_OPT_SHORT 0x1

/* One option of a subcommand. */
struct collsctl_opt {
    const char *name; /* long name without "--", or NULL: -KEY only */
    int key;          /* the letter collsctl_getopt returns for it */
    unsigned flags;   /* COLLSCTL_OPT_* */
    const char *arg;  /* the argument's placeholder ("N"), NULL: a flag */
    const char *help; /* what it does, its default and allowed values */
    /* For completion: the words the argument may be ("off on auto"), or
       COLLSCTL_FILES (a path), or NULL (anything). */
    const char *values;
};

/* In collsctl_opt.values and collsctl_cmd.operands: complete paths, the
   operation names, the command names. */
#define COLLSCTL_FILES "@files"
#define COLLSCTL_OPS   "@ops"
#define COLLSCTL_CMDS  "@cmds"

struct collsctl_cmd {
    const char *name;
    const char *args; /* operands after the options, e.g. "HOST", or "" */
    const char *help; /* one line */
    /* More lines for `collsctl help NAME` and the manual page: what the
       operands are, what the command does beyond its one line; or NULL. */
    const char *detail;
    const struct collsctl_opt *opts; /* ends with a zero row; NULL: none */
    /* For completion: what the operands may be (words, or a COLLSCTL_*
       class above), or NULL. */
    const char *operands;
    int needs_daemon; /* 0: runs without attaching */
    /* argv[0] is the subcommand name; returns the process exit status. */
    int (*exec)(int argc, char **argv);
};

extern const struct collsctl_cmd cmd_status, cmd_hosts, cmd_ps, cmd_stats,
    cmd_ping, cmd_pingpong, cmd_echo, cmd_add, cmd_delete, cmd_halt,
    cmd_compress, cmd_bench, cmd_groups, cmd_keygen, cmd_algorithms,
    cmd_completion, cmd_spawn, cmd_tune;

/* Every subcommand, in the order `collsctl --help` lists them, and the
   options before COMMAND (--socket, --version, --help). */
extern const struct collsctl_cmd *const collsctl_cmds[];
extern const size_t collsctl_ncmds;
extern const struct collsctl_opt collsctl_global_opts[];

/* Exit statuses of collsctl (README.md, "Install"). */
enum { COLLSCTL_OK = 0, COLLSCTL_FAIL = 1, COLLSCTL_USAGE = 2 };

/* Helpers shared by the subcommands (tools/collsctl.c). */
struct colls;
/* Attaches to the daemon (--socket / $COLLS_SOCKET); prints why not, with
   the socket's path and the fix.  0 or a COLLS_E* code. */
int collsctl_attach(struct colls **out);
/* Fills path with the socket path libcolls uses (colls_attach with
   NULL): --socket, $COLLS_SOCKET or the default. */
void collsctl_socket_path(char *path, size_t cap);
/* Prints "collsctl WHAT: <text of rc>[: <the daemon's words>]" to stderr
   (colls_errmsg of c; c may be NULL). */
void collsctl_perror(struct colls *c, const char *what, int rc);
/* Prints the synopsis of cmd and where its options are explained to
   stderr; returns COLLSCTL_USAGE. */
int collsctl_usage(const struct collsctl_cmd *cmd);
/* Prints `collsctl NAME --help`: synopsis, every option, the detail. */
void collsctl_cmd_help(FILE *f, const struct collsctl_cmd *cmd);
/* Prints "collsctl NAME: bad value 'VALUE' for OPTION: ALLOWED" (OPTION
   as cmd's table names the option KEY) to stderr; returns
   COLLSCTL_USAGE. */
int collsctl_badopt(const struct collsctl_cmd *cmd, int key, const char *value,
                    const char *allowed);
/* Parses the value of option key of cmd as a decimal integer in
   [min, max] into *out; 0, or COLLSCTL_USAGE after collsctl_badopt. */
int collsctl_opt_long(const struct collsctl_cmd *cmd, int key, const char *s,
                      long min, long max, long *out);
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
/* getopt_long() over cmd's option table.  Returns as getopt_long(): the
   option's key, '?' for an unknown option or a missing argument (getopt
   has said which), -1 at the end. */
int collsctl_getopt(int argc, char **argv, const struct collsctl_cmd *cmd);
/* Runs member(i, arg) in n forked children and waits for them all; when
   one fails the others are killed.  0 if all exited 0, else 1 (perror
   says what on a failed fork). */
int collsctl_fork_members(int n, int (*member)(int i, void *arg), void *arg,
                          const char *what);
/* The COLLS_COLL_* operation called name; -1 after "collsctl CMD:
   unknown operation NAME (one of: ...)". */
int collsctl_parse_op(const struct collsctl_cmd *cmd, const char *name);
/* 0 if spec ("NAME[:SEG]") names an algorithm of op that can run it;
   else -1 after saying what is wrong and the algorithms of op
   (tools/cmd_algorithms.c, from the daemon's tables). */
int collsctl_check_alg(const struct collsctl_cmd *cmd, int op,
                       const char *spec);
/* 1 when progress lines may be drawn: stderr is a terminal. */
int collsctl_progress_on(void);
/* Draws "\rcollsctl WHAT: TEXT" on stderr when collsctl_progress_on;
   text NULL clears the line. */
void collsctl_progress(const char *what, const char *text);
/* Writes s as a JSON string (quoted, escaped) to f. */
void collsctl_json_str(FILE *f, const char *s);
/* The integer after the first "KEY": in json (the daemon's statistics,
   whose keys are unique where this is used), else dflt. */
long collsctl_json_long(const char *json, const char *key, long dflt);
/* The string after the first "KEY": in json, as collsctl_json_long finds
   it, into out (cap bytes, cut; "" when there is none, and a string
   with escapes is taken up to the first). */
void collsctl_json_text(const char *json, const char *key, char *out,
                        size_t cap);

#endif
