/*
 * fakedaemon.c -- the forked, scripted daemon shared by test-p2p.c and
 * test-coll.c (see fakedaemon.h).  Failures in the parent are Check
 * assertions; failures in the child are distinct exit codes (2 accept,
 * 3 write, 4 bad frame header, 5 bad envelope) that fake_stop reports.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "proto/buf.h"
#include "proto/bytes.h"
#include "tests/netutil.h"
#include "tests/unit/fakedaemon.h"

/* Frames and writes e with its payload; the child exits 3 on failure. */
void
fake_send(int fd, const Envelope *e, const void *payload, size_t plen)
{
    struct buf b;

    buf_init(&b);
    if (envelope_frame(&b, e, payload, plen) != 0 ||
        netutil_write_full(fd, b.data, b.len) != 0)
        _exit(3);
    buf_free(&b);
}

/* Answers an ATTACH_REQ as described in fakedaemon.h. */
static void
fake_attach_rep(int fd, const struct fake *f, const Envelope *in)
{
    Envelope e;
    AttachRep ar = ATTACH_REP__INIT;

    envelope_init(&e);
    e.req_id = in->req_id;
    e.kind = KIND__ATTACH_REP;
    ar.tid = f->tid;
    ar.hid = 1;
    ar.incarnation = 77;
    ar.max_message = f->max_message;
    ar.parent = f->parent;
    ar.direct_addr = "127.0.0.1";
    e.body_case = ENVELOPE__BODY_ATTACH_REP;
    e.attach_rep = &ar;
    fake_send(fd, &e, NULL, 0);
}

/* The child: serves one connection on listener ls, then exits. */
static void
fake_serve(const struct fake *f, int ls)
{
    int fd = accept(ls, NULL, NULL);

    if (fd < 0)
        _exit(2);
    for (;;) {
        uint8_t hdr[8];
        uint32_t flen, elen;
        uint8_t *rest;
        Envelope *in;

        if (netutil_read_full(fd, hdr, 8) != 0)
            _exit(0);
        flen = get_u32(hdr);
        elen = get_u32(hdr + 4);
        if (flen < 4 || elen > flen - 4 || flen > (64u << 20))
            _exit(4);
        rest = malloc(flen - 4);
        if (rest == NULL || netutil_read_full(fd, rest, flen - 4) != 0 ||
            envelope_unpack(rest, elen, &in) != 0)
            _exit(5);
        if (in->kind == KIND__ATTACH_REQ)
            fake_attach_rep(fd, f, in);
        else if (in->kind == KIND__DETACH)
            _exit(0);
        else
            f->handler(fd, in, rest + elen, flen - 4 - elen, f->arg);
        envelope_free(in);
        free(rest);
    }
}

/* Creates the socket directory and forks the fake daemon. */
void
fake_start(struct fake *f)
{
    struct sockaddr_un sa;
    int ls;

    snprintf(f->dir, sizeof(f->dir), "/tmp/colls-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(f->dir));
    snprintf(f->path, sizeof(f->path), "%s/d.sock", f->dir);
    ls = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(ls, 0);
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
    ck_assert_int_eq(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ck_assert_int_eq(listen(ls, 4), 0);
    f->pid = fork();
    ck_assert_int_ge(f->pid, 0);
    if (f->pid == 0) {
        fake_serve(f, ls);
        _exit(0);
    }
    close(ls);
}

/* Waits for the fake daemon to end and checks it ended cleanly. */
void
fake_stop(struct fake *f)
{
    int status;

    ck_assert_int_eq(waitpid(f->pid, &status, 0), f->pid);
    unlink(f->path);
    rmdir(f->dir);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
}

/* Starts the fake daemon and attaches to it. */
colls_t *
fake_attach(struct fake *f)
{
    colls_t *c = NULL;

    signal(SIGPIPE, SIG_IGN);
    fake_start(f);
    ck_assert_int_eq(colls_attach(f->path, &c), 0);
    return c;
}

/* Detaches c and checks the fake daemon ended cleanly. */
void
fake_detach(struct fake *f, colls_t *c)
{
    ck_assert_int_eq(colls_detach(c), 0);
    fake_stop(f);
}
