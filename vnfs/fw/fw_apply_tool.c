// SPDX-License-Identifier: MIT
/*
 * tochain-fw-apply (installed; tochaind runs it for a VM's TOE namespace)
 * and fw-apply (the same program, built for the integration tests): the
 * nftables half of the firewall VNF, and the matcher for one packet.
 * Operators use sfc-ctl; tochaind runs, for a VM whose chains have a fw
 * VNF, `ip netns exec NS tochain-fw-apply apply FILE` (or
 * `tochain-fw-apply --netns NS apply FILE`) when the VNF is added or its
 * rules change, and `... remove` when it goes (vnfs/fw/README.md).
 *
 *   fw-apply [--netns NAME|PATH] apply FILE   replace table inet tochain_fw
 *   fw-apply [--netns NAME|PATH] remove       delete it
 *   fw-apply [--netns NAME|PATH] list         print it
 *   fw-apply check FILE                       parse + nftables dry run
 *   fw-apply render FILE                      print the nftables transaction
 *   fw-apply match FILE DIR PROTO SRC SPORT DST DPORT CT [FLAGS]
 *                                             the matcher's verdict for one packet:
 *       DIR in|out, PROTO tcp|udp|NUMBER, CT new|established|related|invalid,
 *       FLAGS comma-separated TCP flag names; prints "VERDICT RULE LINE"
 *
 * Exit status: 0 done, 1 refused (reason on stderr), 2 usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw_match.h"
#include "fw_nft.h"
#include "fw_rules.h"

static int usage(void)
{
	const char *me = program_invocation_short_name;

	fprintf(stderr, "usage: %s [--netns NAME|PATH] apply FILE | remove | list\n"
			"       %s check FILE | render FILE\n"
			"       %s match FILE DIR PROTO SRC SPORT DST DPORT CT [FLAGS]\n", me, me, me);
	return 2;
}

static int parse_addr(const char *s, uint8_t *family, uint8_t *out)
{
	*family = strchr(s, ':') ? 6 : 4;
	return inet_pton(*family == 4 ? AF_INET : AF_INET6, s, out) == 1 ? 0 : -1;
}

static int match_cmd(const struct fw_ruleset *rs, char **a, int n)
{
	static const char *const cts[] = { "new", "established", "related", "invalid" };
	static const char *const flags[] = { "fin", "syn", "rst", "psh", "ack", "urg", "ecn", "cwr" };
	struct fw_packet p = { 0 };
	struct fw_hit hit;
	enum fw_verdict v;
	uint8_t fam2;
	char *tok, *save;
	int i;

	if (n < 7 || n > 8)
		return usage();
	p.dir = !strcmp(a[0], "out") ? FW_DIR_OUT : FW_DIR_IN;
	p.proto = !strcmp(a[1], "tcp") ? 6 : !strcmp(a[1], "udp") ? 17 : (uint8_t)atoi(a[1]);
	if (parse_addr(a[2], &p.family, p.src) || parse_addr(a[4], &fam2, p.dst) ||
	    fam2 != p.family)
		return usage();
	p.sport = (uint16_t)atoi(a[3]);
	p.dport = (uint16_t)atoi(a[5]);
	for (i = 0; i < 4 && strcmp(a[6], cts[i]); i++)
		;
	if (i == 4)
		return usage();
	p.ct = (uint8_t)i;
	if (n == 7)
		goto out_match;
	for (tok = strtok_r(a[7], ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < 8 && strcmp(tok, flags[i]); i++)
			;
		if (i == 8)
			return usage();
		p.tcp_flags |= (uint8_t)(1u << i);
	}
out_match:
	v = fw_match(rs, &p, &hit);
	printf("%s %u %u\n", fw_verdict_name(v), hit.rule, hit.line);
	return 0;
}

int main(int argc, char **argv)
{
	const char *netns = NULL, *cmd;
	struct fw_ruleset *rs = NULL;
	struct fw_diag diag = { .msg = "" };
	int i = 1, rc;

	if (argc > 2 && !strcmp(argv[1], "--netns")) {
		netns = argv[2];
		i = 3;
	}
	if (i >= argc)
		return usage();
	cmd = argv[i++];
	if (!strcmp(cmd, "match")) {
		if (i >= argc)
			return usage();
		rs = fw_ruleset_load(argv[i], &diag);
		if (!rs) {
			fprintf(stderr, "%s: %s\n", program_invocation_short_name, diag.msg);
			return 1;
		}
		rc = match_cmd(rs, argv + i + 1, argc - i - 1);
		fw_ruleset_destroy(rs);
		return rc;
	}
	if (!strcmp(cmd, "apply") || !strcmp(cmd, "check") || !strcmp(cmd, "render")) {
		if (i + 1 != argc)
			return usage();
		rs = fw_ruleset_load(argv[i], &diag);
		if (!rs) {
			fprintf(stderr, "%s: %s\n", program_invocation_short_name, diag.msg);
			return 1;
		}
	} else if (i != argc) {
		return usage();
	}

	if (!strcmp(cmd, "apply")) {
		rc = fw_nft_apply(netns, rs, &diag);
	} else if (!strcmp(cmd, "check")) {
		rc = fw_nft_check(rs, &diag);
	} else if (!strcmp(cmd, "render")) {
		char *text = fw_nft_render(rs);

		rc = text ? 0 : -1;
		if (text)
			fputs(text, stdout);
		free(text);
	} else if (!strcmp(cmd, "remove")) {
		rc = fw_nft_remove(netns, &diag);
	} else if (!strcmp(cmd, "list")) {
		char *out = NULL;

		rc = fw_nft_list(netns, &out, &diag);
		if (!rc)
			fputs(out, stdout);
		free(out);
	} else {
		return usage();
	}
	fw_ruleset_destroy(rs);
	if (rc) {
		fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, cmd, diag.msg[0] ? diag.msg : "failed");
		return 1;
	}
	return 0;
}
