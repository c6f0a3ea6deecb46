/*
 * buf.c -- a growable byte buffer with a read offset.
 *
 * Invariants: off <= len <= cap; data is NULL exactly when cap is 0.  Bytes
 * [off, len) are unread, [len, cap) are free.  Nothing here aborts: every
 * size computation is checked for overflow and allocation failure is
 * COLLS_ENOMEM with the buffer left as it was.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "proto/buf.h"

/* Smallest allocation; keeps tiny appends from reallocating often. */
#define BUF_MIN_CAP 256

void
buf_init(struct buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->off = 0;
    b->cap = 0;
}

void
buf_free(struct buf *b)
{
    free(b->data);
    buf_init(b);
}

void
buf_compact(struct buf *b)
{
    size_t avail = b->len - b->off;

    if (b->off == 0)
        return;
    if (avail > 0)
        memmove(b->data, b->data + b->off, avail);
    b->len = avail;
    b->off = 0;
}

/*
 * Makes room for extra bytes after len.  When the consumed prefix is at
 * least as large as the unread bytes and compaction alone makes room, the
 * unread bytes are moved to the front (the move costs no more than what was
 * consumed, so it is amortised).  Otherwise the capacity at least doubles,
 * and more until the unread bytes plus extra fit, and the buffer is
 * compacted on the way.
 */
int
buf_reserve(struct buf *b, size_t extra)
{
    size_t avail = b->len - b->off;
    size_t need, ncap;
    uint8_t *p;

    if (extra <= b->cap - b->len)
        return 0;
    if (extra > SIZE_MAX - avail)
        return COLLS_ENOMEM;
    need = avail + extra;
    if (need <= b->cap && b->off >= avail) {
        buf_compact(b);
        return 0;
    }
    /* At least double, so that growth is amortised, and at least need. */
    if (b->cap < BUF_MIN_CAP)
        ncap = BUF_MIN_CAP;
    else if (b->cap > SIZE_MAX / 2)
        ncap = SIZE_MAX;
    else
        ncap = b->cap * 2;
    while (ncap < need)
        ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    /* Compact first so realloc copies only the unread bytes. */
    buf_compact(b);
    p = realloc(b->data, ncap);
    if (p == NULL)
        return COLLS_ENOMEM;
    b->data = p;
    b->cap = ncap;
    return 0;
}

int
buf_append(struct buf *b, const void *p, size_t n)
{
    int rc;

    if (n == 0)
        return 0;
    rc = buf_reserve(b, n);
    if (rc != 0)
        return rc;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

/*
 * Marks n bytes consumed (at most what is available).  When everything has
 * been read, the offsets go back to the front so the memory is reused
 * without a move.
 */
void
buf_consume(struct buf *b, size_t n)
{
    size_t avail = b->len - b->off;

    b->off += n < avail ? n : avail;
    if (b->off == b->len) {
        b->off = 0;
        b->len = 0;
    }
}

void
buf_reset(struct buf *b)
{
    b->len = 0;
    b->off = 0;
}
