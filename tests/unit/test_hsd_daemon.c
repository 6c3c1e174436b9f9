// SPDX-License-Identifier: MIT
/* tochain-sched's pieces: CPU lists, the dry-run backend, registration,
 * counters, plan -> cgroup writes, the timeline, early end, the socket's
 * commands.  Nothing is written to real cgroups (dry-run backend). */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tochain/counters.h>
#include <tochain/region.h>

#include "tochain/ctl_proto.h"
#include "hs_daemon.h"
#include "hs_daemon_ctl.h"
#include "hs_enforce.h"

#define NT 6

static pid_t tids[NT];
static pthread_t ths[NT];
static int pipefd[2];
static char log_buf[1 << 20];
static struct hse enf;
static struct hsd *d;
static char rpath[64];
static struct tcr_region *reg;

/* Parked threads whose tids the tests register. */
static void *parked(void *arg)
{
	char c;

	__atomic_store_n((pid_t *)arg, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	if (read(pipefd[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

static void start_threads(void)
{
	ck_assert_int_eq(pipe(pipefd), 0);
	for (int i = 0; i < NT; i++) {
		tids[i] = 0;
		ck_assert_int_eq(pthread_create(&ths[i], NULL, parked, &tids[i]), 0);
		while (!__atomic_load_n(&tids[i], __ATOMIC_ACQUIRE))
			usleep(100);
	}
}

static void stop_threads(void)
{
	close(pipefd[1]);
	for (int i = 0; i < NT; i++)
		pthread_join(ths[i], NULL);
	close(pipefd[0]);
}

static void setup(void)
{
	struct hsd_cfg cfg;
	struct tcr_params p = { .name = "hsdtest", .kind = TCR_KIND_HOST, .nbufs = 64,
				.slot_size = 64, .nchannels = 1, .nchains = 4 };

	start_threads();
	ck_assert_int_eq(hse_open(&enf, HSE_DRYRUN, "hsd", NULL, log_buf, sizeof(log_buf), 500), 0);
	hsd_cfg_default(&cfg);
	ck_assert_int_eq(hsd_parse_cpus("2,3", cfg.pcpu, HSD_MAX_PCPU, &cfg.npcpu), 0);
	snprintf(cfg.sync_cpus, sizeof(cfg.sync_cpus), "2-3");
	d = calloc(1, sizeof(*d));
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(hsd_init(d, &cfg, &enf), 0);
	snprintf(rpath, sizeof(rpath), "/dev/shm/test-hsd-%d", (int)getpid());
	reg = tcr_region_create(rpath, &p);
	ck_assert_ptr_nonnull(reg);
}

static void teardown(void)
{
	hsd_fini(d);
	free(d);
	hse_close(&enf);
	tcr_region_destroy(reg);
	unlink(rpath);
	stop_threads();
}

static struct hsd_reg vnf_reg(int t, const char *chain, const char *vm, uint64_t sla,
			      uint64_t f, uint32_t index, uint32_t threads)
{
	return (struct hsd_reg){ .role = HSD_ROLE_VNF, .tid = tids[t], .chain = chain,
				 .vm = vm, .sla_pps = sla, .f_pps = f, .region = rpath,
				 .index = index, .threads = threads };
}

static struct hsd_reg vm_reg(int t, const char *vm)
{
	return (struct hsd_reg){ .role = HSD_ROLE_VM, .tid = tids[t], .vm = vm };
}

static void reg_ok(struct hsd_reg r)
{
	char why[256];
	int err = hsd_register(d, &r, why, sizeof(why));

	ck_assert_msg(err == 0, "register tid %d: %d %s", (int)r.tid, err, why);
}

static int reg_err(struct hsd_reg r, char *why, size_t len)
{
	return hsd_register(d, &r, why, len);
}

/* Packets in chain @c's input queue, as the packet scheduler reports them. */
static void traffic(uint32_t c, uint32_t n)
{
	struct tcr_chain_counters *cc = tcr_region_chain(reg, c);

	tcr_counters_arrived(cc, n);
	tcr_counters_queues(cc, n > 60 ? 60 : n, 0, 0);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

START_TEST(cpu_lists)
{
	int c[8];
	uint32_t n;

	ck_assert_int_eq(hsd_parse_cpus("0-1,3", c, 8, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(c[0], 0);
	ck_assert_int_eq(c[1], 1);
	ck_assert_int_eq(c[2], 3);
	ck_assert_int_eq(hsd_parse_cpus("", c, 8, &n), -EINVAL);
	ck_assert_int_eq(hsd_parse_cpus("1-0", c, 8, &n), -EINVAL);
	ck_assert_int_eq(hsd_parse_cpus("a", c, 8, &n), -EINVAL);
	ck_assert_int_eq(hsd_parse_cpus("0,0", c, 8, &n), -EINVAL);
	ck_assert_int_eq(hsd_parse_cpus("0-9", c, 8, &n), -EINVAL);
	ck_assert_int_eq(hsd_parse_cpus("1,", c, 8, &n), 0);
}
END_TEST

START_TEST(dryrun_backend)
{
	struct hse_thread t;
	char line[128];
	size_t len;

	ck_assert_int_eq(hse_thread_add(&enf, tids[0], &t), 0);
	snprintf(line, sizeof(line), "hsd/t%d/tasks %d\n", (int)tids[0], (int)tids[0]);
	ck_assert_msg(strstr(log_buf, line), "no attach in:\n%s", log_buf);
	ck_assert_ptr_nonnull(strstr(log_buf, "cpu.shares 5120\n"));
	snprintf(line, sizeof(line), "hsd/t%d/freezer.state", (int)tids[0]);
	ck_assert_ptr_null(strstr(log_buf, line));
	ck_assert_int_eq(hse_place(&enf, &t, "3", 120000, 500000), 0);
	snprintf(line, sizeof(line), "hsd/t%d/cpuset.cpus 3\n", (int)tids[0]);
	ck_assert_ptr_nonnull(strstr(log_buf, line));
	snprintf(line, sizeof(line), "hsd/t%d/cpu.cfs_quota_us 120000\n", (int)tids[0]);
	ck_assert_ptr_nonnull(strstr(log_buf, line));
	ck_assert_ptr_nonnull(strstr(log_buf, "cpu.cfs_period_us 500000\n"));
	/* Unchanged placement writes nothing. */
	len = strlen(log_buf);
	ck_assert_int_eq(hse_place(&enf, &t, "3", 120000, 500000), 0);
	ck_assert_uint_eq(strlen(log_buf), len);
	/* Below the kernel's 1 ms minimum: clamped, not refused. */
	ck_assert_int_eq(hse_place(&enf, &t, "3", 10, 500000), 0);
	ck_assert_ptr_nonnull(strstr(log_buf + len, "cpu.cfs_quota_us 1000\n"));
	ck_assert_int_eq(hse_place(&enf, &t, "x", 10, 500000), -EINVAL);
	ck_assert_int_eq(hse_gate(&enf, &t, false), 0);
	snprintf(line, sizeof(line), "hsd/t%d/freezer.state FROZEN\n", (int)tids[0]);
	ck_assert_ptr_nonnull(strstr(log_buf, line));
	len = strlen(log_buf);
	ck_assert_int_eq(hse_gate(&enf, &t, false), 0);
	ck_assert_uint_eq(strlen(log_buf), len);
	hse_thread_del(&enf, &t);
	snprintf(line, sizeof(line), "hsd/t%d/freezer.state THAWED\n", (int)tids[0]);
	ck_assert_ptr_nonnull(strstr(log_buf + len, line));
}
END_TEST

START_TEST(backend_names)
{
	enum hse_kind k;
	struct hse e;

	ck_assert_int_eq(hse_kind_parse("v1", &k), 0);
	ck_assert_int_eq(k, HSE_CGROUP_V1);
	ck_assert_int_eq(hse_kind_parse("libvirt", &k), 0);
	ck_assert_int_eq(hse_kind_parse("v3", &k), -EINVAL);
	/* libvirt composes with a cgroup backend for host threads: with no
	 * cgroup hierarchy it is refused like v1/v2 (hs_libvirt's own tests
	 * are test_hs_libvirt and test_hsd_libvirt). */
	ck_assert_int_eq(hse_open(&e, HSE_LIBVIRT, "x", "/nonexistent/mountinfo", NULL, 0, 100),
			 -ENOTSUP);
	ck_assert_int_eq(hse_open(&e, HSE_DRYRUN, "x", NULL, log_buf, sizeof(log_buf), 0), -EINVAL);
}
END_TEST

START_TEST(register_refusals)
{
	char why[256];
	struct hsd_reg r;

	reg_ok(vm_reg(0, "web"));
	reg_ok(vnf_reg(1, "c1", "web", 1000, 5000, 0, 1));
	ck_assert_uint_eq(d->nthread, 2);

	r = vm_reg(2, "web");
	r.role = 7;
	ck_assert_int_eq(reg_err(r, why, sizeof(why)), -EINVAL);
	r = vm_reg(2, "web");
	r.tid = 0;
	ck_assert_int_eq(reg_err(r, why, sizeof(why)), -EINVAL);
	r = vm_reg(2, "web");
	r.tid = 0x3ffffff0;
	ck_assert_int_eq(reg_err(r, why, sizeof(why)), -ESRCH);
	ck_assert_int_eq(reg_err(vm_reg(0, "web"), why, sizeof(why)), -EEXIST);
	ck_assert_int_eq(reg_err(vm_reg(2, "we b"), why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(reg_err(vm_reg(2, ""), why, sizeof(why)), -EINVAL);
	/* vnf fields */
	ck_assert_int_eq(reg_err(vnf_reg(2, "c2", "web", 0, 5000, 1, 1), why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(reg_err(vnf_reg(2, "c2", "web", 100, 0, 1, 1), why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(reg_err(vnf_reg(2, "c2", "web", 100, 5000, 1, 9), why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(reg_err(vnf_reg(2, "c2", "web", 100, 5000, 4, 1), why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "chain blocks"));
	r = vnf_reg(2, "c2", "web", 100, 5000, 1, 1);
	r.region = "/nonexistent/region";
	ck_assert_int_eq(reg_err(r, why, sizeof(why)), -ENOENT);
	/* Inconsistent with c1's first registration; c2 on c1's block. */
	ck_assert_int_eq(reg_err(vnf_reg(2, "c1", "web", 2000, 5000, 0, 1), why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(reg_err(vnf_reg(2, "c1", "web", 1000, 5000, 0, 1), why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "threads already"));
	ck_assert_int_eq(reg_err(vnf_reg(2, "c2", "web", 100, 5000, 0, 1), why, sizeof(why)), -EINVAL);
	/* Admission: 6000 pkt/s at f=5000 needs 2 threads; 1 declared. */
	ck_assert_int_ne(reg_err(vnf_reg(2, "c3", "web", 6000, 5000, 2, 1), why, sizeof(why)), 0);
	ck_assert_ptr_nonnull(strstr(why, "c3"));
	/* Everything refused changed nothing. */
	ck_assert_uint_eq(d->nthread, 2);
	ck_assert_uint_eq(d->nchain, 1);
	ck_assert_uint_eq(d->nvm, 1);
	ck_assert_uint_eq(d->nregion, 1);
	ck_assert_uint_eq(d->chain[0].vnf[0].registered, 1);
	/* ...and the same thread registers fine afterwards. */
	reg_ok(vnf_reg(2, "c3", "web", 4000, 5000, 2, 1));
	ck_assert_uint_eq(d->cs->nchain, 2);
}
END_TEST

START_TEST(gang_waits_for_all_threads)
{
	reg_ok(vm_reg(0, "web"));
	reg_ok(vnf_reg(1, "g", "web", 6000, 5000, 0, 2));
	/* One of two declared threads: not planned yet. */
	ck_assert_uint_eq(d->cs->nchain, 0);
	reg_ok(vnf_reg(2, "g", "web", 6000, 5000, 0, 2));
	ck_assert_uint_eq(d->cs->nchain, 1);
	ck_assert_uint_eq(d->cs->chain[0].vnf[0].max_threads, 2);
}
END_TEST

START_TEST(counters_refused)
{
	struct hs_chain_stats st;
	struct tcr_chain_counters *cc = tcr_region_chain(reg, 0);

	reg_ok(vm_reg(0, "web"));
	reg_ok(vnf_reg(1, "c1", "web", 1000, 5000, 0, 1));
	traffic(0, 40);
	ck_assert_int_eq(hsd_read_counters(d, 0, &st), 0);
	ck_assert_uint_eq(st.in, 40);
	ck_assert_uint_eq(st.left, 40);
	ck_assert_uint_eq(st.oq_head_ts, HS_TS_EMPTY);
	traffic(0, 5);
	ck_assert_int_eq(hsd_read_counters(d, 0, &st), 0);
	ck_assert_uint_eq(st.in, 5);
	/* A counter that goes back is a lie: refused, numbers zeroed. */
	cc->arrivals = 3;
	ck_assert_int_eq(hsd_read_counters(d, 0, &st), -EBADMSG);
	ck_assert_uint_eq(st.in, 0);
	ck_assert_uint_eq(d->chain[0].bad, 1);
	cc->arrivals = 45;
	/* A queue longer than the ring too. */
	cc->in_qlen = reg->geo.ring_size + 1;
	ck_assert_int_eq(hsd_read_counters(d, 0, &st), -EBADMSG);
	ck_assert_uint_eq(d->chain[0].bad, 2);
	cc->in_qlen = 2;
	ck_assert_int_eq(hsd_read_counters(d, 0, &st), 0);
	ck_assert_uint_eq(st.in, 0);
	ck_assert_uint_eq(st.left, 2);
}
END_TEST

/*
 * A VM's SLA over both directions: a chain registered with index2 counts
 * both blocks (sums, the older output head) and closes periods in both;
 * the second block is refused when it is the first or another chain's.
 */
START_TEST(chain_over_both_directions)
{
	struct hsd_reg r = vnf_reg(1, "c1", "web", 1000, 5000, 0, 1);
	struct hs_chain_stats st;
	char why[256];

	reg_ok(vm_reg(0, "web"));
	r.has_index2 = true;
	r.index2 = 0;
	ck_assert_int_eq(reg_err(r, why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "index2"));
	r.index2 = 9;
	ck_assert_int_eq(reg_err(r, why, sizeof(why)), -EINVAL);
	r.index2 = 1;
	reg_ok(r);
	/* Block 1 is c1's now: another chain cannot take it. */
	ck_assert_int_eq(reg_err(vnf_reg(2, "c2", "web", 1000, 5000, 1, 1), why, sizeof(why)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "c1"));
	/* c1 registered again must name the same second block. */
	r = vnf_reg(2, "c1", "web", 1000, 5000, 0, 1);
	ck_assert_int_eq(reg_err(r, why, sizeof(why)), -EINVAL);
	traffic(0, 40);
	traffic(1, 7);
	tcr_counters_queues(tcr_region_chain(reg, 0), 40, 3, 900);
	tcr_counters_queues(tcr_region_chain(reg, 1), 7, 2, 500);
	ck_assert_int_eq(hsd_read_counters(d, 0, &st), 0);
	ck_assert_uint_eq(st.in, 47);
	ck_assert_uint_eq(st.left, 47);
	ck_assert_uint_eq(st.oq_head_ts, 500);
	ck_assert_int_eq(hsd_period_begin(d), 0);	/* closes period 0: none counted */
	tcr_counters_taken(tcr_region_chain(reg, 1), 4);
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert_uint_eq(tcr_counters_mean_taken(tcr_region_chain(reg, 1), 1), 4);
	ck_assert_uint_eq(tcr_counters_mean_taken(tcr_region_chain(reg, 0), 1), 0);
}
END_TEST

/* Quota gating: each planned thread gets its ticks as a CFS quota and
 * its pCPU as a cpuset, the plan's numbers exactly. */
START_TEST(plan_to_quota_writes)
{
	char line[128];
	uint32_t n, seen = 0;

	d->cfg.gating = HSD_GATE_QUOTA;
	reg_ok(vm_reg(0, "web"));
	reg_ok(vm_reg(3, "tenant"));
	reg_ok(vnf_reg(1, "c1", "web", 1000, 5000, 0, 1));	/* 10 ticks */
	traffic(0, 500);
	log_buf[0] = '\0';
	enf.root.log_len = 0;
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert(d->plan_valid);
	for (uint32_t j = 0; j < 2; j++) {
		const struct hs_slot *s = hs_plan_slots(d->plan, j, &n);

		for (uint32_t i = 0; i < n; i++) {
			pid_t tid = d->thread[s[i].vcpu].tid;

			snprintf(line, sizeof(line), "hsd/t%d/cpu.cfs_quota_us %u\n", (int)tid,
				 s[i].ticks * 10000);
			ck_assert_msg(strstr(log_buf, line), "missing '%s' in\n%s", line, log_buf);
			snprintf(line, sizeof(line), "hsd/t%d/cpuset.cpus %d\n", (int)tid, j ? 3 : 2);
			ck_assert_msg(strstr(log_buf, line), "missing '%s' in\n%s", line, log_buf);
			if (s[i].kind == HS_KIND_VNF)
				ck_assert_uint_eq(s[i].ticks, 10);
			seen++;
		}
	}
	ck_assert_uint_eq(seen, 3);
	ck_assert_uint_eq(count(log_buf, "freezer.state"), 0);
	/* cfs mode: no caps, the whole partition, nothing frozen. */
	d->mode_next = HSD_CFS;
	enf.root.log_len = 0;
	log_buf[0] = '\0';
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert(!d->plan_valid);
	ck_assert_uint_eq(count(log_buf, "cpu.cfs_quota_us -1\n"), 3);
	ck_assert_uint_eq(count(log_buf, "cpuset.cpus 2-3\n"), 3);
}
END_TEST

/* Freezer gating: a gang starts at the same tick on both pCPUs; every
 * slot gets its ticks on the timeline; one owner runs per pCPU. */
START_TEST(timeline_gang_and_early_end)
{
	int32_t g0 = -1, g1 = -1;
	uint32_t start0 = 99, start1 = 99, n, k, vnf_ticks[NT] = { 0 };
	bool tested_interleave = false;

	reg_ok(vm_reg(0, "web"));
	reg_ok(vm_reg(3, "web2"));
	reg_ok(vm_reg(5, "web2"));	/* two VM threads share a pCPU */
	reg_ok(vnf_reg(4, "small", "web2", 1000, 5000, 1, 1));	/* 10 ticks */
	reg_ok(vnf_reg(1, "g", "web", 6000, 5000, 0, 2));	/* 2 x 30 ticks */
	reg_ok(vnf_reg(2, "g", "web", 6000, 5000, 0, 2));
	traffic(0, 1);
	traffic(1, 60);	/* small first: the gang must wait for it on one pCPU */
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert(d->plan_valid);
	for (k = 0; k < 50; k++) {
		int32_t o0 = hsd_owner(d, 0, k), o1 = hsd_owner(d, 1, k);

		if (o0 >= 0 && d->thread[o0].role == HSD_ROLE_VNF)
			vnf_ticks[o0]++;
		if (o1 >= 0 && d->thread[o1].role == HSD_ROLE_VNF)
			vnf_ticks[o1]++;
		if (o0 >= 0 && d->thread[o0].role == HSD_ROLE_VNF && d->thread[o0].chain == 1 &&
		    start0 == 99) {
			start0 = k;
			g0 = o0;
		}
		if (o1 >= 0 && d->thread[o1].role == HSD_ROLE_VNF && d->thread[o1].chain == 1 &&
		    start1 == 99) {
			start1 = k;
			g1 = o1;
		}
	}
	ck_assert_uint_eq(start0, 10);
	ck_assert_uint_eq(start0, start1);
	ck_assert_int_ne(g0, g1);
	/* Timeline ticks match the plan's. */
	for (uint32_t j = 0; j < 2; j++) {
		const struct hs_slot *s = hs_plan_slots(d->plan, j, &n);

		for (uint32_t i = 0; i < n; i++)
			if (s[i].kind == HS_KIND_VNF)
				ck_assert_uint_eq(vnf_ticks[s[i].vcpu], s[i].ticks);
	}
	/* VM slots: each thread its planned ticks, interleaved one tick at a
	 * time while two have ticks left. */
	for (uint32_t j = 0; j < 2; j++) {
		const struct hs_slot *s = hs_plan_slots(d->plan, j, &n);
		uint32_t vm_ticks[NT] = { 0 }, nvm = 0;
		int32_t prev = -1;

		for (k = 0; k < 50; k++) {
			int32_t o = hsd_owner(d, j, k);

			if (o >= 0 && d->thread[o].role == HSD_ROLE_VM)
				vm_ticks[o]++;
		}
		for (uint32_t i = 0; i < n; i++)
			if (s[i].kind == HS_KIND_VM) {
				ck_assert_uint_eq(vm_ticks[s[i].vcpu], s[i].ticks);
				nvm += s[i].ticks > 0;
			}
		if (nvm < 2)
			continue;
		for (k = 0; k < 50; k++) {
			int32_t o = hsd_owner(d, j, k);

			if (o < 0 || d->thread[o].role != HSD_ROLE_VM)
				continue;
			ck_assert_int_ne(o, prev);	/* the other has more ticks */
			prev = o;
			if (--vm_ticks[o] == 0)
				break;
		}
		tested_interleave = true;
	}
	ck_assert(tested_interleave);
	/* Tick 0, with an early end raised before the gang's window (late
	 * in the last period): it ends nothing and puts nobody in standby;
	 * at most one thread per pCPU thawed, the others frozen. */
	tcr_counters_raise_early(tcr_region_chain(reg, 0), TCR_EARLY_INPUT_EMPTY);
	hsd_tick(d, 0);
	ck_assert(!d->chain[1].standby);
	ck_assert(d->thread[g0].enf.frozen);
	ck_assert(d->thread[g1].enf.frozen);
	for (uint32_t j = 0; j < 2; j++) {
		uint32_t running = 0;

		for (uint32_t t = 0; t < d->nthread; t++)
			if (d->pcpu_of[t] == j && !d->thread[t].enf.frozen)
				running++;
		ck_assert_uint_le(running, 1);
	}
	/* Gang g raises (a) at its first tick: from the next tick on its
	 * pCPUs run VM threads instead. */
	for (k = 1; k <= start0; k++)
		hsd_tick(d, k);
	tcr_counters_raise_early(tcr_region_chain(reg, 0), TCR_EARLY_INPUT_EMPTY);
	hsd_tick(d, start0 + 1);
	ck_assert_uint_eq(d->chain[1].early_ends, 2);
	for (k = start0 + 1; k < 50; k++) {
		ck_assert_int_ne(hsd_owner(d, 0, k), g0);
		ck_assert_int_ne(hsd_owner(d, 1, k), g1);
	}
	/* standby: the gang waits thawed beside the VM threads, within its
	 * quota's CPU (these test threads sleep: far within it) */
	ck_assert(d->chain[1].standby);
	ck_assert(d->co_thawed[g0] && !d->thread[g0].enf.frozen);
	ck_assert(d->co_thawed[g1] && !d->thread[g1].enf.frozen);
	ck_assert_int_ge(hsd_owner(d, 0, start0 + 1), 0);
	ck_assert_int_eq(d->thread[hsd_owner(d, 0, start0 + 1)].role, HSD_ROLE_VM);
	ck_assert(!d->thread[hsd_owner(d, 0, start0 + 1)].enf.frozen);
	/* Its input stays empty: the slots stay ended. */
	tcr_counters_queues(tcr_region_chain(reg, 0), 0, 0, 0);
	hsd_tick(d, start0 + 2);
	ck_assert_uint_eq(d->chain[1].rewakes, 0);
	ck_assert_int_ne(hsd_owner(d, 0, start0 + 2), g0);
	/* A packet arrives: the gang takes back what it handed off, from
	 * this tick on, on both pCPUs at once, and not one tick more. */
	traffic(0, 1);
	hsd_tick(d, start0 + 3);
	ck_assert_uint_eq(d->chain[1].rewakes, 1);
	ck_assert_int_eq(hsd_owner(d, 0, start0 + 3), g0);
	ck_assert_int_eq(hsd_owner(d, 1, start0 + 3), g1);
	ck_assert(!d->thread[g0].enf.frozen);
	ck_assert(!d->thread[g1].enf.frozen);
	{
		uint32_t left0 = 0, left1 = 0;

		for (k = start0 + 3; k < 50; k++) {
			left0 += hsd_owner(d, 0, k) == g0;
			left1 += hsd_owner(d, 1, k) == g1;
		}
		/* the flag at start0 + 1 handed off all but start0; the
		 * handed-off ticks come back whole */
		ck_assert_uint_eq(left0, vnf_ticks[g0] - 1);
		ck_assert_uint_eq(left1, vnf_ticks[g1] - 1);
	}
	/* Raised again: handed off again. */
	tcr_counters_queues(tcr_region_chain(reg, 0), 0, 0, 0);
	tcr_counters_raise_early(tcr_region_chain(reg, 0), TCR_EARLY_INPUT_EMPTY);
	hsd_tick(d, start0 + 4);
	ck_assert_uint_eq(d->chain[1].early_ends, 4);
	ck_assert_int_ne(hsd_owner(d, 0, start0 + 4), g0);
	ck_assert(d->co_thawed[g0] && !d->thread[g0].enf.frozen);	/* standby */
	/* Ended by (b), the receiver has enough: packets in the input queue
	 * do not take the ticks back. */
	traffic(0, 1);
	hsd_tick(d, start0 + 5);
	ck_assert_uint_eq(d->chain[1].rewakes, 2);
	ck_assert_int_eq(hsd_owner(d, 0, start0 + 5), g0);
	tcr_counters_raise_early(tcr_region_chain(reg, 0), TCR_EARLY_OUTPUT_FULL);
	hsd_tick(d, start0 + 6);
	ck_assert_uint_eq(d->chain[1].early_ends, 6);
	hsd_tick(d, start0 + 7);
	ck_assert_uint_eq(d->chain[1].rewakes, 2);
	for (k = start0 + 6; k < 50; k++)
		ck_assert_int_ne(hsd_owner(d, 0, k), g0);
	/* (b) has no standby: frozen */
	ck_assert(d->chain[1].ended_b);
	ck_assert(d->thread[g0].enf.frozen);
	ck_assert(!d->co_thawed[g0]);
	/* The period is closed in the counters at the next boundary. */
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert_uint_eq(tcr_region_chain(reg, 0)->period, 1);
}
END_TEST

/* VM ticks are pooled: the VM threads of a pCPU are thawed together for
 * its VM ticks (CFS shares them), frozen at its VNF ticks, and the
 * freezer is not written while a pCPU passes from one VM tick to the
 * next (hs_daemon_tick.c, vm_pooled). */
START_TEST(vm_ticks_pooled)
{
	uint32_t j, k, a = UINT32_MAX, b = UINT32_MAX, vm_k = UINT32_MAX, v = UINT32_MAX;
	bool tested_beside = false;

	reg_ok(vm_reg(0, "web"));
	reg_ok(vm_reg(3, "web2"));
	reg_ok(vm_reg(5, "web2"));	/* two VM threads share a pCPU */
	reg_ok(vnf_reg(4, "small", "web2", 1000, 5000, 1, 1));	/* 10 ticks */
	traffic(1, 60);
	ck_assert_int_eq(hsd_period_begin(d), 0);
	for (j = 0; j < 2 && b == UINT32_MAX; j++) {
		a = b = UINT32_MAX;
		for (uint32_t t = 0; t < d->nthread; t++)
			if (d->pcpu_of[t] == j && d->thread[t].role == HSD_ROLE_VM)
				*(a == UINT32_MAX ? &a : &b) = t;
	}
	ck_assert_uint_ne(b, UINT32_MAX);
	j = d->pcpu_of[a];
	for (k = 0; k < 50; k++) {
		int32_t o = hsd_owner(d, j, k);

		if (o >= 0 && d->thread[o].role == HSD_ROLE_VM && vm_k == UINT32_MAX &&
		    k + 1 < 50 && hsd_owner(d, j, k + 1) >= 0 && hsd_owner(d, j, k + 1) != o)
			vm_k = k;
	}
	ck_assert_uint_ne(vm_k, UINT32_MAX);
	for (uint32_t t = 0; t < d->nthread; t++)
		if (d->thread[t].role == HSD_ROLE_VNF)
			v = t;
	ck_assert_uint_ne(v, UINT32_MAX);
	d->ticks_of[v] = 0;	/* small's budget spent: no standby beside */
	for (k = 0; k <= vm_k; k++)
		hsd_tick(d, k);
	ck_assert(!d->thread[a].enf.frozen);
	ck_assert(!d->thread[b].enf.frozen);
	{
		uint64_t w = d->gate_writes;

		hsd_tick(d, vm_k + 1);	/* the other VM thread owns this tick */
		ck_assert(!d->thread[a].enf.frozen);
		ck_assert(!d->thread[b].enf.frozen);
		if (hsd_owner(d, 1 - j, vm_k + 1) == hsd_owner(d, 1 - j, vm_k))
			ck_assert_uint_eq(d->gate_writes, w);
	}
	/* a VNF thread in standby beside them on that pCPU (budget left):
	 * only the tick's owner runs with it */
	if (d->pcpu_of[v] == j && d->chain[d->thread[v].chain].standby) {
		int32_t o;

		d->ticks_of[v] = 10;
		hsd_tick(d, vm_k + 2);
		o = hsd_owner(d, j, vm_k + 2);
		ck_assert(!d->thread[v].enf.frozen);
		ck_assert_int_ge(o, 0);
		ck_assert_int_eq(d->thread[o].role, HSD_ROLE_VM);
		ck_assert(!d->thread[o].enf.frozen);
		ck_assert(d->thread[o == (int32_t)a ? b : a].enf.frozen);
		tested_beside = true;
	}
	ck_assert(tested_beside);
	/* the next period, at a tick where a VNF slot runs on the pCPU */
	traffic(1, 60);
	ck_assert_int_eq(hsd_period_begin(d), 0);
	for (k = 0; k < 50; k++) {
		int32_t o;

		hsd_tick(d, k);
		o = hsd_owner(d, j, k);
		if (o >= 0 && d->thread[o].role == HSD_ROLE_VNF)
			break;
	}
	ck_assert_uint_lt(k, 50);
	ck_assert(d->thread[a].enf.frozen);
	ck_assert(d->thread[b].enf.frozen);
}
END_TEST

/* (a) from the counters: a chain whose slot starts with nothing waiting
 * or in processing hands it off without any thread raising a flag, and
 * takes it back when a packet comes (README, "Latency at light load"). */
START_TEST(idle_slot_ended_from_counters)
{
	uint32_t v = UINT32_MAX, j;

	reg_ok(vm_reg(0, "web"));
	reg_ok(vnf_reg(1, "a", "web", 1000, 5000, 0, 1));	/* 10 ticks */
	for (uint32_t t = 0; t < d->nthread; t++)
		if (d->thread[t].role == HSD_ROLE_VNF)
			v = t;
	ck_assert_uint_ne(v, UINT32_MAX);
	traffic(0, 5);
	ck_assert_int_eq(hsd_period_begin(d), 0);
	j = d->pcpu_of[v];
	ck_assert_uint_lt(j, 2);
	ck_assert_int_eq(hsd_owner(d, j, 0), (int32_t)v);
	/* the packets left before the slot: nothing waits, nothing in flight */
	tcr_counters_queues(tcr_region_chain(reg, 0), 0, 0, 0);
	hsd_tick(d, 0);
	ck_assert_uint_eq(d->chain[0].early_ends, 1);
	ck_assert_int_ne(hsd_owner(d, j, 0), (int32_t)v);
	/* standby: thawed beside the tick's owner, not owning it */
	ck_assert(d->chain[0].standby);
	ck_assert(d->co_thawed[v] && !d->thread[v].enf.frozen);
	/* a request arrives: the ticks come back at the next tick */
	traffic(0, 1);
	hsd_tick(d, 1);
	ck_assert_uint_eq(d->chain[0].rewakes, 1);
	ck_assert_int_eq(hsd_owner(d, j, 1), (int32_t)v);
	ck_assert(!d->thread[v].enf.frozen);
	/* empty again: standby again, until its busy time reaches its
	 * planned ticks (here: a budget of 0 ticks, spent) */
	tcr_counters_queues(tcr_region_chain(reg, 0), 0, 0, 0);
	hsd_tick(d, 2);
	ck_assert(d->co_thawed[v] && !d->thread[v].enf.frozen);
	d->ticks_of[v] = 0;
	hsd_tick(d, 3);
	ck_assert(d->thread[v].enf.frozen);
	ck_assert(!d->co_thawed[v]);
}
END_TEST

/* Gang presence: while the chain's longest slot runs, its VNF with the
 * shorter quota stays thawed beside its pCPU's owner, and is frozen with
 * the gang's end (hs_daemon_tick.c, co_wanted). */
START_TEST(gang_members_present_through_the_window)
{
	struct hsd_reg ids = vnf_reg(1, "c", "web", 1000, 50000, 0, 1);	/* 1 tick */
	struct hsd_reg waf = vnf_reg(2, "c", "web", 1000, 5000, 0, 1);	/* 10 ticks */
	uint32_t i = UINT32_MAX, w = UINT32_MAX, k;

	ids.vnf = "ids";
	waf.vnf = "waf";
	reg_ok(vm_reg(0, "web"));
	reg_ok(ids);
	reg_ok(waf);
	for (uint32_t t = 0; t < d->nthread; t++)
		if (d->thread[t].role == HSD_ROLE_VNF)
			*(d->thread[t].vnf == 0 ? &i : &w) = t;
	ck_assert_uint_ne(i, UINT32_MAX);
	ck_assert_uint_ne(w, UINT32_MAX);
	traffic(0, 60);
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert_uint_ne(d->pcpu_of[i], d->pcpu_of[w]);
	ck_assert_int_eq(hsd_owner(d, d->pcpu_of[i], 0), (int32_t)i);
	ck_assert_int_ne(hsd_owner(d, d->pcpu_of[i], 1), (int32_t)i);
	for (k = 0; k < 10; k++) {
		hsd_tick(d, k);
		ck_assert_int_eq(hsd_owner(d, d->pcpu_of[w], k), (int32_t)w);
		ck_assert_msg(!d->thread[i].enf.frozen, "ids frozen at tick %u", k);
		ck_assert(!d->thread[w].enf.frozen);
	}
	/* after the window both wait in standby within their quota's CPU
	 * (these threads sleep: budget left), then are frozen once it is
	 * spent (here: set to 0) */
	hsd_tick(d, 10);
	ck_assert(d->chain[0].standby);
	ck_assert(d->co_thawed[i] && !d->thread[i].enf.frozen);
	ck_assert(d->co_thawed[w] && !d->thread[w].enf.frozen);
	/* waf's budget (10 ticks) cannot be spent 4 ticks after a read
	 * found it unused: its busy time is not read again meanwhile */
	ck_assert_uint_eq(d->thread[w].seen_k, 10);
	for (k = 11; k < 15; k++)
		hsd_tick(d, k);
	ck_assert_uint_eq(d->thread[w].seen_k, 10);
	ck_assert(!d->thread[w].enf.frozen);
	d->ticks_of[i] = d->ticks_of[w] = 0;
	hsd_tick(d, 15);
	ck_assert(d->thread[i].enf.frozen);
	ck_assert(d->thread[w].enf.frozen);
	ck_assert(!d->co_thawed[i]);
	/* a new period begins with every VNF thread frozen, also one in
	 * standby (budget left again) or owning the last tick, until tick 0
	 * thaws whom the new plan starts */
	d->ticks_of[i] = d->ticks_of[w] = 10;
	hsd_tick(d, 16);
	ck_assert(d->co_thawed[i] && !d->thread[i].enf.frozen);
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert(d->thread[i].enf.frozen);
	ck_assert(d->thread[w].enf.frozen);
	ck_assert(!d->co_thawed[i]);
}
END_TEST

/* A VNF thread's busy time (read at each period's start) comes from its
 * /proc/TID/schedstat kept open (hs_daemon_registry.c, hsd_busy_ns): the
 * same file at every read, opened again for a new tid in the slot,
 * closed when unreadable. */
START_TEST(busy_time_file_kept_open)
{
	uint32_t t = UINT32_MAX;
	int fd;

	reg_ok(vm_reg(0, "web"));
	reg_ok(vnf_reg(1, "c1", "web", 1000, 5000, 0, 1));
	for (uint32_t i = 0; i < d->nthread; i++)
		if (d->thread[i].tid == tids[1])
			t = i;
	ck_assert_uint_ne(t, UINT32_MAX);
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert(d->thread[t].have_busy);
	fd = d->busy_fd[t];
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert(d->thread[t].have_busy);
	ck_assert_int_eq(d->busy_fd[t], fd);
	/* the slot holds another tid now: that thread's file */
	d->thread[t].tid = tids[2];
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert(d->thread[t].have_busy);
	ck_assert_int_eq(d->busy_fd_tid[t], tids[2]);
	ck_assert_int_ge(d->busy_fd[t], 0);
	/* a tid that does not exist: unreadable, no file left open */
	d->thread[t].tid = 0x3ffffff0;
	hsd_period_begin(d);
	ck_assert(!d->thread[t].have_busy);
	ck_assert_int_eq(d->busy_fd[t], -1);
	d->thread[t].tid = tids[1];
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert(d->thread[t].have_busy);
	ck_assert_int_ge(d->busy_fd[t], 0);
}
END_TEST

static void *short_lived(void *arg)
{
	int *fds = arg;
	char c;

	__atomic_store_n(&fds[2], (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	if (read(fds[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

/* A chain whose threads all exit is dropped; its name and region block
 * can be registered again by a new process. */
START_TEST(reap_dead_threads)
{
	int fds[3] = { -1, -1, 0 };
	pthread_t th;
	struct hsd_reg r;

	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, short_lived, fds), 0);
	while (!__atomic_load_n(&fds[2], __ATOMIC_ACQUIRE))
		usleep(100);
	reg_ok(vm_reg(0, "web"));
	r = vnf_reg(1, "c1", "web", 1000, 5000, 0, 1);
	r.tid = fds[2];
	reg_ok(r);
	ck_assert_uint_eq(d->cs->nchain, 1);
	ck_assert_int_eq(hsd_reap(d), 0);
	ck_assert_int_eq(hsd_period_begin(d), 0);	/* its schedstat, kept open */
	ck_assert_int_ge(d->busy_fd[1], 0);
	close(fds[1]);
	pthread_join(th, NULL);
	close(fds[0]);
	{
		/* pthread_join returns when the kernel clears the thread's tid,
		 * a moment before the thread leaves /proc: the daemon sees it
		 * gone at its next look (a period later in real life) */
		int reaped = 0;

		for (int i = 0; i < 200 && !reaped; i++) {
			reaped = hsd_reap(d);
			if (!reaped)
				usleep(5000);
		}
		ck_assert_int_eq(reaped, 1);
	}
	ck_assert_int_eq(d->busy_fd[1], -1);	/* closed with the thread */
	ck_assert(d->chain[0].dead);
	ck_assert_uint_eq(d->cs->nchain, 0);
	ck_assert_ptr_null(d->region[0].r);
	reg_ok(vnf_reg(1, "c1", "web", 2000, 5000, 0, 1));
	ck_assert_uint_eq(d->cs->nchain, 1);
	ck_assert_uint_eq(d->nchain, 2);
	ck_assert_ptr_nonnull(d->region[0].r);
}
END_TEST

static json_t *call(const char *text)
{
	json_t *req = json_loads(text, 0, NULL), *rep;

	ck_assert_ptr_nonnull(req);
	rep = hsd_ctl_handle(d, req);
	json_decref(req);
	ck_assert_ptr_nonnull(rep);
	return rep;
}

static bool is_ok(json_t *rep)
{
	bool ok = json_is_true(json_object_get(rep, "ok"));

	json_decref(rep);
	return ok;
}

START_TEST(period_set_at_run_time)
{
	char why[256];
	json_t *rep;

	reg_ok(vm_reg(0, "web"));
	reg_ok(vnf_reg(1, "c", "web", 1000, 5000, 0, 1));	/* 10 of 50 ticks */
	ck_assert_int_eq(hsd_period_begin(d), 0);
	/* refused: nothing changes */
	ck_assert_int_eq(hsd_set_period(d, 500, 50, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(hsd_set_period(d, 10000, HSD_MAX_TICKS + 1, why, sizeof(why)), -EINVAL);
	ck_assert_uint_eq(d->cfg.g, 50);
	ck_assert_uint_eq(d->cfg.tick_us, 10000);
	ck_assert(d->timeline_valid);
	ck_assert(!is_ok(call("{\"v\":1,\"cmd\":\"sched.period\",\"args\":{\"period\":-1}}")));
	ck_assert(!is_ok(call("{\"v\":1,\"cmd\":\"sched.period\",\"args\":{}}")));
	/* 4 ms x 25: the rest of this period is not gated, the next one
	 * is laid out on 25 ticks with the quota eq. 2 gives for g = 25 */
	rep = call("{\"v\":1,\"cmd\":\"sched.period\",\"args\":{\"period\":25,\"tick_us\":4000}}");
	ck_assert(json_is_true(json_object_get(rep, "ok")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(rep, "result"), "period")), 25);
	json_decref(rep);
	ck_assert_uint_eq(d->cfg.g, 25);
	ck_assert_uint_eq(d->cfg.tick_us, 4000);
	ck_assert(!d->timeline_valid);
	hsd_tick(d, 40);	/* an old tick past the new g: nothing happens */
	traffic(0, 60);
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert(d->timeline_valid);
	{
		uint32_t vnf = 0;

		for (uint32_t j = 0; j < 2; j++)
			for (uint32_t k = 0; k < 25; k++) {
				int32_t o = hsd_owner(d, j, k);

				vnf += o >= 0 && d->thread[o].role == HSD_ROLE_VNF;
			}
		ck_assert_uint_eq(vnf, 5);	/* 1000/5000 of 25 ticks */
		ck_assert_int_eq(hsd_owner(d, 0, 25), -1);
	}
}
END_TEST

START_TEST(control_commands)
{
	char buf[512];
	json_t *rep;

	ck_assert(is_ok(call("{\"v\":1,\"cmd\":\"sched.mode\",\"args\":{\"mode\":\"cfs\"}}")));
	ck_assert_int_eq(d->mode_next, HSD_CFS);
	ck_assert(!is_ok(call("{\"v\":1,\"cmd\":\"sched.mode\",\"args\":{\"mode\":\"fast\"}}")));
	ck_assert(!is_ok(call("{\"v\":1,\"cmd\":\"sched.mode\"}")));
	ck_assert(!is_ok(call("{\"v\":2,\"cmd\":\"sched.show\"}")));
	ck_assert(!is_ok(call("{\"v\":1,\"cmd\":\"sched.nope\"}")));
	ck_assert_int_eq(d->mode_next, HSD_CFS);
	snprintf(buf, sizeof(buf), "{\"v\":1,\"cmd\":\"sched.register\",\"args\":"
		 "{\"role\":\"vm\",\"tid\":%d,\"vm\":\"w\"}}", (int)tids[0]);
	ck_assert(is_ok(call(buf)));
	ck_assert(!is_ok(call(buf)));	/* twice */
	snprintf(buf, sizeof(buf), "{\"v\":1,\"cmd\":\"sched.register\",\"args\":"
		 "{\"role\":\"vnf\",\"tid\":%d,\"chain\":\"c\",\"vm\":\"w\",\"sla\":100,"
		 "\"f\":\"fast\",\"region\":\"%s\"}}", (int)tids[1], rpath);
	ck_assert(!is_ok(call(buf)));
	snprintf(buf, sizeof(buf), "{\"v\":1,\"cmd\":\"sched.register\",\"args\":"
		 "{\"role\":\"vnf\",\"tid\":%d,\"chain\":\"c\",\"vm\":\"w\",\"sla\":100,"
		 "\"f\":1000,\"region\":\"%s\",\"index\":0}}", (int)tids[1], rpath);
	ck_assert(is_ok(call(buf)));
	rep = call("{\"v\":1,\"cmd\":\"sched.show\"}");
	ck_assert(json_is_true(json_object_get(rep, "ok")));
	ck_assert_int_eq(json_array_size(json_object_get(json_object_get(rep, "result"), "threads")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(rep, "result"),
							   "mode_next")), "cfs");
	json_decref(rep);
}
END_TEST

/*
 * An SLA change re-registers a chain: sched.unregister drops its threads
 * (out of their groups: they run unmanaged) and the chain, and the same
 * threads register again with another SLA and thread count.
 */
START_TEST(unregister_chain_then_register_again)
{
	char why[256];

	reg_ok(vm_reg(0, "web"));
	reg_ok(vnf_reg(1, "c1", "web", 1000, 5000, 0, 2));
	reg_ok(vnf_reg(2, "c1", "web", 1000, 5000, 0, 2));
	ck_assert_uint_eq(d->cs->nchain, 1);
	/* Another SLA is refused while registered ... */
	ck_assert_int_eq(reg_err(vnf_reg(3, "c1", "web", 7000, 5000, 0, 2), why, sizeof(why)),
			 -EINVAL);
	ck_assert_int_eq(hsd_unregister_chain(d, "c2", why, sizeof(why)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(why, "c2"));
	ck_assert_int_eq(hsd_unregister_chain(d, "c1", why, sizeof(why)), 0);
	ck_assert_uint_eq(d->cs->nchain, 0);
	ck_assert_ptr_null(d->region[0].r);
	for (uint32_t i = 0; i < d->nthread; i++)
		if (d->thread[i].role == HSD_ROLE_VNF)
			ck_assert(d->thread[i].dead && !d->thread[i].enforced);
	ck_assert_int_eq(hsd_unregister_chain(d, "c1", why, sizeof(why)), -ENOENT);
	/* ... and accepted after, with one thread of the two. */
	reg_ok(vnf_reg(1, "c1", "web", 3000, 5000, 0, 1));
	ck_assert_uint_eq(d->cs->nchain, 1);
	ck_assert_uint_eq(d->cs->chain[0].sla_pps, 3000);
	ck_assert_uint_eq(d->cs->chain[0].vnf[0].max_threads, 1);
	ck_assert(is_ok(call("{\"v\":1,\"cmd\":\"sched.unregister\",\"args\":{\"chain\":\"c1\"}}")));
	ck_assert(!is_ok(call("{\"v\":1,\"cmd\":\"sched.unregister\",\"args\":{\"chain\":\"c1\"}}")));
	ck_assert(!is_ok(call("{\"v\":1,\"cmd\":\"sched.unregister\",\"args\":{\"chain\":3}}")));
	ck_assert(!is_ok(call("{\"v\":1,\"cmd\":\"sched.unregister\"}")));
	ck_assert_uint_eq(d->cs->nchain, 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hsd");
	TCase *tc = tcase_create("daemon");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, cpu_lists);
	tcase_add_test(tc, dryrun_backend);
	tcase_add_test(tc, backend_names);
	tcase_add_test(tc, register_refusals);
	tcase_add_test(tc, gang_waits_for_all_threads);
	tcase_add_test(tc, counters_refused);
	tcase_add_test(tc, plan_to_quota_writes);
	tcase_add_test(tc, timeline_gang_and_early_end);
	tcase_add_test(tc, idle_slot_ended_from_counters);
	tcase_add_test(tc, vm_ticks_pooled);
	tcase_add_test(tc, gang_members_present_through_the_window);
	tcase_add_test(tc, period_set_at_run_time);
	tcase_add_test(tc, control_commands);
	tcase_add_test(tc, unregister_chain_then_register_again);
	tcase_add_test(tc, chain_over_both_directions);
	tcase_add_test(tc, busy_time_file_kept_open);
	tcase_add_test(tc, reap_dead_threads);
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
