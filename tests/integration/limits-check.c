/*
 * limits-check.c -- tasks for tests/integration/limits.sh and allow-uid.sh.
 *
 *   limits-check --mode slow --socket S --tidfile F --go G
 *       A task that does not read: attaches with the raw protocol (no
 *       library, so every frame the daemon sends is seen as it is), writes
 *       its tid to F, and reads nothing until the file G exists.  Then it
 *       reads to EOF and checks: the DATA it got are the messages 0, 1, ...
 *       of the flood (sequence numbers and bytes), followed by ERROR with
 *       status COLLS_ENOBUFS, then the connection closes.  Prints "slow: N
 *       messages B bytes, then ERROR COLLS_ENOBUFS".
 *   limits-check --mode flood --socket S --peer F --bytes N --msg-size M
 *       Sends N bytes in messages of M to the tid in F (through the
 *       daemons), with the raw protocol, all of them even after the peer
 *       is gone.  Then reads until the peer's TASK_EXIT and a SEND_FAILED
 *       COLLS_EPEERDEAD for it came.  Prints "flood: N messages B bytes".
 *   limits-check --mode slowlib --socket S --tidfile F --go G --msg-size M
 *       The slow task through libcolls: reads nothing until G exists, then
 *       colls_recv()s flood messages (checked) until a call fails, which
 *       must be with COLLS_ENOBUFS.  Prints "slowlib: N messages B bytes,
 *       then COLLS_<E>".
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
    const char *mode, *socket, *tidfile, *go, *peer;
    uint64_t bytes;
    size_t msg_size;
    int timeout_ms;
} opt = {.timeout_ms = 60000};

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

/* The ERROR e after k messages (bytes): 0 if it is COLLS_ENOBUFS and the
   connection closes right after it. */
static int
slow_error(int fd, const Envelope *e, uint64_t k, uint64_t bytes)
{
    Envelope *next;
    uint8_t *pl;
    size_t plen;
    int r;

    printf("slow: %" PRIu64 " messages %" PRIu64 " bytes, then ERROR "
           "COLLS_%s (%s)\n",
           k, bytes, colls_err_name(e->status),
           e->body_case == ENVELOPE__BODY_ERROR ? e->error->message : "");
    if (e->status != COLLS_ENOBUFS) {
        fprintf(stderr, "FAIL: ERROR %d, not COLLS_ENOBUFS\n", e->status);
        return -1;
    }
    r = read_frame(fd, &next, &pl, &plen);
    if (r == 1) {
        fprintf(stderr, "FAIL: kind %d after the ERROR\n", (int)next->kind);
        envelope_free(next);
        free(pl);
    }
    return r == 0 ? 0 : -1;
}

static int
run_slow(void)
{
    uint64_t k = 0, bytes = 0;
    uint32_t tid;
    double end = now_ms() + opt.timeout_ms;
    int fd = raw_attach(opt.socket, "limits-slow", &tid), r, status = 1;

    if (fd < 0 || write_tid(opt.tidfile, tid) != 0)
        return 2;
    while (access(opt.go, F_OK) != 0) {
        if (now_ms() > end) {
            fprintf(stderr, "FAIL: %s never appeared\n", opt.go);
            return 2;
        }
        usleep(20000);
    }
    for (;;) {
        Envelope *e;
        uint8_t *pl;
        size_t plen;

        r = read_frame(fd, &e, &pl, &plen);
        if (r <= 0) {
            if (r == 0)
                fprintf(stderr,
                        "FAIL: closed after %" PRIu64
                        " messages without ERROR\n",
                        k);
            break;
        }
        if (e->kind == KIND__DATA && e->tag == TAG_FLOOD) {
            if (check(pl, plen, k) != 0)
                r = -1;
            k++;
            bytes += plen;
        } else if (e->kind == KIND__ERROR) {
            status = slow_error(fd, e, k, bytes) == 0 ? 0 : 1;
            r = -1; /* done either way */
        } /* other kinds (TASK_EXIT of others) are not ours to check */
        envelope_free(e);
        free(pl);
        if (r < 0)
            break;
    }
    close(fd);
    return status;
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
 * and at least one SEND_FAILED COLLS_EPEERDEAD for it (its daemon sends
 * TASK_EXIT before answering the messages that came after the overflow,
 * on the same ordered stream).  0 when both came.
 */
static int
flood_collect(int fd, uint32_t peer)
{
    int exit_seen = 0, failed = 0, bad = 0;

    while (!exit_seen || failed == 0) {
        Envelope *e;
        uint8_t *pl;
        size_t plen;

        if (read_frame(fd, &e, &pl, &plen) != 1)
            break;
        if (e->kind == KIND__TASK_EXIT && e->src == peer)
            exit_seen = 1;
        else if (e->kind == KIND__SEND_FAILED && e->dst == peer) {
            failed++;
            if (e->status != COLLS_EPEERDEAD) {
                fprintf(stderr, "FAIL: SEND_FAILED %d, not EPEERDEAD\n",
                        e->status);
                bad = 1;
            }
        }
        envelope_free(e);
        free(pl);
    }
    printf("flood: TASK_EXIT of t%x %s, SEND_FAILED for it %s\n", peer,
           exit_seen ? "seen" : "MISSING", failed ? "seen" : "MISSING");
    return exit_seen && failed && !bad ? 0 : -1;
}

/*
 * Floods the peer with the raw protocol, so that its daemon gets all of
 * it: the library would stop sending once told the peer is gone.
 */
static int
run_flood(void)
{
    uint64_t k, sent = 0;
    uint32_t peer, self;
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
        Envelope e;

        envelope_init(&e);
        e.kind = KIND__DATA;
        e.dst = peer;
        e.tag = TAG_FLOOD;
        e.dtype = COLLS_BYTE;
        e.count = opt.msg_size;
        fill(b, opt.msg_size, k);
        buf_init(&f);
        rc = envelope_frame(&f, &e, b, opt.msg_size);
        if (rc == 0)
            rc = write_all(fd, buf_head(&f), buf_avail(&f));
        buf_free(&f);
        if (rc == 0)
            sent += opt.msg_size;
    }
    printf("flood: %" PRIu64 " messages %" PRIu64 " bytes\n", k, sent);
    if (rc == 0)
        rc = flood_collect(fd, peer);
    close(fd);
    free(b);
    return rc == 0 ? 0 : 1;
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
 * nothing until the go file exists, then receives flood messages in
 * order until a call fails; that failure must be COLLS_ENOBUFS (the
 * reason the daemon gave in its ERROR before closing), not a generic
 * "connection closed".
 */
static int
run_slowlib(void)
{
    colls_t *c = NULL;
    uint8_t *b = malloc(opt.msg_size ? opt.msg_size : 1);
    uint64_t k = 0, bytes = 0;
    double end = now_ms() + opt.timeout_ms;
    colls_status_t st;
    int rc;

    if (b == NULL || colls_attach(opt.socket, &c) < 0 ||
        write_tid(opt.tidfile, colls_mytid(c)) != 0)
        return 2;
    colls_set_timeout(c, opt.timeout_ms);
    while (access(opt.go, F_OK) != 0) {
        if (now_ms() > end) {
            fprintf(stderr, "FAIL: %s never appeared\n", opt.go);
            return 2;
        }
        usleep(20000);
    }
    while ((rc = colls_recv(c, COLLS_ANY, TAG_FLOOD, b, opt.msg_size, &st)) ==
           0) {
        if (check(b, st.length, k) != 0)
            return 1;
        k++;
        bytes += st.length;
    }
    printf("slowlib: %" PRIu64 " messages %" PRIu64 " bytes, then COLLS_%s\n",
           k, bytes, colls_err_name(rc));
    colls_detach(c);
    free(b);
    if (rc != COLLS_ENOBUFS) {
        fprintf(stderr, "FAIL: colls_recv returned COLLS_%s, not ENOBUFS\n",
                colls_err_name(rc));
        return 1;
    }
    return 0;
}

static void
usage(void)
{
    fprintf(stderr,
            "usage: limits-check [--timeout-ms MS]\n"
            "  --mode slow --socket S --tidfile F --go G\n"
            "  --mode flood --socket S --peer F --bytes N --msg-size M\n"
            "  --mode echo --socket S\n"
            "  --mode slowlib --socket S --tidfile F --go G --msg-size M\n");
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
        else if (strcmp(a, "--timeout-ms") == 0)
            opt.timeout_ms = atoi(v);
        else
            usage();
    }
    if (argc % 2 == 0 || opt.mode == NULL || opt.socket == NULL)
        usage();
    if (strcmp(opt.mode, "slow") == 0 && opt.tidfile && opt.go)
        return run_slow();
    if (strcmp(opt.mode, "flood") == 0 && opt.peer)
        return run_flood();
    if (strcmp(opt.mode, "echo") == 0)
        return run_echo();
    if (strcmp(opt.mode, "slowlib") == 0 && opt.tidfile && opt.go &&
        opt.msg_size > 0)
        return run_slowlib();
    usage();
    return 2;
}
