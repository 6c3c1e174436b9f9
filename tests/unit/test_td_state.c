// SPDX-License-Identifier: MIT
/* Unit tests for tochaind/td_state.c: validation and persistence. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "td_state.h"
#include "tc_check.h"

static char path[64];

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/tc-state-%d.json", getpid());
}

static void teardown(void)
{
	unlink(path);
}

static char *td_read_state_text(const char *p)
{
	FILE *f = fopen(p, "r");
	char *buf = calloc(1, 1 << 16);

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_gt(fread(buf, 1, (1 << 16) - 1, f), 0);
	fclose(f);
	return buf;
}

static void put_file(const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(names)
{
	const char *why;

	ck_assert(td_name_valid("web1", &why));
	ck_assert(td_name_valid("a-b-3", &why));
	ck_assert(!td_name_valid("", &why));
	ck_assert(!td_name_valid("Web", &why));
	ck_assert(!td_name_valid("-x", &why));
	ck_assert(!td_name_valid("a_b", &why));
	ck_assert(!td_name_valid("abcdefghijklm", &why));	/* 13 */
	ck_assert(td_name_valid("abcdefghijkl", &why));		/* 12 */
}
END_TEST

START_TEST(addresses)
{
	struct td_addr a;
	const char *why;

	ck_assert_int_eq(td_addr_parse("10.0.0.2/24", &a, &why), 0);
	ck_assert_int_eq(a.family, AF_INET);
	ck_assert_uint_eq(a.prefix, 24);
	ck_assert_str_eq(a.text, "10.0.0.2/24");
	ck_assert_int_eq(td_addr_parse("fd00::0:2/64", &a, &why), 0);
	ck_assert_int_eq(a.family, AF_INET6);
	ck_assert_str_eq(a.text, "fd00::2/64");
	ck_assert_int_eq(td_addr_parse("10.0.0.2", &a, &why), -EINVAL);
	ck_assert_int_eq(td_addr_parse("10.0.0.2/", &a, &why), -EINVAL);
	ck_assert_int_eq(td_addr_parse("10.0.0.2/33", &a, &why), -EINVAL);
	ck_assert_int_eq(td_addr_parse("10.0.0.2/0", &a, &why), -EINVAL);
	ck_assert_int_eq(td_addr_parse("10.0.0.2/-1", &a, &why), -EINVAL);
	ck_assert_int_eq(td_addr_parse("10.0.0.2/2x", &a, &why), -EINVAL);
	ck_assert_int_eq(td_addr_parse("10.0.0.256/24", &a, &why), -EINVAL);
	ck_assert_int_eq(td_addr_parse("fd00::2/129", &a, &why), -EINVAL);
	ck_assert_int_eq(td_addr_parse("host/24", &a, &why), -EINVAL);
	ck_assert_int_eq(td_addr_parse(NULL, &a, &why), -EINVAL);
}
END_TEST

START_TEST(sizes)
{
	uint64_t v;

	ck_assert_int_eq(td_size_parse("4096", &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_eq(td_size_parse("16M", &v), 0);
	ck_assert_uint_eq(v, 16u << 20);
	ck_assert_int_eq(td_size_parse("2GiB", &v), 0);
	ck_assert_uint_eq(v, 2ull << 30);
	ck_assert_int_eq(td_size_parse("1k", &v), 0);
	ck_assert_uint_eq(v, 1024);
	ck_assert_int_eq(td_size_parse("", &v), -EINVAL);
	ck_assert_int_eq(td_size_parse("-1", &v), -EINVAL);
	ck_assert_int_eq(td_size_parse("12Q", &v), -EINVAL);
	ck_assert_int_eq(td_size_parse("1Mx", &v), -EINVAL);
	ck_assert_int_eq(td_size_parse("99999999999999999999G", &v), -EINVAL);
	ck_assert_int_eq(td_size_parse("17179869184G", &v), -ERANGE);
}
END_TEST

START_TEST(save_load_roundtrip)
{
	static struct td_state a, b;
	const char *why;
	char err[256];

	memset(&a, 0, sizeof(a));
	for (int i = 0; i < 3; i++) {
		struct td_vm *vm = &a.vms[a.nvms++];
		char ip[32];

		snprintf(vm->name, sizeof(vm->name), "vm%d", i);
		snprintf(ip, sizeof(ip), "10.0.0.%d/24", i + 2);
		ck_assert_int_eq(td_addr_parse(ip, &vm->ip, &why), 0);
		vm->region_size = 1u << 24;
		vm->slot_size = 2048u << i;
		strcpy(vm->netns, "fab-vm");
		strcpy(vm->veth, "tv00");
		strcpy(vm->cgroup, "tochain/fab/toe-vm");
		strcpy(vm->region, "/dev/shm/x.region");
		vm->toe_pid = 100 + i;
	}
	/* libvirt VMs: their link's wait mode and pid */
	strcpy(a.vms[1].domain, "dom-1");
	a.vms[1].wait = TD_WAIT_POLL;
	strcpy(a.vms[2].domain, "dom-2");
	a.vms[2].wait = TD_WAIT_DOORBELL;
	a.vms[2].link_pid = 300;
	/* a stand-in VM's guest users (td_guest.h) */
	a.vms[0].guest_mode = 0660;
	strcpy(a.vms[0].guest_group, "tochain");
	ck_assert_int_eq(td_state_save(path, &a), 0);
	ck_assert_int_eq(td_state_load(path, &b, err, sizeof(err)), 0);
	ck_assert_uint_eq(b.nvms, 3);
	ck_assert_mem_eq(&a.vms[0], &b.vms[0], sizeof(a.vms[0]));
	ck_assert_mem_eq(&a.vms[1], &b.vms[1], sizeof(a.vms[1]));
	ck_assert_mem_eq(&a.vms[2], &b.vms[2], sizeof(a.vms[2]));
	/* a domain VM of an older state (no wait): ivshmem-plain, so poll */
	put_file("{\"version\": 1, \"vms\": [{\"name\": \"a\", \"ip\": \"1.2.3.4/24\", \"netns\": \"n\","
		 " \"veth\": \"v\", \"cgroup\": \"c\", \"region\": \"r\", \"region_size\": 5,"
		 " \"domain\": \"d\"}]}");
	ck_assert_msg(td_state_load(path, &b, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(b.vms[0].wait, TD_WAIT_POLL);
	ck_assert_int_eq(b.vms[0].link_pid, 0);
	/* nor a slot size: its TOE ran the 2 KiB slots of then */
	ck_assert_uint_eq(b.vms[0].slot_size, TD_SLOT_SIZE_OLD);
	ck_assert_int_eq(td_state_save(path, &a), 0);
	ck_assert_int_eq(td_state_load(path, &b, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(td_state_find_vm(&b, "vm1"));
	ck_assert_ptr_null(td_state_find_vm(&b, "vm9"));
	/* No temporary file is left behind. */
	{
		char tmp[80];

		snprintf(tmp, sizeof(tmp), "%s.tmp", path);
		ck_assert_int_ne(access(tmp, F_OK), 0);
	}
}
END_TEST

/* VNFs, chains and instances survive a save and a strict reload. */
START_TEST(objects_roundtrip)
{
	static struct td_state a, b;
	static const char topo[] =
		"{\"vnfs\": [{\"name\": \"fw\", \"kind\": \"fw\", \"rules\": \"/r/fw.rules\", \"threads\": 2,"
		"  \"on_failure\": \"open\", \"rate\": 7000, \"args\": [\"--paranoia=2\"]},"
		" {\"name\": \"n\", \"kind\": \"null\"}],"
		" \"chains\": [{\"name\": \"web-in\", \"vm\": \"vm0\", \"dir\": \"in\", \"sla\": 100,"
		"  \"hops\": [[\"fw\"], [\"n\"]]}]}";
	json_t *t = json_loads(topo, 0, NULL);
	const char *why;
	char err[256];

	memset(&a, 0, sizeof(a));
	strcpy(a.vms[0].name, "vm0");
	ck_assert_int_eq(td_addr_parse("10.0.0.2/24", &a.vms[0].ip, &why), 0);
	a.vms[0].region_size = 1 << 20;
	a.vms[0].slot_size = 4096;
	strcpy(a.vms[0].region, "/r");
	a.nvms = 1;
	ck_assert_int_eq(td_vnf_from_json(json_array_get(json_object_get(t, "vnfs"), 0), false,
					  &a.vnfs[0], err, sizeof(err)), 0);
	ck_assert_int_eq(td_vnf_from_json(json_array_get(json_object_get(t, "vnfs"), 1), false,
					  &a.vnfs[1], err, sizeof(err)), 0);
	a.vnfs[1].calibrated = 123456;
	a.nvnfs = 2;
	ck_assert_int_eq(td_chain_from_json(json_array_get(json_object_get(t, "chains"), 0),
					    &a.chains[0], err, sizeof(err)), 0);
	a.nchains = 1;
	strcpy(a.insts[0].vnf, "n");
	strcpy(a.insts[0].vm, "vm0");
	a.insts[0].pid = 4242;
	a.ninsts = 1;
	json_decref(t);
	ck_assert_int_eq(td_state_check(&a, err, sizeof(err)), 0);
	ck_assert_int_eq(td_state_save(path, &a), 0);
	ck_assert_msg(td_state_load(path, &b, err, sizeof(err)) == 0, "%s", err);
	ck_assert_mem_eq(&a.vnfs[0], &b.vnfs[0], sizeof(a.vnfs[0]));
	ck_assert_mem_eq(&a.vnfs[1], &b.vnfs[1], sizeof(a.vnfs[1]));
	ck_assert_mem_eq(&a.chains[0], &b.chains[0], sizeof(a.chains[0]));
	ck_assert_mem_eq(&a.insts[0], &b.insts[0], sizeof(a.insts[0]));
	ck_assert_uint_eq(b.vnfs[0].threads, 2);
	ck_assert(b.vnfs[0].fail_open);
	/* a chain naming an unknown VNF, or an instance of one, is refused whole */
	strcpy(a.chains[0].hop[1][0], "zz");
	ck_assert_int_eq(td_state_save(path, &a), 0);
	ck_assert_int_eq(td_state_load(path, &b, err, sizeof(err)), -EBADMSG);
	ck_assert_msg(strstr(err, "unknown vnf 'zz'"), "%s", err);
	ck_assert_uint_eq(b.nvms + b.nvnfs + b.nchains, 0);
	strcpy(a.chains[0].hop[1][0], "n");
	strcpy(a.insts[0].vnf, "gone");
	ck_assert_int_eq(td_state_save(path, &a), 0);
	ck_assert_int_eq(td_state_load(path, &b, err, sizeof(err)), -EBADMSG);
	/* and validation of single objects */
	t = json_loads("{\"name\": \"x\", \"kind\": \"null\", \"rate\": 0}", 0, NULL);
	ck_assert_int_eq(td_vnf_from_json(t, false, &b.vnfs[0], err, sizeof(err)), -EINVAL);
	json_decref(t);
	t = json_loads("{\"name\": \"x\", \"kind\": \"null\", \"calibrated\": 5}", 0, NULL);
	ck_assert_int_eq(td_vnf_from_json(t, false, &b.vnfs[0], err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(td_vnf_from_json(t, true, &b.vnfs[0], err, sizeof(err)), 0);
	json_decref(t);
	t = json_loads("{\"name\": \"x\", \"vm\": \"v\", \"dir\": \"up\", \"hops\": [[\"a\"]]}", 0, NULL);
	ck_assert_int_eq(td_chain_from_json(t, &a.chains[1], err, sizeof(err)), -EINVAL);
	json_decref(t);
	t = json_loads("{\"name\": \"x\", \"vm\": \"v\", \"dir\": \"in\", \"hops\": []}", 0, NULL);
	ck_assert_int_eq(td_chain_from_json(t, &a.chains[1], err, sizeof(err)), -EINVAL);
	json_decref(t);
	ck_assert(!td_objname_valid("A", &why));
	ck_assert(td_objname_valid("web_in-2", &why));
	ck_assert(!td_vnf_arg_valid("--rules=/x", &why));
	ck_assert(!td_vnf_arg_valid("-x", &why));
	ck_assert(td_vnf_arg_valid("--deny-marker=ATTACK", &why));
}
END_TEST

/* A VNF in a libvirt domain: its domain and its instance's survive a
 * strict reload; a bad domain, or a VM's own domain, is refused. */
START_TEST(vnf_domain_roundtrip)
{
	static struct td_state a, b;
	const char *why;
	char err[256], *text;
	json_t *t;

	memset(&a, 0, sizeof(a));
	strcpy(a.vms[0].name, "web");
	ck_assert_int_eq(td_addr_parse("10.0.0.2/24", &a.vms[0].ip, &why), 0);
	a.vms[0].region_size = 1 << 20;
	a.vms[0].slot_size = 4096;
	strcpy(a.vms[0].region, "/r");
	strcpy(a.vms[0].domain, "web-dom");
	a.nvms = 1;
	t = json_loads("{\"name\": \"g\", \"kind\": \"null\", \"domain\": \"vnf.dom+1\"}", 0, NULL);
	ck_assert_msg(td_vnf_from_json(t, false, &a.vnfs[0], err, sizeof(err)) == 0, "%s", err);
	json_decref(t);
	ck_assert_str_eq(a.vnfs[0].domain, "vnf.dom+1");
	a.nvnfs = 1;
	strcpy(a.chains[0].name, "c");
	strcpy(a.chains[0].vm, "web");
	a.chains[0].nhops = 1;
	a.chains[0].hop_len[0] = 1;
	strcpy(a.chains[0].hop[0][0], "g");
	a.nchains = 1;
	strcpy(a.insts[0].vnf, "g");
	strcpy(a.insts[0].vm, "web");
	strcpy(a.insts[0].domain, "vnf.dom+1");
	a.insts[0].pid = 777;
	a.ninsts = 1;
	ck_assert_int_eq(td_state_check(&a, err, sizeof(err)), 0);
	ck_assert_int_eq(td_state_save(path, &a), 0);
	ck_assert_msg(td_state_load(path, &b, err, sizeof(err)) == 0, "%s", err);
	ck_assert_mem_eq(&a.vnfs[0], &b.vnfs[0], sizeof(a.vnfs[0]));
	ck_assert_mem_eq(&a.insts[0], &b.insts[0], sizeof(a.insts[0]));
	ck_assert_str_eq(b.insts[0].domain, "vnf.dom+1");
	/* the JSON of a host VNF has no "domain" */
	t = td_vnf_json(&a.vnfs[0]);
	ck_assert_str_eq(json_string_value(json_object_get(t, "domain")), "vnf.dom+1");
	json_decref(t);
	/* an instance's domain is checked as strictly as the rest */
	text = td_read_state_text(path);
	ck_assert_ptr_nonnull(text);
	{
		char *p = strstr(text, "\"domain\": \"vnf.dom+1\"\n    }");

		ck_assert_ptr_nonnull(p);
		memcpy(p + 11, "-", 1);	/* "-nf.dom+1": may not start with '-' */
		put_file(text);
		ck_assert_int_eq(td_state_load(path, &b, err, sizeof(err)), -EBADMSG);
		ck_assert_uint_eq(b.nvms + b.nvnfs + b.ninsts, 0);
	}
	free(text);
	/* a VNF may not run in the domain of a VM */
	strcpy(a.vnfs[0].domain, "web-dom");
	ck_assert_int_eq(td_state_check(&a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "libvirt domain of vm web"), "%s", err);
	ck_assert_int_eq(td_state_save(path, &a), 0);
	ck_assert_int_eq(td_state_load(path, &b, err, sizeof(err)), -EBADMSG);
	/* bad domain names */
	t = json_loads("{\"name\": \"g\", \"kind\": \"null\", \"domain\": \"a/b\"}", 0, NULL);
	ck_assert_int_eq(td_vnf_from_json(t, false, &b.vnfs[0], err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "--domain"), "%s", err);
	json_decref(t);
	t = json_loads("{\"name\": \"g\", \"kind\": \"null\", \"domain\": 5}", 0, NULL);
	ck_assert_int_eq(td_vnf_from_json(t, false, &b.vnfs[0], err, sizeof(err)), -EINVAL);
	json_decref(t);
	t = json_loads("{\"name\": \"g\", \"kind\": \"null\", \"domain\": \"\"}", 0, NULL);
	ck_assert_int_eq(td_vnf_from_json(t, false, &b.vnfs[0], err, sizeof(err)), -EINVAL);
	json_decref(t);
}
END_TEST

START_TEST(missing_file_is_empty_state)
{
	static struct td_state st;
	char err[256];

	ck_assert_int_eq(td_state_load("/nonexistent/state.json", &st, err, sizeof(err)), 0);
	ck_assert_uint_eq(st.nvms, 0);
}
END_TEST

START_TEST(bad_files_are_refused_whole)
{
	static const char *const bad[] = {
		"",
		"{",
		"[]",
		"{\"version\": 2, \"vms\": []}",
		"{\"version\": 1}",
		"{\"version\": 1, \"vms\": {}}",
		"{\"version\": 1, \"vms\": [1]}",
		"{\"version\": 1, \"vms\": [{\"name\": \"Bad\"}]}",
		"{\"version\": 1, \"vms\": [{\"name\": \"a\", \"ip\": \"1.2.3.4/24\", \"netns\": \"n\","
		" \"veth\": \"v\", \"cgroup\": \"c\", \"region\": \"r\", \"region_size\": -5}]}",
		"{\"version\": 1, \"vms\": [{\"name\": \"a\", \"ip\": \"1.2.3.4/24\", \"netns\": \"n\","
		" \"veth\": \"v\", \"cgroup\": \"c\", \"region\": \"r\", \"region_size\": 5},"
		" {\"name\": \"a\", \"ip\": \"1.2.3.5/24\", \"netns\": \"n\","
		" \"veth\": \"v\", \"cgroup\": \"c\", \"region\": \"r\", \"region_size\": 5}]}",
		"{\"version\": 1, \"vms\": [{\"name\": \"a\", \"ip\": \"1.2.3.4/24\", \"netns\": \"n\","
		" \"veth\": \"v0123456789abcdef\", \"cgroup\": \"c\", \"region\": \"r\", \"region_size\": 5}]}",
		/* a bad guest mode or group, or either with a domain */
		"{\"version\": 1, \"vms\": [{\"name\": \"a\", \"ip\": \"1.2.3.4/24\", \"netns\": \"n\","
		" \"veth\": \"v\", \"cgroup\": \"c\", \"region\": \"r\", \"region_size\": 5,"
		" \"guest_mode\": \"0777\"}]}",
		"{\"version\": 1, \"vms\": [{\"name\": \"a\", \"ip\": \"1.2.3.4/24\", \"netns\": \"n\","
		" \"veth\": \"v\", \"cgroup\": \"c\", \"region\": \"r\", \"region_size\": 5,"
		" \"guest_group\": \"-x\"}]}",
		"{\"version\": 1, \"vms\": [{\"name\": \"a\", \"ip\": \"1.2.3.4/24\", \"netns\": \"n\","
		" \"veth\": \"v\", \"cgroup\": \"c\", \"region\": \"r\", \"region_size\": 5,"
		" \"domain\": \"d\", \"guest_mode\": \"0660\"}]}",
		/* a slot size that is no power of two, or out of range */
		"{\"version\": 1, \"vms\": [{\"name\": \"a\", \"ip\": \"1.2.3.4/24\", \"netns\": \"n\","
		" \"veth\": \"v\", \"cgroup\": \"c\", \"region\": \"r\", \"region_size\": 5,"
		" \"slot_size\": 3000}]}",
		"{\"version\": 1, \"vms\": [{\"name\": \"a\", \"ip\": \"1.2.3.4/24\", \"netns\": \"n\","
		" \"veth\": \"v\", \"cgroup\": \"c\", \"region\": \"r\", \"region_size\": 5,"
		" \"slot_size\": 0}]}",
		"{\"version\": 1, \"vms\": [{\"name\": \"a\", \"ip\": \"1.2.3.4/24\", \"netns\": \"n\","
		" \"veth\": \"v\", \"cgroup\": \"c\", \"region\": \"r\", \"region_size\": 5,"
		" \"slot_size\": \"8K\"}]}",
		/* a wait mode without a domain, an unknown one, a bad link pid */
		"{\"version\": 1, \"vms\": [{\"name\": \"a\", \"ip\": \"1.2.3.4/24\", \"netns\": \"n\","
		" \"veth\": \"v\", \"cgroup\": \"c\", \"region\": \"r\", \"region_size\": 5,"
		" \"wait\": \"poll\"}]}",
		"{\"version\": 1, \"vms\": [{\"name\": \"a\", \"ip\": \"1.2.3.4/24\", \"netns\": \"n\","
		" \"veth\": \"v\", \"cgroup\": \"c\", \"region\": \"r\", \"region_size\": 5,"
		" \"domain\": \"d\", \"wait\": \"sometimes\"}]}",
		"{\"version\": 1, \"vms\": [{\"name\": \"a\", \"ip\": \"1.2.3.4/24\", \"netns\": \"n\","
		" \"veth\": \"v\", \"cgroup\": \"c\", \"region\": \"r\", \"region_size\": 5,"
		" \"domain\": \"d\", \"wait\": \"poll\", \"link_pid\": -1}]}",
		"{\"version\": 1, \"version\": 1, \"vms\": []}",
		"\x01\x02garbage",
	};
	static struct td_state st;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put_file(bad[i]);
		err[0] = '\0';
		ck_assert_msg(td_state_load(path, &st, err, sizeof(err)) == -EBADMSG, "case %zu", i);
		ck_assert_msg(err[0] != '\0', "case %zu has no message", i);
		ck_assert_uint_eq(st.nvms, 0);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("td_state");
	TCase *tc = tcase_create("state");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, names);
	tcase_add_test(tc, addresses);
	tcase_add_test(tc, sizes);
	tcase_add_test(tc, save_load_roundtrip);
	tcase_add_test(tc, objects_roundtrip);
	tcase_add_test(tc, vnf_domain_roundtrip);
	tcase_add_test(tc, missing_file_is_empty_state);
	tcase_add_test(tc, bad_files_are_refused_whole);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
