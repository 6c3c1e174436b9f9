/*
 * The answer a browser sees when the WAF denies a request (waf_answer_*):
 * an HTTP/1.1 403 (a protocol violation: 400) with a small HTML page
 * carrying an incident id, then the connection closes.  The page is the
 * built-in one or an operator's template (`deny_page = FILE` in a WAF
 * configuration file, waf_config.h) in which @STATUS@ becomes "403
 * Forbidden" / "400 Bad Request" and @INCIDENT@ the incident id (8 hex
 * digits).  The whole answer, headers included, is bounded by
 * WAF_ANSWER_MAX (what the TOE accepts from a VNF, vnf_proto.h).
 * No shared state.
 */
#ifndef TOCHAIN_WAF_ANSWER_H
#define TOCHAIN_WAF_ANSWER_H

#include <stddef.h>
#include <stdint.h>

#include "waf_engine.h"

#define WAF_ANSWER_MAX	1024	/* bytes of an answer, headers included */

/* 400 for a protocol violation (parser, body that does not parse), else 403. */
int waf_answer_status(const struct waf_verdict *v);

/*
 * The answer for @status (400 or 403) and @incident into @buf (@cap
 * bytes), from template @page (NUL-terminated; NULL: the built-in page).
 * Returns its length, or 0 if it does not fit (the caller resets).
 */
size_t waf_answer_build(const char *page, int status, uint32_t incident, char *buf, size_t cap);

/*
 * Read template @path into *@out (malloc'd, NUL-terminated; the caller
 * frees it).  0, or -errno with a message in @err: -EINVAL when the page
 * holds a NUL byte or does not fit WAF_ANSWER_MAX once filled in, the
 * open/read errors of the file.
 */
int waf_answer_page_load(const char *path, char **out, char *err, size_t errlen);

#endif
