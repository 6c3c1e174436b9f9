/* SPDX-License-Identifier: MIT */
/*
 * hs_sort — in-place heapsort for the planners.
 *
 * glibc's qsort may allocate (its merge sort takes a temporary buffer
 * from malloc for larger arrays); the per-period planners must not.
 * O(n log n), no allocation, not stable: give it a total order (the
 * planners break ties by index).  Safe from any thread.
 */
#ifndef HS_SORT_H
#define HS_SORT_H

#include <stddef.h>

typedef int (*hs_cmp_fn)(const void *a, const void *b, void *arg);

void hs_sort(void *base, size_t n, size_t size, hs_cmp_fn cmp, void *arg);

#endif
