/* SPDX-License-Identifier: MIT */
/*
 * ivs_server: a host-side ivshmem server (QEMU's ivshmem server protocol,
 * ivs_proto.h) that QEMU's ivshmem-doorbell devices connect to.
 *
 * Each connecting QEMU is a peer: it gets a peer id (0..65535), the
 * shared memory fd and one eventfd per vector for every peer, and hears
 * of later joins and leaves.  With host_peer set, the host itself (TOE,
 * VNFs) is a peer too, created first (so it has id 0): its eventfds are
 * what guests ring to wake the host (ivs_server_host_eventfd), and it
 * rings a guest with ivs_server_ring.
 *
 * Threading: a server is single-threaded; every call on one server must
 * come from the same thread (or be serialised by the caller).  Nothing
 * blocks except ivs_server_dispatch, for at most its timeout.
 *
 * Trust: clients are untrusted.  A client only ever receives; one that
 * sends anything, stops reading until its queue overflows, or hangs up
 * (also in the middle of its handshake) is dropped and the others are
 * told it left.  No client can make a call fail or the process exit.
 */
#ifndef TOCHAIN_IVS_SERVER_H
#define TOCHAIN_IVS_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ivs_proto.h"

#define IVS_DEFAULT_MAX_PEERS	64
#define IVS_MAX_QUEUE		4096	/* unsent messages before a drop */

struct ivs_server;

struct ivs_server_config {
	const char *socket_path;	/* replaced if a socket is there */
	int shm_fd;			/* shared memory; the server dups it */
	unsigned int nvectors;		/* 1..IVS_MAX_VECTORS per peer */
	unsigned int max_peers;		/* guests; 0: IVS_DEFAULT_MAX_PEERS */
	bool host_peer;			/* the host is a peer (id 0) */
};

/* Called after a guest peer joined (joined true) or left. */
typedef void (*ivs_peer_cb)(void *arg, unsigned int peer_id, bool joined);

/*
 * Create the server and listen.  NULL with errno: EINVAL (nvectors out
 * of range, max_peers > IVS_MAX_PEER_ID, no path, shm_fd not a regular
 * file or memfd, or empty), EBADF (shm_fd not open),
 * ENAMETOOLONG (path), EEXIST (path exists and is not a socket), or what
 * socket/bind/epoll/eventfd said.
 */
struct ivs_server *ivs_server_create(const struct ivs_server_config *cfg);

/* Tell every peer nothing more (QEMU keeps running), close, unlink. */
void ivs_server_destroy(struct ivs_server *s);

void ivs_server_set_callback(struct ivs_server *s, ivs_peer_cb cb, void *arg);

/* An fd that polls readable when ivs_server_dispatch has work. */
int ivs_server_fd(const struct ivs_server *s);

/*
 * Wait up to timeout_ms (0: don't wait, -1: forever) for connections,
 * hang-ups and writable sockets, and handle them.  Returns how many
 * events were handled, or -errno if waiting itself failed (-EINTR too).
 */
int ivs_server_dispatch(struct ivs_server *s, int timeout_ms);

/* The host's peer id, or -1 without host_peer. */
int ivs_server_host_id(const struct ivs_server *s);

/*
 * The eventfd (nonblocking) that guests ring to reach the host on
 * @vector; read it to consume the counts.  -EINVAL without host_peer or
 * for a vector out of range.
 */
int ivs_server_host_eventfd(const struct ivs_server *s, unsigned int vector);

/*
 * Ring @vector of peer @peer_id (add 1 to its eventfd: QEMU raises the
 * MSI-X vector in that guest).  0, -ENOENT (no such peer), -EINVAL
 * (vector out of range), or -errno of the write.
 */
int ivs_server_ring(struct ivs_server *s, unsigned int peer_id,
		    unsigned int vector);

/* Copy up to max ids of connected guest peers in join order; count them. */
size_t ivs_server_peers(const struct ivs_server *s, uint16_t *ids, size_t max);

#endif /* TOCHAIN_IVS_SERVER_H */
