/* SPDX-License-Identifier: MIT */
/*
 * fw_desc.h - the firewall matcher's input taken from a region descriptor
 * (struct tcr_desc, include/tochain/region_layout.h).
 */
#ifndef TOCHAIN_FW_DESC_H
#define TOCHAIN_FW_DESC_H

#include <tochain/region_layout.h>

#include "fw_match.h"

/*
 * Fills @p from descriptor @d for a chain of direction @dir, with the
 * connection-tracking state @ct the caller took from its own (host-private)
 * flow table.
 *
 * Trust: @d is in a region the guest can write at any time.  Each field is
 * read exactly once (relaxed atomic loads), so @p is one consistent
 * snapshot the guest can no longer change; no value read is used as an
 * index or size, and fw_match() gives a defined verdict for any value
 * (bad family: no address rule matches; bad direction: FW_DROP).
 */
void fw_packet_from_desc(struct fw_packet *p, const struct tcr_desc *d,
			 enum fw_dir dir, enum fw_ct ct);

#endif /* TOCHAIN_FW_DESC_H */
