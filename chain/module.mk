# chain: forwarding tables under RCU and the packet scheduler (ch_*),
# libtochain-chain.a; see chain/README.md.  Link with
# $(CH_LIB) $(CH_VNF_LIB) $(CH_REGION_LIB) and $(CH_URCU_LIBS); objects that
# include its headers need -Ichain -Ivnf.  (region/ and vnf/ are included
# after this file, so their archives are named here by path.)
CH_SRCS := chain/ch_table.c chain/ch_queue.c chain/ch_sched.c chain/ch_flow.c
CH_LIB := $(BUILD)/lib/libtochain-chain.a
CH_VNF_LIB := $(BUILD)/lib/libtochain-vnf.a
CH_REGION_LIB := $(BUILD)/lib/libtochain-region.a
CH_URCU_LIBS := $(shell pkg-config --libs liburcu-memb 2>/dev/null || echo -lurcu-memb -lurcu-common)
LIBS += $(CH_LIB)
$(CH_LIB): $(call objs,$(CH_SRCS))
$(call objs,$(CH_SRCS) chain/ch_drive.c chain/ch_bench.c chain/ch_harness.c): CPPFLAGS += -Ichain -Ivnf

CH_ALL_LIBS := $(CH_LIB) $(CH_VNF_LIB) $(CH_REGION_LIB)
CH_TESTS := test_ch_table test_ch_queue test_ch_sched test_ch_flow
$(foreach t,$(CH_TESTS),$(eval $(call unit_test,$(t),$(call objs,chain/ch_harness.c) $(CH_ALL_LIBS),$(CH_URCU_LIBS))))
$(foreach t,$(CH_TESTS),$(BUILD)/obj/tests/unit/$(t).o): CPPFLAGS += -Ichain -Ivnf

# Integration helper (tests/integration/4NN_*.sh) and the hop benchmark.
$(eval $(call test_prog,chain-drive,$(call objs,chain/ch_drive.c chain/ch_harness.c) $(CH_ALL_LIBS),$(CH_URCU_LIBS)))
$(eval $(call bench_prog,chain-bench,$(call objs,chain/ch_bench.c chain/ch_harness.c) $(CH_ALL_LIBS),$(CH_URCU_LIBS)))
