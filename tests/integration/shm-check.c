/*
 * shm-check.c -- the shared-memory channel between tasks and their daemon,
 * from the task's side (tests/integration/shm.sh).
 *
 * It links the library's objects (libcollsclient.la) rather than the
 * shared libcolls, so that it can reach the channel the library made --
 * colls_t begins with struct colls__conn (libclient/internal.h) -- and
 * read its counters or scribble on the rings through its own mapping, as
 * a buggy or hostile task could.  Nothing in the library is built for it.
 *
 * Modes (--socket PATH of the daemon for all; every blocking call is
 * bounded by --timeout-ms):
 *   channel --count N [--expect shm|socket]  N tasks attach in this
 *       process, each must be on the expected channel; each sends its
 *       index to the next and receives from the previous (checked), then
 *       all detach.  Prints "channel: N shm|socket".
 *   lazy --tidfile F --count N --size S --sleep-ms MS   attaches, writes
 *       its tid, reads nothing for MS, then receives N messages of S
 *       bytes and checks each (sequence in the tag, bytes by generator).
 *   send --peer F --count N --size S   sends N such messages to the tid
 *       in F; prints the writes that waited for room in the ring.
 *   scribble --what req-head|comp-tail   attaches and corrupts one index
 *       of its rings, then waits for a message from itself (comp-tail:
 *       after sending it one, which the daemon writes back): prints the error
 *       the call ends with and the daemon's message ("scribble: NAME:
 *       text"); exits 0 iff the call failed.
 *   offer --what unsealed|size|pipes   attaches by hand (no library) with
 *       a bad channel -- a memfd without seals, one of the wrong size,
 *       pipes for doorbells -- and prints "offer: attached, accepted N"
 *       once ATTACH_REP came: the daemon must attach the task on its socket
 *       and never mark the channel accepted (nor map an unsealed memfd).
 *   coll --group G --size P --iters N   joins G and runs N allreduces of
 *       int32 sums (checked); on an error prints "coll: ERRNAME at i" and
 *       exits 3.
 */
#include <config.h>

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "colls.h"
#include "libclient/conn.h"
#include "libclient/shm.h"
#include "proto/envelope.h"
#include "proto/frame.h"

struct opts {
    const char *socket, *mode, *tidfile, *peer, *expect, *what, *group;
    long count, size, sleep_ms, iters;
    int timeout_ms;
};

static struct opts opt = {.count = 1, .size = 8, .timeout_ms = 60000};

static void
die(const char *what, int rc)
{
    fprintf(stderr, "shm-check %s: %s: %s\n", opt.mode, what,
            colls_err_name(rc));
    exit(1);
}

static colls_t *
attach(void)
{
    colls_t *c;
    int rc = colls_attach(opt.socket, &c);

    if (rc < 0)
        die("attach", rc);
    colls_set_timeout(c, opt.timeout_ms);
    return c;
}

/* The channel the library made (colls_t begins with the conn layer). */
static struct colls__shm *
shm_of(colls_t *c)
{
    return ((struct colls__conn *)(void *)c)->shm;
}

static const char *
channel_of(colls_t *c)
{
    return colls__conn_channel((struct colls__conn *)(void *)c);
}

/* The byte at i of message seq (a cheap generator). */
static uint8_t
gen(long seq, long i)
{
    return (uint8_t)(seq * 131 + i * 7 + (i >> 8));
}

static colls_tid_t
read_tid(const char *file)
{
    unsigned long v = 0;
    int tries;

    for (tries = 0; tries < 600; tries++) {
        FILE *f = fopen(file, "r");
        int n = 0;

        if (f != NULL) {
            n = fscanf(f, "%lx", &v);
            fclose(f);
        }
        if (n == 1 && v != 0)
            return (colls_tid_t)v;
        usleep(100000);
    }
    fprintf(stderr, "shm-check: no tid in %s\n", file);
    exit(1);
}

static void
write_tid(const char *file, colls_tid_t tid)
{
    char tmp[4096];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.tmp", file);
    f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%x\n", (unsigned)tid) < 0 || fclose(f) != 0 ||
        rename(tmp, file) != 0) {
        perror(file);
        exit(1);
    }
}

static int
run_channel(void)
{
    colls_t **c = calloc((size_t)opt.count, sizeof(*c));
    long i, n = opt.count;
    int rc;

    if (c == NULL)
        return 1;
    for (i = 0; i < n; i++) {
        c[i] = attach();
        if (opt.expect != NULL && strcmp(channel_of(c[i]), opt.expect) != 0) {
            fprintf(stderr, "shm-check: task %ld is on %s, not %s\n", i,
                    channel_of(c[i]), opt.expect);
            return 1;
        }
    }
    for (i = 0; i < n; i++) {
        int32_t v = (int32_t)i;
        rc = colls_send(c[i], colls_mytid(c[(i + 1) % n]), 7, &v, sizeof(v));
        if (rc < 0)
            die("send", rc);
    }
    for (i = 0; i < n; i++) {
        int32_t v = -1;
        colls_status_t st;
        long prev = (i + n - 1) % n;

        rc = colls_recv(c[i], colls_mytid(c[prev]), 7, &v, sizeof(v), &st);
        if (rc < 0)
            die("recv", rc);
        if (v != prev) {
            fprintf(stderr, "shm-check: task %ld got %d, not %ld\n", i, v,
                    prev);
            return 1;
        }
    }
    printf("channel: %ld %s\n", n, channel_of(c[0]));
    for (i = 0; i < n; i++)
        colls_detach(c[i]);
    free(c);
    return 0;
}

static int
run_lazy(void)
{
    colls_t *c = attach();
    uint8_t *buf = malloc((size_t)opt.size + 1);
    long seq, i;

    if (buf == NULL)
        return 1;
    write_tid(opt.tidfile, colls_mytid(c));
    usleep((useconds_t)opt.sleep_ms * 1000);
    for (seq = 0; seq < opt.count; seq++) {
        colls_status_t st;
        int rc =
            colls_recv(c, COLLS_ANY, COLLS_ANY, buf, (size_t)opt.size + 1, &st);
        if (rc < 0)
            die("recv", rc);
        if (st.tag != (int)(seq % 30000) || (long)st.length != opt.size) {
            fprintf(stderr, "shm-check lazy: message %ld: tag %d len %zu\n",
                    seq, st.tag, st.length);
            return 1;
        }
        for (i = 0; i < opt.size; i++)
            if (buf[i] != gen(seq, i)) {
                fprintf(stderr, "shm-check lazy: message %ld byte %ld\n", seq,
                        i);
                return 1;
            }
    }
    printf("lazy: got %ld on %s\n", opt.count, channel_of(c));
    colls_detach(c);
    free(buf);
    return 0;
}

static int
run_send(void)
{
    colls_t *c = attach();
    colls_tid_t dst = read_tid(opt.peer);
    uint8_t *buf = malloc((size_t)opt.size + 1);
    long seq, i;

    if (buf == NULL)
        return 1;
    for (seq = 0; seq < opt.count; seq++) {
        int rc;
        for (i = 0; i < opt.size; i++)
            buf[i] = gen(seq, i);
        rc = colls_send(c, dst, (int)(seq % 30000), buf, (size_t)opt.size);
        if (rc < 0)
            die("send", rc);
    }
    printf("send: sent %ld, ring-full waits %" PRIu64 "\n", opt.count,
           shm_of(c) != NULL ? shm_of(c)->full_waits : 0);
    colls_detach(c);
    free(buf);
    return 0;
}

static int
run_scribble(void)
{
    colls_t *c = attach();
    struct colls__shm *s = shm_of(c);
    struct shm_hdr *h;
    int32_t v = 1;
    colls_status_t st;
    int rc;

    if (s == NULL || strcmp(channel_of(c), "shm") != 0) {
        fprintf(stderr, "shm-check scribble: not on shm\n");
        return 1;
    }
    h = s->map;
    if (strcmp(opt.what, "req-head") == 0) {
        /* a head far beyond the ring: the daemon must refuse it */
        atomic_store(&h->req.head, (uint64_t)1 << 40);
        colls__shm_ring(s);
    } else if (strcmp(opt.what, "comp-tail") == 0) {
        /* a tail ahead of what the daemon wrote */
        atomic_store(&h->comp.tail, (uint64_t)1 << 40);
    } else {
        fprintf(stderr, "shm-check scribble: --what req-head|comp-tail\n");
        return 2;
    }
    /* req-head: the daemon reads the ring when rung, and nothing must be
       written after the scribble (a write would set head again); comp-tail:
       the daemon finds out when it writes the echo */
    rc = strcmp(opt.what, "comp-tail") == 0
             ? colls_send(c, colls_mytid(c), 5, &v, sizeof(v))
             : 0;
    if (rc >= 0)
        rc = colls_recv(c, colls_mytid(c), 5, &v, sizeof(v), &st);
    printf("scribble: %s: %s\n", colls_err_name(rc), colls_errmsg(c));
    colls_detach(c);
    return rc < 0 ? 0 : 1;
}

/* A memfd of len bytes (sealed against shrinking and growing if seal). */
static int
offer_memfd(size_t len, int seal)
{
    int fd = memfd_create("shm-check", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    if (fd < 0 || ftruncate(fd, (off_t)len) != 0 ||
        (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0)) {
        perror("memfd");
        exit(1);
    }
    return fd;
}

static int
run_offer(void)
{
    int unsealed = strcmp(opt.what, "unsealed") == 0;
    int size = strcmp(opt.what, "size") == 0;
    int fds[3], p1[2], p2[2], s, n;
    union colls__shm_cmsg cbuf;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    AttachReq ar = ATTACH_REQ__INIT;
    struct frame_info fi;
    struct msghdr m = {0};
    struct shm_hdr *h;
    struct iovec iov;
    struct buf b;
    Envelope e, *rep = NULL;
    uint8_t in[4096];
    size_t got = 0;
    void *map;

    if (!unsealed && !size && strcmp(opt.what, "pipes") != 0) {
        fprintf(stderr, "shm-check offer: --what unsealed|size|pipes\n");
        return 2;
    }
    fds[0] = offer_memfd(size ? SHM_MAP_LEN / 2 : SHM_MAP_LEN, !unsealed);
    map = mmap(NULL, size ? SHM_MAP_LEN / 2 : SHM_MAP_LEN,
               PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
    if (map == MAP_FAILED)
        return 1;
    shm_layout_init(map); /* fits in half as well */
    h = map;
    if (strcmp(opt.what, "pipes") == 0) {
        if (pipe(p1) != 0 || pipe(p2) != 0)
            return 1;
        fds[1] = p1[1];
        fds[2] = p2[1];
    } else {
        fds[1] = eventfd(0, EFD_CLOEXEC);
        fds[2] = eventfd(0, EFD_CLOEXEC);
    }
    s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", opt.socket);
    if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        perror(opt.socket);
        return 1;
    }
    envelope_init(&e);
    e.kind = KIND__ATTACH_REQ;
    ar.version = COLLS_PROTO_VERSION;
    ar.pid = (int32_t)getpid();
    ar.name = "shm-offer";
    e.body_case = ENVELOPE__BODY_ATTACH_REQ;
    e.attach_req = &ar;
    buf_init(&b);
    if (envelope_frame_head(&b, &e, 0) != 0)
        return 1;
    iov.iov_base = b.data;
    iov.iov_len = b.len;
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    colls__shm_rights(&m, &cbuf, fds);
    if (sendmsg(s, &m, 0) != (ssize_t)b.len) {
        perror("sendmsg");
        return 1;
    }
    while (frame_peek(in, got, NULL, &fi) != 0 || got < fi.total_len) {
        n = (int)read(s, in + got, sizeof(in) - got);
        if (n <= 0) {
            fprintf(stderr, "shm-check offer: the daemon closed\n");
            return 1;
        }
        got += (size_t)n;
    }
    if (envelope_unpack(in + FRAME_HDR_LEN, fi.env_len, &rep) != 0 ||
        rep->kind != KIND__ATTACH_REP || rep->status != 0) {
        fprintf(stderr, "shm-check offer: no ATTACH_REP\n");
        return 1;
    }
    printf("offer: attached, accepted %u\n",
           atomic_load(&h->accepted) == SHM_ACCEPTED ? 1u : 0u);
    envelope_free(rep);
    buf_free(&b);
    close(s);
    return 0;
}

static int
run_coll(void)
{
    colls_t *c = attach();
    colls_group_t *g;
    int32_t in, out;
    long i;
    int rc = colls_group_join(c, opt.group, (int)opt.size, &g);

    if (rc < 0)
        die("join", rc);
    in = colls_group_rank(g) + 1;
    for (i = 0; i < opt.iters; i++) {
        rc = colls_allreduce(g, &in, &out, 1, COLLS_INT32, COLLS_SUM);
        if (rc < 0) {
            printf("coll: %s at %ld\n", colls_err_name(rc), i);
            fflush(stdout);
            _exit(3);
        }
        if (out != (int32_t)(opt.size * (opt.size + 1) / 2)) {
            fprintf(stderr, "shm-check coll: sum %d at %ld\n", out, i);
            return 1;
        }
    }
    printf("coll: %ld done on %s\n", opt.iters, channel_of(c));
    colls_group_leave(g);
    colls_detach(c);
    return 0;
}

int
main(int argc, char **argv)
{
    int i;

    for (i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];

        if (strcmp(k, "--socket") == 0)
            opt.socket = v;
        else if (strcmp(k, "--mode") == 0)
            opt.mode = v;
        else if (strcmp(k, "--tidfile") == 0)
            opt.tidfile = v;
        else if (strcmp(k, "--peer") == 0)
            opt.peer = v;
        else if (strcmp(k, "--expect") == 0)
            opt.expect = v;
        else if (strcmp(k, "--what") == 0)
            opt.what = v;
        else if (strcmp(k, "--group") == 0)
            opt.group = v;
        else if (strcmp(k, "--count") == 0)
            opt.count = atol(v);
        else if (strcmp(k, "--size") == 0)
            opt.size = atol(v);
        else if (strcmp(k, "--sleep-ms") == 0)
            opt.sleep_ms = atol(v);
        else if (strcmp(k, "--iters") == 0)
            opt.iters = atol(v);
        else if (strcmp(k, "--timeout-ms") == 0)
            opt.timeout_ms = atoi(v);
        else
            break;
    }
    if (i < argc || opt.mode == NULL || opt.count < 1 || opt.size < 0) {
        fprintf(stderr, "usage: shm-check --socket PATH --mode "
                        "channel|lazy|send|scribble|offer|coll [options]\n"
                        "  (see the comment at the top of shm-check.c)\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(opt.mode, "channel") == 0)
        return run_channel();
    if (strcmp(opt.mode, "lazy") == 0 && opt.tidfile != NULL)
        return run_lazy();
    if (strcmp(opt.mode, "send") == 0 && opt.peer != NULL)
        return run_send();
    if (strcmp(opt.mode, "scribble") == 0 && opt.what != NULL)
        return run_scribble();
    if (strcmp(opt.mode, "offer") == 0 && opt.what != NULL)
        return run_offer();
    if (strcmp(opt.mode, "coll") == 0 && opt.group != NULL && opt.size > 0)
        return run_coll();
    fprintf(stderr, "shm-check: bad mode or missing option\n");
    return 2;
}
