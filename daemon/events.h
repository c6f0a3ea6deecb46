/*
 * events.h -- who reacts to what: the one place that decides which
 * modules hear of a host going up or down, a task exiting, the daemon
 * joining a machine or stopping, and in which order.  Owned by collsd
 * (it is main's wiring, in the library so that route.c, host.c and
 * join.c can report events without knowing who listens).
 */
#ifndef COLLS_DAEMON_EVENTS_H
#define COLLS_DAEMON_EVENTS_H

#include <stdint.h>

struct daemon;
struct group;

/* Host hid (not us) came up: HOST_ADD notifications; group names it
   owned may be taken over. */
void events_host_up(struct daemon *d, int hid);
/* Host hid, incarnation inc, is down (declared, restarted, removed, or
   we came back as a new incarnation). */
void events_host_down(struct daemon *d, int hid, uint32_t inc);
/* Local task tid left ACTIVE: the machine is told, then as
   events_task_gone.  status: its exit status (code or 128 + signal) when
   spawn.c saw it end, else -1.  collsd.c's task_ops.exit calls it. */
void events_task_exit(struct daemon *d, uint32_t tid, int status);
/* Task tid, local or remote, is gone: local tasks, notifications,
   groups. */
void events_task_gone(struct daemon *d, uint32_t tid, int status);
/* Group g failed (g->status, g->fail_from set by group.c): its
   collective instances from g->fail_from on fail. */
void events_group_failed(struct daemon *d, struct group *g);
/* The daemon has its hid (joined, or back alone): opens the task
   socket; stops the daemon if it cannot. */
void events_joined(struct daemon *d);
/* The daemon drops its machine to join another: closes the task socket. */
void events_rejoining(struct daemon *d);
/*
 * Stops the daemon (signal, HALT, DELETE_HOST, failure): the loop ends
 * once the transport delivered what is queued (collsd.c's cron checks),
 * or after linger_us at most; 0 ends it now.  Only the first call sets
 * the exit code.
 */
void events_stop(struct daemon *d, int exit_code, uint64_t linger_us);

#endif
