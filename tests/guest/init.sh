#!/bin/busybox sh
# /init of the test guest's initramfs (tests/guest/build-guest.sh puts it there).
# Loads tochain_ivshmem.ko and runs ivshmem-guest-test with the words of
# the kernel parameter tochain.cmd=A,B,C (commas for spaces), then powers
# off.  Lines starting with GUEST- are for the host test to wait on.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "GUEST-BOOT uptime=$(cut -d' ' -f1 /proc/uptime)"
cmd=$(sed -n 's/.*tochain\.cmd=\([^ ]*\).*/\1/p' /proc/cmdline | tr , ' ')
if insmod /lib/tochain_ivshmem.ko; then
	echo "GUEST-MODULE loaded"
else
	echo "FAIL insmod tochain_ivshmem.ko"
fi
rc=0
if [ -n "$cmd" ]; then
	/bin/ivshmem-guest-test $cmd
	rc=$?
fi
# unbinding (remove) after use must be clean too
if rmmod tochain_ivshmem; then echo "PASS rmmod"; else echo "FAIL rmmod"; rc=1; fi
dmesg | grep -E 'tochain|ivshmem|BUG:|WARNING:|Oops|Call Trace|RIP:|general protection' | sed 's/^/GUEST-DMESG /'
echo "GUEST-DONE rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
poweroff -f
