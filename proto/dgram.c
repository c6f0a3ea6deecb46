/* proto/dgram.c -- being written */
typedef int colls_placeholder_unit_;
