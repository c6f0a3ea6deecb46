/*
 * test-board.c -- libclient/board.c without I/O: several views of one
 * board in plain memory play the members of a host.  Items put and read
 * in order, a slot refused until every other member is done with what it
 * holds, what a reader calls corrupt (a slot ahead of it, a length beyond
 * the slot), the header checks of a member that maps a board, and which
 * sleepers a put or a done wakes (and only once).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libclient/board.h"
#include "tests/unit/suites.h"

#define L     3u
#define SLOTS 4u
#define SLOTB 100u /* rounded up to 128 */

static const uint8_t nonce[BOARD_NONCE] = "0123456789abcdef";
static void *mem;
static size_t size;
static struct board v[L]; /* member j's view */

static void
setup(void)
{
    unsigned j;

    size = colls__board_size(L, SLOTS, SLOTB);
    ck_assert_uint_gt(size, 0);
    mem = calloc(1, size); /* as a fresh memfd reads */
    ck_assert_ptr_nonnull(mem);
    colls__board_init(mem, L, SLOTS, SLOTB, 42, nonce);
    for (j = 0; j < L; j++)
        ck_assert_int_eq(
            colls__board_open(&v[j], mem, size, L, j, SLOTS, SLOTB, 42, nonce),
            0);
}

static void
teardown(void)
{
    free(mem);
}

START_TEST(test_size)
{
    /* header, 3 lines, 3 x 4 slots of (64 + 128) */
    ck_assert_uint_eq(colls__board_size(3, 4, 100), 64 + 3 * 64 + 12 * 192);
    ck_assert_uint_eq(colls__board_size(1, 4, 100), 0);
    ck_assert_uint_eq(colls__board_size(BOARD_MEMBERS_MAX + 1, 4, 100), 0);
    ck_assert_uint_eq(colls__board_size(2, 0, 100), 0);
    ck_assert_uint_eq(colls__board_size(2, BOARD_SLOTS_MAX + 1, 100), 0);
    ck_assert_uint_eq(colls__board_size(2, 4, 0), 0);
    ck_assert_uint_eq(colls__board_size(2, 4, BOARD_SLOT_MAX + 1), 0);
    ck_assert_uint_gt(
        colls__board_size(BOARD_MEMBERS_MAX, BOARD_SLOTS_MAX, BOARD_SLOT_MAX),
        0);
}
END_TEST

START_TEST(test_open_checks)
{
    struct board b;
    uint8_t other[BOARD_NONCE];
    struct board_hdr *h = mem;

    memcpy(other, nonce, sizeof other);
    other[0] ^= 1;
    ck_assert_int_eq(
        colls__board_open(&b, mem, size, L, 1, SLOTS, SLOTB, 42, other),
        BOARD_CORRUPT);
    ck_assert_int_eq(
        colls__board_open(&b, mem, size, L, 1, SLOTS, SLOTB, 43, nonce),
        BOARD_CORRUPT);
    ck_assert_int_eq(
        colls__board_open(&b, mem, size - 1, L, 1, SLOTS, SLOTB, 42, nonce),
        BOARD_CORRUPT);
    ck_assert_int_eq(
        colls__board_open(&b, mem, size, L, L, SLOTS, SLOTB, 42, nonce),
        BOARD_CORRUPT);
    /* 128 data bytes a slot round as 100 do: the same board */
    ck_assert_int_eq(
        colls__board_open(&b, mem, size, L, 1, SLOTS, 128, 42, nonce), 0);
    ck_assert_int_eq(
        colls__board_open(&b, mem, size, L, 1, SLOTS - 1, SLOTB, 42, nonce),
        BOARD_CORRUPT);
    h->version++;
    ck_assert_int_eq(
        colls__board_open(&b, mem, size, L, 1, SLOTS, SLOTB, 42, nonce),
        BOARD_CORRUPT);
    h->version--;
    h->magic ^= 1;
    ck_assert_int_eq(
        colls__board_open(&b, mem, size, L, 1, SLOTS, SLOTB, 42, nonce),
        BOARD_CORRUPT);
}
END_TEST

START_TEST(test_put_peek)
{
    const uint8_t *d;
    size_t len;
    uint64_t seq;
    char item[SLOTB];

    /* nothing yet, then member 1's item of 0, which 0 and 2 both read */
    ck_assert_int_eq(colls__board_peek(&v[0], 1, 0, &d, &len), 0);
    ck_assert_int_eq(colls__board_room(&v[1], 0), 1);
    colls__board_put(&v[1], 0, "hello", 5);
    ck_assert_int_eq(colls__board_peek(&v[0], 1, 0, &d, &len), 1);
    ck_assert_uint_eq(len, 5);
    ck_assert_mem_eq(d, "hello", 5);
    ck_assert_int_eq(colls__board_peek(&v[2], 1, 0, &d, &len), 1);
    /* the next collective's is not there, nor member 2's of 0 */
    ck_assert_int_eq(colls__board_peek(&v[0], 1, 1, &d, &len), 0);
    ck_assert_int_eq(colls__board_peek(&v[0], 2, 0, &d, &len), 0);
    /* a full slot's worth, and an empty item */
    memset(item, 'x', sizeof item);
    colls__board_put(&v[1], 1, item, SLOTB);
    ck_assert_int_eq(colls__board_peek(&v[2], 1, 1, &d, &len), 1);
    ck_assert_uint_eq(len, SLOTB);
    ck_assert_mem_eq(d, item, SLOTB);
    colls__board_put(&v[2], 1, NULL, 0);
    ck_assert_int_eq(colls__board_peek(&v[1], 2, 1, &d, &len), 1);
    ck_assert_uint_eq(len, 0);
    /* slots 2 and 3 are free, slot 0 (again at seq 4) is not until 0 and
       2 are done with collective 0 */
    for (seq = 2; seq < SLOTS; seq++)
        ck_assert_int_eq(colls__board_room(&v[1], seq), 1);
    ck_assert_int_eq(colls__board_room(&v[1], SLOTS), 0);
    colls__board_done(&v[0], 0);
    ck_assert_int_eq(colls__board_room(&v[1], SLOTS), 0);
    colls__board_done(&v[2], 0);
    ck_assert_int_eq(colls__board_room(&v[1], SLOTS), 1);
    /* the writer's own progress does not count */
    ck_assert_int_eq(colls__board_room(&v[1], SLOTS + 1), 0);
    colls__board_done(&v[0], 1);
    colls__board_done(&v[2], 1);
    ck_assert_int_eq(colls__board_room(&v[1], SLOTS + 1), 1);
    colls__board_put(&v[1], SLOTS, "again", 5);
    ck_assert_int_eq(colls__board_peek(&v[0], 1, SLOTS, &d, &len), 1);
    ck_assert_mem_eq(d, "again", 5);
    /* a reader of collective 0 now would see a slot ahead of it */
    ck_assert_int_eq(colls__board_peek(&v[0], 1, 0, &d, &len), BOARD_CORRUPT);
}
END_TEST

START_TEST(test_corrupt)
{
    const uint8_t *d;
    size_t len;
    struct board_slot *s;

    colls__board_put(&v[0], 2, "abc", 3);
    /* the slot of collective 2 of member 0 */
    s = (struct board_slot *)(void *)((uint8_t *)mem + 64 + L * 64 +
                                      2 * (64 + 128));
    ck_assert_uint_eq(atomic_load(&s->seq), 3);
    s->len = 129; /* beyond the slot */
    ck_assert_int_eq(colls__board_peek(&v[1], 0, 2, &d, &len), BOARD_CORRUPT);
    s->len = 128;
    ck_assert_int_eq(colls__board_peek(&v[1], 0, 2, &d, &len), 1);
    atomic_store(&s->seq, 3 + SLOTS + 1); /* ahead, not a whole mailbox */
    ck_assert_int_eq(colls__board_peek(&v[1], 0, 2, &d, &len), BOARD_CORRUPT);
    atomic_store(&s->seq, UINT64_MAX);
    ck_assert_int_eq(colls__board_peek(&v[1], 0, 2, &d, &len), BOARD_CORRUPT);
}
END_TEST

static unsigned rung[L + 1];

static void
ring(void *arg, unsigned j)
{
    (void)arg;
    rung[j]++;
}

START_TEST(test_wakes)
{
    struct board_line *l0 = colls__board_line(&v[0], 0);
    struct board_line *l1 = colls__board_line(&v[0], 1);
    struct board_line *l2 = colls__board_line(&v[0], 2);

    memset(rung, 0, sizeof rung);
    /* 0 sleeps for 1's item, 2 for anyone's: a put by 1 wakes both */
    atomic_store(&l0->sleep, BOARD_SLEEP_FROM(1));
    atomic_store(&l2->sleep, BOARD_SLEEP_ANY);
    ck_assert_uint_eq(colls__board_wakes(&v[1], 1, ring, NULL), 2);
    ck_assert_uint_eq(rung[0], 1);
    ck_assert_uint_eq(rung[2], 1);
    ck_assert_uint_eq(atomic_load(&l0->sleep), 0);
    ck_assert_uint_eq(atomic_load(&l2->sleep), 0);
    /* once: they are awake now */
    ck_assert_uint_eq(colls__board_wakes(&v[1], 1, ring, NULL), 0);
    /* 0 sleeps for 2's item: a put by 1 leaves it, by 2 wakes it */
    atomic_store(&l0->sleep, BOARD_SLEEP_FROM(2));
    ck_assert_uint_eq(colls__board_wakes(&v[1], 1, ring, NULL), 0);
    ck_assert_uint_eq(atomic_load(&l0->sleep), BOARD_SLEEP_FROM(2));
    ck_assert_uint_eq(colls__board_wakes(&v[2], 1, ring, NULL), 1);
    ck_assert_uint_eq(rung[0], 2);
    /* 1 waits for room: a put does not wake it, a done does; a done does
       not wake readers */
    atomic_store(&l1->sleep, BOARD_SLEEP_ROOM);
    atomic_store(&l2->sleep, BOARD_SLEEP_FROM(0));
    ck_assert_uint_eq(colls__board_wakes(&v[0], 1, ring, NULL), 1);
    ck_assert_uint_eq(rung[1], 0);
    atomic_store(&l2->sleep, BOARD_SLEEP_FROM(0));
    ck_assert_uint_eq(colls__board_wakes(&v[0], 0, ring, NULL), 1);
    ck_assert_uint_eq(rung[1], 1);
    ck_assert_uint_eq(atomic_load(&l2->sleep), BOARD_SLEEP_FROM(0));
    /* nobody wakes himself */
    atomic_store(&l0->sleep, BOARD_SLEEP_ANY);
    ck_assert_uint_eq(colls__board_wakes(&v[0], 1, ring, NULL), 1);
    ck_assert_uint_eq(rung[0], 2);
    ck_assert_uint_eq(rung[2], 3);
}
END_TEST

Suite *
suite_board(void)
{
    Suite *s = suite_create("board");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_size);
    tcase_add_test(tc, test_open_checks);
    tcase_add_test(tc, test_put_peek);
    tcase_add_test(tc, test_corrupt);
    tcase_add_test(tc, test_wakes);
    suite_add_tcase(s, tc);
    return s;
}
