// SPDX-License-Identifier: MIT
/*
 * Multi-process stress test of the region library.
 *
 * The parent plays the host: it owns the pool, grants empty buffers to
 * the producers' channel, takes what they filled, checks each descriptor,
 * and delivers the buffers to the consumers' channels round-robin.
 * Producers (sharing channel 0: multi-producer/multi-consumer sides) fill
 * each buffer with a payload derived from a global sequence number and
 * store its checksum; consumers (one channel each) verify the checksum,
 * mark the sequence number in a shared bitmap and give the buffer back.
 *
 * With --kill, the parent kills one consumer with SIGKILL mid-stream,
 * closes its channel (reclaiming every buffer it held), and starts a new
 * consumer on a reopened channel.  Messages the dead consumer had taken
 * but not marked are "dropped": the parent knows each buffer's sequence.
 *
 * At the end it checks: every sequence number was consumed exactly once
 * or dropped with the dead consumer, no checksum failed, no duplicate,
 * and every buffer is back in the free stock (slot count conserved).
 * Exit status 0 on success; a summary line either way.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/desc.h>
#include <tochain/pool.h>
#include <tochain/region.h>

#define BATCH 32
#define MAXP 8
#define MAXC 8

struct shared {
	uint64_t next_seq;	/* producers claim sequence numbers here */
	uint32_t stop;		/* parent: consumers exit when RX is empty */
	uint32_t bad_checksum;
	uint32_t duplicates;
	uint32_t bad_desc;
	uint64_t consumed;
	uint64_t bitmap[];
};

static struct {
	uint64_t count;
	unsigned int producers, consumers, nbufs, slot_size;
	int kill;
	char path[64];
} opt = { 10000000, 2, 2, 4096, 256, 0, "" };

static struct shared *sh;

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static uint32_t payload_len(uint64_t seq)
{
	return 1 + (uint32_t)(mix(seq) % opt.slot_size);
}

static void fill(uint8_t *p, uint32_t len, uint64_t seq)
{
	uint64_t s = mix(seq + 1);

	for (uint32_t i = 0; i < len; i++) {
		if (!(i & 7))
			s = mix(s);
		p[i] = (uint8_t)(s >> ((i & 7) * 8));
	}
}

static uint64_t checksum(const uint8_t *p, uint32_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct tcr_region *attach_guest(void)
{
	struct tcr_region *r = tcr_region_attach(opt.path, TCR_ATTACH_GUEST);

	if (!r) {
		perror("attach");
		_exit(3);
	}
	return r;
}

static void producer(void)
{
	struct tcr_region *r = attach_guest();
	struct tcr_chan c;
	uint32_t idx[BATCH];

	if (tcr_chan_attach(&c, r, 0, TCR_RING_MP | TCR_RING_MC))
		_exit(3);
	for (;;) {
		int n = tcr_ring_dequeue_burst(&c.ring[TCR_CH_FREE], idx, BATCH), k = 0;
		uint64_t first;

		if (n < 0)
			_exit(4);
		if (n == 0) {
			if (tc_load_acquire(&sh->next_seq) >= opt.count)
				break;
			sched_yield();
			continue;
		}
		first = tc_fetch_add_relaxed(&sh->next_seq, (uint64_t)n);
		for (; k < n && first + (uint64_t)k < opt.count; k++) {
			uint64_t seq = first + (uint64_t)k;
			struct tcr_desc d = {
				.conn_id = 1, .seq = seq, .slot = idx[k],
				.len = payload_len(seq), .op = TCR_OP_DATA,
			};
			uint8_t *p = tcr_region_slot(r, idx[k]);

			fill(p, d.len, seq);
			d.aux = checksum(p, d.len);
			tcr_desc_store(r, idx[k], &d);
		}
		for (int done = 0; done < k;) {
			int e = tcr_ring_enqueue_burst(&c.ring[TCR_CH_TX], idx + done, (unsigned int)(k - done));

			if (e < 0)
				_exit(5);
			done += e;
		}
		/* Grants beyond the end go back unused. */
		for (int done = k; done < n;) {
			int e = tcr_ring_enqueue_burst(&c.ring[TCR_CH_DONE], idx + done, (unsigned int)(n - done));

			if (e < 0)
				_exit(5);
			done += e;
		}
	}
	tcr_region_destroy(r);
	_exit(0);
}

static void consumer(uint32_t ch)
{
	struct tcr_region *r = attach_guest();
	struct tcr_chan c;
	uint32_t idx[BATCH];

	if (tcr_chan_attach(&c, r, ch, 0))
		_exit(3);
	for (;;) {
		int n = tcr_ring_dequeue_burst(&c.ring[TCR_CH_RX], idx, BATCH);

		if (n < 0)
			_exit(4);
		if (n == 0) {
			if (tc_load_acquire(&sh->stop))
				break;
			sched_yield();
			continue;
		}
		for (int i = 0; i < n; i++) {
			struct tcr_desc d;
			uint64_t bit;

			if (tcr_desc_load(r, idx[i], &d) || d.seq >= opt.count ||
			    d.len != payload_len(d.seq)) {
				tc_fetch_add_relaxed(&sh->bad_desc, 1);
				continue;
			}
			if (checksum(tcr_desc_payload(r, &d), d.len) != d.aux)
				tc_fetch_add_relaxed(&sh->bad_checksum, 1);
			bit = 1ull << (d.seq & 63);
			if (__atomic_fetch_or(&sh->bitmap[d.seq >> 6], bit, __ATOMIC_RELAXED) & bit)
				tc_fetch_add_relaxed(&sh->duplicates, 1);
			else
				tc_fetch_add_relaxed(&sh->consumed, 1);
		}
		for (int done = 0; done < n;) {
			int e = tcr_ring_enqueue_burst(&c.ring[TCR_CH_DONE], idx + done, (unsigned int)(n - done));

			if (e < 0)
				_exit(5);
			done += e;
		}
	}
	tcr_region_destroy(r);
	_exit(0);
}

static pid_t spawn(void (*fn)(uint32_t), uint32_t arg)
{
	pid_t pid = fork();

	if (pid == 0)
		fn(arg);
	return pid;
}

static void producer_entry(uint32_t unused)
{
	(void)unused;
	producer();
}

static void usage(void)
{
	fprintf(stderr, "usage: region-stress [--count N] [--producers P] [--consumers C] "
		"[--nbufs N] [--slot-size S] [--kill]\n");
	exit(2);
}

static int parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "producers", required_argument, NULL, 'p' },
		{ "consumers", required_argument, NULL, 'c' },
		{ "nbufs", required_argument, NULL, 'b' },
		{ "slot-size", required_argument, NULL, 's' },
		{ "kill", no_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	int o;

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'n': opt.count = strtoull(optarg, NULL, 0); break;
		case 'p': opt.producers = (unsigned int)atoi(optarg); break;
		case 'c': opt.consumers = (unsigned int)atoi(optarg); break;
		case 'b': opt.nbufs = (unsigned int)atoi(optarg); break;
		case 's': opt.slot_size = (unsigned int)atoi(optarg); break;
		case 'k': opt.kill = 1; break;
		default: usage();
		}
	}
	if (!opt.count || !opt.producers || opt.producers > MAXP || !opt.consumers ||
	    opt.consumers > MAXC || opt.nbufs < 2 * BATCH)
		usage();
	return 0;
}

int main(int argc, char **argv)
{
	struct tcr_params prm = { .name = "stress", .kind = TCR_KIND_GUEST };
	struct tcr_chan hc[1 + MAXC];
	pid_t prod[MAXP], cons[MAXC];
	size_t shsize;
	struct tcr_region *r;
	struct tcr_pool *p;
	uint64_t *seq_of, forwarded = 0, dropped = 0, reclaimed = 0, killed_at;
	uint32_t idx[BATCH], *backlog;
	unsigned int nback = 0, rr = 0, live_prod;
	int killed = 0, rc = 0;
	double t0, t1;

	parse(argc, argv);
	snprintf(opt.path, sizeof(opt.path), "/dev/shm/tochain-stress-%d", getpid());
	prm.nbufs = opt.nbufs;
	prm.slot_size = (opt.slot_size + 63) & ~63u;
	prm.nchannels = 1 + opt.consumers;
	shsize = sizeof(*sh) + ((opt.count + 63) / 64) * 8;
	sh = mmap(NULL, shsize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	r = tcr_region_create(opt.path, &prm);
	if (sh == MAP_FAILED || !r) {
		perror("setup");
		return 1;
	}
	p = tcr_pool_create(r);
	seq_of = calloc(opt.nbufs, sizeof(*seq_of));
	backlog = calloc(opt.nbufs, sizeof(*backlog));
	for (uint32_t ch = 0; ch <= opt.consumers; ch++)
		tcr_chan_open(&hc[ch], r, ch);
	killed_at = opt.kill ? opt.count / 3 : UINT64_MAX;

	t0 = now_s();
	for (unsigned int i = 0; i < opt.producers; i++)
		prod[i] = spawn(producer_entry, 0);
	for (unsigned int i = 0; i < opt.consumers; i++)
		cons[i] = spawn(consumer, 1 + i);
	live_prod = opt.producers;

	for (;;) {
		int n, progress = 0;

		/* Keep the producers supplied with empty buffers. */
		if (live_prod && tcr_ring_count(&hc[0].ring[TCR_CH_FREE]) < (int)opt.nbufs / 4) {
			n = tcr_chan_grant(&hc[0], p, opt.nbufs / 4);
			if (n < 0)
				goto fail;
		}
		/* Filled buffers: check, then hand to the consumers. */
		while (nback + BATCH <= opt.nbufs &&
		       (n = tcr_chan_recv(&hc[0], p, TCR_CH_TX, idx, BATCH)) > 0) {
			for (int i = 0; i < n; i++) {
				struct tcr_desc d;

				if (tcr_desc_load(r, idx[i], &d)) {
					fprintf(stderr, "host: bad descriptor %u\n", idx[i]);
					goto fail;
				}
				seq_of[idx[i]] = d.seq;
				backlog[nback++] = idx[i];
			}
			forwarded += (uint64_t)n;
			progress = 1;
		}
		if (n < 0) {
			fprintf(stderr, "host: producer channel: %s\n", strerror(-n));
			goto fail;
		}
		/* Unused grants and consumed buffers come back on DONE. */
		for (uint32_t ch = 0; ch <= opt.consumers; ch++) {
			while ((n = tcr_chan_recv(&hc[ch], p, TCR_CH_DONE, idx, BATCH)) > 0) {
				tcr_pool_free(p, idx, (unsigned int)n);
				progress = 1;
			}
			if (n < 0) {
				fprintf(stderr, "host: channel %u: %s\n", ch, strerror(-n));
				goto fail;
			}
		}
		/* Deliver the backlog round-robin. */
		for (unsigned int tries = 0; nback && tries < opt.consumers; tries++) {
			uint32_t ch = 1 + rr++ % opt.consumers;
			unsigned int take = nback < BATCH ? nback : BATCH;

			n = tcr_chan_send(&hc[ch], p, backlog + nback - take, take);
			if (n < 0)
				goto fail;
			nback -= (unsigned int)n;
			progress |= n > 0;
		}
		/* Kill consumer 0 mid-stream, reclaim its channel, replace it. */
		if (!killed && tc_load_relaxed(&sh->consumed) >= killed_at) {
			int st;

			kill(cons[0], SIGKILL);
			waitpid(cons[0], &st, 0);
			for (uint32_t b = 0; b < opt.nbufs; b++) {
				uint64_t s;

				if (tcr_pool_holder(p, b) != (int)TCR_HOLDER_CH(1))
					continue;
				s = seq_of[b];
				/* Taken by the dead consumer but never marked: dropped. */
				if (s < opt.count && !(sh->bitmap[s >> 6] & (1ull << (s & 63))) &&
				    tcr_region_desc(r, b)->seq == s)
					dropped++;
			}
			reclaimed = tcr_chan_close(&hc[1], p);
			tcr_chan_open(&hc[1], r, 1);
			cons[0] = spawn(consumer, 1);
			killed = 1;
		}
		/* Producers finish once every sequence number is claimed. */
		for (unsigned int i = 0; i < opt.producers; i++) {
			int st;

			if (prod[i] > 0 && waitpid(prod[i], &st, WNOHANG) == prod[i]) {
				if (!WIFEXITED(st) || WEXITSTATUS(st)) {
					fprintf(stderr, "producer %u failed (status %d)\n", i, st);
					goto fail;
				}
				prod[i] = 0;
				live_prod--;
			}
		}
		if (!live_prod && nback == 0 &&
		    tc_load_relaxed(&sh->consumed) + dropped + sh->bad_desc + sh->duplicates >= forwarded &&
		    tcr_pool_count(p, TCR_HOLDER_FREE) + tcr_pool_count(p, TCR_HOLDER_CH(0)) == (int)opt.nbufs)
			break;
		if (!progress)
			sched_yield();
	}
	t1 = now_s();
	tc_store_release(&sh->stop, 1);
	for (unsigned int i = 0; i < opt.consumers; i++) {
		int st;

		waitpid(cons[i], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "consumer %u failed (status %d)\n", i, st);
			rc = 1;
		}
	}
	/* Drain what the consumers returned last, then close every channel. */
	for (uint32_t ch = 0; ch <= opt.consumers; ch++) {
		int n;

		while ((n = tcr_chan_recv(&hc[ch], p, TCR_CH_DONE, idx, BATCH)) > 0)
			tcr_pool_free(p, idx, (unsigned int)n);
		tcr_chan_close(&hc[ch], p);
	}
	{
		uint64_t marked = 0;

		for (uint64_t w = 0; w < (opt.count + 63) / 64; w++)
			marked += (uint64_t)__builtin_popcountll(sh->bitmap[w]);
		printf("region-stress: %llu sent, %llu consumed, %llu dropped with the killed "
		       "consumer (%llu buffers reclaimed), %u duplicates, %u bad checksums, "
		       "%u bad descriptors, %d/%u buffers free, %.2f s, %.2f M descriptors/s\n",
		       (unsigned long long)forwarded, (unsigned long long)sh->consumed,
		       (unsigned long long)dropped, (unsigned long long)reclaimed,
		       sh->duplicates, sh->bad_checksum, sh->bad_desc,
		       tcr_pool_count(p, TCR_HOLDER_FREE), opt.nbufs, t1 - t0,
		       (double)forwarded / (t1 - t0) / 1e6);
		if (forwarded != opt.count || marked != sh->consumed ||
		    sh->consumed + dropped != opt.count || sh->duplicates || sh->bad_checksum ||
		    sh->bad_desc || tcr_pool_count(p, TCR_HOLDER_FREE) != (int)opt.nbufs ||
		    (opt.kill && !killed)) {
			fprintf(stderr, "region-stress: FAILED\n");
			rc = 1;
		}
	}
	goto out;
fail:
	rc = 1;
	for (unsigned int i = 0; i < opt.producers; i++)
		if (prod[i] > 0)
			kill(prod[i], SIGKILL);
	for (unsigned int i = 0; i < opt.consumers; i++)
		kill(cons[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	fprintf(stderr, "region-stress: FAILED\n");
out:
	tcr_pool_destroy(p);
	tcr_region_destroy(r);
	unlink(opt.path);
	free(seq_of);
	free(backlog);
	return rc;
}
