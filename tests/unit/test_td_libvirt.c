// SPDX-License-Identifier: MIT
/*
 * Unit tests for tochaind/td_libvirt.c: the parsers and validators, the
 * domain field of the state, and the error paths against libvirt's
 * built-in test driver (test:///default: no daemon, no QEMU).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "td_libvirt.h"
#include "td_state.h"
#include "tc_check.h"

START_TEST(domain_names)
{
	const char *why;

	ck_assert(td_domain_valid("tochain-710.42", &why));
	ck_assert(td_domain_valid("Web_1+x", &why));
	ck_assert(!td_domain_valid("", &why));
	ck_assert(!td_domain_valid("-x", &why));
	ck_assert(!td_domain_valid(".x", &why));
	ck_assert(!td_domain_valid("a/b", &why));
	ck_assert(!td_domain_valid("a'b", &why));
	ck_assert(!td_domain_valid("a<b", &why));
	ck_assert(!td_domain_valid("a b", &why));
	{
		char n[TD_DOMAIN_MAX + 1];

		memset(n, 'a', sizeof(n));
		n[TD_DOMAIN_MAX - 1] = '\0';
		ck_assert(td_domain_valid(n, &why));	/* 63 */
		n[TD_DOMAIN_MAX - 1] = 'a';
		n[TD_DOMAIN_MAX] = '\0';
		ck_assert(!td_domain_valid(n, &why));	/* 64 */
	}
}
END_TEST

START_TEST(sizes_and_xml)
{
	char xml[256], shm[64];

	ck_assert(td_libvirt_size_valid(1ull << 20));
	ck_assert(td_libvirt_size_valid(16ull << 20));
	ck_assert(!td_libvirt_size_valid(512 << 10));
	ck_assert(!td_libvirt_size_valid(3ull << 20));
	ck_assert(!td_libvirt_size_valid(0));
	td_libvirt_shm_name("tochain-fabric", "web1", shm, sizeof(shm));
	ck_assert_str_eq(shm, "tochain-tochain-fabric-web1");
	ck_assert_int_eq(td_libvirt_shmem_xml(shm, 16ull << 20, xml, sizeof(xml)), 0);
	ck_assert_str_eq(xml, "<shmem name='tochain-tochain-fabric-web1'>"
			 "<model type='ivshmem-plain'/><size unit='M'>16</size></shmem>");
	ck_assert_int_eq(td_libvirt_shmem_xml(shm, 3ull << 20, xml, sizeof(xml)), -EINVAL);
	ck_assert_int_eq(td_libvirt_shmem_xml(shm, 1ull << 20, xml, 20), -ENAMETOOLONG);
	/* doorbell: the VM link as ivshmem server, one vector per slot */
	ck_assert_int_eq(td_libvirt_shmem_doorbell_xml(shm, "/dev/shm/t/a.region.ivs", 4, xml,
						       sizeof(xml)), 0);
	ck_assert_str_eq(xml, "<shmem name='tochain-tochain-fabric-web1'>"
			 "<model type='ivshmem-doorbell'/><server path='/dev/shm/t/a.region.ivs'/>"
			 "<msi vectors='4' ioeventfd='on'/></shmem>");
	ck_assert_int_eq(td_libvirt_shmem_doorbell_xml(shm, "rel.ivs", 4, xml, sizeof(xml)),
			 -EINVAL);
	ck_assert_int_eq(td_libvirt_shmem_doorbell_xml(shm, "/a'/><x", 4, xml, sizeof(xml)),
			 -EINVAL);
	ck_assert_int_eq(td_libvirt_shmem_doorbell_xml(shm, "/a&b", 4, xml, sizeof(xml)), -EINVAL);
	ck_assert_int_eq(td_libvirt_shmem_doorbell_xml(shm, "/a", 0, xml, sizeof(xml)), -EINVAL);
	ck_assert_int_eq(td_libvirt_shmem_doorbell_xml(shm, "/a", 4, xml, 30), -ENAMETOOLONG);
}
END_TEST

START_TEST(dac_owner)
{
	uid_t u = 1;
	gid_t g = 1;

	ck_assert_int_eq(td_libvirt_dac_owner(
		"<domain><seclabel type='dynamic' model='selinux'><label>a:b:c</label>"
		"</seclabel><seclabel type='dynamic' model='dac' relabel='yes'>\n"
		"    <label>+995:+996</label>\n    <imagelabel>+995:+995</imagelabel>\n"
		"  </seclabel></domain>", &u, &g), 0);
	ck_assert_uint_eq(u, 995);
	ck_assert_uint_eq(g, 996);
	ck_assert_int_eq(td_libvirt_dac_owner(
		"<seclabel type='static' model='dac' relabel='no'><label>0:7</label></seclabel>",
		&u, &g), 0);
	ck_assert_uint_eq(u, 0);
	ck_assert_uint_eq(g, 7);
	/* none, self-closing, names instead of numbers, junk */
	ck_assert_int_eq(td_libvirt_dac_owner("<domain/>", &u, &g), -ENOENT);
	ck_assert_int_eq(td_libvirt_dac_owner("<seclabel type='none' model='dac'/>"
					      "<seclabel model='selinux'><label>1:2</label>"
					      "</seclabel>", &u, &g), -ENOENT);
	ck_assert_int_eq(td_libvirt_dac_owner("<seclabel model='dac'><label>qemu:kvm"
					      "</label></seclabel>", &u, &g), -ENOENT);
	ck_assert_int_eq(td_libvirt_dac_owner("<seclabel model='dac'><label>+1:+</label>"
					      "</seclabel>", &u, &g), -ENOENT);
	ck_assert_int_eq(td_libvirt_dac_owner("<seclabel model='dac'><label>+1:+2",
					      &u, &g), -ENOENT);
	ck_assert_int_eq(td_libvirt_dac_owner("<seclabel model='dac'", &u, &g), -ENOENT);
}
END_TEST

START_TEST(vcpu_reply)
{
	pid_t t[4];

	ck_assert_int_eq(td_libvirt_parse_vcpus(
		"{\"return\":[{\"cpu-index\":0,\"thread-id\":4242,\"target\":\"x86_64\"},"
		"{\"cpu-index\":1,\"thread-id\":4243}],\"id\":\"libvirt-7\"}", t, 4), 2);
	ck_assert_int_eq(t[0], 4242);
	ck_assert_int_eq(t[1], 4243);
	ck_assert_int_eq(td_libvirt_parse_vcpus("{\"return\":[]}", t, 4), 0);
	ck_assert_int_eq(td_libvirt_parse_vcpus("{\"error\":{}}", t, 4), -EBADMSG);
	ck_assert_int_eq(td_libvirt_parse_vcpus("not json", t, 4), -EBADMSG);
	ck_assert_int_eq(td_libvirt_parse_vcpus("{\"return\":[{\"thread-id\":-1}]}", t, 4),
			 -EBADMSG);
	ck_assert_int_eq(td_libvirt_parse_vcpus("{\"return\":[{\"thread-id\":\"1\"}]}", t, 4),
			 -EBADMSG);
	ck_assert_int_eq(td_libvirt_parse_vcpus(
		"{\"return\":[{\"thread-id\":1},{\"thread-id\":2}]}", t, 1), -EBADMSG);
}
END_TEST

START_TEST(state_roundtrip)
{
	char path[64], err[256];
	struct td_state st, back;
	const char *why;

	snprintf(path, sizeof(path), "/tmp/tc-lvstate-%d.json", getpid());
	memset(&st, 0, sizeof(st));
	strcpy(st.vms[0].name, "web1");
	ck_assert_int_eq(td_addr_parse("10.0.0.2/24", &st.vms[0].ip, &why), 0);
	strcpy(st.vms[0].netns, "f-web1");
	strcpy(st.vms[0].region, "/dev/shm/x");
	st.vms[0].region_size = 1 << 20;
	st.vms[0].slot_size = 2048;
	strcpy(st.vms[0].domain, "guest-1");
	st.vms[1] = st.vms[0];
	strcpy(st.vms[1].name, "web2");
	st.vms[1].domain[0] = '\0';
	st.nvms = 2;
	ck_assert_int_eq(td_state_save(path, &st), 0);
	ck_assert_int_eq(td_state_load(path, &back, err, sizeof(err)), 0);
	ck_assert_uint_eq(back.nvms, 2);
	ck_assert_str_eq(back.vms[0].domain, "guest-1");
	ck_assert_str_eq(back.vms[1].domain, "");
	unlink(path);

	/* a bad domain in the file refuses the whole file */
	{
		static const char *const bad[] = { "\"\"", "\"a/b\"", "7", "\"-x\"" };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			char text[512];

			snprintf(text, sizeof(text),
				 "{\"version\":1,\"vms\":[{\"name\":\"web1\",\"ip\":\"10.0.0.2/24\","
				 "\"netns\":\"n\",\"veth\":\"v\",\"cgroup\":\"c\",\"region\":\"r\","
				 "\"region_size\":1048576,\"domain\":%s}]}", bad[i]);
			ck_assert_int_eq(td_state_parse(text, strlen(text), "t", &back, err,
							sizeof(err)), -EBADMSG);
			ck_assert_uint_eq(back.nvms, 0);
		}
	}
}
END_TEST

/* libvirt's in-process test driver: no such domain, no QEMU monitor. */
START_TEST(errors_from_libvirt)
{
	struct td_libvirt *lv = td_libvirt_create("test:///default");
	struct td_vm vm;
	char err[512] = "", link_path[128];
	pid_t t[4];

	ck_assert_ptr_nonnull(lv);
	memset(&vm, 0, sizeof(vm));
	strcpy(vm.name, "web1");
	snprintf(vm.region, sizeof(vm.region), "/dev/shm/tc-lvunit-%d.region", getpid());
	vm.region_size = 1 << 20;
	strcpy(vm.domain, "nosuch");
	ck_assert_int_eq(td_libvirt_attach(lv, &vm, "tc-lvunit-link", err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "nosuch"));
	snprintf(link_path, sizeof(link_path), "/dev/shm/tc-lvunit-link");
	ck_assert_int_ne(access(link_path, F_OK), 0);
	/* a region size QEMU cannot map as a BAR is refused before libvirt */
	vm.region_size = 3 << 20;
	strcpy(vm.domain, "test");
	ck_assert_int_eq(td_libvirt_attach(lv, &vm, "tc-lvunit-link", err, sizeof(err)), -EINVAL);
	/* the test driver has no QEMU monitor */
	ck_assert_int_lt(td_libvirt_vcpu_tids(lv, "test", t, 4, err, sizeof(err)), 0);
	ck_assert_int_eq(td_libvirt_vcpu_tids(lv, "nosuch", t, 4, err, sizeof(err)), -ENOENT);
	/* detaching from a domain that does not exist is not an error */
	vm.region_size = 1 << 20;
	strcpy(vm.domain, "nosuch");
	ck_assert_int_eq(td_libvirt_detach(lv, &vm, "tc-lvunit-link", err, sizeof(err)), 0);
	td_libvirt_destroy(lv);

	/* nothing listens there */
	lv = td_libvirt_create("qemu+unix:///system?socket=/nonexistent/sock");
	ck_assert_int_eq(td_libvirt_vcpu_tids(lv, "x", t, 4, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "cannot connect"));
	td_libvirt_destroy(lv);
}
END_TEST

START_TEST(grant_names_and_xml)
{
	char out[512], name[TD_LIBVIRT_GRANT_MAX + 2];

	ck_assert(td_libvirt_grant_name_valid("tcf-ids1-web1"));
	ck_assert(td_libvirt_grant_name_valid("A_9"));
	ck_assert(!td_libvirt_grant_name_valid(""));
	ck_assert(!td_libvirt_grant_name_valid(NULL));
	ck_assert(!td_libvirt_grant_name_valid("a/b"));
	ck_assert(!td_libvirt_grant_name_valid("a.b"));
	ck_assert(!td_libvirt_grant_name_valid("a'b"));
	ck_assert(!td_libvirt_grant_name_valid("a\"b"));
	ck_assert(!td_libvirt_grant_name_valid("a b"));
	memset(name, 'g', sizeof(name));
	name[TD_LIBVIRT_GRANT_MAX] = '\0';
	ck_assert(td_libvirt_grant_name_valid(name));		/* 48 */
	name[TD_LIBVIRT_GRANT_MAX] = 'g';
	name[TD_LIBVIRT_GRANT_MAX + 1] = '\0';
	ck_assert(!td_libvirt_grant_name_valid(name));		/* 49 */

	ck_assert_int_eq(td_libvirt_grant_alias("ids1-web1", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "ua-tochain-grant-ids1-web1");
	ck_assert_int_eq(td_libvirt_grant_alias("a/b", out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(td_libvirt_grant_alias("ids1-web1", out, 10), -ENAMETOOLONG);

	ck_assert_int_eq(td_libvirt_grant_xml("ids1-web1", 4ull << 20, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "<shmem name='tochain-grant-ids1-web1'><model type='ivshmem-plain'/>"
			 "<size unit='M'>4</size><alias name='ua-tochain-grant-ids1-web1'/>"
			 "</shmem>");
	ck_assert_int_eq(td_libvirt_grant_xml("ids1-web1", 3ull << 20, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(td_libvirt_grant_xml("ids1-web1", 0, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(td_libvirt_grant_xml("x'/><y", 1ull << 20, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(td_libvirt_grant_xml("ids1-web1", 1ull << 20, out, 40), -ENAMETOOLONG);
}
END_TEST

START_TEST(revoke_commands)
{
	char out[320];

	ck_assert_int_eq(td_libvirt_revoke_qmp("g1", true, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "{\"execute\":\"qom-set\",\"arguments\":{\"path\":"
			 "\"/machine/peripheral/ua-tochain-grant-g1\",\"property\":\"revoked\","
			 "\"value\":true}}");
	ck_assert_int_eq(td_libvirt_revoke_qmp("g1", false, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "{\"execute\":\"qom-set\",\"arguments\":{\"path\":"
			 "\"/machine/peripheral/ua-tochain-grant-g1\",\"property\":\"revoked\","
			 "\"value\":false}}");
	ck_assert_int_eq(td_libvirt_revoked_query_qmp("g1", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "{\"execute\":\"qom-get\",\"arguments\":{\"path\":"
			 "\"/machine/peripheral/ua-tochain-grant-g1\",\"property\":\"revoked\"}}");
	/* nothing that could escape the JSON string gets in */
	ck_assert_int_eq(td_libvirt_revoke_qmp("g\",\"x", true, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(td_libvirt_revoked_query_qmp("g\\", out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(td_libvirt_revoke_qmp("g1", true, out, 30), -ENAMETOOLONG);
	ck_assert_int_eq(td_libvirt_revoked_query_qmp("g1", out, 30), -ENAMETOOLONG);
}
END_TEST

/* Replies as QEMU 7.2 gives them through virDomainQemuMonitorCommand. */
START_TEST(qmp_replies)
{
	char err[256];

	ck_assert_int_eq(td_libvirt_parse_qmp_reply("{\"return\":{},\"id\":\"libvirt-415\"}",
						    err, sizeof(err)), 0);
	/* stock QEMU: the property does not exist */
	err[0] = '\0';
	ck_assert_int_eq(td_libvirt_parse_qmp_reply(
		"{\"id\":\"libvirt-9\",\"error\":{\"class\":\"GenericError\",\"desc\":"
		"\"Property 'ivshmem-plain.revoked' not found\"}}", err, sizeof(err)), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(err, "ivshmem-plain.revoked"));
	/* another property missing is not that */
	ck_assert_int_eq(td_libvirt_parse_qmp_reply(
		"{\"error\":{\"class\":\"GenericError\",\"desc\":"
		"\"Property 'ivshmem-plain.nosuch' not found\"}}", err, sizeof(err)), -EIO);
	ck_assert_int_eq(td_libvirt_parse_qmp_reply(
		"{\"error\":{\"class\":\"GenericError\",\"desc\":"
		"\"Parameter 'value' expects boolean\"}}", err, sizeof(err)), -EIO);
	ck_assert_str_eq(err, "QEMU: Parameter 'value' expects boolean");
	ck_assert_int_eq(td_libvirt_parse_qmp_reply(
		"{\"id\":\"libvirt-417\",\"error\":{\"class\":\"DeviceNotFound\",\"desc\":"
		"\"Device '/machine/peripheral/ua-nosuch' not found\"}}", err, sizeof(err)), -ENODEV);
	/* not QMP */
	ck_assert_int_eq(td_libvirt_parse_qmp_reply(NULL, err, sizeof(err)), -EBADMSG);
	ck_assert_int_eq(td_libvirt_parse_qmp_reply("", err, sizeof(err)), -EBADMSG);
	ck_assert_int_eq(td_libvirt_parse_qmp_reply("not json", err, sizeof(err)), -EBADMSG);
	ck_assert_int_eq(td_libvirt_parse_qmp_reply("[]", err, sizeof(err)), -EBADMSG);
	ck_assert_int_eq(td_libvirt_parse_qmp_reply("{}", err, sizeof(err)), -EBADMSG);
	ck_assert_int_eq(td_libvirt_parse_qmp_reply("{\"error\":{\"class\":\"GenericError\"}}",
						    err, sizeof(err)), -EBADMSG);
	ck_assert_int_eq(td_libvirt_parse_qmp_reply("{\"error\":\"x\"}", err, sizeof(err)),
			 -EBADMSG);

	ck_assert_int_eq(td_libvirt_parse_revoked("{\"return\":true,\"id\":\"libvirt-419\"}",
						  err, sizeof(err)), 1);
	ck_assert_int_eq(td_libvirt_parse_revoked("{\"return\":false}", err, sizeof(err)), 0);
	ck_assert_int_eq(td_libvirt_parse_revoked("{\"return\":{}}", err, sizeof(err)), -EBADMSG);
	ck_assert_int_eq(td_libvirt_parse_revoked("{\"return\":1}", err, sizeof(err)), -EBADMSG);
	ck_assert_int_eq(td_libvirt_parse_revoked(
		"{\"error\":{\"class\":\"GenericError\",\"desc\":"
		"\"Property 'ivshmem-plain.revoked' not found\"}}", err, sizeof(err)), -ENOTSUP);
	ck_assert_int_eq(td_libvirt_parse_revoked(
		"{\"error\":{\"class\":\"DeviceNotFound\",\"desc\":\"x\"}}", err, sizeof(err)),
			 -ENODEV);
}
END_TEST

START_TEST(support_replies)
{
	ck_assert_int_eq(td_libvirt_parse_revoke_support(
		"{\"return\":[{\"name\":\"romfile\",\"type\":\"str\"},{\"default-value\":-1,"
		"\"name\":\"addr\",\"type\":\"int32\"},{\"name\":\"revoked\",\"description\":"
		"\"Take the shared memory away\",\"type\":\"bool\"},{\"name\":\"memdev\","
		"\"type\":\"link<memory-backend>\"}],\"id\":\"libvirt-418\"}"), 1);
	ck_assert_int_eq(td_libvirt_parse_revoke_support(
		"{\"return\":[{\"name\":\"romfile\",\"type\":\"str\"},{\"name\":\"memdev\","
		"\"type\":\"link<memory-backend>\"}]}"), 0);
	ck_assert_int_eq(td_libvirt_parse_revoke_support("{\"return\":[]}"), 0);
	/* a QEMU without ivshmem at all */
	ck_assert_int_eq(td_libvirt_parse_revoke_support(
		"{\"error\":{\"class\":\"DeviceNotFound\",\"desc\":"
		"\"Device 'ivshmem-plain' not found\"}}"), -ENOTSUP);
	ck_assert_int_eq(td_libvirt_parse_revoke_support(
		"{\"error\":{\"class\":\"GenericError\",\"desc\":\"x\"}}"), -EIO);
	ck_assert_int_eq(td_libvirt_parse_revoke_support("{\"return\":{}}"), -EBADMSG);
	ck_assert_int_eq(td_libvirt_parse_revoke_support("{\"return\":[{\"name\":7}]}"), -EBADMSG);
	ck_assert_int_eq(td_libvirt_parse_revoke_support("{\"return\":[\"revoked\"]}"), -EBADMSG);
	ck_assert_int_eq(td_libvirt_parse_revoke_support("nope"), -EBADMSG);
}
END_TEST

/* The grant calls against libvirt's test driver: errors, nothing left. */
START_TEST(grant_errors_from_libvirt)
{
	struct td_libvirt *lv = td_libvirt_create("test:///default");
	char err[512] = "", region[96], grant[32], link_path[128];
	int fd;

	ck_assert_ptr_nonnull(lv);
	snprintf(grant, sizeof(grant), "lvunit-%d", getpid());
	snprintf(link_path, sizeof(link_path), "/dev/shm/tochain-grant-%s", grant);
	snprintf(region, sizeof(region), "/dev/shm/tc-lvunit-grant-%d.region", getpid());
	/* refused before libvirt is asked */
	ck_assert_int_eq(td_libvirt_grant(lv, "test", "a/b", region, 1 << 20, err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(td_libvirt_grant(lv, "test", grant, region, 3 << 20, err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(td_libvirt_revoke(lv, "test", "", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(td_libvirt_regrant(lv, "test", "a b", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(td_libvirt_grant_revoked(lv, "test", NULL, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(td_libvirt_ungrant(lv, "test", "x'y", err, sizeof(err)), -EINVAL);
	/* no such domain */
	ck_assert_int_eq(td_libvirt_grant(lv, "nosuch", grant, region, 1 << 20, err, sizeof(err)),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "nosuch"));
	ck_assert_int_eq(td_libvirt_revoke(lv, "nosuch", grant, err, sizeof(err)), -ENOENT);
	ck_assert_int_eq(td_libvirt_revoke_supported(lv, "nosuch", err, sizeof(err)), -ENOENT);
	/* the region file must exist; nothing is linked when it does not */
	ck_assert_int_eq(td_libvirt_grant(lv, "test", grant, region, 1 << 20, err, sizeof(err)),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, region));
	ck_assert_int_ne(access(link_path, F_OK), 0);
	/* the test driver has no QEMU monitor: QMP fails, cleanly */
	ck_assert_int_eq(td_libvirt_revoke(lv, "test", grant, err, sizeof(err)), -EIO);
	ck_assert_int_eq(td_libvirt_grant_revoked(lv, "test", grant, err, sizeof(err)), -EIO);
	ck_assert_int_eq(td_libvirt_revoke_supported(lv, "test", err, sizeof(err)), -EIO);
	/* ungrant from a domain that is gone: no error, the link goes */
	fd = open(link_path, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(td_libvirt_ungrant(lv, "nosuch", grant, err, sizeof(err)), 0);
	ck_assert_int_ne(access(link_path, F_OK), 0);
	td_libvirt_destroy(lv);

	/* nothing listens there */
	lv = td_libvirt_create("qemu+unix:///system?socket=/nonexistent/sock");
	ck_assert_int_eq(td_libvirt_revoke(lv, "x", grant, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "cannot connect"));
	fd = open(link_path, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(td_libvirt_ungrant(lv, "x", grant, err, sizeof(err)), -EIO);
	ck_assert_int_ne(access(link_path, F_OK), 0);
	td_libvirt_destroy(lv);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("td_libvirt");
	TCase *tc = tcase_create("libvirt");

	tcase_add_test(tc, domain_names);
	tcase_add_test(tc, sizes_and_xml);
	tcase_add_test(tc, dac_owner);
	tcase_add_test(tc, vcpu_reply);
	tcase_add_test(tc, state_roundtrip);
	tcase_add_test(tc, errors_from_libvirt);
	tcase_add_test(tc, grant_names_and_xml);
	tcase_add_test(tc, revoke_commands);
	tcase_add_test(tc, qmp_replies);
	tcase_add_test(tc, support_replies);
	tcase_add_test(tc, grant_errors_from_libvirt);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
