// SPDX-License-Identifier: MIT
/*
 * toe-toctou: a hostile guest process for test 413.  It speaks the
 * socket-call protocol (include/tochain/srpc.h) directly on a channel of the
 * TOE's region, opens TCP connections to a server and sends buffers of
 * 8-byte cells "CLEAN!!!".  After submitting each buffer it waits a
 * random 0..@delay microseconds and rewrites every cell as "ATTACK!!"
 * (aligned 8-byte stores, so any copy sees whole cells): a chain that
 * inspected the guest's slot in place and sent it later would let the
 * marker through uninspected.  The TOE must send exactly what its VNFs
 * saw: either the clean bytes, or (the VNF saw a marker) a reset.
 *
 *   toe-toctou --region R --connect A.B.C.D:PORT [--conns N] [--bufs N]
 *              [--size BYTES] [--delay US] [--seed S]
 * Prints one line per connection ("conn I sent N reset 0|1") and a
 * summary line "conns N completed C reset R".  Exit 0, or 1 on a
 * protocol failure (the TOE dropped us, a timeout).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/desc.h>
#include <tochain/region.h>
#include <tochain/util.h>

#include "tochain/srpc.h"

#define CLEAN	0x2121214e41454c43ull	/* "CLEAN!!!" little-endian */
#define ATTACK	0x21214b4341545441ull	/* "ATTACK!!" */
#define WAIT_MS	5000

struct guest {
	struct tcr_region *r;
	struct tcr_chan ch;
	int conn, efd_mine, efd_toe;
	uint32_t tag;
	/* events seen for the current socket */
	uint32_t sock;
	bool connected, reset;
	int connect_err;
	/* a response waited for */
	bool have_resp;
	struct srpc_msg resp;
	/* FREE buffers taken but not used */
	uint32_t stash[256], nstash;
};

static uint64_t now_us(void)
{
	return tu_now_ns() / 1000;
}

static int attach(struct guest *g, const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct srpc_hello h = { SRPC_HELLO_MAGIC, SRPC_VERSION, 0, 0 };
	struct srpc_welcome w;
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &h, sizeof(h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	h.pid = (uint32_t)getpid();
	g->r = tcr_region_attach(path, TCR_ATTACH_GUEST);
	if (!g->r)
		return -errno;
	g->efd_mine = eventfd(0, EFD_NONBLOCK);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s.sock", path);
	g->conn = socket(AF_UNIX, SOCK_STREAM, 0);
	if (g->efd_mine < 0 || g->conn < 0 ||
	    connect(g->conn, (struct sockaddr *)&sun, sizeof(sun)))
		return -errno;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &g->efd_mine, sizeof(int));
	if (sendmsg(g->conn, &mh, 0) != sizeof(h))
		return -EIO;
	iov.iov_base = &w;
	iov.iov_len = sizeof(w);
	mh.msg_controllen = sizeof(cbuf);
	if (recvmsg(g->conn, &mh, 0) != sizeof(w) || w.magic != SRPC_WELCOME_MAGIC)
		return -EPROTO;
	if (w.status)
		return w.status;
	memcpy(&g->efd_toe, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof(int));
	return tcr_chan_attach(&g->ch, g->r, w.channel, 0);
}

static void kick(struct guest *g)
{
	uint64_t one = 1;

	if (write(g->efd_toe, &one, 8) != 8) {
		/* a full counter wakes the TOE anyway */
	}
}

/* Take everything on RX: messages are noted, every buffer goes to DONE. */
static void pump(struct guest *g)
{
	uint32_t idx;

	while (tcr_ring_dequeue_burst(&g->ch.ring[TCR_CH_RX], &idx, 1) == 1) {
		struct tcr_desc d;
		struct srpc_msg m;

		if (tcr_desc_load(g->r, idx, &d) == 0 && d.op == TCR_OP_CTRL &&
		    srpc_decode_msg(tcr_region_slot(g->r, idx) + d.off, d.len, &m) == 0) {
			if (m.type == SRPC_RESP && m.tag == g->tag) {
				g->resp = m;
				g->have_resp = true;
			} else if (m.sock == g->sock && m.type == SRPC_EV_CONNECTED) {
				g->connected = m.a == 0;
				g->connect_err = m.a ? m.a : 0;
				if (m.a)
					g->reset = true;
			} else if (m.sock == g->sock && m.type == SRPC_EV_ERROR) {
				g->reset = true;
			}
		}
		tcr_ring_enqueue_burst(&g->ch.ring[TCR_CH_DONE], &idx, 1);
		kick(g);
	}
}

/* A FREE buffer (waiting, bounded); -1 on timeout or a dead channel. */
static int64_t take_buf(struct guest *g)
{
	uint64_t end = now_us() + WAIT_MS * 1000ull;
	uint32_t idx;

	if (g->nstash)
		return g->stash[--g->nstash];
	while (now_us() < end && !tcr_chan_stale(&g->ch)) {
		if (tcr_ring_dequeue_burst(&g->ch.ring[TCR_CH_FREE], &idx, 1) == 1)
			return idx;
		pump(g);
		usleep(20);
	}
	return -1;
}

static int submit(struct guest *g, uint32_t idx, enum tcr_op op, uint32_t sock, uint32_t len)
{
	struct tcr_desc d = { .slot = idx, .len = len, .op = op, .conn_id = sock };

	tcr_desc_store(g->r, idx, &d);
	if (tcr_ring_enqueue_burst(&g->ch.ring[TCR_CH_TX], &idx, 1) != 1)
		return -ENOSPC;
	kick(g);
	return 0;
}

/* One request; its response's a (>= 0 or -errno), or -ETIMEDOUT. */
static int request(struct guest *g, enum srpc_type type, uint32_t sock, int a, int b, int c,
		   const void *data, size_t dlen)
{
	uint64_t end = now_us() + WAIT_MS * 1000ull;
	struct srpc_msg m;
	int64_t idx = take_buf(g);

	if (idx < 0)
		return -ETIMEDOUT;
	srpc_encode(&m, type, ++g->tag, sock, a, b, c, data, dlen);
	memcpy(tcr_region_slot(g->r, (uint32_t)idx), &m, srpc_msg_size(&m));
	g->have_resp = false;
	if (submit(g, (uint32_t)idx, TCR_OP_CTRL, 0, (uint32_t)srpc_msg_size(&m)))
		return -ENOSPC;
	while (!g->have_resp && now_us() < end && !tcr_chan_stale(&g->ch)) {
		pump(g);
		usleep(20);
	}
	return g->have_resp ? g->resp.a : -ETIMEDOUT;
}

static void spin_us(uint64_t us)
{
	uint64_t end = now_us() + us;

	while (now_us() < end)
		tc_cpu_relax();
}

/* One connection: bufs buffers of size bytes, each rewritten after submit. */
static int one_conn(struct guest *g, const struct sockaddr_in *to, uint32_t bufs, uint32_t size,
		    uint32_t delay, uint32_t *sent)
{
	uint64_t end;
	int ret;

	ret = request(g, SRPC_REQ_SOCKET, 0, AF_INET, SOCK_STREAM, 0, NULL, 0);
	if (ret <= 0)
		return ret < 0 ? ret : -EPROTO;
	g->sock = (uint32_t)ret;
	g->connected = g->reset = false;
	ret = request(g, SRPC_REQ_CONNECT, g->sock, 0, 0, 0, to, sizeof(*to));
	if (ret == 0)
		g->connected = true;
	else if (ret != -EINPROGRESS)
		return ret;
	end = now_us() + WAIT_MS * 1000ull;
	while (!g->connected && !g->reset && now_us() < end) {
		pump(g);
		usleep(20);
	}
	if (!g->connected)
		return g->connect_err ? -g->connect_err : -ETIMEDOUT;
	*sent = 0;
	for (uint32_t i = 0; i < bufs && !g->reset; i++) {
		int64_t idx = take_buf(g);
		uint64_t *cells;

		if (idx < 0)
			return -ETIMEDOUT;
		cells = (uint64_t *)tcr_region_slot(g->r, (uint32_t)idx);
		for (uint32_t k = 0; k < size / 8; k++)
			cells[k] = CLEAN;
		if (submit(g, (uint32_t)idx, TCR_OP_DATA, g->sock, size))
			return -ENOSPC;
		*sent += size;
		/* Then the attack: after a while, every cell becomes the marker. */
		spin_us(delay ? (uint64_t)(rand() % (int)(delay + 1)) : 0);
		for (uint32_t k = 0; k < size / 8; k++)
			tc_store_relaxed(&cells[k], ATTACK);
		pump(g);
	}
	/* close() flushes what was queued, as the kernel's does */
	ret = request(g, SRPC_REQ_CLOSE, g->sock, 0, 0, 0, NULL, 0);
	pump(g);
	return ret < 0 && ret != -EBADF ? ret : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: toe-toctou --region R --connect A.B.C.D:PORT [--conns N] [--bufs N]\n"
			"                  [--size BYTES] [--delay US] [--seed S]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "region", required_argument, NULL, 'r' },
		{ "connect", required_argument, NULL, 'c' },
		{ "conns", required_argument, NULL, 'n' },
		{ "bufs", required_argument, NULL, 'b' },
		{ "size", required_argument, NULL, 's' },
		{ "delay", required_argument, NULL, 'd' },
		{ "seed", required_argument, NULL, 'S' },
		{ 0 }
	};
	struct sockaddr_in to = { .sin_family = AF_INET };
	uint32_t conns = 10, bufs = 20, size = 4096, delay = 200, completed = 0, resets = 0;
	const char *region = NULL, *dest = NULL;
	struct guest g;
	char host[64], *colon;
	int c, err;

	srand(1);
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r': region = optarg; break;
		case 'c': dest = optarg; break;
		case 'n': conns = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'b': bufs = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 's': size = (uint32_t)strtoul(optarg, NULL, 0) & ~7u; break;
		case 'd': delay = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'S': srand((unsigned int)strtoul(optarg, NULL, 0)); break;
		default: usage(); return 2;
		}
	}
	if (!region || !dest || strlen(dest) >= sizeof(host) || !size) {
		usage();
		return 2;
	}
	strcpy(host, dest);
	colon = strrchr(host, ':');
	if (!colon) {
		usage();
		return 2;
	}
	*colon = '\0';
	to.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &to.sin_addr) != 1) {
		usage();
		return 2;
	}
	memset(&g, 0, sizeof(g));
	err = attach(&g, region);
	if (err) {
		fprintf(stderr, "toe-toctou: attach: %s\n", strerror(-err));
		tcr_region_destroy(g.r);
		return 1;
	}
	if (size > g.r->geo.slot_size)
		size = g.r->geo.slot_size & ~7u;
	for (uint32_t i = 0; i < conns; i++) {
		uint32_t sent = 0;

		err = one_conn(&g, &to, bufs, size, delay, &sent);
		if (err) {
			fprintf(stderr, "toe-toctou: connection %u: %s\n", i, strerror(-err));
			tcr_region_destroy(g.r);
			return 1;
		}
		printf("conn %u sent %u reset %d\n", i, sent, g.reset ? 1 : 0);
		if (g.reset)
			resets++;
		else
			completed++;
	}
	printf("conns %u completed %u reset %u\n", conns, completed, resets);
	close(g.conn);
	close(g.efd_mine);
	close(g.efd_toe);
	tcr_region_destroy(g.r);
	return 0;
}
