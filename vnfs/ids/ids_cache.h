/* SPDX-License-Identifier: MIT */
/*
 * Private to vnfs/ids: the cache of compiled Hyperscan databases
 * (ids_cache.c).  Not an API.
 */
#ifndef TOCHAIN_IDS_CACHE_H
#define TOCHAIN_IDS_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <hs.h>

/* What one hs_compile_multi is given: the cache key, in full. */
struct ids_cache_input {
	const char *const *exprs;
	const unsigned *flags;
	const unsigned *ids;
	size_t n;
	unsigned mode;
};

/*
 * The database compiled earlier from exactly @in, by this Hyperscan
 * version for this platform, or NULL (none, unreadable, corrupted or
 * foreign: never an error, the caller compiles).  @dir NULL: no cache.
 */
hs_database_t *ids_cache_get(const char *dir, const struct ids_cache_input *in);
/* Stores @db for @in; best effort (a failure leaves no partial file). */
void ids_cache_put(const char *dir, const struct ids_cache_input *in,
		   const hs_database_t *db);

#endif /* TOCHAIN_IDS_CACHE_H */
