/*
 * log.c -- the daemon's log.
 *
 * One output at a time: stderr (the default), a file opened for append, or
 * syslog(3) (ident collsd, facility daemon, the level as priority).
 * Each line is written with a single write() so lines from a daemon and
 * its forked children never interleave mid-line.  Standalone on purpose:
 * the fuzz targets link this file without the rest of the daemon.
 *
 * On stderr connected to journald (systemd's $JOURNAL_STREAM names it),
 * lines are "<PRIORITY>TEXT" (sd-daemon(3)): journald adds time, ident and
 * pid, and keeps each line's priority.
 *
 * Start-up mode (log_startup_begin .. log_startup_end): errors and
 * warnings also go to the terminal the daemon was started from, as
 * "collsd: TEXT" -- once: when the log itself is stderr, that line
 * replaces the timestamped one (on journald's stream, no terminal there,
 * the "<3>TEXT" line alone).  A daemonizing collsd keeps its stderr on
 * the terminal until it is ready, so its start-up errors reach the user
 * who typed the command, not only a log file nobody reads yet.
 *
 * Owns the log output.  May call: libc only.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "colls.h"
#include "daemon/log.h"

int log_threshold = LOG_LVL_INFO;

static int log_fd = 2;  /* 2: stderr, else our own file */
static char *log_path;  /* NULL when logging to stderr */
static int log_syslog;  /* 1: to syslog(3) */
static int log_journal; /* stderr is journald's stream (log_detect_journal) */
static int log_startup; /* in start-up mode (see the top) */
static unsigned log_startup_nerr; /* errors reported in start-up mode */

static const char *const log_names[LOG_LVL_MAX] = {
    "error", "warn", "info", "debug", "trace",
};

/* Opens path for append, close-on-exec.  fd or a negative COLLS_E* code. */
static int
log_open_fd(const char *path)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);

    return fd < 0 ? -errno : fd;
}

int
log_open(const char *path)
{
    char *copy;
    int fd;

    if (path == NULL || *path == '\0') {
        log_close();
        return 0;
    }
    fd = log_open_fd(path);
    if (fd < 0)
        return fd;
    copy = strdup(path);
    if (copy == NULL) {
        close(fd);
        return COLLS_ENOMEM;
    }
    log_close();
    log_fd = fd;
    log_path = copy;
    return 0;
}

int
log_reopen(void)
{
    int fd;

    if (log_path == NULL)
        return 0;
    fd = log_open_fd(log_path);
    if (fd < 0)
        return fd;
    close(log_fd);
    log_fd = fd;
    return 0;
}

void
log_open_syslog(void)
{
    log_close();
    openlog("collsd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
    log_syslog = 1;
}

void
log_close(void)
{
    if (log_syslog) {
        closelog();
        log_syslog = 0;
    }
    if (log_path != NULL) {
        close(log_fd);
        free(log_path);
        log_path = NULL;
    }
    log_fd = 2;
}

void
log_set_level(int level)
{
    if (level >= 0 && level < LOG_LVL_MAX)
        log_threshold = level;
}

int
log_level_parse(const char *name)
{
    int i;

    for (i = 0; i < LOG_LVL_MAX; i++)
        if (strcasecmp(name, log_names[i]) == 0)
            return i;
    if (strcasecmp(name, "warning") == 0)
        return LOG_LVL_WARN;
    return -1;
}

const char *
log_level_name(int level)
{
    return level >= 0 && level < LOG_LVL_MAX ? log_names[level] : "?";
}

const char *
log_errstr(int code)
{
    switch (code) {
    case 0:
        return "success";
#define LOG_ERR_CASE(name, value, text)                                        \
    case value:                                                                \
        return text;
        COLLS_ERRNO_MAP(LOG_ERR_CASE)
#undef LOG_ERR_CASE
    default:
        return "unknown error";
    }
}

void
log_detect_journal(void)
{
    const char *js = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;

    log_journal = js != NULL && sscanf(js, "%llu:%llu", &dev, &ino) == 2 &&
                  fstat(2, &st) == 0 && (unsigned long long)st.st_dev == dev &&
                  (unsigned long long)st.st_ino == ino;
}

void
log_startup_begin(void)
{
    log_startup = 1;
    log_startup_nerr = 0;
}

void
log_startup_end(void)
{
    log_startup = 0;
}

unsigned
log_startup_errors(void)
{
    return log_startup_nerr;
}

/* Writes n bytes of line to fd in one write(); a log line that cannot be
   written is lost, there is nothing better to do. */
static void
log_put(int fd, const char *line, size_t n)
{
    ssize_t w = write(fd, line, n);

    (void)w;
}

void
log_write(int level, const char *fmt, ...)
{
    static const int prio[LOG_LVL_MAX] = {LOG_ERR, LOG_WARNING, LOG_INFO,
                                          LOG_DEBUG, LOG_DEBUG};
    char text[2048], line[2200];
    struct timespec ts;
    struct tm tm;
    va_list ap;
    size_t n;
    int k, saved = errno, to_journal = log_fd == 2 && log_journal;

    if (level < 0 || level >= LOG_LVL_MAX)
        level = LOG_LVL_ERROR;
    va_start(ap, fmt);
    k = vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (k < 0)
        text[0] = '\0';
    if (log_startup && level == LOG_LVL_ERROR)
        log_startup_nerr++;
    if (log_startup && level <= LOG_LVL_WARN && !to_journal) {
        k = snprintf(line, sizeof(line), "collsd: %s%s\n",
                     level == LOG_LVL_WARN ? "warning: " : "", text);
        log_put(2, line,
                k > 0 && (size_t)k < sizeof(line) ? (size_t)k
                                                  : sizeof(line) - 1);
        if (log_fd == 2 && !log_syslog) {
            errno = saved;
            return; /* the terminal is the log: said once */
        }
    }
    if (log_syslog) {
        syslog(prio[level], "%s", text);
        errno = saved;
        return;
    }
    if (to_journal) {
        /* journald stamps and attributes the line; "<N>": its priority */
        k = snprintf(line, sizeof(line), "<%d>%s\n", prio[level], text);
        log_put(2, line,
                k > 0 && (size_t)k < sizeof(line) ? (size_t)k
                                                  : sizeof(line) - 1);
        errno = saved;
        return;
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
    k = snprintf(line + n, sizeof(line) - n, ".%03ldZ collsd[%ld] %-5s %s",
                 ts.tv_nsec / 1000000, (long)getpid(), log_level_name(level),
                 text);
    if (k > 0)
        n += (size_t)k;
    if (n > sizeof(line) - 2)
        n = sizeof(line) - 2; /* truncated long line */
    line[n++] = '\n';
    log_put(log_fd, line, n);
    errno = saved;
}
