#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Install everything softrdma needs to build, boot guests and run its tests on
# Debian 12 (bookworm), from Debian's own archive only:
#   - the stock 6.1 kernel and headers (bookworm),
#   - the stock 6.12 kernel and headers (bookworm-backports),
#   - linux-source-6.1 (test kernel, checkpatch.pl),
#   - qemu, busybox, rdma-core userspace and its verbs test suite
#     (python3-pyverbs), perftest, the NFS server (for NFS over RDMA in
#     the guests; its daemons are not started here), build tools.
# Idempotent: a second run installs nothing new.
set -euo pipefail

[ "$(id -u)" = 0 ] || { echo "install-deps: must run as root" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive

bp=/etc/apt/sources.list.d/softrdma-backports.sources
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	cat >"$bp" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi

stamp=/var/lib/softrdma-deps.stamp
want=(
	build-essential bc bison flex libelf-dev libssl-dev xz-utils cpio kmod
	busybox-static qemu-system-x86 iproute2 sparse linux-source-6.1 python3
	cmake g++ pkg-config libgtest-dev libgmock-dev
	rdma-core ibverbs-utils ibverbs-providers libibverbs-dev librdmacm-dev
	rdmacm-utils perftest tshark ethtool iputils-ping procps python3-pyverbs
	nfs-kernel-server
)
# Daemons that only the guests run (the NFS server and rpcbind): this host
# neither starts them now nor at boot, unless it had them before.
guest_daemons=(nfs-server.service rpcbind.service rpcbind.socket)

# Resolve the versioned kernel packages behind the metapackages so that 6.1
# and 6.12 can be installed side by side.
kpkgs() {
	local suite=$1 meta=$2
	apt-cache depends -t "$suite" "$meta" 2>/dev/null |
		awk -v m="$meta" '/Depends: linux-/{ sub(/.*Depends: /, ""); if ($0 != m) print; exit }'
}

if [ -f "$stamp" ] && dpkg -s "${want[@]}" >/dev/null 2>&1; then
	echo "install-deps: already installed"
	exit 0
fi

apt-get update -q
k61=$(kpkgs bookworm linux-image-amd64)
h61=$(kpkgs bookworm linux-headers-amd64)
k612=$(kpkgs bookworm-backports linux-image-amd64)
h612=$(kpkgs bookworm-backports linux-headers-amd64)
for p in "$k61" "$h61" "$k612" "$h612"; do
	[ -n "$p" ] || { echo "install-deps: cannot resolve kernel packages" >&2; exit 1; }
done
echo "install-deps: kernels $k61 $k612"

# The host never boots these kernels: skip the initramfs and bootloader hooks.
mkdir -p /etc/initramfs-tools/conf.d
export INITRD=No
had_nfs=0
dpkg -s nfs-kernel-server >/dev/null 2>&1 && had_nfs=1
policy=/usr/sbin/policy-rc.d
if [ "$had_nfs" = 0 ] && [ ! -e "$policy" ]; then
	printf '#!/bin/sh\n# softrdma install-deps: start no service\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	trap 'rm -f "$policy"' EXIT
fi
apt-get install -y -q --no-install-recommends "${want[@]}"
if [ "$had_nfs" = 0 ] && command -v systemctl >/dev/null; then
	systemctl disable --now --quiet "${guest_daemons[@]}" 2>/dev/null || true
fi
apt-get install -y -q --no-install-recommends -t bookworm "$k61" "$h61"
apt-get install -y -q --no-install-recommends -t bookworm-backports "$k612" "$h612"
touch "$stamp"
echo "install-deps: done"
