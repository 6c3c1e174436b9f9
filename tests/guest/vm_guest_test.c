/* SPDX-License-Identifier: MIT */
/*
 * ivshmem-guest-test: runs inside the test guest (static binary in the
 * initramfs) against tochain_ivshmem.ko, and reports on the console one
 * "PASS what" or "FAIL what: why" line per check.  Lines starting with
 * "GUEST-" tell the host test what it waits for.  Exit status 0 when
 * every check passed.
 *
 *   ivshmem-guest-test plain NAME [--fallback]
 *   ivshmem-guest-test doorbell NAME HOST_PEER
 *   ivshmem-guest-test unplug NAME [--no-replug]
 *   ivshmem-guest-test pair NAME MY_ID OTHER_ID   (peer ids 1 and 2)
 *   ivshmem-guest-test dup NAME    (two devices whose regions share a name)
 *   ivshmem-guest-test claim NAME  (the VM link claim table, vm-host-tool link)
 *
 * The region's contents follow vm_test_layout.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tochain/region_layout.h>
#include "tochain/tochain_ivshmem_uapi.h"
#include "vm_test_layout.h"

static int failures;

static void check(bool ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS %s\n", what);
	} else {
		failures++;
		printf("FAIL %s: ", what);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	fflush(stdout);
}

static void say(const char *line)
{
	printf("%s\n", line);
	fflush(stdout);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Wait until PATH exists; false after timeout_s. */
static bool wait_path(const char *path, double timeout_s)
{
	double end = now() + timeout_s;

	while (access(path, F_OK) != 0) {
		if (now() > end)
			return false;
		nap_ms(100);
	}
	return true;
}

static bool wait_gone(const char *path, double timeout_s)
{
	double end = now() + timeout_s;

	while (access(path, F_OK) == 0) {
		if (now() > end)
			return false;
		nap_ms(100);
	}
	return true;
}

static bool wait_flag(volatile uint32_t *flag, double timeout_s)
{
	double end = now() + timeout_s;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		if (now() > end)
			return false;
		nap_ms(10);
	}
	return true;
}

static int open_dev(const char *name, double timeout_s, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", TOCHAIN_IVSHMEM_DIR, name);
	if (!wait_path(path, timeout_s))
		return -1;
	return open(path, O_RDWR | O_CLOEXEC);
}

static uint8_t *map_dev(int fd, size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The first node under /dev/tochain that is not NAME (the fallback). */
static bool find_fallback(const char *name, char *out, size_t len, double timeout_s)
{
	double end = now() + timeout_s;

	do {
		DIR *d = opendir(TOCHAIN_IVSHMEM_DIR);
		struct dirent *e;

		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.' || !strcmp(e->d_name, name))
				continue;
			snprintf(out, len, "%s/%s", TOCHAIN_IVSHMEM_DIR, e->d_name);
			closedir(d);
			return true;
		}
		if (d)
			closedir(d);
		nap_ms(100);
	} while (now() < end);
	return false;
}

static int get_info(int fd, struct tochain_ivshmem_info *info)
{
	memset(info, 0, sizeof(*info));
	return ioctl(fd, TOCHAIN_IVSHMEM_IOC_INFO, info);
}

static void check_fallback_then_rename(const char *name)
{
	struct tochain_ivshmem_info info;
	char path[300];
	double end;
	int fd, ret;

	if (!find_fallback(name, path, sizeof(path), 30)) {
		check(false, "fallback node", "no node under %s", TOCHAIN_IVSHMEM_DIR);
		return;
	}
	fd = open(path, O_RDWR | O_CLOEXEC);
	check(fd >= 0, "fallback open", "%s: %s", path, strerror(errno));
	if (fd < 0)
		return;
	ret = get_info(fd, &info);
	check(ret == 0 && !(info.flags & TOCHAIN_IVSHMEM_F_NAMED) &&
	      !strncmp(info.name, "ivshmem", 7) &&
	      !strcmp(path + strlen(TOCHAIN_IVSHMEM_DIR) + 1, info.name),
	      "fallback name", "ret %d flags %#x name %s path %s", ret,
	      info.flags, info.name, path);
	check(ioctl(fd, TOCHAIN_IVSHMEM_IOC_RESCAN) < 0 && errno == EAGAIN,
	      "rescan EAGAIN while formatting", "errno %d", errno);
	say("GUEST-WAIT-HEADER");
	/* the driver re-reads the header once a second by itself */
	{
		char named[300];

		snprintf(named, sizeof(named), "%s/%s", TOCHAIN_IVSHMEM_DIR, name);
		check(wait_path(named, 60), "renamed by itself once READY",
		      "no %s in 60 s", named);
	}
	end = now() + 5;
	while ((ret = ioctl(fd, TOCHAIN_IVSHMEM_IOC_RESCAN)) < 0 &&
	       errno == EAGAIN && now() < end)
		nap_ms(200);
	check(ret == 0, "rescan after READY", "ret %d errno %d", ret, errno);
	ret = get_info(fd, &info);
	check(ret == 0 && (info.flags & TOCHAIN_IVSHMEM_F_NAMED) &&
	      !strcmp(info.name, name), "renamed, old fd still works",
	      "ret %d flags %#x name %s", ret, info.flags, info.name);
	check(wait_gone(path, 5), "fallback node removed", "%s still there", path);
	close(fd);
}

static int test_plain(int argc, char **argv)
{
	struct tochain_ivshmem_info info;
	struct tochain_ivshmem_irqfd irq = { .vector = 0, .fd = -1 };
	const char *name = argv[2];
	struct vm_mailbox *mb;
	const struct tcr_header *h;
	char path[300];
	struct stat st;
	uint8_t *p;
	size_t bad;
	void *q;
	int fd, ret;

	if (argc > 3 && !strcmp(argv[3], "--fallback"))
		check_fallback_then_rename(name);

	fd = open_dev(name, 30, path, sizeof(path));
	check(fd >= 0, "open by region name", "%s: %s", path, strerror(errno));
	if (fd < 0)
		return 1;
	check(stat(path, &st) == 0 && S_ISCHR(st.st_mode) &&
	      (st.st_mode & 0777) == 0666, "node is a 0666 char device",
	      "mode %o", (unsigned)st.st_mode);
	{
		/* what udev sees: node name and mode (node_mode, default 0666), and the PCI parent */
		char ue[300], buf[512] = "", want[96];
		FILE *f;
		size_t n = 0;

		snprintf(ue, sizeof(ue), "/sys/class/misc/tochain-%s/uevent", name);
		f = fopen(ue, "r");
		if (f) {
			n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
		}
		buf[n] = 0;
		snprintf(want, sizeof(want), "DEVNAME=tochain/%s\n", name);
		snprintf(ue, sizeof(ue), "/sys/class/misc/tochain-%s/device/vendor", name);
		check(strstr(buf, want) && strstr(buf, "DEVMODE=0666\n") &&
		      access(ue, F_OK) == 0, "uevent names the node",
		      "uevent: %s", buf);
	}
	ret = get_info(fd, &info);
	check(ret == 0 && info.size >= VM_TEST_MIN_SIZE &&
	      !(info.size & (info.size - 1)) && !strcmp(info.name, name) &&
	      (info.flags & TOCHAIN_IVSHMEM_F_NAMED),
	      "info", "ret %d size %llu name %s flags %#x", ret,
	      (unsigned long long)info.size, info.name, info.flags);
	printf("GUEST-INFO size=%llu ivposition=%d vectors=%u flags=%#x\n",
	       (unsigned long long)info.size, info.ivposition, info.nvectors,
	       info.flags);

	p = map_dev(fd, info.size);
	check(p != NULL, "mmap", "%s", strerror(errno));
	if (!p)
		return 1;
	h = (const struct tcr_header *)p;
	check(h->magic == TCR_MAGIC && h->state == TCR_STATE_READY &&
	      !strcmp(h->name, name) && h->region_size == info.size,
	      "header through the mapping", "magic %llx name %.32s",
	      (unsigned long long)h->magic, h->name);
	bad = vm_pat_check(p + VM_OFF_HOST_PAT, VM_PAT_LEN, VM_SEED_HOST);
	check(bad == VM_PAT_LEN, "host pattern", "differs at byte %zu", bad);
	vm_pat_fill(p + VM_OFF_GUEST_PAT, VM_PAT_LEN, VM_SEED_GUEST);
	mb = (struct vm_mailbox *)(p + VM_OFF_MAILBOX);
	__atomic_store_n(&mb->guest_wrote, 1, __ATOMIC_RELEASE);
	check(vm_pat_check(p + VM_OFF_GUEST_PAT, VM_PAT_LEN, VM_SEED_GUEST) ==
	      VM_PAT_LEN, "guest pattern written", "readback differs");

	/* a window at an offset sees the same bytes */
	q = mmap(NULL, VM_PAT_LEN, PROT_READ, MAP_SHARED, fd, VM_OFF_HOST_PAT);
	check(q != MAP_FAILED &&
	      vm_pat_check(q, VM_PAT_LEN, VM_SEED_HOST) == VM_PAT_LEN,
	      "mmap at an offset", "%s", q == MAP_FAILED ? strerror(errno) : "differs");
	if (q != MAP_FAILED)
		munmap(q, VM_PAT_LEN);
	/* read-only: PROT_READ works, PROT_WRITE does not */
	{
		int ro = open(path, O_RDONLY | O_CLOEXEC);
		const volatile uint8_t *r = MAP_FAILED;
		void *w = MAP_FAILED;

		if (ro >= 0) {
			r = mmap(NULL, info.size, PROT_READ, MAP_SHARED, ro, 0);
			w = mmap(NULL, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0);
		}
		check(ro >= 0 && r != MAP_FAILED && w == MAP_FAILED && errno == EACCES &&
		      r[VM_OFF_HOST_PAT] == vm_pat_byte(VM_SEED_HOST, 0),
		      "read-only open maps read-only", "ro %d errno %d", ro, errno);
		if (r != MAP_FAILED)
			munmap((void *)r, info.size);
		if (ro >= 0)
			close(ro);
	}

	/* what must be refused */
	q = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	check(q == MAP_FAILED && errno == EINVAL, "MAP_PRIVATE refused", "errno %d", errno);
	q = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)info.size);
	check(q == MAP_FAILED && errno == EINVAL, "mmap past BAR2 refused", "errno %d", errno);
	ret = ioctl(fd, TOCHAIN_IVSHMEM_IOC_SET_IRQFD, &irq);
	check(ret < 0 && errno == EINVAL && info.nvectors == 0,
	      "no vectors on ivshmem-plain", "ret %d errno %d nvectors %u",
	      ret, errno, info.nvectors);
	{
		struct tochain_ivshmem_doorbell bell = { .peer = 0, .vector = 0 };

		check(ioctl(fd, TOCHAIN_IVSHMEM_IOC_DOORBELL, &bell) < 0 &&
		      errno == EOPNOTSUPP && !(info.flags & TOCHAIN_IVSHMEM_F_DOORBELL),
		      "no doorbell on ivshmem-plain", "errno %d flags %#x", errno,
		      info.flags);
	}
	check(ioctl(fd, _IO(TOCHAIN_IVSHMEM_IOC_MAGIC, 99)) < 0 && errno == ENOTTY,
	      "unknown ioctl ENOTTY", "errno %d", errno);
	munmap(p, info.size);
	close(fd);
	return failures ? 1 : 0;
}

/* Two devices, one region name: one gets it, the other keeps ivshmem<N>. */
static int test_dup(int argc, char **argv)
{
	struct tochain_ivshmem_info a, b;
	const char *name = argv[2];
	char path[300], other[300];
	volatile uint8_t *pa, *pb;
	int fa, fb;

	(void)argc;
	fa = open_dev(name, 30, path, sizeof(path));
	check(fa >= 0, "open by region name", "%s: %s", path, strerror(errno));
	if (fa < 0)
		return 1;
	check(get_info(fa, &a) == 0 && (a.flags & TOCHAIN_IVSHMEM_F_NAMED) &&
	      !strcmp(a.name, name), "one device got the name", "flags %#x name %s",
	      a.flags, a.name);
	if (!find_fallback(name, other, sizeof(other), 10)) {
		check(false, "second device node", "none under %s", TOCHAIN_IVSHMEM_DIR);
		return 1;
	}
	fb = open(other, O_RDWR | O_CLOEXEC);
	check(fb >= 0 && get_info(fb, &b) == 0 && !(b.flags & TOCHAIN_IVSHMEM_F_NAMED) &&
	      !strncmp(b.name, "ivshmem", 7), "the other keeps its fallback name",
	      "%s: flags %#x name %s", other, b.flags, b.name);
	if (fb < 0)
		return 1;
	check(ioctl(fb, TOCHAIN_IVSHMEM_IOC_RESCAN) < 0 && errno == EEXIST,
	      "rescan says EEXIST for a taken name", "errno %d", errno);
	pa = map_dev(fa, a.size);
	pb = map_dev(fb, b.size);
	check(pa && pb, "mmap both", "%s", strerror(errno));
	if (pa && pb) {
		pa[VM_OFF_GUEST_PAT] = 0x5a;
		pb[VM_OFF_GUEST_PAT + 1] = 0xa5;
		check(pb[VM_OFF_GUEST_PAT] == 0x5a && pa[VM_OFF_GUEST_PAT + 1] == 0xa5,
		      "both devices map the same region", "%#x %#x",
		      pb[VM_OFF_GUEST_PAT], pa[VM_OFF_GUEST_PAT + 1]);
	}
	close(fa);
	close(fb);
	return failures ? 1 : 0;
}

static int test_doorbell(int argc, char **argv)
{
	struct tochain_ivshmem_info info;
	struct tochain_ivshmem_irqfd irq;
	struct tochain_ivshmem_doorbell bell;
	const char *name = argv[2];
	struct vm_mailbox *mb;
	struct pollfd pfd;
	char path[300];
	uint64_t cnt = 0;
	double end;
	uint8_t *p;
	int fd, efd, ret;

	if (argc < 4)
		return 2;
	fd = open_dev(name, 30, path, sizeof(path));
	check(fd >= 0, "open by region name", "%s: %s", path, strerror(errno));
	if (fd < 0)
		return 1;
	ret = get_info(fd, &info);
	/* MSI-X: one per vector; without (msi=off): one INTx "vector" */
	check(ret == 0 && (info.flags & TOCHAIN_IVSHMEM_F_DOORBELL) &&
	      (((info.flags & TOCHAIN_IVSHMEM_F_MSIX) && info.nvectors >= 1) ||
	       ((info.flags & TOCHAIN_IVSHMEM_F_INTX) && info.nvectors == 1)) &&
	      info.ivposition > 0, "doorbell info",
	      "ret %d flags %#x vectors %u ivposition %d", ret, info.flags,
	      info.nvectors, info.ivposition);
	printf("GUEST-INFO size=%llu ivposition=%d vectors=%u flags=%#x mode=%s\n",
	       (unsigned long long)info.size, info.ivposition, info.nvectors,
	       info.flags, info.flags & TOCHAIN_IVSHMEM_F_MSIX ? "msix" :
	       info.flags & TOCHAIN_IVSHMEM_F_INTX ? "intx" : "none");
	p = map_dev(fd, info.size);
	check(p != NULL, "mmap", "%s", strerror(errno));
	if (!p)
		return 1;
	mb = (struct vm_mailbox *)(p + VM_OFF_MAILBOX);

	/* refusals first */
	irq.vector = info.nvectors;
	irq.fd = -1;
	check(ioctl(fd, TOCHAIN_IVSHMEM_IOC_SET_IRQFD, &irq) < 0 && errno == EINVAL,
	      "vector out of range refused", "errno %d", errno);
	irq.vector = 0;
	irq.fd = fd;
	check(ioctl(fd, TOCHAIN_IVSHMEM_IOC_SET_IRQFD, &irq) < 0 && errno == EINVAL,
	      "non-eventfd refused", "errno %d", errno);

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	irq.vector = 0;
	irq.fd = efd;
	ret = ioctl(fd, TOCHAIN_IVSHMEM_IOC_SET_IRQFD, &irq);
	check(ret == 0, "eventfd bound to vector 0", "errno %d", errno);
	mb->guest_id = (uint32_t)info.ivposition;
	__atomic_store_n(&mb->guest_ready, 1, __ATOMIC_RELEASE);
	say("GUEST-READY");

	pfd.fd = efd;
	pfd.events = POLLIN;
	ret = poll(&pfd, 1, 60000);
	check(ret == 1 && read(efd, &cnt, sizeof(cnt)) == sizeof(cnt) && cnt >= 1,
	      "interrupt host->guest on the eventfd", "poll %d count %llu", ret,
	      (unsigned long long)cnt);
	__atomic_store_n(&mb->guest_got_irq, 1, __ATOMIC_RELEASE);

	bell.peer = (uint16_t)atoi(argv[3]);
	bell.vector = 0;
	end = now() + 30;
	ret = 0;
	do {
		/* ring again each second: the host may not be listening yet */
		ret = ioctl(fd, TOCHAIN_IVSHMEM_IOC_DOORBELL, &bell);
		if (ret < 0)
			break;
	} while (!wait_flag(&mb->host_got_bell, 1) && now() < end);
	check(ret == 0 && mb->host_got_bell, "doorbell guest->host",
	      "ret %d errno %d host_got_bell %u", ret, errno, mb->host_got_bell);

	irq.fd = -1;
	check(ioctl(fd, TOCHAIN_IVSHMEM_IOC_SET_IRQFD, &irq) == 0,
	      "eventfd unbound", "errno %d", errno);
	close(efd);
	munmap(p, info.size);
	close(fd);
	return failures ? 1 : 0;
}

/* Two guests on one server ring each other (ids 1 and 2). */
static int test_pair(int argc, char **argv)
{
	struct tochain_ivshmem_info info;
	struct tochain_ivshmem_irqfd irq;
	struct tochain_ivshmem_doorbell bell;
	struct vm_mailbox *mb;
	struct pollfd pfd;
	char path[300];
	uint64_t cnt;
	int me, other, fd, efd, ret;
	double end;
	uint8_t *p;

	if (argc < 5)
		return 2;
	me = atoi(argv[3]);
	other = atoi(argv[4]);
	if (me < 1 || me > 2 || other < 1 || other > 2 || me == other)
		return 2;
	fd = open_dev(argv[2], 30, path, sizeof(path));
	check(fd >= 0, "open by region name", "%s: %s", path, strerror(errno));
	if (fd < 0)
		return 1;
	ret = get_info(fd, &info);
	check(ret == 0 && info.ivposition == me && info.nvectors >= 1,
	      "peer id from the server", "ret %d ivposition %d (want %d)", ret,
	      info.ivposition, me);
	p = map_dev(fd, info.size);
	check(p != NULL, "mmap", "%s", strerror(errno));
	if (!p)
		return 1;
	mb = (struct vm_mailbox *)(p + VM_OFF_MAILBOX);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	irq.vector = 0;
	irq.fd = efd;
	check(ioctl(fd, TOCHAIN_IVSHMEM_IOC_SET_IRQFD, &irq) == 0,
	      "eventfd bound to vector 0", "errno %d", errno);
	__atomic_store_n(&mb->pair_ready[me - 1], 1, __ATOMIC_RELEASE);
	check(wait_flag(&mb->pair_ready[other - 1], 90), "other guest ready",
	      "not in 90 s");

	/* ring until the other acknowledges; answer its rings meanwhile */
	bell.peer = (uint16_t)other;
	bell.vector = 0;
	pfd.fd = efd;
	pfd.events = POLLIN;
	end = now() + 60;
	while (now() < end && !(mb->pair_got[me - 1] && mb->pair_got[other - 1])) {
		if (!mb->pair_got[other - 1] &&
		    ioctl(fd, TOCHAIN_IVSHMEM_IOC_DOORBELL, &bell) < 0)
			break;
		if (poll(&pfd, 1, 500) == 1 && read(efd, &cnt, sizeof(cnt)) == sizeof(cnt))
			__atomic_store_n(&mb->pair_got[me - 1], 1, __ATOMIC_RELEASE);
	}
	check(mb->pair_got[me - 1], "interrupt from the other guest", "none in 60 s");
	check(mb->pair_got[other - 1], "the other guest got ours", "no ack in 60 s");
	close(efd);
	munmap(p, info.size);
	close(fd);
	return failures ? 1 : 0;
}

static sigjmp_buf bus_jmp;
static volatile sig_atomic_t got_bus;

static void on_sigbus(int sig)
{
	(void)sig;
	got_bus = 1;
	siglongjmp(bus_jmp, 1);
}

/* Open, map and check the host pattern once the device appears. */
static int attach(const char *name, double timeout_s, uint8_t **p, size_t *size)
{
	struct tochain_ivshmem_info info;
	char path[300];
	int fd;

	fd = open_dev(name, timeout_s, path, sizeof(path));
	if (fd < 0)
		return -1;
	if (get_info(fd, &info) < 0) {
		close(fd);
		return -1;
	}
	*size = info.size;
	*p = map_dev(fd, info.size);
	if (!*p) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Threads that use the device while it goes away (see test_unplug). */
struct racer {
	const char *path;
	int fd;
	int efd;			/* bound eventfd, -1 if none */
	volatile int stop;
	int info_errno;			/* what INFO said in the end */
	volatile int info_done;		/* the INFO loop ended by itself */
	unsigned long info_calls;
	unsigned long opens;
	int open_errno;
	int efd_woken;
};

static void *race_ioctl(void *arg)
{
	struct racer *r = arg;
	struct tochain_ivshmem_info info;

	while (!r->stop) {
		if (get_info(r->fd, &info) < 0) {
			r->info_errno = errno;
			r->info_done = 1;
			break;
		}
		r->info_calls++;
	}
	return NULL;
}

/* open, mmap, info, munmap, close, again: until the node is gone */
static void *race_open(void *arg)
{
	struct racer *r = arg;
	struct tochain_ivshmem_info info;

	while (!r->stop) {
		int fd = open(r->path, O_RDWR | O_CLOEXEC);
		void *m;

		if (fd < 0) {
			r->open_errno = errno;
			break;
		}
		m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		get_info(fd, &info);
		if (m != MAP_FAILED)
			munmap(m, 4096);
		close(fd);
		r->opens++;
	}
	return NULL;
}

static void *race_eventfd(void *arg)
{
	struct racer *r = arg;
	struct pollfd pfd = { .fd = r->efd, .events = POLLIN };

	r->efd_woken = poll(&pfd, 1, 120000) == 1;
	return NULL;
}

/* A forked child with the mapping inherited: it must get SIGBUS too. */
static void child_touch(volatile uint8_t *vp, size_t size)
{
	double end = now() + 120;
	size_t i;
	uint32_t sum = 0;

	signal(SIGBUS, SIG_DFL);
	while (now() < end) {
		for (i = 0; i < size; i += 4096)
			sum += vp[i];
		nap_ms(20);
	}
	_exit(sum == 0xffffffffu ? 3 : 1);	/* no SIGBUS: 1 */
}

static int test_unplug(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_sigbus };
	struct tochain_ivshmem_info info;
	struct tochain_ivshmem_irqfd irq;
	bool replug = !(argc > 3 && !strcmp(argv[3], "--no-replug"));
	struct racer r = { .efd = -1 };
	const char *name = argv[2];
	pthread_t t_ioctl, t_open, t_efd;
	volatile uint8_t *vp;
	char path[300];
	size_t size = 0, i;
	uint8_t *p = NULL;
	volatile uint32_t sum = 0;
	int fd, status = 0;
	pid_t child;
	double end;

	snprintf(path, sizeof(path), "%s/%s", TOCHAIN_IVSHMEM_DIR, name);
	say("GUEST-WAIT-DEVICE");
	fd = attach(name, 120, &p, &size);
	check(fd >= 0, "hot-added device attached", "%s: %s", path, strerror(errno));
	if (fd < 0)
		return 1;
	check(vm_pat_check(p + VM_OFF_HOST_PAT, VM_PAT_LEN, VM_SEED_HOST) == VM_PAT_LEN,
	      "host pattern on the hot-added device", "differs");
	get_info(fd, &info);

	/* everything that may run while the device is pulled */
	r.path = path;
	r.fd = fd;
	if (info.nvectors) {
		r.efd = eventfd(0, EFD_CLOEXEC);
		irq.vector = 0;
		irq.fd = r.efd;
		check(ioctl(fd, TOCHAIN_IVSHMEM_IOC_SET_IRQFD, &irq) == 0,
		      "eventfd bound to vector 0", "errno %d", errno);
		pthread_create(&t_efd, NULL, race_eventfd, &r);
	}
	child = fork();
	if (child == 0)
		child_touch(p, size);
	pthread_create(&t_ioctl, NULL, race_ioctl, &r);
	pthread_create(&t_open, NULL, race_open, &r);
	say("GUEST-MAPPED");

	sigaction(SIGBUS, &sa, NULL);
	vp = p;
	end = now() + 120;
	if (sigsetjmp(bus_jmp, 1) == 0) {
		/* keep touching every page until the device goes away */
		while (now() < end) {
			for (i = 0; i < size; i += 4096)
				sum += vp[i];
			nap_ms(20);
		}
	}
	check(got_bus, "SIGBUS on access after unplug", "no SIGBUS in 120 s");
	check(get_info(fd, &info) < 0 && errno == ENODEV, "ioctl ENODEV after unplug",
	      "errno %d", errno);
	check(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED &&
	      errno == ENODEV, "mmap ENODEV after unplug", "errno %d", errno);
	{
		/* the runtime waits on its claim file for this (gl_vm.h) */
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		check(poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP),
		      "poll HUP after unplug", "revents %#x", pfd.revents);
	}
	check(wait_gone(path, 10), "node removed", "%s still there", path);

	/* the INFO loop sees the unplug on its next call, once it runs
	 * (a loaded TCG host may not give it the vCPU for a while) */
	for (i = 0; i < 500 && !r.info_done; i++)
		nap_ms(10);
	r.stop = 1;
	pthread_join(t_ioctl, NULL);
	pthread_join(t_open, NULL);
	check(r.info_errno == ENODEV, "concurrent ioctls end with ENODEV",
	      "errno %d after %lu calls", r.info_errno, r.info_calls);
	check(r.opens > 0 && (r.open_errno == ENOENT || r.open_errno == ENODEV ||
			      r.open_errno == ENXIO || r.open_errno == 0),
	      "concurrent open/mmap/close loop", "%lu opens, errno %d", r.opens,
	      r.open_errno);
	if (r.efd >= 0) {
		pthread_join(t_efd, NULL);
		check(r.efd_woken, "eventfd sleeper woken by the unplug", "still asleep");
		close(r.efd);
	}
	waitpid(child, &status, 0);
	check(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS,
	      "forked child with the mapping gets SIGBUS", "status %#x", status);
	printf("GUEST-RACE info-calls=%lu opens=%lu\n", r.info_calls, r.opens);
	munmap(p, size);
	close(fd);
	say("GUEST-ALIVE");

	if (!replug) {
		/* give the host time to see QEMU finish the ejection */
		say("GUEST-LINGER");
		nap_ms(8000);
	} else {
		/* the device comes back: attach again */
		say("GUEST-WAIT-REPLUG");
		fd = attach(name, 120, &p, &size);
		check(fd >= 0, "re-added device attached", "%s", strerror(errno));
		if (fd >= 0) {
			check(vm_pat_check(p + VM_OFF_HOST_PAT, VM_PAT_LEN, VM_SEED_HOST) ==
			      VM_PAT_LEN, "host pattern after replug", "differs");
			munmap(p, size);
			close(fd);
		}
	}
	printf("GUEST-SUM %u\n", sum);
	return failures ? 1 : 0;
}

/*
 * Claims of the VM link's table (the host wrote a fake one with
 * vm-host-tool link FILE 4 --stale: slot 0 left CLAIMED by "an earlier
 * boot", slots 1..3 OFFERED, poll mode).
 */
static uint32_t slot_state(struct tcr_header *h, unsigned int i)
{
	return __atomic_load_n(&h->link.slot[i].state, __ATOMIC_ACQUIRE);
}

static int claim(int fd, struct tochain_ivshmem_claim *c)
{
	memset(c, 0, sizeof(*c));
	return ioctl(fd, TOCHAIN_IVSHMEM_IOC_CLAIM, c);
}

static int test_claim(int argc, char **argv)
{
	struct tochain_ivshmem_claim a, b, c, x;
	struct pollfd pfd;
	struct tcr_header *h;
	char path[300];
	int fm, fa, fb, fc, p[2], ret;
	uint8_t *m;
	size_t size;
	pid_t kid = -1;

	(void)argc;
	/* the mapping has a file of its own: a mapping holds its file, and so a claim */
	fm = attach(argv[2], 30, &m, &size);
	check(fm >= 0, "open and map", "%s", strerror(errno));
	if (fm < 0)
		return 1;
	h = (struct tcr_header *)m;
	fa = open_dev(argv[2], 1, path, sizeof(path));
	check(slot_state(h, 0) == TCR_LINK_RELEASED, "stale claim released at probe",
	      "slot 0 state %u", slot_state(h, 0));

	ret = claim(fa, &a);
	check(ret == 0 && a.slot == 1 && a.channel == 11 && a.epoch == 7 && a.vector == 1 &&
	      a.mode == TCR_LINK_POLL && a.poll_us == 300 && a.cookie != 0,
	      "claim", "ret %d errno %d slot %u channel %u epoch %u vector %u mode %u poll %u",
	      ret, errno, a.slot, a.channel, a.epoch, a.vector, a.mode, a.poll_us);
	check(slot_state(h, 1) == TCR_LINK_CLAIMED && h->link.slot[1].cookie == a.cookie &&
	      h->link.slot[1].pid == (uint32_t)getpid(), "claim written to the table",
	      "state %u cookie %u pid %u", slot_state(h, 1), h->link.slot[1].cookie,
	      h->link.slot[1].pid);
	check(claim(fa, &x) < 0 && errno == EBUSY, "second claim on one file EBUSY",
	      "errno %d", errno);
	memset(&x, 0, sizeof(x));
	check(ioctl(fa, TOCHAIN_IVSHMEM_IOC_CLAIM_INFO, &x) == 0 && x.slot == a.slot &&
	      x.cookie == a.cookie, "claim info", "errno %d slot %u", errno, x.slot);

	fb = open(path, O_RDWR | O_CLOEXEC);
	check(ioctl(fb, TOCHAIN_IVSHMEM_IOC_CLAIM_INFO, &x) < 0 && errno == ENOENT,
	      "claim info without a claim ENOENT", "errno %d", errno);
	ret = claim(fb, &b);
	check(ret == 0 && b.slot == 2 && b.cookie != a.cookie, "claim on another file",
	      "ret %d slot %u", ret, b.slot);

	/* a child claims the last slot and is killed: the driver releases it */
	if (pipe(p) == 0 && (kid = fork()) == 0) {
		int fk = open(path, O_RDWR);
		struct tochain_ivshmem_claim k;

		if (fk < 0 || claim(fk, &k) || k.slot != 3)
			_exit(1);
		if (write(p[1], "c", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	{
		char ch = 0;

		check(read(p[0], &ch, 1) == 1 && ch == 'c' && slot_state(h, 3) == TCR_LINK_CLAIMED,
		      "claim in a child", "state %u", slot_state(h, 3));
	}
	fc = open(path, O_RDWR | O_CLOEXEC);
	check(claim(fc, &c) < 0 && errno == EAGAIN, "no slot left EAGAIN", "errno %d", errno);
	if (kid > 0) {
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
	}
	check(slot_state(h, 3) == TCR_LINK_RELEASED, "killed child's claim released",
	      "state %u", slot_state(h, 3));

	/* a forked child sharing B's file exits: the file lives on in us */
	if ((kid = fork()) == 0)
		_exit(0);
	waitpid(kid, NULL, 0);
	check(slot_state(h, 2) == TCR_LINK_CLAIMED, "claim survives a sharing child's exit",
	      "state %u", slot_state(h, 2));

	close(fa);
	check(slot_state(h, 1) == TCR_LINK_RELEASED, "close releases", "state %u",
	      slot_state(h, 1));

	pfd.fd = fb;
	pfd.events = POLLIN;
	pfd.revents = 0;
	check(poll(&pfd, 1, 0) == 0, "poll quiet while the device is there", "revents %#x",
	      pfd.revents);

	/* no table (magic cleared): ENOENT */
	__atomic_store_n(&h->link.magic, 0u, __ATOMIC_RELEASE);
	check(claim(fc, &c) < 0 && errno == ENOENT, "no link ENOENT", "errno %d", errno);
	/* a table that claims more slots than fit is clamped, never overrun */
	__atomic_store_n(&h->link.nslots, 1000u, __ATOMIC_RELAXED);
	__atomic_store_n(&h->link.magic, TCR_LINK_MAGIC, __ATOMIC_RELEASE);
	check(claim(fc, &c) < 0 && errno == EAGAIN, "oversized table clamped", "errno %d", errno);
	__atomic_store_n(&h->link.nslots, 4u, __ATOMIC_RELAXED);
	close(fc);
	close(fb);
	check(slot_state(h, 2) == TCR_LINK_RELEASED, "last close releases", "state %u",
	      slot_state(h, 2));
	munmap(m, size);
	close(fm);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "plain"))
		return test_plain(argc, argv);
	if (argc >= 4 && !strcmp(argv[1], "doorbell"))
		return test_doorbell(argc, argv);
	if (argc >= 3 && !strcmp(argv[1], "unplug"))
		return test_unplug(argc, argv);
	if (argc >= 5 && !strcmp(argv[1], "pair"))
		return test_pair(argc, argv);
	if (argc >= 3 && !strcmp(argv[1], "dup"))
		return test_dup(argc, argv);
	if (argc >= 3 && !strcmp(argv[1], "claim"))
		return test_claim(argc, argv);
	fprintf(stderr, "usage: ivshmem-guest-test plain NAME [--fallback] |"
		" doorbell NAME HOST_PEER | unplug NAME [--no-replug] |"
		" pair NAME MY_ID OTHER_ID | dup NAME | claim NAME\n");
	return 2;
}
