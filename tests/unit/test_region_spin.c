// SPDX-License-Identifier: MIT
/* Unit tests for lib/region/spin.c: the adaptive spin budget's rules. */
#include <sys/syscall.h>
#include <unistd.h>

#include <tochain/spin.h>
#include "tc_check.h"

START_TEST(crowded_text)
{
	ck_assert(!tcr_spin_crowded_text("0.52 0.58 0.59 2/412 12345\n", 2));
	ck_assert(tcr_spin_crowded_text("0.52 0.58 0.59 3/412 12345\n", 2));
	ck_assert(tcr_spin_crowded_text("9.00 8.00 7.00 17/900 1\n", 16));
	ck_assert(!tcr_spin_crowded_text("1.00 1.00 1.00 1/100 1", 1));
	/* text that does not parse is not crowded */
	ck_assert(!tcr_spin_crowded_text("", 1));
	ck_assert(!tcr_spin_crowded_text("0.52 0.58 0.59", 1));
	ck_assert(!tcr_spin_crowded_text("0.52 0.58 0.59 x/412 1", 1));
	ck_assert(!tcr_spin_crowded_text("0.52 0.58 0.59 99", 1));
}
END_TEST

START_TEST(starts_at_zero_grows_on_quick_wakeups)
{
	struct tcr_spin s;

	tcr_spin_init(&s, 16000);
	ck_assert_uint_ge(s.ncpus, 1);
	ck_assert_uint_eq(s.budget_ns, 0);
	ck_assert_uint_eq(tcr_spin_budget(&s), 0);
	/* a long sleep says nothing for spinning */
	tcr_spin_woke(&s, 16000);
	ck_assert_uint_eq(s.budget_ns, 0);
	tcr_spin_woke(&s, 500);
	ck_assert_uint_eq(s.budget_ns, TCR_SPIN_MIN_NS);
	for (int i = 0; i < 10; i++)
		tcr_spin_woke(&s, 500);
	ck_assert_uint_eq(s.budget_ns, 16000);	/* capped */
	/* a spin that found work keeps it */
	tcr_spin_spun(&s, true);
	ck_assert_uint_eq(s.budget_ns, 16000);
}
END_TEST

START_TEST(shrinks_to_zero_when_spins_find_nothing)
{
	struct tcr_spin s;
	int n = 0;

	tcr_spin_init(&s, 64000);
	for (int i = 0; i < 20; i++)
		tcr_spin_woke(&s, 10);
	ck_assert_uint_eq(s.budget_ns, 64000);
	while (s.budget_ns && n < 100) {
		tcr_spin_spun(&s, false);
		n++;
	}
	ck_assert_uint_eq(s.budget_ns, 0);
	ck_assert_int_le(n, 7);	/* 64 µs halves below 1 µs in 7 steps */
}
END_TEST

START_TEST(crowded_machine_spins_nothing)
{
	struct tcr_spin s;

	tcr_spin_init(&s, 8000);
	tcr_spin_woke(&s, 10);
	ck_assert_uint_eq(s.budget_ns, TCR_SPIN_MIN_NS);
	/* Pretend the last look found the run queue longer than our CPUs. */
	s.crowded = true;
	s.recheck_ns = UINT64_MAX;
	ck_assert_uint_eq(tcr_spin_budget(&s), 0);
	s.crowded = false;
	ck_assert_uint_eq(tcr_spin_budget(&s), TCR_SPIN_MIN_NS);
	/* a real look at this machine answers something and sets the next look */
	s.recheck_ns = 0;
	(void)tcr_spin_budget(&s);
	ck_assert_uint_gt(s.recheck_ns, 0);
}
END_TEST

START_TEST(schedstat_text)
{
	uint64_t d = 1;

	ck_assert(tcr_spin_schedstat_text("260019428 71467713 915\n", &d));
	ck_assert_uint_eq(d, 71467713);
	ck_assert(tcr_spin_schedstat_text("0 0 1", &d));
	ck_assert_uint_eq(d, 0);
	ck_assert(!tcr_spin_schedstat_text("", &d));
	ck_assert(!tcr_spin_schedstat_text("12", &d));
	ck_assert(!tcr_spin_schedstat_text("12 x 3", &d));
	ck_assert(!tcr_spin_schedstat_text("12 34x 3", &d));
	ck_assert(!tcr_spin_schedstat_text(" 12 34 3", &d));
}
END_TEST

START_TEST(crowded_by_own_run_delay)
{
	/* 10 ms looked at: more than 1.25 ms waiting for a CPU is crowded */
	ck_assert(!tcr_spin_crowded_delay(0, 10000000));
	ck_assert(!tcr_spin_crowded_delay(1250000, 10000000));
	ck_assert(tcr_spin_crowded_delay(1250001, 10000000));
	ck_assert(tcr_spin_crowded_delay(7000000, 10000000));
}
END_TEST

START_TEST(looks_at_this_thread)
{
	struct tcr_spin s;

	tcr_spin_init(&s, 8000);
	tcr_spin_woke(&s, 10);
	/* the first look sets this thread's baseline (Debian's kernels have schedstat) */
	(void)tcr_spin_budget(&s);
	ck_assert_uint_gt(s.look_ns, 0);
	ck_assert_int_eq(s.tid, (int32_t)syscall(SYS_gettid));
	/* another thread's baseline is replaced by this one's */
	s.tid = -1;
	s.look_ns = 1;
	s.recheck_ns = 0;
	(void)tcr_spin_budget(&s);
	ck_assert_int_eq(s.tid, (int32_t)syscall(SYS_gettid));
	ck_assert_uint_gt(s.look_ns, 1);
	ck_assert_uint_gt(s.recheck_ns, s.look_ns);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("region_spin");
	TCase *tc = tcase_create("spin");
	tcase_add_test(tc, crowded_text);
	tcase_add_test(tc, starts_at_zero_grows_on_quick_wakeups);
	tcase_add_test(tc, shrinks_to_zero_when_spins_find_nothing);
	tcase_add_test(tc, crowded_machine_spins_nothing);
	tcase_add_test(tc, schedstat_text);
	tcase_add_test(tc, crowded_by_own_run_delay);
	tcase_add_test(tc, looks_at_this_thread);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
