/*
 * bytes.h -- explicit big-endian get/put helpers for wire headers.
 *
 * Wire headers are never read or written by copying structs: every field
 * goes through one of these, so alignment and byte order never matter.
 * Our wire formats are big-endian; get_le64 is for algorithms defined on
 * little-endian words (SipHash).
 */
#ifndef COLLS_PROTO_BYTES_H
#define COLLS_PROTO_BYTES_H

#include <stdint.h>

static inline void
put_u8(uint8_t *p, uint8_t v)
{
    p[0] = v;
}

static inline void
put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void
put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void
put_u64(uint8_t *p, uint64_t v)
{
    put_u32(p, (uint32_t)(v >> 32));
    put_u32(p + 4, (uint32_t)v);
}

static inline uint8_t
get_u8(const uint8_t *p)
{
    return p[0];
}

static inline uint16_t
get_u16(const uint8_t *p)
{
    return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t
get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           (uint32_t)p[3];
}

static inline uint64_t
get_u64(const uint8_t *p)
{
    return (uint64_t)get_u32(p) << 32 | get_u32(p + 4);
}

static inline uint64_t
get_le64(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
           (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
           (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

#endif
