/*
 * reduce.h -- reduction operators over typed buffers.
 *
 * Valid (operator, datatype) pairs:
 *   SUM, PROD, MIN, MAX     every datatype but COLLS_BYTE
 *   LAND, LOR, LXOR         integer datatypes (result 0 or 1)
 *   BAND, BOR, BXOR         integer datatypes and COLLS_BYTE
 * Integer SUM and PROD wrap around (computed unsigned, two's complement).
 * Floating MIN/MAX: see reduce.c's header for NaN, infinities and -0.0.
 * The loops are plain so the compiler vectorises them.
 */
#ifndef COLLS_PROTO_REDUCE_H
#define COLLS_PROTO_REDUCE_H

#include <stddef.h>

/* 0 if op applies to dtype; COLLS_EDTYPE or COLLS_EOP otherwise. */
int reduce_check(int op, int dtype);
/* "sum", "prod", ...; "?" for an invalid op. */
const char *reduce_op_name(int op);

/* inout[i] = inout[i] op in[i] for count items.  Returns reduce_check(). */
int reduce_apply(int op, int dtype, void *inout, const void *in, size_t count);

/* out[i] = a[i] op b[i]; out may alias a or b.  Returns reduce_check(). */
int reduce_apply3(int op, int dtype, void *out, const void *a, const void *b,
                  size_t count);

#endif
