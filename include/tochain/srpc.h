/* SPDX-License-Identifier: MIT */
/*
 * The socket-call protocol between a guest runtime and its TOE (srpc_*).
 *
 * Transport: the buffers of one region channel (chan.h).
 *
 *   guest -> TOE  TX ring: a buffer the guest took from FREE, with
 *                 desc.op = TCR_OP_CTRL and one struct srpc_msg request
 *                 as payload, or desc.op = TCR_OP_DATA, desc.conn_id =
 *                 socket id and stream bytes as payload.
 *   TOE -> guest  RX ring: a buffer from the TOE's pool, desc.op =
 *                 TCR_OP_CTRL with one response or event, or
 *                 TCR_OP_DATA with stream bytes for socket desc.conn_id.
 *                 The guest returns RX buffers on DONE.
 *                 FREE ring: the TOE re-grants each TX buffer once it is
 *                 done with it; for a data buffer desc.conn_id is the
 *                 socket and desc.arg = SRPC_FREE_TXDONE, so the guest
 *                 can count its bytes in flight per socket.
 *
 * All data and events of one socket travel on one RX ring in order, so an
 * EOF or reset event always follows the last byte before it.
 *
 * Wire format: struct srpc_msg, host byte order (both ends run on the
 * same machine), a fixed 32-byte header and up to SRPC_DATA_MAX bytes of
 * data (a sockaddr or an option value).  Requests carry a tag the
 * response echoes; events carry tag 0.
 *
 * Trust: the TOE treats every byte from the guest as hostile.  It reads
 * a request once into private memory (srpc_decode_req) and validates the
 * copy: framing, type, socket-id shape, address family and sockaddr
 * length, option level/name/length.  A message whose framing is broken
 * costs the guest its channel (-EPROTO); a well-framed request with a bad
 * argument costs only that call (the errno is the answer).  The guest
 * checks the TOE's messages too (srpc_decode_msg), so that a confused
 * host never makes it read out of bounds.
 */
#ifndef TOCHAIN_SRPC_H
#define TOCHAIN_SRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <linux/types.h>

#define SRPC_VERSION		1
#define SRPC_HDR_SIZE		32
#define SRPC_DATA_MAX		128	/* >= sizeof(struct sockaddr_in6), struct linger */
#define SRPC_MSG_MAX		(SRPC_HDR_SIZE + SRPC_DATA_MAX)

/*
 * The bytes one socket of the runtime may have in flight towards the TOE
 * (its send buffer, GL_TX_BYTES), and so the least the TOE grants each
 * process (TOE_GRANT_BYTES): a worker's concurrent 64 KiB responses then
 * each leave in one burst and one sendmsg.
 */
#define SRPC_TX_BYTES		(1024u << 10)

/* desc.arg of a data buffer the TOE hands back on FREE after sending it. */
#define SRPC_FREE_TXDONE	1u

enum srpc_type {
	/* requests, guest -> TOE */
	SRPC_REQ_SOCKET		= 1,	/* a=domain b=SOCK_STREAM|SOCK_DGRAM c=protocol,
					   data = its secret (optional, below); ret = socket id */
	SRPC_REQ_BIND		= 2,	/* sock, data = sockaddr; b of the answer > 0: joined */
	SRPC_REQ_LISTEN		= 3,	/* sock, a=backlog; b as BIND: on EADDRINUSE the caller
					   became a holder of the socket with sock's secret bound
					   there, id b (sock is closed; host-toe/toe/toe_join.c) */
	SRPC_REQ_ACCEPT		= 4,	/* sock, data = the new socket's secret (optional);
					   ret = new id or -EAGAIN, data = peer */
	SRPC_REQ_CONNECT	= 5,	/* sock, data = sockaddr; 0, -EINPROGRESS, -errno */
	SRPC_REQ_SHUTDOWN	= 6,	/* sock, a=how (after the guest's queued data) */
	SRPC_REQ_CLOSE		= 7,	/* sock: this channel drops its reference */
	SRPC_REQ_SETSOCKOPT	= 8,	/* sock, a=level b=name, data = value */
	SRPC_REQ_GETSOCKOPT	= 9,	/* sock, a=level b=name c=optlen; data = value */
	SRPC_REQ_GETSOCKNAME	= 10,	/* sock; data = sockaddr */
	SRPC_REQ_GETPEERNAME	= 11,	/* sock; data = sockaddr */
	SRPC_REQ_ADOPT		= 12,	/* sock, a=1 (exec): an heir takes a reference and the data;
					   a=2: the same for whoever sends its secret as data */
	SRPC_REQ_FORK		= 13,	/* sock 0, a=channel b=its epoch: it inherits our sockets */
	SRPC_REQ_TAKE		= 14,	/* sock: a holder becomes its owner (EV_OWNER first) */
	SRPC_REQ_LAST		= SRPC_REQ_TAKE,

	/* response, TOE -> guest: tag of the request, a = result (>= 0 or -errno) */
	SRPC_RESP		= 64,

	/* events, TOE -> guest, tag 0 */
	SRPC_EV_CONNECTED	= 96,	/* sock, a = 0 or errno of the connect */
	SRPC_EV_ACCEPTABLE	= 97,	/* sock, a = 1: a connection is waiting, 0: no longer */
	SRPC_EV_EOF		= 98,	/* sock: the peer shut down its sending side */
	SRPC_EV_ERROR		= 99,	/* sock, a = errno (ECONNRESET, EPIPE, ...) */
	SRPC_EV_OWNER		= 100,	/* sock, a = 1: you own it now, b = 1: and the data
					   it had at the fork; a = 0: another holder took it */
	SRPC_EV_LAST		= SRPC_EV_OWNER,
};

/* The wire format.  Only the first SRPC_HDR_SIZE + dlen bytes are sent. */
struct srpc_msg {
	__u16 type;		/* enum srpc_type */
	__u16 version;		/* SRPC_VERSION */
	__u32 tag;		/* request tag, echoed; 0 for events */
	__u32 sock;		/* socket id (TOE-assigned), 0 if none */
	__s32 a, b, c;		/* arguments, see enum srpc_type */
	__u32 dlen;		/* bytes of data */
	__u32 reserved;
	__u8 data[SRPC_DATA_MAX];
};

_Static_assert(offsetof(struct srpc_msg, data) == SRPC_HDR_SIZE, "srpc header");
_Static_assert(sizeof(struct srpc_msg) == SRPC_MSG_MAX, "srpc message");

/*
 * Attaching (the doorbell handshake), on the UNIX stream socket
 * "<region path>.sock": the guest process sends a struct srpc_hello with
 * its eventfd (SCM_RIGHTS); the TOE claims a free channel, opens it,
 * grants it buffers and answers with a struct srpc_welcome and the
 * TOE's eventfd for that channel.  Each side writes the other's eventfd
 * only when the ring's wait flag says the other sleeps.  The connection
 * stays open: when it closes, the TOE closes the channel.
 */
#define SRPC_HELLO_MAGIC	0x4c454854u	/* "THEL" */
#define SRPC_WELCOME_MAGIC	0x4c435754u	/* "TWCL" */

struct srpc_hello {
	__u32 magic;		/* SRPC_HELLO_MAGIC */
	__u32 version;		/* SRPC_VERSION */
	__u32 pid;		/* informational */
	__u32 reserved;
};

struct srpc_welcome {
	__u32 magic;		/* SRPC_WELCOME_MAGIC */
	__s32 status;		/* 0 or -errno (-EBUSY: no free channel) */
	__u32 channel;		/* the channel to attach to */
	__u32 epoch;		/* its epoch */
};

/*
 * Exec: the new image names itself the heir of the old image's channel by
 * sending a struct srpc_heir on the old channel's UNIX connection (which
 * only the process holding it can write); the TOE answers with one __s32
 * (0 or -errno).  Afterwards ADOPT(a=1) on the heir's channel may take
 * any socket the old channel holds.
 */
#define SRPC_HEIR_MAGIC		0x52494854u	/* "THIR" */
struct srpc_heir {
	__u32 magic;		/* SRPC_HEIR_MAGIC */
	__u32 version;		/* SRPC_VERSION */
	__u32 channel;		/* the heir: the new image's channel */
	__u32 epoch;		/* its epoch */
};

/*
 * A socket's secret: SRPC_SECRET_LEN random bytes the guest chooses when
 * it asks for the socket (SOCKET, ACCEPT) and writes into the placeholder
 * fd that stands for it (guest-lib/gl_fd.c), so that exactly the
 * processes the program gives that fd to can read it.  ADOPT(a=2) with
 * the secret lets a new image take a socket it inherited across exec
 * when it cannot name itself heir (the program closed the old channel's
 * connection, as subprocess's close_fds does; inside a VM there is none).
 * A socket created without one can only be adopted by an heir.
 */
#define SRPC_SECRET_LEN		16

/*
 * Flags of a guest data buffer on TX (struct tcr_desc.flags, written by
 * the guest, read once by the TOE): the MSG_* flags of the send call
 * that the TOE passes on to its kernel send of these bytes.  Other bits
 * are ignored.
 */
#define SRPC_TX_MORE		0x1u	/* MSG_MORE: more follows, hold a partial segment/datagram */
#define SRPC_TX_OOB		0x2u	/* MSG_OOB: the buffer's last byte is urgent (streams) */

/* A request the TOE decoded and validated: its private copy. */
struct srpc_req {
	struct srpc_msg m;		/* the copy (data beyond dlen zeroed) */
	struct sockaddr_storage addr;	/* BIND/CONNECT: normalised address */
	socklen_t addrlen;		/* its length for the kernel */
};

/*
 * Datagram sockets (SOCK_DGRAM): each TCR_OP_DATA buffer is one datagram,
 * a struct srpc_dgram header followed by the payload (desc.len = header +
 * payload, so an empty datagram is a buffer of SRPC_DGRAM_HDR bytes).
 * guest -> TOE: addrlen 0 sends to the connected peer, otherwise addr is
 *   the destination (checked with srpc_dgram_addr: family, length).
 * TOE -> guest: addr is the source; flags SRPC_DGRAM_TRUNC says the
 *   datagram was longer than a buffer and was cut.
 */
#define SRPC_DGRAM_ADDR_MAX	32
#define SRPC_DGRAM_TRUNC	1u

struct srpc_dgram {
	__u32 addrlen;		/* bytes of addr used, 0: none */
	__u32 flags;		/* SRPC_DGRAM_* */
	__u8 addr[SRPC_DGRAM_ADDR_MAX];	/* sockaddr_in / sockaddr_in6 */
};
#define SRPC_DGRAM_HDR		((uint32_t)sizeof(struct srpc_dgram))
_Static_assert(sizeof(struct srpc_dgram) == 40, "srpc datagram header");

/*
 * Validate and normalise the address of a datagram header @h (already a
 * private copy): 0 with *outlen = 0 for none, 0 with the sockaddr in @out
 * and its kernel length in *outlen, or -EINVAL / -EAFNOSUPPORT.
 */
int srpc_dgram_addr(const struct srpc_dgram *h, struct sockaddr_storage *out, socklen_t *outlen);

/* Bytes a message occupies on the wire. */
static inline size_t srpc_msg_size(const struct srpc_msg *m)
{
	return SRPC_HDR_SIZE + (m->dlen <= SRPC_DATA_MAX ? m->dlen : 0);
}

/*
 * Guest side: fill @m as a request.  @data/@dlen become the message data
 * (a sockaddr or an option value); -EINVAL if dlen > SRPC_DATA_MAX.
 */
int srpc_encode(struct srpc_msg *m, enum srpc_type type, uint32_t tag, uint32_t sock,
		int32_t a, int32_t b, int32_t c, const void *data, size_t dlen);

/*
 * TOE side: copy @len bytes at @buf (guest memory, read exactly once)
 * and validate them as a request.
 * Returns 0; -EPROTO when the framing is broken (no tag to answer:
 * drop the channel); or another -errno that is the answer to this call
 * (out->m.tag is valid then): -EAFNOSUPPORT, -EINVAL, -ENOPROTOOPT,
 * -EPROTONOSUPPORT, -EOPNOTSUPP.
 */
int srpc_decode_req(const void *buf, size_t len, struct srpc_req *out);

/*
 * Guest side: copy and check a response or event from the TOE: framing,
 * known type, dlen bound.  0 or -EPROTO.
 */
int srpc_decode_msg(const void *buf, size_t len, struct srpc_msg *out);

/*
 * Is (@level, @name) an option the TOE executes, and is @optlen right for
 * it?  For setsockopt (@set true) @optlen is the value's length, for
 * getsockopt the caller's buffer length.  0, -ENOPROTOOPT or -EINVAL.
 */
int srpc_check_sockopt(int level, int name, size_t optlen, bool set);

/* The minimum sockaddr length of @family (AF_INET/AF_INET6), 0 if unsupported. */
socklen_t srpc_sockaddr_min(int family);

/* A name for a message type (logs), "?" if unknown. */
const char *srpc_type_name(unsigned int type);

#endif /* TOCHAIN_SRPC_H */
