/* SPDX-License-Identifier: MIT */
/* The ivshmem wire format over a socketpair: values, descriptors, errors. */
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ivs_proto.h"

static int sv[2];

static void setup(void)
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

static void teardown(void)
{
	close(sv[0]);
	close(sv[1]);
}

START_TEST(test_roundtrip_values)
{
	static const int64_t vals[] = { 0, 1, -1, 65535, INT64_MIN, INT64_MAX };
	size_t i;
	int64_t v;
	int fd;

	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		ck_assert_int_eq(ivs_proto_send(sv[0], vals[i], -1), 0);
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		ck_assert_int_eq(ivs_proto_recv(sv[1], &v, &fd), 0);
		ck_assert(v == vals[i]);
		ck_assert_int_eq(fd, -1);
	}
}
END_TEST

START_TEST(test_little_endian_on_the_wire)
{
	unsigned char raw[8];

	ck_assert_int_eq(ivs_proto_send(sv[0], 0x0102, -1), 0);
	ck_assert_int_eq(read(sv[1], raw, sizeof(raw)), 8);
	ck_assert_int_eq(raw[0], 0x02);
	ck_assert_int_eq(raw[1], 0x01);
	ck_assert_int_eq(raw[7], 0);
}
END_TEST

START_TEST(test_fd_passes_and_is_cloexec)
{
	struct stat a, b;
	int64_t v;
	int fd, pipefd[2];

	ck_assert_int_eq(pipe(pipefd), 0);
	ck_assert_int_eq(ivs_proto_send(sv[0], -1, pipefd[1]), 0);
	ck_assert_int_eq(ivs_proto_recv(sv[1], &v, &fd), 0);
	ck_assert_int_eq(v, -1);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ne(fd, pipefd[1]);
	ck_assert_int_eq(fstat(fd, &a), 0);
	ck_assert_int_eq(fstat(pipefd[1], &b), 0);
	ck_assert(a.st_ino == b.st_ino);
	ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	close(pipefd[0]);
	close(pipefd[1]);
}
END_TEST

START_TEST(test_split_message_is_reassembled)
{
	uint64_t le = htole64(42);
	int64_t v;
	int fd;

	ck_assert_int_eq(write(sv[0], &le, 3), 3);
	ck_assert_int_eq(write(sv[0], (char *)&le + 3, 5), 5);
	ck_assert_int_eq(ivs_proto_recv(sv[1], &v, &fd), 0);
	ck_assert_int_eq(v, 42);
}
END_TEST

START_TEST(test_eof_and_truncated)
{
	int64_t v;
	int fd;

	ck_assert_int_eq(write(sv[0], "abc", 3), 3);
	close(sv[0]);
	sv[0] = -1;
	ck_assert_int_eq(ivs_proto_recv(sv[1], &v, &fd), -EPROTO);
	ck_assert_int_eq(ivs_proto_recv(sv[1], &v, &fd), -ECONNRESET);
}
END_TEST

START_TEST(test_two_fds_is_malformed)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} ctl;
	uint64_t le = 0;
	struct iovec iov = { .iov_base = &le, .iov_len = sizeof(le) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	int fds[2] = { 0, 1 };
	int64_t v;
	int fd;

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	ck_assert_int_eq(sendmsg(sv[0], &msg, 0), 8);
	ck_assert_int_eq(ivs_proto_recv(sv[1], &v, &fd), -EPROTO);
}
END_TEST

START_TEST(test_nonblocking_empty_and_full)
{
	int64_t v;
	int fd, n = 0, ret;

	ck_assert_int_eq(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	ck_assert_int_eq(ivs_proto_recv(sv[1], &v, &fd), -EAGAIN);
	/* send never blocks: a full socket says EAGAIN */
	while ((ret = ivs_proto_send(sv[0], n, -1)) == 0 && n < 1000000)
		n++;
	ck_assert_int_eq(ret, -EAGAIN);
	close(sv[1]);
	sv[1] = -1;
	ck_assert_int_eq(ivs_proto_send(sv[0], 1, -1), -EPIPE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ivs_proto");
	TCase *tc = tcase_create("proto");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_roundtrip_values);
	tcase_add_test(tc, test_little_endian_on_the_wire);
	tcase_add_test(tc, test_fd_passes_and_is_cloexec);
	tcase_add_test(tc, test_split_message_is_reassembled);
	tcase_add_test(tc, test_eof_and_truncated);
	tcase_add_test(tc, test_two_fds_is_malformed);
	tcase_add_test(tc, test_nonblocking_empty_and_full);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
