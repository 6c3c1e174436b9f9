// SPDX-License-Identifier: MIT
/*
 * detection_filter (Snort 2.9): "track by_src|by_dst, count C, seconds S"
 * lets a rule report only once its matches for one tracked address exceed
 * C within S seconds.  A window opens at an address's first match and
 * closes S seconds later; the next match opens a new one with a count of
 * one.
 *
 * Counters live in a fixed table of IDS_DF_SLOTS entries per ruleset,
 * hashed by (rule, address) with a short probe; when the probe finds no
 * free, expired or matching entry, the entry with the oldest window is
 * taken over.  So a hostile sender with many addresses costs a bounded
 * table and can only make a filtered rule report later, never earlier.
 *
 * LOCKING: one mutex per table; flows of any thread update it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ids_dfilter.h"

#define PROBE 8

struct df_slot {
	bool used;
	uint32_t rule;
	uint8_t addr[16];
	uint32_t count;
	uint64_t start;
};

struct ids_dftab {
	pthread_mutex_t lock;
	struct df_slot slot[IDS_DF_SLOTS];
};

struct ids_dftab *ids_dftab_create(void)
{
	struct ids_dftab *t = calloc(1, sizeof(*t));

	if (t && pthread_mutex_init(&t->lock, NULL)) {
		free(t);
		t = NULL;
	}
	return t;
}

void ids_dftab_destroy(struct ids_dftab *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static uint32_t hash(uint32_t rule, const uint8_t *addr)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ rule;

	for (int i = 0; i < 16; i++) {
		h ^= addr[i];
		h *= 0x100000001b3ULL;
	}
	return (uint32_t)(h ^ h >> 32);
}

bool ids_dftab_hit(struct ids_dftab *t, uint32_t rule, const uint8_t *addr,
		   uint32_t count, uint32_t seconds, uint64_t now)
{
	uint32_t h = hash(rule, addr);
	struct df_slot *s = NULL, *victim = NULL;
	bool pass;

	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < PROBE; i++) {
		struct df_slot *c = &t->slot[(h + (uint32_t)i) % IDS_DF_SLOTS];

		if (c->used && c->rule == rule && !memcmp(c->addr, addr, 16)) {
			s = c;
			break;
		}
		if (!victim || !c->used || (victim->used &&
		    c->start < victim->start))
			victim = c;
	}
	if (s && now - s->start >= seconds)
		s->used = false;	/* window over: a new one */
	if (!s || !s->used) {
		s = s ? s : victim;
		s->used = true;
		s->rule = rule;
		memcpy(s->addr, addr, 16);
		s->count = 0;
		s->start = now;
	}
	if (s->count < UINT32_MAX)
		s->count++;
	pass = s->count > count;
	pthread_mutex_unlock(&t->lock);
	return pass;
}
