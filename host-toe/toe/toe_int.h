/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/toe/ (not installed, not for other modules): the TOE's state
 * and the calls its files make to each other.  The public API is toe.h.
 *
 * THREADING: everything declared here runs on the thread that called
 * toe_run(); nothing is shared with other threads (the chain stage's own
 * threads are behind toe_chain.h).  The region is shared with guest
 * processes, which are untrusted: every descriptor is read with
 * tcr_desc_load (one read, validated copy), every request with
 * srpc_decode_req, and a guest that breaks the framing or the ring/pool
 * rules loses its channel (toe_chan_drop), nothing else.
 *
 * Private per-buffer state (buf_*) is the TOE's own record of what each
 * buffer is for; what the guest writes in a descriptor is never used to
 * find a socket the guest did not name in a validated request.
 *
 * Files: toe.c (life cycle, the loop), toe_sock.c (kernel sockets and
 * socket calls), toe_chan.c (channels and attaching), toe_stage.c (the
 * per-direction stages, the chain stage), toe_chain.c and toe_ctl.c (the
 * packet scheduler and the control socket, see their headers).
 */
#ifndef TOCHAIN_TOE_INT_H
#define TOCHAIN_TOE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include <tochain/chan.h>
#include <tochain/pool.h>
#include <tochain/region.h>

#include "tochain/srpc.h"
#include "toe.h"
#include "toe_chain.h"
#include "toe_ctl.h"

enum ev_kind { EV_ATTACH = 1, EV_SIGNAL, EV_CONN, EV_DOORBELL, EV_SOCK, EV_HELLO, EV_CHAIN };
#define HELLO_MAX	16	/* attach connections waiting for their hello */
#define HELLO_TIMEOUT_S	2
#define EV_KEY(kind, idx)	(((uint64_t)(kind) << 32) | (uint32_t)(idx))

#define RESERVE_BUFS	8	/* pool stock kept for responses and events */
#define NO_BUF		0xffffffffu
#define TX_BUDGET	256	/* TX/DONE entries per channel per loop turn */
#define PEND_SLOW	64	/* queued messages: stop taking the channel's requests */
#define PEND_MAX	4096	/* queued messages: the guest does not consume, drop it */

#define TOE_OPTQ	4	/* ordered socket options waiting for earlier data */

/* A FIFO of buffer indices linked through toe.buf_next (each buffer is in one queue at most). */
struct bufq {
	uint32_t head, tail, n;
};

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
	/*
	 * TCP_CORK/TCP_NODELAY apply after the bytes the guest queued before
	 * them (nginx: cork, header, sendfile, uncork): tx_in counts stream
	 * bytes taken from TX, tx_out bytes written to the kernel; an option
	 * set while they differ waits in optq until tx_out reaches its @at.
	 */
	uint64_t tx_in, tx_out;
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
	bool fork_wait;		/* a FORK waits for its sockets' data in flight */
	uint32_t fork_tag;	/* its tag */
	bool has_heir;		/* exec: srpc_heir received on conn */
	uint32_t heir, heir_epoch;	/* the new image's channel and epoch */
};

struct toe {
	struct toe_params p;
	struct tcr_region *r;
	struct tcr_pool *pool;
	char *sock_path;
	int epfd, lfd, sfd;
	bool stop;
	struct toe_chan *ch;
	struct toe_sock *socks;
	uint32_t next_gen;
	uint32_t chan_cap;	/* buffers one channel may hold (fair share of the pool) */
	/* per buffer */
	uint32_t *buf_next;
	uint32_t *buf_sock;	/* socket id the buffer carries data of */
	uint32_t *buf_len, *buf_off;	/* validated copy of a TX data buffer */
	uint16_t *buf_chan;	/* channel a TX buffer came from */
	/*
	 * The buf_* arrays have nbufs + out_nbufs entries: an index at or
	 * above nbufs names slot (index - nbufs) of R.out, the TOE's private
	 * copy of an outbound payload (see out_copy).
	 */
	uint32_t nitems;
	uint32_t *buf_epoch;	/* that channel's epoch then */
	struct toe_dgaddr *buf_dst;	/* destination of a TX datagram */
	uint64_t *buf_seq;	/* stream offset of an RX buffer's first byte */
	uint32_t *buf_src;	/* R.out copy: the guest buffer it was copied from */
	/* the per-direction stages */
	struct bufq in_input, in_output;	/* inbound */
	struct bufq out_input, out_output;	/* outbound */
	struct toe_stats st;
	struct toe_chain *tc;	/* the chain stage (toe_chain.h) */
	struct toe_ctl *ctl;	/* the control socket thread (toe_ctl.h) */
	char *ctl_path;
	struct {
		int fd;
		time_t since;
	} hello[HELLO_MAX];
};

/* toe.c: helpers shared by the TOE's files */
void toe_logf(const struct toe *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void toe_bufq_push(struct toe *t, struct bufq *q, uint32_t idx);
uint32_t toe_bufq_pop(struct toe *t, struct bufq *q);

/* toe_sock.c: kernel sockets, their I/O, flows and the guest's socket calls */
struct toe_sock *toe_sock_get(struct toe *t, uint32_t id);
struct toe_sock *toe_sock_of(struct toe *t, uint32_t ch, uint32_t id);
void toe_sock_arm(struct toe *t, struct toe_sock *s);
struct toe_sock *toe_sock_new(struct toe *t, int fd, uint32_t ch);
void toe_sock_free(struct toe *t, struct toe_sock *s);
void toe_sock_unref(struct toe *t, struct toe_sock *s, uint32_t ch);
void toe_regrant(struct toe *t, uint32_t idx, uint32_t sock_id);
void toe_sock_fail(struct toe *t, struct toe_sock *s, int err);
void toe_sock_flush_tx(struct toe *t, struct toe_sock *s);
void toe_sock_read(struct toe *t, struct toe_sock *s);
void toe_sock_event(struct toe *t, uint32_t id, uint32_t events);
void toe_flow_open(struct toe *t, struct toe_sock *s, const struct sockaddr_storage *peer,
		   uint8_t state);
void toe_flow_state(struct toe *t, struct toe_sock *s, uint8_t state);
void toe_do_request(struct toe *t, uint32_t ch, const struct srpc_req *q);
void toe_fork_check(struct toe *t, uint32_t ch);

/* toe_chan.c: channels (one per guest process), messages to the guest, attaching */
bool toe_chan_room(struct toe *t, uint32_t ch);
int toe_chan_send_buf(struct toe *t, uint32_t ch, uint32_t idx);
void toe_send_msg(struct toe *t, uint32_t ch, const struct srpc_msg *m);
void toe_flush_pending(struct toe *t, uint32_t ch);
void toe_respond(struct toe *t, uint32_t ch, uint32_t tag, uint32_t sock, int ret,
		 int b, const void *data, size_t dlen);
void toe_event_to(struct toe *t, uint32_t ch, enum srpc_type type, uint32_t sock, int a);
void toe_event_all(struct toe *t, struct toe_sock *s, enum srpc_type type, int a);
void toe_chan_drop(struct toe *t, uint32_t ch, const char *why);
void toe_bad_guest(struct toe *t, uint32_t ch, const char *why);
bool toe_chan_service(struct toe *t, uint32_t ch);
void toe_chan_kick(struct toe *t, uint32_t ch);
void toe_hello_drop(struct toe *t, int i);
void toe_accept_guest(struct toe *t);
void toe_attach_guest(struct toe *t, int slot);
void toe_conn_event(struct toe *t, uint32_t ch, uint32_t events);

/* toe_stage.c: the per-direction stages and the chain stage between them */
uint8_t *toe_item_data(struct toe *t, uint32_t idx);
bool toe_stage_step(struct toe *t);
void toe_stage_drain(struct toe *t);

#endif /* TOCHAIN_TOE_INT_H */
