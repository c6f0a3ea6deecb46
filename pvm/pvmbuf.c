/*
 * pvmbuf.c -- PVM's message buffers on colls_msg_t: the buffer table
 * (pvm_mkbuf, pvm_freebuf, the active send and receive buffers), packing
 * and unpacking of every PVM type with strides, and pvm_bufinfo.
 *
 * Encodings: PvmDataDefault -> COLLS_ENC_DEFAULT (XDR), PvmDataRaw ->
 * COLLS_ENC_RAW, PvmDataInPlace -> COLLS_ENC_INPLACE (the packed memory
 * is read when the message is sent).  Types: byte, short, int, long and
 * their unsigned forms map onto collsd's integer types of the same width,
 * float and double onto theirs; a complex is a pair of floats, a double
 * complex a pair of doubles; a string is its length (int, the NUL
 * included) followed by its bytes.  A stride > 1 packs every stride-th
 * item: copied into a contiguous block first (in place: one reference per
 * item), and unpacked through one.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pvmint.h"

/* ---- the buffer table --------------------------------------------------- */

int
pvm__buf_add(colls_msg_t *m, int enc, int src, int tag, size_t len)
{
    struct pvm__buf *nb;
    int i, n;

    for (i = 1; i < pvm__task.nbufs; i++)
        if (!pvm__task.bufs[i].used)
            break;
    if (i >= pvm__task.nbufs) {
        n = pvm__task.nbufs ? pvm__task.nbufs * 2 : 16;
        nb = realloc(pvm__task.bufs, (size_t)n * sizeof(*nb));
        if (nb == NULL) {
            colls_msg_free(m);
            return PvmNoMem;
        }
        memset(nb + pvm__task.nbufs, 0,
               (size_t)(n - pvm__task.nbufs) * sizeof(*nb));
        pvm__task.bufs = nb;
        i = pvm__task.nbufs ? pvm__task.nbufs : 1;
        pvm__task.nbufs = n;
    }
    pvm__task.bufs[i] = (struct pvm__buf){
        .used = 1, .m = m, .encoding = enc, .src = src, .tag = tag, .len = len};
    return i;
}

struct pvm__buf *
pvm__buf_get(int id)
{
    if (id <= 0 || id >= pvm__task.nbufs || !pvm__task.bufs[id].used)
        return NULL;
    return &pvm__task.bufs[id];
}

void
pvm__buf_clear(struct pvm__buf *b)
{
    int i;

    colls_msg_free(b->m);
    for (i = 0; i < b->nowned; i++)
        free(b->owned[i]);
    free(b->owned);
    memset(b, 0, sizeof(*b));
}

static int
pvm_colls_enc(int enc)
{
    switch (enc) {
    case PvmDataDefault:
        return COLLS_ENC_DEFAULT;
    case PvmDataRaw:
        return COLLS_ENC_RAW;
    case PvmDataInPlace:
        return COLLS_ENC_INPLACE;
    default:
        return -1;
    }
}

int
pvm_mkbuf(int encoding)
{
    colls_msg_t *m;
    int enc = pvm_colls_enc(encoding);

    if (enc < 0)
        return pvm__fail("pvm_mkbuf",
                         encoding == PvmDataTrace ? PvmNotImpl : PvmBadParam);
    m = colls_msg_new(enc);
    if (m == NULL)
        return pvm__fail("pvm_mkbuf", PvmNoMem);
    return pvm__buf_add(m, encoding, 0, 0, 0);
}

int
pvm_freebuf(int bufid)
{
    struct pvm__buf *b = pvm__buf_get(bufid);

    if (bufid < 0)
        return pvm__fail("pvm_freebuf", PvmBadParam);
    if (b == NULL)
        return pvm__fail("pvm_freebuf", PvmNoSuchBuf);
    pvm__buf_clear(b);
    if (pvm__task.sbuf == bufid)
        pvm__task.sbuf = 0;
    if (pvm__task.rbuf == bufid)
        pvm__task.rbuf = 0;
    return PvmOk;
}

int
pvm_initsend(int encoding)
{
    int id = pvm_mkbuf(encoding);

    if (id < 0)
        return id;
    if (pvm__task.sbuf > 0)
        pvm_freebuf(pvm__task.sbuf);
    pvm__task.sbuf = id;
    return id;
}

int
pvm_getsbuf(void)
{
    return pvm__task.sbuf;
}

int
pvm_getrbuf(void)
{
    return pvm__task.rbuf;
}

/* Makes bufid the active send (or receive) buffer; returns the old one. */
static int
pvm_setbuf(int *slot, int bufid, const char *call)
{
    int old = *slot;

    if (bufid < 0)
        return pvm__fail(call, PvmBadParam);
    if (bufid > 0 && pvm__buf_get(bufid) == NULL)
        return pvm__fail(call, PvmNoSuchBuf);
    *slot = bufid;
    return old;
}

int
pvm_setsbuf(int bufid)
{
    return pvm_setbuf(&pvm__task.sbuf, bufid, "pvm_setsbuf");
}

int
pvm_setrbuf(int bufid)
{
    return pvm_setbuf(&pvm__task.rbuf, bufid, "pvm_setrbuf");
}

int
pvm_bufinfo(int bufid, int *bytes, int *msgtag, int *tid)
{
    struct pvm__buf *b = pvm__buf_get(bufid);
    colls_status_t st;
    size_t len = 0;

    if (bufid <= 0)
        return pvm__fail("pvm_bufinfo", PvmBadParam);
    if (b == NULL)
        return pvm__fail("pvm_bufinfo", PvmNoSuchBuf);
    if (b->m != NULL && colls_msg_info(b->m, &st) == 0)
        len = st.length;
    else
        len = b->len;
    if (bytes != NULL)
        *bytes = (int)len;
    if (msgtag != NULL)
        *msgtag = b->tag;
    if (tid != NULL)
        *tid = b->src;
    return PvmOk;
}

int
pvm_getminfo(int bufid, struct pvmminfo *info)
{
    struct pvm__buf *b = pvm__buf_get(bufid);

    if (info == NULL)
        return pvm__fail("pvm_getminfo", PvmBadParam);
    if (b == NULL)
        return pvm__fail("pvm_getminfo", PvmNoSuchBuf);
    memset(info, 0, sizeof(*info));
    pvm_bufinfo(bufid, &info->len, &info->tag, &info->src);
    info->enc = b->encoding;
    info->dst = pvm__task.tid;
    return PvmOk;
}

/* ---- datatypes ---------------------------------------------------------- */

int
pvm__dtype(int dt, int *per)
{
    *per = 1;
    switch (dt) {
    case PVM_BYTE:
        return COLLS_INT8;
    case PVM_SHORT:
        return COLLS_INT16;
    case PVM_USHORT:
        return COLLS_UINT16;
    case PVM_INT:
        return COLLS_INT32;
    case PVM_UINT:
        return COLLS_UINT32;
    case PVM_LONG:
        return sizeof(long) == 8 ? COLLS_INT64 : COLLS_INT32;
    case PVM_ULONG:
        return sizeof(long) == 8 ? COLLS_UINT64 : COLLS_UINT32;
    case PVM_FLOAT:
        return COLLS_FLOAT;
    case PVM_DOUBLE:
        return COLLS_DOUBLE;
    case PVM_CPLX:
        *per = 2;
        return COLLS_FLOAT;
    case PVM_DCPLX:
        *per = 2;
        return COLLS_DOUBLE;
    default:
        return -1;
    }
}

size_t
pvm__dtsize(int dt)
{
    static const size_t sz[] = {[PVM_BYTE] = 1,
                                [PVM_SHORT] = sizeof(short),
                                [PVM_INT] = sizeof(int),
                                [PVM_FLOAT] = sizeof(float),
                                [PVM_CPLX] = 2 * sizeof(float),
                                [PVM_DOUBLE] = sizeof(double),
                                [PVM_DCPLX] = 2 * sizeof(double),
                                [PVM_LONG] = sizeof(long),
                                [PVM_USHORT] = sizeof(short),
                                [PVM_UINT] = sizeof(int),
                                [PVM_ULONG] = sizeof(long)};

    if (dt < PVM_BYTE || dt > PVM_ULONG)
        return 0;
    return sz[dt];
}

/* ---- packing ------------------------------------------------------------ */

/* The active send buffer's message, or NULL with *err set. */
static colls_msg_t *
pvm_sendmsg(int *err)
{
    struct pvm__buf *b = pvm__buf_get(pvm__task.sbuf);

    if (b == NULL) {
        *err = PvmNoBuf;
        return NULL;
    }
    return b->m;
}

/*
 * Packs nitem elements of PVM datatype dt (element size esz bytes) from
 * p, every stride-th one.  0 or a PVM code (reported as call).
 */
static int
pvm_pack(const char *call, int dt, const void *p, int nitem, int stride)
{
    colls_msg_t *m;
    const char *src = p;
    char *tmp;
    size_t esz = pvm__dtsize(dt), i;
    int per, cd = pvm__dtype(dt, &per), err = 0, rc;
    struct pvm__buf *b;

    if (nitem < 0 || stride < 1 || (p == NULL && nitem > 0))
        return pvm__fail(call, PvmBadParam);
    if ((m = pvm_sendmsg(&err)) == NULL)
        return pvm__fail(call, err);
    if (dt == PVM_BYTE)
        cd = COLLS_BYTE;
    if (nitem == 0)
        return PvmOk;
    b = pvm__buf_get(pvm__task.sbuf);
    if (stride == 1) {
        rc = colls_pack(m, cd, p, (size_t)nitem * (size_t)per);
    } else if (b->encoding == PvmDataInPlace) {
        rc = 0;
        for (i = 0; i < (size_t)nitem && rc == 0; i++)
            rc = colls_pack(m, cd, src + i * (size_t)stride * esz, (size_t)per);
    } else {
        tmp = malloc((size_t)nitem * esz);
        if (tmp == NULL)
            return pvm__fail(call, PvmNoMem);
        for (i = 0; i < (size_t)nitem; i++)
            memcpy(tmp + i * esz, src + i * (size_t)stride * esz, esz);
        rc = colls_pack(m, cd, tmp, (size_t)nitem * (size_t)per);
        free(tmp);
    }
    return rc < 0 ? pvm__fail(call, pvm__code(rc)) : PvmOk;
}

/* Unpacks nitem elements of dt into p, every stride-th slot. */
static int
pvm_unpack(const char *call, int dt, void *p, int nitem, int stride)
{
    struct pvm__buf *b = pvm__buf_get(pvm__task.rbuf);
    char *dst = p, *tmp;
    size_t esz = pvm__dtsize(dt), i;
    int per, cd = pvm__dtype(dt, &per), rc;

    if (nitem < 0 || stride < 1 || (p == NULL && nitem > 0))
        return pvm__fail(call, PvmBadParam);
    if (b == NULL || b->m == NULL)
        return pvm__fail(call, PvmNoBuf);
    if (dt == PVM_BYTE)
        cd = COLLS_BYTE;
    if (nitem == 0)
        return PvmOk;
    if (stride == 1) {
        rc = colls_unpack(b->m, cd, p, (size_t)nitem * (size_t)per);
    } else {
        tmp = malloc((size_t)nitem * esz);
        if (tmp == NULL)
            return pvm__fail(call, PvmNoMem);
        rc = colls_unpack(b->m, cd, tmp, (size_t)nitem * (size_t)per);
        if (rc == 0)
            for (i = 0; i < (size_t)nitem; i++)
                memcpy(dst + i * (size_t)stride * esz, tmp + i * esz, esz);
        free(tmp);
    }
    if (rc == COLLS_ETRUNC)
        return pvm__fail(call, PvmNoData);
    return rc < 0 ? pvm__fail(call, pvm__code(rc)) : PvmOk;
}

#define PVM_PKFUNCS(suffix, ctype, dt)                                         \
    int pvm_pk##suffix(ctype *p, int nitem, int stride)                        \
    {                                                                          \
        return pvm_pack("pvm_pk" #suffix, dt, p, nitem, stride);               \
    }                                                                          \
    int pvm_upk##suffix(ctype *p, int nitem, int stride)                       \
    {                                                                          \
        return pvm_unpack("pvm_upk" #suffix, dt, p, nitem, stride);            \
    }

/* clang-format off */
PVM_PKFUNCS(byte, char, PVM_BYTE)
PVM_PKFUNCS(short, short, PVM_SHORT)
PVM_PKFUNCS(ushort, unsigned short, PVM_USHORT)
PVM_PKFUNCS(int, int, PVM_INT)
PVM_PKFUNCS(uint, unsigned int, PVM_UINT)
PVM_PKFUNCS(long, long, PVM_LONG)
PVM_PKFUNCS(ulong, unsigned long, PVM_ULONG)
PVM_PKFUNCS(float, float, PVM_FLOAT)
PVM_PKFUNCS(double, double, PVM_DOUBLE)
PVM_PKFUNCS(cplx, float, PVM_CPLX)
PVM_PKFUNCS(dcplx, double, PVM_DCPLX)
/* clang-format on */

/*
 * Packs one item of dt held in the caller's variable v (size bytes): an
 * in-place buffer refers to what it packs until it is sent, so there the
 * value is first copied into memory the buffer keeps (and frees).
 */
static int
pvm_pack_value(const char *call, int dt, const void *v, size_t size)
{
    struct pvm__buf *b = pvm__buf_get(pvm__task.sbuf);
    void **no, *keep;

    if (b == NULL)
        return pvm__fail(call, PvmNoBuf);
    if (b->encoding != PvmDataInPlace)
        return pvm_pack(call, dt, v, 1, 1);
    no = realloc(b->owned, (size_t)(b->nowned + 1) * sizeof(*no));
    if (no != NULL)
        b->owned = no;
    if (no == NULL || (keep = malloc(size)) == NULL)
        return pvm__fail(call, PvmNoMem);
    memcpy(keep, v, size);
    b->owned[b->nowned++] = keep;
    return pvm_pack(call, dt, keep, 1, 1);
}

/* A string: its length with the NUL as an int, then those bytes. */
static int
pvm_pack_str(const char *call, const char *cp)
{
    int n, rc;

    if (cp == NULL)
        return pvm__fail(call, PvmBadParam);
    n = (int)strlen(cp) + 1;
    rc = pvm_pack_value(call, PVM_INT, &n, sizeof(n));
    if (rc < 0)
        return rc;
    return pvm_pack(call, PVM_BYTE, cp, n, 1);
}

static int
pvm_unpack_str(const char *call, char *cp)
{
    int n, rc;

    if (cp == NULL)
        return pvm__fail(call, PvmBadParam);
    rc = pvm_unpack(call, PVM_INT, &n, 1, 1);
    if (rc < 0)
        return rc;
    if (n < 1)
        return pvm__fail(call, PvmBadMsg);
    rc = pvm_unpack(call, PVM_BYTE, cp, n, 1);
    if (rc == 0)
        cp[n - 1] = '\0';
    return rc;
}

int
pvm_pkstr(char *cp)
{
    return pvm_pack_str("pvm_pkstr", cp);
}

int
pvm_upkstr(char *cp)
{
    return pvm_unpack_str("pvm_upkstr", cp);
}

/* ---- pvm_packf, pvm_unpackf --------------------------------------------- */

/*
 * One conversion of a pvm_packf / pvm_unpackf format, PVM 3.4's grammar:
 *
 *   format : [ "%+" ] { conversion | any other character (skipped) }
 *   conversion : '%' [count] [ '.' stride ] { 'h' | 'l' | 'u' } type
 *   count, stride : digits, or '*' (taken from the next int argument)
 *   type : 'c' bytes, 'd' integers (h short, l long, u unsigned),
 *          'f' floats (l double), 'x' complex (l double complex),
 *          's' a string
 *
 * "%+" (packing only) takes an int, the encoding of a new send buffer
 * (pvm_initsend).  Packing, an item without count and stride is passed
 * by value (c, d: int, long, unsigned, unsigned long; f: double), any
 * other by address; x and s are always addresses.  Unpacking takes
 * addresses only.
 */
struct pvm_conv {
    int type;   /* c d f x s */
    int dt;     /* PVM_* (0 for s) */
    int byval;  /* no count nor stride given */
    int count;  /* 1 by default */
    int stride; /* 1 by default */
};

/* A count or stride at *fp: digits or '*' (from ap); -1 if none is
   there, -2 if it is malformed. */
static int
pvm_conv_num(const char **fp, va_list *ap)
{
    const char *f = *fp;
    long v = 0;

    if (*f == '*') {
        *fp = f + 1;
        v = va_arg(*ap, int);
        return v < 0 ? -2 : (int)v;
    }
    if (*f < '0' || *f > '9')
        return -1;
    while (*f >= '0' && *f <= '9') {
        v = v * 10 + (*f++ - '0');
        if (v > 0x7fffffff)
            return -2;
    }
    *fp = f;
    return (int)v;
}

/* Parses the conversion after a '%' at *fp into cv; 0, or -1 when it is
   malformed. */
static int
pvm_conv_parse(const char **fp, va_list *ap, struct pvm_conv *cv)
{
    int ish = 0, isl = 0, isu = 0, n;

    memset(cv, 0, sizeof(*cv));
    n = pvm_conv_num(fp, ap);
    if (n == -2)
        return -1;
    cv->count = n < 0 ? 1 : n;
    cv->byval = n < 0;
    if (**fp == '.') {
        (*fp)++;
        n = pvm_conv_num(fp, ap);
        if (n < 1)
            return -1;
        cv->stride = n;
        cv->byval = 0;
    } else {
        cv->stride = 1;
    }
    for (;; (*fp)++) {
        if (**fp == 'h')
            ish = 1;
        else if (**fp == 'l')
            isl = 1;
        else if (**fp == 'u')
            isu = 1;
        else
            break;
    }
    cv->type = **fp;
    if (cv->type != '\0')
        (*fp)++;
    switch (cv->type) {
    case 'c':
        cv->dt = PVM_BYTE;
        break;
    case 'd':
        cv->dt = ish   ? (isu ? PVM_USHORT : PVM_SHORT)
                 : isl ? (isu ? PVM_ULONG : PVM_LONG)
                       : (isu ? PVM_UINT : PVM_INT);
        break;
    case 'f':
        cv->dt = isl ? PVM_DOUBLE : PVM_FLOAT;
        break;
    case 'x':
        cv->dt = isl ? PVM_DCPLX : PVM_CPLX;
        cv->byval = 0;
        break;
    case 's':
        cv->byval = 0;
        break;
    default:
        return -1;
    }
    return 0;
}

/* Packs a value of cv's type taken from ap (promoted as C passes it). */
static int
pvm_packf_value(const struct pvm_conv *cv, va_list *ap)
{
    union {
        char c;
        short h;
        unsigned short uh;
        int i;
        unsigned int ui;
        long l;
        unsigned long ul;
        float f;
        double d;
    } v;

    switch (cv->dt) {
    case PVM_BYTE:
        v.c = (char)va_arg(*ap, int);
        break;
    case PVM_SHORT:
        v.h = (short)va_arg(*ap, int);
        break;
    case PVM_USHORT:
        v.uh = (unsigned short)va_arg(*ap, unsigned int);
        break;
    case PVM_INT:
        v.i = va_arg(*ap, int);
        break;
    case PVM_UINT:
        v.ui = va_arg(*ap, unsigned int);
        break;
    case PVM_LONG:
        v.l = va_arg(*ap, long);
        break;
    case PVM_ULONG:
        v.ul = va_arg(*ap, unsigned long);
        break;
    case PVM_FLOAT:
        v.f = (float)va_arg(*ap, double);
        break;
    default: /* PVM_DOUBLE */
        v.d = va_arg(*ap, double);
        break;
    }
    return pvm_pack_value("pvm_packf", cv->dt, &v, pvm__dtsize(cv->dt));
}

/* pvm_packf (pack 1) and pvm_unpackf (pack 0). */
static int
pvm_format(int pack, const char *fmt, va_list *ap)
{
    const char *call = pack ? "pvm_packf" : "pvm_unpackf", *f = fmt;
    struct pvm_conv cv;
    int rc = PvmOk;

    if (fmt == NULL)
        return pvm__fail(call, PvmBadParam);
    if (f[0] == '%' && f[1] == '+') {
        f += 2;
        if (pack) /* unpacking has nothing to do for it */
            rc = pvm_initsend(va_arg(*ap, int));
        rc = rc < 0 ? rc : PvmOk;
    }
    while (rc == PvmOk && *f != '\0') {
        if (*f++ != '%')
            continue;
        if (pvm_conv_parse(&f, ap, &cv) != 0)
            rc = pvm__fail(call, PvmBadParam);
        else if (cv.type == 's' && pack)
            rc = pvm_pack_str(call, va_arg(*ap, const char *));
        else if (cv.type == 's')
            rc = pvm_unpack_str(call, va_arg(*ap, char *));
        else if (pack && cv.byval)
            rc = pvm_packf_value(&cv, ap);
        else if (pack)
            rc = pvm_pack(call, cv.dt, va_arg(*ap, const void *), cv.count,
                          cv.stride);
        else
            rc = pvm_unpack(call, cv.dt, va_arg(*ap, void *), cv.count,
                            cv.stride);
    }
    return rc;
}

int
pvm_packf(const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = pvm_format(1, fmt, &ap);
    va_end(ap);
    return rc;
}

int
pvm_unpackf(const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = pvm_format(0, fmt, &ap);
    va_end(ap);
    return rc;
}
