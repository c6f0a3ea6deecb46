/* tools/cmd_status.c -- being written */
typedef int colls_placeholder_unit_;
