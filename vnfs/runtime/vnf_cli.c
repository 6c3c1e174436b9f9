// SPDX-License-Identifier: MIT
/*
 * The tochain-vnf command line: options, then vnf_serve (host), vnf_agent
 * (guest) or vnf_calibrate; see vnf_cli.h.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/tsc.h>
#include <tochain/util.h>

#include "tochain/ch_flow.h"
#include "vnf_agent.h"
#include "vnf_check.h"
#include "vnf_cli.h"
#include "vnf_mix.h"
#include "vnf_null.h"
#include "vnf_stream.h"

static volatile int stop_flag;

static void usage(FILE *f)
{
	fprintf(f, "usage: tochain-vnf --kind fw|ids|waf|null --region PATH [--threads N]\n"
		   "                   [--rules FILE] [--vars FILE] [--paranoia 1-4] [--cost-ns NS]\n"
		   "                   [--deny-marker STR] [--stats FILE] [--attach-timeout MS]\n"
		   "                   [--exit-with-parent]\n"
		   "       tochain-vnf --kind ... --guest [--dev-dir DIR] [--region DEVICE] [...]\n"
		   "       tochain-vnf --kind fw|ids|waf|null --calibrate [--rules FILE]\n"
		   "                   [--paranoia N] [--seconds S] [--json]\n"
		   "       tochain-vnf --kind fw|ids|waf|null --check [--rules FILE] [--vars FILE]\n"
		   "                   [--paranoia N] [--json]\n");
}

/* Print a JSON string (the messages name files and quote rules). */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

/*
 * --check: the counts, and file:line of every rule skipped or refused.
 * Exit 0 usable, 1 not (no rule loaded, or a hard error).
 */
static int check_main(const struct vnf_kind *k, const struct vnf_kind_opts *ko, bool json)
{
	struct vnf_check c;
	const char *what = ko->rules ? ko->rules : "(default rules)";

	vnf_log_set_quiet(true);
	if (vnf_check_run(k, ko, &c)) {
		vnf_check_free(&c);
		fprintf(stderr, "tochain-vnf: --check: out of memory\n");
		return 1;
	}
	if (json) {
		printf("{\"kind\":\"%s\",\"rules\":", k->name);
		json_str(ko->rules ? ko->rules : "");
		printf(",\"usable\":%s,\"loaded\":%u,\"unsupported\":%u,"
		       "\"not_applicable\":%u,\"load_ms\":%.0f,\"error\":",
		       c.usable ? "true" : "false", c.loaded, c.unsupported,
		       c.not_applicable, c.load_ms);
		json_str(c.err);
		printf(",\"problems\":[");
		for (size_t i = 0; i < c.nmsg; i++) {
			if (i)
				putchar(',');
			json_str(c.msg[i]);
		}
		printf("]}\n");
	} else {
		for (size_t i = 0; i < c.nmsg; i++)
			printf("%s\n", c.msg[i]);
		if (!c.has_rules)
			printf("%s: no rules (kind %s has none): usable\n", what, k->name);
		else
			printf("%s: %u loaded, %u unsupported, %u not applicable: %s "
			       "(load %.0f ms)\n", what, c.loaded, c.unsupported,
			       c.not_applicable, c.usable ? "usable" : "NOT usable",
			       c.load_ms);
		if (!c.usable && !c.nmsg)
			fprintf(stderr, "tochain-vnf: %s\n", c.err);
	}
	vnf_check_free(&c);
	return c.usable ? 0 : 1;
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return !*end && !errno && *out <= max;
}

int vnf_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "kind", required_argument, NULL, 'k' },
		{ "region", required_argument, NULL, 'r' },
		{ "threads", required_argument, NULL, 't' },
		{ "rules", required_argument, NULL, 'R' },
		{ "vars", required_argument, NULL, 'V' },
		{ "check", no_argument, NULL, 'K' },
		{ "paranoia", required_argument, NULL, 'P' },
		{ "cost-ns", required_argument, NULL, 'c' },
		{ "deny-marker", required_argument, NULL, 'd' },
		{ "stats", required_argument, NULL, 's' },
		{ "attach-timeout", required_argument, NULL, 'a' },
		{ "calibrate", no_argument, NULL, 'C' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "exit-with-parent", no_argument, NULL, 'p' },
		{ "guest", no_argument, NULL, 'g' },
		{ "dev-dir", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vnf_serve_opts so = { .attach_timeout_ms = 5000 };
	struct vnf_kind_opts ko = { 0 };
	const struct vnf_kind *k;
	struct vnf_engines es;
	const char *kind = NULL;
	bool calibrate = false, check = false, json = false, seconds_set = false, guest = false;
	const char *dev_dir = NULL;
	double seconds = 2;
	char err[512], *end;
	uint64_t u;
	sigset_t set;
	int c, r;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'k': kind = optarg; break;
		case 'r': so.region = optarg; break;
		case 't':
			if (!parse_u64(optarg, VNF_MAX_THREADS, &u) || !u)
				goto bad;
			so.threads = (uint32_t)u;
			break;
		case 'R': ko.rules = optarg; break;
		case 'V': ko.vars = optarg; break;
		case 'K': check = true; break;
		case 'P':
			if (!parse_u64(optarg, 4, &u) || !u)
				goto bad;
			ko.paranoia = (int)u;
			break;
		case 'c':
			if (!parse_u64(optarg, 1000000000ull, &so.cost_ns))
				goto bad;
			break;
		case 'd': ko.deny_marker = optarg; break;
		case 's': so.stats_path = optarg; break;
		case 'a':
			if (!parse_u64(optarg, 3600000, &u))
				goto bad;
			so.attach_timeout_ms = (int)u;
			break;
		case 'C': calibrate = true; break;
		case 'S':
			seconds = strtod(optarg, &end);
			if (*end || !(seconds > 0 && seconds <= 3600))
				goto bad;
			seconds_set = true;
			break;
		case 'j': json = true; break;
		case 'p':
			/* Tests: a VNF must not outlive the scheduler that started it. */
			if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() == 1)
				return 1;
			break;
		case 'g': guest = true; break;
		case 'D':
			if (!*optarg)
				goto bad;
			dev_dir = optarg;
			break;
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (optind != argc || !kind)
		goto bad;
	k = vnf_kind_find(kind);
	if (!k) {
		fprintf(stderr, "tochain-vnf: unknown kind '%s' (fw, ids, waf or null)\n", kind);
		goto bad;
	}
	if (dev_dir && !guest)
		goto bad;
	if (guest)
		so.dev_dir = dev_dir ? dev_dir : "/dev/tochain";
	/* --guest alone: agent mode, no --region */
	if (check ? (calibrate || so.region || so.threads || so.stats_path || guest ||
		     seconds_set || so.cost_ns) :
	    calibrate ? (so.region || so.threads || so.stats_path || guest) :
			((!so.region && !guest) || json || seconds_set))
		goto bad;
	if (ko.vars && strcmp(kind, "ids")) {
		fprintf(stderr, "tochain-vnf: --vars is for --kind ids\n");
		goto bad;
	}
	if (k->needs_rules && !ko.rules) {
		fprintf(stderr, "tochain-vnf: --kind %s needs --rules FILE\n", kind);
		goto bad;
	}
	if (ko.paranoia && strcmp(kind, "waf")) {
		fprintf(stderr, "tochain-vnf: --paranoia is for --kind waf\n");
		goto bad;
	}
	if (check)
		return check_main(k, &ko, json);
	/* Block before any thread exists: they all inherit the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (guest && !so.region)
		sigaddset(&set, SIGCHLD);	/* the agent reaps with sigtimedwait */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	/* the service threads inherit it (tochain/util.h); not a calibration */
	if (!calibrate && (r = tu_sched_batch()))
		fprintf(stderr, "tochain-vnf: SCHED_BATCH: %s (keeping the default policy)\n",
			strerror(-r));
	if (vnf_engines_init(&es, k, &ko, err, sizeof(err))) {
		fprintf(stderr, "tochain-vnf: %s\n", err);
		return 1;
	}
	if (calibrate) {
		struct vnf_calib cal;
		double pps, mbps;

		vnf_log_set_quiet(true);	/* alerts of the mix's attacks */
		r = vnf_calibrate(&es, seconds, so.cost_ns, &cal);
		vnf_engines_fini(&es);
		if (r) {
			fprintf(stderr, "tochain-vnf: calibrate: %s\n", strerror(-r));
			return 1;
		}
		pps = (double)cal.packets / cal.seconds;
		mbps = (double)cal.bytes / cal.seconds / 1e6;
		if (json)
			printf("{\"kind\":\"%s\",\"pps\":%.0f,\"mbps\":%.3f,\"seconds\":%.3f}\n",
			       kind, pps, mbps, cal.seconds);
		else
			printf("%s: %.0f pps, %.3f MB/s (%" PRIu64 " requests, %" PRIu64
			       " denied, in %.3f s, one thread)\n",
			       kind, pps, mbps, cal.requests, cal.denied, cal.seconds);
		return 0;
	}
	if (guest && !so.region)
		r = vnf_agent(&es, &so);
	else
		r = vnf_serve(&es, &so, &stop_flag, true);
	vnf_engines_fini(&es);
	if (r == -ENODEV) {
		fprintf(stderr, "tochain-vnf: %s: the device is gone\n", so.region);
		return 3;
	}
	if (r) {
		fprintf(stderr, "tochain-vnf: %s: %s\n", so.region ? so.region : so.dev_dir,
			strerror(-r));
		return 1;
	}
	return 0;
bad:
	usage(stderr);
	return 2;
}
