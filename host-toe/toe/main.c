// SPDX-License-Identifier: MIT
/* tochain-toe: the per-VM TCP offload engine (see toe.h, README.md). */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tochain/util.h>

#include "toe.h"
#include "toe_perm.h"

static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > 0xffffffffUL)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tochain-toe --region PATH --name NAME [--nbufs N] [--slot-size BYTES]\n"
		   "                   [--channels N] [--ready-fd FD] [--verbose]\n"
		   "                   [--guest-mode MODE] [--guest-group GROUP] [--hold]\n"
		   "  --hold  forward nothing (no accept, read, connect or send) until the\n"
		   "          control command chains.ready (tochaind's TOEs: the VM's chains\n"
		   "          are set first)\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "region", required_argument, NULL, 'r' },
		{ "name", required_argument, NULL, 'n' },
		{ "nbufs", required_argument, NULL, 'b' },
		{ "slot-size", required_argument, NULL, 's' },
		{ "channels", required_argument, NULL, 'c' },
		{ "ready-fd", required_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "guest-mode", required_argument, NULL, 'm' },
		{ "guest-group", required_argument, NULL, 'g' },
		{ "hold", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct toe_params p;
	struct toe *t;
	uint32_t v;
	int c, err;

	toe_params_default(&p);
	while ((c = getopt_long(argc, argv, "r:n:b:s:c:f:vhm:g:", opts, NULL)) != -1) {
		switch (c) {
		case 'r': p.region_path = optarg; break;
		case 'n': p.name = optarg; break;
		case 'v': p.verbose = true; break;
		case 'H': p.hold = true; break;
		case 'h': usage(stdout); return 0;
		case 'm': {
			char *end;
			unsigned long m;

			errno = 0;
			m = strtoul(optarg, &end, 8);
			if (errno || end == optarg || *end || m > 0777 ||
			    !toe_perm_mode_valid((unsigned)m)) {
				fprintf(stderr, "tochain-toe: bad --guest-mode %s: octal, "
					"read/write bits only, owner rw (e.g. 0660, 0666)\n", optarg);
				return 2;
			}
			p.guest_mode = (unsigned)m;
			break;
		}
		case 'g': {
			struct group *gr = getgrnam(optarg);

			if (!gr) {
				fprintf(stderr, "tochain-toe: bad --guest-group %s: no such group\n",
					optarg);
				return 2;
			}
			p.guest_gid = (long)gr->gr_gid;
			break;
		}
		case 'b': case 's': case 'c': case 'f':
			if (parse_u32(optarg, &v)) {
				fprintf(stderr, "tochain-toe: bad number for --%s: %s\n",
					c == 'b' ? "nbufs" : c == 's' ? "slot-size" :
					c == 'c' ? "channels" : "ready-fd", optarg);
				return 2;
			}
			if (c == 'b') p.nbufs = v;
			else if (c == 's') p.slot_size = v;
			else if (c == 'c') p.nchannels = v;
			else p.ready_fd = (int)v;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!p.region_path || !p.name || optind != argc) {
		usage(stderr);
		return 2;
	}
	/*
	 * At least TOE_GRANT_BYTES worth of grants per process: with 2 KiB
	 * slots 64 buffers were 128 KiB, two of nginx's 64 KiB responses, and
	 * a worker's third connection waited for grants; with 256 KiB (32 of
	 * 8 KiB in a 16 MiB region) a worker's 16 connections cut their
	 * responses into 1.5 bursts each, each its own sendmsg and skb train.
	 */
	if (p.grants < TOE_GRANT_BYTES / p.slot_size)
		p.grants = TOE_GRANT_BYTES / p.slot_size;
	/* Keep the grants a fraction of the buffers when the caller picks few. */
	while (p.grants > 4 && (uint64_t)p.nchannels * p.grants + 16 > p.nbufs / 2)
		p.grants /= 2;
	/* before toe_create: its threads inherit the policy (tochain/util.h) */
	err = tu_sched_batch();
	if (err)
		fprintf(stderr, "tochain-toe: SCHED_BATCH: %s (keeping the default policy)\n",
			strerror(-err));
	t = toe_create(&p);
	if (!t) {
		fprintf(stderr, "tochain-toe: %s: %s\n", p.region_path, strerror(errno));
		return 1;
	}
	err = toe_run(t);
	toe_destroy(t);
	if (err) {
		fprintf(stderr, "tochain-toe: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
