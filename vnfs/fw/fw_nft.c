// SPDX-License-Identifier: MIT
/*
 * fw_nft.c - renders a compiled ruleset as nftables text and runs it through
 * libnftables in a chosen network namespace.
 *
 * ISOLATION: libnftables is run in a short-lived child process, never in
 * the caller's.  The library exit()s when it cannot open its netlink socket
 * or allocate memory, and abort()s on netlink ABI errors; in the host
 * daemon that would take every chain down.  In a child it costs one
 * failed request.  The child also setns()es into the target namespace
 * (it is single-threaded, so that is simple and safe) and dies with it:
 * the caller's namespace, threads and signal handlers are untouched.
 * The child reports over a pipe: a struct nft_reply, then the diagnostic,
 * then nftables' output.  The result travels in the pipe, not the exit
 * status, so a daemon whose SIGCHLD handler reaps every child still gets
 * it.
 *
 * Fork safety: the child calls malloc and stdio through libnftables.
 * glibc makes both usable after fork() in a multithreaded process; the
 * parent flushes stdio first so that nothing buffered is written twice.
 * All signals are blocked in the child: the parent's handlers never run
 * there.  No locks: each call has its own process.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <nftables/libnftables.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fw_nft.h"
#include "fw_nft_priv.h"
#include "fw_rules_priv.h"

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

/* What the child reports; followed by msg_len + out_len bytes. */
struct nft_reply {
	int32_t rc;		/* 0 or -errno */
	uint32_t msg_len;	/* diagnostic, without NUL */
	uint32_t out_len;	/* nftables output, without NUL */
};

#define NFT_MAX_OUTPUT	(64u << 20)	/* larger listings are refused */
#define NFT_TIMEOUT_MS	30000		/* a helper taking longer is killed */

void (*fw_nft_child_hook)(void);

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

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Runs in the child: never returns. */
static void __attribute__((noreturn))
nft_child(int nsfd, int wfd, const char *text, bool dry_run, bool want_out)
{
	struct nft_reply r = { .rc = 0 };
	const char *msg = "", *out = "";
	struct nft_ctx *ctx;
	char buf[300];
	size_t n;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (fw_nft_child_hook)
		fw_nft_child_hook();
	if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET)) {
		r.rc = -errno;
		msg = r.rc == -EPERM ? "cannot enter network namespace: not permitted"
				     : "cannot enter network namespace: not a network namespace";
		goto out_reply;
	}
	ctx = nft_ctx_new(NFT_CTX_DEFAULT);
	if (!ctx) {
		r.rc = -ENOMEM;
		msg = "nftables: cannot create context";
		goto out_reply;
	}
	if (nft_ctx_buffer_output(ctx) || nft_ctx_buffer_error(ctx)) {
		r.rc = -ENOMEM;
		msg = "nftables: cannot buffer output";
		goto out_reply;
	}
	nft_ctx_set_dry_run(ctx, dry_run);
	if (nft_run_cmd_from_buffer(ctx, text)) {
		const char *err = nft_ctx_get_error_buffer(ctx);

		if (!err)
			err = "";
		if (!strncmp(err, "Error: ", 7))
			err += 7;
		n = strcspn(err, "\n");
		r.rc = nft_errno(err);
		snprintf(buf, sizeof(buf), "nftables: %.*s", (int)(n > 250 ? 250 : n), err);
		msg = buf;
	} else if (want_out) {
		out = nft_ctx_get_output_buffer(ctx);
		if (!out)
			out = "";
	}
	/* ctx is not freed: the process ends right after the reply. */
out_reply:
	r.msg_len = (uint32_t)strlen(msg);
	n = strlen(out);
	r.out_len = n > NFT_MAX_OUTPUT ? 0 : (uint32_t)n;
	if (n > NFT_MAX_OUTPUT && !r.rc) {
		r.rc = -EFBIG;
		msg = "nftables: output too large";
		r.msg_len = (uint32_t)strlen(msg);
	}
	if (write_all(wfd, &r, sizeof(r)) || write_all(wfd, msg, r.msg_len) ||
	    write_all(wfd, out, r.out_len))
		_exit(2);
	_exit(0);
}

/*
 * Reads the child's reply into *@buf.  Does not rely on EOF: another
 * thread of the caller may fork while our pipe is open, and its child
 * would hold the write end.  Stops when the reply is complete, when the
 * pipe ends, or when the child has exited (its pidfd is readable) and the
 * pipe holds nothing more.  Gives up after NFT_TIMEOUT_MS.
 */
static ssize_t read_reply(int rfd, int pidfd, char **buf)
{
	size_t len = 0, cap = 4096, want = sizeof(struct nft_reply);
	bool exited = false;
	char *b = malloc(cap);
	int waited = 0;

	if (!b)
		return -ENOMEM;
	for (;;) {
		struct pollfd pf[2] = {
			{ .fd = rfd, .events = POLLIN },
			{ .fd = pidfd, .events = POLLIN },
		};
		ssize_t n;
		int k;

		if (len >= sizeof(struct nft_reply)) {
			struct nft_reply r;

			memcpy(&r, b, sizeof(r));
			want = sizeof(r) + (size_t)r.msg_len + r.out_len;
			if (want > NFT_MAX_OUTPUT + sizeof(r) + 4096) {
				free(b);
				return -EFBIG;
			}
			if (len >= want)
				break;
		}
		if (len == cap || want > cap) {
			size_t ncap = cap * 2 > want ? cap * 2 : want;
			char *nb = realloc(b, ncap);

			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap = ncap;
		}
		n = read(rfd, b + len, cap - len);
		if (n > 0) {
			len += (size_t)n;
			continue;
		}
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) || exited)
			break;	/* EOF, error, or child gone and pipe drained */
		k = poll(pf, pidfd >= 0 ? 2 : 1, 100);
		if (k < 0 && errno != EINTR)
			break;
		if (k == 0 && (waited += 100) >= NFT_TIMEOUT_MS) {
			free(b);
			return -ETIMEDOUT;
		}
		if (k > 0 && pidfd >= 0 && (pf[1].revents & POLLIN))
			exited = true;	/* drain what is left, then stop */
	}
	*buf = b;
	return (ssize_t)len;
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
	struct nft_reply r;
	sigset_t all, old;
	int nsfd = -1, pidfd, p[2], status, rc, err;
	char *reply = NULL;
	ssize_t len;
	pid_t pid;

	if (diag) {
		diag->msg[0] = '\0';
		diag->line = 0;
	}
	if (out)
		*out = NULL;
	if (netns) {
		nsfd = open_netns(netns, diag);
		if (nsfd < 0)
			return nsfd;
	}
	if (pipe2(p, O_CLOEXEC)) {
		rc = -errno;
		diag_set(diag, "cannot create pipe");
		goto out_close_ns;
	}
	fflush(NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		nft_child(nsfd, p[1], text, dry_run, out != NULL);
	}
	err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(p[1]);
	if (pid < 0) {
		rc = -err;
		diag_set(diag, "cannot start nftables helper process");
		goto out_close_pipe;
	}
	/* Without pidfds (Linux < 5.3) we fall back to waiting for EOF. */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	len = read_reply(p[0], pidfd, &reply);
	if (len == -ETIMEDOUT)
		kill(pid, SIGKILL);
	/* Reap our child; ECHILD if the caller's SIGCHLD handler did. */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (pidfd >= 0)
		close(pidfd);
	if (len < 0) {
		rc = (int)len;
		diag_set(diag, len == -ETIMEDOUT ? "nftables helper timed out"
			 : "cannot read nftables helper's reply");
		goto out_close_pipe;
	}
	if ((size_t)len < sizeof(r)) {
		rc = -EIO;
		diag_set(diag, "nftables helper died without a reply (libnftables exit or crash)");
		goto out_free;
	}
	memcpy(&r, reply, sizeof(r));
	if ((size_t)len != sizeof(r) + (size_t)r.msg_len + r.out_len) {
		rc = -EIO;
		diag_set(diag, "nftables helper sent a truncated reply");
		goto out_free;
	}
	rc = r.rc;
	if (r.msg_len)
		diag_set(diag, "%.*s", (int)r.msg_len, reply + sizeof(r));
	if (!rc && out) {
		*out = strndup(reply + sizeof(r) + r.msg_len, r.out_len);
		if (!*out) {
			rc = -ENOMEM;
			diag_set(diag, "out of memory");
		}
	}
out_free:
	free(reply);
out_close_pipe:
	close(p[0]);
out_close_ns:
	if (nsfd >= 0)
		close(nsfd);
	return rc;
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
