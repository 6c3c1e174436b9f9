// SPDX-License-Identifier: MIT
/* Control protocol framing; see ctl_proto.h. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "tochain/ctl_proto.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

json_t *ctl_recv(int fd, int timeout_ms, const char **err)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	long long deadline = now_ms() + timeout_ms;
	json_error_t jerr;
	json_t *msg;

	if (!buf) {
		*err = "out of memory";
		return NULL;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t n;
		char *nl;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
			*err = "timed out waiting for a message";
			goto fail;
		}
		if (len + 1 >= cap) {
			char *nb;

			if (cap >= CTL_MAX_MSG + 1) {
				*err = "message too long";
				goto fail;
			}
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb) {
				*err = "out of memory";
				goto fail;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*err = n == 0 ? "connection closed before a complete message" : "read failed";
			goto fail;
		}
		len += (size_t)n;
		buf[len] = '\0';
		nl = memchr(buf, '\n', len);
		if (nl) {
			if ((size_t)(nl - buf) > CTL_MAX_MSG) {
				*err = "message too long";
				goto fail;
			}
			if (memchr(buf, '\0', (size_t)(nl - buf))) {
				*err = "message is not text";
				goto fail;
			}
			*nl = '\0';
			break;
		}
		if (len > CTL_MAX_MSG) {
			*err = "message too long";
			goto fail;
		}
	}
	msg = json_loads(buf, JSON_REJECT_DUPLICATES, &jerr);
	free(buf);
	if (!msg) {
		*err = "message is not valid JSON";
		return NULL;
	}
	if (!json_is_object(msg)) {
		json_decref(msg);
		*err = "message is not a JSON object";
		return NULL;
	}
	return msg;
fail:
	free(buf);
	return NULL;
}

int ctl_send(int fd, const json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	size_t len, off = 0;
	int err = 0;

	if (!s)
		return -ENOMEM;
	len = strlen(s);
	s[len++] = '\n';	/* json_dumps leaves room: we overwrite the NUL */
	while (off < len) {
		ssize_t n = send(fd, s + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		off += (size_t)n;
	}
	free(s);
	return err;
}

json_t *ctl_call(const char *path, const char *cmd, json_t *args, const char **err)
{
	return ctl_call_timeout(path, cmd, args, CTL_TIMEOUT_MS, err);
}

json_t *ctl_call_timeout(const char *path, const char *cmd, json_t *args, int timeout_ms,
			 const char **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	json_t *req, *reply;
	int fd, e;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		json_decref(args);
		*err = "socket path too long";
		errno = ENAMETOOLONG;
		return NULL;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		e = errno;
		if (fd >= 0)
			close(fd);
		json_decref(args);
		*err = "cannot connect";
		errno = e;
		return NULL;
	}
	req = json_pack("{s:i, s:s, s:o}", "v", CTL_VERSION, "cmd", cmd,
			"args", args ? args : json_object());
	e = req ? ctl_send(fd, req) : -ENOMEM;
	json_decref(req);
	if (e) {
		close(fd);
		*err = "cannot send the request";
		errno = -e;
		return NULL;
	}
	reply = ctl_recv(fd, timeout_ms, err);
	close(fd);
	if (!reply)
		errno = EPROTO;
	return reply;
}

json_t *ctl_reply_ok(json_t *result)
{
	return json_pack("{s:i, s:b, s:o}", "v", CTL_VERSION, "ok", 1, "result",
			 result ? result : json_object());
}

json_t *ctl_reply_fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:i, s:b, s:s}", "v", CTL_VERSION, "ok", 0, "error", msg);
}
