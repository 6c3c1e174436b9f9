// SPDX-License-Identifier: MIT
/*
 * fw-apply - test helper: drives the firewall library from integration
 * tests.  Not an operator tool (that is sfc-ctl).
 *
 *   fw-apply [--netns NAME|PATH] apply FILE   replace table inet tochain_fw
 *   fw-apply [--netns NAME|PATH] remove       delete it
 *   fw-apply [--netns NAME|PATH] list         print it
 *   fw-apply check FILE                       parse + nftables dry run
 *   fw-apply render FILE                      print the nftables transaction
 *
 * Exit status: 0 done, 1 refused (reason on stderr), 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw_nft.h"
#include "fw_rules.h"

static int usage(void)
{
	fprintf(stderr, "usage: fw-apply [--netns NAME|PATH] apply FILE | remove | list\n"
			"       fw-apply check FILE | render FILE\n");
	return 2;
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
	if (!strcmp(cmd, "apply") || !strcmp(cmd, "check") || !strcmp(cmd, "render")) {
		if (i + 1 != argc)
			return usage();
		rs = fw_ruleset_load(argv[i], &diag);
		if (!rs) {
			fprintf(stderr, "fw-apply: %s\n", diag.msg);
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
		fprintf(stderr, "fw-apply: %s: %s\n", cmd, diag.msg[0] ? diag.msg : "failed");
		return 1;
	}
	return 0;
}
