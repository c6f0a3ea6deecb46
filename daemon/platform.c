/*
 * platform.c -- operating-system specifics (Linux first; configure says
 * which pieces exist).  Nothing else in the daemon uses #ifdef.
 *
 * Owns nothing.  May call: libc and the kernel only.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#ifdef HAVE_MALLOPT
#include <malloc.h>
#endif
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "colls.h"
#include "daemon/platform.h"

uint64_t
platform_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t
platform_cpu_us(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t
platform_wall_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The timer slack this process started with and the one set last, in
   ns; 0 until the first platform_timer_slack. */
static uint64_t platform_slack0, platform_slack;

int
platform_timer_slack(uint64_t ns)
{
#ifdef PR_SET_TIMERSLACK
    long v;

    if (platform_slack0 == 0) {
        v = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
        platform_slack0 = platform_slack = v > 0 ? (uint64_t)v : 50000u;
    }
    if (ns == 0)
        ns = platform_slack0;
    if (ns == platform_slack)
        return 0;
    if (prctl(PR_SET_TIMERSLACK, (unsigned long)ns, 0, 0, 0) != 0)
        return -errno;
    platform_slack = ns;
    return 0;
#else
    (void)ns;
    return -ENOSYS;
#endif
}

#if HAVE_DECL_SO_PEERCRED
int
platform_peer_cred(int fd, uid_t *uid, pid_t *pid)
{
    struct ucred cr;
    socklen_t len = sizeof(cr);

    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0)
        return -errno;
    *uid = cr.uid;
    *pid = cr.pid;
    return 0;
}
#else
int
platform_peer_cred(int fd, uid_t *uid, pid_t *pid)
{
    uid_t u;
    gid_t g;

    if (getpeereid(fd, &u, &g) != 0)
        return -errno;
    *uid = u;
    *pid = 0;
    return 0;
}
#endif

#if HAVE_DECL_SO_PEERCRED && defined(SO_PEERGROUPS)
/* The supplementary groups (SO_PEERGROUPS, Linux 4.13) after the primary
   gid of SO_PEERCRED; n in/out: room, then count. */
static int
platform_peer_groups(int fd, gid_t *gids, size_t *n)
{
    struct ucred cr;
    socklen_t len = sizeof(cr);

    if (*n == 0 || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0)
        return *n == 0 ? COLLS_ENOBUFS : -errno;
    gids[0] = cr.gid;
    len = (socklen_t)((*n - 1) * sizeof(gid_t));
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, gids + 1, &len) != 0)
        return errno == ERANGE ? COLLS_ENOBUFS : -errno;
    *n = 1 + len / sizeof(gid_t);
    return 0;
}
#else
/* Without SO_PEERGROUPS: the primary gid only (getpeereid). */
static int
platform_peer_groups(int fd, gid_t *gids, size_t *n)
{
    uid_t u;

    if (*n == 0)
        return COLLS_ENOBUFS;
    if (getpeereid(fd, &u, &gids[0]) != 0)
        return -errno;
    *n = 1;
    return 0;
}
#endif

int
platform_peer_gids(int fd, gid_t **out, size_t *n)
{
    size_t cap = 64;
    int rc;

    *out = NULL;
    *n = 0;
    for (;;) {
        gid_t *v = malloc(cap * sizeof(*v));
        size_t got = cap;

        if (v == NULL)
            return COLLS_ENOMEM;
        rc = platform_peer_groups(fd, v, &got);
        if (rc == 0) {
            *out = v;
            *n = got;
            return 0;
        }
        free(v);
        if (rc != COLLS_ENOBUFS || cap >= 65537)
            return rc;
        cap = 65537; /* NGROUPS_MAX and the primary gid */
    }
}

uint32_t
platform_random_u32(void)
{
    uint32_t v = 0;

    while (v == 0) {
        if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
            v = (uint32_t)platform_wall_us() ^ (uint32_t)getpid() << 16;
    }
    return v;
}

uint32_t
platform_incarnation(void)
{
    return platform_random_u32();
}

int
platform_secure_dir(const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    struct stat st;

    if (slash == NULL)
        return 0; /* relative to the working directory: caller's choice */
    if ((size_t)(slash - path) >= sizeof(dir)) {
        snprintf(err, errlen, "%s: path too long", path);
        return COLLS_EINVAL;
    }
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = '\0';
    if (dir[0] == '\0')
        return 0;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        int e = errno;

        snprintf(err, errlen, "mkdir %s: %s", dir, strerror(e));
        return -e;
    }
    if (lstat(dir, &st) != 0) {
        int e = errno;

        snprintf(err, errlen, "%s: %s", dir, strerror(e));
        return -e;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s is not a directory", dir);
        return COLLS_EINVAL;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen, "%s belongs to uid %lu, not to us", dir,
                 (unsigned long)st.st_uid);
        return COLLS_EPERM;
    }
    if ((st.st_mode & 0077) != 0 && chmod(dir, 0700) != 0) {
        int e = errno;

        snprintf(err, errlen, "chmod 0700 %s: %s", dir, strerror(e));
        return -e;
    }
    return 0;
}

/* The parent of platform_daemonize: waits for the child's one status
   byte and exits with it; the child's own messages went to the stderr
   both share. */
static void __attribute__((noreturn)) platform_daemonize_wait(int rfd)
{
    unsigned char status;
    ssize_t n;

    do
        n = read(rfd, &status, 1);
    while (n < 0 && errno == EINTR);
    if (n == 1)
        _exit(status);
    fprintf(stderr, "collsd: the daemon ended during start-up without "
                    "reporting why (killed?)\n");
    _exit(1);
}

int
platform_daemonize(int *ready_fd)
{
    int p[2], fd;
    pid_t pid;

    if (pipe2(p, O_CLOEXEC) != 0)
        return -errno;
    pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -errno;
    }
    if (pid > 0) {
        close(p[1]);
        platform_daemonize_wait(p[0]);
    }
    close(p[0]);
    if (setsid() < 0)
        _exit(1);
    pid = fork(); /* never reacquire a terminal */
    if (pid < 0)
        _exit(1);
    if (pid > 0)
        _exit(0); /* the parent still waits on the pipe */
    fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        dup2(fd, 0);
        dup2(fd, 1);
        if (fd > 2)
            close(fd);
    }
    *ready_fd = p[1];
    return 0;
}

void
platform_daemonize_done(int ready_fd, int status)
{
    unsigned char b = (unsigned char)status;
    ssize_t n;
    int fd;

    if (ready_fd < 0)
        return;
    if (status == 0) {
        fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
            dup2(fd, 2);
            if (fd > 2)
                close(fd);
        }
    }
    do
        n = write(ready_fd, &b, 1);
    while (n < 0 && errno == EINTR);
    close(ready_fd);
}

#ifdef HAVE_LIBSYSTEMD
void
platform_notify(const char *state)
{
    (void)sd_notify(0, state);
}
#else
/* sd_notify(3)'s protocol without libsystemd: one datagram with the
   state text to the Unix socket named by $NOTIFY_SOCKET ('@': abstract
   namespace).  Nothing is sent when the variable is unset. */
void
platform_notify(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    struct sockaddr_un sa;
    size_t len;
    int fd;

    if (path == NULL || (path[0] != '/' && path[0] != '@'))
        return;
    len = strlen(path);
    if (len >= sizeof(sa.sun_path))
        return;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, len);
    if (path[0] == '@')
        sa.sun_path[0] = '\0';
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    (void)sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
                 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
    close(fd);
}
#endif

int
platform_addr_is_local(uint32_t s_addr)
{
    struct ifaddrs *ifs, *i;
    int found = 0;

    if (getifaddrs(&ifs) != 0)
        return 0;
    for (i = ifs; i != NULL && !found; i = i->ifa_next)
        if (i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET &&
            ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == s_addr)
            found = 1;
    freeifaddrs(ifs);
    return found;
}

void
platform_hostname(char *out, size_t len)
{
    char *dot;

    if (gethostname(out, len) != 0)
        snprintf(out, len, "localhost");
    out[len - 1] = '\0';
    dot = strchr(out, '.');
    if (dot != NULL)
        *dot = '\0';
}

/*
 * The daemon allocates a buffer per message (a task's frame, the
 * transport's copy, a reassembly) and frees it when the message is
 * through.  glibc serves blocks of 128 KiB and more with mmap and gives
 * them back at once, so a stream of 1 MiB messages page-faulted 256
 * fresh pages per buffer: about 10 % of the sending daemon's time
 * (perf: clear_page_erms, exc_page_fault) and 20 % of the default route's
 * bulk throughput on loopback.  Up to 32 MiB messages now come from the
 * heap, and up to 64 MiB of free heap stay mapped for the next ones.
 */
void
platform_tune_malloc(void)
{
#ifdef HAVE_MALLOPT
    (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
    (void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

int
platform_pidfd(pid_t pid)
{
#if HAVE_DECL_SYS_PIDFD_OPEN
    long fd = syscall(SYS_pidfd_open, pid, 0);
    return fd >= 0 ? (int)fd : -1;
#else
    (void)pid;
    return -1;
#endif
}

int
platform_pidfd_exited(int pidfd)
{
    struct pollfd p = {pidfd, POLLIN, 0};

    if (pidfd < 0)
        return 1;
    /* a pidfd polls readable once its process has exited */
    return poll(&p, 1, 0) != 0;
}

int
platform_vm_copy(pid_t pid, int to_them, void *buf, uint64_t addr, size_t len)
{
#ifdef HAVE_PROCESS_VM_READV
    size_t done = 0;

    if (addr > UINTPTR_MAX || len > UINTPTR_MAX - addr)
        return -EFAULT;
    while (done < len) {
        struct iovec l = {(uint8_t *)buf + done, len - done};
        struct iovec r = {(void *)(uintptr_t)(addr + done), len - done};
        ssize_t n = to_them ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                            : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return -EFAULT; /* a partial copy stops at an unmapped page */
        done += (size_t)n;
    }
    return 0;
#else
    (void)pid;
    (void)to_them;
    (void)buf;
    (void)addr;
    (void)len;
    return -ENOSYS;
#endif
}
