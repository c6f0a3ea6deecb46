/*
 * test-ring.c -- proto/ring.c without I/O: two views of one mapping in
 * plain memory play task and daemon.  Bytes published and consumed in
 * order across the wrap, a full ring refusing more, the doorbell flags
 * (sleeping, waiting) set and cleared by the right side, and every kind of
 * bad index the other side could write (past the bounds, backwards)
 * refused for good.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/ring.h"
#include "tests/unit/suites.h"

static void *map;
static struct ring t_req, t_comp, d_req, d_comp;

static void
setup(void)
{
    map = calloc(1, SHM_MAP_LEN);
    ck_assert_ptr_nonnull(map);
    shm_layout_init(map);
    shm_rings(map, 1, &t_req, &t_comp);
    shm_rings(map, 0, &d_req, &d_comp);
}

static void
teardown(void)
{
    free(map);
}

START_TEST(test_layout)
{
    struct shm_hdr *h = map;

    ck_assert_uint_eq(h->magic, SHM_MAGIC);
    ck_assert_uint_eq(h->version, SHM_VERSION);
    ck_assert_uint_eq(h->ring_size, SHM_RING_SIZE);
    ck_assert_uint_le(sizeof(*h), SHM_HDR_LEN);
    /* both consumers start asleep: the first bytes ring them */
    ck_assert_uint_eq(atomic_load(&h->req.sleeping), 1);
    ck_assert_uint_eq(atomic_load(&h->comp.sleeping), 1);
    ck_assert_ptr_eq(t_req.data, (uint8_t *)map + SHM_HDR_LEN);
    ck_assert_ptr_eq(t_comp.data, (uint8_t *)map + SHM_HDR_LEN + SHM_RING_SIZE);
    ck_assert_int_eq(t_req.producer, 1);
    ck_assert_int_eq(d_req.producer, 0);
    ck_assert_int_eq(d_comp.producer, 1);
}
END_TEST

START_TEST(test_publish_consume)
{
    uint8_t out[16];

    ck_assert_int_eq(ring_readable(&d_req), 0);
    ck_assert_int_eq(ring_read(&d_req, out, sizeof(out)), 0);
    ck_assert_int_eq(ring_space(&t_req), SHM_RING_SIZE);
    ck_assert_int_eq(ring_write(&t_req, "hello", 5), 5);
    ck_assert_int_eq(ring_readable(&d_req), 5);
    ck_assert_int_eq(ring_space(&t_req), SHM_RING_SIZE - 5);
    memset(out, 0, sizeof(out));
    ck_assert_int_eq(ring_read(&d_req, out, 3), 3);
    ck_assert_mem_eq(out, "hel", 3);
    ck_assert_int_eq(ring_read(&d_req, out, sizeof(out)), 2);
    ck_assert_mem_eq(out, "lo", 2);
    ck_assert_int_eq(ring_space(&t_req), SHM_RING_SIZE);
    /* the other ring is untouched */
    ck_assert_int_eq(ring_readable(&t_comp), 0);
}
END_TEST

START_TEST(test_wrap)
{
    size_t chunk = SHM_RING_SIZE / 3 + 7, i, round;
    uint8_t *in = malloc(chunk), *out = malloc(chunk);

    ck_assert_ptr_nonnull(in);
    ck_assert_ptr_nonnull(out);
    /* enough rounds to wrap several times at odd offsets */
    for (round = 0; round < 10; round++) {
        for (i = 0; i < chunk; i++)
            in[i] = (uint8_t)(round * 31 + i);
        ck_assert_int_eq(ring_write(&d_comp, in, chunk), (long)chunk);
        ck_assert_int_eq(ring_take(&t_comp, out, chunk), (long)chunk);
        ck_assert_mem_eq(in, out, chunk);
    }
    ck_assert_uint_eq(t_comp.pos, 10 * chunk);
    free(in);
    free(out);
}
END_TEST

START_TEST(test_full)
{
    uint8_t *buf = calloc(1, SHM_RING_SIZE + 10);
    struct shm_hdr *h = map;

    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(ring_write(&t_req, buf, SHM_RING_SIZE + 10),
                     SHM_RING_SIZE);
    ck_assert_int_eq(ring_space(&t_req), 0);
    ck_assert_int_eq(ring_write(&t_req, buf, 1), 0);
    /* short of space: the producer raises "waiting"; the consumer that
       frees room clears it and is told to ring */
    ck_assert_int_eq(ring_wait_space(&t_req), 0);
    ck_assert_uint_eq(atomic_load(&h->req.waiting), 1);
    ck_assert_int_eq(ring_read(&d_req, buf, 100), 100);
    ck_assert_int_eq(ring_wake_producer(&d_req), 1);
    ck_assert_uint_eq(atomic_load(&h->req.waiting), 0);
    ck_assert_int_eq(ring_wake_producer(&d_req), 0);
    ck_assert_int_eq(ring_space(&t_req), 100);
    free(buf);
}
END_TEST

START_TEST(test_sleep_wake)
{
    struct shm_hdr *h = map;
    uint8_t b[4];

    /* initially asleep: the first publish rings once, not twice */
    ck_assert_int_eq(ring_write(&t_req, "ab", 2), 2);
    ck_assert_int_eq(ring_wake_consumer(&t_req), 1);
    ck_assert_int_eq(ring_write(&t_req, "c", 1), 1);
    ck_assert_int_eq(ring_wake_consumer(&t_req), 0);
    /* a consumer about to sleep sees the bytes and stays up */
    ck_assert_int_eq(ring_sleep(&d_req), 3);
    ring_awake(&d_req);
    ck_assert_uint_eq(atomic_load(&h->req.sleeping), 0);
    /* ring_take drains, then leaves the flag up on an empty ring */
    ck_assert_int_eq(ring_take(&d_req, b, sizeof(b)), 3);
    ck_assert_int_eq(ring_take(&d_req, b, sizeof(b)), 0);
    ck_assert_uint_eq(atomic_load(&h->req.sleeping), 1);
    ck_assert_int_eq(ring_write(&t_req, "d", 1), 1);
    ck_assert_int_eq(ring_wake_consumer(&t_req), 1);
}
END_TEST

START_TEST(test_corrupt_head)
{
    struct shm_hdr *h = map;
    uint8_t b[8];

    /* the task claims more bytes than the ring holds */
    atomic_store(&h->req.head, (uint64_t)SHM_RING_SIZE + 1);
    ck_assert_int_eq(ring_readable(&d_req), RING_CORRUPT);
    /* ... and stays refused even once the index looks sane again */
    atomic_store(&h->req.head, 4);
    ck_assert_int_eq(ring_read(&d_req, b, sizeof(b)), RING_CORRUPT);
    ck_assert_int_eq(ring_take(&d_req, b, sizeof(b)), RING_CORRUPT);
}
END_TEST

START_TEST(test_head_backwards)
{
    struct shm_hdr *h = map;
    uint8_t b[8];

    ck_assert_int_eq(ring_write(&t_req, "abcdef", 6), 6);
    ck_assert_int_eq(ring_read(&d_req, b, 2), 2);
    ck_assert_int_eq(ring_readable(&d_req), 4);
    /* behind what the daemon saw, yet behind its tail too */
    atomic_store(&h->req.head, 1);
    ck_assert_int_eq(ring_readable(&d_req), RING_CORRUPT);
}
END_TEST

START_TEST(test_head_rewound_within)
{
    struct shm_hdr *h = map;

    ck_assert_int_eq(ring_write(&t_req, "abcdef", 6), 6);
    ck_assert_int_eq(ring_readable(&d_req), 6);
    /* moved back, though still ahead of the tail: refused as well */
    atomic_store(&h->req.head, 3);
    ck_assert_int_eq(ring_readable(&d_req), RING_CORRUPT);
}
END_TEST

START_TEST(test_corrupt_tail)
{
    struct shm_hdr *h = map;

    ck_assert_int_eq(ring_write(&d_comp, "xyz", 3), 3);
    /* a tail ahead of what was written */
    atomic_store(&h->comp.tail, 4);
    ck_assert_int_eq(ring_space(&d_comp), RING_CORRUPT);
    ck_assert_int_eq(ring_write(&d_comp, "q", 1), RING_CORRUPT);
}
END_TEST

START_TEST(test_tail_backwards)
{
    struct shm_hdr *h = map;
    uint8_t b[4];

    ck_assert_int_eq(ring_write(&d_comp, "xyz", 3), 3);
    ck_assert_int_eq(ring_read(&t_comp, b, 2), 2);
    ck_assert_int_eq(ring_space(&d_comp), SHM_RING_SIZE - 1);
    atomic_store(&h->comp.tail, 1);
    ck_assert_int_eq(ring_space(&d_comp), RING_CORRUPT);
}
END_TEST

START_TEST(test_huge_indices)
{
    struct shm_hdr *h = map;

    /* near the top of u64: the distance wraps, still caught */
    atomic_store(&h->req.head, UINT64_MAX);
    ck_assert_int_eq(ring_readable(&d_req), RING_CORRUPT);
    atomic_store(&h->comp.tail, UINT64_MAX);
    ck_assert_int_eq(ring_space(&d_comp), RING_CORRUPT);
}
END_TEST

Suite *
suite_ring(void)
{
    Suite *s = suite_create("ring");
    TCase *tc = tcase_create("ring");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_layout);
    tcase_add_test(tc, test_publish_consume);
    tcase_add_test(tc, test_wrap);
    tcase_add_test(tc, test_full);
    tcase_add_test(tc, test_sleep_wake);
    tcase_add_test(tc, test_corrupt_head);
    tcase_add_test(tc, test_head_backwards);
    tcase_add_test(tc, test_head_rewound_within);
    tcase_add_test(tc, test_corrupt_tail);
    tcase_add_test(tc, test_tail_backwards);
    tcase_add_test(tc, test_huge_indices);
    suite_add_tcase(s, tc);
    return s;
}
