/*
 * spawn.h -- starting programs through the daemons (docs/spawn.md):
 * SPAWN_REQ from a task, placement over the host table, SPAWN_ORDER to
 * the executing daemons, the children (fork/exec, their output pipes and
 * their exit), CATCHOUT, KILL_REQ.
 *
 * The pure parts (line splitting, placement, the --spawn-path check) are
 * declared first and have no daemon state, so the unit tests drive them
 * alone.
 */
#ifndef COLLS_DAEMON_SPAWN_H
#define COLLS_DAEMON_SPAWN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/colls.pb-c.h"

struct daemon;
struct task;

/* ---- pure parts ------------------------------------------------------- */

/* Longest line forwarded; a longer one is cut into pieces this long. */
#define SPAWN_LINE_MAX 4096
/* Copies one SPAWN_REQ may ask for. */
#define SPAWN_MAX_COPIES 4096

/* A child's output stream being split into lines. */
struct spawn_lines {
    size_t len;
    int cut; /* the last line passed on was cut at the bound: a newline
                right after it ends that line, not an empty one */
    char buf[SPAWN_LINE_MAX];
};

/* Called with each line, without its newline (len <= SPAWN_LINE_MAX). */
typedef void (*spawn_line_fn)(void *arg, const char *line, size_t len);

/* Feeds n bytes; calls fn for each line completed (or cut at the bound). */
void spawn_lines_feed(struct spawn_lines *l, const char *data, size_t n,
                      spawn_line_fn fn, void *arg);
/* End of the stream: a last line without a newline is passed on. */
void spawn_lines_flush(struct spawn_lines *l, spawn_line_fn fn, void *arg);

/* A host as placement sees it. */
struct spawn_host {
    int hid;
    int up;
    int ntasks;
    const char *name, *addr, *arch;
};

/*
 * Places n copies (COLLS_SPAWN_* flags, where): hids[i] receives copy i's
 * host.  Copies go one at a time to the eligible host with the fewest
 * tasks counting those already placed (lowest hid on ties).  0, or
 * COLLS_EHOSTDOWN when no host up matches, COLLS_EINVAL for bad flags.
 */
int spawn_place(const struct spawn_host *hosts, int nhosts, int flags,
                const char *where, int n, int *hids);

/* Is the real path inside the real directory dir? */
int spawn_path_inside(const char *path, const char *dir);

/*
 * Resolves file against spawn_path (colon-separated directories): a name
 * without '/' or a relative path is looked up in each directory in turn,
 * an absolute path as is; the real path (symbolic links resolved) must
 * lie inside one of the directories.  out receives it.  0, COLLS_EPERM
 * (no --spawn-path, or outside it), COLLS_ENOENT (no such file, or not
 * an executable regular file), COLLS_EINVAL.
 */
int spawn_resolve(const char *spawn_path, const char *file, char *out,
                  size_t cap);

/* Environment entries a spawn may carry. */
#define SPAWN_MAX_ENV 4096

/*
 * Checks the n environment entries env of a spawn for the copies: each
 * "NAME=value" with NAME a shell variable name ([A-Za-z_][A-Za-z0-9_]*),
 * at most SPAWN_MAX_ENV.  A spawner whose uid is neither 0 nor self (the
 * daemon's) may set only COLLS_* and PVM_* variables: the copies run as
 * the daemon's user, and LD_PRELOAD or PATH would make them run code of
 * the spawner's choosing.  0, or COLLS_EINVAL / COLLS_EPERM with *why.
 */
int spawn_env_check(char *const *env, size_t n, long uid, long self,
                    const char **why);

/* ---- the daemon's part ------------------------------------------------ */

/* Sets up the state and the SIGCHLD event; 0 or a COLLS_E* code. */
int spawn_init(struct daemon *d);
/* Shutdown: ends the children still running (SIGTERM to their process
   groups) and frees everything. */
void spawn_free(struct daemon *d);

/* Requests from task t (route_task_input). */
void spawn_task_req(struct task *t, const Envelope *e);
void spawn_catchout(struct task *t, const Envelope *e);
void spawn_kill_req(struct task *t, const Envelope *e);
/* SPAWN_ORDER/DONE/OUTPUT and KILL_ORDER/DONE from daemon hid. */
void spawn_peer_msg(struct daemon *d, int hid, const Envelope *e,
                    const uint8_t *payload, size_t plen);

/*
 * task_ops.reserved: the tid reserved for the child with this pid, and
 * its parent in *parent; 0 when pid is no child waiting to attach.
 */
uint32_t spawn_attach(struct daemon *d, pid_t pid, uint32_t *parent);
/*
 * Messages for a copy that has not attached yet (it was told its tid at
 * fork; the spawner learns it when the spawn is answered, which does not
 * wait for copies slower than SPAWN_ATTACH_US to attach): DATA for it is
 * held and queued to it right after its ATTACH_REP, in order, instead of
 * failing with SEND_FAILED.  spawn_hold takes a frame laid out as
 * task_queue_packed wants it (envelope, payload; inside owner) with the
 * daemon hid it came from and its credit (hid 0: a local sender, no
 * credit): 0 if held (owner taken), -1 if tid is no copy waiting to
 * attach or it holds --task-queue-max bytes already (owner not taken).
 * What a copy that ends without attaching held is dropped (its senders
 * get its TASK_EXIT).
 */
int spawn_hold(struct daemon *d, uint32_t tid, int hid, uint64_t credit,
               const uint8_t *body, size_t env_len, size_t body_len,
               void *owner);
/* 1 if spawn_hold would hold len bytes for tid now (a sender that must
   build the frame first asks before it does). */
int spawn_may_hold(struct daemon *d, uint32_t tid, size_t len);
/* task_ops.attached: queues what was held for t, now ACTIVE. */
void spawn_attached(struct task *t);
/*
 * Task tid's connection ended.  1: a spawned child, whose exit spawn.c
 * announces itself once the process is reaped and its output read; 0:
 * announce it now (exit status unknown).
 */
int spawn_task_exit(struct daemon *d, uint32_t tid);
/* Task tid detaches: its exit waits a little for its status; one that
   lives on is announced gone, status unknown (spawn_cron). */
void spawn_detach(struct daemon *d, uint32_t tid);
/* Is tid a spawned child that has not ended (attached or not)? */
int spawn_child_alive(struct daemon *d, uint32_t tid);
/* Host hid went down: copies and kills waiting on it fail. */
void spawn_host_down(struct daemon *d, int hid);
/* Timeouts: copies that do not attach in time, requests unanswered. */
void spawn_cron(struct daemon *d, uint64_t now_us);
/* 1 while spawn_cron has something to watch: a child, an order or a
   request of ours, or a child to free. */
int spawn_busy(const struct daemon *d);

#endif
