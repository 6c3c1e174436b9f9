# ivshmem: the host-side ivshmem server (QEMU's ivshmem server protocol)
# as a library, the tochain-ivshmem-server program, and the VM link
# (ivs_link: the TOE's attach handshake on behalf of a real guest's
# processes, doorbell relay) with its program tochain-vmlink.
IVS_SRCS := ivshmem/ivs_proto.c ivshmem/ivs_server.c ivshmem/ivs_link.c
IVS_LIB := $(BUILD)/lib/libtochain-ivshmem.a

LIBS += $(IVS_LIB)
$(IVS_LIB): $(call objs,$(IVS_SRCS))

$(call objs,ivshmem/main.c ivshmem/vmlink_main.c tests/unit/test_ivs_server.c \
	tests/unit/test_ivs_proto.c tests/unit/test_ivs_link.c): CPPFLAGS += -Iivshmem
$(call objs,ivshmem/ivs_link.c tests/unit/test_ivs_link.c): CPPFLAGS += -Isockrpc

$(eval $(call program,tochain-ivshmem-server,$(call objs,ivshmem/main.c) $(IVS_LIB)))
$(eval $(call program,tochain-vmlink,$(call objs,ivshmem/vmlink_main.c) $(IVS_LIB)))
$(eval $(call unit_test,test_ivs_server,$(IVS_LIB)))
$(eval $(call unit_test,test_ivs_proto,$(IVS_LIB)))
$(eval $(call unit_test,test_ivs_link,$(IVS_LIB) $(BUILD)/lib/libtochain-region.a))
