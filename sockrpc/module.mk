# sockrpc: the socket-call protocol between the guest runtime and the TOE
# (srpc_*).  Link $(SRPC_LIB); add -Isockrpc to objects that include srpc.h.
SRPC_SRCS := sockrpc/srpc.c
SRPC_LIB := $(BUILD)/lib/libtochain-sockrpc.a
LIBS += $(SRPC_LIB)
$(SRPC_LIB): $(call objs,$(SRPC_SRCS))

$(eval $(call unit_test,test_srpc_msg,$(SRPC_LIB)))
$(BUILD)/obj/tests/unit/test_srpc_msg.o: CPPFLAGS += -Isockrpc
