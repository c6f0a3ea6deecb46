/*
 * netutil.h -- socket helpers shared by the test and benchmark programs
 * (tests/bench/raw-*, tests/integration/garbage, the unit tests' fake
 * daemon): "a.b.c.d:port" parsing and whole-buffer reads and writes.
 */
#ifndef COLLS_TESTS_NETUTIL_H
#define COLLS_TESTS_NETUTIL_H

#include <netinet/in.h>
#include <stddef.h>

/* Parses "a.b.c.d:port" into *sa (IPv4).  0, or -1 if malformed. */
int netutil_parse_addr(const char *s, struct sockaddr_in *sa);

/* Reads exactly n bytes from fd.  0, or -1 on end of stream or error. */
int netutil_read_full(int fd, void *p, size_t n);

/* Writes exactly n bytes to fd.  0, or -1 on error. */
int netutil_write_full(int fd, const void *p, size_t n);

#endif
