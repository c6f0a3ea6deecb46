/*
 * test-spawn.c -- the pure parts of daemon/spawn.c: splitting a child's
 * output into bounded lines, placement of copies over the host table,
 * and the --spawn-path check (on a scratch directory).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "colls.h"
#include "daemon/spawn.h"
#include "tests/unit/suites.h"

/* The lines spawn_lines passed on, joined with '|'. */
struct got {
    char text[3 * SPAWN_LINE_MAX];
    size_t len;
    int n;
    size_t lens[16];
};

static void
got_line(void *arg, const char *line, size_t len)
{
    struct got *g = arg;

    if (g->n > 0)
        g->text[g->len++] = '|';
    memcpy(g->text + g->len, line, len);
    g->len += len;
    g->text[g->len] = '\0';
    if (g->n < 16)
        g->lens[g->n] = len;
    g->n++;
}

static void
feed(struct spawn_lines *l, struct got *g, const char *s)
{
    spawn_lines_feed(l, s, strlen(s), got_line, g);
}

START_TEST(test_lines)
{
    struct spawn_lines l = {0};
    struct got g = {0};

    feed(&l, &g, "one\ntw");
    ck_assert_str_eq(g.text, "one");
    feed(&l, &g, "o\n\nthree");
    ck_assert_str_eq(g.text, "one|two|");
    ck_assert_int_eq(g.n, 3);
    spawn_lines_flush(&l, got_line, &g);
    ck_assert_str_eq(g.text, "one|two||three");
    spawn_lines_flush(&l, got_line, &g); /* nothing left */
    ck_assert_int_eq(g.n, 4);
}
END_TEST

START_TEST(test_lines_cut)
{
    struct spawn_lines l = {0};
    struct got g = {0};
    char *big = malloc(2 * SPAWN_LINE_MAX + 2);
    size_t i;

    ck_assert_ptr_nonnull(big);
    /* a line of 2 * MAX + 1 bytes in one read: three pieces */
    for (i = 0; i < 2 * SPAWN_LINE_MAX + 1; i++)
        big[i] = 'a' + (char)(i % 26);
    big[2 * SPAWN_LINE_MAX + 1] = '\0';
    feed(&l, &g, big);
    feed(&l, &g, "\n");
    ck_assert_int_eq(g.n, 3);
    ck_assert_uint_eq(g.lens[0], SPAWN_LINE_MAX);
    ck_assert_uint_eq(g.lens[1], SPAWN_LINE_MAX);
    ck_assert_uint_eq(g.lens[2], 1);
    ck_assert_int_eq(memcmp(g.text, big, SPAWN_LINE_MAX), 0);
    /* exactly MAX bytes, the newline in the next read: one line, not an
       empty one after it */
    memset(&g, 0, sizeof(g));
    big[SPAWN_LINE_MAX] = '\0';
    feed(&l, &g, big);
    feed(&l, &g, "\nnext\n");
    ck_assert_int_eq(g.n, 2);
    ck_assert_uint_eq(g.lens[0], SPAWN_LINE_MAX);
    ck_assert_str_eq(g.text + SPAWN_LINE_MAX, "|next");
    /* an empty line is still a line */
    memset(&g, 0, sizeof(g));
    feed(&l, &g, "\n");
    ck_assert_int_eq(g.n, 1);
    ck_assert_uint_eq(g.lens[0], 0);
    free(big);
}
END_TEST

static const struct spawn_host hosts[] = {
    {1, 1, 3, "alpha", "10.0.0.1:7490", "x86_64"},
    {2, 1, 0, "beta", "10.0.0.2:7490", "aarch64"},
    {3, 0, 0, "gamma", "10.0.0.3:7490", "x86_64"}, /* down */
    {4, 1, 1, "delta", "10.0.0.4:7490", "x86_64"},
};

START_TEST(test_place_any)
{
    int hids[8], i;
    /* fewest tasks first counting those placed, lowest hid on ties:
       loads 3, 0, -, 1 */
    const int want[8] = {2, 2, 4, 2, 4, 1, 2, 4};

    ck_assert_int_eq(spawn_place(hosts, 4, COLLS_SPAWN_ANY, NULL, 8, hids), 0);
    for (i = 0; i < 8; i++)
        ck_assert_int_eq(hids[i], want[i]);
}
END_TEST

START_TEST(test_place_host)
{
    int hids[3];

    ck_assert_int_eq(spawn_place(hosts, 4, COLLS_SPAWN_HOST, "delta", 3, hids),
                     0);
    ck_assert_int_eq(hids[0], 4);
    ck_assert_int_eq(hids[2], 4);
    ck_assert_int_eq(
        spawn_place(hosts, 4, COLLS_SPAWN_HOST, "10.0.0.2", 1, hids), 0);
    ck_assert_int_eq(hids[0], 2);
    ck_assert_int_eq(
        spawn_place(hosts, 4, COLLS_SPAWN_HOST, "10.0.0.1:7490", 1, hids), 0);
    ck_assert_int_eq(hids[0], 1);
    ck_assert_int_eq(spawn_place(hosts, 4, COLLS_SPAWN_HOST, "4", 1, hids), 0);
    ck_assert_int_eq(hids[0], 4);
    /* down, unknown, or not a whole number */
    ck_assert_int_eq(spawn_place(hosts, 4, COLLS_SPAWN_HOST, "gamma", 1, hids),
                     COLLS_EHOSTDOWN);
    ck_assert_int_eq(spawn_place(hosts, 4, COLLS_SPAWN_HOST, "9", 1, hids),
                     COLLS_EHOSTDOWN);
    ck_assert_int_eq(spawn_place(hosts, 4, COLLS_SPAWN_HOST, "4x", 1, hids),
                     COLLS_EHOSTDOWN);
    ck_assert_int_eq(spawn_place(hosts, 4, COLLS_SPAWN_HOST, "10.0.0", 1, hids),
                     COLLS_EHOSTDOWN);
}
END_TEST

START_TEST(test_place_arch)
{
    int hids[4], i;

    /* x86_64 and up: hosts 1 (3 tasks) and 4 (1 task) */
    ck_assert_int_eq(spawn_place(hosts, 4, COLLS_SPAWN_ARCH, "x86_64", 4, hids),
                     0);
    ck_assert_int_eq(hids[0], 4);
    ck_assert_int_eq(hids[1], 4);
    for (i = 2; i < 4; i++)
        ck_assert(hids[i] == 1 || hids[i] == 4);
    ck_assert_int_eq(
        spawn_place(hosts, 4, COLLS_SPAWN_ARCH, "aarch64", 2, hids), 0);
    ck_assert_int_eq(hids[1], 2);
    ck_assert_int_eq(spawn_place(hosts, 4, COLLS_SPAWN_ARCH, "sparc", 1, hids),
                     COLLS_EHOSTDOWN);
    /* bad requests */
    ck_assert_int_eq(spawn_place(hosts, 4, COLLS_SPAWN_ARCH, "", 1, hids),
                     COLLS_EINVAL);
    ck_assert_int_eq(spawn_place(hosts, 4, COLLS_SPAWN_HOST, NULL, 1, hids),
                     COLLS_EINVAL);
    ck_assert_int_eq(spawn_place(hosts, 4, 7, NULL, 1, hids), COLLS_EINVAL);
    ck_assert_int_eq(spawn_place(hosts, 0, COLLS_SPAWN_ANY, NULL, 1, hids),
                     COLLS_EHOSTDOWN);
}
END_TEST

START_TEST(test_path_inside)
{
    ck_assert(spawn_path_inside("/opt/bin/x", "/opt/bin"));
    ck_assert(spawn_path_inside("/opt/bin/sub/x", "/opt/bin"));
    ck_assert(!spawn_path_inside("/opt/binary/x", "/opt/bin"));
    ck_assert(!spawn_path_inside("/opt/bin", "/opt/bin"));
    ck_assert(!spawn_path_inside("/opt", "/opt/bin"));
    ck_assert(spawn_path_inside("/x", "/"));
    ck_assert(!spawn_path_inside("/x", ""));
}
END_TEST

/* Writes an executable (mode) file at path. */
static void
make_file(const char *path, mode_t mode)
{
    FILE *f = fopen(path, "w");

    ck_assert_ptr_nonnull(f);
    fputs("#!/bin/sh\nexit 0\n", f);
    fclose(f);
    ck_assert_int_eq(chmod(path, mode), 0);
}

START_TEST(test_resolve)
{
    char tmpl[] = "/tmp/test-spawn.XXXXXX", *dir = mkdtemp(tmpl);
    char allowed[256], other[256], p[PATH_MAX], path[PATH_MAX];
    char out[PATH_MAX], want[PATH_MAX], list[2 * PATH_MAX + 8];

    ck_assert_ptr_nonnull(dir);
    snprintf(allowed, sizeof(allowed), "%s/bin", dir);
    snprintf(other, sizeof(other), "%s/other", dir);
    ck_assert_int_eq(mkdir(allowed, 0755), 0);
    ck_assert_int_eq(mkdir(other, 0755), 0);
    snprintf(p, sizeof(p), "%s/prog", allowed);
    make_file(p, 0755);
    snprintf(p, sizeof(p), "%s/plain", allowed);
    make_file(p, 0644);
    snprintf(p, sizeof(p), "%s/second", other);
    make_file(p, 0755);
    snprintf(p, sizeof(p), "%s/escape", allowed);
    snprintf(path, sizeof(path), "%s/second", other);
    ck_assert_int_eq(symlink(path, p), 0);
    ck_assert_ptr_nonnull(realpath(allowed, want));
    strcat(want, "/prog");

    /* a bare name, a relative path and an absolute one inside */
    ck_assert_int_eq(spawn_resolve(allowed, "prog", out, sizeof(out)), 0);
    ck_assert_str_eq(out, want);
    snprintf(path, sizeof(path), "%s/prog", allowed);
    ck_assert_int_eq(spawn_resolve(allowed, path, out, sizeof(out)), 0);
    ck_assert_str_eq(out, want);
    snprintf(list, sizeof(list), "%s:%s", allowed, other);
    ck_assert_int_eq(spawn_resolve(list, "second", out, sizeof(out)), 0);
    /* missing, not executable, a directory */
    ck_assert_int_eq(spawn_resolve(allowed, "nothing", out, sizeof(out)),
                     COLLS_ENOENT);
    ck_assert_int_eq(spawn_resolve(allowed, "plain", out, sizeof(out)),
                     COLLS_ENOENT);
    ck_assert_int_eq(spawn_resolve(dir, "bin", out, sizeof(out)), COLLS_ENOENT);
    /* outside: absolute, through .., through a symbolic link */
    snprintf(path, sizeof(path), "%s/second", other);
    ck_assert_int_eq(spawn_resolve(allowed, path, out, sizeof(out)),
                     COLLS_EPERM);
    ck_assert_int_eq(
        spawn_resolve(allowed, "../other/second", out, sizeof(out)),
        COLLS_EPERM);
    ck_assert_int_eq(spawn_resolve(allowed, "escape", out, sizeof(out)),
                     COLLS_EPERM);
    /* no --spawn-path: nothing runs */
    ck_assert_int_eq(spawn_resolve("", "prog", out, sizeof(out)), COLLS_EPERM);
    ck_assert_int_eq(spawn_resolve(allowed, "", out, sizeof(out)),
                     COLLS_EINVAL);

    snprintf(p, sizeof(p), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(p), 0);
}
END_TEST

START_TEST(test_env_check)
{
    char *good[] = {"COLLS_DIRECT_MAX=0", "PVM_EXPORT=A:B", "A=", "_x1=a=b",
                    "LD_PRELOAD=/tmp/x.so"};
    char *colls_only[] = {"COLLS_ALG_BCAST=chain", "PVM_ROOT=/usr"};
    char *no_eq[] = {"COLLS_TRACE"}, *empty_name[] = {"=x"},
         *digit[] = {"1A=x"}, *space[] = {"A B=x"}, *dash[] = {"A-B=x"};
    char *unset[] = {NULL};
    const char *why = NULL;

    /* root or the daemon's own user may pass anything well formed */
    ck_assert_int_eq(spawn_env_check(good, 5, 0, 1000, &why), 0);
    ck_assert_int_eq(spawn_env_check(good, 5, 1000, 1000, &why), 0);
    ck_assert_int_eq(spawn_env_check(good, 0, 1001, 1000, &why), 0);
    /* another user: COLLS_* and PVM_* only */
    ck_assert_int_eq(spawn_env_check(colls_only, 2, 1001, 1000, &why), 0);
    ck_assert_int_eq(spawn_env_check(good, 5, 1001, 1000, &why), COLLS_EPERM);
    ck_assert_ptr_nonnull(strstr(why, "another uid"));
    ck_assert_int_eq(spawn_env_check(good + 2, 1, 1001, 0, &why), COLLS_EPERM);
    /* not NAME=value, whoever asks */
    why = NULL;
    ck_assert_int_eq(spawn_env_check(no_eq, 1, 0, 0, &why), COLLS_EINVAL);
    ck_assert_ptr_nonnull(why);
    ck_assert_int_eq(spawn_env_check(empty_name, 1, 0, 0, &why), COLLS_EINVAL);
    ck_assert_int_eq(spawn_env_check(digit, 1, 0, 0, &why), COLLS_EINVAL);
    ck_assert_int_eq(spawn_env_check(space, 1, 0, 0, &why), COLLS_EINVAL);
    ck_assert_int_eq(spawn_env_check(dash, 1, 0, 0, &why), COLLS_EINVAL);
    ck_assert_int_eq(spawn_env_check(unset, 1, 0, 0, &why), COLLS_EINVAL);
    /* too many entries: refused before any is looked at */
    ck_assert_int_eq(spawn_env_check(good, SPAWN_MAX_ENV + 1, 0, 0, &why),
                     COLLS_EINVAL);
}
END_TEST

Suite *
suite_spawn(void)
{
    Suite *s = suite_create("spawn");
    TCase *tc = tcase_create("spawn");

    tcase_add_test(tc, test_lines);
    tcase_add_test(tc, test_lines_cut);
    tcase_add_test(tc, test_place_any);
    tcase_add_test(tc, test_place_host);
    tcase_add_test(tc, test_place_arch);
    tcase_add_test(tc, test_path_inside);
    tcase_add_test(tc, test_resolve);
    tcase_add_test(tc, test_env_check);
    suite_add_tcase(s, tc);
    return s;
}
