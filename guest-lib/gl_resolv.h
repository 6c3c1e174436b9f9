/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: the resolver (gl_resolv.c), used
 * when the runtime is configured.  Same contracts as libc's getaddrinfo /
 * gethostbyname2_r / gethostbyname2; called without mu (they use the
 * interposed socket calls, which take it).
 */
#ifndef TOCHAIN_GL_RESOLV_H
#define TOCHAIN_GL_RESOLV_H

#include <netdb.h>
#include <stddef.h>

int gl_resolv_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
			  struct addrinfo **res);
int gl_resolv_gethostbyname2_r(const char *name, int family, struct hostent *he, char *buf,
			       size_t buflen, struct hostent **result, int *h_errnop);
struct hostent *gl_resolv_gethostbyname2(const char *name, int family);

#endif /* TOCHAIN_GL_RESOLV_H */
