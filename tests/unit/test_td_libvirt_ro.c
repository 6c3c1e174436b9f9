// SPDX-License-Identifier: MIT
/*
 * Unit tests for tochaind/td_libvirt_ro.c: the QMP commands of a
 * read-only grant, the PCI slot it takes, and the error paths against
 * libvirt's built-in test driver (test:///default: no QEMU monitor).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "td_grant.h"
#include "td_libvirt_ro.h"
#include "tc_check.h"

/* @cmd parses as JSON and its arguments.@key is the string @want. */
static void arg_is(const char *cmd, const char *key, const char *want)
{
	json_t *j = json_loads(cmd, 0, NULL);

	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "arguments"), key)),
			 want);
	json_decref(j);
}

START_TEST(backend_command)
{
	char out[512];
	json_t *j, *a;

	ck_assert_int_eq(td_libvirt_ro_backend_qmp("fab-web-dom-d", 4 << 20, out, sizeof(out)), 0);
	j = json_loads(out, 0, NULL);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(j, "execute")), "object-add");
	a = json_object_get(j, "arguments");
	ck_assert_str_eq(json_string_value(json_object_get(a, "qom-type")), "memory-backend-file");
	ck_assert_str_eq(json_string_value(json_object_get(a, "id")), "tochain-grant-fab-web-dom-d");
	ck_assert_str_eq(json_string_value(json_object_get(a, "mem-path")),
			 "/dev/shm/tochain-grant-fab-web-dom-d");
	ck_assert_int_eq(json_integer_value(json_object_get(a, "size")), 4 << 20);
	/* what makes it a grant the guest cannot write */
	ck_assert(json_is_true(json_object_get(a, "readonly")));
	ck_assert(json_is_true(json_object_get(a, "share")));
	json_decref(j);
	/* refused: names that are not grant names, sizes that are no BAR */
	ck_assert_int_eq(td_libvirt_ro_backend_qmp("a\"b", 1 << 20, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(td_libvirt_ro_backend_qmp("", 1 << 20, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(td_libvirt_ro_backend_qmp(NULL, 1 << 20, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(td_libvirt_ro_backend_qmp("x", 3 << 20, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(td_libvirt_ro_backend_qmp("x", 1 << 19, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(td_libvirt_ro_backend_qmp("x", 1 << 20, out, 40), -ENAMETOOLONG);
}
END_TEST

START_TEST(device_command)
{
	char out[320];

	ck_assert_int_eq(td_libvirt_ro_device_qmp("g-d", 31, out, sizeof(out)), 0);
	arg_is(out, "driver", "ivshmem-plain");
	arg_is(out, "id", "ua-tochain-grant-g-d");
	arg_is(out, "memdev", "tochain-grant-g-d");
	arg_is(out, "bus", "pci.0");
	arg_is(out, "addr", "0x1f");
	ck_assert_int_eq(td_libvirt_ro_device_qmp("g-d", 1, out, sizeof(out)), 0);
	arg_is(out, "addr", "0x1");
	ck_assert_int_eq(td_libvirt_ro_device_qmp("g-d", 0, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(td_libvirt_ro_device_qmp("g-d", 32, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(td_libvirt_ro_device_qmp("g d", 5, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(td_libvirt_ro_device_qmp("g-d", 5, out, 20), -ENAMETOOLONG);
}
END_TEST

START_TEST(free_slot)
{
	/* a pc machine: host bridge 0, ISA 1, VGA 2, a grant already at 31 */
	ck_assert_int_eq(td_libvirt_ro_free_slot(
		"{\"return\":[{\"bus\":0,\"devices\":[{\"bus\":0,\"slot\":0,\"function\":0},"
		"{\"bus\":0,\"slot\":1,\"function\":0},{\"bus\":0,\"slot\":1,\"function\":1},"
		"{\"bus\":0,\"slot\":2,\"function\":0},{\"bus\":0,\"slot\":31,\"function\":0}]}]}"),
		30);
	/* only bus 0 counts: a bridge's bus has slots of its own */
	ck_assert_int_eq(td_libvirt_ro_free_slot(
		"{\"return\":[{\"bus\":1,\"devices\":[{\"slot\":30}]},"
		"{\"bus\":0,\"devices\":[{\"slot\":0}]}]}"), 31);
	ck_assert_int_eq(td_libvirt_ro_free_slot("{\"return\":[{\"bus\":0,\"devices\":[]}]}"), 31);
	/* full */
	{
		char r[4096];
		size_t n = (size_t)snprintf(r, sizeof(r), "{\"return\":[{\"bus\":0,\"devices\":[");

		for (int s = 0; s < 32; s++)
			n += (size_t)snprintf(r + n, sizeof(r) - n, "%s{\"slot\":%d}", s ? "," : "", s);
		snprintf(r + n, sizeof(r) - n, "]}]}");
		ck_assert_int_eq(td_libvirt_ro_free_slot(r), -ENOSPC);
	}
	/* not a query-pci answer */
	ck_assert_int_eq(td_libvirt_ro_free_slot(NULL), -EBADMSG);
	ck_assert_int_eq(td_libvirt_ro_free_slot("nonsense"), -EBADMSG);
	ck_assert_int_eq(td_libvirt_ro_free_slot("{\"error\":{\"class\":\"x\",\"desc\":\"y\"}}"),
			 -EBADMSG);
	ck_assert_int_eq(td_libvirt_ro_free_slot("{\"return\":[{\"bus\":2,\"devices\":[]}]}"),
			 -EBADMSG);
	ck_assert_int_eq(td_libvirt_ro_free_slot(
		"{\"return\":[{\"bus\":0,\"devices\":[{\"slot\":32}]}]}"), -EBADMSG);
	ck_assert_int_eq(td_libvirt_ro_free_slot(
		"{\"return\":[{\"bus\":0,\"devices\":[{\"slot\":-1}]}]}"), -EBADMSG);
	ck_assert_int_eq(td_libvirt_ro_free_slot(
		"{\"return\":[{\"bus\":0,\"devices\":[{\"slot\":\"3\"}]}]}"), -EBADMSG);
}
END_TEST

START_TEST(errors_from_libvirt)
{
	struct td_libvirt *lv = td_libvirt_create("test:///default");
	char err[512] = "", region[96], grant[32], link_path[128];

	ck_assert_ptr_nonnull(lv);
	snprintf(grant, sizeof(grant), "lvrounit-%d", getpid());
	snprintf(link_path, sizeof(link_path), "/dev/shm/tochain-grant-%s", grant);
	snprintf(region, sizeof(region), "/dev/shm/tc-lvrounit-%d.region", getpid());
	/* refused before libvirt is asked */
	ck_assert_int_eq(td_libvirt_grant_ro(lv, "test", "a/b", region, 1 << 20, err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(td_libvirt_grant_ro(lv, "test", grant, region, 3 << 20, err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(td_libvirt_grant_is_ro(lv, "test", "", err, sizeof(err)), -EINVAL);
	/* no such domain */
	ck_assert_int_eq(td_libvirt_grant_ro(lv, "nosuch", grant, region, 1 << 20, err,
					     sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "nosuch"));
	ck_assert_int_eq(td_libvirt_grant_is_ro(lv, "nosuch", grant, err, sizeof(err)), -ENOENT);
	/* the test driver has no QEMU monitor: QMP fails, cleanly, nothing linked */
	ck_assert_int_eq(td_libvirt_grant_ro(lv, "test", grant, region, 1 << 20, err, sizeof(err)),
			 -EIO);
	ck_assert_int_ne(access(link_path, F_OK), 0);
	ck_assert_int_eq(td_libvirt_grant_is_ro(lv, "test", grant, err, sizeof(err)), -EIO);
	/* reaping: a domain that is gone took its backends along; no monitor: later */
	ck_assert_int_eq(td_libvirt_grant_ro_reap(lv, "nosuch", grant, err, sizeof(err)), 0);
	ck_assert_int_eq(td_libvirt_grant_ro_reap(lv, "test", grant, err, sizeof(err)), -EIO);
	ck_assert_int_eq(td_libvirt_grant_ro_reap(lv, "test", "a b", err, sizeof(err)), -EINVAL);
	td_libvirt_destroy(lv);
}
END_TEST

START_TEST(reap_list)
{
	struct td_libvirt *lv = td_libvirt_create("test:///default");
	struct td_grant_log *log = calloc(1, sizeof(*log));

	ck_assert_ptr_nonnull(lv);
	ck_assert_ptr_nonnull(log);
	snprintf(log->reap[0].domain, sizeof(log->reap[0].domain), "nosuch");
	snprintf(log->reap[0].grant, sizeof(log->reap[0].grant), "gone-d");
	snprintf(log->reap[3].domain, sizeof(log->reap[3].domain), "test");
	snprintf(log->reap[3].grant, sizeof(log->reap[3].grant), "unanswered-o");
	td_grant_reap(lv, log);
	/* the gone domain's entry is done; the one QEMU could not answer for is
	 * dropped too (-EIO: not "still plugged"), nothing else is touched */
	ck_assert_str_eq(log->reap[0].grant, "");
	ck_assert_str_eq(log->reap[3].grant, "");
	td_grant_reap(NULL, log);
	td_grant_reap(lv, NULL);
	free(log);
	td_libvirt_destroy(lv);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("td_libvirt_ro");
	TCase *tc = tcase_create("readonly");

	tcase_add_test(tc, backend_command);
	tcase_add_test(tc, device_command);
	tcase_add_test(tc, free_slot);
	tcase_add_test(tc, errors_from_libvirt);
	tcase_add_test(tc, reap_list);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
