# lib/cgroup: CPU control groups, v1 / v2 / dry-run backends (cg_*,
# include/tochain/cg.h).
CGROUP_SRCS := lib/cgroup/cg.c
CGROUP_LIB := $(BUILD)/lib/libtochain-cgroup.a
LIBS += $(CGROUP_LIB)
$(CGROUP_LIB): $(call objs,$(CGROUP_SRCS))
$(eval $(call unit_test,test_cg,$(CGROUP_LIB)))
$(eval $(call test_prog,cg-limit,$(call objs,tests/stress/cg_limit.c) $(CGROUP_LIB)))
