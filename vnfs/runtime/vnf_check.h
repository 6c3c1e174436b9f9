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
	unsigned int loaded;		/* rules in the engine (0 when not built) */
	unsigned int unsupported;	/* rules skipped or refused */
	unsigned int not_applicable;	/* rules no part of TOChain applies (none yet) */
	size_t nmsg;
	char **msg;			/* "file:line: reason", first problem first */
	char err[512];			/* why the engine was not built, "" when it was */
};

/* Check @o with kind @k into @c.  0, or -ENOMEM (then @c is still freeable). */
int vnf_check_run(const struct vnf_kind *k, const struct vnf_kind_opts *o, struct vnf_check *c);
void vnf_check_free(struct vnf_check *c);

#endif /* TOCHAIN_VNF_CHECK_H */
