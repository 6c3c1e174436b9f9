/*
 * WAF engine: rule loading and engine lifetime.
 *
 * LOCKING AND LIFETIME
 *
 * libmodsecurity keeps three kinds of objects:
 *  - ModSecurity: holds the persistent collections (IP, GLOBAL, ...) and the
 *    log callback.  Its constructor and destructor call process-global
 *    initialisers of libxml2 and libcurl (xmlCleanupParser,
 *    curl_global_cleanup), which must not run while another instance is in
 *    use.  So there is exactly one ModSecurity per process (waf_msc),
 *    created with the first engine and destroyed with the last one.
 *  - RulesSet: one per engine.  Parsing rules uses a non-reentrant
 *    flex/bison scanner with global state (upstream issues #2536, #3138),
 *    so every creation and every free of a RulesSet happens under
 *    waf_global_lock.  Once loaded, a RulesSet is only read by transactions
 *    and is shared by all threads (the documented upstream model; its @pm
 *    matcher has its own lock).
 *  - Transaction: one per HTTP request, owned by one flow, never shared.
 *
 * waf_global_lock protects waf_msc and waf_msc_users, and serialises the
 * parser.  It is never taken on the data path (waf_flow_feed).
 *
 * Persistent collections (initcol in REQUEST-901) live in waf_msc's
 * in-memory backend, whose readers are not locked against writers
 * (upstream #3054).  With the CRS as configured here nothing writes them
 * (IP reputation and DoS rules 910/912 are off unless enabled by a
 * pre-rule file); enabling those rules with several threads is unsafe in
 * libmodsecurity 3.0.9.
 */
#include <errno.h>
#include <glob.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "waf_priv.h"
#include "waf_conf_gen.h"

#define WAF_DEFAULT_REQ_BODY (1u << 20)
#define WAF_DEFAULT_RESP_BODY (512u << 10)
#define WAF_DEFAULT_HEADER (64u << 10)

static pthread_mutex_t waf_global_lock = PTHREAD_MUTEX_INITIALIZER;
static ModSecurity *waf_msc;       /* (waf_global_lock) */
static unsigned waf_msc_users;     /* (waf_global_lock) engines alive */

static void waf_errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void waf_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

void waf_match_log_add(struct waf_match_log *log, unsigned id)
{
	unsigned i;

	if (id == 0)
		return;
	for (i = 0; i < log->n; i++)
		if (log->ids[i] == id)
			return;
	if (log->n < WAF_MAX_MATCHED)
		log->ids[log->n++] = id;
}

unsigned waf_log_rule_id(const char *line)
{
	const char *p;
	unsigned long v;
	char *end;

	if (!line)
		return 0;
	p = strstr(line, "[id \"");
	if (!p)
		return 0;
	p += 5;
	v = strtoul(p, &end, 10);
	if (end == p || *end != '"' || v > 0xffffffffUL)
		return 0;
	return (unsigned)v;
}

void waf_log_msg(const char *line, char *buf, size_t len)
{
	const char *p, *q;
	size_t n;

	if (len == 0)
		return;
	buf[0] = '\0';
	if (!line)
		return;
	p = strstr(line, "[msg \"");
	if (p) {
		p += 6;
		q = strstr(p, "\"]");
		n = q ? (size_t)(q - p) : strlen(p);
	} else {
		p = line;
		n = strlen(p);
	}
	if (n >= len)
		n = len - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
}

/*
 * Called by libmodsecurity (TextLogProperty) for every rule that matches
 * and logs without being disruptive: in CRS anomaly mode, every attack rule
 * that adds to the score.  data is the transaction's struct waf_match_log.
 */
static void waf_log_cb(void *data, const void *msg)
{
	struct waf_match_log *log = data;

	if (log)
		waf_match_log_add(log, waf_log_rule_id(msg));
}

/* Replaces @NAME@ placeholders of tmpl; returns a malloc'd string or NULL. */
static char *waf_expand(const char *tmpl, const char *const vars[][2],
			size_t nvars)
{
	size_t cap = strlen(tmpl) + 256, len = 0;
	char *out = malloc(cap);
	const char *p = tmpl;

	if (!out)
		return NULL;
	while (*p) {
		const char *val = NULL;
		size_t skip = 1, vlen, i;

		if (*p == '@') {
			for (i = 0; i < nvars; i++) {
				size_t nl = strlen(vars[i][0]);

				if (strncmp(p + 1, vars[i][0], nl) == 0 &&
				    p[nl + 1] == '@') {
					val = vars[i][1];
					skip = nl + 2;
					break;
				}
			}
		}
		vlen = val ? strlen(val) : 1;
		if (len + vlen + 1 > cap) {
			char *n;

			cap = (len + vlen + 1) * 2;
			n = realloc(out, cap);
			if (!n) {
				free(out);
				return NULL;
			}
			out = n;
		}
		memcpy(out + len, val ? val : p, vlen);
		len += vlen;
		p += skip;
	}
	out[len] = '\0';
	return out;
}

/*
 * libmodsecurity's "Rules error. File: F. Line: N. Column: C. WHY" as
 * "F:N: WHY" (the file:line form every engine here reports), else
 * "@what: @perr".
 */
static void waf_parse_err(char *err, size_t errlen, const char *what, const char *perr)
{
	const char *f, *l, *c, *why;
	unsigned long line;
	char *end;

	if (!perr) {
		waf_errf(err, errlen, "%s: parse error", what);
		return;
	}
	f = strstr(perr, "File: ");
	l = f ? strstr(f, ". Line: ") : NULL;
	line = l ? strtoul(l + 8, &end, 10) : 0;
	if (!l || !line) {
		waf_errf(err, errlen, "%s: %.*s", what, (int)strcspn(perr, "\n"), perr);
		return;
	}
	c = strstr(end, "Column: ");
	why = c ? strstr(c, ". ") : NULL;
	why = why ? why + 2 : end;
	while (*why == '.' || *why == ' ')
		why++;
	waf_errf(err, errlen, "%.*s:%lu: %.*s", (int)(l - f - 6), f + 6, line,
		 (int)strcspn(why, "\n"), why);
}

/* Loads a text template; returns rules added or -1 (err filled). */
static int waf_load_text(RulesSet *rules, const char *what, const char *text,
			 char *err, size_t errlen)
{
	const char *perr = NULL;
	int n = msc_rules_add(rules, text, &perr);

	if (n < 0) {
		waf_parse_err(err, errlen, what, perr);
		free((void *)perr);
		errno = EINVAL;
		return -1;
	}
	return n;
}

static int waf_load_file(RulesSet *rules, const char *path,
			 char *err, size_t errlen)
{
	const char *perr = NULL;
	int n;

	if (access(path, R_OK) < 0) {
		int saved = errno;

		waf_errf(err, errlen, "%s: %s", path, strerror(saved));
		errno = saved;
		return -1;
	}
	n = msc_rules_add_file(rules, path, &perr);
	if (n < 0) {
		waf_parse_err(err, errlen, path, perr);
		free((void *)perr);
		errno = EINVAL;
		return -1;
	}
	return n;
}

static int waf_load_crs(RulesSet *rules, const char *dir,
			char *err, size_t errlen)
{
	char pattern[4096];
	glob_t g;
	size_t i;
	int total = 0, rc;

	if ((size_t)snprintf(pattern, sizeof(pattern), "%s/rules/*.conf", dir) >=
	    sizeof(pattern)) {
		waf_errf(err, errlen, "crs_dir too long");
		errno = EINVAL;
		return -1;
	}
	rc = glob(pattern, 0, NULL, &g);
	if (rc == GLOB_NOMATCH) {
		waf_errf(err, errlen, "no CRS rules in %s", pattern);
		errno = ENOENT;
		return -1;
	}
	if (rc != 0) {
		waf_errf(err, errlen, "cannot list %s", pattern);
		errno = rc == GLOB_NOSPACE ? ENOMEM : EIO;
		return -1;
	}
	/* glob sorts: REQUEST-9xx before RESPONSE-9xx, as CRS requires. */
	for (i = 0; i < g.gl_pathc; i++) {
		int n = waf_load_file(rules, g.gl_pathv[i], err, errlen);

		if (n < 0) {
			globfree(&g);
			return -1;
		}
		total += n;
	}
	globfree(&g);
	return total;
}

static int waf_check_config(const struct waf_config *cfg,
			    char *err, size_t errlen)
{
	if (cfg->paranoia_level < 0 || cfg->paranoia_level > 4) {
		waf_errf(err, errlen, "paranoia_level %d not in 1..4",
			 cfg->paranoia_level);
		return -EINVAL;
	}
	if (cfg->inbound_threshold < 0 || cfg->outbound_threshold < 0) {
		waf_errf(err, errlen, "negative anomaly threshold");
		return -EINVAL;
	}
	if ((cfg->n_pre_rule_files && !cfg->pre_rule_files) ||
	    (cfg->n_extra_rule_files && !cfg->extra_rule_files)) {
		waf_errf(err, errlen, "rule file count without list");
		return -EINVAL;
	}
	return 0;
}

/* Builds and loads all rules into e->rules; returns 0 or -1 with errno. */
static int waf_load_all(struct waf_engine *e, const struct waf_config *cfg,
			char *err, size_t errlen)
{
	char pl[16], inth[16], outth[16], reqlim[32], resplim[32];
	const char *crs_dir = cfg->crs_dir ? cfg->crs_dir : WAF_CRS_DIR_DEFAULT;
	const char *const vars[][2] = {
		{ "PARANOIA_LEVEL", pl },
		{ "INBOUND_THRESHOLD", inth },
		{ "OUTBOUND_THRESHOLD", outth },
		{ "REQUEST_BODY_LIMIT", reqlim },
		{ "RESPONSE_BODY_LIMIT", resplim },
		{ "RESPONSE_BODY_ACCESS", cfg->inspect_response ? "On" : "Off" },
	};
	const size_t nvars = sizeof(vars) / sizeof(vars[0]);
	char *text;
	size_t i;
	int n;

	snprintf(pl, sizeof(pl), "%d", e->paranoia);
	snprintf(inth, sizeof(inth), "%d",
		 cfg->inbound_threshold ? cfg->inbound_threshold : 5);
	snprintf(outth, sizeof(outth), "%d",
		 cfg->outbound_threshold ? cfg->outbound_threshold : 4);
	snprintf(reqlim, sizeof(reqlim), "%zu", cfg->request_body_limit ?
		 cfg->request_body_limit : WAF_DEFAULT_REQ_BODY);
	snprintf(resplim, sizeof(resplim), "%zu", cfg->response_body_limit ?
		 cfg->response_body_limit : WAF_DEFAULT_RESP_BODY);

	text = waf_expand(waf_conf_base, vars, nvars);
	if (!text)
		goto out_nomem;
	n = waf_load_text(e->rules, "waf-base.conf", text, err, errlen);
	free(text);
	if (n < 0)
		return -1;
	e->n_rules += n;

	if (crs_dir[0]) {
		text = waf_expand(waf_conf_crs_setup, vars, nvars);
		if (!text)
			goto out_nomem;
		n = waf_load_text(e->rules, "crs-setup.conf", text, err, errlen);
		free(text);
		if (n < 0)
			return -1;
		e->n_rules += n;
	}
	for (i = 0; i < cfg->n_pre_rule_files; i++) {
		n = waf_load_file(e->rules, cfg->pre_rule_files[i], err, errlen);
		if (n < 0)
			return -1;
		e->n_rules += n;
	}
	if (crs_dir[0]) {
		n = waf_load_crs(e->rules, crs_dir, err, errlen);
		if (n < 0)
			return -1;
		e->n_rules += n;
	}
	for (i = 0; i < cfg->n_extra_rule_files; i++) {
		n = waf_load_file(e->rules, cfg->extra_rule_files[i], err, errlen);
		if (n < 0)
			return -1;
		e->n_rules += n;
	}
	return 0;

out_nomem:
	waf_errf(err, errlen, "out of memory");
	errno = ENOMEM;
	return -1;
}

/* (waf_global_lock held) */
static int waf_msc_get(void)
{
	if (!waf_msc) {
		waf_msc = msc_init();
		if (!waf_msc)
			return -ENOMEM;
		msc_set_connector_info(waf_msc, "TOChain vnf-waf");
		msc_set_log_cb(waf_msc, waf_log_cb);
	}
	waf_msc_users++;
	return 0;
}

/* (waf_global_lock held) */
static void waf_msc_put(void)
{
	if (--waf_msc_users == 0) {
		msc_cleanup(waf_msc);
		waf_msc = NULL;
	}
}

struct waf_engine *waf_engine_create(const struct waf_config *cfg,
				     char *err, size_t errlen)
{
	struct waf_engine *e;
	int rc, saved;

	if (err && errlen)
		err[0] = '\0';
	if (!cfg) {
		waf_errf(err, errlen, "no configuration");
		errno = EINVAL;
		return NULL;
	}
	rc = waf_check_config(cfg, err, errlen);
	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		waf_errf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	atomic_init(&e->refs, 1);
	atomic_init(&e->next_tx, 1);
	atomic_init(&e->live_tx, 0);
	e->paranoia = cfg->paranoia_level ? cfg->paranoia_level : 1;
	e->inspect_response = cfg->inspect_response;
	e->max_header_bytes = cfg->max_header_bytes ? cfg->max_header_bytes :
			      WAF_DEFAULT_HEADER;
	if (cfg->deny_page) {
		e->deny_page = strdup(cfg->deny_page);
		if (!e->deny_page) {
			waf_errf(err, errlen, "out of memory");
			free(e);
			errno = ENOMEM;
			return NULL;
		}
	}

	pthread_mutex_lock(&waf_global_lock);
	rc = waf_msc_get();
	if (rc < 0) {
		waf_errf(err, errlen, "msc_init failed");
		errno = -rc;
		goto out_unlock;
	}
	e->msc = waf_msc;
	e->rules = msc_create_rules_set();
	if (!e->rules) {
		waf_errf(err, errlen, "msc_create_rules_set failed");
		errno = ENOMEM;
		goto out_msc;
	}
	if (waf_load_all(e, cfg, err, errlen) < 0)
		goto out_rules;
	pthread_mutex_unlock(&waf_global_lock);
	return e;

out_rules:
	saved = errno;
	msc_rules_cleanup(e->rules);
	errno = saved;
out_msc:
	saved = errno;
	waf_msc_put();
	errno = saved;
out_unlock:
	pthread_mutex_unlock(&waf_global_lock);
	saved = errno;
	free(e->deny_page);
	free(e);
	errno = saved;
	return NULL;
}

struct waf_engine *waf_engine_get(struct waf_engine *e)
{
	/* Relaxed: the caller already holds a reference. */
	atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
	return e;
}

void waf_engine_put(struct waf_engine *e)
{
	if (!e)
		return;
	/* acq_rel: every put's prior use of e happens before the free by the
	 * last put (pairs with the other puts' release). */
	if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1)
		return;
	pthread_mutex_lock(&waf_global_lock);
	msc_rules_cleanup(e->rules);
	waf_msc_put();
	pthread_mutex_unlock(&waf_global_lock);
	free(e->deny_page);
	free(e);
}

const char *waf_engine_deny_page(const struct waf_engine *e)
{
	return e->deny_page;
}

unsigned waf_engine_refs(const struct waf_engine *e)
{
	return atomic_load_explicit(&e->refs, memory_order_relaxed);
}

unsigned waf_engine_live_transactions(const struct waf_engine *e)
{
	return atomic_load_explicit(&e->live_tx, memory_order_relaxed);
}

unsigned waf_engine_rule_count(const struct waf_engine *e)
{
	return e->n_rules;
}

int waf_engine_paranoia(const struct waf_engine *e)
{
	return e->paranoia;
}

void waf_slot_init(struct waf_engine_slot *s, struct waf_engine *e)
{
	pthread_mutex_init(&s->lock, NULL);
	s->cur = e;
}

struct waf_engine *waf_slot_get(struct waf_engine_slot *s)
{
	struct waf_engine *e;

	pthread_mutex_lock(&s->lock);
	e = s->cur ? waf_engine_get(s->cur) : NULL;
	pthread_mutex_unlock(&s->lock);
	return e;
}

void waf_slot_swap(struct waf_engine_slot *s, struct waf_engine *e)
{
	struct waf_engine *old;

	pthread_mutex_lock(&s->lock);
	old = s->cur;
	s->cur = e;
	pthread_mutex_unlock(&s->lock);
	waf_engine_put(old);    /* outside the lock: may free rules */
}

void waf_slot_destroy(struct waf_engine_slot *s)
{
	waf_engine_put(s->cur);
	s->cur = NULL;
	pthread_mutex_destroy(&s->lock);
}
