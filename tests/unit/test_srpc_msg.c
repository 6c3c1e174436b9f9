// SPDX-License-Identifier: MIT
/* Socket-call protocol: encoding and the TOE's validating decoder. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

#include "tochain/srpc.h"
#include "tc_check.h"

static int roundtrip(struct srpc_msg *m, struct srpc_req *r)
{
	return srpc_decode_req(m, srpc_msg_size(m), r);
}

START_TEST(test_socket_ok_and_errors)
{
	struct srpc_msg m;
	struct srpc_req r;

	ck_assert_int_eq(srpc_encode(&m, SRPC_REQ_SOCKET, 7, 0, AF_INET, SOCK_STREAM, 0, NULL, 0), 0);
	ck_assert_int_eq(roundtrip(&m, &r), 0);
	ck_assert_uint_eq(r.m.tag, 7);
	ck_assert_int_eq(r.m.a, AF_INET);
	srpc_encode(&m, SRPC_REQ_SOCKET, 7, 0, AF_UNIX, SOCK_STREAM, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EAFNOSUPPORT);
	ck_assert_uint_eq(r.m.tag, 7);
	srpc_encode(&m, SRPC_REQ_SOCKET, 7, 0, AF_INET6, SOCK_RAW, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EPROTONOSUPPORT);
	srpc_encode(&m, SRPC_REQ_SOCKET, 7, 0, AF_INET6, SOCK_DGRAM, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), 0);
	srpc_encode(&m, SRPC_REQ_SOCKET, 7, 0, AF_INET, SOCK_DGRAM, IPPROTO_UDP, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), 0);
	srpc_encode(&m, SRPC_REQ_SOCKET, 7, 0, AF_INET, SOCK_DGRAM, IPPROTO_TCP, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EPROTONOSUPPORT);
	srpc_encode(&m, SRPC_REQ_SOCKET, 7, 0, AF_INET6, SOCK_STREAM, IPPROTO_UDP, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EPROTONOSUPPORT);
	srpc_encode(&m, SRPC_REQ_SOCKET, 7, 0, AF_INET6, SOCK_STREAM, IPPROTO_TCP, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), 0);
}
END_TEST

START_TEST(test_dgram_addr)
{
	struct srpc_dgram h;
	struct sockaddr_storage ss;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(53) };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	socklen_t l = 99;

	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(srpc_dgram_addr(&h, &ss, &l), 0);
	ck_assert_uint_eq(l, 0);
	memcpy(h.addr, &sin, sizeof(sin));
	h.addrlen = sizeof(sin);
	ck_assert_int_eq(srpc_dgram_addr(&h, &ss, &l), 0);
	ck_assert_uint_eq(l, sizeof(sin));
	ck_assert_int_eq(((struct sockaddr_in *)&ss)->sin_port, htons(53));
	h.addrlen = sizeof(sin) - 1;
	ck_assert_int_eq(srpc_dgram_addr(&h, &ss, &l), -EINVAL);
	h.addrlen = 0xffffffffu;
	ck_assert_int_eq(srpc_dgram_addr(&h, &ss, &l), -EINVAL);
	h.addrlen = 1;
	ck_assert_int_eq(srpc_dgram_addr(&h, &ss, &l), -EINVAL);
	memcpy(h.addr, &sin6, sizeof(sin6));
	h.addrlen = sizeof(sin6);
	ck_assert_int_eq(srpc_dgram_addr(&h, &ss, &l), 0);
	ck_assert_uint_eq(l, sizeof(sin6));
	h.addrlen = 20;
	ck_assert_int_eq(srpc_dgram_addr(&h, &ss, &l), -EINVAL);
	h.addr[0] = AF_UNIX;
	h.addr[1] = 0;
	h.addrlen = sizeof(sin6);
	ck_assert_int_eq(srpc_dgram_addr(&h, &ss, &l), -EAFNOSUPPORT);
}
END_TEST

START_TEST(test_framing)
{
	struct srpc_msg m;
	struct srpc_req r;
	uint8_t big[SRPC_MSG_MAX + 16] = { 0 };

	srpc_encode(&m, SRPC_REQ_LISTEN, 1, 3, 5, 0, 0, NULL, 0);
	ck_assert_int_eq(srpc_decode_req(&m, SRPC_HDR_SIZE - 1, &r), -EPROTO);
	ck_assert_int_eq(srpc_decode_req(NULL, 40, &r), -EPROTO);
	ck_assert_int_eq(srpc_decode_req(big, sizeof(big), &r), -EPROTO);
	/* dlen disagreeing with the length */
	m.dlen = 4;
	ck_assert_int_eq(srpc_decode_req(&m, SRPC_HDR_SIZE, &r), -EPROTO);
	m.dlen = 0xffffffffu;
	ck_assert_int_eq(srpc_decode_req(&m, SRPC_MSG_MAX, &r), -EPROTO);
	/* tag 0 and wrong version */
	srpc_encode(&m, SRPC_REQ_LISTEN, 0, 3, 5, 0, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EPROTO);
	srpc_encode(&m, SRPC_REQ_LISTEN, 1, 3, 5, 0, 0, NULL, 0);
	m.version = 9;
	ck_assert_int_eq(roundtrip(&m, &r), -EPROTO);
	/* unknown type, response or event types are refused per call */
	srpc_encode(&m, 200, 4, 3, 0, 0, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EOPNOTSUPP);
	ck_assert_uint_eq(r.m.tag, 4);
	srpc_encode(&m, SRPC_EV_EOF, 4, 3, 0, 0, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EOPNOTSUPP);
	/* socket id 0 */
	srpc_encode(&m, SRPC_REQ_LISTEN, 4, 0, 0, 0, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EBADF);
	/* unexpected data */
	srpc_encode(&m, SRPC_REQ_ACCEPT, 4, 3, 0, 0, 0, "xx", 2);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
	ck_assert_int_eq(srpc_encode(&m, SRPC_REQ_BIND, 1, 1, 0, 0, 0, big, SRPC_DATA_MAX + 1), -EINVAL);
}
END_TEST

START_TEST(test_addresses)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(80) };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(81),
				     .sin6_scope_id = 77 };
	struct sockaddr_un_like { sa_family_t f; char p[20]; } un = { AF_UNIX, "x" };
	struct srpc_msg m;
	struct srpc_req r;

	sin.sin_addr.s_addr = htonl(0x0a000001);
	srpc_encode(&m, SRPC_REQ_BIND, 1, 2, 0, 0, 0, &sin, sizeof(sin));
	ck_assert_int_eq(roundtrip(&m, &r), 0);
	ck_assert_uint_eq(r.addrlen, sizeof(sin));
	ck_assert_int_eq(memcmp(&r.addr, &sin, sizeof(sin)), 0);
	srpc_encode(&m, SRPC_REQ_CONNECT, 1, 2, 0, 0, 0, &sin, sizeof(sin) - 1);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
	srpc_encode(&m, SRPC_REQ_CONNECT, 1, 2, 0, 0, 0, &sin, 1);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
	srpc_encode(&m, SRPC_REQ_CONNECT, 1, 2, 0, 0, 0, &un, sizeof(un));
	ck_assert_int_eq(roundtrip(&m, &r), -EAFNOSUPPORT);
	/* the RFC 2133 length: no scope id, which reads as 0 */
	srpc_encode(&m, SRPC_REQ_CONNECT, 1, 2, 0, 0, 0, &sin6, 24);
	ck_assert_int_eq(roundtrip(&m, &r), 0);
	ck_assert_uint_eq(r.addrlen, sizeof(sin6));
	ck_assert_uint_eq(((struct sockaddr_in6 *)&r.addr)->sin6_scope_id, 0);
	srpc_encode(&m, SRPC_REQ_CONNECT, 1, 2, 0, 0, 0, &sin6, sizeof(sin6));
	ck_assert_int_eq(roundtrip(&m, &r), 0);
	ck_assert_uint_eq(((struct sockaddr_in6 *)&r.addr)->sin6_scope_id, 77);
	srpc_encode(&m, SRPC_REQ_CONNECT, 1, 2, 0, 0, 0, &sin6, 23);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
}
END_TEST

START_TEST(test_sockopts)
{
	struct linger l = { 1, 0 };
	int one = 1;
	struct srpc_msg m;
	struct srpc_req r;

	srpc_encode(&m, SRPC_REQ_SETSOCKOPT, 1, 2, SOL_SOCKET, SO_REUSEADDR, 0, &one, 4);
	ck_assert_int_eq(roundtrip(&m, &r), 0);
	srpc_encode(&m, SRPC_REQ_SETSOCKOPT, 1, 2, SOL_SOCKET, SO_REUSEADDR, 0, &one, 2);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
	srpc_encode(&m, SRPC_REQ_SETSOCKOPT, 1, 2, SOL_SOCKET, SO_LINGER, 0, &l, sizeof(l));
	ck_assert_int_eq(roundtrip(&m, &r), 0);
	srpc_encode(&m, SRPC_REQ_SETSOCKOPT, 1, 2, SOL_SOCKET, SO_LINGER, 0, &l, 4);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
	srpc_encode(&m, SRPC_REQ_SETSOCKOPT, 1, 2, IPPROTO_TCP, TCP_NODELAY, 0, &one, 4);
	ck_assert_int_eq(roundtrip(&m, &r), 0);
	srpc_encode(&m, SRPC_REQ_SETSOCKOPT, 1, 2, SOL_SOCKET, SO_ERROR, 0, &one, 4);
	ck_assert_int_eq(roundtrip(&m, &r), -ENOPROTOOPT);
	srpc_encode(&m, SRPC_REQ_SETSOCKOPT, 1, 2, SOL_SOCKET, SO_BINDTODEVICE, 0, "eth0", 4);
	ck_assert_int_eq(roundtrip(&m, &r), -ENOPROTOOPT);
	srpc_encode(&m, SRPC_REQ_SETSOCKOPT, 1, 2, 9999, 1, 0, &one, 4);
	ck_assert_int_eq(roundtrip(&m, &r), -ENOPROTOOPT);
	srpc_encode(&m, SRPC_REQ_GETSOCKOPT, 1, 2, SOL_SOCKET, SO_ERROR, 4, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), 0);
	srpc_encode(&m, SRPC_REQ_GETSOCKOPT, 1, 2, SOL_SOCKET, SO_ERROR, -1, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
	srpc_encode(&m, SRPC_REQ_GETSOCKOPT, 1, 2, SOL_SOCKET, SO_ERROR, SRPC_DATA_MAX + 1, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
}
END_TEST

START_TEST(test_shutdown_how)
{
	struct srpc_msg m;
	struct srpc_req r;

	srpc_encode(&m, SRPC_REQ_SHUTDOWN, 1, 2, SHUT_WR, 0, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), 0);
	srpc_encode(&m, SRPC_REQ_SHUTDOWN, 1, 2, 3, 0, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
}
END_TEST

/* FORK names no socket (sock 0), a channel >= 0, no data; TAKE/ADOPT need a socket. */
START_TEST(test_fork_take)
{
	struct srpc_msg m, out;
	struct srpc_req r;

	srpc_encode(&m, SRPC_REQ_FORK, 1, 0, 3, 7, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), 0);
	ck_assert_int_eq(r.m.a, 3);
	ck_assert_int_eq(r.m.b, 7);
	srpc_encode(&m, SRPC_REQ_FORK, 1, 5, 3, 7, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
	srpc_encode(&m, SRPC_REQ_FORK, 1, 0, -1, 7, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
	srpc_encode(&m, SRPC_REQ_FORK, 1, 0, 3, 7, 0, "x", 1);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
	srpc_encode(&m, SRPC_REQ_TAKE, 1, 0, 0, 0, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EBADF);
	srpc_encode(&m, SRPC_REQ_TAKE, 1, 9, 0, 0, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), 0);
	srpc_encode(&m, SRPC_REQ_ADOPT, 1, 0, 1, 0, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EBADF);
	srpc_encode(&m, SRPC_REQ_TAKE + 1, 1, 9, 0, 0, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EOPNOTSUPP);
	/* the guest accepts EV_OWNER as an event */
	srpc_encode(&m, SRPC_EV_OWNER, 0, 9, 1, 1, 0, NULL, 0);
	ck_assert_int_eq(srpc_decode_msg(&m, srpc_msg_size(&m), &out), 0);
	ck_assert_str_eq(srpc_type_name(SRPC_REQ_FORK), "fork");
	ck_assert_str_eq(srpc_type_name(SRPC_EV_OWNER), "ev-owner");
}
END_TEST

/* A socket's secret: SOCKET and ACCEPT may carry one, ADOPT(a=2) must. */
START_TEST(test_secrets)
{
	static const uint8_t sec[SRPC_SECRET_LEN + 1] = "0123456789abcdef";
	struct srpc_msg m;
	struct srpc_req r;

	srpc_encode(&m, SRPC_REQ_SOCKET, 1, 0, AF_INET, SOCK_STREAM, 0, sec, SRPC_SECRET_LEN);
	ck_assert_int_eq(roundtrip(&m, &r), 0);
	ck_assert_mem_eq(r.m.data, sec, SRPC_SECRET_LEN);
	srpc_encode(&m, SRPC_REQ_SOCKET, 1, 0, AF_INET, SOCK_STREAM, 0, sec, SRPC_SECRET_LEN - 1);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
	srpc_encode(&m, SRPC_REQ_ACCEPT, 1, 9, 0, 0, 0, sec, SRPC_SECRET_LEN);
	ck_assert_int_eq(roundtrip(&m, &r), 0);
	srpc_encode(&m, SRPC_REQ_ACCEPT, 1, 9, 0, 0, 0, sec, SRPC_SECRET_LEN + 1);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
	srpc_encode(&m, SRPC_REQ_ADOPT, 1, 9, 2, 0, 0, sec, SRPC_SECRET_LEN);
	ck_assert_int_eq(roundtrip(&m, &r), 0);
	srpc_encode(&m, SRPC_REQ_ADOPT, 1, 9, 2, 0, 0, NULL, 0);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
	srpc_encode(&m, SRPC_REQ_ADOPT, 1, 9, 1, 0, 0, sec, SRPC_SECRET_LEN);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
	srpc_encode(&m, SRPC_REQ_LISTEN, 1, 9, 5, 0, 0, sec, SRPC_SECRET_LEN);
	ck_assert_int_eq(roundtrip(&m, &r), -EINVAL);
}
END_TEST

START_TEST(test_guest_decoder)
{
	struct srpc_msg m, out;
	struct sockaddr_in sin = { .sin_family = AF_INET };

	srpc_encode(&m, SRPC_RESP, 5, 2, 3, 0, 0, &sin, sizeof(sin));
	ck_assert_int_eq(srpc_decode_msg(&m, srpc_msg_size(&m), &out), 0);
	ck_assert_int_eq(out.a, 3);
	ck_assert_uint_eq(out.dlen, sizeof(sin));
	srpc_encode(&m, SRPC_RESP, 0, 2, 3, 0, 0, NULL, 0);
	ck_assert_int_eq(srpc_decode_msg(&m, srpc_msg_size(&m), &out), -EPROTO);
	srpc_encode(&m, SRPC_EV_EOF, 0, 2, 0, 0, 0, NULL, 0);
	ck_assert_int_eq(srpc_decode_msg(&m, srpc_msg_size(&m), &out), 0);
	srpc_encode(&m, SRPC_EV_EOF, 3, 2, 0, 0, 0, NULL, 0);
	ck_assert_int_eq(srpc_decode_msg(&m, srpc_msg_size(&m), &out), -EPROTO);
	srpc_encode(&m, SRPC_REQ_SOCKET, 3, 2, 0, 0, 0, NULL, 0);
	ck_assert_int_eq(srpc_decode_msg(&m, srpc_msg_size(&m), &out), -EPROTO);
	ck_assert_int_eq(srpc_decode_msg(&m, 3, &out), -EPROTO);
	ck_assert_str_eq(srpc_type_name(SRPC_REQ_ACCEPT), "accept");
	ck_assert_str_eq(srpc_type_name(1000), "?");
}
END_TEST

/* Random bytes never crash the decoder and never yield an out-of-range copy. */
START_TEST(test_random_garbage)
{
	uint8_t buf[SRPC_MSG_MAX];
	struct srpc_req r;
	unsigned int seed = 12345;

	for (int i = 0; i < 200000; i++) {
		size_t len = (size_t)(rand_r(&seed) % (SRPC_MSG_MAX + 1));

		for (size_t j = 0; j < len; j++)
			buf[j] = (uint8_t)rand_r(&seed);
		if (len >= 8 && (i & 1)) {	/* often well-framed */
			struct srpc_msg *m = (struct srpc_msg *)buf;

			if (len >= SRPC_HDR_SIZE) {
				m->version = SRPC_VERSION;
				m->dlen = (uint32_t)(len - SRPC_HDR_SIZE);
				m->type = (uint16_t)(m->type % 16);
			}
		}
		if (srpc_decode_req(buf, len, &r) == 0)
			ck_assert_uint_le(r.m.dlen, SRPC_DATA_MAX);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("srpc");
	TCase *tc = tcase_create("msg");

	tcase_add_test(tc, test_socket_ok_and_errors);
	tcase_add_test(tc, test_framing);
	tcase_add_test(tc, test_dgram_addr);
	tcase_add_test(tc, test_addresses);
	tcase_add_test(tc, test_sockopts);
	tcase_add_test(tc, test_shutdown_how);
	tcase_add_test(tc, test_fork_take);
	tcase_add_test(tc, test_secrets);
	tcase_add_test(tc, test_guest_decoder);
	tcase_add_test(tc, test_random_garbage);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
