// SPDX-License-Identifier: MIT
#include <inttypes.h>

#include "hs_report.h"

/* Names are checked by the parser ([A-Za-z0-9_.-]); only the file name
 * needs escaping in JSON. */
static void jstr(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

void hs_report_header(FILE *out, const struct hs_scn *scn, const char *fname)
{
	fprintf(out, "scenario %s: %" PRIu32 " cores (%" PRIu32 " service, %" PRIu32
		" synchronous), tick %g ms, period %" PRIu32 " ticks, %" PRIu32
		" chains, %" PRIu32 " VMs, %g s per run (%g s warm-up)\n",
		fname, scn->cores, scn->service, scn->cores - scn->service,
		scn->tick_ms, scn->period, scn->nchain, scn->nvm,
		scn->duration_s, scn->warmup_s);
}

void hs_report_text(FILE *out, const struct hs_scn *scn,
		    const struct hs_sim_res *res)
{
	const struct hs_scn_load *l = &scn->load[res->load];
	uint32_t i, met = 0;

	fprintf(out, "\n== mode %s, load %s (offered %.2f x SLA%s)\n",
		hs_sim_mode_name(res->mode), l->name, l->scale,
		l->off_ms > 0 ? ", bursty" : "");
	fprintf(out, "%-16s %-12s %9s %9s %9s %7s %9s %9s %9s %6s\n", "chain", "vm",
		"sla", "offered", "achieved", "ach/sla", "dropped", "inq", "outq",
		"quota");
	for (i = 0; i < scn->nchain; i++) {
		const struct hs_sim_chain_res *c = &res->chain[i];
		double sla = (double)scn->chain[i].sla_pps;

		met += c->achieved >= 0.95 * sla;
		/* a thousand chains would drown the summary: print 20 */
		if (scn->nchain > 40 && i >= 20)
			continue;
		fprintf(out, "%-16s %-12s %9.0f %9.0f %9.0f %6.1f%% %9.0f %9.1f %9.1f %3" PRIu32 "/%-2" PRIu32 "\n",
			scn->chain[i].name, scn->vm[scn->chain[i].vm].name, sla,
			c->offered, c->achieved, 100.0 * c->achieved / sla,
			c->dropped, c->inq, c->outq, c->quota, c->vcpus);
	}
	if (scn->nchain > 40)
		fprintf(out, "(%" PRIu32 " more chains not shown)\n", scn->nchain - 20);
	fprintf(out, "chains at >= 95%% of SLA: %" PRIu32 "/%" PRIu32 "\n", met,
		scn->nchain);
	fprintf(out, "cpu: synchronous partition %.1f%%, service partition %.1f%%, host %.1f%%; Jain's index over VMs %.4f\n",
		100 * res->cpu_sync, 100 * res->cpu_service, 100 * res->cpu_host,
		res->jain);
	if (res->mode == HS_SIM_SYNC) {
		fprintf(out, "early ends: %" PRIu64 " input empty, %" PRIu64
			" output full; deferred chain-periods: %" PRIu64 "\n",
			res->early_input, res->early_output, res->deferred);
		fprintf(out, "algorithm 1+2 per period: median %.1f us, p99 %.1f us, max %.1f us over %" PRIu64 " periods\n",
			res->plan_us_median, res->plan_us_p99, res->plan_us_max,
			res->periods);
	}
	if (res->plan)
		fprintf(out, "plan of the last period:\n%s", res->plan);
}

void hs_report_json_begin(FILE *out, const struct hs_scn *scn, const char *fname)
{
	fprintf(out, "{\"scenario\":");
	jstr(out, fname);
	fprintf(out, ",\"cores\":%" PRIu32 ",\"service\":%" PRIu32
		",\"tick_ms\":%g,\"period\":%" PRIu32 ",\"runs\":[",
		scn->cores, scn->service, scn->tick_ms, scn->period);
}

void hs_report_json_run(FILE *out, const struct hs_scn *scn,
			const struct hs_sim_res *res, int first)
{
	const struct hs_scn_load *l = &scn->load[res->load];
	uint32_t i;

	fprintf(out, "%s\n{\"mode\":\"%s\",\"load\":\"%s\",\"scale\":%g,\"bursty\":%s,"
		"\"cpu\":{\"sync\":%.4f,\"service\":%.4f,\"host\":%.4f},\"jain\":%.6f,",
		first ? "" : ",", hs_sim_mode_name(res->mode), l->name, l->scale,
		l->off_ms > 0 ? "true" : "false", res->cpu_sync, res->cpu_service,
		res->cpu_host, res->jain);
	fprintf(out, "\"alg_us\":{\"periods\":%" PRIu64 ",\"median\":%.2f,\"p99\":%.2f,\"max\":%.2f},"
		"\"early_input\":%" PRIu64 ",\"early_output\":%" PRIu64 ",\"deferred\":%" PRIu64 ",",
		res->periods, res->plan_us_median, res->plan_us_p99, res->plan_us_max,
		res->early_input, res->early_output, res->deferred);
	if (res->plan)
		fprintf(out, "\"plan\":%s,", res->plan);
	fprintf(out, "\"chains\":[");
	for (i = 0; i < scn->nchain; i++) {
		const struct hs_sim_chain_res *c = &res->chain[i];

		fprintf(out, "%s\n {\"chain\":\"%s\",\"vm\":\"%s\",\"sla\":%" PRIu64
			",\"offered\":%.1f,\"achieved\":%.1f,\"dropped\":%.1f,"
			"\"inq\":%.2f,\"outq\":%.2f,\"quota\":%" PRIu32 ",\"vcpus\":%" PRIu32 "}",
			i ? "," : "", scn->chain[i].name,
			scn->vm[scn->chain[i].vm].name, scn->chain[i].sla_pps,
			c->offered, c->achieved, c->dropped, c->inq, c->outq,
			c->quota, c->vcpus);
	}
	fprintf(out, "]}");
}

void hs_report_json_end(FILE *out)
{
	fprintf(out, "\n]}\n");
}
