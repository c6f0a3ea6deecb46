/*
 * fpc.c -- FPC lossless compression of double arrays, written from the
 * description in Burtscher and Ratanaworabhan, "FPC: A High-Speed
 * Compressor for Double-Precision Floating-Point Data", IEEE Transactions
 * on Computers 58(1), 2009.
 *
 * Stream format (version 1).  A stream is a sequence of blocks; each block
 * decodes on its own, starting from empty predictor tables:
 *
 *     offset  size  field (big-endian)
 *     0       2     magic 0x4650 ("FP")
 *     2       1     format version (1)
 *     3       1     table_bits (FPC_MIN_TABLE_BITS..FPC_MAX_TABLE_BITS)
 *     4       4     count: doubles in the block (1..FPC_MAX_BLOCK)
 *     8       4     size: payload bytes after this 12-byte header
 *     12      ...   codes: ceil(count/2) bytes, two 4-bit codes per byte,
 *                   value 2i in the high nibble, value 2i+1 in the low one
 *                   (the unused low nibble of an odd block must be 0)
 *     ...     ...   residuals: for each value in order, its 8 - lzb(code)
 *                   low bytes, least significant first
 *
 * A 4-bit code is (predictor << 3) | c, predictor 0 = FCM, 1 = DFCM, and c
 * codes the number of leading zero bytes of the residual (value XOR
 * prediction).  As in the paper, 3 bits cannot hold 0..8, so the count 4 is
 * not representable: a residual with 4 leading zero bytes is stored as if
 * it had 3 (5 bytes, the top one zero).  c = 0..3 mean 0..3 zero bytes,
 * c = 4..7 mean 5..8.  Residual bytes are written least significant first
 * and the header is big-endian, so the format does not depend on the
 * host's byte order (doubles are taken as IEEE-754 bit patterns).
 *
 * Predictors (paper, section 2): FCM predicts the value that followed the
 * previous occurrence of the recent value history, DFCM predicts last value
 * plus the delta that followed the recent delta history.  After each value
 * v, with delta d = v - last:
 *     fcm[fh] = v;   fh = ((fh << 6) ^ (v >> 48)) & mask;
 *     dfcm[dh] = d;  dh = ((dh << 2) ^ (d >> 40)) & mask;
 * The prediction whose XOR with v is smaller (hence has at least as many
 * leading zero bytes) is used; ties go to FCM.
 *
 * Tables are allocated once per call and cleared between blocks: a memset
 * when the block is large, otherwise by replaying the block's hash sequence
 * and zeroing just the entries it wrote (tiny blocks with large tables
 * would otherwise spend all their time in memset).
 */
#include "proto/fpc.h"

#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "proto/bytes.h"

#define FPC_MAGIC   0x4650u
#define FPC_VERSION 1u
#define FPC_HDR     12u
/* Largest count in one block: keeps count and size within 32 bits. */
#define FPC_MAX_BLOCK (1u << 28)

#if defined(__GNUC__)
#define FPC_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define FPC_LIKELY(x) (x)
#endif

/* The two predictor tables and their index mask. */
struct fpc_tables {
    uint64_t *fcm;
    uint64_t *dfcm;
    uint64_t mask;
    unsigned bits;
};

/* Converts between host order and little-endian for residual bytes. */
static inline uint64_t
fpc_le64(uint64_t x)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(x);
#else
    return x;
#endif
}

/* Bit pattern of in[i]; memcpy keeps it free of aliasing trouble. */
static inline uint64_t
fpc_bits(const double *in, size_t i)
{
    uint64_t v;
    memcpy(&v, &in[i], sizeof(v));
    return v;
}

/* Block size actually used for a requested block (0: default). */
static size_t
fpc_block_size(size_t block)
{
    if (block == 0)
        return FPC_DEFAULT_BLOCK;
    return block > FPC_MAX_BLOCK ? FPC_MAX_BLOCK : block;
}

/* Allocates zeroed tables of 2^bits entries each; 0 or COLLS_ENOMEM. */
static int
fpc_tables_init(struct fpc_tables *t, unsigned bits)
{
    size_t entries = (size_t)1 << bits;

    t->fcm = calloc(entries, sizeof(uint64_t));
    t->dfcm = calloc(entries, sizeof(uint64_t));
    t->mask = entries - 1;
    t->bits = bits;
    if (t->fcm == NULL || t->dfcm == NULL) {
        free(t->fcm);
        free(t->dfcm);
        return COLLS_ENOMEM;
    }
    return 0;
}

static void
fpc_tables_free(struct fpc_tables *t)
{
    free(t->fcm);
    free(t->dfcm);
}

/*
 * Returns the tables to all zeros after a block of count values v[] was
 * coded with them using table size bits (which may be below t->bits in
 * the decoder).  Small blocks replay the hash sequence and zero exactly
 * the entries they wrote; large ones memset.
 */
static void
fpc_tables_reset(struct fpc_tables *t, unsigned bits, const double *v,
                 size_t count)
{
    size_t entries = (size_t)1 << bits;
    uint64_t mask = entries - 1, fh = 0, dh = 0, last = 0;
    size_t i;

    if (count >= entries / 16) {
        memset(t->fcm, 0, entries * sizeof(uint64_t));
        memset(t->dfcm, 0, entries * sizeof(uint64_t));
        return;
    }
    for (i = 0; i < count; i++) {
        uint64_t x = fpc_bits(v, i), d = x - last;

        t->fcm[fh] = 0;
        fh = ((fh << 6) ^ (x >> 48)) & mask;
        t->dfcm[dh] = 0;
        dh = ((dh << 2) ^ (d >> 40)) & mask;
        last = x;
    }
}

/* Worst-case payload (codes + residuals) of a block of count values. */
static inline size_t
fpc_payload_max(size_t count)
{
    return (count + 1) / 2 + count * 8;
}

size_t
fpc_bound(size_t n, size_t block)
{
    size_t b = fpc_block_size(block), full, rest, total;

    if (n == 0)
        return 0;
    /* At most FPC_HDR + 9 bytes per value (block 1): saturate rather
     * than wrap for sizes no buffer could hold. */
    if (n > SIZE_MAX / (FPC_HDR + 9))
        return SIZE_MAX;
    full = n / b;
    rest = n % b;
    total = full * (FPC_HDR + fpc_payload_max(b));
    if (rest != 0)
        total += FPC_HDR + fpc_payload_max(rest);
    return total;
}

/*
 * Codes one value: updates the predictors, returns its 4-bit code and the
 * residual in *res, to be stored as its *nbytes low bytes.
 */
static inline unsigned
fpc_code_one(const struct fpc_tables *t, uint64_t v, uint64_t *fh, uint64_t *dh,
             uint64_t *last, uint64_t *res, unsigned *nbytes)
{
    uint64_t pf = t->fcm[*fh], pd = t->dfcm[*dh] + *last;
    uint64_t d = v - *last, x1 = v ^ pf, x2 = v ^ pd, x;
    unsigned sel, lzb, c;

    t->fcm[*fh] = v;
    *fh = ((*fh << 6) ^ (v >> 48)) & t->mask;
    t->dfcm[*dh] = d;
    *dh = ((*dh << 2) ^ (d >> 40)) & t->mask;
    *last = v;

    sel = x2 < x1;
    x = sel ? x2 : x1;
    /* clz(x | 1) >> 3 is 7 for x in {0, 1}; x == 0 has 8 zero bytes. */
    lzb = ((unsigned)__builtin_clzll(x | 1) >> 3) + (x == 0);
    c = lzb - (lzb >= 4); /* 4 is stored as 3: c in 0..7 */
    *nbytes = 8 - lzb + (lzb == 4);
    *res = x;
    return sel << 3 | c;
}

/*
 * Appends the nbytes low bytes of residual x at out[*pos], room bytes in
 * out.  An 8-byte store when it fits (the bytes past nbytes are scratch,
 * overwritten by the next residual or never counted), else byte by byte.
 * Returns 0, or -1 if the residual does not fit.
 */
static inline int
fpc_put_res(uint8_t *out, size_t room, size_t *pos, uint64_t x, unsigned nbytes)
{
    size_t p = *pos;

    if (FPC_LIKELY(room - p >= 8)) {
        uint64_t le = fpc_le64(x);
        memcpy(out + p, &le, 8);
    } else {
        unsigned j;
        if (room - p < nbytes)
            return -1;
        for (j = 0; j < nbytes; j++)
            out[p + j] = (uint8_t)(x >> (8 * j));
    }
    *pos = p + nbytes;
    return 0;
}

/*
 * Encodes one block of count values (tables already clear) into
 * out[0..room).  Returns the bytes written or 0 if room is too small.
 * Invariant: pos <= room throughout.
 */
static size_t
fpc_encode_block(struct fpc_tables *t, const double *in, size_t count,
                 uint8_t *out, size_t room)
{
    size_t ncodes = (count + 1) / 2, pos, i;
    uint64_t fh = 0, dh = 0, last = 0, r0, r1;
    uint8_t *codes = out + FPC_HDR;
    unsigned c0, c1, n0, n1;
    /* A local copy: stores through the tables cannot alias it. */
    struct fpc_tables tl = *t;

    if (room < FPC_HDR + ncodes)
        return 0;
    pos = FPC_HDR + ncodes;
    for (i = 0; i + 1 < count; i += 2) {
        c0 = fpc_code_one(&tl, fpc_bits(in, i), &fh, &dh, &last, &r0, &n0);
        c1 = fpc_code_one(&tl, fpc_bits(in, i + 1), &fh, &dh, &last, &r1, &n1);
        codes[i / 2] = (uint8_t)(c0 << 4 | c1);
        if (fpc_put_res(out, room, &pos, r0, n0) != 0 ||
            fpc_put_res(out, room, &pos, r1, n1) != 0)
            return 0;
    }
    if (i < count) {
        c0 = fpc_code_one(&tl, fpc_bits(in, i), &fh, &dh, &last, &r0, &n0);
        codes[i / 2] = (uint8_t)(c0 << 4);
        if (fpc_put_res(out, room, &pos, r0, n0) != 0)
            return 0;
    }
    put_u16(out, FPC_MAGIC);
    put_u8(out + 2, FPC_VERSION);
    put_u8(out + 3, (uint8_t)t->bits);
    put_u32(out + 4, (uint32_t)count);
    put_u32(out + 8, (uint32_t)(pos - FPC_HDR));
    return pos;
}

int
fpc_compress(const double *in, size_t n, unsigned table_bits, size_t block,
             uint8_t *out, size_t cap, size_t *outlen)
{
    struct fpc_tables t;
    size_t b = fpc_block_size(block), off = 0, i;
    int rc = 0;

    if (table_bits < FPC_MIN_TABLE_BITS || table_bits > FPC_MAX_TABLE_BITS)
        return COLLS_EINVAL;
    if (n == 0) {
        *outlen = 0;
        return 0;
    }
    rc = fpc_tables_init(&t, table_bits);
    if (rc != 0)
        return rc;
    for (i = 0; i < n; i += b) {
        size_t count = n - i < b ? n - i : b, w;

        if (i != 0)
            fpc_tables_reset(&t, table_bits, in + i - b, b);
        w = fpc_encode_block(&t, in + i, count, out + off, cap - off);
        if (w == 0) {
            rc = COLLS_ENOBUFS;
            goto out;
        }
        off += w;
    }
    *outlen = off;
out:
    fpc_tables_free(&t);
    return rc;
}

/* One parsed block header. */
struct fpc_hdr {
    unsigned bits;
    size_t count;
    size_t size;
};

/*
 * Parses and checks the block header at in[0..len): magic, version, table
 * size range, count range, payload size within its possible range and
 * within len.  Returns 0 or COLLS_EBADMSG.
 */
static int
fpc_parse_hdr(const uint8_t *in, size_t len, struct fpc_hdr *h)
{
    if (len < FPC_HDR || get_u16(in) != FPC_MAGIC ||
        get_u8(in + 2) != FPC_VERSION)
        return COLLS_EBADMSG;
    h->bits = get_u8(in + 3);
    h->count = get_u32(in + 4);
    h->size = get_u32(in + 8);
    if (h->bits < FPC_MIN_TABLE_BITS || h->bits > FPC_MAX_TABLE_BITS ||
        h->count == 0 || h->count > FPC_MAX_BLOCK ||
        h->size < (h->count + 1) / 2 || h->size > fpc_payload_max(h->count) ||
        h->size > len - FPC_HDR)
        return COLLS_EBADMSG;
    return 0;
}

/*
 * Walks the block headers of a whole stream: total count in *n and the
 * largest table size in *maxbits.  0 or COLLS_EBADMSG.
 */
static int
fpc_scan(const uint8_t *in, size_t len, size_t *n, unsigned *maxbits)
{
    size_t off = 0, total = 0;
    unsigned mb = 0;

    while (off < len) {
        struct fpc_hdr h;
        int rc = fpc_parse_hdr(in + off, len - off, &h);

        if (rc != 0)
            return rc;
        if (h.count > SIZE_MAX - total)
            return COLLS_EBADMSG;
        total += h.count;
        mb = h.bits > mb ? h.bits : mb;
        off += FPC_HDR + h.size;
    }
    *n = total;
    if (maxbits != NULL)
        *maxbits = mb;
    return 0;
}

int
fpc_count(const uint8_t *in, size_t len, size_t *n)
{
    return fpc_scan(in, len, n, NULL);
}

/* Residual bytes for each 4-bit code (predictor bit ignored). */
static const uint8_t fpc_code_bytes[16] = {
    8, 7, 6, 5, 3, 2, 1, 0, 8, 7, 6, 5, 3, 2, 1, 0,
};

/* Masks keeping the low nbytes bytes of a residual, by 4-bit code. */
static const uint64_t fpc_code_keep[16] = {
    ~0ull,       0xffffffffffffffull, 0xffffffffffffull, 0xffffffffffull,
    0xffffffull, 0xffffull,           0xffull,           0,
    ~0ull,       0xffffffffffffffull, 0xffffffffffffull, 0xffffffffffull,
    0xffffffull, 0xffffull,           0xffull,           0,
};

/* Decoder state of one block; a local, so table stores cannot alias it. */
struct fpc_dec {
    uint64_t *fcm, *dfcm, mask, fh, dh, last;
    const uint8_t *in; /* block start */
    size_t avail;      /* bytes readable from in (to end of stream) */
    size_t end;        /* end of this block's payload, from in */
    size_t pos;        /* next residual byte, from in */
};

/*
 * Decodes the value with 4-bit code into *out and updates the predictors.
 * Reads 8 bytes at once while that stays inside the stream; pos may then
 * run past this block's end into the next block, but only for a corrupt
 * block, which the caller's final pos == end check rejects.  Near the end
 * of the stream, reads byte by byte within the block.  0 or -1.
 */
static inline int
fpc_decode_one(struct fpc_dec *s, unsigned code, double *out)
{
    unsigned nb = fpc_code_bytes[code];
    uint64_t x, v, d;

    if (FPC_LIKELY(s->avail - s->pos >= 8)) {
        memcpy(&x, s->in + s->pos, 8);
        x = fpc_le64(x) & fpc_code_keep[code];
    } else {
        unsigned j;
        if (s->pos > s->end || s->end - s->pos < nb)
            return -1;
        for (x = 0, j = 0; j < nb; j++)
            x |= (uint64_t)s->in[s->pos + j] << (8 * j);
    }
    s->pos += nb;
    v = x ^ (code & 8 ? s->dfcm[s->dh] + s->last : s->fcm[s->fh]);
    d = v - s->last;
    s->fcm[s->fh] = v;
    s->fh = ((s->fh << 6) ^ (v >> 48)) & s->mask;
    s->dfcm[s->dh] = d;
    s->dh = ((s->dh << 2) ^ (d >> 40)) & s->mask;
    s->last = v;
    memcpy(out, &v, sizeof(v));
    return 0;
}

/*
 * Decodes the block whose checked header h sits at in (avail bytes from
 * in to the end of the whole stream, avail >= FPC_HDR + h->size) into
 * out[0..h->count).  Tables must be clear.  0 or COLLS_EBADMSG.
 */
static int
fpc_decode_block(struct fpc_tables *t, const struct fpc_hdr *h,
                 const uint8_t *in, size_t avail, double *out)
{
    const uint8_t *codes = in + FPC_HDR;
    size_t ncodes = (h->count + 1) / 2, i;
    struct fpc_dec s;

    if ((h->count & 1) && (codes[ncodes - 1] & 0x0f) != 0)
        return COLLS_EBADMSG;
    s.fcm = t->fcm;
    s.dfcm = t->dfcm;
    s.mask = ((uint64_t)1 << h->bits) - 1;
    s.fh = s.dh = s.last = 0;
    s.in = in;
    s.avail = avail;
    s.end = FPC_HDR + h->size;
    s.pos = FPC_HDR + ncodes;
    for (i = 0; i + 1 < h->count; i += 2) {
        unsigned cb = codes[i / 2];
        if (fpc_decode_one(&s, cb >> 4, &out[i]) != 0 ||
            fpc_decode_one(&s, cb & 0x0f, &out[i + 1]) != 0)
            return COLLS_EBADMSG;
    }
    if (i < h->count && fpc_decode_one(&s, codes[i / 2] >> 4, &out[i]) != 0)
        return COLLS_EBADMSG;
    return s.pos == s.end ? 0 : COLLS_EBADMSG;
}

int
fpc_decompress(const uint8_t *in, size_t len, double *out, size_t cap,
               size_t *n_out)
{
    struct fpc_tables t;
    size_t total, off = 0, done = 0, prev = 0;
    unsigned maxbits, prevbits = 0;
    int rc;

    /* Whole structure first: nothing is allocated for a bad stream. */
    rc = fpc_scan(in, len, &total, &maxbits);
    if (rc != 0)
        return rc;
    if (total > cap)
        return COLLS_ENOBUFS;
    if (total == 0) {
        *n_out = 0;
        return 0;
    }
    rc = fpc_tables_init(&t, maxbits);
    if (rc != 0)
        return rc;
    while (off < len) {
        struct fpc_hdr h;

        /* Already checked by fpc_scan; parsed again for the fields. */
        fpc_parse_hdr(in + off, len - off, &h);
        if (done != 0)
            fpc_tables_reset(&t, prevbits, out + done - prev, prev);
        rc = fpc_decode_block(&t, &h, in + off, len - off, out + done);
        if (rc != 0)
            goto out;
        off += FPC_HDR + h.size;
        done += h.count;
        prev = h.count;
        prevbits = h.bits;
    }
    *n_out = done;
out:
    fpc_tables_free(&t);
    return rc;
}
