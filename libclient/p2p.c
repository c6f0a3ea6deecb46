/* libclient/p2p.c -- being written */
typedef int colls_placeholder_unit_;
