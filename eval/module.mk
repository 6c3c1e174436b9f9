# eval: the evaluation harness of issue 9 (docs/EVALUATION.md).  The
# scripts need no build; the IDS host of the TraditionalChain baseline is a
# small epoll TCP proxy around the project's IDS engine.  (This file is
# included before vnf-ids/module.mk: IDS_LDLIBS is referenced with $$ so
# that it is expanded when the recipe runs.)
$(call objs,eval/ev_ids_proxy.c): CPPFLAGS += -Ivnf-ids
$(eval $(call bench_prog,ev-ids-proxy,$(call objs,eval/ev_ids_proxy.c) $(BUILD)/lib/libtochain-ids.a,$$(IDS_LDLIBS)))
