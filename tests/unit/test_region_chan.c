// SPDX-License-Identifier: MIT
/* Unit tests for lib/region/chan.c: the four rings of a channel, host checks. */
#include <errno.h>

#include <tochain/chan.h>
#include "tc_check.h"

static const struct tcr_params P = {
	.name = "c", .kind = TCR_KIND_GUEST, .nbufs = 32, .slot_size = 64, .nchannels = 2,
};
static void *mem;
static struct tcr_region *hr, *gr;
static struct tcr_pool *p;
static struct tcr_chan h, g;

static void setup(void)
{
	mem = tc_map(1 << 20);
	hr = tcr_region_create_mem(mem, 1 << 20, &P);
	gr = tcr_region_attach_mem(mem, 1 << 20, TCR_ATTACH_GUEST);
	p = tcr_pool_create(hr);
	ck_assert_int_eq(tcr_chan_attach(&g, gr, 0, 0), -ENOTCONN);
	ck_assert_int_eq(tcr_chan_open(&h, hr, 0), 0);
	ck_assert_int_eq(tcr_chan_attach(&g, gr, 0, TCR_RING_MP | TCR_RING_MC), 0);
}

static void teardown(void)
{
	tcr_pool_destroy(p);
	tcr_region_destroy(gr);
	tcr_region_destroy(hr);
	munmap(mem, 1 << 20);
}

START_TEST(grant_fill_return_cycle)
{
	uint32_t idx[8];

	ck_assert_int_eq(tcr_chan_grant(&h, p, 4), 4);
	ck_assert_int_eq(tcr_pool_count(p, TCR_HOLDER_CH(0)), 4);
	/* Guest takes two grants, fills them, sends them. */
	ck_assert_int_eq(tcr_ring_dequeue_burst(&g.ring[TCR_CH_FREE], idx, 2), 2);
	ck_assert_int_eq(tcr_ring_enqueue_burst(&g.ring[TCR_CH_TX], idx, 2), 2);
	ck_assert_int_eq(tcr_chan_recv(&h, p, TCR_CH_TX, idx, 8), 2);
	ck_assert_int_eq(tcr_pool_count(p, TCR_HOLDER_HOST), 2);
	/* Host delivers them back on RX; guest finishes them on DONE. */
	ck_assert_int_eq(tcr_chan_send(&h, p, idx, 2), 2);
	ck_assert_int_eq(tcr_ring_dequeue_burst(&g.ring[TCR_CH_RX], idx, 8), 2);
	ck_assert_int_eq(tcr_ring_enqueue_burst(&g.ring[TCR_CH_DONE], idx, 2), 2);
	ck_assert_int_eq(tcr_chan_recv(&h, p, TCR_CH_DONE, idx, 8), 2);
	ck_assert_int_eq(tcr_pool_free(p, idx, 2), 0);
	ck_assert_int_eq(tcr_pool_count(p, TCR_HOLDER_FREE), 30);
}
END_TEST

START_TEST(wrong_direction_is_refused)
{
	uint32_t idx[1] = { 0 };

	ck_assert_int_eq(tcr_chan_recv(&h, p, TCR_CH_RX, idx, 1), -EINVAL);
	ck_assert_int_eq(tcr_chan_send_ring(&h, p, TCR_CH_TX, idx, 1), -EINVAL);
	ck_assert_int_eq(tcr_chan_recv(&g, p, TCR_CH_TX, idx, 1), -EINVAL);
	/* Sending a buffer the host does not hold. */
	ck_assert_int_eq(tcr_chan_send(&h, p, idx, 1), -EINVAL);
}
END_TEST

START_TEST(forged_index_is_caught_and_close_reclaims)
{
	uint32_t idx[4], mine[4];

	ck_assert_int_eq(tcr_chan_grant(&h, p, 3), 3);
	tcr_pool_alloc(p, mine, 2);	/* host holds these (e.g. in a chain) */
	/* The guest sends a host-held buffer as if it were its own. */
	ck_assert_int_eq(tcr_ring_enqueue_burst(&g.ring[TCR_CH_TX], mine, 1), 1);
	ck_assert_int_eq(tcr_chan_recv(&h, p, TCR_CH_TX, idx, 4), -EPERM);
	ck_assert_int_eq(tcr_pool_holder(p, mine[0]), TCR_HOLDER_HOST);
	ck_assert(!tcr_chan_stale(&g));
	ck_assert_uint_eq(tcr_chan_close(&h, p), 3);
	ck_assert(tcr_chan_stale(&g));
	ck_assert_int_eq(tcr_pool_count(p, TCR_HOLDER_FREE), 30);
	ck_assert_int_eq(tcr_pool_count(p, TCR_HOLDER_HOST), 2);
	/* Reopen: a new epoch, empty rings, the guest reattaches. */
	ck_assert_int_eq(tcr_chan_open(&h, hr, 0), 0);
	ck_assert_int_eq(tcr_chan_attach(&g, gr, 0, 0), 0);
	ck_assert(!tcr_chan_stale(&g));
	ck_assert_int_eq(tcr_ring_count(&g.ring[TCR_CH_FREE]), 0);
}
END_TEST

START_TEST(reformatted_region_makes_it_stale)
{
	struct tcr_chan h2;

	/*
	 * A new TOE formats the region again and gives channel 0, at the
	 * same epoch (epochs start afresh), to another process: the old
	 * party must see its channel stale, or it writes into the other's
	 * rings (the soak's nginx master on its first call after a TOE kill).
	 */
	ck_assert(!tcr_chan_stale(&g));
	ck_assert_int_eq(tcr_region_reset(hr), 0);
	ck_assert_int_eq(tcr_chan_open(&h2, hr, 0), 0);
	ck_assert_uint_eq(h2.epoch, g.epoch);
	ck_assert(tcr_chan_stale(&g));
}
END_TEST

START_TEST(full_rx_keeps_the_rest_host_held)
{
	uint32_t idx[32];
	void *m2 = tc_map(1 << 20);
	struct tcr_params q = P;
	struct tcr_region *r2;
	struct tcr_pool *p2;
	struct tcr_chan h2;

	q.ring_size = 32;
	q.nbufs = 32;
	r2 = tcr_region_create_mem(m2, 1 << 20, &q);
	p2 = tcr_pool_create(r2);
	ck_assert_int_eq(tcr_chan_open(&h2, r2, 1), 0);
	ck_assert_uint_eq(tcr_pool_alloc(p2, idx, 32), 32);
	ck_assert_int_eq(tcr_chan_send(&h2, p2, idx, 20), 20);
	ck_assert_int_eq(tcr_chan_send(&h2, p2, idx + 20, 12), 12);
	ck_assert_int_eq(tcr_chan_grant(&h2, p2, 5), 0);	/* stock empty */
	ck_assert_int_eq(tcr_pool_count(p2, TCR_HOLDER_CH(1)), 32);
	ck_assert_uint_eq(tcr_chan_close(&h2, p2), 32);
	tcr_pool_destroy(p2);
	tcr_region_destroy(r2);
	munmap(m2, 1 << 20);
}
END_TEST

START_TEST(guest_cannot_open)
{
	struct tcr_chan x;

	ck_assert_int_eq(tcr_chan_open(&x, gr, 1), -EPERM);
	ck_assert_int_eq(tcr_chan_open(&x, hr, 2), -EINVAL);
	ck_assert_int_eq(tcr_chan_attach(&x, gr, 9, 0), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("region_chan");
	TCase *tc = tcase_create("chan");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, grant_fill_return_cycle);
	tcase_add_test(tc, wrong_direction_is_refused);
	tcase_add_test(tc, forged_index_is_caught_and_close_reclaims);
	tcase_add_test(tc, reformatted_region_makes_it_stale);
	tcase_add_test(tc, full_rx_keeps_the_rest_host_held);
	tcase_add_test(tc, guest_cannot_open);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
