/* SPDX-License-Identifier: MIT */
/*
 * Checking a rule file (vnf_check_*): `tochain-vnf --check`, what
 * tochaind runs before it accepts a rules file.
 *
 * Usable means: the kind's engine_load, the very code an instance runs at
 * start and on SIGHUP, built an engine from the options, and that engine
 * holds at least one rule (a kind without rules, null, is always usable).
 * The kind's diagnose hook, when it has one, lists every rule the load
 * skips or refuses; otherwise the load's own message is the one line.
 */
#ifndef TOCHAIN_VNF_CHECK_H
#define TOCHAIN_VNF_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "vnf_kind.h"

struct vnf_check {
	bool has_rules;			/* the kind has rules at all */
	bool usable;
	unsigned int loaded;		/* rules in the engine; when it refused the
					 * file, those its diagnosis kept */
	unsigned int unsupported;	/* rules skipped or refused */
	unsigned int not_applicable;	/* rules no part of TOChain applies */
	double load_ms;			/* wall time of the engine_load */
	size_t nmsg;
	char **msg;			/* "file:line: reason", first problem first */
	char err[512];			/* why the engine was not built, "" when it was */
};

/*
 * For a kind's diagnose hook, with the @arg it was given: a rule skipped
 * because no part of TOChain can apply it (an icmp rule, an IP header
 * test): counted in not_applicable, listed with the other messages, and
 * not a reason to refuse the file.
 */
void vnf_check_not_applicable(void *arg, const char *msg);
/*
 * Same: how many rules the kind's load kept, for the count printed when the
 * engine then refuses the file for the others (strict loads).
 */
void vnf_check_kept(void *arg, unsigned int n);

/* Check @o with kind @k into @c.  0, or -ENOMEM (then @c is still freeable). */
int vnf_check_run(const struct vnf_kind *k, const struct vnf_kind_opts *o, struct vnf_check *c);
void vnf_check_free(struct vnf_check *c);

#endif /* TOCHAIN_VNF_CHECK_H */
