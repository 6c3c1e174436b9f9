// SPDX-License-Identifier: MIT
/*
 * Unit tests for vnfs/runtime/vnf_stream.c: the per-thread connection table of the
 * stream kinds (key = conn id + flow generation, direction, stream offsets,
 * eviction of the oldest at the cap, freeing).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tc_check.h"
#include "vnf_stream.h"

static unsigned int freed;

static void free_priv(void *p)
{
	freed++;
	free(p);
}

static struct vnf_pkt pkt(uint64_t conn, uint32_t chain, uint64_t seq, uint32_t len,
			  uint16_t sport, uint16_t dport, uint8_t s, uint8_t d)
{
	struct vnf_pkt p;

	memset(&p, 0, sizeof(p));
	p.d.conn_id = conn;
	p.d.chain = chain;
	p.d.seq = seq;
	p.d.family = 4;
	p.d.sport = sport;
	p.d.dport = dport;
	p.d.saddr[0] = 10, p.d.saddr[3] = s;
	p.d.daddr[0] = 10, p.d.daddr[3] = d;
	p.len = p.d.len = len;
	return p;
}

START_TEST(test_direction)
{
	struct vnf_streams *t = vnf_streams_create(16, "t", free_priv);
	struct vnf_pkt in = pkt(1, 0, 0, 10, 40000, 80, 9, 1);
	struct vnf_pkt out = pkt(1, 1, 0, 10, 80, 40000, 1, 9);
	struct vnf_stream *s;
	bool created;

	s = vnf_stream_get(t, &in, NULL, &created);
	ck_assert(created);
	ck_assert_uint_eq(s->server_port, 80);
	ck_assert_uint_eq(s->server_addr[3], 1);
	ck_assert_uint_eq(vnf_stream_dir(s, &in), VNF_TO_SERVER);
	ck_assert_uint_eq(vnf_stream_dir(s, &out), VNF_TO_CLIENT);
	ck_assert_ptr_eq(vnf_stream_get(t, &out, NULL, &created), s);
	ck_assert(!created);
	/* The VM as a client: its out chain carries client -> server bytes. */
	out = pkt(2, 1, 0, 10, 45000, 443, 1, 9);
	s = vnf_stream_get(t, &out, NULL, &created);
	ck_assert_uint_eq(s->server_port, 443);
	ck_assert_uint_eq(vnf_stream_dir(s, &out), VNF_TO_SERVER);
	/* Equal ports: the VM's side is the server (in chain: the receiver). */
	in = pkt(3, 0, 0, 10, 7000, 7000, 9, 1);
	s = vnf_stream_get(t, &in, NULL, &created);
	ck_assert_uint_eq(s->server_addr[3], 1);
	ck_assert_uint_eq(vnf_stream_dir(s, &in), VNF_TO_SERVER);
	out = pkt(4, 1, 0, 10, 7000, 7000, 1, 9);
	s = vnf_stream_get(t, &out, NULL, &created);
	ck_assert_uint_eq(s->server_addr[3], 1);
	ck_assert_uint_eq(vnf_stream_dir(s, &out), VNF_TO_CLIENT);
	vnf_streams_destroy(t);
}
END_TEST

START_TEST(test_span)
{
	struct vnf_streams *t = vnf_streams_create(16, "t", free_priv);
	struct vnf_pkt p = pkt(1, 0, 0, 100, 40000, 80, 9, 1);
	struct vnf_stream *s;
	uint32_t skip;
	bool created;

	s = vnf_stream_get(t, &p, NULL, &created);
	ck_assert_int_eq(vnf_stream_span(s, VNF_TO_SERVER, &p, &skip), 0);
	ck_assert_uint_eq(skip, 0);
	/* Retransmission: everything seen. */
	ck_assert_int_eq(vnf_stream_span(s, VNF_TO_SERVER, &p, &skip), 0);
	ck_assert_uint_eq(skip, 100);
	/* Overlap: 50 old, 50 new. */
	p.d.seq = 50;
	ck_assert_int_eq(vnf_stream_span(s, VNF_TO_SERVER, &p, &skip), 0);
	ck_assert_uint_eq(skip, 50);
	ck_assert_uint_eq(s->next[VNF_TO_SERVER], 150);
	/* In order. */
	p.d.seq = 150;
	ck_assert_int_eq(vnf_stream_span(s, VNF_TO_SERVER, &p, &skip), 0);
	ck_assert_uint_eq(skip, 0);
	/* Gap. */
	p.d.seq = 400;
	ck_assert_int_eq(vnf_stream_span(s, VNF_TO_SERVER, &p, &skip), -EPIPE);
	ck_assert_uint_eq(s->next[VNF_TO_SERVER], 250);
	/* The other direction has its own offsets and must start at 0. */
	p.d.seq = 10;
	ck_assert_int_eq(vnf_stream_span(s, VNF_TO_CLIENT, &p, &skip), -EPIPE);
	p.d.seq = 0;
	ck_assert_int_eq(vnf_stream_span(s, VNF_TO_CLIENT, &p, &skip), 0);
	vnf_streams_destroy(t);
}
END_TEST

START_TEST(test_generation_and_free)
{
	struct vnf_streams *t = vnf_streams_create(16, "t", free_priv);
	struct vnf_pkt p = pkt(7, 0, 0, 10, 40000, 80, 9, 1);
	struct vnf_flow f = { .gen = 1 };
	struct vnf_stream *s;
	bool created;

	freed = 0;
	s = vnf_stream_get(t, &p, &f, &created);
	s->priv = malloc(8);
	ck_assert_ptr_eq(vnf_stream_get(t, &p, &f, &created), s);
	ck_assert(!created);
	/* No flow information (entry busy): the stream the conn id has. */
	ck_assert_ptr_eq(vnf_stream_get(t, &p, NULL, &created), s);
	ck_assert(!created);
	f.gen = 2;
	s = vnf_stream_get(t, &p, &f, &created);
	ck_assert(created);
	ck_assert_ptr_null(s->priv);
	ck_assert_uint_eq(freed, 1);
	ck_assert_uint_eq(vnf_streams_count(t), 1);
	s->priv = malloc(8);
	vnf_stream_forget(t, 7);
	ck_assert_uint_eq(freed, 2);
	ck_assert_uint_eq(vnf_streams_count(t), 0);
	vnf_stream_forget(t, 7);	/* none: nothing happens */
	/* A stream begun without a flow entry adopts the first one seen. */
	s = vnf_stream_get(t, &p, NULL, &created);
	ck_assert(created && !s->has_flow);
	ck_assert_ptr_eq(vnf_stream_get(t, &p, &f, &created), s);
	ck_assert(!created && s->has_flow && s->gen == 2);
	vnf_stream_forget(t, 7);
	s = vnf_stream_get(t, &p, &f, &created);
	s->priv = malloc(8);
	vnf_streams_destroy(t);
	ck_assert_uint_eq(freed, 3);
}
END_TEST

START_TEST(test_evict_oldest)
{
	struct vnf_streams *t = vnf_streams_create(8, "t", free_priv);
	struct vnf_stream *s;
	bool created;

	freed = 0;
	for (uint64_t c = 1; c <= 8; c++) {
		struct vnf_pkt p = pkt(c, 0, 0, 1, 40000, 80, 9, 1);

		s = vnf_stream_get(t, &p, NULL, &created);
		s->priv = malloc(1);
	}
	/* Touch 1: 2 is now the least recently used. */
	struct vnf_pkt p1 = pkt(1, 0, 0, 1, 40000, 80, 9, 1);

	ck_assert_ptr_nonnull(vnf_stream_get(t, &p1, NULL, &created));
	ck_assert(!created);
	struct vnf_pkt p9 = pkt(9, 0, 0, 1, 40000, 80, 9, 1);

	ck_assert_ptr_nonnull(vnf_stream_get(t, &p9, NULL, &created));
	ck_assert_uint_eq(vnf_streams_count(t), 8);
	ck_assert_uint_eq(vnf_streams_evicted(t), 1);
	ck_assert_uint_eq(freed, 1);
	struct vnf_pkt p2 = pkt(2, 0, 0, 1, 40000, 80, 9, 1);

	vnf_stream_get(t, &p2, NULL, &created);
	ck_assert(created);	/* 2 was the one forgotten */
	vnf_stream_get(t, &p1, NULL, &created);
	ck_assert(!created);
	/* Many connections through a small table stay bounded. */
	for (uint64_t c = 100; c < 5000; c++) {
		struct vnf_pkt p = pkt(c, 0, 0, 1, 40000, 80, 9, 1);

		ck_assert_ptr_nonnull(vnf_stream_get(t, &p, NULL, &created));
		ck_assert_uint_le(vnf_streams_count(t), 8);
	}
	vnf_streams_destroy(t);
}
END_TEST

static bool gone_odd(void *ctx, const struct vnf_stream *s)
{
	(*(unsigned int *)ctx)++;
	return s->has_flow && (s->gen & 1);
}

START_TEST(test_sweep)
{
	struct vnf_streams *t = vnf_streams_create(64, "t", free_priv);
	unsigned int calls = 0;
	bool created;

	freed = 0;
	for (uint32_t c = 1; c <= 20; c++) {
		struct vnf_pkt p = pkt(c, 0, 0, 1, 40000, 80, 9, 1);
		struct vnf_flow f = { .gen = c, .region = 3, .idx = c + 100 };
		struct vnf_stream *s = vnf_stream_get(t, &p, c <= 16 ? &f : NULL, &created);

		ck_assert_uint_eq(s->region, c <= 16 ? 3 : 0);
		ck_assert_uint_eq(s->fidx, c <= 16 ? c + 100 : 0);
		s->priv = malloc(1);
	}
	/* Flows with an odd generation are over: 8 of them; no flow: kept. */
	ck_assert_uint_eq(vnf_streams_sweep(t, gone_odd, &calls), 8);
	ck_assert_uint_eq(calls, 20);
	ck_assert_uint_eq(freed, 8);
	ck_assert_uint_eq(vnf_streams_count(t), 12);
	ck_assert_uint_eq(vnf_streams_evicted(t), 0);
	ck_assert_uint_eq(vnf_streams_sweep(t, gone_odd, &calls), 0);
	vnf_streams_destroy(t);
	ck_assert_uint_eq(freed, 20);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vnf_stream");
	TCase *tc = tcase_create("stream");

	tcase_add_test(tc, test_direction);
	tcase_add_test(tc, test_span);
	tcase_add_test(tc, test_generation_and_free);
	tcase_add_test(tc, test_evict_oldest);
	tcase_add_test(tc, test_sweep);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
