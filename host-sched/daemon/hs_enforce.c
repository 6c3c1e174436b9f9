// SPDX-License-Identifier: MIT
/* How tochain-sched applies a plan, through lib/cgroup; see hs_enforce.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hs_enforce.h"

int hse_kind_parse(const char *s, enum hse_kind *out)
{
	static const struct { const char *name; enum hse_kind kind; } tab[] = {
		{ "auto", HSE_AUTO }, { "v1", HSE_CGROUP_V1 },
		{ "v2", HSE_CGROUP_V2 }, { "dryrun", HSE_DRYRUN },
		{ "libvirt", HSE_LIBVIRT },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcmp(s, tab[i].name)) {
			*out = tab[i].kind;
			return 0;
		}
	return -EINVAL;
}

const char *hse_kind_name(enum hse_kind kind)
{
	switch (kind) {
	case HSE_AUTO: return "auto";
	case HSE_CGROUP_V1: return "cgroup-v1";
	case HSE_CGROUP_V2: return "cgroup-v2";
	case HSE_DRYRUN: return "dryrun";
	case HSE_LIBVIRT: return "libvirt";
	}
	return "?";
}

int hse_open(struct hse *e, enum hse_kind want, const char *base,
	     const char *mountinfo, char *log, size_t logsize, unsigned int weight)
{
	int err;

	memset(e, 0, sizeof(*e));
	if (weight < 1 || weight > 10000)
		return -EINVAL;
	e->weight = weight;
	switch (want) {
	case HSE_DRYRUN:
		if (!log || !logsize)
			return -EINVAL;
		cg_dryrun_init(&e->root, log, logsize);
		e->kind = HSE_DRYRUN;
		break;
	case HSE_AUTO:
	case HSE_LIBVIRT:	/* domains go to hs_libvirt; host threads stay here */
	case HSE_CGROUP_V1:
	case HSE_CGROUP_V2:
		err = cg_detect(&e->root, mountinfo);
		if (err)
			return err == -ENOENT ? -ENOTSUP : err;
		if (e->root.kind == CG_V1)
			e->kind = HSE_CGROUP_V1;
		else if (e->root.kind == CG_V2)
			e->kind = HSE_CGROUP_V2;
		else
			return -ENOTSUP;
		if (want != HSE_AUTO && want != HSE_LIBVIRT && want != e->kind)
			return -ENOTSUP;
		break;
	default:
		return -EINVAL;
	}
	err = cg_create(&e->root, base, &e->base);
	if (err)
		return err;
	/* No freezer directory for BASE: no freezer gating then. */
	e->freeze = cg_freezer_present(&e->root) && cg_freezer_create(&e->base) == 0;
	err = cg_set_weight(&e->base, weight);
	if (err) {
		hse_close(e);
		return err;
	}
	return 0;
}

void hse_close(struct hse *e)
{
	if (!e->base.root)
		return;
	cg_destroy(&e->base);
	if (e->freeze)
		cg_freezer_destroy(&e->base);
	e->base.root = NULL;
}

bool hse_can_freeze(const struct hse *e)
{
	return e->freeze;
}

int hse_thread_add(struct hse *e, pid_t tid, struct hse_thread *t)
{
	char rel[200];
	int err;

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->quota_us = -1;
	if ((size_t)snprintf(rel, sizeof(rel), "%s/t%d", e->base.rel, (int)tid) >= sizeof(rel))
		return -ENAMETOOLONG;
	err = cg_create(&e->root, rel, &t->grp);
	if (err)
		return err;
	err = cg_attach_tid(&t->grp, tid);
	if (!err)
		err = cg_set_weight(&t->grp, e->weight);
	if (!err && hse_can_freeze(e)) {
		err = cg_freezer_create(&t->grp);
		if (!err)
			err = cg_freezer_attach_tid(&t->grp, tid);
	}
	if (err) {
		hse_thread_del(e, t);
		return err;
	}
	return 0;
}

void hse_thread_del(struct hse *e, struct hse_thread *t)
{
	struct cg_group top = { .root = &e->root, .rel = "." };

	if (!t->grp.root)
		return;
	if (t->frozen)
		hse_gate(e, t, true);
	/* A thread that is gone cannot be moved: errors are expected here. */
	cg_attach_tid(&top, t->tid);
	if (hse_can_freeze(e)) {
		cg_freezer_attach_tid(&top, t->tid);
		cg_freezer_destroy(&t->grp);
	}
	cg_destroy(&t->grp);
	t->grp.root = NULL;
}

int hse_place(struct hse *e, struct hse_thread *t, const char *cpus,
	      int64_t quota_us, uint64_t period_us)
{
	int err;

	(void)e;
	if (quota_us >= 0 && quota_us < 1000)
		quota_us = 1000;	/* the kernel's minimum */
	if (strcmp(t->cpus, cpus)) {
		err = cg_set_cpus(&t->grp, cpus);
		if (err)
			return err;
		snprintf(t->cpus, sizeof(t->cpus), "%s", cpus);
	}
	if (quota_us != t->quota_us || period_us != t->period_us) {
		err = cg_set_quota(&t->grp, quota_us, period_us);
		if (err)
			return err;
		t->quota_us = quota_us;
		t->period_us = period_us;
	}
	return 0;
}

int hse_gate(struct hse *e, struct hse_thread *t, bool run)
{
	int err;

	if (t->frozen == !run)
		return 0;
	if (!hse_can_freeze(e))
		return -ENOTSUP;
	err = cg_freezer_set(&t->grp, !run);
	if (err)
		return err;
	t->frozen = !run;
	return 0;
}

int hse_purge(struct hse *e)
{
	if (!e->base.root)
		return 0;
	/* thread groups are named t<tid> */
	return cg_purge(&e->base, "t");
}
