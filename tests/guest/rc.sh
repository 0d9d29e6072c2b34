#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# RC transport suite (build/tests/srdma_rc_test) between two devices:
#
#   init netns                              netns "peer"
#   dev_init -- veth0 10.80.0.1/24 ======= veth1 10.80.0.2/24 -- dev_peer
#
#   rc.sh softrdma softrdma        softrdma on both ends
#   rc.sh rxe softrdma             rdma_rxe in the init netns (rxe on 6.1
#                                  binds UDP 4791 only there), softrdma in
#                                  "peer"; rxe's QPs request, softrdma's
#                                  respond
#   rc.sh rxe softrdma swap        the same with the roles swapped
#
# Prints TAP; the gtest XML goes to $SRDMA_OUT/rc-INIT-PEER[-swap].xml.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/guest/lib.sh
. tests/guest/lib.sh

kind_a=${1:-softrdma} kind_b=${2:-softrdma} swap=${3:-}
kver=${SRDMA_KVER:-$(uname -r)}
build=${SRDMA_BUILD:-build}
module=${SRDMA_MODULE:-build/kmod/$kver/softrdma.ko}
out=${SRDMA_OUT:-/tmp}
mark=$(dmesg_mark)

check "provider installed" cmake --install "$build"
grep -q '^softrdma ' /proc/modules || load_module "$module"
if [ "$kind_a" = rxe ] || [ "$kind_b" = rxe ]; then
	modprobe rdma_rxe
fi

ip netns add peer
ip link add veth0 type veth peer name veth1 netns peer
ip addr add 10.80.0.1/24 dev veth0
ip link set veth0 up
ip -n peer addr add 10.80.0.2/24 dev veth1
ip -n peer link set veth1 up
ip -n peer link set lo up

add_dev() {	# KIND NAME NETDEV [netns]
	local type=$1
	[ "$type" = rxe ] && type=rxe
	if [ -n "${4:-}" ]; then
		ip netns exec "$4" rdma link add "$2" type "$type" netdev "$3"
	else
		rdma link add "$2" type "$type" netdev "$3"
	fi
}
check "device dev_init ($kind_a) on veth0" add_dev "$kind_a" dev_init veth0
check "device dev_peer ($kind_b) on veth1 in netns peer" add_dev "$kind_b" dev_peer veth1 peer

name=rc-$kind_a-$kind_b${swap:+-swap}
if [ -z "$swap" ]; then
	ends=(SRDMA_DEV_A=dev_init SRDMA_IP_A=10.80.0.1 SRDMA_KIND_A="$kind_a"
	      SRDMA_DEV_B=dev_peer SRDMA_IP_B=10.80.0.2 SRDMA_KIND_B="$kind_b")
else
	ends=(SRDMA_DEV_A=dev_peer SRDMA_IP_A=10.80.0.2 SRDMA_KIND_A="$kind_b"
	      SRDMA_DEV_B=dev_init SRDMA_IP_B=10.80.0.1 SRDMA_KIND_B="$kind_a")
fi
env "${ends[@]}" timeout 900 "$build/tests/srdma_rc_test" \
	--gtest_output="xml:$out/$name.xml" >"$out/$name.txt" 2>&1
rc=$?
check "RC suite $kind_a <-> $kind_b${swap:+ (roles swapped)}" test "$rc" = 0
[ "$rc" = 0 ] || grep -E "FAILED|Failure|Expected|Which is|status" "$out/$name.txt" | head -40 | sed 's/^/# /'
rdma statistic show link dev_init/1 >"$out/stats-$name-init.txt" 2>&1
rdma statistic show link dev_peer/1 >"$out/stats-$name-peer.txt" 2>&1
cat /proc/net/softnet_stat >"$out/softnet-$name.txt"

check "rdma link delete dev_init" rdma link delete dev_init
check "rdma link delete dev_peer" rdma link delete dev_peer
check "netns removal" ip netns del peer
check "kernel logged no warning" kernel_clean_since "$mark"
tap_finish
