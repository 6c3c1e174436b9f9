// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>

#include "hs_cfs.h"

int hs_cfs_place(struct hs_cfs_vcpu *v, uint32_t n, uint32_t npcpu)
{
	uint32_t i;

	if (npcpu == 0 || (n && !v))
		return -EINVAL;
	for (i = 0; i < n; i++)
		v[i].pcpu = i % npcpu;
	return 0;
}

static int by_pcpu_vrt(const void *a, const void *b, void *arg)
{
	const struct hs_cfs_vcpu *v = arg;
	const struct hs_cfs_vcpu *x = &v[*(const uint32_t *)a];
	const struct hs_cfs_vcpu *y = &v[*(const uint32_t *)b];

	if (x->pcpu != y->pcpu)
		return x->pcpu < y->pcpu ? -1 : 1;
	if (x->vruntime != y->vruntime)
		return x->vruntime < y->vruntime ? -1 : 1;
	return x->vcpu < y->vcpu ? -1 : x->vcpu > y->vcpu;
}

int hs_cfs_plan(const struct hs_cfs_vcpu *v, uint32_t n, uint32_t *scratch,
		struct hs_plan *plan)
{
	uint32_t i, nr = 0, a, b;
	int rc;

	if (!plan || (n && (!v || !scratch)))
		return -EINVAL;
	hs_plan_reset(plan);
	for (i = 0; i < n; i++) {
		if (v[i].pcpu >= plan->npcpu)
			return -EINVAL;
		if (v[i].runnable)
			scratch[nr++] = i;
	}
	qsort_r(scratch, nr, sizeof(*scratch), by_pcpu_vrt, (void *)v);
	for (a = 0; a < nr; a = b) {
		uint32_t pc = v[scratch[a]].pcpu, l, base, extra;

		for (b = a; b < nr && v[scratch[b]].pcpu == pc; b++)
			;
		l = b - a;
		base = plan->g / l;
		extra = plan->g % l;
		for (i = a; i < b; i++) {
			const struct hs_cfs_vcpu *x = &v[scratch[i]];
			uint32_t t = base + (i - a < extra ? 1 : 0);

			if (t == 0)
				continue;
			rc = hs_plan_add(plan, pc, x->vcpu, x->chain, x->owner, t,
					 (enum hs_kind)x->kind);
			if (rc)
				return rc;
		}
	}
	hs_plan_finish(plan);
	return (int)plan->nslot;
}
