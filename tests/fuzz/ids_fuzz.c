// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for vnfs/ids (make fuzz).  The first input byte picks:
 *   even: the rest is a rule file (parser, variables, compiler);
 *   odd:  the rest is traffic for one flow against a fixed ruleset, as
 *         records [ctl][bytes...]: ctl bit 7 = direction, bits 0-6 = length;
 *         each record is also a UDP datagram.
 * Both are inputs the engine must survive: rule files from operators and
 * byte streams from guests.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "ids.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fixed_rules[] =
	"ipvar HOME_NET [10.0.0.0/8,!10.9.9.9]\n"
	"alert tcp any any -> $HOME_NET 80 (content:\"GET\"; depth:3; "
	"content:\"/adm\"; distance:1; within:8; sid:1;)\n"
	"drop tcp any any -> any any (content:\"/etc/passwd\"; http_uri; "
	"sid:2;)\n"
	"alert tcp any any -> any any (content:\"union\"; nocase; "
	"http_client_body; pcre:\"/union\\s+select/Pi\"; sid:3;)\n"
	"alert tcp any any -> any any (pcre:\"/(a+)+b/\"; sid:4;)\n"
	"alert tcp any any -> any any (content:\"|00 00|\"; content:!\"x\"; "
	"within:10; flowbits:set,z; sid:5;)\n"
	"alert tcp any any -> any any (flowbits:isset,z; content:\"zz\"; "
	"distance:-3; sid:6;)\n"
	"alert tcp any any <> any any (content:\"User-Agent\"; http_header; "
	"pcre:\"/x.y/R\"; sid:7;)\n"
	"alert tcp any any -> any any (pcre:\"/a b/x\"; sid:8;)\n"
	"alert tcp any any -> any any (flow:to_client; file_data; "
	"content:\"evil\"; byte_jump:1,0,relative; isdataat:!2,relative; "
	"sid:9;)\n"
	"alert tcp any any -> any any (flow:to_client; content:\"404\"; "
	"http_stat_code; content:\"gzip\"; http_header; sid:10;)\n"
	"alert tcp any any -> any any (content:\"x\"; byte_test:4,>,7,-2,"
	"relative,string,hex; urilen:2<>9; sid:11;)\n"
	"alert udp any any -> any 53 (content:\"|01 00|\"; byte_jump:2,0,"
	"relative,little,align,post_offset -3; byte_test:1,&,1,0,relative; "
	"dsize:<300; sid:12;)\n"
	"alert tcp any any -> any any (content:\"B \"; base64_decode:bytes 40,"
	"relative; base64_data; content:\"ro\"; byte_extract:1,0,n,relative; "
	"byte_test:1,<,n,0,relative; sid:13;)\n"
	"alert tcp any any -> any any (content:\"L\"; byte_extract:2,0,m,"
	"relative,multiplier 3,align 4; content:\"Q\"; distance:m; within:m; "
	"detection_filter:track by_dst, count 2, seconds 60; sid:14;)\n";

static struct ids_ruleset *fixed;
static struct ids_worker *worker;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ids_flow_key k = { .family = AF_INET, .client_port = 1234,
				  .server_port = 80,
				  .server_addr = { 10, 0, 0, 1 } };
	struct ids_flow *f;

	if (size == 0)
		return 0;
	if (!(data[0] & 1)) {
		struct ids_diags d = { 0 };
		struct ids_ruleset *rs = ids_ruleset_load_mem(
			"fuzz.rules", (const char *)data + 1, size - 1, NULL, &d);

		ids_diags_free(&d);
		ids_ruleset_put(rs);
		return 0;
	}
	if (!fixed) {
		fixed = ids_ruleset_load_mem("fixed", fixed_rules,
					     strlen(fixed_rules), NULL, NULL);
		worker = ids_worker_create();
		if (!fixed || !worker)
			__builtin_trap();
	}
	f = ids_flow_create(fixed, &k);
	if (!f)
		return 0;
	for (size_t at = 1; at < size;) {
		uint8_t ctl = data[at++];
		size_t n = ctl & 0x7f;
		struct ids_verdict v;

		if (n > size - at)
			n = size - at;
		ids_flow_scan(worker, f, ctl & 0x80 ? IDS_TO_CLIENT :
			      IDS_TO_SERVER, data + at, n, &v);
		ids_datagram_scan(worker, fixed, &k, ctl & 0x80 ?
				  IDS_TO_CLIENT : IDS_TO_SERVER, data + at, n,
				  &v);
		at += n;
	}
	ids_flow_destroy(f);
	return 0;
}
