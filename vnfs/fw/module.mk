# vnfs/fw: the firewall VNF engine.  One rule file syntax (vnfs/fw/README.md),
# two halves: nftables in a TOE container's namespace (fw_nft), and the
# in-chain matcher on descriptors (fw_match).  Link with $(FW_LIB) $(FW_LDLIBS)
# and add -Ivnfs/fw to the CPPFLAGS of objects that include its headers.
FW_SRCS := vnfs/fw/fw_rules.c vnfs/fw/fw_match.c vnfs/fw/fw_nft.c vnfs/fw/fw_desc.c
FW_LIB := $(BUILD)/lib/libtochain-fw.a
FW_LDLIBS := $(shell pkg-config --libs libnftables 2>/dev/null || echo -lnftables)
LIBS += $(FW_LIB)
$(FW_LIB): $(call objs,$(FW_SRCS))

$(eval $(call test_prog,fw-apply,$(call objs,vnfs/fw/fw_apply_tool.c) $(FW_LIB),$(FW_LDLIBS)))
# The same tool installed for tochaind: `ip netns exec NS tochain-fw-apply
# apply FILE` puts a VM's firewall rules into its TOE's namespace.
$(eval $(call program,tochain-fw-apply,$(call objs,vnfs/fw/fw_apply_tool.c) $(FW_LIB),$(FW_LDLIBS)))
$(eval $(call bench_prog,fw-bench,$(call objs,bench/progs/fw_bench.c) $(FW_LIB),$(FW_LDLIBS)))
$(call objs,bench/progs/fw_bench.c): CPPFLAGS += -Ivnfs/fw

# libFuzzer target on the parser (make fuzz), built apart with clang.
FW_FUZZ := $(BUILD)/fuzz/bin/fw-fuzz
FUZZ_TARGETS += $(FW_FUZZ)
$(FW_FUZZ): tests/fuzz/fw_fuzz.c $(FW_SRCS) $(wildcard vnfs/fw/*.h)
	@mkdir -p $(@D)
	clang $(CPPFLAGS) -Ivnfs/fw -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined \
		-o $@ $(filter %.c,$^) $(FW_LDLIBS) -lpthread

FW_TESTS := test_fw_rules test_fw_match test_fw_nft test_fw_desc
$(foreach t,$(FW_TESTS),$(eval $(call unit_test,$(t),$(FW_LIB),$(FW_LDLIBS))))
$(foreach t,$(FW_TESTS),$(BUILD)/obj/tests/unit/$(t).o): CPPFLAGS += -Ivnfs/fw
