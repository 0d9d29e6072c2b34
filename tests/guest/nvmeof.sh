#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# An in-kernel RDMA user over softrdma: NVMe over Fabrics with the RDMA
# transport, Debian's own modules at both ends.
#
#   nvmet + nvmet-rdma (target)  --  srdma_n on veth0 10.80.0.1  --
#   nvme-rdma (host)             --/ (the same device: both use rdma_cm
#                                     in the init netns)
#
# The target exports a 64 MiB file (buffered: tmpfs has no O_DIRECT) as
# namespace 1 of subsystem
# "softrdma-test"; the host connects through /dev/nvme-fabrics (rdma_cm
# over QP1, then RC QPs with fast registration, remote invalidation and
# READ/WRITE), writes 8 MiB of a random pattern to the block device with
# O_DIRECT, reads it back and compares; then disconnects, and target and
# device go away cleanly. The target takes its receives from an SRQ
# (nvmet-rdma use_srq=1; NFS over RDMA, nfsrdma.sh, covers a server
# without one): on 6.11 and later its queues' teardown, ib_drain_qp(),
# waits up to 60 s per QP for the Last WQE Reached event, so the
# teardown must take less than 30 s. Prints TAP; logs go to $SRDMA_OUT/nvmeof/.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/guest/lib.sh
. tests/guest/lib.sh
# shellcheck source=tools/bench/lib.sh
. tools/bench/lib.sh

kver=${SRDMA_KVER:-$(uname -r)}
module=${SRDMA_MODULE:-build/kmod/$kver/softrdma.ko}
out=${SRDMA_OUT:-/tmp}
log=$out/nvmeof
nqn=softrdma-test
cfs=/sys/kernel/config/nvmet
mark=$(dmesg_mark)
mkdir -p "$log"

if ! modinfo nvmet-rdma >/dev/null 2>&1 || ! modinfo nvme-rdma >/dev/null 2>&1; then
	skip "NVMe over Fabrics" "this kernel has no nvmet-rdma or nvme-rdma"
	tap_finish
	exit
fi
grep -q '^softrdma ' /proc/modules ||
	check "module loads" load_module "$module"
if grep -q '^rdma_rxe ' /proc/modules; then
	check "rdma_rxe unloaded (it holds UDP port 4791 of the init netns)" \
		modprobe -r rdma_rxe
fi
check "nvmet-rdma (with an SRQ) and nvme-rdma load" sh -c \
	'modprobe nvmet-rdma use_srq=1 && modprobe nvme-rdma'
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config

ip link add veth0 type veth peer name veth1
ip addr add 10.80.0.1/24 dev veth0
ip link set veth0 up
ip link set veth1 up
check "device srdma_n on veth0" rdma link add srdma_n type softrdma netdev veth0
check "RoCEv2 GID of 10.80.0.1 on srdma_n" wait_gid srdma_n 10.80.0.1

backing=$(mktemp /tmp/nvmeof.XXXXXX)
truncate -s 64M "$backing"
target_up() {
	mkdir "$cfs/subsystems/$nqn" &&
		echo 1 >"$cfs/subsystems/$nqn/attr_allow_any_host" &&
		mkdir "$cfs/subsystems/$nqn/namespaces/1" &&
		echo "$backing" >"$cfs/subsystems/$nqn/namespaces/1/device_path" &&
		echo 1 >"$cfs/subsystems/$nqn/namespaces/1/buffered_io" &&
		echo 1 >"$cfs/subsystems/$nqn/namespaces/1/enable" &&
		mkdir "$cfs/ports/1" &&
		echo rdma >"$cfs/ports/1/addr_trtype" &&
		echo ipv4 >"$cfs/ports/1/addr_adrfam" &&
		echo 10.80.0.1 >"$cfs/ports/1/addr_traddr" &&
		echo 4420 >"$cfs/ports/1/addr_trsvcid" &&
		ln -s "$cfs/subsystems/$nqn" "$cfs/ports/1/subsystems/$nqn"
}
check "target: subsystem $nqn on rdma 10.80.0.1:4420" target_up

ctrl=""
connect() {
	local line
	line=$(echo "transport=rdma,traddr=10.80.0.1,trsvcid=4420,nqn=$nqn" |
	       tee /dev/nvme-fabrics 2>&1 >/dev/null) || { echo "$line"; return 1; }
	# The fabrics device answers a read with "instance=N,cntlid=M".
	return 0
}
find_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -r "$c/subsysnqn" ] || continue
		[ "$(cat "$c/subsysnqn")" = "$nqn" ] && basename "$c" && return 0
	done
	return 1
}
# The namespace's block device: with native multipath (Debian's default)
# the disk is the subsystem's head, nvme<S>n1, and nvme<S>c<C>n1 a hidden
# path; without it, nvme<C>n1. The guest has no other NVMe device.
find_ns() {
	local n
	for n in /sys/block/nvme*n1; do
		n=$(basename "$n")
		case $n in *c*) continue ;; esac
		[ -b "/dev/$n" ] && echo "$n" && return 0
	done
	return 1
}
check "host: connect over rdma" connect
check "host: controller appears" wait_for 30 find_ctrl
ctrl=$(find_ctrl)
dev=""
[ -z "$ctrl" ] || { wait_for 30 find_ns; dev=$(find_ns); }
check "host: namespace block device appears ($dev)" test -n "$dev" -a -b "/dev/$dev"
diag "controller $ctrl, transport $(cat /sys/class/nvme/"$ctrl"/transport 2>/dev/null)," \
	"address $(cat /sys/class/nvme/"$ctrl"/address 2>/dev/null)"
check "target: its QPs take receives from an SRQ" \
	sh -c 'rdma resource show srq dev srdma_n | tee "$0" | grep -q .' "$log/srq.txt"

pattern=$(mktemp /tmp/nvmeof-pattern.XXXXXX)
back=$(mktemp /tmp/nvmeof-back.XXXXXX)
head -c 8M /dev/urandom >"$pattern"
check "write 8 MiB (O_DIRECT) at 1 MiB" \
	dd if="$pattern" of="/dev/$dev" bs=1M seek=1 oflag=direct conv=fsync status=none
# Drop the host's cache: the read must come over the fabric.
echo 3 >/proc/sys/vm/drop_caches
check "read it back (O_DIRECT)" \
	dd if="/dev/$dev" of="$back" bs=1M skip=1 count=8 iflag=direct status=none
check "the data read back is the data written" cmp "$pattern" "$back"
check "the target's file holds it too" \
	cmp "$pattern" <(dd if="$backing" bs=1M skip=1 count=8 status=none)
rdma statistic show link srdma_n/1 >"$log/stats-srdma_n.txt" 2>&1

teardown_start=$(date +%s)
check "host: disconnect" sh -c "echo 1 >/sys/class/nvme/$ctrl/delete_controller"
target_down() {
	rm -f "$cfs/ports/1/subsystems/$nqn" &&
		rmdir "$cfs/ports/1" &&
		echo 0 >"$cfs/subsystems/$nqn/namespaces/1/enable" &&
		rmdir "$cfs/subsystems/$nqn/namespaces/1" &&
		rmdir "$cfs/subsystems/$nqn"
}
check "target: removed" target_down
check "nvme-rdma and nvmet-rdma unload" modprobe -r nvme-rdma nvmet-rdma
teardown=$(($(date +%s) - teardown_start))
check "no QP drain waited out its timeout (teardown took ${teardown} s)" \
	test "$teardown" -lt 30
check "rdma link delete srdma_n" rdma link delete srdma_n
ip link del veth0 2>/dev/null
rm -f "$backing" "$pattern" "$back"
dmesg | grep -iE "nvme|softrdma" >"$log/dmesg.txt"
check "kernel logged no warning" kernel_clean_since "$mark"
tap_finish
