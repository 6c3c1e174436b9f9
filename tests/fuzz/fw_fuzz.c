// SPDX-License-Identifier: MIT
/*
 * fw-fuzz - libFuzzer target: any bytes as a rule file.  Parsing must either
 * refuse with a "NAME:..." diagnostic or give a ruleset that renders to
 * nftables text and matches packets; never crash, leak or read out of
 * bounds.  (nftables itself is not run: too slow for fuzzing; the unit
 * tests check that it accepts what the parser accepts.)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fw_match.h"
#include "fw_nft.h"
#include "fw_rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fw_diag diag;
	struct fw_ruleset *rs;
	struct fw_packet p;
	struct fw_hit hit;
	char *text;

	rs = fw_ruleset_parse((const char *)data, size, "fuzz", &diag);
	if (!rs) {
		if (strncmp(diag.msg, "fuzz", 4))
			abort();
		return 0;
	}
	text = fw_nft_render(rs);
	if (!text)
		abort();
	free(text);
	/* a packet made of the first bytes of the input */
	memset(&p, 0, sizeof(p));
	memcpy(&p, data, size < sizeof(p) ? size : sizeof(p));
	(void)fw_match(rs, &p, &hit);
	if (hit.rule > fw_ruleset_count(rs))
		abort();
	fw_ruleset_destroy(rs);
	return 0;
}
