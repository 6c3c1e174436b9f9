// SPDX-License-Identifier: MIT
/* tochain-sched: main only; see hs_daemon.h and the README. */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tochain/ctl_proto.h"
#include "hs_daemon_ctl.h"

static int stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tochain-sched [options]\n"
		"  --socket PATH        control socket (" HSD_DEFAULT_SOCKET ")\n"
		"  --mode sync|cfs      start mode (sync)\n"
		"  --tick-ms X          tick length in ms (10)\n"
		"  --period N           ticks per period (50)\n"
		"  --sync-cpus LIST     synchronous partition, e.g. 0-1 (all online cpus)\n"
		"  --service-cpus LIST  where the daemon itself runs (anywhere)\n"
		"  --backend auto|v1|v2|dryrun|libvirt   enforcement (auto)\n"
		"  --libvirt-uri URI    libvirt for domain VMs (" HSL_DEFAULT_URI ")\n"
		"  --gating freezer|quota   time slots by freezing, or CFS quotas (freezer)\n"
		"  --cgroup NAME        parent group of the thread groups (tochain-sched)\n"
		"  --weight W           cpu weight of every thread group, 1..10000 (10000)\n"
		"  --duration S         stop after S seconds (run until SIGTERM)\n"
		"  --print-every N      print state and plan every N periods (1)\n"
		"  --no-rt              do not ask for SCHED_FIFO for the scheduler loop\n"
		"  --cleanup            remove what a killed daemon left in --cgroup, exit\n"
		"  --ctl CMD [ARGS]     client: send CMD (sched.show, sched.mode, ...) with\n"
		"                       the JSON object ARGS to --socket, print the reply\n");
}

/* --ctl: one request; prints the result (or the error) as JSON.  Exit
 * status 0 if the daemon said ok, 1 if it refused, 2 on usage. */
static int client(const char *sock, const char *cmd, const char *args_text)
{
	json_t *args = NULL, *rep;
	const char *why = NULL;
	char *s;
	int rc;

	if (args_text) {
		args = json_loads(args_text, 0, NULL);
		if (!json_is_object(args)) {
			fprintf(stderr, "tochain-sched: ARGS must be a JSON object\n");
			json_decref(args);
			return 2;
		}
	}
	rep = ctl_call(sock, cmd, args, &why);
	if (!rep) {
		fprintf(stderr, "tochain-sched: %s: %s\n", sock, why ? why : strerror(errno));
		return 1;
	}
	rc = json_is_true(json_object_get(rep, "ok")) ? 0 : 1;
	s = json_dumps(rc ? rep : json_object_get(rep, "result"), JSON_COMPACT);
	printf("%s\n", s ? s : "null");
	free(s);
	json_decref(rep);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "mode", required_argument, NULL, 'm' },
		{ "tick-ms", required_argument, NULL, 't' },
		{ "period", required_argument, NULL, 'p' },
		{ "sync-cpus", required_argument, NULL, 'c' },
		{ "service-cpus", required_argument, NULL, 'S' },
		{ "backend", required_argument, NULL, 'b' },
		{ "gating", required_argument, NULL, 'G' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "weight", required_argument, NULL, 'w' },
		{ "duration", required_argument, NULL, 'd' },
		{ "print-every", required_argument, NULL, 'P' },
		{ "no-rt", no_argument, NULL, 'R' },
		{ "cleanup", no_argument, NULL, 'C' },
		{ "ctl", required_argument, NULL, 'X' },
		{ "libvirt-uri", required_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = HSD_DEFAULT_SOCKET, *cgname = "tochain-sched";
	struct hsd_cfg cfg;
	enum hse_kind kind = HSE_AUTO;
	unsigned long weight = 10000, print_every = 1;
	double duration = 0, tick_ms = 10;
	bool rt = true, cleanup = false;
	const char *ctl_cmd = NULL, *lv_uri = HSL_DEFAULT_URI;
	static struct hse enf;
	static char lv_log[1 << 16];
	struct hsl *lv = NULL;
	struct hsd *d;
	struct hsd_ctl ctl;
	char cpus[32];
	int o, err;

	hsd_cfg_default(&cfg);
	snprintf(cpus, sizeof(cpus), "0-%ld", sysconf(_SC_NPROCESSORS_ONLN) - 1);
	snprintf(cfg.sync_cpus, sizeof(cfg.sync_cpus), "%s", cpus);
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		char *end = NULL;

		switch (o) {
		case 's': sock = optarg; break;
		case 'm':
			if (hsd_mode_parse(optarg, &cfg.mode))
				goto bad;
			break;
		case 't': tick_ms = strtod(optarg, &end); if (*end || tick_ms < 1 || tick_ms > 1000) goto bad; break;
		case 'p': cfg.g = (uint32_t)strtoul(optarg, &end, 10); if (*end) goto bad; break;
		case 'c': snprintf(cfg.sync_cpus, sizeof(cfg.sync_cpus), "%s", optarg); break;
		case 'S': snprintf(cfg.service_cpus, sizeof(cfg.service_cpus), "%s", optarg); break;
		case 'b': if (hse_kind_parse(optarg, &kind)) goto bad; break;
		case 'G':
			if (!strcmp(optarg, "freezer"))
				cfg.gating = HSD_GATE_FREEZER;
			else if (!strcmp(optarg, "quota"))
				cfg.gating = HSD_GATE_QUOTA;
			else
				goto bad;
			break;
		case 'g': cgname = optarg; break;
		case 'w': weight = strtoul(optarg, &end, 10); if (*end) goto bad; break;
		case 'd': duration = strtod(optarg, &end); if (*end || duration < 0) goto bad; break;
		case 'P': print_every = strtoul(optarg, &end, 10); if (*end) goto bad; break;
		case 'R': rt = false; break;
		case 'C': cleanup = true; break;
		case 'X': ctl_cmd = optarg; break;
		case 'U': lv_uri = optarg; break;
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (ctl_cmd)
		return client(sock, ctl_cmd, optind < argc ? argv[optind] : NULL);
	if (optind != argc)
		goto bad;
	cfg.tick_us = (uint32_t)(tick_ms * 1000);
	if (hsd_parse_cpus(cfg.sync_cpus, cfg.pcpu, HSD_MAX_PCPU, &cfg.npcpu)) {
		fprintf(stderr, "tochain-sched: bad --sync-cpus '%s'\n", cfg.sync_cpus);
		return 2;
	}
	if (cfg.service_cpus[0]) {
		int sc[HSD_MAX_PCPU];
		uint32_t n;
		cpu_set_t set;

		if (hsd_parse_cpus(cfg.service_cpus, sc, HSD_MAX_PCPU, &n)) {
			fprintf(stderr, "tochain-sched: bad --service-cpus '%s'\n", cfg.service_cpus);
			return 2;
		}
		CPU_ZERO(&set);
		for (uint32_t i = 0; i < n; i++)
			CPU_SET(sc[i], &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			fprintf(stderr, "tochain-sched: cannot run on %s: %s\n",
				cfg.service_cpus, strerror(errno));
	}

	err = hse_open(&enf, kind, cgname, NULL, NULL, 0, (unsigned int)weight);
	if (kind == HSE_DRYRUN) {
		static char log[1 << 20];

		err = hse_open(&enf, kind, cgname, NULL, log, sizeof(log), (unsigned int)weight);
	}
	if (err) {
		fprintf(stderr, "tochain-sched: backend %s: %s\n", hse_kind_name(kind), strerror(-err));
		return 1;
	}
	if (hse_purge(&enf))
		fprintf(stderr, "tochain-sched: removed groups a previous run left in %s\n", cgname);
	if (cleanup) {
		hse_close(&enf);
		return 0;
	}
	if (cfg.gating == HSD_GATE_FREEZER && !hse_can_freeze(&enf)) {
		fprintf(stderr, "tochain-sched: backend %s cannot freeze threads; use --gating quota\n",
			hse_kind_name(enf.kind));
		hse_close(&enf);
		return 1;
	}
	/* Domains go through libvirt: required with --backend libvirt,
	 * connected on first use with auto (and dry-run: logged only). */
	if (kind == HSE_LIBVIRT || kind == HSE_AUTO || kind == HSE_DRYRUN) {
		char why[512];

		lv = hsl_create(lv_uri, kind == HSE_DRYRUN ? lv_log : NULL, sizeof(lv_log),
				&enf.root);
		if (!lv) {
			fprintf(stderr, "tochain-sched: libvirt: %s\n", strerror(errno));
			hse_close(&enf);
			return 1;
		}
		err = hsl_connect(lv, why, sizeof(why));
		if (err && kind == HSE_LIBVIRT) {
			fprintf(stderr, "tochain-sched: backend libvirt: %s\n", why);
			hsl_destroy(lv);
			hse_close(&enf);
			return 1;
		}
		if (err)
			fprintf(stderr, "tochain-sched: %s; domains are refused until it answers\n",
				why);
	}
	d = calloc(1, sizeof(*d));
	if (!d || (err = hsd_init(d, &cfg, &enf))) {
		fprintf(stderr, "tochain-sched: bad configuration (tick, period, cpus)\n");
		hsl_destroy(lv);
		hse_close(&enf);
		free(d);
		return 2;
	}
	d->lv = lv;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	err = hsd_ctl_start(&ctl, d, sock, &stop_flag);
	if (err) {
		fprintf(stderr, "tochain-sched: socket %s: %s\n", sock, strerror(-err));
		hsd_fini(d);
		hsl_destroy(lv);
		hse_close(&enf);
		free(d);
		return 1;
	}
	if (rt) {
		/* Ticks on time: the loop sleeps nearly always, so a real-time
		 * priority costs the rest of the host nothing. */
		struct sched_param sp = { .sched_priority = 10 };

		if (sched_setscheduler(0, SCHED_FIFO, &sp))
			fprintf(stderr, "tochain-sched: no SCHED_FIFO (%s), ticks may be late\n",
				strerror(errno));
	}
	printf("tochain-sched: socket %s, backend %s%s%s, gating %s, mode %s, sync cpus %s, tick %u us x %u\n",
	       sock, hse_kind_name(enf.kind), lv ? " + libvirt " : "", lv ? hsl_uri(lv) : "", cfg.gating == HSD_GATE_FREEZER ? "freezer" : "quota",
	       hsd_mode_name(cfg.mode), cfg.sync_cpus, cfg.tick_us, cfg.g);
	fflush(stdout);
	hsd_run(d, &stop_flag, duration, (uint32_t)print_every, stdout);
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
	hsd_ctl_stop(&ctl);
	pthread_mutex_lock(&d->lock);
	hsd_render(d);
	fputs(d->plan_text, stdout);
	pthread_mutex_unlock(&d->lock);
	hsd_fini(d);
	hsl_destroy(lv);
	hse_purge(&enf);
	hse_close(&enf);
	free(d);
	return 0;
bad:
	usage(stderr);
	return 2;
}
