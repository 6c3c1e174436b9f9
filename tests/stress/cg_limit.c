// SPDX-License-Identifier: MIT
/*
 * cg-limit: checks the detected cgroup backend really limits CPU.
 * Creates tochain-test/cg-<pid>, caps it at QUOTA% of one CPU, runs a
 * busy child in it for SECONDS, and prints the CPU share it got (from the
 * group's own accounting and from the child's rusage).  Exit 0 when the
 * share is below twice the cap (a generous bound for a noisy machine)
 * and the child did run; 77 when no cgroup hierarchy can be written.
 *
 *   cg-limit [QUOTA_PERCENT] [SECONDS]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tochain/cg.h"

int main(int argc, char **argv)
{
	int pct = argc > 1 ? atoi(argv[1]) : 20;
	int secs = argc > 2 ? atoi(argv[2]) : 2;
	struct cg_root root;
	struct cg_group g;
	char rel[64];
	uint64_t before = 0, after = 0;
	struct rusage ru;
	pid_t pid;
	int err, st;
	double share, rshare;

	if (pct < 1 || pct > 100 || secs < 1)
		return 2;
	err = cg_detect(&root, NULL);
	if (err) {
		printf("SKIP: no cgroup cpu hierarchy (%s)\n", strerror(-err));
		return 77;
	}
	snprintf(rel, sizeof(rel), "tochain-test/cg-%d", getpid());
	err = cg_create(&root, rel, &g);
	if (err) {
		printf("SKIP: cannot create a cgroup under the %s hierarchy: %s\n",
		       cg_kind_name(root.kind), strerror(-err));
		return 77;
	}
	err = cg_set_quota(&g, (int64_t)pct * 1000, 100000);
	if (err) {
		fprintf(stderr, "set quota: %s\n", strerror(-err));
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		for (;;)
			__asm__ __volatile__("" ::: "memory");
	}
	err = cg_attach_pid(&g, pid);
	if (!err)
		err = cg_cpu_usage_ns(&g, &before);
	if (err) {
		fprintf(stderr, "attach/usage: %s\n", strerror(-err));
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		goto out;
	}
	sleep((unsigned int)secs);
	cg_cpu_usage_ns(&g, &after);
	kill(pid, SIGKILL);
	wait4(pid, &st, 0, &ru);
	share = (double)(after - before) / 1e9 / secs;
	rshare = ((double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		  (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6) / secs;
	printf("%s: cap %d%% of a CPU; group accounting %.1f%%, child rusage %.1f%%\n",
	       cg_kind_name(root.kind), pct, share * 100, rshare * 100);
	err = (share > 0.01 && share < 2.0 * pct / 100 && rshare < 2.0 * pct / 100) ? 0 : -ERANGE;
out:
	cg_destroy(&g);
	{
		struct cg_group parent = { .root = &root, .rel = "tochain-test" };

		cg_destroy(&parent);	/* fails harmlessly while others use it */
	}
	return err ? 1 : 0;
}
