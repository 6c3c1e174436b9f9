// SPDX-License-Identifier: MIT
/*
 * Unit tests for tochaind/td_vm.c's region directory check: regions
 * (the VMs' traffic) only on memory filesystems; a directory on a disk
 * filesystem, or one that does not exist, is refused with a reason.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>

#include <linux/magic.h>

#include "td_vm.h"
#include "tc_check.h"

START_TEST(fs_types)
{
	ck_assert(td_region_fs_ok(TMPFS_MAGIC));
	ck_assert(td_region_fs_ok(HUGETLBFS_MAGIC));
	ck_assert(td_region_fs_ok(RAMFS_MAGIC));
	ck_assert(!td_region_fs_ok(EXT4_SUPER_MAGIC));
	ck_assert(!td_region_fs_ok(XFS_SUPER_MAGIC));
	ck_assert(!td_region_fs_ok(BTRFS_SUPER_MAGIC));
	ck_assert(!td_region_fs_ok(OVERLAYFS_SUPER_MAGIC));
	ck_assert(!td_region_fs_ok(NFS_SUPER_MAGIC));
	ck_assert(!td_region_fs_ok(0));
}
END_TEST

/* A directory of this machine on a disk: the first of a few usual ones. */
static const char *disk_dir(void)
{
	static const char *const cand[] = { "/var/tmp", "/var", "/tmp", "/" };
	struct statfs sfs;

	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++)
		if (!statfs(cand[i], &sfs) && !td_region_fs_ok((unsigned long)sfs.f_type))
			return cand[i];
	return NULL;
}

START_TEST(dirs)
{
	const char *disk = disk_dir();
	char err[512];

	err[0] = '\0';
	ck_assert_int_eq(td_region_dir_check("/dev/shm", err, sizeof(err)), 0);
	ck_assert_str_eq(err, "");
	ck_assert_msg(disk, "no directory on a disk filesystem among /var/tmp, /var, /tmp, /");
	ck_assert_int_eq(td_region_dir_check(disk, err, sizeof(err)), -EXDEV);
	ck_assert_ptr_nonnull(strstr(err, "not on tmpfs or hugetlbfs"));
	ck_assert_ptr_nonnull(strstr(err, disk));
	ck_assert_int_eq(td_region_dir_check("/nonexistent-tc-dir", err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent-tc-dir"));
	/* a short buffer is cut, not overrun */
	ck_assert_int_eq(td_region_dir_check(disk, err, 8), -EXDEV);
	ck_assert_uint_eq(strlen(err), 7);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("td_vm");
	TCase *tc = tcase_create("region_dir");

	tcase_add_test(tc, fs_types);
	tcase_add_test(tc, dirs);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
