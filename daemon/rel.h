/*
 * rel.h -- the reliable datagram transport between daemons.
 *
 * One struct rel serves every peer host over one UDP socket.  For each peer
 * it gives a reliable, ordered stream of messages of up to rel_config
 * .max_message bytes: fragmentation and reassembly, a send window,
 * cumulative + selective acknowledgement, retransmission timeouts as in
 * RFC 6298 (Karn's rule, exponential backoff), fast retransmit on gaps,
 * duplicate suppression, in-order delivery and pacing.
 *
 * It is a state machine without I/O or clocks of its own: the daemon feeds
 * it received datagrams (rel_input) and the time, calls rel_timer() when
 * rel_next_timeout() says, and gives it a function that sends datagrams.
 * That keeps it testable with a simulated network (tests/unit/test-rel.c)
 * and fuzzable (tests/fuzz/fuzz-rel.c).
 *
 * It is three files behind this one interface: rel.c (peers,
 * incarnations, output, these entry points), relsend.c (the sender of
 * each peer) and relrecv.c (its receiver), sharing daemon/rel_int.h.
 *
 * Incarnations: every daemon start has a new, random incarnation number.
 * Datagrams whose src_inc is one of the peer's past ones, or whose dst_inc
 * is not ours, are dropped and counted; a new src_inc from a known peer is
 * challenged (a nonce sent to the peer's address must come back from that
 * incarnation, rel.c) and then resets the peer's streams (messages queued
 * to the old incarnation are dropped and ops->reset is called).
 *
 * Authentication: with rel_config.auth (the cluster key, daemon/auth.h)
 * every datagram sent is sealed (flag DGRAM_F_AUTH and a trailer) and
 * every datagram received is opened before anything else looks at it: one
 * that fails (no trailer, a bad tag, or a trailer when we have no key)
 * is dropped and counted (auth_failures) before it can touch a window, a
 * reorder slot, a stream or an incarnation; one that passes but repeats
 * a packet number of its sender is dropped as a replay.
 */
#ifndef COLLS_DAEMON_REL_H
#define COLLS_DAEMON_REL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "daemon/auth.h"
#include "daemon/stats.h"

struct rel;

struct rel_config {
    size_t mtu;                /* bytes of UDP payload per datagram (1472) */
    size_t max_message;        /* largest message accepted (256 MiB) */
    unsigned window;           /* datagrams in flight per peer (1024) */
    uint64_t rto_min_us;       /* 200 ms in RFC 6298; lower on a LAN (5 ms) */
    uint64_t rto_max_us;       /* 60 s cap; backoff doubles up to it */
    uint64_t rto_init_us;      /* before the first RTT sample (200 ms) */
    uint64_t ack_delay_us;     /* delayed ack (200 us) */
    uint64_t rate_bps;         /* pacing limit per peer, bytes/s; 0 = none */
    double drop, dup, reorder; /* fault injection on output, 0..1 */
    uint64_t seed;             /* fault injection random seed */
    uint64_t secret;           /* key of incarnation challenges; 0: random */
    struct auth *auth;         /* cluster key; NULL: no trailers (insecure) */
};

struct rel_ops {
    /* Send one datagram (header + data as iov) to addr.  Returns 0, or
       -1 when the socket would block (the transport retries later). */
    int (*send)(void *ctx, const struct sockaddr *addr, socklen_t alen,
                const struct iovec *iov, int iovcnt);
    /* A whole message from hid, in order.  msg is owned by the callee
       (free() it). */
    void (*deliver)(void *ctx, int hid, uint8_t *msg, size_t len);
    /* A peer restarted (new incarnation) or was removed: queued messages
       to it were dropped.  May be NULL. */
    void (*reset)(void *ctx, int hid, uint32_t new_inc);
    /* Optional zero copy (both or neither; udp_send_ref and udp_flush).
       send_ref is send, but it may keep a pointer to the last iov piece
       (fragment data in rel's message) instead of copying it, until
       flush returns; flush sends (or copies) whatever is batched and
       returns 0 or -1 (would block).  rel never frees or changes a
       message that send_ref referenced without calling flush first,
       and calls flush in rel_free. */
    int (*send_ref)(void *ctx, const struct sockaddr *addr, socklen_t alen,
                    const struct iovec *iov, int iovcnt);
    int (*flush)(void *ctx);
    /* Optional: room for one datagram of len bytes to addr in the send
       queue, written by rel before its next ops call; NULL: would block
       (udp_send_buf).  With it a sealed datagram is built and sealed in
       place instead of in a buffer of rel's and then copied by send. */
    uint8_t *(*send_buf)(void *ctx, const struct sockaddr *addr, socklen_t alen,
                         size_t len);
    /* A datagram from addr failed authentication and was dropped (for a
       rate-limited log line).  May be NULL. */
    void (*auth_fail)(void *ctx, const struct sockaddr *addr, socklen_t alen);
};

struct rel_peer_stats {
    uint64_t msgs_sent, msgs_recv, bytes_sent, bytes_recv;
    uint64_t dgrams_sent, dgrams_recv, retransmits, fast_retransmits;
    uint64_t timeouts, dups_recv, acks_sent, acks_recv;
    /* round trips that lost more than 1/8 of their datagrams: a queue on
       the path overflowed (relsend.c, "Congestion response") */
    uint64_t overflow_rounds;
    uint64_t auth_failures; /* from this peer's address, tag refused */
    uint64_t replays;       /* authentic, but a packet number seen before */
    uint64_t srtt_us, rttvar_us, rto_us;
    uint64_t queued_bytes;    /* accepted by rel_send, not yet acked */
    uint64_t bw_bps;          /* delivery rate estimate, bytes/s */
    uint64_t pacing_bps;      /* pacing rate in force, bytes/s; 0 none */
    uint64_t min_rtt_us;      /* least RTT sample of the last 10 s */
    uint32_t inflight;        /* datagrams sent, not yet acked */
    struct stats_hist rtt_us; /* every RTT sample from this peer's acks */
};

struct rel_stats {
    uint64_t dgrams_in, dgrams_out, bad_dgrams, unknown_src, stale_inc;
    uint64_t challenges; /* new incarnations challenged (PROBEs sent) */
    uint64_t auth_failures, replays; /* every source, known or not */
    uint64_t injected_drops, injected_dups, injected_reorders;
};

void rel_config_default(struct rel_config *cfg);

struct rel *rel_new(const struct rel_config *cfg, const struct rel_ops *ops,
                    void *ctx, int my_hid, uint32_t my_inc);
void rel_free(struct rel *r);
/* Changes our own hid (a joining daemon learns it late). */
void rel_set_hid(struct rel *r, int my_hid);
/* Changes our own incarnation: every peer's streams are dropped (no
   reset callback) and start over under my_inc. */
void rel_set_inc(struct rel *r, uint32_t my_inc);

/* Adds or updates a peer.  inc 0: not known yet.  0 or COLLS_EINVAL. */
int rel_peer_set(struct rel *r, int hid, const struct sockaddr *addr,
                 socklen_t alen, uint32_t inc);
void rel_peer_remove(struct rel *r, int hid);

/*
 * Queues a message (iovcnt pieces, copied) to hid.  Returns 0;
 * COLLS_ENOENT for an unknown peer; COLLS_EMSGSIZE over max_message;
 * COLLS_ENOMEM.
 */
int rel_sendv(struct rel *r, int hid, const struct iovec *iov, int iovcnt,
              uint64_t now_us);
/*
 * rel_sendv with flags: REL_SEND_ACKNOW, the message will have no reply
 * to carry its ack (a heartbeat), so its last datagram asks for an ack at
 * once (DGRAM_F_ACKNOW): the receiver acks in the wake-up that brought
 * it, or at the end of its receive batch, instead of ack_delay_us later
 * in a wake-up of its own.
 */
enum { REL_SEND_ACKNOW = 1u << 0 };
int rel_sendvf(struct rel *r, int hid, const struct iovec *iov, int iovcnt,
               unsigned flags, uint64_t now_us);

/* Bytes queued to hid and not yet acknowledged (for backpressure). */
uint64_t rel_queued(const struct rel *r, int hid);

/*
 * Processes one received datagram from addr.  Unknown sources, bad
 * headers and stale incarnations are dropped and counted.  May call
 * ops->deliver and ops->send.
 */
void rel_input(struct rel *r, const struct sockaddr *from, socklen_t alen,
               const uint8_t *dgram, size_t len, uint64_t now_us);

/*
 * A receive batch: the datagrams given to rel_input between these two
 * came together (one recvmmsg).  Their in-order acks are sent once, at
 * rel_input_end (and at least every REL_ACK_BATCH large datagrams),
 * instead of after every second one; gaps and duplicates are still acked
 * at once.  Without them every datagram is its own batch.
 */
void rel_input_begin(struct rel *r);
void rel_input_end(struct rel *r);

/* Runs retransmissions, delayed acks and paced sends due by now_us. */
void rel_timer(struct rel *r, uint64_t now_us);
/* Absolute time of the next thing rel_timer has to do; UINT64_MAX: none. */
uint64_t rel_next_timeout(const struct rel *r);
/* The earliest of those that is a paced send (UINT64_MAX: none): the one
   deadline whose lateness costs throughput; acks, probes and
   retransmissions late by a few ms only delay recovery. */
uint64_t rel_next_pace(const struct rel *r);
/* Retries sends that got -1 from ops->send (the socket is writable). */
void rel_writable(struct rel *r, uint64_t now_us);
/* 1 while a send got -1 and rel_writable (or rel_timer) has not run
   since: nothing is sent until then, whatever is queued. */
int rel_blocked(const struct rel *r);

/* A datagram from addr that is not the transport's (a join datagram)
   failed authentication: counted and reported as rel_input's are. */
void rel_auth_failed(struct rel *r, const struct sockaddr *from,
                     socklen_t alen);

/* Last time (us) a datagram from hid arrived; 0 never. */
uint64_t rel_last_heard(const struct rel *r, int hid);
int rel_peer_stats(const struct rel *r, int hid, struct rel_peer_stats *st);
void rel_stats(const struct rel *r, struct rel_stats *st);

#endif
