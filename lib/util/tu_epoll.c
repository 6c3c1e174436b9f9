// SPDX-License-Identifier: MIT
/*
 * An epoll sleep bounded in nanoseconds (tu_epoll_wait_ns,
 * include/tochain/util.h): the loops that run the packet scheduler sleep
 * for the bound it gives, which is often below a millisecond.
 */
#include <errno.h>
#include <sys/epoll.h>
#include <time.h>

#include <tochain/util.h>

int tu_epoll_wait_ns(int epfd, struct epoll_event *evs, int max, uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	int n;

	if (ns == UINT64_MAX)
		return epoll_wait(epfd, evs, max, -1);
	n = epoll_pwait2(epfd, evs, max, &ts, NULL);
	if (n < 0 && errno == ENOSYS)
		n = epoll_wait(epfd, evs, max, (int)((ns + 999999) / 1000000));
	return n;
}
