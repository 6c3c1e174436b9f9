// SPDX-License-Identifier: MIT
/* hsd-worker: stand-in VNFs and VMs for tochain-sched; see hs_worker.h. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hs_worker.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hsd-worker --region PATH [--socket PATH] [--warmup S] [--measure S]\n"
		"                  [--headroom X] [--json] SPEC...\n"
		"  SPEC: vm NAME [vcpus=N] [rx_us=X] | tenant NAME [vcpus=N]\n"
		"        | chain NAME vm=VM sla=PPS vnf_us=X [threads=N] [load=X]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "region", required_argument, NULL, 'r' },
		{ "socket", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "measure", required_argument, NULL, 'm' },
		{ "headroom", required_argument, NULL, 'H' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	static struct hsw w;
	const char *region = NULL, *sock = NULL;
	double warmup = 2, measure = 5;
	bool json = false;
	char why[512];
	int o, i, err;

	w.headroom = 0.1;
	while ((o = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (o) {
		case 'r': region = optarg; break;
		case 's': sock = optarg; break;
		case 'w': warmup = atof(optarg); break;
		case 'm': measure = atof(optarg); break;
		case 'H': w.headroom = atof(optarg); break;
		case 'j': json = true; break;
		default: usage(stderr); return 2;
		}
	}
	if (!region || optind == argc || warmup < 0 || measure <= 0 || measure > 600 ||
	    w.headroom < 0 || w.headroom >= 1) {
		usage(stderr);
		return 2;
	}
	for (i = optind; i < argc;)
		if (hsw_parse(&w, argc, argv, &i, why, sizeof(why))) {
			fprintf(stderr, "hsd-worker: %s\n", why);
			return 2;
		}
	err = hsw_start(&w, region);
	if (err) {
		fprintf(stderr, "hsd-worker: start: %s\n", strerror(-err));
		return 1;
	}
	if (sock && hsw_register(&w, sock, region, why, sizeof(why))) {
		fprintf(stderr, "hsd-worker: register: %s\n", why);
		unlink(region);
		return 1;
	}
	w.aligned = sock != NULL;
	hsw_run(&w, warmup, measure, json, stdout);
	unlink(region);
	/* Threads may be frozen by the daemon: exit without joining them. */
	_exit(0);
}
