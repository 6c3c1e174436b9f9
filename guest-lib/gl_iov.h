/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: iovec arithmetic of the data path
 * (inline: every send and receive copies through it).  The iovec arrays
 * are the runtime's own copies; the memory they point to is the caller's
 * and is reached through gl_user.h only.
 */
#ifndef TOCHAIN_GL_IOV_H
#define TOCHAIN_GL_IOV_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "gl_user.h"

/* Total length of @iov, SSIZE_MAX at most. */
static inline size_t gl_iov_total(const struct iovec *iov, int n)
{
	size_t t = 0;

	for (int i = 0; i < n; i++) {
		if (iov[i].iov_len > SSIZE_MAX - t)
			return SSIZE_MAX;
		t += iov[i].iov_len;
	}
	return t;
}

/* Copy @len bytes from the iovec array at byte @pos into @dst: the bytes copied (fewer: a fault). */
static inline size_t gl_iov_gather(const struct iovec *iov, int n, size_t pos, uint8_t *dst,
				 size_t len)
{
	size_t done = 0;

	for (int i = 0; i < n && len; i++) {
		size_t l = iov[i].iov_len;

		if (pos >= l) {
			pos -= l;
			continue;
		}
		size_t k = l - pos < len ? l - pos : len;

		if (gl_user_read(dst, (const uint8_t *)iov[i].iov_base + pos, k))
			break;
		done += k;
		dst += k;
		len -= k;
		pos = 0;
	}
	return done;
}

/* Copy @len bytes from @src into the iovec array at byte @pos: the bytes copied (fewer: a fault). */
static inline size_t gl_iov_scatter(const struct iovec *iov, int n, size_t pos, const uint8_t *src,
				  size_t len)
{
	size_t done = 0;

	for (int i = 0; i < n && len; i++) {
		size_t l = iov[i].iov_len;

		if (pos >= l) {
			pos -= l;
			continue;
		}
		size_t k = l - pos < len ? l - pos : len;

		if (gl_user_write((uint8_t *)iov[i].iov_base + pos, src, k))
			break;
		done += k;
		src += k;
		len -= k;
		pos = 0;
	}
	return done;
}

#define GL_IOV_SEGS 64

/*
 * The part of the iovec array from byte @pos, at most @len bytes, as at
 * most GL_IOV_SEGS entries in @out: how many.
 */
static inline int gl_iov_slice(const struct iovec *iov, int n, size_t pos, size_t len,
			       struct iovec *out)
{
	int nd = 0;

	for (int i = 0; i < n && len && nd < GL_IOV_SEGS; i++) {
		size_t l = iov[i].iov_len;

		if (pos >= l) {
			pos -= l;
			continue;
		}
		out[nd].iov_base = (uint8_t *)iov[i].iov_base + pos;
		out[nd].iov_len = l - pos < len ? l - pos : len;
		len -= out[nd].iov_len;
		nd++;
		pos = 0;
	}
	return nd;
}

/* Bytes that one gl_iov_scatterv can place from byte @pos of the iovec array. */
static inline size_t gl_iov_room(const struct iovec *iov, int n, size_t pos)
{
	struct iovec d[GL_IOV_SEGS];
	int nd = gl_iov_slice(iov, n, pos, SIZE_MAX, d);
	size_t room = 0;

	for (int i = 0; i < nd; i++)
		room += d[i].iov_len;
	return room;
}

/*
 * Copy our segments @src (@ns, at most GL_IOV_SEGS, @len bytes in all,
 * @len <= gl_iov_room) into the iovec array at byte @pos, in one copy
 * call: the bytes copied (fewer: a fault).
 */
static inline size_t gl_iov_scatterv(const struct iovec *iov, int n, size_t pos,
				     const struct iovec *src, int ns, size_t len)
{
	struct iovec dst[GL_IOV_SEGS];
	int nd = gl_iov_slice(iov, n, pos, len, dst);

	return nd ? gl_user_writev(dst, nd, src, ns) : 0;
}

#endif /* TOCHAIN_GL_IOV_H */
