/*
 * runner.c -- runs every unit-test suite.  CK_RUN_SUITE=name runs one,
 * CK_FORK=no keeps everything in one process for a debugger.
 */
#include <stdlib.h>

#include "tests/unit/suites.h"

int
main(void)
{
    Suite *(*const suites[])(void) = {
        suite_buf,    suite_frame, suite_dgram, suite_envelope, suite_dtype,
        suite_reduce, suite_fpc,   suite_rel,   suite_config,   suite_msg,
        suite_p2p,    suite_sched, suite_coll,  suite_hier,     suite_access,
        suite_conn,   suite_auth,  suite_spawn, suite_ring,     suite_plogp,
        suite_board,
    };
    SRunner *sr = srunner_create(NULL);
    size_t i;
    int failed;

    for (i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
        srunner_add_suite(sr, suites[i]());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
