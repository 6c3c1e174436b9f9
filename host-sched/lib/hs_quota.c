// SPDX-License-Identifier: MIT
#include <errno.h>

#include "hs_quota.h"

int hs_quota(uint64_t sla_pps, uint64_t f_pps, uint32_t period,
	     uint32_t max_threads, struct hs_quota *q)
{
	uint64_t r, num, den;

	if (!q || f_pps == 0 || period == 0 || max_threads == 0)
		return -EINVAL;
	if (sla_pps == 0) {
		q->ticks = 0;
		q->threads = 0;
		return 0;
	}
	r = sla_pps / f_pps + 1;	/* smallest R with t < f*R */
	if (r > max_threads)
		return -ERANGE;
	/* Bounded operands: t and f are < 2^40 pps in any sane setup, and we
	 * refuse those that could overflow the products below. */
	if (sla_pps > UINT64_MAX / period || f_pps > UINT64_MAX / r)
		return -ERANGE;
	num = sla_pps * period;
	den = f_pps * r;
	q->ticks = (uint32_t)((num + den - 1) / den);	/* <= period since t < f*R */
	q->threads = (uint32_t)r;
	return 0;
}
