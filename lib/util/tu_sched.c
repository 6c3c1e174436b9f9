// SPDX-License-Identifier: MIT
/*
 * The CPU policy of the data path's processes (the TOE and the VNFs):
 * SCHED_BATCH, set on the main thread before any other thread exists, so
 * that every thread inherits it.  See include/tochain/util.h.
 */
#include <errno.h>
#include <sched.h>

#include "tochain/util.h"

int tu_sched_batch(void)
{
	struct sched_param sp = { .sched_priority = 0 };
	int policy = sched_getscheduler(0);

	if (policy < 0)
		return -errno;
	/* an operator's real-time or idle policy stays */
	if (policy != SCHED_OTHER)
		return 0;
	return sched_setscheduler(0, SCHED_BATCH, &sp) ? -errno : 0;
}
