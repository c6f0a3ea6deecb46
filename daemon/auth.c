/*
 * auth.c -- sealing and opening datagrams, key parsing, replay windows
 * (see auth.h for the format and docs/protocol.md for the protocol).
 *
 * Owns nothing but the bytes it is handed; every check of a tag goes
 * through libsodium (constant time).  May call: libsodium, proto/bytes.h.
 */
#include <string.h>

#include <sodium.h>

#include "colls.h"
#include "daemon/auth.h"
#include "proto/bytes.h"

int
auth_init(struct auth *a, const uint8_t key[AUTH_KEY_LEN], int encrypt)
{
    memset(a, 0, sizeof *a);
    if (sodium_init() < 0)
        return COLLS_EIO;
    crypto_kdf_derive_from_key(a->dgram_key, sizeof a->dgram_key,
                               AUTH_SUBKEY_DGRAM, AUTH_KDF_CONTEXT, key);
    crypto_kdf_derive_from_key(a->proof_key, sizeof a->proof_key,
                               AUTH_SUBKEY_PROOF, AUTH_KDF_CONTEXT, key);
    randombytes_buf(&a->salt, sizeof a->salt);
    a->encrypt = encrypt != 0;
    return 0;
}

void
auth_clear(struct auth *a)
{
    sodium_memzero(a, sizeof *a);
}

void
auth_wipe(void *p, size_t len)
{
    sodium_memzero(p, len);
}

int
auth_key_parse(const char *text, size_t len, uint8_t key[AUTH_KEY_LEN])
{
    size_t bin_len = 0;
    const char *end = NULL;

    if (len == AUTH_KEY_FILE_LEN && text[len - 1] == '\n')
        len--;
    if (len != 2 * AUTH_KEY_LEN)
        return COLLS_EINVAL;
    if (sodium_hex2bin(key, AUTH_KEY_LEN, text, len, NULL, &bin_len, &end) !=
            0 ||
        bin_len != AUTH_KEY_LEN || end != text + len)
        return COLLS_EINVAL;
    return 0;
}

/* The nonce: the caller's prefix, then salt and pn as on the wire. */
static void
auth_nonce(uint8_t *nonce, const uint8_t *prefix, const uint8_t *salt_pn)
{
    memcpy(nonce, prefix, AUTH_PREFIX_LEN);
    memcpy(nonce + AUTH_PREFIX_LEN, salt_pn, 16);
}

/*
 * The associated data of the encrypting mode: the header, then salt and
 * pn (not contiguous in the datagram: the payload lies between them).
 * Returns its length.
 */
static size_t
auth_enc_ad(uint8_t *ad, const uint8_t *buf, size_t hlen,
            const uint8_t *salt_pn)
{
    memcpy(ad, buf, hlen);
    memcpy(ad + hlen, salt_pn, 16);
    return hlen + 16;
}

size_t
auth_seal(struct auth *a, const uint8_t *prefix, uint8_t *buf, size_t hlen,
          size_t len)
{
    uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
    uint8_t ad[AUTH_HDR_MAX + 16];
    uint8_t *tr = buf + len;

    put_u64(tr, a->salt);
    put_u64(tr + 8, ++a->pn);
    auth_nonce(nonce, prefix, tr);
    if (a->encrypt) {
        size_t adlen = auth_enc_ad(ad, buf, hlen, tr);

        crypto_aead_xchacha20poly1305_ietf_encrypt_detached(
            buf + hlen, tr + 16, NULL, buf + hlen, len - hlen, ad, adlen, NULL,
            nonce, a->dgram_key);
    } else {
        uint8_t none[1] = {0}; /* the empty plaintext and ciphertext */

        crypto_aead_xchacha20poly1305_ietf_encrypt_detached(
            none, tr + 16, NULL, none, 0, buf, len + 16, NULL, nonce,
            a->dgram_key);
    }
    return len + AUTH_TRAILER_LEN;
}

long
auth_open(const struct auth *a, const uint8_t *prefix, const uint8_t *buf,
          size_t hlen, size_t len, uint8_t *out, uint64_t *salt, uint64_t *pn)
{
    uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
    uint8_t ad[AUTH_HDR_MAX + 16];
    const uint8_t *tr;
    size_t plen;
    int rc;

    if (hlen > AUTH_HDR_MAX || len < hlen + AUTH_TRAILER_LEN)
        return -1;
    plen = len - AUTH_TRAILER_LEN;
    tr = buf + plen;
    auth_nonce(nonce, prefix, tr);
    if (a->encrypt) {
        size_t adlen = auth_enc_ad(ad, buf, hlen, tr);

        rc = crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
            out, NULL, buf + hlen, plen - hlen, tr + 16, ad, adlen, nonce,
            a->dgram_key);
    } else {
        uint8_t none[1] = {0}; /* the empty plaintext and ciphertext */

        rc = crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
            none, NULL, none, 0, tr + 16, buf, plen + 16, nonce, a->dgram_key);
    }
    if (rc != 0)
        return -1;
    *salt = get_u64(tr);
    *pn = get_u64(tr + 8);
    return (long)plen;
}

void
auth_proof(const struct auth *a, const uint8_t *msg, size_t len, uint8_t *out)
{
    crypto_generichash(out, AUTH_PROOF_LEN, msg, len, a->proof_key,
                       sizeof a->proof_key);
}

int
auth_proof_check(const struct auth *a, const uint8_t *msg, size_t len,
                 const uint8_t *proof, size_t plen)
{
    uint8_t want[AUTH_PROOF_LEN];

    if (plen != AUTH_PROOF_LEN)
        return 0;
    auth_proof(a, msg, len, want);
    return crypto_verify_16(want, proof) == 0;
}

uint64_t
auth_random64(void)
{
    uint64_t v;

    randombytes_buf(&v, sizeof v);
    return v;
}

/* Bit of pn in the window's ring. */
static inline uint64_t *
auth_word(struct auth_replay *w, uint64_t pn, uint64_t *mask)
{
    *mask = 1ull << (pn % 64);
    return &w->bits[(pn / 64) % (AUTH_REPLAY_BITS / 64)];
}

int
auth_replay_check(struct auth_replay *w, uint32_t inc, uint64_t salt,
                  uint64_t pn)
{
    uint64_t mask, *word;

    if (!w->used || w->inc != inc) {
        memset(w, 0, sizeof *w);
        w->used = 1;
        w->inc = inc;
        w->salt = salt;
        w->top = pn;
        word = auth_word(w, pn, &mask);
        *word |= mask;
        return 0;
    }
    if (salt != w->salt)
        return 1;
    if (pn > w->top) {
        if (pn - w->top >= AUTH_REPLAY_BITS) {
            memset(w->bits, 0, sizeof w->bits);
        } else {
            uint64_t q;

            for (q = w->top + 1; q < pn; q++) {
                word = auth_word(w, q, &mask);
                *word &= ~mask;
            }
        }
        w->top = pn;
        word = auth_word(w, pn, &mask);
        *word = (*word & ~mask) | mask;
        return 0;
    }
    if (w->top - pn >= AUTH_REPLAY_BITS)
        return 1;
    word = auth_word(w, pn, &mask);
    if (*word & mask)
        return 1;
    *word |= mask;
    return 0;
}
