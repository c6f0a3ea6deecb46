/*
 * siphash.h -- SipHash-2-4 (Aumasson and Bernstein, 2012), a keyed
 * pseudo-random function with a 128-bit key and a 64-bit output.
 *
 * The daemon's stateless challenges (join cookies in host.c, incarnation
 * nonces in rel.c) are SipHash of what they vouch for under a key that
 * never leaves the process: someone who sees any number of them learns
 * nothing that lets them compute another.  So are the direct route's
 * tickets, under a task's direct key (docs/protocol.md, "Task <-> task").
 */
#ifndef COLLS_PROTO_SIPHASH_H
#define COLLS_PROTO_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define SIPHASH_KEY_LEN 16

uint64_t siphash24(const uint8_t key[SIPHASH_KEY_LEN], const void *data,
                   size_t len);

/*
 * The ticket task `from' shows task `to' when it opens a direct
 * connection (DIRECT_HELLO): SipHash of a label and both tids under to's
 * direct key, which only to and its daemon know.  to's daemon computes it
 * for the task that asks for to's address (ROUTE_REP), which its own
 * daemon names; a task cannot ask in another's name.  Written as 8 bytes,
 * big-endian (COLLS_TICKET_LEN).
 */
#define COLLS_TICKET_LEN 8
uint64_t colls_direct_ticket(const uint8_t key[SIPHASH_KEY_LEN], uint32_t from,
                             uint32_t to);

#endif
