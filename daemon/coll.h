/*
 * coll.h -- collective instances (docs/collectives.md, "Collectives"):
 * what the rest of the daemon calls.
 *
 * An instance is keyed by (gid, seq).  It collects the COLL_REQs of the
 * local members, runs either one leader-level schedule (hierarchical mode:
 * local combine, leaders' schedule over the hosts, local distribution) or
 * one schedule per local rank (flat mode), and answers each local member
 * with COLL_RESULT.  Schedules run on daemon/exec.h: a round's REDUCE and
 * COPY steps run when it starts, its SENDs are queued at once (COLL_DATA
 * over the transport, or in memory to a rank of this daemon), and it
 * completes when its RECVs have matched incoming messages, which match
 * per (phase, source rank, destination rank) in arrival order.  Messages
 * that arrive before their instance (or group) exists are kept until it
 * does.
 */
#ifndef COLLS_DAEMON_COLL_H
#define COLLS_DAEMON_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "proto/colls.pb-c.h"

struct daemon;
struct task;
struct group;
struct stats_json;

/* Allocates the collective state (d->gs->cs; d->gs exists).  0 or
   COLLS_ENOMEM. */
int coll_init(struct daemon *d);
/* Frees it, early messages included (shutdown). */
void coll_free(struct daemon *d);
/* COLL_REQ from task t; owner (if not NULL) holds payload and is taken. */
void coll_task_req(struct task *t, const Envelope *e, const uint8_t *payload,
                   size_t plen, uint8_t *owner);
/* COLL_DATA from daemon hid (msg taken, payload at msg + off). */
void coll_peer_data(struct daemon *d, int hid, const Envelope *e, uint8_t *msg,
                    size_t len, size_t off);
/* g was just installed: adopt the early messages for its gid. */
void coll_group_installed(struct daemon *d, struct group *g);
/* g->status was set: fail every instance of seq >= g->fail_from. */
void coll_group_failed(struct daemon *d, struct group *g);
/* Frees g's instances (the group is being dropped). */
void coll_group_free(struct daemon *d, struct group *g);
/* Drops early messages from host hid (it went down). */
void coll_host_down(struct daemon *d, int hid);
/* Expires early messages of groups that never appeared. */
void coll_cron(struct daemon *d, uint64_t now_us);
/* Frees the early messages (shutdown). */
void coll_free_early(struct daemon *d);
/* Appends "collectives" (per op and algorithm) and "coll" counters. */
void coll_stats_json(struct daemon *d, struct stats_json *j);
/* Appends the same as Prometheus text lines to b; 0 or COLLS_ENOMEM. */
struct buf;
int coll_stats_prometheus(struct daemon *d, struct buf *b);

#endif
