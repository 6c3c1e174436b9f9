# lib/cgroup: CPU control groups (cg_*, include/tochain/cg.h): cg.c is the
# front (detection, checks, dispatch), cg_v1.c / cg_v2.c / cg_dry.c the
# backends behind struct cg_ops (cg_backend.h), cg_fs.c their file helpers.
CGROUP_SRCS := $(addprefix lib/cgroup/,cg.c cg_fs.c cg_v1.c cg_v2.c cg_dry.c)
CGROUP_LIB := $(BUILD)/lib/libtochain-cgroup.a
LIBS += $(CGROUP_LIB)
$(CGROUP_LIB): $(call objs,$(CGROUP_SRCS))
$(eval $(call unit_test,test_cg,$(CGROUP_LIB)))
$(eval $(call test_prog,cg-limit,$(call objs,tests/stress/cg_limit.c) $(CGROUP_LIB)))
$(eval $(call test_prog,cg-v2-kernel,$(call objs,tests/progs/cg_v2_kernel.c) $(CGROUP_LIB),-lpthread))
