// SPDX-License-Identifier: MIT
/*
 * Forwarding tables under RCU; the contract is in ch_table.h.
 *
 * SYNCHRONIZATION.  slot[] pointers are written under t->lock with
 * rcu_assign_pointer (store-release) and read with rcu_dereference inside
 * urcu_memb read-side sections.  A reader takes a reference (relaxed
 * increment) inside the section: the registry's own reference is dropped
 * only after a grace period that follows the unpublish, so a table a
 * reader can find has refs >= 1 and cannot be retired under it.  The last
 * put (acq_rel decrement, pairs with the other puts) retires the table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-memb.h>
#include <urcu/pointer.h>

#include "ch_table.h"

int ch_chain_cfg_check(const struct ch_chain_cfg *c, uint32_t nvnfs)
{
	if (!c || c->nhops > CH_MAX_HOPS || c->region >= CH_MAX_REGIONS)
		return -EINVAL;
	if (c->dir != CH_DIR_IN && c->dir != CH_DIR_OUT)
		return -EINVAL;
	for (uint32_t h = 0; h < c->nhops; h++) {
		const struct ch_hop_cfg *hop = &c->hop[h];

		if (hop->nvnfs == 0 || hop->nvnfs > CH_MAX_PAR)
			return -EINVAL;
		for (uint32_t i = 0; i < hop->nvnfs; i++) {
			if (hop->vnf[i] >= nvnfs)
				return -EINVAL;
			for (uint32_t j = 0; j < i; j++)
				if (hop->vnf[j] == hop->vnf[i])
					return -EINVAL;
		}
	}
	return 0;
}

struct ch_tables *ch_tables_create(uint32_t nchains, uint32_t nvnfs_limit)
{
	struct ch_tables *t;

	if (nchains == 0 || nchains > 64 || nvnfs_limit == 0 || nvnfs_limit > CH_MAX_VNFS) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->slot = calloc(nchains, sizeof(*t->slot));
	if (!t->slot) {
		free(t);
		return NULL;
	}
	t->nchains = nchains;
	t->nvnfs_limit = nvnfs_limit;
	t->next_version = 1;
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->retired_lock, NULL);
	return t;
}

void ch_tables_destroy(struct ch_tables *t)
{
	struct ch_table *tb, *next;

	if (!t)
		return;
	for (uint32_t i = 0; i < t->nchains; i++)
		free(t->slot[i]);
	for (tb = t->retired; tb; tb = next) {
		next = tb->next;
		free(tb);
	}
	pthread_mutex_destroy(&t->lock);
	pthread_mutex_destroy(&t->retired_lock);
	free(t->slot);
	free(t);
}

int ch_tables_set(struct ch_tables *t, uint32_t chain, const struct ch_chain_cfg *cfg,
		  uint64_t *version)
{
	struct ch_table *nt = NULL, *old;

	if (chain >= t->nchains)
		return -EINVAL;
	if (cfg) {
		if (ch_chain_cfg_check(cfg, t->nvnfs_limit))
			return -EINVAL;
		nt = calloc(1, sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		nt->chain = chain;
		nt->cfg = *cfg;
		nt->refs = 1;
	}
	pthread_mutex_lock(&t->lock);
	old = t->slot[chain];
	if (!cfg && !old) {
		pthread_mutex_unlock(&t->lock);
		return -ENOENT;
	}
	if (nt) {
		nt->version = t->next_version++;
		if (version)
			*version = nt->version;
	}
	/* Store-release: the table's contents before the pointer. */
	rcu_assign_pointer(t->slot[chain], nt);
	pthread_mutex_unlock(&t->lock);
	if (old) {
		/* After this no reader can find @old: its references are all counted. */
		urcu_memb_synchronize_rcu();
		ch_table_put(t, old);
	}
	return 0;
}

struct ch_table *ch_tables_get(struct ch_tables *t, uint32_t chain)
{
	struct ch_table *tb;

	if (chain >= t->nchains)
		return NULL;
	urcu_memb_read_lock();
	tb = rcu_dereference(t->slot[chain]);
	if (tb)
		__atomic_fetch_add(&tb->refs, 1, __ATOMIC_RELAXED);
	urcu_memb_read_unlock();
	return tb;
}

void ch_table_put(struct ch_tables *t, struct ch_table *tb)
{
	if (__atomic_sub_fetch(&tb->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	pthread_mutex_lock(&t->retired_lock);
	tb->next = t->retired;
	__atomic_store_n(&t->retired, tb, __ATOMIC_RELAXED);	/* peeked unlocked */
	pthread_mutex_unlock(&t->retired_lock);
}

struct ch_table *ch_tables_take_retired(struct ch_tables *t)
{
	struct ch_table *list;

	/* Cheap unlocked peek first: the scheduler calls this every poll. */
	if (!__atomic_load_n(&t->retired, __ATOMIC_RELAXED))
		return NULL;
	pthread_mutex_lock(&t->retired_lock);
	list = t->retired;
	__atomic_store_n(&t->retired, NULL, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&t->retired_lock);
	return list;
}
