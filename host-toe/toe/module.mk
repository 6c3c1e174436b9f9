# host-toe/toe: tochain-toe, the per-VM TCP offload engine (toe_*), with its
# chain stage (libtochain-chain.a) and control socket (lib/ctl, jansson).
TOE_SRCS := host-toe/toe/toe.c host-toe/toe/toe_sock.c host-toe/toe/toe_ready.c host-toe/toe/toe_join.c host-toe/toe/toe_flow.c host-toe/toe/toe_chan.c host-toe/toe/toe_stage.c host-toe/toe/toe_chain.c host-toe/toe/toe_ctl.c host-toe/toe/toe_capture.c host-toe/toe/toe_capall.c host-toe/toe/toe_pcap.c host-toe/toe/toe_perm.c host-toe/toe/toe_hold.c
TOE_LIB := $(BUILD)/lib/libtochain-toe.a
TOE_LDLIBS := $(CH_URCU_LIBS) -ljansson -lpthread
LIBS += $(TOE_LIB)
$(TOE_LIB): $(call objs,$(TOE_SRCS))
TOE_INC := -Ihost-toe/toe -Ihost-toe/chain
$(call objs,$(TOE_SRCS) host-toe/toe/main.c): CPPFLAGS += $(TOE_INC)
# The libraries in link order (toe needs chain, ctl, util; chain needs vnf, region).
TOE_ALL_LIBS := $(TOE_LIB) $(CTL_LIB) $(CH_LIB) $(BUILD)/lib/libtochain-vnf.a $(SRPC_LIB) $(REGION_LIB) $(UTIL_LIB)

$(eval $(call program,tochain-toe,$(call objs,host-toe/toe/main.c) $(TOE_ALL_LIBS),$(TOE_LDLIBS)))

$(eval $(call unit_test,test_toe_guest,$(TOE_ALL_LIBS),$(TOE_LDLIBS)))
$(eval $(call unit_test,test_toe_data,$(TOE_ALL_LIBS),$(TOE_LDLIBS)))
$(eval $(call unit_test,test_toe_ctl,$(TOE_ALL_LIBS),$(TOE_LDLIBS)))
$(eval $(call unit_test,test_toe_capture,$(TOE_ALL_LIBS),$(TOE_LDLIBS)))
$(eval $(call unit_test,test_toe_ready,$(TOE_ALL_LIBS),$(TOE_LDLIBS)))
$(eval $(call unit_test,test_toe_join,$(TOE_ALL_LIBS),$(TOE_LDLIBS)))
$(eval $(call unit_test,test_toe_hold,$(TOE_ALL_LIBS),$(TOE_LDLIBS)))
$(eval $(call unit_test,test_toe_stage,$(TOE_ALL_LIBS),$(TOE_LDLIBS)))
$(BUILD)/obj/tests/unit/test_toe_guest.o $(BUILD)/obj/tests/unit/test_toe_data.o $(BUILD)/obj/tests/unit/test_toe_ctl.o $(BUILD)/obj/tests/unit/test_toe_capture.o $(BUILD)/obj/tests/unit/test_toe_ready.o $(BUILD)/obj/tests/unit/test_toe_join.o $(BUILD)/obj/tests/unit/test_toe_hold.o $(BUILD)/obj/tests/unit/test_toe_stage.o: CPPFLAGS += $(TOE_INC)

# Hostile guest for test 413: rewrites outbound payload after submitting it.
$(eval $(call test_prog,toe-toctou,$(call objs,tests/progs/toe_toctou.c) $(SRPC_LIB) $(REGION_LIB)))

# Benchmark client/server (bench/20_toe_rr_bulk.sh); no sanitizers, it runs preloaded.
BENCH_PROGS += $(BUILD)/bench/bin/toe-rrbench
$(BUILD)/bench/bin/toe-rrbench: bench/progs/toe_rrbench.c
	@mkdir -p $(@D)
	$(CC) $(filter-out -fsanitize=% -MMD -MP,$(CFLAGS)) -D_GNU_SOURCE -o $@ $<

# Copy against MSG_ZEROCOPY for the TOE's transmit (bench/22_toe_zerocopy_local.sh).
BENCH_PROGS += $(BUILD)/bench/bin/toe-zcprobe
$(BUILD)/bench/bin/toe-zcprobe: bench/progs/zc_probe.c
	@mkdir -p $(@D)
	$(CC) $(filter-out -fsanitize=% -MMD -MP,$(CFLAGS)) -D_GNU_SOURCE -o $@ $<
