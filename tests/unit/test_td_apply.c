// SPDX-License-Identifier: MIT
/* Unit tests for tochaind/td_apply.c: the topology diff and SLA admission. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "td_apply.h"
#include "tc_check.h"

static struct td_state cur, next, again;
static struct td_plan plan;
static char err[512];

static json_t *topo(const char *text)
{
	json_error_t je;
	json_t *t = json_loads(text, 0, &je);

	ck_assert_msg(t != NULL, "bad test JSON: %s", je.text);
	return t;
}

static int plan_of(struct td_state *from, const char *text, struct td_state *to)
{
	json_t *t = topo(text);
	int rc;

	err[0] = '\0';
	rc = td_apply_plan(from, t, 2, NULL, NULL, to, &plan, err, sizeof(err));
	json_decref(t);
	return rc;
}

static const char base[] =
	"{\"vms\": [{\"name\": \"web1\", \"ip\": \"10.0.0.2/24\", \"line\": 1}],"
	" \"vnfs\": [{\"name\": \"fw\", \"kind\": \"null\", \"line\": 2},"
	"            {\"name\": \"ids\", \"kind\": \"null\", \"threads\": 2, \"line\": 3},"
	"            {\"name\": \"waf\", \"kind\": \"null\", \"rate\": 100000, \"line\": 4}],"
	" \"chains\": [{\"name\": \"web-in\", \"vm\": \"web1\", \"dir\": \"in\","
	"              \"hops\": [[\"fw\"], [\"ids\", \"waf\"]], \"line\": 5}]}";

static void setup(void)
{
	memset(&cur, 0, sizeof(cur));
}

START_TEST(create_then_nothing)
{
	ck_assert_int_eq(plan_of(&cur, base, &next), 0);
	ck_assert_uint_eq(plan.n, 5);
	ck_assert_int_eq(plan.c[0].op, TD_OP_CREATE);
	ck_assert_int_eq(plan.c[0].obj, TD_OBJ_VM);
	ck_assert_int_eq(plan.c[4].obj, TD_OBJ_CHAIN);
	ck_assert_uint_eq(next.nvms, 1);
	ck_assert_uint_eq(next.nvnfs, 3);
	ck_assert_uint_eq(next.nchains, 1);
	ck_assert_uint_eq(next.chains[0].nhops, 2);
	ck_assert_uint_eq(next.chains[0].hop_len[1], 2);
	ck_assert_str_eq(next.chains[0].hop[1][1], "waf");
	/* the same topology again: nothing to do */
	ck_assert_int_eq(plan_of(&next, base, &again), 0);
	ck_assert_uint_eq(plan.n, 0);
	ck_assert_mem_eq(&next, &again, sizeof(next));
}
END_TEST

START_TEST(updates_and_prune)
{
	ck_assert_int_eq(plan_of(&cur, base, &next), 0);
	/* a chain's hops change: one update */
	ck_assert_int_eq(plan_of(&next, "{\"chains\": [{\"name\": \"web-in\", \"vm\": \"web1\","
				 " \"dir\": \"in\", \"hops\": [[\"fw\"]]}]}", &again), 0);
	ck_assert_uint_eq(plan.n, 1);
	ck_assert_int_eq(plan.c[0].op, TD_OP_UPDATE);
	ck_assert_uint_eq(again.chains[0].nhops, 1);
	/* without prune, what the file omits stays */
	ck_assert_uint_eq(again.nvnfs, 3);
	/* with prune it goes, chains before VNFs before VMs */
	ck_assert_int_eq(plan_of(&next, "{\"prune\": true, \"vnfs\": [{\"name\": \"fw\","
				 " \"kind\": \"null\"}]}", &again), 0);
	ck_assert_uint_eq(plan.n, 4);
	ck_assert_int_eq(plan.c[0].obj, TD_OBJ_CHAIN);
	ck_assert_int_eq(plan.c[0].op, TD_OP_DELETE);
	ck_assert_int_eq(plan.c[3].obj, TD_OBJ_VM);
	ck_assert_uint_eq(again.nvnfs, 1);
	ck_assert_uint_eq(again.nvms, 0);
	ck_assert_uint_eq(again.nchains, 0);
	/* a VNF used by a chain cannot change kind or threads under it */
	ck_assert_int_eq(plan_of(&next, "{\"vnfs\": [{\"name\": \"ids\", \"kind\": \"null\","
				 " \"threads\": 3, \"line\": 7}]}", &again), -EINVAL);
	ck_assert_msg(strstr(err, "line 7: vnf ids is used by chain web-in"), "%s", err);
	/* but its rate can change */
	ck_assert_int_eq(plan_of(&next, "{\"vnfs\": [{\"name\": \"ids\", \"kind\": \"null\","
				 " \"threads\": 2, \"rate\": 5}]}", &again), 0);
	ck_assert_uint_eq(plan.n, 1);
	ck_assert(plan.c[0].rules);
}
END_TEST

START_TEST(refusals_name_the_line)
{
	static const struct {
		const char *topo, *msg;
	} bad[] = {
		{ "{\"vms\": [{\"name\": \"Web\", \"ip\": \"10.0.0.2/24\", \"line\": 3}]}", "line 3: vm name" },
		{ "{\"vms\": [{\"name\": \"w\", \"ip\": \"10.0.0.300/24\", \"line\": 4}]}", "line 4: vm w: ip" },
		{ "{\"vms\": [{\"name\": \"a\", \"ip\": \"10.0.0.2/24\"}, {\"name\": \"b\", \"ip\": \"10.0.0.2/24\", \"line\": 2}]}",
		  "line 2: vm b: ip 10.0.0.2/24 is already used" },
		{ "{\"vms\": [{\"name\": \"a\", \"ip\": \"10.0.0.2/24\"}, {\"name\": \"a\", \"ip\": \"10.0.0.3/24\", \"line\": 9}]}",
		  "line 9: vm a is defined twice" },
		{ "{\"vnfs\": [{\"name\": \"x\", \"kind\": \"dpi\", \"line\": 5}]}", "line 5: vnf x: --kind" },
		{ "{\"vnfs\": [{\"name\": \"x\", \"kind\": \"fw\", \"line\": 5}]}", "needs --rules" },
		{ "{\"vnfs\": [{\"name\": \"x\", \"kind\": \"null\", \"args\": [\"--region=/x\"]}]}", "sets itself" },
		{ "{\"vnfs\": [{\"name\": \"x\", \"kind\": \"null\", \"colour\": 1, \"line\": 2}]}", "unknown field 'colour'" },
		{ "{\"chains\": [{\"name\": \"c\", \"vm\": \"nosuch\", \"dir\": \"in\", \"hops\": [[\"a\"]], \"line\": 6}]}",
		  "line 6: chain c: no vm named 'nosuch'" },
		{ "{\"vms\": [{\"name\": \"a\", \"ip\": \"10.0.0.2/24\"}], \"vnfs\": [{\"name\": \"f\", \"kind\": \"null\"}],"
		  " \"chains\": [{\"name\": \"c\", \"vm\": \"a\", \"dir\": \"in\", \"hops\": [[\"f\"], [\"g\"]], \"line\": 8}]}",
		  "line 8: chain c: hop 2 names unknown vnf 'g'" },
		{ "{\"vms\": [{\"name\": \"a\", \"ip\": \"10.0.0.2/24\"}], \"vnfs\": [{\"name\": \"f\", \"kind\": \"null\"}],"
		  " \"chains\": [{\"name\": \"c\", \"vm\": \"a\", \"dir\": \"in\", \"hops\": [[\"f\"], [\"f\"]]}]}",
		  "appears twice" },
		{ "{\"vms\": [{\"name\": \"a\", \"ip\": \"10.0.0.2/24\"}], \"vnfs\": [{\"name\": \"f\", \"kind\": \"null\"}],"
		  " \"chains\": [{\"name\": \"c\", \"vm\": \"a\", \"dir\": \"in\", \"hops\": [[\"f\"]]},"
		  " {\"name\": \"d\", \"vm\": \"a\", \"dir\": \"in\", \"hops\": [[\"f\"]], \"line\": 4}]}",
		  "line 4: chain d: vm a already has the in chain 'c'" },
		{ "{\"vms\": [{\"name\": \"a\", \"ip\": \"10.0.0.2/24\"}], \"vnfs\": [{\"name\": \"f\", \"kind\": \"null\"}],"
		  " \"chains\": [{\"name\": \"c\", \"vm\": \"a\", \"dir\": \"in\", \"sla\": 1000, \"hops\": [[\"f\"]]}]}",
		  "vnf f has no rate: run 'sfc-ctl vnf calibrate f'" },
		{ "{\"vms\": [{\"name\": \"a\", \"ip\": \"10.0.0.2/24\"}], \"vnfs\": [{\"name\": \"f\", \"kind\": \"null\", \"rate\": 1000}],"
		  " \"chains\": [{\"name\": \"c\", \"vm\": \"a\", \"dir\": \"in\", \"sla\": 100000, \"hops\": [[\"f\"]]}]}",
		  "SLA refused on 2 CPUs" },
		{ "{\"vms\": [{\"name\": \"a\", \"ip\": \"10.0.0.2/24\", \"guest_mode\": \"0777\", \"line\": 7}]}",
		  "line 7: vm a: guest-mode '0777' must have read/write bits only" },
		{ "{\"vms\": [{\"name\": \"a\", \"ip\": \"10.0.0.2/24\", \"guest_group\": \"no-such-grp-x\"}]}",
		  "vm a: guest-group 'no-such-grp-x': no such group" },
		{ "{\"vms\": [{\"name\": \"a\", \"ip\": \"10.0.0.2/24\", \"slot_size\": 3000, \"line\": 2}]}",
		  "line 2: vm a: slot-size must be a power of two between 1K and 64K" },
		{ "{\"vms\": [{\"name\": \"a\", \"ip\": \"10.0.0.2/24\", \"slot_size\": 131072}]}",
		  "vm a: slot-size must be" },
		{ "{\"vms\": [{\"name\": \"a\", \"ip\": \"10.0.0.2/24\", \"slot_size\": \"8K\"}]}",
		  "vm a: slot-size must be" },
		{ "{\"vms\": [{\"name\": \"a\", \"ip\": \"10.0.0.2/24\", \"region_size\": 1048576,"
		  " \"slot_size\": 65536}]}",
		  "vm a: a region of 1048576 bytes holds 15 buffers of slot-size 65536, at least 64 are needed" },
		{ "{\"vms\": [{\"name\": \"a\", \"ip\": \"10.0.0.2/24\", \"region_size\": 1000}]}",
		  "vm a: region-size must be between 1M and 4G" },
		{ "{\"prune\": 1}", "prune" },
		{ "{\"vm\": []}", "unknown field 'vm'" },
		{ "[]", "not an object" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(plan_of(&cur, bad[i].topo, &next) == -EINVAL, "case %zu accepted", i);
		ck_assert_msg(strstr(err, bad[i].msg), "case %zu: '%s' lacks '%s'", i, err, bad[i].msg);
	}
}
END_TEST

/* A VM's guest users (td_guest.h): taken from the topology, kept when the
 * file leaves them out, a change refused as one of ip. */
START_TEST(guest_fields)
{
	static const char with[] = "{\"vms\": [{\"name\": \"web1\", \"ip\": \"10.0.0.2/24\","
				   " \"guest_mode\": \"660\", \"guest_group\": \"root\"}]}";

	ck_assert_msg(plan_of(&cur, with, &next) == 0, "%s", err);
	ck_assert_uint_eq(next.vms[0].guest_mode, 0660);
	ck_assert_str_eq(next.vms[0].guest_group, "root");
	ck_assert_int_eq(plan_of(&next, with, &again), 0);
	ck_assert_uint_eq(plan.n, 0);
	ck_assert_int_eq(plan_of(&next, "{\"vms\": [{\"name\": \"web1\", \"ip\": \"10.0.0.2/24\"}]}",
				 &again), 0);
	ck_assert_uint_eq(plan.n, 0);
	ck_assert_uint_eq(again.vms[0].guest_mode, 0660);
	ck_assert_int_eq(plan_of(&next, "{\"vms\": [{\"name\": \"web1\", \"ip\": \"10.0.0.2/24\","
				 " \"guest_mode\": \"0666\", \"line\": 3}]}", &again), -EINVAL);
	ck_assert_str_eq(err, "line 3: vm web1 exists with guest-mode 0660 and guest-group 'root': "
			 "changing them needs 'vm del' first");
}
END_TEST

/*
 * A VM's slot size (td_state.h): given, kept when the file leaves it out,
 * a change refused as one of the region size; by default 8 KiB while the
 * region holds 1024 buffers of it, else smaller, down to 2 KiB.
 */
START_TEST(slot_sizes)
{
	static const struct {
		const char *size;
		uint32_t slot;
	} dflt[] = {
		{ "", 8192 }, { ", \"region_size\": 67108864", 8192 },
		{ ", \"region_size\": 8388608", 4096 }, { ", \"region_size\": 4194304", 2048 },
		{ ", \"region_size\": 1048576", 2048 },
	};
	char text[256];

	for (size_t i = 0; i < sizeof(dflt) / sizeof(dflt[0]); i++) {
		snprintf(text, sizeof(text), "{\"vms\": [{\"name\": \"web1\", \"ip\": \"10.0.0.2/24\"%s}]}",
			 dflt[i].size);
		ck_assert_msg(plan_of(&cur, text, &next) == 0, "%s", err);
		ck_assert_msg(next.vms[0].slot_size == dflt[i].slot, "case %zu: %u", i,
			      next.vms[0].slot_size);
	}
	ck_assert_msg(plan_of(&cur, "{\"vms\": [{\"name\": \"web1\", \"ip\": \"10.0.0.2/24\","
			      " \"slot_size\": 16384}]}", &next) == 0, "%s", err);
	ck_assert_uint_eq(next.vms[0].slot_size, 16384);
	ck_assert_int_eq(plan_of(&next, "{\"vms\": [{\"name\": \"web1\", \"ip\": \"10.0.0.2/24\"}]}",
				 &again), 0);
	ck_assert_uint_eq(plan.n, 0);
	ck_assert_uint_eq(again.vms[0].slot_size, 16384);
	ck_assert_int_eq(plan_of(&next, "{\"vms\": [{\"name\": \"web1\", \"ip\": \"10.0.0.2/24\","
				 " \"slot_size\": 4096, \"line\": 2}]}", &again), -EINVAL);
	ck_assert_str_eq(err, "line 2: vm web1 exists with ip 10.0.0.2/24, region size 67108864 and "
			 "slot size 16384: changing them needs 'vm del' first");
}
END_TEST

START_TEST(admission)
{
	ck_assert_int_eq(plan_of(&cur, base, &next), 0);
	/* an SLA the VNFs' f can carry on 2 CPUs is admitted */
	ck_assert_int_eq(plan_of(&next, "{\"vnfs\": [{\"name\": \"fw\", \"kind\": \"null\", \"rate\": 50000},"
				 " {\"name\": \"ids\", \"kind\": \"null\", \"threads\": 2, \"rate\": 50000}],"
				 " \"chains\": [{\"name\": \"web-in\", \"vm\": \"web1\", \"dir\": \"in\","
				 " \"sla\": 10000, \"hops\": [[\"fw\"], [\"ids\"]]}]}", &again), 0);
	ck_assert_msg(td_admit(&again, 2, err, sizeof(err)) == 0, "%s", err);
	{
		uint64_t ticks;
		uint32_t nv;

		/* eq. 2: ceil(10000 * 50 / 50000) = 10 ticks per VNF, one vCPU each */
		ck_assert_int_eq(td_chain_quota(&again, 2, "web-in", &ticks, &nv), 0);
		ck_assert_uint_eq(ticks, 20);
		ck_assert_uint_eq(nv, 2);
		ck_assert_int_eq(td_chain_quota(&next, 2, "web-in", &ticks, &nv), -ENOENT);
	}
	/* the same on one CPU (two VNF vCPUs) is not */
	ck_assert_int_ne(td_admit(&again, 1, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "web-in"), "%s", err);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("td_apply");
	TCase *tc = tcase_create("apply");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, create_then_nothing);
	tcase_add_test(tc, updates_and_prune);
	tcase_add_test(tc, refusals_name_the_line);
	tcase_add_test(tc, admission);
	tcase_add_test(tc, guest_fields);
	tcase_add_test(tc, slot_sizes);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
