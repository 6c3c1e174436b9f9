// SPDX-License-Identifier: MIT
#include <stdint.h>
#include <string.h>

#include "hs_sort.h"

static void swap(char *a, char *b, size_t size)
{
	char tmp[64];

	while (size) {
		size_t k = size < sizeof(tmp) ? size : sizeof(tmp);

		memcpy(tmp, a, k);
		memcpy(a, b, k);
		memcpy(b, tmp, k);
		a += k;
		b += k;
		size -= k;
	}
}

/* Restore the max-heap property below @root in base[0..n). */
static void sift(char *base, size_t root, size_t n, size_t size,
		 hs_cmp_fn cmp, void *arg)
{
	for (;;) {
		size_t child = 2 * root + 1, big = root;

		if (child < n && cmp(base + child * size, base + big * size, arg) > 0)
			big = child;
		if (child + 1 < n &&
		    cmp(base + (child + 1) * size, base + big * size, arg) > 0)
			big = child + 1;
		if (big == root)
			return;
		swap(base + root * size, base + big * size, size);
		root = big;
	}
}

void hs_sort(void *base, size_t n, size_t size, hs_cmp_fn cmp, void *arg)
{
	char *b = base;
	size_t i;

	if (n < 2 || size == 0)
		return;
	for (i = n / 2; i-- > 0;)
		sift(b, i, n, size, cmp, arg);
	for (i = n - 1; i > 0; i--) {
		swap(b, b + i * size, size);
		sift(b, 0, i, size, cmp, arg);
	}
}
