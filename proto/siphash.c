/*
 * siphash.c -- SipHash-2-4 (siphash.h): 2 compression rounds per 8-byte
 * word, 4 finalisation rounds; words and key are read little-endian.
 *
 * Owns nothing.  May call: proto/bytes.h.
 */
#include <string.h>

#include "proto/siphash.h"
#include "proto/bytes.h"

static uint64_t
sip_rotl(uint64_t x, unsigned b)
{
    return x << b | x >> (64 - b);
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
    uint64_t k0 = get_le64(key), k1 = get_le64(key + 8);
    uint8_t last[8] = {0};
    struct sip_state s = {
        k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull,
        k0 ^ 0x6c7967656e657261ull, k1 ^ 0x7465646279746573ull};
    size_t i;

    for (i = 0; i + 8 <= len; i += 8)
        sip_word(&s, get_le64(p + i));
    /* the last word: the remaining bytes, zero-padded, and len mod 256
       in the top byte */
    if (len > i)
        memcpy(last, p + i, len - i);
    last[7] = (uint8_t)len;
    sip_word(&s, get_le64(last));
    s.v2 ^= 0xff;
    sip_rounds(&s, 4);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

uint64_t
colls_direct_ticket(const uint8_t key[SIPHASH_KEY_LEN], uint32_t from,
                    uint32_t to)
{
    uint8_t m[16] = "collsdt1";

    put_u32(m + 8, from);
    put_u32(m + 12, to);
    return siphash24(key, m, sizeof(m));
}
