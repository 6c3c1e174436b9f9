/* The WAF's deny answer (waf_answer.h).  No shared state. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "waf_answer.h"

static const char default_page[] =
	"<!DOCTYPE html>\n"
	"<html><head><title>@STATUS@</title></head>\n"
	"<body><h1>@STATUS@</h1>\n"
	"<p>This request was refused by the web application firewall.</p>\n"
	"<p>Incident id: <code>@INCIDENT@</code></p></body></html>\n";

int waf_answer_status(const struct waf_verdict *v)
{
	return v->source == WAF_SRC_HTTP || v->status == 400 ? 400 : 403;
}

/* @tmpl with its placeholders filled in, into @buf; length, or cap if it does not fit. */
static size_t fill(const char *tmpl, const char *status, const char *incident, char *buf,
		   size_t cap)
{
	size_t n = 0;

	for (const char *p = tmpl; *p;) {
		const char *s = NULL;
		size_t skip = 1, l;

		if (!strncmp(p, "@STATUS@", 8))
			s = status, skip = 8;
		else if (!strncmp(p, "@INCIDENT@", 10))
			s = incident, skip = 10;
		l = s ? strlen(s) : 1;
		if (n + l > cap)
			return cap;
		memcpy(buf + n, s ? s : p, l);
		n += l;
		p += skip;
	}
	return n;
}

size_t waf_answer_build(const char *page, int status, uint32_t incident, char *buf, size_t cap)
{
	char body[WAF_ANSWER_MAX], id[16];
	const char *st = status == 400 ? "400 Bad Request" : "403 Forbidden";
	size_t nb;
	int nh;

	snprintf(id, sizeof(id), "%08x", incident);
	nb = fill(page ? page : default_page, st, id, body, sizeof(body));
	if (nb >= sizeof(body))
		return 0;
	nh = snprintf(buf, cap,
		      "HTTP/1.1 %s\r\nContent-Type: text/html; charset=utf-8\r\n"
		      "Content-Length: %zu\r\nCache-Control: no-store\r\n"
		      "X-Incident-Id: %s\r\nConnection: close\r\n\r\n",
		      st, nb, id);
	if (nh < 0 || (size_t)nh + nb > cap)
		return 0;
	memcpy(buf + nh, body, nb);
	return (size_t)nh + nb;
}

int waf_answer_page_load(const char *path, char **out, char *err, size_t errlen)
{
	char tmp[WAF_ANSWER_MAX];
	char *page = malloc(WAF_ANSWER_MAX + 1);
	FILE *f;
	size_t n;
	int rc = 0;

	*out = NULL;
	if (!page)
		return -ENOMEM;
	f = fopen(path, "re");
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "deny_page: %s: %s", path, strerror(errno));
		free(page);
		return rc;
	}
	n = fread(page, 1, WAF_ANSWER_MAX + 1, f);
	if (ferror(f)) {
		rc = -EIO;
		snprintf(err, errlen, "deny_page: %s: read error", path);
	} else if (n > WAF_ANSWER_MAX || memchr(page, '\0', n)) {
		rc = -EINVAL;
		snprintf(err, errlen, "deny_page: %s: %s", path,
			 n > WAF_ANSWER_MAX ? "larger than the answer limit (1024 bytes)"
					    : "holds a NUL byte");
	}
	fclose(f);
	if (!rc) {
		page[n] = '\0';
		/* Both statuses must fit, with headers, or the page would never show. */
		if (!waf_answer_build(page, 400, 0xffffffffu, tmp, sizeof(tmp)) ||
		    !waf_answer_build(page, 403, 0xffffffffu, tmp, sizeof(tmp))) {
			rc = -EINVAL;
			snprintf(err, errlen, "deny_page: %s: too large once filled in: the answer, "
				 "headers included, must fit 1024 bytes", path);
		}
	}
	if (rc)
		free(page);
	else
		*out = page;
	return rc;
}
