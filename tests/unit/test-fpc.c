/* test-fpc.c -- (being written) */
#include "tests/unit/suites.h"

Suite *
suite_fpc(void)
{
    return suite_create("fpc");
}
