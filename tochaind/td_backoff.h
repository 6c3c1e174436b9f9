/* SPDX-License-Identifier: MIT */
/*
 * Restart back-off of a VNF instance (td_backoff_*): pure functions of the
 * clock, no I/O.
 *
 * An instance that dies is restarted after a delay that starts at
 * TD_BACKOFF_MIN_MS and doubles with every restart up to TD_BACKOFF_MAX_MS,
 * so one whose rules cannot load no longer restarts several times a second
 * for ever.  Once an instance has run TD_BACKOFF_STABLE_MS, its next death
 * starts again from the minimum.  tochaind looks for dead instances every
 * 500 ms, so the shortest delays round up to that.  The state is the
 * daemon's, not saved: a restarted daemon starts from the minimum.
 */
#ifndef TOCHAIN_TD_BACKOFF_H
#define TOCHAIN_TD_BACKOFF_H

#include <stdbool.h>

#define TD_BACKOFF_MIN_MS	100
#define TD_BACKOFF_MAX_MS	30000
#define TD_BACKOFF_STABLE_MS	10000

struct td_backoff {
	unsigned int restarts;	/* restarts since it last ran TD_BACKOFF_STABLE_MS */
	unsigned long long total;	/* restarts since the daemon started: never reset */
	bool down;		/* seen dead, not restarted yet */
	long long started_ms;	/* start of the current process, 0: unknown */
	long long retry_ms;	/* while down: no restart before */
};

/* The delay before restart number @restarts + 1. */
long long td_backoff_delay(unsigned int restarts);
/* The instance was seen dead at @now (again: no change). */
void td_backoff_died(struct td_backoff *b, long long now);
/* Must a dead instance still wait at @now? */
bool td_backoff_waits(const struct td_backoff *b, long long now);
/* It was (re)started at @now. */
void td_backoff_started(struct td_backoff *b, long long now);
/* Restart at the next look (its rules changed, say); the count stays. */
void td_backoff_hurry(struct td_backoff *b);

#endif /* TOCHAIN_TD_BACKOFF_H */
