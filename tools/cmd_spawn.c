/*
 * cmd_spawn.c -- `collsctl spawn [-n N] [--host H | --arch A] [--output
 * FILE] PROGRAM ARGS...`: starts N copies of PROGRAM through the daemons
 * (colls_spawn), prints their output as it comes (colls_catchout), waits
 * for every copy to end (COLLS_NOTIFY_TASK_EXIT), then prints one line
 * per copy: its tid and exit status, or why it did not start.  PVM's
 * console `spawn ->`.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "colls.h"
#include "tools/collsctl.h"

/* Tag of the exit notifications collsctl asks for. */
#define SPAWN_TAG_EXIT 0x5e1f

/*
 * The index of PROGRAM in argv: options end at the first operand (or
 * after "--"), so the program's own options are left alone.
 */
static int
spawn_options_end(int argc, char **argv)
{
    int i;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "--") == 0)
            return i + 1;
        if (a[0] != '-' || a[1] == '\0')
            return i;
        /* an option with its value in the next word */
        if ((strcmp(a, "-n") == 0 || strcmp(a, "--count") == 0 ||
             strcmp(a, "--host") == 0 || strcmp(a, "--arch") == 0 ||
             strcmp(a, "--output") == 0 || strcmp(a, "-o") == 0) &&
            i + 1 < argc)
            i++;
    }
    return i;
}

/* The program as the daemons get it: a relative path made absolute from
   the current directory; a bare name stays (their --spawn-path). */
static int
spawn_program(const char *prog, char *out, size_t cap)
{
    char cwd[PATH_MAX];
    int n;

    if (prog[0] == '/' || strchr(prog, '/') == NULL)
        n = snprintf(out, cap, "%s", prog);
    else if (getcwd(cwd, sizeof(cwd)) == NULL)
        return -1;
    else
        n = snprintf(out, cap, "%s/%s", cwd, prog);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* Why a copy did not start, in the words of spawn's errors. */
static const char *
spawn_why(int err)
{
    switch (err) {
    case COLLS_ENOENT:
        return "no such program, or not executable";
    case COLLS_EPERM:
        return "not allowed by the daemon's --spawn-path";
    case COLLS_EHOSTDOWN:
        return "no such host up";
    default:
        return colls_strerror(err);
    }
}

/* Waits for the exit notifications of the copies started; fills code[]
   (-1: unknown).  0, or a COLLS_E* code when the daemon is lost. */
static int
spawn_wait(colls_t *c, int n, const colls_tid_t *tids, long *code)
{
    unsigned char b[12];
    colls_status_t st;
    int left = 0, i, rc;

    for (i = 0; i < n; i++)
        if ((int)tids[i] > 0) {
            rc = colls_notify(c, COLLS_NOTIFY_TASK_EXIT, (int)tids[i],
                              SPAWN_TAG_EXIT);
            if (rc < 0)
                return rc;
            left++;
        }
    while (left > 0) {
        uint32_t who, status;

        rc = colls_recv(c, COLLS_ANY, SPAWN_TAG_EXIT, b, sizeof(b), &st);
        if (rc < 0)
            return rc;
        if (st.length < 8)
            continue;
        who = (uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 |
              (uint32_t)b[6] << 8 | b[7];
        status = st.length >= 12 ? (uint32_t)b[8] << 24 | (uint32_t)b[9] << 16 |
                                       (uint32_t)b[10] << 8 | b[11]
                                 : 0xffffffffu;
        for (i = 0; i < n; i++)
            if ((int)tids[i] > 0 && tids[i] == who && code[i] == -2) {
                code[i] = status == 0xffffffffu ? -1 : (long)status;
                left--;
            }
    }
    return 0;
}

static int
spawn_exec(int argc, char **argv)
{
    const char *host = NULL, *arch = NULL, *output = NULL, *where = NULL;
    char prog[PATH_MAX];
    colls_tid_t *tids = NULL;
    long count = 1, *code = NULL;
    int opt, end, flags = COLLS_SPAWN_ANY, fd = STDOUT_FILENO, rc, i, ok;
    colls_t *c = NULL;

    end = spawn_options_end(argc, argv);
    optind = 1;
    while ((opt = collsctl_getopt(end, argv, &cmd_spawn)) != -1) {
        switch (opt) {
        case 'n':
            if (collsctl_opt_long(&cmd_spawn, opt, optarg, 1, 4096, &count) !=
                0)
                return COLLSCTL_USAGE;
            break;
        case 'H':
            host = optarg;
            break;
        case 'A':
            arch = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        default:
            return collsctl_usage(&cmd_spawn);
        }
    }
    if (optind != end || end >= argc || (host != NULL && arch != NULL))
        return collsctl_usage(&cmd_spawn);
    if (host != NULL) {
        flags = COLLS_SPAWN_HOST;
        where = host;
    } else if (arch != NULL) {
        flags = COLLS_SPAWN_ARCH;
        where = arch;
    }
    if (spawn_program(argv[end], prog, sizeof(prog)) != 0) {
        fprintf(stderr, "collsctl spawn: %s: path too long\n", argv[end]);
        return COLLSCTL_FAIL;
    }
    if (output != NULL &&
        (fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) <
            0) {
        perror(output);
        return COLLSCTL_FAIL;
    }
    tids = calloc((size_t)count, sizeof(*tids));
    code = calloc((size_t)count, sizeof(*code));
    if (tids == NULL || code == NULL || collsctl_attach(&c) < 0) {
        rc = COLLSCTL_FAIL;
        goto out;
    }
    fflush(stdout);
    rc = colls_catchout(c, fd);
    if (rc == 0)
        rc = colls_spawn(c, prog, argv + end + 1, flags, where, (int)count,
                         tids);
    if (rc < 0) {
        collsctl_perror(c, "spawn", rc);
        rc = COLLSCTL_FAIL;
        goto out;
    }
    for (i = 0; i < count; i++)
        code[i] = -2;
    rc = spawn_wait(c, (int)count, tids, code);
    if (rc < 0) {
        collsctl_perror(c, "spawn: waiting for the copies", rc);
        rc = COLLSCTL_FAIL;
        goto out;
    }
    ok = 1;
    for (i = 0; i < count; i++) {
        if ((int)tids[i] < 0) {
            printf("copy %d: %s (%s)\n", i, colls_err_name((int)tids[i]),
                   spawn_why((int)tids[i]));
            ok = 0;
        } else if (code[i] < 0) {
            printf("copy %d: t%x exit unknown\n", i, (unsigned)tids[i]);
            ok = 0;
        } else {
            printf("copy %d: t%x exit %ld\n", i, (unsigned)tids[i], code[i]);
            ok &= code[i] == 0;
        }
    }
    rc = ok ? COLLSCTL_OK : COLLSCTL_FAIL;
out:
    if (c != NULL)
        colls_detach(c);
    if (output != NULL && fd >= 0)
        close(fd);
    free(tids);
    free(code);
    return rc;
}

static const struct collsctl_opt spawn_opts[] = {
    {"count", 'n', COLLSCTL_OPT_SHORT, "N",
     "copies to start (default 1; 1 to 4096)"},
    {"host", 'H', 0, "HOST", "start every copy on HOST (hid, name or address)"},
    {"arch", 'A', 0, "ARCH",
     "start the copies on hosts of this architecture (as uname -m prints "
     "it)"},
    {"output", 'o', COLLSCTL_OPT_SHORT, "FILE",
     "write the copies' output lines to FILE instead of standard output",
     COLLSCTL_FILES},
    {NULL, 0, 0, NULL, NULL},
};

const struct collsctl_cmd cmd_spawn = {
    .name = "spawn",
    .args = "PROGRAM [ARGS...]",
    .help = "start copies of a program through the daemons and wait",
    .detail =
        "Starts N copies of PROGRAM (a name searched in each daemon's "
        "--spawn-path, or a path: a relative one is made absolute from the "
        "current directory) on the hosts with the fewest tasks, or on HOST, "
        "or on hosts of ARCH.  Prints each line the copies write, prefixed "
        "[tTID], as it comes; when every copy has ended, one line per copy: "
        "'copy I: tTID exit CODE' (CODE 128 + N for signal N), or 'copy I: "
        "NAME (text)' for a copy that did not start (COLLS_ENOENT: no such "
        "program, COLLS_EPERM: outside --spawn-path).  The copies get the "
        "COLLS_* variables of this environment and those COLLS_EXPORT names "
        "(NAME:NAME...).  Exit status 0 if every copy started and exited 0, "
        "else 1.  Options end at PROGRAM: what follows it is the program's.",
    .opts = spawn_opts,
    .operands = COLLSCTL_FILES,
    .needs_daemon = 1,
    .exec = spawn_exec,
};
