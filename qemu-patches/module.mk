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
# `make check` builds it when it is absent (tests/qemu/ holds the
# series' own test programs).
.PHONY: qemu qemu-check-series
qemu:
	qemu-patches/build-qemu.sh

qemu-check-series:
	qemu-patches/check-series.sh
