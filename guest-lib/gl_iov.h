/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: iovec arithmetic of the data path
 * (inline: every send and receive copies through it).
 */
#ifndef TOCHAIN_GL_IOV_H
#define TOCHAIN_GL_IOV_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>

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

/* Copy @len bytes from the iovec array at byte @pos into @dst. */
static inline void gl_iov_gather(const struct iovec *iov, int n, size_t pos, uint8_t *dst,
				 size_t len)
{
	for (int i = 0; i < n && len; i++) {
		size_t l = iov[i].iov_len;

		if (pos >= l) {
			pos -= l;
			continue;
		}
		size_t k = l - pos < len ? l - pos : len;

		memcpy(dst, (const uint8_t *)iov[i].iov_base + pos, k);
		dst += k;
		len -= k;
		pos = 0;
	}
}

/* Copy @len bytes from @src into the iovec array at byte @pos. */
static inline void gl_iov_scatter(const struct iovec *iov, int n, size_t pos, const uint8_t *src,
				  size_t len)
{
	for (int i = 0; i < n && len; i++) {
		size_t l = iov[i].iov_len;

		if (pos >= l) {
			pos -= l;
			continue;
		}
		size_t k = l - pos < len ? l - pos : len;

		memcpy((uint8_t *)iov[i].iov_base + pos, src, k);
		src += k;
		len -= k;
		pos = 0;
	}
}

#endif /* TOCHAIN_GL_IOV_H */
