#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# softrdma's packets as they are on the wire, captured and checked by
# programs that share no code with the module: tools/wire/srdma_wirecheck
# (IP and UDP headers and checksums, BTH fields, header and payload
# lengths per opcode, AETH syndromes, ICRC) and Wireshark's dissector
# (tshark: every packet dissects as InfiniBand, none is malformed).
#
#   init netns                                 netns "peer"
#   srdma_c -- veth0 10.80.0.1/24 ========= veth1 10.80.0.2/24 -- srdma_s
#              fd80::1/64                   fd80::2/64
#   dumpcap on veth0, UDP port 4791: both directions
#   rxe_c ----'  (after srdma_c is deleted: rdma_rxe against srdma_s)
#
# Traffic, over IPv4 and IPv6: the RC suite's operations (SEND and WRITE
# with immediate, READ, atomics, zero-length operations, remote access and
# RNR NAKs), UD and UC from the datagram suite, SEND with invalidate from
# the memory suite, perftest and rping (rdma_cm: MADs on QP1). Transmit
# checksum offload is off on both veths, so that the capture holds the
# UDP checksums as they would leave a NIC. Then the same checks on a
# capture of rdma_rxe against softrdma: rxe's packets are a reference the
# checker must accept (not on the test kernel, where rdma_rxe is no peer).
# Prints TAP; the captures and the checkers' reports go to $SRDMA_OUT/wire/.
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
log=$out/wire
PT_LOG=$log
PT_CLI_IP=10.80.0.1
PT_TIMEOUT=60
# No figure is wanted: a run that reached its report at both ends is done
# even when perftest could not calibrate its clock (tools/bench/lib.sh).
PT_UNCALIBRATED_OK=1
wirecheck=$build/tools/srdma_wirecheck
mark=$(dmesg_mark)
mkdir -p "$log"

check "provider installed" cmake --install "$build"
grep -q '^softrdma ' /proc/modules ||
	check "module loads" load_module "$module"
if grep -q '^rdma_rxe ' /proc/modules; then
	check "rdma_rxe unloaded (it holds UDP port 4791 of the init netns)" \
		modprobe -r rdma_rxe
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
check "transmit checksums computed in software on both veths" sh -c \
	'ethtool -K veth0 tx off >/dev/null &&
	 ip netns exec peer ethtool -K veth1 tx off >/dev/null'
check "device srdma_c on veth0" \
	rdma link add srdma_c type softrdma netdev veth0
check "device srdma_s on veth1 in netns peer" \
	ip netns exec peer rdma link add srdma_s type softrdma netdev veth1
gids() {
	wait_gid srdma_c 10.80.0.1 && wait_gid srdma_s 10.80.0.2 &&
		wait_gid srdma_c fd80::1 && wait_gid srdma_s fd80::2
}
check "RoCEv2 GIDs of srdma_c and srdma_s, IPv4 and IPv6" gids
check "neighbours resolve" sh -c \
	'ping -c 1 -W 5 10.80.0.2 && ping -6 -c 1 -W 5 fd80::2'

# capture_start FILE / capture_stop: dumpcap on veth0, classic pcap. Not
# through check, which runs its command in a subshell.
capture_start() {
	local t=50
	cap_file=$1
	dumpcap -q -P -i veth0 -f "udp port 4791" -w "$cap_file" \
		>"$cap_file.log" 2>&1 &
	cap_pid=$!
	# Capturing once dumpcap has written the file header.
	while [ $t -gt 0 ] && ! [ -s "$cap_file" ]; do
		sleep 0.1
		t=$((t - 1))
	done
	[ -s "$cap_file" ]
}
capture_stop() {
	sleep 0.5	# the last ACKs
	kill -INT "$cap_pid" 2>/dev/null
	wait "$cap_pid"
}

# gtest BINARY FILTER IP_A IP_B: one of the suites, A = srdma_c (or
# $kind_a's device), B = srdma_s.
gtest() {
	env SRDMA_DEV_A="$dev_a" SRDMA_IP_A="$3" SRDMA_KIND_A="$kind_a" \
	    SRDMA_NETNS_A= SRDMA_DEV_B=srdma_s SRDMA_IP_B="$4" \
	    SRDMA_KIND_B=softrdma SRDMA_NETNS_B=peer \
	    timeout 300 "$build/tests/$1" --gtest_filter="$2" \
		>>"$log/gtests-$dev_a.txt" 2>&1
}

# tshark_clean FILE: packets that do not dissect as InfiniBand, or that
# Wireshark finds malformed or warns about, are listed in FILE.tshark.txt.
# Its guesses at what a SEND carries (RPC-over-RDMA, SMB Direct, Ethernet
# over IB...) are off: they take the tests' payloads for broken frames
# of those protocols, rdma_rxe's as well as softrdma's.
tshark_clean() {
	local h heur=()
	for h in rpcrdma_infiniband smb_direct_infiniband smcr_infiniband \
		 iser_infiniband sdp_infiniband lnet_ib fc_infiniband \
		 eth_over_ib mellanox_eoib; do
		heur+=(--disable-heuristic "$h")
	done
	tshark "${heur[@]}" -r "$1" -Y '!infiniband || _ws.malformed ||
			   _ws.expert.severity >= warning' \
		>"$1.tshark.txt" 2>"$1.tshark.err" &&
		! [ -s "$1.tshark.txt" ] &&
		[ "$(tshark -r "$1" 2>/dev/null | wc -l)" -gt 0 ]
}

# check_capture NAME FILE EXPECTED_OPCODES EXPECTED_AETH_SYNDROMES [ARG...]
# ARG: more srdma_wirecheck arguments (--expect-credits)
check_capture() {
	local name=$1 f=$2 expect=$3 aeth=$4
	local more=("${@:5}")
	check "$name: srdma_wirecheck accepts every packet" \
		"$wirecheck" --expect "$expect" --expect-aeth "$aeth" "${more[@]}" "$f"
	"$wirecheck" "$f" >"$f.wirecheck.txt" 2>&1
	check "$name: tshark dissects every packet as InfiniBand, none malformed" \
		tshark_clean "$f"
}

rc_ops='RcTest.SendSizes:RcTest.SendWithImmediate:RcTest.InlineSend'
rc_ops+=':RcTest.WriteWithImmediate:RcTest.ReadSizes:RcTest.Atomics'
rc_ops+=':RcTest.ZeroLength*:RcTest.WrongRkeyIsRemoteAccessError'
rc_ops+=':RcTest.RnrThenReceivePosted'

dev_a=srdma_c kind_a=softrdma
capture_start /tmp/wire-softrdma.pcap
check "capture starts (softrdma on both ends)" test -s /tmp/wire-softrdma.pcap
check "RC operations and NAKs over IPv4" \
	gtest srdma_rc_test "$rc_ops" 10.80.0.1 10.80.0.2
check "RC operations over IPv6" \
	gtest srdma_rc_test "RcTest.SendSizes:RcTest.ReadSizes:RcTest.Atomics" \
		fd80::1 fd80::2
check "UD (QP1 included) and UC over IPv4" \
	gtest srdma_dgram_test "DgramTest.Ud*:DgramTest.Uc*" 10.80.0.1 10.80.0.2
check "UD and UC over IPv6" \
	gtest srdma_dgram_test "DgramTest.UdSendSizes*:DgramTest.UcSend*" \
		fd80::1 fd80::2
check "SEND with invalidate" gtest srdma_mem_test \
	"MemTest.Type2SendWithInvalidateThenLocalInvalidate" 10.80.0.1 10.80.0.2
run() {
	local name=$1
	shift
	check "$name: $*" pt_run "$name" peer srdma_s "" "$dev_a" 10.80.0.2 "$@"
	PT_PORT=$((PT_PORT + PT_RETRIES + 1))
}
run write_bw ib_write_bw -s 3000 -n 50
run read_bw ib_read_bw -s 3000 -n 50
run send_bw_ud ib_send_bw -c UD -s 1024 -n 50
rping_pair() {
	local spid rc
	ip netns exec peer timeout 30 rping -s -a 10.80.0.2 -C 3 \
		>"$log/rping.srv" 2>&1 &
	spid=$!
	sleep 2
	timeout 30 rping -c -a 10.80.0.2 -C 3 >"$log/rping.cli" 2>&1
	rc=$?
	wait "$spid" && [ $rc = 0 ]
}
check "rping (rdma_cm: CM MADs on QP1)" rping_pair
capture_stop
cp /tmp/wire-softrdma.pcap "$log/" 2>/dev/null
# RC: SEND FIRST/MIDDLE/LAST/ONLY and LAST/ONLY with immediate, WRITE
# FIRST/MIDDLE/LAST/ONLY and LAST/ONLY with immediate, READ request and
# responses, ACK, atomic ACK, CMP_SWAP, FETCH_ADD, SEND ONLY with
# invalidate; UC: SEND FIRST/MIDDLE/LAST/ONLY, WRITE FIRST/MIDDLE, LAST
# and ONLY with immediate; UD: SEND ONLY with and without immediate (QP1's
# MADs among them). AETH: ACKs, RNR NAKs, remote access NAKs, and ACKs
# with end-to-end credits (IBTA C9-150.2.1: QPs without an SRQ).
check_capture softrdma "$log/wire-softrdma.pcap" \
	0x00,0x01,0x02,0x03,0x04,0x06,0x07,0x08,0x09,0x0a,0x0b,0x0c,0x0d,0x0e,0x0f,0x10,0x11,0x12,0x13,0x14,0x17,0x20,0x21,0x22,0x24,0x26,0x27,0x29,0x2b,0x64,0x65 \
	0x00,0x20,0x62 --expect-credits

check "rdma link delete srdma_c" rdma link delete srdma_c
if [ "${SRDMA_KUNIT:-0}" = 1 ]; then
	skip "rdma_rxe against softrdma on the wire" \
		"rdma_rxe is no peer on the test kernel"
else
	failed=$tap_failed
	check "rdma_rxe loads" modprobe rdma_rxe
	[ "$tap_failed" != "$failed" ] ||
		check "device rxe_c (rdma_rxe) on veth0" \
			rdma link add rxe_c type rxe netdev veth0
	[ "$tap_failed" != "$failed" ] ||
		check "RoCEv2 GID of 10.80.0.1 on rxe_c" wait_gid rxe_c 10.80.0.1
	if [ "$tap_failed" = "$failed" ]; then
		dev_a=rxe_c kind_a=rxe
		capture_start /tmp/wire-rxe.pcap
		check "capture starts (rdma_rxe to softrdma)" \
			test -s /tmp/wire-rxe.pcap
		check "RC operations, rdma_rxe to softrdma" \
			gtest srdma_rc_test "RcTest.SendSizes:RcTest.ReadSizes:RcTest.Atomics:RcTest.WriteWithImmediate" \
				10.80.0.1 10.80.0.2
		run write_bw_rxe ib_write_bw -s 3000 -n 50
		capture_stop
		cp /tmp/wire-rxe.pcap "$log/" 2>/dev/null
		check_capture rdma_rxe "$log/wire-rxe.pcap" \
			0x00,0x01,0x02,0x04,0x06,0x07,0x08,0x09,0x0c,0x0d,0x0e,0x0f,0x10,0x11,0x12,0x13,0x14 \
			0x00
		check "rdma link delete rxe_c" rdma link delete rxe_c
	fi
	grep -q '^rdma_rxe ' /proc/modules &&
		check "rdma_rxe unloads" modprobe -r rdma_rxe
fi

check "rdma link delete srdma_s" ip netns exec peer rdma link delete srdma_s
check "netns removal" ip netns del peer
ip link del veth0 2>/dev/null
check "kernel logged no warning" kernel_clean_since "$mark"
tap_finish
