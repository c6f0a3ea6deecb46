/*
 * fuzz-rel.c -- arbitrary datagrams into the reliable transport.
 *
 * A struct rel (hid 1, small MTU, window and max_message so allocations
 * stay small) knows one peer, hid 2 at 10.0.0.2:7000, incarnation not yet
 * known, and has three messages queued to it, so ACKs in the input drive
 * the sender too.  The input is a list of records
 *
 *     u8 step | u16 len (big-endian) | len bytes
 *
 * each fed to rel_input as one datagram from the peer's address (from an
 * unknown address when step bit 7 is set) at a clock advanced by
 * (step & 0x3f) * 1 ms; bit 6 runs rel_timer afterwards.  Delivered
 * messages must respect max_message, sent datagrams the MTU; nothing may
 * crash or leak.
 */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/rel.h"
#include "proto/bytes.h"
#include "proto/dgram.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_REL_MTU    256
#define FUZZ_REL_MAXMSG 65536

static int
fuzz_rel_send(void *ctx, const struct sockaddr *addr, socklen_t alen,
              const struct iovec *iov, int iovcnt)
{
    size_t len = 0;
    int i;

    for (i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (len > FUZZ_REL_MTU || len < DGRAM_HDR_LEN)
        abort();
    (void)ctx;
    (void)addr;
    (void)alen;
    return 0;
}

static void
fuzz_rel_deliver(void *ctx, int hid, uint8_t *msg, size_t len)
{
    if (hid != 2 || len > FUZZ_REL_MAXMSG)
        abort();
    if (len > 0)
        msg[len - 1] ^= 1; /* the whole buffer is ours */
    free(msg);
    (void)ctx;
}

static void
fuzz_rel_reset(void *ctx, int hid, uint32_t new_inc)
{
    if (hid != 2)
        abort();
    (void)ctx;
    (void)new_inc;
}

int
fuzz_rel(const uint8_t *data, size_t size)
{
    static const struct rel_ops ops = {fuzz_rel_send, fuzz_rel_deliver,
                                       fuzz_rel_reset};
    static uint8_t payload[5000];
    struct rel_config cfg;
    struct sockaddr_in peer, stranger;
    struct rel *r;
    struct iovec iov;
    uint64_t now = 1000000;
    size_t off = 0;

    rel_config_default(&cfg);
    cfg.mtu = FUZZ_REL_MTU;
    cfg.window = 64;
    cfg.max_message = FUZZ_REL_MAXMSG;
    cfg.secret = 0x5eed; /* reproducible challenge nonces */
    r = rel_new(&cfg, &ops, NULL, 1, 7);
    if (r == NULL)
        abort();
    memset(&peer, 0, sizeof peer);
    peer.sin_family = AF_INET;
    peer.sin_port = htons(7000);
    peer.sin_addr.s_addr = htonl(0x0a000002);
    stranger = peer;
    stranger.sin_port = htons(7001);
    if (rel_peer_set(r, 2, (struct sockaddr *)&peer, sizeof peer, 0) != 0)
        abort();
    iov.iov_base = payload;
    iov.iov_len = 0;
    rel_sendv(r, 2, &iov, 1, now);
    iov.iov_len = 100;
    rel_sendv(r, 2, &iov, 1, now);
    iov.iov_len = sizeof payload;
    rel_sendv(r, 2, &iov, 1, now);

    while (off + 3 <= size) {
        uint8_t step = data[off];
        size_t len = get_u16(data + off + 1);

        off += 3;
        if (len > size - off)
            len = size - off;
        now += (uint64_t)(step & 0x3f) * 1000;
        if (step & 0x80)
            rel_input(r, (struct sockaddr *)&stranger, sizeof stranger,
                      data + off, len, now);
        else
            rel_input(r, (struct sockaddr *)&peer, sizeof peer, data + off, len,
                      now);
        if (step & 0x40)
            rel_timer(r, now);
        off += len;
    }
    if (rel_next_timeout(r) != UINT64_MAX)
        rel_timer(r, rel_next_timeout(r));
    rel_free(r);
    return 0;
}
