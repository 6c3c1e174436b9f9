// SPDX-License-Identifier: MIT
/*
 * tochain-vmlink: the host side of a real VM's region (ivs_link.h).
 *
 *   tochain-vmlink --region PATH [--doorbell SOCKET] [--slots N]
 *                  [--poll-us US] [--max-peers N] [--follow] [--ready-fd FD]
 *                  [--verbose]
 *
 * Start it after the TOE serves PATH and before QEMU.  With --doorbell it
 * is the ivshmem server QEMU's ivshmem-doorbell device connects to
 * (vectors=N of the device must be at least --slots); without, the guest
 * uses ivshmem-plain with PATH as memory-backend-file and both sides
 * poll.  Writes one byte to --ready-fd when the table is published; on
 * SIGTERM/SIGINT withdraws it and exits 0; exits 1 on a setup error or
 * when the TOE goes away, 2 on bad usage.  With --follow it outlives the
 * TOE and serves the next one on the same region file (ivs_link.h); it
 * then exits 1 only when the region file is replaced.  Prints its
 * counters on exit.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ivs_link.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: tochain-vmlink --region PATH [--doorbell SOCKET] [--slots N]"
		" [--poll-us US] [--max-peers N] [--follow] [--ready-fd FD] [--verbose]\n");
}

static int num(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || *end || !*s || *out > max ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "region", required_argument, NULL, 'r' },
		{ "doorbell", required_argument, NULL, 'd' },
		{ "slots", required_argument, NULL, 's' },
		{ "poll-us", required_argument, NULL, 'p' },
		{ "max-peers", required_argument, NULL, 'm' },
		{ "ready-fd", required_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "follow", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ivs_link_config cfg = { 0 };
	struct ivs_link_stats st;
	struct ivs_link *l;
	unsigned long v;
	int c, ready_fd = -1, ret;

	while ((c = getopt_long(argc, argv, "r:d:s:p:m:f:vFh", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			cfg.region_path = optarg;
			break;
		case 'd':
			cfg.doorbell_socket = optarg;
			break;
		case 's':
			if (num(optarg, 64, &v) || v == 0)
				goto bad;
			cfg.nslots = (unsigned int)v;
			break;
		case 'p':
			if (num(optarg, 1000000, &v) || v == 0)
				goto bad;
			cfg.poll_us = (unsigned int)v;
			break;
		case 'm':
			if (num(optarg, 64, &v) || v == 0)
				goto bad;
			cfg.max_peers = (unsigned int)v;
			break;
		case 'f':
			if (num(optarg, 1 << 20, &v))
				goto bad;
			ready_fd = (int)v;
			break;
		case 'v':
			cfg.verbose = true;
			break;
		case 'F':
			cfg.follow = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (!cfg.region_path || optind != argc)
		goto bad;
	signal(SIGPIPE, SIG_IGN);
	l = ivs_link_create(&cfg);
	if (!l) {
		fprintf(stderr, "tochain-vmlink: %s: %s\n", cfg.region_path, strerror(errno));
		return 1;
	}
	if (ready_fd >= 0) {
		if (write(ready_fd, "r", 1) != 1) {
			/* nobody waits for it any more: carry on */
		}
		close(ready_fd);
	}
	ret = ivs_link_run(l);
	ivs_link_get_stats(l, &st);
	fprintf(stderr, "tochain-vmlink: offers %llu recycles %llu to-toe %llu to-guest %llu"
		" joins %llu leaves %llu toe-losses %llu toe-follows %llu\n",
		(unsigned long long)st.offers, (unsigned long long)st.recycles,
		(unsigned long long)st.to_toe, (unsigned long long)st.to_guest,
		(unsigned long long)st.peer_joins, (unsigned long long)st.peer_leaves,
		(unsigned long long)st.toe_losses, (unsigned long long)st.toe_follows);
	ivs_link_destroy(l);
	if (ret) {
		fprintf(stderr, "tochain-vmlink: %s\n", strerror(-ret));
		return 1;
	}
	return 0;

bad:
	usage(stderr);
	return 2;
}
