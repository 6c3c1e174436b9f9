/* SPDX-License-Identifier: MIT */
/* ivshmem server protocol: one message on the wire.  See ivs_proto.h. */
#include "ivs_proto.h"

#include <endian.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int ivs_proto_send(int sock, int64_t value, int fd)
{
	uint64_t le = htole64((uint64_t)value);
	struct iovec iov = { .iov_base = &le, .iov_len = sizeof(le) };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if ((size_t)n != sizeof(le))
		return -EIO;
	return 0;
}

/* Close every descriptor a control message brought; return how many. */
static int close_rights(struct msghdr *msg, int *first)
{
	struct cmsghdr *c;
	int count = 0;

	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		size_t nfd, i;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < nfd; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (count == 0 && first)
				*first = fd;
			else
				close(fd);
			count++;
		}
	}
	return count;
}

int ivs_proto_recv(int sock, int64_t *value, int *fd)
{
	uint64_t le = 0;
	size_t got = 0;
	int rfd = -1;
	int err = 0;

	while (got < sizeof(le)) {
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(4 * sizeof(int))];
		} ctl;
		struct iovec iov = {
			.iov_base = (char *)&le + got,
			.iov_len = sizeof(le) - got,
		};
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
		};
		ssize_t n;
		int cnt, f = -1;

		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | (got ? MSG_WAITALL : 0));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* nonblocking and mid-message: the rest is on its way */
			if (errno == EAGAIN && got)
				continue;
			err = errno == EWOULDBLOCK ? -EAGAIN : -errno;
			break;
		}
		cnt = close_rights(&msg, &f);
		if (cnt > 0) {
			if (rfd >= 0 || cnt > 1) {
				if (f >= 0)
					close(f);
				err = -EPROTO;
			} else {
				rfd = f;
			}
		}
		if (msg.msg_flags & MSG_CTRUNC)
			err = -EPROTO;
		if (n == 0) {
			err = got ? -EPROTO : -ECONNRESET;
			break;
		}
		got += (size_t)n;
		if (err)
			break;
	}
	if (err) {
		if (rfd >= 0)
			close(rfd);
		return err;
	}
	*value = (int64_t)le64toh(le);
	*fd = rfd;
	return 0;
}
