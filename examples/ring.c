/*
 * ring.c -- the README's demo: a token with a checksum goes around a ring
 * of tasks, possibly on different daemons, for a number of laps.
 *
 *   ring -n N [-l LAPS] [-s BYTES] [-t SECONDS] [--socket A,B,C]
 *       forks N tasks; task i attaches to socket i mod (number of sockets),
 *       so neighbours in the ring sit on different daemons.
 *   ring -N N [...]                 (started by hand: the leader)
 *   ring --leader TID [--index I]   (started by hand: the N-1 others)
 *   ring                            (started by collsctl spawn -n N, or
 *                                    colls_spawn: see ring_spawned)
 *
 * Rendezvous, by messages: task 0 (the leader) is known to the others by
 * its tid (through a pipe from the forking parent, or --leader).  Each
 * other task sends JOIN {index} to it; the leader orders the members by
 * index and sends everyone the table {tasks, laps, token size, tids}.
 * Then the leader sends the token {lap, hop, data, checksum} to member 1; every
 * member receives it from its predecessor, verifies the checksum, changes the
 * data, updates the checksum and sends it on.  After LAPS laps the leader
 * checks the final data against a serial replay of every hop and prints hops
 * and microseconds per hop.  Any error (bad checksum, lost peer, timeout) makes
 * the process exit non-zero; the forking parent fails if any task failed.
 */
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "colls.h"

enum { TAG_JOIN = 101, TAG_TABLE = 102, TAG_TOKEN = 103, TAG_SPAWNED = 104 };

#define RING_MAX_TASKS   1024
#define RING_MAX_SOCKETS 64

struct ring_opts {
    int ntasks;
    int laps;
    size_t size;
    int timeout_s;
    colls_tid_t leader;
    int index;
    char *sockets[RING_MAX_SOCKETS];
    int nsockets;
};

static double
ring_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* FNV-1a over the token's lap, hop and data. */
static uint32_t
ring_checksum(uint32_t lap, uint32_t hop, const uint8_t *data, size_t n)
{
    uint32_t h = 2166136261u;
    uint8_t hdr[8];
    size_t i;

    memcpy(hdr, &lap, 4);
    memcpy(hdr + 4, &hop, 4);
    for (i = 0; i < 8; i++)
        h = (h ^ hdr[i]) * 16777619u;
    for (i = 0; i < n; i++)
        h = (h ^ data[i]) * 16777619u;
    return h;
}

/* What every hop does to the data: deterministic, so it can be replayed. */
static void
ring_mutate(uint8_t *data, size_t n, uint32_t hop, colls_tid_t me)
{
    data[hop % n] ^= (uint8_t)(hop * 31u + 7u);
    data[(hop * 7u + 3u) % n] += (uint8_t)me;
}

static int
ring_fail(const char *what, int rc)
{
    fprintf(stderr, "ring[%d]: %s: %s\n", (int)getpid(), what,
            colls_strerror(rc));
    return 1;
}

/* Sends the token. */
static int
ring_send_token(colls_t *c, colls_tid_t to, uint32_t lap, uint32_t hop,
                const uint8_t *data, size_t n)
{
    colls_msg_t *m = colls_msg_new(COLLS_ENC_DEFAULT);
    uint32_t sum = ring_checksum(lap, hop, data, n);
    int rc;

    if (m == NULL)
        return COLLS_ENOMEM;
    rc = colls_pack(m, COLLS_UINT32, &lap, 1);
    if (rc == 0)
        rc = colls_pack(m, COLLS_UINT32, &hop, 1);
    if (rc == 0)
        rc = colls_pack(m, COLLS_BYTE, data, n);
    if (rc == 0)
        rc = colls_pack(m, COLLS_UINT32, &sum, 1);
    if (rc == 0)
        rc = colls_msg_send(c, to, TAG_TOKEN, m);
    colls_msg_free(m);
    return rc;
}

/* Receives the token from prev and verifies its checksum and position. */
static int
ring_recv_token(colls_t *c, colls_tid_t prev, uint32_t want_hop, uint32_t *lap,
                uint8_t *data, size_t n)
{
    colls_msg_t *m;
    uint32_t hop, sum;
    int rc = colls_msg_recv(c, prev, TAG_TOKEN, &m);

    if (rc < 0)
        return rc;
    rc = colls_unpack(m, COLLS_UINT32, lap, 1);
    if (rc == 0)
        rc = colls_unpack(m, COLLS_UINT32, &hop, 1);
    if (rc == 0)
        rc = colls_unpack(m, COLLS_BYTE, data, n);
    if (rc == 0)
        rc = colls_unpack(m, COLLS_UINT32, &sum, 1);
    colls_msg_free(m);
    if (rc < 0)
        return rc;
    if (hop != want_hop || sum != ring_checksum(*lap, hop, data, n)) {
        fprintf(stderr,
                "ring: token from t%x: hop %u (want %u), checksum "
                "%s\n",
                (unsigned)prev, hop, want_hop,
                sum == ring_checksum(*lap, hop, data, n) ? "ok" : "BAD");
        return COLLS_EBADMSG;
    }
    return 0;
}

/* Leader: gathers the members, sends the table, runs the laps. */
static int
ring_lead(colls_t *c, const struct ring_opts *o)
{
    colls_tid_t tids[RING_MAX_TASKS];
    int idx[RING_MAX_TASKS];
    uint8_t *data = NULL, *ref = NULL;
    int n = o->ntasks, i, j, rc = 0, hosts = 0;
    uint32_t hop = 0, lap, got_lap;
    double t0, t1;
    colls_msg_t *m;

    tids[0] = colls_mytid(c);
    idx[0] = 0;
    for (i = 1; i < n; i++) {
        colls_status_t st;
        int32_t index;
        rc = colls_recv(c, COLLS_ANY, TAG_JOIN, &index, sizeof(index), &st);
        if (rc < 0)
            return ring_fail("waiting for members", rc);
        /* insertion by index keeps the table sorted */
        for (j = i; j > 1 && idx[j - 1] > index; j--) {
            tids[j] = tids[j - 1];
            idx[j] = idx[j - 1];
        }
        tids[j] = st.source;
        idx[j] = index;
    }
    for (i = 0; i < n; i++) {
        for (j = 0; j < i; j++)
            if (COLLS_TID_HID(tids[j]) == COLLS_TID_HID(tids[i]))
                break;
        hosts += j == i;
    }
    m = colls_msg_new(COLLS_ENC_DEFAULT);
    if (m == NULL)
        return ring_fail("table", COLLS_ENOMEM);
    {
        /* the members follow the leader's laps and token size */
        uint32_t hdr[3] = {(uint32_t)n, (uint32_t)o->laps, (uint32_t)o->size};
        rc = colls_pack(m, COLLS_UINT32, hdr, 3);
    }
    if (rc == 0)
        rc = colls_pack(m, COLLS_UINT32, tids, (size_t)n);
    for (i = 1; i < n && rc == 0; i++)
        rc = colls_msg_send(c, tids[i], TAG_TABLE, m);
    colls_msg_free(m);
    if (rc < 0)
        return ring_fail("sending the table", rc);

    data = malloc(o->size);
    ref = malloc(o->size);
    if (data == NULL || ref == NULL) {
        rc = COLLS_ENOMEM;
        goto out;
    }
    for (i = 0; i < (int)o->size; i++)
        data[i] = ref[i] = (uint8_t)(i * 13 + 1);
    t0 = ring_now_us();
    for (lap = 0; lap < (uint32_t)o->laps; lap++) {
        ring_mutate(data, o->size, hop, tids[0]);
        ring_mutate(ref, o->size, hop, tids[0]);
        hop++;
        rc = ring_send_token(c, tids[n > 1 ? 1 : 0], lap, hop, data, o->size);
        if (rc < 0)
            goto out;
        /* the replay of the other members' hops of this lap */
        for (i = 1; i < n; i++)
            ring_mutate(ref, o->size, hop + (uint32_t)i - 1, tids[i]);
        hop += (uint32_t)n - 1;
        rc = ring_recv_token(c, tids[n - 1], hop, &got_lap, data, o->size);
        if (rc == 0 && got_lap != lap)
            rc = COLLS_EBADMSG;
        if (rc < 0)
            goto out;
    }
    t1 = ring_now_us();
    if (memcmp(data, ref, o->size) != 0) {
        fprintf(stderr, "ring: the token's data differs from the replay\n");
        rc = COLLS_EBADMSG;
        goto out;
    }
    printf("ring: %d tasks on %d daemon%s, %d laps, %u hops, %zu-byte token, "
           "checksums ok\n",
           n, hosts, hosts == 1 ? "" : "s", o->laps, hop, o->size);
    printf("ring: %.1f us per hop (%.3f s total)\n", (t1 - t0) / hop,
           (t1 - t0) / 1e6);
out:
    free(data);
    free(ref);
    return rc < 0 ? ring_fail("token", rc) : 0;
}

/* Member: joins, learns the ring, forwards the token LAPS times. */
static int
ring_member(colls_t *c, const struct ring_opts *o)
{
    colls_tid_t tids[RING_MAX_TASKS], me = colls_mytid(c);
    colls_msg_t *m;
    int32_t index = o->index;
    int n, pos = -1, i, rc, laps;
    uint32_t lap, hop, hdr[3];
    size_t size;
    uint8_t *data;

    rc = colls_send(c, o->leader, TAG_JOIN, &index, sizeof(index));
    if (rc < 0)
        return ring_fail("join", rc);
    rc = colls_msg_recv(c, o->leader, TAG_TABLE, &m);
    if (rc < 0)
        return ring_fail("waiting for the table", rc);
    rc = colls_unpack(m, COLLS_UINT32, hdr, 3);
    n = (int)hdr[0];
    if (rc < 0 || n < 2 || n > RING_MAX_TASKS || hdr[1] == 0 ||
        hdr[1] > INT32_MAX || hdr[2] == 0 || hdr[2] > (1u << 24) ||
        colls_unpack(m, COLLS_UINT32, tids, (size_t)n) < 0) {
        colls_msg_free(m);
        return ring_fail("table", COLLS_EPROTO);
    }
    colls_msg_free(m);
    laps = (int)hdr[1];
    size = hdr[2];
    for (i = 0; i < n; i++)
        if (tids[i] == me)
            pos = i;
    if (pos <= 0)
        return ring_fail("table", COLLS_EPROTO);
    data = malloc(size);
    if (data == NULL)
        return ring_fail("token", COLLS_ENOMEM);
    for (i = 0; i < laps; i++) {
        hop = (uint32_t)i * (uint32_t)n + (uint32_t)pos;
        rc = ring_recv_token(c, tids[pos - 1], hop, &lap, data, size);
        if (rc < 0) {
            fprintf(stderr, "ring: t%x: lap %d: receiving from t%x: %s\n",
                    (unsigned)me, i, (unsigned)tids[pos - 1],
                    colls_strerror(rc));
            break;
        }
        ring_mutate(data, size, hop, me);
        rc = ring_send_token(c, tids[(pos + 1) % n], lap, hop + 1, data, size);
        if (rc < 0) {
            fprintf(stderr, "ring: t%x: lap %d: sending to t%x: %s\n",
                    (unsigned)me, i, (unsigned)tids[(pos + 1) % n],
                    colls_strerror(rc));
            break;
        }
    }
    free(data);
    return rc < 0 ? 1 : 0;
}

/* Attaches to socket (NULL: default) and plays role index. */
static int
ring_task(struct ring_opts *o, const char *socket, int leader)
{
    colls_t *c;
    int rc = colls_attach(socket, &c);

    if (rc < 0)
        return ring_fail(socket ? socket : "attach", rc);
    colls_set_timeout(c, o->timeout_s * 1000);
    if (leader) {
        printf("ring: leader t%x, %d tasks\n", (unsigned)colls_mytid(c),
               o->ntasks);
        fflush(stdout);
        rc = ring_lead(c, o);
    } else {
        rc = ring_member(c, o);
    }
    colls_detach(c);
    return rc;
}

/* -n: forks the members, leads in this process, collects exit codes. */
static int
ring_fork(struct ring_opts *o)
{
    pid_t pids[RING_MAX_TASKS];
    int fds[2], i, status, failed = 0, rc;
    uint32_t leader = 0;

    if (pipe(fds) < 0) {
        perror("ring: pipe");
        return 1;
    }
    fflush(stdout);
    for (i = 1; i < o->ntasks; i++) {
        pids[i] = fork();
        if (pids[i] < 0) {
            perror("ring: fork");
            o->ntasks = i;
            failed = 1;
            break;
        }
        if (pids[i] == 0) {
            close(fds[1]);
            if (read(fds[0], &leader, sizeof(leader)) != sizeof(leader))
                _exit(1);
            close(fds[0]);
            o->leader = leader;
            o->index = i;
            _exit(ring_task(o, o->nsockets ? o->sockets[i % o->nsockets] : NULL,
                            0));
        }
    }
    close(fds[0]);
    if (failed) {
        close(fds[1]);
        for (i = 1; i < o->ntasks; i++)
            waitpid(pids[i], &status, 0);
        return 1;
    }
    {
        colls_t *c;
        rc = colls_attach(o->nsockets ? o->sockets[0] : NULL, &c);
        if (rc < 0) {
            ring_fail("attach", rc);
            close(fds[1]);
            for (i = 1; i < o->ntasks; i++)
                waitpid(pids[i], &status, 0);
            return 1;
        }
        leader = colls_mytid(c);
        for (i = 1; i < o->ntasks; i++)
            if (write(fds[1], &leader, sizeof(leader)) != sizeof(leader))
                failed = 1;
        close(fds[1]);
        colls_set_timeout(c, o->timeout_s * 1000);
        rc = failed ? 1 : ring_lead(c, o);
        colls_detach(c);
    }
    for (i = 1; i < o->ntasks; i++) {
        if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            fprintf(stderr, "ring: task %d failed\n", i);
            failed = 1;
        }
    }
    return rc != 0 || failed ? 1 : 0;
}

static void
ring_usage(void)
{
    fprintf(stderr,
            "usage: ring -n N [-l LAPS] [-s BYTES] [-t SECONDS] "
            "[--socket A,B,C]\n"
            "       ring -N N [...]              (leader started by hand)\n"
            "       ring --leader TID --index I  (member started by hand)\n");
}

/*
 * Spawned (docs/spawn.md): the COLLS_SPAWN_COUNT copies of one spawn form
 * the group "ring.t<parent>" and pass a token once around by rank: rank 0
 * sends 1, rank r receives r, prints a line and sends r + 1, and rank 0
 * prints what comes back (the number of copies).  Each copy prints one
 * line; the exit status says whether the token was right.
 */
static int
ring_spawned(const char *count)
{
    colls_t *c = NULL;
    colls_group_t *g = NULL;
    colls_tid_t parent = 0, me;
    char name[64];
    uint8_t b[4];
    uint32_t token;
    int n = atoi(count), rank, rc;

    if (n < 1 || n > RING_MAX_TASKS) {
        fprintf(stderr, "ring: COLLS_SPAWN_COUNT=%s\n", count);
        return 2;
    }
    rc = colls_attach(NULL, &c);
    if (rc == 0)
        rc = colls_parent(c, &parent);
    if (rc == 0) {
        snprintf(name, sizeof(name), "ring.t%x", (unsigned)parent);
        rc = colls_group_join(c, name, n, &g);
    }
    if (rc < 0) {
        fprintf(stderr, "ring: %s\n", colls_strerror(rc));
        if (c != NULL)
            colls_detach(c);
        return 1;
    }
    rank = rc;
    me = colls_mytid(c);
    token = rank == 0 ? 1 : 0;
    if (rank != 0 || n > 1) {
        if (rank == 0)
            rc = colls_send(c, colls_group_tid(g, 1 % n), TAG_SPAWNED, &token,
                            sizeof(token));
        if (rc >= 0)
            rc = colls_recv(c, colls_group_tid(g, (rank + n - 1) % n),
                            TAG_SPAWNED, b, sizeof(b), NULL);
        if (rc >= 0)
            memcpy(&token, b, sizeof(token));
        if (rc >= 0 && rank != 0) {
            uint32_t next = token + 1;

            rc = colls_send(c, colls_group_tid(g, (rank + 1) % n), TAG_SPAWNED,
                            &next, sizeof(next));
        }
    } else {
        token = 1; /* alone: the token is back at once */
    }
    if (rc < 0) {
        fprintf(stderr, "ring: rank %d: %s\n", rank, colls_strerror(rc));
    } else if (rank == 0) {
        printf("ring: rank 0 of %d (t%x, host %d): the token came back as %u\n",
               n, (unsigned)me, COLLS_TID_HID(me), (unsigned)token);
        rc = token == (uint32_t)n ? 0 : -1;
    } else {
        printf("ring: rank %d of %d (t%x, host %d): token %u\n", rank, n,
               (unsigned)me, COLLS_TID_HID(me), (unsigned)token);
        rc = token == (uint32_t)rank ? 0 : -1;
    }
    fflush(stdout);
    colls_group_leave(g);
    colls_detach(c);
    return rc < 0 ? 1 : 0;
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"socket", required_argument, NULL, 'S'},
        {"leader", required_argument, NULL, 'L'},
        {"index", required_argument, NULL, 'I'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    struct ring_opts o;
    int opt, fork_mode = 0;
    char *p, *end;
    unsigned long v;

    memset(&o, 0, sizeof(o));
    o.laps = 10;
    o.size = 64;
    o.timeout_s = 60;
    o.index = 1;
    signal(SIGPIPE, SIG_IGN);
    if (argc == 1 && getenv("COLLS_SPAWN_COUNT") != NULL)
        return ring_spawned(getenv("COLLS_SPAWN_COUNT"));
    while ((opt = getopt_long(argc, argv, "n:N:l:s:t:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'n':
        case 'N':
            o.ntasks = atoi(optarg);
            fork_mode = opt == 'n';
            break;
        case 'l':
            o.laps = atoi(optarg);
            break;
        case 's':
            o.size = (size_t)strtoul(optarg, NULL, 10);
            break;
        case 't':
            o.timeout_s = atoi(optarg);
            break;
        case 'S':
            for (p = strtok(optarg, ",");
                 p != NULL && o.nsockets < RING_MAX_SOCKETS;
                 p = strtok(NULL, ","))
                o.sockets[o.nsockets++] = p;
            break;
        case 'L':
            v = strtoul(optarg[0] == 't' ? optarg + 1 : optarg, &end,
                        optarg[0] == 't' ? 16 : 0);
            if (*end != '\0' || v == 0 || v > 0xffffffffUL) {
                ring_usage();
                return 2;
            }
            o.leader = (colls_tid_t)v;
            break;
        case 'I':
            o.index = atoi(optarg);
            break;
        default:
            ring_usage();
            return opt == 'h' ? 0 : 2;
        }
    }
    if (optind != argc || o.laps <= 0 || o.size == 0 || o.size > (1u << 24) ||
        o.timeout_s <= 0 ||
        (o.leader == 0 && (o.ntasks < 1 || o.ntasks > RING_MAX_TASKS))) {
        ring_usage();
        return 2;
    }
    if (fork_mode)
        return ring_fork(&o);
    if (o.leader != 0)
        return ring_task(&o, o.nsockets ? o.sockets[0] : NULL, 0);
    return ring_task(&o, o.nsockets ? o.sockets[0] : NULL, 1);
}
