/*
 * board.c -- laying out, checking, writing and reading a group's board
 * (board.h).  No I/O and no waiting: hcoll.c does both.
 */
#include <string.h>

#include "board.h"

_Static_assert(sizeof(struct board_hdr) == BOARD_LINE, "header: one line");
_Static_assert(sizeof(struct board_line) == BOARD_LINE, "line: one line");
_Static_assert(sizeof(struct board_slot) == BOARD_LINE, "slot: one line");
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
               "the board's words must be lock-free to be shared");

/* Data bytes of a slot for slot_bytes asked for. */
static size_t
board_round(size_t slot_bytes)
{
    return (slot_bytes + BOARD_LINE - 1) / BOARD_LINE * BOARD_LINE;
}

size_t
colls__board_size(unsigned members, unsigned slots, size_t slot_bytes)
{
    if (members < 2 || members > BOARD_MEMBERS_MAX || slots == 0 ||
        slots > BOARD_SLOTS_MAX || slot_bytes == 0 ||
        slot_bytes > BOARD_SLOT_MAX)
        return 0;
    /* at most 1024 x (64 + 64 x (64 + 64 KiB)): no overflow */
    return BOARD_LINE + (size_t)members * BOARD_LINE +
           (size_t)members * slots * (BOARD_LINE + board_round(slot_bytes));
}

/* Member j's slot for collective seq. */
static struct board_slot *
board_slot(const struct board *b, unsigned j, uint64_t seq)
{
    size_t per = BOARD_LINE + b->slot_bytes;
    size_t at = BOARD_LINE + (size_t)b->members * BOARD_LINE +
                ((size_t)j * b->slots + (size_t)(seq % b->slots)) * per;

    return (struct board_slot *)(void *)(b->base + at);
}

struct board_line *
colls__board_line(const struct board *b, unsigned j)
{
    return (struct board_line *)(void *)(b->base + BOARD_LINE +
                                         (size_t)j * BOARD_LINE);
}

void
colls__board_init(void *mem, unsigned members, unsigned slots,
                  size_t slot_bytes, uint64_t gid,
                  const uint8_t nonce[BOARD_NONCE])
{
    struct board_hdr *h = mem;

    h->magic = BOARD_MAGIC;
    h->version = BOARD_VERSION;
    h->members = members;
    h->slots = slots;
    h->slot_bytes = (uint32_t)board_round(slot_bytes);
    h->gid = gid;
    memcpy(h->nonce, nonce, BOARD_NONCE);
}

int
colls__board_open(struct board *b, void *mem, size_t size, unsigned members,
                  unsigned me, unsigned slots, size_t slot_bytes, uint64_t gid,
                  const uint8_t nonce[BOARD_NONCE])
{
    const struct board_hdr *h = mem;
    size_t want = colls__board_size(members, slots, slot_bytes);

    if (want == 0 || size != want || me >= members || h->magic != BOARD_MAGIC ||
        h->version != BOARD_VERSION || h->members != members ||
        h->slots != slots || h->slot_bytes != board_round(slot_bytes) ||
        h->gid != gid || memcmp(h->nonce, nonce, BOARD_NONCE) != 0)
        return BOARD_CORRUPT;
    b->base = mem;
    b->size = size;
    b->members = members;
    b->me = me;
    b->slots = slots;
    b->slot_bytes = board_round(slot_bytes);
    return 0;
}

int
colls__board_room(const struct board *b, uint64_t seq)
{
    const struct board_slot *s = board_slot(b, b->me, seq);
    uint64_t held = atomic_load(&s->seq); /* 1 + the collective it holds */
    unsigned j;

    if (held == 0)
        return 1;
    for (j = 0; j < b->members; j++)
        if (j != b->me && atomic_load(&colls__board_line(b, j)->done) < held)
            return 0;
    return 1;
}

void
colls__board_put(const struct board *b, uint64_t seq, const void *data,
                 size_t len)
{
    struct board_slot *s = board_slot(b, b->me, seq);

    if (len > 0)
        memcpy(s + 1, data, len);
    s->len = len;
    atomic_store(&s->seq, seq + 1);
}

int
colls__board_peek(const struct board *b, unsigned j, uint64_t seq,
                  const uint8_t **data, size_t *len)
{
    const struct board_slot *s = board_slot(b, j, seq);
    uint64_t at = atomic_load(&s->seq);

    if (at < seq + 1)
        return 0; /* an older collective's, or nothing yet */
    /* the writer cannot be a whole mailbox ahead of a reader that has
       not finished seq, and a length is never beyond the slot */
    if (at != seq + 1 || s->len > b->slot_bytes)
        return BOARD_CORRUPT;
    *data = (const uint8_t *)(s + 1);
    *len = (size_t)s->len;
    return 1;
}

void
colls__board_done(const struct board *b, uint64_t seq)
{
    atomic_store(&colls__board_line(b, b->me)->done, seq + 1);
}

unsigned
colls__board_wakes(const struct board *b, int put,
                   void (*ring)(void *arg, unsigned j), void *arg)
{
    unsigned j, n = 0;

    for (j = 0; j < b->members; j++) {
        struct board_line *l = colls__board_line(b, j);
        uint32_t w = atomic_load(&l->sleep);
        int mine = put ? (w == BOARD_SLEEP_FROM(b->me) || w == BOARD_SLEEP_ANY)
                       : w == BOARD_SLEEP_ROOM;

        if (j == b->me || !mine ||
            !atomic_compare_exchange_strong(&l->sleep, &w, 0))
            continue;
        ring(arg, j);
        n++;
    }
    return n;
}
