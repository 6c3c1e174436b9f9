// SPDX-License-Identifier: MIT
/* Unit tests for sfc-ctl/sc_topo.c: the topology file parser. */
#include <string.h>

#include "sc_topo.h"
#include "tc_check.h"

static char err[512];

static json_t *parse(const char *text)
{
	err[0] = '\0';
	return sc_topo_parse(text, strlen(text), "t.topo", "/etc/tc", err, sizeof(err));
}

START_TEST(good_file)
{
	json_t *t = parse("# a web server behind three VNFs\n"
			  "vm web1 ip=10.0.0.2/24 region-size=32M slot-size=16K guest-mode=0660 guest-group=tochain\n"
			  "\n"
			  "vnf fw kind=fw rules=fw.rules   # relative: from the file's folder\n"
			  "vnf ids kind=ids rules=/r/ids.rules threads=2 on-failure=closed rate=5000\n"
			  "vnf n kind=null arg=--deny-marker=EVIL arg=--cost-ns=10 domain=vnf-guest.1\n"
			  "\tchain web-in vm=web1 dir=in hop=fw hop=ids,n sla=2000\n");
	json_t *vm, *fw, *ids, *n, *ch;

	ck_assert_msg(t != NULL, "%s", err);
	vm = json_array_get(json_object_get(t, "vms"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(vm, "ip")), "10.0.0.2/24");
	ck_assert_int_eq(json_integer_value(json_object_get(vm, "region_size")), 32 << 20);
	ck_assert_int_eq(json_integer_value(json_object_get(vm, "slot_size")), 16 << 10);
	ck_assert_int_eq(json_integer_value(json_object_get(vm, "line")), 2);
	/* tochaind checks these two (td_guest.h) */
	ck_assert_str_eq(json_string_value(json_object_get(vm, "guest_mode")), "0660");
	ck_assert_str_eq(json_string_value(json_object_get(vm, "guest_group")), "tochain");
	fw = json_array_get(json_object_get(t, "vnfs"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(fw, "rules")), "/etc/tc/fw.rules");
	ck_assert_int_eq(json_integer_value(json_object_get(fw, "line")), 4);
	ids = json_array_get(json_object_get(t, "vnfs"), 1);
	ck_assert_str_eq(json_string_value(json_object_get(ids, "rules")), "/r/ids.rules");
	ck_assert_int_eq(json_integer_value(json_object_get(ids, "threads")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(ids, "rate")), 5000);
	ck_assert_str_eq(json_string_value(json_object_get(ids, "on_failure")), "closed");
	n = json_array_get(json_object_get(t, "vnfs"), 2);
	ck_assert_uint_eq(json_array_size(json_object_get(n, "args")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(n, "domain")), "vnf-guest.1");
	ck_assert_ptr_null(json_object_get(fw, "domain"));
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(n, "args"), 0)),
			 "--deny-marker=EVIL");
	ch = json_array_get(json_object_get(t, "chains"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(ch, "dir")), "in");
	ck_assert_int_eq(json_integer_value(json_object_get(ch, "sla")), 2000);
	ck_assert_uint_eq(json_array_size(json_object_get(ch, "hops")), 2);
	ck_assert_str_eq(json_string_value(json_array_get(json_array_get(json_object_get(ch, "hops"), 1), 1)), "n");
	ck_assert_int_eq(json_integer_value(json_object_get(ch, "line")), 7);
	json_decref(t);
	/* an empty file is an empty topology */
	t = parse("");
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(json_array_size(json_object_get(t, "vms")), 0);
	json_decref(t);
}
END_TEST

START_TEST(bad_files_name_the_line)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "router r1 ip=1.2.3.4/24\n", "t.topo:1: expected vm, vnf or chain" },
		{ "\nvm\n", "t.topo:2: vm: a NAME is needed" },
		{ "vm ip=1.2.3.4/24\n", "t.topo:1: vm: a NAME is needed" },
		{ "vm a ip\n", "t.topo:1: vm: expected KEY=VALUE" },
		{ "vm a ip=\n", "expected KEY=VALUE" },
		{ "vm a ip=1.2.3.4/24 ip=1.2.3.5/24\n", "'ip' given twice" },
		{ "vm a mac=1\n", "unknown key 'mac'" },
		{ "vm a region-size=lots\n", "region-size 'lots'" },
		{ "vm a slot-size=8KB\n", "slot-size '8KB' is not a size" },
		{ "vm a slot-size=8K slot-size=4K\n", "'slot-size' given twice" },
		{ "vm a guest-mode=0660 guest-mode=0666\n", "'guest-mode' given twice" },
		{ "vm a guest-group=g guest-group=h\n", "'guest-group' given twice" },
		{ "#\n#\nvnf x kind=null threads=-1\n", "t.topo:3: vnf: threads '-1'" },
		{ "vnf x kind=null rate=5k\n", "rate '5k'" },
		{ "chain c hop=a,,b\n", "empty VNF name" },
		{ "chain c hop=,\n", "empty VNF name" },
		{ "chain c sla=fast\n", "sla 'fast'" },
		{ "chain c vm=a vm=b\n", "'vm' given twice" },
		{ "vnf x kind=null domain=a domain=b\n", "'domain' given twice" },
		{ "vm a\x00 ip=1.2.3.4/24\n", "not a text file" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len = strlen(bad[i].text);
		json_t *t;

		if (i == sizeof(bad) / sizeof(bad[0]) - 1)
			len = 25;
		err[0] = '\0';
		t = sc_topo_parse(bad[i].text, len, "t.topo", "/", err, sizeof(err));
		ck_assert_msg(t == NULL, "case %zu accepted", i);
		ck_assert_msg(strstr(err, bad[i].msg), "case %zu: '%s' lacks '%s'", i, err, bad[i].msg);
	}
}
END_TEST

START_TEST(hops_and_numbers)
{
	long long n;
	json_t *h = sc_parse_hop("a,b,c");

	ck_assert_uint_eq(json_array_size(h), 3);
	json_decref(h);
	ck_assert_ptr_null(sc_parse_hop(""));
	ck_assert_ptr_null(sc_parse_hop("a,"));
	ck_assert_int_eq(sc_parse_uint("12", 1, 20, &n), 0);
	ck_assert_int_eq(n, 12);
	ck_assert_int_eq(sc_parse_uint("0", 1, 20, &n), -1);
	ck_assert_int_eq(sc_parse_uint("21", 1, 20, &n), -1);
	ck_assert_int_eq(sc_parse_uint("+3", 1, 20, &n), -1);
	ck_assert_int_eq(sc_parse_size("16M", &n), 0);
	ck_assert_int_eq(n, 16 << 20);
	ck_assert_int_eq(sc_parse_size("16X", &n), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sc_topo");
	TCase *tc = tcase_create("topo");

	tcase_add_test(tc, good_file);
	tcase_add_test(tc, bad_files_name_the_line);
	tcase_add_test(tc, hops_and_numbers);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
