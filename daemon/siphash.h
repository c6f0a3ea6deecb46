/*
 * siphash.h -- SipHash-2-4 (Aumasson and Bernstein, 2012), a keyed
 * pseudo-random function with a 128-bit key and a 64-bit output.
 *
 * The daemon's stateless challenges (join cookies in host.c, incarnation
 * nonces in rel.c) are SipHash of what they vouch for under a key that
 * never leaves the process: someone who sees any number of them learns
 * nothing that lets them compute another.
 */
#ifndef COLLS_DAEMON_SIPHASH_H
#define COLLS_DAEMON_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define SIPHASH_KEY_LEN 16

uint64_t siphash24(const uint8_t key[SIPHASH_KEY_LEN], const void *data,
                   size_t len);

#endif
