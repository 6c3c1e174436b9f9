/* SPDX-License-Identifier: MIT */
/*
 * Private to vnfs/ids: detection_filter counters (ids_dfilter.c), the one
 * part of a ruleset that changes after its load.  Not an API.
 */
#ifndef TOCHAIN_IDS_DFILTER_H
#define TOCHAIN_IDS_DFILTER_H

#include <stdbool.h>
#include <stdint.h>

#define IDS_DF_SLOTS	4096	/* tracked (rule, address) pairs per ruleset */

struct ids_dftab;

struct ids_dftab *ids_dftab_create(void);
void ids_dftab_destroy(struct ids_dftab *t);
/*
 * One match of rule @rule for address @addr (16 bytes) at @now (seconds):
 * true when it is more than @count matches within @seconds of the first of
 * the current window, i.e. when the rule may report.  Thread-safe.
 */
bool ids_dftab_hit(struct ids_dftab *t, uint32_t rule, const uint8_t *addr,
		   uint32_t count, uint32_t seconds, uint64_t now);

#endif /* TOCHAIN_IDS_DFILTER_H */
