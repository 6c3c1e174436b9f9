/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/toe/ (not installed): the TOE's kernel sockets
 * (toe_sock.c), the layer above the channels (toe_int.h): the socket
 * table, reading and writing with flow control, flow table entries, and
 * the guest's socket calls (requests the channel layer decoded, answered
 * through it).  Its handlers of channel events are the toe_sock_on_*.
 *
 * OWNERSHIP.  A socket has a set of holding channels (chans, one bit per
 * guest process) and an owner among them that receives data, EOF and
 * connect results.  A channel holds a socket only if it created it
 * (SOCKET, ACCEPT), was named in a FORK by a holder (the named channel
 * must be fresh: attached, no request of its own, never named before),
 * is the exec heir a holder named on its own UNIX connection (ADOPT
 * a=1), or sent the socket's secret, which only processes holding its
 * placeholder fd can read (ADOPT a=2, srpc.h).  Any other request naming a socket the channel does not hold is
 * EBADF.  FORK parks the parent's connected streams (not read) until a
 * holder TAKEs them, and is answered once none of the parent's data is
 * between a kernel socket and its RX ring.  TAKE makes the caller the
 * owner (EV_OWNER to it and to the old owner).  The owner dropping its
 * reference passes ownership to the lowest remaining holder; the last
 * reference closes the kernel socket (after queued outbound data).
 * host-toe/toe/README.md tells the whole story.
 */
#ifndef TOCHAIN_TOE_SOCK_H
#define TOCHAIN_TOE_SOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <tochain/desc.h>

#include "tochain/ch_flow.h"
#include "tochain/srpc.h"
#include "toe_int.h"

#define TOE_OPTQ	4	/* ordered socket options waiting for earlier data */
#define TOE_TX_IOV	64	/* send-queue buffers written by one sendmsg */
#define TOE_RX_IOV	64	/* buffers one readv of a stream fills */

struct toe_sock {
	uint32_t id;		/* 0: slot unused */
	int fd;
	uint64_t chans;		/* channels holding a reference (one per holding process) */
	uint32_t owner;		/* the holder that receives data and EOF (ownership rules) */
	uint32_t rx_inflight;	/* buffers towards or held by the guest */
	uint32_t tx_off;	/* bytes of the txq head already written */
	struct bufq txq;	/* outbound output queue towards the kernel */
	uint32_t tx_pending;	/* outbound buffers anywhere in the pipeline */
	uint32_t armed;		/* epoll events registered */
	bool listening, connecting, rd_eof, failed, shut_wr_pending, closing;
	bool accept_armed;
	bool connected;		/* established: data may flow */
	bool registered;	/* in the epoll set */
	bool dgram;		/* UDP: one buffer per datagram (struct srpc_dgram) */
	bool denied;		/* a chain denied it: reset, later data dropped */
	bool eof_pending;	/* EOF seen, data before it still on its way */
	bool parked;		/* forked: not read until a holder TAKEs it (ownership rules) */
	/* listeners, per channel bit (toe_ready.h): state wanted, last told, event out */
	uint64_t rdy_want, rdy_sent, rdy_busy;
	bool has_secret;	/* the guest gave it a secret (srpc.h): ADOPT(a=2) may take it */
	uint8_t secret[SRPC_SECRET_LEN];
	/*
	 * TCP_CORK/TCP_NODELAY apply after the bytes the guest queued before
	 * them (nginx: cork, header, sendfile, uncork): tx_in counts stream
	 * bytes taken from TX, tx_out bytes written to the kernel; an option
	 * set while they differ waits in optq until tx_out reaches its @at.
	 */
	uint64_t tx_in, tx_out;
	/*
	 * tx_in when inbound bytes last went to the guest: equal to tx_in
	 * now, the guest has not answered what it got last, so an answer
	 * from a VNF would pass for its response (toe_sock_answer).
	 */
	uint64_t tx_in_at_rx;
	bool rx_given;		/* inbound bytes went to the guest */
	struct toe_sockopt {
		int name, val;
		uint64_t at;
	} optq[TOE_OPTQ];
	uint32_t optq_n;
	bool fork_data;		/* the data its owner had at the fork is unclaimed */
	uint32_t rx_queued;	/* inbound buffers not yet on the RX ring */
	uint64_t rx_seq, tx_seq;	/* stream offsets (bytes read / submitted) */
	uint32_t flow;		/* flow table entry or TCR_FLOW_NONE */
	struct ch_flow_key key;	/* local side as source (ports host order) */
};

/* The validated destination of an outbound datagram (TOE-private copy). */
struct toe_dgaddr {
	struct sockaddr_storage a;
	socklen_t len;		/* 0: the connected peer */
};

/* Socket @id, or NULL when no such socket is open. */
struct toe_sock *toe_sock_get(struct toe *t, uint32_t id);
/* Is @secret (SRPC_SECRET_LEN bytes) @s's secret?  Constant time. */
bool toe_sock_secret_is(const struct toe_sock *s, const uint8_t *secret);
/* Close @s now (queued buffers granted back, flow closed). */
void toe_sock_free(struct toe *t, struct toe_sock *s);
/* @s failed with @err: queued data dropped, EV_ERROR to its holders. */
void toe_sock_fail(struct toe *t, struct toe_sock *s, int err);
/* A chain denied @s: abort it (RST to the peer, ECONNRESET to the guest). */
void toe_sock_abort(struct toe *t, struct toe_sock *s);
/*
 * A chain denied @s with an answer for the peer (ch_result.answer): when
 * nothing the guest sent is still on its way, write the @len bytes, then
 * FIN (not RST); the guest gets ECONNRESET as with an abort.  false: not
 * possible (the caller aborts instead).
 */
bool toe_sock_answer(struct toe *t, struct toe_sock *s, const uint8_t *answer, uint32_t len);
/* Write what @s's send queue holds (as far as the kernel takes it). */
void toe_sock_flush_tx(struct toe *t, struct toe_sock *s);
/* An outbound item is done: free its R.out copy, grant the guest's buffer back. */
void toe_sock_regrant(struct toe *t, uint32_t idx, uint32_t sock_id);
/* epoll events of kernel socket @id. */
void toe_sock_event(struct toe *t, uint32_t id, uint32_t events);
/* Answer a FORK of channel @ch once none of its data is in flight. */
void toe_sock_fork_check(struct toe *t, uint32_t ch);

/* Handlers of the channel layer's events (struct toe_chan_ops, toe_chan.h). */
void toe_sock_on_tx_data(struct toe *t, uint32_t ch, uint32_t idx, const struct tcr_desc *d);
void toe_sock_on_request(struct toe *t, uint32_t ch, const struct srpc_req *q);
void toe_sock_on_rx_done(struct toe *t, uint32_t sock_id);
void toe_sock_on_uncapped(struct toe *t, uint32_t ch);
/* The hold ended (toe_hold.h): read every socket, arm the listeners, connect. */
void toe_sock_unhold(struct toe *t);
void toe_sock_on_dropped(struct toe *t, uint32_t ch);

#endif /* TOCHAIN_TOE_SOCK_H */
