// SPDX-License-Identifier: MIT
/* Unit tests of the descriptor adapter (vnfs/fw/fw_desc.c). */
#include <arpa/inet.h>
#include <check.h>
#include <string.h>

#include "fw_desc.h"
#include "fw_rules.h"

START_TEST(test_from_desc)
{
	static const char rules[] =
		"policy in drop\n"
		"accept in tcp dport 443 from 2001:db8::/32 ct new comment \"v6 web\"\n"
		"accept in tcp sport 40000 to 10.0.0.2 flags syn,!ack\n";
	struct fw_diag diag;
	struct fw_ruleset *rs = fw_ruleset_parse(rules, strlen(rules), "d", &diag);
	struct tcr_desc d;
	struct fw_packet p;
	struct fw_hit hit;

	ck_assert_msg(rs, "%s", diag.msg);
	memset(&d, 0x5a, sizeof(d));	/* fields we do not use: garbage */
	d.family = 6;
	d.l4proto = 6;
	d.tcp_flags = FW_TCP_SYN;
	d.sport = 40000;
	d.dport = 443;
	ck_assert_int_eq(inet_pton(AF_INET6, "2001:db8::7", d.saddr), 1);
	ck_assert_int_eq(inet_pton(AF_INET6, "2001:db8::1", d.daddr), 1);

	fw_packet_from_desc(&p, &d, FW_DIR_IN, FW_CT_NEW);
	ck_assert_uint_eq(p.family, 6);
	ck_assert_uint_eq(p.proto, 6);
	ck_assert_uint_eq(p.sport, 40000);
	ck_assert_uint_eq(p.dport, 443);
	ck_assert_uint_eq(p.dir, FW_DIR_IN);
	ck_assert_uint_eq(p.ct, FW_CT_NEW);
	ck_assert_int_eq(memcmp(p.src, d.saddr, 16), 0);
	ck_assert_int_eq(memcmp(p.dst, d.daddr, 16), 0);
	ck_assert_int_eq(fw_match(rs, &p, &hit), FW_ACCEPT);
	ck_assert_str_eq(hit.comment, "v6 web");

	/* same descriptor, established: rule 1 no longer applies */
	fw_packet_from_desc(&p, &d, FW_DIR_IN, FW_CT_ESTABLISHED);
	ck_assert_int_eq(fw_match(rs, &p, &hit), FW_DROP);
	ck_assert_uint_eq(hit.rule, 0);

	/* IPv4 in the first 4 bytes, the rest of the field is garbage */
	d.family = 4;
	memset(d.daddr, 0xee, 16);
	ck_assert_int_eq(inet_pton(AF_INET, "10.0.0.2", d.daddr), 1);
	fw_packet_from_desc(&p, &d, FW_DIR_IN, FW_CT_NEW);
	ck_assert_int_eq(fw_match(rs, &p, &hit), FW_ACCEPT);
	ck_assert_uint_eq(hit.rule, 2);
	d.tcp_flags = FW_TCP_SYN | FW_TCP_ACK;
	fw_packet_from_desc(&p, &d, FW_DIR_IN, FW_CT_NEW);
	ck_assert_int_eq(fw_match(rs, &p, &hit), FW_DROP);

	/* a guest-written nonsense family matches no address rule */
	d.family = 99;
	d.tcp_flags = FW_TCP_SYN;
	fw_packet_from_desc(&p, &d, FW_DIR_IN, FW_CT_NEW);
	ck_assert_int_eq(fw_match(rs, &p, &hit), FW_DROP);
	ck_assert_uint_eq(hit.rule, 0);
	fw_ruleset_destroy(rs);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fw_desc");
	TCase *tc = tcase_create("desc");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_from_desc);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
