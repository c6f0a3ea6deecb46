/*
 * config.c -- collsd's option table and its three sources.
 *
 * The table below is the only place an option is defined: its name, type,
 * where it lives in struct config, default, range and help.  Parsing from
 * the command line, the environment and a config file, range checks and
 * --help all walk it.  Precedence: command line > environment > file >
 * default; each source overwrites what the previous ones set.
 *
 * Under systemd (ConfigurationDirectory=collsd sets $CONFIGURATION_DIRECTORY
 * to /etc/collsd) three files of that directory are read when present and
 * not named otherwise: collsd.conf (as --config), hostfile (as --hostfile,
 * unless --join) and cluster.key (as --key-file).  Absent, they are
 * skipped without a word.
 *
 * Owns struct config and the option table.  May call: daemon/log.h,
 * proto/size.h and libc; nothing else in the daemon (every layer reads it).
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "colls.h"
#include "daemon/auth.h"
#include "daemon/config.h"
#include "daemon/log.h"
#include "proto/dgram.h"
#include "proto/size.h"

enum config_type {
    CFG_STR,    /* free text */
    CFG_ADDR,   /* "a.b.c.d:port" ("" allowed when the default is "") */
    CFG_INT,    /* integer */
    CFG_SIZE,   /* integer with optional k/m/g suffix (powers of 1024) */
    CFG_DOUBLE, /* real number */
    CFG_BOOL,   /* yes/no/true/false/on/off/1/0 */
    CFG_LEVEL,  /* log level name */
};

struct config_opt {
    const char *name; /* "dead-after"; env COLLS_DEAD_AFTER */
    enum config_type type;
    size_t off;      /* offset in struct config */
    const char *def; /* default as text; NULL: computed */
    double min, max; /* range of numbers */
    const char *arg; /* argument name in --help */
    const char *help;
    unsigned flags;
};

enum {
    CFG_F_NOENV = 1u << 0, /* not settable from env/file (help, config) */
};

#define OPT(n, t, f, d, lo, hi, a, h, fl)                                      \
    {                                                                          \
        n, t, offsetof(struct config, f), d, lo, hi, a, h, fl                  \
    }
/* A text option (string, address, level): no range, no flags. */
#define OPT_TEXT(n, t, f, d, a, h) OPT(n, t, f, d, 0, 0, a, h, 0)
/* a numeric constant as a default's text */
#define CFG_QUOTE_(x) #x
#define CFG_QUOTE(x)  CFG_QUOTE_(x)
/* --fault-WHAT: a fraction of outgoing datagrams treated so (tests). */
#define OPT_FAULT(what, f, verb)                                               \
    OPT("fault-" what, CFG_DOUBLE, f, "0", 0, 1, "FRACTION",                   \
        "testing: " verb " this fraction of outgoing datagrams", 0)
#define MiB (1024.0 * 1024.0)
#define GiB (1024.0 * MiB)

static const struct config_opt config_table[] = {
    /* ---- where this daemon is: addresses and files ---- */
    OPT_TEXT("listen", CFG_ADDR, listen, "127.0.0.1:7490", "ADDR:PORT",
             "UDP address of this daemon (port 0: any); with a hostfile it "
             "selects this host's line (0.0.0.0:PORT: the line with this port "
             "and a local address)"),
    OPT_TEXT("socket", CFG_STR, socket, NULL, "PATH",
             "Unix socket for tasks, created in a 0700 directory"),
    OPT_TEXT("pidfile", CFG_STR, pidfile, "", "PATH",
             "pid file (default: collsd.pid next to the socket)"),
    OPT_TEXT("hostfile", CFG_STR, hostfile, "", "FILE",
             "hosts of the machine, one 'addr[:port] [name=N]' per line; "
             "hid = line number among host lines (SIGHUP re-reads it)"),
    OPT_TEXT("join", CFG_ADDR, join, "", "HOST:PORT",
             "join the machine of the running daemon at HOST:PORT"),
    OPT_TEXT("name", CFG_STR, name, "", "NAME",
             "host name reported to the machine (default: hostname)"),
    OPT_TEXT("spawn-path", CFG_STR, spawn_path, "", "DIR:DIR...",
             "directories whose programs tasks may start through this daemon "
             "(colls_spawn, collsctl spawn), run as the daemon's user; a bare "
             "name is searched in them in turn; unset: spawning is refused "
             "(docs/spawn.md)"),
    /* ---- trust: the cluster key (docs/protocol.md) ---- */
    OPT_TEXT("key-file", CFG_STR, key_file, "", "FILE",
             "cluster key (collsctl keygen; mode 0600): every datagram is "
             "authenticated with it; without one only loopback is allowed"),
    OPT("encrypt", CFG_BOOL, encrypt, "no", 0, 0, NULL,
        "also encrypt datagram payloads (needs --key-file; every daemon of "
        "the machine must agree)",
        0),
    OPT_TEXT("cipher", CFG_STR, cipher, "auto", "NAME",
             "AEAD that seals datagrams: auto (aes256gcm where the CPU has "
             "AES-NI, else xchacha20), aes256gcm or xchacha20; every daemon "
             "opens both, but a daemon without AES-NI needs its peers to say "
             "xchacha20"),
    OPT("insecure", CFG_BOOL, insecure, "no", 0, 0, NULL,
        "allow a non-loopback --listen without a key: anyone who can reach "
        "the port can forge datagrams",
        0),
    /* ---- datagrams ---- */
    OPT("mtu", CFG_SIZE, mtu, CFG_QUOTE(DGRAM_MTU_DEFAULT), 576, DGRAM_MAX_LEN,
        "BYTES", "UDP payload bytes per datagram", 0),
    OPT_TEXT("gso", CFG_STR, gso, "auto", "on|off|auto",
             "UDP segmentation and receive offloads (GSO, GRO): auto uses "
             "them where the kernel takes them; off never (broken NIC "
             "offloads, qemu-user); on refuses to start without them"),
    /* ---- liveness and timeouts ---- */
    OPT("heartbeat", CFG_INT, heartbeat_ms, "500", 10, 600000, "MS",
        "interval of heartbeats to every peer", 0),
    OPT("idle-heartbeat", CFG_INT, idle_heartbeat_ms, "10000", 0, 3600000, "MS",
        "interval of heartbeats while this daemon is idle and every host "
        "is up (never shorter than --heartbeat; 0: always --heartbeat)",
        0),
    OPT("dead-after", CFG_INT, dead_after_ms, "3000", 50, 3600000, "MS",
        "a peer silent this long is declared down", 0),
    OPT("join-timeout", CFG_INT, join_timeout_ms, "5000", 100, 600000, "MS",
        "give up joining after this long", 0),
    OPT("request-timeout", CFG_INT, request_timeout_ms, "2000", 10, 600000,
        "MS", "timeout of requests to other daemons (ps, ping, route)", 0),
    /* ---- logging and process ---- */
    OPT_TEXT("log-level", CFG_LEVEL, log_level, "info", "LEVEL",
             "error, warn, info, debug or trace"),
    OPT_TEXT("log", CFG_STR, log_to, "auto", "WHERE",
             "where the log goes: stderr; file (--log-file); syslog "
             "(ident collsd, facility daemon, which journald collects); "
             "auto: --log-file if given, else stderr with --foreground, else "
             "file"),
    OPT_TEXT("log-file", CFG_STR, log_file, "", "FILE",
             "log to FILE (default: stderr with --foreground, else "
             "collsd.log next to the socket); start-up errors also go to "
             "the terminal"),
    OPT("foreground", CFG_BOOL, foreground, "no", 0, 0, NULL,
        "stay in the foreground (default: daemonize)", 0),
    /* ---- tasks: who, how many, how much queued ---- */
    OPT("allow-uid", CFG_INT, allow_uid, "-1", -1, 4294967294.0, "UID",
        "also accept tasks of this uid (-1: only the daemon's own uid); the "
        "socket and its directory get an ACL entry for it.  Attaching only: "
        "add, delete and halt need --admin-uid/--admin-gid",
        0),
    OPT("allow-gid", CFG_INT, allow_gid, "-1", -1, 4294967294.0, "GID",
        "also accept tasks of processes in this group (primary or "
        "supplementary, as the kernel gives them at connect); ACL entries "
        "as for --allow-uid; attaching only",
        0),
    OPT("admin-uid", CFG_INT, admin_uid, "-1", -1, 4294967294.0, "UID",
        "this uid may attach and also add, delete and halt hosts (the "
        "daemon's own uid always may)",
        0),
    OPT("admin-gid", CFG_INT, admin_gid, "-1", -1, 4294967294.0, "GID",
        "processes in this group may attach and also add, delete and halt "
        "hosts",
        0),
    OPT("max-tasks", CFG_INT, max_tasks, "1024", 1, 1048575, "N",
        "largest number of attached tasks", 0),
    OPT("cma", CFG_BOOL, cma, "yes", 0, 0, NULL,
        "copy large collective inputs and results straight between a "
        "task's memory and the daemon's (process_vm_readv/writev) for the "
        "tasks of its own user that offer it at attach; no: through the "
        "channel",
        0),
    OPT("shm", CFG_BOOL, shm, "yes", 0, 0, NULL,
        "take the shared-memory channel a task offers at attach (rings in "
        "a memfd instead of the socket for its frames); no keeps every "
        "task on the socket",
        0),
    OPT("task-queue-limit", CFG_SIZE, task_queue_limit, "64M", 64 * 1024,
        64 * GiB, "BYTES",
        "stop reading the local tasks that send to a host while the "
        "transport's queue towards it holds more than this; read them "
        "again below half",
        0),
    OPT("task-queue-max", CFG_SIZE, task_queue_max, "64M", 64 * 1024, 64 * GiB,
        "BYTES",
        "output queued towards one task (replies, messages, echoes, "
        "notifications, results): while more than this is queued, the "
        "task itself and local tasks sending to it are not read; read "
        "again below half",
        0),
    OPT("task-credit", CFG_SIZE, task_credit, "8M", 64 * 1024, 1 * GiB, "BYTES",
        "flow-control window: bytes (payload + 256 per message) this "
        "daemon forwards to one task on another host before that task has "
        "read them; its senders then wait.  Credit is returned to other "
        "daemons every half of this read here",
        0),
    OPT("max-message", CFG_SIZE, max_message, "256M", 1024, 1 * GiB, "BYTES",
        "largest message payload accepted, and largest buffer of a "
        "collective: a gather's root holds P blocks, a bcast, allreduce "
        "or scan one rank's data at any group size",
        0),
    /* ---- the transport between daemons ---- */
    OPT("window", CFG_INT, window, "1024", 4, 32768, "N",
        "datagrams in flight per peer", 0),
    OPT("rto-min", CFG_INT, rto_min_us, "5000", 100, 10000000, "US",
        "minimum retransmission timeout in microseconds", 0),
    OPT("rate", CFG_SIZE, rate, "0", 0, 100 * GiB, "BYTES/S",
        "pacing limit per peer in bytes/s (0: none)", 0),
    OPT("link-mbit", CFG_INT, link_mbit, "1000", 1, 10000000, "MBIT/S",
        "speed of the links to other hosts, as compression AUTO assumes "
        "when it weighs compressing against sending raw",
        0),
    OPT("measure", CFG_BOOL, measure, "yes", 0, 0, NULL,
        "measure the pLogP parameters of each peer when it comes up, and "
        "again when its round trip moves, and choose algorithms by their "
        "predicted cost (docs/collectives.md); no: only collsctl tune "
        "measures",
        0),
    OPT_TEXT("params-file", CFG_STR, params_file, "", "FILE",
             "where the machine's pLogP parameters are kept across restarts "
             "(default: collsd.plogp next to the socket; none: nowhere)"),
    /* ---- the event loop ---- */
    OPT("poll-us", CFG_INT, poll_us, "60", 0, 1000000, "US",
        "while work is in flight (a collective, a message queued, data "
        "not yet acknowledged), poll the sockets this many microseconds "
        "after each loop turn before sleeping in epoll (0: never poll)",
        0),
    /* ---- metrics ---- */
    OPT_TEXT("http", CFG_ADDR, http, "", "ADDR:PORT",
             "serve Prometheus metrics over HTTP at /metrics"),
    /* ---- testing: fault injection ---- */
    OPT_FAULT("drop", fault_drop, "drop"),
    OPT_FAULT("dup", fault_dup, "duplicate"),
    OPT_FAULT("reorder", fault_reorder, "reorder"),
    OPT("fault-seed", CFG_INT, fault_seed, "1", 0, 4294967295.0, "N",
        "testing: random seed of the fault injection", 0),
    /* ---- the command line itself ---- */
    OPT("config", CFG_STR, config_file, "", 0, 0, "FILE",
        "read options from FILE ('name value' per line; env COLLS_CONFIG)",
        CFG_F_NOENV),
    OPT("help", CFG_BOOL, help, "no", 0, 0, NULL, "show this help and exit",
        CFG_F_NOENV),
    OPT("version", CFG_BOOL, version, "no", 0, 0, NULL,
        "show the version and exit", CFG_F_NOENV),
};

#define CONFIG_NOPTS (sizeof(config_table) / sizeof(config_table[0]))

/* Formats an error message into err (may be NULL) and returns code. */
static int __attribute__((format(printf, 4, 5)))
config_err(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;

    if (err != NULL && errlen > 0) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Finds an option by name; '_' matches '-'.  NULL if unknown. */
static const struct config_opt *
config_find(const char *name, size_t len)
{
    size_t i, j;

    for (i = 0; i < CONFIG_NOPTS; i++) {
        const char *n = config_table[i].name;

        if (strlen(n) != len)
            continue;
        for (j = 0; j < len; j++) {
            char c =
                name[j] == '_' ? '-' : (char)tolower((unsigned char)name[j]);
            if (c != n[j])
                break;
        }
        if (j == len)
            return &config_table[i];
    }
    return NULL;
}

/* Parses "a.b.c.d:port"; 0 or -1. */
static int
config_check_addr(const char *s)
{
    const char *colon = strrchr(s, ':');
    char host[64];
    struct in_addr a;
    char *end;
    long port;

    if (colon == NULL || (size_t)(colon - s) >= sizeof(host) || colon == s)
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    errno = 0;
    port = strtol(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || errno != 0 || port < 0 ||
        port > 65535)
        return -1;
    if (inet_pton(AF_INET, host, &a) != 1) {
        size_t i;

        /* A host name: letters, digits, dots and dashes. */
        for (i = 0; host[i] != '\0'; i++)
            if (!isalnum((unsigned char)host[i]) && host[i] != '.' &&
                host[i] != '-')
                return -1;
    }
    return 0;
}

/* Parses a number, or with with_suffix a size (proto/size.h), into *out. */
static int
config_parse_number(const char *s, int with_suffix, double *out)
{
    char *end;
    double v;

    if (with_suffix) {
        uint64_t u;

        if (size_parse(s, NULL, UINT64_MAX, &u) != 0)
            return -1;
        *out = (double)u;
        return 0;
    }
    if (*s == '\0' || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* Parses a boolean word; 0/1 or -1. */
static int
config_parse_bool(const char *s)
{
    static const char *const yes[] = {"yes", "true", "on", "1"};
    static const char *const no[] = {"no", "false", "off", "0"};
    size_t i;

    for (i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0)
            return 1;
        if (strcasecmp(s, no[i]) == 0)
            return 0;
    }
    return -1;
}

/* Stores value into the option o of cfg after validating it. */
static int
config_apply(struct config *cfg, const struct config_opt *o, const char *value,
             char *err, size_t errlen)
{
    void *field = (char *)cfg + o->off;
    double v;
    int b;

    switch (o->type) {
    case CFG_ADDR:
        if (*value != '\0' && config_check_addr(value) != 0)
            return config_err(err, errlen, COLLS_EINVAL,
                              "--%s: '%s' is not ADDR:PORT", o->name, value);
        /* fall through */
    case CFG_STR: {
        char *copy;

        if (strlen(value) >= PATH_MAX)
            return config_err(err, errlen, COLLS_EINVAL, "--%s: too long",
                              o->name);
        copy = strdup(value);
        if (copy == NULL)
            return config_err(err, errlen, COLLS_ENOMEM, "out of memory");
        free(*(char **)field);
        *(char **)field = copy;
        return 0;
    }
    case CFG_INT:
    case CFG_SIZE:
    case CFG_DOUBLE:
        if (config_parse_number(value, o->type == CFG_SIZE, &v) != 0 ||
            (o->type != CFG_DOUBLE && v != floor(v)))
            return config_err(err, errlen, COLLS_EINVAL,
                              "--%s: '%s' is not a%s number", o->name, value,
                              o->type == CFG_DOUBLE ? "" : "n integer");
        if (v < o->min || v > o->max)
            return config_err(err, errlen, COLLS_EINVAL,
                              "--%s: %s is out of range [%.17g, %.17g]",
                              o->name, value, o->min, o->max);
        if (o->type == CFG_DOUBLE)
            *(double *)field = v;
        else
            *(int64_t *)field = (int64_t)v;
        return 0;
    case CFG_BOOL:
        b = config_parse_bool(value);
        if (b < 0)
            return config_err(err, errlen, COLLS_EINVAL,
                              "--%s: '%s' is not yes or no", o->name, value);
        *(int *)field = b;
        return 0;
    case CFG_LEVEL:
        b = log_level_parse(value);
        if (b < 0)
            return config_err(err, errlen, COLLS_EINVAL,
                              "--%s: '%s' is not error, warn, info, debug "
                              "or trace",
                              o->name, value);
        *(int *)field = b;
        return 0;
    }
    return COLLS_EINVAL;
}

void
config_default_socket(char *out, size_t len)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");

    if (xdg != NULL && xdg[0] == '/')
        snprintf(out, len, "%s/collsd/collsd.sock", xdg);
    else
        snprintf(out, len, "/tmp/collsd-%lu/collsd.sock",
                 (unsigned long)getuid());
}

void
config_defaults(struct config *cfg)
{
    char sock[PATH_MAX];
    size_t i;

    memset(cfg, 0, sizeof(*cfg));
    for (i = 0; i < CONFIG_NOPTS; i++) {
        const struct config_opt *o = &config_table[i];
        const char *def = o->def;

        if (def == NULL) {
            config_default_socket(sock, sizeof(sock));
            def = sock;
        }
        /* The table's defaults are valid: checked by the unit test. */
        if (config_apply(cfg, o, def, NULL, 0) != 0)
            abort();
    }
}

void
config_free(struct config *cfg)
{
    size_t i;

    for (i = 0; i < CONFIG_NOPTS; i++) {
        const struct config_opt *o = &config_table[i];

        if (o->type == CFG_STR || o->type == CFG_ADDR) {
            char **p = (char **)((char *)cfg + o->off);
            free(*p);
            *p = NULL;
        }
    }
}

int
config_set(struct config *cfg, const char *name, const char *value, char *err,
           size_t errlen)
{
    const struct config_opt *o = config_find(name, strlen(name));

    if (o == NULL)
        return config_err(err, errlen, COLLS_ENOENT, "unknown option '%s'",
                          name);
    return config_apply(cfg, o, value, err, errlen);
}

/* Strips leading and trailing blanks in place; returns the start. */
static char *
config_trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* Reads "name value" lines from path. */
static int
config_load_file(struct config *cfg, const char *path, char *err, size_t errlen)
{
    char line[PATH_MAX + 128];
    char msg[CONFIG_ERR_LEN];
    FILE *f = fopen(path, "r");
    int lineno = 0, rc = 0;

    if (f == NULL)
        return config_err(err, errlen, -errno, "config file %s: %s", path,
                          strerror(errno));
    while (fgets(line, sizeof(line), f) != NULL) {
        const struct config_opt *o;
        char *s, *name, *value;
        size_t nlen;

        lineno++;
        if (strchr(line, '\n') == NULL && !feof(f)) {
            rc = config_err(err, errlen, COLLS_EINVAL, "%s:%d: line too long",
                            path, lineno);
            goto out;
        }
        s = config_trim(line);
        if (*s == '\0' || *s == '#')
            continue;
        name = s;
        while (*s != '\0' && !isspace((unsigned char)*s) && *s != '=')
            s++;
        nlen = (size_t)(s - name);
        while (isspace((unsigned char)*s) || *s == '=')
            s++;
        value = s;
        o = config_find(name, nlen);
        if (o == NULL || (o->flags & CFG_F_NOENV)) {
            rc = config_err(err, errlen, COLLS_ENOENT,
                            "%s:%d: unknown option '%.*s'", path, lineno,
                            (int)nlen, name);
            goto out;
        }
        if (*value == '\0' && o->type == CFG_BOOL)
            value = "yes";
        rc = config_apply(cfg, o, value, msg, sizeof(msg));
        if (rc != 0) {
            config_err(err, errlen, rc, "%s:%d: %s", path, lineno, msg);
            goto out;
        }
    }
    if (ferror(f))
        rc = config_err(err, errlen, COLLS_EIO, "%s: read error", path);
out:
    fclose(f);
    return rc;
}

/* Builds "COLLS_DEAD_AFTER" from "dead-after". */
static void
config_env_name(const char *name, char *out, size_t len)
{
    size_t i, n = 0;
    const char *prefix = "COLLS_";

    for (i = 0; prefix[i] != '\0' && n + 1 < len; i++)
        out[n++] = prefix[i];
    for (i = 0; name[i] != '\0' && n + 1 < len; i++)
        out[n++] = name[i] == '-' ? '_' : (char)toupper((unsigned char)name[i]);
    out[n] = '\0';
}

/* Looks name up in envp; NULL if absent. */
static const char *
config_env_get(char **envp, const char *name)
{
    size_t len = strlen(name);

    for (; envp != NULL && *envp != NULL; envp++)
        if (strncmp(*envp, name, len) == 0 && (*envp)[len] == '=')
            return *envp + len + 1;
    return NULL;
}

/* Applies COLLS_<NAME> variables. */
static int
config_load_env(struct config *cfg, char **envp, char *err, size_t errlen)
{
    char ename[64], msg[CONFIG_ERR_LEN];
    size_t i;
    int rc;

    for (i = 0; i < CONFIG_NOPTS; i++) {
        const struct config_opt *o = &config_table[i];
        const char *v;

        if (o->flags & CFG_F_NOENV)
            continue;
        config_env_name(o->name, ename, sizeof(ename));
        v = config_env_get(envp, ename);
        if (v == NULL)
            continue;
        rc = config_apply(cfg, o, v, msg, sizeof(msg));
        if (rc != 0)
            return config_err(err, errlen, rc, "%s: %s", ename, msg);
    }
    return 0;
}

/*
 * Walks argv.  With only_config, just finds --config (and --help, so that
 * a broken environment still lets --help work) and applies nothing else.
 */
static int
config_load_args(struct config *cfg, int argc, char **argv, int only_config,
                 char *err, size_t errlen)
{
    int i, rc;

    for (i = 1; i < argc; i++) {
        const char *arg = argv[i], *value = NULL, *eq;
        const struct config_opt *o;
        size_t nlen;

        if (strcmp(arg, "-h") == 0)
            arg = "--help";
        else if (strcmp(arg, "-V") == 0)
            arg = "--version";
        else if (strcmp(arg, "-f") == 0)
            arg = "--foreground";
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
            return config_err(err, errlen, COLLS_EINVAL,
                              "unexpected argument '%s' (see --help)", arg);
        arg += 2;
        eq = strchr(arg, '=');
        nlen = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
        o = config_find(arg, nlen);
        if (o == NULL)
            return config_err(err, errlen, COLLS_ENOENT,
                              "unknown option '--%.*s' (see --help)", (int)nlen,
                              arg);
        if (eq != NULL)
            value = eq + 1;
        else if (o->type == CFG_BOOL)
            value = "yes";
        else if (i + 1 < argc)
            value = argv[++i];
        else
            return config_err(err, errlen, COLLS_EINVAL,
                              "option '--%s' needs a value", o->name);
        if (only_config && o->off != offsetof(struct config, config_file) &&
            o->off != offsetof(struct config, help))
            continue;
        rc = config_apply(cfg, o, value, err, errlen);
        if (rc != 0 || (only_config && cfg->help))
            return rc;
    }
    return 0;
}

/* Checks relations between options once every source is applied. */
static int
config_check(struct config *cfg, char *err, size_t errlen)
{
    int cipher;

    if (cfg->dead_after_ms < 2 * cfg->heartbeat_ms)
        return config_err(err, errlen, COLLS_EINVAL,
                          "--dead-after (%lld ms) must be at least twice "
                          "--heartbeat (%lld ms)",
                          (long long)cfg->dead_after_ms,
                          (long long)cfg->heartbeat_ms);
    if (cfg->hostfile[0] != '\0' && cfg->join[0] != '\0')
        return config_err(err, errlen, COLLS_EINVAL,
                          "--hostfile and --join exclude each other");
    if (strcmp(cfg->log_to, "auto") != 0 &&
        strcmp(cfg->log_to, "stderr") != 0 &&
        strcmp(cfg->log_to, "file") != 0 && strcmp(cfg->log_to, "syslog") != 0)
        return config_err(err, errlen, COLLS_EINVAL,
                          "--log: '%s' is not stderr, file, syslog or auto",
                          cfg->log_to);
    if (strcmp(cfg->log_to, "stderr") == 0 && !cfg->foreground)
        return config_err(err, errlen, COLLS_EINVAL,
                          "--log stderr needs --foreground (a daemon in the "
                          "background has no terminal)");
    if (cfg->log_file[0] != '\0' && (strcmp(cfg->log_to, "stderr") == 0 ||
                                     strcmp(cfg->log_to, "syslog") == 0))
        return config_err(err, errlen, COLLS_EINVAL,
                          "--log-file and --log %s exclude each other",
                          cfg->log_to);
    if (strcmp(cfg->gso, "auto") != 0 && strcmp(cfg->gso, "on") != 0 &&
        strcmp(cfg->gso, "off") != 0)
        return config_err(err, errlen, COLLS_EINVAL,
                          "--gso: '%s' is not on, off or auto", cfg->gso);
    if (auth_cipher_parse(cfg->cipher, &cipher) != 0)
        return config_err(err, errlen, COLLS_EINVAL,
                          "--cipher: '%s' is not auto, aes256gcm or xchacha20",
                          cfg->cipher);
    if (cfg->socket[0] == '\0')
        return config_err(err, errlen, COLLS_EINVAL, "--socket is empty");
    if (strlen(cfg->socket) >= 100)
        return config_err(err, errlen, COLLS_EINVAL,
                          "--socket: path longer than a Unix socket allows");
    return 0;
}

/*
 * Sets the string option at off to dir/name when it is still empty and
 * that file exists.  0 or COLLS_ENOMEM.
 */
static int
config_dir_default(struct config *cfg, size_t off, const char *dir,
                   const char *name)
{
    char **field = (char **)((char *)cfg + off), *path;

    if ((*field)[0] != '\0')
        return 0;
    if (asprintf(&path, "%s/%s", dir, name) < 0)
        return COLLS_ENOMEM;
    if (access(path, F_OK) != 0) {
        free(path);
        return 0;
    }
    free(*field);
    *field = path;
    return 0;
}

int
config_parse(struct config *cfg, int argc, char **argv, char **envp, char *err,
             size_t errlen)
{
    const char *cf, *sysdir = config_env_get(envp, "CONFIGURATION_DIRECTORY");
    char *syscf = NULL;
    int rc;

    if (err != NULL && errlen > 0)
        err[0] = '\0';
    config_defaults(cfg);
    rc = config_load_args(cfg, argc, argv, 1, err, errlen);
    if (rc != 0 || cfg->help)
        return rc;
    if (sysdir != NULL && (sysdir[0] != '/' || strchr(sysdir, ':') != NULL))
        sysdir = NULL; /* one absolute directory, as
                          ConfigurationDirectory=collsd gives */
    cf = cfg->config_file[0] != '\0' ? cfg->config_file
                                     : config_env_get(envp, "COLLS_CONFIG");
    if ((cf == NULL || cf[0] == '\0') && sysdir != NULL) {
        if (asprintf(&syscf, "%s/collsd.conf", sysdir) < 0)
            return COLLS_ENOMEM;
        if (access(syscf, F_OK) == 0)
            cf = syscf;
    }
    if (cf != NULL && cf[0] != '\0') {
        char *path = strdup(cf);

        if (path == NULL)
            return COLLS_ENOMEM;
        rc = config_load_file(cfg, path, err, errlen);
        free(cfg->config_file);
        cfg->config_file = path;
        if (rc != 0)
            goto out;
    }
    rc = config_load_env(cfg, envp, err, errlen);
    if (rc != 0)
        goto out;
    rc = config_load_args(cfg, argc, argv, 0, err, errlen);
    if (rc != 0 || cfg->help || cfg->version)
        goto out;
    if (sysdir != NULL && cfg->join[0] == '\0')
        rc = config_dir_default(cfg, offsetof(struct config, hostfile), sysdir,
                                "hostfile");
    if (rc == 0 && sysdir != NULL)
        rc = config_dir_default(cfg, offsetof(struct config, key_file), sysdir,
                                "cluster.key");
    if (rc == 0)
        rc = config_check(cfg, err, errlen);
out:
    free(syscf);
    return rc;
}

/* Prints "  head  text" with text wrapped at 79 columns under itself. */
static void
config_wrap(FILE *out, const char *head, const char *text)
{
    const int indent = 31, width = 79;
    const char *p = text;
    int first = 1;

    while (*p != '\0') {
        int n = (int)strlen(p), cut = n;

        if (n > width - indent) {
            cut = width - indent;
            while (cut > 0 && p[cut] != ' ')
                cut--;
            if (cut == 0)
                cut = width - indent;
        }
        fprintf(out, "  %-28s %.*s\n", first ? head : "", cut, p);
        first = 0;
        p += cut;
        while (*p == ' ')
            p++;
    }
}

void
config_usage(FILE *out, const char *prog)
{
    char sock[PATH_MAX], ename[64], head[64], line[PATH_MAX + 128];
    size_t i;

    fprintf(out,
            "Usage: %s [OPTION]...\n"
            "collsd, the per-host daemon of the colls virtual machine.\n"
            "Without options it runs a one-host machine in the background;\n"
            "tasks attach through the Unix socket, daemons talk over UDP.\n"
            "\n"
            "Every option may also be set in the environment as COLLS_<NAME>\n"
            "(e.g. COLLS_LISTEN) or in a --config file as 'name value';\n"
            "command line > environment > config file > default.\n"
            "Sizes take k, m, g suffixes (powers of 1024).\n\nOptions:\n",
            prog);
    config_default_socket(sock, sizeof(sock));
    for (i = 0; i < CONFIG_NOPTS; i++) {
        const struct config_opt *o = &config_table[i];
        const char *def = o->def != NULL ? o->def : sock;

        snprintf(head, sizeof(head), "--%s%s%s", o->name, o->arg ? " " : "",
                 o->arg ? o->arg : "");
        config_wrap(out, head, o->help);
        if (o->flags & CFG_F_NOENV)
            continue;
        config_env_name(o->name, ename, sizeof(ename));
        if (o->type == CFG_BOOL || def[0] == '\0')
            snprintf(line, sizeof(line), "[env %s]", ename);
        else if (o->type == CFG_INT || o->type == CFG_SIZE ||
                 o->type == CFG_DOUBLE)
            snprintf(line, sizeof(line),
                     "[default %s, range %.12g..%.12g; "
                     "env %s]",
                     def, o->min, o->max, ename);
        else
            snprintf(line, sizeof(line), "[default %s; env %s]", def, ename);
        config_wrap(out, "", line);
    }
    fprintf(out,
            "\nUnder systemd ($CONFIGURATION_DIRECTORY, /etc/collsd for the "
            "unit),\n"
            "collsd.conf, hostfile and cluster.key there are read when "
            "present\n"
            "and not given otherwise.\n"
            "\nLogs: stderr with --foreground, else collsd.log next to the "
            "socket,\n"
            "unless --log or --log-file says otherwise; start-up errors "
            "always\n"
            "reach the terminal.  Exit status: 0 after a clean stop, 1 when "
            "the\n"
            "daemon fails (to start), 2 for a usage error.\n"
            "\nSignals: SIGHUP re-reads the hostfile and reopens the log;\n"
            "SIGTERM/SIGINT close every task, remove socket and pid file, "
            "exit 0.\n");
}
