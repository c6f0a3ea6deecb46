/*
 * join.h -- changes of membership (join.c): joining a machine with
 * --join, join cookies, invitations (`collsctl add'), ADD_HOST,
 * DELETE_HOST and HALT_ALL.  The assigner (host_assigner) carries them
 * out; other members forward them to it.
 */
#ifndef COLLS_DAEMON_JOIN_H
#define COLLS_DAEMON_JOIN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "proto/colls.pb-c.h"

struct daemon;

/* Draws the key of the join cookies (start-up, before any datagram). */
void join_init(struct daemon *d);
/* --join: starts joining the machine at cfg->join.  1 (joining) or a
   negative code. */
int join_start(struct daemon *d);
/* While joining: retries, gives up after --join-timeout. */
void join_cron(struct daemon *d, uint64_t now_us);
/* The assigner invites the hosts added and not heard yet (once per
   heartbeat, from host_cron). */
void join_invite_all(struct daemon *d);
/* A join datagram (after the magic) from addr (net_ops.join_dgram). */
void join_dgram(struct daemon *d, const struct sockaddr *from, socklen_t alen,
                const uint8_t *p, size_t len);
/* HOST_JOIN, ADD_HOST, DELETE_HOST forwarded by daemon hid. */
void join_peer_msg(struct daemon *d, int hid, const Envelope *e);
/* Admin: add a host by address; 0 or a negative code. */
int join_add_host(struct daemon *d, const char *addr);
/* Admin: remove host hid (halting its daemon). */
int join_delete_host(struct daemon *d, int hid);
/* Admin: stop every daemon of the machine, this one last. */
void join_halt_all(struct daemon *d);

#endif
