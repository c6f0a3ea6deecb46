/*
 * board-check.c -- one member of a group whose members share hosts, for
 * tests/integration/board.sh: the hierarchical direct collectives and the
 * board through which a host's members hand each other their data
 * (libclient/hcoll.c, board.h; docs/collectives.md, "The board").
 *
 * It links the library's objects (libcollsclient.la) rather than the
 * shared libcolls, so that it can see how the last collective handed its
 * data within the host (struct colls_group's last_local) and scribble on
 * the board, as a corrupted member could.  Nothing in the library is
 * built for it but colls__hcoll_board, which hands over the mapping, and
 * colls__hcoll_inflight, how many chunks of an allreduce overlapped.
 *
 * Modes (--socket PATH of the daemon; every call bounded by --timeout-ms):
 *   run --group G --size P --rounds N --expect board|direct
 *       joins G and runs N rounds of: barrier; bcast of 5 int32 from
 *       root i % P; allreduce (SUM) of 3 int32; allgather of 2 int32 a
 *       member; bcast of 200 bytes from root (3 i + 1) % P; then, larger
 *       than a chunk (COLLS_DIRECT_MAX, 64 KiB: 6 chunks and a part), an
 *       allreduce (SUM) of LARGE int32 and a bcast of as many from root
 *       i % P, some members sleeping 20 ms first so that chunks wait for
 *       them; last an allgather of LARGE int32 a member, which runs as
 *       one bcast per member (dcoll.c, "host+bcasts").  Every result is
 *       checked against what each member put in; after each call the
 *       group must say it ran direct among the hosts ("host+...") and
 *       handed the data within this host as --expect says, and in the
 *       large allreduce every member must have
 *       had at least 2 chunks in flight at once (hcoll.c, HC_DEPTH).
 *       Prints "run: ok N EXPECT" (one line per member).
 *   full --group G --size P --rounds N
 *       rank 0 broadcasts N int32 (the index) back to back while the
 *       others sleep 300 ms before they read: the root's mailbox fills,
 *       its puts wait for room (counted: "full: waited W" from rank 0,
 *       W > 0 when N is more than its slots); every member checks every
 *       value.  Prints "full: ok N".
 *   corrupt --group G --what seq|len
 *       a group of 2 on one daemon: both run a bcast from rank 0 (the
 *       board is made), then rank 0 scribbles on its own next slot (a
 *       collective number ahead of the reader's, or a length beyond the
 *       slot) and waits 2 s; rank 1's next bcast from rank 0 must end
 *       with COLLS_EIO, in time, naming the board; then rank 1 sends a
 *       message to itself through the daemon and gets it back.  Rank 1
 *       prints "corrupt: EIO: TEXT" and "corrupt: self ok".
 *   rndv --group G --size P --rounds N
 *       one member per host (libclient/dcoll.c, not hcoll.c): the members
 *       but rank 0 sleep 300 ms, then all run N rounds of a bcast of 256
 *       KiB from root i % P and an allreduce (SUM) of 1 MiB of int32 back
 *       to back, every byte checked.  A message of COLLS__DCOLL_RNDV
 *       bytes or more waits for its receiver's clear-to-send, so none
 *       came before its receive was posted: the library's count of such
 *       bytes copied out of the inbox (dcoll_copied) must stay 0.  Prints
 *       "rndv: ok N copied 0".
 */
#include <config.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libclient/board.h"
#include "libclient/internal.h"

struct opts {
    const char *socket, *mode, *group, *expect, *what;
    int size, rounds, timeout_ms;
};

static struct opts opt = {.size = 2, .rounds = 3, .timeout_ms = 30000};
static int rank = -1;

static void
die(const char *what, int rc, colls_t *c)
{
    fprintf(stderr, "board-check %s rank %d: %s: %s (%s)\n", opt.mode, rank,
            what, colls_err_name(rc), c != NULL ? colls_errmsg(c) : "");
    exit(1);
}

static void
bad(const char *what, int i)
{
    fprintf(stderr, "board-check %s rank %d: round %d: %s\n", opt.mode, rank, i,
            what);
    exit(1);
}

/* After a call: it ran direct, hierarchically, handed within the host as
   --expect says. */
static void
check_path(struct colls_group *g, const char *op, int i)
{
    char why[256];

    if (colls_group_last_mode(g) == COLLS_MODE_DIRECT &&
        strncmp(colls_group_last_alg(g), "host+", 5) == 0 &&
        g->last_local != NULL && strcmp(g->last_local, opt.expect) == 0)
        return;
    snprintf(why, sizeof why, "%s ran %s mode %d local %s, want host+ %s", op,
             colls_group_last_alg(g), colls_group_last_mode(g),
             g->last_local != NULL ? g->last_local : "-", opt.expect);
    bad(why, i);
}

/* Items of --mode run's large allreduce and bcast: 6 chunks of 64 KiB
   (more than hcoll.c keeps in flight) and a part. */
#define LARGE (6 * 16384 + 77)

/* The large allreduce, bcast and allgather of round i of --mode run;
   all holds P x LARGE items. */
static void
run_large(colls_t *c, struct colls_group *g, int i, int32_t *in, int32_t *out,
          int32_t *all)
{
    int p = opt.size, root = i % p, rc, r;
    size_t k;

    if ((rank + i) % 3 == 0)
        usleep(20000);
    for (k = 0; k < LARGE; k++)
        in[k] = rank * 131 + i * 7 + (int32_t)(k % 10007);
    if ((rc = colls_allreduce(g, in, out, LARGE, COLLS_INT32, COLLS_SUM)) < 0)
        die("large allreduce", rc, c);
    for (k = 0; k < LARGE; k++)
        if (out[k] !=
            131 * p * (p - 1) / 2 + p * (i * 7 + (int32_t)(k % 10007)))
            bad("large allreduce: wrong sum", i);
    check_path(g, "large allreduce", i);
    if (colls__hcoll_inflight(g) < 2)
        bad("large allreduce: its chunks did not overlap", i);

    if ((rank + i) % 3 == 1)
        usleep(20000);
    for (k = 0; k < LARGE; k++)
        out[k] = rank == root ? i * 1000003 + (int32_t)k : -1;
    if ((rc = colls_bcast(g, out, LARGE, COLLS_INT32, root)) < 0)
        die("large bcast", rc, c);
    for (k = 0; k < LARGE; k++)
        if (out[k] != i * 1000003 + (int32_t)k)
            bad("large bcast: wrong data", i);
    check_path(g, "large bcast", i);

    for (k = 0; k < LARGE; k++)
        in[k] = rank * 1000003 + i * 17 + (int32_t)k;
    if ((rc = colls_allgather(g, in, all, LARGE, COLLS_INT32)) < 0)
        die("large allgather", rc, c);
    for (r = 0; r < p; r++)
        for (k = 0; k < LARGE; k++)
            if (all[(size_t)r * LARGE + k] != r * 1000003 + i * 17 + (int32_t)k)
                bad("large allgather: wrong block", i);
    check_path(g, "large allgather", i);
    if (strcmp(colls_group_last_alg(g), "host+bcasts") != 0)
        bad("large allgather: not one bcast per member", i);
}

static int
mode_run(colls_t *c)
{
    struct colls_group *g;
    int32_t b5[5], in3[3], out3[3], *all, *lin, *lout, *lall;
    uint8_t b200[200];
    int p, i, k, r, rc, root;

    rc = colls_group_join(c, opt.group, opt.size, &g);
    if (rc < 0)
        die("join", rc, c);
    rank = rc;
    p = opt.size;
    all = malloc((size_t)p * 2 * sizeof(*all));
    lin = malloc(LARGE * sizeof(*lin));
    lout = malloc(LARGE * sizeof(*lout));
    lall = malloc((size_t)p * LARGE * sizeof(*lall));
    if (all == NULL || lin == NULL || lout == NULL || lall == NULL)
        die("malloc", COLLS_ENOMEM, c);
    for (i = 0; i < opt.rounds; i++) {
        if ((rc = colls_barrier(g)) < 0)
            die("barrier", rc, c);
        check_path(g, "barrier", i);

        root = i % p;
        for (k = 0; k < 5; k++)
            b5[k] = rank == root ? i * 100 + k : -1;
        if ((rc = colls_bcast(g, b5, 5, COLLS_INT32, root)) < 0)
            die("bcast", rc, c);
        for (k = 0; k < 5; k++)
            if (b5[k] != i * 100 + k)
                bad("bcast of 5 int32: wrong data", i);
        check_path(g, "bcast", i);

        for (k = 0; k < 3; k++)
            in3[k] = rank * 7 + i + k;
        if ((rc = colls_allreduce(g, in3, out3, 3, COLLS_INT32, COLLS_SUM)) < 0)
            die("allreduce", rc, c);
        for (k = 0; k < 3; k++)
            if (out3[k] != 7 * p * (p - 1) / 2 + p * (i + k))
                bad("allreduce: wrong sum", i);
        check_path(g, "allreduce", i);

        in3[0] = rank * 1000 + i * 10;
        in3[1] = rank * 1000 + i * 10 + 1;
        if ((rc = colls_allgather(g, in3, all, 2, COLLS_INT32)) < 0)
            die("allgather", rc, c);
        for (r = 0; r < p; r++)
            if (all[2 * r] != r * 1000 + i * 10 ||
                all[2 * r + 1] != r * 1000 + i * 10 + 1)
                bad("allgather: wrong block", i);
        check_path(g, "allgather", i);

        root = (3 * i + 1) % p;
        for (k = 0; k < 200; k++)
            b200[k] = rank == root ? (uint8_t)(i * 31 + k) : 0;
        if ((rc = colls_bcast(g, b200, 200, COLLS_BYTE, root)) < 0)
            die("bcast of 200 bytes", rc, c);
        for (k = 0; k < 200; k++)
            if (b200[k] != (uint8_t)(i * 31 + k))
                bad("bcast of 200 bytes: wrong data", i);
        check_path(g, "bcast", i);

        run_large(c, g, i, lin, lout, lall);
    }
    printf("run: ok %d %s\n", opt.rounds, opt.expect);
    free(all);
    free(lin);
    free(lout);
    free(lall);
    colls_group_leave(g);
    return 0;
}

static int
mode_full(colls_t *c)
{
    struct colls_group *g;
    uint64_t waited = 0;
    int32_t v;
    int i, rc;

    rc = colls_group_join(c, opt.group, opt.size, &g);
    if (rc < 0)
        die("join", rc, c);
    rank = rc;
    if ((rc = colls_barrier(g)) < 0) /* the board is made */
        die("barrier", rc, c);
    if (rank != 0)
        usleep(300000);
    for (i = 0; i < opt.rounds; i++) {
        v = rank == 0 ? i : -1;
        if ((rc = colls_bcast(g, &v, 1, COLLS_INT32, 0)) < 0)
            die("bcast", rc, c);
        if (v != i)
            bad("bcast: wrong value", i);
        check_path(g, "bcast", i);
    }
    if (rank == 0) {
        (void)colls__hcoll_board(g, &waited);
        printf("full: waited %llu\n", (unsigned long long)waited);
    }
    if ((rc = colls_barrier(g)) < 0)
        die("last barrier", rc, c);
    printf("full: ok %d\n", opt.rounds);
    colls_group_leave(g);
    return 0;
}

static int
mode_corrupt(colls_t *c)
{
    struct colls_group *g;
    struct board *b;
    struct board_slot *s;
    int32_t v[4] = {1, 2, 3, 4};
    uint64_t seq;
    char msg[8] = "me", got[8];
    colls_status_t st;
    int rc;

    rc = colls_group_join(c, opt.group, 2, &g);
    if (rc < 0)
        die("join", rc, c);
    rank = rc;
    if ((rc = colls_bcast(g, v, 4, COLLS_INT32, 0)) < 0)
        die("first bcast", rc, c);
    b = colls__hcoll_board(g, NULL);
    if (b == NULL || strcmp(g->last_local, "board") != 0)
        bad("no board after the first bcast", 0);
    if (rank == 0) {
        /* my slot for the next collective, as board.c lays it out */
        seq = g->dseq;
        s = (struct board_slot *)(void *)(b->base + BOARD_LINE +
                                          (size_t)b->members * BOARD_LINE +
                                          ((size_t)b->me * b->slots +
                                           seq % b->slots) *
                                              (BOARD_LINE + b->slot_bytes));
        if (strcmp(opt.what, "len") == 0) {
            s->len = b->slot_bytes + 1;
            atomic_store(&s->seq, seq + 1);
        } else {
            atomic_store(&s->seq, seq + 1 + b->slots);
        }
        sleep(2); /* alive while rank 1 reads it */
        colls_group_leave(g);
        return 0;
    }
    rc = colls_bcast(g, v, 4, COLLS_INT32, 0);
    if (rc != COLLS_EIO)
        die("bcast from a corrupt slot did not fail with EIO", rc, c);
    printf("corrupt: %s: %s\n", colls_err_name(rc), colls_errmsg(c));
    /* this task's connection to its daemon still works */
    rc = colls_send(c, colls_mytid(c), 5, msg, sizeof msg);
    if (rc == 0)
        rc = colls_recv(c, colls_mytid(c), 5, got, sizeof got, &st);
    if (rc < 0 || memcmp(got, msg, sizeof msg) != 0)
        die("message to self", rc < 0 ? rc : COLLS_EIO, c);
    printf("corrupt: self ok\n");
    colls_group_leave(g);
    return 0;
}

static int
mode_rndv(colls_t *c)
{
    enum { BC = 256 * 1024, AR = 256 * 1024 /* int32: 1 MiB */ };
    struct colls_group *g;
    uint8_t *b = malloc(BC);
    int32_t *in = malloc(AR * sizeof(int32_t)),
            *out = malloc(AR * sizeof(int32_t));
    int i, j, k, rc;

    if (b == NULL || in == NULL || out == NULL)
        die("malloc", COLLS_ENOMEM, c);
    rc = colls_group_join(c, opt.group, opt.size, &g);
    if (rc < 0)
        die("join", rc, c);
    rank = rc;
    if (rank != 0)
        usleep(300000); /* the root's sends must wait for us */
    for (i = 0; i < opt.rounds; i++) {
        int root = i % opt.size;

        for (j = 0; j < BC; j++)
            b[j] = rank == root ? (uint8_t)(j * 7 + i) : 0;
        if ((rc = colls_bcast(g, b, BC, COLLS_BYTE, root)) < 0)
            die("bcast", rc, c);
        if (strcmp(colls_group_last_alg(g), "binomial") != 0)
            bad("bcast: not the direct binomial tree", i);
        for (j = 0; j < BC; j++)
            if (b[j] != (uint8_t)(j * 7 + i))
                bad("bcast: wrong byte", i);
        for (j = 0; j < AR; j++)
            in[j] = j + rank * 3 + i;
        if ((rc = colls_allreduce(g, in, out, AR, COLLS_INT32, COLLS_SUM)) < 0)
            die("allreduce", rc, c);
        if (strcmp(colls_group_last_alg(g), "rsag") != 0)
            bad("allreduce: not rsag", i);
        for (j = 0; j < AR; j++) {
            int32_t want = 0;

            for (k = 0; k < opt.size; k++)
                want += j + k * 3 + i;
            if (out[j] != want)
                bad("allreduce: wrong sum", i);
        }
    }
    if (c->dcoll_copied != 0) {
        fprintf(stderr,
                "board-check rndv rank %d: %llu bytes came before their "
                "receive was posted\n",
                rank, (unsigned long long)c->dcoll_copied);
        exit(1);
    }
    printf("rndv: ok %d copied 0\n", opt.rounds);
    colls_group_leave(g);
    free(b);
    free(in);
    free(out);
    return 0;
}

int
main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"socket", 1, NULL, 's'}, {"mode", 1, NULL, 'm'},
        {"group", 1, NULL, 'g'},  {"size", 1, NULL, 'n'},
        {"rounds", 1, NULL, 'r'}, {"expect", 1, NULL, 'e'},
        {"what", 1, NULL, 'w'},   {"timeout-ms", 1, NULL, 't'},
        {NULL, 0, NULL, 0}};
    colls_t *c;
    int o, rc;

    while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (o) {
        case 's':
            opt.socket = optarg;
            break;
        case 'm':
            opt.mode = optarg;
            break;
        case 'g':
            opt.group = optarg;
            break;
        case 'n':
            opt.size = atoi(optarg);
            break;
        case 'r':
            opt.rounds = atoi(optarg);
            break;
        case 'e':
            opt.expect = optarg;
            break;
        case 'w':
            opt.what = optarg;
            break;
        case 't':
            opt.timeout_ms = atoi(optarg);
            break;
        default:
            return 2;
        }
    }
    if (opt.socket == NULL || opt.mode == NULL || opt.group == NULL ||
        opt.size < 2 || (strcmp(opt.mode, "run") == 0 && opt.expect == NULL) ||
        (strcmp(opt.mode, "corrupt") == 0 && opt.what == NULL)) {
        fprintf(stderr, "usage: board-check --socket S --mode "
                        "run|full|corrupt|rndv --group G [--size P --rounds N "
                        "--expect board|direct] [--what seq|len] "
                        "[--timeout-ms MS]\n");
        return 2;
    }
    rc = colls_attach(opt.socket, &c);
    if (rc < 0)
        die("attach", rc, NULL);
    colls_set_timeout(c, opt.timeout_ms);
    rc = strcmp(opt.mode, "run") == 0    ? mode_run(c)
         : strcmp(opt.mode, "full") == 0 ? mode_full(c)
         : strcmp(opt.mode, "rndv") == 0 ? mode_rndv(c)
                                         : mode_corrupt(c);
    colls_detach(c);
    return rc;
}
