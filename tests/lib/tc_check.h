/* SPDX-License-Identifier: MIT */
/* Shared helpers for the Check unit tests (test-only). */
#ifndef TOCHAIN_TC_CHECK_H
#define TOCHAIN_TC_CHECK_H

#include <check.h>
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

#endif
