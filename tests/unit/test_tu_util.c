// SPDX-License-Identifier: MIT
/* Unit tests for lib/util: clocks, FNV-1a, process recognition and stopping. */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tochain/util.h"
#include "tc_check.h"

START_TEST(clock_moves_forward)
{
	uint64_t a = tu_now_ns(), b;

	usleep(2000);
	b = tu_now_ns();
	ck_assert_uint_gt(a, 0);
	ck_assert_uint_ge(b - a, 2000000);
	ck_assert_uint_ge(tu_now_ms(), a / 1000000);
}
END_TEST

START_TEST(fnv1a_known_values)
{
	/* the published FNV-1a 64 test vectors */
	ck_assert_uint_eq(tu_fnv1a64("", 0), 0xcbf29ce484222325ull);
	ck_assert_uint_eq(tu_fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
	ck_assert_uint_eq(tu_fnv1a64("foobar", 6), 0x85944171f73967e8ull);
	/* piecewise equals whole */
	ck_assert_uint_eq(tu_fnv1a64_more(tu_fnv1a64("foo", 3), "bar", 3), 0x85944171f73967e8ull);
}
END_TEST

/* A child running this program as "tc-sleeper --sleep ARG", which waits. */
static pid_t spawn_sleep(const char *arg, bool ignore_term)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (ignore_term)
			signal(SIGTERM, SIG_IGN);
		execl("/proc/self/exe", "tc-sleeper", "--sleep", arg, (char *)NULL);
		_exit(127);
	}
	/* until exec has happened */
	for (int i = 0; i < 200 && !tu_proc_runs(pid, "tc-sleeper", arg); i++)
		usleep(5000);
	return pid;
}

START_TEST(proc_runs_matches_whole_argument)
{
	pid_t pid = spawn_sleep("/dev/shm/tc-r1", false);

	ck_assert(tu_proc_runs(pid, "tc-sleeper", "/dev/shm/tc-r1"));
	ck_assert(tu_proc_runs(pid, "tc-sleeper", NULL));
	/* another program, or the same program on another region: no */
	ck_assert(!tu_proc_runs(pid, "tochain-toe", "/dev/shm/tc-r1"));
	ck_assert(!tu_proc_runs(pid, "tc-sleeper", "/dev/shm/tc-r"));
	ck_assert(!tu_proc_runs(pid, "tc-sleeper", "/dev/shm/tc-r12"));
	ck_assert(tu_proc_stop(pid, "tc-sleeper", "/dev/shm/tc-r1", 1000));
	ck_assert(!tu_proc_runs(pid, "tc-sleeper", "/dev/shm/tc-r1"));
	ck_assert(!tu_proc_runs(0, "tc-sleeper", NULL));
	ck_assert(!tu_proc_runs(-1, "tc-sleeper", NULL));
}
END_TEST

START_TEST(proc_stop_kills_what_ignores_sigterm)
{
	pid_t pid = spawn_sleep("tc-stubborn", true);

	ck_assert(tu_proc_runs(pid, "tc-sleeper", "tc-stubborn"));
	ck_assert(tu_proc_stop(pid, "tc-sleeper", "tc-stubborn", 100));
	ck_assert_int_eq(kill(pid, 0), -1);	/* reaped, not a zombie */
}
END_TEST

START_TEST(proc_stop_leaves_other_programs)
{
	pid_t pid = spawn_sleep("tc-other", false);

	/* asked to stop a TOE that this pid is not: it stays */
	ck_assert(tu_proc_stop(pid, "tochain-toe", "tc-other", 100));
	ck_assert(tu_proc_runs(pid, "tc-sleeper", "tc-other"));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
END_TEST

START_TEST(dir_names_sorted_with_suffix)
{
	char dir[64], p[128];
	const char *files[] = { "b.pcap", "a.pcap", ".hidden.pcap", "c.json", ".pcap", "c.pcap" };
	char **names;
	size_t n;
	int fd;

	ck_assert_int_eq(tc_tmpdir_make(dir, sizeof(dir)), 0);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		fd = open(p, O_CREAT | O_WRONLY, 0600);
		ck_assert_int_ge(fd, 0);
		close(fd);
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	n = tu_dir_names(fd, ".pcap", &names);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(names[0], "a.pcap");
	ck_assert_str_eq(names[1], "b.pcap");
	ck_assert_str_eq(names[2], "c.pcap");
	tu_dir_names_free(names, n);
	close(fd);
	ck_assert_uint_eq(tu_dir_names(-1, ".pcap", &names), 0);	/* not a directory */
	ck_assert_ptr_null(names);
	tc_tmpdir_remove(dir);
}
END_TEST

/* A thread's policy, as a thread created after tu_sched_batch sees it. */
static void *own_policy(void *arg)
{
	*(int *)arg = sched_getscheduler(0);
	return NULL;
}

/*
 * In a child (the policy must not leak into other tests): @pre (-1: none)
 * set first, then tu_sched_batch; exit 0 when the caller and a thread it
 * creates afterwards both run @want and the call returned 0.
 */
static int batch_in_child(int pre, int want)
{
	struct sched_param sp = { .sched_priority = 0 };
	pid_t pid = fork();
	int st = -1;

	if (pid == 0) {
		pthread_t th;
		int thread_policy = -1;

		if (pre >= 0 && sched_setscheduler(0, pre, &sp))
			_exit(2);
		if (tu_sched_batch())
			_exit(3);
		if (pthread_create(&th, NULL, own_policy, &thread_policy) || pthread_join(th, NULL))
			_exit(4);
		_exit(sched_getscheduler(0) == want && thread_policy == want ? 0 : 5);
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* The epoll sleep returns what is ready, or nothing once its bound passed. */
START_TEST(epoll_wait_ns_returns_ready_or_times_out)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 42 }, got;
	uint64_t one = 1;
	int ep = epoll_create1(EPOLL_CLOEXEC), efd = eventfd(0, EFD_CLOEXEC);

	ck_assert_int_ge(ep, 0);
	ck_assert_int_ge(efd, 0);
	ck_assert_int_eq(epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev), 0);
	ck_assert_int_eq(tu_epoll_wait_ns(ep, &got, 1, 200000), 0);	/* 200 us, nothing */
	ck_assert_int_eq(write(efd, &one, sizeof(one)), (ssize_t)sizeof(one));
	ck_assert_int_eq(tu_epoll_wait_ns(ep, &got, 1, UINT64_MAX), 1);	/* no bound: ready */
	ck_assert_uint_eq(got.data.u64, 42);
	ck_assert_int_eq(tu_epoll_wait_ns(ep, &got, 1, 0), 1);
	close(efd);
	close(ep);
}
END_TEST

START_TEST(sched_batch_is_inherited_and_keeps_an_operators_policy)
{
	ck_assert_int_eq(batch_in_child(-1, SCHED_BATCH), 0);
	/* an idle (or real-time) policy chosen before stays */
	ck_assert_int_eq(batch_in_child(SCHED_IDLE, SCHED_IDLE), 0);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("tu_util");
	TCase *tc = tcase_create("util");

	if (argc == 3 && !strcmp(argv[1], "--sleep")) {
		sleep(30);
		return 0;
	}

	tcase_add_test(tc, clock_moves_forward);
	tcase_add_test(tc, fnv1a_known_values);
	tcase_add_test(tc, proc_runs_matches_whole_argument);
	tcase_add_test(tc, proc_stop_kills_what_ignores_sigterm);
	tcase_add_test(tc, proc_stop_leaves_other_programs);
	tcase_add_test(tc, dir_names_sorted_with_suffix);
	tcase_add_test(tc, epoll_wait_ns_returns_ready_or_times_out);
	tcase_add_test(tc, sched_batch_is_inherited_and_keeps_an_operators_policy);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
