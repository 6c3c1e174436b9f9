// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: tochaind's state parser on arbitrary text (a state
 * file is outside input: it may have been edited, truncated or corrupted).
 * A parse either fails with a message and an empty state, or yields VMs
 * whose every field passes validation again after a save/parse round trip.
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
		if (st.nvms != 0 || !err[0])
			abort();
		return 0;
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
