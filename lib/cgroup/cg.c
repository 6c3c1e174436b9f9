// SPDX-License-Identifier: MIT
/*
 * CPU control groups, the front (see cg.h): detection, argument checks,
 * and dispatch to the root's backend (cg_backend.h: cg_v1.c, cg_v2.c,
 * cg_dry.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cg_backend.h"

static const struct cg_ops *const backends[] = {
	[CG_V1] = &cg_v1_ops,
	[CG_V2] = &cg_v2_ops,
	[CG_DRYRUN] = &cg_dry_ops,
};

/* The root's backend, NULL for CG_NONE (or a kind we do not know). */
static const struct cg_ops *ops_of(const struct cg_root *root)
{
	if ((unsigned int)root->kind >= sizeof(backends) / sizeof(backends[0]))
		return NULL;
	return backends[root->kind];
}

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
				else if (!strcmp(t, "freezer"))
					snprintf(root->freezer, sizeof(root->freezer), "%s", mnt);
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

/* Calls backend operation OP of group G's root with the arguments that
 * follow, or returns -ENOTSUP when the backend has none. */
#define CG_CALL(g, op, ...) ({						\
	const struct cg_ops *o_ = ops_of((g)->root);			\
	o_ && o_->op ? o_->op(__VA_ARGS__) : -ENOTSUP;			\
})

int cg_create(const struct cg_root *root, const char *rel, struct cg_group *g)
{
	if (!name_ok(rel))
		return -EINVAL;
	memset(g, 0, sizeof(*g));
	g->root = root;
	snprintf(g->rel, sizeof(g->rel), "%s", rel);
	return CG_CALL(g, create, g);
}

int cg_destroy(const struct cg_group *g)
{
	return CG_CALL(g, destroy, g);
}

int cg_attach_pid(const struct cg_group *g, pid_t pid)
{
	return CG_CALL(g, attach, g, pid, false);
}

int cg_attach_tid(const struct cg_group *g, pid_t tid)
{
	return CG_CALL(g, attach, g, tid, true);
}

int cg_set_quota(const struct cg_group *g, int64_t quota_us, uint64_t period_us)
{
	if (period_us < 1000 || period_us > 1000000 || (quota_us >= 0 && quota_us < 1000))
		return -EINVAL;
	return CG_CALL(g, set_quota, g, quota_us, period_us);
}

int cg_set_weight(const struct cg_group *g, unsigned int weight)
{
	if (weight < 1 || weight > 10000)
		return -EINVAL;
	return CG_CALL(g, set_weight, g, weight);
}

int cg_set_cpus(const struct cg_group *g, const char *cpus)
{
	for (const char *p = cpus; *p; p++)
		if (!((*p >= '0' && *p <= '9') || *p == '-' || *p == ','))
			return -EINVAL;
	if (!cpus[0])
		return -EINVAL;
	return CG_CALL(g, set_cpus, g, cpus);
}

int cg_cpu_usage_ns(const struct cg_group *g, uint64_t *ns)
{
	return CG_CALL(g, cpu_usage_ns, g, ns);
}

bool cg_freezer_present(const struct cg_root *root)
{
	const struct cg_ops *o = ops_of(root);

	return o && o->freezer_present && o->freezer_present(root);
}

int cg_freezer_create(const struct cg_group *g)
{
	if (!cg_freezer_present(g->root))
		return -ENOTSUP;
	return CG_CALL(g, freezer_create, g);
}

int cg_freezer_attach_tid(const struct cg_group *g, pid_t tid)
{
	if (!cg_freezer_present(g->root))
		return -ENOTSUP;
	return CG_CALL(g, freezer_attach_tid, g, tid);
}

int cg_freezer_set(const struct cg_group *g, bool frozen)
{
	if (!cg_freezer_present(g->root))
		return -ENOTSUP;
	return CG_CALL(g, freezer_set, g, frozen);
}

int cg_freezer_destroy(const struct cg_group *g)
{
	if (!cg_freezer_present(g->root))
		return -ENOTSUP;
	return CG_CALL(g, freezer_destroy, g);
}

int cg_purge(const struct cg_group *g, const char *prefix)
{
	const struct cg_ops *o = ops_of(g->root);

	if (!prefix[0] || strchr(prefix, '/') || strstr(prefix, ".."))
		return -EINVAL;
	return o && o->purge ? o->purge(g, prefix) : 0;
}
