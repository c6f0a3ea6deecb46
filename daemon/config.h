/*
 * config.h -- collsd's options: one table, three sources.
 *
 * Every option is a row {name, type, default, min, max, help} (config.c).
 * Values come from, in increasing precedence: the defaults, a config file
 * (--config FILE or COLLS_CONFIG; one "name value" per line, # comments),
 * the environment (COLLS_<NAME>, dashes as underscores, e.g. COLLS_LISTEN),
 * and the command line (--name value, --name=value; --flag alone means
 * yes).  --help text is generated from the table.  With
 * $CONFIGURATION_DIRECTORY (systemd), collsd.conf, hostfile and
 * cluster.key there are the defaults of --config, --hostfile and
 * --key-file when those files exist.
 */
#ifndef COLLS_DAEMON_CONFIG_H
#define COLLS_DAEMON_CONFIG_H

/* In daemon/, #include "config.h" finds this file before autoconf's; pull
   that one in too (angle brackets search only -I paths, so this is the
   generated config.h), so either spelling gets _GNU_SOURCE and HAVE_*. */
#include <config.h>

#include <stdint.h>
#include <stdio.h>

/* Parsed options.  Strings are owned (config_free). */
struct config {
    char *listen;      /* UDP "ADDR:PORT" of this daemon */
    char *socket;      /* Unix socket path for tasks */
    char *pidfile;     /* "" = next to the socket */
    char *hostfile;    /* "" = none */
    char *join;        /* "HOST:PORT" of a running daemon, "" none */
    char *name;        /* host name reported to others ("" hostname) */
    char *http;        /* Prometheus "ADDR:PORT", "" off */
    char *log_to;      /* "auto", "stderr", "file" or "syslog" */
    char *log_file;    /* "" = the default for log_to */
    char *config_file; /* the file that was read, "" none */
    char *key_file;    /* cluster key, "" none */
    char *spawn_path;  /* directories spawn may run from, "" spawn off */
    int encrypt;       /* encrypt datagram payloads (with a key) */
    char *cipher;      /* "auto", "aes256gcm" or "xchacha20" */
    char *gso;         /* UDP offloads: "auto", "on" or "off" */
    char *params_file; /* pLogP parameters, "" next to the socket */
    int measure;       /* measure peers as they come up */
    int insecure;      /* no key, yet a non-loopback address */
    int log_level;     /* LOG_LVL_* */
    int foreground;
    int help, version;
    int64_t allow_uid; /* another uid allowed to attach, -1 none */
    int64_t allow_gid; /* a group allowed to attach, -1 none */
    int64_t admin_uid; /* another uid allowed admin verbs, -1 none */
    int64_t admin_gid; /* a group allowed admin verbs, -1 none */
    int64_t mtu;       /* UDP payload bytes per datagram */
    int64_t heartbeat_ms;
    int64_t idle_heartbeat_ms; /* while idle and every host is up; 0 off */
    int64_t dead_after_ms;
    int64_t join_timeout_ms;
    int64_t max_tasks;
    int shm;                  /* offer tasks the shared-memory channel */
    int cma;                  /* single copy with tasks that offer it */
    int64_t task_queue_limit; /* bytes on the transport towards a host */
    int64_t task_queue_max;   /* bytes queued towards one task */
    int64_t task_credit;      /* flow-control window per (daemon, task) */
    int64_t max_message;      /* largest payload accepted */
    int64_t window;           /* rel datagrams in flight per peer */
    int64_t rto_min_us;
    int64_t rate;               /* pacing, bytes/s per peer, 0 = none */
    int64_t link_mbit;          /* link speed FPC AUTO assumes, Mbit/s */
    int64_t request_timeout_ms; /* remote admin/route requests */
    int64_t poll_us;            /* polling window after a busy turn, 0 off */
    double fault_drop, fault_dup, fault_reorder;
    int64_t fault_seed;
};

/* Error text of the last failing config_* call. */
#define CONFIG_ERR_LEN 256

/*
 * Fills cfg from defaults, the config file, envp (NULL-terminated
 * "NAME=value" strings, may be NULL) and argv[1..argc-1], in that order of
 * precedence (later wins).  Returns 0; COLLS_ENOENT for an unknown option;
 * COLLS_EINVAL for a malformed or missing value or a value out of range;
 * or the -errno of an unreadable config file.  err gets a one-line
 * message.  On error cfg is still valid (free it with config_free).
 */
int config_parse(struct config *cfg, int argc, char **argv, char **envp,
                 char *err, size_t errlen);

/* Sets one option by name ("dead-after" or "dead_after") from text,
   with the same validation.  Same return codes as config_parse. */
int config_set(struct config *cfg, const char *name, const char *value,
               char *err, size_t errlen);

/* Sets every option to its default (with default paths computed). */
void config_defaults(struct config *cfg);
void config_free(struct config *cfg);

/* Writes the generated --help text. */
void config_usage(FILE *out, const char *prog);

/* The default socket path (docs/protocol.md), into out. */
void config_default_socket(char *out, size_t len);

#endif
