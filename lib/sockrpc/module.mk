# lib/sockrpc: the socket-call protocol between the guest runtime and the
# TOE (srpc_*, include/tochain/srpc.h).
SRPC_SRCS := lib/sockrpc/srpc.c
SRPC_LIB := $(BUILD)/lib/libtochain-sockrpc.a
LIBS += $(SRPC_LIB)
$(SRPC_LIB): $(call objs,$(SRPC_SRCS))

$(eval $(call unit_test,test_srpc_msg,$(SRPC_LIB)))

# libFuzzer target (clang): the TOE's request decoder under guest garbage.
FUZZ_TARGETS += $(BUILD)/fuzz/fuzz_srpc
$(BUILD)/fuzz/fuzz_srpc: tests/fuzz/fuzz_srpc.c $(SRPC_SRCS) include/tochain/srpc.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_srpc.c $(SRPC_SRCS)
