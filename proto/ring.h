/*
 * ring.h -- the shared-memory channel between a task and its daemon:
 * layout of the mapping and the single-producer single-consumer byte
 * rings in it (ring.c).  No I/O: the callers (daemon/shm.c,
 * libclient/shm.c) own the memfd, the mapping and the doorbells.
 *
 * The mapping is SHM_MAP_LEN bytes: one page of header, then the request
 * ring (task -> daemon) and the completion ring (daemon -> task), each
 * SHM_RING_SIZE bytes.  A ring carries exactly the byte stream the Unix
 * socket would: frames of proto/frame.h, back to back, wrapping around.
 *
 * Who writes what: the producer writes the data bytes and its head, the
 * consumer its tail; head and tail count bytes since the start and only
 * grow.  The "sleeping" flag of a ring is set by its consumer before it
 * sleeps and cleared by the producer, who then rings the consumer's
 * doorbell; "waiting" is set by a producer short of space and cleared by
 * the consumer, who then rings the producer's doorbell.  Each side keeps
 * its own index in private memory (struct ring) and only ever reads the
 * other side's from the mapping, checked: an index that moved backwards
 * or past the ring's bounds makes every call return RING_CORRUPT.
 */
#ifndef COLLS_PROTO_RING_H
#define COLLS_PROTO_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SHM_MAGIC     UINT64_C(0x434f4c4c5353484d) /* "COLLSSHM" */
#define SHM_VERSION   1u                           /* bump on any change */
#define SHM_HDR_LEN   4096u
#define SHM_RING_SIZE (1024u * 1024) /* a power of two */
#define SHM_MAP_LEN   (SHM_HDR_LEN + 2u * SHM_RING_SIZE)
#define SHM_ACCEPTED  UINT32_C(0x4f4b4159) /* the daemon took the channel */
#define RING_CORRUPT  (-1)

/* The shared part of one ring: each index on its own cache line. */
struct ring_ctl {
    _Atomic uint64_t head; /* producer: bytes written since the start */
    uint8_t pad0[56];
    _Atomic uint64_t tail; /* consumer: bytes read since the start */
    uint8_t pad1[56];
    _Atomic uint32_t sleeping; /* consumer asleep: ring its doorbell */
    _Atomic uint32_t waiting;  /* producer short of space: ring its */
    uint8_t pad2[56];
};

/* The header page.  The task writes magic, version and sizes before it
   passes the memfd; the daemon checks the memfd's size and seals, and the
   magic and version (in its own byte order: a task of the other order is
   refused), and writes accepted. */
struct shm_hdr {
    uint64_t magic;
    uint32_t version;
    uint32_t ring_size;
    _Atomic uint32_t accepted; /* SHM_ACCEPTED once the daemon maps it */
    uint8_t pad[44];
    struct ring_ctl req;  /* task -> daemon */
    struct ring_ctl comp; /* daemon -> task */
};

/* One side's view of one ring. */
struct ring {
    struct ring_ctl *c;
    uint8_t *data;
    uint64_t size; /* a power of two */
    uint64_t pos;  /* own index: head if producer, tail if consumer */
    uint64_t peer; /* the other side's index as last seen (checked) */
    int producer;
    int corrupt;
};

/* Lays out a fresh mapping of SHM_MAP_LEN bytes at base (task side). */
void shm_layout_init(void *base);
/* Views of the two rings of the mapping at base for the task
   (task = 1: producer of req) or for the daemon (task = 0). */
void shm_rings(void *base, int task, struct ring *req, struct ring *comp);

void ring_init(struct ring *r, struct ring_ctl *c, uint8_t *data, uint64_t size,
               int producer);
/* Consumer: bytes readable now, or RING_CORRUPT. */
long ring_readable(struct ring *r);
/* Producer: bytes of free space now, or RING_CORRUPT. */
long ring_space(struct ring *r);
/* Consumer: copies up to len bytes out, frees them.  Bytes copied
   (0: empty) or RING_CORRUPT. */
long ring_read(struct ring *r, void *dst, size_t len);
/* Producer: copies up to len bytes in and publishes them.  Bytes copied
   (0: full) or RING_CORRUPT. */
long ring_write(struct ring *r, const void *src, size_t len);

/* Producer, after writing: 1 if the consumer sleeps (the flag is then
   cleared) and its doorbell must be rung. */
int ring_wake_consumer(struct ring *r);
/* Consumer, after reading: 1 if the producer waits for space (flag
   cleared): ring its doorbell. */
int ring_wake_producer(struct ring *r);
/* Consumer, before it sleeps: sets its flag, then looks again.  Bytes
   readable (> 0: do not sleep), 0 or RING_CORRUPT. */
long ring_sleep(struct ring *r);
/* Consumer: it is awake (clears its flag, so producers need not ring). */
void ring_awake(struct ring *r);
/* Consumer's drain step: ring_read; when empty, ring_sleep, and if bytes
   came meanwhile, ring_awake and read them.  Bytes copied, 0 (empty, the
   flag is up: sleep) or RING_CORRUPT. */
long ring_take(struct ring *r, void *dst, size_t len);
/* Producer, short of space: sets its flag, then looks again.  Free
   space (> 0: write on), 0 or RING_CORRUPT. */
long ring_wait_space(struct ring *r);

#endif
