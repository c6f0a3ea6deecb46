/* test-reduce.c -- (being written) */
#include "tests/unit/suites.h"

Suite *
suite_reduce(void)
{
    return suite_create("reduce");
}
