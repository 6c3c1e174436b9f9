// SPDX-License-Identifier: MIT
/* Unit tests for lib/region/ring.c: every ring operation and validation. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include <tochain/barrier.h>
#include <tochain/ring.h>
#include "tc_check.h"

#define SIZE 8
#define LIMIT 100

static void *mem;
static struct tcr_ring prod, cons;

static void setup(void)
{
	mem = tc_map(tcr_ring_bytes(1024));
	tcr_ring_format(mem, SIZE);
	ck_assert_int_eq(tcr_ring_attach(&prod, mem, SIZE, LIMIT, 0), 0);
	ck_assert_int_eq(tcr_ring_attach(&cons, mem, SIZE, LIMIT, 0), 0);
}

static void teardown(void)
{
	munmap(mem, tcr_ring_bytes(1024));
}

START_TEST(attach_rejects_bad_geometry)
{
	struct tcr_ring r;

	ck_assert_int_eq(tcr_ring_attach(&r, mem, 0, LIMIT, 0), -EINVAL);
	ck_assert_int_eq(tcr_ring_attach(&r, mem, 6, LIMIT, 0), -EINVAL);
	ck_assert_int_eq(tcr_ring_attach(&r, mem, SIZE, 0, 0), -EINVAL);
	ck_assert_int_eq(tcr_ring_attach(&r, NULL, SIZE, LIMIT, 0), -EINVAL);
	ck_assert_int_eq(tcr_ring_attach(&r, mem, SIZE, LIMIT, 0x80), -EINVAL);
	ck_assert_int_eq(tcr_ring_attach(&r, mem, TCR_MAX_RING * 2u, LIMIT, 0), -EINVAL);
}
END_TEST

START_TEST(empty_and_full)
{
	uint32_t in[SIZE + 4], out[SIZE + 4];

	for (unsigned int i = 0; i < SIZE + 4; i++)
		in[i] = i;
	ck_assert_int_eq(tcr_ring_dequeue_burst(&cons, out, 4), 0);
	ck_assert_int_eq(tcr_ring_dequeue_bulk(&cons, out, 1), 0);
	ck_assert_int_eq(tcr_ring_count(&cons), 0);
	/* Burst stops at the capacity, which is the full size. */
	ck_assert_int_eq(tcr_ring_enqueue_burst(&prod, in, SIZE + 4), SIZE);
	ck_assert_int_eq(tcr_ring_count(&prod), SIZE);
	ck_assert_int_eq(tcr_ring_enqueue_burst(&prod, in, 1), 0);
	ck_assert_int_eq(tcr_ring_enqueue_bulk(&prod, in, 1), 0);
	ck_assert_int_eq(tcr_ring_dequeue_burst(&cons, out, SIZE + 4), SIZE);
	for (unsigned int i = 0; i < SIZE; i++)
		ck_assert_uint_eq(out[i], i);
	ck_assert_int_eq(tcr_ring_count(&cons), 0);
}
END_TEST

START_TEST(bulk_is_all_or_nothing)
{
	uint32_t in[SIZE] = { 1, 2, 3, 4, 5, 6, 7, 8 }, out[SIZE];

	ck_assert_int_eq(tcr_ring_enqueue_bulk(&prod, in, 5), 5);
	ck_assert_int_eq(tcr_ring_enqueue_bulk(&prod, in, 4), 0);	/* 3 free */
	ck_assert_int_eq(tcr_ring_enqueue_bulk(&prod, in, 3), 3);
	ck_assert_int_eq(tcr_ring_dequeue_bulk(&cons, out, SIZE + 1), 0);
	ck_assert_int_eq(tcr_ring_dequeue_bulk(&cons, out, 6), 6);
	ck_assert_int_eq(tcr_ring_dequeue_bulk(&cons, out, 3), 0);	/* 2 left */
	ck_assert_int_eq(tcr_ring_dequeue_bulk(&cons, out, 2), 2);
	ck_assert_uint_eq(out[0], 2);
	ck_assert_uint_eq(out[1], 3);
	/* Zero-length requests move nothing and succeed. */
	ck_assert_int_eq(tcr_ring_enqueue_bulk(&prod, in, 0), 0);
	ck_assert_int_eq(tcr_ring_dequeue_burst(&cons, out, 0), 0);
}
END_TEST

START_TEST(wrap_around_and_index_overflow)
{
	struct tcr_ring_ctl *c = mem;
	uint32_t in[3], out[3], next = 0, expect = 0;

	/* Start just below 2^32 so the free-running positions wrap. */
	c->prod_head = c->prod_tail = c->cons_head = c->cons_tail = UINT32_MAX - 5;
	ck_assert_int_eq(tcr_ring_attach(&prod, mem, SIZE, LIMIT, 0), 0);
	ck_assert_int_eq(tcr_ring_attach(&cons, mem, SIZE, LIMIT, 0), 0);
	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < 3; i++)
			in[i] = next++ % LIMIT;
		ck_assert_int_eq(tcr_ring_enqueue_burst(&prod, in, 3), 3);
		ck_assert_int_eq(tcr_ring_dequeue_burst(&cons, out, 3), 3);
		for (int i = 0; i < 3; i++)
			ck_assert_uint_eq(out[i], expect++ % LIMIT);
	}
	ck_assert_uint_lt(c->prod_tail, 1000);	/* it did wrap */
}
END_TEST

START_TEST(entry_out_of_range_consumes_nothing)
{
	struct tcr_ring_ctl *c = mem;
	uint32_t in[3] = { 1, 2, 3 }, out[3];

	ck_assert_int_eq(tcr_ring_enqueue_burst(&prod, in, 3), 3);
	((__u32 *)(c + 1))[1] = LIMIT;		/* the peer scribbles an entry */
	ck_assert_int_eq(tcr_ring_dequeue_burst(&cons, out, 3), -EBADMSG);
	ck_assert_uint_eq(c->cons_tail, 0);
	/* The entries before the bad one are not consumed either. */
	ck_assert_int_eq(tcr_ring_dequeue_burst(&cons, out, 1), 1);
	ck_assert_uint_eq(out[0], 1);
	ck_assert_int_eq(tcr_ring_dequeue_burst(&cons, out, 1), -EBADMSG);
}
END_TEST

START_TEST(corrupt_positions_are_detected)
{
	struct tcr_ring_ctl *c = mem;
	uint32_t in[2] = { 1, 2 }, out[2];

	ck_assert_int_eq(tcr_ring_enqueue_burst(&prod, in, 2), 2);
	/* Producer claims more than a ring ahead of the consumer. */
	c->prod_tail = SIZE + 1;
	ck_assert_int_eq(tcr_ring_dequeue_burst(&cons, out, 2), -EPROTO);
	ck_assert_int_eq(tcr_ring_count(&cons), -EPROTO);
	/* Producer position going backwards looks like a huge count too. */
	c->prod_tail = (uint32_t)-1;
	ck_assert_int_eq(tcr_ring_dequeue_burst(&cons, out, 2), -EPROTO);
	/*
	 * A consumer that claims to have consumed what was never produced:
	 * seen when the producer next needs to read the consumer's position
	 * (here, when what it saw last leaves too little room).
	 */
	c->prod_tail = 2;
	c->cons_tail = 7;
	{
		uint32_t many[SIZE] = { 0 };

		ck_assert_int_eq(tcr_ring_enqueue_burst(&prod, many, SIZE), -EPROTO);
	}
	/* The producer never re-reads its own shared position. */
	c->cons_tail = 2;
	c->prod_tail = 1000;
	ck_assert_int_eq(tcr_ring_enqueue_burst(&prod, in, 1), 1);
	ck_assert_uint_eq(c->prod_tail, 3);
}
END_TEST

START_TEST(multi_party_sides)
{
	struct tcr_ring mp1, mp2, mc1, mc2;
	uint32_t in[4] = { 10, 11, 12, 13 }, out[8];

	ck_assert_int_eq(tcr_ring_attach(&mp1, mem, SIZE, LIMIT, TCR_RING_MP), 0);
	ck_assert_int_eq(tcr_ring_attach(&mp2, mem, SIZE, LIMIT, TCR_RING_MP), 0);
	ck_assert_int_eq(tcr_ring_attach(&mc1, mem, SIZE, LIMIT, TCR_RING_MC), 0);
	ck_assert_int_eq(tcr_ring_attach(&mc2, mem, SIZE, LIMIT, TCR_RING_MC), 0);
	ck_assert_int_eq(tcr_ring_enqueue_burst(&mp1, in, 2), 2);
	ck_assert_int_eq(tcr_ring_enqueue_burst(&mp2, in + 2, 2), 2);
	ck_assert_int_eq(tcr_ring_enqueue_bulk(&mp1, in, 5), 0);
	ck_assert_int_eq(tcr_ring_enqueue_burst(&mp2, in, 5), 4);
	ck_assert_int_eq(tcr_ring_enqueue_burst(&mp1, in, 1), 0);
	ck_assert_int_eq(tcr_ring_dequeue_burst(&mc1, out, 3), 3);
	ck_assert_uint_eq(out[0], 10);
	ck_assert_uint_eq(out[2], 12);
	ck_assert_int_eq(tcr_ring_dequeue_bulk(&mc2, out, 6), 0);
	ck_assert_int_eq(tcr_ring_dequeue_burst(&mc2, out, 8), 5);
	ck_assert_uint_eq(out[0], 13);
	ck_assert_uint_eq(out[1], 10);
	/* MC validates before claiming, like SC. */
	ck_assert_int_eq(tcr_ring_enqueue_burst(&mp1, in, 1), 1);
	((__u32 *)((struct tcr_ring_ctl *)mem + 1))[((struct tcr_ring_ctl *)mem)->cons_tail & (SIZE - 1)] = 999;
	ck_assert_int_eq(tcr_ring_dequeue_burst(&mc1, out, 1), -EBADMSG);
}
END_TEST

START_TEST(multi_party_waits_end_on_dead_peer)
{
	struct tcr_ring_ctl *c = mem;
	struct tcr_ring mp;
	uint32_t in[1] = { 5 };

	ck_assert_int_eq(tcr_ring_attach(&mp, mem, SIZE, LIMIT, TCR_RING_MP), 0);
	/* A producer claimed a position and died before publishing it. */
	c->prod_head = 1;
	ck_assert_int_eq(tcr_ring_enqueue_burst(&mp, in, 1), -ETIMEDOUT);
}
END_TEST

struct mt_arg {
	struct tcr_ring r;
	uint32_t base;
	uint64_t sum;
	unsigned int count;
};

#define MT_PER 50000u

static void *mt_producer(void *p)
{
	struct mt_arg *a = p;

	for (uint32_t i = 0; i < MT_PER;) {
		uint32_t v[4];
		unsigned int n = MT_PER - i < 4 ? MT_PER - i : 4;

		for (unsigned int k = 0; k < n; k++)
			v[k] = a->base + (i + k) % 1000;
		int k = tcr_ring_enqueue_burst(&a->r, v, n);

		ck_assert_int_ge(k, 0);
		if (k == 0)
			sched_yield();
		i += (uint32_t)k;
	}
	return NULL;
}

static void *mt_consumer(void *p)
{
	struct mt_arg *a = p;
	uint32_t v[8];

	while (a->count < a->base) {
		int k = tcr_ring_dequeue_burst(&a->r, v, 8);

		ck_assert_int_ge(k, 0);
		for (int i = 0; i < k; i++)
			a->sum += v[i];
		a->count += (unsigned int)k;
		if (k == 0 && tc_load_acquire((unsigned int *)&a->base) == 0)
			break;
		if (k == 0)
			sched_yield();
	}
	return NULL;
}

START_TEST(mpmc_threads_conserve_entries)
{
	void *big = tc_map(tcr_ring_bytes(64));
	struct mt_arg p[2], c[2];
	pthread_t tp[2], tc_[2];
	uint64_t expect = 0, got = 0;

	tcr_ring_format(big, 64);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(tcr_ring_attach(&p[i].r, big, 64, 5000, TCR_RING_MP), 0);
		p[i].base = (uint32_t)i * 2000;
		for (uint32_t k = 0; k < MT_PER; k++)
			expect += p[i].base + k % 1000;
	}
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(tcr_ring_attach(&c[i].r, big, 64, 5000, TCR_RING_MC), 0);
		c[i].sum = 0;
		c[i].count = 0;
		c[i].base = UINT32_MAX;	/* run until told to stop */
	}
	for (int i = 0; i < 2; i++) {
		pthread_create(&tp[i], NULL, mt_producer, &p[i]);
		pthread_create(&tc_[i], NULL, mt_consumer, &c[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(tp[i], NULL);
	/* Let consumers drain, then stop them. */
	while (tcr_ring_count(&c[0].r) > 0)
		sched_yield();
	for (int i = 0; i < 2; i++)
		tc_store_release(&c[i].base, 0);
	for (int i = 0; i < 2; i++)
		pthread_join(tc_[i], NULL);
	ck_assert_uint_eq(c[0].count + c[1].count, 2 * MT_PER);
	got = c[0].sum + c[1].sum;
	ck_assert_uint_eq(got, expect);
	munmap(big, tcr_ring_bytes(64));
}
END_TEST

START_TEST(wakeup_handshake)
{
	uint32_t in[1] = { 3 }, seq;

	ck_assert(!tcr_ring_prod_kick_needed(&prod));
	seq = tcr_ring_cons_wait_prepare(&cons);
	ck_assert(tcr_ring_prod_kick_needed(&prod));
	ck_assert_int_eq(tcr_ring_enqueue_burst(&prod, in, 1), 1);
	ck_assert_uint_eq(*tcr_ring_kick_consumer(&prod), seq + 1);
	tcr_ring_cons_wait_done(&cons);
	ck_assert(!tcr_ring_prod_kick_needed(&prod));
}
END_TEST

/* One sleep, one wake-up: the second publication before the consumer ran rings nothing. */
START_TEST(one_kick_per_sleep)
{
	uint32_t in[2] = { 3, 4 }, out[2];

	tcr_ring_cons_wait_prepare(&cons);
	ck_assert_int_eq(tcr_ring_enqueue_burst(&prod, in, 1), 1);
	ck_assert(tcr_ring_prod_kick_needed(&prod));
	tcr_ring_kick_consumer(&prod);
	ck_assert_int_eq(tcr_ring_enqueue_burst(&prod, in + 1, 1), 1);
	ck_assert(!tcr_ring_prod_kick_needed(&prod));
	/* the consumer woke, drained, and sleeps again: the next one rings */
	tcr_ring_cons_wait_done(&cons);
	ck_assert_int_eq(tcr_ring_dequeue_burst(&cons, out, 2), 2);
	tcr_ring_cons_wait_prepare(&cons);
	ck_assert_int_eq(tcr_ring_enqueue_burst(&prod, in, 1), 1);
	ck_assert(tcr_ring_prod_kick_needed(&prod));
}
END_TEST

/* The consumer says how it sleeps; the producer's kick returns it, once. */
START_TEST(kick_returns_how_the_consumer_sleeps)
{
	uint32_t in[1] = { 3 };

	ck_assert_uint_eq(tcr_ring_prod_kick(&prod), 0);
	tcr_ring_cons_wait_arm(&cons, TCR_WAKE_BELL);
	ck_assert_int_eq(tcr_ring_enqueue_burst(&prod, in, 1), 1);
	ck_assert_uint_eq(tcr_ring_prod_kick(&prod), TCR_WAKE_BELL);
	ck_assert_uint_eq(tcr_ring_prod_kick(&prod), 0);
	tcr_ring_cons_wait_prepare(&cons);
	ck_assert_uint_eq(tcr_ring_prod_kick(&prod), TCR_WAKE_FUTEX);
}
END_TEST

static Suite *ring_suite(void)
{
	Suite *s = suite_create("region_ring");
	TCase *tc = tcase_create("ring");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, attach_rejects_bad_geometry);
	tcase_add_test(tc, empty_and_full);
	tcase_add_test(tc, bulk_is_all_or_nothing);
	tcase_add_test(tc, wrap_around_and_index_overflow);
	tcase_add_test(tc, entry_out_of_range_consumes_nothing);
	tcase_add_test(tc, corrupt_positions_are_detected);
	tcase_add_test(tc, multi_party_sides);
	tcase_add_test(tc, multi_party_waits_end_on_dead_peer);
	tcase_add_test(tc, mpmc_threads_conserve_entries);
	tcase_add_test(tc, wakeup_handshake);
	tcase_add_test(tc, one_kick_per_sleep);
	tcase_add_test(tc, kick_returns_how_the_consumer_sleeps);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tc_run_suite(ring_suite());
}
