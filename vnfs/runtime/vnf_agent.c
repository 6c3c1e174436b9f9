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
 * a valid VNF region gets a new child, at most once a second, less often
 * (back-off to a minute) while its children keep dying within 5 s.
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
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tochain/region.h>
#include <tochain/util.h>

#include "vnf_agent.h"

/* Exit statuses of a child. */
#define CHILD_OK	0	/* stopped, or the host killed the region */
#define CHILD_ERROR	1
#define CHILD_GONE	3	/* the device is gone */

struct agent_dev {
	char name[TCR_NAME_MAX];
	pid_t pid;			/* 0: not served now */
	uint64_t started_ms;
	uint64_t wait_ms;		/* before the next start: back-off */
};

struct agent {
	struct vnf_engines *es;
	const struct vnf_serve_opts *o;
	struct agent_dev dev[VNF_AGENT_MAX];
	bool said_full;			/* "more than ... devices" logged once */
};

static volatile int child_stop;

/*
 * The agent probes devices (maps their headers): one unplugged under the
 * probe raises SIGBUS (the driver zaps the mapping).  The agent must not
 * die of it: the probe runs with this jump point armed.  What the probe
 * had mapped or opened then stays (a fd and a mapping of a device that
 * is gone; only when an unplug hits that window of a few microseconds).
 */
static sigjmp_buf probe_jmp;
static volatile sig_atomic_t probing;

static void on_sigbus(int sig)
{
	if (probing)
		siglongjmp(probe_jmp, 1);
	signal(sig, SIG_DFL);	/* not ours: die of it as we would have */
	raise(sig);
}

bool vnf_agent_servable(const char *path, const char *name)
{
	struct tcr_region *r;
	bool ok;

	if (fnmatch("*.vnf-*", name, 0) || !tcr_name_valid(name))
		return false;
	if (sigsetjmp(probe_jmp, 1)) {
		probing = 0;
		return false;	/* SIGBUS: unplugged while probed */
	}
	probing = 1;
	r = tcr_region_attach(path, TCR_ATTACH_HOST | TCR_ATTACH_RDONLY);
	probing = 0;
	if (!r)
		return false;
	/* the handle holds a private copy of the validated header */
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
	signal(SIGBUS, SIG_DFL);	/* a child dies of an unplug: the agent reaps it */
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
	uint64_t now = tu_now_ms();
	pid_t agent = getpid(), pid;

	if (d && (d->pid || now - d->started_ms < d->wait_ms))
		return;
	if (snprintf(path, sizeof(path), "%s/%s", a->o->dev_dir, name) >= (int)sizeof(path))
		return;
	if (!vnf_agent_servable(path, name))
		return;
	if (!d)
		d = dev_new(a, name);
	if (!d) {
		if (!a->said_full)
			fprintf(stderr, "tochain-vnf: %s: more than %d devices, not served\n", path,
				VNF_AGENT_MAX);
		a->said_full = true;
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
	if (d->wait_ms < VNF_AGENT_RESTART_MS)
		d->wait_ms = VNF_AGENT_RESTART_MS;
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
				struct agent_dev *d = &a->dev[i];

				d->pid = 0;
				fprintf(stderr, "tochain-vnf: %s/%s gone (status %d)\n",
					a->o->dev_dir, d->name, status_code(st));
				/* A child that fails at once (bad options, ...) again and again: wait longer. */
				if (tu_now_ms() - d->started_ms >= VNF_AGENT_STABLE_MS)
					d->wait_ms = VNF_AGENT_RESTART_MS;
				else if (d->wait_ms < VNF_AGENT_BACKOFF_MS)
					d->wait_ms *= 2;
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
	uint64_t end = tu_now_ms() + VNF_AGENT_STOP_MS;
	struct timespec nap = { 0, 20 * 1000 * 1000 };

	signal_all(a, SIGTERM);
	while (alive(a) && tu_now_ms() < end) {
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

	struct sigaction sa = { .sa_handler = on_sigbus };

	if (!a)
		return -ENOMEM;
	a->es = es;
	a->o = o;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
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
