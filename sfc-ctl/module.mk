# sfc-ctl: the operator's CLI (sc_*), a client of tochaind's control protocol.
SFCCTL_SRCS := $(filter-out sfc-ctl/sc_main.c,$(wildcard sfc-ctl/*.c))
$(call objs,$(wildcard sfc-ctl/*.c)): CPPFLAGS += -Isfc-ctl
$(eval $(call program,sfc-ctl,$(call objs,$(wildcard sfc-ctl/*.c)) $(CTL_LIB),-ljansson))
# the topology file parser
$(BUILD)/obj/tests/unit/test_sc_topo.o: CPPFLAGS += -Isfc-ctl
$(eval $(call unit_test,test_sc_topo,$(call objs,sfc-ctl/sc_topo.c),-ljansson))
