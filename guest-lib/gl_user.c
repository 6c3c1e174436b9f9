// SPDX-License-Identifier: MIT
/*
 * The caller's memory as the kernel accesses it (gl_user.h): a copy
 * through process_vm_readv/process_vm_writev on our own pid fails with
 * EFAULT where the kernel's copy_from_user/copy_to_user would, and needs
 * no signal handler (the runtime lives inside other people's processes
 * and must not take SIGSEGV from them).  NULL is answered without a
 * system call.  Where a sandbox refuses these calls (ENOSYS, EPERM: a
 * seccomp filter), the runtime falls back to plain copies, the behaviour
 * before: a bad pointer then crashes the program as it would without
 * the runtime in a program that touched it itself.
 *
 * The calls name our own process by pid, kept from the first copy: a
 * getpid(2) per copy was half of these system calls.  fork() clears it
 * in the child (gl_user_forked, from the runtime's atfork handler); a
 * vfork or posix_spawn child shares our memory, so our pid names the
 * same bytes.  A child made without the atfork handlers (_Fork, a raw
 * clone) also shares the parent's channel, which the runtime does not
 * support either (gl_fork.c).
 *
 * The one exception: bytes of the main thread's stack between the
 * runtime's own frame and the stack's top are mapped while the call runs
 * (they hold the caller's frames), so they are read with memcpy, no
 * system call: nginx's option values and iovec arrays live there, three
 * of its four process_vm_readv per request.  Reads only: a write there
 * to a pointer below the caller's own frame (a dead local) would land on
 * the runtime's frames, where the kernel's lands on nothing live.  That
 * holds only on the main stack itself: a signal handler on an alternate
 * stack, a coroutine's stack or any other thread takes the system call.
 * A program that unmaps or protects part of its own live stack would get
 * SIGSEGV instead of EFAULT there.
 *
 * The main heap: bytes between the break when the runtime was loaded
 * and the current break are mapped read-write (the kernel maps the brk
 * segment whole, and only brk(2) moves its end), so they are copied
 * with memcpy both ways: a request received into nginx's buffer, a
 * header sent from its pool.  glibc keeps the current break in its own
 * record (sbrk(0) reads it, no system call), moved by its brk and sbrk,
 * which malloc uses to grow and trim the heap.  A write there is what
 * the kernel's would be: malloc's freed chunks are mapped memory to the
 * kernel too.  A range that starts below or runs past the break takes
 * the system call.  A program that protects or unmaps part of its own
 * heap, moves the break with a raw brk system call, or lets another
 * thread trim the heap under a buffer while a call copies into it (a
 * use after free) would get SIGSEGV instead of EFAULT there.
 *
 * Threads: no state but the fallback flag, the pid and the main thread's
 * id, each written with the one answer every thread finds (a benign
 * race), the last two and the heap's low end by the constructor, before
 * any other thread.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <tochain/barrier.h>

#include "gl_user.h"

static bool plain;	/* process_vm_* refused here: plain copies */
static pid_t self;	/* our pid, 0: not known yet */
static pthread_t main_thr;	/* the thread that loaded us: the main thread */
static bool main_known;
static uintptr_t heap_lo;	/* the break when we were loaded; 0: no fast heap copies */

/* The top of the main thread's stack, from the dynamic loader (glibc). */
extern void *__libc_stack_end;

/* The deepest the runtime's frame may be below the stack's top to count as on the main stack. */
#define MAIN_STACK_SPAN	(8u << 20)

__attribute__((constructor)) static void note_main_thread(void)
{
	void *brk0 = sbrk(0);

	main_thr = pthread_self();
	main_known = true;
	if (brk0 != (void *)-1)
		heap_lo = (uintptr_t)brk0;
}

/* Is [@p, @p + @n) inside the main heap, between heap_lo and the break (see the top)? */
static bool in_heap(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p, hi;
	void *b;

	if (!heap_lo || a < heap_lo)
		return false;
	b = sbrk(0);
	if (b == (void *)-1)
		return false;
	hi = (uintptr_t)b;
	return a < hi && n <= hi - a;
}

/* Is [@p, @p + @n) caller's memory on the live part of the main stack (see the top)? */
static bool on_live_stack(const void *p, size_t n)
{
	char here;
	uintptr_t lo = (uintptr_t)&here, hi = (uintptr_t)__libc_stack_end, a = (uintptr_t)p;

	if (!main_known || !pthread_equal(pthread_self(), main_thr))
		return false;
	if (hi <= lo || hi - lo > MAIN_STACK_SPAN)
		return false;	/* not running on the main stack */
	return a >= lo && a < hi && n <= hi - a;
}

/* May [@p, @p + @n) of the caller's memory be copied with memcpy (see the top)? */
static bool plain_ok(const void *p, size_t n, bool to_user)
{
	return in_heap(p, n) || (!to_user && on_live_stack(p, n));
}

static pid_t me(void)
{
	pid_t p = tc_load_relaxed(&self);

	if (!p) {
		p = getpid();
		tc_store_relaxed(&self, p);
	}
	return p;
}

void gl_user_forked(void)
{
	tc_store_relaxed(&self, 0);
}

static int vm_copy(void *dst, const void *src, size_t n, bool to_user)
{
	struct iovec mine, theirs;
	ssize_t k;

	if (plain || plain_ok(to_user ? dst : src, n, to_user)) {
		memcpy(dst, src, n);
		return 0;
	}
	mine.iov_base = to_user ? (void *)src : dst;
	mine.iov_len = n;
	theirs.iov_base = to_user ? dst : (void *)src;
	theirs.iov_len = n;
	k = to_user ? process_vm_writev(me(), &mine, 1, &theirs, 1, 0)
		    : process_vm_readv(me(), &mine, 1, &theirs, 1, 0);
	if (k == (ssize_t)n)
		return 0;
	if (k < 0 && (errno == ENOSYS || errno == EPERM)) {
		plain = true;
		memcpy(dst, src, n);
		return 0;
	}
	return -EFAULT;	/* a fault, or a partial copy: the kernel stops there too */
}

/* Nothing to copy costs nothing; NULL on the caller's side costs no system call. */
static int user_copy(void *dst, const void *src, size_t n, bool to_user)
{
	int e = errno, r;

	if (n == 0)
		return 0;
	if (!(to_user ? dst : src))
		return -EFAULT;
	r = vm_copy(dst, src, n, to_user);
	errno = e;	/* the caller's errno is the call's answer, not ours */
	return r;
}

int gl_user_read(void *dst, const void *src, size_t n)
{
	return user_copy(dst, src, n, false);
}

int gl_user_write(void *dst, const void *src, size_t n)
{
	return user_copy(dst, src, n, true);
}

/*
 * Copy the segments @src (@ns) into @dst (@nd) in order, in one system
 * call; the caller's side is @dst when @to_user, @src otherwise.
 */
static size_t user_copyv(const struct iovec *dst, int nd, const struct iovec *src, int ns,
			 bool to_user)
{
	const struct iovec *theirs = to_user ? dst : src;
	int nt = to_user ? nd : ns;
	size_t done = 0;
	int e = errno;
	bool fast = true;	/* every segment of theirs may take memcpy */
	ssize_t k;

	for (int i = 0; i < nt; i++) {
		if (!theirs[i].iov_base && theirs[i].iov_len)
			return 0;	/* NULL: no system call (the one-copy rule) */
		if (fast && theirs[i].iov_len &&
		    !plain_ok(theirs[i].iov_base, theirs[i].iov_len, to_user))
			fast = false;
	}
	if (plain || fast)
		k = -1;
	else if (to_user)
		k = process_vm_writev(me(), src, (unsigned long)ns, dst, (unsigned long)nd, 0);
	else
		k = process_vm_readv(me(), dst, (unsigned long)nd, src, (unsigned long)ns, 0);
	if (k < 0 && (plain || fast || errno == ENOSYS || errno == EPERM)) {
		const struct iovec *d = dst;
		size_t doff = 0;

		if (!fast)
			plain = true;
		for (int i = 0; i < ns; i++) {
			size_t soff = 0;

			while (soff < src[i].iov_len && d < dst + nd) {
				size_t c = src[i].iov_len - soff < d->iov_len - doff
						   ? src[i].iov_len - soff : d->iov_len - doff;

				memcpy((uint8_t *)d->iov_base + doff, (const uint8_t *)src[i].iov_base + soff, c);
				soff += c;
				doff += c;
				done += c;
				if (doff == d->iov_len) {
					d++;
					doff = 0;
				}
			}
		}
		k = (ssize_t)done;
	}
	errno = e;
	return k < 0 ? 0 : (size_t)k;
}

size_t gl_user_writev(const struct iovec *dst, int nd, const struct iovec *src, int ns)
{
	return user_copyv(dst, nd, src, ns, true);
}

size_t gl_user_readv(const struct iovec *dst, int nd, const struct iovec *src, int ns)
{
	return user_copyv(dst, nd, src, ns, false);
}

int gl_user_iov_get(const struct iovec *uiov, int n, struct iovec *small, struct iovec **out)
{
	struct iovec *iov = small;
	int err;

	if (n > GL_USER_IOV_SMALL) {
		iov = malloc((size_t)n * sizeof(*iov));
		if (!iov)
			return -ENOMEM;
	}
	err = gl_user_read(iov, uiov, (size_t)n * sizeof(*iov));
	if (err) {
		gl_user_iov_put(iov, small);
		return err;
	}
	*out = iov;
	return 0;
}

void gl_user_iov_put(struct iovec *iov, struct iovec *small)
{
	if (iov != small)
		free(iov);
}

int gl_user_addr_in(const struct sockaddr *ua, socklen_t ul, struct sockaddr_storage *k)
{
	if (ul > sizeof(*k))	/* socklen_t: a negative int is above too */
		return -EINVAL;
	return gl_user_read(k, ua, ul);
}

int gl_user_addr_out(const struct sockaddr_storage *k, socklen_t klen, struct sockaddr *ua,
		     socklen_t *ul)
{
	int len, err;

	err = gl_user_read(&len, ul, sizeof(len));
	if (err)
		return err;
	if (len > (int)klen)
		len = (int)klen;
	if (len < 0)
		return -EINVAL;
	err = gl_user_write(ua, k, (size_t)len);
	if (err)
		return err;
	return gl_user_write(ul, &klen, sizeof(klen));
}
