/*
 * udp.h -- the daemon's one UDP socket, with batched system calls.
 *
 * Sends are collected into a batch and flushed with sendmmsg() (one call
 * for many datagrams; UDP GSO where the kernel has it); receives use
 * recvmmsg().  No event loop here: the daemon watches udp_fd() and calls
 * udp_recv_batch() when readable and udp_flush() after each loop turn.
 */
#ifndef COLLS_DAEMON_UDP_H
#define COLLS_DAEMON_UDP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

struct udp;

typedef void (*udp_recv_fn)(void *arg, const struct sockaddr *from,
                            socklen_t alen, const uint8_t *data, size_t len);

/*
 * Opens and binds a UDP socket to "ADDR:PORT" (IPv4; port 0 picks one).
 * Sets large socket buffers.  Returns 0 and *out; COLLS_EINVAL for a
 * malformed address, COLLS_ENOMEM; or -errno of the failed socket() or
 * bind() (-EADDRINUSE: the port is taken), to be printed as the OS's.
 */
int udp_open(const char *addr_port, struct udp **out);
/*
 * The offloads (--gso): UDP_OFFLOAD_AUTO keeps what udp_open found (GSO
 * where configure found it, until the kernel refuses it once; GRO where
 * the kernel accepts it), OFF turns both off (broken offloads, or a
 * qemu-user that does not translate UDP_SEGMENT), ON is AUTO but
 * COLLS_ENOTSUP when either is missing.  0 or COLLS_ENOTSUP.
 */
enum { UDP_OFFLOAD_AUTO, UDP_OFFLOAD_ON, UDP_OFFLOAD_OFF };
int udp_set_offload(struct udp *u, int mode);
/* "gso+gro", "gso", "gro" or "off": what is in use now. */
const char *udp_offload_name(const struct udp *u);
void udp_close(struct udp *u);
int udp_fd(const struct udp *u);
/* The bound address, "a.b.c.d:port". */
const char *udp_local_name(const struct udp *u);

/*
 * Queues one datagram (iov pieces, copied into the batch).  Flushes first
 * when the batch is full.  Returns 0, or -1 when the kernel would block
 * (nothing queued; caller retries when writable).  Has rel_ops.send's
 * signature so it can be passed straight to rel_new (ctx = the udp).
 */
int udp_send(void *u, const struct sockaddr *addr, socklen_t alen,
             const struct iovec *iov, int iovcnt);
/*
 * Like udp_send, but only the pieces before the last are copied (a
 * header): the last piece is referenced and must stay valid and
 * unchanged until the next udp_flush() returns (udp_send and
 * udp_send_ref may flush too, so it is enough to keep it until the
 * caller's next explicit udp_flush).  Has rel_ops.send_ref's signature.
 */
int udp_send_ref(void *u, const struct sockaddr *addr, socklen_t alen,
                 const struct iovec *iov, int iovcnt);
/*
 * Room for one datagram of len <= DGRAM_MAX_PAYLOAD bytes to addr in the
 * batch, to be written by the caller before its next call into udp (so a
 * datagram is sealed where it will be sent from, without a copy).  NULL
 * if the batch is full and would block.  Has rel_ops.send_buf's
 * signature.
 */
uint8_t *udp_send_buf(void *u, const struct sockaddr *addr, socklen_t alen,
                      size_t len);
/*
 * Sends everything batched.  0, or -1 if some remain (would block); the
 * ones that remain have had their referenced data copied, so no
 * reference outlives the call either way.
 */
int udp_flush(struct udp *u);
/* 1 if datagrams are waiting in the batch. */
int udp_pending(const struct udp *u);

/* Reads up to udp_recv_vlen() receive buffers (datagrams, or runs of
   them coalesced by GRO), calling fn for each datagram.  Returns the
   number of buffers read (0 when none was waiting): fewer than
   udp_recv_vlen() means the socket was drained. */
int udp_recv_batch(struct udp *u, udp_recv_fn fn, void *arg);
int udp_recv_vlen(const struct udp *u);
/* Datagrams the kernel dropped because the receive buffer was full
   (SO_RXQ_OVFL; 0 where the system does not tell). */
uint64_t udp_rcvbuf_drops(const struct udp *u);

#endif
