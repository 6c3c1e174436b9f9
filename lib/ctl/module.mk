# lib/ctl: the control protocol between sfc-ctl and tochaind, tochain-toe
# and tochain-sched (ctl_*, include/tochain/ctl_proto.h).
CTL_LIB := $(BUILD)/lib/libtochain-ctl.a
LIBS += $(CTL_LIB)
$(CTL_LIB): $(call objs,lib/ctl/ctl_proto.c lib/ctl/ctl_b64.c)
$(eval $(call unit_test,test_ctl_b64,$(CTL_LIB)))
