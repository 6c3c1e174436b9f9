# region: the shared-memory region library (tcr_*), linked into every
# component on both sides (host and guest).
REGION_SRCS := $(filter-out region/tcr_tool%,$(wildcard region/*.c))
REGION_LIB := $(BUILD)/lib/libtochain-region.a
LIBS += $(REGION_LIB)
$(REGION_LIB): $(call objs,$(REGION_SRCS))

$(foreach t,ring region desc pool chan counters tsc,\
  $(eval $(call unit_test,test_region_$(t),$(REGION_LIB))))

$(eval $(call test_prog,region-stress,$(call objs,tests/stress/region_stress.c) $(REGION_LIB)))
$(eval $(call bench_prog,region-bench,$(call objs,bench/region_bench.c) $(REGION_LIB)))

# libFuzzer target (clang): the region library under a scribbling guest.
FUZZ_CC ?= clang
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iregion/include
FUZZ_TARGETS += $(BUILD)/fuzz/fuzz_region
$(BUILD)/fuzz/fuzz_region: tests/fuzz/fuzz_region.c $(REGION_SRCS) $(wildcard region/include/tochain/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_region.c $(REGION_SRCS) -lpthread

# tochain-region: inspect a region file as the host sees it.
$(eval $(call program,tochain-region,$(call objs,region/tcr_tool.c region/tcr_tool_main.c) $(REGION_LIB)))
