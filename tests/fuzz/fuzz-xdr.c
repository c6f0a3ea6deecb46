/*
 * fuzz-xdr.c -- the XDR and RAW decoders on arbitrary bytes.
 *
 * Input layout: byte 0 = datatype (low 4 bits, minus 2, so invalid types
 * come up too) and RAW byte order (bits 4-5; 2 and 3 are invalid); bytes
 * 1-2 = item count, big-endian; the rest is the payload.  The payload is
 * decoded into a buffer of exactly count items (so any overrun is caught by
 * AddressSanitizer).  When a decode succeeds, encoding the items again must
 * give back exactly the bytes it consumed (XDR is canonical once range and
 * padding are checked; RAW is the bytes, swapped when the order differs);
 * when it fails, the code must be the documented one.  Any mismatch
 * abort()s.
 */
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "proto/bytes.h"
#include "proto/dtype.h"
#include "tests/fuzz/fuzz.h"

/* XDR: decode, then re-encode and compare with the consumed prefix. */
static void
fuzz_xdr_check(int dtype, const uint8_t *p, size_t len, void *items,
               size_t count)
{
    size_t consumed = 0, need, written = 0;
    uint8_t *again;
    int rc = xdr_decode(dtype, p, len, items, count, &consumed);

    if (rc == COLLS_EPROTO)
        return;
    if (rc != 0 || xdr_size(dtype, count, &need) != 0 || consumed != need ||
        consumed > len)
        abort();
    again = malloc(need > 0 ? need : 1);
    if (again == NULL)
        return;
    if (need > 0 && xdr_encode(dtype, items, count, again, need - 1,
                               &written) != COLLS_ENOBUFS)
        abort();
    if (xdr_encode(dtype, items, count, again, need, &written) != 0 ||
        written != need || (need > 0 && memcmp(again, p, need) != 0))
        abort();
    free(again);
}

/* RAW: decode from the given order, convert back, compare. */
static void
fuzz_raw_check(int dtype, int order, const uint8_t *p, size_t len, void *items,
               size_t count)
{
    size_t bytes = count * dtype_size(dtype);
    int rc = raw_decode(dtype, order, p, len, items, count);

    if (order != COLLS_ORDER_LITTLE && order != COLLS_ORDER_BIG) {
        if (rc != COLLS_EINVAL)
            abort();
        return;
    }
    if (rc == COLLS_EPROTO && len < bytes)
        return;
    if (rc != 0)
        abort();
    if (order != dtype_native_order())
        dtype_swap(dtype, items, count);
    if (bytes > 0 && memcmp(items, p, bytes) != 0)
        abort();
}

int
fuzz_xdr(const uint8_t *data, size_t size)
{
    int dtype, order;
    size_t count, isize, consumed;
    void *items;

    if (size < 3)
        return 0;
    dtype = (data[0] & 0x0f) - 2;
    order = (data[0] >> 4) & 3;
    count = get_u16(data + 1);
    data += 3;
    size -= 3;

    isize = dtype_size(dtype);
    if (isize == 0) {
        if (dtype_valid(dtype) ||
            xdr_decode(dtype, data, size, NULL, count, &consumed) !=
                COLLS_EDTYPE ||
            raw_decode(dtype, order, data, size, NULL, count) != COLLS_EDTYPE)
            abort();
        return 0;
    }
    items = malloc(count > 0 ? count * isize : 1);
    if (items == NULL)
        return 0;
    fuzz_xdr_check(dtype, data, size, items, count);
    fuzz_raw_check(dtype, order, data, size, items, count);
    free(items);
    return 0;
}
