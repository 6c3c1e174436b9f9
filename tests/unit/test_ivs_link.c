/* SPDX-License-Identifier: MIT */
/*
 * ivs_link (tochain-vmlink) against a fake TOE (a thread that answers the
 * hello/welcome handshake on <region>.sock with eventfds of its own) and
 * a fake guest (this test, writing the claim table as the guest driver
 * would, and in doorbell mode a fake QEMU client of the ivshmem server):
 * the published table, wake-ups relayed both ways in poll and doorbell
 * mode, a released slot re-offered with a new channel, a guest
 * scribbling on the table, an unknown peer never rung, the TOE going away.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <tochain/region.h>
#include "tochain/srpc.h"
#include "ivs_link.h"
#include "ivs_proto.h"
#include "tc_check.h"

#define MAXC 16

/* ---- the fake TOE ---------------------------------------------------------- */

struct fake_toe {
	int lsock;
	pthread_t thr;
	pthread_mutex_t mu;
	int nconn;			/* handshakes answered */
	int conn[MAXC], efd_guest[MAXC], efd_toe[MAXC];
	bool closed[MAXC];		/* the link hung up */
	volatile bool stop;
};

static char dir[256], region[300];
static struct fake_toe toe;

static void toe_answer(struct fake_toe *t, int c)
{
	struct srpc_hello h;
	struct srpc_welcome w = { SRPC_WELCOME_MAGIC, 0, 0, 1 };
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &h, sizeof(h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int efd = -1, mine, i;

	if (recvmsg(c, &mh, 0) != (ssize_t)sizeof(h) || h.magic != SRPC_HELLO_MAGIC)
		goto out;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		goto out;
	memcpy(&efd, CMSG_DATA(cm), sizeof(int));
	mine = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_lock(&t->mu);
	i = t->nconn;
	if (i >= MAXC) {
		pthread_mutex_unlock(&t->mu);
		goto out;
	}
	t->conn[i] = c;
	t->efd_guest[i] = efd;
	t->efd_toe[i] = mine;
	t->closed[i] = false;
	t->nconn++;
	pthread_mutex_unlock(&t->mu);
	w.channel = 100 + (uint32_t)i;	/* channel numbers the link must copy */
	iov.iov_base = &w;
	iov.iov_len = sizeof(w);
	memset(cbuf, 0, sizeof(cbuf));
	mh.msg_controllen = sizeof(cbuf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &mine, sizeof(int));
	sendmsg(c, &mh, MSG_NOSIGNAL);
	return;
out:
	close(c);
}

static void *toe_main(void *arg)
{
	struct fake_toe *t = arg;

	while (!t->stop) {
		struct pollfd p[MAXC + 1];
		int n = 0;

		p[n].fd = t->lsock;
		p[n++].events = POLLIN;
		pthread_mutex_lock(&t->mu);
		for (int i = 0; i < t->nconn; i++) {
			p[n].fd = t->closed[i] ? -1 : t->conn[i];
			p[n++].events = POLLIN;
		}
		pthread_mutex_unlock(&t->mu);
		if (poll(p, (nfds_t)n, 20) <= 0)
			continue;
		if (p[0].revents) {
			int c = accept4(t->lsock, NULL, NULL, SOCK_CLOEXEC);

			if (c >= 0)
				toe_answer(t, c);
		}
		pthread_mutex_lock(&t->mu);
		for (int i = 1; i < n; i++)
			if (p[i].revents && p[i].fd >= 0)
				t->closed[i - 1] = true;
		pthread_mutex_unlock(&t->mu);
	}
	return NULL;
}

static struct tcr_region *reg;

static void setup(void)
{
	struct tcr_params p = { .name = "lt", .kind = TCR_KIND_GUEST, .nbufs = 64,
				.slot_size = 2048, .nchannels = 8 };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	ck_assert_int_eq(tc_tmpdir_make(dir, sizeof(dir)), 0);
	snprintf(region, sizeof(region), "%s/region", dir);
	reg = tcr_region_create(region, &p);
	ck_assert_ptr_nonnull(reg);
	memset(&toe, 0, sizeof(toe));
	pthread_mutex_init(&toe.mu, NULL);
	toe.lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_uint_lt(strlen(region) + 5, sizeof(sun.sun_path));
	memcpy(sun.sun_path, region, strlen(region));
	memcpy(sun.sun_path + strlen(region), ".sock", 5);
	ck_assert_int_eq(bind(toe.lsock, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(toe.lsock, 16), 0);
	ck_assert_int_eq(pthread_create(&toe.thr, NULL, toe_main, &toe), 0);
}

static void teardown(void)
{
	toe.stop = true;
	pthread_join(toe.thr, NULL);
	close(toe.lsock);
	tcr_region_destroy(reg);
	tc_tmpdir_remove(dir);
}

/* ---- helpers ------------------------------------------------------------------ */

static struct tcr_link *table(void)
{
	return &tcr_region_header(reg)->link;
}

static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

static uint64_t drain(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return 0;
	return v;
}

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Wait up to 2 s for slot @i's state to become @st. */
static bool wait_state(unsigned int i, uint32_t st)
{
	for (int k = 0; k < 400; k++) {
		if (__atomic_load_n(&table()->slot[i].state, __ATOMIC_ACQUIRE) == st)
			return true;
		nap_ms(5);
	}
	return false;
}

/* The fake TOE's connection that carries channel @ch. */
static int conn_of(uint32_t ch)
{
	return (int)ch - 100;
}

struct runner {
	struct ivs_link *l;
	pthread_t thr;
	int ret;
};

static void *run_main(void *arg)
{
	struct runner *r = arg;

	r->ret = ivs_link_run(r->l);
	return NULL;
}

static void run_start(struct runner *r, struct ivs_link *l)
{
	r->l = l;
	r->ret = 1;
	ck_assert_int_eq(pthread_create(&r->thr, NULL, run_main, r), 0);
}

static int run_stop(struct runner *r)
{
	pthread_kill(r->thr, SIGTERM);	/* blocked there, taken by its signalfd */
	pthread_join(r->thr, NULL);
	return r->ret;
}

/* ---- tests ------------------------------------------------------------------- */

START_TEST(refuses)
{
	struct ivs_link_config c = { 0 };
	struct tcr_header *h = tcr_region_header(reg);
	char missing[320];

	errno = 0;
	ck_assert_ptr_null(ivs_link_create(&c));
	ck_assert_int_eq(errno, EINVAL);
	snprintf(missing, sizeof(missing), "%s/nope", dir);
	c.region_path = missing;
	ck_assert_ptr_null(ivs_link_create(&c));
	ck_assert_int_eq(errno, ENOENT);
	c.region_path = region;
	c.nslots = TCR_LINK_SLOTS + 1;
	ck_assert_ptr_null(ivs_link_create(&c));
	ck_assert_int_eq(errno, EINVAL);
	c.nslots = 2;
	__atomic_store_n(&h->state, (uint32_t)TCR_STATE_FORMATTING, __ATOMIC_RELEASE);
	ck_assert_ptr_null(ivs_link_create(&c));
	ck_assert_int_eq(errno, EINVAL);
	__atomic_store_n(&h->state, (uint32_t)TCR_STATE_READY, __ATOMIC_RELEASE);
}
END_TEST

START_TEST(poll_mode)
{
	struct ivs_link_config c = { .region_path = region, .nslots = 3, .poll_us = 100 };
	struct tcr_link *t = table();
	struct ivs_link_stats st;
	struct runner r;
	struct ivs_link *l;
	struct stat sb;
	uint32_t ch1, ch1b;
	int k;

	l = ivs_link_create(&c);
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_eq(__atomic_load_n(&t->magic, __ATOMIC_ACQUIRE), TCR_LINK_MAGIC);
	ck_assert_uint_eq(t->nslots, 3);
	ck_assert_uint_eq(t->mode, TCR_LINK_POLL);
	ck_assert_uint_eq(t->poll_us, 100);
	ck_assert_int_eq(toe.nconn, 3);
	for (unsigned int i = 0; i < 3; i++) {
		ck_assert_uint_eq(t->slot[i].state, TCR_LINK_OFFERED);
		ck_assert_uint_eq(t->slot[i].vector, i);
		ck_assert_uint_eq(t->slot[i].epoch, 1);
		ck_assert_uint_ge(t->slot[i].channel, 100);
	}
	ck_assert_uint_eq(t->slot[3].state, TCR_LINK_FREE);
	/* grown to a power of two for a PCI BAR */
	ck_assert_int_eq(stat(region, &sb), 0);
	ck_assert_int_eq(sb.st_size & (sb.st_size - 1), 0);
	ck_assert_int_ge(sb.st_size, (off_t)reg->geo.region_size);
	run_start(&r, l);

	/* the guest claims slot 1 and kicks: the TOE's eventfd of that channel */
	ch1 = t->slot[1].channel;
	__atomic_store_n(&t->slot[1].state, (uint32_t)TCR_LINK_CLAIMED, __ATOMIC_RELEASE);
	__atomic_fetch_add(&t->slot[1].kick, 1, __ATOMIC_RELEASE);
	ck_assert(readable(toe.efd_toe[conn_of(ch1)], 2000));
	drain(toe.efd_toe[conn_of(ch1)]);
	/* no new kick: no wake-up; an unclaimed slot's kick is ignored */
	__atomic_fetch_add(&t->slot[2].kick, 1, __ATOMIC_RELEASE);
	ck_assert(!readable(toe.efd_toe[conn_of(ch1)], 50));
	ck_assert(!readable(toe.efd_toe[conn_of(t->slot[2].channel)], 50));
	/* the TOE writing "the guest" in poll mode is only drained */
	ck_assert_int_eq(write(toe.efd_guest[conn_of(ch1)], &(uint64_t){ 1 }, 8), 8);

	/* released: the channel's connection closes, a new channel is offered */
	__atomic_store_n(&t->slot[1].state, (uint32_t)TCR_LINK_RELEASED, __ATOMIC_RELEASE);
	ck_assert(wait_state(1, TCR_LINK_OFFERED));
	ch1b = t->slot[1].channel;
	ck_assert_uint_ne(ch1b, ch1);
	for (k = 0; k < 200 && !toe.closed[conn_of(ch1)]; k++)
		nap_ms(5);
	ck_assert(toe.closed[conn_of(ch1)]);
	ck_assert(!toe.closed[conn_of(ch1b)]);

	/* scribbles: a state out of range, a huge kick, a bad table header */
	__atomic_store_n(&t->slot[0].state, 77u, __ATOMIC_RELEASE);
	__atomic_store_n(&t->slot[0].kick, 0xffffffffu, __ATOMIC_RELEASE);
	t->nslots = 1000;
	nap_ms(20);
	__atomic_store_n(&t->slot[2].state, (uint32_t)TCR_LINK_CLAIMED, __ATOMIC_RELEASE);
	__atomic_fetch_add(&t->slot[2].kick, 1, __ATOMIC_RELEASE);
	ck_assert(readable(toe.efd_toe[conn_of(t->slot[2].channel)], 2000));

	ck_assert_int_eq(run_stop(&r), 0);
	ivs_link_get_stats(l, &st);
	ck_assert_uint_eq(st.recycles, 1);
	ck_assert_uint_eq(st.offers, 4);
	ck_assert_uint_ge(st.to_toe, 2);
	ivs_link_destroy(l);
	ck_assert_uint_eq(__atomic_load_n(&t->magic, __ATOMIC_ACQUIRE), 0);
}
END_TEST

/* A fake QEMU: join the link's ivshmem server, collect the eventfds. */
struct fake_qemu {
	int sock, id, shm;
	int host_efd[4], own_efd[4];
};

static void qemu_join(struct fake_qemu *q, const char *path, int nvec)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int nhost = 0, nown = 0, fd;
	int64_t v;

	ck_assert_uint_lt(strlen(path), sizeof(sun.sun_path));
	memcpy(sun.sun_path, path, strlen(path));
	q->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(connect(q->sock, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(ivs_proto_recv(q->sock, &v, &fd), 0);	/* version */
	ck_assert_int_eq(v, IVS_PROTO_VERSION);
	ck_assert_int_eq(ivs_proto_recv(q->sock, &v, &fd), 0);	/* own id */
	q->id = (int)v;
	ck_assert_int_eq(ivs_proto_recv(q->sock, &v, &q->shm), 0);	/* memory */
	ck_assert_int_eq(v, IVS_PROTO_SHM);
	while (nown < nvec) {
		ck_assert_int_eq(ivs_proto_recv(q->sock, &v, &fd), 0);
		ck_assert_int_ge(fd, 0);
		if (v == q->id)
			q->own_efd[nown++] = fd;
		else if (v == 0 && nhost < nvec)
			q->host_efd[nhost++] = fd;
		else
			close(fd);
	}
	ck_assert_int_eq(nhost, nvec);
}

START_TEST(doorbell_mode)
{
	char sock[320];
	struct ivs_link_config c = { .region_path = region, .doorbell_socket = sock,
				     .nslots = 2 };
	struct tcr_link *t = table();
	struct fake_qemu q;
	struct runner r;
	struct ivs_link *l;
	struct stat a, b;
	uint32_t ch0;
	int k;

	snprintf(sock, sizeof(sock), "%s/ivs.sock", dir);
	l = ivs_link_create(&c);
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_eq(t->mode, TCR_LINK_DOORBELL);
	ck_assert_uint_eq(t->host_peer, 0);
	run_start(&r, l);
	qemu_join(&q, sock, 2);
	ck_assert_int_gt(q.id, 0);
	/* QEMU maps the region file itself */
	ck_assert_int_eq(fstat(q.shm, &a), 0);
	ck_assert_int_eq(stat(region, &b), 0);
	ck_assert(a.st_ino == b.st_ino && a.st_dev == b.st_dev);

	/* claimed by our peer: the guest rings vector 0 -> the TOE's eventfd */
	ch0 = t->slot[0].channel;
	t->slot[0].guest_peer = (uint32_t)q.id;
	__atomic_store_n(&t->slot[0].state, (uint32_t)TCR_LINK_CLAIMED, __ATOMIC_RELEASE);
	ck_assert_int_eq(write(q.host_efd[0], &(uint64_t){ 1 }, 8), 8);
	ck_assert(readable(toe.efd_toe[conn_of(ch0)], 2000));
	drain(toe.efd_toe[conn_of(ch0)]);
	/* the TOE wakes the guest -> the link rings our vector 0, not vector 1 */
	ck_assert_int_eq(write(toe.efd_guest[conn_of(ch0)], &(uint64_t){ 1 }, 8), 8);
	ck_assert(readable(q.own_efd[0], 2000));
	ck_assert_uint_ge(drain(q.own_efd[0]), 1);
	ck_assert(!readable(q.own_efd[1], 20));
	/* a peer id nobody has is never rung */
	t->slot[0].guest_peer = 999;
	ck_assert_int_eq(write(toe.efd_guest[conn_of(ch0)], &(uint64_t){ 1 }, 8), 8);
	ck_assert(!readable(q.own_efd[0], 100));
	/* ringing an unclaimed slot's vector does not wake its TOE channel */
	ck_assert_int_eq(write(q.host_efd[1], &(uint64_t){ 1 }, 8), 8);
	ck_assert(!readable(toe.efd_toe[conn_of(t->slot[1].channel)], 100));

	/* released and rung (as the driver does): re-offered at once */
	__atomic_store_n(&t->slot[0].state, (uint32_t)TCR_LINK_RELEASED, __ATOMIC_RELEASE);
	ck_assert_int_eq(write(q.host_efd[0], &(uint64_t){ 1 }, 8), 8);
	ck_assert(wait_state(0, TCR_LINK_OFFERED));
	ck_assert_uint_ne(t->slot[0].channel, ch0);

	/* a claimed slot of a guest that leaves the server is recycled */
	ch0 = t->slot[1].channel;
	t->slot[1].guest_peer = (uint32_t)q.id;
	__atomic_store_n(&t->slot[1].state, (uint32_t)TCR_LINK_CLAIMED, __ATOMIC_RELEASE);
	close(q.sock);
	ck_assert(wait_state(1, TCR_LINK_OFFERED));
	ck_assert_uint_ne(t->slot[1].channel, ch0);

	/* the TOE drops one channel (a misbehaving process): a new one is offered */
	ch0 = t->slot[1].channel;
	shutdown(toe.conn[conn_of(ch0)], SHUT_RDWR);
	for (k = 0; k < 400 && t->slot[1].channel == ch0; k++)
		nap_ms(5);
	ck_assert(wait_state(1, TCR_LINK_OFFERED));
	ck_assert_uint_ne(t->slot[1].channel, ch0);

	/* the TOE is gone (nobody listens): the next hang-up stops the link */
	{
		char sp[320];

		snprintf(sp, sizeof(sp), "%s.sock", region);
		unlink(sp);
	}
	shutdown(toe.conn[conn_of(t->slot[1].channel)], SHUT_RDWR);
	pthread_join(r.thr, NULL);
	ck_assert_int_eq(r.ret, -EPIPE);
	ivs_link_destroy(l);
	for (int i = 0; i < 2; i++) {
		close(q.host_efd[i]);
		close(q.own_efd[i]);
	}
	close(q.shm);
}
END_TEST

/* The fake TOE dies: its thread, listening socket and connections go. */
static void toe_kill(void)
{
	char sp[320];

	toe.stop = true;
	pthread_join(toe.thr, NULL);
	close(toe.lsock);
	snprintf(sp, sizeof(sp), "%s.sock", region);
	unlink(sp);
	for (int i = 0; i < toe.nconn; i++)
		if (!toe.closed[i])
			shutdown(toe.conn[i], SHUT_RDWR);
}

/* A new fake TOE on the same path (its channels numbered on). */
static void toe_restart(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	ck_assert_uint_lt(strlen(region) + 5, sizeof(sun.sun_path));
	memcpy(sun.sun_path, region, strlen(region));
	memcpy(sun.sun_path + strlen(region), ".sock", 5);
	toe.stop = false;
	toe.lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(bind(toe.lsock, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(toe.lsock, 16), 0);
	ck_assert_int_eq(pthread_create(&toe.thr, NULL, toe_main, &toe), 0);
}

static bool wait_magic(uint32_t want)
{
	for (int k = 0; k < 400; k++) {
		if (__atomic_load_n(&table()->magic, __ATOMIC_ACQUIRE) == want)
			return true;
		nap_ms(5);
	}
	return false;
}

START_TEST(follow_toe)
{
	char sock[320], other[330];
	struct ivs_link_config c = { .region_path = region, .doorbell_socket = sock,
				     .nslots = 2, .follow = true };
	struct tcr_params p = { .name = "lt", .kind = TCR_KIND_GUEST, .nbufs = 64,
				.slot_size = 2048, .nchannels = 8 };
	struct tcr_link *t = table();
	struct ivs_link_stats st;
	struct tcr_region *again;
	struct tcr_geometry geo;
	struct fake_qemu q;
	struct runner r;
	struct ivs_link *l;
	struct stat sb;
	uint32_t seq, ch0;
	off_t bar;
	int fd;

	snprintf(sock, sizeof(sock), "%s/ivs.sock", dir);
	l = ivs_link_create(&c);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(stat(region, &sb), 0);
	bar = sb.st_size;
	run_start(&r, l);
	qemu_join(&q, sock, 2);
	t->slot[0].guest_peer = (uint32_t)q.id;
	__atomic_store_n(&t->slot[0].state, (uint32_t)TCR_LINK_CLAIMED, __ATOMIC_RELEASE);
	seq = t->seq;
	ch0 = t->slot[0].channel;

	/* the TOE dies: the table is withdrawn, the link stays, QEMU stays joined */
	toe_kill();
	ck_assert(wait_magic(0));
	nap_ms(200);
	ck_assert_int_eq(r.ret, 1);	/* still running */
	ck_assert(!readable(q.sock, 0));	/* the server did not drop QEMU */

	/* a new TOE formats the same file in place: QEMU's BAR keeps its pages */
	again = tcr_region_create(region, &p);
	ck_assert_ptr_nonnull(again);
	ck_assert_int_eq(stat(region, &sb), 0);
	ck_assert_int_eq(sb.st_size, bar);	/* not truncated */
	/* something else shrinks it to the TOE's own size anyway: the link grows it back */
	ck_assert_int_eq(tcr_geometry_compute(&p, &geo), 0);
	fd = open(region, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)geo.region_size), 0);
	close(fd);
	ck_assert_int_lt((off_t)geo.region_size, bar);
	toe_restart();
	/* every vector of the guest is rung: old claimers look at their channel */
	ck_assert(readable(q.own_efd[0], 3000));
	ck_assert(readable(q.own_efd[1], 3000));
	ck_assert(wait_magic(TCR_LINK_MAGIC));
	ck_assert_uint_eq(t->seq, seq + 1);
	ck_assert_uint_eq(t->slot[0].state, TCR_LINK_OFFERED);
	ck_assert_uint_eq(t->slot[1].state, TCR_LINK_OFFERED);
	ck_assert_uint_ne(t->slot[0].channel, ch0);
	ck_assert_int_eq(stat(region, &sb), 0);
	ck_assert_int_eq(sb.st_size, bar);	/* grown back to the BAR */
	/* and it relays for the new TOE */
	ch0 = t->slot[0].channel;
	t->slot[0].guest_peer = (uint32_t)q.id;
	__atomic_store_n(&t->slot[0].state, (uint32_t)TCR_LINK_CLAIMED, __ATOMIC_RELEASE);
	drain(q.own_efd[0]);
	ck_assert_int_eq(write(toe.efd_guest[conn_of(ch0)], &(uint64_t){ 1 }, 8), 8);
	ck_assert(readable(q.own_efd[0], 2000));

	/* gone again, and the region file replaced by another: the link stops */
	toe_kill();
	ck_assert(wait_magic(0));
	snprintf(other, sizeof(other), "%s/other", dir);
	fd = open(other, O_RDWR | O_CREAT, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(rename(other, region), 0);
	pthread_join(r.thr, NULL);
	ck_assert_int_eq(r.ret, -ESTALE);
	ivs_link_get_stats(l, &st);
	ck_assert_uint_eq(st.toe_losses, 2);
	ck_assert_uint_eq(st.toe_follows, 1);
	ivs_link_destroy(l);
	tcr_region_destroy(again);
	toe_restart();	/* for the teardown */
	for (int i = 0; i < 2; i++) {
		close(q.host_efd[i]);
		close(q.own_efd[i]);
	}
	close(q.sock);
	close(q.shm);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ivs_link");
	TCase *tc = tcase_create("link");

	signal(SIGPIPE, SIG_IGN);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, refuses);
	tcase_add_test(tc, poll_mode);
	tcase_add_test(tc, doorbell_mode);
	tcase_add_test(tc, follow_toe);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
