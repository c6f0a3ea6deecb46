/* test-dtype.c -- (being written) */
#include "tests/unit/suites.h"

Suite *
suite_dtype(void)
{
    return suite_create("dtype");
}
