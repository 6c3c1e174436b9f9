# toe: tochain-toe, the per-VM TCP offload engine (toe_*), with its chain
# stage (libtochain-chain.a) and control socket (ctl/, jansson).
TOE_SRCS := toe/toe.c toe/toe_sock.c toe/toe_chan.c toe/toe_stage.c toe/toe_chain.c toe/toe_ctl.c
TOE_LIB := $(BUILD)/lib/libtochain-toe.a
TOE_LDLIBS := $(CH_URCU_LIBS) -ljansson -lpthread
LIBS += $(TOE_LIB)
$(TOE_LIB): $(call objs,$(TOE_SRCS))
$(call objs,$(TOE_SRCS) toe/main.c): CPPFLAGS += -Isockrpc -Itoe -Ichain -Ivnf -Ictl
# The libraries in link order (toe needs chain, ctl; chain needs vnf, region).
TOE_ALL_LIBS := $(TOE_LIB) $(BUILD)/lib/libtochain-ctl.a $(CH_LIB) $(CH_VNF_LIB) $(BUILD)/lib/libtochain-sockrpc.a $(CH_REGION_LIB)

$(eval $(call program,tochain-toe,$(call objs,toe/main.c) $(TOE_ALL_LIBS),$(TOE_LDLIBS)))

$(eval $(call unit_test,test_toe_guest,$(TOE_ALL_LIBS),$(TOE_LDLIBS)))
$(BUILD)/obj/tests/unit/test_toe_guest.o: CPPFLAGS += -Isockrpc -Itoe -Ichain -Ivnf -Ictl
$(eval $(call unit_test,test_toe_ctl,$(TOE_ALL_LIBS),$(TOE_LDLIBS)))
$(BUILD)/obj/tests/unit/test_toe_ctl.o: CPPFLAGS += -Isockrpc -Itoe -Ichain -Ivnf -Ictl

# Hostile guest for test 413: rewrites outbound payload after submitting it.
$(eval $(call test_prog,toe-toctou,$(call objs,toe/toe_toctou.c) $(BUILD)/lib/libtochain-sockrpc.a $(CH_REGION_LIB)))
$(call objs,toe/toe_toctou.c): CPPFLAGS += -Isockrpc

# Benchmark client/server (bench/20_toe_rr_bulk.sh); no sanitizers, it runs preloaded.
BENCH_PROGS += $(BUILD)/bench/bin/toe-rrbench
$(BUILD)/bench/bin/toe-rrbench: bench/toe_rrbench.c
	@mkdir -p $(@D)
	$(CC) $(filter-out -fsanitize=% -MMD -MP,$(CFLAGS)) -D_GNU_SOURCE -o $@ $<
