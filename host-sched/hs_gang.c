// SPDX-License-Identifier: MIT
/*
 * Algorithm 1.  Line 1 of the paper's listing says "compute each chain's
 * priority per eq. (2)"; eq. 2 is the quota formula, the priority is eq. 1.
 * We read it as a typo for eq. 1 (priorities come from hs_prio) with the
 * quotas of eq. 2 being an input (q_ik), which is what the listing's input
 * line says.  The paper sorts with insertion sort; any sort giving the same
 * total order (priority descending, then chain index) is equivalent.
 *
 * The criterion (q_ik + u_j - u)^2 is compared exactly in integers: with
 * U the chain-inclusive total and m the pCPU count, u = U/m and
 * (q + u_j - u)^2 = (m(q + u_j) - U)^2 / m^2, so minimising
 * |m(q + u_j) - U| picks the same pCPU without rounding ties away.
 */
#include <errno.h>
#include <stdlib.h>

#include "hs_gang.h"

struct rank {
	double h;
	uint32_t i;
};

struct hs_gang_ws {
	uint32_t nchain, npcpu;
	struct rank *order;
	uint64_t *u;		/* ticks placed on pCPU j this period */
	uint32_t *stamp;	/* last chain (+1) that used pCPU j */
};

struct hs_gang_ws *hs_gang_ws_create(uint32_t nchain, uint32_t npcpu)
{
	struct hs_gang_ws *ws;

	if (npcpu == 0) {
		errno = EINVAL;
		return NULL;
	}
	ws = calloc(1, sizeof(*ws));
	if (!ws)
		return NULL;
	ws->nchain = nchain;
	ws->npcpu = npcpu;
	ws->order = calloc(nchain ? nchain : 1, sizeof(*ws->order));
	ws->u = calloc(npcpu, sizeof(*ws->u));
	ws->stamp = calloc(npcpu, sizeof(*ws->stamp));
	if (!ws->order || !ws->u || !ws->stamp) {
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
	free(ws->stamp);
	free(ws->u);
	free(ws->order);
	free(ws);
}

static int by_prio(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;

	if (x->h > y->h)
		return -1;
	if (x->h < y->h)
		return 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Undo the slots a chain added from index @from on. */
static void rollback(struct hs_plan *plan, uint64_t *u, uint32_t from)
{
	uint32_t s;

	for (s = from; s < plan->nslot; s++) {
		u[plan->pcpu_of[s]] -= plan->slot[s].ticks;
		plan->vnf_ticks[plan->pcpu_of[s]] -= plan->slot[s].ticks;
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
	    (n && (!chains || !q || !prio)))
		return -EINVAL;
	m = ws->npcpu;
	for (j = 0; j < m; j++) {
		ws->u[j] = 0;
		ws->stamp[j] = 0;
	}
	for (i = 0; i < n; i++) {
		if (prio[i] > 0.0 && q[i].nvcpu > 0) {
			ws->order[nrank].h = prio[i];
			ws->order[nrank].i = i;
			nrank++;
		}
	}
	qsort(ws->order, nrank, sizeof(*ws->order), by_prio);

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
				uint64_t best = UINT64_MAX;
				uint32_t s = m;

				for (j = 0; j < m; j++) {
					int64_t d;
					uint64_t ad;

					if (ws->stamp[j] == i + 1 ||
					    ws->u[j] + qk > plan->g)
						continue;
					d = (int64_t)m * (int64_t)(qk + ws->u[j]) - big_u;
					ad = d < 0 ? (uint64_t)-d : (uint64_t)d;
					if (ad < best) {
						best = ad;
						s = j;
					}
				}
				if (s == m) {
					fits = 0;
					break;
				}
				rc = hs_plan_add(plan, s, c->vnf[k].vcpu[r], i, k,
						 (uint32_t)qk, HS_KIND_VNF);
				if (rc) {
					rollback(plan, ws->u, from);
					return rc;
				}
				ws->u[s] += qk;
				ws->stamp[s] = i + 1;
			}
		}
		if (!fits) {
			rollback(plan, ws->u, from);
			/* forget the stamps of the undone chain */
			for (j = 0; j < m; j++)
				if (ws->stamp[j] == i + 1)
					ws->stamp[j] = 0;
			plan->ndeferred++;
			continue;
		}
		total += cq->ticks;
		placed++;
	}
	return placed;
}
