/* SPDX-License-Identifier: MIT */
/*
 * hs_enforce — how tochain-sched applies a plan to real threads (hse_*).
 *
 * Every registered vCPU thread (a stand-in worker's thread, later a QEMU
 * vCPU thread) gets its own group BASE/t<tid> in each hierarchy the
 * backend uses.  Through it the daemon
 *   - pins the thread to a pCPU or to the synchronous partition (cpuset),
 *   - caps its CPU per period (cfs_quota_us / cpu.max) in quota gating,
 *   - freezes and thaws it at slot boundaries in freezer gating
 *     (v1 freezer.state, v2 cgroup.freeze),
 *   - gives every group the same weight (cpu.shares / cpu.weight), so the
 *     partition's threads compete with the rest of the host as a block.
 *
 * Every cgroup write goes through lib/cgroup (tochain/cg.h), whose
 * backends (STYLE.md 13) hs_enforce picks in hse_open():
 *   HSE_CGROUP_V1   this machine: cpu, cpuacct, cpuset, freezer hierarchies
 *   HSE_CGROUP_V2   unified hierarchy, threaded groups (no per-thread
 *                   freezer there: cgroup.freeze is refused on threaded
 *                   groups by the kernels we know, so v2 supports quota
 *                   gating only; hse_gate() returns -ENOTSUP)
 *   HSE_DRYRUN      lib/cgroup's dry-run backend: every write as
 *                   "path value\n" in a caller's buffer (tests; hosts
 *                   where nothing may be written)
 *   HSE_LIBVIRT     vCPUs of libvirt domains are enforced by hs_libvirt
 *                   (virDomainPinVcpuFlags, vcpu_quota/vcpu_period); it
 *                   composes with the cgroup backend, which keeps the
 *                   plain host threads: hse_open() with HSE_LIBVIRT opens
 *                   the host's cgroup version as HSE_AUTO does (e->kind
 *                   is then v1 or v2), the daemon adds hs_libvirt.
 * HSE_AUTO asks cg_detect() which cgroup version the host offers.
 *
 * Threading: an hse is used by one thread at a time (the daemon's
 * scheduler thread, under the daemon lock).  Nothing is global.
 */
#ifndef HS_ENFORCE_H
#define HS_ENFORCE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tochain/cg.h"

enum hse_kind {
	HSE_AUTO = 0,
	HSE_CGROUP_V1,
	HSE_CGROUP_V2,
	HSE_DRYRUN,
	HSE_LIBVIRT,
};

struct hse {
	enum hse_kind kind;
	struct cg_root root;
	struct cg_group base;		/* BASE: parent of the thread groups */
	bool freeze;			/* freezer gating possible (BASE has a freezer group) */
	unsigned int weight;		/* given to every thread group */
};

/* One enforced thread. */
struct hse_thread {
	pid_t tid;
	struct cg_group grp;
	bool frozen;
	char cpus[32];			/* last cpuset written, "" none */
	int64_t quota_us;		/* last quota written (-1: none) */
	uint64_t period_us;		/* with this period (0: none written) */
};

/* Parses "auto", "v1", "v2", "dryrun", "libvirt"; -EINVAL otherwise. */
int hse_kind_parse(const char *s, enum hse_kind *out);
const char *hse_kind_name(enum hse_kind kind);

/*
 * Opens backend @want below group @base (e.g. "tochain-sched"), creating
 * it.  @mountinfo: NULL for /proc/self/mountinfo.  Dry-run logs into
 * @log/@logsize.  @weight: 1..10000, given to BASE and every thread group.
 * Returns 0, -ENOTSUP (no cgroup hierarchy with cpu found),
 * -EINVAL, or what cg_create() returned.
 */
int hse_open(struct hse *e, enum hse_kind want, const char *base,
	     const char *mountinfo, char *log, size_t logsize, unsigned int weight);
/* Removes BASE (its thread groups must be gone). */
void hse_close(struct hse *e);

/* Removes what a killed daemon left below BASE: thaws every thread
 * group, moves its tasks back to the root groups, removes it.  Returns
 * the number of groups removed. */
int hse_purge(struct hse *e);

/* Does this backend freeze single threads (freezer gating)? */
bool hse_can_freeze(const struct hse *e);

/* Creates BASE/t<tid>, moves the thread in, sets the weight; thawed. */
int hse_thread_add(struct hse *e, pid_t tid, struct hse_thread *t);
/* Thaws it, moves it back to the root groups and removes its group. */
void hse_thread_del(struct hse *e, struct hse_thread *t);

/* Pins to @cpus and sets @quota_us per @period_us (quota < 0: no cap).
 * Writes only what changed since the last call. */
int hse_place(struct hse *e, struct hse_thread *t, const char *cpus,
	      int64_t quota_us, uint64_t period_us);

/* Freezes (@run false) or thaws the thread; no write if unchanged. */
int hse_gate(struct hse *e, struct hse_thread *t, bool run);

#endif
