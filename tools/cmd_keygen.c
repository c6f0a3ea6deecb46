/*
 * cmd_keygen.c -- collsctl keygen: writes a new cluster key without a
 * daemon.  The key is 32 random bytes from libsodium's CSPRNG, written as
 * 64 hex digits and a newline to a file created 0600 with O_EXCL (an
 * existing file is never overwritten unless --force, and then only after
 * it was removed).  Every daemon of a machine reads the same file
 * (--key-file); docs/protocol.md says what is derived from it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "colls.h"
#include "tools/collsctl.h"

#define CMD_KEYGEN_LEN 32

/*
 * Creates path (0600, O_EXCL) and writes text to it.  0, or -1 with a
 * message printed.
 */
static int
cmd_keygen_write(const char *path, const char *text, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ssize_t n;

    if (fd < 0) {
        fprintf(stderr, "collsctl keygen: %s: %s%s\n", path, strerror(errno),
                errno == EEXIST ? " (use --force to replace it)" : "");
        return -1;
    }
    n = write(fd, text, len);
    if (n != (ssize_t)len || fsync(fd) != 0) {
        fprintf(stderr, "collsctl keygen: writing %s: %s\n", path,
                n < 0 ? strerror(errno) : "short write");
        close(fd);
        unlink(path);
        return -1;
    }
    if (close(fd) != 0) {
        fprintf(stderr, "collsctl keygen: %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int
cmd_keygen_exec(int argc, char **argv)
{
    unsigned char key[CMD_KEYGEN_LEN];
    char hex[2 * CMD_KEYGEN_LEN + 2];
    int opt, force = 0, rc;

    optind = 1;
    while ((opt = collsctl_getopt(argc, argv, &cmd_keygen)) != -1) {
        switch (opt) {
        case 'f':
            force = 1;
            break;
        default:
            return collsctl_usage(&cmd_keygen);
        }
    }
    if (optind != argc - 1)
        return collsctl_usage(&cmd_keygen);
    if (sodium_init() < 0) {
        fprintf(stderr, "collsctl keygen: libsodium cannot start\n");
        return 1;
    }
    if (force && unlink(argv[optind]) != 0 && errno != ENOENT) {
        fprintf(stderr, "collsctl keygen: %s: %s\n", argv[optind],
                strerror(errno));
        return 1;
    }
    randombytes_buf(key, sizeof key);
    sodium_bin2hex(hex, sizeof hex, key, sizeof key);
    sodium_memzero(key, sizeof key);
    hex[2 * CMD_KEYGEN_LEN] = '\n';
    rc = cmd_keygen_write(argv[optind], hex, 2 * CMD_KEYGEN_LEN + 1);
    sodium_memzero(hex, sizeof hex);
    if (rc != 0)
        return 1;
    printf("wrote a cluster key to %s (mode 0600); copy it to every host "
           "and start each collsd with --key-file %s\n",
           argv[optind], argv[optind]);
    return 0;
}

static const struct collsctl_opt keygen_opts[] = {
    {"force", 'f', COLLSCTL_OPT_SHORT, NULL,
     "replace FILE if it exists (it is removed first, never overwritten "
     "in place)"},
    {NULL, 0, 0, NULL, NULL},
};

const struct collsctl_cmd cmd_keygen = {
    .name = "keygen",
    .args = "FILE",
    .help = "write a new cluster key (mode 0600) for --key-file",
    .detail = "FILE gets 32 random bytes as 64 hex digits, created with mode "
              "0600; an existing FILE is left alone unless --force.  Copy it "
              "to every host and start each collsd with --key-file FILE.  "
              "Runs without a daemon.",
    .opts = keygen_opts,
    .operands = COLLSCTL_FILES,
    .needs_daemon = 0,
    .exec = cmd_keygen_exec,
};
