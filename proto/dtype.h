/*
 * dtype.h -- datatypes, byte order, and the XDR and RAW data encodings.
 *
 * XDR (RFC 4506, COLLS_ENC_DEFAULT) is big-endian with 4-byte units:
 *   COLLS_BYTE               opaque: the bytes, then zero padding to a
 *                            multiple of 4 (per encode call)
 *   INT8/INT16, UINT8/UINT16 widened to a 4-byte int / unsigned int
 *   INT32/UINT32             4-byte int / unsigned int
 *   INT64/UINT64             8-byte hyper / unsigned hyper
 *   FLOAT, DOUBLE            IEEE 754 single / double, big-endian
 * Decoding checks what it reads: a widened value out of its type's range or
 * non-zero padding is COLLS_EPROTO.
 *
 * RAW (COLLS_ENC_RAW and COLLS_ENC_INPLACE) is the sender's native bytes;
 * the envelope records the sender's byte order and the receiver converts
 * only when its own order differs ("receiver makes right").
 */
#ifndef COLLS_PROTO_DTYPE_H
#define COLLS_PROTO_DTYPE_H

#include <stddef.h>
#include <stdint.h>

/* 1 if dtype is one of COLLS_BYTE .. COLLS_DOUBLE. */
int dtype_valid(int dtype);
/* Size in bytes of one item in memory; 0 for an invalid dtype. */
size_t dtype_size(int dtype);
/* "byte", "int8", ..., "double"; "?" for an invalid dtype. */
const char *dtype_name(int dtype);
/* COLLS_ORDER_LITTLE or COLLS_ORDER_BIG for this machine. */
int dtype_native_order(void);

/* Reverses the bytes of each of count items of dtype, in place. */
void dtype_swap(int dtype, void *buf, size_t count);

/*
 * Bytes that xdr_encode() writes for count items, padding included.
 * Returns 0 and sets *out, or COLLS_EDTYPE / COLLS_EMSGSIZE (overflow).
 */
int xdr_size(int dtype, size_t count, size_t *out);

/*
 * Encodes count items of dtype from src into dst (cap bytes).  Returns 0
 * and sets *written; COLLS_ENOBUFS if cap is too small; COLLS_EDTYPE.
 */
int xdr_encode(int dtype, const void *src, size_t count, uint8_t *dst,
               size_t cap, size_t *written);

/*
 * Decodes count items of dtype from src (len bytes available) into dst.
 * Returns 0 and sets *consumed; COLLS_EPROTO if len is too short or a value
 * is invalid (range, padding); COLLS_EDTYPE.
 */
int xdr_decode(int dtype, const uint8_t *src, size_t len, void *dst,
               size_t count, size_t *consumed);

/*
 * Copies count items of dtype from a RAW payload written in byte order
 * src_order into dst in native order.  Returns 0; COLLS_EPROTO if len is
 * shorter than count items; COLLS_EDTYPE; COLLS_EINVAL for a bad order.
 */
int raw_decode(int dtype, int src_order, const uint8_t *src, size_t len,
               void *dst, size_t count);

#endif
