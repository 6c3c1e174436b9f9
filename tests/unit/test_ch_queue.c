// SPDX-License-Identifier: MIT
/* Unit tests for host-toe/chain/ch_queue.c: capacity, order, full queue, SPSC threads. */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "ch_queue.h"
#include "tc_check.h"

START_TEST(fifo_and_full)
{
	struct ch_queue *q = ch_queue_create(5, sizeof(uint64_t));	/* rounds to 8 */
	uint64_t in[10], out[10];

	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_null(ch_queue_create(0, 8));
	for (int i = 0; i < 10; i++)
		in[i] = 100 + (uint64_t)i;
	ck_assert_ptr_null(ch_queue_peek(q));
	ck_assert_uint_eq(ch_queue_push(q, in, 10), 8);		/* full refuses */
	ck_assert_uint_eq(ch_queue_len(q), 8);
	ck_assert_uint_eq(ch_queue_room(q), 0);
	ck_assert_uint_eq(ch_queue_push(q, in, 1), 0);
	ck_assert_uint_eq(*(const uint64_t *)ch_queue_peek(q), 100);
	ck_assert_uint_eq(ch_queue_pop(q, out, 3), 3);
	ck_assert_uint_eq(out[0], 100);
	ck_assert_uint_eq(out[2], 102);
	ck_assert_uint_eq(ch_queue_push(q, in + 8, 2), 2);		/* wraps */
	ck_assert_uint_eq(ch_queue_pop(q, out, 10), 7);
	ck_assert_uint_eq(out[4], 107);
	ck_assert_uint_eq(out[5], 108);
	ck_assert_uint_eq(out[6], 109);
	ck_assert_uint_eq(ch_queue_pop(q, out, 1), 0);
	ch_queue_destroy(q);
}
END_TEST

#define N 100000

static void *producer(void *arg)
{
	struct ch_queue *q = arg;

	for (uint64_t i = 0; i < N;) {
		unsigned int k = ch_queue_push(q, &i, 1);

		if (!k)
			sched_yield();	/* two shared cores: let the consumer run */
		i += k;
	}
	return NULL;
}

START_TEST(spsc_threads)
{
	struct ch_queue *q = ch_queue_create(64, sizeof(uint64_t));
	uint64_t next = 0, buf[16];
	pthread_t th;

	pthread_create(&th, NULL, producer, q);
	while (next < N) {
		unsigned int k = ch_queue_pop(q, buf, 16);

		if (!k)
			sched_yield();
		for (unsigned int i = 0; i < k; i++)
			ck_assert_uint_eq(buf[i], next++);
	}
	pthread_join(th, NULL);
	ch_queue_destroy(q);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ch_queue");
	TCase *tc = tcase_create("queue");

	tcase_add_test(tc, fifo_and_full);
	tcase_add_test(tc, spsc_threads);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
