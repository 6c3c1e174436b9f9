/* SPDX-License-Identifier: MIT */
/*
 * What the guest driver tests put in a test region, shared by the host
 * helper (vm_host_tool.c) and the guest program (vm_guest_test.c).
 *
 *   0        struct tcr_header (region_layout.h), written by the host
 *   4096     struct vm_mailbox: who did what, one field per writer
 *   8192     VM_PAT_LEN bytes the host fills, the guest checks
 *   8192 + VM_PAT_LEN   VM_PAT_LEN bytes the guest fills, the host checks
 *
 * Test regions are at least VM_TEST_MIN_SIZE bytes (a power of two, so
 * BAR2 is exactly the file).
 */
#ifndef TOCHAIN_VM_TEST_LAYOUT_H
#define TOCHAIN_VM_TEST_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define VM_OFF_MAILBOX		4096
#define VM_OFF_HOST_PAT		8192
#define VM_PAT_LEN		(64 * 1024)
#define VM_OFF_GUEST_PAT	(VM_OFF_HOST_PAT + VM_PAT_LEN)
#define VM_TEST_MIN_SIZE	(VM_OFF_GUEST_PAT + VM_PAT_LEN)

#define VM_SEED_HOST		0x686f7374u	/* "host" */
#define VM_SEED_GUEST		0x67756573u	/* "gues" */

/* Each field has one writer: (h) host, (g) guest.  Flags go 0 -> 1. */
struct vm_mailbox {
	volatile uint32_t guest_ready;	/* (g) eventfd bound, ready for irq */
	volatile uint32_t guest_id;	/* (g) IVPosition */
	volatile uint32_t guest_got_irq;	/* (g) host->guest irq seen */
	volatile uint32_t guest_wrote;	/* (g) guest pattern written */
	volatile uint32_t host_got_bell;	/* (h) guest->host doorbell seen */
	/* two guests ringing each other: [i] is written by guest peer i + 1 */
	volatile uint32_t pair_ready[2];	/* (g) eventfd bound */
	volatile uint32_t pair_got[2];	/* (g) the other's ring arrived */
	volatile uint32_t pad[7];
};

_Static_assert(sizeof(struct vm_mailbox) == 64, "mailbox is one cache line");

/* A pattern no stale memory or zero page matches: xorshift32 bytes. */
static inline uint8_t vm_pat_byte(uint32_t seed, size_t i)
{
	uint32_t x = seed ^ (uint32_t)(i / 4) * 2654435761u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return (uint8_t)(x >> (8 * (i % 4)));
}

static inline void vm_pat_fill(volatile uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = vm_pat_byte(seed, i);
}

/* Index of the first mismatch, or len if all match. */
static inline size_t vm_pat_check(const volatile uint8_t *p, size_t len,
				  uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != vm_pat_byte(seed, i))
			return i;
	return len;
}

#endif /* TOCHAIN_VM_TEST_LAYOUT_H */
