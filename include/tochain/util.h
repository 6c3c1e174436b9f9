/* SPDX-License-Identifier: MIT */
/*
 * Small helpers every part of the host and the guest runtime needs, written
 * once (tu_*): monotonic clocks, FNV-1a hashing, and recognising and
 * stopping a child program by its command line, and the data path's CPU
 * policy.  The clock and hash helpers are inline (the guest runtime and
 * the data path call them per request); the process helpers live in
 * lib/util/tu_proc.c, the policy in lib/util/tu_sched.c, the epoll sleep
 * in lib/util/tu_epoll.c.
 */
#ifndef TOCHAIN_UTIL_H
#define TOCHAIN_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds (0 if the clock cannot be read). */
static inline uint64_t tu_now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct epoll_event;

/*
 * epoll_wait(2) on @epfd for at most @ns (UINT64_MAX: no bound), to the
 * nanosecond where the kernel has epoll_pwait2 (5.11), else rounded up
 * to a millisecond.  epoll_wait's return and errno.
 */
int tu_epoll_wait_ns(int epfd, struct epoll_event *evs, int max, uint64_t ns);

/* CLOCK_MONOTONIC in milliseconds. */
static inline uint64_t tu_now_ms(void)
{
	return tu_now_ns() / 1000000ull;
}

/* CLOCK_MONOTONIC in seconds, for rates and reports. */
static inline double tu_now_s(void)
{
	return (double)tu_now_ns() / 1e9;
}

#define TU_FNV1A64_INIT 0xcbf29ce484222325ull

/* FNV-1a 64 of @len bytes at @p, continuing from @h (TU_FNV1A64_INIT to start). */
static inline uint64_t tu_fnv1a64_more(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* FNV-1a 64 of @len bytes at @p. */
static inline uint64_t tu_fnv1a64(const void *p, size_t len)
{
	return tu_fnv1a64_more(TU_FNV1A64_INIT, p, len);
}

/*
 * Is @pid a living process (not a zombie) that runs @prog (an argument of
 * its command line contains it, as a path or a name) with @arg as one whole
 * argument?  A pid the kernel reused for another program, or for the same
 * program serving another region, does not.  @arg may be NULL.
 */
bool tu_proc_runs(pid_t pid, const char *prog, const char *arg);

/*
 * Stop @pid if tu_proc_runs(@pid, @prog, @arg): SIGTERM, then SIGKILL when
 * it is still running after @grace_ms; reaps it if it is our child.
 * Returns true when it is gone (or was not running).
 */
bool tu_proc_stop(pid_t pid, const char *prog, const char *arg, int grace_ms);

/*
 * The names in directory @dirfd that end in @suffix and do not start with
 * '.', sorted ascending (strcmp), into *@names (free with
 * tu_dir_names_free).  Returns how many (stops early, with what it has,
 * when memory runs out).
 */
size_t tu_dir_names(int dirfd, const char *suffix, char ***names);
void tu_dir_names_free(char **names, size_t n);

/*
 * Put the calling thread (and the threads it creates after this) under
 * SCHED_BATCH, unless an operator chose a policy other than SCHED_OTHER.
 * The data path's parties hand descriptors to each other all the time;
 * under the default policy a hand-off's wake-up often preempted the
 * thread that was producing the next batch, on a host with fewer cores
 * than runnable threads: a batch thread still gets its fair share and an
 * idle CPU at once, but it waits for the running thread's slice instead
 * of cutting it short, and each wake-up finds more work
 * (docs/EVALUATION.md, "Wake-ups that do not preempt").
 * Returns 0 or -errno; revert at run time with chrt -o -a -p 0 PID.
 */
int tu_sched_batch(void);

#endif
