/* test-config.c -- (being written) */
#include "tests/unit/suites.h"

Suite *
suite_config(void)
{
    return suite_create("config");
}
