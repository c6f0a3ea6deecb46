/* test-frame.c -- (being written) */
#include "tests/unit/suites.h"

Suite *
suite_frame(void)
{
    return suite_create("frame");
}
