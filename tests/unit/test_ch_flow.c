// SPDX-License-Identifier: MIT
/* Unit tests for host-toe/chain/ch_flow.c: index, states, grace period, seqlock reads. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tochain/ch_flow.h"
#include "tc_check.h"

static char path[128];

static struct ch_flow_key key(uint16_t sport, uint16_t dport)
{
	struct ch_flow_key k;

	memset(&k, 0, sizeof(k));
	k.family = 4;
	k.l4proto = 6;
	k.sport = sport;
	k.dport = dport;
	k.saddr[0] = 10;
	k.saddr[3] = 2;
	k.daddr[0] = 10;
	k.daddr[3] = 1;
	return k;
}

/*
 * Every test (a child process under CK_FORK) works in a directory of its
 * own below one made by main, which removes the whole tree at the end,
 * also when a test failed before its teardown.
 */
static char base[64];

static int make_base(void)
{
	return tc_tmpdir_make(base, sizeof(base));
}

static void remove_base(void)
{
	tc_tmpdir_remove(base);
}

static void setup(void)
{
	snprintf(path, sizeof(path), "%s/flow-%d", base, getpid());
}

static void teardown(void)
{
	unlink(path);
}

START_TEST(open_find_read)
{
	struct ch_flows *f = ch_flows_create(path, 4);
	struct ch_flow_key k1 = key(1000, 80), k2 = key(1001, 80);
	struct ch_flow_entry e;
	const void *map;
	uint64_t size;
	int a, b;

	ck_assert_ptr_nonnull(f);
	map = ch_flows_map(f, &size);
	ck_assert_uint_eq(size, 4096);
	a = ch_flow_open(f, &k1, CH_FLOW_SYN);
	ck_assert_int_ge(a, 0);
	ck_assert_int_eq(ch_flow_open(f, &k1, CH_FLOW_SYN), a);	/* same flow */
	k1.saddr[7] = 0x55;	/* bytes beyond an IPv4 address do not count */
	ck_assert_int_eq(ch_flow_find(f, &k1), a);
	b = ch_flow_open(f, &k2, CH_FLOW_ESTABLISHED);
	ck_assert_int_ge(b, 0);
	ck_assert_int_ne(a, b);
	ck_assert_int_eq(ch_flow_set_state(f, (uint32_t)a, CH_FLOW_ESTABLISHED), 0);
	ck_assert_int_eq(ch_flow_read(map, size, (uint32_t)a, &e), 0);
	ck_assert_uint_eq(e.state, CH_FLOW_ESTABLISHED);
	ck_assert_uint_eq(e.key.sport, 1000);
	ck_assert_uint_eq(e.key.saddr[7], 0);
	ck_assert_uint_eq(e.gen, 1);
	ck_assert_uint_eq(e.seq % 2, 0);
	ck_assert_int_eq(ch_flow_read(map, size, 3, &e), -ENOENT);	/* free */
	ck_assert_int_eq(ch_flow_read(map, size, 4, &e), -ERANGE);
	ck_assert_int_eq(ch_flow_read(map, 63, 0, &e), -ERANGE);	/* mapping too small */
	ck_assert_int_eq(ch_flow_set_state(f, 3, CH_FLOW_SYN), -EINVAL);	/* not open */
	ck_assert_int_eq(ch_flow_set_state(f, (uint32_t)a, CH_FLOW_FREE), -EINVAL);
	ck_assert_int_eq(ch_flow_open(f, &(struct ch_flow_key){ .family = 4 }, CH_FLOW_FREE),
			 -EINVAL);
	ch_flows_destroy(f);
}
END_TEST

START_TEST(closed_entries_wait_for_both_chains)
{
	struct ch_flows *f = ch_flows_create(path, 2);
	struct ch_flow_key k1 = key(1, 2), k2 = key(3, 4), k3 = key(5, 6);
	struct ch_flow_entry e;
	const void *map;
	uint64_t size;
	int a, b;

	map = ch_flows_map(f, &size);
	a = ch_flow_open(f, &k1, CH_FLOW_ESTABLISHED);
	b = ch_flow_open(f, &k2, CH_FLOW_ESTABLISHED);
	ck_assert_int_eq(ch_flow_open(f, &k3, CH_FLOW_SYN), -ENOSPC);
	/* Close a after 10 inbound and 5 outbound descriptors were submitted. */
	ck_assert_int_eq(ch_flow_close(f, (uint32_t)a, 10, 5), 0);
	ck_assert_int_eq(ch_flow_close(f, (uint32_t)a, 10, 5), -EINVAL);
	ck_assert_int_eq(ch_flow_find(f, &k1), -ENOENT);
	ck_assert_int_eq(ch_flow_read(map, size, (uint32_t)a, &e), 0);
	ck_assert_uint_eq(e.state, CH_FLOW_CLOSED);	/* readers still see it */
	ck_assert_int_eq(ch_flow_open(f, &k3, CH_FLOW_SYN), -ENOSPC);
	ck_assert_uint_eq(ch_flow_reclaim(f, 9, 5), 0);	/* inbound not done */
	ck_assert_uint_eq(ch_flow_reclaim(f, 10, 4), 0);	/* outbound not done */
	ck_assert_uint_eq(ch_flow_free_count(f), 0);
	ck_assert_int_eq(ch_flow_close(f, (uint32_t)b, 12, 5), 0);
	ck_assert_uint_eq(ch_flow_reclaim(f, 11, 9), 1);	/* a only */
	ck_assert_uint_eq(ch_flow_free_count(f), 1);
	ck_assert_int_eq(ch_flow_read(map, size, (uint32_t)a, &e), -ENOENT);
	/* Reuse: another flow, another generation. */
	ck_assert_int_eq(ch_flow_open(f, &k3, CH_FLOW_SYN), a);
	ck_assert_int_eq(ch_flow_read(map, size, (uint32_t)a, &e), 0);
	ck_assert_uint_eq(e.gen, 2);
	ck_assert_uint_eq(e.key.sport, 5);
	ck_assert_uint_eq(ch_flow_reclaim(f, 12, 5), 1);
	ch_flows_destroy(f);
}
END_TEST

/* A reader never sees a half-written entry: sport == dport is invariant. */
struct race {
	const void *map;
	uint64_t size;
	volatile int stop;
	uint64_t reads, bad;
};

static void *reader(void *arg)
{
	struct race *r = arg;
	struct ch_flow_entry e;

	while (!r->stop) {
		int err = ch_flow_read(r->map, r->size, 0, &e);

		if (err == 0) {
			r->reads++;
			if (e.key.sport != e.key.dport || (e.state != CH_FLOW_SYN &&
			    e.state != CH_FLOW_ESTABLISHED && e.state != CH_FLOW_CLOSED))
				r->bad++;
		} else if (err != -ENOENT && err != -EAGAIN) {
			r->bad++;
		}
	}
	return NULL;
}

START_TEST(seqlock_reads_are_consistent)
{
	struct ch_flows *f = ch_flows_create(path, 1);
	struct race r = { 0 };
	pthread_t th;

	r.map = ch_flows_map(f, &r.size);
	pthread_create(&th, NULL, reader, &r);
	for (uint16_t i = 1; i < 30000; i++) {
		struct ch_flow_key k = key(i, i);
		int idx = ch_flow_open(f, &k, CH_FLOW_SYN);

		ck_assert_int_eq(idx, 0);
		ch_flow_set_state(f, 0, CH_FLOW_ESTABLISHED);
		ch_flow_close(f, 0, i, i);
		ck_assert_uint_eq(ch_flow_reclaim(f, i, i), 1);
		if (i % 512 == 0)
			sched_yield();
	}
	r.stop = 1;
	pthread_join(th, NULL);
	ck_assert_uint_eq(r.bad, 0);
	ch_flows_destroy(f);
}
END_TEST

int main(void)
{
	int rc;
	Suite *s = suite_create("ch_flow");
	TCase *tc = tcase_create("flow");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, open_find_read);
	tcase_add_test(tc, closed_entries_wait_for_both_chains);
	tcase_add_test(tc, seqlock_reads_are_consistent);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	if (make_base())
		return 1;
	rc = tc_run_suite(s);
	remove_base();
	return rc;
}
