/* SPDX-License-Identifier: MIT */
/*
 * The in-process hostile guest of the TOE's unit tests (test_toe_guest.c,
 * test_toe_data.c): the TOE runs in a thread of the test; a guest attaches
 * through the real handshake and drives its channel's rings by hand.
 * Test-only.
 */
#ifndef TOCHAIN_TEST_TOE_GUEST_H
#define TOCHAIN_TEST_TOE_GUEST_H

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/desc.h>

#include "tochain/srpc.h"
#include "tc_check.h"
#include "toe.h"

static char path[64];
static struct toe *toe;
static pthread_t thr;

struct guest {
	struct tcr_region *r;
	struct tcr_chan ch;
	int conn, efd_mine, efd_toe;
	uint32_t tag;
	uint32_t channel, epoch;
};

static inline void *run(void *arg)
{
	(void)arg;
	toe_run(toe);
	return NULL;
}

static inline void setup(void)
{
	struct toe_params p;
	sigset_t s;

	snprintf(path, sizeof(path), "/dev/shm/test-toe-%d", getpid());
	toe_params_default(&p);
	p.region_path = path;
	p.name = "unit";
	p.nbufs = 256;
	p.slot_size = 4096;
	p.nchannels = 4;
	p.grants = 16;
	p.rx_bound = 16;
	toe = toe_create(&p);
	ck_assert_ptr_nonnull(toe);
	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	ck_assert_int_eq(pthread_create(&thr, NULL, run, NULL), 0);
}

static inline void teardown(void)
{
	kill(getpid(), SIGTERM);	/* taken by the TOE's signalfd */
	pthread_join(thr, NULL);
	toe_destroy(toe);
	ck_assert_int_eq(access(path, F_OK) == 0, 1);	/* region file stays */
	unlink(path);
}

static inline int attach(struct guest *g)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct srpc_hello h = { SRPC_HELLO_MAGIC, SRPC_VERSION, 1, 0 };
	struct srpc_welcome w;
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &h, sizeof(h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	memset(g, 0, sizeof(*g));
	g->r = tcr_region_attach(path, TCR_ATTACH_GUEST);
	ck_assert_ptr_nonnull(g->r);
	g->efd_mine = eventfd(0, EFD_NONBLOCK);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s.sock", path);
	g->conn = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(g->conn, (struct sockaddr *)&sun, sizeof(sun)), 0);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &g->efd_mine, sizeof(int));
	ck_assert_int_eq(sendmsg(g->conn, &mh, 0), sizeof(h));
	iov.iov_base = &w;
	iov.iov_len = sizeof(w);
	mh.msg_controllen = sizeof(cbuf);
	ck_assert_int_eq(recvmsg(g->conn, &mh, 0), sizeof(w));
	if (w.status)
		return w.status;
	memcpy(&g->efd_toe, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof(int));
	g->channel = w.channel;
	g->epoch = w.epoch;
	ck_assert_int_eq(tcr_chan_attach(&g->ch, g->r, w.channel, 0), 0);
	return 0;
}

static inline void detach(struct guest *g)
{
	close(g->conn);
	close(g->efd_mine);
	close(g->efd_toe);
	tcr_region_destroy(g->r);
}

static inline void kick(struct guest *g)
{
	uint64_t one = 1;

	ck_assert_int_eq(write(g->efd_toe, &one, 8), 8);
}

/* A FREE buffer, waiting for grants (bounded). */
static inline uint32_t take(struct guest *g)
{
	uint32_t idx;

	for (int i = 0; i < 2000; i++) {
		if (tcr_ring_dequeue_burst(&g->ch.ring[TCR_CH_FREE], &idx, 1) == 1)
			return idx;
		usleep(1000);
	}
	ck_abort_msg("no FREE buffer");
	return 0;
}

static inline void put(struct guest *g, uint32_t idx, enum tcr_op op, uint64_t conn, const void *p,
		uint32_t len)
{
	struct tcr_desc d = { .slot = idx, .len = len, .op = op, .conn_id = conn };

	memcpy(tcr_region_slot(g->r, idx), p, len);
	tcr_desc_store(g->r, idx, &d);
	ck_assert_int_eq(tcr_ring_enqueue_burst(&g->ch.ring[TCR_CH_TX], &idx, 1), 1);
	kick(g);
}

/* Next control message on RX (bounded wait); returns its buffer to DONE. */
static inline int next_msg(struct guest *g, struct srpc_msg *m)
{
	for (int i = 0; i < 2000; i++) {
		struct tcr_desc d;
		uint32_t idx;

		if (tcr_ring_dequeue_burst(&g->ch.ring[TCR_CH_RX], &idx, 1) == 1) {
			ck_assert_int_eq(tcr_desc_load(g->r, idx, &d), 0);
			ck_assert_int_eq(d.op, TCR_OP_CTRL);
			ck_assert_int_eq(srpc_decode_msg(tcr_region_slot(g->r, idx) + d.off, d.len, m), 0);
			tcr_ring_enqueue_burst(&g->ch.ring[TCR_CH_DONE], &idx, 1);
			kick(g);
			return 0;
		}
		if (tcr_chan_stale(&g->ch))
			return -ENOTCONN;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

static inline int request(struct guest *g, enum srpc_type type, uint32_t sock, int a, int b, int c,
		   const void *data, size_t dlen, struct srpc_msg *resp)
{
	struct srpc_msg m;
	int err;

	srpc_encode(&m, type, ++g->tag, sock, a, b, c, data, dlen);
	put(g, take(g), TCR_OP_CTRL, 0, &m, (uint32_t)srpc_msg_size(&m));
	err = next_msg(g, resp);
	if (err)
		return err;
	ck_assert_int_eq(resp->type, SRPC_RESP);
	ck_assert_uint_eq(resp->tag, g->tag);
	return 0;
}

static inline bool dropped(struct guest *g)
{
	for (int i = 0; i < 2000; i++) {
		if (tcr_chan_stale(&g->ch))
			return true;
		usleep(1000);
	}
	return false;
}

#endif
