// SPDX-License-Identifier: MIT
/*
 * Dry-run backend: every write the v1 backend would make is appended to
 * the root's log as "REL/FILE VALUE\n" (the v1 files: cpu.cfs_period_us,
 * cpu.cfs_quota_us, cpu.shares, cpuset.cpus, tasks, cgroup.procs,
 * freezer.state); nothing is created, read or removed.  A line that does
 * not fit is dropped and the write fails with -ENOSPC.
 */
#include <errno.h>
#include <stdio.h>

#include "cg_backend.h"

static int log_put(const struct cg_group *g, const char *file, const char *val)
{
	/* The log is the root's only mutable part; its owner passed it in. */
	struct cg_root *r = (struct cg_root *)g->root;
	int w = snprintf(r->log + r->log_len, r->log_size - r->log_len, "%s/%s %s\n",
			 g->rel, file, val);

	if (w < 0 || (size_t)w >= r->log_size - r->log_len) {
		r->log[r->log_len] = '\0';	/* drop the truncated line */
		return -ENOSPC;
	}
	r->log_len += (size_t)w;
	return 0;
}

static int dry_nothing(const struct cg_group *g)
{
	(void)g;
	return 0;
}

static int dry_attach(const struct cg_group *g, pid_t id, bool thread)
{
	char v[32];

	snprintf(v, sizeof(v), "%d", (int)id);
	return log_put(g, thread ? "tasks" : "cgroup.procs", v);
}

static int dry_set_quota(const struct cg_group *g, int64_t quota_us, uint64_t period_us)
{
	char v[64];
	int err;

	snprintf(v, sizeof(v), "%llu", (unsigned long long)period_us);
	err = log_put(g, "cpu.cfs_period_us", v);
	if (err)
		return err;
	snprintf(v, sizeof(v), "%lld", quota_us < 0 ? -1LL : (long long)quota_us);
	return log_put(g, "cpu.cfs_quota_us", v);
}

static int dry_set_weight(const struct cg_group *g, unsigned int weight)
{
	char v[32];

	snprintf(v, sizeof(v), "%u", weight * 1024 / 100 < 2 ? 2 : weight * 1024 / 100);
	return log_put(g, "cpu.shares", v);
}

static int dry_set_cpus(const struct cg_group *g, const char *cpus)
{
	return log_put(g, "cpuset.cpus", cpus);
}

static bool dry_freezer_present(const struct cg_root *root)
{
	(void)root;
	return true;
}

static int dry_freezer_attach_tid(const struct cg_group *g, pid_t tid)
{
	return dry_attach(g, tid, true);
}

static int dry_freezer_set(const struct cg_group *g, bool frozen)
{
	return log_put(g, "freezer.state", frozen ? "FROZEN" : "THAWED");
}

static int dry_purge(const struct cg_group *g, const char *prefix)
{
	(void)g;
	(void)prefix;
	return 0;
}

const struct cg_ops cg_dry_ops = {
	.create = dry_nothing,
	.destroy = dry_nothing,
	.attach = dry_attach,
	.set_quota = dry_set_quota,
	.set_weight = dry_set_weight,
	.set_cpus = dry_set_cpus,
	.cpu_usage_ns = NULL,		/* reads nothing: -ENOTSUP */
	.freezer_present = dry_freezer_present,
	.freezer_create = dry_nothing,
	.freezer_attach_tid = dry_freezer_attach_tid,
	.freezer_set = dry_freezer_set,
	.freezer_destroy = dry_nothing,
	.purge = dry_purge,
};
