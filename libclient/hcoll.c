/*
 * hcoll.c -- hierarchical direct collectives: small barrier, bcast,
 * allreduce and allgather of a group with several members on a host,
 * among its tasks, without the daemons (docs/collectives.md, "Direct
 * collectives" and "The board").
 *
 * The members of a host hand each other their data through the host's
 * board (board.h): shared memory, so a member reads what another wrote
 * with no system call, and a sleeping one is woken through its bell.  The
 * hosts' leaders (the lowest rank of each host; for bcast the root on its
 * own host; for a large allreduce's chunks each member in turn) exchange
 * over the direct route as dcoll.c does:
 *
 *   bcast      binomial tree over the hosts from the root's; each host's
 *              node puts the data on its board.
 *   barrier    every member puts its arrival; the leader waits for them,
 *              runs a dissemination among the leaders, puts the release.
 *   allreduce  every member puts its input; the leader reduces them in
 *              rank order, the leaders exchange their hosts' partial
 *              results (each to every other) and reduce them in host
 *              order, the leader puts the result.  Every member's result
 *              is bit-identical.  One larger than a chunk runs chunk by
 *              chunk, up to HC_DEPTH chunks in flight, each host's
 *              members leading its chunks in turn (hc_leader_of).
 *   allgather  every member puts its block; the leaders exchange their
 *              hosts' blocks (each to every other), the leader puts all.
 *
 * The board is made at a group's first such collective, per host (steps
 * HC_OFFER, HC_ACK, HC_GO among the host's members): the leader creates a
 * sealed memfd, and each member opens it through /proc/PID/fd/N of the
 * leader (so only a process of the same user, which could ptrace it
 * anyway, can) and checks its header, size and seals; the leader then
 * rings every member's bell once.  If anything fails, or COLLS_BOARD=0
 * for the leader or a member, that host's members hand each other their
 * data over the direct route instead (the leader sends to each, each
 * sends to the leader): slower, the same results.  What the leaders
 * exchange does not depend on it.  A board's memfd is closed once the
 * members mapped it; a task that dies leaves nothing behind.
 *
 * Bells: each task has one, an abstract Unix datagram socket in its
 * loop (c->bell_fd), named at random.  A wait on the board polls as any
 * wait does (colls.c), then marks in the task's line what it waits for
 * (c->sleep_word) and sleeps in the loop, so the daemon's and the peers'
 * messages (a death, an ABORT) still wake it.
 *
 * API layer (internal.h): may call dcoll.c, p2p.c, colls.c's loop,
 * board.c, proto/.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "board.h"
#include "dcoll.h"
#include "proto/bytes.h"
#include "proto/reduce.h"

/* Steps of the board's making; of what goes over the direct route within
   a host when there is no board (members to the leader, and back). */
#define HC_OFFER 0xfffffff0u
#define HC_ACK   0xfffffff1u
#define HC_GO    0xfffffff2u
#define HC_UP    0x40000000u
#define HC_DOWN  0x40000001u

/* An offer: u32 pid, u32 fd, u64 size, u32 slot bytes, u32 slots, nonce
   (size 0: no board). */
#define HC_OFFER_LEN (24 + BOARD_NONCE)
/* The largest board made (bytes): beyond, the host goes without. */
#define HC_BOARD_MAX ((size_t)64 * 1024 * 1024)

/* A group's hosts, as its members see them, and this host's board. */
struct colls__hc {
    int nhosts;
    int *host_of;      /* rank -> host index (hosts in order of lowest rank) */
    int *first;        /* host -> index of its first rank in ranks */
    int *ranks;        /* the ranks, host by host, each host's in rank order */
    int myhost, me, L; /* my host, my index among its L members */
    int made;          /* the board's making ran */
    struct board b;    /* valid when on */
    int on;
    uint64_t full;     /* puts that waited for room in my mailbox */
    unsigned inflight; /* most chunks in flight in the last allreduce */
};

/* One hierarchical collective of one member. */
struct hcop {
    struct dcoll d;
    struct colls__hc *h;
    int lead;    /* my host's leader: its member lead (0 but in allreduce) */
    int board;   /* this one's items go through the board */
    uint8_t *le; /* hc_put's little-endian copy, freed by hc_end */
};

static int hc_setup(struct hcop *o);

/* ---- the group's hosts ------------------------------------------------- */

void
colls__hcoll_free(struct colls_group *g)
{
    struct colls__hc *h = g->hc;

    if (h == NULL)
        return;
    if (h->on)
        munmap(h->b.base, h->b.size);
    free(h->host_of);
    free(h->first);
    free(h->ranks);
    free(h);
    g->hc = NULL;
}

struct board *
colls__hcoll_board(struct colls_group *g, uint64_t *full)
{
    if (full != NULL)
        *full = g->hc != NULL ? g->hc->full : 0;
    return g->hc != NULL && g->hc->on ? &g->hc->b : NULL;
}

unsigned
colls__hcoll_inflight(const struct colls_group *g)
{
    return g->hc != NULL ? g->hc->inflight : 0;
}

/* g's hosts, computed at its first hierarchical collective.  0 or
   COLLS_ENOMEM. */
static int
hc_hosts(struct colls_group *g)
{
    struct colls__hc *h;
    int *idx, *fill, r, n, p = g->size;

    if (g->hc != NULL)
        return 0;
    h = calloc(1, sizeof(*h));
    idx = malloc(4096 * sizeof(*idx)); /* hid -> host index */
    fill = calloc((size_t)p + 1, sizeof(*fill));
    if (h == NULL || idx == NULL || fill == NULL)
        goto fail;
    h->host_of = malloc((size_t)p * sizeof(int));
    h->first = calloc((size_t)p + 1, sizeof(int));
    h->ranks = malloc((size_t)p * sizeof(int));
    if (h->host_of == NULL || h->first == NULL || h->ranks == NULL)
        goto fail;
    for (r = 0; r < 4096; r++)
        idx[r] = -1;
    for (r = 0; r < p; r++) {
        int hid = COLLS_TID_HID(g->tids[r]);
        if (idx[hid] < 0)
            idx[hid] = h->nhosts++;
        h->host_of[r] = idx[hid];
        h->first[idx[hid] + 1]++;
    }
    for (n = 0; n < h->nhosts; n++)
        h->first[n + 1] += h->first[n];
    for (r = 0; r < p; r++) {
        int k = h->host_of[r];
        if (r == g->rank) {
            h->myhost = k;
            h->me = fill[k];
        }
        h->ranks[h->first[k] + fill[k]++] = r;
    }
    h->L = h->first[h->myhost + 1] - h->first[h->myhost];
    free(idx);
    free(fill);
    g->hc = h;
    return 0;
fail:
    if (h != NULL) {
        free(h->host_of);
        free(h->first);
        free(h->ranks);
    }
    free(h);
    free(idx);
    free(fill);
    return COLLS_ENOMEM;
}

/* The rank of member j of my host; of the leader of host k. */
static int
hc_local(const struct colls__hc *h, int j)
{
    return h->ranks[h->first[h->myhost] + j];
}

static int
hc_leader(const struct colls__hc *h, int k)
{
    return h->ranks[h->first[k]];
}

/* The rank of the leader of host k for chunk c of an allreduce: the
   hosts' members take turns (member c mod L of each host). */
static int
hc_leader_of(const struct colls__hc *h, int k, size_t c)
{
    size_t L = (size_t)(h->first[k + 1] - h->first[k]);

    return h->ranks[h->first[k] + (int)(c % L)];
}

/* ---- bells ------------------------------------------------------------- */

/* Our bell rang: empties it (the wait that slept looks again). */
static void
hc_bell_cb(uv_poll_t *p, int status, int events)
{
    colls_t *c = p->data;
    char b[16];

    (void)status;
    (void)events;
    while (recv(c->bell_fd, b, sizeof b, MSG_DONTWAIT) >= 0)
        ;
}

/* The abstract address of bell name. */
static socklen_t
hc_bell_addr(struct sockaddr_un *a, const char *name)
{
    size_t n = strlen(name);

    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    memcpy(a->sun_path + 1, name, n); /* sun_path[0] = 0: abstract */
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* Opens this task's bell if it has none.  0 or a COLLS_E* code. */
static int
hc_bell_open(colls_t *c)
{
    struct sockaddr_un a;
    uint64_t rnd;
    int fd, tries;

    if (c->bell_fd >= 0)
        return 0;
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return COLLS_EIO;
    for (tries = 0; tries < 4; tries++) {
        if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd) {
            tries = 4; /* no name nobody can guess */
            break;
        }
        snprintf(c->bell_name, sizeof c->bell_name, "colls-bell-%016llx",
                 (unsigned long long)rnd);
        if (bind(fd, (struct sockaddr *)&a, hc_bell_addr(&a, c->bell_name)) ==
            0)
            break;
    }
    if (tries == 4 || uv_poll_init(&c->conn.loop, &c->bell_poll, fd) != 0) {
        close(fd);
        return COLLS_EIO;
    }
    c->bell_poll.data = c;
    c->bell_fd = fd;
    uv_poll_start(&c->bell_poll, UV_READABLE, hc_bell_cb);
    return 0;
}

/* Rings member j's bell: 0, or -1 if it cannot be reached. */
static int
hc_ring_one(colls_t *c, const struct board *b, unsigned j)
{
    const struct board_line *l = colls__board_line(b, j);
    struct sockaddr_un a;
    char name[BOARD_BELL_MAX];

    memcpy(name, l->bell, sizeof name);
    name[sizeof name - 1] = '\0';
    if (name[0] == '\0')
        return -1;
    if (sendto(c->bell_fd, "", 1, MSG_DONTWAIT | MSG_NOSIGNAL,
               (struct sockaddr *)&a, hc_bell_addr(&a, name)) < 0 &&
        errno != EAGAIN)
        return -1; /* a full bell has rung already */
    return 0;
}

static void
hc_ring(void *arg, unsigned j)
{
    struct hcop *o = arg;

    (void)hc_ring_one(o->d.g->c, &o->h->b, j);
}

/* ---- waiting on the board ---------------------------------------------- */

/* What a wait on the board looks for. */
struct hc_wait {
    struct hcop *o;
    int j;  /* member j's item; -1: room in my slot */
    int rc; /* 1 found, or a COLLS_E* code */
    const uint8_t *data;
    size_t len;
};

static int
hc_wait_pred(void *arg)
{
    struct hc_wait *w = arg;
    struct hcop *o = w->o;
    colls_t *c = o->d.g->c;
    int r, j, st;

    if (w->j >= 0) {
        r = colls__board_peek(&o->h->b, (unsigned)w->j, o->d.seq, &w->data,
                              &w->len);
        if (r != 0) {
            w->rc = r > 0 ? 1 : COLLS_EIO;
            return 1;
        }
        st = colls__src_status(c, o->d.g->tids[hc_local(o->h, w->j)]);
    } else {
        if (colls__board_room(&o->h->b, o->d.seq)) {
            w->rc = 1;
            return 1;
        }
        for (st = 0, j = 0; j < o->h->L && st == 0; j++)
            if (j != o->h->me)
                st = colls__src_status(c, o->d.g->tids[hc_local(o->h, j)]);
    }
    if (st == 0)
        st = colls__dc_aborted(c, o->d.g, o->d.seq);
    if (st < 0) {
        w->rc = st;
        return 1;
    }
    return 0;
}

/* Waits until member j's item is on the board (j >= 0) or my slot has
   room (j < 0).  1, or a COLLS_E* code. */
static int
hc_wait(struct hc_wait *w)
{
    colls_t *c = w->o->d.g->c;
    struct board_line *me =
        colls__board_line(&w->o->h->b, (unsigned)w->o->h->me);
    int rc;

    w->rc = 0;
    c->sleep_word = &me->sleep;
    c->sleep_what = w->j >= 0 ? BOARD_SLEEP_FROM(w->j) : BOARD_SLEEP_ROOM;
    rc = colls__wait(c, hc_wait_pred, w, 1);
    c->sleep_word = NULL;
    if (rc < 0)
        return rc;
    if (w->rc == COLLS_EIO)
        snprintf(c->errmsg, sizeof c->errmsg,
                 "the board of group %s is corrupt (rank %d's slot)",
                 w->o->d.g->name, hc_local(w->o->h, w->j));
    return w->rc;
}

/* ---- a host's items: through the board, or the direct route ------------ */

/*
 * Makes my item of this collective (len bytes at data, items of dtype)
 * available to my host's other members: on the board, or sent to every
 * other member (to_all) or to the leader.  On the board items are in our
 * byte order (a member of the other one refuses the board: its header
 * reads wrong); over the direct route little-endian, as between hosts.
 */
static int
hc_put(struct hcop *o, const void *data, size_t len, int dtype, int to_all)
{
    struct hc_wait w = {o, -1, 0, NULL, 0};
    int j, rc = 0;

    if (o->board) {
        if (!colls__board_room(&o->h->b, o->d.seq)) {
            o->h->full++;
            rc = hc_wait(&w);
            if (rc < 0)
                return rc;
        }
        colls__board_put(&o->h->b, o->d.seq, data, len);
        colls__board_wakes(&o->h->b, 1, hc_ring, o);
        return 0;
    }
    /* read by the sends until hc_end */
    if (colls__dc_le_copy(dtype, data, len, &o->le) < 0)
        return COLLS_ENOMEM;
    if (o->le != NULL)
        data = o->le;
    if (!to_all) {
        /* written before the caller's receive may overwrite data */
        rc = colls__dc_send(&o->d, hc_local(o->h, o->lead), HC_UP, data, len);
        return rc < 0 ? rc : colls__sends_wait(&o->d.sent);
    }
    for (j = 0; rc == 0 && j < o->h->L; j++)
        if (j != o->h->me)
            rc = colls__dc_send(&o->d, hc_local(o->h, j), HC_DOWN, data, len);
    return rc;
}

/* Waits for member j's item of this collective on the board, which must
   be exactly len bytes: *data points at it there.  0 or a COLLS_E*
   code. */
static int
hc_item(struct hcop *o, int j, size_t len, const uint8_t **data)
{
    struct hc_wait w = {o, j, 0, NULL, 0};
    int rc = hc_wait(&w);

    if (rc < 0)
        return rc;
    if (w.len != len) {
        snprintf(o->d.g->c->errmsg, sizeof o->d.g->c->errmsg,
                 "%zu bytes from rank %d, %zu expected", w.len,
                 hc_local(o->h, j), len);
        return COLLS_ECOUNT;
    }
    *data = w.data;
    return 0;
}

/* Reads member j's item of this collective, exactly len bytes of items of
   dtype, into out: one it put for every member (down) or for the
   leader. */
static int
hc_get(struct hcop *o, int j, void *out, size_t len, int dtype, int down)
{
    const uint8_t *data;
    int rc;

    if (!o->board) {
        rc = colls__dc_recv(&o->d, hc_local(o->h, j), down ? HC_DOWN : HC_UP,
                            out, len);
        if (rc == 0)
            colls__dc_le(dtype, out, len);
        return rc;
    }
    rc = hc_item(o, j, len, &data);
    if (rc == 0 && len > 0)
        memcpy(out, data, len);
    return rc;
}

/*
 * Starts a hierarchical collective whose largest item on a board is item
 * bytes: the group's hosts, the board's making at its first one.
 */
static int
hc_begin(struct hcop *o, struct colls_group *g, size_t item)
{
    int rc;

    colls__dc_begin(&o->d, g);
    o->board = 0;
    o->lead = 0;
    o->h = NULL;
    o->le = NULL;
    rc = hc_hosts(g);
    if (rc < 0)
        return rc;
    o->h = g->hc;
    /* the most sends of one member: the making's 2 (L - 1) once; a
       leader's (or node's) to each other member of its host and to the
       other leaders (more than a dissemination's or a binomial tree's
       rounds over the hosts).  Within DCOLL_SENDS_MAX nothing is
       allocated, as on every call of a small group. */
    rc = colls__dc_room(&o->d, (o->h->made ? 0 : 2 * (size_t)o->h->L) +
                                   (size_t)o->h->L + (size_t)o->h->nhosts);
    if (rc == 0 && !o->h->made && o->h->L > 1)
        rc = hc_setup(o);
    o->board = o->h->on && item <= o->h->b.slot_bytes;
    return rc;
}

/* Ends it: marks it done on the board (waking a writer short of room). */
static int
hc_end(struct hcop *o, int rc)
{
    rc = colls__dc_end(&o->d, rc);
    free(o->le);
    o->le = NULL;
    if (rc == 0 && o->h != NULL && o->h->on) {
        colls__board_done(&o->h->b, o->d.seq);
        colls__board_wakes(&o->h->b, 0, hc_ring, o);
    }
    o->d.g->last_local = o->board ? "board" : "direct";
    return rc;
}

/* ---- making the board -------------------------------------------------- */

/* 1 unless COLLS_BOARD=0. */
static int
hc_wanted(void)
{
    const char *v = getenv("COLLS_BOARD");

    return v == NULL || strcmp(v, "0") != 0;
}

/* Slots per mailbox of a board of L members: 64 (a root may run 64
   bcasts ahead of its slowest reader, as MPI's eager sends do) for up to 8
   members, fewer for more (a board of 100 members has 5).  Pages are
   allocated as slots are first used: a slot that held only small items
   costs a page. */
static unsigned
hc_slots(int L)
{
    unsigned s = 512u / (unsigned)L;

    return s > BOARD_SLOTS_MAX ? BOARD_SLOTS_MAX : s < 4 ? 4 : s;
}

/* COLLS_DIRECT_MAX clamped to what a slot may hold (64 B .. 64 KiB). */
static size_t
hc_direct_max(const struct colls_group *g)
{
    size_t s = g->direct_max;

    return s < 64 ? 64 : s > BOARD_SLOT_MAX ? BOARD_SLOT_MAX : s;
}

/* Data bytes of the slots of a board of L members of g with slots slots:
   COLLS_DIRECT_MAX (64 B .. 64 KiB), less if the board would exceed
   HC_BOARD_MAX (then larger items go over the direct route); 0 when not
   even 64 B fit. */
static size_t
hc_slot_bytes(const struct colls_group *g, int L, unsigned slots)
{
    size_t s = hc_direct_max(g), fit;

    fit = (HC_BOARD_MAX - BOARD_LINE - (size_t)L * BOARD_LINE) /
          ((size_t)L * slots);
    fit = fit > BOARD_LINE ? (fit - BOARD_LINE) / BOARD_LINE * BOARD_LINE : 0;
    return s < fit ? s : fit;
}

/* Leader: a fresh sealed memfd of size bytes, mapped at *map.  The fd,
   or -1. */
static int
hc_board_create(size_t size, void **map)
{
    int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
    int fd = memfd_create("colls-board", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)size) != 0 || fcntl(fd, F_ADD_SEALS, seals) != 0 ||
        (*map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
            MAP_FAILED) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Member: maps the leader's board from its offer.  0, or -1 (nothing
   kept). */
static int
hc_board_map(struct hcop *o, const uint8_t *offer)
{
    struct colls__hc *h = o->h;
    uint32_t pid = get_u32(offer), fd = get_u32(offer + 4);
    uint64_t size = get_u64(offer + 8);
    uint32_t slot = get_u32(offer + 16), slots = get_u32(offer + 20);
    char path[64];
    struct stat st;
    void *map;
    int mfd, seals;

    if (size == 0 || size > HC_BOARD_MAX ||
        size != colls__board_size((unsigned)h->L, slots, slot))
        return -1;
    snprintf(path, sizeof path, "/proc/%u/fd/%u", pid, fd);
    mfd = open(path, O_RDWR | O_CLOEXEC);
    if (mfd < 0)
        return -1;
    seals = fcntl(mfd, F_GET_SEALS);
    /* sealed against shrinking: nobody can make our mapping fault */
    if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(mfd, &st) != 0 ||
        (uint64_t)st.st_size != size) {
        close(mfd);
        return -1;
    }
    map = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    close(mfd);
    if (map == MAP_FAILED)
        return -1;
    if (colls__board_open(&h->b, map, (size_t)size, (unsigned)h->L,
                          (unsigned)h->me, slots, slot, o->d.g->gid,
                          offer + 24) != 0) {
        munmap(map, (size_t)size);
        return -1;
    }
    return 0;
}

/* Writes my line: who I am and my bell. */
static void
hc_line(struct hcop *o)
{
    struct board_line *l = colls__board_line(&o->h->b, (unsigned)o->h->me);

    l->pid = (uint32_t)getpid();
    snprintf(l->bell, sizeof l->bell, "%s", o->d.g->c->bell_name);
}

/* Leader's part of the making. */
static int
hc_setup_leader(struct hcop *o, uint8_t (*msg)[HC_OFFER_LEN])
{
    struct colls__hc *h = o->h;
    colls_t *c = o->d.g->c;
    unsigned slots = hc_slots(h->L);
    size_t slot = hc_slot_bytes(o->d.g, h->L, slots);
    size_t size = slot > 0 ? colls__board_size((unsigned)h->L, slots, slot) : 0;
    uint8_t nonce[BOARD_NONCE], ack[4];
    void *map = NULL;
    int fd = -1, j, go, rc = 0;

    if (size == 0 || size > HC_BOARD_MAX || !hc_wanted() ||
        hc_bell_open(c) != 0 ||
        getrandom(nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce ||
        (fd = hc_board_create(size, &map)) < 0)
        size = 0; /* offer nothing: the host goes without */
    if (size != 0) {
        colls__board_init(map, (unsigned)h->L, slots, slot, o->d.g->gid, nonce);
        (void)colls__board_open(&h->b, map, size, (unsigned)h->L, 0, slots,
                                slot, o->d.g->gid, nonce);
        hc_line(o);
    }
    put_u32(msg[0], (uint32_t)getpid());
    put_u32(msg[0] + 4, (uint32_t)fd);
    put_u64(msg[0] + 8, size);
    put_u32(msg[0] + 16, (uint32_t)slot);
    put_u32(msg[0] + 20, slots);
    memcpy(msg[0] + 24, nonce, BOARD_NONCE);
    for (j = 1; rc == 0 && j < h->L; j++)
        rc = colls__dc_send(&o->d, hc_local(h, j), HC_OFFER, msg[0],
                            HC_OFFER_LEN);
    go = size != 0;
    for (j = 1; rc == 0 && j < h->L; j++) {
        rc = colls__dc_recv(&o->d, hc_local(h, j), HC_ACK, ack, 4);
        if (rc == 0 && get_u32(ack) != 1)
            go = 0;
    }
    /* every member can be woken: they share our network namespace */
    for (j = 1; rc == 0 && go && j < h->L; j++)
        if (hc_ring_one(c, &h->b, (unsigned)j) != 0)
            go = 0;
    put_u32(msg[1], (uint32_t)go);
    for (j = 1; rc == 0 && j < h->L; j++)
        rc = colls__dc_send(&o->d, hc_local(h, j), HC_GO, msg[1], 4);
    if (rc == 0)
        rc = colls__sends_wait(&o->d.sent); /* msg is ours: written first */
    if (fd >= 0)
        close(fd); /* each member mapped it, or will not */
    if (rc == 0 && go)
        h->on = 1;
    else if (map != NULL)
        munmap(map, size);
    return rc;
}

/* A member's part of the making. */
static int
hc_setup_member(struct hcop *o, uint8_t (*msg)[HC_OFFER_LEN])
{
    struct colls__hc *h = o->h;
    colls_t *c = o->d.g->c;
    uint8_t go[4];
    int ok, rc;

    rc = colls__dc_recv(&o->d, hc_local(h, 0), HC_OFFER, msg[0], HC_OFFER_LEN);
    if (rc < 0)
        return rc;
    ok = hc_wanted() && hc_bell_open(c) == 0 && hc_board_map(o, msg[0]) == 0;
    if (ok)
        hc_line(o);
    put_u32(msg[1], (uint32_t)ok);
    rc = colls__dc_send(&o->d, hc_local(h, 0), HC_ACK, msg[1], 4);
    if (rc == 0)
        rc = colls__dc_recv(&o->d, hc_local(h, 0), HC_GO, go, 4);
    if (rc == 0)
        rc = colls__sends_wait(&o->d.sent);
    if (rc == 0 && ok && get_u32(go) == 1)
        h->on = 1;
    else if (ok)
        munmap(h->b.base, h->b.size);
    return rc;
}

/* Makes this host's board (or finds it cannot), once per group. */
static int
hc_setup(struct hcop *o)
{
    uint8_t msg[2][HC_OFFER_LEN];
    int rc;

    rc = o->h->me == 0 ? hc_setup_leader(o, msg) : hc_setup_member(o, msg);
    if (rc == 0)
        o->h->made = 1;
    return rc;
}

/* ---- the collectives --------------------------------------------------- */

/* The dissemination barrier among the hosts' leaders (I am one). */
static int
hc_leaders_barrier(struct hcop *o)
{
    struct colls__hc *h = o->h;
    int n = h->nhosts, k = h->myhost, rc = 0;
    uint32_t step = 0;
    int dist;

    for (dist = 1; rc == 0 && dist < n; dist <<= 1, step++) {
        rc = colls__dc_send(&o->d, hc_leader(h, (k + dist) % n), step, NULL, 0);
        if (rc == 0)
            rc = colls__dc_recv(&o->d, hc_leader(h, (k + n - dist) % n), step,
                                NULL, 0);
    }
    return rc;
}

int
colls__hcoll_barrier(struct colls_group *g)
{
    struct hcop o;
    int rc = hc_begin(&o, g, 0), j;

    if (rc == 0 && o.h->me != 0) {
        rc = hc_put(&o, NULL, 0, COLLS_BYTE, 0);
        if (rc == 0)
            rc = hc_get(&o, 0, NULL, 0, COLLS_BYTE, 1);
        return hc_end(&o, rc);
    }
    for (j = 1; rc == 0 && j < o.h->L; j++)
        rc = hc_get(&o, j, NULL, 0, COLLS_BYTE, 0);
    if (rc == 0)
        rc = hc_leaders_barrier(&o);
    if (rc == 0)
        rc = hc_put(&o, NULL, 0, COLLS_BYTE, 1);
    return hc_end(&o, rc);
}

/* The node of host k in a bcast from root (of host hr): the root on its
   own host, else the host's leader. */
static int
hc_node(const struct colls__hc *h, int k, int hr, int root)
{
    return k == hr ? root : hc_leader(h, k);
}

/* One bcast of at most a chunk (hc_chunk). */
static int
hc_bcast1(struct colls_group *g, void *buf, size_t bytes, int dtype, int root)
{
    struct hcop o;
    struct colls__hc *h;
    int rc = hc_begin(&o, g, bytes), n, hr, vh, node, j, mask;
    int swap =
        dtype_size(dtype) > 1 && dtype_native_order() != COLLS_ORDER_LITTLE;
    uint8_t *wire = buf, *copy = NULL;

    if (rc < 0)
        return hc_end(&o, rc);
    h = o.h;
    n = h->nhosts;
    hr = h->host_of[root];
    vh = (h->myhost - hr + n) % n;
    node = hc_node(h, h->myhost, hr, root);
    if (g->rank != node) {
        /* my host's node puts it on the board (or sends it) */
        for (j = 0; hc_local(h, j) != node; j++)
            ;
        return hc_end(&o, hc_get(&o, j, buf, bytes, dtype, 1));
    }
    /* the root's buffer stays as it is */
    if (vh == 0 && colls__dc_le_copy(dtype, buf, bytes, &copy) < 0)
        return hc_end(&o, COLLS_ENOMEM);
    if (copy != NULL)
        wire = copy;
    /* binomial over the hosts: from the parent host's node, then to the
       children's (leaders), then my host */
    for (mask = 1; mask < n; mask <<= 1)
        if (vh & mask) {
            rc =
                colls__dc_recv(&o.d, hc_node(h, (vh - mask + hr) % n, hr, root),
                               0, buf, bytes);
            break;
        }
    for (mask >>= 1; rc == 0 && mask > 0; mask >>= 1)
        if (vh + mask < n)
            rc = colls__dc_send(&o.d, hc_leader(h, (vh + mask + hr) % n), 0,
                                wire, bytes);
    if (rc == 0 && vh != 0 && swap) {
        rc = colls__sends_wait(&o.d.sent); /* they read buf as it came */
        colls__dc_le(dtype, buf, bytes);
    }
    if (rc == 0 && h->L > 1)
        rc = hc_put(&o, buf, bytes, dtype, 1);
    rc = hc_end(&o, rc);
    free(copy);
    return rc;
}

/*
 * Leaders of chunk c (hc_leader_of; 0 but in a large allreduce): every
 * leader sends its host's len bytes at mine (little-endian) to every
 * other host's leader.
 */
static int
hc_leaders_send(struct hcop *o, const uint8_t *mine, size_t len, size_t c)
{
    struct colls__hc *h = o->h;
    int n = h->nhosts, k = h->myhost, i, rc = 0;

    for (i = 1; rc == 0 && i < n; i++)
        rc = colls__dc_send(&o->d, hc_leader_of(h, (k + i) % n, c), 0, mine,
                            len);
    return rc;
}

/* ... and receives each other host's into all + off[k] (off[k + 1] -
   off[k] bytes; off NULL: all + k len, len bytes).  Does not touch its
   own. */
static int
hc_leaders_recv(struct hcop *o, uint8_t *all, const size_t *off, size_t len,
                size_t c)
{
    struct colls__hc *h = o->h;
    int n = h->nhosts, k = h->myhost, i, rc = 0;

    for (i = 1; rc == 0 && i < n; i++) {
        int from = (k + n - i) % n;
        size_t at = off != NULL ? off[from] : (size_t)from * len;
        rc = colls__dc_recv(&o->d, hc_leader_of(h, from, c), 0, all + at,
                            off != NULL ? off[from + 1] - off[from] : len);
    }
    return rc;
}

/* One allreduce of at most a chunk (hc_chunk) of one member, in two
   halves so that several may be in flight (hc_ar_start, hc_ar_finish). */
struct hc_piece {
    struct hcop o;
    const uint8_t *in;
    uint8_t *out;
    size_t count, m;
    size_t c;     /* the chunk's index in its call: who leads (hc_leader_of) */
    uint8_t *acc; /* leader: my host's inputs reduced (what it sends) */
    int rc;       /* of hc_ar_start */
};

/* Reduces member j's item of p (m bytes) into acc, straight from the
   board, or received into tmp over the direct route. */
static int
hc_reduce_item(struct hc_piece *p, int j, uint8_t *tmp, int dtype, int rop)
{
    const uint8_t *data = tmp;
    int rc = p->o.board ? hc_item(&p->o, j, p->m, &data)
                        : hc_get(&p->o, j, tmp, p->m, dtype, 0);

    return rc < 0 ? rc : reduce_apply(rop, dtype, p->acc, data, p->count);
}

/*
 * The first half: a member puts its input; the leader (member c mod L of
 * its host: consecutive chunks reduce on different members) reduces its
 * host's inputs in rank order into acc and sends them (little-endian) to
 * every other host's leader of the chunk.  p->o is begun whatever happens
 * (hc_ar_finish ends it).
 */
static int
hc_ar_start(struct hc_piece *p, struct colls_group *g, int dtype, int rop)
{
    struct colls__hc *h;
    uint8_t *tmp = NULL;
    int rc = hc_begin(&p->o, g, p->m), j;

    p->acc = NULL;
    if (rc < 0)
        return rc;
    h = p->o.h;
    p->o.lead = (int)(p->c % (size_t)h->L);
    if (h->me != p->o.lead)
        return hc_put(&p->o, p->in, p->m, dtype, 0);
    p->acc = malloc(p->m > 0 ? p->m : 1);
    if (!p->o.board && h->L > 1)
        tmp = malloc(p->m > 0 ? p->m : 1);
    if (p->acc == NULL || (!p->o.board && h->L > 1 && tmp == NULL)) {
        free(tmp);
        return COLLS_ENOMEM;
    }
    if (h->me == 0 && p->m > 0)
        memcpy(p->acc, p->in, p->m);
    else if (h->me != 0)
        rc = hc_get(&p->o, 0, p->acc, p->m, dtype, 0);
    for (j = 1; rc == 0 && j < h->L; j++)
        rc = j == h->me ? reduce_apply(rop, dtype, p->acc, p->in, p->count)
                        : hc_reduce_item(p, j, tmp, dtype, rop);
    free(tmp);
    if (rc == 0 && h->nhosts > 1) {
        colls__dc_le(dtype, p->acc, p->m);
        rc = hc_leaders_send(&p->o, p->acc, p->m, p->c);
    }
    return rc;
}

/* The leader's host-order fold: the other hosts' partial results of
   p's chunk and its own (acc), reduced into acc. */
static int
hc_ar_combine(struct hc_piece *p, int dtype, int rop)
{
    struct colls__hc *h = p->o.h;
    size_t n = (size_t)h->nhosts, i;
    uint8_t *all = malloc(n * p->m > 0 ? n * p->m : 1);
    int rc = all == NULL ? COLLS_ENOMEM : 0;

    if (rc == 0)
        rc = hc_leaders_recv(&p->o, all, NULL, p->m, p->c);
    if (rc == 0)
        rc = colls__sends_wait(&p->o.d.sent); /* they read acc */
    if (rc == 0) {
        memcpy(all + (size_t)h->myhost * p->m, p->acc, p->m);
        colls__dc_le(dtype, all, n * p->m);
        for (i = 1; rc == 0 && i < n; i++)
            rc = reduce_apply(rop, dtype, all, all + i * p->m, p->count);
        memcpy(p->acc, all, p->m);
    }
    free(all);
    return rc;
}

/*
 * The second half: the leader combines the hosts' partial results,
 * keeps the result and puts it for its host; a member reads it.  rc: a
 * failure so far (of this piece's start or of an earlier piece), which
 * skips the work.  Ends p->o; frees acc.
 */
static int
hc_ar_finish(struct hc_piece *p, int dtype, int rop, int rc)
{
    struct colls__hc *h = p->o.h;

    if (rc == 0 && h->me != p->o.lead) {
        rc = hc_get(&p->o, p->o.lead, p->out, p->m, dtype, 1);
        return hc_end(&p->o, rc);
    }
    if (rc == 0 && h->nhosts > 1)
        rc = hc_ar_combine(p, dtype, rop);
    if (rc == 0 && p->m > 0)
        memcpy(p->out, p->acc, p->m);
    if (rc == 0 && h->L > 1)
        rc = hc_put(&p->o, p->acc, p->m, dtype, 1);
    rc = hc_end(&p->o, rc); /* the sends read acc */
    free(p->acc);
    p->acc = NULL;
    return rc;
}

/* One allreduce of at most a chunk. */
static int
hc_allreduce1(struct colls_group *g, const void *sbuf, void *rbuf, size_t count,
              int dtype, int rop)
{
    struct hc_piece p;

    p.in = sbuf;
    p.out = rbuf;
    p.count = count;
    p.c = 0;
    p.m = count * dtype_size(dtype);
    p.rc = hc_ar_start(&p, g, dtype, rop);
    return hc_ar_finish(&p, dtype, rop, p.rc);
}

/* The bytes of a chunk of items of dtype: COLLS_DIRECT_MAX (64 B .. 64
   KiB, what a slot holds) rounded down to whole items.  The same for
   every member (COLLS_DIRECT_MAX must be), whatever its host's board. */
static size_t
hc_chunk(const struct colls_group *g, int dtype)
{
    size_t ds = dtype_size(dtype);

    return hc_direct_max(g) / ds * ds;
}

/* A bcast larger than a chunk runs as one bcast per chunk, in order,
   each a collective of its own (its own seq): a host's node puts chunk
   k on its board while chunk k + 1 travels, and each member copies
   chunk k out while the next is put. */
int
colls__hcoll_bcast(struct colls_group *g, void *buf, size_t bytes, int dtype,
                   int root)
{
    size_t chunk = hc_chunk(g, dtype), off, n;
    int rc = 0;

    if (bytes <= chunk)
        return hc_bcast1(g, buf, bytes, dtype, root);
    for (off = 0; rc == 0 && off < bytes; off += n) {
        n = bytes - off < chunk ? bytes - off : chunk;
        rc = hc_bcast1(g, (uint8_t *)buf + off, n, dtype, root);
    }
    return rc;
}

/* Chunks of a larger allreduce in flight at once: a member puts chunk
   k + 1 before it reads chunk k's result, and a leader reduces and sends
   chunk k + 1 while chunk k's partial results travel between the hosts
   (at most this many, and fewer than a board's slots). */
#define HC_DEPTH 4

/* How many chunks may be in flight: HC_DEPTH, fewer than the board's
   slots (the group's hosts are known once its first chunk began). */
static size_t
hc_depth(const struct colls_group *g)
{
    const struct colls__hc *h = g->hc;

    return h != NULL && h->on && h->b.slots <= HC_DEPTH ? h->b.slots - 1
                                                        : HC_DEPTH;
}

/* A larger allreduce: one per chunk of items, in order (each item is
   reduced exactly as in one allreduce: the results are the same bits),
   up to HC_DEPTH of them in flight. */
int
colls__hcoll_allreduce(struct colls_group *g, const void *sbuf, void *rbuf,
                       size_t count, int dtype, int rop)
{
    size_t ds = dtype_size(dtype), per = hc_chunk(g, dtype) / ds;
    size_t head = 0, tail = 0, off = 0, most = 0;
    struct hc_piece *pc;
    int rc = 0;

    if (count <= per)
        return hc_allreduce1(g, sbuf, rbuf, count, dtype, rop);
    pc = calloc(HC_DEPTH, sizeof(*pc));
    if (pc == NULL)
        return COLLS_ENOMEM;
    while (tail < head || (rc == 0 && off < count)) {
        struct hc_piece *p;

        if (rc == 0 && off < count && head - tail < hc_depth(g)) {
            p = &pc[head % HC_DEPTH];
            p->c = head++;
            p->count = count - off < per ? count - off : per;
            p->m = p->count * ds;
            p->in = (const uint8_t *)sbuf + off * ds;
            p->out = (uint8_t *)rbuf + off * ds;
            off += p->count;
            p->rc = hc_ar_start(p, g, dtype, rop);
            if (p->rc < 0)
                rc = p->rc;
            if (head - tail > most)
                most = head - tail;
            continue;
        }
        p = &pc[tail++ % HC_DEPTH];
        p->rc = hc_ar_finish(p, dtype, rop, rc < 0 ? rc : p->rc);
        if (rc == 0)
            rc = p->rc;
    }
    free(pc);
    if (g->hc != NULL)
        g->hc->inflight = (unsigned)most;
    return rc;
}

int
colls__hcoll_allgather(struct colls_group *g, const void *sbuf, void *rbuf,
                       size_t m, int dtype)
{
    struct hcop o;
    struct colls__hc *h;
    size_t p = (size_t)g->size, k, *off = NULL;
    uint8_t *out = rbuf, *mine = NULL, *all = NULL;
    int rc = hc_begin(&o, g, p * m), j, n, r;

    if (rc == 0 && g->hc->me != 0) {
        rc = hc_put(&o, sbuf, m, dtype, 0);
        if (rc == 0)
            rc = hc_get(&o, 0, rbuf, p * m, dtype, 1);
        return hc_end(&o, rc);
    }
    if (rc < 0)
        return hc_end(&o, rc);
    h = o.h;
    n = h->nhosts;
    /* blocks host by host (h->ranks' order), then into rank order */
    all = malloc(p * m > 0 ? p * m : 1);
    off = malloc(((size_t)n + 1) * sizeof(*off));
    if (all == NULL || off == NULL) {
        rc = COLLS_ENOMEM;
        goto out;
    }
    for (k = 0; k <= (size_t)n; k++)
        off[k] = (size_t)h->first[k] * m;
    mine = all + off[h->myhost];
    if (m > 0)
        memmove(mine, sbuf, m);
    for (j = 1; rc == 0 && j < h->L; j++)
        rc = hc_get(&o, j, mine + (size_t)j * m, m, dtype, 0);
    if (rc == 0 && n > 1) {
        colls__dc_le(dtype, mine, (size_t)h->L * m);
        rc = hc_leaders_send(&o, mine, (size_t)h->L * m, 0);
        if (rc == 0)
            rc = hc_leaders_recv(&o, all, off, 0, 0);
        if (rc == 0)
            rc = colls__sends_wait(&o.d.sent);
        colls__dc_le(dtype, all, p * m); /* mine is swapped back too */
    }
    for (k = 0; rc == 0 && k < p && m > 0; k++) {
        r = h->ranks[k];
        memcpy(out + (size_t)r * m, all + k * m, m);
    }
    if (rc == 0 && h->L > 1)
        rc = hc_put(&o, out, p * m, dtype, 1);
out:
    rc = hc_end(&o, rc);
    free(all);
    free(off);
    return rc;
}
