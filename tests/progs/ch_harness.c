// SPDX-License-Identifier: MIT
/* Test and benchmark harness; see ch_harness.h. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tochain/util.h>

#include "ch_harness.h"

extern char **environ;

uint64_t chh_now_ns(void)
{
	return tu_now_ns();
}

void chh_sleep_us(unsigned int us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000L };

	nanosleep(&ts, NULL);
}

struct tcr_region *chh_data_region(const char *path, uint32_t nbufs, uint32_t slot_size)
{
	struct tcr_params p = { .name = "chain-data", .kind = TCR_KIND_HOST, .nbufs = nbufs,
				.slot_size = slot_size, .nchannels = 1 };

	return tcr_region_create(path, &p);
}

uint32_t chh_fill(struct tcr_region *r, uint32_t buf, uint64_t seqno, const char *marker)
{
	uint8_t *s = tcr_region_slot(r, buf);
	uint32_t len = 64 + (uint32_t)(seqno * 37 % (r->geo.slot_size - 128));

	for (uint32_t i = 0; i < len; i++)
		s[i] = (uint8_t)('a' + (seqno * 7 + i) % 26);
	if (marker)
		memcpy(s + len / 2, marker, strlen(marker));
	return len;
}

void chh_pkt(struct ch_pkt *p, uint32_t region, uint32_t buf, uint32_t len, uint64_t cookie)
{
	memset(p, 0, sizeof(*p));
	p->cookie = cookie;
	p->conn_id = cookie % 7 + 1;
	p->seq = cookie * 1000;
	p->region = region;
	p->buf = buf;
	p->off = 0;
	p->len = len;
	p->flow = TCR_FLOW_NONE;
	p->family = 4;
	p->l4proto = 6;
	p->sport = (uint16_t)(40000 + cookie % 1000);
	p->dport = 80;
	p->saddr[0] = 10, p->saddr[3] = 2;
	p->daddr[0] = 10, p->daddr[3] = 1;
}

pid_t chh_spawn_vnf(const char *bin, const char *region, const char *stats, ...)
{
	char *argv[32];
	int n = 0;
	va_list ap;
	pid_t pid;
	int err;

	argv[n++] = (char *)bin;
	argv[n++] = (char *)"--kind";
	argv[n++] = (char *)"null";
	argv[n++] = (char *)"--region";
	argv[n++] = (char *)region;
	argv[n++] = (char *)"--exit-with-parent";
	if (stats) {
		argv[n++] = (char *)"--stats";
		argv[n++] = (char *)stats;
	}
	va_start(ap, stats);
	for (char *a; n < 31 && (a = va_arg(ap, char *));)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	err = posix_spawn(&pid, bin, NULL, NULL, argv, environ);
	if (err) {
		errno = err;
		return -1;
	}
	return pid;
}

int chh_stop(pid_t pid, int ms)
{
	int status;

	if (pid <= 0)
		return -1;
	kill(pid, SIGTERM);
	for (int i = 0; i < ms; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		chh_sleep_us(1000);
	}
	kill(pid, SIGKILL);
	return waitpid(pid, &status, 0) == pid ? status : -1;
}

int chh_read_stats(const char *path, struct vnf_null_stats *st, uint64_t *thr, uint32_t nthr)
{
	char key[64];
	uint64_t v;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	memset(st, 0, sizeof(*st));
	while (fscanf(f, "%63s %" SCNu64, key, &v) == 2) {
		unsigned int t;

		if (!strcmp(key, "packets"))
			st->packets = v;
		else if (!strcmp(key, "bytes"))
			st->bytes = v;
		else if (!strcmp(key, "csum"))
			st->csum = v;
		else if (!strcmp(key, "denied"))
			st->denied = v;
		else if (thr && sscanf(key, "thread%u", &t) == 1 && t < nthr)
			thr[t] = v;
	}
	fclose(f);
	return 0;
}

int chh_wait_file(const char *path, int ms)
{
	for (int i = 0; i < ms; i++) {
		if (access(path, F_OK) == 0)
			return 0;
		chh_sleep_us(1000);
	}
	return -ETIMEDOUT;
}

/* The high half of a bell's epoll data (ch_psched_loop_attach()). */
#define CHH_BELL_TAG	(1ull << 32)

int chh_loop_attach(struct chh_loop *l, struct ch_psched *s)
{
	int err;

	l->s = s;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0)
		return -errno;
	err = ch_psched_loop_attach(s, l->epfd, CHH_BELL_TAG);
	if (err) {
		close(l->epfd);
		l->epfd = -1;
	}
	return err;
}

void chh_loop_close(struct chh_loop *l)
{
	if (l->epfd >= 0)
		close(l->epfd);
	l->epfd = -1;
}

void chh_loop_sleep(struct chh_loop *l, uint64_t max_ns)
{
	struct epoll_event evs[16];
	uint64_t ns;
	int n;

	if (!ch_psched_sleep_prepare(l->s, &ns))
		return;		/* verdicts arrived meanwhile */
	if (ns > max_ns)
		ns = max_ns;
	n = tu_epoll_wait_ns(l->epfd, evs, 16, ns);	/* as the TOE's loop */
	ch_psched_sleep_done(l->s);
	for (int i = 0; i < n; i++)
		if ((evs[i].data.u64 & ~0xffffffffull) == CHH_BELL_TAG)
			ch_psched_bell_rang(l->s, (uint32_t)evs[i].data.u64);
}

void chh_loop_run_for(struct chh_loop *l, uint64_t ns)
{
	uint64_t end = chh_now_ns() + ns;

	for (;;) {
		unsigned int work = ch_psched_poll(l->s);
		uint64_t now = chh_now_ns();

		if (now >= end)
			break;
		if (!work)
			chh_loop_sleep(l, end - now);
	}
}

int chh_order_init(struct chh_order *o, uint64_t cap)
{
	memset(o, 0, sizeof(*o));
	o->cookie = calloc(cap, sizeof(*o->cookie));
	o->conn = calloc(cap, sizeof(*o->conn));
	o->back = calloc(cap, 1);
	if (!o->cookie || !o->conn || !o->back) {
		chh_order_free(o);
		return -ENOMEM;
	}
	o->cap = cap;
	return 0;
}

void chh_order_free(struct chh_order *o)
{
	free(o->cookie);
	free(o->conn);
	free(o->back);
	memset(o, 0, sizeof(*o));
}

bool chh_order_push(struct chh_order *o, uint64_t cookie, uint64_t conn)
{
	if (o->n >= o->cap)
		return false;
	o->cookie[o->n] = cookie;
	o->conn[o->n] = conn;
	o->back[o->n++] = 0;
	return true;
}

bool chh_order_back(struct chh_order *o, uint64_t cookie, uint64_t conn, uint64_t *want)
{
	uint64_t i, first = UINT64_MAX;

	/* Out at most the scheduler's flights: a short scan. */
	for (i = o->head; i < o->n; i++) {
		if (o->back[i])
			continue;
		if (first == UINT64_MAX && o->conn[i] == conn)
			first = i;
		if (o->cookie[i] == cookie)
			break;
	}
	*want = first == UINT64_MAX ? UINT64_MAX : o->cookie[first];
	if (i < o->n)
		o->back[i] = 1;
	while (o->head < o->n && o->back[o->head])
		o->head++;
	return i < o->n && i == first;
}
