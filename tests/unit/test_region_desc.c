// SPDX-License-Identifier: MIT
/* Unit tests for lib/region/desc.c: copy-then-validate of descriptors. */
#include <errno.h>
#include <string.h>

#include <tochain/desc.h>
#include "tc_check.h"

static const struct tcr_params P = {
	.name = "d", .kind = TCR_KIND_GUEST, .nbufs = 8, .slot_size = 256, .nchannels = 1,
};
static void *mem;
static struct tcr_region *r;

static void setup(void)
{
	mem = tc_map(1 << 20);
	r = tcr_region_create_mem(mem, 1 << 20, &P);
	ck_assert_ptr_nonnull(r);
}

static void teardown(void)
{
	tcr_region_destroy(r);
	munmap(mem, 1 << 20);
}

START_TEST(store_load_roundtrip)
{
	struct tcr_desc d = { .conn_id = 7, .seq = 1000, .slot = 3, .off = 16, .len = 240,
			      .op = TCR_OP_DATA, .family = 4, .l4proto = 6, .sport = 80 }, o;

	ck_assert_int_eq(tcr_desc_store(r, 3, &d), 0);
	ck_assert_int_eq(tcr_desc_load(r, 3, &o), 0);
	ck_assert_mem_eq(&o, &d, sizeof(d));
	ck_assert_ptr_eq(tcr_desc_payload(r, &o), tcr_region_slot(r, 3) + 16);
	ck_assert_int_eq(tcr_desc_store(r, 8, &d), -ERANGE);
}
END_TEST

START_TEST(load_rejects_each_invalid_field)
{
	struct tcr_desc good = { .slot = 2, .off = 0, .len = 256, .op = TCR_OP_DATA }, o;
	struct tcr_desc *shared = tcr_region_desc(r, 2);

#define BAD(stmt, err) do { *shared = good; stmt; \
	ck_assert_int_eq(tcr_desc_load(r, 2, &o), err); } while (0)
	BAD((void)0, 0);
	BAD(shared->slot = 3, -EBADMSG);
	BAD(shared->len = 257, -EBADMSG);
	BAD((shared->off = 1, shared->len = 256), -EBADMSG);
	BAD((shared->off = 0xffffffffu, shared->len = 2), -EBADMSG);	/* would wrap in 32 bits */
	BAD(shared->op = 9, -EBADMSG);
	BAD(shared->family = 5, -EBADMSG);
#undef BAD
	ck_assert_int_eq(tcr_desc_load(r, 8, &o), -ERANGE);
	ck_assert_int_eq(tcr_desc_load(r, 0xffffffffu, &o), -ERANGE);
}
END_TEST

START_TEST(the_copy_is_what_counts)
{
	struct tcr_desc d = { .slot = 1, .len = 10, .op = TCR_OP_DATA }, o;

	tcr_desc_store(r, 1, &d);
	ck_assert_int_eq(tcr_desc_load(r, 1, &o), 0);
	tcr_region_desc(r, 1)->len = 100000;	/* changed after the check */
	ck_assert_uint_eq(o.len, 10);
	ck_assert_int_eq(tcr_desc_check(r, 1, &o), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("region_desc");
	TCase *tc = tcase_create("desc");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, store_load_roundtrip);
	tcase_add_test(tc, load_rejects_each_invalid_field);
	tcase_add_test(tc, the_copy_is_what_counts);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
