/*
 * fuzz-auth.c -- the authenticated datagram parser: auth_open, then
 * dgram_get on what it accepts, then the replay window, as rel_input
 * does with a cluster key (daemon/rel.c).
 *
 * The input is  u8 mode | u8 flip | datagram.  Mode bit 0 selects the
 * encrypting mode.  With bit 1 clear the datagram is opened as it is (a
 * forger's datagram: it must be refused, since nobody outside knows the
 * fixed key the target uses... except the corpus, which holds datagrams
 * sealed with it).  With bit 1 set it is first sealed as a header and
 * payload (so the parser behind the tag is reached), and with bit 2 also
 * the byte at flip (modulo the length) is changed after sealing, which
 * must make opening fail.
 *
 * Checked (abort() on failure): auth_open returns -1 or the length
 * without the trailer; a datagram just sealed opens, to the same bytes;
 * one changed after sealing never opens; dgram_get and
 * auth_replay_check behave on whatever comes out.
 */
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/auth.h"
#include "proto/dgram.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_AUTH_MAX 4096

/* One key and replay window per mode, made once. */
static struct auth fuzz_auth_keys[2];
static struct auth_replay fuzz_auth_win;
static int fuzz_auth_ready;

static void
fuzz_auth_init(void)
{
    uint8_t key[AUTH_KEY_LEN];

    if (fuzz_auth_ready)
        return;
    memset(key, 0x42, sizeof key);
    if (auth_init(&fuzz_auth_keys[0], key, 0, AUTH_CIPHER_AUTO) != 0 ||
        auth_init(&fuzz_auth_keys[1], key, 1, AUTH_CIPHER_AUTO) != 0)
        abort();
    fuzz_auth_ready = 1;
}

int
fuzz_auth(const uint8_t *data, size_t size)
{
    static uint8_t buf[FUZZ_AUTH_MAX + AUTH_TRAILER_LEN], plain[FUZZ_AUTH_MAX];
    struct auth *a;
    struct dgram_hdr h;
    uint64_t salt, pn;
    size_t len;
    long n;
    int mode, sealed;

    fuzz_auth_init();
    if (size < 2 || size - 2 > FUZZ_AUTH_MAX)
        return 0;
    mode = data[0];
    a = &fuzz_auth_keys[mode & 1];
    len = size - 2;
    memcpy(buf, data + 2, len);
    sealed = (mode & 2) != 0 && len >= DGRAM_HDR_LEN;
    if (sealed)
        len = auth_seal(a, buf + 4, buf, DGRAM_HDR_LEN, len);
    if (sealed && (mode & 4) != 0)
        buf[data[1] % len] ^= (uint8_t)(1u << (mode >> 5));
    n = auth_open(a, buf + 4, buf, DGRAM_HDR_LEN, len, plain + DGRAM_HDR_LEN,
                  &salt, &pn);
    if (n < -1 || n > (long)len)
        abort();
    if (sealed && (mode & 4) == 0) {
        /* just sealed: it opens, to what was sealed */
        if (n != (long)(size - 2))
            abort();
        if ((mode & 1) &&
            memcmp(plain + DGRAM_HDR_LEN, data + 2 + DGRAM_HDR_LEN,
                   (size_t)n - DGRAM_HDR_LEN) != 0)
            abort();
    }
    if (sealed && (mode & 4) != 0 && n >= 0)
        abort(); /* a changed byte went through */
    if (n < 0)
        return 0;
    if (mode & 1) {
        memcpy(plain, buf, DGRAM_HDR_LEN);
    } else {
        memcpy(plain, buf, (size_t)n);
    }
    if (dgram_get(plain, (size_t)n, &h) == 0)
        auth_replay_check(&fuzz_auth_win, h.src_inc, salt, pn);
    return 0;
}
