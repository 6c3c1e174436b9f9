// SPDX-License-Identifier: MIT
/* The TOE's hold until its chains are set; see toe_hold.h. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "toe_hold.h"

struct toe_hold_conn {
	uint32_t sock_id;
	socklen_t len;
	struct sockaddr_storage a;
};

struct toe_hold {
	atomic_bool held;	/* written by the control thread, read by the TOE's */
	int efd;
	/* the TOE thread's only: deferred connects, one per socket slot */
	struct toe_hold_conn *conn;
	uint32_t nconn, capconn, next;
};

/* Socket ids are (generation << 16) | slot (toe_sock.h). */
#define SOCK_SLOT(id)	((id) & 0xffffu)

struct toe_hold *toe_hold_create(bool held)
{
	struct toe_hold *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (h->efd < 0) {
		int err = errno;

		free(h);
		errno = err;
		return NULL;
	}
	atomic_init(&h->held, held);
	return h;
}

void toe_hold_destroy(struct toe_hold *h)
{
	if (!h)
		return;
	close(h->efd);
	free(h->conn);
	free(h);
}

int toe_hold_fd(const struct toe_hold *h)
{
	return h->efd;
}

bool toe_hold_release(struct toe_hold *h)
{
	uint64_t one = 1;

	if (!atomic_exchange(&h->held, false))
		return false;
	if (write(h->efd, &one, sizeof(one)) != sizeof(one)) {
		/* cannot fail below 2^64-1; the TOE's next turn sees the flag anyway */
	}
	return true;
}

bool toe_hold_held(struct toe_hold *h)
{
	uint64_t v;

	if (read(h->efd, &v, sizeof(v)) < 0) {
		/* nothing pending */
	}
	return atomic_load(&h->held);
}

int toe_hold_defer_connect(struct toe_hold *h, uint32_t sock_id, const struct sockaddr *a,
			   socklen_t len)
{
	struct toe_hold_conn *c = NULL;

	if (len == 0 || len > sizeof(c->a))
		return -EINVAL;
	for (uint32_t i = 0; i < h->nconn; i++) {
		if (h->conn[i].sock_id == sock_id)
			return -EALREADY;
		if (SOCK_SLOT(h->conn[i].sock_id) == SOCK_SLOT(sock_id))
			c = &h->conn[i];	/* that socket is gone: its slot is reused */
	}
	if (!c) {
		if (h->nconn == h->capconn) {
			uint32_t cap = h->capconn ? 2 * h->capconn : 16;
			struct toe_hold_conn *n = realloc(h->conn, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			h->conn = n;
			h->capconn = cap;
		}
		c = &h->conn[h->nconn++];
	}
	memset(c, 0, sizeof(*c));
	c->sock_id = sock_id;
	c->len = len;
	memcpy(&c->a, a, len);
	return 0;
}

bool toe_hold_next_connect(struct toe_hold *h, uint32_t *sock_id, struct sockaddr_storage *a,
			   socklen_t *len)
{
	const struct toe_hold_conn *c;

	if (h->next >= h->nconn) {	/* all issued: forget them */
		h->nconn = h->next = 0;
		return false;
	}
	c = &h->conn[h->next++];
	*sock_id = c->sock_id;
	*a = c->a;
	*len = c->len;
	return true;
}
