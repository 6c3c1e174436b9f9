// SPDX-License-Identifier: MIT
/*
 * The service threads of a VNF that get work; see ch_psched_plan.h.
 *
 * `run` is written by the control plane (ch_psched_vnf_run_threads) and
 * read by the scheduler thread, both relaxed (one word, no order with
 * anything else needed; 0 means all threads): a
 * change takes effect at the next dispatch, descriptors already sent to a
 * thread stay there and are answered by it.
 */
#include <errno.h>

#include <tochain/barrier.h>

#include "ch_psched_plan.h"

/*
 * CH_DISPATCH_FLOW: a mix of the connection id (the TOE's ids differ in
 * a few low bits) reduced to @n.  The same id always gets the same thread.
 */
static uint32_t flow_thread(uint64_t conn_id, uint32_t n)
{
	uint64_t x = conn_id + 0x9e3779b97f4a7c15ull;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (uint32_t)(x % n);
}

uint32_t ch_psched_plan_thread(struct vnf *vn, uint64_t conn_id)
{
	uint32_t run = tc_load_relaxed(&vn->run), c;

	if (!run || run > vn->nthreads)
		run = vn->nthreads;
	if (vn->dispatch != CH_DISPATCH_FLOW)
		return vn->rr++ % run;
	/*
	 * A connection keeps its thread over a change of `run` as long as
	 * that thread still runs; only those of stopped threads move.
	 */
	c = flow_thread(conn_id, vn->nthreads);
	return c < run ? c : flow_thread(conn_id, run);
}

int ch_psched_vnf_run_threads(struct ch_psched *s, uint32_t vnf, uint32_t n)
{
	struct vnf *vn;

	if (vnf >= tc_load_acquire(&s->nvnfs))
		return -EINVAL;
	vn = &s->vnf[vnf];
	if (n == 0 || n > vn->nthreads)
		return -EINVAL;
	tc_store_relaxed(&vn->run, n);
	return 0;
}

uint32_t ch_psched_vnf_running(struct ch_psched *s, uint32_t vnf)
{
	uint32_t run;

	if (vnf >= tc_load_acquire(&s->nvnfs))
		return 0;
	run = tc_load_relaxed(&s->vnf[vnf].run);
	return run && run <= s->vnf[vnf].nthreads ? run : s->vnf[vnf].nthreads;
}
