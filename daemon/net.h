/*
 * net.h -- glue between the daemon's loop and its UDP transport: the one
 * UDP socket (udp.h), the reliable transport on top (rel.h), their events,
 * and sending envelopes to other daemons.
 *
 * A daemon-to-daemon message is  u32 env_len | packed Envelope | payload,
 * handed to rel_sendv as iovecs (no copy here).  Before it has a hid, a
 * joining daemon exchanges plain "join datagrams" instead:  "CJN1" | u32
 * env_len | packed Envelope  (HOST_JOIN out, HOST_TABLE back), which the
 * receive path tells from transport datagrams by the magic.
 *
 * Sends only queue; net_kick() schedules one flush event that runs after
 * the callbacks of the current loop turn: it flushes the UDP batch, runs
 * the end-of-turn hook (net_ops.turn_end), flushes what that sent and
 * re-arms the transport timer.
 *
 * Layering: net.c is below route/host/group/coll/admin and never calls
 * them; what it receives goes up through the struct net_ops that
 * collsd.c gives to net_open.
 */
#ifndef COLLS_DAEMON_NET_H
#define COLLS_DAEMON_NET_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "proto/colls.pb-c.h"

struct daemon;

#define NET_JOIN_MAGIC     "CJN1" /* no key: magic | len | envelope */
#define NET_JOIN_MAGIC_LEN 4
/* With a key: magic | len | envelope | trailer (daemon/auth.h), sealed
   with the magic and length as header and as nonce prefix. */
#define NET_JOIN_SEALED "CJS1"
/* Largest packed envelope we send or accept between daemons. */
#define NET_MAX_ENV (1024u * 1024)

/* Upcalls of the network layer; collsd.c installs them (net_open). */
struct net_ops {
    /* A whole message from daemon hid: envelope e (borrowed, valid for
       the call), the message msg (len bytes, taken: packed envelope at
       msg + 4, payload from msg + payload_off). */
    void (*message)(struct daemon *d, int hid, const Envelope *e, uint8_t *msg,
                    size_t len, size_t payload_off);
    /* The transport saw hid restart (new_inc) or dropped it (0). */
    void (*peer_reset)(struct daemon *d, int hid, uint32_t new_inc);
    /* A join datagram from `from': the bytes after the magic. */
    void (*join_dgram)(struct daemon *d, const struct sockaddr *from,
                       socklen_t alen, const uint8_t *p, size_t len);
    /* End of a loop turn, after the batch went out (Redis' beforeSleep):
       free what died, wake readers.  What it sends is flushed after. */
    void (*turn_end)(struct daemon *d);
};

/* Opens the UDP socket on cfg->listen, creates the transport and the
   events, and installs ops (static storage).  0 or a negative COLLS_E*
   code. */
int net_open(struct daemon *d, const struct net_ops *ops);
void net_close(struct daemon *d);

/* Sends e (+ payload) to daemon hid.  0 or a negative COLLS_E* code. */
int net_send(struct daemon *d, int hid, const Envelope *e, const void *payload,
             size_t plen);
/* net_send with rel_sendvf's flags (REL_SEND_ACKNOW: no reply will carry
   the ack). */
int net_sendf(struct daemon *d, int hid, const Envelope *e, const void *payload,
              size_t plen, unsigned flags);
/* Sends CREDIT {task, bytes} to daemon hid (flow control: task, ours,
   has read that much of what hid forwarded to it).  0 or COLLS_E*. */
int net_send_credit(struct daemon *d, int hid, uint32_t task, uint64_t bytes);
/* Sends a join datagram to addr (unreliable; the caller retries). */
int net_send_join(struct daemon *d, const struct sockaddr_in *to,
                  const Envelope *e);
/* Processes the datagrams already waiting on the socket (a bounded
   number), e.g. before a timer decides that a peer is silent. */
void net_drain(struct daemon *d);
/* Schedules the end-of-turn flush. */
void net_kick(struct daemon *d);
/* Runs the end-of-turn flush now if it is scheduled, for work done
   outside a loop turn (it costs no epoll_wait). */
void net_flush_now(struct daemon *d);
/* Bytes queued towards hid and not yet acknowledged. */
uint64_t net_queued(struct daemon *d, int hid);

#endif
