// SPDX-License-Identifier: MIT
/*
 * cgroup v2 backend: the unified hierarchy (cpu.max, cpu.weight,
 * cpuset.cpus, cpu.stat usage_usec, cgroup.threads for threaded groups).
 * No per-thread freezer: cgroup.freeze is refused on threaded groups by
 * the kernels we know, so the freezer operations are left out (-ENOTSUP).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cg_backend.h"

static int v2_create(const struct cg_group *g)
{
	const char *v2 = g->root->v2, *rel = g->rel;
	char anc[200];
	int err;

	err = cg_fs_mkdirs(v2, rel);
	if (err)
		return err;
	/* Enable cpu and cpuset for the children of each ancestor. */
	cg_fs_write(v2, ".", "cgroup.subtree_control", "+cpu +cpuset");
	for (size_t i = 0; rel[i]; i++) {
		if (rel[i] != '/')
			continue;
		memcpy(anc, rel, i);
		anc[i] = '\0';
		cg_fs_write(v2, anc, "cgroup.subtree_control", "+cpu +cpuset");
	}
	return 0;
}

static int v2_destroy(const struct cg_group *g)
{
	return cg_fs_rmdir(g->root->v2, g->rel);
}

static int v2_attach(const struct cg_group *g, pid_t id, bool thread)
{
	char v[32];

	snprintf(v, sizeof(v), "%d", (int)id);
	if (thread) {
		/* Threads move only between threaded groups of one domain. */
		cg_fs_write(g->root->v2, g->rel, "cgroup.type", "threaded");
		return cg_fs_write(g->root->v2, g->rel, "cgroup.threads", v);
	}
	return cg_fs_write(g->root->v2, g->rel, "cgroup.procs", v);
}

static int v2_set_quota(const struct cg_group *g, int64_t quota_us, uint64_t period_us)
{
	char v[64];

	if (quota_us < 0)
		snprintf(v, sizeof(v), "max %llu", (unsigned long long)period_us);
	else
		snprintf(v, sizeof(v), "%lld %llu", (long long)quota_us,
			 (unsigned long long)period_us);
	return cg_fs_write(g->root->v2, g->rel, "cpu.max", v);
}

static int v2_set_weight(const struct cg_group *g, unsigned int weight)
{
	char v[32];

	snprintf(v, sizeof(v), "%u", weight);
	return cg_fs_write(g->root->v2, g->rel, "cpu.weight", v);
}

static int v2_set_cpus(const struct cg_group *g, const char *cpus)
{
	return cg_fs_write(g->root->v2, g->rel, "cpuset.cpus", cpus);
}

static int v2_cpu_usage_ns(const struct cg_group *g, uint64_t *ns)
{
	char buf[2048], *p;
	int err;

	err = cg_fs_read(g->root->v2, g->rel, "cpu.stat", buf, sizeof(buf));
	if (err)
		return err;
	p = strstr(buf, "usage_usec ");
	if (!p)
		return -EIO;
	*ns = strtoull(p + 11, NULL, 10) * 1000;
	return 0;
}

static bool v2_freezer_present(const struct cg_root *root)
{
	(void)root;
	return false;
}

/* Threads of a threaded group go back with their process when it exits;
 * an empty group can be removed.  Returns how many were removed. */
static int v2_purge(const struct cg_group *g, const char *prefix)
{
	char dir[PATH_MAX + 256], sub[PATH_MAX + 512];
	size_t plen = strlen(prefix);
	struct dirent *de;
	DIR *dp;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/%s", g->root->v2, g->rel);
	dp = opendir(dir);
	if (!dp)
		return 0;
	while ((de = readdir(dp)))
		if (!strncmp(de->d_name, prefix, plen) && de->d_type == DT_DIR) {
			snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
			if (!rmdir(sub))
				n++;
		}
	closedir(dp);
	return n;
}

const struct cg_ops cg_v2_ops = {
	.create = v2_create,
	.destroy = v2_destroy,
	.attach = v2_attach,
	.set_quota = v2_set_quota,
	.set_weight = v2_set_weight,
	.set_cpus = v2_set_cpus,
	.cpu_usage_ns = v2_cpu_usage_ns,
	.freezer_present = v2_freezer_present,
	.purge = v2_purge,
};
