/*
 * log.h -- the daemon's log: levels, timestamps, stderr, a file or syslog.
 *
 * Used by the daemon's own files only (the library never logs).  The
 * level test happens in the macro, so a disabled debug line costs one
 * comparison and never formats its arguments.
 */
#ifndef COLLS_DAEMON_LOG_H
#define COLLS_DAEMON_LOG_H

/* Levels, most severe first.  (Names avoid <syslog.h>'s LOG_*.) */
enum log_level {
    LOG_LVL_ERROR = 0,
    LOG_LVL_WARN,
    LOG_LVL_INFO,
    LOG_LVL_DEBUG,
    LOG_LVL_TRACE,
    LOG_LVL_MAX
};

/* Current threshold: lines above it are not written. */
extern int log_threshold;

/*
 * Sends the log to path (appended), or to stderr when path is NULL or
 * empty.  Returns 0 or -errno of the failed open (print it with
 * strerror; the log stays where it was).
 */
int log_open(const char *path);
/* Sends the log to syslog(3): ident "collsd" with the pid, facility
   daemon; error, warn, info, debug/trace as LOG_ERR, LOG_WARNING,
   LOG_INFO, LOG_DEBUG (journald keeps them so). */
void log_open_syslog(void);
/* Checks whether stderr is journald's stream ($JOURNAL_STREAM, set by
   systemd, names its device and inode); if so, lines written to stderr
   are "<PRIORITY>TEXT", journald's way of taking their priority. */
void log_detect_journal(void);
/* Re-opens the current file (after rotation; SIGHUP). */
int log_reopen(void);
void log_close(void);
void log_set_level(int level);
/* "error", "warn", "info", "debug", "trace" -> level; -1 if unknown. */
int log_level_parse(const char *name);
const char *log_level_name(int level);

/* Text of a COLLS_E* code (the daemon does not link libcolls). */
const char *log_errstr(int code);

/*
 * Start-up mode: from begin to end, errors and warnings are also written
 * to stderr as "collsd: TEXT" (once, when stderr is the log).  errors()
 * counts the errors reported so, so that main() adds no second line.
 */
void log_startup_begin(void);
void log_startup_end(void);
unsigned log_startup_errors(void);

/* Writes one line: "2026-11-22T01:02:03.456Z collsd[pid] LEVEL text". */
void log_write(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_at(lvl, ...)                                                       \
    do {                                                                       \
        if ((lvl) <= log_threshold)                                            \
            log_write((lvl), __VA_ARGS__);                                     \
    } while (0)
#define log_error(...) log_at(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...)  log_at(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...)  log_at(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_at(LOG_LVL_DEBUG, __VA_ARGS__)
#define log_trace(...) log_at(LOG_LVL_TRACE, __VA_ARGS__)

#endif
