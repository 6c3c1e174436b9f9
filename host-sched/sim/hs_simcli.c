// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hs_report.h"
#include "hs_scn.h"
#include "hs_sim.h"
#include "hs_simcli.h"

#define MAX_FILE (16u << 20)

static int usage(void)
{
	fprintf(stderr, "usage: tochain-sim SCENARIO [--json] [--plan]\n");
	return 2;
}

/* Whole file, NUL-terminated; NULL with a message on stderr. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (cap - len < 4096) {
			char *p;

			cap = cap ? cap * 2 : 65536;
			if (cap > MAX_FILE + 4096) {
				fprintf(stderr, "%s: larger than %u bytes\n", path, MAX_FILE);
				goto out_free;
			}
			p = realloc(buf, cap);
			if (!p) {
				fprintf(stderr, "%s: out of memory\n", path);
				goto out_free;
			}
			buf = p;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "%s: read error\n", path);
		goto out_free;
	}
	buf[len] = '\0';
	if (strlen(buf) != len) {
		size_t i, line = 1;

		for (i = 0; buf[i]; i++)
			line += buf[i] == '\n';
		fprintf(stderr, "%s:%zu: NUL byte in a text file\n", path, line);
		goto out_free;
	}
	fclose(f);
	return buf;

out_free:
	free(buf);
	fclose(f);
	return NULL;
}

int hs_simcli_main(int argc, char **argv)
{
	const char *path = NULL;
	struct hs_scn scn;
	struct hs_sim_res res = { 0 };
	char err[512], *text;
	int json = 0, plan = 0, i, rc, first = 1, status = 0;
	uint32_t l;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--plan"))
			plan = 1;
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return usage(), 0;
		else if (argv[i][0] == '-' || path)
			return usage();
		else
			path = argv[i];
	}
	if (!path)
		return usage();
	text = slurp(path);
	if (!text)
		return 1;
	rc = hs_scn_parse(text, path, &scn, err, sizeof(err));
	free(text);
	if (rc) {
		fprintf(stderr, "%s\n", err);
		hs_scn_free(&scn);
		return 1;
	}
	if (hs_sim_admit(&scn, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", path, err);
		hs_scn_free(&scn);
		return 1;
	}
	res.chain = calloc(scn.nchain, sizeof(*res.chain));
	if (!res.chain) {
		fprintf(stderr, "out of memory\n");
		hs_scn_free(&scn);
		return 1;
	}
	if (json)
		hs_report_json_begin(stdout, &scn, path);
	else
		hs_report_header(stdout, &scn, path);
	for (i = 0; i < 2 && !status; i++) {
		enum hs_sim_mode m = i ? HS_SIM_CFS : HS_SIM_SYNC;

		if ((m == HS_SIM_SYNC && !scn.mode_sync) ||
		    (m == HS_SIM_CFS && !scn.mode_cfs))
			continue;
		for (l = 0; l < scn.nload; l++) {
			res.want_plan = plan ? 1 + json : 0;
			rc = hs_sim_run(&scn, m, l, &res, err, sizeof(err));
			if (rc) {
				fprintf(stderr, "%s: %s\n", path, err);
				status = 1;
				break;
			}
			if (json)
				hs_report_json_run(stdout, &scn, &res, first);
			else
				hs_report_text(stdout, &scn, &res);
			first = 0;
			free(res.plan);
			res.plan = NULL;
			fflush(stdout);
		}
	}
	if (json && !status)
		hs_report_json_end(stdout);
	free(res.chain);
	hs_scn_free(&scn);
	return status;
}
