// SPDX-License-Identifier: MIT
/*
 * Unit tests for guest-lib/gl_wait.c: how the threads of a guest process
 * sleep on the one doorbell the TOE rings, and stay wakeable.  The test
 * plays the TOE on the host side of an in-memory channel (publish, then
 * ring only if a wait flag is up, as toe_chan.c's kick_guest), and a
 * thread asleep in poll with gl_wait_link (a sleeper whose poll has not
 * looked at the doorbell yet: the moment the race of rule 5 needs).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <tochain/chan.h>

#include "gl_real.h"
#include "gl_rt.h"
#include "gl_wait.h"
#include "tc_check.h"

static const struct tcr_params P = {
	.name = "w", .kind = TCR_KIND_GUEST, .nbufs = 32, .slot_size = 64, .nchannels = 1,
};
static void *mem;
static struct tcr_region *hr, *gr;
static struct tcr_pool *pool;
static struct tcr_chan host;
static int conn[2];

static void setup(void)
{
	gl_real_init();
	mem = tc_map(1 << 20);
	hr = tcr_region_create_mem(mem, 1 << 20, &P);
	gr = tcr_region_attach_mem(mem, 1 << 20, TCR_ATTACH_GUEST);
	pool = tcr_pool_create(hr);
	ck_assert_int_eq(tcr_chan_open(&host, hr, 0), 0);
	ck_assert_int_eq(tcr_chan_attach(&gl_rt.ch, gr, 0, TCR_RING_MP | TCR_RING_MC), 0);
	gl_rt.r = gr;
	gl_rt.attached = true;
	gl_rt.wake.efd_mine = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	gl_rt.wake.efd_host = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(gl_rt.wake.efd_mine, 0);
	ck_assert_int_ge(gl_rt.wake.efd_host, 0);
	/* the TOE's connection: never readable while the TOE lives */
	ck_assert_int_eq(pipe(conn), 0);
	gl_rt.conn = conn[0];
}

static void teardown(void)
{
	close(conn[0]);
	close(conn[1]);
	close(gl_rt.wake.efd_mine);
	close(gl_rt.wake.efd_host);
	gl_rt.attached = false;
	tcr_pool_destroy(pool);
	tcr_region_destroy(gr);
	tcr_region_destroy(hr);
	munmap(mem, 1 << 20);
}

/* The TOE at the end of its turn: ring the doorbell only if a guest thread said it sleeps. */
static bool toe_rings(void)
{
	uint64_t one = 1;

	if (!(tcr_ring_prod_kick_needed(&host.ring[TCR_CH_RX]) |
	      tcr_ring_prod_kick_needed(&host.ring[TCR_CH_FREE])))
		return false;
	ck_assert_int_eq(write(gl_rt.wake.efd_mine, &one, sizeof(one)), sizeof(one));
	return true;
}

/* The TOE publishes one buffer on RX (an answer). */
static uint32_t toe_publishes(void)
{
	uint32_t idx;

	ck_assert_int_eq(tcr_pool_alloc(pool, &idx, 1), 1);
	ck_assert_int_eq(tcr_chan_send(&host, pool, &idx, 1), 1);
	return idx;
}

/* The guest takes it back (as its pump would), the TOE frees it. */
static void guest_takes(void)
{
	uint32_t idx;

	ck_assert_int_eq(tcr_ring_dequeue_burst(&gl_rt.ch.ring[TCR_CH_RX], &idx, 1), 1);
	ck_assert_int_eq(tcr_ring_enqueue_burst(&gl_rt.ch.ring[TCR_CH_DONE], &idx, 1), 1);
	ck_assert_int_eq(tcr_chan_recv(&host, pool, TCR_CH_DONE, &idx, 1), 1);
	ck_assert_int_eq(tcr_pool_free(pool, &idx, 1), 0);
}

static void wait_sleepers(int n)
{
	for (int i = 0; i < 5000; i++) {
		int now;

		gl_rt_lock();
		now = gl_rt.nsleep;
		gl_rt_unlock();
		if (now == n)
			return;
		usleep(1000);
	}
	ck_abort_msg("%d sleepers never linked", n);
}

struct sleep_res {
	int r;
	bool rang;
};

/* A thread that sleeps once (bounded) and says how it woke. */
static void *sleep_once(void *arg)
{
	struct sleep_res *res = arg;

	gl_rt_lock();
	res->r = gl_wait_sleep(&gl_rt, NULL, 0, 5000, NULL, &res->rang);
	gl_rt_unlock();
	return NULL;
}

START_TEST(a_lone_sleeper_is_rung_and_then_not)
{
	struct sleep_res res = { 0 };
	pthread_t t;

	ck_assert(!toe_rings());	/* nobody sleeps: no doorbell */
	pthread_create(&t, NULL, sleep_once, &res);
	wait_sleepers(1);
	toe_publishes();
	ck_assert(toe_rings());
	pthread_join(t, NULL);
	ck_assert_int_eq(res.r, 0);
	ck_assert(res.rang);
	guest_takes();
	/* the last sleeper left: the flags are down, publishing rings no one */
	ck_assert_int_eq(gl_rt.nsleep, 0);
	toe_publishes();
	ck_assert(!toe_rings());
	guest_takes();
}
END_TEST

START_TEST(work_on_the_ring_keeps_a_thread_awake)
{
	struct gl_sleeper me;

	toe_publishes();
	gl_rt_lock();
	ck_assert(!gl_wait_link(&gl_rt, &me));	/* the re-check of rule 1 sees it */
	gl_wait_unlink(&gl_rt, &me, false);
	gl_rt_unlock();
	guest_takes();
}
END_TEST

/*
 * The stall of tests/integration/218 (a guest thread asleep in poll for
 * an answer that sat on RX): the TOE rang for something a running
 * thread's pump had already taken; the thread that drained the doorbell
 * found nothing new and kicked no one, and a sleeper whose poll looked at
 * the doorbell only after the drain slept on with the flags down, so the
 * TOE did not ring for its answer either.  Rule 5: the drainer raises
 * the flags again for the sleepers still linked.
 */
START_TEST(a_drained_doorbell_leaves_the_flags_up_for_the_others)
{
	struct sleep_res res = { 0 };
	struct gl_sleeper other;
	pthread_t t;

	gl_rt_lock();
	ck_assert(gl_wait_link(&gl_rt, &other));	/* asleep, its poll not yet woken */
	gl_rt_unlock();
	pthread_create(&t, NULL, sleep_once, &res);
	wait_sleepers(2);
	ck_assert(toe_rings());	/* for what a running thread took meanwhile */
	pthread_join(t, NULL);
	ck_assert_int_eq(res.r, 0);
	ck_assert(res.rang);	/* it drained the doorbell */
	ck_assert_int_eq(gl_rt.nsleep, 1);
	/* the answer of the thread still asleep: the TOE must ring for it */
	toe_publishes();
	ck_assert_msg(toe_rings(), "a sleeper is linked but the TOE did not ring");
	gl_rt_lock();
	gl_wait_unlink(&gl_rt, &other, false);
	gl_rt_unlock();
	guest_takes();
}
END_TEST

START_TEST(a_kick_wakes_a_sleeper_without_the_doorbell)
{
	struct sleep_res res = { 0 };
	pthread_t t;

	pthread_create(&t, NULL, sleep_once, &res);
	wait_sleepers(1);
	gl_rt_lock();
	gl_wait_wake_all(&gl_rt);	/* rule 2: socket state changed */
	gl_rt_unlock();
	pthread_join(t, NULL);
	ck_assert_int_eq(res.r, 0);
	ck_assert(!res.rang);
	ck_assert_int_eq(gl_rt.nsleep, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gl_wait");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, a_lone_sleeper_is_rung_and_then_not);
	tcase_add_test(tc, work_on_the_ring_keeps_a_thread_awake);
	tcase_add_test(tc, a_drained_doorbell_leaves_the_flags_up_for_the_others);
	tcase_add_test(tc, a_kick_wakes_a_sleeper_without_the_doorbell);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
