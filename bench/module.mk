# bench: benchmark scripts (NN_*.sh, run by make bench) and, in progs/,
# the benchmark programs; each program is declared by the module.mk of
# the module it measures.  The engines' and the chain's private headers:
$(BUILD)/obj/bench/progs/%.o: CPPFLAGS += -Ivnfs/runtime -Ihost-toe/chain -Itests/progs
