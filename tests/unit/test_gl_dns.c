// SPDX-License-Identifier: MIT
/* The runtime's DNS messages: query encoding, answer parsing, hostile answers. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "gl_dns.h"
#include "tc_check.h"

/* An answer builder: header + the question copied from @q, then records. */
struct msg {
	uint8_t b[4096];
	size_t n;
};

static void put(struct msg *m, const void *p, size_t l)
{
	ck_assert_uint_le(m->n + l, sizeof(m->b));
	memcpy(m->b + m->n, p, l);
	m->n += l;
}

static void put16(struct msg *m, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	put(m, b, 2);
}

static void answer_of(struct msg *m, const uint8_t *q, int qlen, int rcode, uint16_t ancount)
{
	memset(m, 0, sizeof(*m));
	put(m, q, (size_t)qlen);
	m->b[2] = 0x81;	/* QR, RD */
	m->b[3] = (uint8_t)(0x80 | rcode);
	m->b[7] = (uint8_t)ancount;
}

/* A record with owner = a pointer to the question name (offset 12). */
static void rr_ptr(struct msg *m, uint16_t type, const void *rd, uint16_t rdlen)
{
	put16(m, 0xc00c);
	put16(m, type);
	put16(m, 1);
	put16(m, 0);
	put16(m, 60);
	put16(m, rdlen);
	put(m, rd, rdlen);
}

START_TEST(test_query)
{
	uint8_t q[GL_DNS_QMAX];
	char big[300];
	int n = gl_dns_query(q, sizeof(q), 0x1234, "Server.test.", GL_DNS_T_A);

	ck_assert_int_eq(n, 12 + 1 + 6 + 1 + 4 + 1 + 4);
	ck_assert_int_eq(q[0], 0x12);
	ck_assert_int_eq(q[1], 0x34);
	ck_assert_int_eq(q[5], 1);
	ck_assert_int_eq(q[12], 6);
	ck_assert_int_eq(memcmp(q + 13, "Server", 6), 0);
	ck_assert_int_eq(q[19], 4);
	ck_assert_int_eq(q[24], 0);
	ck_assert_int_eq(q[26], GL_DNS_T_A);
	ck_assert_int_eq(gl_dns_query(q, sizeof(q), 1, "", GL_DNS_T_A), -EINVAL);
	ck_assert_int_eq(gl_dns_query(q, sizeof(q), 1, "a..b", GL_DNS_T_A), -EINVAL);
	ck_assert_int_eq(gl_dns_query(q, sizeof(q), 1, ".a", GL_DNS_T_A), -EINVAL);
	ck_assert_int_eq(gl_dns_query(q, sizeof(q), 1, "a..", GL_DNS_T_A), -EINVAL);
	memset(big, 'a', 64);
	strcpy(big + 64, ".b");
	ck_assert_int_eq(gl_dns_query(q, sizeof(q), 1, big, GL_DNS_T_A), -EINVAL);
	memset(big, 'a', 260);
	big[260] = 0;
	ck_assert_int_eq(gl_dns_query(q, sizeof(q), 1, big, GL_DNS_T_A), -EINVAL);
	ck_assert_int_eq(gl_dns_query(q, 20, 1, "server.test", GL_DNS_T_A), -ENOSPC);
}
END_TEST

START_TEST(test_answer_and_cname)
{
	uint8_t q[GL_DNS_QMAX];
	int qlen = gl_dns_query(q, sizeof(q), 77, "www.test", GL_DNS_T_A);
	static const uint8_t a1[4] = { 10, 0, 0, 1 }, a2[4] = { 10, 0, 0, 2 };
	static const uint8_t cname[] = { 3, 'W', 'e', 'B', 0xc0, 16 };	/* "web" + "test" */
	struct gl_dns_answer ans;
	struct msg m;
	size_t target;

	answer_of(&m, q, qlen, 0, 1);
	rr_ptr(&m, GL_DNS_T_A, a1, 4);
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), 0);
	ck_assert_int_eq(ans.rcode, 0);
	ck_assert_int_eq(ans.naddr, 1);
	ck_assert_int_eq(memcmp(ans.addr[0], a1, 4), 0);
	ck_assert_str_eq(ans.canon, "www.test");

	/* www.test CNAME web.test; web.test A 10.0.0.2; an A of another name is ignored */
	answer_of(&m, q, qlen, 0, 3);
	rr_ptr(&m, GL_DNS_T_CNAME, cname, sizeof(cname));
	target = m.n - sizeof(cname);
	put16(&m, (uint16_t)(0xc000 | target));
	put16(&m, GL_DNS_T_A);
	put16(&m, 1);
	put16(&m, 0);
	put16(&m, 60);
	put16(&m, 4);
	put(&m, a2, 4);
	rr_ptr(&m, GL_DNS_T_AAAA, "0123456789abcdef", 16);	/* not the asked type */
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), 0);
	ck_assert_int_eq(ans.naddr, 1);
	ck_assert_int_eq(memcmp(ans.addr[0], a2, 4), 0);
	ck_assert_str_eq(ans.canon, "web.test");

	/* an A record of a name nobody asked for is not taken */
	answer_of(&m, q, qlen, 0, 1);
	put(&m, "\x03" "bad" "\x00", 5);
	put16(&m, GL_DNS_T_A);
	put16(&m, 1);
	put16(&m, 0);
	put16(&m, 60);
	put16(&m, 4);
	put(&m, a1, 4);
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), 0);
	ck_assert_int_eq(ans.naddr, 0);

	/* a wrong rdlength for an A record is skipped, not copied */
	answer_of(&m, q, qlen, 0, 1);
	rr_ptr(&m, GL_DNS_T_A, "12345", 5);
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), 0);
	ck_assert_int_eq(ans.naddr, 0);

	answer_of(&m, q, qlen, GL_DNS_RCODE_NXDOMAIN, 0);
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), 0);
	ck_assert_int_eq(ans.rcode, GL_DNS_RCODE_NXDOMAIN);
}
END_TEST

START_TEST(test_not_ours)
{
	uint8_t q[GL_DNS_QMAX];
	int qlen = gl_dns_query(q, sizeof(q), 77, "www.test", GL_DNS_T_A);
	struct gl_dns_answer ans;
	struct msg m;

	answer_of(&m, q, qlen, 0, 0);
	m.b[1] ^= 1;	/* other id */
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), -ESRCH);
	answer_of(&m, q, qlen, 0, 0);
	m.b[2] &= 0x7f;	/* a query, not a response */
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), -ESRCH);
	answer_of(&m, q, qlen, 0, 0);
	m.b[14] = 'x';	/* other question name */
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), -ESRCH);
	answer_of(&m, q, qlen, 0, 0);
	m.b[m.n - 3] = GL_DNS_T_AAAA;	/* other question type */
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), -ESRCH);
	answer_of(&m, q, qlen, 0, 0);
	m.b[14] = 'W';	/* case differs: still ours */
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), 0);
	answer_of(&m, q, qlen, 0, 0);
	m.b[2] |= 0x02;	/* truncated */
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), -EMSGSIZE);
	ck_assert_int_eq(gl_dns_parse(m.b, 11, q, (size_t)qlen, &ans), -EPROTO);
	answer_of(&m, q, qlen, 0, 0);
	ck_assert_int_eq(gl_dns_parse(m.b, (size_t)qlen - 1, q, (size_t)qlen, &ans), -ESRCH);
}
END_TEST

START_TEST(test_hostile_names)
{
	uint8_t q[GL_DNS_QMAX];
	int qlen = gl_dns_query(q, sizeof(q), 9, "a.test", GL_DNS_T_A);
	struct gl_dns_answer ans;
	struct msg m;
	size_t at;

	/* a record whose owner points at itself: a loop */
	answer_of(&m, q, qlen, 0, 1);
	at = m.n;
	put16(&m, (uint16_t)(0xc000 | at));
	put(&m, "\0\1\0\1\0\0\0\0\0\4abcd", 14);
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), -EPROTO);
	/* a forward pointer */
	answer_of(&m, q, qlen, 0, 1);
	put16(&m, (uint16_t)(0xc000 | (m.n + 4)));
	put(&m, "\0\1\0\1\0\0\0\0\0\4abcd", 14);
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), -EPROTO);
	/* two names pointing at each other */
	answer_of(&m, q, qlen, 0, 1);
	at = m.n;
	put(&m, "\1x", 2);
	put16(&m, (uint16_t)(0xc000 | (at + 4)));
	put(&m, "\1y", 2);
	put16(&m, (uint16_t)(0xc000 | at));
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), -EPROTO);
	/* a pointer past the end, a label past the end, rdlength past the end */
	answer_of(&m, q, qlen, 0, 1);
	put16(&m, 0xcfff);
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), -EPROTO);
	answer_of(&m, q, qlen, 0, 1);
	put(&m, "\x3f" "ab", 3);
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), -EPROTO);
	answer_of(&m, q, qlen, 0, 1);
	rr_ptr(&m, GL_DNS_T_A, "\1\2\3\4", 4);
	m.b[m.n - 5] = 200;	/* rdlength 200, 4 bytes there */
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), -EPROTO);
	/* more answers announced than present */
	answer_of(&m, q, qlen, 0, 2);
	rr_ptr(&m, GL_DNS_T_A, "\1\2\3\4", 4);
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), -EPROTO);
	/* reserved label types */
	answer_of(&m, q, qlen, 0, 1);
	put(&m, "\x41", 1);
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), -EPROTO);
	/*
	 * A name longer than 255 bytes through a chain of backward pointers:
	 * the labels sit in the rdata of a first record (type 99), the second
	 * record's owner points at the end of the chain.
	 */
	answer_of(&m, q, qlen, 0, 2);
	{
		size_t rd, prev;

		put16(&m, 0xc00c);
		put16(&m, 99);
		put16(&m, 1);
		put16(&m, 0);
		put16(&m, 60);
		put16(&m, 6 * 64 + 5 * 2 + 1);
		rd = m.n;
		prev = rd;
		put(&m, "\x3f", 1);
		for (int i = 0; i < 63; i++)
			put(&m, "z", 1);
		put(&m, "", 1);
		for (int k = 0; k < 5; k++) {
			size_t here = m.n;

			put(&m, "\x3f", 1);
			for (int i = 0; i < 63; i++)
				put(&m, "z", 1);
			put16(&m, (uint16_t)(0xc000 | prev));
			prev = here;
		}
		ck_assert_uint_eq(m.n - rd, 6 * 64 + 5 * 2 + 1);
		/* the first record alone parses: its rdata is opaque */
		m.b[7] = 1;
		ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), 0);
		m.b[7] = 2;
		put16(&m, (uint16_t)(0xc000 | prev));
		put(&m, "\0\1\0\1\0\0\0\0\0\4abcd", 14);
	}
	ck_assert_int_eq(gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans), -EPROTO);
}
END_TEST

/* Random and mutated answers: never a crash, never more addresses than fit. */
START_TEST(test_random_answers)
{
	uint8_t q[GL_DNS_QMAX];
	int qlen = gl_dns_query(q, sizeof(q), 4242, "host.example", GL_DNS_T_AAAA);
	unsigned int seed = 777;
	struct gl_dns_answer ans;
	struct msg base, m;

	answer_of(&base, q, qlen, 0, 3);
	rr_ptr(&base, GL_DNS_T_CNAME, "\2cn\xc0\x0c", 5);
	rr_ptr(&base, GL_DNS_T_AAAA, "0123456789abcdef", 16);
	rr_ptr(&base, GL_DNS_T_AAAA, "fedcba9876543210", 16);
	for (int i = 0; i < 200000; i++) {
		m = base;
		if (i & 1) {
			int flips = 1 + rand_r(&seed) % 6;

			for (int k = 0; k < flips; k++)
				m.b[rand_r(&seed) % m.n] = (uint8_t)rand_r(&seed);
			m.n = 12 + (size_t)rand_r(&seed) % (m.n - 11);
		} else {
			m.n = (size_t)rand_r(&seed) % 600;
			for (size_t k = 0; k < m.n; k++)
				m.b[k] = (uint8_t)rand_r(&seed);
			if (m.n >= 12) {
				memcpy(m.b, q, 2);
				m.b[2] = 0x81;
			}
		}
		if (gl_dns_parse(m.b, m.n, q, (size_t)qlen, &ans) == 0) {
			ck_assert_int_le(ans.naddr, GL_DNS_ADDR_MAX);
			ck_assert_uint_le(strlen(ans.canon), GL_DNS_NAME_MAX);
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gl_dns");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_query);
	tcase_add_test(tc, test_answer_and_cname);
	tcase_add_test(tc, test_not_ours);
	tcase_add_test(tc, test_hostile_names);
	tcase_add_test(tc, test_random_answers);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
