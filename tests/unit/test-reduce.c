/*
 * test-reduce.c -- reduction operators against a serial reference.
 *
 * The reference below is written independently of reduce.c: one switch per
 * item, integers widened to 64 bits and truncated back (which is what
 * wrap-around means), floating MIN/MAX with explicit branches following
 * the rules documented at the top of reduce.c.  Every operator x every
 * datatype runs on random data (with NaNs, infinities and signed zeros
 * mixed into the floating inputs) at counts 0, 1, 17 and 1000, through
 * reduce_apply and through reduce_apply3 with out separate, out == a and
 * out == b, on aligned and misaligned buffers.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "proto/dtype.h"
#include "proto/reduce.h"
#include "tests/unit/suites.h"

static const size_t counts[] = {0, 1, 17, 1000};
#define NCOUNTS  (sizeof(counts) / sizeof(counts[0]))
#define MAXCOUNT 1000
#define GUARD    16 /* bytes checked after each result */

static uint64_t rng_state = 0x2545f4914f6cdd1du;

static uint64_t
rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int
is_float(int dtype)
{
    return dtype == COLLS_FLOAT || dtype == COLLS_DOUBLE;
}

static int
is_signed(int dtype)
{
    return dtype >= COLLS_INT8 && dtype <= COLLS_INT64;
}

/* The documented table of valid pairs, written out. */
static int
pair_valid(int op, int dtype)
{
    if (dtype == COLLS_BYTE)
        return op == COLLS_BAND || op == COLLS_BOR || op == COLLS_BXOR;
    if (is_float(dtype))
        return op == COLLS_SUM || op == COLLS_PROD || op == COLLS_MIN ||
               op == COLLS_MAX;
    return 1;
}

/* Loads item i of an integer buffer, sign- or zero-extended. */
static uint64_t
load_int(int dtype, const uint8_t *p, size_t i)
{
    size_t size = dtype_size(dtype);
    int8_t i8;
    int16_t i16;
    int32_t i32;
    uint64_t v = 0;

    switch (dtype) {
    case COLLS_INT8:
        memcpy(&i8, p + i, 1);
        return (uint64_t)(int64_t)i8;
    case COLLS_INT16:
        memcpy(&i16, p + 2 * i, 2);
        return (uint64_t)(int64_t)i16;
    case COLLS_INT32:
        memcpy(&i32, p + 4 * i, 4);
        return (uint64_t)(int64_t)i32;
    default: /* unsigned, BYTE, INT64: the bits */
        for (size_t k = 0; k < size; k++)
            v |= (uint64_t)p[i * size + k]
                 << (8 * (dtype_native_order() == COLLS_ORDER_LITTLE
                              ? k
                              : size - 1 - k));
        return v;
    }
}

/* Stores the low bytes of v as item i (truncation = wrap-around). */
static void
store_int(int dtype, uint8_t *p, size_t i, uint64_t v)
{
    size_t size = dtype_size(dtype);

    for (size_t k = 0; k < size; k++) {
        int shift = 8 * (int)(dtype_native_order() == COLLS_ORDER_LITTLE
                                  ? k
                                  : size - 1 - k);
        p[i * size + k] = (uint8_t)(v >> shift);
    }
}

static int
int_less(int dtype, uint64_t x, uint64_t y)
{
    return is_signed(dtype) ? (int64_t)x < (int64_t)y : x < y;
}

/* Reference floating MIN/MAX with branches (see reduce.c's header). */
static double
ref_fminmax(int max, double x, double y)
{
    if (isnan(x))
        return x;
    if (isnan(y))
        return y;
    if (x == y) /* equal, or zeros of opposite sign */
        return (signbit(x) != 0) == (max != 0) ? y : x;
    return (x < y) == (max == 0) ? x : y;
}

static float
ref_fminmaxf(int max, float x, float y)
{
    if (isnan(x))
        return x;
    if (isnan(y))
        return y;
    if (x == y)
        return (signbit(x) != 0) == (max != 0) ? y : x;
    return (x < y) == (max == 0) ? x : y;
}

/* The reference: out[i] = a[i] op b[i], item by item. */
static void
ref_apply(int op, int dtype, uint8_t *out, const uint8_t *a, const uint8_t *b,
          size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (dtype == COLLS_DOUBLE) {
            double x, y, r = 0;
            memcpy(&x, a + 8 * i, 8);
            memcpy(&y, b + 8 * i, 8);
            switch (op) {
            case COLLS_SUM:
                r = x + y;
                break;
            case COLLS_PROD:
                r = x * y;
                break;
            case COLLS_MIN:
                r = ref_fminmax(0, x, y);
                break;
            case COLLS_MAX:
                r = ref_fminmax(1, x, y);
                break;
            }
            memcpy(out + 8 * i, &r, 8);
            continue;
        }
        if (dtype == COLLS_FLOAT) {
            float x, y, r = 0;
            memcpy(&x, a + 4 * i, 4);
            memcpy(&y, b + 4 * i, 4);
            switch (op) {
            case COLLS_SUM:
                r = x + y;
                break;
            case COLLS_PROD:
                r = x * y;
                break;
            case COLLS_MIN:
                r = ref_fminmaxf(0, x, y);
                break;
            case COLLS_MAX:
                r = ref_fminmaxf(1, x, y);
                break;
            }
            memcpy(out + 4 * i, &r, 4);
            continue;
        }
        uint64_t x = load_int(dtype, a, i), y = load_int(dtype, b, i), r = 0;
        switch (op) {
        case COLLS_SUM:
            r = x + y;
            break;
        case COLLS_PROD:
            r = x * y;
            break;
        case COLLS_MIN:
            r = int_less(dtype, y, x) ? y : x;
            break;
        case COLLS_MAX:
            r = int_less(dtype, x, y) ? y : x;
            break;
        case COLLS_LAND:
            r = x != 0 && y != 0;
            break;
        case COLLS_LOR:
            r = x != 0 || y != 0;
            break;
        case COLLS_LXOR:
            r = (x != 0) != (y != 0);
            break;
        case COLLS_BAND:
            r = x & y;
            break;
        case COLLS_BOR:
            r = x | y;
            break;
        case COLLS_BXOR:
            r = x ^ y;
            break;
        }
        store_int(dtype, out, i, r);
    }
}

/* A random floating value, often special, often repeated from b. */
static double
random_special(uint64_t r)
{
    static const double special[] = {0.0, -0.0, 1.0,   -1.0,
                                     2.5, -2.5, 1e300, -1e-300};
    switch (r % 8) {
    case 0:
        return NAN;
    case 1:
        return -NAN;
    case 2:
        return INFINITY;
    case 3:
        return -INFINITY;
    case 4:
    case 5:
        return special[(r >> 8) % 8];
    default:
        return ((double)(int64_t)(r >> 11) / (double)(1ull << 40)) - 2048.0;
    }
}

/* Random a and b of n items; floating data gets special values, and some
   items of a equal those of b (ties for MIN/MAX). */
static void
fill_inputs(int dtype, uint8_t *a, uint8_t *b, size_t n)
{
    size_t size = dtype_size(dtype);

    for (size_t i = 0; i < n * size; i++) {
        a[i] = (uint8_t)(rng_next() >> 24);
        b[i] = (uint8_t)(rng_next() >> 24);
    }
    if (!is_float(dtype))
        return;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng_next();
        double x = random_special(r), y = random_special(rng_next());
        if (r % 16 == 15)
            y = x;
        if (r % 16 == 14)
            y = -x;
        if (dtype == COLLS_DOUBLE) {
            memcpy(a + 8 * i, &x, 8);
            memcpy(b + 8 * i, &y, 8);
        } else {
            float fx = (float)x, fy = (float)y;
            memcpy(a + 4 * i, &fx, 4);
            memcpy(b + 4 * i, &fy, 4);
        }
    }
}

/*
 * Compares n items of got and want: bit-exact, except that for SUM and PROD
 * any NaN matches any NaN (the hardware picks which operand's NaN).
 */
static size_t
count_mismatches(int op, int dtype, const uint8_t *got, const uint8_t *want,
                 size_t n)
{
    size_t size = dtype_size(dtype), bad = 0;

    for (size_t i = 0; i < n; i++) {
        if (memcmp(got + i * size, want + i * size, size) == 0)
            continue;
        if (is_float(dtype) && (op == COLLS_SUM || op == COLLS_PROD)) {
            double g, w;
            float gf, wf;
            if (dtype == COLLS_DOUBLE) {
                memcpy(&g, got + 8 * i, 8);
                memcpy(&w, want + 8 * i, 8);
            } else {
                memcpy(&gf, got + 4 * i, 4);
                memcpy(&wf, want + 4 * i, 4);
                g = gf;
                w = wf;
            }
            if (isnan(g) && isnan(w))
                continue;
        }
        bad++;
    }
    return bad;
}

static int
guard_intact(const uint8_t *p)
{
    for (int k = 0; k < GUARD; k++)
        if (p[k] != 0xee)
            return 0;
    return 1;
}

/* Every valid operator on datatype _i, every count, every aliasing. */
START_TEST(test_against_reference)
{
    int dtype = _i;
    size_t size = dtype_size(dtype), cap = MAXCOUNT * 8 + GUARD + 1;
    uint8_t *ab = malloc(cap), *bb = malloc(cap), *ob = malloc(cap);
    uint8_t *want = malloc(cap), *bcopy = malloc(cap), *acopy = malloc(cap);

    ck_assert(ab && bb && ob && want && bcopy && acopy);
    for (int misalign = 0; misalign < 2; misalign++) {
        uint8_t *a = ab + misalign, *b = bb + misalign, *o = ob + misalign;
        for (int op = 0; op < COLLS_OP_MAX; op++) {
            if (!pair_valid(op, dtype))
                continue;
            for (size_t c = 0; c < NCOUNTS; c++) {
                size_t n = counts[c], len = n * size;
                fill_inputs(dtype, acopy, bcopy, n);
                ref_apply(op, dtype, want, acopy, bcopy, n);

                /* reduce_apply: a op= b, b unchanged. */
                memcpy(a, acopy, len);
                memcpy(b, bcopy, len);
                memset(a + len, 0xee, GUARD);
                ck_assert_int_eq(reduce_apply(op, dtype, a, b, n), 0);
                ck_assert_msg(count_mismatches(op, dtype, a, want, n) == 0,
                              "apply %s %s n=%zu", reduce_op_name(op),
                              dtype_name(dtype), n);
                ck_assert(guard_intact(a + len));
                ck_assert_mem_eq(b, bcopy, len);

                /* reduce_apply3 into a separate buffer. */
                memcpy(a, acopy, len);
                memset(o, 0x11, len);
                memset(o + len, 0xee, GUARD);
                ck_assert_int_eq(reduce_apply3(op, dtype, o, a, b, n), 0);
                ck_assert_msg(count_mismatches(op, dtype, o, want, n) == 0,
                              "apply3 %s %s n=%zu", reduce_op_name(op),
                              dtype_name(dtype), n);
                ck_assert(guard_intact(o + len));
                ck_assert_mem_eq(a, acopy, len);
                ck_assert_mem_eq(b, bcopy, len);

                /* out == a */
                ck_assert_int_eq(reduce_apply3(op, dtype, a, a, b, n), 0);
                ck_assert(count_mismatches(op, dtype, a, want, n) == 0);
                /* out == b */
                memcpy(a, acopy, len);
                ck_assert_int_eq(reduce_apply3(op, dtype, b, a, b, n), 0);
                ck_assert(count_mismatches(op, dtype, b, want, n) == 0);
                ck_assert_mem_eq(a, acopy, len);
            }
        }
    }
    free(ab);
    free(bb);
    free(ob);
    free(want);
    free(bcopy);
    free(acopy);
}
END_TEST

/* out == a == b: x op x. */
START_TEST(test_self_alias)
{
    enum { N = 103 };
    double d[N], dw[N];
    int32_t v[N], vw[N];

    for (int i = 0; i < N; i++) {
        d[i] = dw[i] = 0.5 * i - 7.0;
        v[i] = vw[i] = (int32_t)(rng_next() >> 33) - (1 << 29);
    }
    ck_assert_int_eq(reduce_apply3(COLLS_SUM, COLLS_DOUBLE, d, d, d, N), 0);
    ck_assert_int_eq(reduce_apply3(COLLS_BXOR, COLLS_INT32, v, v, v, N), 0);
    for (int i = 0; i < N; i++) {
        ck_assert(d[i] == 2 * dw[i]);
        ck_assert_int_eq(v[i], 0);
    }
    ck_assert_int_eq(reduce_apply(COLLS_PROD, COLLS_INT32, vw, vw, N), 0);
    ck_assert_int_eq(reduce_apply(COLLS_MAX, COLLS_DOUBLE, dw, dw, N), 0);
    for (int i = 0; i < N; i++)
        ck_assert(dw[i] == 0.5 * i - 7.0);
}
END_TEST

START_TEST(test_wraparound)
{
    int32_t i32a[2] = {INT32_MAX, INT32_MIN}, i32b[2] = {1, -1};
    int8_t i8a[4] = {16, 100, -128, 127}, i8b[4] = {16, 3, -1, 127};
    int8_t i8s[2] = {127, -128}, i8t[2] = {1, -1};
    uint8_t u8a[1] = {200}, u8b[1] = {100};
    uint16_t u16a[1] = {300}, u16b[1] = {300};
    int16_t i16a[1] = {-32768}, i16b[1] = {-1};
    uint32_t u32a[1] = {0xffffffffu}, u32b[1] = {0xffffffffu};
    uint64_t u64a[2] = {UINT64_MAX, 1ull << 32}, u64b[2] = {2, 1ull << 32};
    int64_t i64a[2] = {INT64_MIN, INT64_MAX}, i64b[2] = {-1, 2};

    ck_assert_int_eq(reduce_apply(COLLS_SUM, COLLS_INT32, i32a, i32b, 2), 0);
    ck_assert_int_eq(i32a[0], INT32_MIN);
    ck_assert_int_eq(i32a[1], INT32_MAX);

    ck_assert_int_eq(reduce_apply(COLLS_PROD, COLLS_INT8, i8a, i8b, 4), 0);
    ck_assert_int_eq(i8a[0], 0);    /* 256 */
    ck_assert_int_eq(i8a[1], 44);   /* 300 */
    ck_assert_int_eq(i8a[2], -128); /* 128 */
    ck_assert_int_eq(i8a[3], 1);    /* 16129 = 63 * 256 + 1 */
    ck_assert_int_eq(reduce_apply(COLLS_SUM, COLLS_INT8, i8s, i8t, 2), 0);
    ck_assert_int_eq(i8s[0], -128);
    ck_assert_int_eq(i8s[1], 127);

    ck_assert_int_eq(reduce_apply(COLLS_SUM, COLLS_UINT8, u8a, u8b, 1), 0);
    ck_assert_uint_eq(u8a[0], 44);
    ck_assert_int_eq(reduce_apply(COLLS_PROD, COLLS_UINT16, u16a, u16b, 1), 0);
    ck_assert_uint_eq(u16a[0], 90000 % 65536);
    ck_assert_int_eq(reduce_apply(COLLS_PROD, COLLS_INT16, i16a, i16b, 1), 0);
    ck_assert_int_eq(i16a[0], -32768);
    ck_assert_int_eq(reduce_apply(COLLS_PROD, COLLS_UINT32, u32a, u32b, 1), 0);
    ck_assert_uint_eq(u32a[0], 1);

    ck_assert_int_eq(reduce_apply(COLLS_SUM, COLLS_UINT64, u64a, u64b, 2), 0);
    ck_assert_uint_eq(u64a[0], 1);
    ck_assert_uint_eq(u64a[1], 1ull << 33);
    u64a[0] = UINT64_MAX;
    u64a[1] = 1ull << 32;
    ck_assert_int_eq(reduce_apply(COLLS_PROD, COLLS_UINT64, u64a, u64b, 2), 0);
    ck_assert_uint_eq(u64a[0], UINT64_MAX - 1); /* 2^65 - 2 wrapped */
    ck_assert_uint_eq(u64a[1], 0);

    ck_assert_int_eq(reduce_apply(COLLS_SUM, COLLS_INT64, i64a, i64b, 2), 0);
    ck_assert_int_eq(i64a[0], INT64_MAX);
    ck_assert_int_eq(i64a[1], INT64_MIN + 1);
}
END_TEST

/* Bit patterns of the special values, and the documented results. */
struct fcase {
    double x, y, min, max;
};

static const struct fcase fcases[] = {
    {-0.0, 0.0, -0.0, 0.0},
    {0.0, -0.0, -0.0, 0.0},
    {-0.0, -0.0, -0.0, -0.0},
    {0.0, 0.0, 0.0, 0.0},
    {-INFINITY, 5.0, -INFINITY, 5.0},
    {INFINITY, -INFINITY, -INFINITY, INFINITY},
    {INFINITY, 1e308, 1e308, INFINITY},
    {-INFINITY, -INFINITY, -INFINITY, -INFINITY},
    {3.0, -0.0, -0.0, 3.0},
    {-1.0, 0.0, -1.0, 0.0},
};

static int
same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

static int
same_bitsf(float a, float b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

/*
 * The documented MIN/MAX behaviour, bit-exactly, in vectors long enough
 * for the vectorised loop: zeros by sign, infinities ordered, NaN (with its
 * payload and sign) propagated from a if a is one, else from b.
 */
START_TEST(test_float_specials)
{
    enum { N = 40, NC = sizeof(fcases) / sizeof(fcases[0]) };
    double a[N], b[N], mn[N], mx[N];
    float af[N], bf[N], mnf[N], mxf[N];
    uint64_t nan1 = 0x7ff8000000001234u, nan2 = 0xfff0000000000001u;
    uint32_t nanf1 = 0x7fc01234u, nanf2 = 0xff800001u;
    double dn1, dn2;
    float fn1, fn2;

    memcpy(&dn1, &nan1, 8);
    memcpy(&dn2, &nan2, 8); /* signalling, negative */
    memcpy(&fn1, &nanf1, 4);
    memcpy(&fn2, &nanf2, 4);
    for (int i = 0; i < N; i++) {
        const struct fcase *c = &fcases[i % NC];
        a[i] = c->x;
        b[i] = c->y;
        af[i] = (float)c->x;
        bf[i] = (float)c->y;
    }
    memcpy(mn, a, sizeof(a));
    memcpy(mx, a, sizeof(a));
    ck_assert_int_eq(reduce_apply(COLLS_MIN, COLLS_DOUBLE, mn, b, N), 0);
    ck_assert_int_eq(reduce_apply(COLLS_MAX, COLLS_DOUBLE, mx, b, N), 0);
    memcpy(mnf, af, sizeof(af));
    memcpy(mxf, af, sizeof(af));
    ck_assert_int_eq(reduce_apply(COLLS_MIN, COLLS_FLOAT, mnf, bf, N), 0);
    ck_assert_int_eq(reduce_apply(COLLS_MAX, COLLS_FLOAT, mxf, bf, N), 0);
    for (int i = 0; i < N; i++) {
        const struct fcase *c = &fcases[i % NC];
        ck_assert_msg(same_bits(mn[i], c->min), "min case %d", i % NC);
        ck_assert_msg(same_bits(mx[i], c->max), "max case %d", i % NC);
        ck_assert_msg(same_bitsf(mnf[i], (float)c->min), "minf %d", i % NC);
        ck_assert_msg(same_bitsf(mxf[i], (float)c->max), "maxf %d", i % NC);
    }
    ck_assert(signbit(mn[0]) && !signbit(mx[0]));
    ck_assert(signbit(mn[1]) && !signbit(mx[1]));

    /* NaN in a, in b, in both; with ordinary and special partners. */
    static const double partner[] = {1.0, -0.0, INFINITY, -INFINITY};
    for (int p = 0; p < 4; p++) {
        for (int i = 0; i < N; i++) {
            int which = i % 3; /* 0: a NaN, 1: b NaN, 2: both */
            a[i] = which == 1 ? partner[p] : dn1;
            b[i] = which == 0 ? partner[p] : dn2;
            af[i] = which == 1 ? (float)partner[p] : fn1;
            bf[i] = which == 0 ? (float)partner[p] : fn2;
        }
        for (int op = COLLS_MIN; op <= COLLS_MAX; op++) {
            memcpy(mn, a, sizeof(a));
            memcpy(mnf, af, sizeof(af));
            ck_assert_int_eq(reduce_apply(op, COLLS_DOUBLE, mn, b, N), 0);
            ck_assert_int_eq(reduce_apply(op, COLLS_FLOAT, mnf, bf, N), 0);
            for (int i = 0; i < N; i++) {
                int which = i % 3;
                ck_assert(isnan(mn[i]) && isnan(mnf[i]));
                ck_assert(same_bits(mn[i], which == 1 ? dn2 : dn1));
                ck_assert(same_bitsf(mnf[i], which == 1 ? fn2 : fn1));
            }
        }
    }
}
END_TEST

/* Every (op, dtype) in and around the valid range gets the right code and
   leaves the buffers alone when rejected. */
START_TEST(test_invalid_pairs)
{
    uint8_t x[16], y[16], o[16];
    int checked = 0;

    for (int dtype = -2; dtype <= COLLS_DTYPE_MAX + 1; dtype++) {
        for (int op = -2; op <= COLLS_OP_MAX + 1; op++) {
            int want;
            if (dtype < 0 || dtype >= COLLS_DTYPE_MAX)
                want = COLLS_EDTYPE;
            else if (op < 0 || op >= COLLS_OP_MAX || !pair_valid(op, dtype))
                want = COLLS_EOP;
            else
                want = 0;
            memset(x, 0x33, sizeof(x));
            memset(y, 0x44, sizeof(y));
            memset(o, 0x55, sizeof(o));
            ck_assert_int_eq(reduce_check(op, dtype), want);
            ck_assert_int_eq(reduce_apply(op, dtype, x, y, 1), want);
            ck_assert_int_eq(reduce_apply3(op, dtype, o, x, y, 1), want);
            if (want != 0) {
                for (int k = 0; k < 16; k++)
                    ck_assert(x[k] == 0x33 && o[k] == 0x55);
                checked++;
            }
        }
    }
    /* 4 bad ops for each of the 11 dtypes, 4 bad dtypes x 14 ops, and the
       documented invalid pairs: BYTE 7, 2 floats x 6. */
    ck_assert_int_eq(checked, 11 * 4 + 4 * 14 + 7 + 12);
    /* Zero items: still checked, nothing touched. */
    ck_assert_int_eq(reduce_apply(COLLS_LAND, COLLS_DOUBLE, NULL, NULL, 0),
                     COLLS_EOP);
    ck_assert_int_eq(reduce_apply(COLLS_SUM, COLLS_DOUBLE, NULL, NULL, 0), 0);
}
END_TEST

START_TEST(test_names)
{
    static const char *const names[] = {"sum", "prod", "min",  "max", "land",
                                        "lor", "lxor", "band", "bor", "bxor"};

    ck_assert_int_eq(sizeof(names) / sizeof(names[0]), COLLS_OP_MAX);
    for (int op = 0; op < COLLS_OP_MAX; op++)
        ck_assert_str_eq(reduce_op_name(op), names[op]);
    ck_assert_str_eq(reduce_op_name(-1), "?");
    ck_assert_str_eq(reduce_op_name(COLLS_OP_MAX), "?");
}
END_TEST

Suite *
suite_reduce(void)
{
    Suite *s = suite_create("reduce");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_against_reference, 0, COLLS_DTYPE_MAX);
    tcase_add_test(tc, test_self_alias);
    tcase_add_test(tc, test_wraparound);
    tcase_add_test(tc, test_float_specials);
    tcase_add_test(tc, test_invalid_pairs);
    tcase_add_test(tc, test_names);
    suite_add_tcase(s, tc);
    return s;
}
