/*
 * fuzz-join.c -- the join and invitation datagram parsers of a keyed
 * daemon: the datagram is opened as net.c opens a sealed join datagram
 * (magic "CJS1", length, envelope, trailer; daemon/net.c), its length
 * field checked and its envelope unpacked as join.c does (join_dgram),
 * and an ADD_HOST's proof checked as an invitee checks it.
 *
 * The input is  u8 mode | join datagram.  With mode bit 0 set the
 * datagram (magic, length and envelope) is sealed first with the
 * target's fixed key, so the parsers behind the tag are reached; bit 1
 * then fills in the magic and length field correctly.
 *
 * Checked (abort() on failure): a datagram just sealed opens; nothing
 * crashes, leaks or reads out of bounds; envelope_unpack answers 0,
 * COLLS_EPROTO or COLLS_EVERSION.
 */
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/auth.h"
#include "proto/bytes.h"
#include "proto/envelope.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_JOIN_MAX 4096

static struct auth fuzz_join_key;
static int fuzz_join_ready;

/* What join.c looks at in an envelope of a join datagram. */
static void
fuzz_join_envelope(const Envelope *e)
{
    uint8_t m[64];
    size_t n;

    if (e->body_case == ENVELOPE__BODY_HOST_OP) {
        const HostOp *op = e->host_op;
        size_t alen = op->addr != NULL ? strnlen(op->addr, 32) : 0;

        put_u64(m, op->challenge);
        put_u32(m + 8, op->incarnation);
        put_u32(m + 12, op->hid);
        memcpy(m + 16, op->addr, alen);
        n = 16 + alen;
        if (auth_proof_check(&fuzz_join_key, m, n, op->proof.data,
                             op->proof.len) &&
            op->proof.len != AUTH_PROOF_LEN)
            abort();
    } else if (e->body_case == ENVELOPE__BODY_HOST_JOIN) {
        if (e->host_join->name != NULL)
            (void)strlen(e->host_join->name);
        if (e->host_join->addr != NULL)
            (void)strlen(e->host_join->addr);
    } else if (e->body_case == ENVELOPE__BODY_HOST_TABLE) {
        size_t i;

        for (i = 0; i < e->host_table->n_hosts; i++)
            if (e->host_table->hosts[i]->addr != NULL)
                (void)strlen(e->host_table->hosts[i]->addr);
    }
}

int
fuzz_join(const uint8_t *data, size_t size)
{
    static uint8_t buf[FUZZ_JOIN_MAX + AUTH_TRAILER_LEN], plain[FUZZ_JOIN_MAX];
    uint64_t salt, pn;
    Envelope *e = NULL;
    uint32_t elen;
    size_t len;
    long n;
    int rc;

    if (!fuzz_join_ready) {
        uint8_t key[AUTH_KEY_LEN];

        memset(key, 0x24, sizeof key);
        if (auth_init(&fuzz_join_key, key, 0, AUTH_CIPHER_AUTO) != 0)
            abort();
        fuzz_join_ready = 1;
    }
    if (size < 1 || size - 1 > FUZZ_JOIN_MAX)
        return 0;
    len = size - 1;
    memcpy(buf, data + 1, len);
    if ((data[0] & 1) && len >= 8) {
        if (data[0] & 2) {
            memcpy(buf, "CJS1", 4);
            put_u32(buf + 4, (uint32_t)(len - 8));
        }
        len = auth_seal(&fuzz_join_key, buf, buf, 8, len);
    }
    n = auth_open(&fuzz_join_key, buf, buf, 8, len, plain + 8, &salt, &pn);
    if ((data[0] & 1) && len >= 8 + AUTH_TRAILER_LEN && n < 0)
        abort();
    if (n < 0)
        return 0;
    memcpy(plain, buf, (size_t)n);
    /* join_dgram's checks, after the magic */
    if (n < 8 || (elen = get_u32(plain + 4)) != (size_t)n - 8 || elen == 0)
        return 0;
    rc = envelope_unpack(plain + 8, elen, &e);
    if (rc != 0 && rc != COLLS_EPROTO && rc != COLLS_EVERSION)
        abort();
    if (rc == 0) {
        fuzz_join_envelope(e);
        envelope_free(e);
    }
    return 0;
}
