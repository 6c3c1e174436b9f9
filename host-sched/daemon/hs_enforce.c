// SPDX-License-Identifier: MIT
/* Enforcement backends of tochain-sched; see hs_enforce.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* The v1 freezer mount from mountinfo ("" if none). */
static void find_freezer(const char *mountinfo, char *out, size_t size)
{
	char line[1024];
	FILE *f = fopen(mountinfo ? mountinfo : "/proc/self/mountinfo", "re");

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mnt[512], fstype[64], opts[256];
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1)
			continue;
		if (sscanf(sep + 3, "%63s %*s %255s", fstype, opts) != 2)
			continue;
		if (strcmp(fstype, "cgroup"))
			continue;
		for (char *o = strtok(opts, ","); o; o = strtok(NULL, ","))
			if (!strcmp(o, "freezer")) {
				snprintf(out, size, "%s", mnt);
				break;
			}
		if (out[0])
			break;
	}
	fclose(f);
}

/* Write @val to FREEZER/@rel/@file; the dry-run backend logs it as cg does. */
static int put_freezer(struct hse *e, const char *rel, const char *file, const char *val)
{
	char path[PATH_MAX + 256];
	ssize_t n;
	int fd, err = 0;

	if (e->kind == HSE_DRYRUN) {
		struct cg_root *r = &e->root;
		int w = snprintf(r->log + r->log_len, r->log_size - r->log_len,
				 "%s/%s %s\n", rel, file, val);

		if (w < 0 || (size_t)w >= r->log_size - r->log_len) {
			r->log[r->log_len] = '\0';
			return -ENOSPC;
		}
		r->log_len += (size_t)w;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s/%s", e->freezer, rel, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
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
		if (e->kind == HSE_CGROUP_V1)
			find_freezer(mountinfo, e->freezer, sizeof(e->freezer));
		break;
	default:
		return -EINVAL;
	}
	err = cg_create(&e->root, base, &e->base);
	if (err)
		return err;
	if (e->kind == HSE_CGROUP_V1 && e->freezer[0]) {
		char path[PATH_MAX + 256];

		snprintf(path, sizeof(path), "%s/%s", e->freezer, base);
		if (mkdir(path, 0755) && errno != EEXIST)
			e->freezer[0] = '\0';	/* no freezer gating then */
	}
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
	if (e->kind == HSE_CGROUP_V1 && e->freezer[0]) {
		char path[PATH_MAX + 256];

		snprintf(path, sizeof(path), "%s/%s", e->freezer, e->base.rel);
		rmdir(path);
	}
	e->base.root = NULL;
}

bool hse_can_freeze(const struct hse *e)
{
	return e->kind == HSE_DRYRUN || (e->kind == HSE_CGROUP_V1 && e->freezer[0]);
}

int hse_thread_add(struct hse *e, pid_t tid, struct hse_thread *t)
{
	char rel[200];
	char v[32];
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
		char path[PATH_MAX + 256];

		if (e->kind != HSE_DRYRUN) {
			snprintf(path, sizeof(path), "%s/%s", e->freezer, rel);
			if (mkdir(path, 0755) && errno != EEXIST)
				err = -errno;
		}
		snprintf(v, sizeof(v), "%d", (int)tid);
		if (!err)
			err = put_freezer(e, rel, "tasks", v);
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
	char v[32];

	if (!t->grp.root)
		return;
	if (t->frozen)
		hse_gate(e, t, true);
	/* A thread that is gone cannot be moved: errors are expected here. */
	cg_attach_tid(&top, t->tid);
	if (hse_can_freeze(e)) {
		snprintf(v, sizeof(v), "%d", (int)t->tid);
		put_freezer(e, ".", "tasks", v);
		if (e->kind != HSE_DRYRUN) {
			char path[PATH_MAX + 256];

			snprintf(path, sizeof(path), "%s/%s", e->freezer, t->grp.rel);
			rmdir(path);
		}
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
	err = put_freezer(e, t->grp.rel, "freezer.state", run ? "THAWED" : "FROZEN");
	if (err)
		return err;
	t->frozen = !run;
	return 0;
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

static int purge_mount(const char *mount, const char *base, bool freezer)
{
	char dir[PATH_MAX + 256], sub[PATH_MAX + 512];
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
		if (de->d_name[0] != 't' || de->d_type != DT_DIR)
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

int hse_purge(struct hse *e)
{
	int n = 0;

	if (!e->base.root)
		return 0;
	switch (e->kind) {
	case HSE_CGROUP_V1:
		/* Thaw first: a frozen task cannot move or exit. */
		n = purge_mount(e->freezer, e->base.rel, true);
		purge_mount(e->root.cpu, e->base.rel, false);
		if (strcmp(e->root.cpuacct, e->root.cpu))
			purge_mount(e->root.cpuacct, e->base.rel, false);
		purge_mount(e->root.cpuset, e->base.rel, false);
		break;
	case HSE_CGROUP_V2: {
		char dir[PATH_MAX + 256], sub[PATH_MAX + 512];
		struct dirent *de;
		DIR *dp;

		snprintf(dir, sizeof(dir), "%s/%s", e->root.v2, e->base.rel);
		dp = opendir(dir);
		if (!dp)
			break;
		/* Threads of a threaded group go back with their process when
		 * it exits; an empty group can be removed. */
		while ((de = readdir(dp)))
			if (de->d_name[0] == 't' && de->d_type == DT_DIR) {
				snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
				if (!rmdir(sub))
					n++;
			}
		closedir(dp);
		break;
	}
	default:
		break;
	}
	return n;
}
