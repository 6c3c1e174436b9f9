/* SPDX-License-Identifier: MIT */
/*
 * The built-in traffic mix (vnf_mix_*): HTTP/1.1 requests of a web
 * application, deterministic from their number, for `tochain-vnf
 * --calibrate`, the vnf-drive integration scenarios and the benches.
 *
 * Request i: GETs (350 B - 2 KiB: cookies and query strings of varying
 * size) and form POSTs (bodies 200 B - 3 KiB); every 10th (i % 10 == 9) is
 * an attack, rotating over the families of enum vnf_mix_family.  Clean
 * requests are ordinary browser traffic that must pass a WAF at paranoia 1.
 */
#ifndef TOCHAIN_VNF_MIX_H
#define TOCHAIN_VNF_MIX_H

#include <stddef.h>
#include <stdint.h>

enum vnf_mix_family {
	VNF_MIX_CLEAN = 0,
	VNF_MIX_SQLI,		/* UNION SELECT in the query (CRS 942) */
	VNF_MIX_XSS,		/* <script> in the query (CRS 941) */
	VNF_MIX_TRAVERSAL,	/* ../../ in the query (CRS 930) */
	VNF_MIX_RCE,		/* ;uname in the query (CRS 932) */
	VNF_MIX_PROTO,		/* Content-Length with Transfer-Encoding (920181) */
	VNF_MIX_NFAMILIES
};

/* Largest request vnf_mix_request writes. */
#define VNF_MIX_MAX	4096

/*
 * Write request @i into @buf (at least VNF_MIX_MAX bytes); returns its
 * length; *fam its family.
 */
uint32_t vnf_mix_request(uint64_t i, char *buf, enum vnf_mix_family *fam);

const char *vnf_mix_family_name(enum vnf_mix_family f);

#endif /* TOCHAIN_VNF_MIX_H */
