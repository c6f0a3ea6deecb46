/*
 * access.c -- who may reach the daemon: the task socket (its directory
 * 0700, its ACL entries for --allow-uid/--allow-gid/--admin-uid/
 * --admin-gid), each connection's rights, decided once at accept from the
 * peer credentials the kernel recorded at connect (uid, primary and
 * supplementary groups: SO_PEERCRED and SO_PEERGROUPS, not /proc, whose
 * pid may be reused, nor the user database, which describes the user and
 * not the process), and the refusals before a connection is a task (over
 * --max-tasks + 16, or while the daemon stops: one ERROR frame, then the
 * close).  A connection it accepts becomes a task through task_adopt.
 *
 * Owns the listening socket (d->listen_fd, d->accept_ev, d->sock_path).
 * May call: task.c (task_adopt), platform (credentials, the socket
 * directory), config, log, proto/.  Part of the task server's layer: never
 * route, host, group, coll or admin.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <event2/event.h>

#include "colls.h"
#include "daemon/access.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/log.h"
#include "daemon/platform.h"
#include "daemon/task.h"
#include "proto/envelope.h"
#include "proto/frame.h"

#define ACCESS_SNDBUF (4 << 20) /* asked-for SO_SNDBUF of a task, bytes */

/*
 * A large send buffer on each task socket: a collective's result of a few
 * MiB then goes to a task in one writev instead of a wake-up of both sides
 * per 208 KiB (the default), which made local distribution the bottleneck
 * of hierarchical bcast (2 hosts x 4 tasks, 1 MiB: 5.7 -> 2.9-4.1 ms).
 * FORCE passes net.core.wmem_max when the daemon runs as root.
 */
static void
access_sndbuf(int fd)
{
    int sz = ACCESS_SNDBUF;

    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof sz) != 0)
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
}

/* Is gid (a config value, -1: none) among the n groups at gids? */
static int
access_in_group(int64_t gid, const gid_t *gids, size_t n)
{
    size_t i;

    for (i = 0; gid >= 0 && i < n; i++)
        if ((int64_t)gids[i] == gid)
            return 1;
    return 0;
}

int
access_rights(const struct config *cfg, uid_t self, uid_t uid,
              const gid_t *gids, size_t ngids)
{
    if (uid == self ||
        (cfg->admin_uid >= 0 && (int64_t)uid == cfg->admin_uid) ||
        access_in_group(cfg->admin_gid, gids, ngids))
        return TASK_RIGHT_ADMIN;
    if ((cfg->allow_uid >= 0 && (int64_t)uid == cfg->allow_uid) ||
        access_in_group(cfg->allow_gid, gids, ngids))
        return TASK_RIGHT_ATTACH;
    return TASK_RIGHT_NONE;
}

/*
 * The rights of the process at the other end of fd (uid given), from the
 * groups the kernel recorded at connect.  Without them (an error is
 * logged) only the uid counts.
 */
static int
access_peer_rights(const struct daemon *d, int fd, uid_t uid)
{
    gid_t *gids = NULL;
    size_t n = 0;
    int rc, rights;

    if (uid == (uid_t)-1)
        return TASK_RIGHT_NONE;
    rc = platform_peer_gids(fd, &gids, &n);
    if (rc != 0)
        log_warn("peer groups of uid %lu: %s", (unsigned long)uid,
                 log_errstr(rc));
    rights = access_rights(d->cfg, geteuid(), uid, gids, n);
    free(gids);
    return rights;
}

/*
 * Refuses a connection before it is a task (over the cap, or while the
 * daemon stops): one ERROR frame with status and msg, written at once on
 * the fresh socket (it has room for it; if not, the task sees the close
 * alone), then the close.
 */
static void
access_refuse(struct daemon *d, int fd, int status, char *msg)
{
    Error er = ERROR__INIT;
    Envelope e;
    uint8_t frame[FRAME_HDR_LEN + 256];
    size_t elen;

    d->st.attach_refused++;
    envelope_reply(&e, COLLS_DAEMON_TID(d->hid), 0, KIND__ERROR, 0, status);
    er.message = msg;
    e.body_case = ENVELOPE__BODY_ERROR;
    e.error = &er;
    elen = envelope_packed_size(&e);
    if (elen <= sizeof(frame) - FRAME_HDR_LEN &&
        frame_put_header(frame, (uint32_t)elen, 0) == 0) {
        envelope_pack(&e, frame + FRAME_HDR_LEN);
        (void)!write(fd, frame, FRAME_HDR_LEN + elen);
    }
    close(fd);
}

static void
access_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
    struct daemon *d = arg;
    struct task *t;
    int fd, rc, conns = 0;
    uid_t uid = (uid_t)-1;
    pid_t pid = 0;

    fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
        if (errno != EAGAIN && errno != EINTR)
            log_warn("accept: %s", strerror(errno));
        return;
    }
    for (t = d->tasks; t != NULL; t = t->next)
        conns++;
    if (d->stopping) {
        access_refuse(d, fd, COLLS_ESHUTDOWN, "the daemon is shutting down");
        return;
    }
    if (conns >= d->cfg->max_tasks + 16) {
        char msg[128];

        snprintf(msg, sizeof(msg),
                 "too many connections to the daemon (limit %d: --max-tasks "
                 "%lld + 16)",
                 conns, (long long)d->cfg->max_tasks);
        if (d->st.attach_refused % 1000 == 0) /* a flood logs little */
            log_warn("connection refused: %s", msg);
        access_refuse(d, fd, COLLS_ETOOMANY, msg);
        return;
    }
    access_sndbuf(fd);
    rc = platform_peer_cred(fd, &uid, &pid);
    if (rc != 0)
        log_warn("peer credentials: %s", log_errstr(rc));
    task_adopt(d, fd, uid, pid, access_peer_rights(d, fd, uid));
}

/* Who gets ACL entries: up to two uids and two gids, each list sorted
   and without repeats (the kernel refuses an ACL otherwise). */
struct access_acl {
    uint32_t uids[2], gids[2];
    unsigned nuids, ngids;
};

/* Adds id (a config value, -1: none) to the sorted set v of *n. */
static void
access_acl_add(uint32_t *v, unsigned *n, int64_t id)
{
    unsigned i;

    if (id < 0)
        return;
    for (i = 0; i < *n; i++)
        if (v[i] == (uint32_t)id)
            return;
    if (*n == 1 && v[0] > (uint32_t)id) {
        v[1] = v[0];
        v[0] = (uint32_t)id;
    } else {
        v[*n] = (uint32_t)id;
    }
    (*n)++;
}

/* Puts one ACL entry (tag, perm, id) at e, little-endian. */
static void
access_acl_entry(uint8_t *e, uint16_t tag, unsigned perm, uint32_t id)
{
    e[0] = (uint8_t)tag;
    e[1] = (uint8_t)(tag >> 8);
    e[2] = (uint8_t)perm;
    e[3] = 0;
    e[4] = (uint8_t)id;
    e[5] = (uint8_t)(id >> 8);
    e[6] = (uint8_t)(id >> 16);
    e[7] = (uint8_t)(id >> 24);
}

/*
 * Sets the POSIX ACL of path (as the "system.posix_acl_access" attribute,
 * in the kernel's little-endian format): the owner keeps owner (rwx or
 * rw), group and others nothing, and every uid and gid of a gets perm
 * (which is also the mask).  0 or a negative errno.
 */
static int
access_acl_set(const char *path, const struct access_acl *a, unsigned owner,
               unsigned perm)
{
    /* Tags (linux/posix_acl_xattr.h), in the order the kernel wants. */
    enum {
        USER_OBJ = 0x01,
        USER = 0x02,
        GROUP_OBJ = 0x04,
        GROUP = 0x08,
        MASK = 0x10,
        OTHER = 0x20
    };
    uint8_t acl[4 + 8 * 8], *e = acl + 4;
    unsigned i;

    memset(acl, 0, sizeof(acl));
    acl[0] = 2; /* POSIX_ACL_XATTR_VERSION */
    access_acl_entry(e, USER_OBJ, owner, UINT32_MAX);
    e += 8;
    for (i = 0; i < a->nuids; i++, e += 8)
        access_acl_entry(e, USER, perm, a->uids[i]);
    access_acl_entry(e, GROUP_OBJ, 0, UINT32_MAX);
    e += 8;
    for (i = 0; i < a->ngids; i++, e += 8)
        access_acl_entry(e, GROUP, perm, a->gids[i]);
    access_acl_entry(e, MASK, perm, UINT32_MAX);
    e += 8;
    access_acl_entry(e, OTHER, 0, UINT32_MAX);
    e += 8;
    if (setxattr(path, "system.posix_acl_access", acl, (size_t)(e - acl), 0) !=
        0)
        return -errno;
    return 0;
}

/*
 * --allow-uid/--allow-gid/--admin-uid/--admin-gid: lets those uids and
 * groups reach the socket at path -- search (x) on its directory, which
 * stays 0700 for everyone else, and write (w) on the socket, which
 * connect needs.  The daemon's own uid needs no entry.  Without ACL
 * support in the file system they cannot connect; that is logged, not
 * fatal.
 */
static void
access_grant(const struct config *cfg, const char *path)
{
    struct access_acl a;
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    int rc = 0;

    memset(&a, 0, sizeof(a));
    if (cfg->allow_uid != (int64_t)geteuid())
        access_acl_add(a.uids, &a.nuids, cfg->allow_uid);
    if (cfg->admin_uid != (int64_t)geteuid())
        access_acl_add(a.uids, &a.nuids, cfg->admin_uid);
    access_acl_add(a.gids, &a.ngids, cfg->allow_gid);
    access_acl_add(a.gids, &a.ngids, cfg->admin_gid);
    if (a.nuids == 0 && a.ngids == 0)
        return;
    if (slash != NULL && slash > path && (size_t)(slash - path) < sizeof(dir)) {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
        rc = access_acl_set(dir, &a, 07, 01);
    }
    if (rc == 0)
        rc = access_acl_set(path, &a, 07, 06);
    if (rc != 0)
        log_warn("--allow-uid/--allow-gid/--admin-uid/--admin-gid: cannot "
                 "give access to %s (%s); their tasks cannot connect",
                 path, strerror(-rc));
    else
        log_info("ACL entries on %s and its directory for %u uid(s), %u "
                 "group(s)",
                 path, a.nuids, a.ngids);
}

int
access_listen(struct daemon *d)
{
    struct sockaddr_un sa;
    char err[256];
    const char *path = d->cfg->socket;
    int fd, rc;

    rc = platform_secure_dir(path, err, sizeof(err));
    if (rc != 0) {
        log_error("socket directory: %s", err);
        return rc;
    }
    if (strlen(path) >= sizeof(sa.sun_path)) {
        log_error("socket path too long: %s", path);
        return COLLS_EINVAL;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        int probe;

        if (errno != EADDRINUSE)
            goto fail;
        /* A socket nobody answers on is left over from a crash. */
        probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (probe >= 0 &&
            connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
            close(probe);
            close(fd);
            log_error("%s: another daemon is listening there", path);
            return COLLS_EEXIST;
        }
        if (probe >= 0)
            close(probe);
        unlink(path);
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
            goto fail;
    }
    chmod(path, 0700);
    access_grant(d->cfg, path);
    if (listen(fd, 128) != 0)
        goto fail;
    d->listen_fd = fd;
    d->accept_ev =
        event_new(d->base, fd, EV_READ | EV_PERSIST, access_accept_cb, d);
    if (d->accept_ev == NULL) {
        close(fd);
        return COLLS_ENOMEM;
    }
    event_add(d->accept_ev, NULL);
    d->sock_path = strdup(path);
    return 0;
fail:
    rc = -errno;
    log_error("%s: %s", path, strerror(errno));
    close(fd);
    return rc;
}

void
access_unlisten(struct daemon *d)
{
    if (d->accept_ev != NULL) {
        event_free(d->accept_ev);
        d->accept_ev = NULL;
    }
    if (d->listen_fd > 0) {
        close(d->listen_fd);
        d->listen_fd = -1;
    }
    if (d->sock_path != NULL) {
        unlink(d->sock_path);
        free(d->sock_path);
        d->sock_path = NULL;
    }
}
