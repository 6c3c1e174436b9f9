// SPDX-License-Identifier: MIT
/*
 * chain-drive: integration scenarios for the packet scheduler with real
 * VNF processes (tochain-vnf --kind null), fed with synthetic descriptors
 * as the TOE will feed it.
 *
 *   chain-drive SCENARIO --vnf-bin PATH --dir DIR [-n COUNT]
 *
 * Scenarios: two-hop (also: the VNFs raise early end), parallel, rr,
 * replace, kill-closed, kill-open.
 * Exit 0 when every check passed; each failed check prints "FAIL: ...".
 * Every scenario checks that each descriptor submitted comes back exactly
 * once, each connection's in submission order, unchanged, and that no work
 * descriptor of any VNF region is left outstanding at the end.
 *
 * The main thread runs the scheduler in its own epoll loop, as the TOE
 * does (chh_loop_*, ch_harness.h): it submits, polls, takes, and sleeps
 * in epoll when an iteration moved nothing, woken by the VNF threads'
 * bells.  Only the replace scenario's table changes come from another
 * thread (the control plane's).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include <tochain/counters.h>
#include <tochain/tsc.h>

#include "ch_harness.h"

#define NBUFS		512
#define SLOT		2048
#define MAXV		6
#define MAXC		2
#define MARKER		"EVIL"

static int failures;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		failures++; \
		if (failures < 20) { \
			printf("FAIL: " __VA_ARGS__); \
			printf("  (%s:%d)\n", __FILE__, __LINE__); \
		} \
	} \
} while (0)

struct env {
	const char *dir, *bin;
	struct tcr_region *data;
	struct ch_psched *s;
	struct chh_loop loop;		/* runs s in this thread */
	uint32_t nv;
	pid_t pid[MAXV];
	char vpath[MAXV][300], spath[MAXV][300];
	uint64_t exp_pk[MAXV], exp_csum[MAXV];
	/* traffic state */
	uint32_t freebuf[NBUFS], nfree;
	struct ch_pkt sub[NBUFS];
	uint64_t next_cookie[MAXC];
	struct chh_order order[MAXC];	/* per chain; .head: all before it are back */
	uint64_t results, allowed, denied;
};

/* Scenario hook: check one result, account what each VNF must have seen. */
typedef void (*result_fn)(struct env *e, const struct ch_result *r, uint64_t fnv);

static int add_vnf(struct env *e, const char *name, uint32_t threads, uint32_t policy,
		   const char *a1, const char *a2)
{
	struct ch_vnf_cfg vc = { .name = name, .nthreads = threads, .policy = policy };
	uint32_t v = e->nv;
	int id;

	snprintf(e->vpath[v], sizeof(e->vpath[v]), "%s/vnf-%s", e->dir, name);
	snprintf(e->spath[v], sizeof(e->spath[v]), "%s/stats-%s", e->dir, name);
	vc.region_path = e->vpath[v];
	id = ch_psched_vnf_add(e->s, &vc);
	if (id != (int)v) {
		printf("FAIL: vnf_add %s: %d\n", name, id);
		exit(1);
	}
	e->pid[v] = chh_spawn_vnf(e->bin, e->vpath[v], e->spath[v], a1, a2, (char *)NULL);
	if (e->pid[v] < 0) {
		printf("FAIL: spawn %s: %s\n", e->bin, strerror(errno));
		exit(1);
	}
	ch_psched_vnf_set_pid(e->s, v, e->pid[v]);
	e->nv++;
	return (int)v;
}

static void setup(struct env *e, uint32_t nchains_used, uint64_t n)
{
	struct ch_psched_cfg cfg = { .nchains = 4, .qcap = 256, .max_flight = 512,
				    .vnf_nbufs = 1024,
				    .hang_ns = 20000000000ull };	/* loaded 2-core hosts */
	char path[300];

	snprintf(path, sizeof(path), "%s/data", e->dir);
	e->data = chh_data_region(path, NBUFS, SLOT);
	e->s = ch_psched_create(&cfg);
	if (!e->data || !e->s || ch_psched_region_add(e->s, 0, path, NBUFS, SLOT)) {
		printf("FAIL: setup: %s\n", strerror(errno));
		exit(1);
	}
	for (uint32_t i = 0; i < NBUFS; i++)
		e->freebuf[e->nfree++] = NBUFS - 1 - i;
	for (uint32_t c = 0; c < nchains_used; c++)
		if (chh_order_init(&e->order[c], n + 1)) {
			printf("FAIL: setup: out of memory\n");
			exit(1);
		}
	if (chh_loop_attach(&e->loop, e->s)) {
		printf("FAIL: loop attach\n");
		exit(1);
	}
}

static void set_chain(struct env *e, uint32_t chain, uint64_t *ver, int nhops, ...)
{
	struct ch_chain_cfg c = { .region = 0, .dir = CH_DIR_IN };
	va_list ap;
	int err;

	va_start(ap, nhops);
	c.nhops = (uint32_t)nhops;
	for (int h = 0; h < nhops; h++) {
		uint32_t mask = va_arg(ap, uint32_t);	/* VNF bitmask of the hop */

		for (uint32_t v = 0; v < MAXV; v++)
			if (mask & (1u << v))
				c.hop[h].vnf[c.hop[h].nvnfs++] = v;
	}
	va_end(ap);
	err = ch_psched_chain_set(e->s, chain, &c, ver);
	if (err) {
		printf("FAIL: chain_set %u: %d\n", chain, err);
		exit(1);
	}
}

/*
 * Submit @n descriptors per chain of @chains (every @mark_every-th with
 * the deny marker) and take all results, within @secs seconds, running
 * the scheduler meanwhile.  @between (may be NULL) runs between rounds
 * with the round number.
 */
static void pump(struct env *e, uint32_t nchains, uint64_t n, uint32_t mark_every,
		 result_fn fn, void (*between)(struct env *, uint64_t), int secs)
{
	uint64_t deadline = chh_now_ns() + (uint64_t)secs * 1000000000ull;
	uint64_t start[MAXC], round = 0;
	struct ch_result res[32];

	for (uint32_t c = 0; c < nchains; c++)
		start[c] = e->next_cookie[c];
	for (;;) {
		bool done = true;
		unsigned int moved = 0;
		uint64_t now;

		for (uint32_t c = 0; c < nchains; c++) {
			/* submit a burst */
			for (int k = 0; k < 16 && e->nfree && e->next_cookie[c] - start[c] < n &&
					e->order[c].n < e->order[c].cap; k++) {
				uint64_t ck = e->next_cookie[c];
				uint64_t cookie = ((uint64_t)c << 48) | ck;
				uint32_t buf = e->freebuf[--e->nfree];
				const char *mk = mark_every && ck % mark_every == mark_every - 1 ?
						 MARKER : NULL;
				uint32_t len = chh_fill(e->data, buf, cookie, mk);
				struct ch_pkt p;

				chh_pkt(&p, 0, buf, len, cookie);
				p.tsc = tcr_tsc_now();
				e->sub[buf] = p;
				if (ch_psched_push(e->s, c, &p, 1) != 1) {
					e->freebuf[e->nfree++] = buf;
					break;
				}
				chh_order_push(&e->order[c], cookie, p.conn_id);
				e->next_cookie[c]++;
				moved++;
			}
		}
		/* The scheduler's turn: admits the bursts, releases results. */
		moved += ch_psched_poll(e->s);
		for (uint32_t c = 0; c < nchains; c++) {
			/* take results */
			unsigned int k = ch_psched_take(e->s, c, res, 32);

			for (unsigned int i = 0; i < k; i++) {
				const struct ch_result *r = &res[i];
				uint32_t buf = r->pkt.buf;
				uint64_t want;

				CHECK(!r->answer, "an answer from a VNF that never answers\n");
				free(r->answer);
				CHECK(buf < NBUFS, "result with buffer %u\n", buf);
				if (buf >= NBUFS)
					continue;
				CHECK(r->chain == c, "result of chain %u in queue %u\n", r->chain, c);
				CHECK(chh_order_back(&e->order[c], r->pkt.cookie, r->pkt.conn_id, &want),
				      "chain %u conn %" PRIu64 ": got cookie %#" PRIx64 ", expected %#"
				      PRIx64 "\n", c, r->pkt.conn_id, r->pkt.cookie, want);
				CHECK(!memcmp(&r->pkt, &e->sub[buf], sizeof(r->pkt)),
				      "descriptor %#" PRIx64 " changed\n", r->pkt.cookie);
				e->results++;
				if (r->verdict == CH_ALLOW)
					e->allowed++;
				else
					e->denied++;
				fn(e, r, vnf_null_fnv(tcr_region_slot(e->data, buf), r->pkt.len));
				e->freebuf[e->nfree++] = buf;
			}
			moved += k;
			if (e->order[c].head - start[c] < n && e->order[c].head < e->order[c].cap)
				done = false;
		}
		if (done)
			break;
		now = chh_now_ns();
		if (now > deadline) {
			CHECK(0, "timed out: %" PRIu64 " results\n", e->results);
			break;
		}
		if (between)
			between(e, round++);
		if (!moved)
			chh_loop_sleep(&e->loop, deadline - now);
	}
}

static void see(struct env *e, uint32_t v, uint64_t fnv)
{
	e->exp_pk[v]++;
	e->exp_csum[v] += fnv;
}

/* Stop the VNFs and compare what each saw with what it must have seen. */
static void finish(struct env *e, bool check_stats)
{
	struct ch_vnf_info info;

	CHECK(ch_psched_in_flight(e->s) == 0, "%u descriptors still in flight\n",
	      ch_psched_in_flight(e->s));
	CHECK(e->nfree == NBUFS, "%u data buffers not returned\n", NBUFS - e->nfree);
	/*
	 * Let control messages (grants, revokes) come back: the VNFs answer
	 * them at once, and the scheduler, run here meanwhile, collects them
	 * (later on a loaded machine).
	 */
	for (int tries = 0; tries < 200; tries++) {
		bool quiet = true;

		for (uint32_t v = 0; v < e->nv && quiet; v++) {
			ch_psched_vnf_info(e->s, v, &info);
			quiet = info.outstanding == 0 && info.pool_free == 1024;
		}
		if (quiet)
			break;
		chh_loop_run_for(&e->loop, 10000000ull);
	}
	for (uint32_t v = 0; v < e->nv; v++) {
		ch_psched_vnf_info(e->s, v, &info);
		CHECK(info.outstanding == 0 && info.pool_free == 1024,
		      "vnf %u: %u outstanding, %u of 1024 work descriptors free\n", v,
		      info.outstanding, info.pool_free);
	}
	for (uint32_t v = 0; v < e->nv; v++) {
		struct vnf_null_stats st;
		int err;

		ch_psched_vnf_set_pid(e->s, v, 0);	/* an orderly stop, not a failure */
		chh_stop(e->pid[v], 3000);
		if (!check_stats)
			continue;
		err = chh_read_stats(e->spath[v], &st, NULL, 0);
		CHECK(!err, "vnf %u: no stats (%d)\n", v, err);
		if (err)
			continue;
		CHECK(st.packets == e->exp_pk[v] && st.csum == e->exp_csum[v],
		      "vnf %u saw %" PRIu64 " payloads (csum %#" PRIx64 "), expected %" PRIu64
		      " (csum %#" PRIx64 ")\n", v, st.packets, st.csum, e->exp_pk[v], e->exp_csum[v]);
	}
	ch_psched_destroy(e->s);
	chh_loop_close(&e->loop);
	tcr_region_destroy(e->data);
	for (uint32_t c = 0; c < MAXC; c++)
		chh_order_free(&e->order[c]);
	printf("%" PRIu64 " results: %" PRIu64 " allowed, %" PRIu64 " denied; %d failed checks\n",
	       e->results, e->allowed, e->denied, failures);
}

/* ---- two-hop ---- */
static void r_two_hop(struct env *e, const struct ch_result *r, uint64_t fnv)
{
	CHECK(r->verdict == CH_ALLOW && r->hops == 2, "two-hop: verdict %u hops %u\n",
	      r->verdict, r->hops);
	see(e, 0, fnv);
	see(e, 1, fnv);
}

/*
 * Once the chain has nothing left, the real VNF processes have asked to
 * end its slot early, (a) input queue empty, and the scheduler passed it
 * on to the chain's counters (DESIGN section 2; nobody takes it here).
 */
static void check_early_end(struct env *e, uint32_t chain)
{
	uint32_t fl = 0;

	for (int tries = 0; tries < 500 && !(fl & TCR_EARLY_INPUT_EMPTY); tries++) {
		fl |= tcr_counters_take_early(ch_psched_counters(e->s, chain));
		chh_loop_run_for(&e->loop, 10000000ull);
	}
	CHECK(fl & TCR_EARLY_INPUT_EMPTY, "chain %u: no early end (a) after the last result\n",
	      chain);
}

static void sc_two_hop(struct env *e, uint64_t n)
{
	setup(e, 1, n);
	add_vnf(e, "a", 1, CH_FAIL_CLOSED, NULL, NULL);
	add_vnf(e, "b", 1, CH_FAIL_CLOSED, NULL, NULL);
	set_chain(e, 0, NULL, 2, 1u, 2u);
	pump(e, 1, n, 0, r_two_hop, NULL, 30);
	check_early_end(e, 0);
	finish(e, true);
}

/* ---- parallel: hop [a, b(deny marker)], then hop [c] ---- */
static void r_parallel(struct env *e, const struct ch_result *r, uint64_t fnv)
{
	bool marked = (r->pkt.cookie & 0xffffffffffffull) % 10 == 9;

	see(e, 0, fnv);
	see(e, 1, fnv);
	if (marked) {
		CHECK(r->verdict == CH_DENY && r->reason == CH_REASON_RULE && r->deny_vnf == 1 &&
		      r->deny_rule == VNF_NULL_RULE_MARKER && r->hops == 0,
		      "marked payload: verdict %u reason %u vnf %u rule %u hops %u\n", r->verdict,
		      r->reason, r->deny_vnf, r->deny_rule, r->hops);
	} else {
		CHECK(r->verdict == CH_ALLOW && r->hops == 2, "clean payload: verdict %u hops %u\n",
		      r->verdict, r->hops);
		see(e, 2, fnv);
	}
}

static void sc_parallel(struct env *e, uint64_t n)
{
	setup(e, 1, n);
	add_vnf(e, "a", 1, CH_FAIL_CLOSED, NULL, NULL);
	add_vnf(e, "b", 1, CH_FAIL_CLOSED, "--deny-marker", MARKER);
	add_vnf(e, "c", 1, CH_FAIL_CLOSED, NULL, NULL);
	set_chain(e, 0, NULL, 2, 3u, 4u);
	pump(e, 1, n, 10, r_parallel, NULL, 30);
	finish(e, true);
}

/* ---- rr: one VNF, three service threads ---- */
static void r_rr(struct env *e, const struct ch_result *r, uint64_t fnv)
{
	CHECK(r->verdict == CH_ALLOW, "rr: verdict %u\n", r->verdict);
	see(e, 0, fnv);
}

static void sc_rr(struct env *e, uint64_t n)
{
	uint64_t thr[3] = { 0 };
	struct vnf_null_stats st;
	char spath[300];

	n -= n % 3;
	setup(e, 1, n);
	add_vnf(e, "rr", 3, CH_FAIL_CLOSED, NULL, NULL);
	set_chain(e, 0, NULL, 1, 1u);
	pump(e, 1, n, 0, r_rr, NULL, 30);
	snprintf(spath, sizeof(spath), "%s", e->spath[0]);
	finish(e, true);
	if (chh_read_stats(spath, &st, thr, 3) == 0)
		for (int t = 0; t < 3; t++)
			CHECK(thr[t] == n / 3, "thread %d served %" PRIu64 " of %" PRIu64 "\n", t,
			      thr[t], n);
	printf("threads served %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", thr[0], thr[1], thr[2]);
}

/* ---- replace: the chain's table changes and disappears under load ---- */
#define MAXVER 4096
static uint32_t ver_mask[MAXVER][CH_MAX_HOPS];	/* VNF mask per hop, by version */
static uint32_t ver_hops[MAXVER];
static volatile int replace_stop;
static uint64_t replace_changes;
static uint64_t next_ver = 1;	/* versions are issued 1, 2, ... by this test only */

static void *replace_thread(void *arg)
{
	struct env *e = arg;
	static const uint32_t cfgs[][3] = { { 1, 1, 0 }, { 2, 1, 2 }, { 1, 2, 0 }, { 2, 3, 1 },
					   { 0, 0, 0 }, { 99, 0, 0 } };
	uint64_t ver;

	for (unsigned int i = 0; !replace_stop; i++) {
		const uint32_t *c = cfgs[i % 6];

		if (c[0] == 99) {
			if (ch_psched_chain_set(e->s, 0, NULL, NULL) == 0)
				replace_changes++;
		} else {
			/* Record the table before publishing it: results may come at once. */
			if (next_ver < MAXVER) {
				ver_hops[next_ver] = c[0];
				ver_mask[next_ver][0] = c[1];
				ver_mask[next_ver][1] = c[2];
			}
			if (c[0] == 0)
				set_chain(e, 0, &ver, 0);
			else if (c[0] == 1)
				set_chain(e, 0, &ver, 1, c[1]);
			else
				set_chain(e, 0, &ver, 2, c[1], c[2]);
			CHECK(ver == next_ver, "version %" PRIu64 ", expected %" PRIu64 "\n", ver,
			      next_ver);
			next_ver++;
			replace_changes++;
		}
		chh_sleep_us(2000);
	}
	return NULL;
}

static void r_replace(struct env *e, const struct ch_result *r, uint64_t fnv)
{
	uint64_t v = r->table_version;

	if (v == 0) {
		CHECK(r->verdict == CH_DENY && r->reason == CH_REASON_NO_CHAIN,
		      "no table: verdict %u reason %u\n", r->verdict, r->reason);
		return;
	}
	CHECK(v < MAXVER && r->verdict == CH_ALLOW && r->hops == ver_hops[v],
	      "version %" PRIu64 ": verdict %u hops %u, table has %u\n", v, r->verdict, r->hops,
	      v < MAXVER ? ver_hops[v] : 0);
	for (uint32_t h = 0; v < MAXVER && h < ver_hops[v]; h++)
		for (uint32_t x = 0; x < 2; x++)
			if (ver_mask[v][h] & (1u << x))
				see(e, x, fnv);
}

static void sc_replace(struct env *e, uint64_t n)
{
	pthread_t th;
	uint64_t ver;

	setup(e, 1, n);
	add_vnf(e, "a", 1, CH_FAIL_CLOSED, NULL, NULL);
	add_vnf(e, "b", 2, CH_FAIL_CLOSED, NULL, NULL);
	ver_hops[1] = 1;
	ver_mask[1][0] = 1;
	set_chain(e, 0, &ver, 1, 1u);
	next_ver = ver + 1;
	pthread_create(&th, NULL, replace_thread, e);
	pump(e, 1, n, 0, r_replace, NULL, 40);
	replace_stop = 1;
	pthread_join(th, NULL);
	printf("%" PRIu64 " table changes under load\n", replace_changes);
	CHECK(replace_changes >= 10, "only %" PRIu64 " table changes\n", replace_changes);
	finish(e, true);
}

/* ---- kill: VNF a (policy) dies under load; chain 1 never uses it ---- */
static uint32_t kill_policy;
static int kill_phase;		/* 0 before the kill, 1 after, 2 after the restart */
static uint64_t kill_at, kill_after, failed_seen, bypass_seen;

static void r_kill(struct env *e, const struct ch_result *r, uint64_t fnv)
{
	uint32_t chain = r->chain;

	if (chain == 1) {
		CHECK(r->verdict == CH_ALLOW && r->hops == 1, "chain 1 (no failed VNF): verdict %u"
		      " reason %u\n", r->verdict, r->reason);
		see(e, 1, fnv);
		return;
	}
	if (r->verdict == CH_ALLOW) {
		see(e, 1, fnv);
		if (r->bypassed)
			bypass_seen++;
		CHECK(!r->bypassed || kill_policy == CH_FAIL_OPEN, "bypassed a fail-closed VNF\n");
	} else {
		CHECK(r->reason == CH_REASON_VNF_FAILED && r->deny_vnf == 0 &&
		      kill_policy == CH_FAIL_CLOSED && kill_phase >= 1,
		      "chain 0: deny reason %u vnf %u (policy %u, phase %d)\n", r->reason,
		      r->deny_vnf, kill_policy, kill_phase);
		failed_seen++;
	}
	if (kill_phase == 2 && e->order[0].head > kill_at + 200)
		CHECK(r->verdict == CH_ALLOW && !r->bypassed,
		      "after restart: verdict %u bypassed %u\n", r->verdict, r->bypassed);
}

static void kill_between(struct env *e, uint64_t round)
{
	(void)round;
	if (kill_phase == 0 && e->results > kill_after) {
		kill(e->pid[0], SIGKILL);
		kill_phase = 1;
	}
}

static void sc_kill(struct env *e, uint64_t n, uint32_t policy)
{
	struct ch_vnf_info info;
	uint64_t t0;

	kill_policy = policy;
	kill_after = n / 2;	/* of 2n results: mid-stream */
	setup(e, 2, 3 * n + 20000);
	add_vnf(e, "a", 2, policy, NULL, NULL);
	add_vnf(e, "b", 1, CH_FAIL_CLOSED, NULL, NULL);
	set_chain(e, 0, NULL, 2, 1u, 2u);
	set_chain(e, 1, NULL, 1, 2u);
	pump(e, 2, n, 0, r_kill, kill_between, 30);
	CHECK(kill_phase == 1, "the VNF was not killed under load\n");
	if (kill_phase == 0) {
		kill(e->pid[0], SIGKILL);	/* go on with the checks anyway */
		kill_phase = 1;
	}
	/* Keep traffic going until the scheduler noticed. */
	t0 = chh_now_ns();
	do {
		pump(e, 2, 200, 0, r_kill, NULL, 10);
		ch_psched_vnf_info(e->s, 0, &info);
	} while (!info.failed && chh_now_ns() - t0 < 5000000000ull && e->next_cookie[0] < 2 * n);
	CHECK(info.failed, "death of the VNF not detected\n");
	CHECK(info.outstanding == 0 && info.pool_free == 1024,
	      "failed VNF: %u outstanding, %u free work descriptors\n", info.outstanding,
	      info.pool_free);
	pump(e, 2, 500, 0, r_kill, NULL, 10);
	if (policy == CH_FAIL_CLOSED)
		CHECK(failed_seen >= 500, "only %" PRIu64 " fail-closed denials\n", failed_seen);
	else
		CHECK(bypass_seen >= 500, "only %" PRIu64 " bypassed\n", bypass_seen);
	/* Restart: a new process serves the VNF again. */
	waitpid(e->pid[0], NULL, 0);
	e->pid[0] = chh_spawn_vnf(e->bin, e->vpath[0], e->spath[0], (char *)NULL);
	ch_psched_vnf_restart(e->s, 0, e->pid[0]);
	t0 = chh_now_ns();
	do {
		chh_loop_run_for(&e->loop, 1000000ull);	/* the restart is done by a poll */
		ch_psched_vnf_info(e->s, 0, &info);
	} while ((info.failed || info.epoch == 0) && chh_now_ns() - t0 < 3000000000ull);
	CHECK(!info.failed && info.epoch == 1, "restart: failed %d epoch %u\n", info.failed,
	      info.epoch);
	kill_phase = 2;
	kill_at = e->order[0].head;
	pump(e, 2, n, 0, r_kill, NULL, 30);
	/*
	 * The new process's verdicts wake the loop, as the dead one's did:
	 * its bells are taken at the first liveness check (every 2 ms) after
	 * it attached, which the pump may have outrun.
	 */
	t0 = chh_now_ns();
	do {
		ch_psched_vnf_info(e->s, 0, &info);
		if (info.bells == 2)
			break;
		chh_loop_run_for(&e->loop, 1000000ull);
	} while (chh_now_ns() - t0 < 3000000000ull);
	CHECK(info.bells == 2, "restarted VNF: %u of its 2 threads ring the loop\n", info.bells);
	printf("fail-closed denials %" PRIu64 ", bypassed %" PRIu64 "\n", failed_seen, bypass_seen);
	/* VNF a's stats cover only its second life: compare b only. */
	e->exp_pk[0] = 0;
	finish(e, false);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "vnf-bin", required_argument, NULL, 'b' },
		{ "dir", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	struct env e;
	uint64_t n = 3000;
	const char *sc;
	int c;

	memset(&e, 0, sizeof(e));
	while ((c = getopt_long(argc, argv, "n:", lo, NULL)) != -1) {
		switch (c) {
		case 'b': e.bin = optarg; break;
		case 'd': e.dir = optarg; break;
		case 'n': n = strtoull(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	if (optind + 1 != argc || !e.bin || !e.dir || n < 30) {
		fprintf(stderr, "usage: chain-drive SCENARIO --vnf-bin PATH --dir DIR [-n N]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	urcu_memb_register_thread();
	sc = argv[optind];
	if (!strcmp(sc, "two-hop"))
		sc_two_hop(&e, n);
	else if (!strcmp(sc, "parallel"))
		sc_parallel(&e, n);
	else if (!strcmp(sc, "rr"))
		sc_rr(&e, n);
	else if (!strcmp(sc, "replace"))
		sc_replace(&e, n);
	else if (!strcmp(sc, "kill-closed"))
		sc_kill(&e, n, CH_FAIL_CLOSED);
	else if (!strcmp(sc, "kill-open"))
		sc_kill(&e, n, CH_FAIL_OPEN);
	else {
		fprintf(stderr, "chain-drive: unknown scenario %s\n", sc);
		return 2;
	}
	urcu_memb_unregister_thread();
	printf("%s: %s\n", sc, failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
