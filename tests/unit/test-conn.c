/*
 * test-conn.c -- the connection layer's trust check before it writes to
 * a daemon: colls__conn_owner_ok (root, ourselves, or $COLLS_DAEMON_UID).
 * colls_attach refusing a listener of another uid needs root to set up:
 * tests/integration/allow-uid.sh does it.
 */

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

Suite *
suite_conn(void)
{
    Suite *s = suite_create("conn");
    TCase *tc = tcase_create("owner");

    tcase_add_test(tc, test_owner_ok);
    suite_add_tcase(s, tc);
    return s;
}
