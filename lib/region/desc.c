// SPDX-License-Identifier: MIT
/* Descriptor copy-and-validate; see include/tochain/desc.h. */
#include <errno.h>
#include <string.h>

#include <tochain/desc.h>

int tcr_desc_check(const struct tcr_region *r, uint32_t idx, const struct tcr_desc *d)
{
	if (idx >= r->geo.nbufs)
		return -ERANGE;
	if (d->slot != idx)
		return -EBADMSG;
	/* 64-bit sum: off + len cannot wrap. */
	if ((uint64_t)d->off + d->len > r->geo.slot_size)
		return -EBADMSG;
	if (d->op > TCR_OP_CTRL)
		return -EBADMSG;
	if (d->family != 0 && d->family != 4 && d->family != 6)
		return -EBADMSG;
	return 0;
}

int tcr_desc_load(const struct tcr_region *r, uint32_t idx, struct tcr_desc *out)
{
	const struct tcr_desc *shared = tcr_region_desc(r, idx);

	if (!shared)
		return -ERANGE;
	/*
	 * One read of each byte; the writer may change the descriptor while we
	 * copy, but only the copy is checked and used afterwards.
	 */
	memcpy(out, (const void *)shared, sizeof(*out));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return tcr_desc_check(r, idx, out);
}

int tcr_desc_store(const struct tcr_region *r, uint32_t idx, const struct tcr_desc *d)
{
	struct tcr_desc *shared = tcr_region_desc(r, idx);

	if (!shared)
		return -ERANGE;
	memcpy(shared, d, sizeof(*d));
	return 0;
}

uint8_t *tcr_desc_payload(const struct tcr_region *r, const struct tcr_desc *d)
{
	uint8_t *slot = tcr_region_slot(r, d->slot);

	return slot ? slot + d->off : NULL;
}
