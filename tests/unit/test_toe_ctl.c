// SPDX-License-Identifier: MIT
/*
 * Unit tests for the TOE's control socket (host-toe/toe/toe_ctl.c) and the chain
 * stage's control calls behind it (host-toe/toe/toe_chain.c): every command, every
 * refusal, and that a refused request changes nothing.  A chain stage on
 * a scratch region path, driven with the ctl_proto client.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tochain/region.h>

#include "tochain/ctl_proto.h"
#include "tc_check.h"
#include "toe_chain.h"
#include "toe_ctl.h"

static char base[64], rpath[128], cpath[160];
static struct toe_chain *tc;
static struct toe_ctl *ctl;
static int epfd = -1;

static void setup(void)
{
	snprintf(rpath, sizeof(rpath), "%s/r%d", base, getpid());
	snprintf(cpath, sizeof(cpath), "%s.ctl", rpath);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	ck_assert_int_ge(epfd, 0);
	tc = toe_chain_create(rpath, "vmunit", 64, 4096, 16, 64, epfd, 1ull << 32);
	ck_assert_ptr_nonnull(tc);
	ctl = toe_ctl_start(cpath, "vmunit", tc, NULL, NULL);
	ck_assert_ptr_nonnull(ctl);
}

static void teardown(void)
{
	char p[200];

	toe_ctl_stop(ctl);
	toe_chain_destroy(tc);
	close(epfd);
	/* Everything made next to the region path is gone. */
	ck_assert_int_ne(access(cpath, F_OK), 0);
	snprintf(p, sizeof(p), "%s.out", rpath);
	ck_assert_int_ne(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s.flows", rpath);
	ck_assert_int_ne(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s.counters", rpath);
	ck_assert_int_ne(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s.vnf-a", rpath);
	ck_assert_int_ne(access(p, F_OK), 0);
}

/* One call; returns the reply (caller decrefs). */
static json_t *call(const char *cmd, const char *args_json)
{
	json_error_t je;
	json_t *args = args_json ? json_loads(args_json, 0, &je) : NULL;
	const char *err = NULL;
	json_t *r;

	if (args_json)
		ck_assert_msg(args != NULL, "bad test JSON %s", args_json);
	r = ctl_call(cpath, cmd, args, &err);
	ck_assert_msg(r != NULL, "ctl_call %s: %s", cmd, err ? err : "?");
	return r;
}

/* The result of a call that must succeed (borrowed from *keep). */
static json_t *ok(const char *cmd, const char *args, json_t **keep)
{
	json_t *r = call(cmd, args);

	ck_assert_msg(json_is_true(json_object_get(r, "ok")), "%s %s refused: %s", cmd,
		      args ? args : "", json_string_value(json_object_get(r, "error")));
	*keep = r;
	return json_object_get(r, "result");
}

/* A call that must be refused; its error must contain @what. */
static void refused(const char *cmd, const char *args, const char *what)
{
	json_t *r = call(cmd, args);
	const char *e = json_string_value(json_object_get(r, "error"));

	ck_assert_msg(json_is_false(json_object_get(r, "ok")), "%s %s accepted", cmd, args);
	ck_assert_msg(e && strstr(e, what), "%s %s: error \"%s\" lacks \"%s\"", cmd, args,
		      e ? e : "", what);
	json_decref(r);
}

static int nvnfs(void)
{
	json_t *k;
	int n = (int)json_array_size(json_object_get(ok("vnf.ls", NULL, &k), "vnfs"));

	json_decref(k);
	return n;
}

START_TEST(version_and_framing)
{
	json_t *k, *res = ok("version", NULL, &k);

	ck_assert_int_eq(json_integer_value(json_object_get(res, "protocol")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(res, "daemon")), "tochain-toe");
	ck_assert_str_eq(json_string_value(json_object_get(res, "name")), "vmunit");
	json_decref(k);
	refused("nosuch", NULL, "unknown command");
	/* the socket is the owner's only */
	{
		struct stat st;

		ck_assert_int_eq(stat(cpath, &st), 0);
		ck_assert_int_eq(st.st_mode & 0777, 0600);
	}
}
END_TEST

START_TEST(vnf_add_validates_and_is_idempotent)
{
	json_t *k, *res;
	char want[200];

	refused("vnf.add", "{}", "name");
	refused("vnf.add", "{\"name\":\"\"}", "name");
	refused("vnf.add", "{\"name\":\"Upper\"}", "name");
	refused("vnf.add", "{\"name\":\"a/b\"}", "name");
	refused("vnf.add", "{\"name\":\"abcdefghijklmnopqrstuvwxyz0123456\"}", "name");
	refused("vnf.add", "{\"name\":\"a\",\"threads\":0}", "threads");
	refused("vnf.add", "{\"name\":\"a\",\"threads\":17}", "threads");
	refused("vnf.add", "{\"name\":\"a\",\"threads\":\"2\"}", "threads");
	refused("vnf.add", "{\"name\":\"a\",\"policy\":\"maybe\"}", "policy");
	refused("vnf.add", "{\"name\":\"a\",\"dispatch\":\"random\"}", "dispatch");
	refused("vnf.add", "{\"name\":3}", "name");
	ck_assert_int_eq(nvnfs(), 0);	/* refused: nothing changed */

	res = ok("vnf.add", "{\"name\":\"a\",\"threads\":2,\"policy\":\"open\",\"dispatch\":\"flow\"}", &k);
	ck_assert(json_is_true(json_object_get(res, "created")));
	snprintf(want, sizeof(want), "%s.vnf-a", rpath);
	ck_assert_str_eq(json_string_value(json_object_get(res, "region")), want);
	ck_assert_int_eq(access(want, F_OK), 0);
	json_decref(k);
	res = ok("vnf.add", "{\"name\":\"a\",\"threads\":2,\"policy\":\"open\",\"dispatch\":\"flow\"}", &k);
	ck_assert(json_is_false(json_object_get(res, "created")));
	json_decref(k);
	refused("vnf.add", "{\"name\":\"a\",\"threads\":3,\"policy\":\"open\",\"dispatch\":\"flow\"}", "other");
	refused("vnf.add", "{\"name\":\"a\",\"threads\":2,\"dispatch\":\"flow\"}", "other");
	refused("vnf.add", "{\"name\":\"a\",\"threads\":2,\"policy\":\"open\"}", "other");

	res = json_array_get(json_object_get(ok("vnf.ls", NULL, &k), "vnfs"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(res, "name")), "a");
	ck_assert_int_eq(json_integer_value(json_object_get(res, "threads")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(res, "policy")), "open");
	ck_assert_str_eq(json_string_value(json_object_get(res, "dispatch")), "flow");
	ck_assert_int_eq(json_integer_value(json_object_get(res, "pid")), 0);
	ck_assert(json_is_false(json_object_get(res, "failed")));
	json_decref(k);
}
END_TEST

/* vnf.run: the threads that get work, validated where it enters. */
START_TEST(vnf_run_sets_the_threads_that_get_work)
{
	json_t *k, *res;

	ok("vnf.add", "{\"name\":\"a\",\"threads\":3}", &k);
	json_decref(k);
	res = json_array_get(json_object_get(ok("vnf.ls", NULL, &k), "vnfs"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(res, "running")), 3);
	json_decref(k);
	refused("vnf.run", "{\"name\":\"b\",\"threads\":1}", "no vnf b");
	refused("vnf.run", "{\"name\":\"a\"}", "threads");
	refused("vnf.run", "{\"name\":\"a\",\"threads\":0}", "threads");
	refused("vnf.run", "{\"name\":\"a\",\"threads\":\"1\"}", "threads");
	refused("vnf.run", "{\"name\":\"a\",\"threads\":4}", "more than it has");
	res = ok("vnf.run", "{\"name\":\"a\",\"threads\":1}", &k);
	ck_assert_int_eq(json_integer_value(json_object_get(res, "running")), 1);
	json_decref(k);
	res = json_array_get(json_object_get(ok("vnf.ls", NULL, &k), "vnfs"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(res, "running")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(res, "threads")), 3);
	json_decref(k);
}
END_TEST

START_TEST(vnf_attach_and_del)
{
	json_t *k, *res;

	ok("vnf.add", "{\"name\":\"a\"}", &k);
	json_decref(k);
	refused("vnf.attach", "{\"name\":\"b\",\"pid\":1}", "no vnf b");
	refused("vnf.attach", "{\"name\":\"a\"}", "pid");
	refused("vnf.attach", "{\"name\":\"a\",\"pid\":0}", "pid");
	refused("vnf.attach", "{\"name\":\"a\",\"pid\":-5}", "pid");
	res = ok("vnf.attach", "{\"name\":\"a\",\"pid\":1}", &k);
	ck_assert_int_eq(json_integer_value(json_object_get(res, "epoch")), 0);
	json_decref(k);
	/* a second attach is a restart for the new process */
	res = ok("vnf.attach", "{\"name\":\"a\",\"pid\":1}", &k);
	ck_assert_int_eq(json_integer_value(json_object_get(res, "epoch")), 1);
	json_decref(k);

	ok("chain.set", "{\"dir\":\"in\",\"name\":\"c\",\"hops\":[[\"a\"]]}", &k);
	json_decref(k);
	refused("vnf.del", "{\"name\":\"a\"}", "used by a chain");
	refused("vnf.del", "{\"name\":\"zz\"}", "no vnf zz");
	ok("chain.del", "{\"dir\":\"in\"}", &k);
	json_decref(k);
	ok("vnf.del", "{\"name\":\"a\"}", &k);
	json_decref(k);
	ck_assert_int_eq(nvnfs(), 0);
	/* the name can be added again, as a new VNF */
	res = ok("vnf.add", "{\"name\":\"a\",\"threads\":4}", &k);
	ck_assert(json_is_true(json_object_get(res, "created")));
	ck_assert_int_eq(json_integer_value(json_object_get(res, "id")), 1);
	json_decref(k);
}
END_TEST

START_TEST(chain_set_validates)
{
	json_t *k, *res, *chains;

	ok("vnf.add", "{\"name\":\"a\"}", &k);
	json_decref(k);
	ok("vnf.add", "{\"name\":\"b\"}", &k);
	json_decref(k);
	refused("chain.set", "{\"name\":\"c\",\"hops\":[]}", "dir");
	refused("chain.set", "{\"dir\":\"up\",\"name\":\"c\",\"hops\":[]}", "dir");
	refused("chain.set", "{\"dir\":\"in\",\"hops\":[]}", "name");
	refused("chain.set", "{\"dir\":\"in\",\"name\":\"c\"}", "hops");
	refused("chain.set", "{\"dir\":\"in\",\"name\":\"c\",\"hops\":[[\"a\"],[]]}", "hop 2");
	refused("chain.set", "{\"dir\":\"in\",\"name\":\"c\",\"hops\":[\"a\"]}", "hop 1");
	refused("chain.set", "{\"dir\":\"in\",\"name\":\"c\",\"hops\":[[\"a\",\"X\"]]}", "bad vnf name");
	refused("chain.set", "{\"dir\":\"in\",\"name\":\"c\",\"hops\":[[\"a\"],[\"zz\"]]}", "no vnf zz");
	refused("chain.set", "{\"dir\":\"in\",\"name\":\"c\",\"hops\":[[\"a\"],[\"b\",\"a\"]]}", "twice");
	refused("chain.set", "{\"dir\":\"in\",\"name\":\"c\",\"hops\":[[\"a\",\"a\"]]}", "twice");
	refused("chain.set", "{\"dir\":\"in\",\"name\":\"c\",\"hops\":[[\"a\"],[\"a\"],[\"a\"],[\"a\"],"
			     "[\"a\"],[\"a\"],[\"a\"],[\"a\"],[\"a\"]]}", "at most 8");
	refused("chain.set", "{\"dir\":\"in\",\"name\":\"c\",\"hops\":[[\"a\",\"a\",\"a\",\"a\",\"a\","
			     "\"a\",\"a\",\"a\",\"a\"]]}", "hop 1");
	refused("chain.del", "{\"dir\":\"in\"}", "no chain");
	refused("chain.del", "{}", "dir");
	/* refused: still no chain */
	chains = json_object_get(ok("stats", NULL, &k), "chains");
	ck_assert_int_eq(json_array_size(chains), 0);
	json_decref(k);

	res = ok("chain.set", "{\"dir\":\"in\",\"name\":\"web\",\"hops\":[[\"a\",\"b\"]]}", &k);
	ck_assert_str_eq(json_string_value(json_object_get(res, "dir")), "in");
	ck_assert_str_eq(json_string_value(json_object_get(res, "name")), "web");
	ck_assert_int_gt(json_integer_value(json_object_get(res, "version")), 0);
	json_decref(k);
	/* the same VNF in the other direction's chain is fine; [] passes through */
	ok("chain.set", "{\"dir\":\"out\",\"name\":\"eg\",\"hops\":[[\"a\"]]}", &k);
	json_decref(k);
	ok("chain.set", "{\"dir\":\"out\",\"name\":\"eg\",\"hops\":[]}", &k);
	json_decref(k);
	chains = json_object_get(ok("stats", NULL, &k), "chains");
	ck_assert_int_eq(json_array_size(chains), 2);
	res = json_array_get(chains, 0);
	ck_assert_str_eq(json_string_value(json_object_get(res, "dir")), "in");
	ck_assert_str_eq(json_string_value(json_object_get(res, "name")), "web");
	ck_assert_int_eq(json_integer_value(json_object_get(res, "hops")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(res, "arrivals")), 0);
	ck_assert(json_is_real(json_object_get(res, "pps")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(chains, 1), "hops")), 0);
	ck_assert_int_eq(json_array_size(json_object_get(json_object_get(k, "result"), "denials")), 0);
	json_decref(k);
	res = ok("chain.del", "{\"dir\":\"out\"}", &k);
	ck_assert_str_eq(json_string_value(json_object_get(res, "deleted")), "out");
	json_decref(k);
	ck_assert(toe_chain_active(tc, TOE_DIR_IN));
	ck_assert(!toe_chain_active(tc, TOE_DIR_OUT));
}
END_TEST

/* The data-path side: denials are recorded for stats, oldest first, 64 kept. */
START_TEST(denials_are_kept_for_stats)
{
	struct ch_result r;
	char cn[TOE_NAME_MAX + 1], vn[TOE_NAME_MAX + 1], conn[32];
	json_t *k, *den;

	ok("vnf.add", "{\"name\":\"a\"}", &k);
	json_decref(k);
	ok("chain.set", "{\"dir\":\"out\",\"name\":\"eg\",\"hops\":[[\"a\"]]}", &k);
	json_decref(k);
	memset(&r, 0, sizeof(r));
	r.chain = TOE_DIR_OUT;
	r.verdict = CH_DENY;
	r.reason = CH_REASON_RULE;
	r.deny_vnf = 0;
	for (int i = 0; i < 70; i++) {
		r.deny_rule = (uint32_t)i;
		snprintf(conn, sizeof(conn), "1.2.3.4:%d>5.6.7.8:80", i);
		toe_chain_deny_note(tc, &r, conn, cn, vn);
	}
	ck_assert_str_eq(cn, "eg");
	ck_assert_str_eq(vn, "a");
	den = json_object_get(ok("stats", NULL, &k), "denials");
	ck_assert_int_eq(json_array_size(den), TOE_DENIALS);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(den, 0), "rule")), 6);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(den, 63), "rule")), 69);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(den, 63), "conn")),
			 "1.2.3.4:69>5.6.7.8:80");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(den, 63), "reason")), "rule");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(den, 63), "dir")), "out");
	ck_assert(json_is_real(json_object_get(json_array_get(den, 0), "time")));
	json_decref(k);
}
END_TEST

/* R.out slots: all of them, then -ENOBUFS, then back. */
/* The header name of the region file @path. */
static void header_name_is(const char *path, const char *want)
{
	struct tcr_region *r = tcr_region_attach(path, TCR_ATTACH_HOST | TCR_ATTACH_RDONLY);

	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->name, want);
	tcr_region_destroy(r);
}

/*
 * Header names unique on the host (a guest's driver names devices after
 * them): "<toe>.out", "<toe>.vnf-<X>", and a hash when that is too long.
 */
START_TEST(region_header_names)
{
	const char *x32 = "abcdefghijklmnopqrstuvwxyz012345";	/* the longest VNF name */
	char a[TCR_NAME_MAX], b[TCR_NAME_MAX], p[200];
	json_t *keep;

	snprintf(p, sizeof(p), "%s.out", rpath);
	header_name_is(p, "vmunit.out");
	ok("vnf.add", "{\"name\":\"a\"}", &keep);
	json_decref(keep);
	snprintf(p, sizeof(p), "%s.vnf-a", rpath);
	header_name_is(p, "vmunit.vnf-a");

	toe_chain_region_name(a, "web1", ".vnf-", "ids");
	ck_assert_str_eq(a, "web1.vnf-ids");
	toe_chain_region_name(a, "web1", ".out", "");
	ck_assert_str_eq(a, "web1.out");
	/* 31 characters fit as they are */
	toe_chain_region_name(a, "abcdefghijkl", ".vnf-", "abcdefghijklmn");
	ck_assert_str_eq(a, "abcdefghijkl.vnf-abcdefghijklmn");
	/* one more: prefix, the tag, a dot and 12 hex digits, still valid */
	toe_chain_region_name(a, "abcdefghijkl", ".vnf-", "abcdefghijklmno");
	ck_assert_str_eq(a + 30, "");	/* 12 + 5 + 1 + 12 */
	ck_assert(tcr_name_valid(a));
	ck_assert_int_eq(strncmp(a, "abcdefghijkl.vnf-.", 18), 0);
	ck_assert_uint_eq(strspn(a + 18, "0123456789abcdef"), 12);
	/* names that differ only past the cut do not clash */
	toe_chain_region_name(b, "abcdefghijkl", ".vnf-", "abcdefghijklmnp");
	ck_assert_str_ne(a, b);
	toe_chain_region_name(a, "abcdefghijklmnopqrstuvwxyz01234", ".vnf-", x32);
	toe_chain_region_name(b, "abcdefghijklmnopqrstuvwxyz01234", ".vnf-",
			      "abcdefghijklmnopqrstuvwxyz012346");
	ck_assert(tcr_name_valid(a) && tcr_name_valid(b));
	ck_assert_uint_eq(strlen(a), TCR_NAME_MAX - 1);	/* 13 + 5 + 1 + 12 */
	ck_assert_str_ne(a, b);
	toe_chain_region_name(a, "abcdefghijklmnopqrstuvwxyz01234", ".out", "");
	ck_assert(tcr_name_valid(a));
	ck_assert_int_eq(strncmp(a, "abcdefghijklmn.out.", 19), 0);
	/* and a bad TOE name is refused */
	ck_assert_ptr_null(toe_chain_create(p, "Bad/Name", 64, 4096, 16, 64, epfd, 1ull << 32));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(out_slots)
{
	int got[16];

	ck_assert_uint_eq(toe_chain_out_nbufs(tc), 16);
	for (int i = 0; i < 16; i++) {
		got[i] = toe_chain_out_alloc(tc);
		ck_assert_int_ge(got[i], 0);
		ck_assert_int_lt(got[i], 16);
		ck_assert_ptr_nonnull(toe_chain_out_slot(tc, (uint32_t)got[i]));
	}
	ck_assert_int_eq(toe_chain_out_alloc(tc), -ENOBUFS);
	toe_chain_out_free(tc, (uint32_t)got[3]);
	ck_assert_int_eq(toe_chain_out_alloc(tc), got[3]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("toe_ctl");
	TCase *t = tcase_create("ctl");
	int rc;

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, version_and_framing);
	tcase_add_test(t, vnf_add_validates_and_is_idempotent);
	tcase_add_test(t, vnf_run_sets_the_threads_that_get_work);
	tcase_add_test(t, vnf_attach_and_del);
	tcase_add_test(t, chain_set_validates);
	tcase_add_test(t, denials_are_kept_for_stats);
	tcase_add_test(t, out_slots);
	tcase_add_test(t, region_header_names);
	tcase_set_timeout(t, 30);
	suite_add_tcase(s, t);
	if (tc_tmpdir_make(base, sizeof(base)))
		return 1;
	rc = tc_run_suite(s);
	tc_tmpdir_remove(base);
	return rc;
}
