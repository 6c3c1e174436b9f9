/* SPDX-License-Identifier: MIT */
/*
 * grant-scribble: a hostile VNF guest (static, for the guest's
 * initramfs).  For each device NAME given, maps /dev/tochain/NAME
 * writable, as root in the guest may, and keeps writing the pattern
 * "HOSTILE!" over every byte of it, header and rings included; after
 * each pass it reads the mapping back and counts the 8-byte words that
 * hold the pattern.  What it found goes to the console, one line per
 * device and pass:
 *
 *   GUEST-SCRIBBLE NAME pass N wrote B bytes: K words read back as ours
 *   GUEST-SCRIBBLE NAME: mmap refused: ERR      (a refused writable map)
 *   GUEST-SCRIBBLE NAME pass N: write faulted   (SIGSEGV/SIGBUS on a store)
 *
 * A NAME written +NAME is only probed: the pattern goes to its last 8
 * bytes (past the region, in the padding up to the BAR's power of two),
 * read back the same way, "1 words" when the write landed.  That is the
 * control: a writable grant (the VNF's own region) shows that this
 * program's stores do reach the host's file when nothing stops them.
 *
 *   grant-scribble [--passes N] [--dir DIR] [+]NAME...
 *
 * Waits up to 10 minutes for each device to appear; N passes each
 * (default: until killed), 200 ms apart.  Exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tochain/tochain_ivshmem_uapi.h"

#define MAX_DEV 8

static const char pattern[8] = { 'H', 'O', 'S', 'T', 'I', 'L', 'E', '!' };
static sigjmp_buf on_fault;

static void fault(int sig)
{
	siglongjmp(on_fault, sig);
}

static void nap_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

struct dev {
	const char *name;
	volatile uint64_t *p;	/* NULL: not mapped */
	size_t size;
	int tail_only;		/* +NAME: the last word only */
};

static int map_dev(const char *dir, struct dev *d)
{
	struct tochain_ivshmem_info info;
	char path[256];
	void *p;
	int fd = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, d->name);
	for (int i = 0; i < 6000 && fd < 0; i++) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			nap_ms(100);
	}
	if (fd < 0) {
		printf("GUEST-SCRIBBLE %s: open: %s\n", d->name, strerror(errno));
		return -1;
	}
	if (ioctl(fd, TOCHAIN_IVSHMEM_IOC_INFO, &info)) {
		printf("GUEST-SCRIBBLE %s: info: %s\n", d->name, strerror(errno));
		close(fd);
		return -1;
	}
	p = mmap(NULL, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		printf("GUEST-SCRIBBLE %s: mmap refused: %s\n", d->name, strerror(errno));
		return -1;
	}
	d->p = p;
	d->size = info.size;
	return 0;
}

/* One pass over @d: write everything, then count our words. */
static void pass(struct dev *d, unsigned int n)
{
	size_t words = d->size / 8;
	volatile size_t ours = 0;
	uint64_t pat;

	memcpy(&pat, pattern, 8);
	if (sigsetjmp(on_fault, 1)) {
		printf("GUEST-SCRIBBLE %s pass %u: write faulted\n", d->name, n);
		fflush(stdout);
		return;
	}
	for (size_t i = d->tail_only ? words - 1 : 0; i < words; i++)
		d->p[i] = pat;
	for (size_t i = d->tail_only ? words - 1 : 0; i < words; i++)
		ours += d->p[i] == pat;
	printf("GUEST-SCRIBBLE %s pass %u wrote %zu bytes: %zu words read back as ours\n", d->name,
	       n, d->tail_only ? (size_t)8 : words * 8, (size_t)ours);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct dev devs[MAX_DEV];
	const char *dir = "/dev/tochain";
	long passes = -1;
	int nd = 0, i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--passes") && i + 1 < argc)
			passes = atol(argv[++i]);
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (argv[i][0] == '-' || nd == MAX_DEV)
			goto usage;
		else if (argv[i][0] == '+')
			devs[nd++] = (struct dev){ .name = argv[i] + 1, .tail_only = 1 };
		else
			devs[nd++] = (struct dev){ .name = argv[i] };
	}
	if (!nd)
		goto usage;
	signal(SIGSEGV, fault);
	signal(SIGBUS, fault);
	for (i = 0; i < nd; i++)
		map_dev(dir, &devs[i]);
	fflush(stdout);
	for (unsigned int n = 1; passes < 0 || n <= (unsigned long)passes; n++) {
		for (i = 0; i < nd; i++)
			if (devs[i].p)
				pass(&devs[i], n);
		nap_ms(200);
	}
	return 0;
usage:
	fprintf(stderr, "usage: grant-scribble [--passes N] [--dir DIR] NAME...\n");
	return 2;
}
