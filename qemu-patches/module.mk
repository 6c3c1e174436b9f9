# qemu-patches: a QEMU patch series letting the host revoke and re-grant an
# ivshmem device's shared memory (QOM property "revoked"), and the build of
# the patched qemu-system-x86_64 from Debian's source package.
#
#   make qemu               build it (cached in /var/cache/tochain/qemu/<key>/;
#                           a re-run with the same source version and series
#                           takes a fraction of a second)
#   make qemu-check-series  each patch on its own: build, ivshmem qtest,
#                           QEMU's checkpatch.pl
#
# tests/integration/800_qemu_revoke.sh runs build-qemu.sh too, so
# `make check` builds it when it is absent.  801_libvirt_revoke.sh drives
# tochaind's grant calls (td_libvirt_grant & co.) through lv_grant.
.PHONY: qemu qemu-check-series
qemu:
	qemu-patches/build-qemu.sh

qemu-check-series:
	qemu-patches/check-series.sh

# Only td_libvirt.o of tochaind: the rest of the daemon is not needed here.
$(BUILD)/obj/qemu-patches/tests/lv_grant.o: CPPFLAGS += -Itochaind -Icgroup -Ictl
$(eval $(call test_prog,lv_grant,$(call objs,qemu-patches/tests/lv_grant.c) \
	$(BUILD)/obj/tochaind/td_libvirt.o,-ljansson \
	$(shell pkg-config --libs libvirt libvirt-qemu 2>/dev/null || echo -lvirt-qemu -lvirt)))
