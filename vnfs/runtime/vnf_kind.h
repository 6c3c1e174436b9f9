/* SPDX-License-Identifier: MIT */
/*
 * VNF kinds (vnf_kind_*): the engines tochain-vnf can run (fw, ids, waf,
 * null) behind one small static interface, and the engine holder that
 * makes a rule reload safe under traffic.
 *
 * A kind has
 *   - an *engine*: what a rule file compiles to (immutable, shared by the
 *     service threads of the process), built by engine_load and freed by
 *     engine_free;
 *   - per service thread, a *thread state* (scratch space, the thread's
 *     per-connection stream table), made by thread_create;
 *   - judge(): the verdict for one descriptor (enum vnf_verdict) and, for a
 *     Deny or an Alert, the rule id that goes to deny_rule.
 *
 * RELOAD (struct vnf_engines).  The current engine sits in a holder under
 * a mutex, with a generation number.  A reload builds the new engine aside
 * (nothing changes if that fails), then swaps it in and bumps the
 * generation.  A service thread holds a reference on the engine it judges
 * with; between batches (vnf_kthread_refresh) it compares the generation
 * (one relaxed load) and, when it changed, takes a reference on the new
 * engine and drops the old one.  The last reference frees the old engine,
 * so it lives exactly as long as some thread may still use it.  Kinds
 * with per-connection state (ids, waf) give each new connection the
 * thread's current engine; their engine libraries count references per
 * connection themselves, so connections opened before a reload keep the
 * old rules until they end (see vnfs/runtime/README.md).
 *
 * THREADS.  vnf_engines_*: any thread.  A struct vnf_kthread and the
 * thread state it holds belong to one service thread.
 */
#ifndef TOCHAIN_VNF_KIND_H
#define TOCHAIN_VNF_KIND_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vnf.h"

/* Rule ids of Denies the adapters decide themselves (not an engine rule). */
#define VNF_RULE_STREAM_GAP	0xfffffff1u	/* bytes of the stream never seen */
#define VNF_RULE_ENGINE		0xfffffff2u	/* engine error: fail closed */

struct vnf_streams;

/* What the command line gives a kind. */
struct vnf_kind_opts {
	const char *rules;		/* rule file; NULL: the kind's default */
	const char *vars;		/* ids: variables file; NULL: vars.conf beside rules */
	int paranoia;			/* waf: 1-4, 0: the file's or CRS's default */
	const char *deny_marker;	/* null: deny payloads holding it */
	uint32_t max_streams;		/* per thread; 0: VNF_STREAMS_DEFAULT */
};

struct vnf_kind {
	const char *name;
	bool needs_rules;		/* --rules is required */
	/* Build an engine: pointer, or NULL with errno and a message in @err. */
	void *(*engine_load)(const struct vnf_kind_opts *o, char *err, size_t errlen);
	void (*engine_free)(void *engine);
	/* Rules an engine holds (for --check); NULL: the kind has no rules. */
	unsigned int (*engine_count)(const void *engine);
	/*
	 * For --check, may be NULL: every rule the load of @o would skip or
	 * refuse, each "file:line: reason" through @note, and how many.
	 * Reads the files as engine_load does; decides nothing.
	 */
	unsigned int (*diagnose)(const struct vnf_kind_opts *o,
				 void (*note)(void *arg, const char *msg), void *arg);
	/* Per service thread; NULL with errno. */
	void *(*thread_create)(const struct vnf_kind_opts *o);
	void (*thread_destroy)(void *ts);
	/*
	 * Verdict for @pk (payload pk->data, pk->len; its descriptor pk->d),
	 * @f its flow table entry or NULL.  Reads each payload byte once.
	 */
	uint32_t (*judge)(void *ts, void *engine, const struct vnf_pkt *pk,
			  const struct vnf_flow *f, uint32_t *rule);
	/*
	 * May be NULL (the kind never answers).  Right after judge() returned
	 * VNF_VERDICT_DENY: the answer the kind prepared for that Deny (an HTTP
	 * response for the client, vnf_proto.h VNF_VERDICT_ANSWER) in *@p,
	 * valid until the thread's next judge(), its incident id in
	 * *@incident, and its length; 0: no answer, the connection is reset.
	 * An answer is handed out once.
	 */
	uint32_t (*answer)(void *ts, const uint8_t **p, uint32_t *incident);
	/*
	 * May be NULL (the kind never alerts).  Right after judge() returned
	 * VNF_VERDICT_ALERT (*rule: the alerting rule): that rule's message in
	 * *@msg, valid until the thread's next judge(), and its length.
	 */
	uint32_t (*alert_msg)(void *ts, const char **msg);
	/* Forget connection @conn_id's state (calibration, tests); may be NULL. */
	void (*forget)(void *ts, uint64_t conn_id);
	/* The thread's stream table (vnf_stream.h), for sweeps; may be NULL. */
	struct vnf_streams *(*streams)(void *ts);
};

/* The kind called @name, or NULL. */
const struct vnf_kind *vnf_kind_find(const char *name);

extern const struct vnf_kind vnf_kind_null, vnf_kind_fw, vnf_kind_ids, vnf_kind_waf;

/* One engine with its reference count (holder's, threads'). */
struct vnf_engine {
	const struct vnf_kind *kind;
	void *impl;
	unsigned int refs;		/* atomic */
	uint64_t gen;
};

struct vnf_engines {
	const struct vnf_kind *kind;
	struct vnf_kind_opts opts;
	pthread_mutex_t lock;		/* serialises reloads and get */
	struct vnf_engine *cur;		/* (lock) holds one reference */
	uint64_t gen;			/* atomic: bumped (release) after cur changed */
};

/* Build the first engine.  0, or -errno with a message in @err. */
int vnf_engines_init(struct vnf_engines *es, const struct vnf_kind *k,
		     const struct vnf_kind_opts *o, char *err, size_t errlen);
/*
 * Build a new engine from the same options (the rule file is read again)
 * and swap it in.  On failure the old engine stays: -errno, @err says why.
 */
int vnf_engines_reload(struct vnf_engines *es, char *err, size_t errlen);
/* A reference to the current engine. */
struct vnf_engine *vnf_engines_get(struct vnf_engines *es);
void vnf_engine_put(struct vnf_engine *e);
/* Drop the holder's reference (threads must have put theirs). */
void vnf_engines_fini(struct vnf_engines *es);

/* A service thread's view: its engine reference and kind state. */
struct vnf_kthread {
	struct vnf_engines *es;
	struct vnf_engine *eng;
	uint64_t gen;
	void *ts;
};

int vnf_kthread_init(struct vnf_kthread *kt, struct vnf_engines *es);
/* Between batches: move to the newest engine if a reload happened. */
void vnf_kthread_refresh(struct vnf_kthread *kt);
static inline uint32_t vnf_kthread_judge(struct vnf_kthread *kt, const struct vnf_pkt *pk,
					 const struct vnf_flow *f, uint32_t *rule)
{
	return kt->es->kind->judge(kt->ts, kt->eng->impl, pk, f, rule);
}
void vnf_kthread_fini(struct vnf_kthread *kt);
/*
 * Post verdict @v of vnf_kthread_judge() for @pk on @t: a Deny goes with
 * the kind's answer when it prepared one (vnf_post_answer), an Alert
 * with its rule's message (vnf_post_alert).
 */
int vnf_kthread_post(struct vnf_kthread *kt, struct vnf_thread *t, const struct vnf_pkt *pk,
		     uint32_t v, uint32_t rule);

/* One stderr line, at most @per_s per second over the process (alerts, evictions). */
void vnf_log_limited(unsigned int per_s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Drop those lines altogether (calibration runs). */
void vnf_log_set_quiet(bool quiet);

#endif /* TOCHAIN_VNF_KIND_H */
