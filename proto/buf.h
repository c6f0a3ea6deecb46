/*
 * buf.h -- a growable byte buffer with a read offset.
 *
 * Used for stream input (bytes arrive at the end, frames are consumed from
 * off) and for building output.  Never aborts: allocation failure is
 * COLLS_ENOMEM, so the library can use it too.
 */
#ifndef COLLS_PROTO_BUF_H
#define COLLS_PROTO_BUF_H

#include <stddef.h>
#include <stdint.h>

struct buf {
    uint8_t *data;
    size_t len; /* bytes written */
    size_t off; /* bytes consumed from the front */
    size_t cap;
};

void buf_init(struct buf *b);
void buf_free(struct buf *b);
/* Ensures room for extra more bytes after len.  0 or COLLS_ENOMEM.  May
   move the unread bytes (compaction, realloc): earlier buf_head() pointers
   become invalid.  buf_append likewise. */
int buf_reserve(struct buf *b, size_t extra);
int buf_append(struct buf *b, const void *p, size_t n);
/* Marks n bytes consumed (clamped to buf_avail); resets the offsets when
   the buffer empties. */
void buf_consume(struct buf *b, size_t n);
/* Bytes available to read. */
static inline size_t
buf_avail(const struct buf *b)
{
    return b->len - b->off;
}
/* First unread byte; NULL for a buffer that never allocated. */
static inline uint8_t *
buf_head(const struct buf *b)
{
    return b->data != NULL ? b->data + b->off : NULL;
}
/* Moves unread bytes to the front. */
void buf_compact(struct buf *b);
void buf_reset(struct buf *b);

#endif
