# vnf-fw: the firewall VNF engine.  One rule file syntax (vnf-fw/README.md),
# two halves: nftables in a TOE container's namespace (fw_nft), and the
# in-chain matcher on descriptors (fw_match).  Link with $(FW_LIB) $(FW_LDLIBS)
# and add -Ivnf-fw to the CPPFLAGS of objects that include its headers.
FW_SRCS := vnf-fw/fw_rules.c vnf-fw/fw_match.c vnf-fw/fw_nft.c vnf-fw/fw_desc.c
FW_LIB := $(BUILD)/lib/libtochain-fw.a
FW_LDLIBS := $(shell pkg-config --libs libnftables 2>/dev/null || echo -lnftables)
LIBS += $(FW_LIB)
$(FW_LIB): $(call objs,$(FW_SRCS))

$(eval $(call test_prog,fw-apply,$(call objs,vnf-fw/fw_apply_tool.c) $(FW_LIB),$(FW_LDLIBS)))
# The same tool installed for tochaind: `ip netns exec NS tochain-fw-apply
# apply FILE` puts a VM's firewall rules into its TOE's namespace.
$(eval $(call program,tochain-fw-apply,$(call objs,vnf-fw/fw_apply_tool.c) $(FW_LIB),$(FW_LDLIBS)))
$(eval $(call bench_prog,fw-bench,$(call objs,vnf-fw/fw_bench.c) $(FW_LIB),$(FW_LDLIBS)))

# libFuzzer target on the parser (make fuzz), built apart with clang.
FW_FUZZ := $(BUILD)/fuzz/bin/fw-fuzz
FUZZ_TARGETS += $(FW_FUZZ)
$(FW_FUZZ): vnf-fw/fw_fuzz.c $(FW_SRCS) $(wildcard vnf-fw/*.h)
	@mkdir -p $(@D)
	clang $(CPPFLAGS) -Ivnf-fw -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined \
		-o $@ $(filter %.c,$^) $(FW_LDLIBS) -lpthread

FW_TESTS := test_fw_rules test_fw_match test_fw_nft test_fw_desc
$(foreach t,$(FW_TESTS),$(eval $(call unit_test,$(t),$(FW_LIB),$(FW_LDLIBS))))
$(foreach t,$(FW_TESTS),$(BUILD)/obj/tests/unit/$(t).o): CPPFLAGS += -Ivnf-fw
