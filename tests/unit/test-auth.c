/*
 * test-auth.c -- daemon/auth.c: sealing and opening in both modes, a
 * tampered byte anywhere refused, another key refused, key file parsing,
 * and the edges of the replay window.
 */
#include <stdint.h>
#include <string.h>

#include "colls.h"
#include "daemon/auth.h"
#include "proto/dgram.h"
#include "tests/unit/suites.h"

#define HLEN 48
#define PLEN 100

static void
key_fill(uint8_t *key, uint8_t seed)
{
    int i;

    for (i = 0; i < AUTH_KEY_LEN; i++)
        key[i] = (uint8_t)(seed + 7 * i);
}

/* A datagram of HLEN + PLEN distinct bytes, sealed; returns its length. */
static size_t
sealed_sample(struct auth *a, uint8_t *buf)
{
    int i;

    for (i = 0; i < HLEN + PLEN; i++)
        buf[i] = (uint8_t)(i * 13 + 1);
    return auth_seal(a, buf + 4, buf, HLEN, HLEN + PLEN);
}

/* Both modes: seal, open, get the same bytes back; flip every byte and
   bit position of the sealed datagram, each is refused. */
static void
check_roundtrip(int encrypt, int cipher)
{
    struct auth a;
    uint8_t key[AUTH_KEY_LEN], buf[HLEN + PLEN + AUTH_TRAILER_LEN];
    uint8_t ref[sizeof buf], out[PLEN];
    uint64_t salt, pn;
    size_t len, i;
    long n;

    key_fill(key, 1);
    if (cipher == AUTH_CIPHER_AESGCM && !crypto_aead_aes256gcm_is_available())
        return; /* no AES-NI: XChaCha20 only */
    ck_assert_int_eq(auth_init(&a, key, encrypt, cipher), 0);
    len = sealed_sample(&a, buf);
    ck_assert_uint_eq(len, HLEN + PLEN + AUTH_TRAILER_LEN);
    memcpy(ref, buf, len);
    n = auth_open(&a, buf + 4, buf, HLEN, len, out, &salt, &pn);
    ck_assert_int_eq(n, HLEN + PLEN);
    ck_assert_uint_eq(salt, a.salt);
    ck_assert_uint_eq(pn, 1);
    for (i = 0; i < PLEN; i++) {
        uint8_t want = (uint8_t)((HLEN + i) * 13 + 1);

        if (encrypt) {
            ck_assert_uint_eq(out[i], want);
        } else {
            ck_assert_uint_eq(buf[HLEN + i], want);
        }
    }
    if (encrypt)
        ck_assert(memcmp(buf + HLEN, out, PLEN) != 0); /* ciphertext */
    for (i = 0; i < len; i++) {
        memcpy(buf, ref, len);
        buf[i] ^= (uint8_t)(1u << (i % 8));
        ck_assert_int_eq(
            auth_open(&a, buf + 4, buf, HLEN, len, out, &salt, &pn), -1);
    }
    /* too short, truncated */
    memcpy(buf, ref, len);
    ck_assert_int_eq(
        auth_open(&a, buf + 4, buf, HLEN, len - 1, out, &salt, &pn), -1);
    ck_assert_int_eq(
        auth_open(&a, buf + 4, buf, HLEN, HLEN + 31, out, &salt, &pn), -1);
    /* a second seal gets a new pn */
    len = sealed_sample(&a, buf);
    ck_assert_int_eq(auth_open(&a, buf + 4, buf, HLEN, len, out, &salt, &pn),
                     HLEN + PLEN);
    ck_assert_uint_eq(pn, 2);
    auth_clear(&a);
}

START_TEST(test_roundtrip_auth)
{
    check_roundtrip(0, AUTH_CIPHER_XCHACHA);
    check_roundtrip(0, AUTH_CIPHER_AESGCM);
}
END_TEST

START_TEST(test_roundtrip_encrypt)
{
    check_roundtrip(1, AUTH_CIPHER_XCHACHA);
    check_roundtrip(1, AUTH_CIPHER_AESGCM);
}
END_TEST

/* A daemon sealing with one AEAD is opened by one sealing with the
   other; the suite bit cannot be flipped to make one pass for the
   other; the GCM key cache survives more senders than slots. */
START_TEST(test_cipher_mix)
{
    static struct auth x, g, s[AUTH_GCM_CACHE + 8];
    uint8_t key[AUTH_KEY_LEN], buf[HLEN + PLEN + AUTH_TRAILER_LEN], out[PLEN];
    uint64_t salt, pn;
    size_t len;
    int i, round;

    if (!crypto_aead_aes256gcm_is_available())
        return;
    key_fill(key, 3);
    ck_assert_int_eq(auth_init(&x, key, 0, AUTH_CIPHER_XCHACHA), 0);
    ck_assert_int_eq(auth_init(&g, key, 0, AUTH_CIPHER_AESGCM), 0);
    ck_assert_str_eq(auth_cipher_name(&x), "xchacha20poly1305");
    ck_assert_str_eq(auth_cipher_name(&g), "aes256gcm");
    len = sealed_sample(&x, buf);
    ck_assert_int_eq(auth_open(&g, buf + 4, buf, HLEN, len, out, &salt, &pn),
                     HLEN + PLEN);
    buf[len - 24] ^= 0x80; /* the top bit of pn: now "GCM" */
    ck_assert_int_eq(auth_open(&g, buf + 4, buf, HLEN, len, out, &salt, &pn),
                     -1);
    len = sealed_sample(&g, buf);
    ck_assert_uint_eq(buf[len - 24] & 0x80, 0x80);
    ck_assert_int_eq(auth_open(&x, buf + 4, buf, HLEN, len, out, &salt, &pn),
                     HLEN + PLEN);
    ck_assert_uint_eq(pn, 1); /* without the suite bit */
    buf[len - 24] ^= 0x80;    /* now "XChaCha20" */
    ck_assert_int_eq(auth_open(&x, buf + 4, buf, HLEN, len, out, &salt, &pn),
                     -1);
    /* more senders than cache slots, twice round: every one opens */
    for (i = 0; i < AUTH_GCM_CACHE + 8; i++)
        ck_assert_int_eq(auth_init(&s[i], key, 0, AUTH_CIPHER_AESGCM), 0);
    for (round = 0; round < 2; round++) {
        for (i = 0; i < AUTH_GCM_CACHE + 8; i++) {
            len = sealed_sample(&s[i], buf);
            ck_assert_int_eq(
                auth_open(&g, buf + 4, buf, HLEN, len, out, &salt, &pn),
                HLEN + PLEN);
            ck_assert_uint_eq(salt, s[i].salt);
        }
    }
    {
        int c;

        ck_assert_int_eq(auth_cipher_parse("xchacha20", &c), 0);
        ck_assert_int_eq(c, AUTH_CIPHER_XCHACHA);
        ck_assert_int_eq(auth_cipher_parse("aes", &c), -1);
    }
}
END_TEST

START_TEST(test_wrong_key)
{
    struct auth a, b, c;
    uint8_t key[AUTH_KEY_LEN], buf[HLEN + PLEN + AUTH_TRAILER_LEN], out[PLEN];
    uint64_t salt, pn;
    size_t len;

    key_fill(key, 1);
    ck_assert_int_eq(auth_init(&a, key, 0, AUTH_CIPHER_AUTO), 0);
    ck_assert_int_eq(auth_init(&c, key, 1, AUTH_CIPHER_AUTO), 0);
    key_fill(key, 2);
    ck_assert_int_eq(auth_init(&b, key, 0, AUTH_CIPHER_AUTO), 0);
    ck_assert(a.salt != b.salt || a.salt != c.salt);
    len = sealed_sample(&a, buf);
    ck_assert_int_eq(auth_open(&b, buf + 4, buf, HLEN, len, out, &salt, &pn),
                     -1);
    /* same key, other mode: refused too */
    ck_assert_int_eq(auth_open(&c, buf + 4, buf, HLEN, len, out, &salt, &pn),
                     -1);
    /* another nonce prefix (another sender identity): refused */
    {
        uint8_t other[AUTH_PREFIX_LEN] = {0};

        ck_assert_int_eq(auth_open(&a, other, buf, HLEN, len, out, &salt, &pn),
                         -1);
    }
}
END_TEST

START_TEST(test_key_parse)
{
    static const char good[] =
        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n";
    uint8_t key[AUTH_KEY_LEN];
    char bad[sizeof good];

    ck_assert_int_eq(auth_key_parse(good, strlen(good), key), 0);
    ck_assert_uint_eq(key[0], 0);
    ck_assert_uint_eq(key[31], 0x1f);
    ck_assert_int_eq(auth_key_parse(good, 64, key), 0);
    ck_assert_int_eq(auth_key_parse(good, 63, key), COLLS_EINVAL);
    ck_assert_int_eq(auth_key_parse(good, 62, key), COLLS_EINVAL);
    memcpy(bad, good, sizeof good);
    bad[10] = 'g';
    ck_assert_int_eq(auth_key_parse(bad, strlen(bad), key), COLLS_EINVAL);
    memcpy(bad, good, sizeof good);
    bad[64] = ' ';
    ck_assert_int_eq(auth_key_parse(bad, strlen(bad), key), COLLS_EINVAL);
    ck_assert_int_eq(auth_key_parse("", 0, key), COLLS_EINVAL);
}
END_TEST

START_TEST(test_replay_window)
{
    struct auth_replay w;
    uint64_t pn;

    memset(&w, 0, sizeof w);
    ck_assert_int_eq(auth_replay_check(&w, 7, 99, 5000), 0);
    ck_assert_int_eq(auth_replay_check(&w, 7, 99, 5000), 1); /* duplicate */
    ck_assert_int_eq(auth_replay_check(&w, 7, 98, 5001), 1); /* other salt */
    ck_assert_int_eq(auth_replay_check(&w, 7, 99, 4999), 0); /* late, new */
    ck_assert_int_eq(auth_replay_check(&w, 7, 99, 4999), 1);
    /* the oldest pn the window still holds, and one beyond it */
    ck_assert_int_eq(auth_replay_check(&w, 7, 99, 5000 - 2047), 0);
    ck_assert_int_eq(auth_replay_check(&w, 7, 99, 5000 - 2047), 1);
    ck_assert_int_eq(auth_replay_check(&w, 7, 99, 5000 - 2048), 1);
    /* moving forward clears the bits the ring reuses */
    ck_assert_int_eq(auth_replay_check(&w, 7, 99, 5000 + 2048), 0);
    ck_assert_int_eq(auth_replay_check(&w, 7, 99, 5000 + 1), 0);
    ck_assert_int_eq(auth_replay_check(&w, 7, 99, 5000), 1); /* too old now */
    /* a jump beyond the window clears everything */
    ck_assert_int_eq(auth_replay_check(&w, 7, 99, 100000), 0);
    ck_assert_int_eq(auth_replay_check(&w, 7, 99, 100000 - 1), 0);
    ck_assert_int_eq(auth_replay_check(&w, 7, 99, 100000 - 2047), 0);
    /* every pn once in order, then all again */
    for (pn = 200000; pn < 204000; pn++)
        ck_assert_int_eq(auth_replay_check(&w, 7, 99, pn), 0);
    for (pn = 200000; pn < 204000; pn++)
        ck_assert_int_eq(auth_replay_check(&w, 7, 99, pn), 1);
    /* a new incarnation starts a new window, any salt, any pn */
    ck_assert_int_eq(auth_replay_check(&w, 8, 5, 1), 0);
    ck_assert_int_eq(auth_replay_check(&w, 8, 5, 1), 1);
    ck_assert_int_eq(auth_replay_check(&w, 8, 5, 2), 0);
}
END_TEST

Suite *
suite_auth(void)
{
    Suite *s = suite_create("auth");
    TCase *tc = tcase_create("auth");

    tcase_add_test(tc, test_roundtrip_auth);
    tcase_add_test(tc, test_roundtrip_encrypt);
    tcase_add_test(tc, test_wrong_key);
    tcase_add_test(tc, test_cipher_mix);
    tcase_add_test(tc, test_key_parse);
    tcase_add_test(tc, test_replay_window);
    suite_add_tcase(s, tc);
    return s;
}
