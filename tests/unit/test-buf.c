/* test-buf.c -- (being written) */
#include "tests/unit/suites.h"

Suite *
suite_buf(void)
{
    return suite_create("buf");
}
