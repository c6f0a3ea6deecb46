/*
 * udp.c -- the daemon's one UDP socket, with batched system calls (udp.h).
 *
 * Sending: udp_send copies each datagram into an arena and queues a
 * struct mmsghdr for it; udp_send_ref copies only the first piece (a
 * header) and keeps a pointer to the rest (the caller's data), so the
 * kernel reads the data straight from where it lives.  udp_flush pushes
 * the queue out with sendmmsg() (sendto() in a loop where configure found
 * no sendmmsg).  With UDP GSO (HAVE_DECL_UDP_SEGMENT, and the kernel
 * accepts it) a run of datagrams to the same address, all of one size
 * but the last, which may be shorter, goes out as one message with a
 * UDP_SEGMENT control message: one trip through the stack for up to
 * UDP_GSO_MAX datagrams.  The kernel cuts the message's bytes into
 * segments of that size whatever the iovec boundaries are (it copies the
 * iovec into the skb first), so each message's iovec is simply the
 * datagrams' pieces in order.  A socket that refuses GSO once (EIO,
 * EINVAL) falls back to plain datagrams.
 *
 * Invariants: queued datagrams are [shead, sn) of out[]; shead > 0 only
 * after a flush that would have blocked.  The arena is reset when the
 * queue is empty.  Referenced data is only referenced until udp_flush
 * returns: what the kernel did not take by then is copied into the
 * arena (which grows for it), so a caller may free or reuse its data
 * once udp_flush has returned, whatever it returned.
 *
 * Receiving: recvmmsg() into UDP_BATCH buffers of the largest datagram
 * size (recvfrom() in a loop without it); truncated datagrams are
 * dropped.  With UDP_GRO the kernel may hand over several datagrams of
 * one size (the last may be shorter) in one buffer, with their size in a
 * control message: they are split again before the callback.  On
 * loopback a GSO send then reaches the receiver in one piece.  Errors
 * other than "would block" drop the datagram concerned:
 * UDP is unreliable and the transport above retransmits.
 *
 * Receive-buffer drops: with SO_RXQ_OVFL the kernel puts its count of
 * datagrams dropped on this socket (a full receive buffer) in a control
 * message of every receive once the count is non-zero; udp_rxq_ovfl
 * turns the 32-bit running count into u->rcvbuf_drops (64 bits, wrap
 * handled by taking differences).  The count is stamped on a datagram
 * when it is queued, so drops show with the next datagram that arrives
 * after them (heartbeats bring one within --heartbeat).
 *
 * Platform specifics (GSO, GRO, sendmmsg, recvmmsg) are small functions
 * chosen once at file level by what configure found (udp_gso_cmsg,
 * udp_gro_enable, udp_gro_size, udp_sendmmsg, udp_recvmmsg); no function
 * has an #if inside.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "colls.h"
#include "daemon/udp.h"

#define UDP_BATCH     64                  /* datagrams per system call */
#define UDP_ARENA     (UDP_BATCH * 65536) /* bytes of queued datagrams */
#define UDP_DGRAM_MAX 65536               /* receive buffer per datagram */
/* Receive buffers per recvmmsg() with GRO, whose buffers may each hold
   up to 64 KiB of coalesced datagrams: 8 keep a batch (512 KiB) in the
   CPU's cache while the transport opens and copies it, where 64 would
   have the first ones evicted by the last (UDP_BATCH without GRO). */
#define UDP_GRO_BATCH     8
#define UDP_SOCKBUF       (4 << 20)
#define UDP_GSO_MAX       64    /* segments per GSO message */
#define UDP_GSO_BYTES     65000 /* bytes per GSO message */
#define DGRAM_MAX_PAYLOAD 65507 /* largest UDP payload, IPv4 */

#if defined(HAVE_DECL_UDP_SEGMENT) && HAVE_DECL_UDP_SEGMENT
#define UDP_HAVE_GSO 1
#else
#define UDP_HAVE_GSO 0
#endif
#if UDP_HAVE_GSO && defined(UDP_GRO) && defined(HAVE_RECVMMSG)
#define UDP_HAVE_GRO 1
#else
#define UDP_HAVE_GRO 0
#endif

/* One queued datagram: arena bytes [off, off + alen_) then, if ref_len
   > 0, ref_len bytes at ref (the caller's) or at arena offset ref_off. */
struct udp_out {
    size_t off, len;    /* len: the whole datagram */
    size_t head;        /* bytes of it at arena offset off */
    const uint8_t *ref; /* the rest, referenced; NULL: at ref_off */
    size_t ref_off;
    struct sockaddr_storage addr;
    socklen_t alen;
};

struct udp {
    int fd;
    int gso; /* 1 while the kernel takes UDP_SEGMENT */
    int gro; /* 1 if the kernel may coalesce received datagrams */
    char name[64];
    struct udp_out out[UDP_BATCH];
    unsigned shead, sn;
    size_t soff;
    uint8_t *arena;
    size_t arena_len;
    int nref; /* queued datagrams with referenced data */
    uint8_t *rbuf;
    struct sockaddr_storage raddr[UDP_BATCH];
    uint32_t ovfl_seen;    /* the kernel's last drop count (SO_RXQ_OVFL) */
    uint64_t rcvbuf_drops; /* its increments, summed */
};

/* ---- platform specifics, chosen at file level ------------------------- */

#if UDP_HAVE_GSO
/* Fills the UDP_SEGMENT control message for segments of seg bytes. */
static void
udp_gso_cmsg(struct msghdr *mh, char *cbuf, size_t clen, uint16_t seg)
{
    struct cmsghdr *c;

    memset(cbuf, 0, clen);
    mh->msg_control = cbuf;
    mh->msg_controllen = clen;
    c = CMSG_FIRSTHDR(mh);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof seg);
    memcpy(CMSG_DATA(c), &seg, sizeof seg);
}
#else
/* No GSO: u->gso stays 0, so no run of datagrams is ever built. */
static void
udp_gso_cmsg(struct msghdr *mh, char *cbuf, size_t clen, uint16_t seg)
{
    (void)mh;
    (void)cbuf;
    (void)clen;
    (void)seg;
}
#endif

/* The data of mh's control message (level, type) of at least len bytes,
   or NULL.  Unused where neither GRO nor SO_RXQ_OVFL exists. */
static __attribute__((unused)) const void *
udp_cmsg_find(struct msghdr *mh, int level, int type, size_t len)
{
    struct cmsghdr *c;

    for (c = CMSG_FIRSTHDR(mh); c != NULL; c = CMSG_NXTHDR(mh, c))
        if (c->cmsg_level == level && c->cmsg_type == type &&
            c->cmsg_len >= CMSG_LEN(len))
            return CMSG_DATA(c);
    return NULL;
}

#if UDP_HAVE_GRO
/* Asks the kernel to coalesce received datagrams; 1 if it will. */
static int
udp_gro_enable(int fd)
{
    int one = 1;

    return setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof one) == 0;
}

/* The segment size of a coalesced receive, or 0 for a single datagram. */
static size_t
udp_gro_size(struct msghdr *mh)
{
    const void *p = udp_cmsg_find(mh, SOL_UDP, UDP_GRO, sizeof(int));
    int seg;

    if (p == NULL)
        return 0;
    memcpy(&seg, p, sizeof seg);
    return seg > 0 ? (size_t)seg : 0;
}

/* Tells the kernel not to coalesce received datagrams. */
static void
udp_gro_disable(int fd)
{
    int zero = 0;

    (void)setsockopt(fd, SOL_UDP, UDP_GRO, &zero, sizeof zero);
}
#else
/* No GRO: every receive is one datagram. */
static int
udp_gro_enable(int fd)
{
    (void)fd;
    return 0;
}

static void
udp_gro_disable(int fd)
{
    (void)fd;
}

static size_t
udp_gro_size(struct msghdr *mh)
{
    (void)mh;
    return 0;
}
#endif

#ifdef SO_RXQ_OVFL
/* Asks the kernel for its drop count on every receive; 1 if it will. */
static int
udp_ovfl_enable(int fd)
{
    int one = 1;

    return setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one) == 0;
}

/* The drop count in a receive's control messages; 0 if none came. */
static int
udp_ovfl_count(struct msghdr *mh, uint32_t *count)
{
    const void *p =
        udp_cmsg_find(mh, SOL_SOCKET, SO_RXQ_OVFL, sizeof(uint32_t));

    if (p == NULL)
        return 0;
    memcpy(count, p, sizeof *count);
    return 1;
}
#else
/* No SO_RXQ_OVFL: drops are not counted. */
static int
udp_ovfl_enable(int fd)
{
    (void)fd;
    return 0;
}

static int
udp_ovfl_count(struct msghdr *mh, uint32_t *count)
{
    (void)mh;
    (void)count;
    return 0;
}
#endif

#ifdef HAVE_SENDMMSG
/* Sends k messages in one system call; how many went, or -1 (errno). */
static int
udp_sendmmsg(int fd, struct mmsghdr *mm, unsigned k)
{
    return sendmmsg(fd, mm, k, MSG_DONTWAIT);
}
#else
/* sendmmsg as a loop of sendmsg: how many went, or -1 if none did. */
static int
udp_sendmmsg(int fd, struct mmsghdr *mm, unsigned k)
{
    int n;

    for (n = 0; n < (int)k; n++)
        if (sendmsg(fd, &mm[n].msg_hdr, MSG_DONTWAIT) < 0)
            break;
    return n > 0 ? n : -1;
}
#endif

#ifdef HAVE_RECVMMSG
/* Receives up to k messages in one system call; how many, or -1. */
static int
udp_recvmmsg(int fd, struct mmsghdr *mm, unsigned k)
{
    return recvmmsg(fd, mm, k, MSG_DONTWAIT, NULL);
}
#else
/* recvmmsg as a loop of recvmsg: how many came, or -1 if none did. */
static int
udp_recvmmsg(int fd, struct mmsghdr *mm, unsigned k)
{
    int n;

    for (n = 0; n < (int)k; n++) {
        ssize_t r = recvmsg(fd, &mm[n].msg_hdr, MSG_DONTWAIT);

        if (r < 0)
            break;
        mm[n].msg_len = (unsigned)r;
    }
    return n > 0 ? n : -1;
}
#endif

/* ---- the socket --------------------------------------------------------- */

/* Asks for a large buffer: the *BUFFORCE option (root) first. */
static void
udp_bufsize(int fd, int force_opt, int opt)
{
    int v = UDP_SOCKBUF;

    if (setsockopt(fd, SOL_SOCKET, force_opt, &v, sizeof v) == 0)
        return;
    (void)setsockopt(fd, SOL_SOCKET, opt, &v, sizeof v);
}

/* Parses "a.b.c.d:port" (port 0..65535). */
static int
udp_parse(const char *s, struct sockaddr_in *sin)
{
    const char *colon = strrchr(s, ':');
    char host[64], *end;
    unsigned long port;

    if (colon == NULL || (size_t)(colon - s) >= sizeof host)
        return COLLS_EINVAL;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    errno = 0;
    port = strtoul(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || errno != 0 || port > 65535)
        return COLLS_EINVAL;
    memset(sin, 0, sizeof *sin);
    sin->sin_family = AF_INET;
    sin->sin_port = htons((uint16_t)port);
    if (host[0] == '\0' || strcmp(host, "*") == 0)
        sin->sin_addr.s_addr = htonl(INADDR_ANY);
    else if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
        return COLLS_EINVAL;
    return 0;
}

int
udp_open(const char *addr_port, struct udp **out)
{
    struct sockaddr_in sin;
    socklen_t slen = sizeof sin;
    struct udp *u;
    char ip[INET_ADDRSTRLEN];
    int rc;

    *out = NULL;
    if (addr_port == NULL || (rc = udp_parse(addr_port, &sin)) != 0)
        return COLLS_EINVAL;
    u = calloc(1, sizeof *u);
    if (u == NULL)
        return COLLS_ENOMEM;
    u->fd = -1;
    u->arena_len = UDP_ARENA;
    u->arena = malloc(u->arena_len);
    u->rbuf = malloc((size_t)UDP_BATCH * UDP_DGRAM_MAX);
    if (u->arena == NULL || u->rbuf == NULL) {
        rc = COLLS_ENOMEM;
        goto fail;
    }
    u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (u->fd < 0) {
        rc = -errno;
        goto fail;
    }
    udp_bufsize(u->fd, SO_SNDBUFFORCE, SO_SNDBUF);
    udp_bufsize(u->fd, SO_RCVBUFFORCE, SO_RCVBUF);
    if (bind(u->fd, (struct sockaddr *)&sin, sizeof sin) != 0 ||
        getsockname(u->fd, (struct sockaddr *)&sin, &slen) != 0) {
        rc = -errno;
        goto fail;
    }
    u->gso = UDP_HAVE_GSO;
    u->gro = udp_gro_enable(u->fd);
    (void)udp_ovfl_enable(u->fd);
    inet_ntop(AF_INET, &sin.sin_addr, ip, sizeof ip);
    snprintf(u->name, sizeof u->name, "%s:%u", ip, ntohs(sin.sin_port));
    *out = u;
    return 0;
fail:
    if (u->fd >= 0)
        close(u->fd);
    free(u->arena);
    free(u->rbuf);
    free(u);
    return rc;
}

void
udp_close(struct udp *u)
{
    if (u == NULL)
        return;
    close(u->fd);
    free(u->arena);
    free(u->rbuf);
    free(u);
}

int
udp_fd(const struct udp *u)
{
    return u->fd;
}

const char *
udp_local_name(const struct udp *u)
{
    return u->name;
}

int
udp_pending(const struct udp *u)
{
    return u->shead < u->sn;
}

/* 1 if errno says the socket buffer is full. */
static int
udp_would_block(int e)
{
    return e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS;
}

/*
 * How many datagrams from index i on can go as one GSO message: same
 * address, same length except a shorter last one.
 */
static unsigned
udp_gso_run(const struct udp *u, unsigned i)
{
    const struct udp_out *a = &u->out[i];
    size_t total = a->len;
    unsigned n = 1;

    if (!u->gso)
        return 1;
    while (i + n < u->sn && n < UDP_GSO_MAX) {
        const struct udp_out *b = &u->out[i + n];
        if (b->len > a->len || b->alen != a->alen ||
            memcmp(&b->addr, &a->addr, a->alen) != 0 ||
            total + b->len > UDP_GSO_BYTES)
            break;
        total += b->len;
        n++;
        if (b->len < a->len)
            break;
    }
    return n;
}

/*
 * Builds up to UDP_BATCH messages from the queue starting at shead.
 * cnt[k] gets the datagrams in message k.  Returns the message count.
 */
static unsigned
udp_build(struct udp *u, struct mmsghdr *mm, struct iovec *iov, unsigned *cnt,
          char (*cbuf)[CMSG_SPACE(sizeof(uint16_t))])
{
    unsigned i = u->shead, k = 0, v = 0;

    while (i < u->sn) {
        struct udp_out *o = &u->out[i];
        unsigned n = udp_gso_run(u, i), j, v0 = v;

        for (j = 0; j < n; j++) {
            const struct udp_out *q = &u->out[i + j];

            /* pieces contiguous in the arena share one iovec */
            if (v > v0 && (uint8_t *)iov[v - 1].iov_base + iov[v - 1].iov_len ==
                              u->arena + q->off)
                iov[v - 1].iov_len += q->head;
            else {
                iov[v].iov_base = u->arena + q->off;
                iov[v++].iov_len = q->head;
            }
            if (q->len > q->head) {
                iov[v].iov_base =
                    q->ref != NULL ? (void *)q->ref : u->arena + q->ref_off;
                iov[v++].iov_len = q->len - q->head;
            }
        }
        memset(&mm[k], 0, sizeof mm[k]);
        mm[k].msg_hdr.msg_name = &o->addr;
        mm[k].msg_hdr.msg_namelen = o->alen;
        mm[k].msg_hdr.msg_iov = &iov[v0];
        mm[k].msg_hdr.msg_iovlen = v - v0;
        if (n > 1)
            udp_gso_cmsg(&mm[k].msg_hdr, cbuf[k], sizeof cbuf[k],
                         (uint16_t)o->len);
        cnt[k++] = n;
        i += n;
    }
    return k;
}

/*
 * The kernel would block: copies the referenced data of the datagrams
 * still queued into the arena, so that no reference outlives udp_flush.
 * The arena has room: it holds at most UDP_BATCH datagrams' bytes.
 */
static void
udp_unref(struct udp *u)
{
    unsigned i;

    for (i = u->shead; i < u->sn && u->nref > 0; i++) {
        struct udp_out *o = &u->out[i];
        size_t n = o->len - o->head;

        if (o->ref == NULL)
            continue;
        memcpy(u->arena + u->soff, o->ref, n);
        o->ref = NULL;
        o->ref_off = u->soff;
        u->soff += n;
        u->nref--;
    }
}

int
udp_flush(struct udp *u)
{
    struct mmsghdr mm[UDP_BATCH];
    struct iovec iov[2 * UDP_BATCH];
    unsigned cnt[UDP_BATCH];
    char cbuf[UDP_BATCH][CMSG_SPACE(sizeof(uint16_t))];

    while (u->shead < u->sn) {
        unsigned k = udp_build(u, mm, iov, cnt, cbuf), j;
        int n;

        n = udp_sendmmsg(u->fd, mm, k);
        if (n < 0) {
            if (udp_would_block(errno)) {
                udp_unref(u);
                return -1;
            }
            if (cnt[0] > 1 && (errno == EIO || errno == EINVAL ||
                               errno == ENOPROTOOPT || errno == EOPNOTSUPP)) {
                u->gso = 0; /* no GSO here: send one by one */
                continue;
            }
            n = 1; /* this message cannot go: drop it */
        }
        for (j = 0; j < (unsigned)n; j++)
            u->shead += cnt[j];
    }
    u->shead = u->sn = 0;
    u->soff = 0;
    u->nref = 0;
    return 0;
}

/* 1 if a datagram of len bytes to an address of alen can go by UDP. */
static int
udp_sendable(size_t len, socklen_t alen)
{
    return len <= DGRAM_MAX_PAYLOAD &&
           alen <= sizeof(((struct udp_out *)0)->addr);
}

/*
 * Takes the next queue slot for a sendable datagram of len bytes of
 * which the first head lie in the arena (at o->off, not yet written) and
 * the rest is referenced (o->ref, set by the caller).  The slot, or NULL
 * if the batch would block.
 */
static struct udp_out *
udp_slot(struct udp *u, const struct sockaddr *addr, socklen_t alen, size_t len,
         size_t head)
{
    struct udp_out *o;

    if (u->sn == UDP_BATCH || u->soff + len > u->arena_len) {
        if (udp_flush(u) != 0)
            return NULL;
    }
    o = &u->out[u->sn++];
    o->off = u->soff;
    o->len = len;
    o->head = head;
    o->ref = NULL;
    o->ref_off = 0;
    memcpy(&o->addr, addr, alen);
    o->alen = alen;
    return o;
}

/*
 * Queues one datagram; the first `copy' pieces of iov are copied into
 * the arena, a last piece beyond them is referenced.  0 or -1 (would
 * block, nothing queued).
 */
static int
udp_queue(struct udp *u, const struct sockaddr *addr, socklen_t alen,
          const struct iovec *iov, int iovcnt, int copy)
{
    struct udp_out *o;
    size_t len = 0, head = 0;
    int i;

    for (i = 0; i < iovcnt; i++) {
        len += iov[i].iov_len;
        if (i < copy)
            head += iov[i].iov_len;
    }
    if (!udp_sendable(len, alen))
        return 0; /* cannot be sent by UDP at all: dropped */
    if ((o = udp_slot(u, addr, alen, len, head)) == NULL)
        return -1;
    for (i = 0; i < copy && i < iovcnt; i++) {
        memcpy(u->arena + u->soff, iov[i].iov_base, iov[i].iov_len);
        u->soff += iov[i].iov_len;
    }
    if (len > head) {
        o->ref = iov[copy].iov_base;
        u->nref++;
    }
    return 0;
}

int
udp_send(void *arg, const struct sockaddr *addr, socklen_t alen,
         const struct iovec *iov, int iovcnt)
{
    return udp_queue(arg, addr, alen, iov, iovcnt, iovcnt);
}

int
udp_send_ref(void *arg, const struct sockaddr *addr, socklen_t alen,
             const struct iovec *iov, int iovcnt)
{
    /* one referenced piece at most: copy all but the last */
    return udp_queue(arg, addr, alen, iov, iovcnt,
                     iovcnt > 1 ? iovcnt - 1 : iovcnt);
}

int
udp_set_offload(struct udp *u, int mode)
{
    switch (mode) {
    case UDP_OFFLOAD_OFF:
        u->gso = 0;
        if (u->gro)
            udp_gro_disable(u->fd);
        u->gro = 0;
        return 0;
    case UDP_OFFLOAD_ON:
        return u->gso && u->gro ? 0 : COLLS_ENOTSUP;
    default:
        return 0;
    }
}

const char *
udp_offload_name(const struct udp *u)
{
    return u->gso && u->gro ? "gso+gro"
           : u->gso         ? "gso"
           : u->gro         ? "gro"
                            : "off";
}

uint8_t *
udp_send_buf(void *arg, const struct sockaddr *addr, socklen_t alen, size_t len)
{
    struct udp *u = arg;
    struct udp_out *o;

    if (!udp_sendable(len, alen) ||
        (o = udp_slot(u, addr, alen, len, len)) == NULL)
        return NULL;
    u->soff += len;
    return u->arena + o->off;
}

uint64_t
udp_rcvbuf_drops(const struct udp *u)
{
    return u->rcvbuf_drops;
}

/* Takes the kernel's running drop count from a receive's control
   messages, if there is one, into u->rcvbuf_drops. */
static void
udp_rxq_ovfl(struct udp *u, struct msghdr *mh)
{
    uint32_t count;

    if (udp_ovfl_count(mh, &count)) {
        u->rcvbuf_drops += (uint32_t)(count - u->ovfl_seen);
        u->ovfl_seen = count;
    }
}

int
udp_recv_vlen(const struct udp *u)
{
    return u->gro ? UDP_GRO_BATCH : UDP_BATCH;
}

int
udp_recv_batch(struct udp *u, udp_recv_fn fn, void *arg)
{
    struct mmsghdr mm[UDP_BATCH];
    struct iovec iov[UDP_BATCH];
    /* room for UDP_GRO's int and SO_RXQ_OVFL's uint32_t */
    char cbuf[UDP_BATCH]
             [CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(uint32_t))];
    int n, i, vlen = udp_recv_vlen(u);

    for (i = 0; i < vlen; i++) {
        memset(&mm[i], 0, sizeof mm[i]);
        iov[i].iov_base = u->rbuf + (size_t)i * UDP_DGRAM_MAX;
        iov[i].iov_len = UDP_DGRAM_MAX;
        mm[i].msg_hdr.msg_name = &u->raddr[i];
        mm[i].msg_hdr.msg_namelen = sizeof u->raddr[i];
        mm[i].msg_hdr.msg_iov = &iov[i];
        mm[i].msg_hdr.msg_iovlen = 1;
        mm[i].msg_hdr.msg_control = cbuf[i];
        mm[i].msg_hdr.msg_controllen = sizeof cbuf[i];
    }
    n = udp_recvmmsg(u->fd, mm, vlen);
    if (n <= 0)
        return 0;
    for (i = 0; i < n; i++) {
        const uint8_t *p = u->rbuf + (size_t)i * UDP_DGRAM_MAX;
        size_t len = mm[i].msg_len, seg = 0;

        udp_rxq_ovfl(u, &mm[i].msg_hdr);
        if (mm[i].msg_hdr.msg_flags & MSG_TRUNC)
            continue;
        if (u->gro)
            seg = udp_gro_size(&mm[i].msg_hdr);
        if (seg == 0 || seg >= len) {
            fn(arg, (struct sockaddr *)&u->raddr[i], mm[i].msg_hdr.msg_namelen,
               p, len);
            continue;
        }
        while (len > 0) {
            size_t k = len < seg ? len : seg;
            fn(arg, (struct sockaddr *)&u->raddr[i], mm[i].msg_hdr.msg_namelen,
               p, k);
            p += k;
            len -= k;
        }
    }
    return n;
}
