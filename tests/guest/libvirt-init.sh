#!/bin/busybox sh
# /init of the libvirt test guest: tests/guest/libvirt-domain.sh appends it to the
# test guest's initramfs (a second cpio archive, whose /init replaces the
# first one's).  Kernel parameter tochain.region=NAME: the guest waits
# for a hot-added ivshmem-plain device (1af4:1110), reads its region
# header through /dev/mem before any driver owns the BAR (busybox has no
# mmap of a char device), then loads tochain_ivshmem.ko and waits for
# /dev/tochain/NAME.  It reads but never writes the region: the TOE owns
# it.  One "PASS what" / "FAIL what: why" line per check; lines starting
# with GUEST- are for the host test.  Stays up until the host powers it
# off (the device is unplugged by the host while the guest runs).
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "GUEST-BOOT uptime=$(cut -d' ' -f1 /proc/uptime)"
name=$(sed -n 's/.*tochain\.region=\([^ ]*\).*/\1/p' /proc/cmdline)

# "TCHREGN1" read as a little-endian u64 (region_layout.h TCR_MAGIC)
magic=0x314E474552484354

find_dev() {
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor")" = 0x1af4 ] && [ "$(cat "$d/device")" = 0x1110 ] &&
			{ echo "$d"; return 0; }
	done
	return 1
}

# u32 words at BAR2 + 40 (tcr_header.name, 32 bytes) as text
read_name() {
	local bar=$1 i w s=
	for i in 0 1 2 3 4 5 6 7; do
		w=$(devmem $(( bar + 40 + 4 * i )) 32) || return 1
		w=$(( w ))
		for b in 0 8 16 24; do
			c=$(( (w >> b) & 255 ))
			[ $c -eq 0 ] && { echo "$s"; return 0; }
			s=$s$(printf "\\$(printf %03o $c)")
		done
	done
	echo "$s"
}

echo "GUEST-WAIT-DEVICE"
dev=
i=0
while [ $i -lt 1800 ]; do	# 180 s: the host attaches when it is ready
	dev=$(find_dev) && break
	sleep 0.1
	i=$((i + 1))
done
if [ -z "$dev" ]; then
	echo "FAIL hot-added device: no 1af4:1110 on the PCI bus"
else
	echo "PASS hot-added device ${dev##*/}"
	echo 1 >"$dev/enable"	# memory decoding on; no driver bound yet
	bar=$(sed -n 3p "$dev/resource" | cut -d' ' -f1)
	# the TOE stores the magic last: wait for a formatted header
	m=
	i=0
	while [ $i -lt 300 ]; do
		m=$(devmem $(( bar )) 64)
		[ "$(( m ))" = "$(( magic ))" ] && break
		sleep 0.1
		i=$((i + 1))
	done
	if [ "$(( m ))" = "$(( magic ))" ]; then
		echo "PASS region magic"
	else
		echo "FAIL region magic: $m at BAR2 $bar"
	fi
	rname=$(read_name $(( bar )))
	if [ "$rname" = "$name" ]; then
		echo "PASS region name $rname"
	else
		echo "FAIL region name: header says '$rname', want '$name'"
	fi
	echo "GUEST-REGION name=$rname size=$(( $(sed -n 3p "$dev/resource" | cut -d' ' -f2) - bar + 1 ))"
	echo 0 >"$dev/enable"
fi

if insmod /lib/tochain_ivshmem.ko; then
	echo "GUEST-MODULE loaded"
else
	echo "FAIL insmod tochain_ivshmem.ko"
fi
i=0
while [ $i -lt 300 ] && [ ! -c "/dev/tochain/$name" ]; do
	sleep 0.1
	i=$((i + 1))
done
if [ -c "/dev/tochain/$name" ]; then
	echo "PASS /dev/tochain/$name"
else
	echo "FAIL /dev/tochain/$name: not there; /dev/tochain: $(ls /dev/tochain 2>&1)"
fi
dmesg | grep -E 'tochain|ivshmem|BUG:|WARNING:|Oops|Call Trace|RIP:|general protection' | sed 's/^/GUEST-DMESG /'
echo "GUEST-READY"
# the host unplugs the device (vm del): the driver must let it go
i=0
while [ $i -lt 1800 ] && find_dev >/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
if find_dev >/dev/null; then
	echo "GUEST-STILL-PLUGGED"
else
	echo "PASS device unplugged"
	[ -e "/dev/tochain/$name" ] && echo "FAIL node left behind" || echo "PASS node removed"
fi
dmesg | grep -E 'BUG:|WARNING:|Oops|Call Trace|RIP:|general protection' | sed 's/^/GUEST-DMESG /'
echo "GUEST-DONE uptime=$(cut -d' ' -f1 /proc/uptime)"
while :; do sleep 3600; done
