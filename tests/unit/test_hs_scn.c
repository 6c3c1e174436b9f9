// SPDX-License-Identifier: MIT
/* tochain-sim scenario files: what is accepted, and FILE:LINE: reasons. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hs_scn.h"

static struct hs_scn scn;
static char err[512];

#define BASE "cores 4\nservice 1\nvnf a f=1000\nvm v\nchain c vm=v sla=100 hop=a\nload l\n"

static int parse(const char *text)
{
	int rc = hs_scn_parse(text, "t.scn", &scn, err, sizeof(err));

	return rc;
}

static void teardown(void)
{
	hs_scn_free(&scn);
}

/* @text must be refused with exactly @want. */
static void refused(const char *text, const char *want)
{
	ck_assert_int_eq(parse(text), -EINVAL);
	ck_assert_str_eq(err, want);
	hs_scn_free(&scn);
}

START_TEST(minimal_and_defaults)
{
	ck_assert_int_eq(parse(BASE), 0);
	ck_assert_uint_eq(scn.cores, 4);
	ck_assert_uint_eq(scn.service, 1);
	ck_assert_uint_eq(scn.period, 50);
	ck_assert(scn.tick_ms == 10.0);
	ck_assert_uint_eq(scn.nchain, 1);
	ck_assert_uint_eq(scn.chain[0].nhop, 1);
	ck_assert(scn.chain[0].qcap == 200.0);	/* 2 s of SLA */
	ck_assert(scn.mode_sync && scn.mode_cfs);	/* none given: both */
	ck_assert_int_eq(scn.early_b, HS_SCN_EARLY_B_BUSY);
	ck_assert(scn.load[0].scale == 1.0);
}
END_TEST

START_TEST(full_syntax)
{
	const char *t =
		"# comment\n"
		"cores 8   # trailing comment\n"
		"service 2\n\n"
		"tick_ms 5\nperiod 20\nduration 3\nwarmup 0.5\nwindow 8\nslices 4\n"
		"svc_cost_us 12.5\nearly_b literal\nmode cfs\n"
		"vnf fw f=50000 partition=service\n"
		"vnf ids f=8000 threads=4\n"
		"vnf waf f=5000 threads=2 partition=sync\n"
		"vm web vcpus=2 rx=9000 busy=0.25 count=3\n"
		"vm solo\n"
		"chain x vm=web sla=700 hop=fw hop=ids,waf qcap=99 count=4\n"
		"chain y vm=solo sla=10 hop=ids\n"
		"load l scale=0.5\n"
		"load b scale=2 burst=100/50\n";

	ck_assert_int_eq(parse(t), 0);
	ck_assert_uint_eq(scn.period, 20);
	ck_assert(scn.tick_ms == 5.0 && scn.warmup_s == 0.5 && scn.svc_cost_us == 12.5);
	ck_assert(!scn.mode_sync && scn.mode_cfs);
	ck_assert_int_eq(scn.early_b, HS_SCN_EARLY_B_LITERAL);
	ck_assert(scn.vnf[0].service && !scn.vnf[2].service);
	ck_assert_uint_eq(scn.nvm, 4);
	ck_assert_str_eq(scn.vm[2].name, "web-2");
	ck_assert_str_eq(scn.vm[3].name, "solo");
	ck_assert(scn.vm[1].busy == 0.25 && scn.vm[1].rx_pps == 9000);
	ck_assert_uint_eq(scn.nchain, 5);
	/* chains of a group take its VMs in turn: x-0..x-3 -> web-0,1,2,0 */
	ck_assert_str_eq(scn.chain[3].name, "x-3");
	ck_assert_uint_eq(scn.chain[1].vm, 1);
	ck_assert_uint_eq(scn.chain[3].vm, 0);
	ck_assert_uint_eq(scn.chain[4].vm, 3);
	ck_assert_uint_eq(scn.chain[0].nhop, 2);
	ck_assert_uint_eq(scn.chain[0].hop_n[1], 2);
	ck_assert(scn.chain[0].qcap == 99.0);
	ck_assert_uint_eq(hs_scn_sync_vnfs(&scn, &scn.chain[0]), 2);
	ck_assert(scn.load[1].on_ms == 100 && scn.load[1].off_ms == 50);
}
END_TEST

START_TEST(line_errors)
{
	refused(BASE "bogus 1\n", "t.scn:7: unknown keyword 'bogus'");
	refused("cores four\n", "t.scn:1: cores: 'four' is not a whole number");
	refused("cores 4x\n", "t.scn:1: cores: '4x' is not a whole number");
	refused("cores -4\n", "t.scn:1: cores: '-4' is not a whole number");
	refused("cores 0\n", "t.scn:1: cores: 0 out of range 1..4096");
	refused("cores 4 5\n", "t.scn:1: cores: expects exactly one value");
	refused("\n\ntick_ms nan\n", "t.scn:3: tick_ms: 'nan' is not a number");
	refused("vnf a\n", "t.scn:1: vnf a: f=PPS is required");
	refused("vnf a f=10 threads=9\n", "t.scn:1: vnf threads: 9 out of range 1..8");
	refused("vnf a f=10 colour=red\n", "t.scn:1: vnf: unknown option 'colour=red'");
	refused("vnf a f=10 partition=gpu\n",
		"t.scn:1: vnf partition: 'gpu' is neither sync nor service");
	refused("vnf a f=10\nvnf a f=20\n", "t.scn:2: vnf a: defined twice");
	refused("vnf a/b f=10\n",
		"t.scn:1: vnf name 'a/b': only letters, digits, '_', '.', '-'");
	refused("vm v busy=2\n", "t.scn:1: vm busy: 2 out of range 0..1");
	refused("vm v\nchain c vm=w sla=1 hop=a\n",
		"t.scn:2: chain hop: unknown vnf 'a' (define it with a vnf line first)");
	refused("vnf a f=1\nchain c vm=w sla=1 hop=a\n", "t.scn:2: chain c: unknown vm 'w'");
	refused("vnf a f=1\nvm v\nchain c vm=v hop=a\n", "t.scn:3: chain c: sla=PPS is required");
	refused("vnf a f=1\nvm v\nchain c vm=v sla=5\n",
		"t.scn:3: chain c: at least one hop=VNF[,VNF] is required");
	refused("vnf a f=1\nvm v\nchain c vm=v sla=5 hop=a,a\n",
		"t.scn:3: chain hop: vnf 'a' twice in one hop");
	refused("vnf a f=1\nvm v\nchain c vm=v sla=5 hop=a\nchain c vm=v sla=5 hop=a\n",
		"t.scn:4: chain c: defined twice");
	refused("load l burst=100\n", "t.scn:1: load burst: '100' is not ON_MS/OFF_MS");
	refused("load l burst=0/5\n", "t.scn:1: load burst on: 0 out of range 0.001..1e+06");
	refused("mode fast\n", "t.scn:1: mode: 'fast' is neither sync nor cfs");
	refused("early_b maybe\n", "t.scn:1: early_b: 'maybe' is not busy, literal or off");
}
END_TEST

START_TEST(whole_file_errors)
{
	char *big;

	refused("service 1\n", "t.scn: 'cores N' is required");
	refused("cores 4\nservice 4\n",
		"t.scn: service partition (4) leaves no synchronous pCPU of 4");
	refused("cores 4\n", "t.scn: no chain defined");
	refused("cores 4\nvnf a f=1\nvm v\nchain c vm=v sla=1 hop=a\n", "t.scn: no load defined");
	refused(BASE "warmup 10\n", "t.scn: warmup (10 s) must be shorter than duration (10 s)");
	refused(BASE "duration 100000\ntick_ms 0.01\n",
		"t.scn: duration/tick_ms is over 2000000 ticks");
	refused(BASE "duration 10000\nslices 1000\n",
		"t.scn: duration/tick_ms * slices is over 20000000 steps");
	refused(BASE "duration 0.1\nwarmup 0\n", "t.scn: duration is shorter than one period");
	/* 17 sync VNFs in one chain */
	refused("cores 4\nvnf a f=1\nvnf b f=1\nvnf c f=1\nvnf d f=1\nvnf e f=1\n"
		"vnf f f=1\nvnf g f=1\nvnf h f=1\nvnf i f=1\nvm v\n"
		"chain x vm=v sla=1 hop=a,b,c,d,e,f,g,h hop=a,b,c,d,e,f,g,h hop=i\n",
		"t.scn:12: chain x: more than 16 VNFs on the synchronous partition");
	/* an over-long line is refused, not truncated */
	big = malloc(3000);
	memset(big, 'x', 2999);
	big[2999] = '\0';
	refused(big, "t.scn:1: line longer than 1023 characters");
	free(big);
	/* a name that gets too long with its count suffix */
	refused("vm aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa count=20\n",
		"t.scn:1: name 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' with its count suffix is too long");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hs_scn");
	TCase *tc = tcase_create("scn");
	SRunner *sr;
	int nf;

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, minimal_and_defaults);
	tcase_add_test(tc, full_syntax);
	tcase_add_test(tc, line_errors);
	tcase_add_test(tc, whole_file_errors);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
