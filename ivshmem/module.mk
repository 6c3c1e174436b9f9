# ivshmem: the host-side ivshmem server (QEMU's ivshmem server protocol)
# as a library, and the tochain-ivshmem-server program.
IVS_SRCS := ivshmem/ivs_proto.c ivshmem/ivs_server.c
IVS_LIB := $(BUILD)/lib/libtochain-ivshmem.a

LIBS += $(IVS_LIB)
$(IVS_LIB): $(call objs,$(IVS_SRCS))

$(call objs,ivshmem/main.c tests/unit/test_ivs_server.c tests/unit/test_ivs_proto.c): \
	CPPFLAGS += -Iivshmem

$(eval $(call program,tochain-ivshmem-server,$(call objs,ivshmem/main.c) $(IVS_LIB)))
$(eval $(call unit_test,test_ivs_server,$(IVS_LIB)))
$(eval $(call unit_test,test_ivs_proto,$(IVS_LIB)))
