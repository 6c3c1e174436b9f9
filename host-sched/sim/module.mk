# host-sched/sim: tochain-sim, the simulator that drives the algorithm
# library at any scale: scenario parser, model, report and CLI (these do
# I/O, so they stay out of the library); main.c holds only main.
HS_SIM_SRCS := $(addprefix host-sched/sim/,hs_scn.c hs_sim.c hs_report.c hs_simcli.c)
HS_SIM_OBJS := $(call objs,$(HS_SIM_SRCS))
$(BUILD)/obj/host-sched/sim/%.o: CPPFLAGS += -Ihost-sched/lib
$(eval $(call program,tochain-sim,$(call objs,host-sched/sim/main.c) $(HS_SIM_OBJS) $(HS_LIB),-lm))

# Unit tests of the simulator's parser and model.
$(eval $(call unit_test,test_hs_scn,$(HS_SIM_OBJS) $(HS_LIB),-lm))
$(eval $(call unit_test,test_hs_sim,$(HS_SIM_OBJS) $(HS_LIB),-lm))
$(BUILD)/obj/tests/unit/test_hs_scn.o $(BUILD)/obj/tests/unit/test_hs_sim.o: CPPFLAGS += -Ihost-sched/lib -Ihost-sched/sim
