// SPDX-License-Identifier: MIT
#include <errno.h>

#include "hs_vmshare.h"

static uint64_t key(const uint64_t *head_ts, uint32_t nvm, uint32_t vm)
{
	return vm < nvm ? head_ts[vm] : HS_TS_EMPTY;
}

int hs_vmshare(const struct hs_vment *rq, uint32_t l, const uint64_t *head_ts,
	       uint32_t nvm, uint32_t g, uint32_t g_vnf,
	       struct hs_vmgrant *out)
{
	uint32_t d, left, base, extra;

	if (l == 0)
		return 0;
	if (!rq || !out || (nvm && !head_ts))
		return -EINVAL;
	/* Insertion sort, stable: the paper's InsertSort(RQ, OQ, l, n). */
	for (d = 0; d < l; d++) {
		struct hs_vmgrant x = { rq[d].vcpu, rq[d].vm, 0 };
		uint64_t kx = key(head_ts, nvm, x.vm);
		uint32_t e = d;

		while (e > 0 && key(head_ts, nvm, out[e - 1].vm) > kx) {
			out[e] = out[e - 1];
			e--;
		}
		out[e] = x;
	}
	left = g_vnf >= g ? 0 : g - g_vnf;
	base = left / l;
	extra = left % l;
	for (d = 0; d < l; d++)
		out[d].ticks = base + (d < extra ? 1 : 0);
	return (int)l;
}
