// SPDX-License-Identifier: MIT
/* Unit tests for host-toe/chain/ch_table.c: config checks, versions, RCU replacement. */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include "ch_table.h"
#include "tc_check.h"

static struct ch_chain_cfg cfg_hops(uint32_t nhops, uint32_t width)
{
	struct ch_chain_cfg c = { .region = 1, .dir = CH_DIR_IN, .nhops = nhops };

	for (uint32_t h = 0; h < nhops; h++) {
		c.hop[h].nvnfs = width;
		for (uint32_t i = 0; i < width; i++)
			c.hop[h].vnf[i] = i;
	}
	return c;
}

START_TEST(cfg_check_rejects_bad_configs)
{
	struct ch_chain_cfg c = cfg_hops(2, 2);

	ck_assert_int_eq(ch_chain_cfg_check(&c, 4), 0);
	ck_assert_int_eq(ch_chain_cfg_check(&c, 1), -EINVAL);	/* VNF id 1 unknown */
	c.hop[1].vnf[1] = 0;					/* same VNF twice in a hop */
	ck_assert_int_eq(ch_chain_cfg_check(&c, 4), -EINVAL);
	c = cfg_hops(2, 2);
	c.hop[0].nvnfs = 0;
	ck_assert_int_eq(ch_chain_cfg_check(&c, 4), -EINVAL);
	c = cfg_hops(2, 2);
	c.hop[0].nvnfs = CH_MAX_PAR + 1;
	ck_assert_int_eq(ch_chain_cfg_check(&c, 4), -EINVAL);
	c = cfg_hops(2, 2);
	c.nhops = CH_MAX_HOPS + 1;
	ck_assert_int_eq(ch_chain_cfg_check(&c, 4), -EINVAL);
	c = cfg_hops(2, 2);
	c.dir = 7;
	ck_assert_int_eq(ch_chain_cfg_check(&c, 4), -EINVAL);
	c = cfg_hops(2, 2);
	c.region = CH_MAX_REGIONS;
	ck_assert_int_eq(ch_chain_cfg_check(&c, 4), -EINVAL);
	c = cfg_hops(0, 0);					/* pass-through chain */
	ck_assert_int_eq(ch_chain_cfg_check(&c, 4), 0);
	/* The same VNF in two different hops is fine. */
	c = cfg_hops(2, 1);
	ck_assert_int_eq(ch_chain_cfg_check(&c, 4), 0);
}
END_TEST

START_TEST(set_get_put_versions)
{
	struct ch_tables *t = ch_tables_create(4, 8);
	struct ch_chain_cfg c1 = cfg_hops(1, 1), c2 = cfg_hops(2, 3);
	struct ch_table *a, *b, *ret;
	uint64_t v1, v2;

	ck_assert_ptr_nonnull(t);
	urcu_memb_register_thread();
	ck_assert_ptr_null(ch_tables_get(t, 0));
	ck_assert_ptr_null(ch_tables_get(t, 4));
	ck_assert_int_eq(ch_tables_set(t, 4, &c1, NULL), -EINVAL);
	ck_assert_int_eq(ch_tables_set(t, 0, NULL, NULL), -ENOENT);
	ck_assert_int_eq(ch_tables_set(t, 0, &c1, &v1), 0);
	a = ch_tables_get(t, 0);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->version, v1);
	ck_assert_uint_eq(a->cfg.nhops, 1);
	/* Replace while a descriptor holds the old table: it stays valid. */
	ck_assert_int_eq(ch_tables_set(t, 0, &c2, &v2), 0);
	ck_assert_uint_gt(v2, v1);
	ck_assert_ptr_null(ch_tables_take_retired(t));
	ck_assert_uint_eq(a->cfg.nhops, 1);
	b = ch_tables_get(t, 0);
	ck_assert_uint_eq(b->version, v2);
	ck_assert_uint_eq(b->cfg.hop[1].nvnfs, 3);
	ch_table_put(t, a);			/* last reference: retired now */
	ret = ch_tables_take_retired(t);
	ck_assert_ptr_eq(ret, a);
	ck_assert_ptr_null(ret->next);
	free(ret);
	/* Delete: the held table is retired only at its last put. */
	ck_assert_int_eq(ch_tables_set(t, 0, NULL, NULL), 0);
	ck_assert_ptr_null(ch_tables_get(t, 0));
	ck_assert_ptr_null(ch_tables_take_retired(t));
	ch_table_put(t, b);
	ret = ch_tables_take_retired(t);
	ck_assert_ptr_eq(ret, b);
	free(ret);
	/* A bad config changes nothing. */
	ck_assert_int_eq(ch_tables_set(t, 1, &c1, NULL), 0);
	c2.hop[0].vnf[0] = 99;
	ck_assert_int_eq(ch_tables_set(t, 1, &c2, NULL), -EINVAL);
	a = ch_tables_get(t, 1);
	ck_assert_uint_eq(a->cfg.nhops, 1);
	ch_table_put(t, a);
	urcu_memb_unregister_thread();
	ch_tables_destroy(t);
}
END_TEST

/* Readers take and drop tables while a writer replaces them. */
struct stress {
	struct ch_tables *t;
	volatile int stop;
	uint64_t reads, bad;
};

static void *reader(void *arg)
{
	struct stress *s = arg;
	struct ch_table *held[8] = { 0 };
	unsigned int k = 0;

	urcu_memb_register_thread();
	while (!s->stop) {
		struct ch_table *tb = ch_tables_get(s->t, 0);

		if (!tb)
			continue;
		/* The table's contents were written before it was published. */
		if (tb->cfg.nhops != tb->version % 4 || tb->cfg.hop[0].vnf[0] != 0)
			s->bad++;
		__atomic_fetch_add(&s->reads, 1, __ATOMIC_RELAXED);
		/* Hold a few for a while: in-flight descriptors. */
		if (held[k % 8])
			ch_table_put(s->t, held[k % 8]);
		held[k++ % 8] = tb;
	}
	for (unsigned int i = 0; i < 8; i++)
		if (held[i])
			ch_table_put(s->t, held[i]);
	urcu_memb_unregister_thread();
	return NULL;
}

START_TEST(replace_under_readers)
{
	struct stress s = { .t = ch_tables_create(1, 8) };
	uint64_t created = 0, freed = 0;
	pthread_t th[2];

	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, reader, &s);
	/*
	 * The writer starts once a reader reads: on a loaded machine the
	 * replacements could otherwise all be over before a reader ran.
	 */
	for (int i = 0; i < 5000 && !__atomic_load_n(&s.reads, __ATOMIC_RELAXED); i++)
		usleep(1000);
	for (uint64_t v = 1; v <= 2000; v++) {
		/* Version v carries v % 4 hops, so readers can check contents. */
		struct ch_chain_cfg c = cfg_hops((uint32_t)(v % 4), 1);
		struct ch_table *tb, *next;

		if (v % 4 == 0)
			c.hop[0].vnf[0] = 0;	/* hop 0 unused but zero */
		ck_assert_int_eq(ch_tables_set(s.t, 0, &c, NULL), 0);
		created++;
		for (tb = ch_tables_take_retired(s.t); tb; tb = next) {
			next = tb->next;
			ck_assert_uint_eq(__atomic_load_n(&tb->refs, __ATOMIC_RELAXED), 0);
			free(tb);
			freed++;
		}
	}
	s.stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (struct ch_table *tb = ch_tables_take_retired(s.t), *next; tb; tb = next) {
		next = tb->next;
		free(tb);
		freed++;
	}
	ck_assert_uint_eq(s.bad, 0);
	ck_assert_uint_gt(s.reads, 0);
	/* Every replaced table was retired exactly once; one is still current. */
	ck_assert_uint_eq(freed, created - 1);
	ch_tables_destroy(s.t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ch_table");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, cfg_check_rejects_bad_configs);
	tcase_add_test(tc, set_get_put_versions);
	tcase_add_test(tc, replace_under_readers);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
