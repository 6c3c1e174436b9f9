# vnfs/waf: the WAF engine (--kind waf) as a library: OWASP CRS on
# libmodsecurity v3, HTTP/1.x parsed from TCP streams with http_parser
# (vnfs/waf/README.md).  Link with $(WAF_LIB) $(WAF_LDLIBS) and add -Ivnfs/waf
# to the CPPFLAGS of objects that include waf_engine.h.
WAF_SRCS := vnfs/waf/waf_engine.c vnfs/waf/waf_flow.c vnfs/waf/waf_config.c \
	vnfs/waf/waf_answer.c \
	$(HTTP_HEAD_SRCS)
WAF_LIB := $(BUILD)/lib/libtochain-waf.a
WAF_LDLIBS := $(shell pkg-config --libs modsecurity 2>/dev/null || echo -lmodsecurity) -lhttp_parser
WAF_GEN := $(BUILD)/gen/vnfs/waf/waf_conf_gen.h
WAF_CONF := vnfs/waf/conf/waf-base.conf vnfs/waf/conf/crs-setup.conf
LIBS += $(WAF_LIB)
$(WAF_LIB): $(call objs,$(WAF_SRCS))
$(call objs,$(WAF_SRCS)): CPPFLAGS += -I$(BUILD)/gen/vnfs/waf $(HTTP_HEAD_CPPFLAGS) $(shell pkg-config --cflags modsecurity 2>/dev/null)
$(call objs,vnfs/waf/waf_engine.c): $(WAF_GEN)

# The configuration templates become C strings inside the library, so an
# engine needs no file of ours at run time.
$(WAF_GEN): $(WAF_CONF) vnfs/waf/module.mk
	@mkdir -p $(@D)
	{ echo '/* Generated from vnfs/waf/conf by vnfs/waf/module.mk. */'; \
	  echo 'static const char waf_conf_base[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' vnfs/waf/conf/waf-base.conf; \
	  echo ';'; \
	  echo 'static const char waf_conf_crs_setup[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' vnfs/waf/conf/crs-setup.conf; \
	  echo ';'; } > $@.tmp && mv $@.tmp $@

WAF_TESTS := test_waf_http test_waf_engine test_waf_config
$(foreach t,$(WAF_TESTS),$(eval $(call unit_test,$(t),$(WAF_LIB),$(WAF_LDLIBS))))
$(foreach t,$(WAF_TESTS),$(BUILD)/obj/tests/unit/$(t).o): CPPFLAGS += -Ivnfs/waf

$(eval $(call bench_prog,waf-bench,$(call objs,bench/progs/waf_bench.c) $(WAF_LIB),$(WAF_LDLIBS)))
$(call objs,bench/progs/waf_bench.c): CPPFLAGS += -Ivnfs/waf

# libFuzzer target on the stream parser and flow state (make fuzz), built
# apart with clang; its small rule set keeps executions fast.
WAF_FUZZ := $(BUILD)/fuzz/bin/waf-fuzz
FUZZ_TARGETS += $(WAF_FUZZ)
$(WAF_FUZZ): tests/fuzz/waf_fuzz.c $(WAF_SRCS) $(WAF_GEN) $(wildcard vnfs/waf/*.h vnfs/http/*.h)
	@mkdir -p $(@D)
	clang $(CPPFLAGS) -Ivnfs/waf $(HTTP_HEAD_CPPFLAGS) -I$(BUILD)/gen/vnfs/waf -std=gnu11 -g -O1 \
		-fsanitize=fuzzer,address,undefined -o $@ $(filter %.c,$^) \
		$(WAF_LDLIBS) -lpthread
