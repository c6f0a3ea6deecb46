/* test-envelope.c -- (being written) */
#include "tests/unit/suites.h"

Suite *
suite_envelope(void)
{
    return suite_create("envelope");
}
