# guest-drivers: tochain_ivshmem.ko, the guest kernel driver of the
# ivshmem region, built against Debian's kernel headers (fetched by
# tests/guest/fetch-kernel.sh into a cache, never installed over the host's kernel).
# The sources are copied to $(BUILD)/guest-drivers so kbuild's output
# stays out of the tree.  GD_KDIR=... builds against another kernel tree
# instead (a full build tree or a complete headers install).

# plain "make", not $(MAKE): "make -n" must not run the kernel build
GD_KMAKE := make
GD_KO := $(BUILD)/guest-drivers/tochain_ivshmem.ko
GD_KSRCS := $(addprefix guest-drivers/,tivs.h tivs_core.c tivs_name.c tivs_file.c tivs_pci.c)
GD_SRCS := $(GD_KSRCS) include/tochain/tochain_ivshmem_uapi.h \
	guest-drivers/Kbuild include/tochain/region_layout.h

all: $(GD_KO)

$(GD_KO): $(GD_SRCS) tests/guest/fetch-kernel.sh
	@mkdir -p $(@D)
	cp guest-drivers/Kbuild $(GD_KSRCS) $(@D)/
	set -e; \
	if [ -n "$(GD_KDIR)" ]; then kdir="$(GD_KDIR)"; kmk=""; else \
		root=$$(tests/guest/fetch-kernel.sh); \
		kdir=$$(ls -d $$root/usr/src/linux-headers-*-amd64 | head -n 1); \
		kmk="-f $$(ls -d $$root/usr/src/linux-headers-*-common | head -n 1)/Makefile"; \
	fi; \
	$(GD_KMAKE) -C $$kdir $$kmk M=$(abspath $(@D)) \
		TOCHAIN_REGION_INC=$(TOP)/include KCFLAGS=-Werror modules
