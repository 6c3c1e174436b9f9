# lib/region: the shared-memory region library (tcr_*), linked into every
# component on both sides (host and guest).  Its headers are the region
# ones of include/tochain/.
REGION_SRCS := $(wildcard lib/region/*.c)
REGION_LIB := $(BUILD)/lib/libtochain-region.a
LIBS += $(REGION_LIB)
$(REGION_LIB): $(call objs,$(REGION_SRCS))

$(foreach t,ring region desc pool chan counters tsc spin,\
  $(eval $(call unit_test,test_region_$(t),$(REGION_LIB))))

$(eval $(call test_prog,region-stress,$(call objs,tests/stress/region_stress.c) $(REGION_LIB)))
$(eval $(call bench_prog,region-bench,$(call objs,bench/progs/region_bench.c) $(REGION_LIB)))

# libFuzzer targets (clang) share these flags.
FUZZ_CC ?= clang
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iinclude
# The region library under a scribbling guest.
FUZZ_TARGETS += $(BUILD)/fuzz/fuzz_region
$(BUILD)/fuzz/fuzz_region: tests/fuzz/fuzz_region.c $(REGION_SRCS) $(wildcard include/tochain/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_region.c $(REGION_SRCS) -lpthread
