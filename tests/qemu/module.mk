# tests/qemu: the patched QEMU's own checks (qtest probes, check-revoke.py,
# run by qemu-patches/check-series.sh and test 800) and lv_grant, which
# drives tochaind's grant calls (td_libvirt_grant & co.) for test 801.
# Only td_libvirt.o and td_libvirt_ro.o of tochaind: the rest of the daemon is not needed here.
$(BUILD)/obj/tests/qemu/lv_grant.o: CPPFLAGS += -Itochaind
$(eval $(call test_prog,lv_grant,$(call objs,tests/qemu/lv_grant.c) \
	$(BUILD)/obj/tochaind/td_libvirt.o $(BUILD)/obj/tochaind/td_libvirt_ro.o,-ljansson \
	$(shell pkg-config --libs libvirt libvirt-qemu 2>/dev/null || echo -lvirt-qemu -lvirt)))
