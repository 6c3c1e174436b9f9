# tochaind: the host daemon (td_*): VMs, VNFs, chains, control socket, state.
# td_libvirt.c is its libvirt backend (libvirt-dev, see deps.txt); SLA
# admission uses host-sched's algorithm library (hs_admit).
TOCHAIND_SRCS := $(filter-out tochaind/td_main.c,$(wildcard tochaind/*.c))
TOCHAIND_LIB := $(BUILD)/lib/libtochain-daemon.a
TOCHAIND_HS := $(BUILD)/lib/libtochain-sched.a
TOCHAIND_LDLIBS := -ljansson -lm $(shell pkg-config --libs libvirt libvirt-qemu 2>/dev/null || echo -lvirt-qemu -lvirt)
LIBS += $(TOCHAIND_LIB)
TOCHAIND_DEPS := $(TOCHAIND_LIB) $(UTIL_LIB) $(CTL_LIB) $(CGROUP_LIB) $(TOCHAIND_HS) $(REGION_LIB)
$(TOCHAIND_LIB): $(call objs,$(TOCHAIND_SRCS))
$(call objs,$(wildcard tochaind/*.c)): CPPFLAGS += -Itochaind -Ihost-sched/lib
$(eval $(call program,tochaind,$(call objs,tochaind/td_main.c) $(TOCHAIND_DEPS),$(TOCHAIND_LDLIBS)))
$(BUILD)/obj/tests/unit/test_td_state.o: CPPFLAGS += -Itochaind
$(eval $(call unit_test,test_td_state,$(TOCHAIND_DEPS),$(TOCHAIND_LDLIBS)))
$(BUILD)/obj/tests/unit/test_td_libvirt.o: CPPFLAGS += -Itochaind
$(eval $(call unit_test,test_td_libvirt,$(TOCHAIND_DEPS),$(TOCHAIND_LDLIBS)))
$(BUILD)/obj/tests/unit/test_td_apply.o: CPPFLAGS += -Itochaind -Ihost-sched/lib
$(eval $(call unit_test,test_td_apply,$(TOCHAIND_DEPS),$(TOCHAIND_LDLIBS)))

# libFuzzer target: the state parser on arbitrary text.
FUZZ_TARGETS += $(BUILD)/fuzz/fuzz_td_state
$(BUILD)/fuzz/fuzz_td_state: tests/fuzz/fuzz_td_state.c tochaind/td_state.c tochaind/td_state.h tochaind/td_guest.c tochaind/td_guest.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Itochaind -o $@ tests/fuzz/fuzz_td_state.c tochaind/td_state.c tochaind/td_guest.c -ljansson
$(BUILD)/obj/tests/unit/test_td_grant.o: CPPFLAGS += -Itochaind
$(eval $(call unit_test,test_td_grant,$(TOCHAIND_DEPS),$(TOCHAIND_LDLIBS)))
$(BUILD)/obj/tests/unit/test_td_backoff.o: CPPFLAGS += -Itochaind
$(eval $(call unit_test,test_td_backoff,$(TOCHAIND_DEPS),$(TOCHAIND_LDLIBS)))
$(BUILD)/obj/tests/unit/test_td_metrics.o: CPPFLAGS += -Itochaind
$(eval $(call unit_test,test_td_metrics,$(TOCHAIND_DEPS),$(TOCHAIND_LDLIBS)))
$(BUILD)/obj/tests/unit/test_td_guest.o: CPPFLAGS += -Itochaind
$(eval $(call unit_test,test_td_guest,$(TOCHAIND_DEPS),$(TOCHAIND_LDLIBS)))
$(BUILD)/obj/tests/unit/test_td_libvirt_ro.o: CPPFLAGS += -Itochaind
$(eval $(call unit_test,test_td_libvirt_ro,$(TOCHAIND_DEPS),$(TOCHAIND_LDLIBS)))
$(BUILD)/obj/tests/unit/test_td_vm.o: CPPFLAGS += -Itochaind
$(eval $(call unit_test,test_td_vm,$(TOCHAIND_DEPS),$(TOCHAIND_LDLIBS)))
