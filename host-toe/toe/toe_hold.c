// SPDX-License-Identifier: MIT
/* The TOE's hold until its chains are set; see toe_hold.h. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "toe_hold.h"

struct toe_hold {
	atomic_bool held;
	int efd;
};

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
