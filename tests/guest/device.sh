#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Device life cycle of softrdma, inside a guest. Prints TAP.
#
#   softrdma.ko ── srdma0 ── dummy0  10.79.0.1/24  fd79::1/64  (mtu 1500)
#              ├─ "any name" ─ vsa ═══ vsb (veth pair, vsb has no device)
#              └─ srdma_lo ── lo
#
# Checks: the module loads; "rdma link add" creates devices on dummy, veth
# and loopback netdevs whatever their names; the provider binds to them
# (no libibverbs warning); ibv_devinfo/rdma show the truth (GUID from MAC,
# MTU from the netdev, RoCEv2 GIDs from its IPv4/IPv6 addresses, port state
# from its carrier); the verbs object suite passes; then rdma link delete,
# netdev removal and rmmod with devices present all clean up, and the
# kernel logged no warning.
#
# Environment: SRDMA_KVER (guest kernel), SRDMA_BUILD (userspace build dir,
# default build), SRDMA_MODULE (default build/kmod/$SRDMA_KVER/softrdma.ko),
# SRDMA_OUT (results).
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/guest/lib.sh
. tests/guest/lib.sh

kver=${SRDMA_KVER:-$(uname -r)}
build=${SRDMA_BUILD:-build}
module=${SRDMA_MODULE:-build/kmod/$kver/softrdma.ko}
out=${SRDMA_OUT:-/tmp}
mark=$(dmesg_mark)

devinfo() {
	ibv_devinfo -v -d "$1" 2>&1
}

no_verbs_warning() {
	local o
	o=$(ibv_devices 2>&1)
	echo "$o"
	! grep -qiE "warning|couldn't load|no userspace device-specific driver" <<<"$o"
}

# --- Setup: the provider as an installed system would have it ---------------
# The guest's root is an overlay on the host's: installing here touches only
# the guest's tmpfs.
check "provider installs into libibverbs' directories" \
	cmake --install "$build"
check "module and its dependencies load" \
	load_module "$module"
check "module is live" grep -q '^softrdma ' /proc/modules

ip link add dummy0 type dummy
ip link set dummy0 address 02:11:22:33:44:55 up
ip addr add 10.79.0.1/24 dev dummy0
ip -6 addr add fd79::1/64 dev dummy0 nodad
ip link add vsa type veth peer name vsb
ip link set vsa up
ip link set vsb up
ip link set lo up

# --- Creation ----------------------------------------------------------------
check "rdma link add on a dummy netdev" \
	rdma link add srdma0 type softrdma netdev dummy0
check "a second device on the same netdev is refused" \
	tap_negate rdma link add srdma_dup type softrdma netdev dummy0
check "rdma link add with an arbitrary name on a veth" \
	rdma link add "peer_a" type softrdma netdev vsa
check "rdma link add on loopback" \
	rdma link add srdma_lo type softrdma netdev lo
check "rdma link shows srdma0 on dummy0, ACTIVE" \
	sh -c "rdma link show srdma0/1 | grep -q 'state ACTIVE.*netdev dummy0'"
check "rdma dev lists all three devices" \
	sh -c "rdma dev | grep -q srdma0 && rdma dev | grep -q peer_a && rdma dev | grep -q srdma_lo"
check "ibv_devices lists them with no provider warning" no_verbs_warning
check "ibv_devices shows the device under its arbitrary name" \
	sh -c "ibv_devices | grep -q peer_a"

# --- What ibv_devinfo shows ----------------------------------------------------
check "ibv_devinfo: node GUID from the MAC (modified EUI-64)" \
	sh -c "ibv_devinfo -d srdma0 | grep -q 'node_guid:.*0011:22ff:fe33:4455'"
check "ibv_devinfo: Ethernet link layer, PORT_ACTIVE" \
	sh -c "devinfo() { ibv_devinfo -d srdma0; }; devinfo | grep -q 'link_layer:.*Ethernet' && devinfo | grep -q 'state:.*PORT_ACTIVE'"
check "ibv_devinfo: active MTU 1024 on a 1500-byte netdev" \
	sh -c "ibv_devinfo -d srdma0 | grep -q 'active_mtu:.*1024'"
check "ibv_devinfo: loopback gets 4096" \
	sh -c "ibv_devinfo -d srdma_lo | grep -q 'active_mtu:.*4096'"
check "ibv_devinfo -v: RoCEv2 GID of 10.79.0.1" \
	wait_for 5 sh -c "ibv_devinfo -v -d srdma0 | grep -E 'GID\[.*::ffff:10.79.0.1, RoCE v2'"
check "ibv_devinfo -v: RoCEv2 GID of fd79::1" \
	wait_for 5 sh -c "ibv_devinfo -v -d srdma0 | grep -E 'GID\[.*fd79::1, RoCE v2'"
check "ibv_devinfo -v: atomics within the device; SRQs, windows, multicast; no XRC" \
	bash -c "d=\$(ibv_devinfo -v -d srdma0); grep -q 'atomic_cap:.*ATOMIC_HCA' <<<\"\$d\" && grep -q 'max_srq:.*65536\$' <<<\"\$d\" && grep -q 'max_mw:.*[1-9]' <<<\"\$d\" && grep -q 'max_mcast_grp:.*[1-9]' <<<\"\$d\" && ! grep -q 'XRC' <<<\"\$d\""
devinfo srdma0 >"$out/ibv_devinfo-srdma0.txt"

# --- Port state follows the netdev ---------------------------------------------
ip link set dummy0 down
check "netdev down: port goes PORT_DOWN" \
	wait_for 5 sh -c "ibv_devinfo -d srdma0 | grep -q 'state:.*PORT_DOWN'"
ip link set dummy0 up
check "netdev up: port back to PORT_ACTIVE" \
	wait_for 5 sh -c "ibv_devinfo -d srdma0 | grep -q 'state:.*PORT_ACTIVE'"
ip link set vsb down
check "veth peer down (no carrier): PORT_DOWN" \
	wait_for 5 sh -c "ibv_devinfo -d peer_a | grep -q 'state:.*PORT_DOWN'"
ip link set vsb up
check "veth peer up: PORT_ACTIVE" \
	wait_for 5 sh -c "ibv_devinfo -d peer_a | grep -q 'state:.*PORT_ACTIVE'"
ip link set dummy0 mtu 9000
check "netdev MTU 9000: active MTU 4096" \
	wait_for 5 sh -c "ibv_devinfo -d srdma0 | grep -q 'active_mtu:.*4096'"
ip link set dummy0 mtu 1500

# --- Verbs objects through the provider ----------------------------------------
SRDMA_DEV=srdma0 SRDMA_NETDEV=dummy0 SRDMA_IPV4=10.79.0.1 \
	"$build/tests/srdma_verbs_objects_test" \
	--gtest_output="xml:$out/verbs_objects_test.xml" >"$out/verbs_objects_test.txt" 2>&1
rc=$?
check "verbs object suite (srdma0)" test "$rc" = 0
SRDMA_DEV=srdma_lo "$build/tests/srdma_verbs_objects_test" \
	>"$out/verbs_objects_test_lo.txt" 2>&1
rc=$?
check "verbs object suite (loopback device)" test "$rc" = 0

# --- Removal -----------------------------------------------------------------
# A process holds srdma0 open (a pingpong server waiting for its peer): the
# device goes away anyway and the process is left with a dead context. It
# lives on until after rmmod, with its context's doorbell file (bound,
# then cut loose) and a file of the doorbell device never bound: they
# hold the doorbell device's module, never softrdma.
ibv_rc_pingpong -d srdma0 -g 1 >/dev/null 2>&1 &
holder=$!
dbdev=/dev/softrdma_doorbell
[ ! -e "$dbdev" ] || exec 9<>"$dbdev"
sleep 1
check "rdma link delete srdma0 while a process uses it" \
	timeout 30 rdma link delete srdma0
check "srdma0 is gone" tap_negate sh -c "rdma dev | grep -q 'srdma0:'"
check "netdev removal takes its device along" ip link del vsa
check "peer_a is gone" wait_for 5 tap_negate sh -c "rdma dev | grep -q peer_a"
check "a device can be re-added after delete" \
	rdma link add srdma0 type softrdma netdev dummy0
check "netdev deleted while its device exists" ip link del dummy0
check "rmmod with a device present (loopback)" rmmod softrdma
if [ -e "$dbdev" ]; then
	check "the doorbell module stays while its files are open" \
		tap_negate rmmod softrdma_doorbell
fi
exec 9>&-
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
if [ -e "$dbdev" ]; then
	check "and unloads once they are closed" rmmod softrdma_doorbell
fi
check "no softrdma device is left" tap_negate sh -c "rdma dev | grep -q srdma"
check "module can be loaded again" load_module "$module"
check "and unloaded" rmmod softrdma
check "kernel logged no warning" kernel_clean_since "$mark"

tap_finish
