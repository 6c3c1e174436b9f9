// SPDX-License-Identifier: MIT
/* Adaptive spin budgets; the policy and its why are in include/tochain/spin.h. */
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <tochain/spin.h>
#include <tochain/util.h>

void tcr_spin_init(struct tcr_spin *s, uint32_t max_ns)
{
	cpu_set_t set;
	int n = 0;

	s->budget_ns = 0;
	s->max_ns = max_ns;
	s->crowded = false;
	s->recheck_ns = 0;
	s->look_ns = 0;
	s->delay_ns = 0;
	s->tid = 0;
	CPU_ZERO(&set);
	if (syscall(SYS_sched_getaffinity, 0, sizeof(set), &set) > 0)
		n = CPU_COUNT(&set);
	s->ncpus = n > 0 ? (uint32_t)n : 1;
}

bool tcr_spin_crowded_text(const char *loadavg, uint32_t ncpus)
{
	const char *p = loadavg;
	unsigned long running;
	char *end;

	/* "0.52 0.58 0.59 3/412 12345": skip three fields */
	for (int f = 0; f < 3; f++) {
		while (*p && *p != ' ')
			p++;
		while (*p == ' ')
			p++;
	}
	if (*p < '0' || *p > '9')
		return false;
	running = strtoul(p, &end, 10);
	if (*end != '/')
		return false;
	return running > ncpus;
}

bool tcr_spin_schedstat_text(const char *schedstat, uint64_t *delay_ns)
{
	const char *p = schedstat;
	char *end;

	/* "cpu_ns delay_ns timeslices": skip the first field */
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p != ' ')
		return false;
	p++;
	if (*p < '0' || *p > '9')
		return false;
	*delay_ns = strtoull(p, &end, 10);
	return *end == ' ' || *end == '\n' || *end == '\0';
}

bool tcr_spin_crowded_delay(uint64_t delay_ns, uint64_t wall_ns)
{
	return delay_ns > wall_ns / TCR_SPIN_DELAY_SHARE;
}

/* A small /proc file into @buf with raw system calls (see spin.h): its length or -1. */
static long read_proc(const char *path, char *buf, size_t size)
{
	long fd, n;

	fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = syscall(SYS_read, (int)fd, buf, size - 1);
	syscall(SYS_close, (int)fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/*
 * The calling thread's run delay since its last look, against the time
 * passed; the machine's run queue when schedstat is missing or this is
 * the thread's first look after a while (see spin.h).
 */
static bool crowded_now(struct tcr_spin *s, uint64_t now)
{
	int32_t tid = (int32_t)syscall(SYS_gettid);
	uint64_t delay, last = s->delay_ns, since = s->look_ns;
	/* a baseline of another thread, or too old to say how it is now, is none */
	bool same = tid == s->tid && since && now > since &&
		    now - since <= TCR_SPIN_BASELINE_NS;
	char buf[128];

	if (read_proc("/proc/thread-self/schedstat", buf, sizeof(buf)) > 0 &&
	    tcr_spin_schedstat_text(buf, &delay)) {
		s->tid = tid;
		s->look_ns = now;
		s->delay_ns = delay;
		if (same && delay >= last)
			return tcr_spin_crowded_delay(delay - last, now - since);
	} else {
		s->look_ns = 0;
	}
	if (read_proc("/proc/loadavg", buf, sizeof(buf)) < 0)
		return false;
	return tcr_spin_crowded_text(buf, s->ncpus);
}

uint32_t tcr_spin_budget(struct tcr_spin *s)
{
	uint64_t now;

	if (!s->budget_ns)
		return 0;	/* no need to look at the machine */
	now = tu_now_ns();
	if (now >= s->recheck_ns) {
		s->crowded = crowded_now(s, now);
		s->recheck_ns = now + TCR_SPIN_RECHECK_NS;
	}
	return s->crowded ? 0 : s->budget_ns;
}

void tcr_spin_spun(struct tcr_spin *s, bool found)
{
	if (found)
		return;
	s->budget_ns /= 2;
	if (s->budget_ns < TCR_SPIN_MIN_NS)
		s->budget_ns = 0;
}

void tcr_spin_woke(struct tcr_spin *s, uint64_t slept_ns)
{
	uint32_t b;

	if (slept_ns >= s->max_ns)
		return;
	b = s->budget_ns ? s->budget_ns * 2 : TCR_SPIN_MIN_NS;
	s->budget_ns = b > s->max_ns ? s->max_ns : b;
}
