/*
 * task.h -- the task server: the Unix socket, one connection per attached
 * task, framed input with backpressure, queued output.
 *
 * Output queued to a task is never dropped while the task lives, and no
 * task is closed for being slow.  Memory is bounded by not reading the
 * producers: a task with more than --task-queue-max queued towards it is
 * not read (what it asks for would only add to it); a local sender whose
 * destination's queue is over --task-queue-max, or whose destination
 * host's transport queue is over --task-queue-limit, stops being read
 * until that drains to half; DATA from other daemons is bounded by the
 * flow-control credit they hold (--task-credit, route.c), which the task
 * server owes back as the task reads (CREDIT, net_send_credit).
 *
 * Layering: task.c is below route/host/group/coll/admin and never calls
 * them; frames and exits go up through the struct task_ops that
 * collsd.c puts in d->task_ops before access_listen.
 */
#ifndef COLLS_DAEMON_TASK_H
#define COLLS_DAEMON_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "proto/colls.pb-c.h"

#include <sys/types.h>

struct config;
struct daemon;
struct task;

/* What a connection may do (struct task's rights). */
enum task_right {
    TASK_RIGHT_NONE,   /* nothing: the attach is refused (COLLS_EPERM) */
    TASK_RIGHT_ATTACH, /* attach, messages, groups, status/hosts/ps/stats */
    TASK_RIGHT_ADMIN,  /* and change the machine: add, delete, halt */
};

/* Upcalls of the task server; collsd.c installs them (d->task_ops). */
struct task_ops {
    /* A frame from ACTIVE task t: envelope e (borrowed) and its payload;
       owner, if not NULL, holds the payload and is taken. */
    void (*frame)(struct task *t, const Envelope *e, const uint8_t *payload,
                  size_t plen, uint8_t *owner);
    /* Task tid left ACTIVE (exit, detach, error): announce it. */
    void (*exit)(struct daemon *d, uint32_t tid);
    /* A connection from pid attaches: the tid reserved for it (a spawned
       child), its parent in *parent; 0: none, a fresh tid is given. */
    uint32_t (*reserved)(struct daemon *d, pid_t pid, uint32_t *parent);
    /* Task t is ACTIVE, its ATTACH_REP queued (NULL: nothing to do). */
    void (*attached)(struct task *t);
};

/* A connection access.c accepted (see access.h) becomes a task in
   HANDSHAKE; fd is closed on failure. */
void task_adopt(struct daemon *d, int fd, uid_t uid, pid_t pid, int rights);
/* Closes every connection (shutdown).  graceful: announce the exits at
   once but write what is queued first; else close now.  Frees nothing
   (task_reap does, from the loop). */
void task_close_all(struct daemon *d, int graceful);

/* The attached (ACTIVE) task with this tid, or NULL. */
struct task *task_find(struct daemon *d, uint32_t tid);

/*
 * Queues one frame to t: envelope e, then plen payload bytes.  If owner
 * is not NULL the payload lies inside owner, which is freed once written
 * (or at once on error); otherwise the payload is copied.  0, or a
 * negative COLLS_E* code if t is not accepting output.
 */
int task_queue_env(struct task *t, const Envelope *e, const void *payload,
                   size_t plen, void *owner);
/*
 * A payload that several tasks' frames hold at once (a collective's
 * result for every local member), freed once the last of them is written
 * or dropped.  task_share_new takes mem (a malloc'd block) and returns
 * the caller's reference, NULL without memory (mem is then not taken);
 * task_share_put drops a reference.
 */
struct task_share {
    unsigned refs;
    void *mem;
};
struct task_share *task_share_new(void *mem);
void task_share_put(struct task_share *s);
/* 1 if t was granted single copy at attach (docs/protocol.md). */
int task_cma_granted(const struct task *t);

/*
 * Single copy (docs/protocol.md): copies len bytes from t's memory at
 * addr into buf, or from buf to there.  0; COLLS_EPERM if t has no single
 * copy (or has exited); COLLS_EINVAL if the address is not mapped so.
 */
int task_cma_read(struct task *t, uint64_t addr, void *buf, size_t len);
int task_cma_write(struct task *t, uint64_t addr, const void *buf, size_t len);

/* task_queue_env for a payload inside share's block: the frame holds a
   reference instead of a copy.  0 or a negative COLLS_E* code. */
int task_queue_env_shared(struct task *t, const Envelope *e,
                          const void *payload, size_t plen,
                          struct task_share *share);

/*
 * A notice for every ACTIVE task but except (0: none): TASK_EXIT or
 * HOST_DOWN.  Queued now to tasks within --task-queue-max that missed
 * none before, else kept in the daemon's ring of the last TASK_NOTICES
 * and given to each lagging task once it reads (see task.c).  e->dst is
 * set per task.
 */
#define TASK_NOTICES 4096
void task_notice_all(struct daemon *d, Envelope *e, uint32_t except);
/* Frees the ring of notices (shutdown). */
void task_notice_free(struct daemon *d);
/* Queues a frame whose packed envelope (env_len bytes) and payload lie
   contiguous at body (body_len bytes in all) inside owner (taken). */
int task_queue_packed(struct task *t, const uint8_t *body, size_t env_len,
                      size_t body_len, void *owner);

/*
 * task_queue_packed for DATA forwarded by daemon hid under flow control:
 * once the frame is wholly written to t, credit (its cost) is owed back
 * to hid and returned in a CREDIT message (batched: half a window, or the
 * next cron); credit 0: DATA hid sent without credit (an echo from its
 * daemon).  Never refused for size: the sender's credit bounds it.
 */
int task_queue_peer(struct task *t, int hid, uint64_t credit,
                    const uint8_t *body, size_t env_len, size_t body_len,
                    void *owner);

/* Starts r as the daemon's reply of kind to task t's request req_id. */
void task_reply_init(Envelope *r, const struct task *t, int kind,
                     uint64_t req_id, int status);
/* Replies with kind/status/req_id and no body. */
int task_reply(struct task *t, int kind, uint64_t req_id, int status);
/* Sends ERROR {status, message} (req_id as given). */
int task_error(struct task *t, uint64_t req_id, int status, const char *msg);
/* Sends ERROR, then closes once the error is written (bad input). */
void task_fail(struct task *t, int status, const char *msg);
/* Ends a task now: announces its exit, closes, defers the free. */
void task_close(struct task *t, const char *why);

/* Stops reading from t until the queue it waits on drains. */
void task_pause_on_task(struct task *t, uint32_t dst_tid);
void task_pause_on_host(struct task *t, int hid);
/* Stops reading from t until route.c calls task_credit_granted (the
   message t sent waits for flow-control credit). */
void task_pause_on_credit(struct task *t);
void task_credit_granted(struct task *t);
/* Host hid went down: the credit owed to it is void (its successor
   starts with none in flight). */
void task_credit_forget(struct daemon *d, int hid);
/* Resumes paused tasks whose wait is over (end of loop turn). */
void task_resume_paused(struct daemon *d);
/* Writes the output queued during the loop turn (task_enqueue) to the
   tasks whose queue was idle (end of loop turn, after the datagrams). */
void task_flush_due(struct daemon *d);
/* Shared-memory channels, for a loop that polls: 1 if some task's ring
   has input for us or room for its waiting output (no syscall); and
   task_shm_poll does that work for one such task (1 if it did). */
int task_shm_probe(struct daemon *d);
int task_shm_poll(struct daemon *d);
/* Before the loop sleeps: raises the sleeping flags that task.c lowered
   while the daemon was awake (a task answering what we just gave it
   then writes without ringing us); 1 if a ring already has input
   (take it with task_shm_poll instead of sleeping), else 0. */
int task_shm_sleep(struct daemon *d);
/* What carries t's frames: "shm" or "socket". */
const char *task_channel(const struct task *t);
/* ACTIVE tasks whose frames go through a shared-memory channel. */
uint64_t task_shm_count(const struct daemon *d);
/* Frees closed tasks (end of loop turn, cron); closes stuck CLOSING. */
void task_reap(struct daemon *d);
void task_cron(struct daemon *d, uint64_t now_us);

const char *task_state_name(int state);

#endif
