// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: whatever a guest writes as a request, the TOE's
 * decoder never reads out of bounds, and what it accepts is consistent
 * (lengths in bounds, addresses of a supported family, options on the
 * allow list with a length they accept).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tochain/srpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct srpc_req q;
	struct srpc_msg m;
	uint8_t *copy = malloc(size ? size : 1);	/* exact size: ASan sees overreads */
	int err;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	err = srpc_decode_req(copy, size, &q);
	if (err == 0) {
		if (q.m.dlen > SRPC_DATA_MAX || SRPC_HDR_SIZE + q.m.dlen != size)
			abort();
		if ((q.m.type == SRPC_REQ_BIND || q.m.type == SRPC_REQ_CONNECT) &&
		    (q.addrlen == 0 || srpc_sockaddr_min(q.addr.ss_family) == 0))
			abort();
		if (q.m.type == SRPC_REQ_SETSOCKOPT &&
		    srpc_check_sockopt(q.m.a, q.m.b, q.m.dlen, true) != 0)
			abort();
	}
	srpc_decode_msg(copy, size, &m);
	free(copy);
	return 0;
}
