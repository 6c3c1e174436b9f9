#!/bin/busybox sh
# /init of the guest of `make demo VM=qemu` (scripts/demo-vm.sh appends it,
# with nginx and the page, to the runtime guest of
# tests/guest/build-guest.sh --runtime).  Loads the driver, waits for the
# region the host hot-plugs with `sfc-ctl vm add --domain`
# (/dev/tochain/NAME, NAME from tochain.cmd=NAME), then runs the host's
# nginx, unmodified, under tochain-run.  Lines starting with GUEST- are
# for the host script; GUEST-UNPLUGGED when the node goes (vm del).  Runs
# until the host destroys the domain.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
ip link set lo up 2>/dev/null
export PATH=/usr/sbin:/usr/bin:/bin LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib
name=$(sed -n 's/.*tochain\.cmd=\([^ ]*\).*/\1/p' /proc/cmdline)
insmod /lib/tochain_ivshmem.ko && echo "GUEST-MODULE loaded"
i=0
while [ ! -e "/dev/tochain/$name" ] && [ $i -lt 6000 ]; do sleep 0.1; i=$((i + 1)); done
[ -e "/dev/tochain/$name" ] || { echo "GUEST-FAIL no /dev/tochain/$name"; poweroff -f; }
echo "GUEST-REGION /dev/tochain/$name uptime=$(cut -d' ' -f1 /proc/uptime)"
mkdir -p /var/nginx/tmp
tochain-run -- nginx -c /etc/nginx-demo.conf -p /var/nginx -e /var/nginx/error.log >/var/nginx/run.log 2>&1 &
echo "GUEST-NGINX pid=$! $(nginx -v 2>&1)"
# sfc-ctl vm del detaches the device: the driver removes the node
while [ -e "/dev/tochain/$name" ]; do sleep 0.2; done
echo "GUEST-UNPLUGGED /dev/tochain/$name gone uptime=$(cut -d' ' -f1 /proc/uptime)"
while :; do sleep 3600; done
