// SPDX-License-Identifier: MIT
/* hs_sort: the planners' allocation-free heapsort against qsort. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hs_sort.h"

struct rec {
	uint32_t key;
	uint32_t id;
	char pad[72];		/* larger than the swap buffer */
};

static int cmp_rec(const void *a, const void *b, void *arg)
{
	const struct rec *x = a, *y = b;
	int dir = arg ? -1 : 1;

	if (x->key != y->key)
		return x->key < y->key ? -dir : dir;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_rec_q(const void *a, const void *b)
{
	return cmp_rec(a, b, NULL);
}

static int cmp_u32(const void *a, const void *b, void *arg)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	(void)arg;
	return x < y ? -1 : x > y;
}

START_TEST(matches_qsort)
{
	static struct rec a[600], b[600];
	uint32_t seed = 99, n, i, iter;

	for (iter = 0; iter < 200; iter++) {
		n = iter % 7 == 0 ? iter % 3 : 1 + (iter * 37) % 600;
		for (i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			a[i].key = (seed >> 16) % (iter % 2 ? 5 : 100000);	/* many ties */
			a[i].id = i;
			memset(a[i].pad, (int)i, sizeof(a[i].pad));
		}
		memcpy(b, a, n * sizeof(a[0]));
		hs_sort(a, n, sizeof(a[0]), cmp_rec, NULL);
		qsort(b, n, sizeof(b[0]), cmp_rec_q);
		ck_assert(memcmp(a, b, n * sizeof(a[0])) == 0);
	}
}
END_TEST

START_TEST(descending_and_small)
{
	struct rec r[3] = { { 1, 0, "" }, { 3, 1, "" }, { 2, 2, "" } };
	uint32_t u[5] = { 5, 1, 4, 1, 0 };

	/* the comparator's argument reaches it: non-NULL sorts descending */
	hs_sort(r, 3, sizeof(r[0]), cmp_rec, (void *)1);
	ck_assert_uint_eq(r[0].key, 3);
	ck_assert_uint_eq(r[2].key, 1);
	hs_sort(u, 5, sizeof(u[0]), cmp_u32, NULL);
	ck_assert_uint_eq(u[0], 0);
	ck_assert_uint_eq(u[1], 1);
	ck_assert_uint_eq(u[4], 5);
	hs_sort(u, 0, sizeof(u[0]), cmp_u32, NULL);	/* no-ops */
	hs_sort(NULL, 1, sizeof(u[0]), cmp_u32, NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hs_sort");
	TCase *tc = tcase_create("sort");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, matches_qsort);
	tcase_add_test(tc, descending_and_small);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
