/*
 * fpc.h -- FPC lossless compression of double arrays (Burtscher and
 * Ratanaworabhan, "FPC: A High-Speed Compressor for Double-Precision
 * Floating-Point Data", IEEE TC 2009).
 *
 * Two predictors (FCM and DFCM, hash tables of 2^table_bits entries) guess
 * each value; the value is XORed with the closer guess, and a 4-bit code
 * (predictor choice + leading-zero-byte count) plus the remaining residual
 * bytes are stored.  Output is a sequence of independent blocks, each
 * decodable on its own (pipelined collectives forward them segment by
 * segment).  The stream format is byte-order independent.
 *
 * Worst case: fpc_bound(n, block) bytes -- per block a small header plus
 * n*8 + ceil(n/2) bytes, i.e. at most 1/16 growth.
 */
#ifndef COLLS_PROTO_FPC_H
#define COLLS_PROTO_FPC_H

#include <stddef.h>
#include <stdint.h>

#define FPC_DEFAULT_TABLE_BITS 16
#define FPC_MIN_TABLE_BITS     4
#define FPC_MAX_TABLE_BITS     24
#define FPC_DEFAULT_BLOCK      (64u * 1024) /* doubles per block */

/* Largest output of fpc_compress() for n doubles in blocks of block. */
size_t fpc_bound(size_t n, size_t block);

/*
 * Compresses n doubles from in into out (cap bytes), in independent blocks
 * of block doubles (0: FPC_DEFAULT_BLOCK).  Returns 0 and sets *outlen;
 * COLLS_EINVAL for table_bits out of range; COLLS_ENOBUFS if cap is short
 * (cap >= fpc_bound() never is); COLLS_ENOMEM.
 */
int fpc_compress(const double *in, size_t n, unsigned table_bits, size_t block,
                 uint8_t *out, size_t cap, size_t *outlen);

/*
 * Decompresses a stream of blocks (len bytes) into out (room for cap
 * doubles).  Returns 0 and sets *n_out; COLLS_EBADMSG for a malformed or
 * truncated stream; COLLS_ENOBUFS if the data would exceed cap.
 * Never allocates more than the tables the stream's header asks for, and
 * table_bits is checked against FPC_MAX_TABLE_BITS first.
 */
int fpc_decompress(const uint8_t *in, size_t len, double *out, size_t cap,
                   size_t *n_out);

/* Number of doubles the stream holds, read from block headers only. */
int fpc_count(const uint8_t *in, size_t len, size_t *n);

#endif
