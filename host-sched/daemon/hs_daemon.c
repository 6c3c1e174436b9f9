// SPDX-License-Identifier: MIT
/* tochain-sched: configuration, lifetime and rendering of the daemon
 * state; see hs_daemon.h (and hs_daemon_int.h for how the files split). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hs_daemon_int.h"

const char *hsd_mode_name(enum hsd_mode m)
{
	return m == HSD_CFS ? "cfs" : "sync";
}

int hsd_mode_parse(const char *s, enum hsd_mode *m)
{
	if (!strcmp(s, "sync"))
		*m = HSD_SYNC;
	else if (!strcmp(s, "cfs"))
		*m = HSD_CFS;
	else
		return -EINVAL;
	return 0;
}

int hsd_parse_cpus(const char *list, int *cpus, uint32_t max, uint32_t *n)
{
	const char *p = list;

	*n = 0;
	if (!*p)
		return -EINVAL;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0 || a > 4095)
			return -EINVAL;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a || b > 4095)
				return -EINVAL;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			for (uint32_t i = 0; i < *n; i++)
				if (cpus[i] == c)
					return -EINVAL;
			if (*n == max)
				return -EINVAL;
			cpus[(*n)++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p)
			return -EINVAL;
	}
	return 0;
}

void hsd_cfg_default(struct hsd_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->tick_us = 10000;
	cfg->g = 50;
	cfg->npcpu = 1;
	cfg->pcpu[0] = 0;
	snprintf(cfg->sync_cpus, sizeof(cfg->sync_cpus), "0");
	cfg->mode = HSD_SYNC;
	cfg->gating = HSD_GATE_FREEZER;
}

int hsd_init(struct hsd *d, const struct hsd_cfg *cfg, struct hse *enf)
{
	memset(d, 0, sizeof(*d));
	if (!cfg->npcpu || cfg->npcpu > HSD_MAX_PCPU || !cfg->g || cfg->g > HSD_MAX_TICKS ||
	    cfg->tick_us < 1000 || cfg->tick_us > 1000000)
		return -EINVAL;
	if (cfg->gating == HSD_GATE_QUOTA &&
	    (uint64_t)cfg->tick_us * cfg->g > 1000000)
		return -EINVAL;	/* cfs_period_us is at most 1 s */
	d->cfg = *cfg;
	d->mode_next = cfg->mode;
	d->mode_applied = cfg->mode;
	d->enf = enf;
	d->cs = &d->set[0];
	d->timeline = calloc((size_t)cfg->npcpu * cfg->g, sizeof(*d->timeline));
	if (!d->timeline)
		return -ENOMEM;
	for (uint32_t j = 0; j < cfg->npcpu; j++)
		d->cur_owner[j] = -1;
	for (uint32_t i = 0; i < HSD_MAX_THREADS; i++) {
		d->pcpu_of[i] = NONE;
		d->busy_fd[i] = -1;
	}
	pthread_mutex_init(&d->lock, NULL);
	return 0;
}

int hsd_set_period(struct hsd *d, uint32_t tick_us, uint32_t g, char *why, size_t len)
{
	struct hsd_cfg old = d->cfg;
	int32_t *tl;
	int err;

	if (!g || g > HSD_MAX_TICKS || tick_us < 1000 || tick_us > 1000000) {
		snprintf(why, len, "tick must be 1..1000 ms and the period 1..%d ticks",
			 HSD_MAX_TICKS);
		return -EINVAL;
	}
	if (d->cfg.gating == HSD_GATE_QUOTA && (uint64_t)tick_us * g > 1000000) {
		snprintf(why, len, "quota gating: a period is at most 1 s (cfs_period_us)");
		return -EINVAL;
	}
	tl = calloc((size_t)d->cfg.npcpu * g, sizeof(*tl));
	if (!tl) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	d->cfg.tick_us = tick_us;
	d->cfg.g = g;
	err = hsd_rebuild(d, why, len);
	if (err) {
		d->cfg = old;
		free(tl);
		return err;
	}
	free(d->timeline);
	d->timeline = tl;
	d->timeline_valid = false;
	return 0;
}

void hsd_fini(struct hsd *d)
{
	if (d->lv) {
		/* domain vCPUs back to every online CPU, uncapped */
		char all[32];

		snprintf(all, sizeof(all), "0-%ld", sysconf(_SC_NPROCESSORS_ONLN) - 1);
		hsd_dom_apply(d, false, all, hsd_period_us(d));
	}
	for (uint32_t i = 0; i < d->nthread; i++)
		if (d->thread[i].enforced) {
			hse_thread_del(d->enf, &d->thread[i].enf);
			d->thread[i].enforced = false;
		}
	for (uint32_t i = 0; i < HSD_MAX_THREADS; i++)
		hsd_busy_close(d, i);
	for (uint32_t i = 0; i < d->nregion; i++)
		if (d->region[i].r)
			tcr_region_destroy(d->region[i].r);
	d->nregion = 0;
	hs_sched_destroy(d->sched);
	d->sched = NULL;
	hs_plan_destroy(d->plan);
	d->plan = NULL;
	free(d->timeline);
	d->timeline = NULL;
	pthread_mutex_destroy(&d->lock);
}

void hsd_render(struct hsd *d)
{
	const struct hsd_cfgset *cs = d->cs;
	size_t n = 0, cap = sizeof(d->plan_text);
	double avg = d->cpu_periods ? (double)d->cpu_us_total / (double)d->cpu_periods : 0;
	double pus = (double)d->cfg.tick_us * d->cfg.g;

	n += (size_t)snprintf(d->plan_text + n, cap - n,
			      "tochain-sched: period %" PRIu64 " mode %s gating %s backend %s%s"
			      " threads %u chains %u early-ends %" PRIu64 " rewakes %" PRIu64 "\n"
			      "daemon cpu: last %" PRIu64 " us/period, mean %.0f us/period (%.3f%% of one cpu)\n",
			      d->period, hsd_mode_name(d->mode_applied),
			      d->cfg.gating == HSD_GATE_FREEZER ? "freezer" : "quota",
			      d->enf ? hse_kind_name(d->enf->kind) : "none", d->lv ? "+libvirt" : "",
			      d->nthread, d->nchain, d->early_total, d->rewake_total,
			      d->cpu_us_last, avg, pus > 0 ? 100.0 * avg / pus : 0.0);
	if (n >= cap)
		n = cap - 1;
	if (d->plan_valid) {
		hs_plan_format_text(d->plan, cs->chain, cs->nchain, d->plan_text + n, cap - n);
		hs_plan_format_json(d->plan, cs->chain, cs->nchain, d->plan_json,
				    sizeof(d->plan_json));
	} else {
		snprintf(d->plan_text + n, cap - n, "no plan: %s\n",
			 d->mode_applied == HSD_CFS ? "cfs mode, the stock scheduler shares the partition" :
			 "nothing registered");
		snprintf(d->plan_json, sizeof(d->plan_json), "null");
	}
}
