// SPDX-License-Identifier: MIT
/*
 * tochain-vnf's agent mode; the contract is in vnf_agent.h.
 *
 * PROCESSES.  The agent is one single-threaded process (it forks, so it
 * must never start a thread); each child serves one device with the
 * ordinary serving path (vnf_serve: one thread per channel) and exits
 * when its device is gone (vnf_recv -ENODEV: exit status 3), when the
 * host kills the region (0), on SIGTERM (0), on an error (1) or dies of
 * SIGBUS when the device is unplugged under it (the driver zaps the
 * mapping).  The agent reaps it and goes on: a device that still holds
 * a valid VNF region gets a new child, at most once a second.
 *
 * Signals: SIGHUP, SIGTERM, SIGINT and SIGCHLD stay blocked (vnf_main
 * blocks the first three, vnf_agent SIGCHLD) and are taken with
 * sigtimedwait, which also paces the directory scans.  Children inherit
 * the mask, which is what vnf_serve expects.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tochain/region.h>

#include "vnf_agent.h"

/* Exit statuses of a child. */
#define CHILD_OK	0	/* stopped, or the host killed the region */
#define CHILD_ERROR	1
#define CHILD_GONE	3	/* the device is gone */

struct agent_dev {
	char name[TCR_NAME_MAX];
	pid_t pid;			/* 0: not served now */
	uint64_t started_ms;
};

struct agent {
	struct vnf_engines *es;
	const struct vnf_serve_opts *o;
	struct agent_dev dev[VNF_AGENT_MAX];
};

static volatile int child_stop;

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

bool vnf_agent_servable(const char *path, const char *name)
{
	struct tcr_region *r;
	bool ok;

	if (fnmatch("*.vnf-*", name, 0) || !tcr_name_valid(name))
		return false;
	r = tcr_region_attach(path, TCR_ATTACH_HOST | TCR_ATTACH_RDONLY);
	if (!r)
		return false;
	ok = r->geo.kind == TCR_KIND_HOST && strcmp(r->name, name) == 0 &&
	     r->geo.nchannels > 0 && r->geo.nchannels <= VNF_MAX_THREADS;
	tcr_region_destroy(r);
	return ok;
}

/* The child: serve @path until it is gone or we are told to stop. */
static void child_main(struct agent *a, const char *path, const char *name, pid_t agent)
{
	struct vnf_serve_opts co = *a->o;
	char stats[VNF_REGION_SLOT + TCR_NAME_MAX + 2];
	int err;

	/* Not outliving the agent: SIGTERM when it dies (checked for a race). */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != agent)
		_exit(CHILD_OK);
	co.region = path;
	if (a->o->stats_path) {
		snprintf(stats, sizeof(stats), "%s.%s", a->o->stats_path, name);
		co.stats_path = stats;
	}
	err = vnf_serve(a->es, &co, &child_stop, true);
	if (err == -ENODEV)
		_exit(CHILD_GONE);
	if (err) {
		fprintf(stderr, "tochain-vnf: %s: %s\n", path, strerror(-err));
		_exit(CHILD_ERROR);
	}
	_exit(CHILD_OK);
}

static struct agent_dev *dev_find(struct agent *a, const char *name)
{
	for (int i = 0; i < VNF_AGENT_MAX; i++)
		if (a->dev[i].name[0] && strcmp(a->dev[i].name, name) == 0)
			return &a->dev[i];
	return NULL;
}

static struct agent_dev *dev_new(struct agent *a, const char *name)
{
	/* A slot never used, else one whose child is gone. */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < VNF_AGENT_MAX; i++) {
			struct agent_dev *d = &a->dev[i];

			if (pass == 0 ? !d->name[0] : !d->pid) {
				memset(d, 0, sizeof(*d));
				snprintf(d->name, sizeof(d->name), "%s", name);
				return d;
			}
		}
	return NULL;
}

static void start(struct agent *a, const char *name)
{
	struct agent_dev *d = dev_find(a, name);
	char path[VNF_REGION_SLOT];
	uint64_t now = mono_ms();
	pid_t agent = getpid(), pid;

	if (d && (d->pid || now - d->started_ms < VNF_AGENT_RESTART_MS))
		return;
	if (snprintf(path, sizeof(path), "%s/%s", a->o->dev_dir, name) >= (int)sizeof(path))
		return;
	if (!vnf_agent_servable(path, name))
		return;
	if (!d)
		d = dev_new(a, name);
	if (!d) {
		fprintf(stderr, "tochain-vnf: %s: more than %d devices, not served\n", path,
			VNF_AGENT_MAX);
		return;
	}
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "tochain-vnf: fork: %s\n", strerror(errno));
		return;
	}
	if (pid == 0)
		child_main(a, path, name, agent);
	d->pid = pid;
	d->started_ms = now;
	fprintf(stderr, "tochain-vnf: serving %s (pid %d)\n", path, (int)pid);
}

static void scan(struct agent *a)
{
	DIR *dir = opendir(a->o->dev_dir);
	struct dirent *e;

	if (!dir)
		return;		/* not there yet: the driver creates it */
	while ((e = readdir(dir)))
		if (e->d_name[0] != '.' && strlen(e->d_name) < TCR_NAME_MAX)
			start(a, e->d_name);
	closedir(dir);
}

/* Shell convention: the exit code, or 128 + the signal's number. */
static int status_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void reap(struct agent *a)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		for (int i = 0; i < VNF_AGENT_MAX; i++)
			if (a->dev[i].pid == pid) {
				a->dev[i].pid = 0;
				fprintf(stderr, "tochain-vnf: %s/%s gone (status %d)\n",
					a->o->dev_dir, a->dev[i].name, status_code(st));
			}
}

static int alive(const struct agent *a)
{
	int n = 0;

	for (int i = 0; i < VNF_AGENT_MAX; i++)
		n += a->dev[i].pid != 0;
	return n;
}

static void signal_all(const struct agent *a, int sig)
{
	for (int i = 0; i < VNF_AGENT_MAX; i++)
		if (a->dev[i].pid)
			kill(a->dev[i].pid, sig);
}

static void stop_children(struct agent *a)
{
	uint64_t end = mono_ms() + VNF_AGENT_STOP_MS;
	struct timespec nap = { 0, 20 * 1000 * 1000 };

	signal_all(a, SIGTERM);
	while (alive(a) && mono_ms() < end) {
		nanosleep(&nap, NULL);
		reap(a);
	}
	signal_all(a, SIGKILL);
	for (int i = 0; i < VNF_AGENT_MAX; i++)
		if (a->dev[i].pid) {
			int st = 0;

			waitpid(a->dev[i].pid, &st, 0);
			a->dev[i].pid = 0;
			fprintf(stderr, "tochain-vnf: %s/%s killed (status %d)\n", a->o->dev_dir,
				a->dev[i].name, status_code(st));
		}
}

int vnf_agent(struct vnf_engines *es, const struct vnf_serve_opts *o)
{
	struct timespec tmo = { 0, VNF_AGENT_SCAN_MS * 1000 * 1000 };
	struct agent *a = calloc(1, sizeof(*a));
	char err[512];
	sigset_t set;

	if (!a)
		return -ENOMEM;
	a->es = es;
	a->o = o;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	fprintf(stderr, "tochain-vnf: agent: %s watching %s\n", es->kind->name, o->dev_dir);
	for (;;) {
		int sig;

		reap(a);
		scan(a);
		sig = sigtimedwait(&set, NULL, &tmo);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		if (sig == SIGHUP) {
			if (vnf_engines_reload(es, err, sizeof(err)))
				fprintf(stderr, "tochain-vnf: %s: reload refused, the old rules stay: "
					"%s\n", es->kind->name, err);
			signal_all(a, SIGHUP);	/* each child reloads (and says so) itself */
		}
	}
	stop_children(a);
	free(a);
	return 0;
}
