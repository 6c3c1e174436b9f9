// SPDX-License-Identifier: MIT
/* Unit tests for lib/cgroup: detection, dispatch and the dry-run backend. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tochain/cg.h"
#include "tc_check.h"

static char mi[64];

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

int main(void)
{
	Suite *s = suite_create("cg");
	TCase *tc = tcase_create("cg");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, detect_v1_hybrid);
	tcase_add_test(tc, detect_combined_cpu_cpuacct_and_none);
	tcase_add_test(tc, dryrun_records_writes);
	tcase_add_test(tc, dryrun_freezer_and_purge);
	tcase_add_test(tc, no_freezer_is_enotsup);
	tcase_add_test(tc, bad_arguments);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
