// SPDX-License-Identifier: MIT
/*
 * Unit tests for host-toe/chain/ch_psched.c: dispatch and verdict logic, driven
 * step by step (ch_psched_poll in the test thread; the owner's epoll loop
 * played step by step too, ch_psched_loop.c), with VNF service
 * threads played by the VNF runtime (vnf_recv with no wait) or, for a
 * hostile VNF, by raw writes to its region.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <ftw.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/counters.h>
#include <tochain/desc.h>

#include "tochain/ch_flow.h"
#include "ch_harness.h"
#include "ch_psched_int.h"
#include "tc_check.h"
#include "vnf.h"
#include "vnf_early.h"

#define NBUFS	64
#define SLOT	1024

static char dir[96], dpath[128], vpath[4][128];
static struct tcr_region *data;
static struct ch_psched *s;

/*
 * Every test (a child process under CK_FORK) works in a directory of its
 * own below one made by main, which removes the whole tree at the end,
 * also when a test failed before its teardown.
 */
static char base[64];

static int make_base(void)
{
	return tc_tmpdir_make(base, sizeof(base));
}

static void remove_base(void)
{
	tc_tmpdir_remove(base);
}

static void setup(void)
{
	struct ch_psched_cfg cfg = { .nchains = 4, .qcap = 64, .max_flight = 64,
				    .vnf_nbufs = 64, .hang_ns = 50000000ull };

	snprintf(dir, sizeof(dir), "%s/%d", base, getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(dpath, sizeof(dpath), "%s/data", dir);
	data = chh_data_region(dpath, NBUFS, SLOT);
	ck_assert_ptr_nonnull(data);
	s = ch_psched_create(&cfg);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(ch_psched_region_add(s, 3, dpath, NBUFS, SLOT), 0);
	ck_assert_int_eq(ch_psched_region_add(s, 3, dpath, NBUFS, SLOT), -EEXIST);
	urcu_memb_register_thread();
}

static void teardown(void)
{
	urcu_memb_unregister_thread();
	ch_psched_destroy(s);
	tcr_region_destroy(data);
	unlink(dpath);
	for (int i = 0; i < 4; i++)
		if (vpath[i][0])
			unlink(vpath[i]);
	rmdir(dir);
}

static int add_vnf(uint32_t threads, uint32_t policy)
{
	static int n;
	struct ch_vnf_cfg c = { .name = "t", .nthreads = threads, .policy = policy };
	int id;

	snprintf(vpath[n], sizeof(vpath[n]), "%s/vnf%d", dir, n);
	c.region_path = vpath[n];
	id = ch_psched_vnf_add(s, &c);
	ck_assert_int_ge(id, 0);
	n = (n + 1) % 4;
	return id;
}

static void chain(uint32_t id, uint32_t nhops, const uint32_t *hop_masks)
{
	struct ch_chain_cfg c = { .region = 3, .dir = CH_DIR_OUT, .nhops = nhops };

	for (uint32_t h = 0; h < nhops; h++)
		for (uint32_t v = 0; v < 8; v++)
			if (hop_masks[h] & (1u << v))
				c.hop[h].vnf[c.hop[h].nvnfs++] = v;
	ck_assert_int_eq(ch_psched_chain_set(s, id, &c, NULL), 0);
}

/* Buffer @buf of region 3 filled for @cookie, as a descriptor. */
static struct ch_pkt pkt(uint32_t buf, uint64_t cookie)
{
	struct ch_pkt p;

	chh_pkt(&p, 3, buf, chh_fill(data, buf, cookie, NULL), cookie);
	return p;
}

static void submit(uint32_t chain_id, uint32_t buf, uint64_t cookie)
{
	struct ch_pkt p = pkt(buf, cookie);

	ck_assert_uint_eq(ch_psched_push(s, chain_id, &p, 1), 1);
}

static void polls(int n)
{
	for (int i = 0; i < n; i++)
		ch_psched_poll(s);
}

/* What thread @t of a VNF has received (data packets only). */
static int recv_now(struct vnf_thread *t, struct vnf_pkt *pk, unsigned int max)
{
	int n = vnf_recv(t, pk, max, 0);

	ck_assert_int_ge(n, 0);
	return n;
}

START_TEST(parallel_hop_then_next_hop_first_deny_stops)
{
	uint32_t hops[2] = { 0x3, 0x4 };	/* [A, B] then [C] */
	struct vnf_thread *ta, *tb, *tc;
	struct vnf_pkt pa[4], pb[4], pc[4];
	struct ch_result r;
	struct tcr_counters_snap snap;

	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 0);
	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 1);
	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 2);
	chain(0, 2, hops);
	ta = vnf_attach(vpath[0], 0, 100);
	tb = vnf_attach(vpath[1], 0, 100);
	tc = vnf_attach(vpath[2], 0, 100);
	ck_assert(ta && tb && tc);

	/* 1: both of hop 0 get it at once; hop 1 only after both allowed. */
	submit(0, 5, 100);
	polls(2);
	ck_assert_int_eq(recv_now(ta, pa, 4), 1);	/* grant handled inside */
	ck_assert_int_eq(recv_now(tb, pb, 4), 1);
	ck_assert_int_eq(recv_now(tc, pc, 4), 0);
	ck_assert_uint_eq(pa[0].d.chain, 0);
	ck_assert_uint_eq(pa[0].d.hop, 0);
	ck_assert_uint_eq(pa[0].d.conn_id, 100 % 7 + 1);
	ck_assert_uint_eq(pa[0].d.dport, 80);
	ck_assert_uint_eq(pa[0].d.arg, VNF_VERDICT_NONE);
	ck_assert_uint_eq(VNF_AUX_REGION(pa[0].d.aux), 3);
	ck_assert_uint_eq(VNF_AUX_BUF(pa[0].d.aux), 5);
	/* Payload: the data region's bytes, through a read-only mapping. */
	ck_assert_ptr_nonnull(pa[0].data);
	ck_assert_mem_eq(pa[0].data, tcr_region_slot(data, 5), pa[0].len);
	ck_assert_int_eq(vnf_post(ta, &pa[0], VNF_VERDICT_ALLOW, 0), 0);
	vnf_flush(ta);
	polls(2);
	ck_assert_int_eq(recv_now(tc, pc, 4), 0);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 0);
	vnf_post(tb, &pb[0], VNF_VERDICT_ALLOW, 0);
	vnf_flush(tb);
	polls(2);
	ck_assert_int_eq(recv_now(tc, pc, 4), 1);
	ck_assert_uint_eq(pc[0].d.hop, 1);
	vnf_post(tc, &pc[0], VNF_VERDICT_ALLOW, 0);
	vnf_flush(tc);
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.pkt.cookie, 100);
	ck_assert_uint_eq(r.verdict, CH_ALLOW);
	ck_assert_uint_eq(r.hops, 2);

	/* 2: B denies first; the result waits for A, hop 1 never sees it. */
	submit(0, 6, 101);
	polls(2);
	ck_assert_int_eq(recv_now(ta, pa, 4), 1);
	ck_assert_int_eq(recv_now(tb, pb, 4), 1);
	vnf_post(tb, &pb[0], VNF_VERDICT_DENY, 42);
	vnf_flush(tb);
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 0);
	vnf_post(ta, &pa[0], VNF_VERDICT_DENY, 7);	/* a later Deny is not recorded */
	vnf_flush(ta);
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.verdict, CH_DENY);
	ck_assert_uint_eq(r.reason, CH_REASON_RULE);
	ck_assert_uint_eq(r.deny_vnf, 1);
	ck_assert_uint_eq(r.deny_rule, 42);
	ck_assert_uint_eq(r.hops, 0);
	ck_assert_int_eq(recv_now(tc, pc, 4), 0);

	ck_assert_int_eq(tcr_counters_snapshot(ch_psched_counters(s, 0), NULL, 64, &snap), 0);
	ck_assert_uint_eq(snap.arrivals, 2);
	ck_assert_uint_eq(snap.finished, 2);
	ck_assert_uint_eq(snap.denied, 1);
	ck_assert_uint_eq(snap.taken, 2);
	vnf_detach(ta);
	vnf_detach(tb);
	vnf_detach(tc);
}
END_TEST

/* Deliver every descriptor @t holds with an Allow, then let the scheduler collect. */
static void allow_all(struct vnf_thread *t, struct vnf_pkt *pk, int n)
{
	for (int i = 0; i < n; i++)
		vnf_post(t, &pk[i], VNF_VERDICT_ALLOW, 0);
	vnf_flush(t);
	polls(2);
}

/* Submit buffer @buf (@cookie) on chain 0 and receive it at both VNFs of its hop. */
static void both_get(struct vnf_thread *ta, struct vnf_thread *tb, struct vnf_pkt *pa,
		     struct vnf_pkt *pb, uint32_t buf, uint64_t cookie)
{
	submit(0, buf, cookie);
	polls(2);
	ck_assert_int_eq(recv_now(ta, pa, 4), 1);
	ck_assert_int_eq(recv_now(tb, pb, 4), 1);
}

static void both_flush(struct vnf_thread *ta, struct vnf_thread *tb)
{
	vnf_flush(ta);
	vnf_flush(tb);
	polls(3);
}

/*
 * An Answer (VNF_VERDICT_ANSWER): the answer is copied out of the VNF's
 * slot into the result, which then owns it; a length beyond
 * VNF_ANSWER_MAX, zero, or no incident leave a plain Deny; a later VNF's
 * answer never replaces the first Deny.
 */
START_TEST(answer_copied_bounded_first_deny_wins)
{
	uint32_t hops[1] = { 0x3 };
	struct vnf_thread *ta, *tb;
	struct vnf_pkt pa[4], pb[4];
	struct ch_result r;
	struct tcr_region *raw;
	struct tcr_desc *d;
	static const char page[] = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n";
	static const uint32_t bad[][2] = { { VNF_ANSWER_MAX + 1, 7 }, { 0, 7 }, { 10, 0 },
					   { 0xffffffffu, 7 } };

	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 0);
	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 1);
	chain(0, 1, hops);
	ta = vnf_attach(vpath[0], 0, 100);
	tb = vnf_attach(vpath[1], 0, 100);
	ck_assert(ta && tb);
	/* A good answer, the other VNF allows. */
	both_get(ta, tb, pa, pb, 5, 100);
	ck_assert_int_eq(vnf_post_answer(ta, &pa[0], 42, 0xabcd, page, sizeof(page) - 1), 0);
	vnf_post(tb, &pb[0], VNF_VERDICT_ALLOW, 0);
	both_flush(ta, tb);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.verdict, CH_DENY);
	ck_assert_uint_eq(r.reason, CH_REASON_RULE);
	ck_assert_uint_eq(r.deny_rule, 42);
	ck_assert_uint_eq(r.incident, 0xabcd);
	ck_assert_uint_eq(r.answer_len, sizeof(page) - 1);
	ck_assert_ptr_nonnull(r.answer);
	ck_assert_mem_eq(r.answer, page, sizeof(page) - 1);
	free(r.answer);
	/* B denies first, then A answers: the first Deny stands, no answer. */
	both_get(ta, tb, pa, pb, 6, 101);
	vnf_post(tb, &pb[0], VNF_VERDICT_DENY, 9);
	vnf_flush(tb);
	polls(2);
	ck_assert_int_eq(vnf_post_answer(ta, &pa[0], 42, 0xabcd, page, sizeof(page) - 1), 0);
	vnf_flush(ta);
	polls(3);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.verdict, CH_DENY);
	ck_assert_uint_eq(r.deny_rule, 9);
	ck_assert_ptr_null(r.answer);
	ck_assert_uint_eq(r.answer_len, 0);
	/* A hostile VNF: bad lengths and incident ids are a plain Deny. */
	raw = tcr_region_attach(vpath[0], TCR_ATTACH_HOST);
	ck_assert_ptr_nonnull(raw);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		both_get(ta, tb, pa, pb, 7, 102 + i);
		d = tcr_region_desc(raw, pa[0].idx);
		ck_assert_ptr_nonnull(d);
		d->allow_mask = bad[i][0];
		d->deny_vnf = bad[i][1];
		vnf_post(ta, &pa[0], VNF_VERDICT_ANSWER, 5);
		vnf_post(tb, &pb[0], VNF_VERDICT_ALLOW, 0);
		both_flush(ta, tb);
		ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
		ck_assert_uint_eq(r.verdict, CH_DENY);
		ck_assert_uint_eq(r.reason, CH_REASON_RULE);
		ck_assert_uint_eq(r.deny_rule, 5);
		ck_assert_ptr_null(r.answer);
	}
	/* A result nobody takes: ch_psched_destroy frees its answer (LSan in SAN=1). */
	both_get(ta, tb, pa, pb, 8, 200);
	ck_assert_int_eq(vnf_post_answer(ta, &pa[0], 42, 1, page, sizeof(page) - 1), 0);
	vnf_post(tb, &pb[0], VNF_VERDICT_ALLOW, 0);
	both_flush(ta, tb);
	tcr_region_destroy(raw);
	vnf_detach(ta);
	vnf_detach(tb);
}
END_TEST

/*
 * An Alert (VNF_VERDICT_ALERT) lets the data through with the alerting
 * VNF, its rule and its message (copied, bounded by VNF_ALERT_MSG_MAX,
 * owned by the result); the first Alert is kept; a Deny of the same
 * descriptor wins over it (the alert still travels); a hostile length is
 * cut.
 */
START_TEST(alert_passes_with_rule_and_message)
{
	uint32_t hops[1] = { 0x3 };
	struct vnf_thread *ta, *tb;
	struct vnf_pkt pa[4], pb[4];
	struct ch_result r;
	struct tcr_region *raw;
	struct tcr_desc *d;
	struct ch_vnf_info info;
	static const char msg[] = "SERVER-WEBAPP passwd access";
	static char longmsg[2 * VNF_ALERT_MSG_MAX];

	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 0);
	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 1);
	chain(0, 1, hops);
	ta = vnf_attach(vpath[0], 0, 100);
	tb = vnf_attach(vpath[1], 0, 100);
	ck_assert(ta && tb);
	/* A alerts, B allows: allowed, with A's alert. */
	both_get(ta, tb, pa, pb, 5, 100);
	ck_assert_int_eq(vnf_post_alert(ta, &pa[0], 1000001, msg, sizeof(msg) - 1), 0);
	vnf_post(tb, &pb[0], VNF_VERDICT_ALLOW, 0);
	both_flush(ta, tb);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.verdict, CH_ALLOW);
	ck_assert_uint_eq(r.reason, CH_REASON_NONE);
	ck_assert_uint_eq(r.alert_vnf, 0);
	ck_assert_uint_eq(r.alert_rule, 1000001);
	ck_assert_uint_eq(r.alert_msg_len, sizeof(msg) - 1);
	ck_assert_mem_eq(r.alert_msg, msg, sizeof(msg) - 1);
	free(r.alert_msg);
	ck_assert_int_eq(ch_psched_vnf_info(s, 0, &info), 0);
	ck_assert_uint_eq(info.alerts, 1);
	/* No alert: none in the result. */
	both_get(ta, tb, pa, pb, 5, 101);
	vnf_post(ta, &pa[0], VNF_VERDICT_ALLOW, 0);
	vnf_post(tb, &pb[0], VNF_VERDICT_ALLOW, 0);
	both_flush(ta, tb);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.verdict, CH_ALLOW);
	ck_assert_uint_eq(r.alert_vnf, CH_VNF_NONE);
	ck_assert_ptr_null(r.alert_msg);
	/* B alerts first, then A: B's is kept; then a Deny wins, the alert travels with it. */
	both_get(ta, tb, pa, pb, 6, 102);
	ck_assert_int_eq(vnf_post_alert(tb, &pb[0], 7, "b", 1), 0);
	vnf_flush(tb);
	polls(2);
	ck_assert_int_eq(vnf_post_alert(ta, &pa[0], 8, "a", 1), 0);
	vnf_flush(ta);
	polls(3);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.verdict, CH_ALLOW);
	ck_assert_uint_eq(r.alert_vnf, 1);
	ck_assert_uint_eq(r.alert_rule, 7);
	ck_assert_uint_eq(r.alert_msg_len, 1);
	ck_assert_mem_eq(r.alert_msg, "b", 1);
	free(r.alert_msg);
	both_get(ta, tb, pa, pb, 6, 103);
	ck_assert_int_eq(vnf_post_alert(ta, &pa[0], 8, "a", 1), 0);
	vnf_post(tb, &pb[0], VNF_VERDICT_DENY, 9);
	both_flush(ta, tb);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.verdict, CH_DENY);
	ck_assert_uint_eq(r.deny_rule, 9);
	ck_assert_uint_eq(r.alert_rule, 8);
	free(r.alert_msg);
	/* A hostile length is cut to VNF_ALERT_MSG_MAX; vnf_post_alert cuts too. */
	raw = tcr_region_attach(vpath[0], TCR_ATTACH_HOST);
	ck_assert_ptr_nonnull(raw);
	both_get(ta, tb, pa, pb, 7, 104);
	d = tcr_region_desc(raw, pa[0].idx);
	ck_assert_ptr_nonnull(d);
	d->allow_mask = 0xffffffffu;
	vnf_post(ta, &pa[0], VNF_VERDICT_ALERT, 5);
	vnf_post(tb, &pb[0], VNF_VERDICT_ALLOW, 0);
	both_flush(ta, tb);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.verdict, CH_ALLOW);
	ck_assert_uint_eq(r.alert_rule, 5);
	ck_assert_uint_eq(r.alert_msg_len, VNF_ALERT_MSG_MAX);
	free(r.alert_msg);
	memset(longmsg, 'x', sizeof(longmsg));
	both_get(ta, tb, pa, pb, 7, 105);
	ck_assert_int_eq(vnf_post_alert(ta, &pa[0], 6, longmsg, sizeof(longmsg)), 0);
	vnf_post(tb, &pb[0], VNF_VERDICT_ALLOW, 0);
	both_flush(ta, tb);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.alert_msg_len, VNF_ALERT_MSG_MAX);
	free(r.alert_msg);
	/* A result nobody takes: ch_psched_destroy frees its message (LSan in SAN=1). */
	both_get(ta, tb, pa, pb, 8, 200);
	ck_assert_int_eq(vnf_post_alert(ta, &pa[0], 1, msg, sizeof(msg) - 1), 0);
	vnf_post(tb, &pb[0], VNF_VERDICT_ALLOW, 0);
	both_flush(ta, tb);
	tcr_region_destroy(raw);
	vnf_detach(ta);
	vnf_detach(tb);
}
END_TEST

/*
 * Results leave in each connection's arrival order (chh_pkt: connection
 * cookie % 7 + 1): a connection's younger descriptor waits for its older
 * one; another connection's does not.
 */
START_TEST(results_leave_in_each_connections_order)
{
	uint32_t hops[1] = { 0x1 };
	struct vnf_thread *t[2];
	struct vnf_pkt p0[4], p1[4];
	struct ch_result r[4];

	ck_assert_int_eq(add_vnf(2, CH_FAIL_CLOSED), 0);
	chain(1, 1, hops);
	t[0] = vnf_attach(vpath[0], 0, 100);
	t[1] = vnf_attach(vpath[0], 1, 100);

	/* One connection (2): round-robin, one each; the younger finishes first. */
	submit(1, 1, 1);
	submit(1, 2, 8);
	polls(2);
	ck_assert_int_eq(recv_now(t[0], p0, 4), 1);
	ck_assert_int_eq(recv_now(t[1], p1, 4), 1);
	allow_all(t[1], p1, 1);
	ck_assert_uint_eq(ch_psched_take(s, 1, r, 4), 0);	/* its older one not done */
	allow_all(t[0], p0, 1);
	ck_assert_uint_eq(ch_psched_take(s, 1, r, 4), 2);
	ck_assert_uint_eq(r[0].pkt.cookie, 1);
	ck_assert_uint_eq(r[1].pkt.cookie, 8);

	/* Two connections (3, 4): the younger leaves first. */
	submit(1, 1, 2);
	submit(1, 2, 3);
	polls(2);
	ck_assert_int_eq(recv_now(t[0], p0, 4), 1);
	ck_assert_int_eq(recv_now(t[1], p1, 4), 1);
	vnf_post(t[1], &p1[0], VNF_VERDICT_DENY, 9);
	vnf_flush(t[1]);
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 1, r, 4), 1);
	ck_assert_uint_eq(r[0].pkt.cookie, 3);
	ck_assert_uint_eq(r[0].verdict, CH_DENY);
	ck_assert_uint_eq(r[0].deny_rule, 9);
	allow_all(t[0], p0, 1);
	ck_assert_uint_eq(ch_psched_take(s, 1, r, 4), 1);
	ck_assert_uint_eq(r[0].pkt.cookie, 2);

	/*
	 * Connection 5 twice (4 on thread 0, 11 on thread 1), then
	 * connection 6 (5, thread 0): 11 and 5 are done, 4 is not; only 5
	 * leaves, then 4 and 11 in their order.
	 */
	submit(1, 1, 4);
	submit(1, 2, 11);
	submit(1, 3, 5);
	polls(2);
	ck_assert_int_eq(recv_now(t[0], p0, 4), 2);
	ck_assert_int_eq(recv_now(t[1], p1, 4), 1);
	ck_assert_uint_eq(p0[1].d.conn_id, 6);
	allow_all(t[1], p1, 1);
	allow_all(t[0], &p0[1], 1);
	ck_assert_uint_eq(ch_psched_take(s, 1, r, 4), 1);
	ck_assert_uint_eq(r[0].pkt.cookie, 5);
	ck_assert_uint_eq(ch_psched_settled(s, 1), 4);	/* 4 is older than 5 */
	allow_all(t[0], p0, 1);
	ck_assert_uint_eq(ch_psched_take(s, 1, r, 4), 2);
	ck_assert_uint_eq(r[0].pkt.cookie, 4);
	ck_assert_uint_eq(r[1].pkt.cookie, 11);
	/* All seven arrivals have left. */
	ck_assert_uint_eq(ch_psched_settled(s, 1), 7);
	vnf_detach(t[0]);
	vnf_detach(t[1]);
}
END_TEST

START_TEST(no_chain_and_bad_descriptors_are_denied)
{
	uint32_t hops[1] = { 0x1 };
	struct ch_result r[4];
	struct ch_pkt p;

	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 0);
	submit(2, 1, 1);		/* chain 2 has no table */
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 2, r, 4), 1);
	ck_assert_uint_eq(r[0].reason, CH_REASON_NO_CHAIN);
	ck_assert_uint_eq(r[0].verdict, CH_DENY);
	chain(2, 1, hops);
	chh_pkt(&p, 3, NBUFS, 10, 2);	/* buffer out of range */
	ch_psched_push(s, 2, &p, 1);
	chh_pkt(&p, 3, 1, SLOT, 3);	/* off + len beyond the slot */
	p.off = 1;
	ch_psched_push(s, 2, &p, 1);
	chh_pkt(&p, 4, 1, 10, 4);	/* another region than the chain's */
	ch_psched_push(s, 2, &p, 1);
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 2, r, 4), 3);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(r[i].reason, CH_REASON_BAD_DESC);
	/* Unknown VNFs or regions are refused. */
	{
		struct ch_chain_cfg c = { .region = 3, .nhops = 1,
					  .hop = { { .nvnfs = 1, .vnf = { 5 } } } };

		ck_assert_int_eq(ch_psched_chain_set(s, 0, &c, NULL), -EINVAL);
		c.hop[0].vnf[0] = 0;
		c.region = 9;
		ck_assert_int_eq(ch_psched_chain_set(s, 0, &c, NULL), -EINVAL);
		ck_assert_int_eq(ch_psched_chain_set(s, 9, &c, NULL), -EINVAL);
	}
}
END_TEST

/* A hostile VNF: raw access to its own region, as a compromised VNF has. */
struct raw {
	struct tcr_region *r;
	struct tcr_chan c;
};

static void raw_attach(struct raw *w, const char *path)
{
	w->r = tcr_region_attach(path, TCR_ATTACH_HOST);
	ck_assert_ptr_nonnull(w->r);
	ck_assert_int_eq(tcr_chan_attach(&w->c, w->r, 0, 0), 0);
}

/* Take everything on RX; returns the first data descriptor's index or -1. */
static int raw_take_data(struct raw *w)
{
	uint32_t idx[16];
	int n = tcr_ring_dequeue_burst(&w->c.ring[TCR_CH_RX], idx, 16), data_idx = -1;

	for (int i = 0; i < n; i++) {
		if (tcr_region_desc(w->r, idx[i])->op == TCR_OP_DATA)
			data_idx = (int)idx[i];
		else	/* control messages go back at once */
			ck_assert_int_eq(tcr_ring_enqueue_burst(&w->c.ring[TCR_CH_TX], &idx[i], 1), 1);
	}
	return data_idx;
}

START_TEST(garbage_verdict_denies_that_descriptor)
{
	uint32_t hops[1] = { 0x1 };
	struct ch_vnf_info info;
	struct ch_result r;
	struct raw w;
	uint32_t idx;
	int i;

	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 0);
	chain(0, 1, hops);
	raw_attach(&w, vpath[0]);
	submit(0, 1, 1);
	polls(2);
	i = raw_take_data(&w);
	ck_assert_int_ge(i, 0);
	idx = (uint32_t)i;
	/* Scribble: a bogus verdict, and every (h) field the scheduler owns. */
	memset(tcr_region_desc(w.r, idx), 0xa5, sizeof(struct tcr_desc));
	tcr_region_desc(w.r, idx)->arg = 12345;
	ck_assert_int_eq(tcr_ring_enqueue_burst(&w.c.ring[TCR_CH_TX], &idx, 1), 1);
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.verdict, CH_DENY);
	ck_assert_uint_eq(r.reason, CH_REASON_BAD_VERDICT);
	ck_assert_uint_eq(r.deny_vnf, 0);
	ck_assert_uint_eq(r.pkt.cookie, 1);	/* the scheduler's copy, not the scribble */
	ck_assert_uint_eq(r.pkt.buf, 1);
	ck_assert_int_eq(ch_psched_vnf_info(s, 0, &info), 0);
	ck_assert(!info.failed);
	ck_assert_uint_eq(info.bad_verdicts, 1);
	/* No verdict written at all (arg left 0) is just as bad. */
	submit(0, 2, 2);
	polls(2);
	idx = (uint32_t)raw_take_data(&w);
	ck_assert_int_eq(tcr_ring_enqueue_burst(&w.c.ring[TCR_CH_TX], &idx, 1), 1);
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.reason, CH_REASON_BAD_VERDICT);
	tcr_region_destroy(w.r);
}
END_TEST

static void foreign_index(bool twice)
{
	uint32_t hops[1] = { 0x1 };
	struct ch_vnf_info info;
	struct ch_result r;
	struct raw w;
	uint32_t bad[2];
	int i;

	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 0);
	chain(0, 1, hops);
	raw_attach(&w, vpath[0]);
	submit(0, 1, 1);
	polls(2);
	i = raw_take_data(&w);
	ck_assert_int_ge(i, 0);
	/* An index it was not given, or its own twice. */
	bad[0] = (uint32_t)i;
	bad[1] = twice ? (uint32_t)i : (uint32_t)(i + 7) % 64;
	tcr_region_desc(w.r, (uint32_t)i)->arg = VNF_VERDICT_ALLOW;
	ck_assert_int_eq(tcr_ring_enqueue_burst(&w.c.ring[TCR_CH_TX], bad, 2), 2);
	polls(2);
	ck_assert_int_eq(ch_psched_vnf_info(s, 0, &info), 0);
	ck_assert(info.failed);
	ck_assert_uint_eq(info.outstanding, 0);
	ck_assert_uint_eq(info.pool_free, 64);	/* nothing leaked */
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.verdict, CH_DENY);
	ck_assert_uint_eq(r.reason, CH_REASON_VNF_FAILED);
	ck_assert(tcr_chan_stale(&w.c));	/* its channel was closed */
	/* Fail-closed: new descriptors are denied at once. */
	submit(0, 2, 2);
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.reason, CH_REASON_VNF_FAILED);
	tcr_region_destroy(w.r);
}

START_TEST(foreign_index_fails_the_vnf)
{
	foreign_index(false);
}
END_TEST

START_TEST(duplicate_index_fails_the_vnf)
{
	foreign_index(true);
}
END_TEST

START_TEST(hung_vnf_fail_open_is_bypassed_then_restarts)
{
	uint32_t hops[2] = { 0x1, 0x2 };	/* [A (open, hangs)] then [B] */
	struct vnf_thread *ta, *tb;
	struct vnf_pkt pk[4];
	struct ch_vnf_info info;
	struct ch_result r;

	ck_assert_int_eq(add_vnf(1, CH_FAIL_OPEN), 0);
	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 1);
	chain(0, 2, hops);
	ta = vnf_attach(vpath[0], 0, 100);
	tb = vnf_attach(vpath[1], 0, 100);
	submit(0, 1, 1);
	polls(2);
	ck_assert_int_eq(recv_now(ta, pk, 4), 1);	/* and never answers */
	ck_assert_int_eq(recv_now(tb, pk, 4), 0);	/* B answers its grant */
	polls(2);
	chh_sleep_us(60000);				/* > hang_ns */
	polls(2);
	ck_assert_int_eq(ch_psched_vnf_info(s, 0, &info), 0);
	ck_assert(info.failed);
	ck_assert_uint_eq(info.pool_free, 64);
	ck_assert_int_eq(ch_psched_vnf_info(s, 1, &info), 0);
	ck_assert(!info.failed);			/* B idle, not hung */
	/* Bypassed: the descriptor went on to B. */
	ck_assert_int_eq(recv_now(tb, pk, 4), 1);
	vnf_post(tb, &pk[0], VNF_VERDICT_ALLOW, 0);
	vnf_flush(tb);
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.verdict, CH_ALLOW);
	ck_assert_uint_eq(r.bypassed, 1);
	ck_assert_uint_eq(r.hops, 2);
	/* Restart: the same thread handle reattaches by itself and rejoins. */
	ck_assert_int_eq(ch_psched_vnf_restart(s, 0, getpid()), 0);
	chh_sleep_us(3000);
	polls(2);
	ck_assert_int_eq(ch_psched_vnf_info(s, 0, &info), 0);
	ck_assert(!info.failed);
	ck_assert_uint_eq(info.epoch, 1);
	submit(0, 2, 2);
	polls(2);
	ck_assert_int_eq(recv_now(ta, pk, 4), 1);	/* grant again, then data */
	ck_assert_ptr_nonnull(pk[0].data);
	vnf_post(ta, &pk[0], VNF_VERDICT_ALLOW, 0);
	vnf_flush(ta);
	polls(2);
	ck_assert_int_eq(recv_now(tb, pk, 4), 1);
	vnf_post(tb, &pk[0], VNF_VERDICT_ALLOW, 0);
	vnf_flush(tb);
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.verdict, CH_ALLOW);
	ck_assert_uint_eq(r.bypassed, 0);
	vnf_detach(ta);
	vnf_detach(tb);
}
END_TEST

/*
 * A child that waits to be killed; not reaped by us, it is a zombie then.
 * It dies with the test's process too, should an assertion end that first.
 */
static pid_t idle_child(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return pid;
}

/*
 * A VNF whose process exited fails at the next check, a zombie included
 * (kill(2) still answers for one); its neighbour stays up.
 */
START_TEST(exited_vnf_process_fails_at_the_next_check_zombie_too)
{
	struct ch_vnf_info info;
	pid_t a, b;
	siginfo_t si;

	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 0);
	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 1);
	a = idle_child();
	b = idle_child();
	ck_assert_int_eq(ch_psched_vnf_set_pid(s, 0, a), 0);
	ck_assert_int_eq(ch_psched_vnf_set_pid(s, 1, b), 0);
	chh_sleep_us(3000);
	polls(2);				/* a check with both alive */
	ck_assert_int_eq(ch_psched_vnf_info(s, 0, &info), 0);
	ck_assert(!info.failed);
	ck_assert_int_eq(kill(a, SIGKILL), 0);	/* a exits, a zombie: not reaped */
	memset(&si, 0, sizeof(si));
	ck_assert_int_eq(waitid(P_PID, (id_t)a, &si, WEXITED | WNOWAIT), 0);
	ck_assert_int_eq(kill(a, 0), 0);	/* kill(2) alone says alive */
	chh_sleep_us(3000);
	polls(2);				/* the next check, not one that reads /proc */
	ck_assert_int_eq(ch_psched_vnf_info(s, 0, &info), 0);
	ck_assert(info.failed);
	ck_assert_int_eq(ch_psched_vnf_info(s, 1, &info), 0);
	ck_assert(!info.failed);
	ck_assert_int_eq(kill(b, SIGKILL), 0);
	ck_assert_int_eq(waitpid(a, NULL, 0), a);
	ck_assert_int_eq(waitpid(b, NULL, 0), b);
}
END_TEST

START_TEST(early_end_flags_reach_the_chain_counters)
{
	uint32_t hops[1] = { 0x1 };
	struct vnf_thread *t;

	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 0);
	chain(1, 1, hops);
	t = vnf_attach(vpath[0], 0, 100);
	vnf_report_early(t, 1, TCR_EARLY_INPUT_EMPTY);
	chh_sleep_us(3000);
	polls(1);
	ck_assert_uint_eq(tcr_counters_take_early(ch_psched_counters(s, 1)), TCR_EARLY_INPUT_EMPTY);
	ck_assert_uint_eq(tcr_counters_take_early(ch_psched_counters(s, 0)), 0);
	vnf_detach(t);
}
END_TEST

/* One liveness round of the scheduler (it copies counters every 2 ms). */
static void check_round(void)
{
	chh_sleep_us(3000);
	polls(1);
}

/*
 * A service thread raises early end from the numbers the packet
 * scheduler copies into its region: (a) when its RX ring is empty, which
 * the scheduler passes on only once nothing of the chain is in
 * processing; (b) when the output queue holds E, the receiver's mean per
 * period (closed periods of the chain's own counters).
 */
START_TEST(service_thread_raises_early_end_from_real_counters)
{
	uint32_t hops[1] = { 0x1 };
	struct vnf_early e = { 0 };
	struct tcr_chain_counters *cc;
	struct ch_result r[4];
	struct vnf_pkt pk[4];
	struct vnf_thread *t;

	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 0);
	chain(1, 1, hops);
	cc = ch_psched_counters(s, 1);
	t = vnf_attach(vpath[0], 0, 100);
	ck_assert_ptr_nonnull(t);
	submit(1, 1, 1);
	submit(1, 2, 2);
	polls(2);
	ck_assert_int_eq(recv_now(t, pk, 1), 1);
	vnf_early_note(&e, &pk[0]);
	ck_assert_uint_eq(vnf_early_check(&e, t), 0);	/* the second still waits on RX */
	vnf_post(t, &pk[0], VNF_VERDICT_ALLOW, 0);
	ck_assert_int_eq(recv_now(t, pk + 1, 3), 1);
	vnf_early_note(&e, &pk[1]);
	ck_assert_uint_eq(vnf_early_check(&e, t), TCR_EARLY_INPUT_EMPTY);
	/* Raised again while pending in the block: not twice. */
	vnf_early_note(&e, &pk[1]);
	ck_assert_uint_eq(vnf_early_check(&e, t), 0);
	check_round();
	ck_assert_uint_eq(tcr_counters_take_early(cc), 0);	/* descriptor 2 in processing */
	allow_all(t, pk + 1, 1);
	check_round();
	ck_assert_uint_eq(tcr_counters_take_early(cc), TCR_EARLY_INPUT_EMPTY);
	ck_assert_uint_eq(tcr_counters_take_early(ch_psched_counters(s, 0)), 0);

	/* New arrivals cancel an (a) that was not passed on yet. */
	submit(1, 3, 3);
	polls(2);
	ck_assert_int_eq(recv_now(t, pk, 3), 1);
	vnf_early_note(&e, &pk[0]);
	ck_assert_uint_eq(vnf_early_check(&e, t), TCR_EARLY_INPUT_EMPTY);
	check_round();					/* taken while 3 is in processing */
	submit(1, 4, 4);
	allow_all(t, pk, 1);
	check_round();
	ck_assert_uint_eq(tcr_counters_take_early(cc), 0);
	ck_assert_int_eq(recv_now(t, pk, 3), 1);
	allow_all(t, pk, 1);

	/* (b): the receiver took 1 per period; four results wait for it. */
	for (uint64_t p = 1; p <= 4; p++)
		tcr_counters_close_period(cc, p, 1);
	check_round();					/* copied to the VNF's block */
	ck_assert_uint_eq(tcr_counters_mean_taken(vnf_chain_counters(t, 1), VNF_EARLY_W), 1);
	ck_assert_uint_eq(tc_load_relaxed(&vnf_chain_counters(t, 1)->out_qlen), 4);
	submit(1, 5, 5);
	polls(2);
	ck_assert_int_eq(recv_now(t, pk, 3), 1);
	vnf_early_note(&e, &pk[0]);
	ck_assert_uint_eq(vnf_early_check(&e, t), TCR_EARLY_INPUT_EMPTY | TCR_EARLY_OUTPUT_FULL);
	allow_all(t, pk, 1);
	check_round();
	ck_assert_uint_eq(tcr_counters_take_early(cc), TCR_EARLY_INPUT_EMPTY | TCR_EARLY_OUTPUT_FULL);
	ck_assert_uint_eq(ch_psched_take(s, 1, r, 4), 4);
	ck_assert_uint_eq(ch_psched_take(s, 1, r, 4), 1);
	vnf_detach(t);
}
END_TEST

/* Algorithm 2 orders VMs by the arrival time of their output queue's head. */
START_TEST(out_head_tsc_is_the_oldest_result_waiting)
{
	uint32_t hops[1] = { 0x1 };
	struct tcr_counters_snap snap;
	struct ch_result r[4];
	struct vnf_pkt pk[4];
	struct vnf_thread *t;

	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 0);
	chain(1, 1, hops);
	t = vnf_attach(vpath[0], 0, 100);
	ck_assert_ptr_nonnull(t);
	for (uint32_t i = 1; i <= 2; i++) {
		struct ch_pkt p;

		chh_pkt(&p, 3, i, chh_fill(data, i, i, NULL), i);
		p.tsc = 1000 + i;
		ck_assert_uint_eq(ch_psched_push(s, 1, &p, 1), 1);
	}
	polls(2);
	check_round();
	ck_assert_int_eq(tcr_counters_snapshot(ch_psched_counters(s, 1), NULL, 64, &snap), 0);
	ck_assert_uint_eq(snap.out_head_tsc, 0);	/* in processing: nothing to take */
	ck_assert_int_eq(recv_now(t, pk, 4), 2);
	allow_all(t, pk, 2);
	check_round();
	ck_assert_int_eq(tcr_counters_snapshot(ch_psched_counters(s, 1), NULL, 64, &snap), 0);
	ck_assert_uint_eq(snap.out_qlen, 2);
	ck_assert_uint_eq(snap.out_head_tsc, 1001);
	ck_assert_uint_eq(ch_psched_take(s, 1, r, 1), 1);
	check_round();
	ck_assert_int_eq(tcr_counters_snapshot(ch_psched_counters(s, 1), NULL, 64, &snap), 0);
	ck_assert_uint_eq(snap.out_head_tsc, 1002);
	ck_assert_uint_eq(ch_psched_take(s, 1, r, 1), 1);
	check_round();
	ck_assert_int_eq(tcr_counters_snapshot(ch_psched_counters(s, 1), NULL, 64, &snap), 0);
	ck_assert_uint_eq(snap.out_head_tsc, 0);
	vnf_detach(t);
}
END_TEST

/*
 * The CPU scheduler bounds a queue length by the counters region's ring
 * size: a full input queue plus a full flight must read as valid, not as
 * bad counters (a 1-entry ring made every chain with 2 waiting "bad").
 */
START_TEST(counters_region_bounds_the_queue_lengths)
{
	struct ch_psched_cfg cfg = { .nchains = 2, .qcap = 1000, .max_flight = 500 };
	struct tcr_counters_snap snap;
	struct tcr_region *r;
	struct ch_psched *cs;
	char cpath[160];

	snprintf(cpath, sizeof(cpath), "%s/counters", dir);
	cfg.counters_path = cpath;
	cs = ch_psched_create(&cfg);
	ck_assert_ptr_nonnull(cs);
	r = tcr_region_attach(cpath, TCR_ATTACH_HOST | TCR_ATTACH_RDONLY);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_ge(r->geo.ring_size, 1500);
	tcr_counters_queues(ch_psched_counters(cs, 1), 1500, 1000, 0);
	ck_assert_int_eq(tcr_counters_snapshot(tcr_region_chain(r, 1), NULL, r->geo.ring_size,
					       &snap), 0);
	ck_assert_uint_eq(snap.in_qlen, 1500);
	tcr_region_destroy(r);
	ch_psched_destroy(cs);
	unlink(cpath);
}
END_TEST

START_TEST(deleted_chain_revokes_grants_after_last_descriptor)
{
	uint32_t hops[1] = { 0x1 };
	struct vnf_thread *t;
	struct vnf_pkt pk[4];
	struct ch_result r;
	struct raw w;
	uint32_t idx[16];
	int n, revokes = 0;

	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 0);
	chain(0, 1, hops);
	t = vnf_attach(vpath[0], 0, 100);
	submit(0, 1, 1);
	polls(2);
	ck_assert_int_eq(recv_now(t, pk, 4), 1);
	/* Delete while the descriptor is in flight: it finishes on its table. */
	ck_assert_int_eq(ch_psched_chain_set(s, 0, NULL, NULL), 0);
	polls(2);
	vnf_post(t, &pk[0], VNF_VERDICT_ALLOW, 0);
	vnf_flush(t);
	vnf_detach(t);
	raw_attach(&w, vpath[0]);	/* look at what comes next on RX */
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.verdict, CH_ALLOW);
	ck_assert_uint_ne(r.table_version, 0);
	polls(2);
	n = tcr_ring_dequeue_burst(&w.c.ring[TCR_CH_RX], idx, 16);
	for (int i = 0; i < n; i++) {
		struct tcr_desc *d = tcr_region_desc(w.r, idx[i]);

		revokes += d->op == TCR_OP_CTRL && d->flags == VNF_CTRL_REVOKE && d->aux == 3;
	}
	ck_assert_int_eq(revokes, 1);
	tcr_region_destroy(w.r);
}
END_TEST

START_TEST(flow_table_is_granted_with_the_region)
{
	uint32_t hops[1] = { 0x1 };
	struct vnf_thread *t;
	struct vnf_pkt pk[4];
	struct vnf_flow f;
	struct ch_flows *fl;
	struct ch_flow_key k = { .family = 6, .l4proto = 6, .sport = 5555, .dport = 80 };
	struct ch_result r;
	struct ch_pkt p;
	char fpath[160];
	int fi;

	snprintf(fpath, sizeof(fpath), "%s/flows", dir);
	fl = ch_flows_create(fpath, 16);
	ck_assert_ptr_nonnull(fl);
	ck_assert_int_eq(ch_psched_region_flows(s, 7, fpath), -ENOENT);
	ck_assert_int_eq(ch_psched_region_flows(s, 3, fpath), 0);
	ck_assert_int_eq(ch_psched_region_flows(s, 3, fpath), -EEXIST);
	fi = ch_flow_open(fl, &k, CH_FLOW_ESTABLISHED);
	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 0);
	chain(0, 1, hops);
	t = vnf_attach(vpath[0], 0, 100);
	chh_pkt(&p, 3, 1, chh_fill(data, 1, 1, NULL), 1);
	p.flow = (uint32_t)fi;
	ck_assert_uint_eq(ch_psched_push(s, 0, &p, 1), 1);
	polls(2);
	ck_assert_int_eq(recv_now(t, pk, 4), 1);
	ck_assert_uint_eq(pk[0].d.flow, (uint32_t)fi);
	ck_assert_int_eq(vnf_flow(t, &pk[0], &f), 0);
	ck_assert_uint_eq(f.family, 6);
	ck_assert_uint_eq(f.sport, 5555);
	ck_assert_uint_eq(f.state, CH_FLOW_ESTABLISHED);
	vnf_post(t, &pk[0], VNF_VERDICT_ALLOW, 0);
	vnf_flush(t);
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	/* The grace period: the chain finished what arrived before the close. */
	{
		struct tcr_counters_snap c;

		tcr_counters_snapshot(ch_psched_counters(s, 0), NULL, 64, &c);
		ck_assert_int_eq(ch_flow_close(fl, (uint32_t)fi, c.arrivals, 0), 0);
		ck_assert_uint_eq(ch_flow_reclaim(fl, c.finished, 0), 1);
	}
	vnf_detach(t);
	ch_flows_destroy(fl);
	unlink(fpath);
}
END_TEST

/*
 * Guests: the VNF region gets the header name asked for, and a grant
 * carries the data region's header name, by which a VNF in guest mode
 * maps it (here from a directory of files standing in for /dev/tochain);
 * the flow table is not mapped in guest mode.
 */
START_TEST(grant_carries_the_header_name_for_guests)
{
	struct ch_vnf_cfg c = { .name = "g", .region_name = "vmx.vnf-g", .nthreads = 1 };
	uint32_t hops[1] = { 0x1 };
	struct tcr_region *vr;
	struct vnf_thread *t;
	struct vnf_pkt pk[4];
	struct vnf_flow f;
	struct ch_flows *fl;
	struct ch_flow_key k = { .family = 4, .l4proto = 6, .sport = 1, .dport = 2 };
	struct ch_result r;
	struct ch_pkt p;
	char fpath[160], link_path[160], long_path[VNF_REGION_SLOT];
	int fi;

	ck_assert_int_eq(ch_psched_region_name(s, 3, "a/b"), -EINVAL);
	ck_assert_int_eq(ch_psched_region_name(s, 3, ""), -EINVAL);
	ck_assert_int_eq(ch_psched_region_name(s, 7, "vmx"), -ENOENT);
	ck_assert_int_eq(ch_psched_region_name(s, 3, "vmx"), 0);
	ck_assert_int_eq(ch_psched_region_name(s, 3, "vmx"), -EEXIST);
	/* A path that leaves no room for the name in a grant's slot. */
	memset(long_path, 'p', sizeof(long_path) - 3);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 3] = '\0';
	ck_assert_int_eq(ch_psched_region_add(s, 5, long_path, NBUFS, SLOT), 0);
	ck_assert_int_eq(ch_psched_region_name(s, 5, "vmx.out"), -ENAMETOOLONG);
	c.region_name = "bad/name";
	snprintf(vpath[0], sizeof(vpath[0]), "%s/vnf0", dir);
	c.region_path = vpath[0];
	ck_assert_int_eq(ch_psched_vnf_add(s, &c), -EINVAL);
	c.region_name = "vmx.vnf-g";
	ck_assert_int_eq(ch_psched_vnf_add(s, &c), 0);
	vr = tcr_region_attach(vpath[0], TCR_ATTACH_HOST | TCR_ATTACH_RDONLY);
	ck_assert_ptr_nonnull(vr);
	ck_assert_str_eq(vr->name, "vmx.vnf-g");
	tcr_region_destroy(vr);

	snprintf(fpath, sizeof(fpath), "%s/flows", dir);
	fl = ch_flows_create(fpath, 16);
	ck_assert_ptr_nonnull(fl);
	ck_assert_int_eq(ch_psched_region_flows(s, 3, fpath), 0);
	fi = ch_flow_open(fl, &k, CH_FLOW_ESTABLISHED);
	snprintf(link_path, sizeof(link_path), "%s/vmx", dir);
	ck_assert_int_eq(link(dpath, link_path), 0);
	chain(0, 1, hops);
	t = vnf_attach_guest(vpath[0], 0, 100, dir);
	ck_assert_ptr_nonnull(t);
	chh_pkt(&p, 3, 1, chh_fill(data, 1, 1, "GUEST"), 1);
	p.flow = (uint32_t)fi;
	ck_assert_uint_eq(ch_psched_push(s, 0, &p, 1), 1);
	polls(2);
	ck_assert_int_eq(vnf_recv(t, pk, 4, 200), 1);
	ck_assert_ptr_nonnull(pk[0].data);
	ck_assert(memmem(pk[0].data, pk[0].len, "GUEST", 5) != NULL);
	ck_assert_int_eq(vnf_flow(t, &pk[0], &f), -ENOENT);
	vnf_post(t, &pk[0], VNF_VERDICT_ALLOW, 0);
	vnf_flush(t);
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 0, &r, 1), 1);
	ck_assert_uint_eq(r.verdict, CH_ALLOW);
	vnf_detach(t);
	ch_flows_destroy(fl);
	unlink(fpath);
	unlink(link_path);
}
END_TEST

/* A VNF added with dispatch policy @dispatch (ch_vnf_cfg.dispatch). */
static int add_vnf_dispatch(uint32_t threads, uint32_t dispatch)
{
	struct ch_vnf_cfg c = { .name = "d", .nthreads = threads, .dispatch = dispatch };
	int id;

	snprintf(vpath[3], sizeof(vpath[3]), "%s/vnfd%u", dir, dispatch);
	c.region_path = vpath[3];
	id = ch_psched_vnf_add(s, &c);
	ck_assert_int_ge(id, 0);
	return id;
}

static void submit_conn(uint32_t chain_id, uint32_t buf, uint64_t cookie, uint64_t conn)
{
	struct ch_pkt p;
	uint32_t len = chh_fill(data, buf, cookie, NULL);

	chh_pkt(&p, 3, buf, len, cookie);
	p.conn_id = conn;
	p.seq = cookie;
	ck_assert_uint_eq(ch_psched_push(s, chain_id, &p, 1), 1);
}

/*
 * 3 service threads, 8 connections x 6 descriptors, interleaved: under
 * CH_DISPATCH_FLOW every connection is seen by exactly one thread, in
 * submission order; under round-robin (the default) each thread gets a
 * third and connections are spread.
 */
static void run_dispatch(uint32_t dispatch, uint32_t *per_thread, uint32_t *threads_per_conn)
{
	uint32_t hops[1] = { 0x1 };
	struct vnf_thread *t[3];
	struct vnf_pkt pk[64];
	struct ch_result r[64];
	int conn_thread[8], last_seq[8];
	uint32_t got = 0, taken = 0;

	ck_assert_int_eq(add_vnf_dispatch(3, dispatch), 0);
	chain(0, 1, hops);
	for (int i = 0; i < 3; i++) {
		t[i] = vnf_attach(vpath[3], (uint32_t)i, 100);
		ck_assert_ptr_nonnull(t[i]);
		per_thread[i] = 0;
	}
	for (int c = 0; c < 8; c++) {
		conn_thread[c] = -1;
		last_seq[c] = -1;
		threads_per_conn[c] = 0;
	}
	/* In rounds of 24 (the VNF region and queues are 64 deep). */
	for (int round = 0; round < 2; round++) {
		for (int k = 0; k < 24; k++) {
			int seq = round * 24 + k;

			submit_conn(0, (uint32_t)(seq % NBUFS), (uint64_t)seq,
				    0x10000u * (uint64_t)(seq % 8 + 1) + 7);
		}
		polls(4);
		for (int i = 0; i < 3; i++) {
			int n = recv_now(t[i], pk, 64);

			for (int j = 0; j < n; j++) {
				int c = (int)(pk[j].d.conn_id / 0x10000u) - 1;

				ck_assert(c >= 0 && c < 8);
				if (conn_thread[c] != i) {
					threads_per_conn[c]++;
					conn_thread[c] = i;
				}
				if (dispatch == CH_DISPATCH_FLOW) {
					/* one thread sees a connection in stream order */
					ck_assert_int_gt((int)pk[j].d.seq, last_seq[c]);
					last_seq[c] = (int)pk[j].d.seq;
				}
				vnf_post(t[i], &pk[j], VNF_VERDICT_ALLOW, 0);
				per_thread[i]++;
				got++;
			}
			vnf_flush(t[i]);
		}
		polls(4);
		taken += ch_psched_take(s, 0, r, 64);
	}
	ck_assert_uint_eq(got, 48);
	ck_assert_uint_eq(taken, 48);
	for (int i = 0; i < 3; i++)
		vnf_detach(t[i]);
}

START_TEST(flow_dispatch_keeps_a_connection_on_one_thread)
{
	uint32_t per[3], tpc[8], used = 0;

	run_dispatch(CH_DISPATCH_FLOW, per, tpc);
	for (int c = 0; c < 8; c++)
		ck_assert_uint_eq(tpc[c], 1);
	for (int i = 0; i < 3; i++)
		used += per[i] > 0;
	/* 8 connections over 3 threads: the hash uses more than one */
	ck_assert_uint_ge(used, 2);
}
END_TEST

START_TEST(round_robin_dispatch_spreads_evenly)
{
	uint32_t per[3], tpc[8], spread = 0;

	run_dispatch(CH_DISPATCH_RR, per, tpc);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(per[i], 16);
	for (int c = 0; c < 8; c++)
		spread += tpc[c] > 1;
	ck_assert_uint_gt(spread, 0);
}
END_TEST

/*
 * Only the service threads planned to run get work (ch_psched_plan.c):
 * a VNF with 3 threads of which 1, then all 3, then 2 run.  Round-robin
 * spreads over the running ones; by flow a connection of a thread that
 * still runs keeps it, and no descriptor reaches a stopped thread.
 */
static void run_round(struct vnf_thread **t, uint32_t *per, int *conn_thread, bool flow)
{
	struct ch_result r[64];
	struct vnf_pkt pk[64];

	for (int k = 0; k < 24; k++)
		submit_conn(0, (uint32_t)k, (uint64_t)k, 0x10000u * (uint64_t)(k % 8 + 1) + 7);
	polls(4);
	for (int i = 0; i < 3; i++) {
		int n = recv_now(t[i], pk, 64);

		per[i] = (uint32_t)n;
		for (int j = 0; j < n && flow; j++) {
			int c = (int)(pk[j].d.conn_id / 0x10000u) - 1;

			ck_assert(c >= 0 && c < 8);
			if (conn_thread[c] >= 0)
				ck_assert_int_eq(conn_thread[c], i);
			conn_thread[c] = i;
		}
		allow_all(t[i], pk, n);
	}
	polls(4);
	ck_assert_uint_eq(ch_psched_take(s, 0, r, 64), 24);
}

static void run_threads_case(uint32_t dispatch)
{
	uint32_t hops[1] = { 0x1 }, per[3];
	int prev[8], now[8];
	struct vnf_thread *t[3];

	ck_assert_int_eq(add_vnf_dispatch(3, dispatch), 0);
	chain(0, 1, hops);
	for (int i = 0; i < 3; i++) {
		t[i] = vnf_attach(vpath[3], (uint32_t)i, 100);
		ck_assert_ptr_nonnull(t[i]);
	}
	ck_assert_uint_eq(ch_psched_vnf_running(s, 0), 3);
	ck_assert_int_eq(ch_psched_vnf_run_threads(s, 0, 0), -EINVAL);
	ck_assert_int_eq(ch_psched_vnf_run_threads(s, 0, 4), -EINVAL);
	ck_assert_int_eq(ch_psched_vnf_run_threads(s, 1, 1), -EINVAL);
	ck_assert_int_eq(ch_psched_vnf_run_threads(s, 0, 1), 0);
	ck_assert_uint_eq(ch_psched_vnf_running(s, 0), 1);
	memset(now, -1, sizeof(now));
	run_round(t, per, now, dispatch == CH_DISPATCH_FLOW);
	ck_assert_uint_eq(per[0], 24);
	ck_assert_uint_eq(per[1] + per[2], 0);

	ck_assert_int_eq(ch_psched_vnf_run_threads(s, 0, 3), 0);
	memset(prev, -1, sizeof(prev));
	run_round(t, per, prev, dispatch == CH_DISPATCH_FLOW);
	if (dispatch == CH_DISPATCH_RR)
		for (int i = 0; i < 3; i++)
			ck_assert_uint_eq(per[i], 8);

	ck_assert_int_eq(ch_psched_vnf_run_threads(s, 0, 2), 0);
	memset(now, -1, sizeof(now));
	run_round(t, per, now, dispatch == CH_DISPATCH_FLOW);
	ck_assert_uint_eq(per[2], 0);
	if (dispatch == CH_DISPATCH_RR)
		ck_assert_uint_eq(per[0], 12);
	for (int c = 0; c < 8 && dispatch == CH_DISPATCH_FLOW; c++)
		if (prev[c] >= 0 && prev[c] < 2)
			ck_assert_int_eq(now[c], prev[c]);	/* its thread still runs */
	for (int i = 0; i < 3; i++)
		vnf_detach(t[i]);
}

START_TEST(round_robin_dispatches_only_to_running_threads)
{
	run_threads_case(CH_DISPATCH_RR);
}
END_TEST

START_TEST(flow_dispatch_moves_only_connections_of_stopped_threads)
{
	run_threads_case(CH_DISPATCH_FLOW);
}
END_TEST

START_TEST(bad_dispatch_policy_is_refused)
{
	struct ch_vnf_cfg c = { .name = "x", .nthreads = 1, .dispatch = 2 };

	snprintf(vpath[3], sizeof(vpath[3]), "%s/vnfbad", dir);
	c.region_path = vpath[3];
	ck_assert_int_eq(ch_psched_vnf_add(s, &c), -EINVAL);
	ck_assert_int_ne(access(vpath[3], F_OK), 0);
}
END_TEST

/* ---- run by the owner's epoll loop (ch_psched_loop.c) ---- */

#define TAG	(7ull << 32)

/*
 * Attach the scheduler to a new epoll set, one VNF of one thread, chain 1
 * through it, and this process as the VNF's (the bell is taken through a
 * pidfd of our own pid); the liveness check of the first poll takes it.
 */
static int loop_setup(struct vnf_thread **t)
{
	uint32_t hops[1] = { 0x1 };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ck_assert_int_ge(ep, 0);
	s->cfg.hang_ns = 600000000000ull;	/* the test's pauses are no hang */
	ck_assert_int_eq(ch_psched_loop_attach(s, ep, TAG), 0);
	ck_assert_int_eq(add_vnf(1, CH_FAIL_CLOSED), 0);
	chain(1, 1, hops);
	*t = vnf_attach(vpath[0], 0, 100);
	ck_assert_ptr_nonnull(*t);
	ck_assert_int_eq(ch_psched_vnf_set_pid(s, 0, getpid()), 0);
	polls(1);
	return ep;
}

/* Verdicts of @t for descriptor @cookie wake the loop that sleeps on @ep. */
static void verdict_rings(struct vnf_thread *t, int ep, uint64_t cookie)
{
	struct epoll_event ev;
	struct ch_result r[2];
	struct vnf_pkt pk[2];
	uint64_t ns = 0;

	submit(1, (uint32_t)cookie, cookie);
	polls(2);
	ck_assert(ch_psched_sleep_prepare(s, &ns));
	ck_assert_uint_eq(ns, 50000000ull);	/* a bell, not a nap */
	ck_assert_int_eq(epoll_wait(ep, &ev, 1, 0), 0);	/* nothing rings before the verdict */
	ck_assert_int_eq(recv_now(t, pk, 2), 1);
	ck_assert_int_eq(vnf_post(t, &pk[0], VNF_VERDICT_ALLOW, 0), 0);
	ck_assert_int_eq(vnf_flush(t), 0);
	ck_assert_int_eq(epoll_wait(ep, &ev, 1, 0), 1);
	ck_assert_uint_eq(ev.data.u64 & ~0xffffffffull, TAG);
	ch_psched_sleep_done(s);
	ch_psched_bell_rang(s, (uint32_t)ev.data.u64);
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 1, r, 2), 1);
	ck_assert_uint_eq(r[0].pkt.cookie, cookie);
}

/*
 * Issue 14: a VNF thread's verdicts wake a loop that sleeps in epoll: its
 * bell (an eventfd of its process, taken through the pidfd) is in the
 * set, and its thread writes it only when the loop armed its verdict ring
 * before sleeping.  The sleep is then the long one (50 ms), not a nap.
 */
START_TEST(loop_sleeps_in_epoll_and_verdicts_ring_it)
{
	struct epoll_event ev;
	struct ch_result r[2];
	struct vnf_pkt pk[2];
	struct vnf_thread *t;
	uint64_t ns = 0;
	int ep = loop_setup(&t);

	ck_assert_int_ge(s->vnf[0].vc[0].bell, 0);
	verdict_rings(t, ep, 1);

	/* Not armed (the loop is awake): verdicts ring nothing. */
	submit(1, 2, 2);
	polls(2);
	ck_assert_int_eq(recv_now(t, pk, 2), 1);
	ck_assert_int_eq(vnf_post(t, &pk[0], VNF_VERDICT_ALLOW, 0), 0);
	ck_assert_int_eq(vnf_flush(t), 0);
	ck_assert_int_eq(epoll_wait(ep, &ev, 1, 0), 0);
	/* Verdicts already there when the loop arms: it must not sleep. */
	ck_assert(!ch_psched_sleep_prepare(s, &ns));
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 1, r, 2), 1);
	/* Nothing out: the sleep is bounded only for the liveness checks. */
	ck_assert(ch_psched_sleep_prepare(s, &ns));
	ck_assert_uint_eq(ns, 50000000ull);
	ch_psched_sleep_done(s);
	vnf_detach(t);
}
END_TEST

/*
 * A restarted VNF's new process announces its bell, often under the dead
 * process's number (the same binary opens the same files).  Its verdicts
 * must wake the loop whether it attaches before the liveness check after
 * the restart (the scheduler forgets the old bells when it reopens the
 * channels) or after it (the reopened channel no longer holds the old
 * announcement, which would be taken, refused and remembered).
 */
START_TEST(loop_takes_a_restarted_vnfs_bell)
{
	struct vnf_thread *t;
	int ep = loop_setup(&t);

	verdict_rings(t, ep, 1);
	for (int between = 0; between < 2; between++) {
		vnf_detach(t);	/* the process dies; its bell's number is free again */
		ck_assert_int_eq(ch_psched_vnf_restart(s, 0, getpid()), 0);
		chh_sleep_us(3000);	/* the next liveness check reopens the channel */
		polls(1);
		if (between) {
			chh_sleep_us(3000);	/* a check before the new process attaches */
			polls(1);
		}
		t = vnf_attach(vpath[0], 0, 100);
		ck_assert_ptr_nonnull(t);
		chh_sleep_us(3000);	/* the check that takes the new bell */
		polls(1);
		verdict_rings(t, ep, 2 + (uint64_t)between);
	}
	vnf_detach(t);
}
END_TEST

/*
 * The announcement is a hint (TRUST in ch_psched_loop.c): a file that is
 * not an eventfd is refused and the thread napped while it holds work; a
 * bell that rings without verdicts is muted after FRUITLESS_MAX (8)
 * wake-ups in a row, its thread napped meanwhile, and heard again after
 * FRUITLESS_NS (1 ms).
 */
START_TEST(loop_refuses_a_non_eventfd_and_mutes_a_fruitless_bell)
{
	struct tcr_channel *ch;
	struct epoll_event ev;
	struct vnf_thread *t;
	uint64_t one = 1, ns = 0;
	int ep = loop_setup(&t), p[2], efd;

	ch = tcr_region_channel(s->vnf[0].r, 0);
	ck_assert_int_eq(pipe(p), 0);
	tc_store_relaxed(&ch->bell, (uint32_t)p[0] + 1);
	chh_sleep_us(3000);	/* the next liveness check */
	polls(1);
	ck_assert_int_lt(s->vnf[0].vc[0].bell, 0);
	submit(1, 1, 1);
	polls(2);		/* the thread holds work and has no bell */
	ck_assert(ch_psched_sleep_prepare(s, &ns));
	ck_assert_uint_eq(ns, 50000ull);
	ch_psched_sleep_done(s);

	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(efd, 0);
	tc_store_relaxed(&ch->bell, (uint32_t)efd + 1);
	chh_sleep_us(3000);
	polls(1);
	ck_assert_int_ge(s->vnf[0].vc[0].bell, 0);
	for (int i = 0; i < 8; i++) {
		ck_assert(ch_psched_sleep_prepare(s, &ns));
		ck_assert_uint_eq(ns, 50000000ull);	/* heard: the long sleep */
		ck_assert_int_eq(write(efd, &one, sizeof(one)), (ssize_t)sizeof(one));
		ck_assert_int_eq(epoll_wait(ep, &ev, 1, 0), 1);
		ch_psched_sleep_done(s);
		ch_psched_bell_rang(s, (uint32_t)ev.data.u64);
		polls(1);	/* no verdict */
	}
	ck_assert(ch_psched_sleep_prepare(s, &ns));
	ck_assert_uint_eq(ns, 50000ull);	/* muted: napped */
	ch_psched_sleep_done(s);
	ck_assert_int_eq(write(efd, &one, sizeof(one)), (ssize_t)sizeof(one));
	ck_assert_int_eq(epoll_wait(ep, &ev, 1, 0), 0);
	chh_sleep_us(2000);
	ck_assert(ch_psched_sleep_prepare(s, &ns));
	ck_assert_uint_eq(ns, 50000000ull);	/* heard again */
	ch_psched_sleep_done(s);
	ck_assert_int_eq(epoll_wait(ep, &ev, 1, 0), 1);
	vnf_detach(t);
	close(efd);
	close(p[0]);
	close(p[1]);
}
END_TEST

/*
 * Issue 15, in the loop: while the VNF thread holding a chain's work has
 * not taken it (frozen by the CPU scheduler outside its slot), the loop
 * sleeps the long sleep (the thread's bell is heard); what arrives
 * meanwhile on another chain passes at the loop's next turn; the VNF's
 * verdicts ring the loop, whose next poll releases both of its chain's
 * descriptors in order.
 */
START_TEST(loop_sleeps_on_untaken_work_and_its_verdicts_wake_it)
{
	struct epoll_event ev;
	struct ch_result r[4];
	struct vnf_pkt pk[4];
	struct vnf_thread *t;
	uint64_t ns = 0;
	int ep = loop_setup(&t);

	chain(2, 0, NULL);	/* pass-through, nothing in processing */
	submit(1, 1, 1);
	polls(2);		/* on the VNF thread's RX ring, not taken */
	ck_assert(ch_psched_sleep_prepare(s, &ns));
	ck_assert_uint_eq(ns, 50000000ull);
	ck_assert_int_eq(epoll_wait(ep, &ev, 1, 0), 0);
	ch_psched_sleep_done(s);
	submit(1, 2, 2);
	submit(2, 3, 3);
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 2, r, 4), 1);
	ck_assert_uint_eq(r[0].pkt.cookie, 3);

	ck_assert(ch_psched_sleep_prepare(s, &ns));	/* both of chain 1 untaken */
	ck_assert_int_eq(recv_now(t, pk, 4), 2);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(vnf_post(t, &pk[i], VNF_VERDICT_ALLOW, 0), 0);
	ck_assert_int_eq(vnf_flush(t), 0);	/* rings the loop's bell */
	ck_assert_int_eq(epoll_wait(ep, &ev, 1, 0), 1);
	ch_psched_sleep_done(s);
	ch_psched_bell_rang(s, (uint32_t)ev.data.u64);
	polls(2);
	ck_assert_uint_eq(ch_psched_take(s, 1, r, 4), 2);
	for (uint64_t i = 0; i < 2; i++)
		ck_assert_uint_eq(r[i].pkt.cookie, i + 1);
	vnf_detach(t);
}
END_TEST

/*
 * Issue 14, in the loop: the TOE pushes a turn's descriptors and the same
 * turn's poll admits all of them, in order, with no wake-up at all.
 */
START_TEST(pushes_of_a_turn_are_admitted_by_its_poll_in_order)
{
	struct ch_result r[4];
	struct ch_pkt p;

	chain(2, 0, NULL);	/* pass-through: the results show the admission */
	for (uint32_t i = 1; i <= 3; i++) {
		p = pkt(i, i);
		ck_assert_uint_eq(ch_psched_push(s, 2, &p, 1), 1);
	}
	ck_assert_uint_eq(ch_psched_out_len(s, 2), 0);
	polls(2);
	ck_assert_uint_eq(ch_psched_out_len(s, 2), 3);
	ck_assert_uint_eq(ch_psched_out_len(s, 99), 0);
	ck_assert_uint_eq(ch_psched_take(s, 2, r, 4), 3);
	for (uint64_t i = 0; i < 3; i++)
		ck_assert_uint_eq(r[i].pkt.cookie, i + 1);
}
END_TEST

int main(void)
{
	int rc;
	Suite *su = suite_create("ch_psched");
	TCase *tc = tcase_create("sched");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, parallel_hop_then_next_hop_first_deny_stops);
	tcase_add_test(tc, answer_copied_bounded_first_deny_wins);
	tcase_add_test(tc, alert_passes_with_rule_and_message);
	tcase_add_test(tc, results_leave_in_each_connections_order);
	tcase_add_test(tc, no_chain_and_bad_descriptors_are_denied);
	tcase_add_test(tc, garbage_verdict_denies_that_descriptor);
	tcase_add_test(tc, foreign_index_fails_the_vnf);
	tcase_add_test(tc, duplicate_index_fails_the_vnf);
	tcase_add_test(tc, hung_vnf_fail_open_is_bypassed_then_restarts);
	tcase_add_test(tc, exited_vnf_process_fails_at_the_next_check_zombie_too);
	tcase_add_test(tc, early_end_flags_reach_the_chain_counters);
	tcase_add_test(tc, service_thread_raises_early_end_from_real_counters);
	tcase_add_test(tc, out_head_tsc_is_the_oldest_result_waiting);
	tcase_add_test(tc, counters_region_bounds_the_queue_lengths);
	tcase_add_test(tc, deleted_chain_revokes_grants_after_last_descriptor);
	tcase_add_test(tc, flow_table_is_granted_with_the_region);
	tcase_add_test(tc, flow_dispatch_keeps_a_connection_on_one_thread);
	tcase_add_test(tc, round_robin_dispatch_spreads_evenly);
	tcase_add_test(tc, bad_dispatch_policy_is_refused);
	tcase_add_test(tc, round_robin_dispatches_only_to_running_threads);
	tcase_add_test(tc, flow_dispatch_moves_only_connections_of_stopped_threads);
	tcase_add_test(tc, pushes_of_a_turn_are_admitted_by_its_poll_in_order);
	tcase_add_test(tc, loop_sleeps_in_epoll_and_verdicts_ring_it);
	tcase_add_test(tc, loop_sleeps_on_untaken_work_and_its_verdicts_wake_it);
	tcase_add_test(tc, loop_takes_a_restarted_vnfs_bell);
	tcase_add_test(tc, loop_refuses_a_non_eventfd_and_mutes_a_fruitless_bell);
	tcase_add_test(tc, grant_carries_the_header_name_for_guests);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(su, tc);
	if (make_base())
		return 1;
	rc = tc_run_suite(su);
	remove_base();
	return rc;
}
