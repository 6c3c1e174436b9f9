# vnf-ids: the IDS/IPS engine library (Snort 2.9 rule subset), its unit
# tests and its benchmark program.
IDS_SRCS := vnf-ids/ids_addr.c vnf-ids/ids_parse.c vnf-ids/ids_match.c \
	vnf-ids/ids_ruleset.c vnf-ids/ids_flow.c vnf-ids/ids_http.c
IDS_OBJS := $(call objs,$(IDS_SRCS))
IDS_CFLAGS := $(shell pkg-config --cflags libhs libpcre2-8 2>/dev/null)
IDS_LDLIBS := $(shell pkg-config --libs libhs libpcre2-8 2>/dev/null || echo -lhs -lpcre2-8) \
	-lhttp_parser -lstdc++ -lm

$(IDS_OBJS) $(call objs,vnf-ids/ids_bench.c): CPPFLAGS += $(IDS_CFLAGS)
$(BUILD)/obj/tests/unit/test_ids_%.o: CPPFLAGS += $(IDS_CFLAGS) -Ivnf-ids

LIBS += $(BUILD)/lib/libtochain-ids.a
$(BUILD)/lib/libtochain-ids.a: $(IDS_OBJS)

$(eval $(call unit_test,test_ids_parse,$(BUILD)/lib/libtochain-ids.a,$(IDS_LDLIBS)))
$(eval $(call unit_test,test_ids_match,$(BUILD)/lib/libtochain-ids.a,$(IDS_LDLIBS)))
$(eval $(call unit_test,test_ids_http,$(BUILD)/lib/libtochain-ids.a,$(IDS_LDLIBS)))
$(eval $(call bench_prog,ids-bench,$(call objs,vnf-ids/ids_bench.c) $(BUILD)/lib/libtochain-ids.a,$(IDS_LDLIBS)))

# libFuzzer target (clang, make fuzz): rule files and flow traffic.
IDS_FUZZ := $(BUILD)/fuzz/bin/ids-fuzz
FUZZ_TARGETS += $(IDS_FUZZ)
$(IDS_FUZZ): vnf-ids/ids_fuzz.c $(IDS_SRCS) $(wildcard vnf-ids/*.h)
	@mkdir -p $(@D)
	clang -D_GNU_SOURCE $(IDS_CFLAGS) -Ivnf-ids -std=gnu11 -g -O1 \
		-fsanitize=fuzzer,address,undefined -o $@ $(filter %.c,$^) \
		$(IDS_LDLIBS) -lpthread
