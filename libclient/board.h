/*
 * board.h -- a group's board: the shared memory in which the members of
 * one group on one host hand each other the data of small collectives
 * (hcoll.c; docs/collectives.md, "Direct collectives" and "The board").
 * No I/O: hcoll.c makes the memfd, maps it, waits and rings the bells;
 * this file only lays out, checks, writes and reads the mapping.
 *
 * The mapping: a header (one cache line); a line per local member (its
 * progress and how to wake it); then a mailbox per member of "slots"
 * slots (1..BOARD_SLOTS_MAX), each a cache line of slot header followed by
 * slot_bytes of data.  A fresh memfd reads as zeros and only the header is
 * written, so the pages of slots never used are never allocated.
 *
 * Who writes what.  Each member writes only its own line and its own
 * mailbox.  A member makes at most one item available per collective: the
 * item of collective seq goes to slot seq % slots of its mailbox, and the
 * slot's seq word becomes seq + 1 when the data is in (release).  A
 * member's "done" is one more than the last collective it finished: it
 * reads nothing of that collective or earlier ones any more.  So a slot
 * may be written again once every other member's done has passed the
 * collective it holds (colls__board_room).  Members run the collectives of
 * a group in the same order, so a writer is at most "slots" collectives
 * ahead of its slowest reader.
 *
 * Sleeping.  A member about to sleep stores in its line's "sleep" what it
 * waits for (BOARD_SLEEP_FROM(j): member j's item; BOARD_SLEEP_ANY: any
 * member's; BOARD_SLEEP_ROOM: room in its own mailbox), checks again, and
 * sleeps; whoever then makes that happen swaps the word to 0 and rings
 * the sleeper's bell (colls__board_wakes).  Every access to sleep and to
 * the words it guards is sequentially consistent, so either the sleeper
 * sees the change or the writer sees the sleeper.
 *
 * Trust.  Members of one group on one host are processes of one user
 * (hcoll.c opens the memfd through /proc), so the board is not guarded
 * against a member that writes nonsense on purpose; it is checked against
 * one that was corrupted: a slot whose seq is ahead of what a reader can
 * see or whose length is beyond the slot is BOARD_CORRUPT.
 */
#ifndef COLLS_LIBCLIENT_BOARD_H
#define COLLS_LIBCLIENT_BOARD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define BOARD_MAGIC         UINT64_C(0x434f4c4c53425244) /* "COLLSBRD" */
#define BOARD_VERSION       1u  /* bump on any change */
#define BOARD_LINE          64u /* bytes of the header, a line, a slot header */
#define BOARD_SLOTS_MAX     64u /* slots per mailbox, at most */
#define BOARD_BELL_MAX      40u /* bytes of a bell's name, its NUL included */
#define BOARD_NONCE         16u
#define BOARD_CORRUPT       (-1)
#define BOARD_SLEEP_ANY     0xfffffffeu
#define BOARD_SLEEP_ROOM    0xffffffffu
#define BOARD_SLEEP_FROM(j) ((uint32_t)(j) + 1u)
/* Most members and data bytes per slot a board is made for. */
#define BOARD_MEMBERS_MAX 1024u
#define BOARD_SLOT_MAX    (64u * 1024)

/* The header, at offset 0. */
struct board_hdr {
    uint64_t magic;
    uint32_t version;
    uint32_t members;    /* L */
    uint32_t slots;      /* per mailbox */
    uint32_t slot_bytes; /* data bytes of a slot, a multiple of BOARD_LINE */
    uint64_t gid;
    uint8_t nonce[BOARD_NONCE]; /* the maker's random words */
    uint8_t pad[16];
};

/* A member's line. */
struct board_line {
    _Atomic uint64_t done;  /* 1 + the last collective it finished */
    _Atomic uint32_t sleep; /* 0 awake, else BOARD_SLEEP_* */
    uint32_t pid;
    char bell[BOARD_BELL_MAX]; /* its bell's abstract name, NUL-ended */
    uint8_t pad[8];
};

/* A slot's header; its data follows. */
struct board_slot {
    _Atomic uint64_t seq; /* 1 + the collective whose item it holds */
    uint64_t len;         /* of that item */
    uint8_t pad[48];
};

/* One member's view of a mapped board. */
struct board {
    uint8_t *base;
    size_t size;
    unsigned members, me, slots;
    size_t slot_bytes;
};

/* Bytes of a board for members, slots per mailbox and slot_bytes (rounded
   up to BOARD_LINE), or 0 when out of range (members 2..BOARD_MEMBERS_MAX,
   slots 1..BOARD_SLOTS_MAX, slot_bytes 1..BOARD_SLOT_MAX). */
size_t colls__board_size(unsigned members, unsigned slots, size_t slot_bytes);
/* Writes the header of a fresh board (colls__board_size bytes, all zero,
   as a new memfd is) at mem. */
void colls__board_init(void *mem, unsigned members, unsigned slots,
                       size_t slot_bytes, uint64_t gid,
                       const uint8_t nonce[BOARD_NONCE]);
/* Views the board at mem (size bytes) as member me.  0, or BOARD_CORRUPT
   unless its header says what the maker offered: the magic and version,
   members, slots, slot_bytes (rounded), gid, nonce, and size. */
int colls__board_open(struct board *b, void *mem, size_t size, unsigned members,
                      unsigned me, unsigned slots, size_t slot_bytes,
                      uint64_t gid, const uint8_t nonce[BOARD_NONCE]);
struct board_line *colls__board_line(const struct board *b, unsigned j);

/* 1 if my slot for collective seq may be written (every other member is
   done with what it holds), else 0. */
int colls__board_room(const struct board *b, uint64_t seq);
/* Puts len bytes (at most b->slot_bytes; room checked) as my item of
   collective seq. */
void colls__board_put(const struct board *b, uint64_t seq, const void *data,
                      size_t len);
/* Member j's item of collective seq: 1 with *data and *len when it is
   there, 0 when not yet, BOARD_CORRUPT when the slot cannot hold it. */
int colls__board_peek(const struct board *b, unsigned j, uint64_t seq,
                      const uint8_t **data, size_t *len);
/* Marks collective seq finished by me. */
void colls__board_done(const struct board *b, uint64_t seq);
/* After I put an item (put = 1) or marked a collective done (put = 0):
   for each member that sleeps until that happens, swaps its sleep word to
   0 and calls ring(arg, j), which rings its bell.  Returns how many. */
unsigned colls__board_wakes(const struct board *b, int put,
                            void (*ring)(void *arg, unsigned j), void *arg);

#endif
