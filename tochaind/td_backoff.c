// SPDX-License-Identifier: MIT
/* Restart back-off; see td_backoff.h. */
#include "td_backoff.h"

long long td_backoff_delay(unsigned int restarts)
{
	long long d = TD_BACKOFF_MIN_MS;

	for (unsigned int i = 0; i < restarts && d < TD_BACKOFF_MAX_MS; i++)
		d *= 2;
	return d < TD_BACKOFF_MAX_MS ? d : TD_BACKOFF_MAX_MS;
}

void td_backoff_died(struct td_backoff *b, long long now)
{
	if (b->down)
		return;
	b->down = true;
	if (b->started_ms && now - b->started_ms >= TD_BACKOFF_STABLE_MS)
		b->restarts = 0;
	b->retry_ms = now + td_backoff_delay(b->restarts);
}

bool td_backoff_waits(const struct td_backoff *b, long long now)
{
	return b->down && now < b->retry_ms;
}

void td_backoff_started(struct td_backoff *b, long long now)
{
	if (b->down) {
		b->restarts++;
		b->total++;	/* a counter for the metrics (td_metrics.h) */
	}
	b->down = false;
	b->started_ms = now;
	b->retry_ms = 0;
}

void td_backoff_hurry(struct td_backoff *b)
{
	b->retry_ms = 0;
}
