/* SPDX-License-Identifier: MIT */
/*
 * hs_chain — what the scheduler library knows about chains, VNFs and VMs.
 *
 * Plain configuration records the caller (tochaind, tochain-sim) fills in
 * and keeps alive while a scheduler uses them.  Only the VNFs that run on
 * the synchronous partition belong here; VNFs co-located with the TOE in
 * the service partition (the paper's iptables) are not scheduled by it.
 */
#ifndef HS_CHAIN_H
#define HS_CHAIN_H

#include <stdint.h>

#define HS_MAX_VNFS	16	/* synchronous-partition VNFs per chain */
#define HS_MAX_THREADS	8	/* service threads of one VNF for one chain */
#define HS_MAX_VM_VCPUS	64

enum hs_kind {
	HS_KIND_VNF = 0,
	HS_KIND_VM = 1,
};

struct hs_vnf_cfg {
	const char *name;		/* for reasons and plans; may be NULL */
	uint64_t f_pps;			/* f_ik: one thread on a dedicated pCPU */
	uint32_t max_threads;		/* 1..HS_MAX_THREADS */
	uint32_t vcpu[HS_MAX_THREADS];	/* vCPU id of thread r */
};

struct hs_chain_cfg {
	const char *name;		/* may be NULL */
	uint64_t sla_pps;		/* t_i / T_i */
	int32_t vm;			/* receiving VM (index), -1: the TOE */
	uint32_t nvnf;
	struct hs_vnf_cfg vnf[HS_MAX_VNFS];
};

struct hs_vm_cfg {
	const char *name;		/* may be NULL */
	uint32_t nvcpu;
	uint32_t vcpu[HS_MAX_VM_VCPUS];
};

#endif
