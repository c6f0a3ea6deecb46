/*
 * admin.h -- collsctl's requests (hosts, tasks, stats, ping, add, delete,
 * halt), their remote parts between daemons (TASKS_QUERY/ANSWER,
 * ECHO_REQ/REP), and the table of requests waiting for another daemon's
 * answer (also used by route.c for ROUTE_REQ), with timeouts.
 */
#ifndef COLLS_DAEMON_ADMIN_H
#define COLLS_DAEMON_ADMIN_H

#include <stddef.h>
#include <stdint.h>

#include "proto/buf.h"
#include "proto/colls.pb-c.h"

struct daemon;
struct task;
struct pending;

/* An admin request (kinds 500..511) from task t. */
void admin_task_request(struct task *t, const Envelope *e,
                        const uint8_t *payload, size_t plen);
/* TASKS_QUERY/ANSWER and ECHO_REQ/REP from daemon hid. */
void admin_peer_msg(struct daemon *d, int hid, const Envelope *e,
                    const uint8_t *payload, size_t plen);

/* A new pending request of kind for task (tid, its req_id); its id is
   the req_id to put on the daemon wire.  NULL when out of memory. */
struct pending *admin_pending_new(struct daemon *d, int kind, uint32_t task_tid,
                                  uint64_t task_req);
struct pending *admin_pending_find(struct daemon *d, uint64_t id);
/* Unlinks and frees p. */
void admin_pending_done(struct daemon *d, struct pending *p);
/* Frees every pending request, unanswered (shutdown). */
void admin_pending_free_all(struct daemon *d);

/* Times out pending requests. */
void admin_cron(struct daemon *d, uint64_t now_us);
/* Host hid went down: answer what waits on it. */
void admin_host_down(struct daemon *d, int hid);

/* The statistics document (STATS_REP, HTTP); NUL-terminated in b. */
int admin_stats_json(struct daemon *d, struct buf *b);
/* The same counters as Prometheus text exposition. */
int admin_stats_prometheus(struct daemon *d, struct buf *b);

#endif
