/* SPDX-License-Identifier: MIT */
/*
 * Descriptors (tcr_desc_*): the metadata of one buffer (payload slot).
 *
 * Descriptor i describes slot i; rings carry the index.  A party that does
 * not trust the writer of a descriptor (the host reading what a guest
 * wrote, a VNF reading what the host wrote into a region the guest can
 * also write) takes a private copy with tcr_desc_load(), which reads the
 * shared descriptor once and validates the copy; it then works only on
 * the copy, and reaches the payload through tcr_desc_payload() on it.
 */
#ifndef TOCHAIN_DESC_H
#define TOCHAIN_DESC_H

#include <stdint.h>
#include <tochain/region.h>

/*
 * Copy descriptor @idx into @out and validate the copy: slot == idx,
 * off + len within the slot, known op, family 0/4/6.
 * Returns 0, -ERANGE (idx out of range) or -EBADMSG (invalid contents).
 */
int tcr_desc_load(const struct tcr_region *r, uint32_t idx, struct tcr_desc *out);

/* Validate a private descriptor copy of buffer @idx (as tcr_desc_load). */
int tcr_desc_check(const struct tcr_region *r, uint32_t idx, const struct tcr_desc *d);

/* Write @d as descriptor @idx (a writer's private copy into the region). */
int tcr_desc_store(const struct tcr_region *r, uint32_t idx, const struct tcr_desc *d);

/* Payload of a validated descriptor copy: slot base + off, len bytes. */
uint8_t *tcr_desc_payload(const struct tcr_region *r, const struct tcr_desc *d);

#endif /* TOCHAIN_DESC_H */
