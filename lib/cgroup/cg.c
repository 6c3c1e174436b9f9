// SPDX-License-Identifier: MIT
/* CPU control groups; see cg.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tochain/cg.h"

const char *cg_kind_name(enum cg_kind kind)
{
	switch (kind) {
	case CG_V1: return "cgroup-v1";
	case CG_V2: return "cgroup-v2";
	case CG_DRYRUN: return "dry-run";
	default: return "none";
	}
}

static int has_cpu_controller(const char *v2)
{
	char path[PATH_MAX + 32], buf[512];
	FILE *f;
	int yes = 0;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", v2);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f)) {
		for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
			if (!strcmp(t, "cpu"))
				yes = 1;
	}
	fclose(f);
	return yes;
}

int cg_detect(struct cg_root *root, const char *mountinfo)
{
	char line[4096];
	FILE *f = fopen(mountinfo ? mountinfo : "/proc/self/mountinfo", "r");

	memset(root, 0, sizeof(*root));
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], fstype[64], opts[1024];
		char *sep = strstr(line, " - ");
		int n;

		if (!sep)
			continue;
		/* field 5 is the mount point; after " - ": fstype source options */
		n = sscanf(line, "%*s %*s %*s %*s %4095s", mnt);
		if (n != 1 || sscanf(sep + 3, "%63s %*s %1023s", fstype, opts) != 2)
			continue;
		if (!strcmp(fstype, "cgroup2")) {
			snprintf(root->v2, sizeof(root->v2), "%s", mnt);
		} else if (!strcmp(fstype, "cgroup")) {
			for (char *t = strtok(opts, ","); t; t = strtok(NULL, ",")) {
				if (!strcmp(t, "cpu"))
					snprintf(root->cpu, sizeof(root->cpu), "%s", mnt);
				else if (!strcmp(t, "cpuacct"))
					snprintf(root->cpuacct, sizeof(root->cpuacct), "%s", mnt);
				else if (!strcmp(t, "cpuset"))
					snprintf(root->cpuset, sizeof(root->cpuset), "%s", mnt);
			}
		}
	}
	fclose(f);
	if (root->v2[0] && has_cpu_controller(root->v2))
		root->kind = CG_V2;
	else if (root->cpu[0])
		root->kind = CG_V1;
	else
		return -ENOENT;
	return 0;
}

void cg_dryrun_init(struct cg_root *root, char *buf, size_t size)
{
	memset(root, 0, sizeof(*root));
	root->kind = CG_DRYRUN;
	root->log = buf;
	root->log_size = size;
	if (size)
		buf[0] = '\0';
}

static int name_ok(const char *rel)
{
	size_t n = strlen(rel);

	if (n == 0 || n >= sizeof(((struct cg_group *)0)->rel) || rel[0] == '/' || strstr(rel, ".."))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = rel[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-' || c == '/'))
			return 0;
	}
	return 1;
}

/* Write @val to <mount>/<rel>/<file>; the dry-run backend logs instead. */
static int put(const struct cg_group *g, const char *mount, const char *file, const char *val)
{
	char path[PATH_MAX + 256];
	int fd, err = 0;
	ssize_t n;

	if (g->root->kind == CG_DRYRUN) {
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
	snprintf(path, sizeof(path), "%s/%s/%s", mount, g->rel, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

static int get(const struct cg_group *g, const char *mount, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX + 256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s/%s", mount, g->rel, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* mkdir -p of @rel below @mount. */
static int mkdirs(const char *mount, const char *rel)
{
	char path[PATH_MAX + 256];
	size_t base;

	base = (size_t)snprintf(path, sizeof(path), "%s/", mount);
	for (size_t i = 0;; i++) {
		if (rel[i] == '/' || rel[i] == '\0') {
			path[base + i] = '\0';
			if (mkdir(path, 0755) && errno != EEXIST)
				return -errno;
			if (rel[i] == '\0')
				return 0;
		}
		path[base + i] = rel[i];
	}
}

/* v1 cpuset: a new group has empty cpus/mems; copy them from the parent, top down. */
static int cpuset_inherit(const struct cg_root *root, const char *rel)
{
	char part[200], buf[256];
	struct cg_group pg = { .root = root };
	int err;

	for (size_t i = 0;; i++) {
		if (rel[i] != '/' && rel[i] != '\0')
			continue;
		memcpy(part, rel, i);
		part[i] = '\0';
		snprintf(pg.rel, sizeof(pg.rel), "%s", part);
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
			if (get(&pg, root->cpuset, file, parent, sizeof(parent)) == 0 &&
			    parent[0] != '\n' && parent[0] != '\0')
				continue;	/* already set */
			err = put(&pg, root->cpuset, file, buf);
			if (err)
				return err;
		}
		if (rel[i] == '\0')
			return 0;
	}
}

int cg_create(const struct cg_root *root, const char *rel, struct cg_group *g)
{
	int err = 0;

	if (!name_ok(rel))
		return -EINVAL;
	memset(g, 0, sizeof(*g));
	g->root = root;
	snprintf(g->rel, sizeof(g->rel), "%s", rel);
	switch (root->kind) {
	case CG_V2: {
		/* Enable cpu and cpuset for the children of each ancestor. */
		char anc[200];
		struct cg_group ag = { .root = root };

		err = mkdirs(root->v2, rel);
		if (err)
			return err;
		put(&(struct cg_group){ .root = root, .rel = "." }, root->v2,
		    "cgroup.subtree_control", "+cpu +cpuset");
		for (size_t i = 0; rel[i]; i++) {
			if (rel[i] != '/')
				continue;
			memcpy(anc, rel, i);
			anc[i] = '\0';
			snprintf(ag.rel, sizeof(ag.rel), "%s", anc);
			put(&ag, root->v2, "cgroup.subtree_control", "+cpu +cpuset");
		}
		return 0;
	}
	case CG_V1:
		err = mkdirs(root->cpu, rel);
		if (!err && root->cpuacct[0] && strcmp(root->cpuacct, root->cpu))
			err = mkdirs(root->cpuacct, rel);
		if (!err && root->cpuset[0]) {
			err = mkdirs(root->cpuset, rel);
			if (!err)
				err = cpuset_inherit(root, rel);
		}
		return err;
	case CG_DRYRUN:
		return 0;
	default:
		return -ENOTSUP;
	}
}

static int rmdir_ok(const char *mount, const char *rel)
{
	char path[PATH_MAX + 256];

	if (!mount[0])
		return 0;
	snprintf(path, sizeof(path), "%s/%s", mount, rel);
	/* A task that just exited may still be leaving the group: retry a while. */
	for (int i = 0; rmdir(path); i++) {
		if (errno == ENOENT)
			return 0;
		if (errno != EBUSY || i == 100)
			return -errno;
		usleep(10000);
	}
	return 0;
}

int cg_destroy(const struct cg_group *g)
{
	const struct cg_root *r = g->root;
	int err = 0, e;

	switch (r->kind) {
	case CG_V2:
		return rmdir_ok(r->v2, g->rel);
	case CG_V1:
		err = rmdir_ok(r->cpu, g->rel);
		if (r->cpuacct[0] && strcmp(r->cpuacct, r->cpu) && (e = rmdir_ok(r->cpuacct, g->rel)))
			err = e;
		if ((e = rmdir_ok(r->cpuset, g->rel)))
			err = e;
		return err;
	case CG_DRYRUN:
		return 0;
	default:
		return -ENOTSUP;
	}
}

static int attach(const struct cg_group *g, pid_t id, int thread)
{
	const struct cg_root *r = g->root;
	char v[32];
	int err;

	snprintf(v, sizeof(v), "%d", (int)id);
	switch (r->kind) {
	case CG_V2:
		if (thread) {
			/* Threads move only between threaded groups of one domain. */
			put(g, r->v2, "cgroup.type", "threaded");
			return put(g, r->v2, "cgroup.threads", v);
		}
		return put(g, r->v2, "cgroup.procs", v);
	case CG_V1: {
		const char *file = thread ? "tasks" : "cgroup.procs";

		err = put(g, r->cpu, file, v);
		if (!err && r->cpuacct[0] && strcmp(r->cpuacct, r->cpu))
			err = put(g, r->cpuacct, file, v);
		if (!err && r->cpuset[0])
			err = put(g, r->cpuset, file, v);
		return err;
	}
	case CG_DRYRUN:
		return put(g, "", thread ? "tasks" : "cgroup.procs", v);
	default:
		return -ENOTSUP;
	}
}

int cg_attach_pid(const struct cg_group *g, pid_t pid)
{
	return attach(g, pid, 0);
}

int cg_attach_tid(const struct cg_group *g, pid_t tid)
{
	return attach(g, tid, 1);
}

int cg_set_quota(const struct cg_group *g, int64_t quota_us, uint64_t period_us)
{
	const struct cg_root *r = g->root;
	char v[64];
	int err;

	if (period_us < 1000 || period_us > 1000000 || (quota_us >= 0 && quota_us < 1000))
		return -EINVAL;
	if (r->kind == CG_V2) {
		if (quota_us < 0)
			snprintf(v, sizeof(v), "max %llu", (unsigned long long)period_us);
		else
			snprintf(v, sizeof(v), "%lld %llu", (long long)quota_us,
				 (unsigned long long)period_us);
		return put(g, r->v2, "cpu.max", v);
	}
	/* v1 (and dry-run, which logs the v1 form): period first, then quota. */
	snprintf(v, sizeof(v), "%llu", (unsigned long long)period_us);
	err = put(g, r->cpu, "cpu.cfs_period_us", v);
	if (err)
		return err;
	snprintf(v, sizeof(v), "%lld", quota_us < 0 ? -1LL : (long long)quota_us);
	return put(g, r->cpu, "cpu.cfs_quota_us", v);
}

int cg_set_weight(const struct cg_group *g, unsigned int weight)
{
	char v[32];

	if (weight < 1 || weight > 10000)
		return -EINVAL;
	if (g->root->kind == CG_V2) {
		snprintf(v, sizeof(v), "%u", weight);
		return put(g, g->root->v2, "cpu.weight", v);
	}
	snprintf(v, sizeof(v), "%u", weight * 1024 / 100 < 2 ? 2 : weight * 1024 / 100);
	return put(g, g->root->cpu, "cpu.shares", v);
}

int cg_set_cpus(const struct cg_group *g, const char *cpus)
{
	const struct cg_root *r = g->root;

	for (const char *p = cpus; *p; p++)
		if (!((*p >= '0' && *p <= '9') || *p == '-' || *p == ','))
			return -EINVAL;
	if (!cpus[0])
		return -EINVAL;
	if (r->kind == CG_V2)
		return put(g, r->v2, "cpuset.cpus", cpus);
	if (r->kind == CG_V1 && !r->cpuset[0])
		return -ENOTSUP;
	return put(g, r->cpuset, "cpuset.cpus", cpus);
}

int cg_cpu_usage_ns(const struct cg_group *g, uint64_t *ns)
{
	const struct cg_root *r = g->root;
	char buf[2048];
	int err;

	if (r->kind == CG_V2) {
		char *p;

		err = get(g, r->v2, "cpu.stat", buf, sizeof(buf));
		if (err)
			return err;
		p = strstr(buf, "usage_usec ");
		if (!p)
			return -EIO;
		*ns = strtoull(p + 11, NULL, 10) * 1000;
		return 0;
	}
	if (r->kind == CG_V1) {
		err = get(g, r->cpuacct[0] ? r->cpuacct : r->cpu, "cpuacct.usage", buf, sizeof(buf));
		if (err)
			return err;
		*ns = strtoull(buf, NULL, 10);
		return 0;
	}
	return -ENOTSUP;
}
