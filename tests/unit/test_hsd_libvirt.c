// SPDX-License-Identifier: MIT
/* tochain-sched with libvirt domains, all dry-run: a domain's vCPUs
 * registered by name, the plan -> libvirt calls mapping (pins, the
 * domain's vcpu_quota, per-vCPU quotas), host threads still in the cgroup
 * backend, refusals that change nothing, a restart (new tids), a domain
 * that stops or goes away, libvirtd down between periods, the socket. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tochain/ctl_proto.h"
#include "hs_daemon.h"
#include "hs_daemon_ctl.h"
#include "hs_enforce.h"
#include "hs_libvirt.h"

#define NT 6

static pid_t tids[NT];
static pthread_t ths[NT];
static int pipefd[2];
static char cg_log[1 << 18];
static char lv_log[1 << 18];
static struct hse enf;
static struct hsl *lv;
static struct hsd *d;
/* What the backends logged since clear_logs(): cg_log, and LV (hsl
 * appends to its log: LV is where the new part starts). */
static const char *lv_new;
#define LV lv_new

static void *parked(void *arg)
{
	char c;

	__atomic_store_n((pid_t *)arg, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	if (read(pipefd[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

static void setup(void)
{
	struct hsd_cfg cfg;

	ck_assert_int_eq(pipe(pipefd), 0);
	for (int i = 0; i < NT; i++) {
		tids[i] = 0;
		ck_assert_int_eq(pthread_create(&ths[i], NULL, parked, &tids[i]), 0);
		while (!__atomic_load_n(&tids[i], __ATOMIC_ACQUIRE))
			usleep(100);
	}
	ck_assert_int_eq(hse_open(&enf, HSE_DRYRUN, "hsd", NULL, cg_log, sizeof(cg_log), 500), 0);
	lv = hsl_create(NULL, lv_log, sizeof(lv_log), &enf.root);
	ck_assert_ptr_nonnull(lv);
	hsd_cfg_default(&cfg);
	ck_assert_int_eq(hsd_parse_cpus("2,3", cfg.pcpu, HSD_MAX_PCPU, &cfg.npcpu), 0);
	snprintf(cfg.sync_cpus, sizeof(cfg.sync_cpus), "2-3");
	cfg.gating = HSD_GATE_QUOTA;
	d = calloc(1, sizeof(*d));
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(hsd_init(d, &cfg, &enf), 0);
	d->lv = lv;
	lv_new = lv_log;
}

static void teardown(void)
{
	hsd_fini(d);
	free(d);
	hsl_destroy(lv);
	hse_close(&enf);
	close(pipefd[1]);
	for (int i = 0; i < NT; i++)
		pthread_join(ths[i], NULL);
	close(pipefd[0]);
}

/* Declares domain @name with id @id whose vCPU k runs on tids[t[k]]. */
static void domain(const char *name, int id, const int *t, int n)
{
	char reply[1024];
	size_t len = 0;

	len += (size_t)snprintf(reply + len, sizeof(reply) - len, "{\"return\":[");
	for (int k = 0; k < n; k++)
		len += (size_t)snprintf(reply + len, sizeof(reply) - len,
					"%s{\"cpu-index\":%d,\"thread-id\":%d,\"props\":"
					"{\"thread-id\":0}}", k ? "," : "", k, (int)tids[t[k]]);
	snprintf(reply + len, sizeof(reply) - len, "]}");
	ck_assert_int_eq(hsl_dryrun_domain(lv, name, id, reply, false), 0);
}


static void clear_logs(void)
{
	cg_log[0] = '\0';
	enf.root.log_len = 0;
	lv_new = lv_log + strlen(lv_log);
}

static uint32_t thread_of(pid_t tid)
{
	for (uint32_t i = 0; i < d->nthread; i++)
		if (!d->thread[i].dead && d->thread[i].tid == tid)
			return i;
	return UINT32_MAX;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/*
 * The libvirt calls must be the plan's: each vCPU pinned to its pCPU,
 * vcpu_quota = the largest of the domain's planned quotas, the lower
 * ones in their vCPU group.  Returns how many vCPUs got their own write.
 */
static int check_mapping(const char *dom, const int *t, int n)
{
	int64_t q[HSL_MAX_VCPUS], top = 0;
	char line[160];
	int own = 0;

	for (int k = 0; k < n; k++) {
		uint32_t i = thread_of(tids[t[k]]);

		ck_assert_uint_ne(i, UINT32_MAX);
		ck_assert_msg(d->pcpu_of[i] != UINT32_MAX, "vcpu %d not planned", k);
		q[k] = (int64_t)d->ticks_of[i] * d->cfg.tick_us;
		if (q[k] < 1000)
			q[k] = 1000;
		if (q[k] > top)
			top = q[k];
		snprintf(line, sizeof(line), "pin %s vcpu=%d cpus=%d\n", dom, k,
			 d->cfg.pcpu[d->pcpu_of[i]]);
		ck_assert_msg(strstr(LV, line), "missing '%s' in\n%s", line, LV);
	}
	snprintf(line, sizeof(line), "schedinfo %s vcpu_period=500000 vcpu_quota=%" PRId64 "\n",
		 dom, top);
	ck_assert_msg(strstr(LV, line), "missing '%s' in\n%s", line, LV);
	for (int k = 0; k < n; k++) {
		snprintf(line, sizeof(line), "vcpu-cgroup %s vcpu=%d ", dom, k);
		if (q[k] == top) {
			ck_assert_msg(!strstr(LV, line), "'%s' at the ceiling in\n%s", line, LV);
			continue;
		}
		snprintf(line, sizeof(line), "vcpu-cgroup %s vcpu=%d quota=%" PRId64 " period=500000\n",
			 dom, k, q[k]);
		ck_assert_msg(strstr(LV, line), "missing '%s' in\n%s", line, LV);
		own++;
	}
	return own;
}

START_TEST(plan_to_libvirt_calls)
{
	static const int web[2] = { 0, 1 };
	struct hsd_reg host = { .role = HSD_ROLE_VM, .tid = 0, .vm = "host" };
	char why[256], line[64];

	/* a host thread (cgroup backend) shares the partition with the domain */
	host.tid = tids[2];
	ck_assert_int_eq(hsd_register(d, &host, why, sizeof(why)), 0);
	domain("web", 5, web, 2);
	ck_assert_msg(hsd_register_domain(d, "web", NULL, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(d->ndom, 1);
	ck_assert_str_eq(d->vm[d->dom[0].vm].name, "web");
	clear_logs();
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert(d->plan_valid);
	/* three VM vCPUs on two pCPUs: one shares, so the quotas differ and
	 * one vCPU of the domain needs its own write */
	ck_assert_int_eq(check_mapping("web", web, 2), 1);
	/* the domain's threads are not in the cgroup backend's groups; the
	 * host thread is */
	for (int k = 0; k < 2; k++) {
		snprintf(line, sizeof(line), "hsd/t%d/", (int)tids[k]);
		ck_assert_msg(!strstr(cg_log, line), "domain thread in a cgroup:\n%s", cg_log);
	}
	snprintf(line, sizeof(line), "hsd/t%d/cpu.cfs_quota_us ", (int)tids[2]);
	ck_assert_ptr_nonnull(strstr(cg_log, line));
	/* the same plan again writes nothing */
	clear_logs();
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert_str_eq(LV, "");
	/* cfs mode: the partition, uncapped */
	d->mode_next = HSD_CFS;
	clear_logs();
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert_ptr_nonnull(strstr(LV, "pin web vcpu=0 cpus=2-3\n"));
	ck_assert_ptr_nonnull(strstr(LV, "pin web vcpu=1 cpus=2-3\n"));
	ck_assert_ptr_nonnull(strstr(LV, "schedinfo web vcpu_period=500000 vcpu_quota=-1\n"));
	ck_assert_uint_eq(count(LV, "vcpu-cgroup web vcpu=1 quota=-1"), 0);
}
END_TEST

START_TEST(refusals_change_nothing)
{
	static const int web[2] = { 0, 1 }, dup[2] = { 3, 3 }, other[2] = { 2, 3 };
	struct hsd_reg host = { .role = HSD_ROLE_VM, .vm = "host" };
	char why[256];
	struct hsl *keep = d->lv;

	d->lv = NULL;
	ck_assert_int_eq(hsd_register_domain(d, "web", NULL, why, sizeof(why)), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(why, "no libvirt"));
	d->lv = keep;
	ck_assert_int_eq(hsd_register_domain(d, "a/b", NULL, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(hsd_register_domain(d, "web", "", why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(hsd_register_domain(d, "web", NULL, why, sizeof(why)), -ENOENT);
	domain("web", -1, web, 2);
	ck_assert_int_eq(hsd_register_domain(d, "web", NULL, why, sizeof(why)), -ESRCH);
	ck_assert_ptr_nonnull(strstr(why, "not running"));
	domain("web", 5, web, 2);
	hsl_dryrun_down(lv, true);
	ck_assert_int_eq(hsd_register_domain(d, "web", NULL, why, sizeof(why)), -ECONNREFUSED);
	hsl_dryrun_down(lv, false);
	/* one vCPU thread is registered already (as a host thread) */
	host.tid = tids[1];
	ck_assert_int_eq(hsd_register(d, &host, why, sizeof(why)), 0);
	ck_assert_int_eq(hsd_register_domain(d, "web", NULL, why, sizeof(why)), -EEXIST);
	ck_assert_uint_eq(d->nthread, 1);
	ck_assert_uint_eq(d->nvm, 1);
	/* two vCPUs on one thread */
	domain("tcg", 6, dup, 2);
	ck_assert_int_eq(hsd_register_domain(d, "tcg", NULL, why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "share thread"));
	ck_assert_uint_eq(d->nthread, 1);
	ck_assert_uint_eq(d->nvm, 1);
	/* a fine one, then the same domain again */
	domain("db", 7, other, 2);
	ck_assert_msg(hsd_register_domain(d, "db", "dbvm", why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(d->nthread, 3);
	ck_assert_int_eq(hsd_register_domain(d, "db", NULL, why, sizeof(why)), -EEXIST);
	ck_assert_uint_eq(d->nthread, 3);
	/* its threads cannot be registered by tid either */
	host.tid = tids[2];
	ck_assert_int_eq(hsd_register(d, &host, why, sizeof(why)), -EEXIST);
}
END_TEST

START_TEST(restart_stop_and_gone)
{
	static const int web[2] = { 0, 1 }, web2[2] = { 3, 4 };
	char why[256];
	uint32_t n0;

	domain("web", 5, web, 2);
	ck_assert_msg(hsd_register_domain(d, "web", NULL, why, sizeof(why)) == 0, "%s", why);
	ck_assert_int_eq(hsd_period_begin(d), 0);
	n0 = d->nthread;
	/* restarted between two periods: new id, new threads */
	domain("web", 9, web2, 2);
	clear_logs();
	ck_assert_int_eq(hsd_reap(d), 2);
	ck_assert_uint_eq(d->dom[0].restarts, 1);
	ck_assert(d->dom[0].running);
	ck_assert_uint_eq(d->nthread, n0);	/* the slots were reused */
	ck_assert_uint_eq(thread_of(tids[0]), UINT32_MAX);
	ck_assert_uint_ne(thread_of(tids[3]), UINT32_MAX);
	ck_assert_ptr_nonnull(strstr(LV, "query-cpus-fast web\n"));
	ck_assert_int_eq(hsd_period_begin(d), 0);
	/* a fresh domain state: everything is sent again */
	ck_assert_int_eq(check_mapping("web", web2, 2), 0);
	/* same id, same threads: nothing asked but the id */
	clear_logs();
	ck_assert_int_eq(hsd_reap(d), 0);
	ck_assert_uint_eq(count(LV, "query-cpus-fast"), 0);
	/* stopped: threads dropped, the domain waits */
	domain("web", -1, web2, 2);
	ck_assert_int_eq(hsd_reap(d), 2);
	ck_assert(!d->dom[0].running);
	ck_assert(!d->dom[0].gone);
	ck_assert_uint_eq(thread_of(tids[3]), UINT32_MAX);
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert(!d->plan_valid);	/* nothing left to plan */
	/* started again */
	domain("web", 10, web, 2);
	ck_assert_int_eq(hsd_reap(d), 0);
	ck_assert(d->dom[0].running);
	ck_assert_uint_eq(d->dom[0].restarts, 2);
	ck_assert_uint_eq(d->nthread, n0);
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert(d->plan_valid);
	/* undefined: dropped, the name is free again */
	ck_assert_int_eq(hsl_dryrun_domain(lv, "web", -1, NULL, true), 0);
	ck_assert_int_eq(hsd_reap(d), 2);
	ck_assert(d->dom[0].gone);
	ck_assert_int_eq(hsd_period_begin(d), 0);
	domain("web", 11, web2, 2);
	ck_assert_msg(hsd_register_domain(d, "web", NULL, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(d->ndom, 1);
	ck_assert_uint_eq(d->nthread, n0);
}
END_TEST

START_TEST(libvirtd_down_between_periods)
{
	static const int web[2] = { 0, 1 };
	struct hsd_reg host = { .role = HSD_ROLE_VM, .vm = "host" };
	char why[256];

	domain("web", 5, web, 2);
	ck_assert_msg(hsd_register_domain(d, "web", NULL, why, sizeof(why)) == 0, "%s", why);
	hsl_dryrun_down(lv, true);
	/* periods go on, the threads stay (they live), errors are counted */
	ck_assert_int_eq(hsd_reap(d), 0);
	ck_assert_int_eq(hsd_period_begin(d), 0);
	ck_assert(d->plan_valid);
	ck_assert_uint_ne(thread_of(tids[0]), UINT32_MAX);
	ck_assert_uint_ge(d->dom[0].errors, 2);
	ck_assert_ptr_nonnull(strstr(d->dom[0].last_error, "not reachable"));
	/* host threads still register meanwhile */
	host.tid = tids[2];
	ck_assert_int_eq(hsd_register(d, &host, why, sizeof(why)), 0);
	/* back: the plan reaches libvirt at the next period */
	hsl_dryrun_down(lv, false);
	clear_logs();
	ck_assert_int_eq(hsd_period_begin(d), 0);
	check_mapping("web", web, 2);
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

START_TEST(control_socket)
{
	static const int web[2] = { 0, 1 };
	json_t *rep, *res, *th, *doms;
	char buf[256];
	size_t i;
	int seen = 0;

	domain("web", 5, web, 2);
	rep = call("{\"v\":1,\"cmd\":\"sched.register\",\"args\":{\"role\":\"vnf\",\"domain\":\"web\"}}");
	ck_assert(!json_is_true(json_object_get(rep, "ok")));
	json_decref(rep);
	snprintf(buf, sizeof(buf), "{\"v\":1,\"cmd\":\"sched.register\",\"args\":"
		 "{\"role\":\"vm\",\"domain\":\"web\",\"tid\":%d}}", (int)tids[0]);
	rep = call(buf);
	ck_assert(!json_is_true(json_object_get(rep, "ok")));
	json_decref(rep);
	rep = call("{\"v\":1,\"cmd\":\"sched.register\",\"args\":{\"role\":\"vm\",\"domain\":7}}");
	ck_assert(!json_is_true(json_object_get(rep, "ok")));
	json_decref(rep);
	rep = call("{\"v\":1,\"cmd\":\"sched.register\",\"args\":{\"role\":\"vm\",\"domain\":\"nope\"}}");
	ck_assert(!json_is_true(json_object_get(rep, "ok")));
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(rep, "error")), "nope"));
	json_decref(rep);
	rep = call("{\"v\":1,\"cmd\":\"sched.register\",\"args\":{\"role\":\"vm\",\"domain\":\"web\","
		   "\"vm\":\"webvm\"}}");
	ck_assert(json_is_true(json_object_get(rep, "ok")));
	res = json_object_get(rep, "result");
	ck_assert_str_eq(json_string_value(json_object_get(res, "vm")), "webvm");
	ck_assert_int_eq(json_array_size(json_object_get(res, "tids")), 2);
	ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(res, "tids"), 1)),
			 tids[1]);
	json_decref(rep);
	ck_assert_int_eq(hsd_period_begin(d), 0);
	rep = call("{\"v\":1,\"cmd\":\"sched.show\"}");
	res = json_object_get(rep, "result");
	ck_assert_str_eq(json_string_value(json_object_get(res, "libvirt")), "qemu:///system");
	json_array_foreach(json_object_get(res, "threads"), i, th) {
		ck_assert_str_eq(json_string_value(json_object_get(th, "domain")), "web");
		ck_assert_str_eq(json_string_value(json_object_get(th, "vm")), "webvm");
		ck_assert_int_eq(json_integer_value(json_object_get(th, "vcpu_index")), (int)i);
		ck_assert_int_ge(json_integer_value(json_object_get(th, "quota_us")), 1000);
		seen++;
	}
	ck_assert_int_eq(seen, 2);
	doms = json_object_get(res, "domains");
	ck_assert_int_eq(json_array_size(doms), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(doms, 0), "state")),
			 "running");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(doms, 0), "id")), 5);
	json_decref(rep);
	/* gone: not listed any more */
	ck_assert_int_eq(hsl_dryrun_domain(lv, "web", -1, NULL, true), 0);
	ck_assert_int_eq(hsd_reap(d), 2);
	rep = call("{\"v\":1,\"cmd\":\"sched.show\"}");
	res = json_object_get(rep, "result");
	ck_assert_int_eq(json_array_size(json_object_get(res, "domains")), 0);
	ck_assert_int_eq(json_array_size(json_object_get(res, "threads")), 0);
	json_decref(rep);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hsd_libvirt");
	TCase *tc = tcase_create("domains");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, plan_to_libvirt_calls);
	tcase_add_test(tc, refusals_change_nothing);
	tcase_add_test(tc, restart_stop_and_gone);
	tcase_add_test(tc, libvirtd_down_between_periods);
	tcase_add_test(tc, control_socket);
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
