// SPDX-License-Identifier: MIT
/* sfc-ctl command line; see sc_cli.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_proto.h"
#include "sc_cli.h"

struct cli {
	const char *socket;
	int json;
	int argc;
	char **argv;	/* what is left after the global options */
};

static const char usage_text[] =
	"usage: sfc-ctl [--socket PATH] [--json] COMMAND ...\n"
	"  vm add NAME --ip ADDR/PREFIX [--region-size SIZE] [--domain LIBVIRT_DOMAIN]\n"
	"  vm ls | vm show NAME | vm del NAME\n"
	"  sched show | sched mode sync|cfs\n"
	"  version\n";

static int usage(const char *why)
{
	if (why)
		fprintf(stderr, "sfc-ctl: %s\n", why);
	fputs(usage_text, stderr);
	return 2;
}

/* Parse a size with optional K/M/G (powers of 1024) suffix. */
static int parse_size(const char *s, long long *out)
{
	char *end;
	long long v, mul = 1;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || v <= 0)
		return -1;
	if (*end) {
		switch (*end) {
		case 'K': case 'k': mul = 1LL << 10; break;
		case 'M': case 'm': mul = 1LL << 20; break;
		case 'G': case 'g': mul = 1LL << 30; break;
		default: return -1;
		}
		if (end[1])
			return -1;
	}
	if (v > (1LL << 50) / mul)
		return -1;
	*out = v * mul;
	return 0;
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

	printf("%-13s %-20s %-8s %s\n", "NAME", "IP", "TOE", "REGION");
	json_array_foreach(vms, i, vm) {
		printf("%-13s %-20s %-8s %s\n", json_string_value(json_object_get(vm, "name")),
		       json_string_value(json_object_get(vm, "ip")),
		       json_string_value(json_object_get(vm, "toe")),
		       json_string_value(json_object_get(vm, "region")));
	}
}

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

		fprintf(stderr, "sfc-ctl: %s\n", json_is_string(e) ? json_string_value(e) : "refused");
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
		const char *ip = NULL, *domain = NULL;
		long long size = -1;

		if (c->argc < 3 || c->argv[2][0] == '-')
			return usage("vm add NAME --ip ADDR/PREFIX [--region-size SIZE] [--domain LIBVIRT_DOMAIN]");
		for (int i = 3; i < c->argc; i++) {
			if (!strcmp(c->argv[i], "--ip") && i + 1 < c->argc) {
				ip = c->argv[++i];
			} else if (!strcmp(c->argv[i], "--domain") && i + 1 < c->argc) {
				domain = c->argv[++i];	/* tochaind validates it */
			} else if (!strcmp(c->argv[i], "--region-size") && i + 1 < c->argc) {
				if (parse_size(c->argv[++i], &size))
					return usage("--region-size: expected a size such as 16M");
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
		if (domain)
			json_object_set_new(args, "domain", json_string(domain));
		return call(c, "vm.add", args, print_vm);
	}
	return usage("vm: expected add, ls, show or del");
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
	return usage("sched: expected show, or mode sync|cfs");
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
	if (!strcmp(c.argv[0], "vnf") || !strcmp(c.argv[0], "chain") ||
	    !strcmp(c.argv[0], "stats") ||
	    !strcmp(c.argv[0], "apply")) {
		fprintf(stderr, "sfc-ctl: '%s' is not available in this version yet\n", c.argv[0]);
		return 1;
	}
	fprintf(stderr, "sfc-ctl: unknown command '%s'\n", c.argv[0]);
	return usage(NULL);
}
