/*
 * error.c -- names and texts of the COLLS_E* codes, generated from the one
 * table in colls.h (COLLS_ERRNO_MAP).  0 reads as success; a code that is
 * not in the table reads as "unknown error".  colls_errmsg() gives the
 * daemon's own text, when it sent one with the code.
 */
#include "internal.h"

/* Text for err: "success", the table's text, or "unknown error". */
const char *
colls_strerror(int err)
{
    if (err == 0)
        return "success";
    switch (err) {
#define COLLS__ERR_TEXT(name, value, text)                                     \
    case (value):                                                              \
        return text;
        COLLS_ERRNO_MAP(COLLS__ERR_TEXT)
#undef COLLS__ERR_TEXT
    default:
        return "unknown error";
    }
}

/* Symbolic name for err: "OK", "EINVAL", ..., or "unknown error". */
const char *
colls_err_name(int err)
{
    if (err == 0)
        return "OK";
    switch (err) {
#define COLLS__ERR_NAME(name, value, text)                                     \
    case (value):                                                              \
        return #name;
        COLLS_ERRNO_MAP(COLLS__ERR_NAME)
#undef COLLS__ERR_NAME
    default:
        return "unknown error";
    }
}

/* The daemon's text with the last ERROR on c (kept by ctl.c), or "";
   with NULL, that of this thread's last failed colls_attach. */
const char *
colls_errmsg(const colls_t *c)
{
    return c != NULL ? c->errmsg : colls__attach_errmsg;
}
