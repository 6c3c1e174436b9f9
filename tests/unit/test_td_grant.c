// SPDX-License-Identifier: MIT
/*
 * Unit tests for tochaind/td_grant.c: grant names (unique, valid,
 * hashed when needed), power-of-two growth, the /dev/shm check, the
 * grants of a (VM, VNF), the QEMU pid check, and the error paths of give
 * and take against libvirt's test driver (test:///default: no QEMU).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "td_grant.h"
#include "td_libvirt.h"
#include "tc_check.h"

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/dev/shm/tc-grant-%d", getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void make_file(const char *path, off_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, size), 0);
	close(fd);
}

static off_t file_size(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_size;
}

START_TEST(names)
{
	char a[TD_GRANT_NAME_SIZE], b[TD_GRANT_NAME_SIZE], small[8];

	ck_assert_int_eq(td_grant_name("tcf713", "web", "gnull", TD_GRANT_VNF, a, sizeof(a)), 0);
	ck_assert_str_eq(a, "tcf713-web-gnull-v");
	ck_assert(td_libvirt_grant_name_valid(a));
	ck_assert_int_eq(td_grant_name("tcf713", "web", "vnfdom", TD_GRANT_DATA, a, sizeof(a)), 0);
	ck_assert_str_eq(a, "tcf713-web-vnfdom-d");
	ck_assert_int_eq(td_grant_name("tcf713", "web", "vnfdom", TD_GRANT_OUT, b, sizeof(b)), 0);
	ck_assert_str_ne(a, b);
	/* a domain name with '.': hashed, valid, and not the '_' spelling's */
	ck_assert_int_eq(td_grant_name("f", "web", "dom.1", TD_GRANT_DATA, a, sizeof(a)), 0);
	ck_assert_int_eq(td_grant_name("f", "web", "dom_1", TD_GRANT_DATA, b, sizeof(b)), 0);
	ck_assert(td_libvirt_grant_name_valid(a));
	ck_assert_str_eq(b, "f-web-dom_1-d");
	ck_assert_str_ne(a, b);
	ck_assert_ptr_nonnull(strstr(a, "-X"));
	ck_assert_int_eq(a[strlen(a) - 1], 'd');
	/* an upper-case domain is hashed too: no plain name has upper case */
	ck_assert_int_eq(td_grant_name("f", "web", "Dom", TD_GRANT_DATA, a, sizeof(a)), 0);
	ck_assert_ptr_nonnull(strstr(a, "-X"));
	/* too long: hashed to exactly the limit; two long names differing at
	 * the end stay different */
	ck_assert_int_eq(td_grant_name("tcf713-abcdefgh", "webserver123",
				       "a-very-long-vnf-name-0123456789a", TD_GRANT_VNF, a, sizeof(a)), 0);
	ck_assert_int_eq(td_grant_name("tcf713-abcdefgh", "webserver123",
				       "a-very-long-vnf-name-0123456789b", TD_GRANT_VNF, b, sizeof(b)), 0);
	ck_assert_uint_eq(strlen(a), TD_LIBVIRT_GRANT_MAX);
	ck_assert(td_libvirt_grant_name_valid(a));
	ck_assert(td_libvirt_grant_name_valid(b));
	ck_assert_str_ne(a, b);
	ck_assert_int_eq(strncmp(a, "tcf713-abcdefgh-webserver123", 28), 0);
	/* the same inputs give the same name (restarts find their grants) */
	ck_assert_int_eq(td_grant_name("tcf713-abcdefgh", "webserver123",
				       "a-very-long-vnf-name-0123456789b", TD_GRANT_VNF, a, sizeof(a)), 0);
	ck_assert_str_eq(a, b);
	/* refusals */
	ck_assert_int_eq(td_grant_name("", "web", "x", TD_GRANT_VNF, a, sizeof(a)), -EINVAL);
	ck_assert_int_eq(td_grant_name("f", "web", "", TD_GRANT_VNF, a, sizeof(a)), -EINVAL);
	ck_assert_int_eq(td_grant_name("f", "web", "x", (enum td_grant_kind)'q', a, sizeof(a)), -EINVAL);
	ck_assert_int_eq(td_grant_name("f", "web", "x", TD_GRANT_VNF, small, sizeof(small)), -EINVAL);
}
END_TEST

START_TEST(pow2)
{
	ck_assert_uint_eq(td_grant_pow2(0), 1u << 20);
	ck_assert_uint_eq(td_grant_pow2(4096), 1u << 20);
	ck_assert_uint_eq(td_grant_pow2(1u << 20), 1u << 20);
	ck_assert_uint_eq(td_grant_pow2((1u << 20) + 1), 2u << 20);
	ck_assert_uint_eq(td_grant_pow2(3u << 20), 4u << 20);
	ck_assert_uint_eq(td_grant_pow2(16u << 20), 16u << 20);
	ck_assert_uint_eq(td_grant_pow2(1ull << 63), 1ull << 63);
	ck_assert_uint_eq(td_grant_pow2((1ull << 63) + 1), 0);
}
END_TEST

START_TEST(grow)
{
	char p[128], err[256];
	uint64_t size = 0;

	snprintf(p, sizeof(p), "%s/r.vnf-x", dir);
	make_file(p, 300000);
	ck_assert_int_eq(td_grant_grow(p, &size, err, sizeof(err)), 0);
	ck_assert_uint_eq(size, 1u << 20);
	ck_assert_int_eq(file_size(p), 1 << 20);
	make_file(p, (3 << 20) + 5);
	ck_assert_int_eq(td_grant_grow(p, &size, err, sizeof(err)), 0);
	ck_assert_uint_eq(size, 4u << 20);
	/* a power of two stays as it is, never shrinks */
	ck_assert_int_eq(td_grant_grow(p, &size, err, sizeof(err)), 0);
	ck_assert_int_eq(file_size(p), 4 << 20);
	snprintf(p, sizeof(p), "%s/none", dir);
	ck_assert_int_eq(td_grant_grow(p, &size, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, p));
	ck_assert_int_eq(td_grant_grow(dir, &size, err, sizeof(err)) < 0, 1);
	/* too large for a region */
	snprintf(p, sizeof(p), "%s/huge", dir);
	make_file(p, (off_t)TD_REGION_SIZE_MAX + 1);
	ck_assert_int_eq(td_grant_grow(p, &size, err, sizeof(err)), -EFBIG);
	ck_assert_int_eq(file_size(p), (off_t)TD_REGION_SIZE_MAX + 1);
}
END_TEST

START_TEST(shm_check)
{
	char err[512];

	ck_assert_int_eq(td_grant_check_shm(dir, "/dev/shm", err, sizeof(err)), 0);
	ck_assert_int_eq(td_grant_check_shm("/proc", "/dev/shm", err, sizeof(err)), -EXDEV);
	ck_assert_ptr_nonnull(strstr(err, "/proc"));
	ck_assert_ptr_nonnull(strstr(err, "--region-dir"));
	ck_assert_int_eq(td_grant_check_shm("/nonexistent-x", "/dev/shm", err, sizeof(err)), -ENOENT);
}
END_TEST

static void fill(struct td_config *cfg, struct td_vm *vm)
{
	memset(cfg, 0, sizeof(*cfg));
	memset(vm, 0, sizeof(*vm));
	strcpy(cfg->fabric_ns, "tcfu");
	snprintf(cfg->region_dir, sizeof(cfg->region_dir), "%s", dir);
	strcpy(vm->name, "web");
	snprintf(vm->region, sizeof(vm->region), "%s/web.region", dir);
	vm->region_size = 1 << 20;
}

START_TEST(grant_set)
{
	struct td_config cfg;
	struct td_vm vm;
	struct td_grant g[3];
	char p[PATH_MAX + 16];

	fill(&cfg, &vm);
	/* no R.out: R and R.vnf-X */
	ck_assert_int_eq(td_grant_set(&cfg, &vm, "gnull", "vdom", g), 2);
	ck_assert_int_eq(g[0].kind, TD_GRANT_DATA);
	ck_assert_str_eq(g[0].name, "tcfu-web-vdom-d");
	ck_assert_str_eq(g[0].path, vm.region);
	ck_assert_int_eq(g[1].kind, TD_GRANT_VNF);
	ck_assert_str_eq(g[1].name, "tcfu-web-gnull-v");
	snprintf(p, sizeof(p), "%s.vnf-gnull", vm.region);
	ck_assert_str_eq(g[1].path, p);
	/* with R.out, in giving order d, o, v */
	snprintf(p, sizeof(p), "%s.out", vm.region);
	make_file(p, 4096);
	ck_assert_int_eq(td_grant_set(&cfg, &vm, "gnull", "vdom", g), 3);
	ck_assert_int_eq(g[1].kind, TD_GRANT_OUT);
	ck_assert_str_eq(g[1].name, "tcfu-web-vdom-o");
	ck_assert_str_eq(g[1].path, p);
	ck_assert_int_eq(g[2].kind, TD_GRANT_VNF);
	/* two VNFs of one domain share d and o; another domain has its own */
	{
		struct td_grant h[3];

		ck_assert_int_eq(td_grant_set(&cfg, &vm, "other", "vdom", h), 3);
		ck_assert_str_eq(h[0].name, g[0].name);
		ck_assert_str_eq(h[1].name, g[1].name);
		ck_assert_str_ne(h[2].name, g[2].name);
		ck_assert_int_eq(td_grant_set(&cfg, &vm, "gnull", "vdom2", h), 3);
		ck_assert_str_ne(h[0].name, g[0].name);
	}
}
END_TEST

/* give and take against a libvirt without that domain: clear errors,
 * nothing left behind, the region files untouched but for the growth */
START_TEST(give_take_errors)
{
	struct td_libvirt *lv = td_libvirt_create("test:///default");
	struct td_grant_log log;
	struct td_config cfg;
	struct td_vm vm;
	char err[700] = "", p[PATH_MAX + 16];
	int rc;

	memset(&log, 0, sizeof(log));
	ck_assert_ptr_nonnull(lv);
	fill(&cfg, &vm);
	make_file(vm.region, 1 << 20);
	snprintf(p, sizeof(p), "%s.vnf-gnull", vm.region);
	make_file(p, 200000);
	rc = td_grant_give(lv, &cfg, &vm, "gnull", "nosuch", err, sizeof(err));
	ck_assert_int_eq(rc, -ENOENT);
	ck_assert_msg(strstr(err, "nosuch"), "%s", err);
	ck_assert_int_ne(access("/dev/shm/tochain-grant-tcfu-web-nosuch-d", F_OK), 0);
	ck_assert_int_ne(access("/dev/shm/tochain-grant-tcfu-web-gnull-v", F_OK), 0);
	/* the test driver's domain has no QEMU monitor: refused, nothing plugged */
	rc = td_grant_give(lv, &cfg, &vm, "gnull", "test", err, sizeof(err));
	ck_assert_int_lt(rc, 0);
	ck_assert_int_ne(access("/dev/shm/tochain-grant-tcfu-web-test-d", F_OK), 0);
	/* the region directory must be on /dev/shm */
	snprintf(cfg.region_dir, sizeof(cfg.region_dir), "/proc");
	ck_assert_int_eq(td_grant_give(lv, &cfg, &vm, "gnull", "test", err, sizeof(err)), -EXDEV);
	snprintf(cfg.region_dir, sizeof(cfg.region_dir), "%s", dir);
	/* no libvirt at all */
	ck_assert_int_eq(td_grant_give(NULL, &cfg, &vm, "gnull", "test", err, sizeof(err)),
			 -ENOTCONN);
	/* taking from a domain that is gone: the guest has no access, noted */
	rc = td_grant_take(lv, &cfg, &vm, "gnull", "nosuch", false, &log, err, sizeof(err));
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(log.next, 3);
	ck_assert_str_eq(log.n[0].grant, "tcfu-web-gnull-v");	/* v first */
	ck_assert_str_eq(log.n[2].grant, "tcfu-web-nosuch-d");
	ck_assert_ptr_nonnull(strstr(log.n[0].text, "no access"));
	/* keep_data: only the VNF's own region goes */
	rc = td_grant_take(lv, &cfg, &vm, "gnull", "nosuch", true, &log, err, sizeof(err));
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(log.next, 4);
	/* the notes ring wraps without overflowing */
	for (int i = 0; i < 40; i++)
		td_grant_take(lv, &cfg, &vm, "gnull", "nosuch", true, &log, err, sizeof(err));
	ck_assert_uint_eq(log.next, 44);
	{
		char st[400];

		td_grant_state(lv, "nosuch", "tcfu-web-gnull-v", st, sizeof(st));
		ck_assert_ptr_nonnull(strstr(st, "unknown"));
		td_grant_state(NULL, "nosuch", "tcfu-web-gnull-v", st, sizeof(st));
		ck_assert_ptr_nonnull(strstr(st, "unknown"));
	}
	td_libvirt_destroy(lv);
}
END_TEST

/* The QEMU pid check reads the command line libvirt gives QEMU. */
START_TEST(qemu_alive)
{
	pid_t p = fork();
	struct td_libvirt *lv = td_libvirt_create("test:///default");
	char err[256];
	pid_t q;

	ck_assert_int_ge(p, 0);
	if (p == 0) {
		execl("/bin/sh", "/bin/sh", "-c", "sleep 20", "-name", "guest=dom1,debug-threads=on",
		      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 100; i++) {
		char path[64], buf[256];
		FILE *f;
		size_t n = 0;

		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)p);
		f = fopen(path, "r");
		if (f) {
			n = fread(buf, 1, sizeof(buf), f);
			fclose(f);
		}
		if (n > 0 && memmem(buf, n, "guest=dom1", 10))
			break;
		usleep(10000);
	}
	ck_assert(td_libvirt_qemu_alive(p, "dom1"));
	ck_assert(!td_libvirt_qemu_alive(p, "dom"));
	ck_assert(!td_libvirt_qemu_alive(p, "om1"));
	ck_assert(!td_libvirt_qemu_alive(p, ""));
	ck_assert(!td_libvirt_qemu_alive(getpid(), "dom1"));
	ck_assert(!td_libvirt_qemu_alive(0, "dom1"));
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	ck_assert(!td_libvirt_qemu_alive(p, "dom1"));
	ck_assert_int_eq(td_libvirt_qemu_pid(lv, "nosuch", &q, err, sizeof(err)), -ENOENT);
	ck_assert_int_lt(td_libvirt_qemu_pid(lv, "test", &q, err, sizeof(err)), 0);
	td_libvirt_destroy(lv);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("td_grant");
	TCase *tc = tcase_create("grant");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, names);
	tcase_add_test(tc, pow2);
	tcase_add_test(tc, grow);
	tcase_add_test(tc, shm_check);
	tcase_add_test(tc, grant_set);
	tcase_add_test(tc, give_take_errors);
	tcase_add_test(tc, qemu_alive);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
