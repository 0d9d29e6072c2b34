#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# One device with both ends of every QP on it: packets to the device's own
# address are looped back by softrdma itself, without the IP stack
# (srdma_net_loopback()); with the module parameter loopback=0 they take
# the IP stack and "lo" instead.
#
#   netns "lb"
#     dev_lb (softrdma) -- dum0 (dummy) 10.86.0.1/24 fd86::1/64
#     A and B: QPs of dev_lb, to 10.86.0.1 (or fd86::1); B on 10.86.0.9
#     (fd86::9) for the test that removes B's address
#
# Runs the RC suite over IPv4 and IPv6 and the datagram suite through the
# loopback, and the RC suite again through the stack, then checks that the
# loopback carried the packets (tx_packets grew, the netdev's lo counters
# did not). The RC suite's tests that take a link down need two devices
# and are left out. Prints TAP; gtest output in $SRDMA_OUT/loopback-*.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/guest/lib.sh
. tests/guest/lib.sh
# shellcheck source=tools/bench/lib.sh
. tools/bench/lib.sh

kver=${SRDMA_KVER:-$(uname -r)}
build=${SRDMA_BUILD:-build}
module=${SRDMA_MODULE:-build/kmod/$kver/softrdma.ko}
res=${SRDMA_OUT:-/tmp}
param=/sys/module/softrdma/parameters/loopback
mark=$(dmesg_mark)

check "provider installed" cmake --install "$build"
grep -q '^softrdma ' /proc/modules || check "module loads" load_module "$module"
ip netns add lb
ip -n lb link set lo up
ip -n lb link add dum0 type dummy
ip -n lb addr add 10.86.0.1/24 dev dum0
ip -n lb -6 addr add fd86::1/64 dev dum0 nodad
ip -n lb link set dum0 up
check "device dev_lb on dum0 in netns lb" \
	ip netns exec lb rdma link add dev_lb type softrdma netdev dum0
check "RoCEv2 GID of 10.86.0.1 on dev_lb" wait_gid dev_lb 10.86.0.1
check "RoCEv2 GID of fd86::1 on dev_lb" wait_gid dev_lb fd86::1

# lo_packets: packets "lo" of netns lb has sent.
lo_packets() {
	ip netns exec lb cat /sys/class/net/lo/statistics/tx_packets
}

# suite NAME TEST IP [IP_B FILTER]: TEST with both ends on dev_lb, A on
# IP, B on IP_B (default IP); the tests FILTER selects (default: all but
# those that take the link down or remove B's address).
suite() {
	local name=$1 test=$2 ip=$3 ip_b=${4:-$3} rc
	local filter=${5:--*PeerNetdevDown*:*PeerAddressRemoved*}
	SRDMA_DEV_A=dev_lb SRDMA_IP_A=$ip SRDMA_KIND_A=softrdma SRDMA_NETNS_A=lb \
	SRDMA_DEV_B=dev_lb SRDMA_IP_B=$ip_b SRDMA_KIND_B=softrdma SRDMA_NETNS_B=lb \
		timeout 900 "$build/tests/$test" --gtest_filter="$filter" \
		--gtest_output="xml:$res/loopback-$name.xml" \
		>"$res/loopback-$name.txt" 2>&1
	rc=$?
	[ $rc = 0 ] || grep -E "FAILED|Failure|Expected|Which is" \
		"$res/loopback-$name.txt" | head -n 30 | sed 's/^/# /' >&2
	return $rc
}

check "loopback parameter on" grep -qx Y "$param"
lo0=$(lo_packets)
check "RC suite through the loopback (IPv4)" suite rc srdma_rc_test 10.86.0.1
check "RC suite through the loopback (IPv6)" suite rc-v6 srdma_rc_test fd86::1
check "datagram suite through the loopback" suite dgram srdma_dgram_test 10.86.0.1
# B on a second address of dum0: once it is removed, the route A's QP has
# cached (and the device it leads to) must not carry its packets on.
ip -n lb addr add 10.86.0.9/24 dev dum0
ip -n lb -6 addr add fd86::9/64 dev dum0 nodad
check "RoCEv2 GID of 10.86.0.9 on dev_lb" wait_gid dev_lb 10.86.0.9
check "RoCEv2 GID of fd86::9 on dev_lb" wait_gid dev_lb fd86::9
for ip_b in 10.86.0.9 fd86::9; do
	ip_a=10.86.0.1
	[ "$ip_b" = 10.86.0.9 ] || ip_a=fd86::1
	check "the peer's address removed under a looped-back QP ($ip_b)" \
		suite "addr-$ip_b" srdma_rc_test "$ip_a" "$ip_b" \
		'*PeerAddressRemoved*'
done
lo1=$(lo_packets)
diag "lo sent $((lo1 - lo0)) packets meanwhile (multicast and ping only)"
# Multicast datagrams and the tests' own pings may use lo; the RC suite
# alone moves tens of thousands of packets.
check "the RC traffic did not take lo" test $((lo1 - lo0)) -lt 2000

echo 0 >"$param"
check "RC suite through the IP stack (loopback=0)" suite rc-stack srdma_rc_test 10.86.0.1
lo2=$(lo_packets)
check "then the packets took lo" test $((lo2 - lo1)) -gt 2000
echo 1 >"$param"

ip netns exec lb rdma statistic show link dev_lb/1 >"$res/loopback-stats.txt" 2>&1
check "rdma link delete dev_lb" ip netns exec lb rdma link delete dev_lb
check "netns removal" ip netns del lb
check "kernel logged no warning" kernel_clean_since "$mark"
tap_finish
