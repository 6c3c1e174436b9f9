/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/toe/ (not installed): the TOE's channels
 * (toe_chan.c), one per guest process, the lowest layer (toe_int.h).
 *
 * The only place that speaks sockrpc (tochain/srpc.h) with the guest:
 * the attach handshake, the exec heir on the UNIX connection, requests
 * taken off TX and decoded, answers and events put on RX (queued while
 * the pool is short), buffers returned on DONE and granted back on FREE.
 * What it takes from the guest it hands up through struct toe_chan_ops.
 */
#ifndef TOCHAIN_TOE_CHAN_H
#define TOCHAIN_TOE_CHAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <tochain/chan.h>
#include <tochain/desc.h>

#include "tochain/srpc.h"
#include "toe_int.h"

#define TX_BUDGET	256	/* TX/DONE entries per channel per loop turn */
#define PEND_SLOW	64	/* queued messages: stop taking the channel's requests */
#define PEND_MAX	4096	/* queued messages: the guest does not consume, drop it */
/*
 * Buffers a channel may hold beyond chan_cap for answers and events
 * (put_msg): the cap stops reading its sockets, not its calls' replies.
 * Without it a process holding chan_cap buffers of unread data (one
 * request on each of chan_cap connections) waited forever for the reply
 * to its next call, and its sends stayed untaken (PEND_SLOW).
 */
#define CTRL_RESERVE	64

struct pending {		/* a message waiting for a pool buffer */
	struct pending *next;
	struct srpc_msg m;
};

struct toe_chan {
	bool open;
	struct tcr_chan c;
	uint32_t epoch;
	int conn;		/* UNIX connection to the guest process */
	int efd_in;		/* TOE's doorbell (guest writes it) */
	int efd_out;		/* guest's doorbell */
	bool kick;		/* something published: maybe wake the guest */
	struct pending *pend, **pend_tail;
	uint32_t npend;		/* messages waiting for a pool buffer */
	bool overrun;		/* too many: the guest does not consume RX; drop it */
	bool capped;		/* holds chan_cap buffers: its sockets are not read */
	bool fresh;		/* attached, no request taken yet: may be a FORK's child */
	bool has_heir;		/* exec: srpc_heir received on conn */
	uint32_t heir, heir_epoch;	/* the new image's channel and epoch */
};

/*
 * What the channel layer hands up (toe.c sets t->chan_ops to the socket
 * layer's handlers).  All run on the TOE's thread, from toe_chan_service
 * or toe_chan_drop.
 */
struct toe_chan_ops {
	/*
	 * A data buffer @idx channel @ch put on TX, its descriptor loaded once
	 * into @d (not yet checked against any socket).  buf_chan and
	 * buf_epoch are set; the handler queues @idx or grants it back.
	 */
	void (*tx_data)(struct toe *t, uint32_t ch, uint32_t idx, const struct tcr_desc *d);
	/* A request of channel @ch, decoded and validated by srpc_decode_req. */
	void (*request)(struct toe *t, uint32_t ch, const struct srpc_req *q);
	/* An RX buffer with data of socket @sock_id came back on DONE (and was freed). */
	void (*rx_done)(struct toe *t, uint32_t sock_id);
	/* Channel @ch holds less than its share of the pool again. */
	void (*uncapped)(struct toe *t, uint32_t ch);
	/* Channel @ch is going away (already closed to new work): drop what it holds. */
	void (*dropped)(struct toe *t, uint32_t ch);
	/* Channel @ch returned the buffer of an ACCEPTABLE event of @sock_id (toe_ready.h). */
	void (*ev_done)(struct toe *t, uint32_t ch, uint32_t sock_id);
};

/* Attaching: a connection on the attach socket, then its hello. */
void toe_chan_accept(struct toe *t);
void toe_chan_attach(struct toe *t, int slot);
void toe_chan_hello_drop(struct toe *t, int i);

/* Close channel @ch (@why is logged); toe_chan_bad_guest counts a bad message too. */
void toe_chan_drop(struct toe *t, uint32_t ch, const char *why);
void toe_chan_bad_guest(struct toe *t, uint32_t ch, const char *why);

/* Events on the guest's UNIX connection (hang-up, exec heir) and on its doorbell. */
void toe_chan_conn_event(struct toe *t, uint32_t ch, uint32_t events);
void toe_chan_doorbell(struct toe *t, uint32_t ch);

/* Take what channel @ch put on DONE and TX.  true: it did something. */
bool toe_chan_service(struct toe *t, uint32_t ch);

/* End of a loop turn: flush queued messages, drop an overrun guest, wake the guest. */
void toe_chan_end_turn(struct toe *t, uint32_t ch);

/* Sleeping: announce it on every TX and DONE ring (false: work came), and undo it. */
bool toe_chan_sleep_prepare(struct toe *t);
void toe_chan_sleep_done(struct toe *t);
/* Is anything waiting on a TX or DONE ring? */
bool toe_chan_work_waiting(struct toe *t);
uint32_t toe_chan_count_open(const struct toe *t);

/* May channel @ch be handed more RX buffers (its share of the pool)? */
bool toe_chan_room(struct toe *t, uint32_t ch);
/* Put buffer @idx (descriptor stored) on @ch's RX ring: 0 or -errno. */
int toe_chan_send_buf(struct toe *t, uint32_t ch, uint32_t idx);
/*
 * Put buffers @idx[@n] (descriptors stored) on @ch's RX ring in order, in
 * one ring operation; the guest is woken at most once, at the end of the
 * turn, if it sleeps.  How many went (a prefix of @idx; the rest are
 * still the host's), or -errno (none went).
 */
int toe_chan_send_bufs(struct toe *t, uint32_t ch, const uint32_t *idx, uint32_t n);
/* Grant guest buffer @idx back to the channel it came from (FREE; TXDONE for @sock_id). */
void toe_chan_regrant(struct toe *t, uint32_t idx, uint32_t sock_id);

/*
 * The validated destination of TX datagram @idx (descriptor @d): 0, or
 * -EMSGSIZE (no header) or -EINVAL (a bad address, counted as a bad message).
 */
int toe_chan_dgram_dst(struct toe *t, uint32_t idx, const struct tcr_desc *d,
		       struct sockaddr_storage *a, socklen_t *len);

/* Messages to the guest: an answer to request @tag, an event (b: its second value). */
void toe_chan_respond(struct toe *t, uint32_t ch, uint32_t tag, uint32_t sock, int ret,
		      int b, const void *data, size_t dlen);
void toe_chan_event(struct toe *t, uint32_t ch, enum srpc_type type, uint32_t sock, int a,
		    int b);

/* Ownership (toe_sock.h): did open channel @holder name @ch, at its epoch, its exec heir? */
bool toe_chan_is_heir(const struct toe *t, uint32_t holder, uint32_t ch);
/*
 * FORK of @parent naming channel @kid at @epoch: 0 when @kid is fresh
 * (attached, no request of its own, never named before; it is named now),
 * -EINVAL for a bad id, -ESRCH otherwise.
 */
int toe_chan_fork_child(struct toe *t, uint32_t parent, uint32_t kid, uint32_t epoch);

#endif /* TOCHAIN_TOE_CHAN_H */
