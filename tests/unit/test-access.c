/*
 * test-access.c -- access.c's pure part: access_rights, who may attach and who
 * may change the machine, from a connection's uid and groups and the
 * --allow-uid/--allow-gid/--admin-uid/--admin-gid options.
 */
#include <sys/types.h>

#include "daemon/config.h"
#include "daemon/access.h"
#include "daemon/task.h"
#include "tests/unit/suites.h"

#define SELF 1000

/* A config with every rights option unset (-1). */
static void
cfg_none(struct config *cfg)
{
    cfg->allow_uid = cfg->allow_gid = -1;
    cfg->admin_uid = cfg->admin_gid = -1;
}

START_TEST(test_rights_default)
{
    struct config cfg;
    gid_t g[] = {1000, 27};

    cfg_none(&cfg);
    /* the daemon's own uid: everything */
    ck_assert_int_eq(access_rights(&cfg, SELF, SELF, g, 2), TASK_RIGHT_ADMIN);
    /* anyone else, root included: nothing */
    ck_assert_int_eq(access_rights(&cfg, SELF, 0, g, 2), TASK_RIGHT_NONE);
    ck_assert_int_eq(access_rights(&cfg, SELF, 1001, g, 2), TASK_RIGHT_NONE);
    /* without groups (SO_PEERGROUPS failed) the uid still counts */
    ck_assert_int_eq(access_rights(&cfg, SELF, SELF, NULL, 0),
                     TASK_RIGHT_ADMIN);
}
END_TEST

START_TEST(test_rights_allow)
{
    struct config cfg;
    gid_t g_in[] = {100, 2000, 3000}; /* primary 100, 2000 supplementary */
    gid_t g_out[] = {100, 3000};

    cfg_none(&cfg);
    cfg.allow_uid = 1001;
    cfg.allow_gid = 2000;
    /* --allow-uid attaches only */
    ck_assert_int_eq(access_rights(&cfg, SELF, 1001, NULL, 0),
                     TASK_RIGHT_ATTACH);
    /* --allow-gid, as a supplementary or as the primary group */
    ck_assert_int_eq(access_rights(&cfg, SELF, 1002, g_in, 3),
                     TASK_RIGHT_ATTACH);
    g_out[0] = 2000;
    ck_assert_int_eq(access_rights(&cfg, SELF, 1002, g_out, 2),
                     TASK_RIGHT_ATTACH);
    g_out[0] = 100;
    ck_assert_int_eq(access_rights(&cfg, SELF, 1002, g_out, 2),
                     TASK_RIGHT_NONE);
    ck_assert_int_eq(access_rights(&cfg, SELF, SELF, NULL, 0),
                     TASK_RIGHT_ADMIN);
}
END_TEST

START_TEST(test_rights_admin)
{
    struct config cfg;
    gid_t g[] = {100, 4000};

    cfg_none(&cfg);
    cfg.allow_uid = 1001;
    cfg.admin_uid = 1003;
    cfg.admin_gid = 4000;
    ck_assert_int_eq(access_rights(&cfg, SELF, 1003, NULL, 0),
                     TASK_RIGHT_ADMIN);
    ck_assert_int_eq(access_rights(&cfg, SELF, 1004, g, 2), TASK_RIGHT_ADMIN);
    ck_assert_int_eq(access_rights(&cfg, SELF, 1001, NULL, 0),
                     TASK_RIGHT_ATTACH);
    /* a group entry of -1 never matches a gid of 0xffffffff */
    cfg.admin_gid = -1;
    g[1] = (gid_t)-1;
    ck_assert_int_eq(access_rights(&cfg, SELF, 1004, g, 2), TASK_RIGHT_NONE);
}
END_TEST

Suite *
suite_access(void)
{
    Suite *s = suite_create("access");
    TCase *tc = tcase_create("rights");

    tcase_add_test(tc, test_rights_default);
    tcase_add_test(tc, test_rights_allow);
    tcase_add_test(tc, test_rights_admin);
    suite_add_tcase(s, tc);
    return s;
}
