/* SPDX-License-Identifier: MIT */
/*
 * A mapped region (tcr_region_*): create and format one (host), attach to
 * one (host, guest, VNF), reset it, and reach its parts.
 *
 * Backing: any file that can be mmap()ed shared: a file under /dev/shm or
 * on a hugetlbfs mount (what QEMU's memory-backend-file,share=on maps for
 * ivshmem-plain), the guest driver's /dev/tochain/<name>, or a PCI BAR's
 * sysfs resource file.  tcr_region_attach_mem() takes memory that is
 * already mapped.
 *
 * Trust.  The host computes the geometry from its parameters and keeps it
 * in the handle; it never reads offsets or sizes back from the region.  A
 * host attaching to an existing region (a restarted TOE, a VNF) validates
 * the header fully: magic, version, sizes, then recomputes the geometry
 * from the header's parameters and requires every stored offset to match
 * (-EBADMSG otherwise).  A guest trusts the header its host wrote, but
 * still checks it fits the mapping.
 *
 * Thread safety: a region handle is immutable after create/attach except
 * across tcr_region_reset(), which the owner calls with traffic stopped.
 */
#ifndef TOCHAIN_REGION_H
#define TOCHAIN_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tochain/region_layout.h>

struct tcr_params {
	const char *name;		/* [a-z0-9_.-]{1,31} */
	enum tcr_region_kind kind;	/* TCR_KIND_GUEST or TCR_KIND_HOST */
	uint32_t nbufs;			/* descriptors/slots, >= 1 */
	uint32_t slot_size;		/* bytes per slot, multiple of 64 */
	uint32_t nchannels;		/* channels, >= 1 */
	uint32_t nchains;		/* chain counter blocks, may be 0 */
	uint32_t ring_size;		/* 0: smallest power of two >= nbufs */
};

/* Everything a party needs to address the parts; the host's private copy. */
struct tcr_geometry {
	uint32_t kind;			/* enum tcr_region_kind */
	uint32_t nbufs, slot_size, nchannels, nchains, ring_size;
	uint32_t channel_size, ring_bytes;
	uint64_t off_channels, off_descs, off_chains, off_slots, off_end;
	uint64_t region_size;		/* off_end rounded up to a page */
};

#define TCR_ATTACH_HOST		0x1u	/* validate everything (untrusted) */
#define TCR_ATTACH_GUEST	0x2u	/* trust the host's header */
#define TCR_ATTACH_RDONLY	0x4u	/* map read-only (VNFs) */

struct tcr_region {
	uint8_t *base;			/* mapping */
	size_t map_size;		/* bytes mapped */
	int fd;				/* backing file, -1 for attach_mem */
	uint32_t flags;			/* TCR_ATTACH_* */
	bool owns_mapping;
	struct tcr_geometry geo;	/* private, validated */
	uint64_t generation;		/* generation seen at attach/reset */
	char name[TCR_NAME_MAX];
};

/* Compute the layout for @p; 0, -EINVAL (bad parameter) or -E2BIG. */
int tcr_geometry_compute(const struct tcr_params *p, struct tcr_geometry *g);

/* Is @name a valid region name ([a-z0-9_.-], 1..31 chars)? */
bool tcr_name_valid(const char *name);

/*
 * Host: create @path, or format an existing one in place (never
 * truncated: a guest may have it mapped; it only grows, and an existing
 * region's generation moves on), size it, map it and format it.
 * On hugetlbfs the size is rounded up to the huge page size.
 * Returns the handle, or NULL with errno set.
 */
struct tcr_region *tcr_region_create(const char *path, const struct tcr_params *p);

/* Format already mapped memory of @size bytes (tests, fuzzing). */
struct tcr_region *tcr_region_create_mem(void *base, size_t size,
					 const struct tcr_params *p);

/* Map @path and validate it as @flags says.  NULL with errno on error. */
struct tcr_region *tcr_region_attach(const char *path, uint32_t flags);

/* The same on memory that is already mapped (not unmapped on destroy). */
struct tcr_region *tcr_region_attach_mem(void *base, size_t size, uint32_t flags);

/* Unmap and free the handle (the backing file stays). */
void tcr_region_destroy(struct tcr_region *r);

/*
 * Host: reset the region to its freshly formatted state with a new
 * generation (all channels closed, rings empty, descriptors and counters
 * zeroed).  Parties see the state and generation change and reattach.
 */
int tcr_region_reset(struct tcr_region *r);

/* Guest or VNF: has the host reset or killed the region since we attached? */
bool tcr_region_stale(const struct tcr_region *r);

/* Host: mark the region dead (parties detach). */
void tcr_region_kill(struct tcr_region *r);

/* Parts, addressed with the private geometry.  NULL for an index out of range. */
struct tcr_header *tcr_region_header(const struct tcr_region *r);
struct tcr_channel *tcr_region_channel(const struct tcr_region *r, uint32_t ch);
void *tcr_region_ring_mem(const struct tcr_region *r, uint32_t ch, enum tcr_channel_ring ring);
struct tcr_desc *tcr_region_desc(const struct tcr_region *r, uint32_t idx);
uint8_t *tcr_region_slot(const struct tcr_region *r, uint32_t idx);
struct tcr_chain_counters *tcr_region_chain(const struct tcr_region *r, uint32_t chain);

#endif /* TOCHAIN_REGION_H */
