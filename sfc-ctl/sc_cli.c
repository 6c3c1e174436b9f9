// SPDX-License-Identifier: MIT
/* sfc-ctl command line; see sc_cli.h. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tochain/ctl_b64.h"
#include "tochain/ctl_proto.h"
#include "sc_cli.h"
#include "sc_topo.h"

struct cli {
	const char *socket;
	int json;
	int argc;
	char **argv;	/* what is left after the global options */
};

static const char usage_text[] =
	"usage: sfc-ctl [--socket PATH] [--json] COMMAND ...\n"
	"       sfc-ctl --version      this client's protocol, without a daemon\n"
	"  vm add NAME --ip ADDR/PREFIX [--region-size SIZE] [--slot-size SIZE]\n"
	"         [--domain LIBVIRT_DOMAIN [--wait doorbell|poll]] [--guest-mode MODE] [--guest-group GROUP]\n"
	"  vm ls | vm show NAME | vm del NAME\n"
	"  vnf add NAME --kind fw|ids|waf|null [--threads N] [--rate PPS] [--rules FILE] [--vars FILE]\n"
	"          [--on-failure open|closed] [--arg --OPTION[=VALUE]]... [--domain LIBVIRT_DOMAIN]\n"
	"  vnf ls | vnf show NAME | vnf del NAME | vnf calibrate NAME\n"
	"  chain add NAME --vm VM --dir in|out --hop VNF[,VNF...] [--hop ...] [--sla PPS]\n"
	"  chain ls | chain show NAME | chain del NAME | chain set-sla NAME PPS\n"
	"  stats [CHAIN] [--watch SECONDS [--count N]]\n"
	"  apply -f TOPOLOGY [--prune]\n"
	"  sched show | sched mode sync|cfs | sched period TICKS [TICK_US]\n"
	"  capture on CHAIN [--all] [--kib N] [--max-mib N] | capture off CHAIN\n"
	"  capture ls [CHAIN] | capture get CHAIN FILE [-o OUT|-]\n"
	"  version\n";

static int usage(const char *why)
{
	if (why)
		fprintf(stderr, "sfc-ctl: %s\n", why);
	fputs(usage_text, stderr);
	return 2;
}

static void print_vm(json_t *vm)
{
	const char *key;
	json_t *v;

	json_object_foreach(vm, key, v) {
		if (json_is_string(v))
			printf("%-12s %s\n", key, json_string_value(v));
		else if (json_is_integer(v))
			printf("%-12s %lld\n", key, (long long)json_integer_value(v));
		else if (json_is_array(v)) {	/* vcpu_tids */
			size_t i;
			json_t *e;

			printf("%-12s", key);
			json_array_foreach(v, i, e)
				printf(" %lld", (long long)json_integer_value(e));
			printf("\n");
		}
	}
}

static void print_vms(json_t *res)
{
	json_t *vms = json_object_get(res, "vms"), *vm;
	size_t i;

	printf("%-13s %-20s %-8s %-6s %s\n", "NAME", "IP", "TOE", "SLOT", "REGION");
	json_array_foreach(vms, i, vm) {
		char slot[24];

		snprintf(slot, sizeof(slot), "%lldK",
			 (long long)json_integer_value(json_object_get(vm, "slot_size")) / 1024);
		printf("%-13s %-20s %-8s %-6s %s\n", json_string_value(json_object_get(vm, "name")),
		       json_string_value(json_object_get(vm, "ip")),
		       json_string_value(json_object_get(vm, "toe")), slot,
		       json_string_value(json_object_get(vm, "region")));
	}
}

/* Errors of "apply" name topology lines: "line N: x" -> "FILE:N: x". */
static const char *topo_file;

/* Send the request, print the reply. */
static int call(const struct cli *c, const char *cmd, json_t *args, void (*print)(json_t *))
{
	const char *why = NULL;
	json_t *reply = ctl_call(c->socket, cmd, args, &why), *res;
	int rc;

	if (!reply) {
		fprintf(stderr, "sfc-ctl: tochaind at %s: %s: %s\n", c->socket, why, strerror(errno));
		return 1;
	}
	if (!json_is_true(json_object_get(reply, "ok"))) {
		json_t *e = json_object_get(reply, "error");

		const char *msg = json_is_string(e) ? json_string_value(e) : "refused";
		unsigned int line;
		int off = 0;

		if (topo_file && sscanf(msg, "line %u: %n", &line, &off) == 1 && off > 0)
			fprintf(stderr, "sfc-ctl: %s:%u: %s\n", topo_file, line, msg + off);
		else
			fprintf(stderr, "sfc-ctl: %s\n", msg);
		/* the whole story of a refused rules file: every file:line */
		if (c->json && json_object_get(reply, "problems")) {
			json_t *o = json_pack("{s:s, s:O}", "error", msg, "problems",
					      json_object_get(reply, "problems"));
			char *s;

			s = json_dumps(o, JSON_INDENT(2));
			if (s)
				puts(s);
			free(s);
			json_decref(o);
		}
		rc = 1;
	} else {
		res = json_object_get(reply, "result");
		if (c->json) {
			char *s = json_dumps(res, JSON_INDENT(2));

			if (s)
				puts(s);
			free(s);
		} else if (print) {
			print(res);
		}
		rc = 0;
	}
	json_decref(reply);
	return rc;
}

static int cmd_vm(struct cli *c)
{
	const char *sub = c->argc > 1 ? c->argv[1] : NULL;

	if (!sub)
		return usage("vm: expected add, ls, show or del");
	if (!strcmp(sub, "ls")) {
		if (c->argc != 2)
			return usage("vm ls takes no arguments");
		return call(c, "vm.ls", NULL, print_vms);
	}
	if (!strcmp(sub, "show") || !strcmp(sub, "del")) {
		if (c->argc != 3)
			return usage(!strcmp(sub, "show") ? "vm show NAME" : "vm del NAME");
		return call(c, !strcmp(sub, "show") ? "vm.show" : "vm.del",
			    json_pack("{s:s}", "name", c->argv[2]), !strcmp(sub, "show") ? print_vm : NULL);
	}
	if (!strcmp(sub, "add")) {
		json_t *args;
		const char *ip = NULL, *domain = NULL, *wait = NULL, *gmode = NULL, *ggroup = NULL;
		long long size = -1, slot = -1;

		if (c->argc < 3 || c->argv[2][0] == '-')
			return usage("vm add NAME --ip ADDR/PREFIX [--region-size SIZE] [--slot-size SIZE] "
				     "[--domain LIBVIRT_DOMAIN "
				     "[--wait doorbell|poll]] [--guest-mode MODE] [--guest-group GROUP]");
		for (int i = 3; i < c->argc; i++) {
			if (!strcmp(c->argv[i], "--ip") && i + 1 < c->argc) {
				ip = c->argv[++i];
			} else if (!strcmp(c->argv[i], "--domain") && i + 1 < c->argc) {
				domain = c->argv[++i];	/* tochaind validates it */
			} else if (!strcmp(c->argv[i], "--wait") && i + 1 < c->argc) {
				wait = c->argv[++i];
				if (strcmp(wait, "doorbell") && strcmp(wait, "poll"))
					return usage("--wait: doorbell or poll");
			} else if (!strcmp(c->argv[i], "--guest-mode") && i + 1 < c->argc) {
				gmode = c->argv[++i];	/* tochaind validates both */
			} else if (!strcmp(c->argv[i], "--guest-group") && i + 1 < c->argc) {
				ggroup = c->argv[++i];
			} else if (!strcmp(c->argv[i], "--region-size") && i + 1 < c->argc) {
				if (sc_parse_size(c->argv[++i], &size))
					return usage("--region-size: expected a size such as 16M");
			} else if (!strcmp(c->argv[i], "--slot-size") && i + 1 < c->argc) {
				if (sc_parse_size(c->argv[++i], &slot))	/* tochaind checks the range */
					return usage("--slot-size: expected a size such as 8K");
			} else {
				fprintf(stderr, "sfc-ctl: vm add: unexpected argument '%s'\n", c->argv[i]);
				return usage(NULL);
			}
		}
		if (!ip)
			return usage("vm add: --ip ADDR/PREFIX is required");
		args = json_pack("{s:s, s:s}", "name", c->argv[2], "ip", ip);
		if (size > 0)
			json_object_set_new(args, "region_size", json_integer(size));
		if (slot > 0)
			json_object_set_new(args, "slot_size", json_integer(slot));
		if (domain)
			json_object_set_new(args, "domain", json_string(domain));
		if (wait)
			json_object_set_new(args, "wait", json_string(wait));
		if (gmode)
			json_object_set_new(args, "guest_mode", json_string(gmode));
		if (ggroup)
			json_object_set_new(args, "guest_group", json_string(ggroup));
		return call(c, "vm.add", args, print_vm);
	}
	return usage("vm: expected add, ls, show or del");
}


/* --- vnf --- */

static const char *jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : "-";
}

static long long jint(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (long long)json_integer_value(v) :
	       json_is_real(v) ? (long long)json_real_value(v) : 0;
}

static void print_hops(json_t *hops)
{
	size_t h, k;
	json_t *hop, *v;

	json_array_foreach(hops, h, hop) {
		printf("%s", h ? " -> " : "");
		json_array_foreach(hop, k, v)
			printf("%s%s", k ? "," : "", json_string_value(v));
	}
}

/* Why a host instance is down: restarts, next try, its last log line. */
static void print_health(json_t *in)
{
	json_t *nr = json_object_get(in, "next_retry_s");

	printf("restarted %lld times", jint(in, "restarts"));
	if (json_is_number(nr))
		printf(", next try in %.1f s", json_number_value(nr));
	printf("\n");
	if (json_object_get(in, "last_error"))
		printf("%-12s   last error: %s\n", "", jstr(in, "last_error"));
}

static void print_instances(json_t *o)
{
	size_t i, k;
	json_t *in, *g;

	json_array_foreach(json_object_get(o, "instances"), i, in) {
		if (json_object_get(in, "domain")) {
			printf("%-12s vnf %s on vm %s: in libvirt domain %s (QEMU pid %lld) %s\n",
			       i ? "" : "instances", jstr(in, "vnf"), jstr(in, "vm"),
			       jstr(in, "domain"), jint(in, "pid"),
			       json_is_true(json_object_get(in, "running")) ? "running" : "NOT RUNNING");
			json_array_foreach(json_object_get(in, "grants"), k, g)
				printf("%-12s   grant %s (%s): %s\n", "", jstr(g, "name"), jstr(g, "file"),
				       jstr(g, "state"));
			printf("%-12s   %s\n", "", jstr(in, "revoke"));
			continue;
		}
		printf("%-12s vnf %s on vm %s: pid %lld %s", i ? "" : "instances", jstr(in, "vnf"),
		       jstr(in, "vm"), jint(in, "pid"),
		       json_is_true(json_object_get(in, "running")) ? "running" : "NOT RUNNING");
		if (!json_is_true(json_object_get(in, "running")) || jint(in, "restarts")) {
			printf(": ");
			print_health(in);
		} else {
			printf("\n");
		}
	}
}

static void print_vnf(json_t *v)
{
	size_t i;
	json_t *x;

	printf("%-12s %s\n%-12s %s\n%-12s %lld\n%-12s %s\n", "name", jstr(v, "name"), "kind",
	       jstr(v, "kind"), "threads", jint(v, "threads"), "on-failure", jstr(v, "on_failure"));
	printf("%-12s %lld packets/s (%s)\n", "f", jint(v, "f"),
	       jint(v, "rate") ? "--rate" : jint(v, "calibrated") ? "calibrated" : "unknown: calibrate or give --rate");
	if (json_object_get(v, "rules"))
		printf("%-12s %s (a copy is used: apply or re-add to take edits)\n", "rules", jstr(v, "rules"));
	if (json_object_get(v, "vars"))
		printf("%-12s %s (copied with the rules)\n", "vars", jstr(v, "vars"));
	json_array_foreach(json_object_get(v, "args"), i, x)
		printf("%-12s %s\n", i ? "" : "args", json_string_value(x));
	if (json_object_get(v, "domain"))
		printf("%-12s %s (libvirt: the VNF runs in that guest)\n", "domain", jstr(v, "domain"));
	printf("%-12s", "chains");
	json_array_foreach(json_object_get(v, "chains"), i, x)
		printf(" %s", json_string_value(x));
	printf("\n");
	print_instances(v);
	json_array_foreach(json_object_get(v, "released"), i, x) {
		json_t *t = json_object_get(x, "time");
		time_t ts = json_is_number(t) ? (time_t)json_number_value(t) : 0;
		char when[32];

		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", gmtime(&ts));
		printf("%-12s %s %s%s%s%s\n", i ? "" : "released", when, jstr(x, "text"),
		       json_object_get(x, "now") ? " [now: " : "",
		       json_object_get(x, "now") ? jstr(x, "now") : "",
		       json_object_get(x, "now") ? "]" : "");
	}
}

static void print_vnfs(json_t *res)
{
	size_t i;
	json_t *v;

	printf("%-20s %-5s %-7s %-10s %-7s %s\n", "NAME", "KIND", "THREADS", "F", "FAIL", "INSTANCES");
	json_array_foreach(json_object_get(res, "vnfs"), i, v)
		printf("%-20s %-5s %-7lld %-10lld %-7s %zu\n", jstr(v, "name"), jstr(v, "kind"),
		       jint(v, "threads"), jint(v, "f"), jstr(v, "on_failure"),
		       json_array_size(json_object_get(v, "instances")));
}

static void print_calibrated(json_t *res)
{
	printf("vnf %s: f = %lld packets/s (one service thread)\n", jstr(res, "name"),
	       jint(res, "calibrated"));
}

static int cmd_vnf(struct cli *c)
{
	const char *sub = c->argc > 1 ? c->argv[1] : "";
	json_t *args, *a;
	long long n;

	if (!strcmp(sub, "ls")) {
		if (c->argc != 2)
			return usage("vnf ls takes no arguments");
		return call(c, "vnf.ls", NULL, print_vnfs);
	}
	if (!strcmp(sub, "show") || !strcmp(sub, "del") || !strcmp(sub, "calibrate")) {
		char cmd[32];

		if (c->argc != 3)
			return usage("vnf show|del|calibrate NAME");
		snprintf(cmd, sizeof(cmd), "vnf.%s", sub);
		return call(c, cmd, json_pack("{s:s}", "name", c->argv[2]),
			    !strcmp(sub, "show") ? print_vnf : !strcmp(sub, "calibrate") ? print_calibrated : NULL);
	}
	if (strcmp(sub, "add"))
		return usage("vnf: expected add, ls, show, del or calibrate");
	if (c->argc < 3 || c->argv[2][0] == '-')
		return usage("vnf add NAME --kind fw|ids|waf|null ...");
	args = json_pack("{s:s}", "name", c->argv[2]);
	for (int i = 3; i < c->argc; i++) {
		const char *o = c->argv[i], *v = i + 1 < c->argc ? c->argv[i + 1] : NULL;

		if (!v) {
			json_decref(args);
			return usage("vnf add: an option lacks its value");
		}
		i++;
		if (!strcmp(o, "--kind")) {
			json_object_set_new(args, "kind", json_string(v));
		} else if (!strcmp(o, "--threads") || !strcmp(o, "--rate")) {
			if (sc_parse_uint(v, 1, 1000000000, &n)) {
				json_decref(args);
				return usage(!strcmp(o, "--rate") ? "--rate: expected packets/s" : "--threads: expected a number");
			}
			json_object_set_new(args, o + 2, json_integer(n));
		} else if (!strcmp(o, "--rules") || !strcmp(o, "--vars")) {
			char abs[PATH_MAX];

			if (!realpath(v, abs)) {
				fprintf(stderr, "sfc-ctl: %s %s: %s\n", o, v, strerror(errno));
				json_decref(args);
				return 1;
			}
			json_object_set_new(args, o + 2, json_string(abs));
		} else if (!strcmp(o, "--on-failure")) {
			json_object_set_new(args, "on_failure", json_string(v));
		} else if (!strcmp(o, "--domain")) {
			json_object_set_new(args, "domain", json_string(v));	/* tochaind validates it */
		} else if (!strcmp(o, "--arg")) {
			a = json_object_get(args, "args");
			if (!a)
				json_object_set_new(args, "args", a = json_array());
			json_array_append_new(a, json_string(v));
		} else {
			fprintf(stderr, "sfc-ctl: vnf add: unexpected argument '%s'\n", o);
			json_decref(args);
			return usage(NULL);
		}
	}
	if (!json_object_get(args, "kind")) {
		json_decref(args);
		return usage("vnf add: --kind fw|ids|waf|null is required");
	}
	return call(c, "vnf.add", args, print_vnf);
}

/* --- chain --- */

static void print_chain(json_t *ch)
{
	json_t *toe = json_object_get(ch, "toe");

	printf("%-12s %s\n%-12s %s\n%-12s %s\n", "name", jstr(ch, "name"), "vm", jstr(ch, "vm"),
	       "dir", jstr(ch, "dir"));
	printf("%-12s ", "hops");
	print_hops(json_object_get(ch, "hops"));
	printf("\n");
	if (jint(ch, "sla"))
		printf("%-12s %lld packets/s\n", "sla", jint(ch, "sla"));
	else
		printf("%-12s none\n", "sla");
	print_instances(ch);
	if (toe)
		printf("%-12s version %lld, arrivals %lld, done %lld, denied %lld, %lld packets/s\n",
		       "toe", jint(toe, "version"), jint(toe, "arrivals"), jint(toe, "finished"),
		       jint(toe, "denied"), jint(toe, "pps"));
	else if (json_object_get(ch, "toe_error"))
		printf("%-12s %s\n", "toe", jstr(ch, "toe_error"));
	printf("%-12s %s\n", "cpu sched", jstr(ch, "sched"));
}

static void print_chains(json_t *res)
{
	size_t i;
	json_t *ch;

	printf("%-20s %-13s %-4s %-10s %s\n", "NAME", "VM", "DIR", "SLA", "HOPS");
	json_array_foreach(json_object_get(res, "chains"), i, ch) {
		printf("%-20s %-13s %-4s %-10lld ", jstr(ch, "name"), jstr(ch, "vm"), jstr(ch, "dir"),
		       jint(ch, "sla"));
		print_hops(json_object_get(ch, "hops"));
		printf("\n");
	}
}

static int cmd_chain(struct cli *c)
{
	const char *sub = c->argc > 1 ? c->argv[1] : "";
	json_t *args, *hops;
	long long n;

	if (!strcmp(sub, "ls")) {
		if (c->argc != 2)
			return usage("chain ls takes no arguments");
		return call(c, "chain.ls", NULL, print_chains);
	}
	if (!strcmp(sub, "show") || !strcmp(sub, "del")) {
		if (c->argc != 3)
			return usage("chain show|del NAME");
		return call(c, !strcmp(sub, "show") ? "chain.show" : "chain.del",
			    json_pack("{s:s}", "name", c->argv[2]), !strcmp(sub, "show") ? print_chain : NULL);
	}
	if (!strcmp(sub, "set-sla")) {
		if (c->argc != 4 || sc_parse_uint(c->argv[3], 0, 1000000000, &n))
			return usage("chain set-sla NAME PPS");
		return call(c, "chain.set-sla", json_pack("{s:s, s:I}", "name", c->argv[2], "sla",
							  (json_int_t)n), NULL);
	}
	if (strcmp(sub, "add"))
		return usage("chain: expected add, ls, show, del or set-sla");
	if (c->argc < 3 || c->argv[2][0] == '-')
		return usage("chain add NAME --vm VM --dir in|out --hop VNF[,VNF...] ...");
	args = json_pack("{s:s}", "name", c->argv[2]);
	hops = json_array();
	json_object_set_new(args, "hops", hops);
	for (int i = 3; i < c->argc; i++) {
		const char *o = c->argv[i], *v = i + 1 < c->argc ? c->argv[i + 1] : NULL;

		if (!v) {
			json_decref(args);
			return usage("chain add: an option lacks its value");
		}
		i++;
		if (!strcmp(o, "--vm") || !strcmp(o, "--dir")) {
			json_object_set_new(args, o + 2, json_string(v));
		} else if (!strcmp(o, "--hop")) {
			json_t *hop = sc_parse_hop(v);

			if (!hop) {
				json_decref(args);
				return usage("--hop: expected VNF[,VNF...]");
			}
			json_array_append_new(hops, hop);
		} else if (!strcmp(o, "--sla")) {
			if (sc_parse_uint(v, 0, 1000000000, &n)) {
				json_decref(args);
				return usage("--sla: expected packets/s");
			}
			json_object_set_new(args, "sla", json_integer(n));
		} else {
			fprintf(stderr, "sfc-ctl: chain add: unexpected argument '%s'\n", o);
			json_decref(args);
			return usage(NULL);
		}
	}
	if (!json_object_get(args, "vm") || !json_object_get(args, "dir") || !json_array_size(hops)) {
		json_decref(args);
		return usage("chain add: --vm, --dir and at least one --hop are required");
	}
	return call(c, "chain.add", args, print_chain);
}

/* --- stats --- */

static void print_stats(json_t *res)
{
	size_t i;
	json_t *ch, *dn;

	printf("%-16s %-10s %-4s %10s %10s %8s %8s %6s %6s %9s %s\n", "CHAIN", "VM", "DIR",
	       "ARRIVALS", "DONE", "DENIED", "ALERTED", "INQ", "OUTQ", "PPS", "SLA");
	json_array_foreach(json_object_get(res, "chains"), i, ch) {
		if (json_object_get(ch, "error")) {
			printf("%-16s %-10s %-4s %s\n", jstr(ch, "name"), jstr(ch, "vm"), jstr(ch, "dir"),
			       jstr(ch, "error"));
			continue;
		}
		char sla[96] = "-";

		if (jint(ch, "sla"))
			snprintf(sla, sizeof(sla), "%lld (%s)", jint(ch, "sla"),
				 jint(ch, "pps") >= jint(ch, "sla") ? "met" : "below");
		if (json_is_number(json_object_get(ch, "cpu_quota")))
			snprintf(sla + strlen(sla), sizeof(sla) - strlen(sla), ", quota %.2f cpu on %lld vcpus",
				 json_number_value(json_object_get(ch, "cpu_quota")), jint(ch, "vnf_vcpus"));
		printf("%-16s %-10s %-4s %10lld %10lld %8lld %8lld %6lld %6lld %9lld %s\n",
		       jstr(ch, "name"), jstr(ch, "vm"), jstr(ch, "dir"), jint(ch, "arrivals"),
		       jint(ch, "finished"), jint(ch, "denied"), jint(ch, "alerted"), jint(ch, "in_qlen"), jint(ch, "out_qlen"), jint(ch, "pps"), sla);
	}
	json_array_foreach(json_object_get(res, "chains"), i, ch) {
		size_t k;
		json_t *v;

		json_array_foreach(json_object_get(ch, "vnfs_down"), k, v) {
			printf("chain %s: vnf %s on vm %s is DOWN: ", jstr(ch, "name"), jstr(v, "vnf"),
			       jstr(ch, "vm"));
			print_health(v);
		}
	}
	if (json_array_size(json_object_get(res, "denials")))
		printf("last denials:\n");
	json_array_foreach(json_object_get(res, "denials"), i, dn) {
		json_t *t = json_object_get(dn, "time");
		time_t ts = json_is_number(t) ? (time_t)json_number_value(t) : 0;
		char when[32], rule[32];

		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", gmtime(&ts));
		snprintf(rule, sizeof(rule), "%lld", jint(dn, "rule"));
		printf("  %s chain %s (%s) vnf %s rule %s: %s %s%s%s\n", when, jstr(dn, "chain"),
		       jstr(dn, "dir"), jstr(dn, "vnf"),
		       json_is_integer(json_object_get(dn, "rule")) ? rule : jstr(dn, "rule"),
		       jstr(dn, "reason"), jstr(dn, "conn"),
		       json_is_string(json_object_get(dn, "incident")) ? " incident " : "",
		       json_is_string(json_object_get(dn, "incident")) ? jstr(dn, "incident") : "");
	}
}

static volatile sig_atomic_t interrupted;

static void on_int(int sig)
{
	(void)sig;
	interrupted = 1;
}

static int cmd_stats(struct cli *c)
{
	const char *chain = NULL;
	long long watch = 0, count = 0;
	int rc = 0;

	for (int i = 1; i < c->argc; i++) {
		if (!strcmp(c->argv[i], "--watch") && i + 1 < c->argc) {
			if (sc_parse_uint(c->argv[++i], 1, 86400, &watch))
				return usage("--watch: expected seconds");
		} else if (!strcmp(c->argv[i], "--count") && i + 1 < c->argc) {
			if (sc_parse_uint(c->argv[++i], 1, 1000000, &count))
				return usage("--count: expected a number");
		} else if (c->argv[i][0] != '-' && !chain) {
			chain = c->argv[i];
		} else {
			return usage("stats [CHAIN] [--watch SECONDS [--count N]]");
		}
	}
	if (count && !watch)
		return usage("--count needs --watch");
	signal(SIGINT, on_int);
	for (long long k = 0; !interrupted; k++) {
		rc = call(c, "stats", chain ? json_pack("{s:s}", "name", chain) : NULL, print_stats);
		if (rc || !watch || (count && k + 1 >= count))
			break;
		fflush(stdout);
		for (long long t = 0; t < watch * 10 && !interrupted; t++)
			usleep(100000);
		if (!c->json && !interrupted)
			printf("\n");
	}
	return rc;
}

/* --- apply --- */

static void print_apply(json_t *res)
{
	size_t i;
	json_t *ch;

	if (!json_array_size(json_object_get(res, "changes"))) {
		printf("no changes\n");
		return;
	}
	json_array_foreach(json_object_get(res, "changes"), i, ch)
		printf("%sd %s %s\n", jstr(ch, "op"), jstr(ch, "object"), jstr(ch, "name"));
}

static int cmd_apply(struct cli *c)
{
	const char *file = NULL;
	char dir[PATH_MAX], err[512];
	FILE *f;
	char *text;
	size_t len = 0, cap = 1 << 16;
	int prune = 0;
	json_t *topo;

	for (int i = 1; i < c->argc; i++) {
		if (!strcmp(c->argv[i], "-f") && i + 1 < c->argc && !file)
			file = c->argv[++i];
		else if (!strcmp(c->argv[i], "--prune"))
			prune = 1;
		else
			return usage("apply -f TOPOLOGY [--prune]");
	}
	if (!file)
		return usage("apply -f TOPOLOGY [--prune]");
	f = fopen(file, "r");
	if (!f) {
		fprintf(stderr, "sfc-ctl: %s: %s\n", file, strerror(errno));
		return 1;
	}
	text = malloc(cap);
	while (text) {
		size_t n = fread(text + len, 1, cap - len, f);

		len += n;
		if (len < cap)
			break;
		if (cap >= (4u << 20)) {
			free(text);
			fclose(f);
			fprintf(stderr, "sfc-ctl: %s: larger than 4 MiB\n", file);
			return 1;
		}
		cap *= 2;
		text = realloc(text, cap);
	}
	fclose(f);
	if (!text)
		return 1;
	if (!realpath(file, dir)) {
		free(text);
		fprintf(stderr, "sfc-ctl: %s: %s\n", file, strerror(errno));
		return 1;
	}
	topo = sc_topo_parse(text, len, file, dirname(dir), err, sizeof(err));
	free(text);
	if (!topo) {
		fprintf(stderr, "sfc-ctl: %s\n", err);
		return 1;
	}
	json_object_set_new(topo, "prune", json_boolean(prune));
	topo_file = file;
	return call(c, "apply", topo, print_apply);
}

/* The scheduler's own text rendering when it gives one, else its JSON. */
static void print_sched(json_t *res)
{
	json_t *text = json_object_get(res, "text");
	char *s;
	json_t *mode = json_object_get(res, "mode");

	if (json_is_string(text)) {
		fputs(json_string_value(text), stdout);
		return;
	}
	if (json_is_string(mode) && json_object_size(res) == 1) {
		printf("scheduler mode: %s\n", json_string_value(mode));
		return;
	}
	s = json_dumps(res, JSON_INDENT(2));
	if (s)
		puts(s);
	free(s);
}

static int cmd_sched(struct cli *c)
{
	if (c->argc == 2 && !strcmp(c->argv[1], "show"))
		return call(c, "sched.show", NULL, print_sched);
	if (c->argc == 3 && !strcmp(c->argv[1], "mode")) {
		if (strcmp(c->argv[2], "sync") && strcmp(c->argv[2], "cfs"))
			return usage("sched mode: expected sync or cfs");
		return call(c, "sched.mode", json_pack("{s:s}", "mode", c->argv[2]), print_sched);
	}
	if ((c->argc == 3 || c->argc == 4) && !strcmp(c->argv[1], "period")) {
		long long g, tick_us = 0;

		if (sc_parse_uint(c->argv[2], 1, 1000, &g) ||
		    (c->argc == 4 && sc_parse_uint(c->argv[3], 1000, 1000000, &tick_us)))
			return usage("sched period: expected TICKS (1..1000) [TICK_US (1000..1000000)]");
		return call(c, "sched.period", tick_us ?
			    json_pack("{s:I, s:I}", "period", (json_int_t)g, "tick_us", (json_int_t)tick_us) :
			    json_pack("{s:I}", "period", (json_int_t)g), print_sched);
	}
	return usage("sched: expected show, mode sync|cfs, or period TICKS [TICK_US]");
}

static void print_captures(json_t *res)
{
	json_t *ch, *f;
	size_t i, k;

	json_array_foreach(json_object_get(res, "chains"), i, ch) {
		json_t *toe = json_object_get(ch, "toe"), *all = json_object_get(toe, "all");

		printf("%s (vm %s, %s): capture %s", jstr(ch, "name"), jstr(ch, "vm"), jstr(ch, "dir"),
		       !json_is_true(json_object_get(ch, "on")) ? "off" :
		       json_is_true(json_object_get(ch, "all")) ? "on (all traffic)" : "on");
		if (toe)
			printf(", TOE: %lld records (%lld alerts), %lld written, %lld dropped, %lld removed",
			       (long long)json_integer_value(json_object_get(toe, "records")),
			       (long long)json_integer_value(json_object_get(toe, "alerts")),
			       (long long)json_integer_value(json_object_get(toe, "written")),
			       (long long)json_integer_value(json_object_get(toe, "dropped")),
			       (long long)json_integer_value(json_object_get(toe, "removed")));
		if (json_is_true(json_object_get(ch, "all")) && all)
			printf("; all: %lld chunks, %lld bytes, %lld files, %lld chunks (%lld bytes) dropped",
			       (long long)json_integer_value(json_object_get(all, "chunks")),
			       (long long)json_integer_value(json_object_get(all, "bytes")),
			       (long long)json_integer_value(json_object_get(all, "files")),
			       (long long)json_integer_value(json_object_get(all, "dropped")),
			       (long long)json_integer_value(json_object_get(all, "dropped_bytes")));
		printf("\n  %s\n", jstr(ch, "path"));
		json_array_foreach(json_object_get(ch, "files"), k, f) {
			int alert = !strcmp(jstr(f, "verdict"), "alert");

			printf("  %-52s %7lld  %s %s %s rule %lld %s%s%s%s\n", jstr(f, "file"),
			       (long long)json_integer_value(json_object_get(f, "size")), jstr(f, "dir"),
			       alert ? "alert" : "deny", jstr(f, "vnf"),
			       (long long)json_integer_value(json_object_get(f, "rule")), jstr(f, "conn"),
			       alert ? " \"" : "", alert ? jstr(f, "msg") : "", alert ? "\"" : "");
		}
		if (json_integer_value(json_object_get(ch, "more")))
			printf("  (%lld older files not listed)\n",
			       (long long)json_integer_value(json_object_get(ch, "more")));
	}
}

/* capture get: the file's bytes, base64 in the reply, to OUT ("-": stdout; default ./FILE). */
static int capture_get(const struct cli *c, const char *chain, const char *file, const char *out)
{
	const char *why = NULL, *data;
	json_t *reply = ctl_call(c->socket, "capture.get",
				 json_pack("{s:s,s:s}", "name", chain, "file", file), &why), *res;
	uint8_t *buf;
	long n;
	FILE *f;
	int rc = 1;

	if (!reply) {
		fprintf(stderr, "sfc-ctl: tochaind at %s: %s: %s\n", c->socket, why, strerror(errno));
		return 1;
	}
	res = json_object_get(reply, "result");
	data = json_string_value(json_object_get(res, "data"));
	if (!json_is_true(json_object_get(reply, "ok")) || !data) {
		json_t *e = json_object_get(reply, "error");

		fprintf(stderr, "sfc-ctl: %s\n", json_is_string(e) ? json_string_value(e) : "refused");
		json_decref(reply);
		return 1;
	}
	buf = malloc(strlen(data) / 4 * 3 + 3);
	n = buf ? ctl_b64_decode(data, strlen(data), buf) : -1;
	if (n < 0) {
		fprintf(stderr, "sfc-ctl: capture get: the reply's data is not base64\n");
	} else if (!(f = strcmp(out, "-") ? fopen(out, "wbx") : stdout)) {
		fprintf(stderr, "sfc-ctl: -o %s: %s\n", out, strerror(errno));
	} else {
		rc = fwrite(buf, 1, (size_t)n, f) == (size_t)n ? 0 : 1;
		if (f != stdout ? fclose(f) : fflush(f))
			rc = 1;
		if (rc)
			fprintf(stderr, "sfc-ctl: -o %s: %s\n", out, strerror(errno));
		else if (f != stdout && !c->json)
			printf("%s: %ld bytes\n", out, n);
	}
	free(buf);
	json_decref(reply);
	return rc;
}

static int cmd_capture(struct cli *c)
{
	const char *sub = c->argc > 1 ? c->argv[1] : "";
	long long n;
	json_t *args;

	if (!strcmp(sub, "ls")) {
		if (c->argc > 3)
			return usage("capture ls [CHAIN]");
		return call(c, "capture.ls", c->argc == 3 ? json_pack("{s:s}", "name", c->argv[2]) : NULL,
			    print_captures);
	}
	if (!strcmp(sub, "get")) {
		const char *out = c->argc == 4 ? c->argv[3] : NULL;

		if (c->argc == 6 && !strcmp(c->argv[4], "-o"))
			out = c->argv[5];
		else if (c->argc != 4)
			return usage("capture get CHAIN FILE [-o OUT|-]");
		return capture_get(c, c->argv[2], c->argv[3], out);
	}
	if (!strcmp(sub, "off")) {
		if (c->argc != 3)
			return usage("capture off CHAIN");
		return call(c, "capture.set", json_pack("{s:s,s:b}", "name", c->argv[2], "on", 0), NULL);
	}
	if (strcmp(sub, "on"))
		return usage("capture: expected on, off, ls or get");
	if (c->argc < 3 || c->argv[2][0] == '-')
		return usage("capture on CHAIN [--all] [--kib N] [--max-mib N]");
	args = json_pack("{s:s,s:b}", "name", c->argv[2], "on", 1);
	for (int i = 3; i < c->argc; i++) {
		int kib = !strcmp(c->argv[i], "--kib");

		if (!strcmp(c->argv[i], "--all")) {
			json_object_set_new(args, "all", json_true());
			continue;
		}
		if ((!kib && strcmp(c->argv[i], "--max-mib")) || i + 1 >= c->argc ||
		    sc_parse_uint(c->argv[i + 1], 1, 1000000, &n)) {
			json_decref(args);
			return usage("capture on CHAIN [--all] [--kib N] [--max-mib N]");
		}
		json_object_set_new(args, kib ? "kib" : "max_bytes",
				    json_integer(kib ? n : n * 1024 * 1024));
		i++;
	}
	return call(c, "capture.set", args, NULL);
}

static void print_version(json_t *res)
{
	printf("tochaind protocol %lld\n", (long long)json_integer_value(json_object_get(res, "protocol")));
}

int sc_cli_main(int argc, char **argv)
{
	struct cli c = { .socket = getenv("TOCHAIN_SOCKET") };
	int i = 1;

	if (!c.socket || !*c.socket)
		c.socket = CTL_DEFAULT_SOCKET;
	/* Global options come first; --json may also come anywhere after. */
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--socket") && i + 1 < argc)
			c.socket = argv[++i];
		else if (!strcmp(argv[i], "--json"))
			c.json = 1;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--version")) {
			/* `version` asks tochaind; this needs no daemon (install checks). */
			printf("sfc-ctl: TOChain control protocol %d\n", CTL_VERSION);
			return 0;
		} else
			return usage("unknown option");
	}
	c.argv = argv + i;
	c.argc = 0;
	for (int k = i; k < argc; k++) {
		if (!strcmp(argv[k], "--json"))
			c.json = 1;
		else
			c.argv[c.argc++] = argv[k];
	}
	if (c.argc == 0)
		return usage(NULL);
	if (!strcmp(c.argv[0], "vm"))
		return cmd_vm(&c);
	if (!strcmp(c.argv[0], "version")) {
		if (c.argc != 1)
			return usage("version takes no arguments");
		return call(&c, "version", NULL, print_version);
	}
	if (!strcmp(c.argv[0], "sched"))
		return cmd_sched(&c);
	if (!strcmp(c.argv[0], "vnf"))
		return cmd_vnf(&c);
	if (!strcmp(c.argv[0], "chain"))
		return cmd_chain(&c);
	if (!strcmp(c.argv[0], "stats"))
		return cmd_stats(&c);
	if (!strcmp(c.argv[0], "apply"))
		return cmd_apply(&c);
	if (!strcmp(c.argv[0], "capture"))
		return cmd_capture(&c);
	fprintf(stderr, "sfc-ctl: unknown command '%s'\n", c.argv[0]);
	return usage(NULL);
}
