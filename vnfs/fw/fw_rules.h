/* SPDX-License-Identifier: MIT */
/*
 * fw_rules.h - the firewall rule file: parsing into a compiled ruleset.
 *
 * One rule file feeds both halves of the firewall VNF: the nftables ruleset
 * of a VM's TOE container (fw_nft.h) and the in-chain matcher (fw_match.h).
 * The syntax is documented in vnfs/fw/README.md.  Everything the parser
 * accepts compiles to both halves with the same meaning.
 *
 * A ruleset is immutable once built: any number of threads may call
 * fw_match() on it concurrently without locking.  Replacing rules means
 * building a new ruleset and swapping the pointer (the caller owns that
 * publication and the grace period before fw_ruleset_destroy()).
 *
 * Input is untrusted (an operator's file, possibly garbage): every error is
 * reported as "NAME:LINE: reason" in a struct fw_diag and the whole file is
 * refused; nothing here exits, aborts or keeps a partial result.
 */
#ifndef TOCHAIN_FW_RULES_H
#define TOCHAIN_FW_RULES_H

#include <stddef.h>
#include <stdint.h>

/* Limits of what the parser accepts; larger input is refused, not cut. */
#define FW_MAX_FILE_BYTES	(1u << 20)	/* whole file */
#define FW_MAX_LINE		1024		/* bytes per line, without '\n' */
#define FW_MAX_RULES		4096		/* rules per file */
#define FW_MAX_SET		64		/* elements in one address or port set */
#define FW_MAX_COMMENT		128		/* bytes in a comment (nftables' limit) */

enum fw_verdict {
	FW_ACCEPT = 0,
	FW_DROP = 1,
	FW_REJECT = 2,	/* drop and tell the peer (TCP RST / ICMP) */
};

enum fw_dir {
	FW_DIR_IN = 0,	/* towards the VM: nftables "input" hook */
	FW_DIR_OUT = 1,	/* from the VM: nftables "output" hook */
	FW_DIR_COUNT
};

/* Connection-tracking states, as conntrack reports them. */
enum fw_ct {
	FW_CT_NEW = 0,
	FW_CT_ESTABLISHED = 1,
	FW_CT_RELATED = 2,
	FW_CT_INVALID = 3,
	FW_CT_COUNT
};

/* TCP header flag bits, same values as the TCP header byte 13. */
#define FW_TCP_FIN	0x01
#define FW_TCP_SYN	0x02
#define FW_TCP_RST	0x04
#define FW_TCP_PSH	0x08
#define FW_TCP_ACK	0x10
#define FW_TCP_URG	0x20
#define FW_TCP_ECE	0x40
#define FW_TCP_CWR	0x80

/* Why a file was refused: "NAME:LINE: reason" (or "NAME: reason" for I/O). */
struct fw_diag {
	char msg[320];
	unsigned int line;	/* 0 when not about a line */
};

struct fw_ruleset;

/*
 * Reads and compiles the rule file at @path.  Returns the ruleset, or NULL
 * with errno set and @diag (if not NULL) filled:
 *   EINVAL  syntax or semantic error in the file (diag names the line)
 *   EFBIG   file larger than FW_MAX_FILE_BYTES
 *   ENOMEM  out of memory
 *   other   errno of open/read (ENOENT, EACCES, EISDIR, ...)
 */
struct fw_ruleset *fw_ruleset_load(const char *path, struct fw_diag *diag);

/*
 * Compiles @len bytes at @buf (need not be NUL-terminated); @name is used
 * in diagnostics.  Same results as fw_ruleset_load().
 */
struct fw_ruleset *fw_ruleset_parse(const char *buf, size_t len,
				    const char *name, struct fw_diag *diag);

/* Frees @rs (NULL is fine).  No fw_match() may still be running on it. */
void fw_ruleset_destroy(struct fw_ruleset *rs);

/* Number of rules (policies not counted). */
unsigned int fw_ruleset_count(const struct fw_ruleset *rs);
/* Number of policy lines the file gave (0 to FW_DIR_COUNT). */
unsigned int fw_ruleset_policies(const struct fw_ruleset *rs);

/* Default verdict of direction @dir (FW_ACCEPT or FW_DROP). */
enum fw_verdict fw_ruleset_policy(const struct fw_ruleset *rs, enum fw_dir dir);

const char *fw_verdict_name(enum fw_verdict v);

#endif /* TOCHAIN_FW_RULES_H */
