// SPDX-License-Identifier: MIT
/*
 * The VNF runtime; the contract is in vnf.h, the protocol in vnf_proto.h.
 *
 * Threading: a struct vnf_thread belongs to one thread.  The handle is
 * the single consumer of its channel's RX ring and the single producer of
 * its TX ring (the scheduler is the other side of each).
 */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/counters.h>
#include <tochain/region.h>
#include <tochain/ring.h>
#include <tochain/spin.h>

#include "tochain/ch_flow.h"
#include "tochain/util.h"
#include "vnf.h"

#define VNF_SPIN_MAX_NS	100000u	/* ceiling of the adaptive poll (tochain/spin.h) */
#define VNF_NAP_MS	100	/* longest sleep: staleness is checked after */
#define VNF_GUEST_NAP_MIN_US	50	/* guest mode: first nap when idle ... */
#define VNF_GUEST_NAP_MAX_US	1000	/* ... doubling up to this ... */
#define VNF_GUEST_DEEP_MS	1000	/* ... and, idle this long, ... */
#define VNF_GUEST_NAP_DEEP_US	10000	/* ... up to this */
#define VNF_GUEST_RETRY_MS	100	/* guest mode: a grant's device missing: retry */

struct vnf_thread {
	char path[VNF_REGION_SLOT];
	uint32_t id;
	struct tcr_region *r;
	struct tcr_chan c;
	struct tcr_region *data[VNF_REGION_CHAINS];	/* granted data regions */
	void *flows[VNF_REGION_CHAINS];			/* their flow tables, read-only */
	uint64_t flows_size[VNF_REGION_CHAINS];
	uint32_t *ret;			/* indices to hand back on TX */
	uint32_t nret, maxret;
	/* guest mode (vnf_attach_guest): regions are devices under dev_dir */
	bool guest;
	char dev_dir[VNF_REGION_SLOT - TCR_NAME_MAX - 1];
	char gname[VNF_REGION_CHAINS][TCR_NAME_MAX];	/* granted, not mapped yet */
	uint64_t gretry_ms[VNF_REGION_CHAINS];
	uint32_t nap_us;		/* current back-off nap */
	uint64_t idle_ms;		/* first nap since the last work; 0: busy */
	struct tcr_spin spin;		/* poll before sleeping (vnf_recv) */
	uint64_t slept_ns;		/* start of the last futex sleep; 0: none since */
	int bell;			/* eventfd for a scheduler that sleeps in epoll; -1: none */
};

static void nap_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void drop_flows(struct vnf_thread *t, uint32_t region)
{
	if (t->flows[region])
		munmap(t->flows[region], t->flows_size[region]);
	t->flows[region] = NULL;
	t->flows_size[region] = 0;
}

static void drop_data(struct vnf_thread *t)
{
	for (uint32_t i = 0; i < VNF_REGION_CHAINS; i++) {
		tcr_region_destroy(t->data[i]);
		t->data[i] = NULL;
		t->gname[i][0] = '\0';
		drop_flows(t, i);
	}
}

/* Map a flow table read-only; its size comes from the file, checked on read. */
static void map_flows(struct vnf_thread *t, uint32_t region, const char *path)
{
	struct stat st;
	void *m;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	drop_flows(t, region);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(struct ch_flow_hdr)) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED) {
			t->flows[region] = m;
			t->flows_size[region] = (uint64_t)st.st_size;
		}
	}
	close(fd);
}

/*
 * Guest mode: has the device of @r gone?  Unplugged: the driver reports
 * POLLHUP on the file (and zaps the mapping: touching it would raise
 * SIGBUS, so this is asked before).  Revoked (the patched QEMU's
 * "revoked" property): the BAR reads all ones, so the header holds a
 * state no host writes, or READY without the magic.
 */
static bool device_gone(const struct tcr_region *r)
{
	const struct tcr_header *h;
	struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
	uint32_t st;

	if (r->fd >= 0 && poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)))
		return true;
	h = tcr_region_header(r);
	st = tc_load_acquire(&h->state);
	if (st != TCR_STATE_FORMATTING && st != TCR_STATE_READY && st != TCR_STATE_DEAD)
		return true;
	return st == TCR_STATE_READY && tc_load_relaxed(&h->magic) != TCR_MAGIC;
}

/*
 * (Re)attach region and channel, waiting up to @timeout_ms.  0 or -errno;
 * -ESHUTDOWN: the host killed the region; -ENODEV (guest mode): the
 * device is gone (unplugged, revoked, or no longer a region).
 */
static int attach(struct vnf_thread *t, int timeout_ms)
{
	uint64_t end = tu_now_ms() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms);
	int err = -ENOTCONN;

	for (;;) {
		if (t->r && t->guest && device_gone(t->r))
			return -ENODEV;
		if (t->r && tcr_region_stale(t->r)) {
			if (tc_load_acquire(&tcr_region_header(t->r)->state) == TCR_STATE_DEAD)
				return -ESHUTDOWN;
			tcr_region_destroy(t->r);
			t->r = NULL;
		}
		if (!t->r) {
			t->r = tcr_region_attach(t->path, TCR_ATTACH_HOST);
			err = t->r ? 0 : -errno;
			/* A device that is there but holds no region is gone for good. */
			if (t->guest && (err == -EBADMSG || err == -ENODEV || err == -ENXIO ||
					 err == -EPROTONOSUPPORT))
				return -ENODEV;
			if (t->r && t->id >= t->r->geo.nchannels) {
				tcr_region_destroy(t->r);
				t->r = NULL;
				return -EINVAL;
			}
		}
		if (t->r) {
			err = tcr_chan_attach(&t->c, t->r, t->id, 0);
			if (!err) {
				struct tcr_channel *ch = tcr_region_channel(t->r, t->id);

				tc_store_relaxed(&ch->owner_pid, (__u32)getpid());
				tc_store_relaxed(&ch->bell, (__u32)(t->bell + 1));
				if (!t->ret || t->maxret != t->r->geo.nbufs) {
					free(t->ret);
					t->maxret = t->r->geo.nbufs;
					t->ret = calloc(t->maxret, sizeof(*t->ret));
					if (!t->ret)
						return -ENOMEM;
				}
				t->nret = 0;
				return 0;
			}
		}
		if (err != -ENOTCONN && err != -EAGAIN && err != -ENOENT)
			return err;
		if (tu_now_ms() >= end)
			return err;
		nap_ms(5);
	}
}

struct vnf_thread *vnf_attach(const char *path, uint32_t thread, int timeout_ms)
{
	return vnf_attach_guest(path, thread, timeout_ms, NULL);
}

struct vnf_thread *vnf_attach_guest(const char *path, uint32_t thread, int timeout_ms,
				    const char *dev_dir)
{
	struct vnf_thread *t;
	int err;

	if (!path || strlen(path) >= VNF_REGION_SLOT || thread >= VNF_MAX_THREADS ||
	    (dev_dir && (!*dev_dir || strlen(dev_dir) >= sizeof(t->dev_dir)))) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	snprintf(t->path, sizeof(t->path), "%s", path);
	t->id = thread;
	tcr_spin_init(&t->spin, VNF_SPIN_MAX_NS);
	t->bell = -1;
	if (dev_dir) {
		t->guest = true;
		snprintf(t->dev_dir, sizeof(t->dev_dir), "%s", dev_dir);
	} else {
		/* Without it the scheduler naps while we hold its work (ch_psched_loop.c). */
		t->bell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	}
	err = attach(t, timeout_ms);
	if (err) {
		vnf_detach(t);
		errno = -err;
		return NULL;
	}
	return t;
}

void vnf_detach(struct vnf_thread *t)
{
	if (!t)
		return;
	drop_data(t);
	tcr_region_destroy(t->r);
	if (t->bell >= 0)
		close(t->bell);
	free(t->ret);
	free(t);
}

int vnf_region_threads(const char *path)
{
	struct tcr_region *r = tcr_region_attach(path, TCR_ATTACH_HOST | TCR_ATTACH_RDONLY);
	int n;

	if (!r)
		return -errno;
	n = (int)r->geo.nchannels;
	tcr_region_destroy(r);
	return n;
}

/*
 * Wake the scheduler that sleeps on our TX ring, the way it asked: our
 * bell when it sleeps in the TOE's epoll set, else the futex.
 */
static void wake_scheduler(struct vnf_thread *t, struct tcr_ring *tx, uint32_t how)
{
	__u32 *seq = tcr_ring_kick_consumer(tx);
	uint64_t one = 1;

	if (how == TCR_WAKE_BELL && t->bell >= 0 &&
	    write(t->bell, &one, sizeof(one)) == (ssize_t)sizeof(one))
		return;
	syscall(SYS_futex, seq, FUTEX_WAKE, 1, NULL, NULL, 0);
}

int vnf_flush(struct vnf_thread *t)
{
	struct tcr_ring *tx = &t->c.ring[TCR_CH_TX];
	int k;

	if (!t->nret)
		return 0;
	k = tcr_ring_enqueue_burst(tx, t->ret, t->nret);
	if (k < 0)
		return k;
	/*
	 * One wake-up per batch of verdicts, only when the scheduler said it
	 * sleeps (ring.c F2).  Not from a VM: the futex would not reach the
	 * host, and the scheduler naps for VNFs that do not ring.
	 */
	if (k > 0 && !t->guest) {
		uint32_t how = tcr_ring_prod_kick(tx);

		if (how)
			wake_scheduler(t, tx, how);
	}
	memmove(t->ret, t->ret + k, (t->nret - (uint32_t)k) * sizeof(*t->ret));
	t->nret -= (uint32_t)k;
	return t->nret ? -EAGAIN : 0;
}

static void give_back(struct vnf_thread *t, uint32_t idx)
{
	if (t->nret == t->maxret)
		vnf_flush(t);
	if (t->nret < t->maxret)
		t->ret[t->nret++] = idx;
}

int vnf_post(struct vnf_thread *t, const struct vnf_pkt *p, uint32_t verdict, uint32_t rule)
{
	struct tcr_desc *sd;

	if (p->epoch != t->c.epoch)
		return -ESTALE;		/* the channel was reopened: drop it */
	sd = tcr_region_desc(t->r, p->idx);
	if (!sd)
		return -EINVAL;
	/* Only the verdict fields; the TX enqueue's release publishes them. */
	tc_store_relaxed(&sd->arg, verdict);
	tc_store_relaxed(&sd->deny_rule, rule);
	give_back(t, p->idx);
	return 0;
}

/*
 * Post @verdict with @len bytes of @data in @p's own slot (their length
 * in allow_mask) and @aux in deny_vnf.  0 or -errno.
 */
static int post_slot(struct vnf_thread *t, const struct vnf_pkt *p, uint32_t verdict,
		     uint32_t rule, uint32_t aux, const void *data, uint32_t len)
{
	struct tcr_desc *sd;
	uint8_t *slot;

	if (p->epoch != t->c.epoch)
		return -ESTALE;
	sd = tcr_region_desc(t->r, p->idx);
	slot = tcr_region_slot(t->r, p->idx);
	if (!sd || !slot)
		return -EINVAL;
	/* The bytes, then the verdict fields; the TX enqueue's release publishes all. */
	if (len)
		memcpy(slot, data, len);
	tc_store_relaxed(&sd->allow_mask, len);
	tc_store_relaxed(&sd->deny_vnf, aux);
	tc_store_relaxed(&sd->arg, verdict);
	tc_store_relaxed(&sd->deny_rule, rule);
	give_back(t, p->idx);
	return 0;
}

int vnf_post_answer(struct vnf_thread *t, const struct vnf_pkt *p, uint32_t rule,
		    uint32_t incident, const void *answer, uint32_t len)
{
	if (!len || len > VNF_ANSWER_MAX || !incident)
		return vnf_post(t, p, VNF_VERDICT_DENY, rule);
	return post_slot(t, p, VNF_VERDICT_ANSWER, rule, incident, answer, len);
}

int vnf_post_alert(struct vnf_thread *t, const struct vnf_pkt *p, uint32_t rule,
		   const char *msg, uint32_t len)
{
	if (!msg)
		len = 0;
	else if (len > VNF_ALERT_MSG_MAX)
		len = VNF_ALERT_MSG_MAX;
	return post_slot(t, p, VNF_VERDICT_ALERT, rule, 0, msg, len);
}

void vnf_report_early(struct vnf_thread *t, uint32_t chain, uint32_t flags)
{
	struct tcr_chain_counters *c = vnf_chain_counters(t, chain);

	if (c)
		tcr_counters_raise_early(c, flags);
}

struct tcr_chain_counters *vnf_chain_counters(struct vnf_thread *t, uint32_t chain)
{
	return tcr_region_chain(t->r, chain);
}

bool vnf_rx_empty(struct vnf_thread *t)
{
	return tcr_ring_count(&t->c.ring[TCR_CH_RX]) == 0;
}

/*
 * Guest mode: map data region @region from its device, <dev_dir>/<name>,
 * read-only.  On failure (the driver has not named the device yet, or it
 * is not there) the name stays pending and take() tries again.
 */
static void map_guest(struct vnf_thread *t, uint32_t region, bool quiet)
{
	char dev[VNF_REGION_SLOT];

	snprintf(dev, sizeof(dev), "%s/%s", t->dev_dir, t->gname[region]);
	t->data[region] = tcr_region_attach(dev, TCR_ATTACH_HOST | TCR_ATTACH_RDONLY);
	if (t->data[region]) {
		t->gname[region][0] = '\0';
		return;
	}
	if (!quiet)
		fprintf(stderr, "vnf: cannot map granted region %u (%s): %s; retrying\n", region,
			dev, strerror(errno));
	t->gretry_ms[region] = tu_now_ms() + VNF_GUEST_RETRY_MS;
}

/*
 * A control message.  Its slot holds the data region's path (d->len
 * bytes) and, from schedulers that know it, a NUL, the region's header
 * name and a NUL (vnf_proto.h).  The scheduler is trusted, but the name
 * is still checked (tcr_name_valid: no '/') before it becomes a path.
 */
static void ctrl(struct vnf_thread *t, uint32_t idx, const struct tcr_desc *d)
{
	uint32_t region = (uint32_t)d->aux;
	char path[VNF_REGION_SLOT], name[TCR_NAME_MAX] = "";
	const char *slot = (const char *)tcr_region_slot(t->r, idx);

	if (region >= VNF_REGION_CHAINS || d->len >= sizeof(path))
		return;
	memcpy(path, slot, d->len);
	path[d->len] = '\0';
	if (d->len + 1 < VNF_REGION_SLOT && slot[d->len] == '\0') {
		size_t n = strnlen(slot + d->len + 1, VNF_REGION_SLOT - d->len - 1);

		if (n < sizeof(name) && d->len + 1 + n < VNF_REGION_SLOT) {
			memcpy(name, slot + d->len + 1, n);
			name[n] = '\0';
		}
		if (!tcr_name_valid(name))
			name[0] = '\0';
	}
	if (d->flags == VNF_CTRL_GRANT_FLOWS) {
		/* Not in a guest: the flow table is a host file, no device. */
		if (d->len && !t->guest)
			map_flows(t, region, path);
		return;
	}
	tcr_region_destroy(t->data[region]);
	t->data[region] = NULL;
	t->gname[region][0] = '\0';
	if (d->flags != VNF_CTRL_GRANT || d->len == 0) {
		drop_flows(t, region);		/* a revoke takes the flows too */
		return;
	}
	if (t->guest) {
		if (!name[0]) {
			fprintf(stderr, "vnf: grant of region %u (%s) has no header name: "
				"no device to map in a guest\n", region, path);
			return;
		}
		memcpy(t->gname[region], name, sizeof(name));
		map_guest(t, region, false);
		return;
	}
	t->data[region] = tcr_region_attach(path, TCR_ATTACH_HOST | TCR_ATTACH_RDONLY);
	if (!t->data[region])
		fprintf(stderr, "vnf: cannot map granted region %u (%s): %s\n", region, path,
			strerror(errno));
}

/* Turn the dequeued indices into packets; returns how many data packets. */
static unsigned int take(struct vnf_thread *t, const uint32_t *idx, unsigned int n,
			 struct vnf_pkt *pkts)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct vnf_pkt *p = &pkts[k];
		const struct tcr_region *dr;
		uint32_t region, buf;

		memcpy(&p->d, tcr_region_desc(t->r, idx[i]), sizeof(p->d));
		if (p->d.op == TCR_OP_CTRL) {
			ctrl(t, idx[i], &p->d);
			give_back(t, idx[i]);
			continue;
		}
		p->idx = idx[i];
		p->epoch = t->c.epoch;
		region = VNF_AUX_REGION(p->d.aux);
		buf = VNF_AUX_BUF(p->d.aux);
		if (region < VNF_REGION_CHAINS && !t->data[region] && t->gname[region][0] &&
		    tu_now_ms() >= t->gretry_ms[region])
			map_guest(t, region, true);
		dr = region < VNF_REGION_CHAINS ? t->data[region] : NULL;
		if (!dr || buf >= dr->geo.nbufs ||
		    (uint64_t)p->d.off + p->d.len > dr->geo.slot_size) {
			/* Not granted or out of bounds: refuse, never read. */
			vnf_post(t, p, VNF_VERDICT_DENY, VNF_RULE_UNMAPPED);
			continue;
		}
		p->data = tcr_region_slot(dr, buf) + p->d.off;
		p->len = p->d.len;
		k++;
	}
	return k;
}

static void nap_us(unsigned int us)
{
	struct timespec ts = { 0, (long)us * 1000L };

	nanosleep(&ts, NULL);
}

static void futex_wait(__u32 *word, uint32_t val, unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	/* Shared mapping: not FUTEX_PRIVATE. */
	syscall(SYS_futex, word, FUTEX_WAIT, val, &ts, NULL, 0);
}

int vnf_recv(struct vnf_thread *t, struct vnf_pkt *pkts, unsigned int max, int timeout_ms)
{
	uint64_t start = tu_now_ms();
	uint32_t idx[64];
	unsigned int spins = 0;
	uint64_t idle_since = 0;
	uint32_t budget = 0;
	int n, err;

	if (max > 64)
		max = 64;
	for (;;) {
		struct tcr_ring *rx;

		if (tcr_region_stale(t->r) || tcr_chan_stale(&t->c)) {
			drop_data(t);
			err = attach(t, 0);
			if (err == -ESHUTDOWN || err == -ENODEV)
				return err;
			if (err) {
				nap_ms(5);
				goto check_time;
			}
		}
		rx = &t->c.ring[TCR_CH_RX];
		vnf_flush(t);
		n = tcr_ring_dequeue_burst(rx, idx, max);
		if (n < 0) {
			nap_ms(1);	/* corrupt: the scheduler will reopen the channel */
			goto check_time;
		}
		if (n > 0) {
			unsigned int k = take(t, idx, (unsigned int)n, pkts);

			if (t->slept_ns)
				tcr_spin_woke(&t->spin, tu_now_ns() - t->slept_ns);
			else if (spins)
				tcr_spin_spun(&t->spin, true);
			t->slept_ns = 0;
			t->nap_us = 0;
			t->idle_ms = 0;
			if (k)
				return (int)k;
			spins = 0;
			continue;
		}
		/*
		 * Poll within the adaptive budget (nothing when the host is
		 * crowded or spins kept finding nothing); not again in guest
		 * mode once it naps (idle for a while).
		 */
		if (!spins++) {
			idle_since = tu_now_ns();
			budget = t->guest && t->idle_ms ? 0 : tcr_spin_budget(&t->spin);
			t->slept_ns = 0;
		}
		if (tu_now_ns() - idle_since < budget) {
			tc_cpu_relax();
			continue;
		}
		if (budget) {
			tcr_spin_spun(&t->spin, false);
			budget = 0;
		}
		if (t->guest) {
			/*
			 * The host's futex wake-up does not reach into the VM:
			 * never announce a sleep (the scheduler would skip the
			 * bump it cannot deliver anyway).  Poll, backing off
			 * while idle; work resets the nap, and the spin phase
			 * stays over until then.  Each wake-up costs the VM
			 * (under TCG about 1 ms of host CPU): after a second
			 * without work the naps grow further.
			 */
			uint64_t now = tu_now_ms();
			uint32_t cap = VNF_GUEST_NAP_MAX_US, us;
			int64_t left = timeout_ms < 0 ? VNF_NAP_MS :
				       (int64_t)timeout_ms - (int64_t)(now - start);

			if (device_gone(t->r))
				return -ENODEV;
			if (!t->idle_ms)
				t->idle_ms = now;
			else if (now - t->idle_ms >= VNF_GUEST_DEEP_MS)
				cap = VNF_GUEST_NAP_DEEP_US;
			t->nap_us = t->nap_us ? t->nap_us * 2 : VNF_GUEST_NAP_MIN_US;
			if (t->nap_us > cap)
				t->nap_us = cap;
			us = left * 1000 < t->nap_us ? (uint32_t)(left > 0 ? left * 1000 : 0) :
						       t->nap_us;
			if (us)
				nap_us(us);
		} else {
			/* Announce the sleep, re-check, then sleep on cons_seq (F1/F2 in ring.c). */
			uint32_t seq = tcr_ring_cons_wait_prepare(rx);
			int64_t left = timeout_ms < 0 ? VNF_NAP_MS :
				       (int64_t)timeout_ms - (int64_t)(tu_now_ms() - start);

			t->slept_ns = tu_now_ns();
			if (left > 0 && tcr_ring_count(rx) == 0)
				futex_wait(&rx->ctl->cons_seq, seq,
					   left > VNF_NAP_MS ? VNF_NAP_MS : (unsigned int)left);
			tcr_ring_cons_wait_done(rx);
			spins = 0;
		}
check_time:
		if (timeout_ms >= 0 && tu_now_ms() - start >= (uint64_t)timeout_ms)
			return 0;
	}
}

int vnf_flow(struct vnf_thread *t, const struct vnf_pkt *p, struct vnf_flow *out)
{
	uint32_t region = VNF_AUX_REGION(p->d.aux);
	struct ch_flow_entry e;
	int err;

	if (p->d.flow == TCR_FLOW_NONE || region >= VNF_REGION_CHAINS || !t->flows[region])
		return -ENOENT;
	err = ch_flow_read(t->flows[region], t->flows_size[region], p->d.flow, &e);
	if (err)
		return err == -ERANGE ? -ENOENT : err;
	memset(out, 0, sizeof(*out));
	out->region = region;
	out->idx = p->d.flow;
	out->gen = e.gen;
	out->state = e.state;
	out->family = e.key.family;
	out->l4proto = e.key.l4proto;
	out->sport = e.key.sport;
	out->dport = e.key.dport;
	memcpy(out->saddr, e.key.saddr, 16);
	memcpy(out->daddr, e.key.daddr, 16);
	return 0;
}

struct vnf_slot_ent {
	uint32_t gen;
	uint64_t val;
};

struct vnf_slots {
	uint32_t nflows;
	pthread_mutex_t lock;				/* allocation only */
	struct vnf_slot_ent *region[VNF_REGION_CHAINS];	/* allocated on first use */
};

struct vnf_slots *vnf_slots_create(uint32_t nflows)
{
	struct vnf_slots *s;

	if (nflows == 0 || nflows > CH_FLOW_MAX) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->nflows = nflows;
	pthread_mutex_init(&s->lock, NULL);
	return s;
}

void vnf_slots_destroy(struct vnf_slots *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < VNF_REGION_CHAINS; i++)
		free(s->region[i]);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

uint64_t *vnf_slot(struct vnf_slots *s, const struct vnf_flow *f)
{
	struct vnf_slot_ent *tab, *e;

	if (f->region >= VNF_REGION_CHAINS || f->idx >= s->nflows)
		return NULL;
	/* Acquire pairs with the release below: a published table is zeroed. */
	tab = __atomic_load_n(&s->region[f->region], __ATOMIC_ACQUIRE);
	if (!tab) {
		pthread_mutex_lock(&s->lock);
		tab = s->region[f->region];
		if (!tab) {
			tab = calloc(s->nflows, sizeof(*tab));
			__atomic_store_n(&s->region[f->region], tab, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&s->lock);
		if (!tab)
			return NULL;
	}
	e = &tab[f->idx];
	if (tc_load_relaxed(&e->gen) != f->gen) {
		/* The entry holds another flow than last time: forget the old state. */
		tc_store_relaxed(&e->val, 0);
		tc_store_relaxed(&e->gen, f->gen);
	}
	return &e->val;
}
