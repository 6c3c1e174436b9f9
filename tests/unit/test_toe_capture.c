// SPDX-License-Identifier: MIT
/*
 * Unit tests for the TOE's capture of denials (host-toe/toe/toe_capture.c)
 * and its pcap frames (toe_pcap.c): frames with valid checksums, a record
 * turned into a pcap whose TCP sequence numbers follow the stream and
 * whose payload is the history's tail plus the trigger, drop on full,
 * the per-directory bound, the history limit, refusals of bad settings.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_check.h"
#include "toe_capture.h"
#include "toe_pcap.h"

static char base[64];		/* /dev/shm: tmpfs (O_DIRECT only on recent kernels) */
static char disk[64];		/* /var/tmp: a disk file system */

/* Every socket is open; socket N is 10.0.0.9:(40000 + N) -> 10.0.0.2:80. */
static bool all_alive(void *ctx, uint32_t id, struct ch_pkt *pkt)
{
	(void)ctx;
	if (pkt) {
		pkt->family = AF_INET;
		pkt->l4proto = IPPROTO_TCP;
		pkt->sport = (uint16_t)(40000 + (id & 0xffffu));
		pkt->dport = 80;
		memcpy(pkt->saddr, (uint8_t[]){ 10, 0, 0, 9 }, 4);
		memcpy(pkt->daddr, (uint8_t[]){ 10, 0, 0, 2 }, 4);
	}
	return true;
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static const struct toe_pcap_conn conn4 = {
	.family = AF_INET, .l4proto = IPPROTO_TCP, .vm_port = 80, .peer_port = 40000,
	.vm_addr = { 10, 0, 0, 2 }, .peer_addr = { 10, 0, 0, 9 },
};

/* The L4 checksum over pseudo header, header and payload sums to 0xffff (i.e. folds to 0). */
static void check_l4_sum(const uint8_t *ip, bool v6)
{
	size_t l3 = v6 ? 40 : 20, l4len = v6 ? be16(ip + 4) : be16(ip + 2) - 20;
	uint8_t pseudo[40];
	uint32_t s = 0;
	uint16_t fin;

	if (v6) {
		memcpy(pseudo, ip + 8, 32);
		s = ip[6] + (uint32_t)l4len;
		for (int i = 0; i < 32; i += 2)
			s += be16(pseudo + i);
	} else {
		memcpy(pseudo, ip + 12, 8);
		s = ip[9] + (uint32_t)l4len;
		for (int i = 0; i < 8; i += 2)
			s += be16(pseudo + i);
	}
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	fin = toe_pcap_csum(s, ip + l3, l4len);
	ck_assert_uint_eq(fin, 0);
}

START_TEST(pcap_frames)
{
	uint8_t buf[4096], pay[100];
	struct toe_pcap_pkt p = { .unix_ns = 1700000000123456789ull, .dir = TOE_PCAP_TO_VM,
				  .tcp_flags = 0x18, .seq = 1000, .ack = 2000,
				  .data = pay, .len = sizeof(pay) };
	struct toe_pcap_conn c6 = conn4;
	size_t n;

	memset(pay, 'x', sizeof(pay));
	ck_assert_uint_eq(toe_pcap_file_header(buf), TOE_PCAP_FILE_HDR);
	ck_assert_uint_eq(*(uint32_t *)buf, 0xa1b23c4du);

	n = toe_pcap_packet(buf, sizeof(buf), &conn4, &p);
	ck_assert_uint_eq(n, toe_pcap_packet_size(&conn4, sizeof(pay)));
	ck_assert_uint_eq(n, 16 + 14 + 20 + 20 + 100);
	ck_assert_uint_eq(*(uint32_t *)buf, 1700000000u);
	ck_assert_uint_eq(*(uint32_t *)(buf + 4), 123456789u);
	ck_assert_uint_eq(be16(buf + 16 + 12), 0x0800);
	ck_assert_uint_eq(toe_pcap_csum(0, buf + 30, 20), 0);	/* IPv4 header checksum */
	ck_assert_mem_eq(buf + 30 + 12, conn4.peer_addr, 4);	/* to the VM: the peer is the source */
	ck_assert_uint_eq(be16(buf + 50), 40000);
	ck_assert_uint_eq(be16(buf + 52), 80);
	ck_assert_uint_eq(be32(buf + 54), 1000);
	ck_assert_uint_eq(be32(buf + 58), 2000);
	check_l4_sum(buf + 30, false);
	ck_assert_mem_eq(buf + 70, pay, sizeof(pay));

	/* too small a buffer, a bad family: nothing written */
	ck_assert_uint_eq(toe_pcap_packet(buf, n - 1, &conn4, &p), 0);
	c6.family = 99;
	ck_assert_uint_eq(toe_pcap_packet(buf, sizeof(buf), &c6, &p), 0);

	/* IPv6 + UDP, odd length, from the VM */
	c6.family = AF_INET6;
	c6.l4proto = IPPROTO_UDP;
	memset(c6.vm_addr, 0, 16);
	c6.vm_addr[0] = 0xfd;
	c6.vm_addr[15] = 2;
	memset(c6.peer_addr, 0, 16);
	c6.peer_addr[0] = 0xfd;
	c6.peer_addr[15] = 9;
	p.dir = TOE_PCAP_FROM_VM;
	p.len = 33;
	n = toe_pcap_packet(buf, sizeof(buf), &c6, &p);
	ck_assert_uint_eq(n, 16 + 14 + 40 + 8 + 33);
	ck_assert_uint_eq(be16(buf + 16 + 12), 0x86dd);
	ck_assert_uint_eq(be16(buf + 30 + 4), 8 + 33);
	ck_assert_uint_eq(be16(buf + 70), 80);		/* from the VM: its port is the source */
	check_l4_sum(buf + 30, true);
}
END_TEST

/* ---- a capture, driven as the TOE's loop drives it ---- */

#define SOCK	((7u << 16) | 3u)

static struct ch_result deny_result(uint32_t dir, uint64_t cookie, uint32_t len)
{
	struct ch_result r;

	memset(&r, 0, sizeof(r));
	r.chain = dir;
	r.verdict = CH_DENY;
	r.reason = CH_REASON_RULE;
	r.deny_rule = 942100;
	r.pkt.cookie = cookie;
	r.pkt.len = len;
	r.pkt.family = AF_INET;
	r.pkt.l4proto = IPPROTO_TCP;
	/* inbound: the peer is the source */
	r.pkt.sport = dir == TOE_DIR_IN ? 40000 : 80;
	r.pkt.dport = dir == TOE_DIR_IN ? 80 : 40000;
	memcpy(r.pkt.saddr, dir == TOE_DIR_IN ? conn4.peer_addr : conn4.vm_addr, 4);
	memcpy(r.pkt.daddr, dir == TOE_DIR_IN ? conn4.vm_addr : conn4.peer_addr, 4);
	return r;
}

static void cfg_on(struct toe_capture *c, uint32_t dir, const char *path, uint32_t kib,
		   uint64_t max)
{
	struct toe_capture_cfg cfg = { .on = true, .kib = kib, .max_bytes = max };

	snprintf(cfg.path, sizeof(cfg.path), "%s", path);
	ck_assert_int_eq(toe_capture_set(c, dir, &cfg), 0);
}

/* The pcap files of @dir (names sorted); returns how many, @first gets the newest. */
static int list_pcaps(const char *dir, char *newest, size_t size, uint64_t *total)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	newest[0] = 0;
	*total = 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char p[512];
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		ck_assert_int_eq(stat(p, &st), 0);
		*total += (uint64_t)st.st_size;
		if (l < 5 || strcmp(de->d_name + l - 5, ".pcap"))
			continue;
		n++;
		if (strcmp(de->d_name, newest) > 0)
			snprintf(newest, size, "%s", de->d_name);
	}
	closedir(d);
	return n;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long n;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

struct parsed {
	uint8_t pay[2][8192];
	size_t len[2];
	uint32_t next_seq[2];
	int pkts, rst;
	uint64_t last_ns;
};

/* Walk a pcap: every frame valid, seq contiguous per direction, payload collected. */
static void parse_pcap(const uint8_t *b, size_t n, struct parsed *out)
{
	size_t off = TOE_PCAP_FILE_HDR;

	memset(out, 0, sizeof(*out));
	ck_assert_uint_ge(n, TOE_PCAP_FILE_HDR);
	ck_assert_uint_eq(*(const uint32_t *)b, 0xa1b23c4du);
	while (off < n) {
		uint32_t caplen, sec, nsec, seq;
		const uint8_t *f, *ip, *th;
		size_t plen;
		int d;

		ck_assert_uint_le(off + 16, n);
		memcpy(&sec, b + off, 4);
		memcpy(&nsec, b + off + 4, 4);
		memcpy(&caplen, b + off + 8, 4);
		ck_assert_uint_le(off + 16 + caplen, n);
		ck_assert_uint_ge((uint64_t)sec * 1000000000ull + nsec, out->last_ns);
		out->last_ns = (uint64_t)sec * 1000000000ull + nsec;
		f = b + off + 16;
		ip = f + 14;
		ck_assert_uint_eq(be16(f + 12), 0x0800);
		ck_assert_uint_eq(toe_pcap_csum(0, ip, 20), 0);
		check_l4_sum(ip, false);
		th = ip + 20;
		d = be16(th) == 80 ? 1 : 0;	/* from the VM's port 80: outbound */
		seq = be32(th + 4);
		plen = caplen - 14 - 20 - 20;
		if (th[13] & 0x04) {
			out->rst++;
			ck_assert_int_eq(d, 1);
			ck_assert_uint_eq(seq, out->next_seq[1]);
		} else {
			if (out->len[d])
				ck_assert_uint_eq(seq, out->next_seq[d]);	/* no gap, no overlap */
			ck_assert_uint_le(out->len[d] + plen, sizeof(out->pay[d]));
			memcpy(out->pay[d] + out->len[d], th + 20, plen);
			out->len[d] += plen;
			out->next_seq[d] = seq + (uint32_t)plen;
			out->pkts++;
		}
		off += 16 + caplen;
	}
	ck_assert_uint_eq(off, n);
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

START_TEST(deny_writes_history_and_trigger)
{
	struct toe_capture *c = toe_capture_create(16, 4096, all_alive, NULL);
	uint8_t a[600], b[700], t[800], exp_in[1024 + 800];
	struct toe_capture_stats st;
	struct ch_result r = deny_result(TOE_DIR_IN, 42, sizeof(t));
	char newest[256], p[512];
	struct parsed *pp = malloc(sizeof(*pp));
	uint64_t total;
	uint8_t *file;
	size_t n;

	ck_assert_ptr_nonnull(c);
	ck_assert(!toe_capture_on(c));
	cfg_on(c, TOE_DIR_IN, disk, 1, TOE_CAP_BYTES_MIN);
	ck_assert(toe_capture_on(c));
	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 2);
	fill(t, sizeof(t), 3);
	toe_capture_data(c, SOCK, TOE_DIR_IN, 40, a, sizeof(a));
	toe_capture_data(c, SOCK, TOE_DIR_OUT, 41, b, sizeof(b));
	toe_capture_data(c, SOCK, TOE_DIR_IN, 42, t, sizeof(t));
	toe_capture_deny(c, SOCK, false, &r, t, "web-in", "waf");
	toe_capture_flush(c);
	toe_capture_get(c, &st);
	ck_assert_uint_eq(st.records, 1);
	ck_assert_uint_eq(st.written, 1);
	ck_assert_uint_eq(st.errors, 0);
	ck_assert_uint_eq(st.dropped, 0);

	ck_assert_int_eq(list_pcaps(disk, newest, sizeof(newest), &total), 1);
	ck_assert_ptr_nonnull(strstr(newest, "-waf-r942100.pcap"));
	snprintf(p, sizeof(p), "%s/%s", disk, newest);
	file = slurp(p, &n);
	parse_pcap(file, n, pp);
	/* inbound: the last KiB before the trigger that is still kept (a's tail), then the trigger */
	memcpy(exp_in, a + (600 + 800 - 1024), 1024 - 800);
	memcpy(exp_in + 1024 - 800, t, sizeof(t));
	ck_assert_uint_eq(pp->len[0], 1024);
	ck_assert_mem_eq(pp->pay[0], exp_in, 1024);
	ck_assert_uint_eq(pp->len[1], sizeof(b));
	ck_assert_mem_eq(pp->pay[1], b, sizeof(b));
	ck_assert_int_eq(pp->rst, 1);
	free(file);

	/* the sidecar names the evidence */
	p[strlen(p) - 5] = 0;
	strcat(p, ".json");
	file = slurp(p, &n);
	file[n] = 0;
	ck_assert_ptr_nonnull(strstr((char *)file, "\"vnf\":\"waf\""));
	ck_assert_ptr_nonnull(strstr((char *)file, "\"rule\":942100"));
	ck_assert_ptr_nonnull(strstr((char *)file, "\"conn\":\"10.0.0.9:40000>10.0.0.2:80\""));
	ck_assert_ptr_nonnull(strstr((char *)file, "\"trigger_in_history\":true"));
	ck_assert_ptr_nonnull(strstr((char *)file, "\"verdict\":\"deny\""));
	free(file);

	/* a denial on a direction that is off leaves nothing */
	r = deny_result(TOE_DIR_OUT, 41, sizeof(b));
	toe_capture_deny(c, SOCK, false, &r, b, "web-out", "ids");
	toe_capture_flush(c);
	toe_capture_get(c, &st);
	ck_assert_uint_eq(st.records, 1);
	toe_capture_destroy(c);
	free(pp);
}
END_TEST

/* An Alert: recorded like a denial, with its rule and message, and no reset (the data went on). */
START_TEST(alert_is_recorded_without_reset)
{
	struct toe_capture *c = toe_capture_create(16, 4096, all_alive, NULL);
	uint8_t a[300], t[200];
	struct toe_capture_stats st;
	struct ch_result r = deny_result(TOE_DIR_IN, 9, sizeof(t));
	char dir[128], newest[256], p[512];
	struct parsed *pp = malloc(sizeof(*pp));
	char msg[] = "WEB-ATTACKS /etc/passwd\x01\xff";
	uint64_t total;
	uint8_t *file;
	size_t n;

	snprintf(dir, sizeof(dir), "%s/alert", disk);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	cfg_on(c, TOE_DIR_IN, dir, 1, TOE_CAP_BYTES_MIN);
	fill(a, sizeof(a), 11);
	fill(t, sizeof(t), 12);
	toe_capture_data(c, SOCK, TOE_DIR_IN, 8, a, sizeof(a));
	toe_capture_data(c, SOCK, TOE_DIR_IN, 9, t, sizeof(t));
	r.verdict = CH_ALLOW;
	r.reason = CH_REASON_NONE;
	r.deny_vnf = CH_VNF_NONE;
	r.deny_rule = 0;
	r.alert_vnf = 3;
	r.alert_rule = 1000001;
	r.alert_msg = msg;
	r.alert_msg_len = (uint32_t)strlen(msg);
	/* a result without an Alert records nothing */
	r.alert_vnf = CH_VNF_NONE;
	toe_capture_alert(c, SOCK, false, &r, t, "web-in", "ids");
	r.alert_vnf = 3;
	toe_capture_alert(c, SOCK, false, &r, t, "web-in", "ids");
	toe_capture_flush(c);
	toe_capture_get(c, &st);
	ck_assert_uint_eq(st.records, 1);
	ck_assert_uint_eq(st.alerts, 1);
	ck_assert_uint_eq(st.written, 1);

	ck_assert_int_eq(list_pcaps(dir, newest, sizeof(newest), &total), 1);
	ck_assert_ptr_nonnull(strstr(newest, "-ids-r1000001.pcap"));
	snprintf(p, sizeof(p), "%s/%s", dir, newest);
	file = slurp(p, &n);
	parse_pcap(file, n, pp);
	ck_assert_uint_eq(pp->len[0], sizeof(a) + sizeof(t));
	ck_assert_mem_eq(pp->pay[0], a, sizeof(a));
	ck_assert_mem_eq(pp->pay[0] + sizeof(a), t, sizeof(t));
	ck_assert_int_eq(pp->rst, 0);
	free(file);

	p[strlen(p) - 5] = 0;
	strcat(p, ".json");
	file = slurp(p, &n);
	file[n] = 0;
	ck_assert_ptr_nonnull(strstr((char *)file, "\"verdict\":\"alert\""));
	ck_assert_ptr_nonnull(strstr((char *)file, "\"reason\":\"alert\""));
	ck_assert_ptr_nonnull(strstr((char *)file, "\"rule\":1000001"));
	/* the VNF's bytes outside printable ASCII are replaced */
	ck_assert_ptr_nonnull(strstr((char *)file, "\"msg\":\"WEB-ATTACKS /etc/passwd??\""));
	free(file);
	toe_capture_destroy(c);
	free(pp);
}
END_TEST

START_TEST(udp_trigger_only)
{
	struct toe_capture *c = toe_capture_create(16, 4096, all_alive, NULL);
	struct ch_result r = deny_result(TOE_DIR_OUT, 5, 60);
	struct toe_capture_stats st;
	char dir[128], newest[256], p[512];
	uint8_t dns[60], *file;
	uint64_t total;
	size_t n;

	snprintf(dir, sizeof(dir), "%s/udp", base);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	cfg_on(c, TOE_DIR_OUT, dir, 4, TOE_CAP_BYTES_MIN);
	r.pkt.l4proto = IPPROTO_UDP;
	fill(dns, sizeof(dns), 9);
	toe_capture_deny(c, SOCK, true, &r, dns, "web-out", "ids");
	toe_capture_flush(c);
	toe_capture_get(c, &st);
	ck_assert_uint_eq(st.written, 1);
	ck_assert_uint_eq(st.errors, 0);
	ck_assert_int_eq(list_pcaps(dir, newest, sizeof(newest), &total), 1);
	snprintf(p, sizeof(p), "%s/%s", dir, newest);
	file = slurp(p, &n);
	ck_assert_uint_eq(n, TOE_PCAP_FILE_HDR + 16 + 14 + 20 + 8 + 60);
	ck_assert_uint_eq(file[TOE_PCAP_FILE_HDR + 16 + 14 + 9], IPPROTO_UDP);
	ck_assert_mem_eq(file + n - 60, dns, 60);
	free(file);
	toe_capture_destroy(c);
}
END_TEST

START_TEST(full_ring_drops_and_bound_removes_oldest)
{
	struct toe_capture *c = toe_capture_create(16, 4096, all_alive, NULL);
	struct toe_capture_stats st;
	char dir[128], newest[256];
	static uint8_t big[32 * 1024];
	uint64_t total;
	int nfiles;

	snprintf(dir, sizeof(dir), "%s/bound", disk);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	cfg_on(c, TOE_DIR_IN, dir, 32, TOE_CAP_BYTES_MIN);
	fill(big, sizeof(big), 5);
	/* the writer held: the slots fill, further denials are dropped, the caller never waits */
	toe_capture_pause(c, true);
	for (uint32_t i = 0; i < TOE_CAP_SLOTS + 3; i++) {
		uint32_t id = ((i + 1) << 16) | (i + 1);
		struct ch_result r = deny_result(TOE_DIR_IN, 1, 4096);

		toe_capture_data(c, id, TOE_DIR_IN, 0, big, sizeof(big));
		toe_capture_data(c, id, TOE_DIR_OUT, 0, big, sizeof(big));
		toe_capture_data(c, id, TOE_DIR_IN, 1, big, 4096);
		toe_capture_deny(c, id, false, &r, big, "web-in", "ids");
	}
	toe_capture_get(c, &st);
	ck_assert_uint_eq(st.records, TOE_CAP_SLOTS);
	ck_assert_uint_eq(st.dropped, 3);
	toe_capture_pause(c, false);
	toe_capture_flush(c);
	/* each file ~70 KiB: more than a MiB's worth written, the oldest went */
	for (uint32_t i = 0; i < 10; i++) {
		struct ch_result r = deny_result(TOE_DIR_IN, 1, 4096);

		toe_capture_data(c, 0x10001, TOE_DIR_IN, 1, big, 4096);
		toe_capture_deny(c, 0x10001, false, &r, big, "web-in", "ids");
		toe_capture_flush(c);
	}
	toe_capture_get(c, &st);
	ck_assert_uint_eq(st.written, TOE_CAP_SLOTS + 10);
	ck_assert_uint_gt(st.removed, 0);
	nfiles = list_pcaps(dir, newest, sizeof(newest), &total);
	ck_assert_uint_le(total, TOE_CAP_BYTES_MIN);
	ck_assert_int_eq(nfiles, (int)(st.written - st.removed));
	ck_assert_ptr_nonnull(strstr(newest, "-000018-ids-"));	/* the newest stays */
	toe_capture_destroy(c);
}
END_TEST

START_TEST(histories_are_bounded)
{
	struct toe_capture *c = toe_capture_create(1024, 4096, all_alive, NULL);
	struct toe_capture_stats st;
	uint8_t x[10] = { 0 };

	cfg_on(c, TOE_DIR_IN, disk, 1, TOE_CAP_BYTES_MIN);
	for (uint32_t i = 1; i <= TOE_CAP_HISTS + 5; i++)
		toe_capture_data(c, (1u << 16) | i, TOE_DIR_IN, 0, x, sizeof(x));
	toe_capture_get(c, &st);
	ck_assert_uint_eq(st.nohist, 5);
	/* an id out of the socket table's range is ignored */
	toe_capture_data(c, 0xffff0000u | 2000u, TOE_DIR_IN, 0, x, sizeof(x));
	toe_capture_get(c, &st);
	ck_assert_uint_eq(st.nohist, 5);
	toe_capture_destroy(c);
}
END_TEST

START_TEST(settings_are_validated)
{
	struct toe_capture *c = toe_capture_create(16, 4096, all_alive, NULL);
	struct toe_capture_cfg cfg = { .on = true, .kib = 4, .max_bytes = TOE_CAP_BYTES_MIN };
	struct toe_capture_stats st;

	snprintf(cfg.path, sizeof(cfg.path), "relative/dir");
	ck_assert_int_eq(toe_capture_set(c, TOE_DIR_IN, &cfg), -EINVAL);
	snprintf(cfg.path, sizeof(cfg.path), "%s/nope", disk);
	ck_assert_int_eq(toe_capture_set(c, TOE_DIR_IN, &cfg), -ENOENT);
	snprintf(cfg.path, sizeof(cfg.path), "/etc/passwd");
	ck_assert_int_eq(toe_capture_set(c, TOE_DIR_IN, &cfg), -ENOTDIR);
	snprintf(cfg.path, sizeof(cfg.path), "%s", disk);
	cfg.kib = 0;
	ck_assert_int_eq(toe_capture_set(c, TOE_DIR_IN, &cfg), -EINVAL);
	cfg.kib = TOE_CAP_KIB_MAX + 1;
	ck_assert_int_eq(toe_capture_set(c, TOE_DIR_IN, &cfg), -EINVAL);
	cfg.kib = 4;
	cfg.max_bytes = TOE_CAP_BYTES_MIN - 1;
	ck_assert_int_eq(toe_capture_set(c, TOE_DIR_IN, &cfg), -EINVAL);
	ck_assert_int_eq(toe_capture_set(c, 2, &cfg), -EINVAL);
	ck_assert(!toe_capture_on(c));		/* refusals changed nothing */
	cfg.max_bytes = TOE_CAP_BYTES_MIN;
	ck_assert_int_eq(toe_capture_set(c, TOE_DIR_IN, &cfg), 0);
	cfg.kib = 8;
	ck_assert_int_eq(toe_capture_set(c, TOE_DIR_OUT, &cfg), -EBUSY);
	cfg.kib = 4;
	ck_assert_int_eq(toe_capture_set(c, TOE_DIR_OUT, &cfg), 0);
	toe_capture_get(c, &st);
	ck_assert(st.cfg[0].on && st.cfg[1].on);
	cfg.on = false;
	ck_assert_int_eq(toe_capture_set(c, TOE_DIR_IN, &cfg), 0);
	ck_assert_int_eq(toe_capture_set(c, TOE_DIR_OUT, &cfg), 0);
	ck_assert(!toe_capture_on(c));
	toe_capture_destroy(c);
}
END_TEST

START_TEST(bad_record_is_refused)
{
	size_t room = toe_capture_pcap_max(4096);
	uint8_t *slot = calloc(1, toe_capture_slot_bytes(4096)), *out = malloc(room);

	ck_assert_uint_eq(toe_capture_build_pcap(slot, out, room), 0);	/* no magic */
	free(slot);
	free(out);
}
END_TEST


/* ---- full capture (toe_capall.c) ---- */

#define ALL_CONNS	3

struct all_parsed {
	uint8_t *pay[ALL_CONNS][2];	/* each direction's bytes by stream offset (ISN taken from the first) */
	size_t len[ALL_CONNS][2];	/* bytes seen */
	uint32_t isn[ALL_CONNS][2], next[ALL_CONNS][2];
	int gaps, files;
};

/* Every "-all.pcap" of @dir in name order: frames valid, payload by connection and direction. */
static void parse_all(const char *dir, struct all_parsed *out, size_t room)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);

	ck_assert_int_ge(n, 0);
	for (int k = 0; k < n; k++) {
		const char *nm = names[k]->d_name;
		size_t l = strlen(nm), len, off = TOE_PCAP_FILE_HDR;
		char p[512];
		uint8_t *b;

		if (nm[0] == '.' || l < 9 || strcmp(nm + l - 9, "-all.pcap")) {
			free(names[k]);
			continue;
		}
		snprintf(p, sizeof(p), "%s/%s", dir, nm);
		b = slurp(p, &len);
		ck_assert_uint_eq(*(const uint32_t *)b, 0xa1b23c4du);
		ck_assert_uint_le(len, TOE_CAPALL_FILE_BYTES);
		out->files++;
		while (off < len) {
			uint32_t caplen;
			const uint8_t *ip, *th;
			uint32_t seq, plen;
			int d, cn;

			memcpy(&caplen, b + off + 8, 4);
			ck_assert_uint_le(off + 16 + caplen, len);
			ip = b + off + 16 + 14;
			ck_assert_uint_eq(toe_pcap_csum(0, ip, 20), 0);
			check_l4_sum(ip, false);
			th = ip + 20;
			d = be16(th) == 80 ? 1 : 0;	/* from the VM's port 80: outbound */
			cn = (d ? be16(th + 2) : be16(th)) - 40001;	/* socket N: peer port 40000 + N */
			ck_assert_int_ge(cn, 0);
			ck_assert_int_lt(cn, ALL_CONNS);
			ck_assert_mem_eq(ip + (d ? 12 : 16), conn4.vm_addr, 4);
			seq = be32(th + 4);
			plen = caplen - 14 - 20 - 20;
			if (!out->len[cn][d] && !out->next[cn][d])
				out->isn[cn][d] = out->next[cn][d] = seq;
			if (seq != out->next[cn][d])
				out->gaps++;
			ck_assert_uint_le((size_t)(seq - out->isn[cn][d]) + plen, room);
			memcpy(out->pay[cn][d] + (seq - out->isn[cn][d]), th + 20, plen);
			out->len[cn][d] += plen;
			out->next[cn][d] = seq + plen;
			off += 16 + caplen;
		}
		ck_assert_uint_eq(off, len);
		free(b);
		free(names[k]);
	}
	free(names);
}

static void all_on(struct toe_capture *c, uint32_t dir, const char *path, uint64_t max)
{
	struct toe_capture_cfg cfg = { .on = true, .all = true, .kib = 4, .max_bytes = max };

	snprintf(cfg.path, sizeof(cfg.path), "%s", path);
	ck_assert_int_eq(toe_capture_set(c, dir, &cfg), 0);
}

START_TEST(full_capture_keeps_every_byte)
{
	struct toe_capture *c = toe_capture_create(16, 65536, all_alive, NULL);
	struct all_parsed *pp = calloc(1, sizeof(*pp));
	static uint8_t exp[ALL_CONNS][2][300000];
	struct toe_capture_stats st;
	size_t sent[ALL_CONNS][2] = { { 0 } }, total = 0;
	char dir[128];
	uint8_t chunk[70000];

	snprintf(dir, sizeof(dir), "%s/all", disk);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	all_on(c, TOE_DIR_IN, dir, 64ull << 20);
	/* three connections, both directions interleaved, chunks from 1 byte to more than a slot's piece */
	for (uint32_t i = 0; i < 60; i++) {
		uint32_t cn = i % ALL_CONNS, d = (i / ALL_CONNS) % 2, len = 1 + (i * 4099u) % 9000u;

		if (i == 30)
			len = sizeof(chunk);
		fill(chunk, len, (uint8_t)i);
		ck_assert_uint_le(sent[cn][d] + len, sizeof(exp[0][0]));
		memcpy(exp[cn][d] + sent[cn][d], chunk, len);
		sent[cn][d] += len;
		total += len;
		toe_capture_data(c, (7u << 16) | (cn + 1), d, i, chunk, len);
	}
	toe_capture_get(c, &st);
	ck_assert_uint_eq(st.all.bytes, total);
	ck_assert_uint_eq(st.all.dropped, 0);
	toe_capture_destroy(c);		/* the writer writes what is published, then stops */

	for (int cn = 0; cn < ALL_CONNS; cn++)
		for (int d = 0; d < 2; d++)
			pp->pay[cn][d] = calloc(1, sizeof(exp[0][0]));
	parse_all(dir, pp, sizeof(exp[0][0]));
	ck_assert_int_ge(pp->files, 2);		/* more than a file's worth: rotated */
	ck_assert_int_eq(pp->gaps, 0);
	for (int cn = 0; cn < ALL_CONNS; cn++)
		for (int d = 0; d < 2; d++) {
			ck_assert_uint_eq(pp->len[cn][d], sent[cn][d]);
			ck_assert_mem_eq(pp->pay[cn][d], exp[cn][d], sent[cn][d]);
			free(pp->pay[cn][d]);
		}
	free(pp);
}
END_TEST

START_TEST(full_capture_drops_when_behind_and_is_bounded)
{
	struct toe_capture *c = toe_capture_create(16, 65536, all_alive, NULL);
	struct all_parsed *pp = calloc(1, sizeof(*pp));
	struct toe_capture_cfg cfg = { .on = true, .all = true, .kib = 4,
				       .max_bytes = TOE_CAP_BYTES_MIN };
	struct toe_capture_stats st;
	static uint8_t chunk[60000];
	char dir[128], newest[256];
	uint64_t total, fed = 0;

	snprintf(dir, sizeof(dir), "%s/allbound", disk);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(cfg.path, sizeof(cfg.path), "%s", dir);
	/* one direction at a time has full capture */
	ck_assert_int_eq(toe_capture_set(c, TOE_DIR_OUT, &cfg), 0);
	ck_assert_int_eq(toe_capture_set(c, TOE_DIR_IN, &cfg), -EEXIST);
	cfg.all = false;
	ck_assert_int_eq(toe_capture_set(c, TOE_DIR_IN, &cfg), 0);	/* denials only: fine */
	fill(chunk, sizeof(chunk), 4);
	/* the writer held: every slot fills, then chunks are dropped and counted, nobody waits */
	toe_capture_pause(c, true);
	for (uint32_t i = 0; i < 100; i++, fed += sizeof(chunk))
		toe_capture_data(c, (1u << 16) | 1, TOE_DIR_IN, i, chunk, sizeof(chunk));
	toe_capture_get(c, &st);
	ck_assert_uint_gt(st.all.dropped, 0);
	ck_assert_uint_eq(st.all.bytes + st.all.dropped_bytes, fed);
	ck_assert_uint_le(st.all.bytes, (uint64_t)TOE_CAPALL_SLOTS * TOE_CAPALL_SLOT_BYTES);
	toe_capture_pause(c, false);
	toe_capture_destroy(c);

	/* about 4 MiB captured into a 1 MiB bound: the oldest files went */
	ck_assert_int_ge(list_pcaps(dir, newest, sizeof(newest), &total), 1);
	ck_assert_uint_le(total, TOE_CAP_BYTES_MIN);
	pp->pay[0][0] = calloc(1, 8u << 20);
	parse_all(dir, pp, 8u << 20);
	ck_assert_uint_gt(pp->len[0][0], 0);
	ck_assert_uint_lt(pp->len[0][0], st.all.bytes);
	free(pp->pay[0][0]);
	free(pp);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("toe_capture");
	TCase *t = tcase_create("capture");
	int rc;

	tcase_add_test(t, pcap_frames);
	tcase_add_test(t, deny_writes_history_and_trigger);
	tcase_add_test(t, alert_is_recorded_without_reset);
	tcase_add_test(t, udp_trigger_only);
	tcase_add_test(t, full_ring_drops_and_bound_removes_oldest);
	tcase_add_test(t, histories_are_bounded);
	tcase_add_test(t, settings_are_validated);
	tcase_add_test(t, bad_record_is_refused);
	tcase_add_test(t, full_capture_keeps_every_byte);
	tcase_add_test(t, full_capture_drops_when_behind_and_is_bounded);
	tcase_set_timeout(t, 30);
	suite_add_tcase(s, t);
	if (tc_tmpdir_make(base, sizeof(base)))
		return 1;
	snprintf(disk, sizeof(disk), "/var/tmp/tochain-test-XXXXXX");
	if (!mkdtemp(disk)) {
		perror("mkdtemp");
		tc_tmpdir_remove(base);
		return 1;
	}
	rc = tc_run_suite(s);
	tc_tmpdir_remove(base);
	tc_tmpdir_remove(disk);
	return rc;
}
