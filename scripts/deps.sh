#!/usr/bin/env bash
# Installs the Debian packages every folder lists in its deps.txt, and
# makes sure apt has deb-src entries (scripts/deb-src.sh): the patched QEMU
# and test 218 fetch Debian source packages.
# Idempotent and non-interactive: asks apt only for what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! scripts/deb-src.sh; then
	# not root: the packages may all be there; the tests that fetch a
	# source package need root anyway (and say so)
	[ "$(id -u)" -eq 0 ] && { echo "deps: apt-get source will not work (see above)" >&2; exit 1; }
	echo "deps: warning: apt-get source will not work (see above)" >&2
fi

mapfile -t wanted < <(cat deps.txt */deps.txt */*/deps.txt 2>/dev/null | sed 's/#.*//' | tr -s ' \t' '\n' | grep -v '^$' | sort -u)
missing=()
for p in "${wanted[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#wanted[@]} packages installed"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages and not root: ${missing[*]}" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# Services that packages would start (nginx, dnsmasq, libvirtd) stay off:
# tests start their own instances in their own namespaces.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e $policy ]; then
	printf '#!/bin/sh\nexit 101\n' > $policy && chmod +x $policy && created_policy=1
fi
trap '[ $created_policy = 1 ] && rm -f $policy' EXIT
apt-get install -y -q --no-install-recommends "${missing[@]}"
