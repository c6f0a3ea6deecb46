/*
 * mix.h -- splitmix64's finaliser, the hash the checkers (coll-check,
 * bo-check) derive every input item from, so that any rank can compute
 * any other rank's input and the serial reference without a message.
 */
#ifndef COLLS_TESTS_MIX_H
#define COLLS_TESTS_MIX_H

#include <stdint.h>

static inline uint64_t
mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

#endif
