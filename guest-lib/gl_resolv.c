// SPDX-License-Identifier: MIT
/*
 * The resolver entry points (getaddrinfo, gethostbyname*) of the runtime.
 *
 * glibc's stub resolver opens and uses its UDP sockets through internal
 * aliases that symbol interposition does not catch (DESIGN.md section 5),
 * so in a VM its queries would never reach the TOE.  When the runtime is
 * configured (TOCHAIN_REGION), these functions resolve names themselves:
 * numeric addresses, then the hosts file, then DNS over an offloaded UDP
 * socket (the interposed socket/connect/send/poll/recv of this library).
 * Otherwise they call libc's.
 *
 *   TOCHAIN_HOSTS        hosts file (default /etc/hosts)
 *   TOCHAIN_RESOLV_CONF  resolver configuration (default /etc/resolv.conf):
 *                        up to 3 "nameserver" lines, "options timeout:N
 *                        attempts:N"; search lists are not applied.
 *
 * Results are allocated as glibc allocates them (one block per addrinfo
 * holding its sockaddr, the canonical name separate), so libc's
 * freeaddrinfo frees them and gai_strerror describes the codes.
 * Everything is per call; gethostbyname's result is per thread.
 * Never called with the runtime's mutex held: the socket calls take it.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <tochain/util.h>

#include "gl_resolv.h"
#include "gl_dns.h"

#define NS_MAX		3
#define ADDRS_MAX	GL_DNS_ADDR_MAX

struct gl_addrs {
	int n;
	struct {
		int family;
		uint8_t a[16];
	} v[ADDRS_MAX];
	char canon[GL_DNS_NAME_MAX + 1];
};

struct resolv_conf {
	int nns;
	struct sockaddr_storage ns[NS_MAX];
	socklen_t nslen[NS_MAX];
	int timeout_s, attempts;
};

static void addrs_add(struct gl_addrs *out, int family, const void *a)
{
	if (out->n == ADDRS_MAX)
		return;
	out->v[out->n].family = family;
	memcpy(out->v[out->n].a, a, family == AF_INET ? 4 : 16);
	out->n++;
}

/* ---- configuration files ---------------------------------------------------- */

static void read_resolv_conf(struct resolv_conf *rc)
{
	const char *path = getenv("TOCHAIN_RESOLV_CONF");
	char line[512];
	FILE *f;

	memset(rc, 0, sizeof(*rc));
	rc->timeout_s = 5;
	rc->attempts = 2;
	f = fopen(path && *path ? path : "/etc/resolv.conf", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *save, *key = strtok_r(line, " \t\r\n", &save), *v;

		if (!key || *key == '#' || *key == ';')
			continue;
		if (strcmp(key, "nameserver") == 0 && rc->nns < NS_MAX &&
		    (v = strtok_r(NULL, " \t\r\n", &save))) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&rc->ns[rc->nns];
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&rc->ns[rc->nns];

			memset(&rc->ns[rc->nns], 0, sizeof(rc->ns[0]));
			if (inet_pton(AF_INET, v, &sin->sin_addr) == 1) {
				sin->sin_family = AF_INET;
				sin->sin_port = htons(53);
				rc->nslen[rc->nns++] = sizeof(*sin);
			} else if (inet_pton(AF_INET6, v, &sin6->sin6_addr) == 1) {
				sin6->sin6_family = AF_INET6;
				sin6->sin6_port = htons(53);
				rc->nslen[rc->nns++] = sizeof(*sin6);
			}
		} else if (strcmp(key, "options") == 0) {
			while ((v = strtok_r(NULL, " \t\r\n", &save))) {
				if (strncmp(v, "timeout:", 8) == 0)
					rc->timeout_s = atoi(v + 8);
				else if (strncmp(v, "attempts:", 9) == 0)
					rc->attempts = atoi(v + 9);
			}
		}
	}
	fclose(f);
	if (rc->timeout_s < 1)
		rc->timeout_s = 1;
	if (rc->timeout_s > 30)
		rc->timeout_s = 30;
	if (rc->attempts < 1)
		rc->attempts = 1;
	if (rc->attempts > 5)
		rc->attempts = 5;
}

static bool want_family(int want, int family)
{
	return want == AF_UNSPEC || want == family;
}

/* The hosts file: every address of @name (case-insensitive) of the wanted families. */
static void hosts_lookup(const char *name, int family, struct gl_addrs *out)
{
	const char *path = getenv("TOCHAIN_HOSTS");
	char line[1024];
	FILE *f = fopen(path && *path ? path : "/etc/hosts", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *save, *addr, *h, *hash = strchr(line, '#');
		uint8_t a[16];
		int fam;

		if (hash)
			*hash = 0;
		addr = strtok_r(line, " \t\r\n", &save);
		if (!addr)
			continue;
		if (inet_pton(AF_INET, addr, a) == 1)
			fam = AF_INET;
		else if (inet_pton(AF_INET6, addr, a) == 1)
			fam = AF_INET6;
		else
			continue;
		const char *canon = NULL;	/* the first name of the line */

		while ((h = strtok_r(NULL, " \t\r\n", &save))) {
			if (!canon)
				canon = h;
			if (strcasecmp(h, name) == 0 && want_family(family, fam)) {
				if (!out->n)
					snprintf(out->canon, sizeof(out->canon), "%s", canon);
				addrs_add(out, fam, a);
				break;
			}
		}
	}
	fclose(f);
}

/* ---- DNS ------------------------------------------------------------------ */

static uint16_t rand16(void)
{
	uint16_t v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
		v = (uint16_t)((int64_t)tu_now_ms() ^ getpid());
	return v;
}

enum { DNS_OK, DNS_NONAME, DNS_AGAIN, DNS_FAIL };

/*
 * One exchange with server @i: send the queries, wait up to the timeout
 * for their answers.  DNS_OK: every query answered; DNS_NONAME: the name
 * does not exist; DNS_AGAIN: timeout or a server error (try the next);
 * DNS_FAIL: no socket (errno set).
 */
static int dns_exchange(const struct resolv_conf *rc, int i, const char *name,
			const uint16_t *qtypes, int nq, struct gl_addrs *out)
{
	uint8_t q[2][GL_DNS_QMAX], ans[4096];
	int qlen[2], fd, ret = DNS_AGAIN;
	bool answered[2] = { false, false };
	int64_t deadline;
	int left = nq;

	fd = socket(rc->ns[i].ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return DNS_FAIL;
	if (connect(fd, (const struct sockaddr *)&rc->ns[i], rc->nslen[i])) {
		close(fd);
		return DNS_AGAIN;
	}
	for (int k = 0; k < nq; k++) {
		qlen[k] = gl_dns_query(q[k], sizeof(q[k]), rand16(), name, qtypes[k]);
		if (qlen[k] < 0) {
			close(fd);
			return DNS_NONAME;	/* not a name DNS can carry */
		}
		send(fd, q[k], (size_t)qlen[k], 0);
	}
	deadline = (int64_t)tu_now_ms() + rc->timeout_s * 1000;
	while (left) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t wait = deadline - (int64_t)tu_now_ms();
		struct gl_dns_answer a;
		ssize_t n;
		int r;

		if (wait <= 0)
			break;
		r = poll(&pfd, 1, (int)wait);
		if (r < 0 && errno == EINTR)
			continue;	/* a signal is not the timeout */
		if (r <= 0)
			break;
		n = recv(fd, ans, sizeof(ans), MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;	/* unreachable, refused: the next server */
		if (n <= 0)
			continue;
		for (int k = 0; k < nq; k++) {
			if (answered[k] ||
			    gl_dns_parse(ans, (size_t)n, q[k], (size_t)qlen[k], &a) != 0)
				continue;
			if (a.rcode == GL_DNS_RCODE_NXDOMAIN) {
				close(fd);
				return DNS_NONAME;
			}
			if (a.rcode != 0) {
				close(fd);
				return DNS_AGAIN;	/* SERVFAIL, REFUSED: the next server */
			}
			answered[k] = true;
			left--;
			for (int j = 0; j < a.naddr; j++)
				addrs_add(out, qtypes[k] == GL_DNS_T_A ? AF_INET : AF_INET6,
					  a.addr[j]);
			if (a.naddr && !out->canon[0])
				snprintf(out->canon, sizeof(out->canon), "%s", a.canon);
			break;
		}
	}
	if (!left)
		ret = DNS_OK;
	close(fd);
	return ret;
}

/* Resolve @name over DNS: 0, or EAI_NONAME / EAI_AGAIN / EAI_SYSTEM. */
static int dns_lookup(const char *name, int family, bool v4mapped, struct gl_addrs *out)
{
	struct resolv_conf rc;
	uint16_t qtypes[2];
	int nq = 0;

	read_resolv_conf(&rc);
	if (rc.nns == 0)
		return EAI_AGAIN;
	if (family == AF_INET || family == AF_UNSPEC)
		qtypes[nq++] = GL_DNS_T_A;
	if (family == AF_INET6 || family == AF_UNSPEC)
		qtypes[nq++] = GL_DNS_T_AAAA;
	for (int at = 0; at < rc.attempts; at++) {
		for (int i = 0; i < rc.nns; i++) {
			struct gl_addrs tmp;
			int r;

			memset(&tmp, 0, sizeof(tmp));
			r = dns_exchange(&rc, i, name, qtypes, nq, &tmp);
			if (r == DNS_OK && !tmp.n && family == AF_INET6 && v4mapped)
				r = dns_exchange(&rc, i, name, (const uint16_t[]){ GL_DNS_T_A }, 1,
						 &tmp);
			if (r == DNS_OK) {
				*out = tmp;
				return tmp.n ? 0 : EAI_NONAME;
			}
			if (r == DNS_NONAME)
				return EAI_NONAME;
			if (r == DNS_FAIL)
				return EAI_SYSTEM;
		}
	}
	return EAI_AGAIN;
}

/* Numeric, hosts file, DNS: 0 or an EAI_* code.  @name is not NULL. */
static int lookup(const char *name, int family, int flags, struct gl_addrs *out)
{
	struct in_addr a4;
	struct in6_addr a6;

	memset(out, 0, sizeof(*out));
	if (inet_aton(name, &a4)) {
		if (family == AF_INET6) {
			if (!(flags & AI_V4MAPPED))
				return EAI_ADDRFAMILY;
			memset(&a6, 0, sizeof(a6));
			a6.s6_addr[10] = a6.s6_addr[11] = 0xff;
			memcpy(&a6.s6_addr[12], &a4, 4);
			addrs_add(out, AF_INET6, &a6);
		} else {
			addrs_add(out, AF_INET, &a4);
		}
		snprintf(out->canon, sizeof(out->canon), "%s", name);
		return 0;
	}
	if (inet_pton(AF_INET6, name, &a6) == 1) {
		if (family == AF_INET)
			return EAI_ADDRFAMILY;
		addrs_add(out, AF_INET6, &a6);
		snprintf(out->canon, sizeof(out->canon), "%s", name);
		return 0;
	}
	if (flags & AI_NUMERICHOST)
		return EAI_NONAME;
	hosts_lookup(name, family, out);
	if (out->n)
		return 0;
	return dns_lookup(name, family, (flags & AI_V4MAPPED) != 0, out);
}

/* ---- getaddrinfo ---------------------------------------------------------- */

static int service_port(const char *service, int socktype, int flags, int *port)
{
	char *end;
	unsigned long v;
	struct servent se, *r = NULL;
	char buf[1024];

	*port = 0;
	if (!service)
		return 0;
	v = strtoul(service, &end, 10);
	if (*service && !*end && !isspace((unsigned char)*service)) {
		if (v > 65535)
			return EAI_SERVICE;
		*port = (int)v;
		return 0;
	}
	if (flags & AI_NUMERICSERV)
		return EAI_NONAME;
	getservbyname_r(service, socktype == SOCK_DGRAM ? "udp" : "tcp", &se, buf, sizeof(buf), &r);
	if (!r)
		return EAI_SERVICE;
	*port = ntohs((uint16_t)r->s_port);
	return 0;
}

static struct addrinfo *ai_new(int family, const uint8_t *a, int port, int socktype,
			       int protocol)
{
	socklen_t sl = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	struct addrinfo *ai = calloc(1, sizeof(*ai) + sl);

	if (!ai)
		return NULL;
	ai->ai_family = family;
	ai->ai_socktype = socktype;
	ai->ai_protocol = protocol;
	ai->ai_addrlen = sl;
	ai->ai_addr = (struct sockaddr *)(ai + 1);
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ai->ai_addr;

		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		memcpy(&sin->sin_addr, a, 4);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ai->ai_addr;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		memcpy(&sin6->sin6_addr, a, 16);
	}
	return ai;
}

static void ai_free(struct addrinfo *ai)
{
	while (ai) {
		struct addrinfo *next = ai->ai_next;

		free(ai->ai_canonname);
		free(ai);
		ai = next;
	}
}

#define AI_KNOWN (AI_PASSIVE | AI_CANONNAME | AI_NUMERICHOST | AI_V4MAPPED | AI_ALL | \
		  AI_ADDRCONFIG | AI_NUMERICSERV | AI_IDN | AI_CANONIDN)

/*
 * getaddrinfo with the runtime's resolver.  AI_ADDRCONFIG is ignored: the
 * stand-in VM has no addresses of its own, its TOE does.
 */
int gl_resolv_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
			  struct addrinfo **res)
{
	static const struct { int type, proto; } types[] = {
		{ SOCK_STREAM, IPPROTO_TCP }, { SOCK_DGRAM, IPPROTO_UDP }, { SOCK_RAW, 0 },
	};
	int family = AF_UNSPEC, socktype = 0, protocol = 0, flags = AI_V4MAPPED | AI_ADDRCONFIG;
	struct addrinfo *head = NULL, **tail = &head;
	struct gl_addrs addrs;
	int err, port;

	if (hints) {
		family = hints->ai_family;
		socktype = hints->ai_socktype;
		protocol = hints->ai_protocol;
		flags = hints->ai_flags;
	}
	if (flags & ~AI_KNOWN)
		return EAI_BADFLAGS;
	if ((flags & AI_CANONNAME) && !node)
		return EAI_BADFLAGS;
	if (family != AF_UNSPEC && family != AF_INET && family != AF_INET6)
		return EAI_FAMILY;
	if (socktype != 0 && socktype != SOCK_STREAM && socktype != SOCK_DGRAM &&
	    socktype != SOCK_RAW)
		return EAI_SOCKTYPE;
	if (!node && !service)
		return EAI_NONAME;
	if (service && socktype == SOCK_RAW)
		return EAI_SERVICE;
	err = service_port(service, socktype, flags, &port);
	if (err)
		return err;
	if (node) {
		err = lookup(node, family, flags, &addrs);
		if (err)
			return err;
	} else {
		static const uint8_t any[16], lo6[16] = { [15] = 1 };
		const uint8_t lo4[4] = { 127, 0, 0, 1 };
		bool passive = flags & AI_PASSIVE;

		memset(&addrs, 0, sizeof(addrs));
		if (family != AF_INET)
			addrs_add(&addrs, AF_INET6, passive ? any : lo6);
		if (family != AF_INET6)
			addrs_add(&addrs, AF_INET, passive ? any : lo4);
	}
	for (int i = 0; i < addrs.n; i++) {
		for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++) {
			struct addrinfo *ai;

			if (socktype ? types[k].type != socktype : (service && types[k].type == SOCK_RAW))
				continue;
			if (protocol && types[k].proto && protocol != types[k].proto)
				continue;
			ai = ai_new(addrs.v[i].family, addrs.v[i].a, port, types[k].type,
				    protocol ? protocol : types[k].proto);
			if (!ai) {
				ai_free(head);
				return EAI_MEMORY;
			}
			*tail = ai;
			tail = &ai->ai_next;
		}
	}
	if (!head)
		return EAI_NONAME;
	if (flags & AI_CANONNAME) {
		head->ai_canonname = strdup(addrs.canon[0] ? addrs.canon : node);
		if (!head->ai_canonname) {
			ai_free(head);
			return EAI_MEMORY;
		}
	}
	*res = head;
	return 0;
}

/* ---- gethostbyname ----------------------------------------------------------- */

/*
 * Fill @he from @addrs in @buf (aliases none).  0, ERANGE (buffer too
 * small) ; *@h_errnop as libc's.
 */
static int hostent_fill(const struct gl_addrs *addrs, int family, const char *name,
			struct hostent *he, char *buf, size_t buflen)
{
	size_t alen = family == AF_INET ? 4 : 16, n = 0, need;
	const char *canon = addrs->canon[0] ? addrs->canon : name;
	char **ptrs;
	char *p;

	for (int i = 0; i < addrs->n; i++)
		n += addrs->v[i].family == family;
	/* pointers (addresses + NULL, aliases: NULL), addresses, name */
	need = (n + 2) * sizeof(char *) + n * alen + strlen(canon) + 1;
	p = buf + (sizeof(char *) - ((uintptr_t)buf % sizeof(char *))) % sizeof(char *);
	if ((size_t)(p - buf) > buflen || buflen - (size_t)(p - buf) < need)
		return ERANGE;
	ptrs = (char **)p;
	p += (n + 2) * sizeof(char *);
	he->h_addr_list = ptrs;
	for (int i = 0; i < addrs->n; i++) {
		if (addrs->v[i].family != family)
			continue;
		memcpy(p, addrs->v[i].a, alen);
		*ptrs++ = p;
		p += alen;
	}
	*ptrs++ = NULL;
	he->h_aliases = ptrs;	/* the empty list: the NULL just below */
	*ptrs = NULL;
	strcpy(p, canon);
	he->h_name = p;
	he->h_addrtype = family;
	he->h_length = (int)alen;
	return 0;
}

int gl_resolv_gethostbyname2_r(const char *name, int family, struct hostent *he, char *buf,
			       size_t buflen, struct hostent **result, int *h_errnop)
{
	struct gl_addrs addrs;
	int err, n = 0;

	*result = NULL;
	if (family != AF_INET && family != AF_INET6) {
		*h_errnop = NETDB_INTERNAL;
		return EAFNOSUPPORT;
	}
	err = lookup(name, family, 0, &addrs);
	for (int i = 0; !err && i < addrs.n; i++)
		n += addrs.v[i].family == family;
	if (err || !n) {
		*h_errnop = err == EAI_AGAIN ? TRY_AGAIN : err == EAI_SYSTEM ? NETDB_INTERNAL
									    : HOST_NOT_FOUND;
		return err == EAI_SYSTEM ? errno : 0;
	}
	err = hostent_fill(&addrs, family, name, he, buf, buflen);
	if (err) {
		*h_errnop = NETDB_INTERNAL;
		return err;
	}
	*h_errnop = 0;
	*result = he;
	return 0;
}

/* gethostbyname's result: per thread, as no buffer may be shared between threads. */
static __thread struct {
	struct hostent he;
	char buf[GL_DNS_ADDR_MAX * (16 + sizeof(char *)) + GL_DNS_NAME_MAX + 64];
} tls_host;

struct hostent *gl_resolv_gethostbyname2(const char *name, int family)
{
	struct hostent *r;
	int herr;

	if (gl_resolv_gethostbyname2_r(name, family, &tls_host.he, tls_host.buf,
				       sizeof(tls_host.buf), &r, &herr) || !r) {
		h_errno = herr;
		return NULL;
	}
	return r;
}
