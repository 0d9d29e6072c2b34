#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# An in-kernel RDMA user over softrdma: NFS over RDMA (RPC-over-RDMA,
# RFC 8166), Debian's knfsd and NFS client at both ends.
#
#   nfsd + svcrdma (server, port 20049)  --  srdma_f on veth0 10.85.0.1  --
#   nfs + xprtrdma (client, proto=rdma)  --/ (the same device: both use
#                                             rdma_cm in the init netns)
#
# The server exports a tmpfs directory (NFSv4.2 and v3); the client mounts
# it with proto=rdma for each version, writes 16 MiB of a random pattern
# with O_DIRECT (so that the data goes by RDMA READ from the client's
# memory), reads it back without the client's cache (RDMA WRITE to it),
# compares both with the server's copy, lists and removes files, and
# unmounts; server, transport modules and device then go away cleanly.
# The export is NFSv4's root (fsid=0): the guest's own root, 9p under an
# overlay, cannot be exported, so nothing above it could be. Prints TAP;
# logs go to $SRDMA_OUT/nfsrdma/.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/guest/lib.sh
. tests/guest/lib.sh
# shellcheck source=tools/bench/lib.sh
. tools/bench/lib.sh

kver=${SRDMA_KVER:-$(uname -r)}
module=${SRDMA_MODULE:-build/kmod/$kver/softrdma.ko}
out=${SRDMA_OUT:-/tmp}
log=$out/nfsrdma
export_dir=/srv/srdma-nfs
mnt=/mnt/srdma-nfs
mark=$(dmesg_mark)
mkdir -p "$log"

if ! modinfo rpcrdma >/dev/null 2>&1 || ! modinfo nfsd >/dev/null 2>&1 ||
	! modinfo nfs >/dev/null 2>&1; then
	skip "NFS over RDMA" "this kernel has no rpcrdma, nfsd or nfs"
	tap_finish
	exit
fi
if ! command -v rpc.nfsd >/dev/null || ! command -v mount.nfs >/dev/null; then
	skip "NFS over RDMA" "nfs-kernel-server is not installed"
	tap_finish
	exit
fi
grep -q '^softrdma ' /proc/modules ||
	check "module loads" load_module "$module"
if grep -q '^rdma_rxe ' /proc/modules; then
	check "rdma_rxe unloaded (it holds UDP port 4791 of the init netns)" \
		modprobe -r rdma_rxe
fi
check "rpcrdma, nfsd and nfs load" modprobe -a rpcrdma nfsd nfs nfsv4

ip link add veth0 type veth peer name veth1
ip addr add 10.85.0.1/24 dev veth0
ip link set veth0 up
ip link set veth1 up
check "device srdma_f on veth0" rdma link add srdma_f type softrdma netdev veth0
check "RoCEv2 GID of 10.85.0.1 on srdma_f" wait_gid srdma_f 10.85.0.1

# The server: its state directories live in the guest's writable overlay.
server_up() {
	mkdir -p "$export_dir" /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery &&
		mount -t tmpfs -o size=128m srdma-nfs "$export_dir" &&
		{ mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd; } &&
		{ mountpoint -q /var/lib/nfs/rpc_pipefs ||
		  mount -t rpc_pipefs sunrpc /var/lib/nfs/rpc_pipefs; } &&
		echo "$export_dir 10.85.0.0/24(rw,fsid=0,no_root_squash,no_subtree_check,insecure)" \
			>/etc/exports &&
		rpcbind -w &&
		rpc.mountd &&
		exportfs -ra &&
		rpc.nfsd 4 &&
		echo "rdma 20049" >/proc/fs/nfsd/portlist
}
check "server: nfsd exports $export_dir, RDMA listener on 20049" server_up
diag "$(tr '\n' ' ' 2>/dev/null </proc/fs/nfsd/portlist)"

tmp=$(mktemp -d /tmp/nfsrdma.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pattern=$tmp/pattern
back=$tmp/back
head -c 16M /dev/urandom >"$pattern"
mkdir -p "$mnt"
for vers in 4.2 3; do
	opts="vers=$vers,proto=rdma,port=20049"
	path=$export_dir
	[ "$vers" = 3 ] || path=/
	before=$tap_failed
	check "client: mount -o $opts" \
		timeout 60 mount -v -t nfs -o "$opts" "10.85.0.1:$path" "$mnt"
	if [ "$tap_failed" != "$before" ]; then
		skip "NFSv$vers: data" "not mounted"
		continue
	fi
	check "client: the mount is over RDMA" \
		grep -q "$mnt nfs.*proto=rdma" /proc/mounts
	check "NFSv$vers: write 16 MiB (O_DIRECT)" \
		dd if="$pattern" of="$mnt/f$vers" bs=1M oflag=direct conv=fsync status=none
	echo 3 >/proc/sys/vm/drop_caches
	check "NFSv$vers: read it back (O_DIRECT)" \
		dd if="$mnt/f$vers" of="$back" bs=1M iflag=direct status=none
	check "NFSv$vers: the data read back is the data written" cmp "$pattern" "$back"
	check "NFSv$vers: the server's file holds it too" cmp "$pattern" "$export_dir/f$vers"
	small() {
		local i
		for i in $(seq 1 50); do echo "$i" >"$mnt/d$vers.$i" || return 1; done
		[ "$(ls "$mnt" | grep -c "^d$vers\.")" = 50 ] &&
			rm -f "$mnt"/d"$vers".* "$mnt/f$vers"
	}
	check "NFSv$vers: 50 small files created, listed, removed" small
	check "client: umount" timeout 60 umount "$mnt"
done
rdma statistic show link srdma_f/1 >"$log/stats-srdma_f.txt" 2>&1

server_down() {
	rpc.nfsd 0 &&
		exportfs -ua &&
		pkill -x rpc.mountd; pkill -x rpcbind
	umount "$export_dir"
}
check "server: stopped" server_down
# nfsd keeps its RPC transports until the module goes; nfsv4 holds nfs.
check "nfsd, nfs and rpcrdma unload" \
	sh -c 'umount /proc/fs/nfsd; modprobe -r nfsd nfsv4 nfsv3 nfs rpcrdma'
check "rdma link delete srdma_f" rdma link delete srdma_f
ip link del veth0 2>/dev/null
dmesg | grep -iE "nfs|rpcrdma|svcrdma|softrdma" >"$log/dmesg.txt"
check "kernel logged no warning" kernel_clean_since "$mark"
tap_finish
