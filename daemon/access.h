/*
 * access.h -- who may reach the daemon: the task socket, its ACLs, each
 * connection's rights (see access.c).
 */
#ifndef COLLS_DAEMON_ACCESS_H
#define COLLS_DAEMON_ACCESS_H

#include <stddef.h>
#include <sys/types.h>

struct config;
struct daemon;

/*
 * The rights (enum task_right, task.h) of a process of uid with groups
 * gids (primary first) at a daemon running as self: ADMIN for self,
 * --admin-uid or a member of --admin-gid; ATTACH for --allow-uid or a
 * member of --allow-gid; else NONE.  Pure (tests/unit/test-access.c).
 */
int access_rights(const struct config *cfg, uid_t self, uid_t uid,
                  const gid_t *gids, size_t ngids);

/* Creates the socket directory (0700), binds and listens; new
   connections become tasks (task_adopt).  0 or a negative COLLS_E*
   code. */
int access_listen(struct daemon *d);
/* Closes the listener and unlinks the socket. */
void access_unlisten(struct daemon *d);

#endif
