// SPDX-License-Identifier: MIT
/*
 * Unit tests for vnfs/runtime/vnf_rt.c and vnfs/runtime/vnf_null.c, with the test playing
 * the scheduler by hand on a VNF region: attach errors, grants and
 * revokes, bounds of work descriptors, verdict fields, reattach after a
 * channel reopen, the null kind's verdicts and checksum.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <ftw.h>
#include <time.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/desc.h>
#include <tochain/pool.h>
#include <tochain/region.h>
#include <tochain/ring.h>

#include "tochain/ch_flow.h"
#include "tc_check.h"
#include "vnf_null.h"

static char dir[96], vpath[128], dpath[128];
static struct tcr_region *vr, *dr;
static struct tcr_pool *pool;
static struct tcr_chan ch;

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
	struct tcr_params vp = { .name = "v", .kind = TCR_KIND_HOST, .nbufs = 16,
				 .slot_size = VNF_REGION_SLOT, .nchannels = 2,
				 .nchains = VNF_REGION_CHAINS };
	struct tcr_params dp = { .name = "d", .kind = TCR_KIND_HOST, .nbufs = 4,
				 .slot_size = 256, .nchannels = 1 };

	snprintf(dir, sizeof(dir), "%s/%d", base, getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(vpath, sizeof(vpath), "%s/vnf", dir);
	snprintf(dpath, sizeof(dpath), "%s/data", dir);
	vr = tcr_region_create(vpath, &vp);
	dr = tcr_region_create(dpath, &dp);
	pool = tcr_pool_create(vr);
	ck_assert(vr && dr && pool);
	ck_assert_int_eq(tcr_chan_open(&ch, vr, 0), 0);
	memcpy(tcr_region_slot(dr, 2), "hello, world", 12);
}

static void teardown(void)
{
	tcr_pool_destroy(pool);
	tcr_region_destroy(vr);
	tcr_region_destroy(dr);
	unlink(vpath);
	unlink(dpath);
	rmdir(dir);
}

/* Scheduler side: send a work descriptor, return its index. */
static uint32_t send_desc(uint16_t op, uint16_t flags, uint64_t aux, uint32_t off, uint32_t len,
			  const char *slot_text)
{
	struct tcr_desc d;
	uint32_t idx;

	ck_assert_uint_eq(tcr_pool_alloc(pool, &idx, 1), 1);
	memset(&d, 0, sizeof(d));
	d.slot = idx;
	d.op = op;
	d.flags = flags;
	d.aux = aux;
	d.off = off;
	d.len = len;
	d.chain = 5;
	d.conn_id = 77;
	tcr_desc_store(vr, idx, &d);
	if (slot_text)
		memcpy(tcr_region_slot(vr, idx), slot_text, strlen(slot_text));
	ck_assert_int_eq(tcr_chan_send(&ch, pool, &idx, 1), 1);
	return idx;
}

static int take_back(uint32_t *idx, unsigned int n)
{
	return tcr_chan_recv(&ch, pool, TCR_CH_TX, idx, n);
}

START_TEST(attach_errors)
{
	errno = 0;
	ck_assert_ptr_null(vnf_attach("/nonexistent/region", 0, 0));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_null(vnf_attach(vpath, VNF_MAX_THREADS, 0));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(vnf_attach(vpath, 3, 0));		/* no such channel */
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(vnf_attach(vpath, 1, 20));		/* exists, not opened */
	ck_assert_int_eq(errno, ENOTCONN);
	ck_assert_int_eq(vnf_region_threads(vpath), 2);
}
END_TEST

START_TEST(grant_data_bounds_verdict_revoke)
{
	struct vnf_thread *t = vnf_attach(vpath, 0, 100);
	struct vnf_pkt pk[8];
	uint32_t idx[8], good, bad1, bad2, bad3;
	struct tcr_desc *sd;

	ck_assert_ptr_nonnull(t);
	/* Data before any grant: the runtime denies it by itself. */
	bad1 = send_desc(TCR_OP_DATA, 0, VNF_AUX(1, 2), 0, 12, NULL);
	ck_assert_int_eq(vnf_recv(t, pk, 8, 0), 0);
	ck_assert_int_eq(take_back(idx, 8), 1);
	ck_assert_uint_eq(idx[0], bad1);
	sd = tcr_region_desc(vr, bad1);
	ck_assert_uint_eq(sd->arg, VNF_VERDICT_DENY);
	ck_assert_uint_eq(sd->deny_rule, VNF_RULE_UNMAPPED);
	tcr_pool_free(pool, idx, 1);

	/* Grant region 1, then good and out-of-bounds descriptors. */
	send_desc(TCR_OP_CTRL, VNF_CTRL_GRANT, 1, 0, (uint32_t)strlen(dpath), dpath);
	good = send_desc(TCR_OP_DATA, 0, VNF_AUX(1, 2), 0, 12, NULL);
	bad2 = send_desc(TCR_OP_DATA, 0, VNF_AUX(1, 4), 0, 12, NULL);	/* buffer 4 of 4 */
	bad3 = send_desc(TCR_OP_DATA, 0, VNF_AUX(1, 2), 200, 57, NULL);	/* 257 > 256 */
	ck_assert_int_eq(vnf_recv(t, pk, 8, 0), 1);
	ck_assert_uint_eq(pk[0].idx, good);
	ck_assert_uint_eq(pk[0].len, 12);
	ck_assert_mem_eq(pk[0].data, "hello, world", 12);
	ck_assert_uint_eq(pk[0].d.conn_id, 77);
	ck_assert_uint_eq(pk[0].d.chain, 5);
	ck_assert_int_eq(vnf_post(t, &pk[0], VNF_VERDICT_DENY, 99), 0);
	ck_assert_int_eq(vnf_flush(t), 0);
	ck_assert_int_eq(take_back(idx, 8), 4);	/* grant, the two bad ones, good */
	sd = tcr_region_desc(vr, bad2);
	ck_assert_uint_eq(sd->deny_rule, VNF_RULE_UNMAPPED);
	sd = tcr_region_desc(vr, bad3);
	ck_assert_uint_eq(sd->deny_rule, VNF_RULE_UNMAPPED);
	sd = tcr_region_desc(vr, good);
	ck_assert_uint_eq(sd->arg, VNF_VERDICT_DENY);
	ck_assert_uint_eq(sd->deny_rule, 99);
	ck_assert_uint_eq(sd->conn_id, 77);	/* (h) fields untouched */
	tcr_pool_free(pool, idx, 4);

	/* Revoke: the same descriptor is refused afterwards. */
	send_desc(TCR_OP_CTRL, VNF_CTRL_REVOKE, 1, 0, 0, NULL);
	good = send_desc(TCR_OP_DATA, 0, VNF_AUX(1, 2), 0, 12, NULL);
	ck_assert_int_eq(vnf_recv(t, pk, 8, 0), 0);
	ck_assert_int_eq(take_back(idx, 8), 2);
	ck_assert_uint_eq(tcr_region_desc(vr, good)->deny_rule, VNF_RULE_UNMAPPED);
	tcr_pool_free(pool, idx, 2);
	vnf_detach(t);
}
END_TEST

/*
 * Handing back verdicts rings the scheduler only when it announced a
 * sleep on the TX ring (ring.h F1/F2): one bump of cons_seq per batch.
 */
START_TEST(verdicts_ring_a_sleeping_scheduler)
{
	struct vnf_thread *t = vnf_attach(vpath, 0, 100);
	struct tcr_ring *tx = &ch.ring[TCR_CH_TX];
	struct vnf_pkt pk[8];
	uint32_t idx[8], seq;

	ck_assert_ptr_nonnull(t);
	send_desc(TCR_OP_CTRL, VNF_CTRL_GRANT, 1, 0, (uint32_t)strlen(dpath), dpath);
	send_desc(TCR_OP_DATA, 0, VNF_AUX(1, 2), 0, 12, NULL);
	ck_assert_int_eq(vnf_recv(t, pk, 8, 0), 1);
	seq = tc_load_acquire(&tx->ctl->cons_seq);
	ck_assert_int_eq(vnf_post(t, &pk[0], VNF_VERDICT_ALLOW, 0), 0);
	ck_assert_int_eq(vnf_flush(t), 0);
	ck_assert_uint_eq(tc_load_acquire(&tx->ctl->cons_seq), seq);	/* awake: no ring */
	ck_assert_int_eq(take_back(idx, 8), 2);
	tcr_pool_free(pool, idx, 2);

	send_desc(TCR_OP_DATA, 0, VNF_AUX(1, 2), 0, 12, NULL);
	send_desc(TCR_OP_DATA, 0, VNF_AUX(1, 2), 0, 12, NULL);
	ck_assert_int_eq(vnf_recv(t, pk, 8, 0), 2);
	seq = tcr_ring_cons_wait_prepare(tx);	/* the scheduler is going to sleep */
	ck_assert_int_eq(vnf_post(t, &pk[0], VNF_VERDICT_ALLOW, 0), 0);
	ck_assert_int_eq(vnf_post(t, &pk[1], VNF_VERDICT_ALLOW, 0), 0);
	ck_assert_int_eq(vnf_flush(t), 0);
	ck_assert_uint_eq(tc_load_acquire(&tx->ctl->cons_seq), seq + 1);	/* one per batch */
	tcr_ring_cons_wait_done(tx);
	ck_assert_int_eq(take_back(idx, 8), 2);
	tcr_pool_free(pool, idx, 2);
	vnf_detach(t);
}
END_TEST

START_TEST(reopened_channel_is_reattached)
{
	struct vnf_thread *t = vnf_attach(vpath, 0, 100);
	struct vnf_pkt pk[8];
	uint32_t idx[8];

	send_desc(TCR_OP_CTRL, VNF_CTRL_GRANT, 0, 0, (uint32_t)strlen(dpath), dpath);
	send_desc(TCR_OP_DATA, 0, VNF_AUX(0, 2), 0, 5, NULL);
	ck_assert_int_eq(vnf_recv(t, pk, 8, 0), 1);
	/* The scheduler declares the VNF failed and reopens the channel. */
	ck_assert_uint_eq(tcr_chan_close(&ch, pool), 2);
	ck_assert_int_eq(tcr_chan_open(&ch, vr, 0), 0);
	ck_assert_int_eq(vnf_post(t, &pk[0], VNF_VERDICT_ALLOW, 0), 0);	/* not stale yet */
	/* After reattaching, the old verdict and the old grant are gone. */
	send_desc(TCR_OP_DATA, 0, VNF_AUX(0, 2), 0, 5, NULL);
	ck_assert_int_eq(vnf_recv(t, pk, 8, 0), 0);
	ck_assert_int_eq(take_back(idx, 8), 1);
	ck_assert_uint_eq(tcr_region_desc(vr, idx[0])->deny_rule, VNF_RULE_UNMAPPED);
	tcr_pool_free(pool, idx, 1);
	/* A packet of the old epoch cannot be posted any more. */
	pk[0].epoch--;
	ck_assert_int_eq(vnf_post(t, &pk[0], VNF_VERDICT_ALLOW, 0), -ESTALE);
	vnf_detach(t);
}
END_TEST

START_TEST(killed_region_shuts_down)
{
	struct vnf_thread *t = vnf_attach(vpath, 0, 100);
	struct vnf_pkt pk[2];

	tcr_region_kill(vr);
	ck_assert_int_eq(vnf_recv(t, pk, 2, 0), -ESHUTDOWN);
	vnf_detach(t);
}
END_TEST

/* Scheduler side: a control message whose slot holds @len bytes of @raw. */
static void send_raw_ctrl(uint16_t flags, uint32_t region, const char *raw, uint32_t slot_len,
			  uint32_t path_len)
{
	struct tcr_desc d;
	uint32_t idx;

	ck_assert_uint_eq(tcr_pool_alloc(pool, &idx, 1), 1);
	memset(&d, 0, sizeof(d));
	d.slot = idx;
	d.op = TCR_OP_CTRL;
	d.flags = flags;
	d.aux = region;
	d.len = path_len;
	tcr_desc_store(vr, idx, &d);
	memset(tcr_region_slot(vr, idx), 'z', VNF_REGION_SLOT);
	memcpy(tcr_region_slot(vr, idx), raw, slot_len);
	ck_assert_int_eq(tcr_chan_send(&ch, pool, &idx, 1), 1);
}

/* A grant "path\0name\0" (vnf_proto.h) of data region @region. */
static void send_named_grant(uint32_t region, const char *path, const char *name)
{
	char raw[VNF_REGION_SLOT];
	uint32_t pl = (uint32_t)strlen(path), nl = (uint32_t)strlen(name);

	memcpy(raw, path, pl);
	raw[pl] = '\0';
	memcpy(raw + pl + 1, name, nl + 1);
	send_raw_ctrl(VNF_CTRL_GRANT, region, raw, pl + nl + 2, pl);
}

/* One data descriptor of region @region; its verdict's rule (0: allowed). */
static uint32_t data_rule(struct vnf_thread *t, uint32_t region, bool *seen)
{
	struct vnf_pkt pk[4];
	uint32_t idx[4], rule;
	int n;

	send_desc(TCR_OP_DATA, 0, VNF_AUX(region, 2), 0, 12, NULL);
	n = vnf_recv(t, pk, 4, 0);
	ck_assert_int_ge(n, 0);
	*seen = n == 1;
	if (n == 1) {
		ck_assert_int_eq(memcmp(pk[0].data, "hello, world", 12), 0);
		vnf_post(t, &pk[0], VNF_VERDICT_ALLOW, 0);
		vnf_flush(t);
	}
	/* the grant(s) before it come back too */
	n = take_back(idx, 4);
	ck_assert_int_ge(n, 1);
	rule = tcr_region_desc(vr, idx[n - 1])->deny_rule;
	tcr_pool_free(pool, idx, (unsigned int)n);
	return rule;
}

/*
 * Guest mode: data regions are mapped by the header name a grant carries,
 * from the device directory (here: a directory of files), never by the
 * host path; a name not there yet is tried again; no name, a bad name or
 * a bad slot maps nothing; flow tables are ignored; a region whose header
 * reads all ones (a revoked BAR) is gone.
 */
START_TEST(guest_mode_maps_by_header_name)
{
	char devdir[160], dev[200], raw[VNF_REGION_SLOT];
	struct vnf_thread *t;
	struct vnf_pkt pk[2];
	struct tcr_header *h;
	bool seen;

	snprintf(devdir, sizeof(devdir), "%s/dev", dir);
	ck_assert_int_eq(mkdir(devdir, 0700), 0);
	errno = 0;
	ck_assert_ptr_null(vnf_attach_guest(vpath, 0, 0, ""));
	ck_assert_int_eq(errno, EINVAL);
	t = vnf_attach_guest(vpath, 0, 100, devdir);
	ck_assert_ptr_nonnull(t);

	/* The host path alone (an old scheduler): nothing mapped in a guest. */
	send_desc(TCR_OP_CTRL, VNF_CTRL_GRANT, 1, 0, (uint32_t)strlen(dpath), dpath);
	ck_assert_uint_eq(data_rule(t, 1, &seen), VNF_RULE_UNMAPPED);
	ck_assert(!seen);
	/* A name that would leave the directory: refused. */
	send_named_grant(1, dpath, "../data");
	ck_assert_uint_eq(data_rule(t, 1, &seen), VNF_RULE_UNMAPPED);
	/* A name without its NUL before the slot ends: refused. */
	memset(raw, 'd', sizeof(raw));
	memcpy(raw, dpath, strlen(dpath));
	raw[strlen(dpath)] = '\0';
	send_raw_ctrl(VNF_CTRL_GRANT, 1, raw, sizeof(raw), (uint32_t)strlen(dpath));
	ck_assert_uint_eq(data_rule(t, 1, &seen), VNF_RULE_UNMAPPED);

	/*
	 * The header name, whose device is not there yet: mapped once it is.
	 * Grown to a power of two first (a PCI BAR), longer than its header's
	 * region_size: still a valid region.
	 */
	ck_assert_int_eq(truncate(dpath, 1 << 20), 0);
	send_named_grant(1, dpath, "d");
	ck_assert_uint_eq(data_rule(t, 1, &seen), VNF_RULE_UNMAPPED);
	snprintf(dev, sizeof(dev), "%s/d", devdir);
	ck_assert_int_eq(link(dpath, dev), 0);
	usleep(150 * 1000);		/* VNF_GUEST_RETRY_MS */
	ck_assert_uint_eq(data_rule(t, 1, &seen), 0);
	ck_assert(seen);

	/* A flow table grant is ignored in a guest. */
	send_desc(TCR_OP_CTRL, VNF_CTRL_GRANT_FLOWS, 1, 0, (uint32_t)strlen(dpath), dpath);
	send_desc(TCR_OP_DATA, 0, VNF_AUX(1, 2), 0, 12, NULL);
	ck_assert_int_eq(vnf_recv(t, pk, 2, 0), 1);
	pk[0].d.flow = 0;
	{
		struct vnf_flow f;

		ck_assert_int_eq(vnf_flow(t, &pk[0], &f), -ENOENT);
	}
	vnf_post(t, &pk[0], VNF_VERDICT_ALLOW, 0);
	vnf_flush(t);
	{
		uint32_t idx[4];
		int n = take_back(idx, 4);

		tcr_pool_free(pool, idx, (unsigned int)n);
	}

	/* Revoked: the BAR reads all ones. */
	h = tcr_region_header(vr);
	memset(&h->magic, 0xff, sizeof(h->magic));
	memset(&h->state, 0xff, sizeof(h->state));
	ck_assert_int_eq(vnf_recv(t, pk, 2, 50), -ENODEV);
	vnf_detach(t);
	unlink(dev);
	rmdir(devdir);
}
END_TEST

/* Idle in guest mode: polls with naps, returns on the timeout, never sleeps on a futex. */
START_TEST(guest_mode_idle_polls)
{
	struct vnf_thread *t = vnf_attach_guest(vpath, 0, 100, dir);
	struct tcr_ring *rx = &ch.ring[TCR_CH_RX];
	struct vnf_pkt pk[2];
	struct timespec a, b;
	double ms;

	ck_assert_ptr_nonnull(t);
	clock_gettime(CLOCK_MONOTONIC, &a);
	ck_assert_int_eq(vnf_recv(t, pk, 2, 60), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	ck_assert(ms >= 59 && ms < 2000);
	/* no sleep was ever announced: a producer is never asked to kick */
	ck_assert(!tcr_ring_prod_kick_needed(rx));
	/* what arrives is taken without any wake-up (a revoke: nothing to return) */
	send_desc(TCR_OP_CTRL, VNF_CTRL_REVOKE, 0, 0, 0, NULL);
	ck_assert_int_eq(vnf_recv(t, pk, 2, 100), 0);
	{
		uint32_t idx[2];

		ck_assert_int_eq(take_back(idx, 2), 1);
		tcr_pool_free(pool, idx, 1);
	}
	vnf_detach(t);
}
END_TEST

START_TEST(null_kind_verdicts_and_checksum)
{
	struct vnf_null_opts o = { .deny_marker = "EVIL" };
	uint32_t rule = 5;

	ck_assert_uint_eq(vnf_null_inspect(&o, (const uint8_t *)"all good", 8, &rule),
			  VNF_VERDICT_ALLOW);
	ck_assert_uint_eq(rule, 0);
	ck_assert_uint_eq(vnf_null_inspect(&o, (const uint8_t *)"xxEVILxx", 8, &rule),
			  VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, VNF_NULL_RULE_MARKER);
	/* A marker cut by the payload's end is not there. */
	ck_assert_uint_eq(vnf_null_inspect(&o, (const uint8_t *)"xxEVILxx", 5, &rule),
			  VNF_VERDICT_ALLOW);
	o.deny_marker = NULL;
	ck_assert_uint_eq(vnf_null_inspect(&o, (const uint8_t *)"EVIL", 4, &rule),
			  VNF_VERDICT_ALLOW);
	/* FNV-1a 64 test vectors. */
	ck_assert_uint_eq(vnf_null_fnv((const uint8_t *)"", 0), 0xcbf29ce484222325ull);
	ck_assert_uint_eq(vnf_null_fnv((const uint8_t *)"a", 1), 0xaf63dc4c8601ec8cull);
	ck_assert_uint_eq(vnf_null_fnv((const uint8_t *)"foobar", 6), 0x85944171f73967e8ull);
}
END_TEST

START_TEST(flow_state_and_private_slots)
{
	struct vnf_thread *t = vnf_attach(vpath, 0, 100);
	char fpath[160];
	struct ch_flows *fl;
	struct ch_flow_key k;
	struct vnf_slots *slots = vnf_slots_create(8);
	struct vnf_flow f;
	struct vnf_pkt pk[4];
	uint32_t idx[8];
	uint64_t *slot;
	int fi;

	snprintf(fpath, sizeof(fpath), "%s/flows", dir);
	fl = ch_flows_create(fpath, 8);
	ck_assert_ptr_nonnull(fl);
	memset(&k, 0, sizeof(k));
	k.family = 4;
	k.l4proto = 6;
	k.sport = 40000;
	k.dport = 443;
	fi = ch_flow_open(fl, &k, CH_FLOW_ESTABLISHED);
	ck_assert_int_ge(fi, 0);
	send_desc(TCR_OP_CTRL, VNF_CTRL_GRANT, 1, 0, (uint32_t)strlen(dpath), dpath);
	/* Data before the flow table is granted: no flow state. */
	send_desc(TCR_OP_DATA, 0, VNF_AUX(1, 2), 0, 5, NULL);
	tcr_region_desc(vr, send_desc(TCR_OP_DATA, 0, VNF_AUX(1, 2), 0, 5, NULL))->flow = TCR_FLOW_NONE;
	ck_assert_int_eq(vnf_recv(t, pk, 4, 0), 2);
	pk[0].d.flow = (uint32_t)fi;
	ck_assert_int_eq(vnf_flow(t, &pk[0], &f), -ENOENT);
	ck_assert_int_eq(vnf_flow(t, &pk[1], &f), -ENOENT);	/* TCR_FLOW_NONE */
	vnf_post(t, &pk[0], VNF_VERDICT_ALLOW, 0);
	vnf_post(t, &pk[1], VNF_VERDICT_ALLOW, 0);
	send_desc(TCR_OP_CTRL, VNF_CTRL_GRANT_FLOWS, 1, 0, (uint32_t)strlen(fpath), fpath);
	tcr_region_desc(vr, send_desc(TCR_OP_DATA, 0, VNF_AUX(1, 2), 0, 5, NULL))->flow =
		(uint32_t)fi;
	ck_assert_int_eq(vnf_recv(t, pk, 4, 0), 1);
	ck_assert_int_eq(vnf_flow(t, &pk[0], &f), 0);
	ck_assert_uint_eq(f.region, 1);
	ck_assert_uint_eq(f.idx, (uint32_t)fi);
	ck_assert_uint_eq(f.state, CH_FLOW_ESTABLISHED);
	ck_assert_uint_eq(f.sport, 40000);
	ck_assert_uint_eq(f.dport, 443);
	slot = vnf_slot(slots, &f);
	ck_assert_ptr_nonnull(slot);
	ck_assert_uint_eq(*slot, 0);
	*slot = 1234;
	ck_assert_uint_eq(*vnf_slot(slots, &f), 1234);
	/* The TOE closes the flow; after the grace period it is reused. */
	ch_flow_close(fl, (uint32_t)fi, 1, 1);
	ck_assert_uint_eq(ch_flow_reclaim(fl, 1, 1), 1);
	k.sport = 40001;
	ck_assert_int_eq(ch_flow_open(fl, &k, CH_FLOW_SYN), fi);
	ck_assert_int_eq(vnf_flow(t, &pk[0], &f), 0);
	ck_assert_uint_eq(f.sport, 40001);
	ck_assert_uint_eq(*vnf_slot(slots, &f), 0);	/* the old flow's state is gone */
	f.idx = 8;
	ck_assert_ptr_null(vnf_slot(slots, &f));
	/* A revoke of the region takes its flow table too. */
	vnf_post(t, &pk[0], VNF_VERDICT_ALLOW, 0);
	send_desc(TCR_OP_CTRL, VNF_CTRL_REVOKE, 1, 0, 0, NULL);
	ck_assert_int_eq(vnf_recv(t, pk, 4, 0), 0);
	pk[0].d.flow = (uint32_t)fi;
	ck_assert_int_eq(vnf_flow(t, &pk[0], &f), -ENOENT);
	ck_assert_int_eq(take_back(idx, 8), 6);
	tcr_pool_free(pool, idx, 6);
	vnf_slots_destroy(slots);
	ch_flows_destroy(fl);
	unlink(fpath);
	vnf_detach(t);
}
END_TEST

int main(void)
{
	int rc;
	Suite *s = suite_create("vnf_rt");
	TCase *tc = tcase_create("rt");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, attach_errors);
	tcase_add_test(tc, grant_data_bounds_verdict_revoke);
	tcase_add_test(tc, verdicts_ring_a_sleeping_scheduler);
	tcase_add_test(tc, reopened_channel_is_reattached);
	tcase_add_test(tc, killed_region_shuts_down);
	tcase_add_test(tc, guest_mode_maps_by_header_name);
	tcase_add_test(tc, guest_mode_idle_polls);
	tcase_add_test(tc, null_kind_verdicts_and_checksum);
	tcase_add_test(tc, flow_state_and_private_slots);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	if (make_base())
		return 1;
	rc = tc_run_suite(s);
	remove_base();
	return rc;
}
