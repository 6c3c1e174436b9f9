// SPDX-License-Identifier: MIT
/*
 * Unit tests of the nftables half (vnfs/fw/fw_nft.c): golden nftables text,
 * nftables' own verdict on it (libnftables dry run, and `nft -c -f` when the
 * program exists), and applying into throw-away network namespaces.  Parts
 * that need root say so on stderr and are not run without it.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fw_nft.h"
#include "fw_nft_priv.h"
#include "fw_rules.h"

static struct fw_ruleset *parse(const char *text)
{
	struct fw_diag d;
	struct fw_ruleset *rs = fw_ruleset_parse(text, strlen(text), "n.rules", &d);

	ck_assert_msg(rs, "refused: %s", d.msg);
	return rs;
}

static const char example[] =
	"policy input drop\n"
	"policy output accept\n"
	"accept in tcp dport 80,443 from 10.0.0.0/8 ct new,established comment \"web\"\n"
	"drop in tcp dport 22\n"
	"reject in tcp from !192.168.0.0/16 dport 8000-8999\n"
	"accept out udp to 2001:db8::/32,2001:db8:1::1 sport 1024-65535 dport 53\n";

START_TEST(test_golden_example)
{
	struct fw_ruleset *rs = parse(example);
	char *text = fw_nft_render(rs);

	ck_assert_str_eq(text,
		"table inet tochain_fw\n"
		"delete table inet tochain_fw\n"
		"table inet tochain_fw {\n"
		"\tchain input {\n"
		"\t\ttype filter hook input priority filter; policy drop;\n"
		"\t\tip saddr 10.0.0.0/8 tcp dport { 80, 443 } ct state { new, established } accept comment \"web\"\n"
		"\t\ttcp dport 22 drop\n"
		"\t\tip saddr != 192.168.0.0/16 tcp dport 8000-8999 reject with tcp reset\n"
		"\t}\n"
		"\tchain output {\n"
		"\t\ttype filter hook output priority filter; policy accept;\n"
		"\t\tip6 daddr 2001:db8::/32 udp sport 1024-65535 udp dport 53 accept\n"
		"\t}\n"
		"}\n");
	free(text);
	fw_ruleset_destroy(rs);
}
END_TEST

START_TEST(test_golden_empty)
{
	struct fw_ruleset *rs = parse("policy out drop\n");
	char *text = fw_nft_render(rs);

	ck_assert_str_eq(text,
		"table inet tochain_fw\n"
		"delete table inet tochain_fw\n"
		"table inet tochain_fw {\n"
		"\tchain input {\n"
		"\t\ttype filter hook input priority filter; policy accept;\n"
		"\t}\n"
		"\tchain output {\n"
		"\t\ttype filter hook output priority filter; policy drop;\n"
		"\t}\n"
		"}\n");
	free(text);
	fw_ruleset_destroy(rs);
}
END_TEST

/* Every feature of the syntax at least once. */
static const char everything[] =
	"policy in drop\npolicy out drop\n"
	"accept in ct established,related comment \"replies\"\n"
	"drop in ct invalid\n"
	"accept in tcp dport 80,443,8000-8999 ct new\n"
	"accept in ip4 tcp from 10.0.0.0/8,172.16.0.0/12 to 10.1.2.3 sport !0-1023 dport 22\n"
	"accept in ip6 udp from !fd00::/8 to ::1 dport 53\n"
	"reject in tcp flags syn,!ack,!rst comment \"stray syn\"\n"
	"reject in udp\n"
	"reject in\n"
	"accept in icmp\naccept in icmpv6\naccept in proto 132\n"
	"drop in ct !new,established\n"
	"accept out tcp flags !fin,!syn,!rst,!psh,!ack,!urg,!ecn,!cwr\n"
	"accept out ip6\n"
	"accept out udp comment \" !#$%&'()*+,-./:;<=>?@[]^_`{|}~ \"\n"
	"drop out tcp to !2001:db8::/32,2001:db9::/32 dport 0,65535\n"
	"accept out comment \"0123456789012345678901234567890123456789012345678901234567890123"
	"4567890123456789012345678901234567890123456789012345678901234567\"\n";	/* 128 bytes */

static bool have_root(const char *what)
{
	if (geteuid() == 0)
		return true;
	fprintf(stderr, "not root: not checking %s\n", what);
	return false;
}

static bool have_nft_program(void)
{
	return system("command -v nft >/dev/null 2>&1") == 0;
}

/* nftables accepts what we render: libnftables dry run, and nft -c -f. */
static void nft_accepts(const struct fw_ruleset *rs)
{
	struct fw_diag d;
	char *text;

	ck_assert_msg(fw_nft_check(rs, &d) == 0, "libnftables refused: %s", d.msg);
	if (!have_nft_program())
		return;
	text = fw_nft_render(rs);
	{
		char path[] = "/tmp/fw-nft-XXXXXX", cmd[96];
		int fd = mkstemp(path);
		FILE *f;
		int rc;

		ck_assert_int_ge(fd, 0);
		f = fdopen(fd, "w");
		fputs(text, f);
		fclose(f);
		snprintf(cmd, sizeof(cmd), "nft -c -f %s", path);
		rc = system(cmd);
		unlink(path);
		ck_assert_msg(rc == 0, "nft -c refused:\n%s", text);
	}
	free(text);
}

START_TEST(test_nft_accepts)
{
	struct fw_ruleset *rs;

	if (!have_root("nftables check mode"))
		return;
	rs = parse(example);
	nft_accepts(rs);
	fw_ruleset_destroy(rs);
	rs = parse(everything);
	ck_assert_uint_eq(fw_ruleset_count(rs), 17);
	nft_accepts(rs);
	fw_ruleset_destroy(rs);
}
END_TEST

/* The sample rule files shipped in vnfs/fw/rules parse and compile. */
START_TEST(test_sample_files)
{
	const char *top = getenv("TOCHAIN_TOP");
	char dir[512], path[1024];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/vnfs/fw/rules", top ? top : ".");
	d = opendir(dir);
	ck_assert_msg(d, "cannot open %s (run from the top of the tree)", dir);
	while ((e = readdir(d))) {
		struct fw_diag diag;
		struct fw_ruleset *rs;
		size_t len = strlen(e->d_name);

		if (len < 7 || strcmp(e->d_name + len - 6, ".rules"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		rs = fw_ruleset_load(path, &diag);
		ck_assert_msg(rs, "%s", diag.msg);
		if (geteuid() == 0)
			nft_accepts(rs);
		fw_ruleset_destroy(rs);
		n++;
	}
	closedir(d);
	ck_assert_int_ge(n, 2);
}
END_TEST

/* Whatever the parser accepts, nftables accepts: mutated files. */
START_TEST(test_nft_accepts_mutations)
{
	unsigned int seed = 99, i, tried = 0;
	size_t len = sizeof(everything) - 1;
	char *buf = malloc(len);

	if (!have_root("nftables check mode")) {
		free(buf);
		return;
	}
	for (i = 0; i < 3000 && tried < 60; i++) {
		struct fw_diag d;
		struct fw_ruleset *rs;
		unsigned int k;

		memcpy(buf, everything, len);
		for (k = 0; k < 2; k++)
			buf[rand_r(&seed) % len] = "0123456789,!-/:abcdf."[rand_r(&seed) % 21];
		rs = fw_ruleset_parse(buf, len, "mut", &d);
		if (!rs)
			continue;
		tried++;
		ck_assert_msg(fw_nft_check(rs, &d) == 0, "nft refused a parsed file: %s\n%.*s",
			      d.msg, (int)len, buf);
		fw_ruleset_destroy(rs);
	}
	ck_assert_uint_gt(tried, 20);
	free(buf);
}
END_TEST

START_TEST(test_run_refused)
{
	struct fw_diag d;

	if (!have_root("nftables"))
		return;
	ck_assert_int_eq(fw_nft_run(NULL, "this is not nftables\n", true, NULL, &d), -EIO);
	ck_assert_msg(!strncmp(d.msg, "nftables: ", 10), "%s", d.msg);
}
END_TEST

/* A child in a new network namespace; dies with the test process. */
static pid_t netns_child(char *path, size_t sz)
{
	int p[2];
	char c;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		c = unshare(CLONE_NEWNET) == 0 ? 'y' : 'n';
		if (write(p[1], &c, 1) != 1 || c != 'y')
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	close(p[0]);
	ck_assert_int_eq(c, 'y');
	snprintf(path, sz, "/proc/%d/ns/net", (int)pid);
	return pid;
}

static void netns_child_end(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static ino_t own_netns(void)
{
	struct stat st;

	ck_assert_int_eq(stat("/proc/thread-self/ns/net", &st), 0);
	return st.st_ino;
}

START_TEST(test_apply_replace_remove)
{
	char a[64], b[64], *out, *text, *broken;
	struct fw_ruleset *v1, *v2;
	struct fw_diag d;
	pid_t pa, pb;
	ino_t self;

	if (!have_root("namespaces"))
		return;
	self = own_netns();
	pa = netns_child(a, sizeof(a));
	pb = netns_child(b, sizeof(b));
	v1 = parse("policy in drop\naccept in tcp dport 80 comment \"v1\"\n");
	v2 = parse("accept in tcp dport 81 comment \"v2\"\ndrop out udp\n");

	ck_assert_int_eq(fw_nft_list(a, &out, &d), -ENOENT);
	ck_assert_ptr_null(out);
	ck_assert_msg(fw_nft_apply(a, v1, &d) == 0, "%s", d.msg);
	ck_assert_int_eq(own_netns(), self);
	ck_assert_int_eq(fw_nft_list(a, &out, &d), 0);
	ck_assert_ptr_nonnull(strstr(out, "table inet tochain_fw"));
	ck_assert_ptr_nonnull(strstr(out, "comment \"v1\""));
	ck_assert_ptr_nonnull(strstr(out, "policy drop"));
	free(out);
	/* only in a: b and the caller's namespace did not get it */
	ck_assert_int_eq(fw_nft_list(b, &out, &d), -ENOENT);

	/* replace */
	ck_assert_msg(fw_nft_apply(a, v2, &d) == 0, "%s", d.msg);
	ck_assert_int_eq(fw_nft_list(a, &out, &d), 0);
	ck_assert_ptr_null(strstr(out, "v1"));
	ck_assert_ptr_nonnull(strstr(out, "comment \"v2\""));
	ck_assert_ptr_null(strstr(out, "policy drop;\n\t\ttcp"));
	ck_assert_ptr_nonnull(strstr(out, "udp drop"));
	free(out);

	/* a transaction nftables refuses halfway changes nothing */
	text = fw_nft_render(v1);
	ck_assert_int_gt(asprintf(&broken, "%sadd rule inet tochain_fw input bogus\n", text), 0);
	ck_assert_int_eq(fw_nft_run(a, broken, false, NULL, &d), -EIO);
	ck_assert_int_eq(fw_nft_list(a, &out, &d), 0);
	ck_assert_ptr_nonnull(strstr(out, "comment \"v2\""));
	ck_assert_ptr_null(strstr(out, "v1"));
	free(out);
	free(broken);
	free(text);

	/* remove, twice */
	ck_assert_msg(fw_nft_remove(a, &d) == 0, "%s", d.msg);
	ck_assert_int_eq(fw_nft_list(a, &out, &d), -ENOENT);
	ck_assert_msg(fw_nft_remove(a, &d) == 0, "%s", d.msg);
	ck_assert_int_eq(own_netns(), self);

	fw_ruleset_destroy(v1);
	fw_ruleset_destroy(v2);
	netns_child_end(pa);
	netns_child_end(pb);
}
END_TEST

START_TEST(test_netns_errors)
{
	struct fw_ruleset *rs = parse("accept in\n");
	struct fw_diag d;

	ck_assert_int_eq(fw_nft_apply("", rs, &d), -EINVAL);
	ck_assert_int_eq(fw_nft_apply("..", rs, &d), -EINVAL);
	ck_assert_ptr_nonnull(strstr(d.msg, "bad network namespace name"));
	ck_assert_int_eq(fw_nft_apply("fw-no-such-ns-xyz", rs, &d), -ENOENT);
	ck_assert_msg(strstr(d.msg, "/run/netns/fw-no-such-ns-xyz: not found"), "%s", d.msg);
	ck_assert_int_eq(fw_nft_remove("/nonexistent/ns", &d), -ENOENT);
	if (have_root("setns")) {
		/* a namespace file of another type */
		ck_assert_int_eq(fw_nft_apply("/proc/self/ns/uts", rs, &d), -EINVAL);
		ck_assert_ptr_nonnull(strstr(d.msg, "not a network namespace"));
	}
	fw_ruleset_destroy(rs);
}
END_TEST

/* Without privileges: -EPERM from nftables, refused namespace entry. */
START_TEST(test_unprivileged)
{
	char path[64];
	pid_t ns, pid;
	int status;

	if (!have_root("privilege drop"))
		return;
	ns = netns_child(path, sizeof(path));
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct fw_diag d;
		int rc1, rc2;

		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(10);
		rc1 = fw_nft_remove(NULL, &d);
		rc2 = fw_nft_remove(path, &d);
		_exit(rc1 == -EPERM && (rc2 == -EPERM || rc2 == -EACCES) ? 0 : 20);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	netns_child_end(ns);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
}
END_TEST

static void hook_exit(void)
{
	exit(3);	/* as libnftables does when netlink is unavailable */
}

static void hook_kill(void)
{
	raise(SIGKILL);
}

/* libnftables dying in the helper costs the request, not the caller. */
START_TEST(test_helper_dies)
{
	struct fw_diag d;
	char *out = (char *)1;

	fw_nft_child_hook = hook_exit;
	ck_assert_int_eq(fw_nft_list(NULL, &out, &d), -EIO);
	ck_assert_ptr_null(out);
	ck_assert_msg(strstr(d.msg, "died without a reply"), "%s", d.msg);
	fw_nft_child_hook = hook_kill;
	ck_assert_int_eq(fw_nft_remove(NULL, &d), -EIO);
	ck_assert_msg(strstr(d.msg, "died without a reply"), "%s", d.msg);
	fw_nft_child_hook = NULL;
}
END_TEST

static int holder_pipe[2];

/* In the helper: fork a process that keeps the helper's reply pipe open
 * long after the helper replied, as a fork elsewhere in the caller's
 * process could; report its pid to the test. */
static void hook_fork_holder(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		sleep(4);
		_exit(0);
	}
	if (write(holder_pipe[1], &pid, sizeof(pid)) != sizeof(pid))
		_exit(5);
}

static void hook_fork_holder_and_die(void)
{
	hook_fork_holder();
	exit(3);
}

/* A reply is taken when complete, not at EOF of the pipe. */
START_TEST(test_pipe_held_open)
{
	struct timespec t0, t1;
	struct fw_diag d;
	pid_t holder = -1;
	double secs;

	if (!have_root("nftables"))
		return;
	ck_assert_int_eq(pipe(holder_pipe), 0);
	fw_nft_child_hook = hook_fork_holder;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_msg(fw_nft_remove(NULL, &d) == 0, "%s", d.msg);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fw_nft_child_hook = NULL;
	ck_assert_int_eq(read(holder_pipe[0], &holder, sizeof(holder)), sizeof(holder));
	kill(holder, SIGKILL);
	close(holder_pipe[0]);
	close(holder_pipe[1]);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_msg(secs < 2.5, "request took %.1f s while another process held its pipe", secs);

	/* The helper dies without a reply: noticed by its exit, not by EOF. */
	ck_assert_int_eq(pipe(holder_pipe), 0);
	fw_nft_child_hook = hook_fork_holder_and_die;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(fw_nft_remove(NULL, &d), -EIO);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fw_nft_child_hook = NULL;
	ck_assert_int_eq(read(holder_pipe[0], &holder, sizeof(holder)), sizeof(holder));
	kill(holder, SIGKILL);
	close(holder_pipe[0]);
	close(holder_pipe[1]);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_msg(secs < 2.5, "dead helper noticed after %.1f s", secs);
}
END_TEST

static void reap_all(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* A caller whose SIGCHLD handler reaps every child still gets results. */
START_TEST(test_sigchld_reaper)
{
	struct sigaction sa = { .sa_handler = reap_all };
	char path[64], *out;
	struct fw_diag d;
	struct fw_ruleset *rs;
	pid_t ns;
	int i;

	if (!have_root("namespaces"))
		return;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	ck_assert_int_eq(sigaction(SIGCHLD, &sa, NULL), 0);
	ns = netns_child(path, sizeof(path));
	rs = parse("accept in tcp dport 7 comment \"seven\"\n");
	for (i = 0; i < 5; i++) {
		ck_assert_msg(fw_nft_apply(path, rs, &d) == 0, "%s", d.msg);
		ck_assert_int_eq(fw_nft_list(path, &out, &d), 0);
		ck_assert_ptr_nonnull(strstr(out, "seven"));
		free(out);
	}
	fw_ruleset_destroy(rs);
	signal(SIGCHLD, SIG_DFL);
	netns_child_end(ns);
}
END_TEST

struct worker {
	const char *ns;
	const struct fw_ruleset *rs;
	int failures;
};

static void *apply_loop(void *arg)
{
	struct worker *w = arg;
	struct fw_diag d;
	int i;

	for (i = 0; i < 5; i++)
		if (fw_nft_apply(w->ns, w->rs, &d))
			w->failures++;
	return NULL;
}

/* Several threads applying at once, each to its own namespace. */
START_TEST(test_threads)
{
	enum { N = 4 };
	char path[N][64];
	pid_t pid[N];
	pthread_t t[N];
	struct worker w[N];
	struct fw_ruleset *rs;
	char *out;
	int i;

	if (!have_root("namespaces"))
		return;
	rs = parse(example);
	for (i = 0; i < N; i++) {
		pid[i] = netns_child(path[i], sizeof(path[i]));
		w[i] = (struct worker){ .ns = path[i], .rs = rs };
		ck_assert_int_eq(pthread_create(&t[i], NULL, apply_loop, &w[i]), 0);
	}
	for (i = 0; i < N; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(w[i].failures, 0);
		ck_assert_int_eq(fw_nft_list(path[i], &out, NULL), 0);
		ck_assert_ptr_nonnull(strstr(out, "comment \"web\""));
		free(out);
		netns_child_end(pid[i]);
	}
	fw_ruleset_destroy(rs);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fw_nft");
	TCase *tc = tcase_create("render");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);	/* a fork per nftables call; slow under SAN */

	tcase_add_test(tc, test_golden_example);
	tcase_add_test(tc, test_golden_empty);
	tcase_add_test(tc, test_nft_accepts);
	tcase_add_test(tc, test_sample_files);
	tcase_add_test(tc, test_nft_accepts_mutations);
	tcase_add_test(tc, test_run_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("netns");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_apply_replace_remove);
	tcase_add_test(tc, test_netns_errors);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_unprivileged);
	tcase_add_test(tc, test_helper_dies);
	tcase_add_test(tc, test_sigchld_reaper);
	tcase_add_test(tc, test_pipe_held_open);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
