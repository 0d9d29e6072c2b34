#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Mutated RoCEv2 packets at a softrdma device (tools/fuzz/srdma_fuzz), then
# proof that the device still works:
#
#   init netns                                  netns "peer"
#   srdma_fuzz (raw socket)                    dev_fz (softrdma): the target,
#     veth0 10.80.0.1 ======================== veth1 10.80.0.2; its QPs are
#           fd80::1                                  fd80::2  the fuzzer's own
#
# SRDMA_FUZZ_PACKETS packets (default 1000000; tests/run uses 200000, and
# 100000 on the test kernel), three quarters over IPv4 and a quarter over IPv6,
# seed SRDMA_FUZZ_SEED. Afterwards a second device
# dev_ok on veth0 runs ibv_rc_pingpong and ibv_ud_pingpong against dev_fz,
# the drops the target counted are printed, and the kernel must have
# logged nothing (on the test kernel: no KASAN, lockdep or kmemleak
# report either, which run-guest --strict checks). Prints TAP.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/guest/lib.sh
. tests/guest/lib.sh
# shellcheck source=tools/bench/lib.sh
. tools/bench/lib.sh

kver=${SRDMA_KVER:-$(uname -r)}
build=${SRDMA_BUILD:-build}
module=${SRDMA_MODULE:-build/kmod/$kver/softrdma.ko}
out=${SRDMA_OUT:-/tmp}
packets=${SRDMA_FUZZ_PACKETS:-1000000}
seed=${SRDMA_FUZZ_SEED:-$RANDOM}
PT_LOG=$out/fuzz
PT_CLI_IP=10.80.0.1
PT_TIMEOUT=60
# No figure is wanted: a run that reached its report at both ends is done
# even when perftest could not calibrate its clock (tools/bench/lib.sh).
PT_UNCALIBRATED_OK=1
mark=$(dmesg_mark)
mkdir -p "$PT_LOG"

check "provider installed" cmake --install "$build"
grep -q '^softrdma ' /proc/modules || check "module loads" load_module "$module"
if grep -q '^rdma_rxe ' /proc/modules; then
	check "rdma_rxe unloaded" modprobe -r rdma_rxe
fi
ip netns add peer
ip link add veth0 type veth peer name veth1 netns peer
ip addr add 10.80.0.1/24 dev veth0
ip -6 addr add fd80::1/64 dev veth0 nodad
ip link set veth0 up
ip -n peer addr add 10.80.0.2/24 dev veth1
ip -n peer -6 addr add fd80::2/64 dev veth1 nodad
ip -n peer link set veth1 up
ip -n peer link set lo up
check "target device dev_fz on veth1 in netns peer" \
	ip netns exec peer rdma link add dev_fz type softrdma netdev veth1
check "RoCEv2 GID of 10.80.0.2 on dev_fz" wait_gid dev_fz 10.80.0.2
check "neighbours resolve" sh -c \
	'ping -c 1 -W 5 10.80.0.2 && ip netns exec peer ping -c 1 -W 5 10.80.0.1 &&
	 ping -6 -c 1 -W 5 fd80::2 && ip netns exec peer ping -6 -c 1 -W 5 fd80::1'

ip netns exec peer rdma statistic show link dev_fz/1 >"$PT_LOG/stats-before.txt" 2>&1
start=$(date +%s)
v6=$((packets / 4))
v4=$((packets - v6))
check "srdma_fuzz: $v4 IPv4 packets, seed $seed" \
	sh -c "'$build/tools/srdma_fuzz' --dev dev_fz --dst 10.80.0.2 --src 10.80.0.1 \
		--packets $v4 --seed $seed >'$PT_LOG/fuzz.txt' 2>&1 ||
		{ tail -n 20 '$PT_LOG/fuzz.txt'; exit 1; }"
check "srdma_fuzz: $v6 IPv6 packets, seed $seed" \
	sh -c "'$build/tools/srdma_fuzz' --dev dev_fz --dst fd80::2 --src fd80::1 \
		--packets $v6 --seed $seed >'$PT_LOG/fuzz6.txt' 2>&1 ||
		{ tail -n 20 '$PT_LOG/fuzz6.txt'; exit 1; }"
secs=$(($(date +%s) - start))
ip netns exec peer rdma statistic show link dev_fz/1 >"$PT_LOG/stats-after.txt" 2>&1
diag "$packets packets in ${secs} s; the target counted:"
tr ' ' '\n' <"$PT_LOG/stats-after.txt" | paste - - 2>/dev/null |
	awk '$2 ~ /^[0-9]+$/ && $2 > 0 { printf "#   %s %s\n", $1, $2 }'
# Each datagram reached the device: it counted (at least) what was sent.
rx_ok() {
	local rx
	rx=$(tr ' ' '\n' <"$PT_LOG/stats-after.txt" | grep -A1 '^rx_packets$' | tail -n 1)
	[ -n "$rx" ] && [ "$rx" -ge $((packets * 9 / 10)) ]
}
check "the target received at least 90% of them (rx_packets)" rx_ok

# The device still works, with a peer that was not fuzzed.
check "device dev_ok on veth0" rdma link add dev_ok type softrdma netdev veth0
check "RoCEv2 GID of 10.80.0.1 on dev_ok" wait_gid dev_ok 10.80.0.1
check "afterwards: ibv_rc_pingpong dev_ok -> dev_fz" \
	pt_run rc_after peer dev_fz "" dev_ok 10.80.0.2 ibv_rc_pingpong -n 50
PT_PORT=$((PT_PORT + PT_RETRIES + 1))
check "afterwards: ibv_ud_pingpong dev_ok -> dev_fz" \
	pt_run ud_after peer dev_fz "" dev_ok 10.80.0.2 ibv_ud_pingpong -n 50 -s 512

check "rdma link delete dev_ok" rdma link delete dev_ok
check "rdma link delete dev_fz" ip netns exec peer rdma link delete dev_fz
check "netns removal" ip netns del peer
ip link del veth0 2>/dev/null
check "kernel logged no warning" kernel_clean_since "$mark"
tap_finish
