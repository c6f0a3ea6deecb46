/*
 * fuzz-libmsg.c -- libcolls' own messages (tag INT_MIN, libclient/
 * internal.h) as they arrive from another task: a direct collective's
 * (libclient/dcoll.c, colls__dcoll_deliver) or a spawner's list of
 * siblings (libclient/spawn.c, colls__siblings_deliver, which dcoll.c
 * passes gid 0 to).  Any task can send such a frame through its daemon.
 *
 * The input: byte 0 says who sent it (even: this task's parent), the rest
 * is the payload.  Checked (abort() on failure): nothing crashes, leaks or
 * reads out of bounds; a list of siblings is taken only from the parent,
 * with 1 to 4096 tids and exactly their length; a group's message waits
 * in the inbox if it is data or a clear-to-send of the header alone, and
 * is dropped otherwise.  The seeds (corpus/libmsg) are a list, a list
 * from another task, a direct collective's step, an ABORT, a
 * clear-to-send, one with data, a header of an unknown kind and a cut
 * header.
 */
#include <stdlib.h>
#include <string.h>

#include "libclient/internal.h"
#include "proto/bytes.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_PARENT 0x100001u
#define FUZZ_OTHER  0x200002u

int
fuzz_libmsg(const uint8_t *data, size_t size)
{
    struct colls__rmsg *m;
    colls_t *c;
    size_t plen;

    if (size < 1 || size > 65536)
        return 0;
    c = calloc(1, sizeof(*c));
    m = calloc(1, sizeof(*m));
    plen = size - 1;
    if (c == NULL || m == NULL ||
        (plen > 0 && (m->data = malloc(plen)) == NULL))
        abort();
    list_init(&c->dcoll_inbox);
    c->parent = FUZZ_PARENT;
    m->src = data[0] % 2 == 0 ? FUZZ_PARENT : FUZZ_OTHER;
    m->tag = COLLS__TAG_DCOLL;
    m->len = plen;
    if (plen > 0)
        memcpy(m->data, data + 1, plen);
    if (colls__dcoll_deliver(c, m) != 0)
        abort();
    if (c->siblings != NULL &&
        (data[0] % 2 != 0 || c->nsiblings < 1 || c->nsiblings > 4096 ||
         plen != COLLS__LIB_HDR + 4 + 4 * (size_t)c->nsiblings ||
         get_u64(data + 1) != 0 ||
         c->siblings[0] != get_u32(data + 1 + COLLS__LIB_HDR + 4)))
        abort();
    if (plen >= COLLS__LIB_HDR && get_u64(data + 1) != 0) {
        uint32_t kind = get_u32(data + 1 + 20);
        int ok = kind == 0 || (kind == 1 && plen == COLLS__LIB_HDR);

        /* a group's message of a well-formed header is kept, no other */
        if (ok == list_empty(&c->dcoll_inbox))
            abort();
    }
    colls__dcoll_forget(c, 0, 1);
    for (unsigned i = 0; i < COLLS__SPARES; i++)
        free(c->conn.spare[i]); /* the forgotten payloads' spare blocks */
    free(c->siblings);
    free(c);
    return 0;
}
