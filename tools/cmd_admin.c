/*
 * cmd_admin.c -- `collsctl add HOST[:PORT]`, `delete HOST`, `halt`: change
 * or stop the virtual machine.
 *
 * `add' asks the daemon to list the host; the machine then invites the
 * daemon there to join (daemon/host.c).  The command waits for the
 * outcome in the host table: the entry comes up (joined), goes away (the
 * daemon there refused: it belongs to another machine or serves tasks)
 * or goes down (nobody answered within --dead-after).
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "colls.h"
#include "tools/collsctl.h"

/* How long `add' waits for the invited daemon, at most. */
#define ADD_WAIT_MS 60000
#define ADD_POLL_MS 100
/* The entry may be gone before the first look (an immediate refusal):
   never listed for this long means so. */
#define ADD_GONE_MS   5000
#define ADD_ADDR_SIZE 64

/* "IP:" for HOST of HOST[:PORT], and the ":PORT" part ("" if none), or
   -1 when HOST does not resolve. */
static int
add_split(const char *arg, char *ip, size_t iplen, const char **port)
{
    char host[ADD_ADDR_SIZE];
    const char *colon = strrchr(arg, ':');
    size_t hlen = colon != NULL ? (size_t)(colon - arg) : strlen(arg);
    struct addrinfo hints, *res = NULL;
    char buf[INET_ADDRSTRLEN];

    if (hlen == 0 || hlen >= sizeof(host))
        return -1;
    memcpy(host, arg, hlen);
    host[hlen] = '\0';
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_DGRAM;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL)
        return -1;
    inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, buf,
              sizeof(buf));
    freeaddrinfo(res);
    snprintf(ip, iplen, "%s:", buf);
    *port = colon != NULL ? colon + 1 : "";
    return 0;
}

/* The entry of h for "IP:" ip and port ("" any), not in the hids seen
   before the add (seen: 4096 flags; NULL none); NULL if there is none. */
static const colls_hostinfo_t *
add_find(const colls_hostinfo_t *h, int n, const char *ip, const char *port,
         const unsigned char *seen)
{
    size_t l = strlen(ip);
    int i;

    for (i = 0; i < n; i++)
        if (strncmp(h[i].addr, ip, l) == 0 &&
            (port[0] == '\0' ? seen == NULL || !seen[h[i].hid & 4095]
                             : strcmp(h[i].addr + l, port) == 0))
            return &h[i];
    return NULL;
}

static void
add_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/*
 * Waits until the entry added for arg comes up (0), goes away or down
 * (1, explained on stderr), or ADD_WAIT_MS pass (1).
 */
static int
add_wait(colls_t *c, const char *arg, const unsigned char *seen)
{
    char ip[ADD_ADDR_SIZE];
    const char *port;
    int listed = 0, waited, n, rc;

    if (add_split(arg, ip, sizeof(ip), &port) != 0) {
        /* the daemon resolved it; we cannot follow it */
        printf("add %s requested; it does not resolve here, so its outcome "
               "is not followed (see collsctl hosts)\n",
               arg);
        return 0;
    }
    for (waited = 0; waited < ADD_WAIT_MS; waited += ADD_POLL_MS) {
        colls_hostinfo_t *h;
        const colls_hostinfo_t *e;

        rc = colls_hosts(c, &h, &n);
        if (rc < 0) {
            fprintf(stderr, "collsctl add %s: %s\n", arg, colls_strerror(rc));
            return 1;
        }
        e = add_find(h, n, ip, port, seen);
        if (e != NULL && e->state == COLLS_HOST_UP) {
            printf("added %s as host %d (%s)\n", e->addr, e->hid, e->name);
            colls_free(h);
            return 0;
        }
        if (e != NULL && e->state == COLLS_HOST_DOWN) {
            fprintf(stderr,
                    "collsctl add %s: no daemon answered at %s within "
                    "--dead-after; its entry (host %d) is removed\n",
                    arg, e->addr, e->hid);
            colls_free(h);
            return 1;
        }
        colls_free(h);
        if (e != NULL) {
            listed = 1;
        } else if (listed || waited >= ADD_GONE_MS) {
            fprintf(stderr,
                    "collsctl add %s: refused: the daemon there belongs to "
                    "another machine or serves tasks of its own (its log "
                    "says which)\n",
                    arg);
            return 1;
        }
        add_sleep_ms(ADD_POLL_MS);
    }
    fprintf(stderr, "collsctl add %s: still joining after %d s\n", arg,
            ADD_WAIT_MS / 1000);
    return 1;
}

static int
add_exec(int argc, char **argv)
{
    static unsigned char seen[4096];
    colls_hostinfo_t *h;
    colls_t *c;
    int rc, n, i;

    if (argc != 2)
        return collsctl_usage(&cmd_add);
    if (collsctl_attach(&c) < 0)
        return 1;
    rc = colls_hosts(c, &h, &n);
    if (rc == 0) {
        for (i = 0; i < n; i++)
            seen[h[i].hid & 4095] = 1;
        colls_free(h);
        rc = colls_add_host(c, argv[1]);
    }
    if (rc < 0) {
        char what[300];

        snprintf(what, sizeof(what), "add %s", argv[1]);
        collsctl_perror(c, what, rc);
    } else
        rc = add_wait(c, argv[1], seen) != 0 ? -1 : 0;
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
    if (rc < 0) {
        char what[300];

        snprintf(what, sizeof(what), "delete %s", argv[1]);
        collsctl_perror(c, what, rc);
    } else
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
        collsctl_perror(c, "halt", rc);
    colls_detach(c);
    return rc < 0 ? 1 : 0;
}

const struct collsctl_cmd cmd_add = {
    .name = "add",
    .args = "HOST[:PORT]",
    .help = "add the daemon at HOST[:PORT] to the machine (it joins, or "
            "says why not)",
    .detail = "HOST is a name or an IPv4 address, PORT the daemon's UDP port "
              "(default: the port of the daemon asked).  The daemon there "
              "must run alone (no other host in its table) and serve no "
              "task.  The command waits up to 60 s: it prints the host id "
              "once the daemon has joined, or says why not (refused: it "
              "belongs to another machine or serves tasks; or no daemon "
              "answered within --dead-after, and its entry is removed).  "
              "Needs the daemon's uid, --admin-uid or "
              "--admin-gid.",
    .needs_daemon = 1,
    .exec = add_exec,
};

const struct collsctl_cmd cmd_delete = {
    .name = "delete",
    .args = "HOST",
    .help = "remove a host (hid, name or address) from the machine and halt "
            "the daemon there",
    .detail = "HOST is a host id (as `collsctl hosts` lists it), a name, or "
              "an address (IP:PORT, or the IP alone when one host has it).  "
              "The daemon there is told to leave the machine and halts: "
              "its tasks lose their daemon, its groups fail.  The other "
              "daemons forget the host.  Needs the daemon's uid, "
              "--admin-uid or --admin-gid.",
    .needs_daemon = 1,
    .exec = delete_exec,
};

const struct collsctl_cmd cmd_halt = {
    .name = "halt",
    .args = "",
    .help = "stop every daemon of the machine",
    .detail = "Every daemon of the machine stops; their tasks lose their "
              "daemon.  Needs the daemon's uid, --admin-uid or --admin-gid.",
    .needs_daemon = 1,
    .exec = halt_exec,
};
