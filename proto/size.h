/*
 * size.h -- parsing of byte counts as users write them ("64k", "2MiB").
 *
 * One parser for the daemon's options, its algorithm overrides and
 * collsctl's size arguments, so "16m" means the same everywhere.
 */
#ifndef COLLS_PROTO_SIZE_H
#define COLLS_PROTO_SIZE_H

#include <stdint.h>

/*
 * Parses a size at s: decimal digits, then optionally k, m or g (powers
 * of 1024, either case), which may be followed by "i" and/or "b" ("KiB",
 * "mb").  On success stores the value in *out, the first character after
 * the size in *end (when end is not NULL) and returns 0.  Returns -1,
 * leaving *out alone, when s does not start with a digit, the value is
 * over max, or, with end NULL, anything follows the size.
 */
int size_parse(const char *s, const char **end, uint64_t max, uint64_t *out);

#endif
