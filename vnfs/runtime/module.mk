# vnfs/runtime: the VNF runtime library (vnf_*, libtochain-vnf.a: service
# threads, the null kind), the VNF kinds and command line
# (libtochain-vnfkind.a: the kind table, the stream reassembly and the
# stream judge the ids and waf kinds share, the agent, and the fw, ids,
# waf adapters that live with their engines in vnfs/fw, vnfs/ids,
# vnfs/waf) and the tochain-vnf program; see
# vnfs/runtime/README.md.  Runtime users link $(VNF_LIB) $(REGION_LIB) and
# add -Ivnfs/runtime.  This file is included after the kinds' module.mk.
VNF_SRCS := vnfs/runtime/vnf_rt.c vnfs/runtime/vnf_early.c vnfs/runtime/vnf_null.c
VNF_LIB := $(BUILD)/lib/libtochain-vnf.a
LIBS += $(VNF_LIB)
$(VNF_LIB): $(call objs,$(VNF_SRCS))

VNFK_SRCS := vnfs/runtime/vnf_kind.c vnfs/runtime/vnf_check.c vnfs/runtime/vnf_stream.c vnfs/runtime/vnf_sjudge.c \
	vnfs/runtime/vnf_mix.c vnfs/runtime/vnf_serve.c vnfs/runtime/vnf_cli.c vnfs/runtime/vnf_agent.c \
	vnfs/fw/fw_vnf.c vnfs/ids/ids_vnf.c vnfs/waf/waf_vnf.c
VNFK_LIB := $(BUILD)/lib/libtochain-vnfkind.a
LIBS += $(VNFK_LIB)
$(VNFK_LIB): $(call objs,$(VNFK_SRCS))
VNFK_CPPFLAGS := -Ivnfs/runtime -Ivnfs/fw -Ivnfs/ids -Ivnfs/waf \
	$(shell pkg-config --cflags libhs libpcre2-8 modsecurity 2>/dev/null)
$(BUILD)/obj/vnfs/runtime/%.o: CPPFLAGS += $(VNFK_CPPFLAGS)
$(call objs,$(VNFK_SRCS) tests/progs/vnf_drive.c): CPPFLAGS += $(VNFK_CPPFLAGS)
VNFK_ENGINES := $(FW_LIB) $(IDS_LIB) $(WAF_LIB)
VNFK_LDLIBS := $(FW_LDLIBS) $(IDS_LDLIBS) $(WAF_LDLIBS)
VNFK_ALL := $(VNFK_LIB) $(VNFK_ENGINES) $(VNF_LIB) $(REGION_LIB) $(UTIL_LIB)

$(eval $(call program,tochain-vnf,$(call objs,vnfs/runtime/main.c) $(VNFK_ALL),$(VNFK_LDLIBS)))
$(eval $(call unit_test,test_vnf_rt,$(VNF_LIB) $(CH_LIB) $(REGION_LIB)))
$(BUILD)/obj/tests/unit/test_vnf_rt.o: CPPFLAGS += -Ivnfs/runtime
VNFK_TESTS := test_vnf_kind test_vnf_stream test_vnf_check
$(foreach t,$(VNFK_TESTS),$(eval $(call unit_test,$(t),$(VNFK_ALL),$(VNFK_LDLIBS))))
$(foreach t,$(VNFK_TESTS),$(BUILD)/obj/tests/unit/$(t).o): CPPFLAGS += $(VNFK_CPPFLAGS)

# vnf-drive: integration scenarios of the fw/ids/waf kinds behind a real
# packet scheduler (tests/integration/42x_*), and the bench helper.
$(eval $(call test_prog,vnf-drive,$(call objs,tests/progs/vnf_drive.c tests/progs/ch_harness.c) \
	$(VNFK_LIB) $(CH_LIB) $(VNF_LIB) $(REGION_LIB) $(UTIL_LIB),$(CH_URCU_LIBS)))
$(call objs,tests/progs/vnf_drive.c): CPPFLAGS += -Ihost-toe/chain -Itests/progs
