// SPDX-License-Identifier: MIT
#include "hs_rate.h"

void hs_rate_init(struct hs_rate *r, uint64_t f_pps)
{
	r->cal_cost_s = 1.0 / (double)(f_pps ? f_pps : 1);
	r->cost_s = r->cal_cost_s;
	r->samples = 0;
}

bool hs_rate_update(struct hs_rate *r, uint64_t served, double busy_s)
{
	double c, lo = r->cal_cost_s / HS_RATE_MAX_DRIFT, hi = r->cal_cost_s * HS_RATE_MAX_DRIFT;

	if (served < HS_RATE_MIN_PKTS || !(busy_s > 0.0))
		return false;
	c = busy_s / (double)served;
	if (c < lo)
		c = lo;
	if (c > hi)
		c = hi;
	/* The first measurement replaces the calibration outright: a
	 * calibrated f far off would otherwise take several periods. */
	r->cost_s = r->samples ? r->cost_s + HS_RATE_ALPHA * (c - r->cost_s) : c;
	r->samples++;
	return true;
}

double hs_rate_f(const struct hs_rate *r)
{
	return 1.0 / r->cost_s;
}

uint32_t hs_rate_ticks(const struct hs_rate *r, uint64_t sla_pps, uint32_t period,
		       uint32_t threads)
{
	double x;
	uint64_t q;

	if (sla_pps == 0 || period == 0)
		return 0;
	x = (double)sla_pps * period * (1.0 + HS_RATE_HEADROOM) * r->cost_s /
	    (threads ? threads : 1);
	if (!(x < (double)period))
		return period;
	q = (uint64_t)x;		/* x >= 0: floor */
	if ((double)q < x - 1e-9)
		q++;			/* ceil, forgiving rounding noise */
	return q ? (uint32_t)q : 1;
}
