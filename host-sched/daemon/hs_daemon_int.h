/* SPDX-License-Identifier: MIT */
/*
 * Private to host-sched/daemon: how hs_daemon (hsd_*, hs_daemon.h) is cut
 * into files, and the functions they share.  Callers outside the daemon
 * use hs_daemon.h only.
 *
 * One concept per file; calls go down this list only, never up:
 *   hs_daemon_ctl.c       control socket and the period loop (hsd_run)
 *   hs_daemon.c           configuration, init/fini, rendering
 *   hs_daemon_register.c  registration of threads and domains, reaping
 *   hs_daemon_period.c    the period boundary: counters, plan, placement
 *   hs_daemon_dom.c       libvirt domains: vCPU threads found, followed,
 *                         the plan applied through hs_libvirt
 *   hs_daemon_tick.c      the tick timeline, per-tick gating, early end
 *   hs_daemon_registry.c  registry lookups, counter regions, the library
 *                         configuration built from the registry
 *
 * Locking is hs_daemon.h's: every function here runs with d->lock held.
 */
#ifndef HS_DAEMON_INT_H
#define HS_DAEMON_INT_H

#include "hs_daemon.h"

/* "no index" in registry fields (vm, chain) and per-thread arrays */
#define NONE UINT32_MAX

/* The CFS bandwidth period for quotas: one period, at most 1 s. */
static inline uint64_t hsd_period_us(const struct hsd *d)
{
	uint64_t p = (uint64_t)d->cfg.tick_us * d->cfg.g;

	return p > 1000000 ? 1000000 : p;
}

/* ---- hs_daemon_registry.c ---- */

/* 1..HSD_NAME_MAX-1 of [A-Za-z0-9_.-] (chains, VNFs, VMs, domains). */
bool hsd_name_ok(const char *s);
/* Does thread @tid exist (/proc/TID)? */
bool hsd_thread_exists(pid_t tid);
/* CPU time registry thread @t used so far, in ns (/proc/TID/schedstat's
 * first field, read through a file kept open: busy_fd); false if
 * unreadable.  hsd_busy_close closes @t's file (a thread dropped). */
bool hsd_busy_ns(struct hsd *d, uint32_t t, uint64_t *ns);
void hsd_busy_close(struct hsd *d, uint32_t t);
/* Registry index of VM @name / live chain @name, or NONE. */
uint32_t hsd_find_vm(const struct hsd *d, const char *name);
uint32_t hsd_find_chain(const struct hsd *d, const char *name);
/*
 * The region slot holding @path (attached now if need be, validated as a
 * host attaches an untrusted region) whose chain block @index exists.
 * 0, or -EINVAL / -ENOSPC / the attach error with @why.
 */
int hsd_attach_region(struct hsd *d, const char *path, uint32_t index,
		      uint32_t *out, char *why, size_t len);
/*
 * Swaps in a scheduler (admission runs) for the current registry; on
 * error (@why says why) nothing changes.
 */
int hsd_rebuild(struct hsd *d, char *why, size_t len);

/* ---- hs_daemon_tick.c ---- */

/* Lays this period's plan out on the tick timeline (see the .c). */
void hsd_timeline_build(struct hsd *d);

/* ---- hs_daemon_dom.c ---- */

/*
 * Registers the vCPUs in d->dom[@di].st as threads of the domain, reusing
 * its dead registry slots first, and rebuilds.  All or nothing.
 */
int hsd_dom_attach(struct hsd *d, uint32_t di, char *why, size_t len);
/* Follows every registered domain (one libvirt call each); returns how
 * many threads it dropped or replaced. */
int hsd_dom_check(struct hsd *d);
/* The plan's pCPU and ticks of every domain vCPU, through libvirt.
 * @planned: sync mode with a plan (else: @cpus_all, uncapped). */
void hsd_dom_apply(struct hsd *d, bool planned, const char *cpus_all, uint64_t period);

#endif
