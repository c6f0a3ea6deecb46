/*
 * host.h -- the host table and membership: hostfile or join, heartbeats,
 * host-down detection, incarnations, table pushes, add/delete/halt.
 *
 * hid assignment: with a hostfile, hid = position among host lines
 * (1-based), every daemon reading the same file; with --join, the daemon
 * with the lowest live hid assigns the next free hid and pushes HOST_TABLE
 * (epoch + 1) to every daemon.
 */
#ifndef COLLS_DAEMON_HOST_H
#define COLLS_DAEMON_HOST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "proto/colls.pb-c.h"

struct daemon;

/* Sets up the table (hostfile, join, or one host).  Returns 0 when the
   daemon has its hid, 1 while a join is under way, or a negative code. */
int host_init(struct daemon *d);
/* Heartbeats, dead-host detection, join retries. */
void host_cron(struct daemon *d, uint64_t now_us);

/* A join datagram (after the magic) from addr. */
void host_join_dgram(struct daemon *d, const struct sockaddr *from,
                     socklen_t alen, const uint8_t *p, size_t len);
/* The transport saw hid restart (new incarnation) or dropped it. */
void host_peer_reset(struct daemon *d, int hid, uint32_t new_inc);
/* Notes message e from hid; 0 to process it, -1 to ignore it (sender
   unknown, or down and not a heartbeat of a new incarnation). */
int host_heard(struct daemon *d, int hid, const Envelope *e);
/* HEARTBEAT, HOST_TABLE, HOST_DOWN, HOST_JOIN (forwarded), HALT_ALL,
   ADD_HOST/DELETE_HOST (forwarded to the assigner). */
void host_peer_msg(struct daemon *d, int hid, const Envelope *e);

/* 1 if hid is a known host that is up (self included). */
int host_is_up(struct daemon *d, int hid);
/* SIGHUP: re-reads the hostfile.  0 or a negative code. */
int host_reload(struct daemon *d);
/* Admin: add a host by address; 0 or a negative code. */
int host_add(struct daemon *d, const char *addr);
/* Admin: remove host hid (halting its daemon). */
int host_delete(struct daemon *d, int hid);
/* Admin: stop every daemon of the machine, this one last. */
void host_halt_all(struct daemon *d);
/* Fills ht with every host (entries allocated; host_table_free). */
int host_table_fill(struct daemon *d, HostTable *ht);
void host_table_free(HostTable *ht);
/* Stops the daemon: the loop ends once the transport has delivered what
   is queued, or after linger_us at most. */
void host_stop(struct daemon *d, int exit_code, uint64_t linger_us);
/* Frees the table (shutdown). */
void host_free_all(struct daemon *d);
/* Parses "addr[:port]" with a default port into sa; 0 or COLLS_EINVAL. */
int host_parse_addr(const char *s, int default_port, struct sockaddr_in *sa);

#endif
