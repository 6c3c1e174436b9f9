// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: tochaind's state parser on arbitrary text (a state
 * file is outside input: it may have been edited, truncated or corrupted).
 * A parse either fails with a message and an empty state, or yields VMs,
 * VNFs, chains and instances that pass validation again: names, the
 * cross-checks of td_state_check, and each object through its JSON and
 * back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_state.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct td_state st;
	char err[512] = "";
	int rc = td_state_parse((const char *)data, size, "fuzz", &st, err, sizeof(err));

	if (rc) {
		if (st.nvms != 0 || st.nvnfs != 0 || st.nchains != 0 || st.ninsts != 0 || !err[0])
			abort();
		return 0;
	}
	if (td_state_check(&st, err, sizeof(err)))
		abort();
	for (unsigned int i = 0; i < st.nvnfs; i++) {
		static struct td_vnf back;
		json_t *j = td_vnf_json(&st.vnfs[i]);

		if (!j || td_vnf_from_json(j, true, &back, err, sizeof(err)) ||
		    memcmp(&back, &st.vnfs[i], sizeof(back)))
			abort();
		json_decref(j);
	}
	for (unsigned int i = 0; i < st.nchains; i++) {
		static struct td_chain back;
		json_t *j = td_chain_json(&st.chains[i]);

		if (!j || td_chain_from_json(j, &back, err, sizeof(err)) ||
		    memcmp(&back, &st.chains[i], sizeof(back)))
			abort();
		json_decref(j);
	}
	for (unsigned int i = 0; i < st.nvms; i++) {
		const char *why;
		json_t *j = td_vm_json(&st.vms[i]);

		if (!j || !td_name_valid(st.vms[i].name, &why))
			abort();
		json_decref(j);
	}
	return 0;
}
