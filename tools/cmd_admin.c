/* tools/cmd_admin.c -- being written */
typedef int colls_placeholder_unit_;
