/* suites.h -- every unit-test suite; runner.c runs them all. */
#ifndef COLLS_TESTS_SUITES_H
#define COLLS_TESTS_SUITES_H

#include <check.h>

Suite *suite_buf(void);
Suite *suite_frame(void);
Suite *suite_ring(void);
Suite *suite_dgram(void);
Suite *suite_envelope(void);
Suite *suite_dtype(void);
Suite *suite_reduce(void);
Suite *suite_fpc(void);
Suite *suite_rel(void);
Suite *suite_auth(void);
Suite *suite_config(void);
Suite *suite_msg(void);
Suite *suite_p2p(void);
Suite *suite_sched(void);
Suite *suite_coll(void);
Suite *suite_hier(void);
Suite *suite_access(void);
Suite *suite_conn(void);
Suite *suite_spawn(void);
Suite *suite_plogp(void);
Suite *suite_board(void);

#endif
