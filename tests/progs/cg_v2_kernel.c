// SPDX-License-Identifier: MIT
/*
 * cg-v2-kernel: lib/cgroup's v2 backend against a real cgroup2 mount
 * (test 031): what the kernel accepts and shows, not what a file holds.
 *
 *   cg-v2-kernel MOUNT
 *
 * Under MOUNT/tochain-v2-PID: a child process with two threads (one
 * spinning, one asleep).  The process goes to a domain group (its
 * /proc/PID/cgroup says so); each thread to a threaded group of its own
 * (cg_attach_tid takes the process into the parent, the threaded domain,
 * as v2 requires; /proc/PID/task/TID/cgroup says where each thread is and
 * that the other threads stayed); the spinning thread's group accounts
 * CPU time (cpu.stat) and the sleeping one's next to nothing.  Where the
 * cpu (cpuset) controller is enabled on MOUNT, cpu.max and cpu.weight
 * (cpuset.cpus) read back as written; where it is not (controllers bound
 * to v1), writing them fails with ENOENT instead of passing silently.  A
 * thread sent back to the root lands in its process's domain; purge moves
 * a live thread home and removes the thread groups; destroy moves the
 * process out and leaves nothing.  Prints what it checked; exit 0 when
 * every check held, 1 otherwise.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tochain/cg.h"

static int failed;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		printf("FAIL: %s:%d: ", __FILE__, __LINE__);		\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		failed = 1;						\
	}								\
} while (0)

static const char *mnt;

/* The first line of MOUNT/REL/FILE without its newline, "" if unreadable. */
static const char *readf(const char *rel, const char *file)
{
	static char buf[512];
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s/%s", mnt, rel, file);
	buf[0] = '\0';
	f = fopen(p, "r");
	if (!f)
		return buf;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static bool exists(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", mnt, rel);
	return stat(p, &st) == 0;
}

/* The cgroup2 path of /proc/PID[/task/TID]/cgroup ("0::/x" -> "/x"). */
static const char *where(pid_t pid, pid_t tid)
{
	static char buf[512];
	char p[64], line[512];
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/task/%d/cgroup", (int)pid, (int)tid);
	snprintf(buf, sizeof(buf), "<none>");
	f = fopen(p, "r");
	if (!f)
		return buf;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, sizeof(buf), "%s", line + 3);
		}
	fclose(f);
	return buf;
}

static bool has_controller(const char *name)
{
	char list[512], *save = NULL;

	snprintf(list, sizeof(list), "%s", readf(".", "cgroup.controllers"));
	for (char *t = strtok_r(list, " ", &save); t; t = strtok_r(NULL, " ", &save))
		if (!strcmp(t, name))
			return true;
	return false;
}

/* ---- the child: a process of three threads ------------------------------ */

static int tid_pipe[2];

static void *spinner(void *arg)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	volatile unsigned long n = 0;

	(void)arg;
	if (write(tid_pipe[1], &tid, sizeof(tid)) != sizeof(tid))
		_exit(2);
	for (;;)
		n++;
	return NULL;
}

static void *sleeper(void *arg)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	(void)arg;
	if (write(tid_pipe[1], &tid, sizeof(tid)) != sizeof(tid))
		_exit(2);
	for (;;)
		pause();
	return NULL;
}

static void child(void)
{
	pthread_t a, b;

	if (pthread_create(&a, NULL, spinner, NULL) || pthread_create(&b, NULL, sleeper, NULL))
		_exit(2);
	/* the main thread sleeps until killed */
	for (;;)
		pause();
}

static void settle(void)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 500 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	struct cg_root root;
	struct cg_group base, proc, t1, t2, top;
	char rel[64], prel[96], r1[96], r2[96], want[128];
	pid_t pid, tid[2];
	uint64_t u1 = 0, u2 = 0;
	bool cpu, cpuset;
	int err, st;

	if (argc != 2) {
		fprintf(stderr, "usage: cg-v2-kernel MOUNT\n");
		return 2;
	}
	mnt = argv[1];
	memset(&root, 0, sizeof(root));
	root.kind = CG_V2;
	snprintf(root.v2, sizeof(root.v2), "%s", mnt);
	cpu = has_controller("cpu");
	cpuset = has_controller("cpuset");
	printf("cgroup2 at %s: controllers '%s' (cpu %s, cpuset %s)\n", mnt,
	       readf(".", "cgroup.controllers"), cpu ? "yes" : "no", cpuset ? "yes" : "no");

	if (pipe(tid_pipe))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		child();
	for (int i = 0; i < 2; i++)
		if (read(tid_pipe[0], &tid[i], sizeof(tid[i])) != sizeof(tid[i])) {
			printf("FAIL: the child's threads did not start\n");
			kill(pid, SIGKILL);
			return 1;
		}
	/* tid[0] spins and tid[1] sleeps, or the other way round: sort */
	{
		char p[64], s = 0;
		FILE *f;

		snprintf(p, sizeof(p), "/proc/%d/task/%d/stat", (int)pid, (int)tid[0]);
		settle();
		f = fopen(p, "r");
		if (f) {
			if (fscanf(f, "%*d %*s %c", &s) != 1)
				s = 0;
			fclose(f);
		}
		if (s == 'S') {
			pid_t t = tid[0];

			tid[0] = tid[1];
			tid[1] = t;
		}
	}
	printf("child %d: spinning thread %d, sleeping thread %d, from %s\n", (int)pid,
	       (int)tid[0], (int)tid[1], where(pid, pid));

	snprintf(rel, sizeof(rel), "tochain-v2-%d", (int)getpid());
	snprintf(prel, sizeof(prel), "%s/proc", rel);
	snprintf(r1, sizeof(r1), "%s/t%d", rel, (int)tid[0]);
	snprintf(r2, sizeof(r2), "%s/t%d", rel, (int)tid[1]);

	/* a group is a kernel directory: the kernel made its interface files */
	err = cg_create(&root, rel, &base);
	CHECK(err == 0, "cg_create %s: %s", rel, strerror(-err));
	CHECK(readf(rel, "cgroup.type")[0] != '\0', "%s has no cgroup.type: not a cgroup2 mount", rel);

	/* a process goes to a domain group, all its threads with it */
	err = cg_create(&root, prel, &proc);
	CHECK(err == 0, "cg_create %s: %s", prel, strerror(-err));
	err = cg_attach_pid(&proc, pid);
	CHECK(err == 0, "cg_attach_pid: %s", strerror(-err));
	snprintf(want, sizeof(want), "/%s", prel);
	CHECK(!strcmp(where(pid, pid), want) && !strcmp(where(pid, tid[0]), want) &&
	      !strcmp(where(pid, tid[1]), want), "process: %s, want %s", where(pid, tid[1]), want);
	printf("process %d in %s: /proc/%d/cgroup says %s\n", (int)pid, prel, (int)pid, where(pid, pid));
	/* back to the root, then the group goes (a domain with tasks cannot) */
	top = (struct cg_group){ .root = &root, .rel = "." };
	err = cg_attach_pid(&top, pid);
	CHECK(err == 0, "cg_attach_pid to the root: %s", strerror(-err));
	err = cg_destroy(&proc);
	CHECK(err == 0 && !exists(prel), "cg_destroy %s: %s", prel, strerror(-err));

	/* each thread to a threaded group of its own */
	err = cg_create(&root, r1, &t1);
	CHECK(err == 0, "cg_create %s: %s", r1, strerror(-err));
	err = cg_create(&root, r2, &t2);
	CHECK(err == 0, "cg_create %s: %s", r2, strerror(-err));
	err = cg_attach_tid(&t1, tid[0]);
	CHECK(err == 0, "cg_attach_tid %d: %s", (int)tid[0], strerror(-err));
	err = cg_attach_tid(&t2, tid[1]);
	CHECK(err == 0, "cg_attach_tid %d: %s", (int)tid[1], strerror(-err));
	snprintf(want, sizeof(want), "/%s", r1);
	CHECK(!strcmp(where(pid, tid[0]), want), "thread %d in %s, want %s", (int)tid[0],
	      where(pid, tid[0]), want);
	snprintf(want, sizeof(want), "/%s", r2);
	CHECK(!strcmp(where(pid, tid[1]), want), "thread %d in %s, want %s", (int)tid[1],
	      where(pid, tid[1]), want);
	snprintf(want, sizeof(want), "/%s", rel);
	CHECK(!strcmp(where(pid, pid), want), "main thread in %s, want %s (the threaded domain)",
	      where(pid, pid), want);
	CHECK(!strcmp(readf(r1, "cgroup.type"), "threaded"), "%s type '%s'", r1, readf(r1, "cgroup.type"));
	CHECK(!strcmp(readf(rel, "cgroup.type"), "domain threaded"), "%s type '%s'", rel,
	      readf(rel, "cgroup.type"));
	printf("threads: %d in %s", (int)tid[0], where(pid, tid[0]));
	printf(", %d in %s", (int)tid[1], where(pid, tid[1]));
	printf(", main thread in %s (%s)\n", where(pid, pid), readf(rel, "cgroup.type"));

	/* per-thread accounting: the spinner's group runs, the sleeper's not */
	err = cg_cpu_usage_ns(&t1, &u1);
	CHECK(err == 0, "cpu usage of %s: %s", r1, strerror(-err));
	settle();
	settle();
	err = cg_cpu_usage_ns(&t1, &u2);
	CHECK(err == 0 && u2 > u1, "the spinning thread's group accounted no CPU (%llu -> %llu ns)",
	      (unsigned long long)u1, (unsigned long long)u2);
	printf("cpu.stat: spinning thread's group +%llu us in 1 s", (unsigned long long)(u2 - u1) / 1000);
	err = cg_cpu_usage_ns(&t2, &u1);
	CHECK(err == 0 && u1 < (u2 - u1) / 4, "the sleeping thread's group accounted %llu ns",
	      (unsigned long long)u1);
	printf(", sleeping thread's group %llu us in all\n", (unsigned long long)u1 / 1000);

	/* bandwidth, weight, CPUs: read back where the controller is on */
	err = cg_set_quota(&t1, 20000, 100000);
	if (cpu) {
		CHECK(err == 0 && !strcmp(readf(r1, "cpu.max"), "20000 100000"),
		      "cpu.max: %s, reads '%s'", strerror(-err), readf(r1, "cpu.max"));
		err = cg_set_weight(&t1, 250);
		CHECK(err == 0 && !strcmp(readf(r1, "cpu.weight"), "250"),
		      "cpu.weight: %s, reads '%s'", strerror(-err), readf(r1, "cpu.weight"));
		printf("cpu.max '%s', cpu.weight '%s'\n", readf(r1, "cpu.max"), readf(r1, "cpu.weight"));
	} else {
		CHECK(err == -ENOENT, "cpu.max without the cpu controller: %s, want ENOENT",
		      strerror(-err));
		err = cg_set_weight(&t1, 250);
		CHECK(err == -ENOENT, "cpu.weight without the cpu controller: %s, want ENOENT",
		      strerror(-err));
		printf("no cpu controller on v2 here: cpu.max and cpu.weight refused (ENOENT)\n");
	}
	err = cg_set_cpus(&t1, "0");
	if (cpuset) {
		CHECK(err == 0 && !strcmp(readf(r1, "cpuset.cpus"), "0"),
		      "cpuset.cpus: %s, reads '%s'", strerror(-err), readf(r1, "cpuset.cpus"));
		printf("cpuset.cpus '%s'\n", readf(r1, "cpuset.cpus"));
	} else {
		CHECK(err == -ENOENT, "cpuset.cpus without the cpuset controller: %s, want ENOENT",
		      strerror(-err));
	}

	/* back to the root: a thread cannot leave its process's domain, so
	 * it goes there; its group is empty and can go */
	err = cg_attach_tid(&top, tid[0]);
	CHECK(err == 0, "cg_attach_tid to the root: %s", strerror(-err));
	snprintf(want, sizeof(want), "/%s", rel);
	CHECK(!strcmp(where(pid, tid[0]), want), "thread sent to the root is in %s, want %s",
	      where(pid, tid[0]), want);
	snprintf(want, sizeof(want), "/%s", r2);
	CHECK(!strcmp(where(pid, tid[1]), want), "the other thread moved too: %s", where(pid, tid[1]));

	/* purge: the live thread in t2 goes home, both thread groups go */
	err = cg_purge(&base, "t");
	CHECK(err == 2, "cg_purge removed %d groups, want 2", err);
	CHECK(!exists(r1) && !exists(r2), "thread groups left after purge");
	snprintf(want, sizeof(want), "/%s", rel);
	CHECK(!strcmp(where(pid, tid[1]), want), "purged thread is in %s, want %s",
	      where(pid, tid[1]), want);

	/* destroy: the process the threads brought goes to the parent */
	err = cg_destroy(&base);
	CHECK(err == 0 && !exists(rel), "cg_destroy %s: %s", rel, strerror(-err));
	CHECK(!strcmp(where(pid, pid), "/") && !strcmp(where(pid, tid[0]), "/") &&
	      !strcmp(where(pid, tid[1]), "/"), "after destroy the process is in %s",
	      where(pid, pid));
	printf("purge and destroy: groups gone, process %d back in %s\n", (int)pid, where(pid, pid));

	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (exists(rel)) {
		/* a failed run: leave nothing behind (rmdir waits for the exit) */
		cg_destroy(&proc);
		cg_purge(&base, "t");
		cg_destroy(&base);
		CHECK(!exists(rel), "%s left behind", rel);
	}
	printf("%s\n", failed ? "FAIL" : "ok");
	return failed;
}
