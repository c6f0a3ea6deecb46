/*
 * test-config.c -- collsd's option table: defaults, parsing of each
 * source, ranges, precedence (command line > env > file > default) and
 * the error codes of bad input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "colls.h"
#include "daemon/config.h"
#include "daemon/log.h"
#include "proto/size.h"
#include "tests/unit/suites.h"

/* Parses a NULL-terminated argv list (without argv[0]) and envp. */
static int
parse(struct config *cfg, char **args, char **envp, char *err)
{
    char *argv[32];
    int argc = 0;

    argv[argc++] = "collsd";
    while (args != NULL && *args != NULL && argc < 31)
        argv[argc++] = *args++;
    argv[argc] = NULL;
    return config_parse(cfg, argc, argv, envp, err, CONFIG_ERR_LEN);
}

/* Writes text to a temporary file; returns its path (static buffer). */
static const char *
write_tmp(const char *text)
{
    static char path[64];
    int fd;

    strcpy(path, "/tmp/test-config-XXXXXX");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

START_TEST(test_defaults)
{
    struct config cfg;
    char err[CONFIG_ERR_LEN], sock[256];

    ck_assert_int_eq(parse(&cfg, NULL, NULL, err), 0);
    ck_assert_str_eq(cfg.listen, "127.0.0.1:7490");
    ck_assert_str_eq(cfg.hostfile, "");
    ck_assert_int_eq(cfg.heartbeat_ms, 500);
    ck_assert_int_eq(cfg.dead_after_ms, 3000);
    ck_assert_int_eq(cfg.task_queue_limit, 64 * 1024 * 1024);
    ck_assert_int_eq(cfg.task_queue_max, 64 * 1024 * 1024);
    ck_assert_int_eq(cfg.task_credit, 8 * 1024 * 1024);
    ck_assert_int_eq(cfg.max_message, 256 * 1024 * 1024);
    ck_assert_int_eq(cfg.allow_uid, -1);
    ck_assert_int_eq(cfg.allow_gid, -1);
    ck_assert_int_eq(cfg.admin_uid, -1);
    ck_assert_int_eq(cfg.admin_gid, -1);
    ck_assert_int_eq(cfg.log_level, LOG_LVL_INFO);
    ck_assert_int_eq(cfg.foreground, 0);
    ck_assert(cfg.fault_drop == 0.0);
    config_default_socket(sock, sizeof(sock));
    ck_assert_str_eq(cfg.socket, sock);
    ck_assert(strstr(sock, "collsd.sock") != NULL);
    config_free(&cfg);
}
END_TEST

START_TEST(test_args)
{
    struct config cfg;
    char err[CONFIG_ERR_LEN];
    char *args[] = {"--listen",
                    "10.0.0.1:9000",
                    "--heartbeat=100",
                    "--dead-after",
                    "1000",
                    "--foreground",
                    "--task-queue-limit",
                    "2m",
                    "--fault-drop",
                    "0.25",
                    "--log-level",
                    "debug",
                    "--socket",
                    "/tmp/x/s.sock",
                    "--rate",
                    "1G",
                    NULL};

    ck_assert_int_eq(parse(&cfg, args, NULL, err), 0);
    ck_assert_str_eq(cfg.listen, "10.0.0.1:9000");
    ck_assert_int_eq(cfg.heartbeat_ms, 100);
    ck_assert_int_eq(cfg.dead_after_ms, 1000);
    ck_assert_int_eq(cfg.foreground, 1);
    ck_assert_int_eq(cfg.task_queue_limit, 2 * 1024 * 1024);
    ck_assert(cfg.fault_drop == 0.25);
    ck_assert_int_eq(cfg.log_level, LOG_LVL_DEBUG);
    ck_assert_str_eq(cfg.socket, "/tmp/x/s.sock");
    ck_assert_int_eq(cfg.rate, 1024LL * 1024 * 1024);
    config_free(&cfg);
}
END_TEST

START_TEST(test_precedence)
{
    struct config cfg;
    char err[CONFIG_ERR_LEN], cfarg[80];
    const char *path = write_tmp("# a comment\n"
                                 "heartbeat 200\n"
                                 "  dead_after = 5000  \n"
                                 "max-tasks 7\n"
                                 "foreground\n"
                                 "\n"
                                 "mtu 1400\n");
    char *envp[] = {"PATH=/bin", "COLLS_DEAD_AFTER=6000", "COLLS_MTU=1300",
                    "COLLS_HEARTBEAT=250", NULL};
    char *args[] = {cfarg, "--mtu", "1200", NULL};

    snprintf(cfarg, sizeof(cfarg), "--config=%s", path);
    ck_assert_int_eq(parse(&cfg, args, envp, err), 0);
    ck_assert_int_eq(cfg.max_tasks, 7);        /* file over default */
    ck_assert_int_eq(cfg.foreground, 1);       /* bare flag in the file */
    ck_assert_int_eq(cfg.dead_after_ms, 6000); /* env over file */
    ck_assert_int_eq(cfg.heartbeat_ms, 250);   /* env over file */
    ck_assert_int_eq(cfg.mtu, 1200);           /* args over env and file */
    ck_assert_str_eq(cfg.config_file, path);
    config_free(&cfg);

    /* COLLS_CONFIG names the file when --config is absent. */
    {
        char env1[96];
        char *envp2[] = {env1, NULL};

        snprintf(env1, sizeof(env1), "COLLS_CONFIG=%s", path);
        ck_assert_int_eq(parse(&cfg, NULL, envp2, err), 0);
        ck_assert_int_eq(cfg.max_tasks, 7);
        config_free(&cfg);
    }
    unlink(path);
}
END_TEST

START_TEST(test_bad_values)
{
    struct config cfg;
    char err[CONFIG_ERR_LEN];
    char *unknown[] = {"--no-such-option", "1", NULL};
    char *notnum[] = {"--heartbeat", "fast", NULL};
    char *frac[] = {"--heartbeat", "1.5", NULL};
    char *range[] = {"--fault-drop", "1.5", NULL};
    char *low[] = {"--mtu", "100", NULL};
    char *missing[] = {"--listen", NULL};
    char *addr[] = {"--listen", "127.0.0.1", NULL};
    char *port[] = {"--listen", "127.0.0.1:70000", NULL};
    char *level[] = {"--log-level", "loud", NULL};
    char *boolv[] = {"--foreground=maybe", NULL};
    char *stray[] = {"listen", NULL};
    char *suffix[] = {"--task-queue-limit", "3x", NULL};
    char *relation[] = {"--heartbeat", "1000", "--dead-after", "1500", NULL};
    char *both[] = {"--hostfile", "/x", "--join", "1.2.3.4:5", NULL};
    char *slowbeat[] = {"--heartbeat", "20000", "--dead-after", "60000", NULL};
    char *badenv[] = {"COLLS_MAX_TASKS=0", NULL};

    ck_assert_int_eq(parse(&cfg, unknown, NULL, err), COLLS_ENOENT);
    ck_assert(strstr(err, "no-such-option") != NULL);
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, notnum, NULL, err), COLLS_EINVAL);
    ck_assert(strstr(err, "heartbeat") != NULL);
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, frac, NULL, err), COLLS_EINVAL);
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, range, NULL, err), COLLS_EINVAL);
    ck_assert(strstr(err, "out of range") != NULL);
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, low, NULL, err), COLLS_EINVAL);
    ck_assert(strstr(err, "out of range") != NULL);
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, missing, NULL, err), COLLS_EINVAL);
    ck_assert(strstr(err, "needs a value") != NULL);
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, addr, NULL, err), COLLS_EINVAL);
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, port, NULL, err), COLLS_EINVAL);
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, level, NULL, err), COLLS_EINVAL);
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, boolv, NULL, err), COLLS_EINVAL);
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, stray, NULL, err), COLLS_EINVAL);
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, suffix, NULL, err), COLLS_EINVAL);
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, relation, NULL, err), COLLS_EINVAL);
    ck_assert(strstr(err, "dead-after") != NULL);
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, both, NULL, err), COLLS_EINVAL);
    config_free(&cfg);
    /* a --heartbeat longer than the idle one: the idle one is ignored */
    ck_assert_int_eq(parse(&cfg, slowbeat, NULL, err), 0);
    ck_assert_int_eq(cfg.heartbeat_ms, 20000);
    ck_assert_int_eq(cfg.idle_heartbeat_ms, 10000);
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, NULL, badenv, err), COLLS_EINVAL);
    ck_assert(strstr(err, "COLLS_MAX_TASKS") != NULL);
    config_free(&cfg);
}
END_TEST

START_TEST(test_bad_file)
{
    struct config cfg;
    char err[CONFIG_ERR_LEN];
    char *nofile[] = {"--config", "/nonexistent/collsd.conf", NULL};
    char cfarg[80];
    char *args[] = {cfarg, NULL};
    const char *path;

    ck_assert_int_eq(parse(&cfg, nofile, NULL, err), COLLS_ENOENT);
    config_free(&cfg);

    path = write_tmp("heartbeat 100\nbogus 1\n");
    snprintf(cfarg, sizeof(cfarg), "--config=%s", path);
    ck_assert_int_eq(parse(&cfg, args, NULL, err), COLLS_ENOENT);
    ck_assert(strstr(err, ":2:") != NULL);
    config_free(&cfg);
    unlink(path);

    path = write_tmp("mtu 99999999\n");
    snprintf(cfarg, sizeof(cfarg), "--config=%s", path);
    ck_assert_int_eq(parse(&cfg, args, NULL, err), COLLS_EINVAL);
    ck_assert(strstr(err, ":1:") != NULL);
    config_free(&cfg);
    unlink(path);
}
END_TEST

/* --log: the four places, and the combinations refused. */
START_TEST(test_log_place)
{
    struct config cfg;
    char err[CONFIG_ERR_LEN];
    char *syslog_fg[] = {"--log", "syslog", NULL};
    char *bad[] = {"--log", "journal", "--foreground", NULL};
    char *stderr_bg[] = {"--log", "stderr", NULL};
    char *stderr_fg[] = {"--log", "stderr", "-f", NULL};
    char *file_syslog[] = {"--log", "syslog", "--log-file", "/x", NULL};
    char *env[] = {"COLLS_LOG=file", NULL};

    ck_assert_int_eq(parse(&cfg, NULL, NULL, err), 0);
    ck_assert_str_eq(cfg.log_to, "auto");
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, syslog_fg, NULL, err), 0);
    ck_assert_str_eq(cfg.log_to, "syslog");
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, NULL, env, err), 0);
    ck_assert_str_eq(cfg.log_to, "file");
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, stderr_fg, NULL, err), 0);
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, bad, NULL, err), COLLS_EINVAL);
    ck_assert_str_eq(err, "--log: 'journal' is not stderr, file, syslog or "
                          "auto");
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, stderr_bg, NULL, err), COLLS_EINVAL);
    ck_assert(strstr(err, "needs --foreground") != NULL);
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, file_syslog, NULL, err), COLLS_EINVAL);
    ck_assert_str_eq(err, "--log-file and --log syslog exclude each other");
    config_free(&cfg);
}
END_TEST

/* $CONFIGURATION_DIRECTORY: collsd.conf, hostfile and cluster.key there
   are defaults when present; the options and --join win; absent files
   and a relative or listed directory change nothing. */
START_TEST(test_config_dir)
{
    struct config cfg;
    char err[CONFIG_ERR_LEN], dir[] = "/tmp/test-config-dir-XXXXXX";
    char envdir[96], path[96], hf[96];
    char *env[] = {envdir, NULL};
    char *join[] = {"--join", "1.2.3.4:5", NULL};
    char *own[] = {"--config", "/dev/null", "--key-file", "/k", NULL};
    char *relative[] = {"CONFIGURATION_DIRECTORY=etc/collsd", NULL};
    FILE *f;

    ck_assert(mkdtemp(dir) != NULL);
    snprintf(envdir, sizeof(envdir), "CONFIGURATION_DIRECTORY=%s", dir);
    /* empty: nothing changes */
    ck_assert_int_eq(parse(&cfg, NULL, env, err), 0);
    ck_assert_str_eq(cfg.hostfile, "");
    ck_assert_str_eq(cfg.key_file, "");
    ck_assert_str_eq(cfg.config_file, "");
    config_free(&cfg);
    snprintf(path, sizeof(path), "%s/collsd.conf", dir);
    f = fopen(path, "w");
    ck_assert(f != NULL);
    fputs("name from-dir\nheartbeat 100\n", f);
    fclose(f);
    snprintf(hf, sizeof(hf), "%s/hostfile", dir);
    f = fopen(hf, "w");
    ck_assert(f != NULL);
    fclose(f);
    ck_assert_int_eq(parse(&cfg, NULL, env, err), 0);
    ck_assert_str_eq(cfg.config_file, path);
    ck_assert_str_eq(cfg.name, "from-dir");
    ck_assert_str_eq(cfg.hostfile, hf);
    ck_assert_str_eq(cfg.key_file, ""); /* no cluster.key there */
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, join, env, err), 0);
    ck_assert_str_eq(cfg.hostfile, "");
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, own, env, err), 0);
    ck_assert_str_eq(cfg.name, "");
    ck_assert_str_eq(cfg.key_file, "/k");
    config_free(&cfg);
    ck_assert_int_eq(parse(&cfg, NULL, relative, err), 0);
    ck_assert_str_eq(cfg.config_file, "");
    config_free(&cfg);
    unlink(path);
    unlink(hf);
    rmdir(dir);
}
END_TEST

START_TEST(test_set_and_help)
{
    struct config cfg;
    char err[CONFIG_ERR_LEN];
    char *help[] = {"-h", "--no-such", NULL};
    char *buf = NULL;
    size_t len = 0;
    FILE *f;

    config_defaults(&cfg);
    ck_assert_int_eq(config_set(&cfg, "dead_after", "4000", err, sizeof(err)),
                     0);
    ck_assert_int_eq(cfg.dead_after_ms, 4000);
    ck_assert_int_eq(config_set(&cfg, "window", "3", err, sizeof(err)),
                     COLLS_EINVAL);
    ck_assert_int_eq(cfg.window, 1024); /* unchanged on error */
    ck_assert_int_eq(config_set(&cfg, "nope", "3", err, sizeof(err)),
                     COLLS_ENOENT);
    config_free(&cfg);

    /* --help stops parsing before later errors. */
    ck_assert_int_eq(parse(&cfg, help, NULL, err), 0);
    ck_assert_int_eq(cfg.help, 1);
    config_free(&cfg);

    f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    config_usage(f, "collsd");
    fclose(f);
    ck_assert(strstr(buf, "--dead-after MS") != NULL);
    ck_assert(strstr(buf, "COLLS_LISTEN") != NULL);
    ck_assert(strstr(buf, "--task-queue-limit BYTES") != NULL);
    free(buf);
}
END_TEST

/* proto/size.c: the one size parser of collsd and collsctl. */
START_TEST(test_size_parse)
{
    const char *end;
    uint64_t v = 7;

    ck_assert_int_eq(size_parse("0", NULL, 10, &v), 0);
    ck_assert_uint_eq(v, 0);
    ck_assert_int_eq(size_parse("64k", NULL, UINT64_MAX, &v), 0);
    ck_assert_uint_eq(v, 65536);
    ck_assert_int_eq(size_parse("2MiB", NULL, UINT64_MAX, &v), 0);
    ck_assert_uint_eq(v, 2u << 20);
    ck_assert_int_eq(size_parse("3gb", NULL, UINT64_MAX, &v), 0);
    ck_assert_uint_eq(v, 3ull << 30);
    ck_assert_int_eq(size_parse("5K", NULL, UINT64_MAX, &v), 0);
    ck_assert_uint_eq(v, 5120);
    /* end: where the size stops */
    ck_assert_int_eq(size_parse("8k:1m", &end, UINT64_MAX, &v), 0);
    ck_assert_uint_eq(v, 8192);
    ck_assert_str_eq(end, ":1m");
    /* rejected: *out untouched */
    v = 7;
    ck_assert_int_eq(size_parse("", NULL, UINT64_MAX, &v), -1);
    ck_assert_int_eq(size_parse("k", NULL, UINT64_MAX, &v), -1);
    ck_assert_int_eq(size_parse("-1", NULL, UINT64_MAX, &v), -1);
    ck_assert_int_eq(size_parse(" 1", NULL, UINT64_MAX, &v), -1);
    ck_assert_int_eq(size_parse("1x", NULL, UINT64_MAX, &v), -1);
    ck_assert_int_eq(size_parse("1kx", NULL, UINT64_MAX, &v), -1);
    ck_assert_int_eq(size_parse("1.5m", NULL, UINT64_MAX, &v), -1);
    ck_assert_int_eq(size_parse("11", NULL, 10, &v), -1);
    ck_assert_int_eq(size_parse("2k", NULL, 2047, &v), -1);
    ck_assert_int_eq(size_parse("18446744073709551616", NULL, UINT64_MAX, &v),
                     -1);
    ck_assert_int_eq(size_parse("17179869184g", NULL, UINT64_MAX, &v), -1);
    ck_assert_uint_eq(v, 7);
}
END_TEST

Suite *
suite_config(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");

    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_args);
    tcase_add_test(tc, test_precedence);
    tcase_add_test(tc, test_bad_values);
    tcase_add_test(tc, test_bad_file);
    tcase_add_test(tc, test_log_place);
    tcase_add_test(tc, test_config_dir);
    tcase_add_test(tc, test_set_and_help);
    tcase_add_test(tc, test_size_parse);
    suite_add_tcase(s, tc);
    return s;
}
