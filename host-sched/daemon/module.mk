# host-sched/daemon: tochain-sched, the daemon that enforces the plan on
# registered threads through lib/cgroup (hs_daemon*: one file per concept,
# listed in hs_daemon_int.h; hs_enforce*: the cgroup side); hs_libvirt is
# the libvirt backend for domain VMs (libvirt-dev).  The stand-in VNF/VM
# workload that tests and bench/31 drive it with is tests/progs/hs_worker*
# (hsd-worker).
HSD_SRCS := $(addprefix host-sched/daemon/,hs_daemon.c hs_daemon_ctl.c \
	hs_daemon_register.c hs_daemon_registry.c hs_daemon_dom.c \
	hs_daemon_period.c hs_daemon_tick.c hs_enforce.c hs_libvirt.c)
HSD_OBJS := $(call objs,$(HSD_SRCS))
HSD_LDLIBS := -ljansson $(shell pkg-config --libs libvirt libvirt-qemu 2>/dev/null || echo -lvirt-qemu -lvirt)
HSD_DEPS := $(HSD_OBJS) $(HS_LIB) $(CGROUP_LIB) $(CTL_LIB) $(REGION_LIB)
$(BUILD)/obj/host-sched/daemon/%.o: CPPFLAGS += -Ihost-sched/lib -Ihost-sched/daemon
$(eval $(call program,tochain-sched,$(call objs,host-sched/daemon/hs_dmain.c) $(HSD_DEPS),$(HSD_LDLIBS)))
HSW_OBJS := $(call objs,tests/progs/hs_worker.c)
$(eval $(call test_prog,hsd-worker,$(call objs,tests/progs/hs_worker_main.c) $(HSW_OBJS) $(CTL_LIB) $(REGION_LIB),-ljansson -lm))
HSD_UNIT := test_hsd_daemon test_hs_libvirt test_hsd_libvirt
$(foreach t,$(HSD_UNIT),$(eval $(call unit_test,$(t),$(HSD_DEPS),$(HSD_LDLIBS))))
$(patsubst %,$(BUILD)/obj/tests/unit/%.o,$(HSD_UNIT)): CPPFLAGS += -Ihost-sched/lib -Ihost-sched/daemon
