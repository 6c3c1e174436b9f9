# lib/util: helpers written once for every part (tu_*,
# include/tochain/util.h): clocks and FNV-1a inline, process recognition
# and stopping, the data path's CPU policy, and an epoll sleep bounded
# in nanoseconds, in libtochain-util.a.
UTIL_LIB := $(BUILD)/lib/libtochain-util.a
LIBS += $(UTIL_LIB)
$(UTIL_LIB): $(call objs,lib/util/tu_proc.c lib/util/tu_dir.c lib/util/tu_sched.c lib/util/tu_epoll.c)
$(eval $(call unit_test,test_tu_util,$(UTIL_LIB)))
