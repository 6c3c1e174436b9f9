# host-sched: the CPU scheduler's algorithm library (libtochain-sched.a,
# pure C, no I/O) and the simulator tochain-sim that drives it.

HS_LIB_SRCS := $(addprefix host-sched/,hs_prio.c hs_quota.c hs_admit.c \
	hs_sort.c hs_plan.c hs_gang.c hs_vmrq.c hs_vmshare.c hs_early.c hs_cfs.c \
	hs_sched.c)
HS_LIB := $(BUILD)/lib/libtochain-sched.a
LIBS += $(HS_LIB)
$(HS_LIB): $(call objs,$(HS_LIB_SRCS))

HS_UNIT := test_hs_sort test_hs_prio test_hs_quota test_hs_admit test_hs_gang \
	test_hs_vmshare test_hs_early test_hs_plan test_hs_cfs test_hs_sched
$(foreach t,$(HS_UNIT),$(eval $(call unit_test,$(t),$(HS_LIB))))
$(patsubst %,$(BUILD)/obj/tests/unit/%.o,$(HS_UNIT)): CPPFLAGS += -Ihost-sched

# The simulator: scenario parser, model, report and CLI (these do I/O, so
# they stay out of the library), main.c holds only main.
HS_SIM_SRCS := $(addprefix host-sched/,hs_scn.c hs_sim.c hs_report.c hs_simcli.c)
HS_SIM_OBJS := $(call objs,$(HS_SIM_SRCS))
$(eval $(call program,tochain-sim,$(call objs,host-sched/main.c) $(HS_SIM_OBJS) $(HS_LIB),-lm))

# Unit tests of the simulator's parser and model.
$(eval $(call unit_test,test_hs_scn,$(HS_SIM_OBJS) $(HS_LIB),-lm))
$(eval $(call unit_test,test_hs_sim,$(HS_SIM_OBJS) $(HS_LIB),-lm))
$(BUILD)/obj/tests/unit/test_hs_scn.o $(BUILD)/obj/tests/unit/test_hs_sim.o: CPPFLAGS += -Ihost-sched

# tochain-sched: the daemon that enforces the plan on registered threads
# through cgroups (hs_daemon*, hs_enforce*), and the stand-in VNF/VM
# workload that tests and bench/31 drive it with (hs_worker*).
# hs_libvirt: the libvirt backend for domain VMs (libvirt-dev).
HSD_SRCS := $(addprefix host-sched/,hs_daemon.c hs_daemon_ctl.c hs_enforce.c hs_libvirt.c)
HSD_OBJS := $(call objs,$(HSD_SRCS))
HSD_LDLIBS := -ljansson $(shell pkg-config --libs libvirt libvirt-qemu 2>/dev/null || echo -lvirt-qemu -lvirt)
HSD_DEPS := $(HSD_OBJS) $(HS_LIB) $(CGROUP_LIB) $(CTL_LIB) $(BUILD)/lib/libtochain-region.a
$(HSD_OBJS) $(call objs,host-sched/hs_dmain.c): CPPFLAGS += -Icgroup -Ictl
$(eval $(call program,tochain-sched,$(call objs,host-sched/hs_dmain.c) $(HSD_DEPS),$(HSD_LDLIBS)))
HSW_OBJS := $(call objs,host-sched/hs_worker.c)
$(HSW_OBJS) $(call objs,host-sched/hs_worker_main.c): CPPFLAGS += -Ictl
$(eval $(call test_prog,hsd-worker,$(call objs,host-sched/hs_worker_main.c) $(HSW_OBJS) $(CTL_LIB) $(BUILD)/lib/libtochain-region.a,-ljansson -lm))
HSD_UNIT := test_hsd_daemon test_hs_libvirt test_hsd_libvirt
$(foreach t,$(HSD_UNIT),$(eval $(call unit_test,$(t),$(HSD_DEPS),$(HSD_LDLIBS))))
$(patsubst %,$(BUILD)/obj/tests/unit/%.o,$(HSD_UNIT)): CPPFLAGS += -Ihost-sched -Icgroup -Ictl
