/*
 * check.h -- the one check macro of the PVM test programs: prints
 * "<prefix>NAME: ok" or "<prefix>NAME: FAIL <details>" and counts the
 * failures (the program's exit status).
 */
#ifndef PVM_TEST_CHECK_H
#define PVM_TEST_CHECK_H

#include <stdio.h>

static int failures;
static char check_prefix[32];

#define CHECK(name, cond, ...)                                                 \
    do {                                                                       \
        if (cond) {                                                            \
            printf("%s%s: ok\n", check_prefix, name);                          \
        } else {                                                               \
            printf("%s%s: FAIL ", check_prefix, name);                         \
            printf(__VA_ARGS__);                                               \
            printf("\n");                                                      \
            failures++;                                                        \
        }                                                                      \
        fflush(stdout);                                                        \
    } while (0)

#endif /* PVM_TEST_CHECK_H */
