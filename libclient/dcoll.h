/*
 * dcoll.h -- what the direct collectives (dcoll.c) share with the
 * hierarchical ones (hcoll.c): one collective's state and its messages
 * to and from other members.  Part of the API layer (internal.h).
 */
#ifndef COLLS_LIBCLIENT_DCOLL_H
#define COLLS_LIBCLIENT_DCOLL_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#define DCOLL_HDR COLLS__LIB_HDR

/* Most messages one member sends in one direct collective: a round's or a
   binomial child's, ceil(log2 P) at most, P <= 2^32. */
#define DCOLL_SENDS_MAX 33

/*
 * A receive posted before its message comes, so that a large payload is
 * read straight into its place (colls__dcoll_claim) instead of into a
 * buffer of its own and copied.  While live and neither claimed nor
 * done, r.link is in c->dcoll_posted.
 */
struct dcoll_post {
    struct colls_req r; /* r.src, r.buf, r.cap: from whom, where, how much */
    uint64_t gid, seq;
    uint32_t step;
    int live; /* posted and not yet taken by dcoll_recv or dcoll_unpost */
};

/* Posts a collective has room for without allocating. */
#define DCOLL_POSTS_INLINE 2

/* A clear-to-send this member owes a sender (dcoll_cts): its header
   stays until the collective's sends are done. */
struct dcoll_cts {
    struct dcoll_cts *next;
    uint8_t h[DCOLL_HDR];
};

/* One direct collective of one member. */
struct dcoll {
    struct colls_group *g;
    uint64_t seq;
    struct colls_req sent;     /* every send of this collective */
    uint8_t (*hdr)[DCOLL_HDR]; /* a header per send: hdr0 or allocated */
    uint8_t hdr0[DCOLL_SENDS_MAX][DCOLL_HDR];
    unsigned nsent, maxsent;
    struct dcoll_post *post; /* post0 or allocated */
    struct dcoll_post post0[DCOLL_POSTS_INLINE];
    unsigned maxpost;
    struct dcoll_cts *cts; /* sent by this collective, freed at its end */
};

/* Starts a direct collective of g (takes the group's next seq). */
void colls__dc_begin(struct dcoll *d, struct colls_group *g);
/* Makes room for n sends in all (more than DCOLL_SENDS_MAX: the headers
   are allocated).  0 or COLLS_ENOMEM. */
int colls__dc_room(struct dcoll *d, size_t n);
/* Sends len bytes at data (which must stay put until the collective's
   sends are done) to rank r as step.  0 or a COLLS_E* code. */
int colls__dc_send(struct dcoll *d, int r, uint32_t step, const void *data,
                   size_t len);
/* Waits for step's message from rank r, exactly len bytes, into out.  0
   or a COLLS_E* code (COLLS_ECOUNT: another length). */
int colls__dc_recv(struct dcoll *d, int r, uint32_t step, void *out,
                   size_t len);
/* Ends it: every send written; rc or the first send's failure (an ABORT
   to the others on a death or a count mismatch). */
int colls__dc_end(struct dcoll *d, int rc);
/* The status of an ABORT of g's collective seq (or of an earlier one for
   a death), or 0. */
int colls__dc_aborted(colls_t *c, const struct colls_group *g, uint64_t seq);
/* Swaps bytes of items of dtype between native and little-endian order. */
void colls__dc_le(int dtype, void *buf, size_t bytes);
/* *copy: a little-endian copy of bytes at src (items of dtype), or NULL
   when src travels as it is (a little-endian machine, bytes, nothing).
   0 or COLLS_ENOMEM. */
int colls__dc_le_copy(int dtype, const void *src, size_t bytes, uint8_t **copy);

#endif
