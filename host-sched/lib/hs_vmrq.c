// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>

#include "hs_vmrq.h"

struct hs_vmrq *hs_vmrq_create(uint32_t npcpu, uint32_t cap)
{
	struct hs_vmrq *rq;

	if (npcpu == 0 || cap == 0) {
		errno = EINVAL;
		return NULL;
	}
	rq = calloc(1, sizeof(*rq));
	if (!rq)
		return NULL;
	rq->npcpu = npcpu;
	rq->cap = cap;
	rq->len = calloc(npcpu, sizeof(*rq->len));
	rq->e = calloc((size_t)npcpu * cap, sizeof(*rq->e));
	if (!rq->len || !rq->e) {
		hs_vmrq_destroy(rq);
		errno = ENOMEM;
		return NULL;
	}
	return rq;
}

void hs_vmrq_destroy(struct hs_vmrq *rq)
{
	if (!rq)
		return;
	free(rq->e);
	free(rq->len);
	free(rq);
}

static uint32_t shortest(const struct hs_vmrq *rq)
{
	uint32_t j, s = 0;

	for (j = 1; j < rq->npcpu; j++)
		if (rq->len[j] < rq->len[s])
			s = j;
	return s;
}

static uint32_t longest(const struct hs_vmrq *rq)
{
	uint32_t j, l = 0;

	for (j = 1; j < rq->npcpu; j++)
		if (rq->len[j] > rq->len[l])
			l = j;
	return l;
}

int hs_vmrq_add(struct hs_vmrq *rq, uint32_t vcpu, uint32_t vm)
{
	uint32_t s = shortest(rq);
	struct hs_vment *e;

	if (rq->len[s] >= rq->cap)
		return -ENOSPC;
	e = &rq->e[(size_t)s * rq->cap + rq->len[s]++];
	e->vcpu = vcpu;
	e->vm = vm;
	return (int)s;
}

const struct hs_vment *hs_vmrq_queue(const struct hs_vmrq *rq, uint32_t pcpu,
				     uint32_t *n)
{
	if (pcpu >= rq->npcpu) {
		*n = 0;
		return NULL;
	}
	*n = rq->len[pcpu];
	return &rq->e[(size_t)pcpu * rq->cap];
}

uint32_t hs_vmrq_rebalance(struct hs_vmrq *rq)
{
	uint32_t moved = 0;

	for (;;) {
		uint32_t l = longest(rq), s = shortest(rq);

		if (rq->len[l] < rq->len[s] + 2)
			return moved;
		/* len[s] + 2 <= len[l] <= cap, so queue s has room */
		rq->e[(size_t)s * rq->cap + rq->len[s]++] =
			rq->e[(size_t)l * rq->cap + --rq->len[l]];
		moved++;
	}
}
