/* SPDX-License-Identifier: MIT */
/* Shared helpers for the Check unit tests (test-only). */
#ifndef TOCHAIN_TC_CHECK_H
#define TOCHAIN_TC_CHECK_H

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

/* Run one suite; the exit status of a test main. */
static inline int tc_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Anonymous shared memory, zeroed, page aligned. */
static inline void *tc_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ck_assert_ptr_ne(p, MAP_FAILED);
	return p;
}

static inline int tc_tmpdir_rm_one(const char *p, const struct stat *st, int flag,
				   struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/*
 * A fresh directory below /dev/shm for one test binary's files, made by
 * main and removed whole at the end, also when a test failed before its
 * teardown.  0, or -1 with a message.
 */
static inline int tc_tmpdir_make(char *dir, size_t size)
{
	snprintf(dir, size, "/dev/shm/tochain-test-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return -1;
	}
	return 0;
}

static inline void tc_tmpdir_remove(const char *dir)
{
	nftw(dir, tc_tmpdir_rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

#endif
