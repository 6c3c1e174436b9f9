/*
 * WAF configuration files (format in waf_config.h).  No shared state.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "waf_answer.h"
#include "waf_config.h"

static int cfg_err(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int cfg_err(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "on") ||
	    !strcasecmp(v, "true") || !strcmp(v, "1"))
		*out = true;
	else if (!strcasecmp(v, "no") || !strcasecmp(v, "off") ||
		 !strcasecmp(v, "false") || !strcmp(v, "0"))
		*out = false;
	else
		return -1;
	return 0;
}

/* Non-negative integer with an optional K or M suffix (x1024), < 2^40. */
static int parse_size(const char *v, size_t *out)
{
	unsigned long long n, mul = 1;
	char *end;

	if (!isdigit((unsigned char)*v))
		return -1;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno)
		return -1;
	if (*end == 'K' || *end == 'k')
		mul = 1024, end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1024 * 1024, end++;
	if (*end || n > (1ULL << 40) / mul)
		return -1;
	*out = (size_t)(n * mul);
	return 0;
}

static int parse_int(const char *v, int lo, int hi, int *out)
{
	long n;
	char *end;

	if (!isdigit((unsigned char)*v))
		return -1;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < lo || n > hi)
		return -1;
	*out = (int)n;
	return 0;
}

/* path relative to the directory of base (unless absolute). */
static char *resolve(const char *base, const char *path)
{
	const char *slash = strrchr(base, '/');
	size_t dl;
	char *r;

	if (path[0] == '/' || !slash)
		return strdup(path);
	dl = (size_t)(slash - base) + 1;
	r = malloc(dl + strlen(path) + 1);
	if (!r)
		return NULL;
	memcpy(r, base, dl);
	strcpy(r + dl, path);
	return r;
}

static int add_file(const char *base, const char *v, char **list,
		    size_t *n)
{
	if (*n == WAF_CONFIG_MAX_FILES)
		return -EINVAL;
	list[*n] = resolve(base, v);
	if (!list[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int apply(struct waf_config_file *c, const char *base,
		 const char *k, const char *v)
{
	struct waf_config *cfg = &c->cfg;

	if (!strcmp(k, "crs_dir")) {
		free(c->crs_dir);
		c->crs_dir = !strcmp(v, "none") ? strdup("") : resolve(base, v);
		if (!c->crs_dir)
			return -ENOMEM;
		cfg->crs_dir = c->crs_dir;
		return 0;
	}
	if (!strcmp(k, "paranoia_level"))
		return parse_int(v, 1, 4, &cfg->paranoia_level) ? -EINVAL : 0;
	if (!strcmp(k, "inspect_response"))
		return parse_bool(v, &cfg->inspect_response) ? -EINVAL : 0;
	if (!strcmp(k, "request_body_limit"))
		return parse_size(v, &cfg->request_body_limit) ? -EINVAL : 0;
	if (!strcmp(k, "response_body_limit"))
		return parse_size(v, &cfg->response_body_limit) ? -EINVAL : 0;
	if (!strcmp(k, "max_header_bytes"))
		return parse_size(v, &cfg->max_header_bytes) ? -EINVAL : 0;
	if (!strcmp(k, "inbound_threshold"))
		return parse_int(v, 1, 100000, &cfg->inbound_threshold) ? -EINVAL : 0;
	if (!strcmp(k, "outbound_threshold"))
		return parse_int(v, 1, 100000, &cfg->outbound_threshold) ? -EINVAL : 0;
	if (!strcmp(k, "pre_rules"))
		return add_file(base, v, c->pre, &cfg->n_pre_rule_files);
	if (!strcmp(k, "rules"))
		return add_file(base, v, c->extra, &cfg->n_extra_rule_files);
	return -ENOENT;         /* unknown key */
}

int waf_config_load(const char *path, struct waf_config_file *out,
		    char *err, size_t errlen)
{
	char line[4096];
	unsigned lineno = 0;
	FILE *fp;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->cfg.pre_rule_files = (const char *const *)out->pre;
	out->cfg.extra_rule_files = (const char *const *)out->extra;
	if (err && errlen)
		err[0] = '\0';
	fp = fopen(path, "r");
	if (!fp)
		return cfg_err(err, errlen, -errno, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), fp)) {
		char *hash, *eq, *k, *v;

		lineno++;
		if (!strchr(line, '\n') && !feof(fp)) {
			rc = cfg_err(err, errlen, -EINVAL, "%s:%u: line too long",
				     path, lineno);
			break;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		k = trim(line);
		if (!*k)
			continue;
		eq = strchr(k, '=');
		if (!eq) {
			rc = cfg_err(err, errlen, -EINVAL, "%s:%u: expected key = value",
				     path, lineno);
			break;
		}
		*eq = '\0';
		k = trim(k);
		v = trim(eq + 1);
		if (!*v) {
			rc = cfg_err(err, errlen, -EINVAL, "%s:%u: %s: empty value",
				     path, lineno, k);
			break;
		}
		if (!strcmp(k, "deny_page")) {
			char msg[512], *file = resolve(path, v);

			free(out->deny_page);
			out->deny_page = NULL;
			rc = file ? waf_answer_page_load(file, &out->deny_page, msg, sizeof(msg))
				  : -ENOMEM;
			out->cfg.deny_page = out->deny_page;
			free(file);
			if (rc) {
				rc = cfg_err(err, errlen, rc, "%s:%u: %s", path, lineno,
					     rc == -ENOMEM ? "out of memory" : msg);
				break;
			}
			continue;
		}
		rc = apply(out, path, k, v);
		if (rc == -ENOENT) {
			rc = cfg_err(err, errlen, -EINVAL, "%s:%u: unknown key '%s'",
				     path, lineno, k);
			break;
		}
		if (rc < 0) {
			rc = cfg_err(err, errlen, rc, "%s:%u: %s: %s '%s'", path,
				     lineno, k, rc == -ENOMEM ? "out of memory" :
				     "bad value", v);
			break;
		}
	}
	if (rc == 0 && ferror(fp))
		rc = cfg_err(err, errlen, -EIO, "%s: read error", path);
	fclose(fp);
	return rc;
}

void waf_config_free(struct waf_config_file *c)
{
	size_t i;

	free(c->crs_dir);
	free(c->deny_page);
	for (i = 0; i < WAF_CONFIG_MAX_FILES; i++) {
		free(c->pre[i]);
		free(c->extra[i]);
	}
	memset(c, 0, sizeof(*c));
}
