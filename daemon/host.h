/*
 * host.h -- the host table and liveness: hostfile or one host,
 * heartbeats, host-down detection, incarnations, table pushes.  Joins,
 * invitations and ADD/DELETE_HOST are join.h's, on this table.
 *
 * hid assignment: with a hostfile, hid = position among host lines
 * (1-based), every daemon reading the same file; with --join, the daemon
 * with the lowest live hid (host_assigner) assigns the next free hid and
 * pushes HOST_TABLE (epoch + 1) to every daemon.
 */
#ifndef COLLS_DAEMON_HOST_H
#define COLLS_DAEMON_HOST_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "proto/colls.pb-c.h"

struct daemon;
struct host;

/* Sets up the table (hostfile, join, or one host).  Returns 0 when the
   daemon has its hid, 1 while a join is under way, or a negative code. */
int host_init(struct daemon *d);
/* A host declared this daemon down while it was alive: comes back as a
   new incarnation (cron, before group_cron). */
void host_comeback(struct daemon *d);
/* Heartbeats, invitations, dead-host detection (member only); idle: this
   daemon is idle (collsd.c), so its heartbeats may slow down. */
void host_cron(struct daemon *d, uint64_t now_us, int idle);
/* When our next heartbeat is due (idle as for host_cron). */
uint64_t host_beat_due(const struct daemon *d, int idle);
/* 1 while our heartbeats announce --idle-heartbeat. */
int host_beat_slow(const struct daemon *d);
/* 1 if a heartbeat is due before the idle cron would run: a host came up
   or restarted, or one is not up (joining: its invitations ride on
   heartbeats) while ours are slow. */
int host_beat_early(const struct daemon *d);

/* The transport saw hid restart (new incarnation) or dropped it. */
void host_peer_reset(struct daemon *d, int hid, uint32_t new_inc);
/* Notes message e from hid; 0 to process it, -1 to ignore it (sender
   unknown, or down and not a heartbeat of a new incarnation). */
int host_heard(struct daemon *d, int hid, const Envelope *e);
/* HEARTBEAT, HOST_TABLE, HOST_DOWN, HALT_ALL from daemon hid. */
void host_peer_msg(struct daemon *d, int hid, const Envelope *e);
/* Fills e (with op, both the caller's) as HOST_DOWN of hid at inc, from
   this daemon. */
void host_down_env(const struct daemon *d, Envelope *e, HostOp *op, int hid,
                   uint32_t inc);
/* Shutdown: tells the other daemons this one is gone (HOST_DOWN). */
void host_leave(struct daemon *d);
/*
 * This daemon leaves the machine for good (deleted, or its hostfile line
 * is gone): the others are to remove it from their tables, not list it
 * down.  The assigner sends them its table without itself (next epoch);
 * any other daemon asks the assigner to delete it (DELETE_HOST).  The
 * caller stops the daemon next (events_stop, which sends HOST_DOWN).
 */
void host_depart(struct daemon *d);

/* 1 if hid is a known host that is up (self included). */
int host_is_up(struct daemon *d, int hid);
/* SIGHUP: re-reads the hostfile.  0 or a negative code. */
int host_reload(struct daemon *d);
/* Fills ht with every host (entries allocated; host_table_free). */
int host_table_fill(struct daemon *d, HostTable *ht);
void host_table_free(HostTable *ht);
/* Frees the table (shutdown, or before joining another machine). */
void host_free_all(struct daemon *d);
/* Parses "addr[:port]" with a default port into sa; 0 or COLLS_EINVAL. */
int host_parse_addr(const char *s, int default_port, struct sockaddr_in *sa);

/* ---- the table, for join.c ---------------------------------------------- */

/* Creates (JOINING) or returns the entry for hid; NULL without memory. */
struct host *host_get(struct daemon *d, int hid);
/* Our own entry, from d->hid, d->inc, d->name and d->listen_addr. */
int host_init_self(struct daemon *d);
/* Sets d->direct_ip, the IP tasks bind their direct listeners to. */
void host_set_direct_ip(struct daemon *d);
/* Moves h to state (a host coming up: events_host_up). */
void host_set_state(struct daemon *d, struct host *h, int state);
/* Tells the transport where h is. */
void host_rel_set(struct daemon *d, struct host *h);
/* The lowest hid that is up (ourselves included): assigns hids. */
int host_assigner(struct daemon *d);
/* h runs incarnation inc (what ran before is gone). */
void host_new_incarnation(struct daemon *d, struct host *h, uint32_t inc);
/* Removes hid from the table. */
void host_remove(struct daemon *d, int hid);
/* Sends e to every other host up (and JOINING ones if joining_too). */
void host_broadcast(struct daemon *d, const Envelope *e, int joining_too);
/* Fills e as HOST_TABLE from this daemon with body ht. */
void host_table_env(const struct daemon *d, Envelope *e, HostTable *ht);
/* Pushes our table to hid (0: to every other host). */
void host_push_table(struct daemon *d, int hid);
/* Takes over a newer table: adds, updates and removes hosts. */
void host_adopt_table(struct daemon *d, const HostTable *ht);
/* "a.b.c.d:port" of sa into out. */
void host_format(const struct sockaddr_in *sa, char *out, size_t len);
/* 1 if a and b are the same address and port. */
int host_sa_equal(const struct sockaddr_in *a, const struct sockaddr_in *b);

#endif
