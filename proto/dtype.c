/*
 * dtype.c -- datatypes, byte swapping, and the XDR and RAW data encodings.
 *
 * One table describes every datatype (name, size in memory, size of one
 * item in XDR).  The conversions are plain loops over items that the
 * compiler vectorises: each item is loaded and stored with memcpy (so wire
 * buffers need no alignment) and reversed with __builtin_bswap*; when no
 * reversal is needed the whole buffer is one memcpy.  On x86-64 the loops
 * are also compiled for SSSE3 and AVX2 (target_clones, chosen once at load
 * time), because baseline SSE2 has no byte shuffle and the scalar loop
 * reaches only about 0.4x memcpy bandwidth on cache-resident buffers.
 *
 * Sizes are computed with overflow checks: count * size never wraps.
 * Decoders validate everything they read (length, range of widened values,
 * zero padding) and report the first problem as COLLS_EPROTO; when they
 * fail, the contents of dst are unspecified.  A count whose encoded size
 * does not fit in size_t cannot be present in any input, so decoding it is
 * COLLS_EPROTO ("too short"), while xdr_size() reports it as
 * COLLS_EMSGSIZE.  Source and destination buffers must not overlap.
 */
#include <string.h>

#include "colls.h"
#include "proto/dtype.h"

#if !defined(__BYTE_ORDER__) || !defined(__ORDER_LITTLE_ENDIAN__)
#error "dtype.c needs the compiler's __BYTE_ORDER__ macro"
#endif
#define DTYPE_LITTLE (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

/*
 * How the hot loops are compiled.  configure's CFLAGS (default -g -O2) come
 * after the Makefile's -O3 on the command line and win, and GCC at -O2
 * vectorises only loops whose trip count is a known multiple of the vector
 * length, so GCC is asked for -O3 on these functions alone.  On x86-64 ELF
 * they are also cloned for newer instruction sets, the best clone being
 * chosen once at load time (ifunc).
 */
#if defined(__GNUC__) && !defined(__clang__)
#define DTYPE_OPT __attribute__((optimize("O3")))
#else
#define DTYPE_OPT
#endif
#if defined(__x86_64__) && defined(__ELF__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define DTYPE_CLONES __attribute__((target_clones("avx2", "ssse3", "default")))
#endif
#endif
#ifndef DTYPE_CLONES
#define DTYPE_CLONES
#endif
#define DTYPE_KERNEL DTYPE_OPT DTYPE_CLONES

static const struct {
    const char *name;
    unsigned char size; /* bytes in memory */
    unsigned char wire; /* bytes of one item in XDR (BYTE: 1, then pad) */
} dtype_info[COLLS_DTYPE_MAX] = {
    [COLLS_BYTE] = {"byte", 1, 1},     [COLLS_INT8] = {"int8", 1, 4},
    [COLLS_INT16] = {"int16", 2, 4},   [COLLS_INT32] = {"int32", 4, 4},
    [COLLS_INT64] = {"int64", 8, 8},   [COLLS_UINT8] = {"uint8", 1, 4},
    [COLLS_UINT16] = {"uint16", 2, 4}, [COLLS_UINT32] = {"uint32", 4, 4},
    [COLLS_UINT64] = {"uint64", 8, 8}, [COLLS_FLOAT] = {"float", 4, 4},
    [COLLS_DOUBLE] = {"double", 8, 8},
};

int
dtype_valid(int dtype)
{
    return dtype >= 0 && dtype < COLLS_DTYPE_MAX;
}

size_t
dtype_size(int dtype)
{
    return dtype_valid(dtype) ? dtype_info[dtype].size : 0;
}

const char *
dtype_name(int dtype)
{
    return dtype_valid(dtype) ? dtype_info[dtype].name : "?";
}

int
dtype_native_order(void)
{
    return DTYPE_LITTLE ? COLLS_ORDER_LITTLE : COLLS_ORDER_BIG;
}

/* Native <-> big-endian for one 32-bit word (an involution). */
static inline uint32_t
dtype_be32(uint32_t v)
{
    return DTYPE_LITTLE ? __builtin_bswap32(v) : v;
}

/*
 * The byte-reversal kernels, for 2-, 4- and 8-byte items: copy_swapN copies
 * n items from src to dst reversing each (dst and src must not overlap),
 * swapN reverses n items in place.
 */
#define DTYPE_SWAP_KERNELS(bits, utype, bswap)                                 \
    DTYPE_KERNEL static void dtype_copy_swap##bits(                            \
        uint8_t *restrict dst, const uint8_t *restrict src, size_t n)          \
    {                                                                          \
        for (size_t i = 0; i < n; i++) {                                       \
            utype v;                                                           \
            memcpy(&v, src + i * sizeof(v), sizeof(v));                        \
            v = bswap(v);                                                      \
            memcpy(dst + i * sizeof(v), &v, sizeof(v));                        \
        }                                                                      \
    }                                                                          \
    DTYPE_KERNEL static void dtype_swap##bits(uint8_t *p, size_t n)            \
    {                                                                          \
        for (size_t i = 0; i < n; i++) {                                       \
            utype v;                                                           \
            memcpy(&v, p + i * sizeof(v), sizeof(v));                          \
            v = bswap(v);                                                      \
            memcpy(p + i * sizeof(v), &v, sizeof(v));                          \
        }                                                                      \
    }

DTYPE_SWAP_KERNELS(16, uint16_t, __builtin_bswap16)
DTYPE_SWAP_KERNELS(32, uint32_t, __builtin_bswap32)
DTYPE_SWAP_KERNELS(64, uint64_t, __builtin_bswap64)

/*
 * Copies n items of size bytes from src to dst, reversing each item's bytes
 * when swap is set.
 */
static void
dtype_copy(uint8_t *dst, const uint8_t *src, size_t n, size_t size, int swap)
{
    if (n == 0)
        return;
    if (!swap || size == 1) {
        memcpy(dst, src, n * size);
        return;
    }
    switch (size) {
    case 2:
        dtype_copy_swap16(dst, src, n);
        break;
    case 4:
        dtype_copy_swap32(dst, src, n);
        break;
    default:
        dtype_copy_swap64(dst, src, n);
        break;
    }
}

void
dtype_swap(int dtype, void *buf, size_t count)
{
    if (!dtype_valid(dtype) || count == 0)
        return;
    switch (dtype_info[dtype].size) {
    case 2:
        dtype_swap16(buf, count);
        break;
    case 4:
        dtype_swap32(buf, count);
        break;
    case 8:
        dtype_swap64(buf, count);
        break;
    default:
        break;
    }
}

/*
 * XDR for the 8- and 16-bit integers: each item is widened to a 4-byte
 * big-endian int (sign-extended through wtype) or unsigned int.  The
 * decoder accepts a word only if it is a value of ctype, i.e. if
 * word - lo (mod 2^32) <= span; it checks every word without branching and
 * reports at the end.
 */
#define DTYPE_XDR_NARROW(name, ctype, wtype, lo, span)                         \
    DTYPE_KERNEL static void dtype_xdr_enc_##name(                             \
        uint8_t *restrict dst, const uint8_t *restrict src, size_t n)          \
    {                                                                          \
        for (size_t i = 0; i < n; i++) {                                       \
            ctype x;                                                           \
            memcpy(&x, src + i * sizeof(x), sizeof(x));                        \
            uint32_t v = dtype_be32((uint32_t)(wtype)x);                       \
            memcpy(dst + 4 * i, &v, 4);                                        \
        }                                                                      \
    }                                                                          \
    DTYPE_KERNEL static int dtype_xdr_dec_##name(                              \
        uint8_t *restrict dst, const uint8_t *restrict src, size_t n)          \
    {                                                                          \
        uint32_t bad = 0;                                                      \
        for (size_t i = 0; i < n; i++) {                                       \
            uint32_t v;                                                        \
            memcpy(&v, src + 4 * i, 4);                                        \
            v = dtype_be32(v);                                                 \
            bad |= (uint32_t)(v - (uint32_t)(lo)) > (uint32_t)(span);          \
            ctype x = (ctype)v;                                                \
            memcpy(dst + i * sizeof(x), &x, sizeof(x));                        \
        }                                                                      \
        return bad ? COLLS_EPROTO : 0;                                         \
    }

DTYPE_XDR_NARROW(int8, int8_t, int32_t, INT8_MIN, UINT8_MAX)
DTYPE_XDR_NARROW(uint8, uint8_t, uint32_t, 0, UINT8_MAX)
DTYPE_XDR_NARROW(int16, int16_t, int32_t, INT16_MIN, UINT16_MAX)
DTYPE_XDR_NARROW(uint16, uint16_t, uint32_t, 0, UINT16_MAX)

int
xdr_size(int dtype, size_t count, size_t *out)
{
    size_t wire;

    if (!dtype_valid(dtype))
        return COLLS_EDTYPE;
    wire = dtype_info[dtype].wire;
    if (dtype == COLLS_BYTE) {
        if (count > SIZE_MAX - 3)
            return COLLS_EMSGSIZE;
        *out = (count + 3) & ~(size_t)3;
        return 0;
    }
    if (count > SIZE_MAX / wire)
        return COLLS_EMSGSIZE;
    *out = count * wire;
    return 0;
}

int
xdr_encode(int dtype, const void *src, size_t count, uint8_t *dst, size_t cap,
           size_t *written)
{
    const uint8_t *s = src;
    size_t need;
    int rc;

    if ((rc = xdr_size(dtype, count, &need)) != 0)
        return rc;
    if (cap < need)
        return COLLS_ENOBUFS;
    if (count == 0)
        goto out;
    switch (dtype) {
    case COLLS_BYTE:
        memcpy(dst, s, count);
        memset(dst + count, 0, need - count);
        break;
    case COLLS_INT8:
        dtype_xdr_enc_int8(dst, s, count);
        break;
    case COLLS_UINT8:
        dtype_xdr_enc_uint8(dst, s, count);
        break;
    case COLLS_INT16:
        dtype_xdr_enc_int16(dst, s, count);
        break;
    case COLLS_UINT16:
        dtype_xdr_enc_uint16(dst, s, count);
        break;
    default: /* 4- and 8-byte items: big-endian copies */
        dtype_copy(dst, s, count, dtype_info[dtype].size, DTYPE_LITTLE);
        break;
    }
out:
    if (written)
        *written = need;
    return 0;
}

int
xdr_decode(int dtype, const uint8_t *src, size_t len, void *dst, size_t count,
           size_t *consumed)
{
    uint8_t *d = dst;
    size_t need;
    int rc = 0;

    if (!dtype_valid(dtype))
        return COLLS_EDTYPE;
    if (xdr_size(dtype, count, &need) != 0 || len < need)
        return COLLS_EPROTO;
    if (count == 0)
        goto out;
    switch (dtype) {
    case COLLS_BYTE:
        memcpy(d, src, count);
        for (size_t i = count; i < need; i++)
            if (src[i] != 0)
                return COLLS_EPROTO;
        break;
    case COLLS_INT8:
        rc = dtype_xdr_dec_int8(d, src, count);
        break;
    case COLLS_UINT8:
        rc = dtype_xdr_dec_uint8(d, src, count);
        break;
    case COLLS_INT16:
        rc = dtype_xdr_dec_int16(d, src, count);
        break;
    case COLLS_UINT16:
        rc = dtype_xdr_dec_uint16(d, src, count);
        break;
    default:
        dtype_copy(d, src, count, dtype_info[dtype].size, DTYPE_LITTLE);
        break;
    }
    if (rc != 0)
        return rc;
out:
    if (consumed)
        *consumed = need;
    return 0;
}

int
raw_decode(int dtype, int src_order, const uint8_t *src, size_t len, void *dst,
           size_t count)
{
    size_t size;

    if (!dtype_valid(dtype))
        return COLLS_EDTYPE;
    if (src_order != COLLS_ORDER_LITTLE && src_order != COLLS_ORDER_BIG)
        return COLLS_EINVAL;
    size = dtype_info[dtype].size;
    if (count > SIZE_MAX / size || len < count * size)
        return COLLS_EPROTO;
    dtype_copy(dst, src, count, size, src_order != dtype_native_order());
    return 0;
}
