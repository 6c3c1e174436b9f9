# cgroup: CPU control groups, v1 / v2 / dry-run backends (cg_*).
CGROUP_SRCS := cgroup/cg.c
CGROUP_LIB := $(BUILD)/lib/libtochain-cgroup.a
LIBS += $(CGROUP_LIB)
$(CGROUP_LIB): $(call objs,$(CGROUP_SRCS))
$(BUILD)/obj/tests/unit/test_cg.o: CPPFLAGS += -Icgroup
$(eval $(call unit_test,test_cg,$(CGROUP_LIB)))
$(BUILD)/obj/tests/stress/cg_limit.o: CPPFLAGS += -Icgroup
$(eval $(call test_prog,cg-limit,$(call objs,tests/stress/cg_limit.c) $(CGROUP_LIB)))
