# vnf: the VNF runtime library (vnf_*, libtochain-vnf.a), the VNF kinds
# and command line (libtochain-vnfkind.a: fw, ids, waf, null adapters over
# the engines of vnf-fw/, vnf-ids/, vnf-waf/) and the tochain-vnf program;
# see vnf/README.md.  Runtime users link $(VNF_LIB) $(REGION_LIB); objects
# that include its headers need -Ivnf (and -Ichain: the flow table layout,
# header only).  vnf-*/ are included after this file, so their archives are
# named here by path and their link flags computed here.
VNF_SRCS := vnf/vnf_rt.c vnf/vnf_null.c
VNF_LIB := $(BUILD)/lib/libtochain-vnf.a
LIBS += $(VNF_LIB)
$(VNF_LIB): $(call objs,$(VNF_SRCS))
$(call objs,$(VNF_SRCS) vnf/main.c): CPPFLAGS += -Ivnf -Ichain

VNFK_SRCS := vnf/vnf_kind.c vnf/vnf_stream.c vnf/vnf_fw.c vnf/vnf_ids.c vnf/vnf_waf.c \
	vnf/vnf_mix.c vnf/vnf_cli.c vnf/vnf_agent.c
VNFK_LIB := $(BUILD)/lib/libtochain-vnfkind.a
LIBS += $(VNFK_LIB)
$(VNFK_LIB): $(call objs,$(VNFK_SRCS))
VNFK_CPPFLAGS := -Ivnf -Ichain -Ivnf-fw -Ivnf-ids -Ivnf-waf \
	$(shell pkg-config --cflags libhs libpcre2-8 modsecurity 2>/dev/null)
$(call objs,$(VNFK_SRCS) vnf/vnf_drive.c): CPPFLAGS += $(VNFK_CPPFLAGS)
VNFK_ENGINES := $(BUILD)/lib/libtochain-fw.a $(BUILD)/lib/libtochain-ids.a \
	$(BUILD)/lib/libtochain-waf.a
VNFK_LDLIBS := $(shell pkg-config --libs libnftables 2>/dev/null || echo -lnftables) \
	$(shell pkg-config --libs libhs libpcre2-8 2>/dev/null || echo -lhs -lpcre2-8) \
	$(shell pkg-config --libs modsecurity 2>/dev/null || echo -lmodsecurity) \
	-lhttp_parser -lstdc++ -lm
VNFK_ALL := $(VNFK_LIB) $(VNFK_ENGINES) $(VNF_LIB) $(BUILD)/lib/libtochain-region.a

$(eval $(call program,tochain-vnf,$(call objs,vnf/main.c) $(VNFK_ALL),$(VNFK_LDLIBS)))
$(eval $(call unit_test,test_vnf_rt,$(VNF_LIB) $(BUILD)/lib/libtochain-chain.a $(BUILD)/lib/libtochain-region.a))
$(BUILD)/obj/tests/unit/test_vnf_rt.o: CPPFLAGS += -Ivnf -Ichain
VNFK_TESTS := test_vnf_kind test_vnf_stream
$(foreach t,$(VNFK_TESTS),$(eval $(call unit_test,$(t),$(VNFK_ALL),$(VNFK_LDLIBS))))
$(foreach t,$(VNFK_TESTS),$(BUILD)/obj/tests/unit/$(t).o): CPPFLAGS += $(VNFK_CPPFLAGS)

# vnf-drive: integration scenarios of the fw/ids/waf kinds behind a real
# scheduler (tests/integration/42x_*), and the bench helper.
$(eval $(call test_prog,vnf-drive,$(call objs,vnf/vnf_drive.c chain/ch_harness.c) \
	$(VNFK_LIB) $(BUILD)/lib/libtochain-chain.a $(VNF_LIB) $(BUILD)/lib/libtochain-region.a,\
	$(shell pkg-config --libs liburcu-memb 2>/dev/null || echo -lurcu-memb -lurcu-common)))
