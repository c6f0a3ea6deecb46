/*
 * limits-check.c -- tasks for tests/integration/limits.sh and allow-uid.sh.
 *
 *   limits-check --mode slow --socket S --tidfile F --go G --bytes N
 *       A task that does not read: attaches with the raw protocol (no
 *       library, so every frame the daemon sends is seen as it is), writes
 *       its tid to F, and reads nothing until the file G exists.  Then it
 *       reads N bytes of flood messages and checks that they are the
 *       messages 0, 1, ... (sequence numbers and bytes), with no ERROR
 *       among them.  Prints "slow: K messages B bytes in order".
 *   limits-check --mode flood --socket S --peer F --bytes N --msg-size M
 *       Sends N bytes in messages of M to the tid in F (through the
 *       daemons), with the raw protocol and blocking writes (so it blocks
 *       when its daemon stops reading it).  Then waits for the peer's
 *       TASK_EXIT; a SEND_FAILED or ERROR on the way fails.  Prints
 *       "flood: K messages B bytes in T s".
 *   limits-check --mode slowlib --socket S --tidfile F --go G --bytes N
 *                --msg-size M
 *       The slow task through libcolls: reads nothing until G exists, then
 *       colls_recv()s N bytes of flood messages, checked.  Prints
 *       "slowlib: K messages B bytes in order".
 *   limits-check --mode hog --what stats|self|echo --socket S
 *                --seconds T [--msg-size M]
 *       A task that asks and never reads, raw protocol, non-blocking: for
 *       T seconds it writes STATS_REQ, DATA of M bytes to itself, or DATA
 *       of M bytes to its daemon's tid (echo), as fast as the daemon takes
 *       them, reading nothing.  Then it reads: every request it wrote must
 *       be answered, DATA in order and intact.  Prints "hog WHAT: K
 *       written in T s (L in the last second), K answered".
 *   limits-check --mode deaf --socket S --go G
 *       A task that never reads (raw protocol) while tasks come and go:
 *       once G exists it reads what the daemon queued, until nothing comes
 *       for a second, and prints "deaf: N task-exit notices".
 *   limits-check --mode churn --socket S --count N
 *       Attaches and detaches N tasks one after the other (libcolls):
 *       N task exits for every other task of the machine.
 *   limits-check --mode echo --socket S
 *       Attaches with the library and bounces messages of a few sizes off
 *       its daemon (the daemon echoes what is sent to its own tid), bytes
 *       compared.  If the attach fails, prints "attach: <COLLS_E name>" and
 *       exits 3.
 *
 * Message k of the flood is 8 bytes of big-endian k, then bytes that are
 * a function of (k, offset).  Blocking calls have --timeout-ms.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "colls.h"
#include "proto/buf.h"
#include "proto/envelope.h"
#include "proto/frame.h"

#define TAG_FLOOD 77
#define TAG_ECHO  78

static struct {
    const char *mode, *socket, *tidfile, *go, *peer, *what;
    uint64_t bytes;
    size_t msg_size;
    double seconds;
    int timeout_ms, count;
} opt = {.timeout_ms = 60000, .msg_size = 1024, .seconds = 3};

static double
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Byte i of flood message k (i >= 8). */
static uint8_t
pattern(uint64_t k, size_t i)
{
    return (uint8_t)(k * 131 + i * 7 + (i >> 9));
}

static void
fill(uint8_t *b, size_t n, uint64_t k)
{
    for (size_t i = 0; i < 8 && i < n; i++)
        b[i] = (uint8_t)(k >> (56 - 8 * i));
    for (size_t i = 8; i < n; i++)
        b[i] = pattern(k, i);
}

/* 0 if b (n bytes) is flood message k as fill() makes it. */
static int
check(const uint8_t *b, size_t n, uint64_t k)
{
    uint64_t got = 0;

    if (n < 8)
        return -1;
    for (size_t i = 0; i < 8; i++)
        got = got << 8 | b[i];
    if (got != k) {
        fprintf(stderr,
                "FAIL: message %" PRIu64 " arrived as number %" PRIu64 "\n", k,
                got);
        return -1;
    }
    for (size_t i = 8; i < n; i++)
        if (b[i] != pattern(k, i)) {
            fprintf(stderr, "FAIL: message %" PRIu64 ": byte %zu differs\n", k,
                    i);
            return -1;
        }
    return 0;
}

/* Reads exactly n bytes (within the timeout).  1, 0 on EOF at once, -1. */
static int
read_full(int fd, uint8_t *p, size_t n)
{
    size_t got = 0;

    while (got < n) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        ssize_t r;

        if (poll(&pf, 1, opt.timeout_ms) != 1) {
            fprintf(stderr, "FAIL: nothing from the daemon in %d ms\n",
                    opt.timeout_ms);
            return -1;
        }
        r = read(fd, p + got, n - got);
        if (r == 0 && got == 0)
            return 0;
        if (r <= 0) {
            fprintf(stderr, "FAIL: read: %s\n",
                    r == 0 ? "EOF in a frame" : strerror(errno));
            return -1;
        }
        got += (size_t)r;
    }
    return 1;
}

/*
 * Reads one frame: *e (free with envelope_free) and its payload in *pl
 * (malloc'ed, *plen bytes).  1, 0 on EOF between frames, -1 on error.
 */
static int
read_frame(int fd, Envelope **e, uint8_t **pl, size_t *plen)
{
    uint8_t h[FRAME_HDR_LEN], *body;
    struct frame_info fi;
    int r = read_full(fd, h, sizeof(h));

    if (r <= 0)
        return r;
    if (frame_peek(h, sizeof(h), NULL, &fi) != 0) {
        fprintf(stderr, "FAIL: bad frame header from the daemon\n");
        return -1;
    }
    body = malloc(fi.env_len + fi.payload_len + 1);
    if (body == NULL || read_full(fd, body, fi.env_len + fi.payload_len) != 1 ||
        envelope_unpack(body, fi.env_len, e) != 0) {
        free(body);
        return -1;
    }
    memmove(body, body + fi.env_len, fi.payload_len);
    *pl = body;
    *plen = fi.payload_len;
    return 1;
}

/* Connects and attaches with ATTACH_REQ; the fd, *tid set; -1 on error. */
static int
raw_attach(const char *path, const char *name, uint32_t *tid)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    AttachReq a = ATTACH_REQ__INIT;
    Envelope q, *r = NULL;
    struct buf b;
    uint8_t *pl = NULL;
    size_t plen;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0 || strlen(path) >= sizeof(sa.sun_path))
        return -1;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        fprintf(stderr, "FAIL: %s: %s\n", path, strerror(errno));
        close(fd);
        return -1;
    }
    envelope_init(&q);
    q.kind = KIND__ATTACH_REQ;
    a.version = COLLS_PROTO_VERSION;
    a.pid = (int)getpid();
    a.name = (char *)name;
    q.body_case = ENVELOPE__BODY_ATTACH_REQ;
    q.attach_req = &a;
    buf_init(&b);
    if (envelope_frame(&b, &q, NULL, 0) != 0 ||
        write(fd, buf_head(&b), buf_avail(&b)) != (ssize_t)buf_avail(&b) ||
        read_frame(fd, &r, &pl, &plen) != 1 || r->kind != KIND__ATTACH_REP ||
        r->status != 0 || r->body_case != ENVELOPE__BODY_ATTACH_REP) {
        fprintf(stderr, "FAIL: attach to %s\n", path);
        close(fd);
        fd = -1;
    } else {
        *tid = r->attach_rep->tid;
    }
    if (r != NULL)
        envelope_free(r);
    free(pl);
    buf_free(&b);
    return fd;
}

static int
write_tid(const char *path, uint32_t tid)
{
    char tmp[4096];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "t%x\n", tid) < 0 || fclose(f) != 0)
        return -1;
    return rename(tmp, path);
}

/* Waits for path to hold a tid (written by write_tid). */
static int
read_tid(const char *path, uint32_t *tid)
{
    double end = now_ms() + opt.timeout_ms;

    while (now_ms() < end) {
        FILE *f = fopen(path, "r");

        if (f != NULL) {
            int n = fscanf(f, "t%x", tid);

            fclose(f);
            if (n == 1)
                return 0;
        }
        usleep(20000);
    }
    fprintf(stderr, "FAIL: no tid in %s\n", path);
    return -1;
}

/* Waits (within the timeout) until the file opt.go exists; 0 or -1. */
static int
wait_go(void)
{
    double end = now_ms() + opt.timeout_ms;

    while (access(opt.go, F_OK) != 0) {
        if (now_ms() > end) {
            fprintf(stderr, "FAIL: %s never appeared\n", opt.go);
            return -1;
        }
        usleep(20000);
    }
    return 0;
}

static int
run_slow(void)
{
    uint64_t k = 0, bytes = 0;
    uint32_t tid;
    int fd = raw_attach(opt.socket, "limits-slow", &tid), r = 1;

    if (fd < 0 || write_tid(opt.tidfile, tid) != 0 || wait_go() != 0)
        return 2;
    while (bytes < opt.bytes) {
        Envelope *e;
        uint8_t *pl;
        size_t plen;

        r = read_frame(fd, &e, &pl, &plen);
        if (r <= 0) {
            if (r == 0)
                fprintf(stderr, "FAIL: closed after %" PRIu64 " messages\n", k);
            break;
        }
        if (e->kind == KIND__DATA && e->tag == TAG_FLOOD) {
            if (check(pl, plen, k) != 0)
                r = -1;
            k++;
            bytes += plen;
        } else if (e->kind == KIND__ERROR) {
            fprintf(stderr, "FAIL: ERROR COLLS_%s after %" PRIu64 " messages\n",
                    colls_err_name(e->status), k);
            r = -1;
        } /* other kinds (TASK_EXIT of others) are not ours to check */
        envelope_free(e);
        free(pl);
        if (r < 0)
            break;
    }
    close(fd);
    if (bytes < opt.bytes)
        return 1;
    printf("slow: %" PRIu64 " messages %" PRIu64 " bytes in order\n", k, bytes);
    return 0;
}

/* Writes all of p (blocking); 0 or -1. */
static int
write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;

    while (n > 0) {
        ssize_t w = send(fd, b, n, MSG_NOSIGNAL);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            fprintf(stderr, "FAIL: write to the daemon: %s\n", strerror(errno));
            return -1;
        }
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/*
 * After the flood: reads what the daemon sent until the peer's TASK_EXIT
 * (it exits once it read everything).  A SEND_FAILED or an ERROR before
 * that means a message was lost.  0 when the exit came cleanly.
 */
static int
flood_collect(int fd, uint32_t peer)
{
    int exit_seen = 0, bad = 0;

    while (!exit_seen && !bad) {
        Envelope *e;
        uint8_t *pl;
        size_t plen;

        if (read_frame(fd, &e, &pl, &plen) != 1)
            break;
        if (e->kind == KIND__TASK_EXIT && e->src == peer) {
            exit_seen = 1;
        } else if (e->kind == KIND__SEND_FAILED || e->kind == KIND__ERROR) {
            fprintf(stderr, "FAIL: %s COLLS_%s for t%x\n",
                    e->kind == KIND__ERROR ? "ERROR" : "SEND_FAILED",
                    colls_err_name(e->status), e->dst);
            bad = 1;
        }
        envelope_free(e);
        free(pl);
    }
    printf("flood: TASK_EXIT of t%x %s\n", peer,
           exit_seen ? "seen" : "MISSING");
    return exit_seen && !bad ? 0 : -1;
}

/* The frame of flood message k (msg_size bytes in b) to dst, in f. */
static int
flood_frame(struct buf *f, uint32_t dst, int tag, uint8_t *b, uint64_t k)
{
    Envelope e;

    envelope_init(&e);
    e.kind = KIND__DATA;
    e.dst = dst;
    e.tag = tag;
    e.dtype = COLLS_BYTE;
    e.count = opt.msg_size;
    fill(b, opt.msg_size, k);
    buf_init(f);
    return envelope_frame(f, &e, b, opt.msg_size);
}

/*
 * Floods the peer with the raw protocol and blocking writes: when the
 * peer does not read, the daemons stop reading us and the writes block.
 */
static int
run_flood(void)
{
    uint64_t k, sent = 0;
    uint32_t peer, self;
    double t0 = now_ms();
    uint8_t *b;
    int fd, rc = 0;

    if (opt.msg_size < 8 || opt.bytes == 0 || read_tid(opt.peer, &peer) != 0)
        return 2;
    b = malloc(opt.msg_size);
    fd = raw_attach(opt.socket, "limits-flood", &self);
    if (b == NULL || fd < 0)
        return 2;
    for (k = 0; sent < opt.bytes && rc == 0; k++) {
        struct buf f;

        rc = flood_frame(&f, peer, TAG_FLOOD, b, k);
        if (rc == 0)
            rc = write_all(fd, buf_head(&f), buf_avail(&f));
        buf_free(&f);
        if (rc == 0)
            sent += opt.msg_size;
    }
    printf("flood: %" PRIu64 " messages %" PRIu64 " bytes in %.1f s\n", k, sent,
           (now_ms() - t0) / 1e3);
    if (rc == 0)
        rc = flood_collect(fd, peer);
    close(fd);
    free(b);
    return rc == 0 ? 0 : 1;
}

/* ---- hog: asks without reading ------------------------------------------ */

/* The hog's request k in f (b: msg_size bytes of scratch). */
static int
hog_request(struct buf *f, uint32_t self, uint8_t *b, uint64_t k)
{
    Envelope e;

    if (strcmp(opt.what, "stats") == 0) {
        envelope_init(&e);
        e.kind = KIND__STATS_REQ;
        e.req_id = k + 1;
        buf_init(f);
        return envelope_frame(f, &e, NULL, 0);
    }
    return flood_frame(f,
                       strcmp(opt.what, "self") == 0
                           ? self
                           : COLLS_DAEMON_TID(COLLS_TID_HID(self)),
                       TAG_FLOOD, b, k);
}

/*
 * One frame from the daemon to the hog (envelope e, payload pl): the
 * answer number *got, checked.  0, or -1 if it is wrong.
 */
static int
hog_answer(const Envelope *e, const uint8_t *pl, size_t plen, uint64_t *got)
{
    if (e->kind == KIND__ERROR || e->kind == KIND__SEND_FAILED) {
        fprintf(stderr, "FAIL: kind %d COLLS_%s after %" PRIu64 " answers\n",
                (int)e->kind, colls_err_name(e->status), *got);
        return -1;
    }
    if (strcmp(opt.what, "stats") == 0) {
        if (e->kind != KIND__STATS_REP)
            return 0;
        if (e->req_id != *got + 1) {
            fprintf(stderr, "FAIL: STATS_REP %" PRIu64 " came as %" PRIu64 "\n",
                    *got + 1, e->req_id);
            return -1;
        }
    } else {
        if (e->kind != KIND__DATA || e->tag != TAG_FLOOD)
            return 0;
        if (plen != opt.msg_size || check(pl, plen, *got) != 0)
            return -1;
    }
    (*got)++;
    return 0;
}

/* Parses the whole frames in in, answers counted in *got; -1 if wrong. */
static int
hog_parse(struct buf *in, uint64_t *got)
{
    for (;;) {
        const uint8_t *p = buf_head(in);
        struct frame_info fi;
        Envelope *e;
        int rc;

        if (frame_peek(p, buf_avail(in), NULL, &fi) != 0 ||
            buf_avail(in) < fi.total_len)
            return 0;
        if (envelope_unpack(p + FRAME_HDR_LEN, fi.env_len, &e) != 0)
            return -1;
        rc = hog_answer(e, p + FRAME_HDR_LEN + fi.env_len, fi.payload_len, got);
        envelope_free(e);
        buf_consume(in, fi.total_len);
        if (rc != 0)
            return -1;
    }
}

static int
run_hog(void)
{
    uint64_t k = 0, got = 0, at_last_s = 0;
    double t0 = now_ms(), end = t0 + opt.seconds * 1e3, last_s = end - 1e3;
    size_t off = 0;
    uint32_t self;
    uint8_t *b = malloc(opt.msg_size);
    struct buf f, in;
    int fd, reading = 0, rc = 0, fl;

    if (b == NULL || opt.msg_size < 8)
        return 2;
    fd = raw_attach(opt.socket, "limits-hog", &self);
    if (fd < 0 || (fl = fcntl(fd, F_GETFL)) < 0 ||
        fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
        return 2;
    buf_init(&in);
    if (hog_request(&f, self, b, k) != 0)
        return 2;
    /* Write until the time is up, then finish the frame begun, read. */
    while (rc == 0 && (off > 0 || got < k || !reading)) {
        struct pollfd pf = {.fd = fd, .events = 0};
        double now = now_ms();

        if (!reading && now >= end) {
            reading = 1;
            if (off == 0)
                buf_free(&f);
        }
        if (!reading && now >= last_s && at_last_s == 0)
            at_last_s = k + 1;
        if (!reading || off > 0)
            pf.events |= POLLOUT;
        if (reading)
            pf.events |= POLLIN;
        if (poll(&pf, 1, reading ? opt.timeout_ms : 50) < 0 ||
            (reading && pf.revents == 0)) {
            fprintf(stderr,
                    "FAIL: stuck after %" PRIu64 " of %" PRIu64 " answers\n",
                    got, k);
            rc = -1;
            break;
        }
        if (pf.revents & POLLOUT) {
            ssize_t w =
                send(fd, buf_head(&f) + off, buf_avail(&f) - off, MSG_NOSIGNAL);

            if (w > 0 && (off += (size_t)w) == buf_avail(&f)) {
                off = 0;
                k++;
                buf_free(&f);
                if (!reading && hog_request(&f, self, b, k) != 0)
                    rc = -1;
            } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
                rc = -1;
            }
        }
        if (pf.revents & POLLIN) {
            ssize_t r;

            if (buf_reserve(&in, 1 << 16) != 0)
                rc = -1;
            r = read(fd, in.data + in.len, in.cap - in.len);
            if (r <= 0 && !(r < 0 && errno == EAGAIN)) {
                fprintf(stderr, "FAIL: the daemon closed the hog\n");
                rc = -1;
            } else if (r > 0) {
                in.len += (size_t)r;
                rc = hog_parse(&in, &got);
            }
        }
    }
    printf("hog %s: %" PRIu64 " written in %.1f s (%" PRIu64
           " in the last second), %" PRIu64 " answered\n",
           opt.what, k, opt.seconds, at_last_s ? k - (at_last_s - 1) : 0, got);
    close(fd);
    buf_free(&in);
    free(b);
    return rc == 0 && got == k ? 0 : 1;
}

/* ---- deaf and churn: task exits towards a task that does not read --- */

static int
run_deaf(void)
{
    uint64_t exits = 0;
    uint32_t self;
    struct buf in;
    int fd = raw_attach(opt.socket, "limits-deaf", &self);

    if (fd < 0)
        return 2;
    while (access(opt.go, F_OK) != 0)
        usleep(50000);
    buf_init(&in);
    for (;;) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        ssize_t r;

        if (poll(&pf, 1, 1000) <= 0)
            break;
        if (buf_reserve(&in, 1 << 16) != 0)
            return 2;
        r = read(fd, in.data + in.len, in.cap - in.len);
        if (r <= 0) {
            fprintf(stderr, "FAIL: the daemon closed the deaf task\n");
            return 1;
        }
        in.len += (size_t)r;
        for (;;) {
            const uint8_t *p = buf_head(&in);
            struct frame_info fi;
            Envelope *e;

            if (frame_peek(p, buf_avail(&in), NULL, &fi) != 0 ||
                buf_avail(&in) < fi.total_len)
                break;
            if (envelope_unpack(p + FRAME_HDR_LEN, fi.env_len, &e) != 0)
                return 1;
            if (e->kind == KIND__TASK_EXIT && e->src != self)
                exits++;
            envelope_free(e);
            buf_consume(&in, fi.total_len);
        }
    }
    printf("deaf: %" PRIu64 " task-exit notices\n", exits);
    buf_free(&in);
    close(fd);
    return 0;
}

static int
run_churn(void)
{
    int i, rc;

    for (i = 0; i < opt.count; i++) {
        colls_t *c;

        if ((rc = colls_attach(opt.socket, &c)) != 0) {
            fprintf(stderr, "FAIL: attach %d: %s\n", i, colls_err_name(rc));
            return 1;
        }
        colls_detach(c);
    }
    printf("churn: %d tasks attached and detached\n", opt.count);
    return 0;
}

static int
run_echo(void)
{
    static const size_t sizes[] = {1, 1000, 300000};
    colls_t *c;
    colls_status_t st;
    colls_tid_t me;
    uint8_t *b, *back;
    int r = colls_attach(opt.socket, &c), differ = 0;

    if (r < 0) {
        printf("attach: COLLS_%s\n", colls_err_name(r));
        return 3;
    }
    colls_set_timeout(c, opt.timeout_ms);
    me = colls_mytid(c);
    b = malloc(sizes[2]);
    back = malloc(sizes[2]);
    if (b == NULL || back == NULL)
        return 2;
    for (size_t i = 0;
         i < sizeof(sizes) / sizeof(sizes[0]) && r == 0 && !differ; i++) {
        colls_tid_t d = COLLS_DAEMON_TID(COLLS_TID_HID(me));

        fill(b, sizes[i], i);
        r = colls_send(c, d, TAG_ECHO, b, sizes[i]);
        if (r == 0)
            r = colls_recv(c, d, TAG_ECHO, back, sizes[2], &st);
        if (r == 0 &&
            (st.length != sizes[i] || memcmp(back, b, sizes[i]) != 0)) {
            fprintf(stderr, "FAIL: echo of %zu bytes came back different\n",
                    sizes[i]);
            differ = 1;
        }
    }
    if (r != 0)
        fprintf(stderr, "FAIL: echo: %s\n", colls_strerror(r));
    else if (!differ)
        printf("echo: t%x uid %ld: %zu messages back intact\n", me,
               (long)getuid(), sizeof(sizes) / sizeof(sizes[0]));
    colls_detach(c);
    free(b);
    free(back);
    return r == 0 && !differ ? 0 : 1;
}

/*
 * The slow task through the library: attaches with libcolls, reads
 * nothing until the go file exists, then receives opt.bytes of flood
 * messages, in order and intact.
 */
static int
run_slowlib(void)
{
    colls_t *c = NULL;
    uint8_t *b = malloc(opt.msg_size ? opt.msg_size : 1);
    uint64_t k = 0, bytes = 0;
    colls_status_t st;
    int rc = 0;

    if (b == NULL || colls_attach(opt.socket, &c) < 0 ||
        write_tid(opt.tidfile, colls_mytid(c)) != 0)
        return 2;
    colls_set_timeout(c, opt.timeout_ms);
    if (wait_go() != 0)
        return 2;
    while (bytes < opt.bytes && (rc = colls_recv(c, COLLS_ANY, TAG_FLOOD, b,
                                                 opt.msg_size, &st)) == 0) {
        if (check(b, st.length, k) != 0)
            return 1;
        k++;
        bytes += st.length;
    }
    colls_detach(c);
    free(b);
    if (rc != 0) {
        fprintf(stderr, "FAIL: colls_recv after %" PRIu64 " messages: %s\n", k,
                colls_strerror(rc));
        return 1;
    }
    printf("slowlib: %" PRIu64 " messages %" PRIu64 " bytes in order\n", k,
           bytes);
    return 0;
}

static void
usage(void)
{
    fprintf(stderr,
            "usage: limits-check [--timeout-ms MS]\n"
            "  --mode slow --socket S --tidfile F --go G --bytes N\n"
            "  --mode flood --socket S --peer F --bytes N --msg-size M\n"
            "  --mode echo --socket S\n"
            "  --mode slowlib --socket S --tidfile F --go G --bytes N "
            "--msg-size M\n"
            "  --mode hog --what stats|self|echo --socket S --seconds T "
            "[--msg-size M]\n"
            "  --mode deaf --socket S --go G\n"
            "  --mode churn --socket S --count N\n");
    exit(2);
}

int
main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];

        if (strcmp(a, "--mode") == 0)
            opt.mode = v;
        else if (strcmp(a, "--socket") == 0)
            opt.socket = v;
        else if (strcmp(a, "--tidfile") == 0)
            opt.tidfile = v;
        else if (strcmp(a, "--go") == 0)
            opt.go = v;
        else if (strcmp(a, "--peer") == 0)
            opt.peer = v;
        else if (strcmp(a, "--bytes") == 0)
            opt.bytes = strtoull(v, NULL, 0);
        else if (strcmp(a, "--msg-size") == 0)
            opt.msg_size = (size_t)strtoull(v, NULL, 0);
        else if (strcmp(a, "--what") == 0)
            opt.what = v;
        else if (strcmp(a, "--seconds") == 0)
            opt.seconds = atof(v);
        else if (strcmp(a, "--timeout-ms") == 0)
            opt.timeout_ms = atoi(v);
        else if (strcmp(a, "--count") == 0)
            opt.count = atoi(v);
        else
            usage();
    }
    if (argc % 2 == 0 || opt.mode == NULL || opt.socket == NULL)
        usage();
    if (strcmp(opt.mode, "slow") == 0 && opt.tidfile && opt.go && opt.bytes)
        return run_slow();
    if (strcmp(opt.mode, "hog") == 0 && opt.what != NULL &&
        (strcmp(opt.what, "stats") == 0 || strcmp(opt.what, "self") == 0 ||
         strcmp(opt.what, "echo") == 0))
        return run_hog();
    if (strcmp(opt.mode, "flood") == 0 && opt.peer)
        return run_flood();
    if (strcmp(opt.mode, "echo") == 0)
        return run_echo();
    if (strcmp(opt.mode, "deaf") == 0 && opt.go)
        return run_deaf();
    if (strcmp(opt.mode, "churn") == 0 && opt.count > 0)
        return run_churn();
    if (strcmp(opt.mode, "slowlib") == 0 && opt.tidfile && opt.go &&
        opt.bytes > 0 && opt.msg_size > 0)
        return run_slowlib();
    usage();
    return 2;
}
