/*
 * platform.h -- the few operating-system specifics of the daemon, behind
 * small functions: peer credentials, clocks, randomness, the socket
 * directory and daemonizing.
 */
#ifndef COLLS_DAEMON_PLATFORM_H
#define COLLS_DAEMON_PLATFORM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Monotonic clock in microseconds. */
uint64_t platform_now_us(void);
/* This thread's CPU time in microseconds (user and system; 0 where the
   system cannot tell).  A system call: no vDSO serves this clock. */
uint64_t platform_cpu_us(void);
/* Wall clock in microseconds since the epoch. */
uint64_t platform_wall_us(void);
/*
 * How late the kernel may wake this thread from a timed sleep (timer
 * slack, nanoseconds; 0: the slack the process started with, usually
 * 50 us).  A slack of a scheduler tick or more lets the wake-up wait for
 * the next tick instead of programming the timer hardware for each
 * sleep.  No system call when ns is the slack set last.  Children forked
 * inherit the slack: set 0 before a fork.  0, or a negative errno
 * (-ENOSYS where the system has no such setting).
 */
int platform_timer_slack(uint64_t ns);

/* Uid and pid of the process at the other end of a Unix socket.  0 or a
   negative COLLS_E* code (COLLS_ENOTSUP where the system cannot tell). */
int platform_peer_cred(int fd, uid_t *uid, pid_t *pid);
/* The groups of that process when it connected: its primary gid first,
   then its supplementary groups (where the system tells them).  *out is
   allocated (free it).  0 or a negative COLLS_E* code. */
int platform_peer_gids(int fd, gid_t **out, size_t *n);

/* A random 32-bit number that is never 0. */
uint32_t platform_random_u32(void);
/*
 * A daemon incarnation: random and never 0.  Incarnations are not
 * ordered (rel.c tells old from new by the ones it has seen, and adopts a
 * new one only after a challenge); being random, they cannot be guessed.
 */
uint32_t platform_incarnation(void);

/*
 * Creates the directory that holds path (the socket) with mode 0700 if
 * missing, and checks that it belongs to us and is closed to others.
 * 0 or a negative COLLS_E* code; err gets a message.
 */
int platform_secure_dir(const char *path, char *err, size_t errlen);

/*
 * Forks into the background (new session, a second fork so that no
 * terminal is reacquired, stdin and stdout to /dev/null) and returns 0 in
 * that grandchild, with *ready_fd the write end of a pipe to the original
 * process.  stderr stays on the terminal, so that start-up errors reach
 * it.  The original process never returns: it waits and exits with the
 * status the daemon reports through platform_daemonize_done, or 1 with a
 * message if the daemon ends without reporting.  A negative -errno if
 * the pipe or the first fork fails (nothing forked then).
 */
int platform_daemonize(int *ready_fd);
/* Reports status to the waiting parent and closes ready_fd (nothing if it
   is -1): 0 once the daemon is ready (stderr goes to /dev/null first),
   else the exit status of a failed start. */
void platform_daemonize_done(int ready_fd, int status);

/*
 * Tells the service manager about the daemon's state, as sd_notify(3)
 * does ("READY=1", "RELOADING=1", "STOPPING=1", "STATUS=..."): through
 * libsystemd where configure found it, else by the same datagram to
 * $NOTIFY_SOCKET.  Nothing happens outside systemd (no NOTIFY_SOCKET).
 */
void platform_notify(const char *state);

/* 1 if the IPv4 address (network order) belongs to an interface here. */
int platform_addr_is_local(uint32_t s_addr);

/* The host name (short), into out. */
void platform_hostname(char *out, size_t len);

/* Keeps freed message buffers in the heap for the next messages, where
   the C library can be told so (see platform.c). */
void platform_tune_malloc(void);

/*
 * Single copy between the daemon and a task's memory (docs/protocol.md,
 * "Single copy").  platform_pidfd: a descriptor naming process pid that
 * a later process with the same number does not take over, or -1 (none
 * here).  platform_pidfd_exited: 1 once that process has exited (or the
 * descriptor is -1), else 0.  platform_vm_copy copies len bytes between
 * buf and addr in process pid's memory, from theirs to ours (to_them 0)
 * or ours to theirs: 0, or a negative errno (EPERM where the kernel does
 * not let us, EFAULT for an address not mapped so, ENOSYS without the
 * system call).
 */
int platform_pidfd(pid_t pid);
int platform_pidfd_exited(int pidfd);
int platform_vm_copy(pid_t pid, int to_them, void *buf, uint64_t addr,
                     size_t len);

#endif
