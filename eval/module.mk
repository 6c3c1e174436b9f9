# eval: the evaluation harness (docs/EVALUATION.md).  The scripts need no
# build; the IDS host of the TraditionalChain baseline is a small epoll TCP
# proxy around the project's IDS engine.
$(eval $(call bench_prog,ev-ids-proxy,$(call objs,eval/ev_ids_proxy.c) $(IDS_LIB),$(IDS_LDLIBS)))
# The open-loop HTTP load generator of bench/92_sla_real.sh.
$(eval $(call bench_prog,ev-load,$(call objs,eval/ev_load.c),))
