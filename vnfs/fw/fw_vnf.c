// SPDX-License-Identifier: MIT
/*
 * The fw kind: vnfs/fw's in-chain matcher on each descriptor's 5-tuple, TCP
 * flags and the flow table's TCP state.  Stateless per connection: the
 * engine is the compiled rule file (immutable, shared by all threads).
 *
 * Direction: chain 0 is the VM's in chain (FW_DIR_IN), chain 1 its out
 * chain (FW_DIR_OUT).  Conntrack state from the flow table: SYN -> new,
 * ESTABLISHED/CLOSING/CLOSED -> established; without a flow entry, new
 * for the first bytes of the connection (seq 0), established after.
 * Deny rule id: the rule's number in the file (1-based), 0 for a
 * direction's drop policy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tochain/ch_flow.h"
#include "fw_desc.h"
#include "fw_match.h"
#include "fw_rules.h"
#include "fw_vnf.h"
#include "vnf_kind.h"

static void *fw_load(const struct vnf_kind_opts *o, char *err, size_t errlen)
{
	struct fw_diag diag = { 0 };
	struct fw_ruleset *rs;

	if (!o->rules) {
		snprintf(err, errlen, "fw needs --rules FILE");
		errno = EINVAL;
		return NULL;
	}
	rs = fw_ruleset_load(o->rules, &diag);
	if (!rs)
		snprintf(err, errlen, "%s", diag.msg[0] ? diag.msg : strerror(errno));
	return rs;
}

static void fw_free(void *e)
{
	fw_ruleset_destroy(e);
}

/* A stated policy is a rule too: "policy in accept" alone is a usable file. */
static unsigned int fw_count(const void *e)
{
	return fw_ruleset_count(e) + fw_ruleset_policies(e);
}

static void *fw_thread(const struct vnf_kind_opts *o)
{
	static int dummy;

	(void)o;
	return &dummy;
}

static void fw_thread_destroy(void *ts)
{
	(void)ts;
}

uint8_t fw_vnf_ct(const struct vnf_pkt *pk, const struct vnf_flow *f)
{
	if (!f)
		return pk->d.seq == 0 ? FW_CT_NEW : FW_CT_ESTABLISHED;
	switch (f->state) {
	case CH_FLOW_SYN:
		return FW_CT_NEW;
	case CH_FLOW_ESTABLISHED:
	case CH_FLOW_CLOSING:
	case CH_FLOW_CLOSED:
		return FW_CT_ESTABLISHED;
	default:
		return FW_CT_INVALID;
	}
}

static uint32_t fw_judge(void *ts, void *engine, const struct vnf_pkt *pk,
			 const struct vnf_flow *f, uint32_t *rule)
{
	struct fw_packet p;
	struct fw_hit hit;
	enum fw_verdict v;

	(void)ts;
	fw_packet_from_desc(&p, &pk->d, pk->d.chain == 1 ? FW_DIR_OUT : FW_DIR_IN,
			    (enum fw_ct)fw_vnf_ct(pk, f));
	v = fw_match(engine, &p, &hit);
	if (v == FW_ACCEPT) {
		*rule = 0;
		return VNF_VERDICT_ALLOW;
	}
	*rule = hit.rule;
	return VNF_VERDICT_DENY;
}

const struct vnf_kind vnf_kind_fw = {
	.name = "fw",
	.needs_rules = true,
	.engine_load = fw_load,
	.engine_free = fw_free,
	.engine_count = fw_count,
	.thread_create = fw_thread,
	.thread_destroy = fw_thread_destroy,
	.judge = fw_judge,
};
