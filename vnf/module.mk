# vnf: the VNF runtime library (vnf_*, libtochain-vnf.a) and the
# tochain-vnf program (kind null); see vnf/README.md.  Link with
# $(VNF_LIB) $(REGION_LIB); objects that include its headers need -Ivnf
# (and -Ichain: the flow table layout, header only).
VNF_SRCS := vnf/vnf_rt.c vnf/vnf_null.c
VNF_LIB := $(BUILD)/lib/libtochain-vnf.a
LIBS += $(VNF_LIB)
$(VNF_LIB): $(call objs,$(VNF_SRCS))
$(call objs,$(VNF_SRCS) vnf/main.c): CPPFLAGS += -Ivnf -Ichain

$(eval $(call program,tochain-vnf,$(call objs,vnf/main.c) $(VNF_LIB) $(BUILD)/lib/libtochain-region.a))
$(eval $(call unit_test,test_vnf_rt,$(VNF_LIB) $(BUILD)/lib/libtochain-chain.a $(BUILD)/lib/libtochain-region.a))
$(BUILD)/obj/tests/unit/test_vnf_rt.o: CPPFLAGS += -Ivnf -Ichain
