// SPDX-License-Identifier: MIT
/*
 * The shared flow table; layout and contract in ch_flow.h.
 *
 * Private to the writer: a chained hash index (bucket heads and next
 * links), a stack of free entries and a FIFO of closed entries with their
 * grace stamps (arrival counts never decrease, so the FIFO is in stamp
 * order for both chains).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/util.h>

#include "tochain/ch_flow.h"

#define NONE	0xffffffffu

struct ch_flows {
	uint8_t *map;
	uint64_t size;
	uint32_t n, nbuckets;
	struct ch_flow_entry *e;
	uint32_t *bucket, *next;
	uint32_t *free_stack, nfree;
	uint32_t *limbo;		/* FIFO of closed entries */
	uint64_t *stamp;		/* per entry, 2 arrival counts when closed */
	uint32_t lhead, ltail;		/* limbo positions, modulo n */
};

static uint32_t key_hash(const struct ch_flow_key *k, uint32_t nbuckets)
{
	uint64_t h = tu_fnv1a64(k, sizeof(*k));

	return (uint32_t)(h ^ (h >> 32)) & (nbuckets - 1);
}

/* Writer: the sequence lock around an update of entry @e. */
static void write_begin(struct ch_flow_entry *e)
{
	tc_store_relaxed(&e->seq, e->seq + 1);
	/* R1: seq odd is visible before the entry's new contents. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void write_end(struct ch_flow_entry *e)
{
	/* R2: contents before seq even again. */
	tc_store_release(&e->seq, e->seq + 1);
}

struct ch_flows *ch_flows_create(const char *path, uint32_t nflows)
{
	struct ch_flows *f;
	struct ch_flow_hdr *h;
	int fd, err;

	if (!path || nflows == 0 || nflows > CH_FLOW_MAX) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->n = nflows;
	f->nbuckets = 2;
	while (f->nbuckets < nflows)
		f->nbuckets <<= 1;
	f->size = ch_flow_file_size(nflows);
	f->bucket = malloc(f->nbuckets * sizeof(*f->bucket));
	f->next = malloc(nflows * sizeof(*f->next));
	f->free_stack = malloc(nflows * sizeof(*f->free_stack));
	f->limbo = malloc(nflows * sizeof(*f->limbo));
	f->stamp = calloc(2 * (size_t)nflows, sizeof(*f->stamp));
	if (!f->bucket || !f->next || !f->free_stack || !f->limbo || !f->stamp)
		goto out_free;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		goto out_free;
	if (ftruncate(fd, (off_t)f->size)) {
		err = errno;
		close(fd);
		errno = err;
		goto out_free;
	}
	f->map = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = errno;
	close(fd);
	if (f->map == MAP_FAILED) {
		errno = err;
		goto out_free;
	}
	memset(f->bucket, 0xff, f->nbuckets * sizeof(*f->bucket));
	for (uint32_t i = 0; i < nflows; i++)
		f->free_stack[f->nfree++] = nflows - 1 - i;
	h = (struct ch_flow_hdr *)f->map;
	f->e = (struct ch_flow_entry *)(h + 1);
	h->version = CH_FLOW_VERSION;
	h->nflows = nflows;
	tc_store_release(&h->magic, CH_FLOW_MAGIC);	/* header complete */
	return f;

out_free:
	err = errno;
	free(f->bucket);
	free(f->next);
	free(f->free_stack);
	free(f->limbo);
	free(f->stamp);
	free(f);
	errno = err;
	return NULL;
}

void ch_flows_destroy(struct ch_flows *f)
{
	if (!f)
		return;
	munmap(f->map, f->size);
	free(f->bucket);
	free(f->next);
	free(f->free_stack);
	free(f->limbo);
	free(f->stamp);
	free(f);
}

static struct ch_flow_key norm(const struct ch_flow_key *k)
{
	struct ch_flow_key c;

	memset(&c, 0, sizeof(c));
	c.family = k->family;
	c.l4proto = k->l4proto;
	c.sport = k->sport;
	c.dport = k->dport;
	memcpy(c.saddr, k->saddr, k->family == 4 ? 4 : 16);
	memcpy(c.daddr, k->daddr, k->family == 4 ? 4 : 16);
	return c;
}

int ch_flow_find(struct ch_flows *f, const struct ch_flow_key *k)
{
	struct ch_flow_key c = norm(k);

	for (uint32_t i = f->bucket[key_hash(&c, f->nbuckets)]; i != NONE; i = f->next[i])
		if (!memcmp(&f->e[i].key, &c, sizeof(c)))
			return (int)i;
	return -ENOENT;
}

int ch_flow_open(struct ch_flows *f, const struct ch_flow_key *k, uint8_t state)
{
	struct ch_flow_key c = norm(k);
	uint32_t b = key_hash(&c, f->nbuckets), i;
	struct ch_flow_entry *e;
	int found = ch_flow_find(f, &c);

	if (found >= 0)
		return found;
	if (!f->nfree || state == CH_FLOW_FREE || state >= CH_FLOW_CLOSED)
		return f->nfree ? -EINVAL : -ENOSPC;
	i = f->free_stack[--f->nfree];
	e = &f->e[i];
	write_begin(e);
	tc_store_relaxed(&e->gen, e->gen + 1);
	e->key = c;
	tc_store_relaxed(&e->state, state);
	write_end(e);
	f->next[i] = f->bucket[b];
	f->bucket[b] = i;
	return (int)i;
}

int ch_flow_set_state(struct ch_flows *f, uint32_t idx, uint8_t state)
{
	struct ch_flow_entry *e;

	if (idx >= f->n || state == CH_FLOW_FREE || state >= CH_FLOW_CLOSED)
		return -EINVAL;
	e = &f->e[idx];
	if (e->state == CH_FLOW_FREE || e->state == CH_FLOW_CLOSED)
		return -EINVAL;
	write_begin(e);
	tc_store_relaxed(&e->state, state);
	write_end(e);
	return 0;
}

int ch_flow_close(struct ch_flows *f, uint32_t idx, uint64_t arr_in, uint64_t arr_out)
{
	struct ch_flow_entry *e;
	uint32_t *pp;

	if (idx >= f->n)
		return -EINVAL;
	e = &f->e[idx];
	if (e->state == CH_FLOW_FREE || e->state == CH_FLOW_CLOSED)
		return -EINVAL;
	/* Unlink from the index: no new descriptor can refer to it. */
	for (pp = &f->bucket[key_hash(&e->key, f->nbuckets)]; *pp != idx; pp = &f->next[*pp])
		;
	*pp = f->next[idx];
	write_begin(e);
	tc_store_relaxed(&e->state, CH_FLOW_CLOSED);
	write_end(e);
	f->stamp[2 * idx] = arr_in;
	f->stamp[2 * idx + 1] = arr_out;
	f->limbo[f->ltail++ % f->n] = idx;
	return 0;
}

unsigned int ch_flow_reclaim(struct ch_flows *f, uint64_t fin_in, uint64_t fin_out)
{
	unsigned int k = 0;

	while (f->lhead != f->ltail) {
		uint32_t idx = f->limbo[f->lhead % f->n];
		struct ch_flow_entry *e = &f->e[idx];

		/* Stamps only grow along the FIFO: stop at the first too young. */
		if (f->stamp[2 * idx] > fin_in || f->stamp[2 * idx + 1] > fin_out)
			break;
		f->lhead++;
		write_begin(e);
		tc_store_relaxed(&e->state, CH_FLOW_FREE);
		write_end(e);
		f->free_stack[f->nfree++] = idx;
		k++;
	}
	return k;
}

uint32_t ch_flow_free_count(const struct ch_flows *f)
{
	return f->nfree;
}

const void *ch_flows_map(const struct ch_flows *f, uint64_t *size)
{
	if (size)
		*size = f->size;
	return f->map;
}
