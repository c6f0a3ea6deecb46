/* test-dgram.c -- (being written) */
#include "tests/unit/suites.h"

Suite *
suite_dgram(void)
{
    return suite_create("dgram");
}
