/*
 * msg.c -- packed message buffers (PVM style): pack typed items with an
 * encoding, send the whole as one message, receive, unpack in order.
 *
 * Encodings on the wire:
 *   DEFAULT  XDR (proto/dtype.h): big-endian, 4-byte units; COLLS_BYTE is
 *            padded to 4 per pack call, so unpack with the same calls.
 *   RAW      native bytes appended to the buffer; the envelope carries the
 *            sender's byte order and unpack converts when it differs.
 *   INPLACE  colls_pack() records (pointer, length) only; colls_msg_send()
 *            hands those pointers to the kernel (writev) without a packing
 *            copy.  The packed memory must stay valid and unchanged until
 *            colls_msg_send() returns, and a message being built with
 *            INPLACE cannot be unpacked (COLLS_EINVAL).  On the wire it is
 *            RAW and the receiver unpacks it as RAW.
 *
 * Unpacking past the end of the message returns COLLS_ETRUNC and consumes
 * nothing; XDR data that is not valid for the requested type (a widened
 * value out of range, non-zero padding) returns COLLS_EPROTO.  That is the
 * only type check there is: the wire carries no per-item types.
 *
 * A received message (colls_msg_recv) remembers its source, tag, encoding,
 * byte order and the route it came by; sending it again forwards the same
 * bytes with the same encoding on that route (an echo answers on the path
 * the message came by).  Received messages cannot be packed (COLLS_EINVAL).
 *
 * API layer (internal.h): sends and receives through p2p.c; calls the
 * connection layer (conn.h) only for the loop.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct colls_msg_seg {
    const void *p;
    size_t len;
};

struct colls_msg {
    int encoding;
    int route; /* COLLS_ROUTE_*, or -1: the task's */
    int received;
    int byte_order; /* of the bytes in data */
    colls_tid_t src;
    int tag;
    uint8_t *data; /* DEFAULT / RAW / received payload */
    size_t len, cap;
    size_t rd;                  /* unpack offset into data */
    struct colls_msg_seg *segs; /* INPLACE references */
    size_t nsegs, capsegs;
    size_t seglen;
};

colls_msg_t *
colls_msg_new(int encoding)
{
    colls_msg_t *m;

    if (encoding != COLLS_ENC_DEFAULT && encoding != COLLS_ENC_RAW &&
        encoding != COLLS_ENC_INPLACE)
        return NULL;
    m = calloc(1, sizeof(*m));
    if (m == NULL)
        return NULL;
    m->encoding = encoding;
    m->route = -1;
    m->byte_order = dtype_native_order();
    return m;
}

/* Makes room for extra bytes at the end of m->data. */
static int
msg_reserve(colls_msg_t *m, size_t extra)
{
    size_t ncap;
    uint8_t *nd;

    if (extra > SIZE_MAX - m->len)
        return COLLS_EMSGSIZE;
    if (m->len + extra <= m->cap)
        return 0;
    ncap = m->cap ? m->cap : 256;
    while (ncap < m->len + extra) {
        if (ncap > SIZE_MAX / 2) {
            ncap = m->len + extra;
            break;
        }
        ncap *= 2;
    }
    nd = realloc(m->data, ncap);
    if (nd == NULL)
        return COLLS_ENOMEM;
    m->data = nd;
    m->cap = ncap;
    return 0;
}

/* Appends count items of dtype from data in m's encoding. */
int
colls_pack(colls_msg_t *m, int dtype, const void *data, size_t count)
{
    size_t sz, n;
    int rc;

    if (m == NULL || m->received || (data == NULL && count > 0))
        return COLLS_EINVAL;
    if (!dtype_valid(dtype))
        return COLLS_EDTYPE;
    sz = dtype_size(dtype);
    if (count > SIZE_MAX / sz)
        return COLLS_EMSGSIZE;
    if (count == 0)
        return 0;
    switch (m->encoding) {
    case COLLS_ENC_DEFAULT:
        rc = xdr_size(dtype, count, &n);
        if (rc < 0)
            return rc;
        rc = msg_reserve(m, n);
        if (rc < 0)
            return rc;
        rc = xdr_encode(dtype, data, count, m->data + m->len, m->cap - m->len,
                        &n);
        if (rc < 0)
            return rc;
        m->len += n;
        return 0;
    case COLLS_ENC_RAW:
        rc = msg_reserve(m, count * sz);
        if (rc < 0)
            return rc;
        memcpy(m->data + m->len, data, count * sz);
        m->len += count * sz;
        return 0;
    default: /* INPLACE */
        if (m->seglen > SIZE_MAX - count * sz)
            return COLLS_EMSGSIZE;
        if (m->nsegs == m->capsegs) {
            size_t ncap = m->capsegs ? m->capsegs * 2 : 8;
            struct colls_msg_seg *ns = realloc(m->segs, ncap * sizeof(*ns));
            if (ns == NULL)
                return COLLS_ENOMEM;
            m->segs = ns;
            m->capsegs = ncap;
        }
        m->segs[m->nsegs].p = data;
        m->segs[m->nsegs].len = count * sz;
        m->nsegs++;
        m->seglen += count * sz;
        return 0;
    }
}

/* Takes the next count items of dtype out of m into data. */
int
colls_unpack(colls_msg_t *m, int dtype, void *data, size_t count)
{
    size_t avail, need, used;
    int rc;

    if (m == NULL || (data == NULL && count > 0))
        return COLLS_EINVAL;
    if (!dtype_valid(dtype))
        return COLLS_EDTYPE;
    if (m->encoding == COLLS_ENC_INPLACE && !m->received)
        return COLLS_EINVAL;
    if (count == 0)
        return 0;
    avail = m->len - m->rd;
    if (m->encoding == COLLS_ENC_DEFAULT) {
        rc = xdr_size(dtype, count, &need);
        if (rc < 0)
            return rc;
        if (need > avail)
            return COLLS_ETRUNC;
        rc = xdr_decode(dtype, m->data + m->rd, avail, data, count, &used);
        if (rc < 0)
            return rc;
        m->rd += used;
        return 0;
    }
    if (count > SIZE_MAX / dtype_size(dtype))
        return COLLS_ETRUNC;
    need = count * dtype_size(dtype);
    if (need > avail)
        return COLLS_ETRUNC;
    rc = raw_decode(dtype, m->byte_order, m->data + m->rd, avail, data, count);
    if (rc < 0)
        return rc;
    m->rd += need;
    return 0;
}

int
colls_msg_set_route(colls_msg_t *m, int route)
{
    if (m == NULL ||
        (route != COLLS_ROUTE_DEFAULT && route != COLLS_ROUTE_DIRECT))
        return COLLS_EINVAL;
    m->route = route;
    return 0;
}

/*
 * The payload of m as buffers for uv_write (not copied): one for a packed
 * or received message, one per pack call for INPLACE.  *bufs is allocated
 * (free it); *len is the total.  0 or COLLS_ENOMEM.
 */
int
colls__msg_bufs(colls_msg_t *m, uv_buf_t **bufs, unsigned *nbufs, size_t *len)
{
    size_t i,
        n = m->encoding == COLLS_ENC_INPLACE && !m->received ? m->nsegs : 1;
    uv_buf_t *b = calloc(n ? n : 1, sizeof(*b));

    if (b == NULL)
        return COLLS_ENOMEM;
    if (m->encoding == COLLS_ENC_INPLACE && !m->received) {
        for (i = 0; i < n; i++)
            b[i] = uv_buf_init((char *)(uintptr_t)m->segs[i].p,
                               (unsigned)m->segs[i].len);
        *len = m->seglen;
    } else {
        b[0] = uv_buf_init((char *)m->data, (unsigned)m->len);
        n = m->len > 0 ? 1 : 0;
        *len = m->len;
    }
    *bufs = b;
    *nbufs = (unsigned)n;
    return 0;
}

int
colls__msg_encoding(const colls_msg_t *m)
{
    return m->encoding;
}

int
colls__msg_route(const colls_msg_t *m)
{
    return m->route;
}

int
colls__msg_order(const colls_msg_t *m)
{
    return m->byte_order;
}

/* Sends m to dst; returns once it is written (INPLACE memory free again). */
int
colls_msg_send(colls_t *c, colls_tid_t dst, int tag, colls_msg_t *m)
{
    struct colls_req r;
    uv_buf_t *bufs;
    unsigned nbufs, i;
    size_t len;
    int rc;

    if (c == NULL || m == NULL || tag == COLLS__TAG_DCOLL)
        return COLLS_EINVAL;
    if (m->encoding == COLLS_ENC_INPLACE && !m->received)
        for (i = 0; i < m->nsegs; i++)
            if (m->segs[i].len > UINT32_MAX)
                return COLLS_EMSGSIZE;
    if (m->len > UINT32_MAX)
        return COLLS_EMSGSIZE;
    rc = colls__msg_bufs(m, &bufs, &nbufs, &len);
    if (rc < 0)
        return rc;
    memset(&r, 0, sizeof(r));
    r.c = c;
    r.kind = COLLS__REQ_SEND;
    rc = colls__send_data(c, dst, tag, m->encoding, m->byte_order,
                          m->route >= 0 ? m->route : c->route, bufs, nbufs, &r);
    if (rc == 0 || r.pending > 0)
        rc = colls__send_wait(&r);
    free(bufs);
    return rc;
}

/*
 * A message object around received message rm (its data is taken over;
 * rm is freed).  NULL when out of memory (rm is freed all the same).
 */
colls_msg_t *
colls__msg_from_rmsg(struct colls__rmsg *rm)
{
    colls_msg_t *m = calloc(1, sizeof(*m));

    if (m == NULL) {
        colls__rmsg_free(rm);
        return NULL;
    }
    m->encoding = rm->encoding;
    m->route = rm->route;
    m->received = 1;
    m->byte_order = rm->byte_order;
    m->src = rm->src;
    m->tag = rm->tag;
    m->data = rm->data;
    m->len = m->cap = rm->len;
    free(rm);
    return m;
}

/* Receives the next message matching src/tag as a message object. */
int
colls_msg_recv(colls_t *c, colls_tid_t src, int tag, colls_msg_t **out)
{
    struct colls_req r;
    colls_msg_t *m;
    int rc;

    if (c == NULL || out == NULL)
        return COLLS_EINVAL;
    *out = NULL;
    memset(&r, 0, sizeof(r));
    r.c = c;
    r.kind = COLLS__REQ_RECV;
    r.src = src;
    r.tag = tag;
    r.want_msg = 1;
    list_init(&r.link);
    colls__recv_post(c, &r);
    rc = colls__req_wait(&r);
    if (rc < 0)
        return rc;
    m = colls__msg_from_rmsg(r.msg);
    if (m == NULL)
        return COLLS_ENOMEM;
    *out = m;
    return 0;
}

/* Source, tag and packed length of m (source 0 and tag 0 if built here). */
int
colls_msg_info(const colls_msg_t *m, colls_status_t *st)
{
    if (m == NULL || st == NULL)
        return COLLS_EINVAL;
    st->source = m->src;
    st->tag = m->tag;
    st->length =
        m->encoding == COLLS_ENC_INPLACE && !m->received ? m->seglen : m->len;
    return 0;
}

void
colls_msg_free(colls_msg_t *m)
{
    if (m == NULL)
        return;
    free(m->data);
    free(m->segs);
    free(m);
}
