// SPDX-License-Identifier: MIT
/* Checking a rule file with the kind's own engine; see vnf_check.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vnf_check.h"

static void add_msg(void *arg, const char *msg)
{
	struct vnf_check *c = arg;
	char **n, *m;

	if (!msg || !*msg)
		return;
	m = strdup(msg);
	n = m ? realloc(c->msg, (c->nmsg + 1) * sizeof(*n)) : NULL;
	if (!n) {
		free(m);
		return;
	}
	c->msg = n;
	c->msg[c->nmsg++] = m;
}

void vnf_check_not_applicable(void *arg, const char *msg)
{
	struct vnf_check *c = arg;
	size_t n = c->nmsg;

	add_msg(c, msg);
	if (c->nmsg > n)
		c->not_applicable++;
}

void vnf_check_kept(void *arg, unsigned int n)
{
	((struct vnf_check *)arg)->loaded = n;
}

int vnf_check_run(const struct vnf_kind *k, const struct vnf_kind_opts *o, struct vnf_check *c)
{
	struct timespec t0, t1;
	void *e;

	memset(c, 0, sizeof(*c));
	c->has_rules = k->engine_count != NULL;
	if (k->diagnose)
		c->unsupported = k->diagnose(o, add_msg, c);
	errno = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	e = k->engine_load(o, c->err, sizeof(c->err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	c->load_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		     (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	if (!e) {
		int why = errno ? errno : EINVAL;

		if (!c->err[0])
			snprintf(c->err, sizeof(c->err), "%s", strerror(why));
		/* a load that refuses without a diagnosis of its own: its message */
		if (!c->nmsg) {
			add_msg(c, c->err);
			if (!c->nmsg)
				return -ENOMEM;
		}
		/* EINVAL: the file's content (a rule); else opening, memory: none */
		if (!c->unsupported && why == EINVAL)
			c->unsupported = 1;
		return 0;
	}
	c->loaded = k->engine_count ? k->engine_count(e) : 0;
	k->engine_free(e);
	c->usable = !c->has_rules || c->loaded > 0;
	if (!c->usable)
		snprintf(c->err, sizeof(c->err), "%s: no rule loaded",
			 o->rules ? o->rules : k->name);
	return 0;
}

void vnf_check_free(struct vnf_check *c)
{
	for (size_t i = 0; i < c->nmsg; i++)
		free(c->msg[i]);
	free(c->msg);
	c->msg = NULL;
	c->nmsg = 0;
}
