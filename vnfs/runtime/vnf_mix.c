// SPDX-License-Identifier: MIT
/* The built-in HTTP traffic mix; see vnf_mix.h. */
#include <stdio.h>
#include <string.h>

#include "vnf_mix.h"

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static const char *const paths[] = {
	"/", "/index.html", "/blog/2024/03/how-to-bake-bread.html", "/products/list",
	"/assets/css/main.min.css", "/img/photos/beach-sunset_1024x768.jpg", "/search",
	"/api/v1/items", "/account/settings", "/news/world/today",
};

static const char *const words[] = {
	"best", "hiking", "trails", "near", "the", "lake", "bread", "recipe", "linux",
	"kernel", "garden", "tomato", "coffee", "morning", "travel", "guide", "summer",
	"winter", "music", "concert",
};

static const char *const agents[] = {
	"Mozilla/5.0 (X11; Linux x86_64; rv:115.0) Gecko/20100101 Firefox/115.0",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
	" Chrome/120.0.0.0 Safari/537.36",
	"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_2) AppleWebKit/605.1.15 (KHTML, like Gecko)"
	" Version/17.2 Safari/605.1.15",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Common headers; a session cookie of @cookie hex characters. */
static int headers(char *p, size_t cap, uint64_t r, unsigned int cookie)
{
	int n = snprintf(p, cap, "Host: www.example.com\r\nUser-Agent: %s\r\n"
			 "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n"
			 "Accept-Language: en-US,en;q=0.5\r\nAccept-Encoding: gzip, deflate, br\r\n"
			 "Connection: keep-alive\r\nCookie: session=",
			 agents[r % NELEM(agents)]);

	for (unsigned int i = 0; i < cookie && (size_t)n + 4 < cap; i++)
		p[n++] = "0123456789abcdef"[mix64(r + i) & 15];
	n += snprintf(p + n, cap - (size_t)n, "\r\n");
	return n;
}

/* @n words joined by '+', at most @cap bytes. */
static int text(char *p, size_t cap, uint64_t r, unsigned int nwords)
{
	int n = 0;

	for (unsigned int i = 0; i < nwords && (size_t)n + 16 < cap; i++)
		n += snprintf(p + n, cap - (size_t)n, "%s%s", i ? "+" : "",
			      words[mix64(r + i * 7) % NELEM(words)]);
	return n;
}

uint32_t vnf_mix_request(uint64_t i, char *buf, enum vnf_mix_family *fam)
{
	static const char *const attack_uri[] = {
		[VNF_MIX_SQLI] = "/products?id=1%20UNION%20SELECT%20username,password%20FROM%20users",
		[VNF_MIX_XSS] = "/search?q=%3Cscript%3Ealert(document.cookie)%3C/script%3E",
		[VNF_MIX_TRAVERSAL] = "/download?file=../../../../etc/passwd",
		[VNF_MIX_RCE] = "/ping?host=127.0.0.1;uname%20-a;id",
	};
	uint64_t r = mix64(i);
	const size_t cap = VNF_MIX_MAX;
	char body[3200];
	int n, blen;

	*fam = VNF_MIX_CLEAN;
	if (i % 10 == 9)
		*fam = (enum vnf_mix_family)(1 + (i / 10) % (VNF_MIX_NFAMILIES - 1));
	if (*fam == VNF_MIX_PROTO) {
		n = snprintf(buf, cap, "POST /form HTTP/1.1\r\n");
		n += headers(buf + n, cap - (size_t)n, r, 32);
		n += snprintf(buf + n, cap - (size_t)n,
			      "Content-Type: application/x-www-form-urlencoded\r\n"
			      "Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG");
		return (uint32_t)n;
	}
	if (*fam != VNF_MIX_CLEAN) {
		n = snprintf(buf, cap, "GET %s HTTP/1.1\r\n", attack_uri[*fam]);
		n += headers(buf + n, cap - (size_t)n, r, 32);
		n += snprintf(buf + n, cap - (size_t)n, "\r\n");
		return (uint32_t)n;
	}
	if (r % 3 == 0) {
		/* A form POST with a body of 200 B to 3 KiB. */
		unsigned int want = 200 + (unsigned int)(mix64(r) % 2900);

		blen = snprintf(body, sizeof(body), "name=%s&email=user%u%%40example.com&comment=",
				words[r % NELEM(words)], (unsigned int)(r % 1000));
		blen += text(body + blen, sizeof(body) - (size_t)blen, r, want / 6);
		n = snprintf(buf, cap, "POST /contact HTTP/1.1\r\n");
		n += headers(buf + n, cap - (size_t)n, r, 32);
		n += snprintf(buf + n, cap - (size_t)n,
			      "Content-Type: application/x-www-form-urlencoded\r\n"
			      "Content-Length: %d\r\n\r\n", blen);
		memcpy(buf + n, body, (size_t)blen);
		return (uint32_t)(n + blen);
	}
	/* A GET of 350 B to 2 KiB: a query and a cookie of varying size. */
	n = snprintf(buf, cap, "GET %s", paths[r % NELEM(paths)]);
	if (r & 4) {
		n += snprintf(buf + n, cap - (size_t)n, "?q=");
		n += text(buf + n, 200, r >> 8, 1 + (unsigned int)((r >> 16) % 12));
		n += snprintf(buf + n, cap - (size_t)n, "&page=%u", (unsigned int)(r >> 24) % 9 + 1);
	}
	n += snprintf(buf + n, cap - (size_t)n, " HTTP/1.1\r\n");
	n += headers(buf + n, cap - (size_t)n, r, 16 + (unsigned int)((r >> 32) % 1400));
	n += snprintf(buf + n, cap - (size_t)n, "\r\n");
	return (uint32_t)n;
}

const char *vnf_mix_family_name(enum vnf_mix_family f)
{
	static const char *const names[] = { "clean", "sqli", "xss", "traversal", "rce",
					     "proto" };

	return (unsigned int)f < VNF_MIX_NFAMILIES ? names[f] : "?";
}
