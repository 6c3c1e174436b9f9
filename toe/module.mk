# toe: tochain-toe, the per-VM TCP offload engine (toe_*).
TOE_SRCS := toe/toe.c
TOE_LIB := $(BUILD)/lib/libtochain-toe.a
LIBS += $(TOE_LIB)
$(TOE_LIB): $(call objs,$(TOE_SRCS))
$(call objs,$(TOE_SRCS) toe/main.c): CPPFLAGS += -Isockrpc -Itoe

$(eval $(call program,tochain-toe,$(call objs,toe/main.c) $(TOE_LIB) $(SRPC_LIB) $(REGION_LIB)))

$(eval $(call unit_test,test_toe_guest,$(TOE_LIB) $(SRPC_LIB) $(REGION_LIB)))
$(BUILD)/obj/tests/unit/test_toe_guest.o: CPPFLAGS += -Isockrpc -Itoe

# Benchmark client/server (bench/20_toe_rr_bulk.sh); no sanitizers, it runs preloaded.
BENCH_PROGS += $(BUILD)/bench/bin/toe-rrbench
$(BUILD)/bench/bin/toe-rrbench: bench/toe_rrbench.c
	@mkdir -p $(@D)
	$(CC) $(filter-out -fsanitize=% -MMD -MP,$(CFLAGS)) -D_GNU_SOURCE -o $@ $<
