// SPDX-License-Identifier: MIT
/*
 * Algorithm 1.  Line 1 of the paper's listing says "compute each chain's
 * priority per eq. (2)"; eq. 2 is the quota formula, the priority is eq. 1.
 * We read it as a typo for eq. 1 (priorities come from hs_prio) with the
 * quotas of eq. 2 being an input (q_ik), which is what the listing's input
 * line says.  The paper sorts with insertion sort; any sort giving the same
 * total order (priority descending, then chain index) is equivalent; we
 * use a bottom-up merge sort into the workspace (O(n log n), nothing
 * allocated per period, and the hottest part of planning 1,000 chains).
 *
 * The criterion (q_ik + u_j - u)^2 is compared exactly in integers: with
 * U the chain-inclusive total and m the pCPU count, u = U/m and
 * (q + u_j - u)^2 = (m(q + u_j) - U)^2 / m^2, so minimising
 * |m(q + u_j) - U| picks the same pCPU without rounding ties away.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hs_gang.h"

struct rank {
	double h;
	uint32_t i;
};

struct hs_gang_ws {
	uint32_t nchain, npcpu;
	struct rank *order;
	struct rank *tmp;	/* merge sort's second buffer */
	uint64_t *u;		/* ticks placed on pCPU j this period */
	uint32_t words;		/* 64-bit words per pCPU bitmap */
	uint32_t g;		/* buckets 0..g exist */
	uint64_t *bucket;	/* (g+1) bitmaps: pCPUs with that load */
	uint64_t *used;		/* bitmap: pCPUs used by the current chain */
};

static uint64_t *bucket_of(struct hs_gang_ws *ws, uint64_t load)
{
	return &ws->bucket[load * ws->words];
}

static void move(struct hs_gang_ws *ws, uint32_t j, uint64_t from, uint64_t to)
{
	bucket_of(ws, from)[j / 64] &= ~(1ull << (j % 64));
	bucket_of(ws, to)[j / 64] |= 1ull << (j % 64);
}

/* Lowest eligible pCPU with load @load, or UINT32_MAX. */
static uint32_t lowest(struct hs_gang_ws *ws, uint64_t load)
{
	const uint64_t *b = bucket_of(ws, load);
	uint32_t w;

	for (w = 0; w < ws->words; w++) {
		uint64_t x = b[w] & ~ws->used[w];

		if (x)
			return w * 64 + (uint32_t)__builtin_ctzll(x);
	}
	return UINT32_MAX;
}

/* The pCPU minimising |m(q + u_j) - U| over eligible j (u_j + q <= g, not
 * used by this chain), ties to the lowest j; UINT32_MAX if none. */
static uint32_t choose(struct hs_gang_ws *ws, uint64_t q, int64_t big_u)
{
	int64_t m = ws->npcpu, top, lo, hi;

	if (q > ws->g)
		return UINT32_MAX;
	top = (int64_t)(ws->g - q);		/* highest eligible load */
	/* ideal load x* = (U - m q)/m; start at floor(x*) clamped */
	lo = big_u - m * (int64_t)q;
	lo = lo < 0 ? -1 - (-lo - 1) / m : lo / m;	/* floor division */
	if (lo > top)
		lo = top;
	hi = lo + 1;
	if (lo < 0) {
		lo = -1;
		hi = 0;
	}
	while (lo >= 0 || hi <= top) {
		int64_t dl = INT64_MAX, dh = INT64_MAX;
		uint32_t a = UINT32_MAX, b = UINT32_MAX;

		if (lo >= 0) {
			dl = m * ((int64_t)q + lo) - big_u;
			dl = dl < 0 ? -dl : dl;
		}
		if (hi <= top) {
			dh = m * ((int64_t)q + hi) - big_u;
			dh = dh < 0 ? -dh : dh;
		}
		if (dl <= dh)
			a = lowest(ws, (uint64_t)lo);
		if (dh <= dl)
			b = lowest(ws, (uint64_t)hi);
		if (a != UINT32_MAX || b != UINT32_MAX)
			return a < b ? a : b;
		if (dl <= dh)
			lo--;
		if (dh <= dl)
			hi++;
	}
	return UINT32_MAX;
}

struct hs_gang_ws *hs_gang_ws_create(uint32_t nchain, uint32_t npcpu,
				     uint32_t g)
{
	struct hs_gang_ws *ws;

	if (npcpu == 0 || g == 0) {
		errno = EINVAL;
		return NULL;
	}
	ws = calloc(1, sizeof(*ws));
	if (!ws)
		return NULL;
	ws->nchain = nchain;
	ws->npcpu = npcpu;
	ws->order = calloc(nchain ? nchain : 1, sizeof(*ws->order));
	ws->tmp = calloc(nchain ? nchain : 1, sizeof(*ws->tmp));
	ws->u = calloc(npcpu, sizeof(*ws->u));
	ws->words = (npcpu + 63) / 64;
	ws->g = g;
	ws->bucket = calloc(((size_t)g + 1) * ws->words, sizeof(*ws->bucket));
	ws->used = calloc(ws->words, sizeof(*ws->used));
	if (!ws->order || !ws->tmp || !ws->u || !ws->bucket || !ws->used) {
		hs_gang_ws_destroy(ws);
		errno = ENOMEM;
		return NULL;
	}
	return ws;
}

void hs_gang_ws_destroy(struct hs_gang_ws *ws)
{
	if (!ws)
		return;
	free(ws->used);
	free(ws->bucket);
	free(ws->u);
	free(ws->tmp);
	free(ws->order);
	free(ws);
}

static void clear_used(struct hs_gang_ws *ws)
{
	memset(ws->used, 0, ws->words * sizeof(*ws->used));
}

/* Does x go before y?  Priority descending, then chain index. */
static inline bool before(const struct rank *x, const struct rank *y)
{
	if (x->h != y->h)
		return x->h > y->h;
	return x->i < y->i;
}

/* Sorts ws->order[0..n) by before(); bottom-up merge sort. */
static void sort_ranks(struct hs_gang_ws *ws, uint32_t n)
{
	struct rank *src = ws->order, *dst = ws->tmp, *t;
	uint32_t width, lo;

	for (width = 1; width < n; width *= 2) {
		for (lo = 0; lo < n; lo += 2 * width) {
			uint32_t mid = lo + width < n ? lo + width : n;
			uint32_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			uint32_t a = lo, b = mid, o = lo;

			while (a < mid && b < hi)
				dst[o++] = before(&src[b], &src[a]) ? src[b++] : src[a++];
			while (a < mid)
				dst[o++] = src[a++];
			while (b < hi)
				dst[o++] = src[b++];
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != ws->order)
		memcpy(ws->order, src, (size_t)n * sizeof(*src));
}

/* Undo the slots a chain added from index @from on. */
static void rollback(struct hs_plan *plan, struct hs_gang_ws *ws, uint32_t from)
{
	uint32_t s;

	for (s = from; s < plan->nslot; s++) {
		uint32_t j = plan->pcpu_of[s];

		move(ws, j, ws->u[j], ws->u[j] - plan->slot[s].ticks);
		ws->u[j] -= plan->slot[s].ticks;
		plan->vnf_ticks[j] -= plan->slot[s].ticks;
	}
	plan->nslot = from;
}

int hs_gang_place(const struct hs_chain_cfg *chains,
		  const struct hs_chain_quota *q, const double *prio,
		  uint32_t n, struct hs_gang_ws *ws, struct hs_plan *plan)
{
	uint32_t m, i, o, k, r, j, nrank = 0;
	uint64_t total = 0;
	int placed = 0, rc;

	if (!ws || !plan || n > ws->nchain || plan->npcpu != ws->npcpu ||
	    plan->g != ws->g || (n && (!chains || !q || !prio)))
		return -EINVAL;
	m = ws->npcpu;
	memset(ws->bucket, 0, ((size_t)ws->g + 1) * ws->words * sizeof(*ws->bucket));
	for (j = 0; j < m; j++) {
		ws->u[j] = 0;
		ws->bucket[j / 64] |= 1ull << (j % 64);	/* load 0 */
	}
	for (i = 0; i < n; i++) {
		if (prio[i] > 0.0 && q[i].nvcpu > 0) {
			ws->order[nrank].h = prio[i];
			ws->order[nrank].i = i;
			nrank++;
		}
	}
	sort_ranks(ws, nrank);

	for (o = 0; o < nrank; o++) {
		const struct hs_chain_cfg *c;
		const struct hs_chain_quota *cq;
		uint32_t from = plan->nslot;
		int64_t big_u;
		int fits = 1;

		i = ws->order[o].i;
		c = &chains[i];
		cq = &q[i];
		big_u = (int64_t)(total + cq->ticks);	/* m * u */
		for (k = 0; k < c->nvnf && fits; k++) {
			uint64_t qk = cq->q[k].ticks;

			for (r = 0; r < cq->q[k].threads; r++) {
				uint32_t s = choose(ws, qk, big_u);

				if (s == UINT32_MAX) {
					fits = 0;
					break;
				}
				rc = hs_plan_add(plan, s, c->vnf[k].vcpu[r], i, k,
						 (uint32_t)qk, HS_KIND_VNF);
				if (rc) {
					rollback(plan, ws, from);
					clear_used(ws);
					return rc;
				}
				move(ws, s, ws->u[s], ws->u[s] + qk);
				ws->u[s] += qk;
				ws->used[s / 64] |= 1ull << (s % 64);
			}
		}
		clear_used(ws);
		if (!fits) {
			rollback(plan, ws, from);
			plan->ndeferred++;
			continue;
		}
		total += cq->ticks;
		placed++;
	}
	return placed;
}
