# vnfs/ids: the IDS/IPS engine library (Snort 2.9 rule subset), its unit
# tests and its benchmark program.
IDS_SRCS := vnfs/ids/ids_addr.c vnfs/ids/ids_parse.c vnfs/ids/ids_parse_rule.c \
	vnfs/ids/ids_parse_content.c vnfs/ids/ids_parse_base.c vnfs/ids/ids_match.c \
	vnfs/ids/ids_ruleset.c vnfs/ids/ids_flow.c vnfs/ids/ids_http.c vnfs/ids/ids_trigger.c vnfs/ids/ids_cache.c \
	vnfs/ids/ids_parse_bytes.c vnfs/ids/ids_bytes.c vnfs/ids/ids_dfilter.c \
	$(HTTP_HEAD_SRCS)
IDS_OBJS := $(call objs,$(IDS_SRCS))
IDS_LIB := $(BUILD)/lib/libtochain-ids.a
IDS_CFLAGS := $(shell pkg-config --cflags libhs libpcre2-8 2>/dev/null) $(HTTP_HEAD_CPPFLAGS)
IDS_LDLIBS := $(shell pkg-config --libs libhs libpcre2-8 2>/dev/null || echo -lhs -lpcre2-8) \
	-lhttp_parser -lz -lstdc++ -lm

$(IDS_OBJS) $(call objs,bench/progs/ids_bench.c eval/ev_ids_proxy.c): CPPFLAGS += $(IDS_CFLAGS) -Ivnfs/ids
$(BUILD)/obj/tests/unit/test_ids_%.o: CPPFLAGS += $(IDS_CFLAGS) -Ivnfs/ids

LIBS += $(IDS_LIB)
$(IDS_LIB): $(IDS_OBJS)

$(eval $(call unit_test,test_ids_parse,$(IDS_LIB),$(IDS_LDLIBS)))
$(eval $(call unit_test,test_ids_match,$(IDS_LIB),$(IDS_LDLIBS)))
$(eval $(call unit_test,test_ids_http,$(IDS_LIB),$(IDS_LDLIBS)))
$(eval $(call unit_test,test_ids_cache,$(IDS_LIB),$(IDS_LDLIBS)))
$(eval $(call unit_test,test_ids_dfilter,$(IDS_LIB),$(IDS_LDLIBS)))
$(eval $(call bench_prog,ids-bench,$(call objs,bench/progs/ids_bench.c) $(IDS_LIB),$(IDS_LDLIBS)))

# libFuzzer target (clang, make fuzz): rule files and flow traffic.
IDS_FUZZ := $(BUILD)/fuzz/bin/ids-fuzz
FUZZ_TARGETS += $(IDS_FUZZ)
$(IDS_FUZZ): tests/fuzz/ids_fuzz.c $(IDS_SRCS) $(wildcard vnfs/ids/*.h vnfs/http/*.h)
	@mkdir -p $(@D)
	clang -D_GNU_SOURCE $(IDS_CFLAGS) -Ivnfs/ids -std=gnu11 -g -O1 \
		-fsanitize=fuzzer,address,undefined -o $@ $(filter %.c,$^) \
		$(IDS_LDLIBS) -lpthread
