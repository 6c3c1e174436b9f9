/* SPDX-License-Identifier: MIT */
/*
 * hs_report — tochain-sim's output: a table per (mode, load) run, or one
 * JSON document for all runs.
 */
#ifndef HS_REPORT_H
#define HS_REPORT_H

#include <stdio.h>

#include "hs_scn.h"
#include "hs_sim.h"

void hs_report_header(FILE *out, const struct hs_scn *scn, const char *fname);
void hs_report_text(FILE *out, const struct hs_scn *scn,
		    const struct hs_sim_res *res);

/* JSON: call begin, then run for each result, then end. */
void hs_report_json_begin(FILE *out, const struct hs_scn *scn, const char *fname);
void hs_report_json_run(FILE *out, const struct hs_scn *scn,
			const struct hs_sim_res *res, int first);
void hs_report_json_end(FILE *out);

#endif
