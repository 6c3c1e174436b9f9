/* SPDX-License-Identifier: MIT */
/*
 * The metrics endpoint (td_metrics_*): `tochaind --metrics ADDR:PORT`
 * serves the daemon's statistics in the Prometheus text exposition format
 * (version 0.0.4) on HTTP/1.x `GET /metrics`; any other well-formed
 * request gets 404, a malformed or oversized one 400, and every
 * connection is closed after its one answer.
 *
 * What it serves is gathered where `stats` gathers it (td_stats_gather:
 * each VM's TOE asked once), plus the VMs, the VNF instances and, when its
 * socket is there, tochain-sched's `sched.show` (td_cpusched_show): the
 * metric names are in docs/CONTROL-PROTOCOL.md ("Metrics").  Denials by
 * rule are counted here, from the TOEs' denial logs (the last 64 per TOE)
 * at each scrape: more than 64 denials of one VM between two scrapes are
 * counted in tochain_chain_denied_total but not all by rule.
 *
 * A scraper is outside input: the listener and its connections are
 * non-blocking and served from the daemon's poll loop, at most
 * TD_METRICS_MAX_CONNS at once (more wait in the listen backlog), a
 * request head of at most TD_METRICS_REQ_MAX bytes, each connection
 * closed TD_METRICS_IDLE_MS after it was accepted or its answer began.
 * A scrape is answered on the daemon's one thread, between control
 * requests, like `stats` (it asks the TOEs, at most TD_TOE_CALL_MS each).
 *
 * The formatting and request parsing below are pure functions (unit
 * tested by tests/unit/test_td_metrics.c).
 */
#ifndef TOCHAIN_TD_METRICS_H
#define TOCHAIN_TD_METRICS_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define TD_METRICS_MAX_CONNS 8
#define TD_METRICS_REQ_MAX 4096		/* bytes of a request head */
#define TD_METRICS_IDLE_MS 5000
#define TD_METRICS_SCHED_MS 1000	/* wait for tochain-sched's sched.show */
#define TD_METRICS_NFDS (1 + TD_METRICS_MAX_CONNS)

struct daemon;
struct td_metrics;

/* A growing text; @oom once an allocation failed (the text is then cut). */
struct td_mbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

void td_mbuf_printf(struct td_mbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void td_mbuf_free(struct td_mbuf *b);

/* Is @name a metric or label name ([a-zA-Z_:][a-zA-Z0-9_:]*; labels no ':')? */
bool td_metrics_name_valid(const char *name, bool label);

/* Append @v escaped as a label value (\\, \", \n). */
void td_metrics_escape_label(struct td_mbuf *b, const char *v);

/*
 * `# HELP NAME TEXT` (TEXT escaped: \\, \n) and `# TYPE NAME TYPE`:
 * a family's head, before its samples.  @type: counter or gauge.
 */
void td_metrics_family(struct td_mbuf *b, const char *name, const char *type, const char *help);

/*
 * One sample: `NAME{k="v",...} VALUE`.  @labels: key, value, ..., NULL
 * (NULL itself: no labels); a NULL value drops its label.  VALUE as
 * Prometheus writes floats (NaN, +Inf, -Inf; integers without exponent
 * up to 1e15).
 */
void td_metrics_sample(struct td_mbuf *b, const char *name, const char *const *labels, double v);

/*
 * Route the request head in @buf[0..@len): 0 when it is not complete yet
 * (no empty line), 200 for GET /metrics (a query string allowed), 404
 * for another well-formed HTTP/1.0 or 1.1 request, 400 for anything else
 * (known as soon as its first line is).  Trusts nothing in @buf.
 */
int td_metrics_http_route(const char *buf, size_t len);

/* Parse "IPV4:PORT" or "[IPV6]:PORT" (numeric, port 1-65535).  0 or -EINVAL. */
int td_metrics_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *sslen);

/* Listen on @addr (td_metrics_parse_addr).  NULL with @err set. */
struct td_metrics *td_metrics_create(const char *addr, char *err, size_t errlen);
void td_metrics_destroy(struct td_metrics *m);

/* The descriptors to poll, in @p (at most TD_METRICS_NFDS).  Their count. */
unsigned int td_metrics_pollfds(struct td_metrics *m, struct pollfd *p);

/* After poll: accept, read, answer what @p says is ready; close idle ones. */
void td_metrics_serve(struct td_metrics *m, struct daemon *d, const struct pollfd *p,
		      unsigned int n);

#endif
