/* test-rel.c -- (being written) */
#include "tests/unit/suites.h"

Suite *
suite_rel(void)
{
    return suite_create("rel");
}
