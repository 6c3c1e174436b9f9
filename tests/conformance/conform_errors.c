// SPDX-License-Identifier: MIT
/*
 * Bad pointers, bad lengths, bad levels and options, and the MSG_* flags
 * of the conformance program (conform.h): what the kernel answers, which
 * the runtime must answer too, without ever killing the program.  The
 * bad pointers are a page without access (PROT_NONE: as unmapped memory,
 * but never reused by a later mapping), a read-only page (a receive must
 * not write it) and NULL.
 */
#include <sys/mman.h>

#include "conform.h"

static char *unmapped, *rdonly;

static void pages(void)
{
	long pg = sysconf(_SC_PAGESIZE);

	unmapped = mmap(NULL, (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rdonly = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

/* Wait for @n bytes to be readable on stream @fd (bounded), no more to come. */
static void settle(int fd, int n)
{
	for (int i = 0; i < 300; i++) {
		int v = 0;

		if (ioctl(fd, FIONREAD, &v) == 0 && v >= n)
			break;
		usleep(10000);
	}
	usleep(20000);
}

/* TCP send side: the buffers, iovecs and msghdr a send reads. */
static void tcp_send_faults(int fd)
{
	struct iovec iov = { unmapped, 4 }, iov0 = { NULL, 0 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	char buf[16] = { 0 };

	CHECK("send unmapped buf", send(fd, unmapped, 4, 0));
	CHECK("send NULL buf", send(fd, NULL, 4, 0));
	CHECK("send NULL len 0", send(fd, NULL, 0, 0));
	CHECK("sendto unmapped buf", sendto(fd, unmapped, 4, 0, NULL, 0));
	CHECK("write unmapped buf", write(fd, unmapped, 4));
	CHECK("sendmsg unmapped msghdr", sendmsg(fd, (struct msghdr *)unmapped, 0));
	CHECK("sendmsg iov_base unmapped", sendmsg(fd, &mh, 0));
	mh.msg_iov = (struct iovec *)unmapped;
	CHECK("sendmsg msg_iov unmapped", sendmsg(fd, &mh, 0));
	mh.msg_iov = &iov0;
	CHECK("sendmsg NULL iov_base len 0", sendmsg(fd, &mh, 0));
	CHECK("writev unmapped iov", writev(fd, (struct iovec *)unmapped, 1));
	CHECK("writev iov_base unmapped", writev(fd, &iov, 1));
	CHECK("recv nothing sent", recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
}

/* TCP receive side: a fault loses no data (the kernel copies before it consumes). */
static void tcp_recv_faults(int fd)
{
	struct iovec iov = { unmapped, 4 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct sockaddr_in from;
	socklen_t fl;
	char buf[16] = { 0 };

	CHECK("recv unmapped nothing queued", recv(fd, unmapped, 4, MSG_DONTWAIT));
	send(fd, "abcdef", 6, 0);
	settle(fd, 6);
	CHECK("recv unmapped buf", recv(fd, unmapped, 4, 0));
	CHECK("recv read-only buf", recv(fd, rdonly, 4, 0));
	CHECK("read unmapped buf", read(fd, unmapped, 4));
	CHECK("recvmsg unmapped msghdr", recvmsg(fd, (struct msghdr *)unmapped, 0));
	CHECK("recvmsg iov_base unmapped", recvmsg(fd, &mh, 0));
	mh.msg_iov = (struct iovec *)unmapped;
	CHECK("recvmsg msg_iov unmapped", recvmsg(fd, &mh, 0));
	CHECK("readv unmapped iov", readv(fd, (struct iovec *)unmapped, 1));
	CHECK("recv after faults", recv(fd, buf, 2, 0));
	SHOW("recv after faults data", buf);
	fl = sizeof(from);
	CHECK("recvfrom addr unmapped", recvfrom(fd, buf, 1, 0, (struct sockaddr *)unmapped, &fl));
	CHECK("recvfrom addr unmapped len", fl);
	CHECK("recvfrom addrlen unmapped",
	      recvfrom(fd, buf, 1, 0, (struct sockaddr *)&from, (socklen_t *)unmapped));
	fl = (socklen_t)-1;
	CHECK("recvfrom addrlen negative", recvfrom(fd, buf, 1, 0, (struct sockaddr *)&from, &fl));
	CHECK("recvfrom negative len after", fl);
	iov = (struct iovec){ buf, sizeof(buf) };
	mh = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1, .msg_name = &from,
			      .msg_namelen = (socklen_t)-1 };
	CHECK("recvmsg namelen negative", recvmsg(fd, &mh, MSG_DONTWAIT));
	mh.msg_namelen = sizeof(from);
	CHECK("recvmsg rest", recvmsg(fd, &mh, MSG_DONTWAIT));
	CHECK("recvmsg namelen stream", mh.msg_namelen);
}

/* Names and options: the address, length and value pointers. */
static void tcp_ctl_faults(int fd)
{
	struct sockaddr_in a;
	socklen_t l;
	int v = 1;

	l = sizeof(a);
	CHECK("getsockname addr unmapped", getsockname(fd, (struct sockaddr *)unmapped, &l));
	CHECK("getsockname len unmapped", getsockname(fd, (struct sockaddr *)&a, (socklen_t *)unmapped));
	CHECK("getsockname addr NULL", getsockname(fd, NULL, &l));
	l = 0;
	CHECK("getsockname NULL len 0", getsockname(fd, NULL, &l));
	CHECK("getsockname NULL len 0 gives", l);
	l = sizeof(a);
	CHECK("getpeername addr unmapped", getpeername(fd, (struct sockaddr *)unmapped, &l));
	CHECK("getpeername len unmapped", getpeername(fd, (struct sockaddr *)&a, (socklen_t *)unmapped));
	l = 4;
	CHECK("getpeername short len", (getpeername(fd, (struct sockaddr *)&a, &l), (long)l));
	l = sizeof(v);
	CHECK("getsockopt val unmapped", getsockopt(fd, SOL_SOCKET, SO_TYPE, unmapped, &l));
	CHECK("getsockopt len unmapped", getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, (socklen_t *)unmapped));
	CHECK("getsockopt TCP val unmapped", getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, unmapped, &l));
	CHECK("getsockopt val NULL", getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, NULL, &l));
	l = 0;
	CHECK("getsockopt len 0", getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, &l));
	CHECK("getsockopt len 0 gives", l);
	l = sizeof(v);
	CHECK("getsockopt bad level", getsockopt(fd, 12345, 1, &v, &l));
	CHECK("getsockopt IP bad name", getsockopt(fd, IPPROTO_IP, 12345, &v, &l));
	CHECK("getsockopt TCP bad name", getsockopt(fd, IPPROTO_TCP, 12345, &v, &l));
	CHECK("getsockopt IPV6 level on IPv4", getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v, &l));
	{
		int f6 = socket(AF_INET6, SOCK_STREAM, 0), u = socket(AF_INET, SOCK_DGRAM, 0);

		CHECK("getsockopt bad level IPv6", getsockopt(f6, 12345, 1, &v, &l));
		CHECK("getsockopt bad level UDP", getsockopt(u, 12345, 1, &v, &l));
		CHECK("getsockopt TCP level UDP", getsockopt(u, IPPROTO_TCP, TCP_NODELAY, &v, &l));
		close(f6);
		close(u);
	}
	CHECK("setsockopt val unmapped", setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, unmapped, sizeof(int)));
	CHECK("setsockopt TCP val unmapped", setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, unmapped, 4));
	CHECK("setsockopt RCVTIMEO unmapped", setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, unmapped,
							 sizeof(struct timeval)));
	CHECK("setsockopt int optlen 0", setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, 0));
	CHECK("setsockopt TCP optlen 0", setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, 0));
	CHECK("setsockopt NULL optlen 0", setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, NULL, 0));
	CHECK("setsockopt bad level", setsockopt(fd, 12345, 1, &v, sizeof(v)));
	CHECK("setsockopt optlen negative", setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, (socklen_t)-1));
	CHECK("FIONREAD unmapped", ioctl(fd, FIONREAD, unmapped));
}

/* The address of bind/connect, and of accept: the kernel accepts, then fails the copy. */
static void addr_faults(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(7102) }, b;
	socklen_t l;
	char buf[8];
	int c, n;

	CHECK("bind addr unmapped", bind(fd, (struct sockaddr *)unmapped, sizeof(a)));
	CHECK("connect addr unmapped", connect(fd, (struct sockaddr *)unmapped, sizeof(a)));
	CHECK("bind 7102", bind(fd, (struct sockaddr *)&a, sizeof(a)));
	CHECK("listen 7102", listen(fd, 4));
	c = ctrl_connect_back(7102);
	wait_ev(fd, POLLIN, 5000);
	l = sizeof(b);
	CHECK("accept addr unmapped", accept(fd, (struct sockaddr *)unmapped, &l));
	n = recv(c, buf, sizeof(buf), 0);
	CHECK("accept fault: peer done", n > 0 ? 0 : -1);
	close(c);
	c = ctrl_connect_back(7102);
	wait_ev(fd, POLLIN, 5000);
	CHECK("accept4 len unmapped", accept4(fd, (struct sockaddr *)&b, (socklen_t *)unmapped, 0));
	close(c);
	close(fd);
}

/* The flags of the data calls, TCP. */
static void tcp_flags(void)
{
	int fd = connect_to(7001), one = 1;
	char buf[16] = { 0 };

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	CHECK("send MSG_MORE", send(fd, "ab", 2, MSG_MORE));
	/*
	 * Linux holds a MSG_MORE partial segment with nothing in flight until
	 * the zero-window probe timer (TCP_RTO_MIN, 200 ms) sends it anyway:
	 * look well before that, or the check races the kernel's own timer.
	 */
	usleep(50000);
	CHECK("MSG_MORE held", recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
	CHECK("send after MSG_MORE", send(fd, "cd", 2, 0));
	settle(fd, 4);
	CHECK("recv pushed", recv(fd, buf, sizeof(buf), 0));
	SHOW("recv pushed data", buf);
	send(fd, "0123456789", 10, 0);
	settle(fd, 10);
	CHECK("recv MSG_TRUNC stream", recv(fd, NULL, 3, MSG_TRUNC));
	CHECK("recv MSG_PEEK|MSG_TRUNC", recv(fd, buf, 2, MSG_PEEK | MSG_TRUNC));
	memset(buf, 0, sizeof(buf));
	CHECK("recv after TRUNC", recv(fd, buf, 4, 0));
	SHOW("recv after TRUNC data", buf);
	CHECK("recv MSG_PEEK|WAITALL", recv(fd, buf, 3, MSG_PEEK | MSG_WAITALL));
	CHECK("recv MSG_WAITALL|DONTWAIT", recv(fd, buf, 8, MSG_WAITALL | MSG_DONTWAIT));
	CHECK("recv MSG_OOB none", recv(fd, buf, 1, MSG_OOB));
	CHECK("recv MSG_ERRQUEUE", recv(fd, buf, 1, MSG_ERRQUEUE));
	CHECK("recv empty DONTWAIT", recv(fd, buf, 1, MSG_DONTWAIT));
	CHECK("send MSG_DONTWAIT|NOSIGNAL", send(fd, "x", 1, MSG_DONTWAIT | MSG_NOSIGNAL));
	settle(fd, 1);
	CHECK("recv it", recv(fd, buf, sizeof(buf), 0));
	/* urgent data: the echo peer reads past the urgent byte, so "y" comes back alone */
	CHECK("send MSG_OOB", send(fd, "yz", 2, MSG_OOB));
	settle(fd, 1);
	memset(buf, 0, sizeof(buf));
	CHECK("recv after OOB", recv(fd, buf, sizeof(buf), 0));
	SHOW("recv after OOB data", buf);
	tcp_send_faults(fd);
	tcp_recv_faults(fd);
	tcp_ctl_faults(fd);
	close(fd);
}

/* UDP: faults, lengths and flags of datagrams. */
static void udp_cases(void)
{
	struct sockaddr_in a = peer(7001), from;
	struct iovec iov;
	struct msghdr mh;
	socklen_t fl;
	char buf[64] = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	CHECK("udp sendto addr unmapped", sendto(fd, "x", 1, 0, (struct sockaddr *)unmapped, sizeof(a)));
	CHECK("udp sendto addrlen huge", sendto(fd, "x", 1, 0, (struct sockaddr *)&a, 4096));
	CHECK("udp sendto buf unmapped", sendto(fd, unmapped, 4, 0, (struct sockaddr *)&a, sizeof(a)));
	CHECK("udp sendto MSG_OOB", sendto(fd, "x", 1, MSG_OOB, (struct sockaddr *)&a, sizeof(a)));
	CHECK("udp recv MSG_OOB", recv(fd, buf, 1, MSG_OOB | MSG_DONTWAIT));
	CHECK("udp connect", connect(fd, (struct sockaddr *)&a, sizeof(a)));
	CHECK("udp send MSG_MORE", send(fd, "ab", 2, MSG_MORE));
	CHECK("udp send MSG_MORE 2", send(fd, "cd", 2, MSG_MORE));
	usleep(100000);
	CHECK("udp MSG_MORE held", recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
	CHECK("udp send end", send(fd, "ef", 2, 0));
	wait_ev(fd, POLLIN, 3000);
	CHECK("udp recv corked", recv(fd, buf, sizeof(buf), 0));
	SHOW("udp recv corked data", buf);
	send(fd, "hello", 5, 0);
	wait_ev(fd, POLLIN, 3000);
	CHECK("udp recv unmapped buf", recv(fd, unmapped, 5, 0));
	CHECK("udp fault dropped it", recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
	send(fd, "hello", 5, 0);
	wait_ev(fd, POLLIN, 3000);
	fl = sizeof(from);
	CHECK("udp recvfrom addr unmapped", recvfrom(fd, buf, sizeof(buf), 0,
						     (struct sockaddr *)unmapped, &fl));
	CHECK("udp after addr fault", recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
	send(fd, "hello", 5, 0);
	wait_ev(fd, POLLIN, 3000);
	fl = (socklen_t)-1;
	CHECK("udp recvfrom addrlen negative", recvfrom(fd, buf, sizeof(buf), 0,
							(struct sockaddr *)&from, &fl));
	CHECK("udp after negative addrlen", recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
	send(fd, "hello", 5, 0);
	wait_ev(fd, POLLIN, 3000);
	iov = (struct iovec){ buf, sizeof(buf) };
	mh = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1, .msg_name = &from,
			      .msg_namelen = (socklen_t)-1 };
	CHECK("udp recvmsg namelen negative", recvmsg(fd, &mh, 0));
	mh.msg_namelen = 4;
	CHECK("udp recvmsg short name", recvmsg(fd, &mh, 0));
	CHECK("udp recvmsg short namelen", mh.msg_namelen);
	send(fd, "hello", 5, 0);
	wait_ev(fd, POLLIN, 3000);
	CHECK("udp recv NULL MSG_TRUNC", recv(fd, NULL, 0, MSG_TRUNC | MSG_PEEK));
	CHECK("udp recv MSG_PEEK", recv(fd, buf, 2, MSG_PEEK));
	CHECK("udp recv MSG_WAITALL", recv(fd, buf, sizeof(buf), MSG_WAITALL));
	CHECK("udp recv MSG_DONTWAIT empty", recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
	CHECK("udp send NOSIGNAL", send(fd, "x", 1, MSG_NOSIGNAL));
	wait_ev(fd, POLLIN, 3000);
	CHECK("udp recv it", recv(fd, buf, sizeof(buf), 0));
	close(fd);
}

void t_errors(void)
{
	pages();
	tcp_flags();
	addr_faults();
	udp_cases();
}
