/* SPDX-License-Identifier: MIT */
/*
 * CPU control groups (cg_*): the one place TOChain touches cgroups.
 *
 * Backends behind one small static interface (struct cg_ops in
 * lib/cgroup/cg_backend.h; cg.c detects, checks arguments and dispatches):
 *   v1      cpu (cfs_quota_us, cfs_period_us, shares), cpuacct (usage),
 *           cpuset (cpus, mems), each its own hierarchy (this machine),
 *           and the freezer hierarchy for per-thread gating (cg_v1.c);
 *   v2      the unified hierarchy: cpu.max, cpu.weight, cpuset.cpus,
 *           cpu.stat usage_usec, cgroup.threads for threaded groups (a
 *           thread takes its process into the group's parent, v2's
 *           threaded domain, and destroy moves processes out); no
 *           per-thread freezer (cg_v2.c);
 *   dry-run records every write it would make in a caller's log and
 *           reads nothing (tests, and hosts where writing is not wanted)
 *           (cg_dry.c).
 * cg_detect() picks v2 when the unified hierarchy has the cpu controller,
 * else v1 when the v1 cpu hierarchy is mounted.
 *
 * Groups are named by a relative path ("tochain/toe-web1") below each
 * hierarchy's root; names are checked ([A-Za-z0-9_.-] and '/', no "..").
 * Actions return 0 or -errno, predicates (cg_*_present) return bool;
 * nothing here keeps global state.
 */
#ifndef TOCHAIN_CG_H
#define TOCHAIN_CG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum cg_kind { CG_NONE = 0, CG_V1 = 1, CG_V2 = 2, CG_DRYRUN = 3 };

struct cg_root {
	enum cg_kind kind;
	char v2[PATH_MAX];		/* unified mount point */
	char cpu[PATH_MAX];		/* v1 mount points */
	char cpuacct[PATH_MAX];
	char cpuset[PATH_MAX];
	char freezer[PATH_MAX];		/* v1 freezer, "" if none: only cg_freezer_* use it */
	/* dry-run: writes are appended here as "path value\n" lines */
	char *log;
	size_t log_size, log_len;
};

struct cg_group {
	const struct cg_root *root;
	char rel[200];
};

/* Find the hierarchies from /proc/self/mountinfo (or @mountinfo if set). */
int cg_detect(struct cg_root *root, const char *mountinfo);

/* A dry-run root logging into @buf. */
void cg_dryrun_init(struct cg_root *root, char *buf, size_t size);

const char *cg_kind_name(enum cg_kind kind);

/* Create (or reuse) group @rel in every hierarchy the backend uses. */
int cg_create(const struct cg_root *root, const char *rel, struct cg_group *g);

/* Remove the group (v1: it must have no tasks left; v2 moves the
 * processes still in it to its parent first); missing is fine. */
int cg_destroy(const struct cg_group *g);

/* Move a process (all its threads) or a single thread into the group.
 * v2 moves a single thread only within its process's domain: the process
 * goes to the group's parent first, and a thread sent to the root goes to
 * that domain instead (cg_v2.c). */
int cg_attach_pid(const struct cg_group *g, pid_t pid);
int cg_attach_tid(const struct cg_group *g, pid_t tid);

/* CPU bandwidth: @quota_us per @period_us; quota_us < 0 means no limit. */
int cg_set_quota(const struct cg_group *g, int64_t quota_us, uint64_t period_us);

/* Relative weight 1..10000 (v2 cpu.weight; v1 shares = weight * 1024 / 100). */
int cg_set_weight(const struct cg_group *g, unsigned int weight);

/* Restrict to a CPU list ("0-1", "3"); memory nodes follow the parent's. */
int cg_set_cpus(const struct cg_group *g, const char *cpus);

/* CPU time the group's tasks used, in nanoseconds. */
int cg_cpu_usage_ns(const struct cg_group *g, uint64_t *ns);

/*
 * Per-thread freezer (v1 freezer hierarchy), kept apart from the groups
 * above: only a caller that gates threads (tochain-sched) uses it, on the
 * group of the same name in the freezer hierarchy.  The dry-run backend
 * logs the writes ("REL/tasks TID", "REL/freezer.state FROZEN|THAWED")
 * and creates nothing; v2 and v1 without a freezer mount return -ENOTSUP.
 */
bool cg_freezer_present(const struct cg_root *root);
/* Creates the group's freezer directory (its parent must exist); existing is fine. */
int cg_freezer_create(const struct cg_group *g);
int cg_freezer_attach_tid(const struct cg_group *g, pid_t tid);
int cg_freezer_set(const struct cg_group *g, bool frozen);
/* Removes the freezer directory, one attempt (it must have no tasks left). */
int cg_freezer_destroy(const struct cg_group *g);

/*
 * Removes the child groups of @g whose names start with @prefix, as a
 * killed owner left them: thaws them (v1 freezer), moves their tasks back
 * to each hierarchy's root (v1; v2 threads return with their process),
 * removes them.  Returns the number of groups found in the v1 freezer
 * hierarchy or removed on v2 (0 on dry-run), or -EINVAL for a prefix
 * that is empty or holds '/' or "..".
 */
int cg_purge(const struct cg_group *g, const char *prefix);

#endif /* TOCHAIN_CG_H */
