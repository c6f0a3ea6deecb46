/*
 * test-conn.c -- the connection layer's trust check before it writes to
 * a daemon: colls__conn_owner_ok (root, ourselves, or $COLLS_DAEMON_UID).
 * colls_attach refusing a listener of another uid needs root to set up:
 * tests/integration/allow-uid.sh does it.  And the spare payload blocks
 * (colls__conn_payload, colls__conn_payload_free).
 */

#include <malloc.h>
#include <string.h>

#include "colls.h"
#include "libclient/conn.h"
#include "tests/unit/suites.h"

START_TEST(test_owner_ok)
{
    ck_assert_int_eq(colls__conn_owner_ok(0, 1000, NULL), 1);
    ck_assert_int_eq(colls__conn_owner_ok(1000, 1000, NULL), 1);
    ck_assert_int_eq(colls__conn_owner_ok(1001, 1000, NULL), 0);
    ck_assert_int_eq(colls__conn_owner_ok(1001, 1000, ""), 0);
    ck_assert_int_eq(colls__conn_owner_ok(1001, 1000, "1001"), 1);
    ck_assert_int_eq(colls__conn_owner_ok(1002, 1000, "1001"), 0);
    /* not a plain number: trusts nobody more */
    ck_assert_int_eq(colls__conn_owner_ok(1001, 1000, "1001x"), 0);
    ck_assert_int_eq(colls__conn_owner_ok(1001, 1000, "-1"), 0);
    ck_assert_int_eq(colls__conn_owner_ok(1001, 1000, " 1001"), 0);
}
END_TEST

/*
 * A large payload block freed through the connection comes back for the
 * next payload of at least half its size and at most its own, once; small
 * and huge blocks are not kept; four at most, the smallest giving way.
 * (colls__conn_close frees them; cn here has no loop, so the test does.)
 */
START_TEST(test_spares)
{
    struct colls__conn cn;
    const size_t k64 = COLLS__SPARE_MIN;
    uint8_t *a, *b, *c, *blocks[COLLS__SPARES + 1];
    unsigned i, kept;

    memset(&cn, 0, sizeof(cn));
    a = colls__conn_payload(&cn, 4 * k64);
    ck_assert_ptr_nonnull(a);
    memset(a, 0xab, 4 * k64);
    colls__conn_payload_free(&cn, a, 4 * k64);
    /* too small for it (less than half): a block of its own */
    b = colls__conn_payload(&cn, k64);
    ck_assert_ptr_ne(b, a);
    free(b);
    /* too large for it */
    b = colls__conn_payload(&cn, 8 * k64);
    ck_assert_ptr_ne(b, a);
    free(b);
    /* it fits: the same block, and only once */
    b = colls__conn_payload(&cn, 3 * k64);
    ck_assert_ptr_eq(b, a);
    c = colls__conn_payload(&cn, 3 * k64);
    ck_assert_ptr_ne(c, a);
    free(c);
    colls__conn_payload_free(&cn, b, 3 * k64);
    /* a small one and a huge one are freed, not kept */
    colls__conn_payload_free(&cn, malloc(k64 / 2), k64 / 2);
    colls__conn_payload_free(&cn, malloc(COLLS__SPARE_MAX + k64),
                             COLLS__SPARE_MAX + k64);
    colls__conn_payload_free(&cn, NULL, 0);
    for (i = 0, kept = 0; i < COLLS__SPARES; i++)
        kept += cn.spare[i] != NULL;
    ck_assert_uint_eq(kept, 1);
    /* five more of growing size: the four largest stay */
    for (i = 0; i <= COLLS__SPARES; i++)
        blocks[i] = malloc((i + 5) * k64);
    for (i = 0; i <= COLLS__SPARES; i++)
        colls__conn_payload_free(&cn, blocks[i], (i + 5) * k64);
    for (i = 0; i < COLLS__SPARES; i++) {
        ck_assert_ptr_nonnull(cn.spare[i]);
        ck_assert_uint_ge(cn.spare_cap[i], 6 * k64);
        ck_assert_uint_eq(cn.spare_cap[i], malloc_usable_size(cn.spare[i]));
    }
    for (i = 0; i < COLLS__SPARES; i++)
        free(cn.spare[i]);
}
END_TEST

Suite *
suite_conn(void)
{
    Suite *s = suite_create("conn");
    TCase *tc = tcase_create("owner");

    tcase_add_test(tc, test_owner_ok);
    suite_add_tcase(s, tc);
    tc = tcase_create("spares");
    tcase_add_test(tc, test_spares);
    suite_add_tcase(s, tc);
    return s;
}
