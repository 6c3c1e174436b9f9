// SPDX-License-Identifier: MIT
/*
 * Unit tests for the VNF kinds (vnfs/runtime/vnf_kind.c, vnf_sjudge.c,
 * vnf_mix.c, vnf_cli.c's calibration; the adapters vnfs/fw/fw_vnf.c,
 * vnfs/ids/ids_vnf.c, vnfs/waf/waf_vnf.c): each kind judging crafted
 * descriptors whose payloads sit in a synthetic data region (a buffer of
 * slots), through the same engine holder and per-thread state tochain-vnf
 * uses; rule reload with a good and a bad file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tochain/ch_flow.h"
#include "tc_check.h"
#include "vnf_serve.h"
#include "vnf_kind.h"
#include "vnf_mix.h"
#include "waf_vnf.h"

static char base[64];
static struct vnf_engines waf_pl1;	/* the CRS, loaded once (slow) in main */

/* The synthetic data region: slots of 4 KiB the descriptors point into. */
#define NSLOTS	64
#define SLOT	4096
static uint8_t region[NSLOTS][SLOT];
static unsigned int next_slot;

static const char *write_file(const char *name, const char *text)
{
	static char paths[16][128];
	static unsigned int n;
	char *p = paths[n++ % 16];
	FILE *f;

	snprintf(p, 128, "%s/%s", base, name);
	f = fopen(p, "we");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	return p;
}

/*
 * A descriptor of @len bytes of @data at stream offset @seq of connection
 * @conn, from @src:@sport to @dst:@dport (last address byte; 10.0.0.x is the
 * VM, 198.51.100.x outside), on chain @chain.
 */
static struct vnf_pkt mk(uint64_t conn, uint32_t chain, uint64_t seq, const void *data,
			 uint32_t len, uint8_t src, uint16_t sport, uint8_t dst, uint16_t dport)
{
	struct vnf_pkt pk;
	uint8_t *slot = region[next_slot++ % NSLOTS];

	ck_assert_uint_le(len, SLOT);
	memcpy(slot, data, len);
	memset(&pk, 0, sizeof(pk));
	pk.d.conn_id = conn;
	pk.d.seq = seq;
	pk.d.chain = chain;
	pk.d.family = 4;
	pk.d.l4proto = 6;
	pk.d.tcp_flags = 0x18;
	pk.d.flow = TCR_FLOW_NONE;
	pk.d.len = len;
	pk.d.sport = sport;
	pk.d.dport = dport;
	pk.d.saddr[0] = src < 100 ? 10 : 198, pk.d.saddr[1] = src < 100 ? 0 : 51;
	pk.d.saddr[2] = src < 100 ? 0 : 100, pk.d.saddr[3] = src;
	pk.d.daddr[0] = dst < 100 ? 10 : 198, pk.d.daddr[1] = dst < 100 ? 0 : 51;
	pk.d.daddr[2] = dst < 100 ? 0 : 100, pk.d.daddr[3] = dst;
	pk.data = slot;
	pk.len = len;
	return pk;
}

/* Client 198.51.100.7:@cport -> server 10.0.0.1:80, inbound (chain 0). */
static struct vnf_pkt to_srv(uint64_t conn, uint64_t seq, const char *s, uint16_t cport)
{
	return mk(conn, 0, seq, s, (uint32_t)strlen(s), 107, cport, 1, 80);
}

static void engines(struct vnf_engines *es, const char *kind, const char *rules)
{
	struct vnf_kind_opts o = { .rules = rules };
	char err[512];
	int r = vnf_engines_init(es, vnf_kind_find(kind), &o, err, sizeof(err));

	ck_assert_msg(r == 0, "%s engine: %s", kind, err);
}

static uint32_t judge(struct vnf_kthread *kt, const struct vnf_pkt *pk, uint32_t *rule)
{
	return vnf_kthread_judge(kt, pk, NULL, rule);
}

/* ---- kind registry ---- */
START_TEST(test_find)
{
	ck_assert_ptr_eq(vnf_kind_find("fw"), &vnf_kind_fw);
	ck_assert_ptr_eq(vnf_kind_find("ids"), &vnf_kind_ids);
	ck_assert_ptr_eq(vnf_kind_find("waf"), &vnf_kind_waf);
	ck_assert_ptr_eq(vnf_kind_find("null"), &vnf_kind_null);
	ck_assert_ptr_null(vnf_kind_find("nope"));
	ck_assert_ptr_null(vnf_kind_find(NULL));
	ck_assert(vnf_kind_fw.needs_rules && vnf_kind_ids.needs_rules);
	ck_assert(!vnf_kind_waf.needs_rules && !vnf_kind_null.needs_rules);
}
END_TEST

/* ---- fw: 5-tuple, direction, flow state ---- */
static const char fw_rules[] =
	"policy in drop\n"
	"policy out accept\n"
	"accept in ct established\n"				/* rule 1 */
	"accept in tcp dport 80 from 198.51.100.0/24 ct new\n"	/* rule 2 */
	"reject in tcp dport 22\n"				/* rule 3 */
	"drop out tcp dport 25\n";				/* rule 4 */

START_TEST(test_fw_tuple_state)
{
	struct vnf_engines es;
	struct vnf_kthread kt;
	struct vnf_flow f = { .state = CH_FLOW_SYN };
	struct vnf_pkt pk;
	uint32_t rule;

	engines(&es, "fw", write_file("fw.rules", fw_rules));
	ck_assert_int_eq(vnf_kthread_init(&kt, &es), 0);
	/* New connection to port 80 from the allowed net: rule 2 accepts. */
	pk = to_srv(1, 0, "GET /", 40000);
	ck_assert_uint_eq(vnf_kthread_judge(&kt, &pk, &f, &rule), VNF_VERDICT_ALLOW);
	/* From elsewhere, new: the in policy drops (rule 0). */
	pk = mk(2, 0, 0, "x", 1, 9, 40000, 1, 80);
	pk.d.saddr[0] = 192, pk.d.saddr[1] = 0, pk.d.saddr[2] = 2;
	ck_assert_uint_eq(vnf_kthread_judge(&kt, &pk, &f, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 0);
	/* The same once the flow table says established: rule 1. */
	f.state = CH_FLOW_ESTABLISHED;
	ck_assert_uint_eq(vnf_kthread_judge(&kt, &pk, &f, &rule), VNF_VERDICT_ALLOW);
	/* Without a flow entry: seq 0 is new, later bytes established. */
	ck_assert_uint_eq(judge(&kt, &pk, &rule), VNF_VERDICT_DENY);
	pk.d.seq = 100;
	ck_assert_uint_eq(judge(&kt, &pk, &rule), VNF_VERDICT_ALLOW);
	/* ssh: reject, rule 3. */
	f.state = CH_FLOW_SYN;
	pk = to_srv(3, 0, "SSH-2.0", 40001);
	pk.d.dport = 22;
	ck_assert_uint_eq(vnf_kthread_judge(&kt, &pk, &f, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 3);
	/* Out chain (chain 1): smtp out dropped by rule 4, the rest accepted. */
	pk = mk(4, 1, 0, "EHLO", 4, 1, 40002, 107, 25);
	ck_assert_uint_eq(vnf_kthread_judge(&kt, &pk, &f, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 4);
	pk.d.dport = 443;
	ck_assert_uint_eq(vnf_kthread_judge(&kt, &pk, &f, &rule), VNF_VERDICT_ALLOW);
	/* The same 443 packet on the in chain: the in policy. */
	pk.d.chain = 0;
	ck_assert_uint_eq(vnf_kthread_judge(&kt, &pk, &f, &rule), VNF_VERDICT_DENY);
	vnf_kthread_fini(&kt);
	vnf_engines_fini(&es);
}
END_TEST

/* ---- ids ---- */
static const char ids_rules[] =
	"drop tcp any any -> any any (msg:\"split pattern\"; flow:to_server; "
	"content:\"EVILPATTERN\"; sid:1001; rev:1;)\n"
	"drop tcp any any -> any any (msg:\"twice\"; flow:to_server; content:\"ABAB\"; sid:1002;)\n"
	"alert tcp any any -> any any (msg:\"just looking\"; flow:to_server; content:\"peek\"; "
	"sid:1003;)\n"
	"drop tcp any any -> any any (msg:\"response leak\"; flow:to_client; "
	"content:\"root:x:0:0\"; sid:1004;)\n"
	"drop udp any any -> any 53 (msg:\"dns\"; flow:to_server; "
	"content:\"EVILNAME\"; sid:1005;)\n";

START_TEST(test_ids_split_pattern)
{
	struct vnf_engines es;
	struct vnf_kthread kt;
	struct vnf_pkt a, b;
	uint32_t rule;

	engines(&es, "ids", write_file("ids.rules", ids_rules));
	ck_assert_int_eq(vnf_kthread_init(&kt, &es), 0);
	/* The pattern cut across two descriptors of one connection. */
	a = to_srv(10, 0, "hello EVILPAT", 41000);
	b = to_srv(10, 13, "TERN world", 41000);
	ck_assert_uint_eq(judge(&kt, &a, &rule), VNF_VERDICT_ALLOW);
	ck_assert_uint_eq(judge(&kt, &b, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 1001);
	/* The halves on two connections: nothing. */
	a = to_srv(11, 0, "hello EVILPAT", 41001);
	b = to_srv(12, 0, "TERN world", 41002);
	ck_assert_uint_eq(judge(&kt, &a, &rule), VNF_VERDICT_ALLOW);
	ck_assert_uint_eq(judge(&kt, &b, &rule), VNF_VERDICT_ALLOW);
	/* An alert rule lets the data through with an Alert: its sid and msg (once per flow). */
	a = to_srv(13, 0, "just a peek", 41003);
	ck_assert_uint_eq(judge(&kt, &a, &rule), VNF_VERDICT_ALERT);
	ck_assert_uint_eq(rule, 1003);
	{
		const char *msg = NULL;
		uint32_t n = es.kind->alert_msg(kt.ts, &msg);

		ck_assert_uint_eq(n, strlen("just looking"));
		ck_assert_mem_eq(msg, "just looking", n);
	}
	a = to_srv(13, 11, " another peek", 41003);
	ck_assert_uint_eq(judge(&kt, &a, &rule), VNF_VERDICT_ALLOW);
	/* Server -> client bytes (out chain, sport 80) use the to_client rules. */
	a = to_srv(14, 0, "GET /passwd HTTP/1.1\r\n\r\n", 41004);
	b = mk(14, 1, 0, "root:x:0:0:root", 15, 1, 80, 107, 41004);
	ck_assert_uint_eq(judge(&kt, &a, &rule), VNF_VERDICT_ALLOW);
	ck_assert_uint_eq(judge(&kt, &b, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 1004);
	/* The same bytes client -> server match no to_client rule. */
	a = to_srv(15, 0, "root:x:0:0:root", 41005);
	ck_assert_uint_eq(judge(&kt, &a, &rule), VNF_VERDICT_ALLOW);
	vnf_kthread_fini(&kt);
	vnf_engines_fini(&es);
}
END_TEST

START_TEST(test_ids_offsets)
{
	struct vnf_engines es;
	struct vnf_kthread kt;
	struct vnf_pkt p;
	uint32_t rule;

	engines(&es, "ids", write_file("ids.rules", ids_rules));
	ck_assert_int_eq(vnf_kthread_init(&kt, &es), 0);
	/* A retransmission is not inspected again: "AB" twice is not "ABAB". */
	p = to_srv(20, 0, "xxAB", 42000);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	/* An overlap: only its new bytes count ("xxAB" + "AB|AB" -> "xxABAB"). */
	p = to_srv(20, 2, "ABAB", 42000);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 1002);
	/* A gap (bytes never seen) is refused, fail closed. */
	p = to_srv(21, 0, "abc", 42001);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	p = to_srv(21, 10, "def", 42001);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, VNF_RULE_STREAM_GAP);
	/* A connection first seen mid-stream too. */
	p = to_srv(22, 5000, "abc", 42002);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, VNF_RULE_STREAM_GAP);
	/* A datagram: not a stream; tcp rules do not apply, udp ones do. */
	p = to_srv(23, 777, "EVILPATTERN", 42003);
	p.d.l4proto = 17;
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	p = mk(24, 0, 0, "q EVILNAME", 10, 107, 42004, 1, 53);
	p.d.l4proto = 17;
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 1005);
	p = mk(24, 0, 0, "q goodname", 10, 107, 42004, 1, 53);
	p.d.l4proto = 17;
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	/* the answer (from port 53) is to_client: sid 1005 does not apply */
	p = mk(24, 1, 0, "a EVILNAME", 10, 1, 53, 107, 42004);
	p.d.l4proto = 17;
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	p = to_srv(23, 777, "EVILPATTERN", 42003);
	p.d.l4proto = 6;
	p.d.seq = 0;
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 1001);
	vnf_kthread_fini(&kt);
	vnf_engines_fini(&es);
}
END_TEST

/* A flow entry's new generation is a new connection: no match across it. */
START_TEST(test_ids_generation)
{
	struct vnf_engines es;
	struct vnf_kthread kt;
	struct vnf_flow f = { .state = CH_FLOW_ESTABLISHED, .gen = 1 };
	struct vnf_pkt a, b;
	uint32_t rule;

	engines(&es, "ids", write_file("ids.rules", ids_rules));
	ck_assert_int_eq(vnf_kthread_init(&kt, &es), 0);
	a = to_srv(30, 0, "hello EVILPAT", 43000);
	ck_assert_uint_eq(vnf_kthread_judge(&kt, &a, &f, &rule), VNF_VERDICT_ALLOW);
	f.gen = 2;	/* the entry was reused: this is offset 0 of another stream */
	b = to_srv(30, 0, "TERN world", 43000);
	ck_assert_uint_eq(vnf_kthread_judge(&kt, &b, &f, &rule), VNF_VERDICT_ALLOW);
	/* Closed: the state goes; the next bytes start a new stream at 0. */
	f.state = CH_FLOW_CLOSED;
	b = to_srv(30, 10, "x", 43000);
	ck_assert_uint_eq(vnf_kthread_judge(&kt, &b, &f, &rule), VNF_VERDICT_ALLOW);
	f.state = CH_FLOW_ESTABLISHED;
	a = to_srv(30, 0, "EVILPATTERN", 43000);
	ck_assert_uint_eq(vnf_kthread_judge(&kt, &a, &f, &rule), VNF_VERDICT_DENY);
	vnf_kthread_fini(&kt);
	vnf_engines_fini(&es);
}
END_TEST

/* 200 connections interleaved chunk by chunk, every 7th carries the pattern. */
START_TEST(test_ids_interleaved)
{
	struct vnf_engines es;
	struct vnf_kthread kt;
	static const char *const parts[] = { "GET /a HTTP/1.1\r\nX: ", "EVILPAT", "TERN\r\n\r\n" };
	static const char *const clean[] = { "GET /a HTTP/1.1\r\nX: ", "EVILPAT", "HWAY\r\n\r\n" };
	uint64_t seq[200] = { 0 };
	uint32_t rule, denied = 0;

	engines(&es, "ids", write_file("ids.rules", ids_rules));
	ck_assert_int_eq(vnf_kthread_init(&kt, &es), 0);
	for (int k = 0; k < 3; k++)
		for (int c = 0; c < 200; c++) {
			const char *s = (c % 7 == 0 ? parts : clean)[k];
			struct vnf_pkt p = to_srv(1000 + (uint64_t)c, seq[c], s,
						  (uint16_t)(50000 + c));
			uint32_t v = judge(&kt, &p, &rule);

			seq[c] += strlen(s);
			if (k < 2 || c % 7) {
				ck_assert_uint_eq(v, VNF_VERDICT_ALLOW);
			} else {
				ck_assert_uint_eq(v, VNF_VERDICT_DENY);
				ck_assert_uint_eq(rule, 1001);
				denied++;
			}
		}
	ck_assert_uint_eq(denied, 29);
	vnf_kthread_fini(&kt);
	vnf_engines_fini(&es);
}
END_TEST

/* The mix's attacks against one rule per family: expected sid, no false positive. */
static const char ids_family_rules[] =
	"drop tcp any any -> any any (msg:\"sqli\"; flow:to_server; content:\"union\"; http_uri; "
	"nocase; pcre:\"/union\\s+select/Ui\"; sid:2001;)\n"
	"drop tcp any any -> any any (msg:\"xss\"; flow:to_server; content:\"<script\"; http_uri; "
	"nocase; sid:2002;)\n"
	"drop tcp any any -> any any (msg:\"traversal\"; flow:to_server; content:\"../../\"; "
	"http_uri; sid:2003;)\n"
	"drop tcp any any -> any any (msg:\"rce\"; flow:to_server; content:\";uname\"; http_uri; "
	"sid:2004;)\n"
	"drop tcp any any -> any any (msg:\"cl+te\"; flow:to_server; "
	"content:\"Transfer-Encoding|3a|\"; nocase; content:\"Content-Length|3a|\"; nocase; "
	"sid:2005;)\n";

static void run_mix(struct vnf_kthread *kt, uint64_t n, uint32_t seg, bool waf)
{
	static char req[VNF_MIX_MAX];
	uint32_t seen[VNF_MIX_NFAMILIES] = { 0 };

	for (uint64_t i = 0; i < n; i++) {
		enum vnf_mix_family fam;
		uint32_t len = vnf_mix_request(i, req, &fam), v = VNF_VERDICT_ALLOW, rule = 0;

		ck_assert_uint_le(len, VNF_MIX_MAX);
		for (uint32_t off = 0; off < len && v == VNF_VERDICT_ALLOW; off += seg) {
			struct vnf_pkt p = mk(5000 + i, 0, off, req + off,
					      len - off < seg ? len - off : seg, 107,
					      (uint16_t)(30000 + i), 1, 80);

			v = judge(kt, &p, &rule);
		}
		kt->es->kind->forget(kt->ts, 5000 + i);
		if (fam == VNF_MIX_CLEAN) {
			ck_assert_msg(v == VNF_VERDICT_ALLOW, "clean request %llu denied by %u:\n%.*s",
				      (unsigned long long)i, rule, (int)len, req);
			continue;
		}
		seen[fam]++;
		ck_assert_msg(v == VNF_VERDICT_DENY, "%s attack %llu allowed",
			      vnf_mix_family_name(fam), (unsigned long long)i);
		if (!waf) {
			ck_assert_uint_eq(rule, 2000 + fam);
		} else {
			static const unsigned int fam_id[] = { 0, 942, 941, 930, 932, 920 };

			ck_assert_msg(rule / 1000 == fam_id[fam], "%s attack denied by rule %u",
				      vnf_mix_family_name(fam), rule);
		}
	}
	for (int f = 1; f < VNF_MIX_NFAMILIES; f++)
		ck_assert_uint_gt(seen[f], 0);
}

START_TEST(test_ids_mix_families)
{
	struct vnf_engines es;
	struct vnf_kthread kt;

	engines(&es, "ids", write_file("fam.rules", ids_family_rules));
	ck_assert_int_eq(vnf_kthread_init(&kt, &es), 0);
	run_mix(&kt, 400, 300, false);
	run_mix(&kt, 100, 7, false);	/* cut into 7-byte descriptors */
	vnf_kthread_fini(&kt);
	vnf_engines_fini(&es);
}
END_TEST

/* ---- waf ---- */
#define HDRS "Host: www.example.com\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64; " \
	"rv:115.0) Gecko/20100101 Firefox/115.0\r\nAccept: text/html\r\n" \
	"Accept-Language: en-US,en;q=0.5\r\n"

START_TEST(test_waf_pipelined_split)
{
	static const char clean2[] = "GET /index.html HTTP/1.1\r\n" HDRS "\r\n"
				     "GET /news/today?page=2 HTTP/1.1\r\n" HDRS "\r\n";
	static const char attack2[] = "GET /index.html HTTP/1.1\r\n" HDRS "\r\n"
				      "GET /news?id=1+UNION+SELECT+username,password+FROM+users"
				      " HTTP/1.1\r\n" HDRS "\r\n";
	struct vnf_kthread kt;
	uint32_t rule;

	ck_assert_int_eq(vnf_kthread_init(&kt, &waf_pl1), 0);
	/* Cut in the middle of the second request's headers, at several points. */
	for (size_t cut = sizeof(clean2) / 2 + 30; cut < sizeof(clean2) - 10; cut += 17) {
		uint64_t c = 100 + cut;
		struct vnf_pkt a = mk(c, 0, 0, clean2, (uint32_t)cut, 107, 40000, 1, 80);
		struct vnf_pkt b = mk(c, 0, cut, clean2 + cut,
				      (uint32_t)(sizeof(clean2) - 1 - cut), 107, 40000, 1, 80);

		ck_assert_uint_eq(judge(&kt, &a, &rule), VNF_VERDICT_ALLOW);
		ck_assert_uint_eq(judge(&kt, &b, &rule), VNF_VERDICT_ALLOW);
	}
	for (size_t cut = sizeof(attack2) - 60; cut < sizeof(attack2) - 5; cut += 11) {
		uint64_t c = 1000 + cut;
		struct vnf_pkt a = mk(c, 0, 0, attack2, (uint32_t)cut, 107, 40001, 1, 80);
		struct vnf_pkt b = mk(c, 0, cut, attack2 + cut,
				      (uint32_t)(sizeof(attack2) - 1 - cut), 107, 40001, 1, 80);

		ck_assert_uint_eq(judge(&kt, &a, &rule), VNF_VERDICT_ALLOW);
		ck_assert_uint_eq(judge(&kt, &b, &rule), VNF_VERDICT_DENY);
		ck_assert_msg(rule / 1000 == 942, "denied by %u", rule);
	}
	vnf_kthread_fini(&kt);
}
END_TEST

START_TEST(test_waf_mix_families)
{
	struct vnf_kthread kt;

	ck_assert_int_eq(vnf_kthread_init(&kt, &waf_pl1), 0);
	run_mix(&kt, 60, 1448, true);
	run_mix(&kt, 60, 97, true);
	vnf_kthread_fini(&kt);
}
END_TEST

/* A deny names the attack family rule, not the protocol warning that
 * matched first nor the anomaly score rule. */
START_TEST(test_waf_rule_named)
{
	struct waf_verdict v = { .rule_id = 949110, .n_matched = 4,
				 .matched = { 920350, 942100, 942190, 949110 } };

	ck_assert_uint_eq(waf_vnf_rule(&v), 942100);
	v.n_matched = 2;
	v.matched[1] = 949110;
	ck_assert_uint_eq(waf_vnf_rule(&v), 920350);	/* no attack rule: the first other */
	/* A response's deny: the data-leakage rule, not the request's warning. */
	v.n_matched = 3;
	v.matched[1] = 951220;
	v.matched[2] = 959100;
	ck_assert_uint_eq(waf_vnf_rule(&v), 951220);
	v.n_matched = 1;
	v.matched[0] = 949110;
	ck_assert_uint_eq(waf_vnf_rule(&v), 949110);
	v.n_matched = 0;
	v.rule_id = 0;
	ck_assert_uint_eq(waf_vnf_rule(&v), VNF_RULE_ENGINE);
}
END_TEST

START_TEST(test_waf_rules_file)
{
	struct vnf_engines es;
	struct vnf_kthread kt;
	struct vnf_kind_opts o = { 0 };
	struct vnf_pkt p;
	char err[512];
	uint32_t rule;

	/* A ModSecurity rule file (no CRS needed for this: crs_dir none via config). */
	write_file("site.conf", "SecRule REQUEST_URI \"@contains /forbidden\" "
		   "\"id:777001,phase:1,deny,status:403,log,msg:'site rule'\"\n");
	o.rules = write_file("waf.conf", "# config\ncrs_dir = none\nrules = site.conf\n");
	ck_assert_int_eq(vnf_engines_init(&es, &vnf_kind_waf, &o, err, sizeof(err)), 0);
	ck_assert_int_eq(vnf_kthread_init(&kt, &es), 0);
	p = to_srv(1, 0, "GET /forbidden/x HTTP/1.1\r\nHost: a\r\n\r\n", 40000);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 777001);
	p = to_srv(2, 0, "GET /fine HTTP/1.1\r\nHost: a\r\n\r\n", 40001);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	/* A datagram is not an HTTP stream: passed uninspected. */
	p = to_srv(3, 0, "GET /forbidden/x HTTP/1.1\r\nHost: a\r\n\r\n", 40002);
	p.d.l4proto = 17;
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	vnf_kthread_fini(&kt);
	vnf_engines_fini(&es);
	/* A bad config file: refused with its line. */
	o.rules = write_file("bad.conf", "crs_dir = none\nparanoia_level = 9\n");
	ck_assert_int_ne(vnf_engines_init(&es, &vnf_kind_waf, &o, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "bad.conf:2") != NULL, "%s", err);
}
END_TEST

/* The waf kind's answer for the Deny just judged, as a string; its length. */
static uint32_t answer_text(struct vnf_kthread *kt, char *text, uint32_t *inc)
{
	const uint8_t *ans;
	uint32_t n = vnf_kind_waf.answer(kt->ts, &ans, inc);

	ck_assert_uint_gt(n, 0);
	ck_assert_uint_le(n, VNF_ANSWER_MAX);
	memcpy(text, ans, n);
	text[n] = '\0';
	return n;
}

/*
 * The answer of a waf Deny: a request denied before any byte of it passed
 * gets a 403 page with an incident id (the configured page), a protocol
 * violation a 400; a request whose head already passed gets none (reset).
 */
START_TEST(test_waf_answer)
{
	struct vnf_engines es;
	struct vnf_kthread kt;
	struct vnf_kind_opts o = { 0 };
	struct vnf_pkt p;
	const uint8_t *ans;
	uint32_t rule, inc = 0, inc2 = 0, n;
	char err[512], text[VNF_ANSWER_MAX + 1];

	write_file("site.conf", "SecRule ARGS \"@contains evil\" "
		   "\"id:777002,phase:2,deny,status:403,log,msg:'site rule'\"\n");
	write_file("page.html", "<p>@STATUS@ #@INCIDENT@</p>\n");
	o.rules = write_file("waf.conf", "crs_dir = none\nrules = site.conf\ndeny_page = page.html\n");
	ck_assert_int_eq(vnf_engines_init(&es, &vnf_kind_waf, &o, err, sizeof(err)), 0);
	ck_assert_int_eq(vnf_kthread_init(&kt, &es), 0);
	ck_assert_ptr_nonnull(vnf_kind_waf.answer);
	/* An allowed chunk leaves no answer. */
	p = to_srv(1, 0, "GET /fine HTTP/1.1\r\nHost: a\r\n\r\n", 40000);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	ck_assert_uint_eq(vnf_kind_waf.answer(kt.ts, &ans, &inc), 0);
	/* A whole denied request: 403, the page filled in, the incident in both places. */
	p = to_srv(2, 0, "GET /x?a=evil HTTP/1.1\r\nHost: a\r\n\r\n", 40001);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 777002);
	answer_text(&kt, text, &inc);
	ck_assert_uint_ne(inc, 0);
	ck_assert_msg(!strncmp(text, "HTTP/1.1 403 Forbidden\r\n", 24), "%s", text);
	{
		char want[64];

		snprintf(want, sizeof(want), "X-Incident-Id: %08x\r\n", inc);
		ck_assert_msg(strstr(text, want) != NULL, "%s", text);
		snprintf(want, sizeof(want), "\r\n\r\n<p>403 Forbidden #%08x</p>\n", inc);
		ck_assert_msg(strstr(text, want) && !strcmp(strstr(text, want), want), "%s", text);
	}
	/* Handed out once. */
	ck_assert_uint_eq(vnf_kind_waf.answer(kt.ts, &ans, &inc2), 0);
	/* A later chunk of the denied connection: still a Deny, no new answer. */
	p = to_srv(2, p.len, "GET / HTTP/1.1\r\n\r\n", 40001);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(vnf_kind_waf.answer(kt.ts, &ans, &inc2), 0);
	/* A protocol violation: 400 and a fresh incident id. */
	p = to_srv(3, 0, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: zz\r\n\r\n", 40002);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	n = vnf_kind_waf.answer(kt.ts, &ans, &inc2);
	ck_assert_uint_gt(n, 0);
	ck_assert_uint_ne(inc2, inc);
	ck_assert(!memcmp(ans, "HTTP/1.1 400 Bad Request\r\n", 26));
	/* The head passed in an earlier chunk: the server may have answered; reset. */
	p = to_srv(4, 0, "POST /f HTTP/1.1\r\nHost: a\r\nContent-Type: application/x-www-form-urlencoded\r\n"
		   "Content-Length: 6\r\n\r\n", 40003);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	p = to_srv(4, p.len, "a=evil", 40003);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 777002);
	ck_assert_uint_eq(vnf_kind_waf.answer(kt.ts, &ans, &inc), 0);
	/*
	 * A reload: a connection opened before it keeps its engine's page
	 * (the old engine outlives the thread's reference through the flow),
	 * a new one gets the new page.
	 */
	p = to_srv(5, 0, "GET /fine HTTP/1.1\r\nHost: a\r\n\r\n", 40004);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	write_file("page.html", "<p>new @INCIDENT@</p>\n");
	ck_assert_int_eq(vnf_engines_reload(&es, err, sizeof(err)), 0);
	vnf_kthread_refresh(&kt);
	p = to_srv(5, p.len, "GET /x?a=evil HTTP/1.1\r\nHost: a\r\n\r\n", 40004);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	answer_text(&kt, text, &inc);
	ck_assert_msg(strstr(text, "<p>403 Forbidden #") != NULL, "%s", text);
	p = to_srv(6, 0, "GET /x?a=evil HTTP/1.1\r\nHost: a\r\n\r\n", 40005);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	answer_text(&kt, text, &inc);
	ck_assert_msg(strstr(text, "<p>new ") != NULL, "%s", text);
	vnf_kthread_fini(&kt);
	vnf_engines_fini(&es);
	/* A page that cannot fit an answer is refused with its line. */
	{
		char big[1500];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		write_file("big.html", big);
	}
	o.rules = write_file("bigpage.conf", "crs_dir = none\n\ndeny_page = big.html\n");
	ck_assert_int_ne(vnf_engines_init(&es, &vnf_kind_waf, &o, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "bigpage.conf:3: deny_page:") && strstr(err, "answer limit"), "%s", err);
}
END_TEST

/* ---- reload ---- */
START_TEST(test_reload_ids)
{
	struct vnf_engines es;
	struct vnf_kthread kt;
	struct vnf_pkt p;
	const char *path = write_file("r.rules", "drop tcp any any -> any any (msg:\"one\"; "
				      "content:\"FIRSTWORD\"; sid:1;)\n");
	char err[512];
	uint32_t rule;

	engines(&es, "ids", path);
	ck_assert_int_eq(vnf_kthread_init(&kt, &es), 0);
	/* Connection 1 opens on the first rules. */
	p = to_srv(1, 0, "hello ", 40000);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	write_file("r.rules", "drop tcp any any -> any any (msg:\"two\"; "
		   "content:\"SECONDWORD\"; sid:2;)\n");
	ck_assert_int_eq(vnf_engines_reload(&es, err, sizeof(err)), 0);
	vnf_kthread_refresh(&kt);
	ck_assert_uint_eq(kt.gen, 2);
	/* New connections: the new rules. */
	p = to_srv(2, 0, "SECONDWORD", 40001);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 2);
	p = to_srv(3, 0, "FIRSTWORD", 40002);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	/* Connection 1 keeps the rules it started with until it ends. */
	p = to_srv(1, 6, "FIRSTWORD", 40000);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 1);
	/* A bad file: refused with file:line, the rules in force stay. */
	write_file("r.rules", "drop tcp any any -> any any (msg:\"ok\"; content:\"X\"; sid:5;)\n"
		   "drop tcp any any -> any any (msg:\"bad\"; content:\"Y\"; bogus_option; "
		   "sid:6;)\n");
	ck_assert_int_ne(vnf_engines_reload(&es, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "r.rules:2") != NULL, "%s", err);
	vnf_kthread_refresh(&kt);
	ck_assert_uint_eq(kt.gen, 2);
	p = to_srv(4, 0, "SECONDWORD", 40003);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 2);
	vnf_kthread_fini(&kt);
	vnf_engines_fini(&es);
}
END_TEST

START_TEST(test_reload_fw)
{
	struct vnf_engines es;
	struct vnf_kthread kt;
	struct vnf_pkt p;
	const char *path = write_file("f.rules", "drop in tcp dport 80\n");
	struct vnf_engine *old;
	char err[512];
	uint32_t rule;

	engines(&es, "fw", path);
	ck_assert_int_eq(vnf_kthread_init(&kt, &es), 0);
	p = to_srv(1, 0, "x", 40000);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 1);
	old = kt.eng;
	write_file("f.rules", "accept in tcp dport 22\naccept in tcp dport 80\n");
	ck_assert_int_eq(vnf_engines_reload(&es, err, sizeof(err)), 0);
	/* Until the thread's next batch, it still holds the old engine alive. */
	ck_assert_uint_eq(old->refs, 1);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	vnf_kthread_refresh(&kt);
	ck_assert_ptr_ne(kt.eng, old);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	/* Bad file: file:line, old rules kept. */
	write_file("f.rules", "accept in tcp dport 22\naccept in tcp dport 99999\n");
	ck_assert_int_ne(vnf_engines_reload(&es, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "f.rules:2") != NULL, "%s", err);
	vnf_kthread_refresh(&kt);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	vnf_kthread_fini(&kt);
	vnf_engines_fini(&es);
}
END_TEST

START_TEST(test_reload_waf)
{
	struct vnf_engines es;
	struct vnf_kthread kt;
	struct vnf_kind_opts o = { 0 };
	struct vnf_pkt p;
	char err[512];
	uint32_t rule;

	/* No CRS: one site rule per generation, so that this test is fast. */
	write_file("site.conf", "SecRule REQUEST_URI \"@contains /old\" "
		   "\"id:777001,phase:1,deny,status:403,log\"\n");
	o.rules = write_file("w.conf", "crs_dir = none\nrules = site.conf\n");
	ck_assert_int_eq(vnf_engines_init(&es, &vnf_kind_waf, &o, err, sizeof(err)), 0);
	ck_assert_int_eq(vnf_kthread_init(&kt, &es), 0);
	/* Connection 1: half a request on the first rules. */
	p = to_srv(1, 0, "GET /old/x HTTP/1.1\r\nHo", 40000);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	write_file("site.conf", "SecRule REQUEST_URI \"@contains /new\" "
		   "\"id:777002,phase:1,deny,status:403,log\"\n");
	ck_assert_int_eq(vnf_engines_reload(&es, err, sizeof(err)), 0);
	vnf_kthread_refresh(&kt);
	p = to_srv(2, 0, "GET /new/x HTTP/1.1\r\nHost: a\r\n\r\n", 40001);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 777002);
	p = to_srv(3, 0, "GET /old/x HTTP/1.1\r\nHost: a\r\n\r\n", 40002);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_ALLOW);
	/* Connection 1 finishes its request on the rules it started with. */
	p = to_srv(1, 23, "st: a\r\n\r\n", 40000);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 777001);
	/* A rule file that does not parse: refused, the rules stay. */
	write_file("site.conf", "SecRule REQUEST_URI \"@contains /x\" \"id:777003,phase:1,deny\"\n"
		   "SecBogusDirective On\n");
	ck_assert_int_ne(vnf_engines_reload(&es, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "site.conf") != NULL, "%s", err);
	vnf_kthread_refresh(&kt);
	p = to_srv(4, 0, "GET /new/x HTTP/1.1\r\nHost: a\r\n\r\n", 40003);
	ck_assert_uint_eq(judge(&kt, &p, &rule), VNF_VERDICT_DENY);
	ck_assert_uint_eq(rule, 777002);
	vnf_kthread_fini(&kt);
	vnf_engines_fini(&es);
}
END_TEST

START_TEST(test_bad_files)
{
	struct vnf_engines es;
	struct vnf_kind_opts o = { 0 };
	char err[512];

	/* Required rules. */
	ck_assert_int_ne(vnf_engines_init(&es, &vnf_kind_fw, &o, err, sizeof(err)), 0);
	ck_assert_int_ne(vnf_engines_init(&es, &vnf_kind_ids, &o, err, sizeof(err)), 0);
	/* Missing file. */
	o.rules = "/nonexistent/x.rules";
	ck_assert_int_eq(vnf_engines_init(&es, &vnf_kind_fw, &o, err, sizeof(err)), -ENOENT);
	ck_assert_int_eq(vnf_engines_init(&es, &vnf_kind_ids, &o, err, sizeof(err)), -ENOENT);
	/* An unsupported ids option, reported at its line. */
	o.rules = write_file("u.rules", "# c\n\ndrop tcp any any -> any any (msg:\"m\"; "
			     "content:\"a\"; threshold:type limit; sid:9;)\n");
	ck_assert_int_eq(vnf_engines_init(&es, &vnf_kind_ids, &o, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "u.rules:3") != NULL, "%s", err);
	/* A ModSecurity rule file that does not parse. */
	o.rules = write_file("m.conf", "SecRule REQUEST_URI \"@contains x\" \"id:1,phase:1,deny\"\n"
			     "SecRuleNoSuchDirective on\n");
	ck_assert_int_ne(vnf_engines_init(&es, &vnf_kind_waf, &o, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "m.conf") != NULL, "%s", err);
}
END_TEST

START_TEST(test_calibrate)
{
	struct vnf_engines es;
	struct vnf_calib c;

	engines(&es, "ids", write_file("fam.rules", ids_family_rules));
	ck_assert_int_eq(vnf_calibrate(&es, 0.2, 0, &c), 0);
	ck_assert_uint_gt(c.packets, 100);
	ck_assert_uint_gt(c.requests, 100);
	ck_assert(c.seconds >= 0.2 && c.seconds < 2);
	/* About 1 in 10 is an attack and every family here has a drop rule. */
	ck_assert_uint_ge(c.denied * 100, c.requests * 8);
	ck_assert_uint_le(c.denied * 100, c.requests * 12);
	ck_assert_uint_gt(c.bytes, c.packets * 300);
	vnf_engines_fini(&es);
	/* --cost-ns: 100 us per descriptor bounds the rate at 10,000/s. */
	engines(&es, "null", NULL);
	ck_assert_int_eq(vnf_calibrate(&es, 0.2, 100000, &c), 0);
	ck_assert_uint_gt(c.packets, 10);
	ck_assert_double_le((double)c.packets / c.seconds, 10000 * 1.05);
	vnf_engines_fini(&es);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("vnf_kind");
	TCase *tc = tcase_create("kind");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_find);
	tcase_add_test(tc, test_fw_tuple_state);
	tcase_add_test(tc, test_ids_split_pattern);
	tcase_add_test(tc, test_ids_offsets);
	tcase_add_test(tc, test_ids_generation);
	tcase_add_test(tc, test_ids_interleaved);
	tcase_add_test(tc, test_ids_mix_families);
	tcase_add_test(tc, test_waf_pipelined_split);
	tcase_add_test(tc, test_waf_mix_families);
	tcase_add_test(tc, test_waf_rule_named);
	tcase_add_test(tc, test_waf_answer);
	tcase_add_test(tc, test_waf_rules_file);
	tcase_add_test(tc, test_reload_ids);
	tcase_add_test(tc, test_reload_fw);
	tcase_add_test(tc, test_reload_waf);
	tcase_add_test(tc, test_bad_files);
	tcase_add_test(tc, test_calibrate);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	struct vnf_kind_opts o = { 0 };
	char err[512];
	int r;

	if (tc_tmpdir_make(base, sizeof(base)))
		return 1;
	if (vnf_engines_init(&waf_pl1, &vnf_kind_waf, &o, err, sizeof(err))) {
		fprintf(stderr, "CRS engine: %s\n", err);
		tc_tmpdir_remove(base);
		return 1;
	}
	r = tc_run_suite(suite());
	vnf_engines_fini(&waf_pl1);
	tc_tmpdir_remove(base);
	return r;
}
