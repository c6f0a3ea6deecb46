/*
 * ring.c -- single-producer single-consumer byte rings in shared memory
 * (ring.h).
 *
 * Ordering: a producer copies the bytes, then stores head with release;
 * the consumer loads head with acquire before it copies them out, then
 * stores tail with release, which the producer loads with acquire before
 * it reuses the space.  Doorbells: the side that publishes (bytes or
 * space) issues a full fence and then reads the peer's flag; the side
 * about to sleep sets its flag, issues a full fence and then looks at the
 * ring again.  With both fences one of the two sees the other (no lost
 * wake-up).
 *
 * Trust: the peer's index is read once per call from the mapping and
 * checked against our own before use (a consumer's view: head - tail in
 * [0, size], and head never behind the head seen last; a producer's:
 * head - tail in [0, size], tail never behind the last seen).  A bad
 * index sets r->corrupt for good.  Only indices are read from the shared
 * memory here; the bytes are copied out, and their meaning (frames) is
 * checked by the reader of the stream as for a socket.
 */
#include <string.h>

#include "proto/ring.h"

void
shm_layout_init(void *base)
{
    struct shm_hdr *h = base;

    memset(base, 0, SHM_HDR_LEN);
    h->magic = SHM_MAGIC;
    h->version = SHM_VERSION;
    h->ring_size = SHM_RING_SIZE;
    /* both consumers start asleep: the first bytes ring their doorbell */
    atomic_store(&h->req.sleeping, 1);
    atomic_store(&h->comp.sleeping, 1);
}

void
shm_rings(void *base, int task, struct ring *req, struct ring *comp)
{
    struct shm_hdr *h = base;
    uint8_t *p = base;

    ring_init(req, &h->req, p + SHM_HDR_LEN, SHM_RING_SIZE, task);
    ring_init(comp, &h->comp, p + SHM_HDR_LEN + SHM_RING_SIZE, SHM_RING_SIZE,
              !task);
}

void
ring_init(struct ring *r, struct ring_ctl *c, uint8_t *data, uint64_t size,
          int producer)
{
    r->c = c;
    r->data = data;
    r->size = size;
    r->pos = 0;
    r->peer = 0;
    r->producer = producer;
    r->corrupt = 0;
}

/* Loads and checks the other side's index; its distance from ours, or
   RING_CORRUPT. */
static long
ring_peer(struct ring *r)
{
    uint64_t v, used;

    if (r->corrupt)
        return RING_CORRUPT;
    if (r->producer) {
        v = atomic_load_explicit(&r->c->tail, memory_order_acquire);
        used = r->pos - v;
        if (used > r->size || v - r->peer > r->size || v < r->peer)
            goto bad;
    } else {
        v = atomic_load_explicit(&r->c->head, memory_order_acquire);
        used = v - r->pos;
        if (used > r->size || v < r->peer)
            goto bad;
    }
    r->peer = v;
    return (long)used;
bad:
    r->corrupt = 1;
    return RING_CORRUPT;
}

long
ring_readable(struct ring *r)
{
    return ring_peer(r);
}

long
ring_space(struct ring *r)
{
    long used = ring_peer(r);

    return used < 0 ? used : (long)(r->size - (uint64_t)used);
}

long
ring_read(struct ring *r, void *dst, size_t len)
{
    long avail = ring_peer(r);
    uint64_t off, first;

    if (avail <= 0)
        return avail;
    if (len > (size_t)avail)
        len = (size_t)avail;
    off = r->pos & (r->size - 1);
    first = r->size - off < len ? r->size - off : len;
    memcpy(dst, r->data + off, first);
    memcpy((uint8_t *)dst + first, r->data, len - first);
    r->pos += len;
    atomic_store_explicit(&r->c->tail, r->pos, memory_order_release);
    return (long)len;
}

long
ring_write(struct ring *r, const void *src, size_t len)
{
    long space = ring_space(r);
    uint64_t off, first;

    if (space <= 0)
        return space;
    if (len > (size_t)space)
        len = (size_t)space;
    off = r->pos & (r->size - 1);
    first = r->size - off < len ? r->size - off : len;
    memcpy(r->data + off, src, first);
    memcpy(r->data, (const uint8_t *)src + first, len - first);
    r->pos += len;
    atomic_store_explicit(&r->c->head, r->pos, memory_order_release);
    return (long)len;
}

int
ring_wake_consumer(struct ring *r)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&r->c->sleeping, memory_order_relaxed) == 0)
        return 0;
    return atomic_exchange(&r->c->sleeping, 0) != 0;
}

int
ring_wake_producer(struct ring *r)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&r->c->waiting, memory_order_relaxed) == 0)
        return 0;
    return atomic_exchange(&r->c->waiting, 0) != 0;
}

long
ring_sleep(struct ring *r)
{
    atomic_store_explicit(&r->c->sleeping, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    return ring_readable(r);
}

void
ring_awake(struct ring *r)
{
    atomic_store_explicit(&r->c->sleeping, 0, memory_order_relaxed);
}

long
ring_take(struct ring *r, void *dst, size_t len)
{
    long n = ring_read(r, dst, len);

    if (n != 0)
        return n;
    n = ring_sleep(r);
    if (n <= 0)
        return n;
    ring_awake(r);
    return ring_read(r, dst, len);
}

long
ring_wait_space(struct ring *r)
{
    atomic_store_explicit(&r->c->waiting, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    return ring_space(r);
}
