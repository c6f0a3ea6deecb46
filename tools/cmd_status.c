/*
 * cmd_status.c -- `collsctl status`, `hosts` and `ps`: the machine at a
 * glance (PVM's conf and ps).  Each prints a table, or with --json one
 * JSON document (an object for status, an array of objects for hosts and
 * ps) with the same fields, for scripts.
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

/*
 * Reads the options of status, hosts or ps: --json (-j) and, for ps
 * (all not NULL), --all (-a).  0, or the exit status of a usage error.
 */
static int
status_opts(const struct collsctl_cmd *cmd, int argc, char **argv, int *json,
            int *all)
{
    int opt;

    *json = 0;
    optind = 1;
    while ((opt = collsctl_getopt(argc, argv, cmd)) != -1) {
        if (opt == 'j')
            *json = 1;
        else if (opt == 'a' && all != NULL)
            *all = 1;
        else
            return collsctl_usage(cmd);
    }
    if (optind != argc)
        return collsctl_usage(cmd);
    return 0;
}

/* The daemon's "trust" (how its datagrams are protected), "offload"
   (the UDP offloads in use) and "poll_us" (its polling window) into
   trust, offload and *poll_us, each "" (-1) when its statistics do not
   say. */
static void
status_daemon(colls_t *c, char trust[32], char offload[32], long *poll_us)
{
    char *json = NULL;

    trust[0] = offload[0] = '\0';
    *poll_us = -1;
    if (colls_stats_json(c, &json) < 0 || json == NULL)
        return;
    collsctl_json_text(json, "trust", trust, 32);
    collsctl_json_text(json, "offload", offload, 32);
    *poll_us = collsctl_json_long(json, "poll_us", -1);
    colls_free(json);
}

/* One screen: this daemon, host counts, task counts. */
static int
status_exec(int argc, char **argv)
{
    colls_t *c;
    colls_hostinfo_t *h = NULL, *self = NULL;
    colls_taskinfo_t *t = NULL;
    int nh = 0, nt = 0, nall = 0, i, up = 0, down = 0, other = 0, rc;
    int me, json;
    char trust[32], offload[32];
    long poll_us;

    rc = status_opts(&cmd_status, argc, argv, &json, NULL);
    if (rc != 0)
        return rc;
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
        collsctl_perror(c, "status", rc);
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
        if (h[i].hid == me)
            self = &h[i];
    }
    status_daemon(c, trust, offload, &poll_us);
    if (json) {
        printf("{\"hid\": %d, \"name\": ", me);
        collsctl_json_str(stdout, self != NULL ? self->name : "");
        printf(", \"addr\": ");
        collsctl_json_str(stdout, self != NULL ? self->addr : "");
        printf(", \"incarnation\": %lu, \"local_tasks\": %d, "
               "\"tid\": \"t%x\", \"hosts_up\": %d, \"hosts_down\": %d, "
               "\"hosts_joining\": %d, \"hosts\": %d, \"tasks\": %d, "
               "\"trust\": ",
               self != NULL ? (unsigned long)self->incarnation : 0UL,
               self != NULL ? self->ntasks : 0, (unsigned)colls_mytid(c), up,
               down, other, nh, nall);
        collsctl_json_str(stdout, trust);
        printf(", \"offload\": ");
        collsctl_json_str(stdout, offload);
        if (poll_us >= 0)
            printf(", \"poll_us\": %ld", poll_us);
        printf("}\n");
    } else {
        if (self != NULL) {
            printf("daemon      hid %d, %s at %s\n", me, self->name,
                   self->addr);
            printf("incarnation 0x%08x\n", (unsigned)self->incarnation);
            printf("local tasks %d (this collsctl is t%x)\n", self->ntasks,
                   (unsigned)colls_mytid(c));
        }
        printf("hosts       %d up, %d down", up, down);
        if (other)
            printf(", %d joining", other);
        printf(" (%d in the table)\n", nh);
        printf("tasks       %d on the machine\n", nall);
        if (trust[0] != '\0')
            printf("trust       %s\n", trust);
        if (offload[0] != '\0')
            printf("offload     %s (--gso)\n", offload);
        if (poll_us > 0)
            printf("poll        %ld us (--poll-us)\n", poll_us);
        else if (poll_us == 0)
            printf("poll        off (--poll-us 0)\n");
        if (strcmp(trust, "insecure") == 0)
            printf("WARNING     datagrams are not authenticated "
                   "(--insecure): anyone who can reach the daemon's port "
                   "can forge them; use collsctl keygen and --key-file\n");
    }
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
    int n, i, rc, me, json;

    rc = status_opts(&cmd_hosts, argc, argv, &json, NULL);
    if (rc != 0)
        return rc;
    if (collsctl_attach(&c) < 0)
        return 1;
    me = COLLS_TID_HID(colls_mytid(c));
    rc = colls_hosts(c, &h, &n);
    if (rc < 0) {
        collsctl_perror(c, "hosts", rc);
        colls_detach(c);
        return 1;
    }
    if (json)
        printf("[");
    else
        printf("%4s  %-7s %-20s %-22s %-10s %5s %10s  %s\n", "HID", "STATE",
               "NAME", "ADDR", "INCARN", "TASKS", "RTT(us)", "ARCH");
    for (i = 0; i < n; i++) {
        char rtt[32];

        if (json) {
            printf("%s\n {\"hid\": %d, \"state\": \"%s\", \"name\": ",
                   i ? "," : "", h[i].hid, status_state(h[i].state));
            collsctl_json_str(stdout, h[i].name);
            printf(", \"addr\": ");
            collsctl_json_str(stdout, h[i].addr);
            printf(", \"incarnation\": %lu, \"tasks\": %d, \"rtt_us\": %.1f, "
                   "\"arch\": ",
                   (unsigned long)h[i].incarnation, h[i].ntasks, h[i].rtt_us);
            collsctl_json_str(stdout, h[i].arch);
            printf(", \"self\": %s}", h[i].hid == me ? "true" : "false");
            continue;
        }
        if (h[i].hid == me)
            snprintf(rtt, sizeof(rtt), "(self)");
        else if (h[i].rtt_us > 0)
            snprintf(rtt, sizeof(rtt), "%.1f", h[i].rtt_us);
        else
            snprintf(rtt, sizeof(rtt), "-");
        printf("%4d  %-7s %-20s %-22s 0x%08x %5d %10s  %s\n", h[i].hid,
               status_state(h[i].state), h[i].name, h[i].addr,
               (unsigned)h[i].incarnation, h[i].ntasks, rtt,
               h[i].arch[0] != '\0' ? h[i].arch : "-");
    }
    if (json)
        printf("\n]\n");
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
    int all = 0, n, i, rc, json;

    rc = status_opts(&cmd_ps, argc, argv, &json, &all);
    if (rc != 0)
        return rc;
    if (collsctl_attach(&c) < 0)
        return 1;
    rc = colls_tasks(c, all ? COLLS_ANY : 0, &t, &n);
    if (rc < 0) {
        collsctl_perror(c, "ps", rc);
        colls_detach(c);
        return 1;
    }
    if (json)
        printf("[");
    else
        printf("%-10s %4s %8s %6s %-10s %-6s  %s\n", "TID", "HOST", "PID",
               "UID", "PARENT", "CHAN", "NAME");
    for (i = 0; i < n; i++) {
        int self = t[i].tid == colls_mytid(c);

        if (json) {
            printf("%s\n {\"tid\": \"t%x\", \"hid\": %d, \"pid\": %d, "
                   "\"uid\": %d, \"parent\": ",
                   i ? "," : "", (unsigned)t[i].tid, COLLS_TID_HID(t[i].tid),
                   t[i].pid, t[i].uid);
            if (t[i].parent != 0)
                printf("\"t%x\", \"name\": ", (unsigned)t[i].parent);
            else
                printf("null, \"name\": ");
            collsctl_json_str(stdout, t[i].name);
            printf(", \"channel\": ");
            collsctl_json_str(stdout, t[i].channel);
            printf(", \"self\": %s}", self ? "true" : "false");
            continue;
        }
        char parent[16] = "-";

        if (t[i].parent != 0)
            snprintf(parent, sizeof(parent), "t%x", (unsigned)t[i].parent);
        printf("t%-9x %4d %8d %6d %-10s %-6s  %s%s\n", (unsigned)t[i].tid,
               COLLS_TID_HID(t[i].tid), t[i].pid, t[i].uid, parent,
               t[i].channel[0] ? t[i].channel : "-", t[i].name,
               self ? " (this collsctl)" : "");
    }
    if (json)
        printf("\n]\n");
    colls_free(t);
    colls_detach(c);
    return 0;
}

/* --json of every command here. */
#define STATUS_JSON_OPT(what)                                                  \
    {                                                                          \
        "json", 'j', COLLSCTL_OPT_SHORT, NULL, what                            \
    }

static const struct collsctl_opt status_json_opts[] = {
    STATUS_JSON_OPT("print one JSON object (hid, name, addr, incarnation, "
                    "local_tasks, tid, hosts_up, hosts_down, hosts_joining, "
                    "hosts, tasks, trust, offload, poll_us)"),
    {NULL, 0, 0, NULL, NULL},
};

const struct collsctl_cmd cmd_status = {
    .name = "status",
    .args = "",
    .help = "this daemon: host id, incarnation, hosts up/down, tasks",
    .detail = "trust says how the daemon's datagrams are protected (a "
              "cluster key, encryption, or insecure); poll is how long it "
              "polls its sockets before sleeping while work is in flight "
              "(--poll-us).",
    .opts = status_json_opts,
    .needs_daemon = 1,
    .exec = status_exec,
};

static const struct collsctl_opt hosts_opts[] = {
    STATUS_JSON_OPT("print a JSON array, one object per host (hid, state, "
                    "name, addr, incarnation, tasks, rtt_us, self)"),
    {NULL, 0, 0, NULL, NULL},
};

const struct collsctl_cmd cmd_hosts = {
    .name = "hosts",
    .args = "",
    .help = "the host table: id, state, name, address, tasks, RTT",
    .detail = "STATE is up, down (no heartbeat for --dead-after) or joining; "
              "RTT(us) is the daemon's smoothed round-trip estimate to that "
              "host, (self) for the daemon asked.",
    .opts = hosts_opts,
    .needs_daemon = 1,
    .exec = hosts_exec,
};

static const struct collsctl_opt ps_opts[] = {
    {"all", 'a', COLLSCTL_OPT_SHORT, NULL,
     "the tasks of every host (default: of this host)"},
    STATUS_JSON_OPT("print a JSON array, one object per task (tid, hid, pid, "
                    "uid, name, channel: shm or socket, self)"),
    {NULL, 0, 0, NULL, NULL},
};

const struct collsctl_cmd cmd_ps = {
    .name = "ps",
    .args = "",
    .help = "tasks of this host (-a: of every host)",
    .opts = ps_opts,
    .needs_daemon = 1,
    .exec = ps_exec,
};
