/*
 * auth.h -- the cluster key and authenticated datagrams (libsodium).
 *
 * Every daemon of a machine holds the same 32-byte cluster key (a file
 * of 64 hex digits, written by `collsctl keygen`).  From it two subkeys
 * are derived (crypto_kdf, context "collsd01"): id 1 seals datagrams,
 * id 2 is kept for membership proofs.  A sealed datagram is
 *
 *   header | payload | salt u64 | pn u64 | tag[16]
 *
 sealed with one of two AEADs, named by the top bit of pn on the wire
 * (AUTH_PN_AES):
 *
 *  - AES-256-GCM (bit set; the default where the CPU has AES-NI and
 *    PCLMUL, three times faster than the other here) under a key of its
 *    own per (salt, prefix), BLAKE2b-keyed by subkey 1, and the nonce
 *    0(4) | pn(8);
 *  - XChaCha20-Poly1305 (bit clear; any CPU) under subkey 1 and the nonce
 *    prefix(8) | salt(8) | pn(8).
 *
 * The caller's prefix is the sender's identity (src_hid, dst_hid, src_inc
 * for the transport), salt is random per daemon process and pn is a
 * per-process counter, +1 per datagram sealed: a nonce never repeats for
 * a key.  Without encryption the plaintext is empty and header, payload,
 * salt and pn are all associated data; with it the payload is encrypted
 * in place and only header, salt and pn are associated data.  The GCM
 * keys of the last AUTH_GCM_CACHE (salt, prefix) pairs are kept expanded
 * (crypto_aead_aes256gcm_beforenm), so a datagram costs one GHASH pass.
 * Every daemon opens both kinds (GCM where the CPU can); one without
 * AES-NI must be told by its peers to seal with XChaCha20 (auth_init's
 * cipher).  docs/protocol.md has the whole format.
 *
 * struct auth_replay is one sender's replay window: the highest pn seen
 * for its current (incarnation, salt) and a bitmap of the AUTH_REPLAY_BITS
 * pns below it (as IPsec and WireGuard).
 *
 * I/O-free: no sockets, files or clocks (the key arrives as bytes);
 * calls only libsodium and proto/bytes.h.
 */
#ifndef COLLS_DAEMON_AUTH_H
#define COLLS_DAEMON_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

#define AUTH_KEY_LEN      32
#define AUTH_TAG_LEN      16
#define AUTH_TRAILER_LEN  32 /* salt, pn, tag */
#define AUTH_PREFIX_LEN   8  /* the caller's part of the nonce */
#define AUTH_HDR_MAX      64 /* largest header (associated data) */
#define AUTH_REPLAY_BITS  2048
#define AUTH_KEY_FILE_LEN 65 /* 64 hex digits and a newline */
#define AUTH_KDF_CONTEXT  "collsd01"
#define AUTH_SUBKEY_DGRAM 1
#define AUTH_SUBKEY_PROOF 2
#define AUTH_PN_AES       (1ull << 63) /* pn's top bit: sealed by GCM */
#define AUTH_GCM_CACHE    64           /* expanded GCM keys kept */

/* The AEAD that seals (every suite opens). */
enum auth_cipher {
    AUTH_CIPHER_AUTO = 0, /* AES-256-GCM where the CPU has it, else XChaCha */
    AUTH_CIPHER_AESGCM,
    AUTH_CIPHER_XCHACHA,
};

/* One expanded AES-GCM key, for datagrams of (salt, prefix). */
struct auth_gcm {
    int used;
    uint64_t salt;
    uint8_t prefix[AUTH_PREFIX_LEN];
    crypto_aead_aes256gcm_state st;
};

struct auth {
    uint8_t dgram_key[AUTH_KEY_LEN]; /* subkey 1: datagrams */
    uint8_t proof_key[AUTH_KEY_LEN]; /* subkey 2: membership proofs */
    uint64_t salt;                   /* random per process */
    uint64_t pn;                     /* last packet number sealed */
    int encrypt;                     /* payloads are encrypted too */
    int aes;                         /* seal with AES-256-GCM */
    int aes_ok;                      /* this CPU can open GCM */
    struct auth_gcm gcm[AUTH_GCM_CACHE];
};

struct auth_replay {
    int used;
    uint32_t inc;
    uint64_t salt;
    uint64_t top; /* highest pn accepted */
    uint64_t bits[AUTH_REPLAY_BITS / 64];
};

/*
 * Derives the subkeys of key and draws a salt; cipher names the AEAD
 * that seals (enum auth_cipher).  Returns 0, COLLS_EIO when libsodium
 * cannot be initialised, or COLLS_ENOTSUP for AUTH_CIPHER_AESGCM on a
 * CPU without AES-NI.
 */
int auth_init(struct auth *a, const uint8_t key[AUTH_KEY_LEN], int encrypt,
              int cipher);
/* The name of a's sealing AEAD: "aes256gcm" or "xchacha20poly1305". */
const char *auth_cipher_name(const struct auth *a);
/* Parses "auto", "aes256gcm" or "xchacha20" into enum auth_cipher; 0, or
   -1 for another word. */
int auth_cipher_parse(const char *s, int *cipher);
/* Wipes the keys. */
void auth_clear(struct auth *a);
/* Wipes len bytes of secret at p (not optimised away). */
void auth_wipe(void *p, size_t len);

/*
 * Parses a key file's text: exactly 64 hex digits, then optionally one
 * newline.  Returns 0 and key, or COLLS_EINVAL.
 */
int auth_key_parse(const char *text, size_t len, uint8_t key[AUTH_KEY_LEN]);

/*
 * Seals the datagram in buf (len bytes, of which the first hlen <=
 * AUTH_HDR_MAX are the header) under nonce prefix `prefix', appending
 * the trailer: buf must have AUTH_TRAILER_LEN bytes of room after len.
 * With encryption the payload is encrypted in place.  Returns the new
 * length, len + AUTH_TRAILER_LEN.
 */
size_t auth_seal(struct auth *a, const uint8_t *prefix, uint8_t *buf,
                 size_t hlen, size_t len);

/*
 * Checks a sealed datagram of len bytes (hlen of header) and, with
 * encryption, decrypts its payload into out (len - hlen -
 * AUTH_TRAILER_LEN bytes; out may be buf + hlen); without, out is not
 * used.  Constant time in the tag.  Returns the length without the
 * trailer and *salt, *pn (without AUTH_PN_AES); or -1 (too short, or
 * the tag does not verify: forged, altered, another key, or GCM on a CPU
 * without it).  Nothing is written to out on failure; a's key cache may
 * change either way.
 */
long auth_open(struct auth *a, const uint8_t *prefix, const uint8_t *buf,
               size_t hlen, size_t len, uint8_t *out, uint64_t *salt,
               uint64_t *pn);

/*
 * The membership proof of msg (len bytes): a keyed BLAKE2b MAC under
 * subkey 2, AUTH_PROOF_LEN bytes into out.  auth_proof_check compares
 * one in constant time: 1 if proof (plen bytes) is msg's, else 0.
 */
#define AUTH_PROOF_LEN 16
void auth_proof(const struct auth *a, const uint8_t *msg, size_t len,
                uint8_t *out);
int auth_proof_check(const struct auth *a, const uint8_t *msg, size_t len,
                     const uint8_t *proof, size_t plen);
/* A random 64-bit number from libsodium's CSPRNG (challenges). */
uint64_t auth_random64(void);

/*
 * The replay check of a datagram that passed auth_open, from incarnation
 * inc of its sender: 0 if it is new (and is now recorded), 1 if it is a
 * duplicate, older than the window, or of another salt in the same
 * incarnation.  A new incarnation starts a new window.
 */
int auth_replay_check(struct auth_replay *w, uint32_t inc, uint64_t salt,
                      uint64_t pn);

#endif
