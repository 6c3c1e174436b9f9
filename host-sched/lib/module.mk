# host-sched/lib: the CPU scheduler's algorithm library (hs_*,
# libtochain-sched.a): pure C, no I/O.  Users add -Ihost-sched/lib.
HS_LIB_SRCS := $(addprefix host-sched/lib/,hs_prio.c hs_quota.c hs_admit.c \
	hs_sort.c hs_plan.c hs_gang.c hs_vmrq.c hs_vmshare.c hs_early.c hs_cfs.c \
	hs_rate.c hs_sched.c)
HS_LIB := $(BUILD)/lib/libtochain-sched.a
LIBS += $(HS_LIB)
$(HS_LIB): $(call objs,$(HS_LIB_SRCS))

HS_UNIT := test_hs_sort test_hs_prio test_hs_quota test_hs_admit test_hs_gang \
	test_hs_vmshare test_hs_early test_hs_plan test_hs_cfs test_hs_rate test_hs_sched
$(foreach t,$(HS_UNIT),$(eval $(call unit_test,$(t),$(HS_LIB))))
$(patsubst %,$(BUILD)/obj/tests/unit/%.o,$(HS_UNIT)): CPPFLAGS += -Ihost-sched/lib
