// SPDX-License-Identifier: MIT
/* The real libc entry points behind the interposed ones (dlsym RTLD_NEXT). */
#include <dlfcn.h>
#include <pthread.h>

#include "gl_real.h"

struct gl_real gl_real;

static pthread_once_t once = PTHREAD_ONCE_INIT;

#define R(name) (*(void **)&gl_real.name = dlsym(RTLD_NEXT, #name))

static void resolve(void)
{
	R(socket); R(bind); R(listen); R(accept); R(accept4); R(connect);
	R(send); R(sendto); R(sendmsg); R(recv); R(recvfrom); R(recvmsg);
	R(read); R(write); R(readv); R(writev); R(sendfile); R(shutdown);
	R(close); R(dup); R(dup2); R(dup3); R(fcntl); R(ioctl);
	R(setsockopt); R(getsockopt); R(getsockname); R(getpeername);
	R(poll); R(ppoll); R(epoll_ctl); R(epoll_wait); R(epoll_pwait);
	R(close_range); R(closefrom); R(select); R(pselect);
	R(getaddrinfo); R(gethostbyname); R(gethostbyname2); R(gethostbyname_r);
	R(gethostbyname2_r);
}

void gl_real_init(void)
{
	pthread_once(&once, resolve);
}
