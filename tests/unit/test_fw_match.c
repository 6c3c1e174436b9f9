// SPDX-License-Identifier: MIT
/* Unit tests of the firewall matcher (vnfs/fw/fw_match.c). */
#include <arpa/inet.h>
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw_match.h"
#include "fw_rules.h"

static struct fw_ruleset *rs;

static void load(const char *text)
{
	struct fw_diag d;

	fw_ruleset_destroy(rs);
	rs = fw_ruleset_parse(text, strlen(text), "m.rules", &d);
	ck_assert_msg(rs, "refused: %s", d.msg);
}

static void teardown(void)
{
	fw_ruleset_destroy(rs);
	rs = NULL;
}

/* A packet: "tcp 10.0.0.1:1234 > 10.0.0.2:80" style, parsed by hand. */
static struct fw_packet pkt(enum fw_dir dir, int proto, const char *src, int sport,
			    const char *dst, int dport, enum fw_ct ct, int flags)
{
	struct fw_packet p;

	memset(&p, 0, sizeof(p));
	p.dir = (uint8_t)dir;
	p.proto = (uint8_t)proto;
	p.family = strchr(src, ':') ? 6 : 4;
	ck_assert_int_eq(inet_pton(p.family == 4 ? AF_INET : AF_INET6, src, p.src), 1);
	ck_assert_int_eq(inet_pton(p.family == 4 ? AF_INET : AF_INET6, dst, p.dst), 1);
	p.sport = (uint16_t)sport;
	p.dport = (uint16_t)dport;
	p.ct = (uint8_t)ct;
	p.tcp_flags = (uint8_t)flags;
	return p;
}

static struct fw_packet tcp_in(const char *src, int dport)
{
	return pkt(FW_DIR_IN, 6, src, 40000, strchr(src, ':') ? "2001:db8::2" : "10.9.9.9",
		   dport, FW_CT_NEW, FW_TCP_SYN);
}

/* Number of the rule that decides @p (0: policy). */
static unsigned int rule_of(struct fw_packet p)
{
	struct fw_hit h;

	fw_match(rs, &p, &h);
	return h.rule;
}

START_TEST(test_first_match_and_policy)
{
	struct fw_packet p;
	struct fw_hit h;

	load("policy in drop\n"
	     "# comment line\n"
	     "accept in tcp dport 80 comment \"web\"\n"
	     "drop out tcp\n"
	     "drop in tcp dport 80,81 comment \"never reached for 80\"\n"
	     "reject in tcp\n");
	p = tcp_in("10.0.0.1", 80);
	ck_assert_int_eq(fw_match(rs, &p, &h), FW_ACCEPT);
	ck_assert_uint_eq(h.rule, 1);
	ck_assert_uint_eq(h.line, 3);
	ck_assert_str_eq(h.comment, "web");

	p = tcp_in("10.0.0.1", 81);
	ck_assert_int_eq(fw_match(rs, &p, &h), FW_DROP);
	ck_assert_uint_eq(h.rule, 3);
	ck_assert_uint_eq(h.line, 5);
	ck_assert_str_eq(h.comment, "never reached for 80");

	p = tcp_in("10.0.0.1", 82);
	ck_assert_int_eq(fw_match(rs, &p, &h), FW_REJECT);
	ck_assert_uint_eq(h.rule, 4);
	ck_assert_str_eq(h.comment, "");

	/* udp in: no rule, policy drop */
	p = pkt(FW_DIR_IN, 17, "10.0.0.1", 1, "10.0.0.2", 80, FW_CT_NEW, 0);
	ck_assert_int_eq(fw_match(rs, &p, &h), FW_DROP);
	ck_assert_uint_eq(h.rule, 0);
	ck_assert_uint_eq(h.line, 0);
	ck_assert_str_eq(h.comment, "");

	/* out: rule 2 for tcp, default policy accept for udp */
	p.dir = FW_DIR_OUT;
	ck_assert_int_eq(fw_match(rs, &p, &h), FW_ACCEPT);
	ck_assert_uint_eq(h.rule, 0);
	p.proto = 6;
	ck_assert_int_eq(fw_match(rs, &p, &h), FW_DROP);
	ck_assert_uint_eq(h.rule, 2);
	/* hit is optional */
	ck_assert_int_eq(fw_match(rs, &p, NULL), FW_DROP);

	/* A bad direction is dropped, whatever the rules. */
	p.dir = 7;
	ck_assert_int_eq(fw_match(rs, &p, &h), FW_DROP);
	ck_assert_uint_eq(h.rule, 0);
}
END_TEST

START_TEST(test_empty_ruleset)
{
	struct fw_packet p = tcp_in("10.0.0.1", 80);

	load("");
	ck_assert_int_eq(fw_match(rs, &p, NULL), FW_ACCEPT);
	load("policy in drop");
	ck_assert_int_eq(fw_match(rs, &p, NULL), FW_DROP);
}
END_TEST

START_TEST(test_port_ranges_and_sets)
{
	load("accept in tcp dport 8000-8999\n"
	     "accept in tcp dport 22,80,443\n"
	     "accept in tcp dport 0,65535\n"
	     "accept in udp sport 53\n"
	     "accept in tcp sport 1000-1999,3000-3999 dport 7\n");
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 7999)), 0);
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 8000)), 1);
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 8500)), 1);
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 8999)), 1);
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 9000)), 0);
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 22)), 2);
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 80)), 2);
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 443)), 2);
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 81)), 0);
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 442)), 0);
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 0)), 3);
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 65535)), 3);
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 1)), 0);
	/* udp port rule does not fire for tcp, and the reverse */
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 17, "10.0.0.1", 53, "10.0.0.2", 9, FW_CT_NEW, 0)), 4);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "10.0.0.1", 53, "10.0.0.2", 9, FW_CT_NEW, 0)), 0);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 17, "10.0.0.1", 9, "10.0.0.2", 80, FW_CT_NEW, 0)), 0);
	/* sport and dport both required */
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "10.0.0.1", 1999, "10.0.0.2", 7, FW_CT_NEW, 0)), 5);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "10.0.0.1", 3000, "10.0.0.2", 7, FW_CT_NEW, 0)), 5);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "10.0.0.1", 2000, "10.0.0.2", 7, FW_CT_NEW, 0)), 0);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "10.0.0.1", 1000, "10.0.0.2", 8, FW_CT_NEW, 0)), 0);
}
END_TEST

START_TEST(test_negation)
{
	load("drop in tcp from !192.168.0.0/16 dport 8000-8999\n"
	     "drop in tcp dport !80,443\n"
	     "accept in\n");
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 8080)), 1);
	ck_assert_uint_eq(rule_of(tcp_in("192.169.0.0", 8080)), 1);
	ck_assert_uint_eq(rule_of(tcp_in("192.167.255.255", 8080)), 1);
	ck_assert_uint_eq(rule_of(tcp_in("192.168.0.0", 80)), 3);
	ck_assert_uint_eq(rule_of(tcp_in("192.168.255.255", 443)), 3);
	/* from LAN on 8080: rule 1 does not fire, rule 2 (dport not 80/443) does */
	ck_assert_uint_eq(rule_of(tcp_in("192.168.1.1", 8080)), 2);
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 79)), 2);
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 81)), 2);
	/* a negated IPv4 set never matches an IPv6 packet (as in nftables) */
	ck_assert_uint_eq(rule_of(tcp_in("2001:db8::1", 8080)), 2);
	/* a negated port set never matches another protocol */
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 17, "10.0.0.1", 1, "10.0.0.2", 9, FW_CT_NEW, 0)), 3);

	load("accept in to !10.0.0.0/8,172.16.0.0/12\n");
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "1.1.1.1", 1, "11.0.0.0", 2, FW_CT_NEW, 0)), 1);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "1.1.1.1", 1, "10.1.0.0", 2, FW_CT_NEW, 0)), 0);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "1.1.1.1", 1, "172.31.255.255", 2, FW_CT_NEW, 0)), 0);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "1.1.1.1", 1, "172.32.0.0", 2, FW_CT_NEW, 0)), 1);
}
END_TEST

START_TEST(test_cidr_v4)
{
	load("accept in from 10.0.0.0/8 comment \"8\"\n"
	     "accept in from 192.168.1.2/31\n"
	     "accept in from 192.168.1.7\n"
	     "accept in from 128.0.0.0/1\n"
	     "accept in ip4 from 0.0.0.0/0\n");
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.0", 1)), 1);
	ck_assert_uint_eq(rule_of(tcp_in("10.255.255.255", 1)), 1);
	ck_assert_uint_eq(rule_of(tcp_in("9.255.255.255", 1)), 5);
	ck_assert_uint_eq(rule_of(tcp_in("11.0.0.0", 1)), 5);
	ck_assert_uint_eq(rule_of(tcp_in("192.168.1.1", 1)), 4);
	ck_assert_uint_eq(rule_of(tcp_in("192.168.1.2", 1)), 2);
	ck_assert_uint_eq(rule_of(tcp_in("192.168.1.3", 1)), 2);
	ck_assert_uint_eq(rule_of(tcp_in("192.168.1.4", 1)), 4);
	ck_assert_uint_eq(rule_of(tcp_in("192.168.1.7", 1)), 3);
	ck_assert_uint_eq(rule_of(tcp_in("192.168.1.6", 1)), 4);
	ck_assert_uint_eq(rule_of(tcp_in("127.255.255.255", 1)), 5);
	ck_assert_uint_eq(rule_of(tcp_in("255.255.255.255", 1)), 4);
	/* /0 of IPv4 does not take IPv6 packets */
	ck_assert_uint_eq(rule_of(tcp_in("::", 1)), 0);

	/* bytes 4..15 of an IPv4 address are not looked at */
	{
		struct fw_packet p = tcp_in("10.1.2.3", 1);

		memset(p.src + 4, 0xa5, 12);
		ck_assert_uint_eq(rule_of(p), 1);
	}
}
END_TEST

START_TEST(test_cidr_v6)
{
	load("accept in from 2001:db8::/32\n"
	     "accept in from fe80::/64\n"
	     "accept in from fd00::/63\n"
	     "accept in from fd00:0:0:4:8000::/65\n"
	     "accept in from ::1\n"
	     "accept in from ::/0\n");
	ck_assert_uint_eq(rule_of(tcp_in("2001:db8::", 1)), 1);
	ck_assert_uint_eq(rule_of(tcp_in("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", 1)), 1);
	ck_assert_uint_eq(rule_of(tcp_in("2001:db9::", 1)), 6);
	ck_assert_uint_eq(rule_of(tcp_in("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", 1)), 6);
	/* /64: the boundary between the two 64-bit words */
	ck_assert_uint_eq(rule_of(tcp_in("fe80::ffff:ffff:ffff:ffff", 1)), 2);
	ck_assert_uint_eq(rule_of(tcp_in("fe80:0:0:1::", 1)), 6);
	/* /63 covers fd00::/64 and fd00:0:0:1::/64 */
	ck_assert_uint_eq(rule_of(tcp_in("fd00::1", 1)), 3);
	ck_assert_uint_eq(rule_of(tcp_in("fd00:0:0:1:ffff:ffff:ffff:ffff", 1)), 3);
	ck_assert_uint_eq(rule_of(tcp_in("fd00:0:0:2::", 1)), 6);
	/* /65 */
	ck_assert_uint_eq(rule_of(tcp_in("fd00:0:0:4:8000::", 1)), 4);
	ck_assert_uint_eq(rule_of(tcp_in("fd00:0:0:4:ffff:ffff:ffff:ffff", 1)), 4);
	ck_assert_uint_eq(rule_of(tcp_in("fd00:0:0:4:7fff:ffff:ffff:ffff", 1)), 6);
	ck_assert_uint_eq(rule_of(tcp_in("::1", 1)), 5);
	ck_assert_uint_eq(rule_of(tcp_in("::2", 1)), 6);
	ck_assert_uint_eq(rule_of(tcp_in("::", 1)), 6);
	/* IPv4 packets match no IPv6 rule */
	ck_assert_uint_eq(rule_of(tcp_in("0.0.0.1", 1)), 0);
}
END_TEST

START_TEST(test_cidr_v6_63)
{
	struct fw_diag d;

	/* fd00:0:0:1::/63 has host bit 64 set: refused, it would be ambiguous */
	ck_assert_ptr_null(fw_ruleset_parse("accept in from fd00:0:0:1::/63", 30, "x", &d));
	load("accept in from fd00:0:0:2::/63\n");
	ck_assert_uint_eq(rule_of(tcp_in("fd00:0:0:1:ffff:ffff:ffff:ffff", 1)), 0);
	ck_assert_uint_eq(rule_of(tcp_in("fd00:0:0:2::", 1)), 1);
	ck_assert_uint_eq(rule_of(tcp_in("fd00:0:0:3:ffff:ffff:ffff:ffff", 1)), 1);
	ck_assert_uint_eq(rule_of(tcp_in("fd00:0:0:4::", 1)), 0);
}
END_TEST

START_TEST(test_to_and_family)
{
	load("accept in ip6 tcp\n"
	     "accept in to 10.9.9.9\n");
	ck_assert_uint_eq(rule_of(tcp_in("2001:db8::1", 1)), 1);
	ck_assert_uint_eq(rule_of(tcp_in("10.0.0.1", 1)), 2);	/* dst 10.9.9.9 */
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "10.0.0.1", 1, "10.9.9.8", 2, FW_CT_NEW, 0)), 0);
	/* an unknown family matches only rules without addresses/family */
	{
		struct fw_packet p = tcp_in("10.0.0.1", 1);

		p.family = 5;
		ck_assert_uint_eq(rule_of(p), 0);
	}
}
END_TEST

START_TEST(test_ct_states)
{
	static const enum fw_ct all[] = {
		FW_CT_NEW, FW_CT_ESTABLISHED, FW_CT_RELATED, FW_CT_INVALID,
	};
	static const unsigned int want[] = { 3, 1, 1, 2 };
	size_t i;

	load("accept in ct established,related\n"
	     "drop in ct invalid\n"
	     "accept in tcp ct !established,related,invalid\n");
	for (i = 0; i < 4; i++) {
		struct fw_packet p = pkt(FW_DIR_IN, 6, "10.0.0.1", 1, "10.0.0.2", 2, all[i], 0);

		ck_assert_uint_eq(rule_of(p), want[i]);
	}
	/* out-of-range state counts as invalid */
	{
		struct fw_packet p = pkt(FW_DIR_IN, 6, "10.0.0.1", 1, "10.0.0.2", 2, FW_CT_NEW, 0);

		p.ct = 200;
		ck_assert_uint_eq(rule_of(p), 2);
	}
	/* no ct clause: every state */
	load("accept in tcp\n");
	for (i = 0; i < 4; i++)
		ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "10.0.0.1", 1, "10.0.0.2", 2, all[i], 0)), 1);
	/* negation of one state */
	load("accept in ct !new\n");
	for (i = 0; i < 4; i++)
		ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "10.0.0.1", 1, "10.0.0.2", 2, all[i], 0)),
				  all[i] == FW_CT_NEW ? 0 : 1);
}
END_TEST

START_TEST(test_tcp_flags)
{
	load("drop in tcp flags syn,!ack\n"
	     "reject in tcp flags !syn,!ack,!rst\n"
	     "accept in tcp flags fin,ack\n");
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "1.1.1.1", 1, "2.2.2.2", 2, FW_CT_NEW, FW_TCP_SYN)), 1);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "1.1.1.1", 1, "2.2.2.2", 2, FW_CT_NEW,
				      FW_TCP_SYN | FW_TCP_ECE | FW_TCP_CWR)), 1);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "1.1.1.1", 1, "2.2.2.2", 2, FW_CT_NEW,
				      FW_TCP_SYN | FW_TCP_ACK)), 0);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "1.1.1.1", 1, "2.2.2.2", 2, FW_CT_NEW, 0)), 2);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "1.1.1.1", 1, "2.2.2.2", 2, FW_CT_NEW, FW_TCP_PSH)), 2);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "1.1.1.1", 1, "2.2.2.2", 2, FW_CT_NEW,
				      FW_TCP_FIN | FW_TCP_ACK | FW_TCP_PSH)), 3);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "1.1.1.1", 1, "2.2.2.2", 2, FW_CT_NEW, FW_TCP_ACK)), 0);
	/* flags rules do not fire for udp (tcp only) */
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 17, "1.1.1.1", 1, "2.2.2.2", 2, FW_CT_NEW, 0)), 0);
}
END_TEST

START_TEST(test_protocols)
{
	load("accept in icmp\naccept in icmpv6\naccept in proto 47\ndrop in udp\n");
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 1, "1.1.1.1", 0, "2.2.2.2", 0, FW_CT_NEW, 0)), 1);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 58, "::1", 0, "::2", 0, FW_CT_NEW, 0)), 2);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 47, "1.1.1.1", 0, "2.2.2.2", 0, FW_CT_NEW, 0)), 3);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 17, "1.1.1.1", 0, "2.2.2.2", 0, FW_CT_NEW, 0)), 4);
	ck_assert_uint_eq(rule_of(pkt(FW_DIR_IN, 6, "1.1.1.1", 0, "2.2.2.2", 0, FW_CT_NEW, 0)), 0);
}
END_TEST

/*
 * Differential test: random rules, written as text, against a reference
 * model that evaluates the same rules bit by bit without the compiled form.
 */
struct ref_rule {
	int action, dir, proto, fam;	/* proto -1: any; fam 0: any */
	int nsrc, ndst, nsport, ndport;
	uint8_t src[4][16], dst[4][16];
	int srclen[4], dstlen[4];
	int sport[4][2], dport[4][2];
	bool srcneg, dstneg, sportneg, dportneg, ctneg;
	int ctmask, fmask, fval;
};

static unsigned int seed = 4242;

static int rnd(int n)
{
	return rand_r(&seed) % n;
}

static bool ref_prefix(const uint8_t *a, const uint8_t *net, int plen)
{
	int b;

	for (b = 0; b < plen; b++)
		if (((a[b / 8] >> (7 - b % 8)) & 1) != ((net[b / 8] >> (7 - b % 8)) & 1))
			return false;
	return true;
}

static bool ref_match(const struct ref_rule *r, const struct fw_packet *p)
{
	bool in;
	int i;

	if (r->dir != p->dir || (r->proto >= 0 && r->proto != p->proto))
		return false;
	if (r->fam && r->fam != p->family)
		return false;
	if (r->nsrc) {
		for (in = false, i = 0; i < r->nsrc; i++)
			in |= ref_prefix(p->src, r->src[i], r->srclen[i]);
		if (in == r->srcneg)
			return false;
	}
	if (r->ndst) {
		for (in = false, i = 0; i < r->ndst; i++)
			in |= ref_prefix(p->dst, r->dst[i], r->dstlen[i]);
		if (in == r->dstneg)
			return false;
	}
	if (r->nsport) {
		for (in = false, i = 0; i < r->nsport; i++)
			in |= p->sport >= r->sport[i][0] && p->sport <= r->sport[i][1];
		if (in == r->sportneg)
			return false;
	}
	if (r->ndport) {
		for (in = false, i = 0; i < r->ndport; i++)
			in |= p->dport >= r->dport[i][0] && p->dport <= r->dport[i][1];
		if (in == r->dportneg)
			return false;
	}
	if (r->ctmask && (((r->ctmask >> p->ct) & 1) == r->ctneg))
		return false;
	return (p->tcp_flags & r->fmask) == r->fval;
}

static void rnd_addr(int fam, uint8_t *a)
{
	memset(a, 0, 16);
	if (fam == 4) {
		a[0] = 10;
		a[1] = (uint8_t)rnd(2);
		a[2] = (uint8_t)rnd(3);
		a[3] = (uint8_t)(rnd(2) ? rnd(4) : rnd(256));
	} else {
		a[0] = 0x20;
		a[1] = 0x01;
		a[7] = (uint8_t)rnd(2);
		a[8] = (uint8_t)(rnd(2) ? 0x80 : 0);
		a[15] = (uint8_t)rnd(4);
	}
}

static int rnd_port(void)
{
	static const int pool[] = { 0, 1, 22, 79, 80, 81, 443, 1023, 1024, 8000, 8999, 9000, 65535 };

	return rnd(4) ? pool[rnd(13)] : rnd(65536);
}

static void put_addrs(char *t, size_t sz, const char *kw, int fam, bool neg, int n,
		      uint8_t a[][16], int *len)
{
	char s[INET6_ADDRSTRLEN];
	int i, b;

	snprintf(t + strlen(t), sz - strlen(t), " %s %s", kw, neg ? "!" : "");
	for (i = 0; i < n; i++) {
		len[i] = fam == 4 ? 24 + rnd(9) : 56 + rnd(73);
		for (b = len[i]; b < 128; b++)	/* clear host bits */
			a[i][b / 8] &= (uint8_t)~(1u << (7 - b % 8));
		inet_ntop(fam == 4 ? AF_INET : AF_INET6, a[i], s, sizeof(s));
		snprintf(t + strlen(t), sz - strlen(t), "%s%s/%d", i ? "," : "", s, len[i]);
	}
}

static void put_ports(char *t, size_t sz, const char *kw, bool neg, int n, int p[][2])
{
	int i;

	snprintf(t + strlen(t), sz - strlen(t), " %s %s", kw, neg ? "!" : "");
	for (i = 0; i < n; i++) {
		int a = rnd_port(), b = rnd(2) ? a : rnd_port();

		p[i][0] = a < b ? a : b;
		p[i][1] = a < b ? b : a;
		snprintf(t + strlen(t), sz - strlen(t), "%s%d-%d", i ? "," : "", p[i][0], p[i][1]);
	}
}

static void rnd_rule(struct ref_rule *r, char *t, size_t sz)
{
	static const char *const act[] = { "accept", "drop", "reject" };
	static const char *const ctn[] = { "new", "established", "related", "invalid" };
	static const char *const fl[] = { "fin", "syn", "rst", "psh", "ack", "urg", "ecn", "cwr" };
	int fam, i;

	memset(r, 0, sizeof(*r));
	r->action = rnd(3);
	r->dir = rnd(2);
	r->proto = rnd(4) ? (rnd(3) ? 6 : 17) : -1;
	snprintf(t, sz, "%s %s", act[r->action], r->dir ? "out" : "in");
	if (r->proto >= 0)
		snprintf(t + strlen(t), sz - strlen(t), " %s", r->proto == 6 ? "tcp" : "udp");
	fam = rnd(3) ? 4 : 6;
	if (rnd(2)) {
		r->nsrc = 1 + rnd(3);
		r->srcneg = rnd(3) == 0;
		for (i = 0; i < r->nsrc; i++)
			rnd_addr(fam, r->src[i]);
		put_addrs(t, sz, "from", fam, r->srcneg, r->nsrc, r->src, r->srclen);
		r->fam = fam;
	}
	if (rnd(3) == 0) {
		r->ndst = 1 + rnd(2);
		r->dstneg = rnd(3) == 0;
		for (i = 0; i < r->ndst; i++)
			rnd_addr(fam, r->dst[i]);
		put_addrs(t, sz, "to", fam, r->dstneg, r->ndst, r->dst, r->dstlen);
		r->fam = fam;
	}
	if (!r->fam && rnd(5) == 0) {
		r->fam = fam;
		snprintf(t + strlen(t), sz - strlen(t), " ip%d", fam);
	}
	if (r->proto >= 0 && rnd(2)) {
		r->ndport = 1 + rnd(3);
		r->dportneg = rnd(3) == 0;
		put_ports(t, sz, "dport", r->dportneg, r->ndport, r->dport);
	}
	if (r->proto >= 0 && rnd(4) == 0) {
		r->nsport = 1 + rnd(2);
		r->sportneg = rnd(3) == 0;
		put_ports(t, sz, "sport", r->sportneg, r->nsport, r->sport);
	}
	if (rnd(3) == 0) {
		r->ctmask = 1 + rnd(14);	/* never all four negated */
		r->ctneg = rnd(3) == 0;
		snprintf(t + strlen(t), sz - strlen(t), " ct %s", r->ctneg ? "!" : "");
		for (i = 0; i < 4; i++)
			if (r->ctmask & (1 << i))
				snprintf(t + strlen(t), sz - strlen(t), "%s%s",
					 t[strlen(t) - 1] == ' ' || t[strlen(t) - 1] == '!' ? "" : ",", ctn[i]);
	}
	if (r->proto == 6 && rnd(4) == 0) {
		int b1 = rnd(8), b2 = rnd(8);

		r->fmask = (1 << b1) | (1 << b2);
		r->fval = rnd(2) << b1;
		snprintf(t + strlen(t), sz - strlen(t), " flags %s%s", r->fval ? "" : "!", fl[b1]);
		if (b2 != b1) {
			r->fval |= rnd(2) << b2;
			snprintf(t + strlen(t), sz - strlen(t), ",%s%s",
				 r->fval & (1 << b2) ? "" : "!", fl[b2]);
		}
	}
	snprintf(t + strlen(t), sz - strlen(t), "\n");
}

START_TEST(test_differential)
{
	enum { RULESETS = 300, RULES = 12, PACKETS = 400 };
	struct ref_rule ref[RULES];
	char text[RULES * 400 + 64], line[400];
	int s, i, k, hits = 0, policy_in, policy_out;

	for (s = 0; s < RULESETS; s++) {
		policy_in = rnd(2);
		policy_out = rnd(2);
		snprintf(text, sizeof(text), "policy in %s\npolicy out %s\n",
			 policy_in ? "drop" : "accept", policy_out ? "drop" : "accept");
		for (i = 0; i < RULES; i++) {
			rnd_rule(&ref[i], line, sizeof(line));
			strcat(text, line);
		}
		load(text);
		for (k = 0; k < PACKETS; k++) {
			struct fw_packet p;
			struct fw_hit h;
			enum fw_verdict v, want;
			int fam = rnd(3) ? 4 : 6;

			memset(&p, 0, sizeof(p));
			p.family = (uint8_t)fam;
			p.dir = (uint8_t)rnd(2);
			p.proto = (uint8_t)(rnd(5) ? (rnd(3) ? 6 : 17) : 1);
			rnd_addr(fam, p.src);
			rnd_addr(fam, p.dst);
			p.sport = (uint16_t)rnd_port();
			p.dport = (uint16_t)rnd_port();
			p.ct = (uint8_t)rnd(4);
			p.tcp_flags = (uint8_t)rnd(256);
			want = p.dir ? (enum fw_verdict)policy_out : (enum fw_verdict)policy_in;
			for (i = 0; i < RULES; i++)
				if (ref_match(&ref[i], &p)) {
					want = (enum fw_verdict)ref[i].action;
					break;
				}
			v = fw_match(rs, &p, &h);
			ck_assert_msg(v == want && h.rule == (i < RULES ? (unsigned)i + 1 : 0),
				      "ruleset %d packet %d: got %d rule %u, want %d rule %d\n%s",
				      s, k, v, h.rule, want, i < RULES ? i + 1 : 0, text);
			hits += i < RULES;
		}
	}
	/* the generator must exercise both rule hits and the policy */
	ck_assert_int_gt(hits, RULESETS * PACKETS / 10);
	ck_assert_int_lt(hits, RULESETS * PACKETS * 9 / 10);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fw_match");
	TCase *tc = tcase_create("match");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_first_match_and_policy);
	tcase_add_test(tc, test_empty_ruleset);
	tcase_add_test(tc, test_port_ranges_and_sets);
	tcase_add_test(tc, test_negation);
	tcase_add_test(tc, test_cidr_v4);
	tcase_add_test(tc, test_cidr_v6);
	tcase_add_test(tc, test_cidr_v6_63);
	tcase_add_test(tc, test_to_and_family);
	tcase_add_test(tc, test_ct_states);
	tcase_add_test(tc, test_tcp_flags);
	tcase_add_test(tc, test_protocols);
	tcase_add_test(tc, test_differential);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
