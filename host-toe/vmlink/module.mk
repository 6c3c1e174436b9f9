# host-toe/vmlink: the host-side ivshmem server (QEMU's ivshmem server
# protocol) as a library, the tochain-ivshmem-server program, and the VM
# link (ivs_link: the TOE's attach handshake on behalf of a real guest's
# processes, doorbell relay) with its program tochain-vmlink.
IVS_SRCS := host-toe/vmlink/ivs_proto.c host-toe/vmlink/ivs_server.c host-toe/vmlink/ivs_link.c
IVS_LIB := $(BUILD)/lib/libtochain-ivshmem.a

LIBS += $(IVS_LIB)
$(IVS_LIB): $(call objs,$(IVS_SRCS))

$(call objs,host-toe/vmlink/main.c host-toe/vmlink/vmlink_main.c tests/unit/test_ivs_server.c \
	tests/unit/test_ivs_proto.c tests/unit/test_ivs_link.c): CPPFLAGS += -Ihost-toe/vmlink

$(eval $(call program,tochain-ivshmem-server,$(call objs,host-toe/vmlink/main.c) $(IVS_LIB)))
$(eval $(call program,tochain-vmlink,$(call objs,host-toe/vmlink/vmlink_main.c) $(IVS_LIB)))
$(eval $(call unit_test,test_ivs_server,$(IVS_LIB)))
$(eval $(call unit_test,test_ivs_proto,$(IVS_LIB)))
$(eval $(call unit_test,test_ivs_link,$(IVS_LIB) $(REGION_LIB)))
