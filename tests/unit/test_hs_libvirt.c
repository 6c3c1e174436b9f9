// SPDX-License-Identifier: MIT
/* hs_libvirt alone: the query-cpus-fast parser, the dry-run mapping from
 * a domain's per-vCPU pins and quotas to libvirt calls (one vcpu_quota
 * for the domain, the lower ones written per vCPU), writes only on
 * change, discovery and its errors, and a libvirt that is not there. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hs_libvirt.h"

static char logbuf[1 << 16];

/* The reply QEMU 7.2 gives under libvirt: "props" has a topology thread-id too. */
static const char reply2[] =
	"{\"return\":[{\"thread-id\":28248,\"props\":{\"core-id\":0,\"thread-id\":0,"
	"\"socket-id\":1},\"qom-path\":\"/machine/unattached/device[2]\",\"cpu-index\":1,"
	"\"target\":\"x86_64\"},{\"thread-id\":28247,\"props\":{\"core-id\":0,"
	"\"thread-id\":0,\"socket-id\":0},\"qom-path\":\"/machine/unattached/device[0]\","
	"\"cpu-index\":0,\"target\":\"x86_64\"}],\"id\":\"libvirt-412\"}";

START_TEST(parse_reply)
{
	struct hsl_vcpu v[4];

	ck_assert_int_eq(hsl_parse_vcpus(reply2, v, 4), 2);
	/* sorted by index; the top-level thread-id, not the topology's */
	ck_assert_int_eq(v[0].index, 0);
	ck_assert_int_eq(v[0].tid, 28247);
	ck_assert_int_eq(v[1].index, 1);
	ck_assert_int_eq(v[1].tid, 28248);
	ck_assert_int_eq(hsl_parse_vcpus("{\"return\":[]}", v, 4), 0);
	ck_assert_int_eq(hsl_parse_vcpus(reply2, v, 1), -EBADMSG);	/* too many */
	ck_assert_int_eq(hsl_parse_vcpus(NULL, v, 4), -EBADMSG);
	ck_assert_int_eq(hsl_parse_vcpus("", v, 4), -EBADMSG);
	ck_assert_int_eq(hsl_parse_vcpus("{\"error\":{\"class\":\"GenericError\"}}", v, 4),
			 -EBADMSG);
	ck_assert_int_eq(hsl_parse_vcpus("{\"return\":{}}", v, 4), -EBADMSG);
	ck_assert_int_eq(hsl_parse_vcpus("{\"return\":[{\"cpu-index\":0}]}", v, 4), -EBADMSG);
	ck_assert_int_eq(hsl_parse_vcpus("{\"return\":[{\"cpu-index\":0,\"thread-id\":\"7\"}]}",
					 v, 4), -EBADMSG);
	ck_assert_int_eq(hsl_parse_vcpus("{\"return\":[{\"cpu-index\":0,\"thread-id\":0}]}",
					 v, 4), -EBADMSG);
	ck_assert_int_eq(hsl_parse_vcpus("{\"return\":[{\"cpu-index\":-1,\"thread-id\":5}]}",
					 v, 4), -EBADMSG);
	ck_assert_int_eq(hsl_parse_vcpus("{\"return\":[{\"cpu-index\":0,\"thread-id\":5},"
					 "{\"cpu-index\":0,\"thread-id\":6}]}", v, 4), -EBADMSG);
	ck_assert_int_eq(hsl_parse_vcpus("{\"return\":[{\"cpu-index\":0,\"thread-id\":"
					 "4294967296}]}", v, 4), -EBADMSG);
}
END_TEST

START_TEST(discover_dryrun)
{
	struct hsl *l = hsl_create(NULL, logbuf, sizeof(logbuf), NULL);
	struct hsl_dom s;
	char why[256];

	ck_assert_ptr_nonnull(l);
	ck_assert(hsl_is_dryrun(l));
	ck_assert_str_eq(hsl_uri(l), "qemu:///system");
	ck_assert_int_eq(hsl_connect(l, why, sizeof(why)), 0);
	ck_assert_int_eq(hsl_discover(l, "web", &s, why, sizeof(why)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(why, "no libvirt domain 'web'"));
	ck_assert_int_eq(hsl_domain_id(l, "web"), -ENOENT);
	ck_assert_int_eq(hsl_dryrun_domain(l, "web", -1, reply2, false), 0);
	ck_assert_int_eq(hsl_discover(l, "web", &s, why, sizeof(why)), -ESRCH);
	ck_assert_int_eq(hsl_domain_id(l, "web"), -ESRCH);
	ck_assert_int_eq(hsl_dryrun_domain(l, "web", 7, "{\"return\": 3}", false), 0);
	ck_assert_int_eq(hsl_discover(l, "web", &s, why, sizeof(why)), -EBADMSG);
	ck_assert_int_eq(hsl_dryrun_domain(l, "web", 7, reply2, false), 0);
	ck_assert_int_eq(hsl_discover(l, "web", &s, why, sizeof(why)), 0);
	ck_assert_int_eq(hsl_domain_id(l, "web"), 7);
	ck_assert_str_eq(s.name, "web");
	ck_assert_int_eq(s.id, 7);
	ck_assert_uint_eq(s.nvcpu, 2);
	ck_assert_int_eq(s.vcpu[1].tid, 28248);
	ck_assert_ptr_nonnull(strstr(logbuf, "query-cpus-fast web\n"));
	hsl_dryrun_down(l, true);
	ck_assert_int_eq(hsl_connect(l, why, sizeof(why)), -ECONNREFUSED);
	ck_assert_int_eq(hsl_domain_id(l, "web"), -ECONNREFUSED);
	ck_assert_int_eq(hsl_discover(l, "web", &s, why, sizeof(why)), -ECONNREFUSED);
	ck_assert_ptr_nonnull(strstr(why, "not reachable"));
	hsl_dryrun_down(l, false);
	ck_assert_int_eq(hsl_dryrun_domain(l, "web", -1, NULL, true), 0);
	ck_assert_int_eq(hsl_domain_id(l, "web"), -ENOENT);
	hsl_destroy(l);
}
END_TEST

/* Counts the lines of @log that contain @what. */
static int count(const char *log, const char *what)
{
	int n = 0;

	for (const char *p = strstr(log, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

START_TEST(apply_mapping)
{
	struct hsl *l = hsl_create("qemu:///session", logbuf, sizeof(logbuf), NULL);
	static const char reply3[] = "{\"return\":[{\"cpu-index\":0,\"thread-id\":100},"
		"{\"cpu-index\":1,\"thread-id\":101},{\"cpu-index\":2,\"thread-id\":102}]}";
	const char *cpus[3] = { "2", "3", "2" };
	int64_t q[3] = { 250000, 400000, 100000 };
	struct hsl_dom s;
	char why[256];
	size_t len;

	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(hsl_dryrun_domain(l, "vm3", 4, reply3, false), 0);
	ck_assert_int_eq(hsl_discover(l, "vm3", &s, why, sizeof(why)), 0);
	len = strlen(logbuf);
	ck_assert_int_eq(hsl_apply(l, &s, cpus, q, 500000, why, sizeof(why)), 0);
	/* each vCPU pinned where the plan puts it */
	ck_assert_ptr_nonnull(strstr(logbuf + len, "pin vm3 vcpu=0 cpus=2\n"));
	ck_assert_ptr_nonnull(strstr(logbuf + len, "pin vm3 vcpu=1 cpus=3\n"));
	ck_assert_ptr_nonnull(strstr(logbuf + len, "pin vm3 vcpu=2 cpus=2\n"));
	/* the domain's ceiling through libvirt, the lower ones per vCPU */
	ck_assert_ptr_nonnull(strstr(logbuf + len,
				     "schedinfo vm3 vcpu_period=500000 vcpu_quota=400000\n"));
	ck_assert_ptr_nonnull(strstr(logbuf + len, "vcpu-cgroup vm3 vcpu=0 quota=250000 period=500000\n"));
	ck_assert_ptr_nonnull(strstr(logbuf + len, "vcpu-cgroup vm3 vcpu=2 quota=100000 period=500000\n"));
	ck_assert_int_eq(count(logbuf + len, "vcpu-cgroup vm3 vcpu=1 "), 0);
	ck_assert_int_eq(count(logbuf + len, "\n"), 6);
	/* libvirt's call comes before the per-vCPU writes it would undo */
	ck_assert(strstr(logbuf + len, "schedinfo") < strstr(logbuf + len, "vcpu-cgroup"));
	ck_assert_int_eq(s.eff_quota[1], 400000);

	/* unchanged: nothing */
	len = strlen(logbuf);
	ck_assert_int_eq(hsl_apply(l, &s, cpus, q, 500000, why, sizeof(why)), 0);
	ck_assert_uint_eq(strlen(logbuf), len);

	/* one vCPU moves and gets less: one pin, one per-vCPU write, the
	 * domain ceiling stays */
	cpus[1] = "2";
	q[1] = 300000;
	q[0] = 300000;
	ck_assert_int_eq(hsl_apply(l, &s, cpus, q, 500000, why, sizeof(why)), 0);
	ck_assert_str_eq(logbuf + len, "pin vm3 vcpu=1 cpus=2\nschedinfo vm3 vcpu_period=500000 "
			 "vcpu_quota=300000\nvcpu-cgroup vm3 vcpu=2 quota=100000 period=500000\n");

	/* equal again: vcpu 2 is raised back in its own group (the domain quota stays) */
	len = strlen(logbuf);
	q[2] = 300000;
	ck_assert_int_eq(hsl_apply(l, &s, cpus, q, 500000, why, sizeof(why)), 0);
	ck_assert_str_eq(logbuf + len, "vcpu-cgroup vm3 vcpu=2 quota=300000 period=500000\n");

	/* an uncapped vCPU makes the ceiling -1; tiny quotas are raised to 1 ms */
	len = strlen(logbuf);
	q[0] = -1;
	q[1] = 10;
	q[2] = 300000;
	ck_assert_int_eq(hsl_apply(l, &s, cpus, q, 500000, why, sizeof(why)), 0);
	ck_assert_str_eq(logbuf + len, "schedinfo vm3 vcpu_period=500000 vcpu_quota=-1\n"
			 "vcpu-cgroup vm3 vcpu=1 quota=1000 period=500000\n"
			 "vcpu-cgroup vm3 vcpu=2 quota=300000 period=500000\n");

	/* a new period re-sends the ceiling with it */
	len = strlen(logbuf);
	ck_assert_int_eq(hsl_apply(l, &s, cpus, q, 200000, why, sizeof(why)), 0);
	ck_assert_int_eq(count(logbuf + len, "schedinfo vm3 vcpu_period=200000 vcpu_quota=-1\n"), 1);

	/* bad cpu list: refused, the rest still applied */
	len = strlen(logbuf);
	cpus[0] = "x";
	cpus[2] = "3";
	ck_assert_int_eq(hsl_apply(l, &s, cpus, q, 200000, why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "bad cpu list 'x'"));
	ck_assert_str_eq(logbuf + len, "pin vm3 vcpu=2 cpus=3\n");
	hsl_destroy(l);
}
END_TEST

START_TEST(apply_errors)
{
	struct hsl *l = hsl_create(NULL, logbuf, sizeof(logbuf), NULL);
	const char *cpus[2] = { "0", "1" };
	int64_t q[2] = { 1000, 2000 };
	struct hsl_dom s;
	char why[256];
	size_t len;

	ck_assert_int_eq(hsl_dryrun_domain(l, "web", 3, reply2, false), 0);
	ck_assert_int_eq(hsl_discover(l, "web", &s, why, sizeof(why)), 0);
	hsl_dryrun_down(l, true);
	len = strlen(logbuf);
	ck_assert_int_eq(hsl_apply(l, &s, cpus, q, 100000, why, sizeof(why)), -ECONNREFUSED);
	ck_assert_uint_eq(strlen(logbuf), len);
	/* nothing counted as written: everything is sent once it is back */
	hsl_dryrun_down(l, false);
	ck_assert_int_eq(hsl_apply(l, &s, cpus, q, 100000, why, sizeof(why)), 0);
	ck_assert_int_eq(count(logbuf + len, "pin web"), 2);
	ck_assert_int_eq(count(logbuf + len, "schedinfo web vcpu_period=100000 vcpu_quota=2000\n"), 1);
	ck_assert_int_eq(count(logbuf + len, "vcpu-cgroup web vcpu=0 quota=1000"), 1);
	/* the domain went away */
	ck_assert_int_eq(hsl_dryrun_domain(l, "web", -1, NULL, true), 0);
	q[0] = 5000;
	ck_assert_int_eq(hsl_apply(l, &s, cpus, q, 100000, why, sizeof(why)), -ENOENT);
	hsl_destroy(l);
	ck_assert_ptr_null(hsl_create(NULL, logbuf, 0, NULL));
}
END_TEST

/* A real libvirt client against a socket nobody listens on: the errors
 * a daemon sees when libvirtd is down. */
START_TEST(libvirtd_down)
{
	struct hsl *l = hsl_create("qemu+unix:///system?socket=/nonexistent/hs-libvirt.sock",
				   NULL, 0, NULL);
	const char *cpus[2] = { "0", "1" };
	int64_t q[2] = { 1000, 2000 };
	struct hsl_dom s;
	char why[512];

	ck_assert_ptr_nonnull(l);
	ck_assert(!hsl_is_dryrun(l));
	ck_assert_int_eq(hsl_connect(l, why, sizeof(why)), -ECONNREFUSED);
	ck_assert_msg(strstr(why, "not reachable"), "%s", why);
	ck_assert_int_eq(hsl_domain_id(l, "web"), -ECONNREFUSED);
	ck_assert_int_eq(hsl_discover(l, "web", &s, why, sizeof(why)), -ECONNREFUSED);
	memset(&s, 0, sizeof(s));
	snprintf(s.name, sizeof(s.name), "web");
	s.nvcpu = 2;
	s.vcpu[0] = (struct hsl_vcpu){ 0, 1 };
	s.vcpu[1] = (struct hsl_vcpu){ 1, 1 };
	ck_assert_int_eq(hsl_apply(l, &s, cpus, q, 100000, why, sizeof(why)), -ECONNREFUSED);
	ck_assert_str_eq(s.pinned[0], "");
	hsl_destroy(l);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hs_libvirt");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, parse_reply);
	tcase_add_test(tc, discover_dryrun);
	tcase_add_test(tc, apply_mapping);
	tcase_add_test(tc, apply_errors);
	tcase_add_test(tc, libvirtd_down);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
