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
auth_init(struct auth *a, const uint8_t key[AUTH_KEY_LEN], int encrypt,
          int cipher)
{
    memset(a, 0, sizeof *a);
    if (sodium_init() < 0)
        return COLLS_EIO;
    a->aes_ok = crypto_aead_aes256gcm_is_available();
    if (cipher == AUTH_CIPHER_AESGCM && !a->aes_ok)
        return COLLS_ENOTSUP;
    a->aes = a->aes_ok && cipher != AUTH_CIPHER_XCHACHA;
    crypto_kdf_derive_from_key(a->dgram_key, sizeof a->dgram_key,
                               AUTH_SUBKEY_DGRAM, AUTH_KDF_CONTEXT, key);
    crypto_kdf_derive_from_key(a->proof_key, sizeof a->proof_key,
                               AUTH_SUBKEY_PROOF, AUTH_KDF_CONTEXT, key);
    randombytes_buf(&a->salt, sizeof a->salt);
    a->encrypt = encrypt != 0;
    return 0;
}

const char *
auth_cipher_name(const struct auth *a)
{
    return a->aes ? "aes256gcm" : "xchacha20poly1305";
}

int
auth_cipher_parse(const char *s, int *cipher)
{
    static const char *const names[] = {"auto", "aes256gcm", "xchacha20"};
    int i;

    for (i = 0; i < 3; i++) {
        if (strcmp(s, names[i]) == 0) {
            *cipher = i;
            return 0;
        }
    }
    return -1;
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

/* The XChaCha20 nonce: the caller's prefix, then salt and pn as on the
   wire. */
static void
auth_nonce(uint8_t *nonce, const uint8_t *prefix, const uint8_t *salt_pn)
{
    memcpy(nonce, prefix, AUTH_PREFIX_LEN);
    memcpy(nonce + AUTH_PREFIX_LEN, salt_pn, 16);
}

/* The GCM nonce: four zero bytes, then pn as on the wire. */
static void
auth_gcm_nonce(uint8_t *nonce, const uint8_t *salt_pn)
{
    memset(nonce, 0, 4);
    memcpy(nonce + 4, salt_pn + 8, 8);
}

/*
 * The expanded GCM key of (salt, prefix): BLAKE2b of salt | prefix keyed
 * by subkey 1, from the cache or derived into it (the slot of the pair's
 * hash; an older pair there is dropped).
 */
static const crypto_aead_aes256gcm_state *
auth_gcm_key(struct auth *a, uint64_t salt, const uint8_t *prefix)
{
    uint8_t in[8 + AUTH_PREFIX_LEN], key[crypto_aead_aes256gcm_KEYBYTES];
    uint64_t h = salt ^ (get_le64(prefix) * 0x9e3779b97f4a7c15ull);
    struct auth_gcm *g = &a->gcm[(h >> 32) % AUTH_GCM_CACHE];

    if (g->used && g->salt == salt &&
        memcmp(g->prefix, prefix, AUTH_PREFIX_LEN) == 0)
        return &g->st;
    put_u64(in, salt);
    memcpy(in + 8, prefix, AUTH_PREFIX_LEN);
    crypto_generichash(key, sizeof key, in, sizeof in, a->dgram_key,
                       sizeof a->dgram_key);
    crypto_aead_aes256gcm_beforenm(&g->st, key);
    sodium_memzero(key, sizeof key);
    g->used = 1;
    g->salt = salt;
    memcpy(g->prefix, prefix, AUTH_PREFIX_LEN);
    return &g->st;
}

/*
 * What the AEAD is given for a datagram of plen bytes (hlen of header)
 * whose trailer is tr: with encryption the payload is the message and
 * header, salt and pn (copied together into ad) the associated data;
 * without, the message is empty and header, payload, salt and pn (which
 * lie together in the datagram) are the associated data.
 */
struct auth_parts {
    const uint8_t *m, *ad;
    size_t mlen, adlen;
    uint8_t none[1]; /* the empty message */
    uint8_t adbuf[AUTH_HDR_MAX + 16];
};

static void
auth_parts(const struct auth *a, const uint8_t *buf, size_t hlen, size_t plen,
           const uint8_t *tr, struct auth_parts *p)
{
    if (a->encrypt) {
        memcpy(p->adbuf, buf, hlen);
        memcpy(p->adbuf + hlen, tr, 16);
        p->m = buf + hlen;
        p->mlen = plen - hlen;
        p->ad = p->adbuf;
        p->adlen = hlen + 16;
    } else {
        p->none[0] = 0;
        p->m = p->none;
        p->mlen = 0;
        p->ad = buf;
        p->adlen = plen + 16;
    }
}

size_t
auth_seal(struct auth *a, const uint8_t *prefix, uint8_t *buf, size_t hlen,
          size_t len)
{
    uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
    uint8_t *tr = buf + len, none[1];
    uint8_t *out = a->encrypt ? buf + hlen : none; /* in place */
    struct auth_parts p;

    put_u64(tr, a->salt);
    put_u64(tr + 8, ++a->pn | (a->aes ? AUTH_PN_AES : 0));
    auth_parts(a, buf, hlen, len, tr, &p);
    if (a->aes) {
        auth_gcm_nonce(nonce, tr);
        crypto_aead_aes256gcm_encrypt_detached_afternm(
            out, tr + 16, NULL, p.m, p.mlen, p.ad, p.adlen, NULL, nonce,
            auth_gcm_key(a, a->salt, prefix));
    } else {
        auth_nonce(nonce, prefix, tr);
        crypto_aead_xchacha20poly1305_ietf_encrypt_detached(
            out, tr + 16, NULL, p.m, p.mlen, p.ad, p.adlen, NULL, nonce,
            a->dgram_key);
    }
    return len + AUTH_TRAILER_LEN;
}

long
auth_open(struct auth *a, const uint8_t *prefix, const uint8_t *buf,
          size_t hlen, size_t len, uint8_t *out, uint64_t *salt, uint64_t *pn)
{
    uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES], none[1];
    struct auth_parts p;
    const uint8_t *tr;
    size_t plen;
    uint64_t wire_pn;
    int rc;

    if (hlen > AUTH_HDR_MAX || len < hlen + AUTH_TRAILER_LEN)
        return -1;
    plen = len - AUTH_TRAILER_LEN;
    tr = buf + plen;
    wire_pn = get_u64(tr + 8);
    auth_parts(a, buf, hlen, plen, tr, &p);
    if (!a->encrypt)
        out = none;
    if (wire_pn & AUTH_PN_AES) {
        if (!a->aes_ok)
            return -1; /* no AES-NI here: cannot be opened */
        auth_gcm_nonce(nonce, tr);
        rc = crypto_aead_aes256gcm_decrypt_detached_afternm(
            out, NULL, p.m, p.mlen, tr + 16, p.ad, p.adlen, nonce,
            auth_gcm_key(a, get_u64(tr), prefix));
    } else {
        auth_nonce(nonce, prefix, tr);
        rc = crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
            out, NULL, p.m, p.mlen, tr + 16, p.ad, p.adlen, nonce,
            a->dgram_key);
    }
    if (rc != 0)
        return -1;
    *salt = get_u64(tr);
    *pn = wire_pn & ~AUTH_PN_AES;
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
