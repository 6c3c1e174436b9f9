/* SPDX-License-Identifier: MIT */
/*
 * Forwarding tables of service chains (ch_table_*, ch_tables_*).
 *
 * A chain is per VM and direction: an ordered list of hops, each hop a set
 * of VNFs that inspect the same descriptor in parallel.  Its forwarding
 * table is immutable once published; a change publishes a new table (new
 * version) and the old one lives on until
 *   1. an RCU grace period passed (no reader can still find it), and
 *   2. every descriptor that started on it finished (each in-flight
 *      descriptor holds a reference, ch_tables_get()/ch_table_put()).
 * Then it goes on the retired list, which the packet scheduler drains in
 * its poll (it revokes the VNFs' grants there) and frees.
 *
 * Threads: ch_tables_set() is the control plane's (any thread, not inside
 * an RCU read-side section; it waits for a grace period).  ch_tables_get()
 * is the fast path: callers are threads registered with liburcu (memb
 * flavour, urcu_memb_register_thread()).  ch_table_put() and
 * ch_tables_take_retired() may be called from any thread.
 */
#ifndef TOCHAIN_CH_TABLE_H
#define TOCHAIN_CH_TABLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define CH_MAX_HOPS	8	/* pipeline stages of one chain */
#define CH_MAX_PAR	8	/* VNFs of one hop (data parallelism) */
#define CH_MAX_VNFS	32	/* VNFs one scheduler serves */
#define CH_MAX_REGIONS	64	/* data regions one scheduler serves */

enum ch_dir { CH_DIR_IN = 0, CH_DIR_OUT = 1 };

struct ch_hop_cfg {
	uint32_t nvnfs;			/* 1..CH_MAX_PAR */
	uint32_t vnf[CH_MAX_PAR];	/* VNF ids (ch_psched_vnf_add) */
};

struct ch_chain_cfg {
	uint32_t region;		/* the VM's data region id */
	uint32_t dir;			/* enum ch_dir */
	uint32_t nhops;			/* 0..CH_MAX_HOPS (0: pass-through) */
	struct ch_hop_cfg hop[CH_MAX_HOPS];
};

struct ch_table {
	uint32_t chain;			/* chain id (slot in ch_tables) */
	uint64_t version;		/* unique, increasing over all chains */
	struct ch_chain_cfg cfg;	/* validated copy */
	uint32_t refs;			/* 1 for the registry + in-flight holders */
	bool granted;			/* scheduler thread: VNFs were granted its region */
	struct ch_table *next;		/* retired list */
};

struct ch_tables {
	uint32_t nchains;
	struct ch_table **slot;		/* RCU-protected pointers */
	uint32_t nvnfs_limit;		/* VNF ids must be below */
	pthread_mutex_t lock;		/* serialises writers */
	uint64_t next_version;		/* under lock */
	pthread_mutex_t retired_lock;
	struct ch_table *retired;	/* under retired_lock */
};

/*
 * Is @c a valid chain configuration for VNF ids below @nvnfs?  0 or
 * -EINVAL (too many hops, an empty or oversized hop, a VNF id out of
 * range, the same VNF twice in one hop, a bad direction).
 */
int ch_chain_cfg_check(const struct ch_chain_cfg *c, uint32_t nvnfs);

/* A registry of @nchains chains (1..64), all without table.  NULL+errno. */
struct ch_tables *ch_tables_create(uint32_t nchains, uint32_t nvnfs_limit);

/* Free the registry and every table (no reader may be left). */
void ch_tables_destroy(struct ch_tables *t);

/*
 * Publish a new table for @chain built from @cfg (create or replace), or
 * delete the chain's table with @cfg NULL.  Waits one RCU grace period
 * before dropping the registry's reference to the old table.
 * Returns 0 (and the new version in *@version if not NULL), -EINVAL (bad
 * chain id or config), -ENOENT (delete of a chain without table), -ENOMEM.
 */
int ch_tables_set(struct ch_tables *t, uint32_t chain, const struct ch_chain_cfg *cfg,
		  uint64_t *version);

/*
 * Fast path: the current table of @chain with a reference taken, or NULL.
 * The caller is a registered RCU reader thread (not inside a read-side
 * section: this function opens its own).
 */
struct ch_table *ch_tables_get(struct ch_tables *t, uint32_t chain);

/* Drop a reference; the last one puts the table on the retired list. */
void ch_table_put(struct ch_tables *t, struct ch_table *tb);

/* Detach the retired list (linked by ->next); the caller frees each table. */
struct ch_table *ch_tables_take_retired(struct ch_tables *t);

#endif /* TOCHAIN_CH_TABLE_H */
