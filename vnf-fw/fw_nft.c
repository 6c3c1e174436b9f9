// SPDX-License-Identifier: MIT
/*
 * fw_nft.c - renders a compiled ruleset as nftables text and runs it through
 * libnftables in a chosen network namespace.
 *
 * LOCKING: nft_lock serialises every use of libnftables in this process;
 * its context setup touches library-global state.  Nothing else is shared.
 *
 * NAMESPACES: the caller's thread never calls setns().  For a foreign
 * namespace a worker thread is created with all signals blocked, enters the
 * namespace (setns on a thread changes only that thread), creates its own
 * nft context there (its netlink socket belongs to that namespace), runs
 * the commands and exits; its namespace dies with it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <nftables/libnftables.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fw_nft.h"
#include "fw_rules_priv.h"

static pthread_mutex_t nft_lock = PTHREAD_MUTEX_INITIALIZER;

/* Growing string; @failed latches an allocation failure. */
struct sbuf {
	char *s;
	size_t len, cap;
	bool failed;
};

__attribute__((format(printf, 2, 3)))
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t ncap = b->cap ? b->cap * 2 : 1024;
		while (ncap < b->len + (size_t)n + 1)
			ncap *= 2;
		char *ns = realloc(b->s, ncap);
		if (!ns) {
			b->failed = true;
			return;
		}
		b->s = ns;
		b->cap = ncap;
	}
}

static void put_addrs(struct sbuf *b, const struct fw_ruleset *rs,
		      const struct fw_rule *r, const struct fw_set *set,
		      const char *field)
{
	unsigned int i;

	sb_printf(b, "%s %s %s%s", r->family == 4 ? "ip" : "ip6", field,
		  set->neg ? "!= " : "", set->n > 1 ? "{ " : "");
	for (i = 0; i < set->n; i++) {
		const struct fw_prefix *px = &rs->prefixes[set->off + i];
		char a[INET6_ADDRSTRLEN];

		inet_ntop(r->family == 4 ? AF_INET : AF_INET6, px->addr, a, sizeof(a));
		sb_printf(b, "%s%s", i ? ", " : "", a);
		if (px->plen != (r->family == 4 ? 32 : 128))
			sb_printf(b, "/%u", px->plen);
	}
	sb_printf(b, "%s ", set->n > 1 ? " }" : "");
}

static void put_ports(struct sbuf *b, const struct fw_ruleset *rs,
		      const struct fw_rule *r, const struct fw_set *set,
		      const char *field)
{
	unsigned int i;

	sb_printf(b, "%s %s %s%s", r->proto == 6 ? "tcp" : "udp", field,
		  set->neg ? "!= " : "", set->n > 1 ? "{ " : "");
	for (i = 0; i < set->n; i++) {
		const struct fw_range *rg = &rs->ranges[set->off + i];

		sb_printf(b, "%s%u", i ? ", " : "", rg->lo);
		if (rg->hi != rg->lo)
			sb_printf(b, "-%u", rg->hi);
	}
	sb_printf(b, "%s ", set->n > 1 ? " }" : "");
}

static void put_flag_list(struct sbuf *b, uint8_t bits)
{
	static const char *const names[8] = {
		"fin", "syn", "rst", "psh", "ack", "urg", "ecn", "cwr",
	};
	bool first = true;
	int i;

	if (!bits) {
		sb_printf(b, "0");
		return;
	}
	for (i = 0; i < 8; i++)
		if (bits & (1u << i)) {
			sb_printf(b, "%s%s", first ? "" : " | ", names[i]);
			first = false;
		}
}

static void put_rule(struct sbuf *b, const struct fw_ruleset *rs,
		     const struct fw_rule *r)
{
	static const char *const ct_names[FW_CT_COUNT] = {
		"new", "established", "related", "invalid",
	};
	bool l4 = r->sport.n || r->dport.n || r->flags_mask;

	sb_printf(b, "\t\t");
	if (r->family && !r->src.n && !r->dst.n)
		sb_printf(b, "meta nfproto %s ", r->family == 4 ? "ipv4" : "ipv6");
	if (r->has_proto && !l4) {
		switch (r->proto) {
		case 6:
			sb_printf(b, "meta l4proto tcp ");
			break;
		case 17:
			sb_printf(b, "meta l4proto udp ");
			break;
		case 1:
			sb_printf(b, "meta l4proto icmp ");
			break;
		case 58:
			sb_printf(b, "meta l4proto ipv6-icmp ");
			break;
		default:
			sb_printf(b, "meta l4proto %u ", r->proto);
			break;
		}
	}
	if (r->src.n)
		put_addrs(b, rs, r, &r->src, "saddr");
	if (r->dst.n)
		put_addrs(b, rs, r, &r->dst, "daddr");
	if (r->sport.n)
		put_ports(b, rs, r, &r->sport, "sport");
	if (r->dport.n)
		put_ports(b, rs, r, &r->dport, "dport");
	if (r->flags_mask) {
		bool one = !(r->flags_mask & (r->flags_mask - 1));

		sb_printf(b, "tcp flags & %s", one ? "" : "(");
		put_flag_list(b, r->flags_mask);
		sb_printf(b, "%s == ", one ? "" : ")");
		put_flag_list(b, r->flags_val);
		sb_printf(b, " ");
	}
	if (r->ct_states) {
		unsigned int n = __builtin_popcount(r->ct_states), k = 0;
		int s;

		sb_printf(b, "ct state %s%s", r->ct_neg ? "!= " : "", n > 1 ? "{ " : "");
		for (s = 0; s < FW_CT_COUNT; s++)
			if (r->ct_states & (1u << s))
				sb_printf(b, "%s%s", k++ ? ", " : "", ct_names[s]);
		sb_printf(b, "%s ", n > 1 ? " }" : "");
	}
	if (r->action == FW_REJECT && r->has_proto && r->proto == 6)
		sb_printf(b, "reject with tcp reset");
	else
		sb_printf(b, "%s", fw_verdict_name((enum fw_verdict)r->action));
	if (r->comment[0])
		sb_printf(b, " comment \"%s\"", r->comment);
	sb_printf(b, "\n");
}

char *fw_nft_render(const struct fw_ruleset *rs)
{
	static const char *const hook[FW_DIR_COUNT] = { "input", "output" };
	struct sbuf b = { 0 };
	unsigned int d, i;

	sb_printf(&b, "table inet " FW_NFT_TABLE "\n"
		  "delete table inet " FW_NFT_TABLE "\n"
		  "table inet " FW_NFT_TABLE " {\n");
	for (d = 0; d < FW_DIR_COUNT; d++) {
		const struct fw_chain *c = &rs->chain[d];

		sb_printf(&b, "\tchain %s {\n"
			  "\t\ttype filter hook %s priority filter; policy %s;\n",
			  hook[d], hook[d], fw_verdict_name((enum fw_verdict)c->policy));
		for (i = 0; i < c->n; i++)
			put_rule(&b, rs, &c->rules[i]);
		sb_printf(&b, "\t}\n");
	}
	sb_printf(&b, "}\n");
	if (b.failed) {
		free(b.s);
		errno = ENOMEM;
		return NULL;
	}
	return b.s;
}

static void diag_set(struct fw_diag *diag, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void diag_set(struct fw_diag *diag, const char *fmt, ...)
{
	va_list ap;

	if (!diag)
		return;
	diag->line = 0;
	va_start(ap, fmt);
	vsnprintf(diag->msg, sizeof(diag->msg), fmt, ap);
	va_end(ap);
}

struct nft_job {
	const char *text;
	bool dry_run;
	char **out;
	int nsfd;		/* -1: stay in the current namespace */
	int rc;
	struct fw_diag *diag;
};

/* Maps nftables' error text to an errno (libnftables reports text only). */
static int nft_errno(const char *err)
{
	if (strstr(err, "No such file or directory"))
		return -ENOENT;
	if (strstr(err, "Operation not permitted"))
		return -EPERM;
	if (strstr(err, "Cannot allocate memory"))
		return -ENOMEM;
	return -EIO;
}

static void nft_job_run(struct nft_job *j)
{
	struct nft_ctx *ctx;

	ctx = nft_ctx_new(NFT_CTX_DEFAULT);
	if (!ctx) {
		j->rc = -ENOMEM;
		diag_set(j->diag, "nftables: cannot create context");
		return;
	}
	if (nft_ctx_buffer_output(ctx) || nft_ctx_buffer_error(ctx)) {
		j->rc = -ENOMEM;
		diag_set(j->diag, "nftables: cannot buffer output");
		goto out_free;
	}
	nft_ctx_set_dry_run(ctx, j->dry_run);
	if (nft_run_cmd_from_buffer(ctx, j->text)) {
		const char *err = nft_ctx_get_error_buffer(ctx);
		size_t n;

		if (!err)
			err = "";
		if (!strncmp(err, "Error: ", 7))
			err += 7;
		n = strcspn(err, "\n");
		j->rc = nft_errno(err);
		diag_set(j->diag, "nftables: %.*s", (int)(n > 250 ? 250 : n), err);
		goto out_free;
	}
	j->rc = 0;
	if (j->out) {
		const char *o = nft_ctx_get_output_buffer(ctx);

		*j->out = strdup(o ? o : "");
		if (!*j->out)
			j->rc = -ENOMEM;
	}
out_free:
	nft_ctx_free(ctx);
}

static void *nft_job_thread(void *arg)
{
	struct nft_job *j = arg;

	if (setns(j->nsfd, CLONE_NEWNET)) {
		j->rc = -errno;
		diag_set(j->diag, "cannot enter network namespace: %s",
			 j->rc == -EPERM ? "not permitted" : "not a network namespace");
		return NULL;
	}
	nft_job_run(j);
	return NULL;
}

static int open_netns(const char *netns, struct fw_diag *diag)
{
	char path[PATH_MAX];
	int fd;

	if (strchr(netns, '/')) {
		snprintf(path, sizeof(path), "%s", netns);
	} else {
		if (!netns[0] || !strcmp(netns, ".") || !strcmp(netns, "..") ||
		    strlen(netns) > NAME_MAX) {
			diag_set(diag, "bad network namespace name '%.64s'", netns);
			return -EINVAL;
		}
		snprintf(path, sizeof(path), "/run/netns/%s", netns);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		diag_set(diag, "network namespace %.200s: %s", path,
			 err == ENOENT ? "not found" : err == EACCES ? "permission denied"
			 : "cannot open");
		return -err;
	}
	return fd;
}

int fw_nft_run(const char *netns, const char *text, bool dry_run, char **out,
	       struct fw_diag *diag)
{
	struct nft_job j = {
		.text = text, .dry_run = dry_run, .out = out, .nsfd = -1,
		.rc = -EIO, .diag = diag,
	};
	sigset_t all, old;
	pthread_t t;
	int err;

	if (diag) {
		diag->msg[0] = '\0';
		diag->line = 0;
	}
	if (out)
		*out = NULL;
	if (netns) {
		j.nsfd = open_netns(netns, diag);
		if (j.nsfd < 0)
			return j.nsfd;
	}
	pthread_mutex_lock(&nft_lock);
	if (j.nsfd < 0) {
		nft_job_run(&j);
	} else {
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		err = pthread_create(&t, NULL, nft_job_thread, &j);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (err) {
			j.rc = -err;
			diag_set(diag, "cannot start namespace thread");
		} else {
			pthread_join(t, NULL);
		}
		close(j.nsfd);
	}
	pthread_mutex_unlock(&nft_lock);
	return j.rc;
}

int fw_nft_apply(const char *netns, const struct fw_ruleset *rs, struct fw_diag *diag)
{
	char *text = fw_nft_render(rs);
	int rc;

	if (!text) {
		diag_set(diag, "out of memory");
		return -ENOMEM;
	}
	rc = fw_nft_run(netns, text, false, NULL, diag);
	free(text);
	return rc;
}

int fw_nft_check(const struct fw_ruleset *rs, struct fw_diag *diag)
{
	char *text = fw_nft_render(rs);
	int rc;

	if (!text) {
		diag_set(diag, "out of memory");
		return -ENOMEM;
	}
	rc = fw_nft_run(NULL, text, true, NULL, diag);
	free(text);
	return rc;
}

int fw_nft_remove(const char *netns, struct fw_diag *diag)
{
	return fw_nft_run(netns, "table inet " FW_NFT_TABLE "\n"
			  "delete table inet " FW_NFT_TABLE "\n", false, NULL, diag);
}

int fw_nft_list(const char *netns, char **out, struct fw_diag *diag)
{
	return fw_nft_run(netns, "list table inet " FW_NFT_TABLE "\n", false, out, diag);
}
