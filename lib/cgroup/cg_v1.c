// SPDX-License-Identifier: MIT
/*
 * cgroup v1 backend: cpu (cfs_quota_us, cfs_period_us, shares), cpuacct
 * (usage), cpuset (cpus, mems), each its own hierarchy (cpu and cpuacct
 * may share one), and the freezer hierarchy for per-thread gating.  A
 * group exists once per hierarchy under the same relative name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cg_backend.h"

/* Is cpuacct a hierarchy of its own (not mounted together with cpu)? */
static bool cpuacct_apart(const struct cg_root *r)
{
	return r->cpuacct[0] && strcmp(r->cpuacct, r->cpu);
}

/* A new cpuset group has empty cpus/mems; copy them from the parent, top down. */
static int cpuset_inherit(const struct cg_root *root, const char *rel)
{
	char part[200], buf[256];
	int err;

	for (size_t i = 0;; i++) {
		if (rel[i] != '/' && rel[i] != '\0')
			continue;
		memcpy(part, rel, i);
		part[i] = '\0';
		for (int k = 0; k < 2; k++) {
			const char *file = k ? "cpuset.mems" : "cpuset.cpus";
			char parent[PATH_MAX + 256];
			char *slash = strrchr(part, '/');
			int fd;
			ssize_t n;

			if (slash)
				snprintf(parent, sizeof(parent), "%s/%.*s/%s", root->cpuset,
					 (int)(slash - part), part, file);
			else
				snprintf(parent, sizeof(parent), "%s/%s", root->cpuset, file);
			fd = open(parent, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				return -errno;
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n <= 0)
				return -EIO;
			buf[n] = '\0';
			if (cg_fs_read(root->cpuset, part, file, parent, sizeof(parent)) == 0 &&
			    parent[0] != '\n' && parent[0] != '\0')
				continue;	/* already set */
			err = cg_fs_write(root->cpuset, part, file, buf);
			if (err)
				return err;
		}
		if (rel[i] == '\0')
			return 0;
	}
}

static int v1_create(const struct cg_group *g)
{
	const struct cg_root *r = g->root;
	int err;

	err = cg_fs_mkdirs(r->cpu, g->rel);
	if (!err && cpuacct_apart(r))
		err = cg_fs_mkdirs(r->cpuacct, g->rel);
	if (!err && r->cpuset[0]) {
		err = cg_fs_mkdirs(r->cpuset, g->rel);
		if (!err)
			err = cpuset_inherit(r, g->rel);
	}
	return err;
}

static int v1_destroy(const struct cg_group *g)
{
	const struct cg_root *r = g->root;
	int err, e;

	err = cg_fs_rmdir(r->cpu, g->rel);
	if (cpuacct_apart(r) && (e = cg_fs_rmdir(r->cpuacct, g->rel)))
		err = e;
	if ((e = cg_fs_rmdir(r->cpuset, g->rel)))
		err = e;
	return err;
}

static int v1_attach(const struct cg_group *g, pid_t id, bool thread)
{
	const struct cg_root *r = g->root;
	const char *file = thread ? "tasks" : "cgroup.procs";
	char v[32];
	int err;

	snprintf(v, sizeof(v), "%d", (int)id);
	err = cg_fs_write(r->cpu, g->rel, file, v);
	if (!err && cpuacct_apart(r))
		err = cg_fs_write(r->cpuacct, g->rel, file, v);
	if (!err && r->cpuset[0])
		err = cg_fs_write(r->cpuset, g->rel, file, v);
	return err;
}

static int v1_set_quota(const struct cg_group *g, int64_t quota_us, uint64_t period_us)
{
	char v[64];
	int err;

	/* period first: the kernel checks the quota against it */
	snprintf(v, sizeof(v), "%llu", (unsigned long long)period_us);
	err = cg_fs_write(g->root->cpu, g->rel, "cpu.cfs_period_us", v);
	if (err)
		return err;
	snprintf(v, sizeof(v), "%lld", quota_us < 0 ? -1LL : (long long)quota_us);
	return cg_fs_write(g->root->cpu, g->rel, "cpu.cfs_quota_us", v);
}

static int v1_set_weight(const struct cg_group *g, unsigned int weight)
{
	char v[32];

	snprintf(v, sizeof(v), "%u", weight * 1024 / 100 < 2 ? 2 : weight * 1024 / 100);
	return cg_fs_write(g->root->cpu, g->rel, "cpu.shares", v);
}

static int v1_set_cpus(const struct cg_group *g, const char *cpus)
{
	if (!g->root->cpuset[0])
		return -ENOTSUP;
	return cg_fs_write(g->root->cpuset, g->rel, "cpuset.cpus", cpus);
}

static int v1_cpu_usage_ns(const struct cg_group *g, uint64_t *ns)
{
	const struct cg_root *r = g->root;
	char buf[2048];
	int err;

	err = cg_fs_read(r->cpuacct[0] ? r->cpuacct : r->cpu, g->rel, "cpuacct.usage",
			 buf, sizeof(buf));
	if (err)
		return err;
	*ns = strtoull(buf, NULL, 10);
	return 0;
}

static bool v1_freezer_present(const struct cg_root *root)
{
	return root->freezer[0] != '\0';
}

static int v1_freezer_create(const struct cg_group *g)
{
	char path[PATH_MAX + 256];

	snprintf(path, sizeof(path), "%s/%s", g->root->freezer, g->rel);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int v1_freezer_attach_tid(const struct cg_group *g, pid_t tid)
{
	char v[32];

	snprintf(v, sizeof(v), "%d", (int)tid);
	return cg_fs_write(g->root->freezer, g->rel, "tasks", v);
}

static int v1_freezer_set(const struct cg_group *g, bool frozen)
{
	return cg_fs_write(g->root->freezer, g->rel, "freezer.state", frozen ? "FROZEN" : "THAWED");
}

static int v1_freezer_destroy(const struct cg_group *g)
{
	char path[PATH_MAX + 256];

	snprintf(path, sizeof(path), "%s/%s", g->root->freezer, g->rel);
	return rmdir(path) ? -errno : 0;
}

/* Moves every task listed in DIR/tasks to ROOT/tasks. */
static void move_tasks(const char *dir, const char *root)
{
	char path[PATH_MAX + 1024], line[32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/tasks", dir);
	f = fopen(path, "re");
	if (!f)
		return;
	snprintf(path, sizeof(path), "%s/tasks", root);
	while (fgets(line, sizeof(line), f)) {
		int fd = open(path, O_WRONLY | O_CLOEXEC);

		if (fd < 0)
			break;
		if (write(fd, line, strlen(line)) < 0) {
			/* the task is gone: nothing to move */
		}
		close(fd);
	}
	fclose(f);
}

/* Thaws (@freezer), empties and removes MOUNT/BASE/PREFIX*; returns how
 * many such groups it found. */
static int purge_mount(const char *mount, const char *base, const char *prefix, bool freezer)
{
	char dir[PATH_MAX + 256], sub[PATH_MAX + 512];
	size_t plen = strlen(prefix);
	struct dirent *de;
	DIR *dp;
	int n = 0;

	if (!mount[0])
		return 0;
	snprintf(dir, sizeof(dir), "%s/%s", mount, base);
	dp = opendir(dir);
	if (!dp)
		return 0;
	while ((de = readdir(dp))) {
		if (strncmp(de->d_name, prefix, plen) || de->d_type != DT_DIR)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		if (freezer) {
			char st[PATH_MAX + 600];
			int fd;

			snprintf(st, sizeof(st), "%s/freezer.state", sub);
			fd = open(st, O_WRONLY | O_CLOEXEC);
			if (fd >= 0) {
				if (write(fd, "THAWED", 6) < 0) {
					/* nothing more we can do */
				}
				close(fd);
			}
		}
		move_tasks(sub, mount);
		for (int i = 0; i < 50 && rmdir(sub) && errno == EBUSY; i++)
			usleep(10000);
		n++;
	}
	closedir(dp);
	return n;
}

static int v1_purge(const struct cg_group *g, const char *prefix)
{
	const struct cg_root *r = g->root;
	int n;

	/* Thaw first: a frozen task cannot move or exit. */
	n = purge_mount(r->freezer, g->rel, prefix, true);
	purge_mount(r->cpu, g->rel, prefix, false);
	if (strcmp(r->cpuacct, r->cpu))
		purge_mount(r->cpuacct, g->rel, prefix, false);
	purge_mount(r->cpuset, g->rel, prefix, false);
	return n;
}

const struct cg_ops cg_v1_ops = {
	.create = v1_create,
	.destroy = v1_destroy,
	.attach = v1_attach,
	.set_quota = v1_set_quota,
	.set_weight = v1_set_weight,
	.set_cpus = v1_set_cpus,
	.cpu_usage_ns = v1_cpu_usage_ns,
	.freezer_present = v1_freezer_present,
	.freezer_create = v1_freezer_create,
	.freezer_attach_tid = v1_freezer_attach_tid,
	.freezer_set = v1_freezer_set,
	.freezer_destroy = v1_freezer_destroy,
	.purge = v1_purge,
};
