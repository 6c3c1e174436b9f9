/* SPDX-License-Identifier: MIT */
/* Private to guest-lib's interposers (gl_api.c, gl_api_wait.c). */
#ifndef TOCHAIN_GL_API_H
#define TOCHAIN_GL_API_H

#include <errno.h>

#include "gl_fd.h"

/* Is @fd one of ours? */
#define OFFLOADED(fd) (gl_fd_sock(fd) != NULL)

/* A runtime result (value or -errno) as libc returns it. */
static inline long ret_errno(long r)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

#endif
