/*
 * fakedaemon.h -- a forked, scripted collsd for the libcolls unit tests.
 *
 * fake_start() makes a fresh directory under /tmp, listens on d.sock in
 * it and forks a child that serves one connection: it reads frames,
 * answers ATTACH_REQ itself (tid f->tid, hid 1, incarnation 77, direct
 * address 127.0.0.1, f->max_message), exits 0 on DETACH or end of stream
 * and hands every other envelope to f->handler.  The child exits non-zero
 * on anything malformed; fake_stop() checks it exited 0.
 */
#ifndef COLLS_TESTS_UNIT_FAKEDAEMON_H
#define COLLS_TESTS_UNIT_FAKEDAEMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "colls.h"
#include "proto/envelope.h"

/* Called in the child for each envelope; pl/plen is its payload. */
typedef void (*fake_handler_fn)(int fd, const Envelope *in, const uint8_t *pl,
                                size_t plen, void *arg);

struct fake {
    /* set by the test before fake_start */
    uint32_t tid;         /* handed out in ATTACH_REP */
    uint32_t max_message; /* ATTACH_REP.max_message (0: unset) */
    uint32_t parent;      /* ATTACH_REP.parent (0: not spawned) */
    fake_handler_fn handler;
    void *arg;
    /* set by fake_start */
    pid_t pid;
    char dir[48];
    char path[96];
};

/* In the child: frames and writes e and its payload (exit 3 on error). */
void fake_send(int fd, const Envelope *e, const void *payload, size_t plen);
/* Creates the socket directory and forks the fake daemon. */
void fake_start(struct fake *f);
/* Waits for the fake daemon, removes its directory, checks it exited 0. */
void fake_stop(struct fake *f);
/* fake_start, then colls_attach to it (asserted); SIGPIPE ignored. */
colls_t *fake_attach(struct fake *f);
/* colls_detach (asserted), then fake_stop. */
void fake_detach(struct fake *f, colls_t *c);

#endif
