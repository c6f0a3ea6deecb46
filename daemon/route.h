/*
 * route.h -- where messages go: task input dispatch, DATA routing (local,
 * remote over the transport, daemon echo), SEND_FAILED, direct-route
 * address service, notifications, TASK_EXIT and HOST_DOWN fan-out, and
 * the sending side of flow control (credit per remote task).
 */
#ifndef COLLS_DAEMON_ROUTE_H
#define COLLS_DAEMON_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/colls.pb-c.h"

struct daemon;
struct task;

/*
 * A frame from attached task t: envelope e (borrowed) and its payload.
 * owner, if not NULL, is the allocation holding the payload; route takes
 * it (passes it on or frees it).
 */
void route_task_input(struct task *t, const Envelope *e, const uint8_t *payload,
                      size_t plen, uint8_t *owner);

/*
 * A message from daemon hid: envelope e (borrowed), the whole message msg
 * (len bytes, taken: packed envelope at msg + 4, payload from msg +
 * payload_off).
 */
void route_peer_input(struct daemon *d, int hid, const Envelope *e,
                      uint8_t *msg, size_t len, size_t payload_off);

/* A local task ended: TASK_EXIT to every other daemon that is up.
   (events_task_exit calls it, then events_task_gone.)  status: its exit
   status, -1 unknown (TASK_EXIT's body says which). */
void route_task_exit(struct daemon *d, uint32_t tid, int status);
/* Task tid (anywhere) is gone: TASK_EXIT to local tasks, its
   notifications dropped, those about it fired with status (-1 unknown;
   events_task_gone). */
void route_task_gone(struct daemon *d, uint32_t tid, int status);
/* Host hid came up: HOST_ADD notifications (events_host_up). */
void route_host_add(struct daemon *d, int hid);
/* Host hid (incarnation inc) is down: HOST_DOWN to local tasks, fire
   notifications (events_host_down). */
void route_host_down(struct daemon *d, int hid, uint32_t inc);
/* Frees the flow-control state (shutdown). */
void route_free_all(struct daemon *d);

#endif
