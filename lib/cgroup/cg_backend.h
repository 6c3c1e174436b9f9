/* SPDX-License-Identifier: MIT */
/*
 * Private to lib/cgroup: the interface every cgroup backend fills
 * (STYLE.md 13), and the file helpers the v1 and v2 backends share.
 *
 * cg.c is the front: it detects the hierarchies, checks every argument
 * (group names, quota and period ranges, weights, CPU lists) and then
 * calls the root's backend, so a backend trusts what it is given.  A
 * backend without an operation leaves it NULL and the front returns
 * -ENOTSUP.  Backends return 0 or -errno, as the public functions do.
 */
#ifndef CG_BACKEND_H
#define CG_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tochain/cg.h"

struct cg_ops {
	/* g->root and g->rel are set and checked */
	int (*create)(const struct cg_group *g);
	int (*destroy)(const struct cg_group *g);
	int (*attach)(const struct cg_group *g, pid_t id, bool thread);
	int (*set_quota)(const struct cg_group *g, int64_t quota_us, uint64_t period_us);
	int (*set_weight)(const struct cg_group *g, unsigned int weight);
	int (*set_cpus)(const struct cg_group *g, const char *cpus);
	int (*cpu_usage_ns)(const struct cg_group *g, uint64_t *ns);
	/* per-thread freezer, kept apart from the groups above */
	bool (*freezer_present)(const struct cg_root *root);
	int (*freezer_create)(const struct cg_group *g);
	int (*freezer_attach_tid)(const struct cg_group *g, pid_t tid);
	int (*freezer_set)(const struct cg_group *g, bool frozen);
	int (*freezer_destroy)(const struct cg_group *g);
	int (*purge)(const struct cg_group *g, const char *prefix);
};

extern const struct cg_ops cg_v1_ops;	/* cg_v1.c */
extern const struct cg_ops cg_v2_ops;	/* cg_v2.c */
extern const struct cg_ops cg_dry_ops;	/* cg_dry.c */

/* cg_fs.c: MOUNT/REL/FILE as a path; REL may be "." */
int cg_fs_write(const char *mount, const char *rel, const char *file, const char *val);
int cg_fs_read(const char *mount, const char *rel, const char *file, char *buf, size_t size);
/* mkdir -p of REL below MOUNT */
int cg_fs_mkdirs(const char *mount, const char *rel);
/* rmdir MOUNT/REL, retrying while a task that just exited still leaves it;
 * an empty MOUNT (hierarchy not mounted) or a missing group is fine */
int cg_fs_rmdir(const char *mount, const char *rel);

#endif
