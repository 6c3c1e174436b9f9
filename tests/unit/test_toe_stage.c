// SPDX-License-Identifier: MIT
/*
 * The inbound output queue's way to the guests' RX rings
 * (toe_stage_drain): consecutive buffers of one channel go out as one
 * burst, in the order they were read, each channel's in its own ring; a
 * socket's EOF still follows its last byte; buffers of a closed channel
 * are dropped with their accounting.  A TOE is created but not run: the
 * test fills the queue as the socket layer would and reads the rings as
 * a guest.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <tochain/chan.h>
#include <tochain/desc.h>
#include <tochain/pool.h>
#include <tochain/ring.h>

#include "tc_check.h"
#include "tochain/srpc.h"
#include "toe.h"
#include "toe_chan.h"
#include "toe_int.h"
#include "toe_sock.h"
#include "toe_stage.h"

#define SLOT 4096

static char path[64];
static struct toe *t;
static struct tcr_region *gr;		/* the guest's mapping */
static struct tcr_chan gch[2];		/* the guest's side of channels 0 and 1 */
static struct toe_sock *so[2];		/* socket i belongs to channel i */

static void setup(void)
{
	struct toe_params p;

	snprintf(path, sizeof(path), "/dev/shm/test-toe-stage-%d", getpid());
	toe_params_default(&p);
	p.region_path = path;
	p.name = "unitstage";
	p.nbufs = 512;
	p.slot_size = SLOT;
	p.nchannels = 4;
	p.grants = 16;
	p.rx_bound = 256;
	t = toe_create(&p);
	ck_assert_ptr_nonnull(t);
	gr = tcr_region_attach(path, TCR_ATTACH_GUEST);
	ck_assert_ptr_nonnull(gr);
	for (uint32_t ch = 0; ch < 2; ch++) {
		struct toe_chan *c = &t->ch[ch];
		struct toe_sock *s = &t->socks[ch];

		/* a channel as toe_chan_attach leaves it, without the connection */
		ck_assert_int_eq(tcr_chan_open(&c->c, t->r, ch), 0);
		c->epoch = c->c.epoch;
		c->conn = c->efd_in = c->efd_out = -1;
		c->pend = NULL;
		c->pend_tail = &c->pend;
		c->open = true;
		ck_assert_int_eq(tcr_chan_attach(&gch[ch], gr, ch, 0), 0);
		/* a connected stream it owns (no kernel socket: never read here) */
		memset(s, 0, sizeof(*s));
		s->id = (1u << 16) | (ch + 1);
		s->fd = -1;
		s->owner = ch;
		s->chans = 1ull << ch;
		s->connected = true;
		s->flow = TCR_FLOW_NONE;
		so[ch] = s;
	}
}

static void teardown(void)
{
	for (uint32_t ch = 0; ch < 2; ch++) {
		t->socks[ch].id = 0;	/* not the TOE's to close */
		if (t->ch[ch].open) {
			t->ch[ch].open = false;
			tcr_chan_close(&t->ch[ch].c, t->pool);
		}
	}
	tcr_region_destroy(gr);
	toe_destroy(t);
	unlink(path);
}

/*
 * @n buffers of @s read from its kernel socket, as rx_queue leaves them:
 * descriptor stored, counted in flight, on the inbound queue (no chain:
 * the output queue).  Byte 0 of each payload is @tag + i.
 */
static void inbound(struct toe_sock *s, uint32_t n, uint8_t tag)
{
	for (uint32_t i = 0; i < n; i++) {
		struct tcr_desc d = { 0 };
		uint32_t idx;

		ck_assert_uint_eq(tcr_pool_alloc(t->pool, &idx, 1), 1);
		memset(tcr_region_slot(t->r, idx), (uint8_t)(tag + i), SLOT);
		d.slot = idx;
		d.len = SLOT;
		d.op = TCR_OP_DATA;
		d.conn_id = s->id;
		tcr_desc_store(t->r, idx, &d);
		t->buf_sock[idx] = s->id;
		s->rx_inflight++;
		s->rx_queued++;
		toe_bufq_push(t, &t->in_output, idx);
	}
}

/* The guest takes channel @ch's RX ring: up to @max indices into @idx; how many. */
static int guest_take(uint32_t ch, uint32_t *idx, int max)
{
	int n = 0, k;

	while (n < max && (k = tcr_ring_dequeue_burst(&gch[ch].ring[TCR_CH_RX], idx + n,
						      (unsigned int)(max - n))) > 0)
		n += k;
	ck_assert_int_ge(k < 0 ? k : 0, 0);
	return n;
}

/* RX buffer @idx is data of @s whose first byte is @b. */
static void expect_data(uint32_t idx, const struct toe_sock *s, uint8_t b)
{
	struct tcr_desc d;

	ck_assert_int_eq(tcr_desc_load(gr, idx, &d), 0);
	ck_assert_uint_eq(d.op, TCR_OP_DATA);
	ck_assert_uint_eq(d.conn_id, s->id);
	ck_assert_uint_eq(d.len, SLOT);
	ck_assert_uint_eq(tcr_region_slot(gr, idx)[d.off], b);
}

START_TEST(test_bursts_in_order_per_channel)
{
	uint32_t idx[256];
	int n;

	/* 40 of socket 0, 5 of socket 1, 100 of socket 0 (more than one burst) */
	inbound(so[0], 40, 0);
	inbound(so[1], 5, 200);
	inbound(so[0], 100, 40);
	ck_assert_int_eq(guest_take(0, idx, 256), 0);	/* nothing before the drain */
	toe_stage_drain(t);
	ck_assert_uint_eq(t->in_output.n, 0);
	n = guest_take(0, idx, 256);
	ck_assert_int_eq(n, 140);
	for (int i = 0; i < n; i++)
		expect_data(idx[i], so[0], (uint8_t)i);
	n = guest_take(1, idx, 256);
	ck_assert_int_eq(n, 5);
	for (int i = 0; i < n; i++)
		expect_data(idx[i], so[1], (uint8_t)(200 + i));
	/* now the guest's: still in flight, no longer queued, the guest to be woken */
	ck_assert_uint_eq(so[0]->rx_queued, 0);
	ck_assert_uint_eq(so[0]->rx_inflight, 140);
	ck_assert_uint_eq(so[1]->rx_queued, 0);
	ck_assert_uint_eq(so[1]->rx_inflight, 5);
	ck_assert(so[0]->rx_given && so[1]->rx_given);
	ck_assert_int_eq(tcr_pool_count(t->pool, TCR_HOLDER_CH(0)), 140);
	ck_assert_int_eq(tcr_pool_count(t->pool, TCR_HOLDER_CH(1)), 5);
	ck_assert(t->ch[0].kick && t->ch[1].kick);
}
END_TEST

START_TEST(test_eof_after_last_byte)
{
	uint32_t idx[64];
	struct tcr_desc d;
	struct srpc_msg m;
	int n;

	inbound(so[0], 10, 0);
	so[0]->rd_eof = true;
	so[0]->eof_pending = true;	/* as sock_read leaves it: data still queued */
	inbound(so[1], 3, 100);
	toe_stage_drain(t);
	ck_assert(!so[0]->eof_pending);
	n = guest_take(0, idx, 64);
	ck_assert_int_eq(n, 11);
	for (int i = 0; i < 10; i++)
		expect_data(idx[i], so[0], (uint8_t)i);
	ck_assert_int_eq(tcr_desc_load(gr, idx[10], &d), 0);
	ck_assert_uint_eq(d.op, TCR_OP_CTRL);
	ck_assert_int_eq(srpc_decode_msg(tcr_region_slot(gr, idx[10]) + d.off, d.len, &m), 0);
	ck_assert_int_eq(m.type, SRPC_EV_EOF);
	ck_assert_uint_eq(m.sock, so[0]->id);
	ck_assert_int_eq(guest_take(1, idx, 64), 3);
}
END_TEST

START_TEST(test_closed_channel_dropped)
{
	uint32_t idx[64];
	int free0 = tcr_pool_count(t->pool, TCR_HOLDER_FREE);

	inbound(so[0], 4, 0);
	inbound(so[1], 6, 50);
	inbound(so[0], 4, 4);
	t->ch[1].open = false;		/* its process went away meanwhile */
	tcr_chan_close(&t->ch[1].c, t->pool);
	toe_stage_drain(t);
	/* socket 1's buffers went back to the stock, its counts with them */
	ck_assert_uint_eq(so[1]->rx_queued, 0);
	ck_assert_uint_eq(so[1]->rx_inflight, 0);
	ck_assert_int_eq(tcr_pool_count(t->pool, TCR_HOLDER_CH(1)), 0);
	ck_assert_int_eq(tcr_pool_count(t->pool, TCR_HOLDER_FREE), free0 - 8);
	/* socket 0's around them arrive whole and in order */
	ck_assert_int_eq(guest_take(0, idx, 64), 8);
	for (int i = 0; i < 8; i++)
		expect_data(idx[i], so[0], (uint8_t)i);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("toe_stage");
	TCase *tc = tcase_create("drain");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_bursts_in_order_per_channel);
	tcase_add_test(tc, test_eof_after_last_byte);
	tcase_add_test(tc, test_closed_channel_dropped);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
