# guest-lib: the guest's socket runtime libtochain-preload.so (gl_*) and
# tochain-run.  The shared library is compiled on its own (never with the
# sanitizers: it is loaded into programs that are not) and exports only
# the interposed libc symbols (guest-lib/gl.map).
GL_SRCS := guest-lib/gl_real.c guest-lib/gl_user.c guest-lib/gl_vm.c guest-lib/gl_wake.c guest-lib/gl_rt.c \
	guest-lib/gl_fd.c guest-lib/gl_wait.c guest-lib/gl_sock.c guest-lib/gl_claim.c \
	guest-lib/gl_chan.c guest-lib/gl_send.c guest-lib/gl_recv.c guest-lib/gl_ctl.c \
	guest-lib/gl_poll.c guest-lib/gl_epoll.c guest-lib/gl_fork.c guest-lib/gl_exec.c \
	guest-lib/gl_api.c guest-lib/gl_api_wait.c guest-lib/gl_dns.c guest-lib/gl_resolv.c \
	guest-lib/gl_revive.c
GL_SO := $(BUILD)/lib/libtochain-preload.so
GL_SO_FLAGS := -std=gnu11 -O2 -g -fPIC -shared -Wall -Wextra -Werror -Wshadow \
	-Wstrict-prototypes -Wmissing-prototypes -Wno-missing-field-initializers \
	-fno-strict-aliasing -D_GNU_SOURCE -Iinclude -Iguest-lib
LIBS += $(GL_SO)
$(GL_SO): $(GL_SRCS) $(REGION_SRCS) $(SRPC_SRCS) guest-lib/gl.map $(wildcard guest-lib/*.h) \
		$(wildcard include/tochain/*.h)
	@mkdir -p $(@D)
	$(CC) $(GL_SO_FLAGS) -Wl,--version-script=guest-lib/gl.map -Wl,-z,defs -o $@ \
		$(GL_SRCS) $(REGION_SRCS) $(SRPC_SRCS) -ldl -lpthread

# tochain-run, with the trap path's supervisor (gl_trap*.c), which runs
# with the runtime preloaded: never built with the sanitizers either.
GL_RUN_SRCS := guest-lib/run.c guest-lib/gl_trap_run.c guest-lib/gl_trap_filter.c \
	guest-lib/gl_trap.c guest-lib/gl_trap_relay.c
$(call objs,$(GL_RUN_SRCS)): CPPFLAGS += -Iguest-lib
$(call objs,$(GL_RUN_SRCS)): CFLAGS := $(filter-out -fsanitize=%,$(CFLAGS))
$(BUILD)/bin/tochain-run: LDFLAGS := $(filter-out -fsanitize=%,$(LDFLAGS))
$(eval $(call program,tochain-run,$(call objs,$(GL_RUN_SRCS)) | $(GL_SO),-lpthread))

# The DNS message code is pure: its unit test links it on its own (with
# the sanitizers in SAN builds), hostile answers included.
$(eval $(call unit_test,test_gl_dns,$(call objs,guest-lib/gl_dns.c)))
$(BUILD)/obj/tests/unit/test_gl_dns.o: CPPFLAGS += -Iguest-lib

# The copies of the caller's memory, linked on their own: EFAULT at the
# main heap's plain-copy path and its edges.
$(eval $(call unit_test,test_gl_user,$(call objs,guest-lib/gl_user.c)))
$(BUILD)/obj/tests/unit/test_gl_user.o: CPPFLAGS += -Iguest-lib

# Conformance program (tests/conformance/): the same checks on kernel
# sockets and under the runtime, compared by tests/integration/101_*.
# Built without the sanitizers, as the shared library: an ASan program
# refuses to start with a non-ASan library preloaded before it.
TEST_PROGS += $(BUILD)/tests/bin/conform
$(BUILD)/tests/bin/conform: tests/conformance/conform.c tests/conformance/conform_stream.c \
		tests/conformance/conform_sockets.c tests/conformance/conform_errors.c \
		tests/conformance/conform.h
	@mkdir -p $(@D)
	$(CC) $(filter-out -fsanitize=% -MMD -MP,$(CFLAGS)) -D_GNU_SOURCE -o $@ $(filter %.c,$^) -lpthread

# Wake-ups of a multithreaded guest (tests/integration/108_*): the guest
# side runs under tochain-run, the peer on kernel sockets; built as conform.
TEST_PROGS += $(BUILD)/tests/bin/gl-wakeups
$(BUILD)/tests/bin/gl-wakeups: tests/conformance/wakeups.c
	@mkdir -p $(@D)
	$(CC) $(filter-out -fsanitize=% -MMD -MP,$(CFLAGS)) -D_GNU_SOURCE -o $@ $< -lpthread

# Sleeping and waking the threads of a process (gl_wait.c), linked with
# what it sits on: an in-memory channel stands in for the TOE's.
GL_WAIT_TEST_SRCS := guest-lib/gl_wait.c guest-lib/gl_wake.c guest-lib/gl_vm.c guest-lib/gl_real.c \
	guest-lib/gl_rt.c
$(eval $(call unit_test,test_gl_wait,$(call objs,$(GL_WAIT_TEST_SRCS)) $(REGION_LIB) $(UTIL_LIB),-ldl -lpthread))
$(BUILD)/obj/tests/unit/test_gl_wait.o: CPPFLAGS += -Iguest-lib
