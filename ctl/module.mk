# ctl: the control protocol between sfc-ctl and tochaind (ctl_*).
CTL_LIB := $(BUILD)/lib/libtochain-ctl.a
LIBS += $(CTL_LIB)
$(CTL_LIB): $(call objs,ctl/ctl_proto.c)
$(call objs,ctl/ctl_proto.c): CPPFLAGS += -Ictl
