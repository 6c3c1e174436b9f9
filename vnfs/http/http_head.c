// SPDX-License-Identifier: MIT
/* HTTP message head collector; see http_head.h. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_head.h"

void http_head_free(struct http_head *h)
{
	free(h->buf);
	free(h->hdrs);
	memset(h, 0, sizeof(*h));
}

void http_head_reset(struct http_head *h)
{
	if (h->cap > HTTP_HEAD_KEEP)
		http_head_free(h);
	h->len = 0;
	h->url_len = 0;
	h->n = 0;
	h->url_done = false;
	h->in_value = false;
	h->overflow = false;
}

int http_head_append(struct http_head *h, const char *p, size_t n, size_t limit)
{
	if (h->len + n + 1 > limit) {
		h->overflow = true;
		return -1;
	}
	if (h->len + n + 1 > h->cap) {
		size_t cap = h->cap ? h->cap : 1024;
		char *b;

		while (cap < h->len + n + 1)
			cap *= 2;
		b = realloc(h->buf, cap);
		if (!b)
			return -1;
		h->buf = b;
		h->cap = cap;
	}
	memcpy(h->buf + h->len, p, n);
	h->len += n;
	return 0;
}

int http_head_end_url(struct http_head *h, size_t limit)
{
	if (h->url_done)
		return 0;
	if (http_head_append(h, "", 1, limit) < 0)
		return -1;
	h->url_len = h->len - 1;
	h->url_done = true;
	return 0;
}

int http_head_field(struct http_head *h, const char *p, size_t n, size_t limit)
{
	struct http_head_hdr *hd;

	if (http_head_end_url(h, limit) < 0)
		return -1;
	if (h->n == 0 || h->in_value) {
		if (h->n == h->hcap) {
			unsigned cap = h->hcap ? h->hcap * 2 : 32;
			struct http_head_hdr *a = realloc(h->hdrs, cap * sizeof(*a));

			if (!a)
				return -1;
			h->hdrs = a;
			h->hcap = cap;
		}
		hd = &h->hdrs[h->n++];
		hd->name_off = h->len;
		hd->name_len = 0;
		hd->val_off = h->len;
		hd->val_len = 0;
		h->in_value = false;
	}
	hd = &h->hdrs[h->n - 1];
	if (http_head_append(h, p, n, limit) < 0)
		return -1;
	hd->name_len += n;
	hd->val_off = h->len;
	return 0;
}

int http_head_value(struct http_head *h, const char *p, size_t n, size_t limit)
{
	struct http_head_hdr *hd;

	if (h->n == 0)
		return -1;	/* value without name: the parser prevents it */
	hd = &h->hdrs[h->n - 1];
	if (!h->in_value) {
		hd->val_off = h->len;
		hd->val_len = 0;
		h->in_value = true;
	}
	if (http_head_append(h, p, n, limit) < 0)
		return -1;
	hd->val_len += n;
	return 0;
}

bool http_head_has(const struct http_head *h, const char *name)
{
	size_t nl = strlen(name);

	for (unsigned i = 0; i < h->n; i++)
		if (h->hdrs[i].name_len == nl &&
		    strncasecmp(h->buf + h->hdrs[i].name_off, name, nl) == 0)
			return true;
	return false;
}
