// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>

#include "hs_cfs.h"
#include "hs_sort.h"

static int by_load_desc(const void *a, const void *b, void *arg)
{
	const double *load = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;

	if (load[i] != load[j])
		return load[i] > load[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

int hs_cfs_place(struct hs_cfs_vcpu *v, const double *load, uint32_t n,
		 uint32_t npcpu, uint32_t *scratch, double *pcpu_load)
{
	uint32_t i, j;

	if (npcpu == 0 || (n && !v) || (load && n && (!scratch || !pcpu_load)))
		return -EINVAL;
	if (!load) {
		for (i = 0; i < n; i++)
			v[i].pcpu = i % npcpu;
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (!(load[i] >= 0.0))	/* also NaN */
			return -EINVAL;
		scratch[i] = i;
	}
	for (j = 0; j < npcpu; j++)
		pcpu_load[j] = 0.0;
	hs_sort(scratch, n, sizeof(*scratch), by_load_desc, (void *)load);
	for (i = 0; i < n; i++) {
		uint32_t best = 0;

		for (j = 1; j < npcpu; j++)
			if (pcpu_load[j] < pcpu_load[best])
				best = j;
		v[scratch[i]].pcpu = best;
		pcpu_load[best] += load[scratch[i]];
	}
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
	hs_sort(scratch, nr, sizeof(*scratch), by_pcpu_vrt, (void *)v);
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

struct fair_ctx {
	const struct hs_cfs_vcpu *v;
	const double *d;
};

static double clamp01(double x)
{
	if (!(x > 0.0))		/* also NaN */
		return 0.0;
	return x > 1.0 ? 1.0 : x;
}

static int by_pcpu_demand(const void *a, const void *b, void *arg)
{
	const struct fair_ctx *c = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	double di = clamp01(c->d[i]), dj = clamp01(c->d[j]);

	if (c->v[i].pcpu != c->v[j].pcpu)
		return c->v[i].pcpu < c->v[j].pcpu ? -1 : 1;
	if (di != dj)
		return di < dj ? -1 : 1;
	return c->v[i].vcpu < c->v[j].vcpu ? -1 : c->v[i].vcpu > c->v[j].vcpu;
}

int hs_cfs_fair(const struct hs_cfs_vcpu *v, const double *demand, uint32_t n,
		uint32_t npcpu, double *share, uint32_t *scratch)
{
	struct fair_ctx ctx = { v, demand };
	uint32_t i, a, b;

	if (n && (!v || !demand || !share || !scratch))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (v[i].pcpu >= npcpu)
			return -EINVAL;
		scratch[i] = i;
	}
	hs_sort(scratch, n, sizeof(*scratch), by_pcpu_demand, &ctx);
	for (a = 0; a < n; a = b) {
		double cap = 1.0;
		uint32_t k;

		for (b = a; b < n && v[scratch[b]].pcpu == v[scratch[a]].pcpu; b++)
			;
		/* ascending demand: the small ones are served in full while
		 * they fit under an equal split of what is left */
		for (i = a, k = b - a; i < b; i++, k--) {
			double d = clamp01(demand[scratch[i]]), fair = cap / k;
			double give = d < fair ? d : fair;

			share[scratch[i]] = give;
			cap -= give;
		}
	}
	return 0;
}
