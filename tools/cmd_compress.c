/* tools/cmd_compress.c -- being written */
typedef int colls_placeholder_unit_;
