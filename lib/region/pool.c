// SPDX-License-Identifier: MIT
/* Host-side buffer ownership; see include/tochain/pool.h. */
#include <errno.h>
#include <stdlib.h>

#include <tochain/pool.h>

struct tcr_pool *tcr_pool_create(const struct tcr_region *r)
{
	struct tcr_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->nbufs = r->geo.nbufs;
	p->nchannels = r->geo.nchannels;
	p->holder = calloc(p->nbufs, sizeof(*p->holder));
	p->stock = calloc(p->nbufs, sizeof(*p->stock));
	p->held = calloc(TCR_HOLDER_CH(p->nchannels), sizeof(*p->held));
	if (!p->holder || !p->stock || !p->held) {
		tcr_pool_destroy(p);
		errno = ENOMEM;
		return NULL;
	}
	/* Lowest indices on top of the stack: handed out first. */
	for (uint32_t i = 0; i < p->nbufs; i++)
		p->stock[i] = p->nbufs - 1 - i;
	p->nstock = p->nbufs;
	p->held[TCR_HOLDER_FREE] = p->nbufs;
	return p;
}

void tcr_pool_destroy(struct tcr_pool *p)
{
	if (!p)
		return;
	free(p->held);
	free(p->stock);
	free(p->holder);
	free(p);
}

static void set_holder(struct tcr_pool *p, uint32_t idx, uint32_t h)
{
	p->held[p->holder[idx]]--;
	p->holder[idx] = (uint16_t)h;
	p->held[h]++;
}

unsigned int tcr_pool_alloc(struct tcr_pool *p, uint32_t *idx, unsigned int n)
{
	unsigned int k = n < p->nstock ? n : p->nstock;

	for (unsigned int i = 0; i < k; i++) {
		idx[i] = p->stock[--p->nstock];
		set_holder(p, idx[i], TCR_HOLDER_HOST);
	}
	return k;
}

/* All of @idx held by @h, each once?  Marks with a temporary holder value. */
static bool all_held_once(struct tcr_pool *p, uint32_t h, const uint32_t *idx, unsigned int n)
{
	const uint16_t mark = 0xffff;
	unsigned int i;
	bool ok = true;

	for (i = 0; i < n; i++) {
		if (idx[i] >= p->nbufs || p->holder[idx[i]] != h) {
			ok = false;
			break;
		}
		p->holder[idx[i]] = mark;	/* a duplicate now fails the test */
	}
	while (i-- > 0)
		p->holder[idx[i]] = (uint16_t)h;
	return ok;
}

int tcr_pool_free(struct tcr_pool *p, const uint32_t *idx, unsigned int n)
{
	if (!all_held_once(p, TCR_HOLDER_HOST, idx, n))
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		set_holder(p, idx[i], TCR_HOLDER_FREE);
		p->stock[p->nstock++] = idx[i];
	}
	return 0;
}

int tcr_pool_to_channel(struct tcr_pool *p, uint32_t ch, const uint32_t *idx, unsigned int n)
{
	if (ch >= p->nchannels)
		return -EINVAL;
	if (!all_held_once(p, TCR_HOLDER_HOST, idx, n))
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++)
		set_holder(p, idx[i], TCR_HOLDER_CH(ch));
	return 0;
}

int tcr_pool_from_channel(struct tcr_pool *p, uint32_t ch, const uint32_t *idx, unsigned int n)
{
	if (ch >= p->nchannels)
		return -EINVAL;
	if (!all_held_once(p, TCR_HOLDER_CH(ch), idx, n))
		return -EPERM;
	for (unsigned int i = 0; i < n; i++)
		set_holder(p, idx[i], TCR_HOLDER_HOST);
	return 0;
}

unsigned int tcr_pool_reclaim(struct tcr_pool *p, uint32_t ch)
{
	unsigned int k = 0;

	if (ch >= p->nchannels)
		return 0;
	for (uint32_t i = 0; i < p->nbufs && p->held[TCR_HOLDER_CH(ch)]; i++) {
		if (p->holder[i] != TCR_HOLDER_CH(ch))
			continue;
		set_holder(p, i, TCR_HOLDER_FREE);
		p->stock[p->nstock++] = i;
		k++;
	}
	return k;
}

int tcr_pool_count(const struct tcr_pool *p, uint32_t holder)
{
	if (holder >= TCR_HOLDER_CH(p->nchannels))
		return -EINVAL;
	return (int)p->held[holder];
}

int tcr_pool_holder(const struct tcr_pool *p, uint32_t idx)
{
	if (idx >= p->nbufs)
		return -ERANGE;
	return p->holder[idx];
}
