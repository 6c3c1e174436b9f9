/* SPDX-License-Identifier: MIT */
/*
 * The only place TOChain spells out atomics on shared memory.
 *
 * Every use names its ordering and, in a comment at the call site, the
 * access it pairs with ("A1 pairs with R1").  All shared-memory accesses
 * of fields another party may write concurrently go through these, so the
 * compiler neither tears nor repeats them: a guest-written field is read
 * exactly once per use site (no double fetch).
 */
#ifndef TOCHAIN_BARRIER_H
#define TOCHAIN_BARRIER_H

#include <stdint.h>

/* Plain single read/write of a shared field; no ordering. */
#define tc_load_relaxed(p)	__atomic_load_n((p), __ATOMIC_RELAXED)
#define tc_store_relaxed(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)

/* Acquire load: later accesses are not moved before it. */
#define tc_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
/* Release store: earlier accesses are not moved after it. */
#define tc_store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* Compare-and-swap; *expected is updated with the current value on failure. */
#define tc_cas_relaxed(p, expected, desired) \
	__atomic_compare_exchange_n((p), (expected), (desired), 0, \
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED)
#define tc_cas_acquire(p, expected, desired) \
	__atomic_compare_exchange_n((p), (expected), (desired), 0, \
				    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)

#define tc_fetch_add_relaxed(p, v)	__atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define tc_fetch_add_release(p, v)	__atomic_fetch_add((p), (v), __ATOMIC_RELEASE)
#define tc_xchg_relaxed(p, v)	__atomic_exchange_n((p), (v), __ATOMIC_RELAXED)

/* Full fence: orders an earlier store before a later load (Dekker). */
#define tc_fence_seq_cst()	__atomic_thread_fence(__ATOMIC_SEQ_CST)

static inline void tc_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

#define tc_likely(x)	__builtin_expect(!!(x), 1)
#define tc_unlikely(x)	__builtin_expect(!!(x), 0)

#endif /* TOCHAIN_BARRIER_H */
