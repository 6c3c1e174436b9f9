/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: the caller's memory, accessed as
 * the kernel accesses it (gl_user.c).  Every pointer an interposed call
 * receives (buffers, iovec arrays, a msghdr, addresses and their
 * lengths, option values) may be bad: the kernel answers EFAULT and the
 * process lives on, so the runtime never dereferences one itself but
 * copies through these functions.  Safe without mu.
 */
#ifndef TOCHAIN_GL_USER_H
#define TOCHAIN_GL_USER_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

/* In the child of a fork(), before any copy: our pid changed. */
void gl_user_forked(void);

/* Copy @n bytes of the caller's @src into our @dst: 0, or -EFAULT (nothing promised of @dst). */
int gl_user_read(void *dst, const void *src, size_t n);

/* Copy our @src to the caller's @dst: 0, or -EFAULT (a prefix may have been written). */
int gl_user_write(void *dst, const void *src, size_t n);

/*
 * Copy our segments @src (@ns of them) to the caller's @dst (@nd), in
 * order, in one system call: the bytes copied, fewer at the first fault
 * (0 < @nd, @ns <= IOV_MAX; the caller's side no longer than ours).
 */
size_t gl_user_writev(const struct iovec *dst, int nd, const struct iovec *src, int ns);

/*
 * The other way: the caller's segments @src (@ns) into our @dst (@nd),
 * in order, in one system call: the bytes copied, fewer at the first
 * fault (0 < @nd, @ns <= IOV_MAX).
 */
size_t gl_user_readv(const struct iovec *dst, int nd, const struct iovec *src, int ns);

/*
 * The caller's iovec array @uiov of @n entries (0 <= @n <= IOV_MAX),
 * copied into @small (GL_USER_IOV_SMALL entries) or, if longer, into
 * memory the caller frees with gl_user_iov_put.  *@out is the copy.
 * 0, -EFAULT, -ENOMEM.
 */
#define GL_USER_IOV_SMALL 8
int gl_user_iov_get(const struct iovec *uiov, int n, struct iovec *small, struct iovec **out);
void gl_user_iov_put(struct iovec *iov, struct iovec *small);

/*
 * The kernel's move_addr_to_kernel: the caller's address @ua of @ul
 * bytes into @k.  0 (@ul == 0 copies nothing), -EINVAL for a length
 * above sockaddr_storage, -EFAULT.
 */
int gl_user_addr_in(const struct sockaddr *ua, socklen_t ul, struct sockaddr_storage *k);

/*
 * The kernel's move_addr_to_user: give the caller the address @k of
 * @klen bytes in @ua, as much as its length *@ul allows, and the real
 * length in *@ul.  0, -EFAULT (either pointer), -EINVAL (*@ul negative).
 */
int gl_user_addr_out(const struct sockaddr_storage *k, socklen_t klen, struct sockaddr *ua,
		     socklen_t *ul);

#endif /* TOCHAIN_GL_USER_H */
