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

/* Read /proc/loadavg with raw system calls (see spin.h). */
static bool crowded_now(uint32_t ncpus)
{
	char buf[128];
	long fd, n;

	fd = syscall(SYS_openat, AT_FDCWD, "/proc/loadavg", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = syscall(SYS_read, (int)fd, buf, sizeof(buf) - 1);
	syscall(SYS_close, (int)fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return tcr_spin_crowded_text(buf, ncpus);
}

uint32_t tcr_spin_budget(struct tcr_spin *s)
{
	uint64_t now;

	if (!s->budget_ns)
		return 0;	/* no need to look at the machine */
	now = tu_now_ns();
	if (now >= s->recheck_ns) {
		s->crowded = crowded_now(s->ncpus);
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
