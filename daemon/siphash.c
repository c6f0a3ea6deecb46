/*
 * siphash.c -- SipHash-2-4 (siphash.h): 2 compression rounds per 8-byte
 * word, 4 finalisation rounds; words and key are read little-endian.
 */
#include "daemon/siphash.h"

static uint64_t
sip_rotl(uint64_t x, unsigned b)
{
    return x << b | x >> (64 - b);
}

static uint64_t
sip_le64(const uint8_t *p)
{
    uint64_t v = 0;
    int i;

    for (i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

struct sip_state {
    uint64_t v0, v1, v2, v3;
};

static void
sip_rounds(struct sip_state *s, int n)
{
    while (n-- > 0) {
        s->v0 += s->v1;
        s->v1 = sip_rotl(s->v1, 13);
        s->v1 ^= s->v0;
        s->v0 = sip_rotl(s->v0, 32);
        s->v2 += s->v3;
        s->v3 = sip_rotl(s->v3, 16);
        s->v3 ^= s->v2;
        s->v0 += s->v3;
        s->v3 = sip_rotl(s->v3, 21);
        s->v3 ^= s->v0;
        s->v2 += s->v1;
        s->v1 = sip_rotl(s->v1, 17);
        s->v1 ^= s->v2;
        s->v2 = sip_rotl(s->v2, 32);
    }
}

static void
sip_word(struct sip_state *s, uint64_t m)
{
    s->v3 ^= m;
    sip_rounds(s, 2);
    s->v0 ^= m;
}

uint64_t
siphash24(const uint8_t key[SIPHASH_KEY_LEN], const void *data, size_t len)
{
    const uint8_t *p = data;
    uint64_t k0 = sip_le64(key), k1 = sip_le64(key + 8), last;
    struct sip_state s = {
        k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull,
        k0 ^ 0x6c7967656e657261ull, k1 ^ 0x7465646279746573ull};
    size_t i, rest = len % 8;

    for (i = 0; i + 8 <= len; i += 8)
        sip_word(&s, sip_le64(p + i));
    /* the last word: the remaining bytes, and len mod 256 on top */
    last = (uint64_t)(len & 0xff) << 56;
    while (rest-- > 0)
        last |= (uint64_t)p[i + rest] << (8 * rest);
    sip_word(&s, last);
    s.v2 ^= 0xff;
    sip_rounds(&s, 4);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}
