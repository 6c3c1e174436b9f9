/* SPDX-License-Identifier: MIT */
/*
 * The wire format of QEMU's ivshmem server protocol (QEMU
 * docs/specs/ivshmem-spec.rst, "The ivshmem Client-Server Protocol").
 *
 * The connection is one-way, server to client.  Each message is one
 * 8-byte little-endian signed number, optionally with one file
 * descriptor attached (SCM_RIGHTS):
 *   on connect: IVS_PROTO_VERSION; the client's id; -1 with the shared
 *   memory fd; then (peer id, eventfd) for every vector of every other
 *   peer; then (own id, eventfd) for each of its own vectors.
 *   later: (peer id, eventfd) = a peer joined, (peer id) alone = it left.
 */
#ifndef TOCHAIN_IVS_PROTO_H
#define TOCHAIN_IVS_PROTO_H

#include <stdint.h>

#define IVS_PROTO_VERSION	0
#define IVS_PROTO_SHM		(-1)	/* value that carries the memory fd */
#define IVS_MAX_PEER_ID		65535	/* the Doorbell register has 16 bits */
#define IVS_MAX_VECTORS		64

/*
 * Send one message on a stream socket without blocking and without
 * SIGPIPE.  fd < 0 sends no descriptor.  Returns 0, -EAGAIN when the
 * socket buffer is full (nothing was sent), -EPIPE/-ECONNRESET when the
 * peer is gone, -EIO on a short send, other -errno from sendmsg.
 */
int ivs_proto_send(int sock, int64_t value, int fd);

/*
 * Receive one message (the client side, for tests and host tools).  On
 * a blocking socket waits for the whole message; on a nonblocking one
 * returns -EAGAIN when nothing has arrived.  *fd is the descriptor that
 * came with it (close-on-exec) or -1.  Returns 0, -ECONNRESET at EOF,
 * -EPROTO for a malformed message (more than one descriptor, truncated
 * control data; any descriptors received are closed), other -errno.
 */
int ivs_proto_recv(int sock, int64_t *value, int *fd);

#endif /* TOCHAIN_IVS_PROTO_H */
