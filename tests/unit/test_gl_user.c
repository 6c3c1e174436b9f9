// SPDX-License-Identifier: MIT
/*
 * The runtime's copies of the caller's memory (guest-lib/gl_user.c):
 * EFAULT where the kernel gives it, on the main heap's plain-copy path
 * and its edges as on the system call's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "gl_user.h"
#include "tc_check.h"

/* A page that is surely not mapped: mapped, then unmapped. */
static void *hole(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert_ptr_ne(p, MAP_FAILED);
	ck_assert_int_eq(munmap(p, 4096), 0);
	return p;
}

/*
 * The break, moved to the end of its page (the kernel maps the brk
 * segment to there), so that the first byte past the break is unmapped;
 * and that no mapping follows it.
 */
static uint8_t *brk_end(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t b = (uintptr_t)sbrk(0);
	uint8_t *end = (uint8_t *)((b + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1));
	unsigned char v;

	ck_assert_ptr_ne((void *)b, (void *)-1);
	if ((uintptr_t)end != b)
		ck_assert_ptr_ne(sbrk((intptr_t)((uintptr_t)end - b)), (void *)-1);
	ck_assert_ptr_eq(sbrk(0), end);
	ck_assert_int_eq(mincore(end - pg, (size_t)pg, &v), 0);		/* mapped */
	ck_assert_int_eq(mincore(end, (size_t)pg, &v), -1);		/* not */
	ck_assert_int_eq(errno, ENOMEM);
	return end;
}

START_TEST(test_heap_both_ways)
{
	/* small enough for the main arena, not an mmap of its own */
	char *h = malloc(1024), out[1024];

	ck_assert_ptr_nonnull(h);
	memset(out, 'a', sizeof(out));
	ck_assert_int_eq(gl_user_write(h, out, sizeof(out)), 0);
	ck_assert_int_eq(memcmp(h, out, sizeof(out)), 0);
	memset(h, 'b', 1024);
	ck_assert_int_eq(gl_user_read(out, h, sizeof(out)), 0);
	ck_assert_int_eq(out[0], 'b');
	ck_assert_int_eq(out[1023], 'b');
	free(h);
}
END_TEST

START_TEST(test_faults)
{
	char buf[64] = { 0 };
	uint8_t *u = hole();

	ck_assert_int_eq(gl_user_write(u, buf, sizeof(buf)), -EFAULT);
	ck_assert_int_eq(gl_user_read(buf, u, sizeof(buf)), -EFAULT);
	ck_assert_int_eq(gl_user_write(NULL, buf, 1), -EFAULT);
	ck_assert_int_eq(gl_user_read(buf, NULL, 1), -EFAULT);
}
END_TEST

/* A range inside the brk segment that runs past its end: EFAULT, no SIGSEGV. */
START_TEST(test_past_the_break)
{
	uint8_t *end = brk_end();
	char buf[64];

	memset(buf, 'c', sizeof(buf));
	ck_assert_int_eq(gl_user_write(end - 8, buf, 16), -EFAULT);
	ck_assert_int_eq(gl_user_read(buf, end - 8, 16), -EFAULT);
	ck_assert_int_eq(gl_user_write(end - 8, buf, 8), 0);
	ck_assert_int_eq(end[-1], 'c');
	ck_assert_int_eq(gl_user_read(buf, end - 8, 8), 0);
}
END_TEST

/* Vectors: the bytes before the first fault, a heap segment then the hole. */
START_TEST(test_vectors)
{
	char *h = malloc(256), src[512];
	uint8_t *end = brk_end();
	struct iovec s = { src, sizeof(src) };
	struct iovec d[2] = { { h, 256 }, { end - 16, 256 } };

	ck_assert_ptr_nonnull(h);
	memset(src, 'd', sizeof(src));
	ck_assert_uint_eq(gl_user_writev(d, 1, &s, 1), 256);
	ck_assert_int_eq(h[255], 'd');
	/* the second segment runs past the break: the copy stops at it */
	ck_assert_uint_eq(gl_user_writev(d, 2, &s, 1), 256 + 16);
	ck_assert_int_eq(end[-1], 'd');
	ck_assert_uint_eq(gl_user_readv(&s, 1, d, 1), 256);
	free(h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gl_user");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_heap_both_ways);
	tcase_add_test(tc, test_faults);
	tcase_add_test(tc, test_past_the_break);
	tcase_add_test(tc, test_vectors);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
