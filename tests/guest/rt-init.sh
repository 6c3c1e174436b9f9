#!/bin/busybox sh
# /init of the runtime test guest (tests/guest/build-guest.sh --runtime): loads
# tochain_ivshmem.ko, waits for the region's node /dev/tochain/NAME (NAME
# from the kernel parameter tochain.cmd=NAME), then runs /guest.sh, which
# the test appends to the initramfs, and powers off when it returns.
# Lines starting with GUEST- are for the host test to wait on.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
ip link set lo up 2>/dev/null
export PATH=/usr/bin:/bin LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib
echo "GUEST-BOOT uptime=$(cut -d' ' -f1 /proc/uptime)"
name=$(sed -n 's/.*tochain\.cmd=\([^ ]*\).*/\1/p' /proc/cmdline)
rc=0
if insmod /lib/tochain_ivshmem.ko; then
	echo "GUEST-MODULE loaded"
else
	echo "FAIL insmod tochain_ivshmem.ko"
	rc=1
fi
i=0
while [ -n "$name" ] && [ ! -e "/dev/tochain/$name" ] && [ $i -lt 200 ]; do
	sleep 0.1
	i=$((i + 1))
done
if [ -n "$name" ] && [ -e "/dev/tochain/$name" ]; then
	echo "GUEST-REGION /dev/tochain/$name uptime=$(cut -d' ' -f1 /proc/uptime)"
	if [ -x /guest.sh ]; then
		/guest.sh "/dev/tochain/$name"
		rc=$?
	fi
else
	echo "FAIL no /dev/tochain/$name"
	rc=1
fi
dmesg | grep -E 'tochain|ivshmem|BUG:|WARNING:|Oops|Call Trace|RIP:|general protection' | sed 's/^/GUEST-DMESG /'
echo "GUEST-DONE rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
poweroff -f
