// SPDX-License-Identifier: MIT
/* Unit tests for lib/region/pool.c: holders, validation, reclaim, conservation. */
#include <errno.h>

#include <tochain/pool.h>
#include "tc_check.h"

static const struct tcr_params P = {
	.name = "p", .kind = TCR_KIND_GUEST, .nbufs = 16, .slot_size = 64, .nchannels = 2,
};
static void *mem;
static struct tcr_region *r;
static struct tcr_pool *p;

static void setup(void)
{
	mem = tc_map(1 << 20);
	r = tcr_region_create_mem(mem, 1 << 20, &P);
	p = tcr_pool_create(r);
	ck_assert_ptr_nonnull(p);
}

static void teardown(void)
{
	tcr_pool_destroy(p);
	tcr_region_destroy(r);
	munmap(mem, 1 << 20);
}

static void assert_conserved(void)
{
	int sum = 0;

	for (uint32_t h = 0; h < TCR_HOLDER_CH(2); h++)
		sum += tcr_pool_count(p, h);
	ck_assert_int_eq(sum, 16);
}

START_TEST(alloc_until_empty_and_free)
{
	uint32_t idx[20];

	ck_assert_uint_eq(tcr_pool_alloc(p, idx, 5), 5);
	ck_assert_uint_eq(idx[0], 0);	/* lowest first */
	ck_assert_uint_eq(tcr_pool_alloc(p, idx + 5, 20), 11);
	ck_assert_uint_eq(tcr_pool_alloc(p, idx, 1), 0);
	ck_assert_int_eq(tcr_pool_count(p, TCR_HOLDER_HOST), 16);
	ck_assert_int_eq(tcr_pool_free(p, idx, 16), 0);
	ck_assert_int_eq(tcr_pool_count(p, TCR_HOLDER_FREE), 16);
	assert_conserved();
}
END_TEST

START_TEST(free_rejects_double_and_foreign)
{
	uint32_t idx[4], dup[2];

	ck_assert_uint_eq(tcr_pool_alloc(p, idx, 4), 4);
	dup[0] = idx[0];
	dup[1] = idx[0];
	ck_assert_int_eq(tcr_pool_free(p, dup, 2), -EINVAL);
	ck_assert_int_eq(tcr_pool_holder(p, idx[0]), TCR_HOLDER_HOST);	/* unchanged */
	ck_assert_int_eq(tcr_pool_free(p, idx, 1), 0);
	ck_assert_int_eq(tcr_pool_free(p, idx, 1), -EINVAL);		/* already free */
	dup[0] = 99;
	ck_assert_int_eq(tcr_pool_free(p, dup, 1), -EINVAL);
	assert_conserved();
}
END_TEST

START_TEST(channel_handoff_is_checked)
{
	uint32_t idx[4], bad[2];

	tcr_pool_alloc(p, idx, 4);
	ck_assert_int_eq(tcr_pool_to_channel(p, 0, idx, 2), 0);
	ck_assert_int_eq(tcr_pool_to_channel(p, 1, idx + 2, 2), 0);
	ck_assert_int_eq(tcr_pool_to_channel(p, 2, idx, 1), -EINVAL);
	ck_assert_int_eq(tcr_pool_to_channel(p, 1, idx, 1), -EINVAL);	/* not host-held */
	/* Channel 1 returns a buffer of channel 0: refused, nothing changes. */
	bad[0] = idx[2];
	bad[1] = idx[0];
	ck_assert_int_eq(tcr_pool_from_channel(p, 1, bad, 2), -EPERM);
	ck_assert_int_eq(tcr_pool_holder(p, idx[2]), TCR_HOLDER_CH(1));
	/* The same buffer twice in one batch. */
	bad[0] = bad[1] = idx[2];
	ck_assert_int_eq(tcr_pool_from_channel(p, 1, bad, 2), -EPERM);
	ck_assert_int_eq(tcr_pool_count(p, TCR_HOLDER_CH(1)), 2);
	ck_assert_int_eq(tcr_pool_from_channel(p, 1, idx + 2, 2), 0);
	ck_assert_int_eq(tcr_pool_count(p, TCR_HOLDER_HOST), 2);
	assert_conserved();
}
END_TEST

START_TEST(reclaim_takes_back_a_channel)
{
	uint32_t idx[10];

	tcr_pool_alloc(p, idx, 10);
	tcr_pool_to_channel(p, 0, idx, 6);
	tcr_pool_to_channel(p, 1, idx + 6, 3);
	ck_assert_uint_eq(tcr_pool_reclaim(p, 0), 6);
	ck_assert_uint_eq(tcr_pool_reclaim(p, 0), 0);
	ck_assert_uint_eq(tcr_pool_reclaim(p, 5), 0);
	ck_assert_int_eq(tcr_pool_count(p, TCR_HOLDER_FREE), 12);
	ck_assert_int_eq(tcr_pool_count(p, TCR_HOLDER_CH(1)), 3);
	ck_assert_int_eq(tcr_pool_count(p, TCR_HOLDER_CH(2)), -EINVAL);
	ck_assert_int_eq(tcr_pool_holder(p, 16), -ERANGE);
	assert_conserved();
	/* Reclaimed buffers are allocatable again. */
	ck_assert_uint_eq(tcr_pool_alloc(p, idx, 10), 10);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("region_pool");
	TCase *tc = tcase_create("pool");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, alloc_until_empty_and_free);
	tcase_add_test(tc, free_rejects_double_and_foreign);
	tcase_add_test(tc, channel_handoff_is_checked);
	tcase_add_test(tc, reclaim_takes_back_a_channel);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
