// SPDX-License-Identifier: MIT
/*
 * Unit tests of the nftables half (vnf-fw/fw_nft.c): golden nftables text,
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
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fw_nft.h"
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
	ck_assert_uint_eq(fw_ruleset_count(rs), 16);
	nft_accepts(rs);
	fw_ruleset_destroy(rs);
}
END_TEST

/* The sample rule files shipped in vnf-fw/rules parse and compile. */
START_TEST(test_sample_files)
{
	const char *top = getenv("TOCHAIN_TOP");
	char dir[512], path[1024];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/vnf-fw/rules", top ? top : ".");
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
	for (i = 0; i < 3000 && tried < 150; i++) {
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

	tcase_add_test(tc, test_golden_example);
	tcase_add_test(tc, test_golden_empty);
	tcase_add_test(tc, test_nft_accepts);
	tcase_add_test(tc, test_sample_files);
	tcase_add_test(tc, test_nft_accepts_mutations);
	tcase_add_test(tc, test_run_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("netns");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_apply_replace_remove);
	tcase_add_test(tc, test_netns_errors);
	tcase_add_test(tc, test_threads);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
