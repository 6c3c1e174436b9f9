// SPDX-License-Identifier: MIT
/*
 * Unit tests for lib/cgroup: detection, dispatch, the dry-run backend, and
 * the v2 backend's writes into a temporary directory shaped like a cgroup2
 * mount (the files a kernel creates with each group are made by the test).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tochain/cg.h"
#include "tc_check.h"

static char mi[64];
static char tmp[64];	/* this binary's directory (main) */

static void write_mountinfo(const char *text)
{
	FILE *f;

	snprintf(mi, sizeof(mi), "/tmp/tc-mountinfo-%d", getpid());
	f = fopen(mi, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void teardown(void)
{
	unlink(mi);
}

START_TEST(detect_v1_hybrid)
{
	struct cg_root r;

	write_mountinfo(
		"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
		"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
		"33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
		"34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
		"36 31 0:33 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
		"35 31 0:32 / /nonexistent-unified rw,relatime - cgroup2 cgroup2 rw\n");
	ck_assert_int_eq(cg_detect(&r, mi), 0);
	ck_assert_int_eq(r.kind, CG_V1);
	ck_assert_str_eq(r.cpu, "/sys/fs/cgroup/cpu");
	ck_assert_str_eq(r.cpuacct, "/sys/fs/cgroup/cpuacct");
	ck_assert_str_eq(r.cpuset, "/sys/fs/cgroup/cpuset");
	ck_assert_str_eq(r.v2, "/nonexistent-unified");
	ck_assert_str_eq(r.freezer, "/sys/fs/cgroup/freezer");
	ck_assert(cg_freezer_present(&r));
}
END_TEST

START_TEST(detect_combined_cpu_cpuacct_and_none)
{
	struct cg_root r;

	write_mountinfo("40 31 0:29 / /cg/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n");
	ck_assert_int_eq(cg_detect(&r, mi), 0);
	ck_assert_str_eq(r.cpu, "/cg/cpu,cpuacct");
	ck_assert_str_eq(r.cpuacct, "/cg/cpu,cpuacct");
	ck_assert(!cg_freezer_present(&r));
	write_mountinfo("garbage\n\n - - -\n1 2 3 4 /proc rw - proc proc rw\n");
	ck_assert_int_eq(cg_detect(&r, mi), -ENOENT);
	ck_assert_int_eq(cg_detect(&r, "/nonexistent"), -ENOENT);
}
END_TEST

START_TEST(dryrun_records_writes)
{
	struct cg_root r;
	struct cg_group g;
	char log[1024];

	cg_dryrun_init(&r, log, sizeof(log));
	ck_assert_str_eq(cg_kind_name(r.kind), "dry-run");
	ck_assert_int_eq(cg_create(&r, "tochain/vnf-a", &g), 0);
	ck_assert_int_eq(cg_set_quota(&g, 20000, 100000), 0);
	ck_assert_int_eq(cg_set_quota(&g, -1, 100000), 0);
	ck_assert_int_eq(cg_set_weight(&g, 100), 0);
	ck_assert_int_eq(cg_set_cpus(&g, "0-1,3"), 0);
	ck_assert_int_eq(cg_attach_tid(&g, 1234), 0);
	ck_assert_str_eq(log,
			 "tochain/vnf-a/cpu.cfs_period_us 100000\n"
			 "tochain/vnf-a/cpu.cfs_quota_us 20000\n"
			 "tochain/vnf-a/cpu.cfs_period_us 100000\n"
			 "tochain/vnf-a/cpu.cfs_quota_us -1\n"
			 "tochain/vnf-a/cpu.shares 1024\n"
			 "tochain/vnf-a/cpuset.cpus 0-1,3\n"
			 "tochain/vnf-a/tasks 1234\n");
}
END_TEST

START_TEST(dryrun_freezer_and_purge)
{
	struct cg_root r;
	struct cg_group g, top;
	char log[1024];
	uint64_t ns;

	cg_dryrun_init(&r, log, sizeof(log));
	ck_assert(cg_freezer_present(&r));
	ck_assert_int_eq(cg_create(&r, "sched/t7", &g), 0);
	ck_assert_int_eq(cg_freezer_create(&g), 0);
	ck_assert_int_eq(cg_freezer_attach_tid(&g, 7), 0);
	ck_assert_int_eq(cg_freezer_set(&g, true), 0);
	ck_assert_int_eq(cg_freezer_set(&g, false), 0);
	top = (struct cg_group){ .root = &r, .rel = "." };
	ck_assert_int_eq(cg_freezer_attach_tid(&top, 7), 0);
	ck_assert_int_eq(cg_freezer_destroy(&g), 0);
	ck_assert_int_eq(cg_destroy(&g), 0);
	ck_assert_str_eq(log,
			 "sched/t7/tasks 7\n"
			 "sched/t7/freezer.state FROZEN\n"
			 "sched/t7/freezer.state THAWED\n"
			 "./tasks 7\n");
	/* the dry run reads nothing: no usage, nothing to purge */
	ck_assert_int_eq(cg_cpu_usage_ns(&g, &ns), -ENOTSUP);
	ck_assert_int_eq(cg_purge(&g, "t"), 0);
	ck_assert_int_eq(cg_purge(&g, ""), -EINVAL);
	ck_assert_int_eq(cg_purge(&g, "a/b"), -EINVAL);
	ck_assert_int_eq(cg_purge(&g, ".."), -EINVAL);
}
END_TEST

START_TEST(no_freezer_is_enotsup)
{
	/* v2 has no per-thread freezer; a root without a backend has nothing */
	struct cg_root v2 = { .kind = CG_V2 }, none = { .kind = CG_NONE };
	struct cg_group g2 = { .root = &v2, .rel = "x" }, gn = { .root = &none, .rel = "x" };

	ck_assert(!cg_freezer_present(&v2));
	ck_assert_int_eq(cg_freezer_create(&g2), -ENOTSUP);
	ck_assert_int_eq(cg_freezer_attach_tid(&g2, 1), -ENOTSUP);
	ck_assert_int_eq(cg_freezer_set(&g2, true), -ENOTSUP);
	ck_assert_int_eq(cg_freezer_destroy(&g2), -ENOTSUP);
	ck_assert(!cg_freezer_present(&none));
	ck_assert_int_eq(cg_create(&none, "x", &gn), -ENOTSUP);
	ck_assert_int_eq(cg_destroy(&gn), -ENOTSUP);
	ck_assert_int_eq(cg_attach_pid(&gn, 1), -ENOTSUP);
	ck_assert_int_eq(cg_purge(&gn, "t"), 0);
}
END_TEST

START_TEST(bad_arguments)
{
	struct cg_root r;
	struct cg_group g;
	char log[64];

	cg_dryrun_init(&r, log, sizeof(log));
	ck_assert_int_eq(cg_create(&r, "../etc", &g), -EINVAL);
	ck_assert_int_eq(cg_create(&r, "/abs", &g), -EINVAL);
	ck_assert_int_eq(cg_create(&r, "", &g), -EINVAL);
	ck_assert_int_eq(cg_create(&r, "a b", &g), -EINVAL);
	ck_assert_int_eq(cg_create(&r, "ok", &g), 0);
	ck_assert_int_eq(cg_set_quota(&g, 10, 100000), -EINVAL);
	ck_assert_int_eq(cg_set_quota(&g, 1000, 10), -EINVAL);
	ck_assert_int_eq(cg_set_weight(&g, 0), -EINVAL);
	ck_assert_int_eq(cg_set_weight(&g, 10001), -EINVAL);
	ck_assert_int_eq(cg_set_cpus(&g, "0;rm"), -EINVAL);
	ck_assert_int_eq(cg_set_cpus(&g, ""), -EINVAL);
	/* A full log is an error, not an overflow. */
	/* "ok/cpuset.cpus 0-1\n" is 19 bytes: three fit in 64, the fourth does not. */
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(cg_set_cpus(&g, "0-1"), 0);
	ck_assert_int_eq(cg_set_cpus(&g, "0-1"), -ENOSPC);
	ck_assert_uint_eq(strlen(log), 57);
}
END_TEST

/* ---- the v2 backend on a cgroup2-shaped tree ------------------------------ */

/* The interface files the kernel creates with a cgroup2 directory (empty here). */
static const char *const v2_files[] = {
	"cgroup.type", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control",
	"cgroup.controllers", "cpu.max", "cpu.weight", "cpu.stat", "cpuset.cpus",
};
#define V2_NFILES (sizeof(v2_files) / sizeof(v2_files[0]))

static void put(const char *dir, const char *rel, const char *file, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s/%s", dir, rel, file);
	f = fopen(p, "w");
	ck_assert_msg(f != NULL, "%s", p);
	fputs(text, f);
	fclose(f);
}

/* The file's contents ("" when empty, "<missing>" when absent). */
static const char *get(const char *dir, const char *rel, const char *file)
{
	static char buf[256];
	char p[512];
	size_t n;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s/%s", dir, rel, file);
	f = fopen(p, "r");
	if (!f)
		return "<missing>";
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* What the kernel does on mkdir in a cgroup2 mount: the interface files. */
static void kernel_populate(const char *dir, const char *rel)
{
	for (size_t i = 0; i < V2_NFILES; i++)
		put(dir, rel, v2_files[i], "");
}

/* ... and on rmdir: they go with the directory (rmdir on tmpfs needs them gone). */
static void kernel_depopulate(const char *dir, const char *rel)
{
	char p[512];

	for (size_t i = 0; i < V2_NFILES; i++) {
		snprintf(p, sizeof(p), "%s/%s/%s", dir, rel, v2_files[i]);
		unlink(p);
	}
}

/* A group's directory holds only the kernel's files: nothing else was created. */
static void only_kernel_files(const char *dir, const char *rel)
{
	char p[512];
	struct dirent *de;
	DIR *d;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	d = opendir(p);
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d))) {
		bool known = de->d_name[0] == '.' || de->d_type == DT_DIR;

		for (size_t i = 0; !known && i < V2_NFILES; i++)
			known = !strcmp(de->d_name, v2_files[i]);
		ck_assert_msg(known, "%s: unexpected file %s", p, de->d_name);
	}
	closedir(d);
}

/* A cgroup2 mount at @dir (cpu and cpuset enabled) found through cg_detect. */
static void v2_tree(struct cg_root *r, char *dir, size_t size)
{
	char text[256];

	snprintf(dir, size, "%s/unified-XXXXXX", tmp);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	kernel_populate(dir, ".");
	put(dir, ".", "cgroup.controllers", "cpuset cpu io memory pids\n");
	/* a parent group the service manager made (tochain-sched's --cgroup parent) */
	ck_assert_int_eq(mkdir(strcat(strcpy(text, dir), "/tochain"), 0755), 0);
	kernel_populate(dir, "tochain");
	/* hybrid-style v1 mounts next to it: v2 wins because it has cpu */
	snprintf(text, sizeof(text),
		 "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
		 "41 31 0:38 / %s rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw,nsdelegate\n",
		 dir);
	write_mountinfo(text);
	ck_assert_int_eq(cg_detect(r, mi), 0);
	ck_assert_int_eq(r->kind, CG_V2);
	ck_assert_str_eq(cg_kind_name(r->kind), "cgroup-v2");
	ck_assert_str_eq(r->v2, dir);
}

START_TEST(v2_writes_the_unified_files)
{
	struct cg_root r;
	struct cg_group g;
	char dir[128], p[256];
	struct stat st;
	uint64_t ns;

	v2_tree(&r, dir, sizeof(dir));
	ck_assert_int_eq(cg_create(&r, "tochain/vnf-a", &g), 0);
	snprintf(p, sizeof(p), "%s/tochain/vnf-a", dir);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	/* cpu and cpuset enabled for the children of the root and of each ancestor */
	ck_assert_str_eq(get(dir, ".", "cgroup.subtree_control"), "+cpu +cpuset");
	ck_assert_str_eq(get(dir, "tochain", "cgroup.subtree_control"), "+cpu +cpuset");
	kernel_populate(dir, "tochain/vnf-a");

	/* bandwidth: "QUOTA PERIOD", and "max PERIOD" for no limit */
	ck_assert_int_eq(cg_set_quota(&g, 20000, 100000), 0);
	ck_assert_str_eq(get(dir, "tochain/vnf-a", "cpu.max"), "20000 100000");
	put(dir, "tochain/vnf-a", "cpu.max", "");
	ck_assert_int_eq(cg_set_quota(&g, -1, 50000), 0);
	ck_assert_str_eq(get(dir, "tochain/vnf-a", "cpu.max"), "max 50000");
	/* weight as is (v1 would scale it into cpu.shares) */
	ck_assert_int_eq(cg_set_weight(&g, 250), 0);
	ck_assert_str_eq(get(dir, "tochain/vnf-a", "cpu.weight"), "250");
	ck_assert_int_eq(cg_set_cpus(&g, "0-1,3"), 0);
	ck_assert_str_eq(get(dir, "tochain/vnf-a", "cpuset.cpus"), "0-1,3");
	/* a process goes to cgroup.procs; the group stays a domain */
	ck_assert_int_eq(cg_attach_pid(&g, 4321), 0);
	ck_assert_str_eq(get(dir, "tochain/vnf-a", "cgroup.procs"), "4321");
	ck_assert_str_eq(get(dir, "tochain/vnf-a", "cgroup.type"), "");
	ck_assert_str_eq(get(dir, "tochain/vnf-a", "cgroup.threads"), "");
	only_kernel_files(dir, "tochain/vnf-a");
	/* no v1 file anywhere: a v1 write would have failed (ENOENT) above */
	ck_assert_str_eq(get(dir, "tochain/vnf-a", "cpu.cfs_quota_us"), "<missing>");
	ck_assert_str_eq(get(dir, "tochain/vnf-a", "tasks"), "<missing>");

	/* usage from cpu.stat's usage_usec, in ns */
	put(dir, "tochain/vnf-a", "cpu.stat", "usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\n");
	ck_assert_int_eq(cg_cpu_usage_ns(&g, &ns), 0);
	ck_assert_uint_eq(ns, 1234567000ull);
	put(dir, "tochain/vnf-a", "cpu.stat", "user_usec 1\n");
	ck_assert_int_eq(cg_cpu_usage_ns(&g, &ns), -EIO);

	/* removal: the kernel's files go with rmdir */
	kernel_depopulate(dir, "tochain/vnf-a");
	ck_assert_int_eq(cg_destroy(&g), 0);
	ck_assert_int_ne(stat(p, &st), 0);
	ck_assert_int_eq(cg_destroy(&g), 0);	/* missing is fine */
}
END_TEST

START_TEST(v2_threads_go_to_a_threaded_group)
{
	struct cg_root r;
	struct cg_group top, t1, t2, other;
	char dir[128];

	v2_tree(&r, dir, sizeof(dir));
	ck_assert_int_eq(cg_create(&r, "tochain/sched/t1", &t1), 0);
	ck_assert_str_eq(get(dir, "tochain", "cgroup.subtree_control"), "+cpu +cpuset");
	kernel_populate(dir, "tochain/sched");
	kernel_populate(dir, "tochain/sched/t1");
	ck_assert_int_eq(cg_create(&r, "tochain/sched/t2", &t2), 0);
	ck_assert_str_eq(get(dir, "tochain/sched", "cgroup.subtree_control"), "+cpu +cpuset");
	kernel_populate(dir, "tochain/sched/t2");

	/* a thread: the group is made threaded, the tid goes to cgroup.threads */
	ck_assert_int_eq(cg_attach_tid(&t1, 1234), 0);
	ck_assert_str_eq(get(dir, "tochain/sched/t1", "cgroup.type"), "threaded");
	ck_assert_str_eq(get(dir, "tochain/sched/t1", "cgroup.threads"), "1234");
	ck_assert_str_eq(get(dir, "tochain/sched/t1", "cgroup.procs"), "");
	ck_assert_int_eq(cg_set_quota(&t1, 30000, 100000), 0);
	ck_assert_str_eq(get(dir, "tochain/sched/t1", "cpu.max"), "30000 100000");
	ck_assert_int_eq(cg_set_cpus(&t1, "1"), 0);
	ck_assert_str_eq(get(dir, "tochain/sched/t1", "cpuset.cpus"), "1");
	/* the other thread group is untouched */
	ck_assert_str_eq(get(dir, "tochain/sched/t2", "cgroup.type"), "");
	ck_assert_str_eq(get(dir, "tochain/sched/t2", "cgroup.threads"), "");
	ck_assert_str_eq(get(dir, "tochain/sched/t2", "cpu.max"), "");
	only_kernel_files(dir, "tochain/sched/t1");
	only_kernel_files(dir, "tochain/sched/t2");

	/* a missing interface file is an error, not a silent success */
	other = (struct cg_group){ .root = &r, .rel = "tochain/sched/nothere" };
	ck_assert_int_eq(cg_attach_tid(&other, 1), -ENOENT);
	ck_assert_int_eq(cg_set_weight(&other, 100), -ENOENT);

	/* purge removes the empty groups with the prefix, and only those */
	ck_assert_int_eq(cg_create(&r, "tochain/sched/keep", &other), 0);
	kernel_depopulate(dir, "tochain/sched/t1");
	kernel_depopulate(dir, "tochain/sched/t2");
	top = (struct cg_group){ .root = &r, .rel = "tochain/sched" };
	ck_assert_int_eq(cg_purge(&top, "t"), 2);
	ck_assert_str_eq(get(dir, "tochain/sched/t1", "cpu.max"), "<missing>");
	ck_assert_int_eq(cg_purge(&top, "t"), 0);
	ck_assert_int_eq(cg_destroy(&other), 0);
	/* v2 has no per-thread freezer */
	ck_assert(!cg_freezer_present(&r));
	ck_assert_int_eq(cg_freezer_set(&t1, true), -ENOTSUP);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cg");
	TCase *tc = tcase_create("cg");
	int rc;

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, detect_v1_hybrid);
	tcase_add_test(tc, detect_combined_cpu_cpuacct_and_none);
	tcase_add_test(tc, dryrun_records_writes);
	tcase_add_test(tc, dryrun_freezer_and_purge);
	tcase_add_test(tc, no_freezer_is_enotsup);
	tcase_add_test(tc, bad_arguments);
	tcase_add_test(tc, v2_writes_the_unified_files);
	tcase_add_test(tc, v2_threads_go_to_a_threaded_group);
	suite_add_tcase(s, tc);
	if (tc_tmpdir_make(tmp, sizeof(tmp)))
		return EXIT_FAILURE;
	rc = tc_run_suite(s);
	tc_tmpdir_remove(tmp);
	return rc;
}
