/*
 * log.c -- the daemon's log.
 *
 * One output at a time: stderr (the default) or a file opened for append.
 * Each line is written with a single write() so lines from a daemon and
 * its forked children never interleave mid-line.  Standalone on purpose:
 * the fuzz targets link this file without the rest of the daemon.
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
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "colls.h"
#include "daemon/log.h"

int log_threshold = LOG_LVL_INFO;

static int log_fd = 2; /* 2: stderr, else our own file */
static char *log_path; /* NULL when logging to stderr */

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
log_close(void)
{
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
log_write(int level, const char *fmt, ...)
{
    char line[2048];
    struct timespec ts;
    struct tm tm;
    va_list ap;
    size_t n;
    int k, saved = errno;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
    k = snprintf(line + n, sizeof(line) - n, ".%03ldZ collsd[%ld] %-5s ",
                 ts.tv_nsec / 1000000, (long)getpid(), log_level_name(level));
    if (k > 0)
        n += (size_t)k;
    if (n < sizeof(line) - 1) {
        va_start(ap, fmt);
        k = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
        va_end(ap);
        if (k > 0)
            n += (size_t)k;
    }
    if (n > sizeof(line) - 2)
        n = sizeof(line) - 2; /* truncated long line */
    line[n++] = '\n';
    /* A log line that cannot be written is lost; nothing better to do. */
    if (write(log_fd, line, n) < 0)
        errno = saved;
    errno = saved;
}
