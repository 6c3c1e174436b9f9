// SPDX-License-Identifier: MIT
/* Per-chain scheduler counters; see include/tochain/counters.h. */
#include <errno.h>

#include <tochain/barrier.h>
#include <tochain/counters.h>

/* Single writer: a relaxed read-modify-write is enough, readers read once. */
static void add64(__u64 *p, uint64_t v)
{
	tc_store_relaxed(p, tc_load_relaxed(p) + v);
}

void tcr_counters_arrived(struct tcr_chain_counters *c, uint32_t n)
{
	add64(&c->arrivals, n);
}

void tcr_counters_finished(struct tcr_chain_counters *c, uint32_t n, uint32_t denied)
{
	add64(&c->finished, n);
	if (denied)
		add64(&c->denied, denied);
}

void tcr_counters_taken(struct tcr_chain_counters *c, uint32_t n)
{
	add64(&c->taken, n);
}

void tcr_counters_queues(struct tcr_chain_counters *c, uint32_t in_qlen,
			 uint32_t out_qlen, uint64_t out_head_tsc)
{
	tc_store_relaxed(&c->in_qlen, in_qlen);
	tc_store_relaxed(&c->out_qlen, out_qlen);
	tc_store_relaxed(&c->out_head_tsc, out_head_tsc);
}

void tcr_counters_raise_early(struct tcr_chain_counters *c, uint32_t flags)
{
	flags &= TCR_EARLY_INPUT_EMPTY | TCR_EARLY_OUTPUT_FULL;
	if (!flags)
		return;
	__atomic_fetch_or(&c->early_end, flags, __ATOMIC_RELEASE);
	/*
	 * The sequence word is there for a waiter that sleeps on it (futex);
	 * the packet scheduler's loop and tochain-sched take the flags when
	 * they poll, and wait on nothing here.
	 */
	tc_fetch_add_release(&c->early_seq, 1);
}

uint32_t tcr_counters_take_early(struct tcr_chain_counters *c)
{
	return __atomic_exchange_n(&c->early_end, 0, __ATOMIC_ACQUIRE);
}

int tcr_counters_snapshot(const struct tcr_chain_counters *c,
			  const struct tcr_counters_snap *prev, uint32_t max_qlen,
			  struct tcr_counters_snap *out)
{
	out->arrivals = tc_load_relaxed(&c->arrivals);
	out->finished = tc_load_relaxed(&c->finished);
	out->denied = tc_load_relaxed(&c->denied);
	out->taken = tc_load_relaxed(&c->taken);
	out->out_head_tsc = tc_load_relaxed(&c->out_head_tsc);
	out->in_qlen = tc_load_relaxed(&c->in_qlen);
	out->out_qlen = tc_load_relaxed(&c->out_qlen);
	out->early_end = tc_load_relaxed(&c->early_end);

	if (out->in_qlen > max_qlen || out->out_qlen > max_qlen ||
	    out->denied > out->finished)
		return -EBADMSG;
	if (prev && (out->arrivals < prev->arrivals || out->finished < prev->finished ||
		     out->denied < prev->denied || out->taken < prev->taken))
		return -EBADMSG;
	return 0;
}

void tcr_counters_close_period(struct tcr_chain_counters *c, uint64_t period,
			       uint32_t taken_in_period)
{
	tc_store_relaxed(&c->taken_hist[period % TCR_TAKEN_WINDOW], taken_in_period);
	tc_store_release(&c->period, period);
}

uint32_t tcr_counters_mean_taken(const struct tcr_chain_counters *c, unsigned int w)
{
	uint64_t period = tc_load_acquire(&c->period), sum = 0;
	unsigned int n;

	if (w == 0)
		w = 1;
	if (w > TCR_TAKEN_WINDOW)
		w = TCR_TAKEN_WINDOW;
	/* Periods are numbered from 1; period 0 means none closed yet. */
	n = period < w ? (unsigned int)period : w;
	if (n == 0)
		return 0;
	for (unsigned int i = 0; i < n; i++)
		sum += tc_load_relaxed(&c->taken_hist[(period - i) % TCR_TAKEN_WINDOW]);
	return (uint32_t)((sum + n / 2) / n);
}
