# host-sched: the CPU scheduler's algorithm library (libtochain-sched.a,
# pure C, no I/O) and the simulator tochain-sim that drives it.

HS_LIB_SRCS := $(addprefix host-sched/,hs_prio.c hs_quota.c hs_admit.c \
	hs_plan.c hs_gang.c hs_vmrq.c hs_vmshare.c hs_early.c hs_cfs.c \
	hs_sched.c)
HS_LIB := $(BUILD)/lib/libtochain-sched.a
LIBS += $(HS_LIB)
$(HS_LIB): $(call objs,$(HS_LIB_SRCS))
