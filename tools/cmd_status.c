/*
 * cmd_status.c -- `collsctl status`, `hosts` and `ps`: the machine at a
 * glance (PVM's conf and ps).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "tools/collsctl.h"

static const char *
status_state(int state)
{
    switch (state) {
    case COLLS_HOST_UP:
        return "up";
    case COLLS_HOST_DOWN:
        return "down";
    case COLLS_HOST_JOINING:
        return "joining";
    default:
        return "?";
    }
}

/* The "trust" line: how this daemon's datagrams are protected, with a
   warning when they are not (--insecure). */
static void
status_trust(colls_t *c)
{
    char *json = NULL, *p;
    char val[32];

    if (colls_stats_json(c, &json) < 0 || json == NULL)
        return;
    p = strstr(json, "\"trust\":\"");
    if (p != NULL && sscanf(p + 9, "%31[^\"]", val) == 1) {
        printf("trust       %s\n", val);
        if (strcmp(val, "insecure") == 0)
            printf("WARNING     datagrams are not authenticated "
                   "(--insecure): anyone who can reach the daemon's port "
                   "can forge them; use collsctl keygen and --key-file\n");
    }
    colls_free(json);
}

/* One screen: this daemon, host counts, task counts. */
static int
status_exec(int argc, char **argv)
{
    colls_t *c;
    colls_hostinfo_t *h = NULL;
    colls_taskinfo_t *t = NULL;
    int nh = 0, nt = 0, nall = 0, i, up = 0, down = 0, other = 0, rc;
    int me;

    (void)argv;
    if (argc != 1)
        return collsctl_usage(&cmd_status);
    if (collsctl_attach(&c) < 0)
        return 1;
    me = COLLS_TID_HID(colls_mytid(c));
    rc = colls_hosts(c, &h, &nh);
    if (rc == 0)
        rc = colls_tasks(c, 0, &t, &nt);
    if (rc == 0) {
        colls_free(t);
        t = NULL;
        rc = colls_tasks(c, COLLS_ANY, &t, &nall);
    }
    if (rc < 0) {
        fprintf(stderr, "collsctl status: %s\n", colls_strerror(rc));
        colls_free(h);
        colls_detach(c);
        return 1;
    }
    for (i = 0; i < nh; i++) {
        if (h[i].state == COLLS_HOST_UP)
            up++;
        else if (h[i].state == COLLS_HOST_DOWN)
            down++;
        else
            other++;
    }
    for (i = 0; i < nh; i++) {
        if (h[i].hid != me)
            continue;
        printf("daemon      hid %d, %s at %s\n", me, h[i].name, h[i].addr);
        printf("incarnation 0x%08x\n", (unsigned)h[i].incarnation);
        printf("local tasks %d (this collsctl is t%x)\n", h[i].ntasks,
               (unsigned)colls_mytid(c));
    }
    printf("hosts       %d up, %d down", up, down);
    if (other)
        printf(", %d joining", other);
    printf(" (%d in the table)\n", nh);
    printf("tasks       %d on the machine\n", nall);
    status_trust(c);
    colls_free(h);
    colls_free(t);
    colls_detach(c);
    return 0;
}

/* The host table. */
static int
hosts_exec(int argc, char **argv)
{
    colls_t *c;
    colls_hostinfo_t *h;
    int n, i, rc, me;

    (void)argv;
    if (argc != 1)
        return collsctl_usage(&cmd_hosts);
    if (collsctl_attach(&c) < 0)
        return 1;
    me = COLLS_TID_HID(colls_mytid(c));
    rc = colls_hosts(c, &h, &n);
    if (rc < 0) {
        fprintf(stderr, "collsctl hosts: %s\n", colls_strerror(rc));
        colls_detach(c);
        return 1;
    }
    printf("%4s  %-7s %-20s %-22s %-10s %5s %10s\n", "HID", "STATE", "NAME",
           "ADDR", "INCARN", "TASKS", "RTT(us)");
    for (i = 0; i < n; i++) {
        char rtt[32];
        if (h[i].hid == me)
            snprintf(rtt, sizeof(rtt), "(self)");
        else if (h[i].rtt_us > 0)
            snprintf(rtt, sizeof(rtt), "%.1f", h[i].rtt_us);
        else
            snprintf(rtt, sizeof(rtt), "-");
        printf("%4d  %-7s %-20s %-22s 0x%08x %5d %10s\n", h[i].hid,
               status_state(h[i].state), h[i].name, h[i].addr,
               (unsigned)h[i].incarnation, h[i].ntasks, rtt);
    }
    colls_free(h);
    colls_detach(c);
    return 0;
}

/* Tasks of this host, or with -a of every host. */
static int
ps_exec(int argc, char **argv)
{
    colls_t *c;
    colls_taskinfo_t *t;
    int all = 0, n, i, rc, opt;
    static const char opts[] = "all.a";

    optind = 1;
    while ((opt = collsctl_getopt(argc, argv, "a", opts)) != -1) {
        if (opt != 'a')
            return collsctl_usage(&cmd_ps);
        all = 1;
    }
    if (optind != argc)
        return collsctl_usage(&cmd_ps);
    if (collsctl_attach(&c) < 0)
        return 1;
    rc = colls_tasks(c, all ? COLLS_ANY : 0, &t, &n);
    if (rc < 0) {
        fprintf(stderr, "collsctl ps: %s\n", colls_strerror(rc));
        colls_detach(c);
        return 1;
    }
    printf("%-10s %4s %8s %6s  %s\n", "TID", "HOST", "PID", "UID", "NAME");
    for (i = 0; i < n; i++)
        printf("t%-9x %4d %8d %6d  %s%s\n", (unsigned)t[i].tid,
               COLLS_TID_HID(t[i].tid), t[i].pid, t[i].uid, t[i].name,
               t[i].tid == colls_mytid(c) ? " (this collsctl)" : "");
    colls_free(t);
    colls_detach(c);
    return 0;
}

const struct collsctl_cmd cmd_status = {
    .name = "status",
    .usage = "",
    .help = "this daemon: host id, incarnation, hosts up/down, tasks",
    .needs_daemon = 1,
    .exec = status_exec,
};

const struct collsctl_cmd cmd_hosts = {
    .name = "hosts",
    .usage = "",
    .help = "the host table: id, state, name, address, tasks, RTT",
    .needs_daemon = 1,
    .exec = hosts_exec,
};

const struct collsctl_cmd cmd_ps = {
    .name = "ps",
    .usage = "[-a]",
    .help = "tasks of this host (-a: of every host)",
    .needs_daemon = 1,
    .exec = ps_exec,
};
