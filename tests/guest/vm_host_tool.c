/* SPDX-License-Identifier: MIT */
/*
 * vm-host-tool: the host side of the guest driver tests.
 *
 *   vm-host-tool init FILE SIZE NAME [--formatting]
 *       create FILE (SIZE bytes, a power of two >= VM_TEST_MIN_SIZE) with
 *       a region header named NAME (state READY, or FORMATTING) and the
 *       host pattern
 *   vm-host-tool ready FILE        set the header's state to READY
 *   vm-host-tool check FILE        verify the guest's pattern
 *   vm-host-tool doorbell SOCKET FILE VECTORS TIMEOUT_S
 *       run an ivshmem server (host = peer 0) on SOCKET for FILE; wait for
 *       a guest to join and say it is ready (mailbox), ring its vector 0,
 *       then wait for the guest to ring the host's vector 0 and record it
 *       in the mailbox.  Prints "ready", "join ID", "rang ID", "bell"
 *       lines; exits 0 when all happened in time.
 *
 *   vm-host-tool link FILE NSLOTS [--stale]
 *       publish a fake VM link claim table: NSLOTS slots OFFERED (channel
 *       10 + i, epoch 7, vector i), poll mode, poll_us 300; --stale leaves
 *       slot 0 CLAIMED, as an earlier boot of the guest would
 *   vm-host-tool slots FILE        print "slot I state S pid P cookie C"
 *
 * Exit status: 0 ok, 1 check failed or timed out, 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tochain/region_layout.h>
#include "ivs_server.h"
#include "vm_test_layout.h"

static void die(const char *what)
{
	fprintf(stderr, "vm-host-tool: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint8_t *map_file(const char *path, size_t *size, bool create,
			 size_t want)
{
	struct stat st;
	void *p;
	int fd;

	fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_TRUNC : 0), 0600);
	if (fd < 0)
		die(path);
	if (create && ftruncate(fd, (off_t)want) < 0)
		die(path);
	if (fstat(fd, &st) < 0)
		die(path);
	if ((size_t)st.st_size < VM_TEST_MIN_SIZE) {
		fprintf(stderr, "vm-host-tool: %s: too small\n", path);
		exit(1);
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	close(fd);
	*size = (size_t)st.st_size;
	return p;
}

static int cmd_init(int argc, char **argv)
{
	struct tcr_header *h;
	unsigned long long size;
	bool formatting = argc > 5 && !strcmp(argv[5], "--formatting");
	size_t len;
	uint8_t *p;

	if (argc < 5)
		return 2;
	size = strtoull(argv[3], NULL, 0);
	if (size < VM_TEST_MIN_SIZE || (size & (size - 1)) ||
	    strlen(argv[4]) >= TCR_NAME_MAX) {
		fprintf(stderr, "vm-host-tool: bad size or name\n");
		return 2;
	}
	p = map_file(argv[2], &len, true, size);
	h = (struct tcr_header *)p;
	memset(p, 0, VM_TEST_MIN_SIZE);
	h->version = TCR_LAYOUT_VERSION;
	h->header_size = sizeof(*h);
	h->region_size = size;
	h->generation = 1;
	h->kind = TCR_KIND_GUEST;
	strcpy(h->name, argv[4]);
	vm_pat_fill(p + VM_OFF_HOST_PAT, VM_PAT_LEN, VM_SEED_HOST);
	/* magic last, state with release: what the guest driver pairs with */
	atomic_store_explicit((_Atomic uint64_t *)&h->magic, TCR_MAGIC,
			      memory_order_release);
	atomic_store_explicit((_Atomic uint32_t *)&h->state,
			      formatting ? TCR_STATE_FORMATTING : TCR_STATE_READY,
			      memory_order_release);
	munmap(p, len);
	return 0;
}

static int cmd_ready(int argc, char **argv)
{
	struct tcr_header *h;
	size_t len;

	if (argc < 3)
		return 2;
	h = (struct tcr_header *)map_file(argv[2], &len, false, 0);
	atomic_store_explicit((_Atomic uint32_t *)&h->state, TCR_STATE_READY,
			      memory_order_release);
	munmap(h, len);
	return 0;
}

static int cmd_check(int argc, char **argv)
{
	struct vm_mailbox *mb;
	size_t len, bad;
	uint8_t *p;

	if (argc < 3)
		return 2;
	p = map_file(argv[2], &len, false, 0);
	mb = (struct vm_mailbox *)(p + VM_OFF_MAILBOX);
	if (!mb->guest_wrote) {
		fprintf(stderr, "check: the guest never said it wrote\n");
		return 1;
	}
	bad = vm_pat_check(p + VM_OFF_GUEST_PAT, VM_PAT_LEN, VM_SEED_GUEST);
	if (bad != VM_PAT_LEN) {
		fprintf(stderr, "check: guest pattern differs at byte %zu\n", bad);
		return 1;
	}
	printf("check: guest pattern ok (%d bytes)\n", VM_PAT_LEN);
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct bell_state {
	int guest;		/* peer id of the guest, -1 until it joins */
};

static void on_peer(void *arg, unsigned int id, bool joined)
{
	struct bell_state *st = arg;

	printf("%s %u\n", joined ? "join" : "leave", id);
	fflush(stdout);
	if (joined && st->guest < 0)
		st->guest = (int)id;
}

static int cmd_doorbell(int argc, char **argv)
{
	struct ivs_server_config cfg = { .host_peer = true };
	struct bell_state st = { .guest = -1 };
	struct vm_mailbox *mb;
	struct ivs_server *s;
	double deadline;
	bool rang = false, ok;
	size_t len;
	uint8_t *p;
	int fd;

	if (argc < 6)
		return 2;
	cfg.socket_path = argv[2];
	cfg.nvectors = (unsigned int)atoi(argv[4]);
	deadline = now() + atof(argv[5]);
	p = map_file(argv[3], &len, false, 0);
	mb = (struct vm_mailbox *)(p + VM_OFF_MAILBOX);
	fd = open(argv[3], O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die(argv[3]);
	cfg.shm_fd = fd;
	s = ivs_server_create(&cfg);
	if (!s)
		die(cfg.socket_path);
	close(fd);
	ivs_server_set_callback(s, on_peer, &st);
	signal(SIGPIPE, SIG_IGN);
	printf("ready host-peer %d\n", ivs_server_host_id(s));
	fflush(stdout);

	while (now() < deadline) {
		struct pollfd pfd[2] = {
			{ .fd = ivs_server_fd(s), .events = POLLIN },
			{ .fd = ivs_server_host_eventfd(s, 0), .events = POLLIN },
		};
		uint64_t cnt;

		if (poll(pfd, 2, 100) < 0 && errno != EINTR)
			die("poll");
		if (pfd[0].revents)
			ivs_server_dispatch(s, 0);
		if (!rang && st.guest >= 0 && mb->guest_ready) {
			int ret = ivs_server_ring(s, (unsigned int)st.guest, 0);

			if (ret < 0) {
				fprintf(stderr, "ring: %s\n", strerror(-ret));
				break;
			}
			printf("rang %d\n", st.guest);
			fflush(stdout);
			rang = true;
		}
		if ((pfd[1].revents & POLLIN) &&
		    read(pfd[1].fd, &cnt, sizeof(cnt)) == sizeof(cnt)) {
			printf("bell %llu\n", (unsigned long long)cnt);
			fflush(stdout);
			mb->host_got_bell = 1;
			/* keep serving until the guest is done, then leave */
			deadline = now() + 5;
			if (rang)
				break;
		}
	}
	/* give the guest a moment to see host_got_bell, then stop */
	if (mb->host_got_bell) {
		double until = now() + 2;

		while (now() < until)
			ivs_server_dispatch(s, 100);
	}
	ok = rang && mb->host_got_bell;
	ivs_server_destroy(s);
	munmap(p, len);
	return ok ? 0 : 1;
}

static int cmd_link(int argc, char **argv)
{
	struct tcr_header *h;
	unsigned long n;
	size_t len;

	if (argc < 4)
		return 2;
	n = strtoul(argv[3], NULL, 0);
	if (n == 0 || n > TCR_LINK_SLOTS)
		return 2;
	h = (struct tcr_header *)map_file(argv[2], &len, false, 0);
	memset(&h->link, 0, sizeof(h->link));
	for (unsigned long i = 0; i < n; i++) {
		struct tcr_link_slot *sl = &h->link.slot[i];

		sl->channel = 10 + (uint32_t)i;
		sl->epoch = 7;
		sl->vector = (uint32_t)i;
		sl->state = TCR_LINK_OFFERED;
	}
	if (argc > 4 && !strcmp(argv[4], "--stale")) {
		h->link.slot[0].state = TCR_LINK_CLAIMED;
		h->link.slot[0].cookie = 12345;
	}
	h->link.nslots = (uint32_t)n;
	h->link.mode = TCR_LINK_POLL;
	h->link.poll_us = 300;
	atomic_store_explicit((_Atomic uint32_t *)&h->link.magic, TCR_LINK_MAGIC,
			      memory_order_release);
	munmap(h, len);
	return 0;
}

static int cmd_slots(int argc, char **argv)
{
	struct tcr_header *h;
	size_t len;

	if (argc < 3)
		return 2;
	h = (struct tcr_header *)map_file(argv[2], &len, false, 0);
	for (uint32_t i = 0; i < h->link.nslots && i < TCR_LINK_SLOTS; i++)
		printf("slot %u state %u pid %u cookie %u\n", i, h->link.slot[i].state,
		       h->link.slot[i].pid, h->link.slot[i].cookie);
	munmap(h, len);
	return 0;
}

int main(int argc, char **argv)
{
	int ret = 2;

	if (argc >= 2) {
		if (!strcmp(argv[1], "init"))
			ret = cmd_init(argc, argv);
		else if (!strcmp(argv[1], "ready"))
			ret = cmd_ready(argc, argv);
		else if (!strcmp(argv[1], "check"))
			ret = cmd_check(argc, argv);
		else if (!strcmp(argv[1], "doorbell"))
			ret = cmd_doorbell(argc, argv);
		else if (!strcmp(argv[1], "link"))
			ret = cmd_link(argc, argv);
		else if (!strcmp(argv[1], "slots"))
			ret = cmd_slots(argc, argv);
	}
	if (ret == 2)
		fprintf(stderr, "usage: vm-host-tool init FILE SIZE NAME [--formatting] |"
			" ready FILE | check FILE | doorbell SOCKET FILE VECTORS TIMEOUT_S |"
			" link FILE NSLOTS [--stale] | slots FILE\n");
	return ret;
}
