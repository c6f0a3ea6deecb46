/*
 * test-buf.c -- proto/buf.c: appends, consumption, compaction, growth by
 * doubling, and the overflow checks that turn impossible sizes into
 * COLLS_ENOMEM instead of an abort.  A model test replays a pseudo-random
 * sequence of operations against a plain array.
 */
#include <stdint.h>
#include <string.h>

#include "colls.h"
#include "proto/buf.h"
#include "tests/unit/suites.h"

/* Fills p with a recognisable pattern starting at seed. */
static void
pattern(uint8_t *p, size_t n, unsigned seed)
{
    size_t i;

    for (i = 0; i < n; i++)
        p[i] = (uint8_t)(seed + i * 7);
}

START_TEST(test_init_empty)
{
    struct buf b;

    memset(&b, 0xa5, sizeof(b));
    buf_init(&b);
    ck_assert_ptr_null(b.data);
    ck_assert_uint_eq(b.len, 0);
    ck_assert_uint_eq(b.off, 0);
    ck_assert_uint_eq(b.cap, 0);
    ck_assert_uint_eq(buf_avail(&b), 0);
    ck_assert_ptr_null(buf_head(&b));
    /* Consuming, compacting and resetting an empty buffer are no-ops. */
    buf_consume(&b, 10);
    buf_compact(&b);
    buf_reset(&b);
    ck_assert_uint_eq(buf_avail(&b), 0);
    ck_assert_int_eq(buf_append(&b, NULL, 0), 0);
    ck_assert_ptr_null(b.data);
    buf_free(&b);
    buf_free(&b);
}
END_TEST

START_TEST(test_append_read)
{
    uint8_t src[1000];
    struct buf b;

    pattern(src, sizeof(src), 3);
    buf_init(&b);
    ck_assert_int_eq(buf_append(&b, src, 10), 0);
    ck_assert_int_eq(buf_append(&b, src + 10, 990), 0);
    ck_assert_uint_eq(buf_avail(&b), 1000);
    ck_assert_mem_eq(buf_head(&b), src, 1000);
    buf_consume(&b, 100);
    ck_assert_uint_eq(buf_avail(&b), 900);
    ck_assert_mem_eq(buf_head(&b), src + 100, 900);
    buf_free(&b);
    ck_assert_ptr_null(b.data);
    ck_assert_uint_eq(b.cap, 0);
}
END_TEST

START_TEST(test_growth_doubles)
{
    uint8_t src[1024];
    struct buf b;

    pattern(src, sizeof(src), 1);
    buf_init(&b);
    ck_assert_int_eq(buf_append(&b, src, 1), 0);
    ck_assert_uint_eq(b.cap, 256);
    ck_assert_int_eq(buf_append(&b, src + 1, 255), 0);
    ck_assert_uint_eq(b.cap, 256);
    ck_assert_int_eq(buf_append(&b, src + 256, 1), 0);
    ck_assert_uint_eq(b.cap, 512);
    ck_assert_int_eq(buf_append(&b, src + 257, 700), 0);
    ck_assert_uint_eq(b.cap, 1024);
    ck_assert_mem_eq(b.data, src, 957);
    /* A single large reservation jumps straight to a power-of-two size. */
    ck_assert_int_eq(buf_reserve(&b, 5000), 0);
    ck_assert_uint_eq(b.cap, 8192);
    ck_assert_uint_eq(b.len, 957);
    ck_assert_mem_eq(b.data, src, 957);
    buf_free(&b);
}
END_TEST

START_TEST(test_reserve_fits)
{
    struct buf b;
    uint8_t *before;

    buf_init(&b);
    ck_assert_int_eq(buf_reserve(&b, 100), 0);
    ck_assert_uint_eq(b.cap, 256);
    ck_assert_uint_eq(b.len, 0);
    before = b.data;
    ck_assert_int_eq(buf_reserve(&b, 256), 0);
    ck_assert_ptr_eq(b.data, before);
    ck_assert_uint_eq(b.cap, 256);
    ck_assert_int_eq(buf_reserve(&b, 0), 0);
    buf_free(&b);
}
END_TEST

START_TEST(test_consume_all_resets)
{
    uint8_t src[300];
    struct buf b;

    pattern(src, sizeof(src), 9);
    buf_init(&b);
    ck_assert_int_eq(buf_append(&b, src, 300), 0);
    buf_consume(&b, 120);
    ck_assert_uint_eq(b.off, 120);
    buf_consume(&b, 180);
    ck_assert_uint_eq(b.off, 0);
    ck_assert_uint_eq(b.len, 0);
    ck_assert_uint_eq(b.cap, 512);
    /* More than available is clamped, never underflows. */
    ck_assert_int_eq(buf_append(&b, src, 5), 0);
    buf_consume(&b, 1000);
    ck_assert_uint_eq(buf_avail(&b), 0);
    ck_assert_uint_eq(b.off, 0);
    ck_assert_uint_eq(b.len, 0);
    buf_free(&b);
}
END_TEST

START_TEST(test_compact)
{
    uint8_t src[200];
    struct buf b;

    pattern(src, sizeof(src), 5);
    buf_init(&b);
    ck_assert_int_eq(buf_append(&b, src, 200), 0);
    buf_consume(&b, 150);
    buf_compact(&b);
    ck_assert_uint_eq(b.off, 0);
    ck_assert_uint_eq(b.len, 50);
    ck_assert_mem_eq(b.data, src + 150, 50);
    buf_compact(&b);
    ck_assert_uint_eq(b.len, 50);
    ck_assert_mem_eq(b.data, src + 150, 50);
    buf_free(&b);
}
END_TEST

/* A consumed prefix at least as large as the unread bytes is reclaimed by
   moving instead of growing. */
START_TEST(test_reserve_compacts)
{
    uint8_t src[256];
    struct buf b;
    uint8_t *before;

    pattern(src, sizeof(src), 11);
    buf_init(&b);
    ck_assert_int_eq(buf_append(&b, src, 256), 0);
    before = b.data;
    buf_consume(&b, 200);
    ck_assert_int_eq(buf_reserve(&b, 100), 0);
    ck_assert_uint_eq(b.cap, 256);
    ck_assert_ptr_eq(b.data, before);
    ck_assert_uint_eq(b.off, 0);
    ck_assert_uint_eq(b.len, 56);
    ck_assert_mem_eq(b.data, src + 200, 56);
    buf_free(&b);
}
END_TEST

/* A consumed prefix smaller than the unread bytes does not justify the
   move, even where compaction alone would make room: the buffer grows, and
   the unread bytes still come first afterwards. */
START_TEST(test_reserve_grows_with_offset)
{
    uint8_t src[256];
    struct buf b;

    pattern(src, sizeof(src), 13);
    buf_init(&b);
    ck_assert_int_eq(buf_append(&b, src, 256), 0);
    buf_consume(&b, 100);
    ck_assert_int_eq(buf_reserve(&b, 80), 0);
    ck_assert_uint_eq(b.cap, 512);
    ck_assert_uint_eq(b.off, 0);
    ck_assert_uint_eq(b.len, 156);
    ck_assert_mem_eq(buf_head(&b), src + 100, 156);
    buf_free(&b);
}
END_TEST

/* Sizes that overflow size_t fail with COLLS_ENOMEM and leave the buffer
   as it was. */
START_TEST(test_reserve_overflow)
{
    uint8_t src[64];
    struct buf b;

    pattern(src, sizeof(src), 17);
    buf_init(&b);
    ck_assert_int_eq(buf_append(&b, src, 64), 0);
    buf_consume(&b, 4);
    ck_assert_int_eq(buf_reserve(&b, SIZE_MAX), COLLS_ENOMEM);
    ck_assert_int_eq(buf_reserve(&b, SIZE_MAX - 59), COLLS_ENOMEM);
    ck_assert_int_eq(buf_append(&b, src, SIZE_MAX - 10), COLLS_ENOMEM);
    ck_assert_uint_eq(b.cap, 256);
    ck_assert_uint_eq(b.off, 4);
    ck_assert_uint_eq(b.len, 64);
    ck_assert_mem_eq(buf_head(&b), src + 4, 60);
    buf_free(&b);
}
END_TEST

/* A size that does not overflow but cannot be allocated: realloc fails and
   the buffer is intact.  AddressSanitizer aborts on such requests unless
   allocator_may_return_null=1, so the sanitizer build skips this case. */
START_TEST(test_reserve_alloc_fails)
{
#if defined(__SANITIZE_ADDRESS__)
    return;
#else
    uint8_t src[16];
    struct buf b;

    pattern(src, sizeof(src), 19);
    buf_init(&b);
    ck_assert_int_eq(buf_append(&b, src, 16), 0);
    ck_assert_int_eq(buf_reserve(&b, SIZE_MAX / 2 + 1), COLLS_ENOMEM);
    ck_assert_uint_eq(b.cap, 256);
    ck_assert_uint_eq(b.len, 16);
    ck_assert_mem_eq(b.data, src, 16);
    buf_free(&b);
#endif
}
END_TEST

START_TEST(test_reset_keeps_memory)
{
    uint8_t src[40];
    struct buf b;

    pattern(src, sizeof(src), 23);
    buf_init(&b);
    ck_assert_int_eq(buf_append(&b, src, 40), 0);
    buf_consume(&b, 3);
    buf_reset(&b);
    ck_assert_uint_eq(buf_avail(&b), 0);
    ck_assert_uint_eq(b.off, 0);
    ck_assert_uint_eq(b.cap, 256);
    ck_assert_ptr_nonnull(b.data);
    buf_free(&b);
}
END_TEST

/*
 * Random appends, consumes, compactions and resets against a reference
 * array holding exactly the unread bytes.
 */
START_TEST(test_model)
{
    static uint8_t ref[1 << 16];
    uint8_t chunk[700];
    size_t rlen = 0, i;
    uint32_t x = 12345;
    struct buf b;

    buf_init(&b);
    for (i = 0; i < 4000; i++) {
        size_t n;

        x = x * 1103515245u + 12345u;
        n = (x >> 8) % sizeof(chunk);
        switch ((x >> 24) % 8) {
        case 0:
        case 1:
        case 2:
        case 3:
            if (rlen + n > sizeof(ref))
                break;
            pattern(chunk, n, (unsigned)i);
            ck_assert_int_eq(buf_append(&b, chunk, n), 0);
            memcpy(ref + rlen, chunk, n);
            rlen += n;
            break;
        case 4:
        case 5:
            buf_consume(&b, n);
            if (n > rlen)
                n = rlen;
            memmove(ref, ref + n, rlen - n);
            rlen -= n;
            break;
        case 6:
            buf_compact(&b);
            ck_assert_uint_eq(b.off, 0);
            break;
        default:
            ck_assert_int_eq(buf_reserve(&b, n * 3), 0);
            ck_assert_uint_ge(b.cap - b.len, n * 3);
            break;
        }
        ck_assert_uint_eq(buf_avail(&b), rlen);
        ck_assert(b.off <= b.len && b.len <= b.cap);
        if (rlen > 0)
            ck_assert_mem_eq(buf_head(&b), ref, rlen);
    }
    buf_free(&b);
}
END_TEST

Suite *
suite_buf(void)
{
    Suite *s = suite_create("buf");
    TCase *tc = tcase_create("buf");

    tcase_add_test(tc, test_init_empty);
    tcase_add_test(tc, test_append_read);
    tcase_add_test(tc, test_growth_doubles);
    tcase_add_test(tc, test_reserve_fits);
    tcase_add_test(tc, test_consume_all_resets);
    tcase_add_test(tc, test_compact);
    tcase_add_test(tc, test_reserve_compacts);
    tcase_add_test(tc, test_reserve_grows_with_offset);
    tcase_add_test(tc, test_reserve_overflow);
    tcase_add_test(tc, test_reserve_alloc_fails);
    tcase_add_test(tc, test_reset_keeps_memory);
    tcase_add_test(tc, test_model);
    suite_add_tcase(s, tc);
    return s;
}
