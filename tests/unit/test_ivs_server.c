/* SPDX-License-Identifier: MIT */
/*
 * ivs_server against fake QEMU clients over the real UNIX socket: the
 * handshake sequence, which descriptors arrive and that they are the
 * right objects (shared memory by inode, eventfds by ringing through
 * them), join and leave notifications, and clients that misbehave.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ivs_server.h"

#define NVEC 3

static char dir[64];
static char sock_path[128];
static int shm_fd = -1;
static struct ivs_server *srv;

struct event_log {
	int joins, leaves;
	unsigned int last_join, last_leave;
};

static void log_peer(void *arg, unsigned int id, bool joined)
{
	struct event_log *l = arg;

	if (joined) {
		l->joins++;
		l->last_join = id;
	} else {
		l->leaves++;
		l->last_leave = id;
	}
}

static void setup(void)
{
	char shm[128];

	strcpy(dir, "/tmp/test_ivs.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sock_path, sizeof(sock_path), "%s/ivshmem.sock", dir);
	snprintf(shm, sizeof(shm), "%s/shm", dir);
	shm_fd = open(shm, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ge(shm_fd, 0);
	ck_assert_int_eq(ftruncate(shm_fd, 1 << 20), 0);
	unlink(shm);
	srv = NULL;
}

static void teardown(void)
{
	ivs_server_destroy(srv);
	srv = NULL;
	close(shm_fd);
	unlink(sock_path);
	rmdir(dir);
}

static struct ivs_server *start(bool host_peer, unsigned int max_peers)
{
	struct ivs_server_config cfg = {
		.socket_path = sock_path,
		.shm_fd = shm_fd,
		.nvectors = NVEC,
		.max_peers = max_peers,
		.host_peer = host_peer,
	};

	srv = ivs_server_create(&cfg);
	ck_assert_msg(srv != NULL, "create: %s", strerror(errno));
	return srv;
}

/* Let the server handle everything pending. */
static void pump(void)
{
	int i;

	/* a connect() or close() is visible to epoll at once: no waiting */
	for (i = 0; i < 50; i++)
		if (ivs_server_dispatch(srv, 0) == 0)
			break;
}

static int client_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	strcpy(sun.sun_path, sock_path);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	pump();
	return fd;
}

/* One message, waiting at most 2 s; -ETIMEDOUT if none. */
static int client_recv(int sock, int64_t *v, int *fd)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };

	if (poll(&p, 1, 2000) != 1)
		return -ETIMEDOUT;
	return ivs_proto_recv(sock, v, fd);
}

static void expect_msg(int sock, int64_t want, bool with_fd, int *fd_out)
{
	int64_t v = -100;
	int fd = -1;
	int ret = client_recv(sock, &v, &fd);

	ck_assert_int_eq(ret, 0);
	ck_assert_int_eq(v, want);
	if (with_fd)
		ck_assert_int_ge(fd, 0);
	else
		ck_assert_int_eq(fd, -1);
	if (fd_out)
		*fd_out = fd;
	else if (fd >= 0)
		close(fd);
}

static bool nothing_pending(int sock)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };

	return poll(&p, 1, 50) == 0;
}

static uint64_t efd_read(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t v = 0;

	if (poll(&p, 1, 1000) != 1)
		return 0;
	ck_assert_int_eq(read(fd, &v, sizeof(v)), sizeof(v));
	return v;
}

static void efd_write(int fd)
{
	uint64_t one = 1;

	ck_assert_int_eq(write(fd, &one, sizeof(one)), sizeof(one));
}

struct client {
	int sock;
	int64_t id;
	int shm;
	int own[NVEC];
};

/* Handshake steps 1-3 and, after the others' vectors, step 5. */
static void client_handshake_head(struct client *c)
{
	struct stat a, b;
	int fd;

	c->sock = client_connect();
	expect_msg(c->sock, IVS_PROTO_VERSION, false, NULL);
	ck_assert_int_eq(client_recv(c->sock, &c->id, &fd), 0);
	ck_assert_int_eq(fd, -1);
	ck_assert(c->id >= 0 && c->id <= IVS_MAX_PEER_ID);
	expect_msg(c->sock, IVS_PROTO_SHM, true, &c->shm);
	ck_assert_int_eq(fstat(c->shm, &a), 0);
	ck_assert_int_eq(fstat(shm_fd, &b), 0);
	ck_assert(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
}

static void client_handshake_tail(struct client *c)
{
	int v;

	for (v = 0; v < NVEC; v++)
		expect_msg(c->sock, c->id, true, &c->own[v]);
}

static void client_close(struct client *c)
{
	int v;

	close(c->sock);
	close(c->shm);
	for (v = 0; v < NVEC; v++)
		close(c->own[v]);
}

START_TEST(test_handshake_with_host_peer)
{
	struct client c;
	int hostfd[NVEC];
	struct event_log log = { 0 };
	uint16_t ids[4];
	int v;

	start(true, 0);
	ivs_server_set_callback(srv, log_peer, &log);
	ck_assert_int_eq(ivs_server_host_id(srv), 0);
	client_handshake_head(&c);
	ck_assert_int_eq(c.id, 1);
	/* step 4: the host's vectors, in order */
	for (v = 0; v < NVEC; v++)
		expect_msg(c.sock, 0, true, &hostfd[v]);
	client_handshake_tail(&c);
	ck_assert(nothing_pending(c.sock));
	ck_assert_int_eq(log.joins, 1);
	ck_assert_int_eq(log.last_join, 1);
	ck_assert_int_eq(ivs_server_peers(srv, ids, 4), 1);
	ck_assert_int_eq(ids[0], 1);

	/* host rings the guest: vector v of the guest's own fds */
	for (v = 0; v < NVEC; v++) {
		ck_assert_int_eq(ivs_server_ring(srv, 1, v), 0);
		ck_assert_int_eq(efd_read(c.own[v]), 1);
	}
	/* the guest rings the host through the fd it got for peer 0 */
	for (v = 0; v < NVEC; v++) {
		efd_write(hostfd[v]);
		ck_assert_int_eq(efd_read(ivs_server_host_eventfd(srv, v)), 1);
		close(hostfd[v]);
	}
	ck_assert_int_eq(ivs_server_ring(srv, 7, 0), -ENOENT);
	ck_assert_int_eq(ivs_server_ring(srv, 1, NVEC), -EINVAL);
	ck_assert_int_eq(ivs_server_host_eventfd(srv, NVEC), -EINVAL);

	client_close(&c);
	pump();
	ck_assert_int_eq(log.leaves, 1);
	ck_assert_int_eq(log.last_leave, 1);
	ck_assert_int_eq(ivs_server_peers(srv, ids, 4), 0);
	ck_assert_int_eq(ivs_server_ring(srv, 1, 0), -ENOENT);
}
END_TEST

START_TEST(test_first_client_gets_zero_without_host)
{
	struct client c;

	start(false, 0);
	ck_assert_int_eq(ivs_server_host_id(srv), -1);
	ck_assert_int_eq(ivs_server_host_eventfd(srv, 0), -EINVAL);
	client_handshake_head(&c);
	ck_assert_int_eq(c.id, 0);
	client_handshake_tail(&c);
	ck_assert(nothing_pending(c.sock));
	client_close(&c);
}
END_TEST

START_TEST(test_join_and_leave_notifications)
{
	struct client a, b;
	int a_to_b[NVEC], b_to_a[NVEC];
	int v;

	start(false, 0);
	client_handshake_head(&a);
	client_handshake_tail(&a);
	client_handshake_head(&b);
	ck_assert_int_ne(a.id, b.id);
	/* b hears of a (step 4), then its own vectors */
	for (v = 0; v < NVEC; v++)
		expect_msg(b.sock, a.id, true, &b_to_a[v]);
	client_handshake_tail(&b);
	/* a hears b joined */
	for (v = 0; v < NVEC; v++)
		expect_msg(a.sock, b.id, true, &a_to_b[v]);
	ck_assert(nothing_pending(a.sock));
	ck_assert(nothing_pending(b.sock));

	/* the fds are the same eventfds: a rings b, b rings a */
	for (v = 0; v < NVEC; v++) {
		efd_write(a_to_b[v]);
		ck_assert_int_eq(efd_read(b.own[v]), 1);
		efd_write(b_to_a[v]);
		ck_assert_int_eq(efd_read(a.own[v]), 1);
	}

	/* b leaves: a gets b's id without a descriptor */
	client_close(&b);
	pump();
	expect_msg(a.sock, b.id, false, NULL);
	ck_assert(nothing_pending(a.sock));
	for (v = 0; v < NVEC; v++) {
		close(a_to_b[v]);
		close(b_to_a[v]);
	}
	client_close(&a);
}
END_TEST

START_TEST(test_disconnect_mid_handshake)
{
	struct event_log log = { 0 };
	struct client a, c;
	int fd, v;
	int64_t id;

	start(true, 0);
	ivs_server_set_callback(srv, log_peer, &log);
	client_handshake_head(&a);
	for (v = 0; v < NVEC; v++)
		expect_msg(a.sock, 0, true, NULL);
	client_handshake_tail(&a);

	/* b reads its version and id, then hangs up */
	fd = client_connect();
	expect_msg(fd, IVS_PROTO_VERSION, false, NULL);
	ck_assert_int_eq(client_recv(fd, &id, &v), 0);
	close(fd);
	pump();
	/* a saw b come and go */
	for (v = 0; v < NVEC; v++)
		expect_msg(a.sock, id, true, NULL);
	expect_msg(a.sock, id, false, NULL);
	ck_assert(nothing_pending(a.sock));

	/* one that connects and closes before the server even accepts */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	{
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		strcpy(sun.sun_path, sock_path);
		ck_assert_int_eq(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	}
	close(fd);
	pump();
	/* its handshake failed before it was announced: a hears nothing */
	ck_assert(nothing_pending(a.sock));
	ck_assert_int_eq(log.joins - log.leaves, 1);

	/* the server still works for the next one */
	client_handshake_head(&c);
	for (v = 0; v < NVEC; v++)
		expect_msg(c.sock, 0, true, NULL);
	for (v = 0; v < NVEC; v++)
		expect_msg(c.sock, a.id, true, NULL);
	client_handshake_tail(&c);
	ck_assert_int_eq(ivs_server_peers(srv, NULL, 0), 2);
	ck_assert_int_eq(log.joins - log.leaves, 2);
	client_close(&a);
	client_close(&c);
	pump();
	ck_assert_int_eq(ivs_server_peers(srv, NULL, 0), 0);
}
END_TEST

START_TEST(test_client_that_talks_is_dropped)
{
	struct client a, b;
	int v;

	start(false, 0);
	client_handshake_head(&a);
	client_handshake_tail(&a);
	client_handshake_head(&b);
	for (v = 0; v < NVEC; v++)
		expect_msg(b.sock, a.id, true, NULL);
	client_handshake_tail(&b);
	for (v = 0; v < NVEC; v++)
		expect_msg(a.sock, b.id, true, NULL);

	/* the protocol is one-way: b writing anything gets it dropped */
	ck_assert_int_eq(write(b.sock, "junk", 4), 4);
	pump();
	expect_msg(a.sock, b.id, false, NULL);
	{
		char buf[8];

		ck_assert_int_eq(read(b.sock, buf, sizeof(buf)), 0);	/* EOF */
	}
	ck_assert_int_eq(ivs_server_peers(srv, NULL, 0), 1);
	client_close(&a);
	client_close(&b);
}
END_TEST

START_TEST(test_client_that_never_reads_is_dropped)
{
	struct client a;
	int lazy, i, fd, rcv = 4096;
	int64_t id;

	start(false, 0);
	client_handshake_head(&a);
	client_handshake_tail(&a);
	/* a never reads again while others come and go: its queue grows */
	lazy = a.sock;
	ck_assert_int_eq(setsockopt(lazy, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv)), 0);
	for (i = 0; i < IVS_MAX_QUEUE; i++) {
		fd = client_connect();
		close(fd);
		pump();
		if (ivs_server_peers(srv, NULL, 0) == 0)
			break;
	}
	ck_assert_msg(ivs_server_peers(srv, NULL, 0) == 0,
		      "a client that never reads was kept");
	/* and the server still serves */
	{
		struct client c;

		client_handshake_head(&c);
		client_handshake_tail(&c);
		client_close(&c);
	}
	(void)id;
	client_close(&a);
}
END_TEST

START_TEST(test_out_of_descriptors)
{
	struct rlimit old, low;
	struct client a;
	int fds[64], nfd = 0, fd, i, rfd;
	int64_t v;

	start(false, 0);
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	/* leave the process a handful of descriptors, then use them up */
	low = old;
	low.rlim_cur = (rlim_t)dup(0) + 4;
	close((int)low.rlim_cur - 4);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	while (nfd < 64 && (fds[nfd] = dup(0)) >= 0)
		nfd++;
	{
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		strcpy(sun.sun_path, sock_path);
		ck_assert_int_eq(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	}
	/* the server can't take this one: refused, and no busy loop */
	pump();
	ck_assert_int_eq(ivs_server_dispatch(srv, 0), 0);
	ck_assert_int_eq(client_recv(fd, &v, &rfd), -ECONNRESET);
	close(fd);
	for (i = 0; i < nfd; i++)
		close(fds[i]);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
	/* with descriptors back, clients are served again */
	client_handshake_head(&a);
	client_handshake_tail(&a);
	client_close(&a);
}
END_TEST

START_TEST(test_max_peers)
{
	struct client a;
	int fd;
	int64_t v;
	int rfd;

	start(false, 1);
	client_handshake_head(&a);
	client_handshake_tail(&a);
	fd = client_connect();
	ck_assert_int_eq(client_recv(fd, &v, &rfd), -ECONNRESET);
	close(fd);
	ck_assert_int_eq(ivs_server_peers(srv, NULL, 0), 1);
	client_close(&a);
}
END_TEST

START_TEST(test_create_errors)
{
	struct ivs_server_config cfg = {
		.socket_path = sock_path, .shm_fd = shm_fd, .nvectors = 1,
	};
	char longpath[200];
	char file[128];
	int fd;

	cfg.nvectors = 0;
	ck_assert_ptr_null(ivs_server_create(&cfg));
	ck_assert_int_eq(errno, EINVAL);
	cfg.nvectors = IVS_MAX_VECTORS + 1;
	ck_assert_ptr_null(ivs_server_create(&cfg));
	ck_assert_int_eq(errno, EINVAL);
	cfg.nvectors = 1;
	cfg.max_peers = IVS_MAX_PEER_ID + 1;
	ck_assert_ptr_null(ivs_server_create(&cfg));
	ck_assert_int_eq(errno, EINVAL);
	cfg.max_peers = 0;
	cfg.shm_fd = -1;
	ck_assert_ptr_null(ivs_server_create(&cfg));
	ck_assert_int_eq(errno, EBADF);
	/* not a file, or an empty one: QEMU could not map it */
	{
		int pfd[2];

		ck_assert_int_eq(pipe(pfd), 0);
		cfg.shm_fd = pfd[0];
		ck_assert_ptr_null(ivs_server_create(&cfg));
		ck_assert_int_eq(errno, EINVAL);
		close(pfd[0]);
		close(pfd[1]);
		snprintf(file, sizeof(file), "%s/empty", dir);
		fd = open(file, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
		ck_assert_int_ge(fd, 0);
		unlink(file);
		cfg.shm_fd = fd;
		ck_assert_ptr_null(ivs_server_create(&cfg));
		ck_assert_int_eq(errno, EINVAL);
		close(fd);
	}
	cfg.shm_fd = shm_fd;
	memset(longpath, 'x', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = 0;
	cfg.socket_path = longpath;
	ck_assert_ptr_null(ivs_server_create(&cfg));
	ck_assert_int_eq(errno, ENAMETOOLONG);
	/* a regular file where the socket should go is not replaced */
	snprintf(file, sizeof(file), "%s/plain", dir);
	fd = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	cfg.socket_path = file;
	ck_assert_ptr_null(ivs_server_create(&cfg));
	ck_assert_int_eq(errno, EEXIST);
	unlink(file);
	/* a stale socket is */
	cfg.socket_path = sock_path;
	srv = ivs_server_create(&cfg);
	ck_assert_ptr_nonnull(srv);
	ivs_server_destroy(srv);
	ck_assert_int_ne(access(sock_path, F_OK), 0);	/* destroy unlinks */
	srv = NULL;
}
END_TEST

static Suite *ivs_server_suite(void)
{
	Suite *s = suite_create("ivs_server");
	TCase *tc = tcase_create("server");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_handshake_with_host_peer);
	tcase_add_test(tc, test_first_client_gets_zero_without_host);
	tcase_add_test(tc, test_join_and_leave_notifications);
	tcase_add_test(tc, test_disconnect_mid_handshake);
	tcase_add_test(tc, test_client_that_talks_is_dropped);
	tcase_add_test(tc, test_client_that_never_reads_is_dropped);
	tcase_add_test(tc, test_out_of_descriptors);
	tcase_add_test(tc, test_max_peers);
	tcase_add_test(tc, test_create_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ivs_server_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
