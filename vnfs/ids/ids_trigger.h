/* SPDX-License-Identifier: MIT */
/*
 * Private to vnfs/ids: rewriting a pcre into a cheaper Hyperscan prefilter
 * (ids_trigger.c).  Not an API.
 */
#ifndef TOCHAIN_IDS_TRIGGER_H
#define TOCHAIN_IDS_TRIGGER_H

#include <stdbool.h>

/* Counted repeats above this bound are opened in triggers. */
#define IDS_TRIGGER_REP 4

/*
 * A regex matching a superset of @re, ending where @re's matches end,
 * with large counted repeats opened (X{1075,} -> X{4,}).  New string, or
 * NULL when out of memory.
 */
char *ids_trigger_widen(const char *re);

#endif /* TOCHAIN_IDS_TRIGGER_H */
