# host-toe/chain: forwarding tables under RCU and the packet scheduler
# (ch_*), libtochain-chain.a; see host-toe/chain/README.md.  Link with
# $(CH_ALL_LIBS) and $(CH_URCU_LIBS); objects that include its headers
# need -Ihost-toe/chain.  (The VNF runtime library is named by path: it is
# declared after this file.)
CH_SRCS := host-toe/chain/ch_table.c host-toe/chain/ch_queue.c host-toe/chain/ch_psched.c host-toe/chain/ch_psched_dispatch.c host-toe/chain/ch_psched_collect.c host-toe/chain/ch_psched_live.c host-toe/chain/ch_psched_loop.c host-toe/chain/ch_psched_sla.c host-toe/chain/ch_psched_plan.c host-toe/chain/ch_flow.c
CH_LIB := $(BUILD)/lib/libtochain-chain.a
CH_URCU_LIBS := $(shell pkg-config --libs liburcu-memb 2>/dev/null || echo -lurcu-memb -lurcu-common)
LIBS += $(CH_LIB)
$(CH_LIB): $(call objs,$(CH_SRCS))
CH_INC := -Ihost-toe/chain -Itests/progs -Ivnfs/runtime
$(call objs,$(CH_SRCS) tests/progs/ch_drive.c bench/progs/ch_bench.c tests/progs/ch_harness.c): CPPFLAGS += $(CH_INC)

CH_ALL_LIBS := $(CH_LIB) $(BUILD)/lib/libtochain-vnf.a $(REGION_LIB) $(UTIL_LIB)
CH_TESTS := test_ch_table test_ch_queue test_ch_psched test_ch_flow
$(foreach t,$(CH_TESTS),$(eval $(call unit_test,$(t),$(call objs,tests/progs/ch_harness.c) $(CH_ALL_LIBS),$(CH_URCU_LIBS))))
$(foreach t,$(CH_TESTS),$(BUILD)/obj/tests/unit/$(t).o): CPPFLAGS += $(CH_INC)

# Integration helper (tests/integration/4NN_*.sh) and the hop benchmark.
$(eval $(call test_prog,chain-drive,$(call objs,tests/progs/ch_drive.c tests/progs/ch_harness.c) $(CH_ALL_LIBS),$(CH_URCU_LIBS)))
$(eval $(call bench_prog,chain-bench,$(call objs,bench/progs/ch_bench.c tests/progs/ch_harness.c) $(CH_ALL_LIBS),$(CH_URCU_LIBS)))
