/*
 * libFuzzer target: arbitrary byte streams, cut at arbitrary points, in
 * both directions, through one flow.  The engine (own small rule set, no
 * CRS, responses inspected) is loaded once.  Checks that nothing crashes,
 * that a deny is sticky, and that a destroyed flow leaves no transaction.
 *
 * Input: a sequence of records [hdr][bytes...]: hdr bit 7 = direction
 * (1: server->client), bits 0-6 + 1 = record length (the last record may
 * be shorter).  Both directions see FIN at the end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "waf_engine.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct waf_engine *fuzz_eng;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char rules[] =
		"SecRule ARGS|REQUEST_BODY \"@contains evil\" "
		"\"id:10001,phase:2,t:none,deny,status:403,log\"\n"
		"SecRule REQUEST_HEADERS \"@contains warn\" "
		"\"id:10002,phase:1,t:none,pass,log\"\n"
		"SecRule RESPONSE_BODY \"@contains secret\" "
		"\"id:10003,phase:4,t:none,deny,status:502,log\"\n";
	char path[] = "/tmp/waf_fuzz_rules_XXXXXX";
	const char *files[1] = { path };
	struct waf_config cfg = { .crs_dir = "", .inspect_response = true,
				  .max_header_bytes = 4096,
				  .request_body_limit = 8192,
				  .extra_rule_files = files,
				  .n_extra_rule_files = 1 };
	char err[256];
	FILE *fp;
	int fd;

	(void)argc;
	(void)argv;
	fd = mkstemp(path);
	fp = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!fp || fputs(rules, fp) < 0 || fclose(fp) != 0)
		abort();
	fuzz_eng = waf_engine_create(&cfg, err, sizeof(err));
	unlink(path);
	if (!fuzz_eng) {
		fprintf(stderr, "waf_fuzz: %s\n", err);
		abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct waf_flow *f = waf_flow_create(fuzz_eng, "192.0.2.1", 1234,
					     "192.0.2.2", 80);
	struct waf_verdict v;
	size_t off = 0;
	int denied = 0;

	if (!f)
		abort();
	while (off < size) {
		uint8_t hdr = data[off++];
		enum waf_dir dir = hdr & 0x80 ? WAF_DIR_OUT : WAF_DIR_IN;
		size_t len = (size_t)(hdr & 0x7f) + 1;
		int rc;

		if (len > size - off)
			len = size - off;
		rc = waf_flow_feed(f, dir, data + off, len, &v);
		off += len;
		if (rc != WAF_ALLOW && rc != WAF_DENY)
			abort();
		if (denied && rc != WAF_DENY)
			abort();        /* a deny is final */
		if (rc == WAF_DENY) {
			denied = 1;
			if (waf_engine_live_transactions(fuzz_eng) != 0)
				abort();  /* a denied flow holds nothing */
		}
	}
	waf_flow_feed(f, WAF_DIR_OUT, NULL, 0, &v);
	waf_flow_feed(f, WAF_DIR_IN, NULL, 0, &v);
	waf_flow_destroy(f);
	if (waf_engine_live_transactions(fuzz_eng) != 0)
		abort();
	return 0;
}
