// SPDX-License-Identifier: MIT
/*
 * cgroup v2 backend: the unified hierarchy (cpu.max, cpu.weight,
 * cpuset.cpus, cpu.stat usage_usec, cgroup.threads for threaded groups).
 * No per-thread freezer yet: the freezer operations are left out
 * (-ENOTSUP).  (Linux 6.18 accepts cgroup.freeze on a threaded group;
 * whether that stops the group's threads alone is not tested yet.)
 *
 * cgroup v2 moves threads one by one only inside a threaded subtree, and
 * only threads whose process is in that subtree's domain: any other
 * write to cgroup.threads is EOPNOTSUPP.  So a thread bound for a group
 * takes its process into the group's parent, which becomes the threaded
 * domain (the process's other threads stay there), and destroying a group
 * moves the processes still in it to its parent.  A thread sent to a
 * domain group (the root: "back where it was") goes to its own process's
 * domain instead: a single thread cannot leave it.
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

/* Copies the parent of @rel into @out ("." for a top-level group). */
static void v2_parent(const char *rel, char *out, size_t size)
{
	const char *slash = strrchr(rel, '/');

	if (!slash || !strcmp(rel, "."))
		snprintf(out, size, ".");
	else
		snprintf(out, size, "%.*s", (int)(slash - rel), rel);
}

/* Writes each line of @rel's @from file (pids or tids) to @to's @file;
 * 0 or the first error other than a task that is gone (ESRCH). */
static int v2_move_each(const struct cg_root *root, const char *rel, const char *from,
			const char *to, const char *file)
{
	char buf[4096], *p, *end;
	int err, first = 0;

	err = cg_fs_read(root->v2, rel, from, buf, sizeof(buf));
	if (err)
		return err == -ENOENT ? 0 : err;
	for (p = buf; *p; p = end) {
		end = p + strcspn(p, "\n");
		if (*end)
			*end++ = '\0';
		if (*p && (err = cg_fs_write(root->v2, to, file, p)) && err != -ESRCH && !first)
			first = err;
	}
	return first;
}

/* The thread group id of thread @tid (from /proc), or -errno. */
static int v2_tgid(pid_t tid)
{
	char path[64], line[256];
	int tgid = -ESRCH;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* Moves thread @tid (as text @v) to the domain of the threaded subtree it
 * is in: the nearest ancestor of its group (its /proc/TID/cgroup "0::"
 * line) that is not threaded. */
static int v2_thread_home(const struct cg_group *g, pid_t tid, const char *v)
{
	char path[64], line[PATH_MAX], type[32];
	char *rel = NULL, *slash;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::/", 4)) {
			rel = line + 4;
			rel[strcspn(rel, "\n")] = '\0';
			break;
		}
	fclose(f);
	if (!rel)
		return -ENOENT;
	while (rel[0] && !cg_fs_read(g->root->v2, rel, "cgroup.type", type, sizeof(type)) &&
	       !strncmp(type, "threaded", 8)) {
		slash = strrchr(rel, '/');
		if (slash)
			*slash = '\0';
		else
			rel[0] = '\0';
	}
	return cg_fs_write(g->root->v2, rel[0] ? rel : ".", "cgroup.threads", v);
}

static int v2_destroy(const struct cg_group *g)
{
	char parent[sizeof(g->rel)];

	v2_parent(g->rel, parent, sizeof(parent));
	v2_move_each(g->root, g->rel, "cgroup.procs", parent, "cgroup.procs");
	return cg_fs_rmdir(g->root->v2, g->rel);
}

static int v2_attach(const struct cg_group *g, pid_t id, bool thread)
{
	char v[32], parent[sizeof(g->rel)], type[32];
	int err, tgid;

	snprintf(v, sizeof(v), "%d", (int)id);
	if (!thread)
		return cg_fs_write(g->root->v2, g->rel, "cgroup.procs", v);
	/* Threads move only between threaded groups of one domain. */
	if (strcmp(g->rel, "."))
		cg_fs_write(g->root->v2, g->rel, "cgroup.type", "threaded");
	err = cg_fs_write(g->root->v2, g->rel, "cgroup.threads", v);
	if (err != -EOPNOTSUPP)
		return err;
	if (cg_fs_read(g->root->v2, g->rel, "cgroup.type", type, sizeof(type)) ||
	    strncmp(type, "threaded", 8))
		return v2_thread_home(g, id, v);
	tgid = v2_tgid(id);
	if (tgid < 0)
		return tgid;
	v2_parent(g->rel, parent, sizeof(parent));
	snprintf(v, sizeof(v), "%d", tgid);
	err = cg_fs_write(g->root->v2, parent, "cgroup.procs", v);
	if (err)
		return err;
	snprintf(v, sizeof(v), "%d", (int)id);
	return cg_fs_write(g->root->v2, g->rel, "cgroup.threads", v);
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

/* Threads still in a threaded group (their process lives on) go back to
 * @g, their domain; then the group can be removed.  Returns how many were
 * removed. */
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
			snprintf(sub, sizeof(sub), "%s/%s", g->rel, de->d_name);
			v2_move_each(g->root, sub, "cgroup.threads", g->rel, "cgroup.threads");
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
