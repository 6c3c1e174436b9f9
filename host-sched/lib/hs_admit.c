// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "hs_admit.h"

static void say(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (!why || whylen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

static const char *nm(const char *s)
{
	return s ? s : "?";
}

int hs_admit(const struct hs_chain_cfg *chains, uint32_t n, uint32_t npcpu,
	     uint32_t g, struct hs_chain_quota *q, char *why, size_t whylen)
{
	uint64_t total = 0;
	uint32_t i, k;
	int rc;

	say(why, whylen, "ok");
	if ((n && (!chains || !q)) || npcpu == 0 || g == 0) {
		say(why, whylen, "bad arguments");
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		const struct hs_chain_cfg *c = &chains[i];

		if (c->nvnf > HS_MAX_VNFS) {
			say(why, whylen, "chain %s: %" PRIu32 " VNFs, at most %d",
			    nm(c->name), c->nvnf, HS_MAX_VNFS);
			return -EINVAL;
		}
		q[i].nvcpu = 0;
		q[i].ticks = 0;
		for (k = 0; k < c->nvnf; k++) {
			const struct hs_vnf_cfg *v = &c->vnf[k];

			if (v->max_threads == 0 || v->max_threads > HS_MAX_THREADS ||
			    v->f_pps == 0) {
				say(why, whylen,
				    "chain %s, VNF %s: needs f > 0 and 1..%d threads",
				    nm(c->name), nm(v->name), HS_MAX_THREADS);
				return -EINVAL;
			}
			rc = hs_quota(c->sla_pps, v->f_pps, g, v->max_threads,
				      &q[i].q[k]);
			if (rc == -ERANGE) {
				say(why, whylen,
				    "chain %s, VNF %s: SLA %" PRIu64 " pkt/s needs more than %" PRIu32
				    " threads of %" PRIu64 " pkt/s",
				    nm(c->name), nm(v->name), c->sla_pps,
				    v->max_threads, v->f_pps);
				return rc;
			}
			if (rc)
				return rc;
			if (q[i].q[k].ticks > g) {	/* cannot happen with C = g */
				say(why, whylen,
				    "chain %s, VNF %s: quota %" PRIu32 " ticks exceeds the period (%" PRIu32 ")",
				    nm(c->name), nm(v->name), q[i].q[k].ticks, g);
				return -ERANGE;
			}
			q[i].nvcpu += q[i].q[k].threads;
			q[i].ticks += (uint64_t)q[i].q[k].threads * q[i].q[k].ticks;
		}
		if (q[i].nvcpu > npcpu) {
			say(why, whylen,
			    "chain %s: %" PRIu32 " VNF vCPUs but only %" PRIu32
			    " pCPUs (gang members need distinct pCPUs)",
			    nm(c->name), q[i].nvcpu, npcpu);
			return -E2BIG;
		}
		total += q[i].ticks;
		if (total > (uint64_t)npcpu * g) {
			say(why, whylen,
			    "chain %s: quotas reach %" PRIu64 " ticks, over the partition's %" PRIu64
			    " (%" PRIu32 " pCPUs x %" PRIu32 ")",
			    nm(c->name), total, (uint64_t)npcpu * g, npcpu, g);
			return -ENOSPC;
		}
	}
	return 0;
}
