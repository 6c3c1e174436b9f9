# vm: the test guest of the guest driver tests.  ivshmem-guest-test is a
# static program for the guest's initramfs (no sanitizers: it runs in a
# bare busybox userland); vm-host-tool is the host side.  The kernel and
# initramfs are put together by tests/guest/build-guest.sh, which the tests call
# (or: make vm-guest).
VM_GUEST_TEST := $(BUILD)/vm/ivshmem-guest-test

all: $(VM_GUEST_TEST)

$(VM_GUEST_TEST): tests/guest/vm_guest_test.c tests/guest/vm_test_layout.h \
		include/tochain/tochain_ivshmem_uapi.h include/tochain/region_layout.h
	@mkdir -p $(@D)
	gcc -static -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow \
		-Wstrict-prototypes -Wmissing-prototypes -D_GNU_SOURCE \
		-Iinclude -Itests/guest -pthread -o $@ $<

$(call objs,tests/guest/vm_host_tool.c): CPPFLAGS += -Ihost-toe/vmlink -Itests/guest
$(eval $(call test_prog,vm-host-tool,$(call objs,tests/guest/vm_host_tool.c) $(BUILD)/lib/libtochain-ivshmem.a))

.PHONY: vm-guest
vm-guest: $(BUILD)/guest-drivers/tochain_ivshmem.ko $(VM_GUEST_TEST)
	tests/guest/build-guest.sh $(BUILD)

# grant-scribble: a hostile VNF guest writing over its granted devices
# (test 714 appends it to the VNF guest's initramfs).
GRANT_SCRIBBLE := $(BUILD)/vm/grant-scribble
all: $(GRANT_SCRIBBLE)
$(GRANT_SCRIBBLE): tests/guest/grant_scribble.c include/tochain/tochain_ivshmem_uapi.h
	@mkdir -p $(@D)
	gcc -static -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow \
		-Wstrict-prototypes -Wmissing-prototypes -D_GNU_SOURCE \
		-Iinclude -o $@ $<
