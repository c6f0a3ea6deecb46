/*
 * cmd_admin.c -- `collsctl add HOST[:PORT]`, `delete HOST`, `halt`: change
 * or stop the virtual machine.
 */
#include <stdio.h>

#include "colls.h"
#include "tools/collsctl.h"

static int
add_exec(int argc, char **argv)
{
    colls_t *c;
    int rc;

    if (argc != 2)
        return collsctl_usage(&cmd_add);
    if (collsctl_attach(&c) < 0)
        return 1;
    rc = colls_add_host(c, argv[1]);
    if (rc < 0)
        fprintf(stderr, "collsctl add %s: %s\n", argv[1], colls_strerror(rc));
    else
        printf("added %s\n", argv[1]);
    colls_detach(c);
    return rc < 0 ? 1 : 0;
}

static int
delete_exec(int argc, char **argv)
{
    colls_t *c;
    int rc, hid;

    if (argc != 2)
        return collsctl_usage(&cmd_delete);
    if (collsctl_attach(&c) < 0)
        return 1;
    hid = collsctl_resolve_host(c, argv[1]);
    rc = hid < 0 ? hid : colls_delete_host(c, hid);
    if (rc < 0)
        fprintf(stderr, "collsctl delete %s: %s\n", argv[1],
                colls_strerror(rc));
    else
        printf("deleted host %d\n", hid);
    colls_detach(c);
    return rc < 0 ? 1 : 0;
}

static int
halt_exec(int argc, char **argv)
{
    colls_t *c;
    int rc;

    (void)argv;
    if (argc != 1)
        return collsctl_usage(&cmd_halt);
    if (collsctl_attach(&c) < 0)
        return 1;
    rc = colls_halt(c);
    if (rc < 0)
        fprintf(stderr, "collsctl halt: %s\n", colls_strerror(rc));
    colls_detach(c);
    return rc < 0 ? 1 : 0;
}

const struct collsctl_cmd cmd_add = {
    .name = "add",
    .usage = "HOST[:PORT]",
    .help = "add the daemon at HOST[:PORT] to the machine",
    .needs_daemon = 1,
    .exec = add_exec,
};

const struct collsctl_cmd cmd_delete = {
    .name = "delete",
    .usage = "HOST",
    .help = "remove a host (hid, name or address) from the machine",
    .needs_daemon = 1,
    .exec = delete_exec,
};

const struct collsctl_cmd cmd_halt = {
    .name = "halt",
    .usage = "",
    .help = "stop every daemon of the machine",
    .needs_daemon = 1,
    .exec = halt_exec,
};
