#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Teardown under load: a device goes away while 8 RC QPs carry traffic.
#
#   init netns (client)                        netns "peer" (server)
#   dev_c -- veth0 10.80.0.1/24 ========== veth1 10.80.0.2/24 -- dev_s
#
# ib_write_bw -q 8 runs for up to 60 s between dev_c and dev_s; once it
# moves, one of
#   1. rdma link delete dev_s      (the server's device)
#   2. rdma link delete dev_c      (the client's device)
#   3. ip link del veth1           (the server's netdev, and the pair)
# The removal must finish within 20 s (60 s for rdma_rxe's teardown, last)
# although processes hold the device
# (they are disassociated: their rings stop, IBV_EVENT_DEVICE_FATAL), the
# device must be gone, and the processes must end (by themselves or when
# killed: a disassociated process may spin on a ring that no longer moves).
# Where the server vanished, the client's WQEs must have ended with
# IBV_WC_RETRY_EXC_ERR. On the stock kernels, last, the peer's whole
# driver goes away:
#   4. rdma_rxe serves on veth0 (init netns), a softrdma client on veth1;
#      the server process is killed, its device deleted and rdma_rxe
#      unloaded: the softrdma client ends with IBV_WC_RETRY_EXC_ERR.
# Last, rmmod and a clean kernel log. Prints TAP; logs in $SRDMA_OUT/teardown.
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
log=$out/teardown
mark=$(dmesg_mark)
mkdir -p "$log"

check "provider installed" cmake --install "$build"
grep -q '^softrdma ' /proc/modules || check "module loads" load_module "$module"
if grep -q '^rdma_rxe ' /proc/modules; then
	check "rdma_rxe unloaded" modprobe -r rdma_rxe
fi
ip netns add peer

setup() {
	ip link add veth0 type veth peer name veth1 netns peer &&
		ip addr add 10.80.0.1/24 dev veth0 &&
		ip link set veth0 up &&
		ip -n peer addr add 10.80.0.2/24 dev veth1 &&
		ip -n peer link set veth1 up &&
		ip -n peer link set lo up &&
		rdma link add dev_c type softrdma netdev veth0 &&
		ip netns exec peer rdma link add dev_s type softrdma netdev veth1 &&
		wait_gid dev_c 10.80.0.1 && wait_gid dev_s 10.80.0.2 &&
		ping -c 1 -W 5 10.80.0.2 >/dev/null
}

gone() {	# DEV: no such device any more, in any namespace
	! rdma link show 2>/dev/null | grep -q "link $1/" &&
		! ip netns exec peer rdma link show 2>/dev/null | grep -q "link $1/"
}

# The ends of the traffic: "NETNS DEV IP" ("-" is the init netns).
srv_end="peer dev_s 10.80.0.2" cli_end="- dev_c 10.80.0.1"

tx_over() {	# N: the client's device has sent more than N packets
	local dev
	read -r _ dev _ <<<"$cli_end"
	[ "$(rdma statistic show link "$dev/1" 2>/dev/null |
		tr ' ' '\n' | grep -A1 '^tx_packets$' | tail -n 1)" -gt "$1" ]
}

# load NAME REMOVAL-CMD...: traffic, then the removal while it runs,
# which may take removal_limit seconds.
port=18800 removal_limit=20
load() {
	local name=$1 spid cpid t rc=0 sns sdev sip cns cdev cip
	local limit=$removal_limit
	shift
	read -r sns sdev sip <<<"$srv_end"
	read -r cns cdev cip <<<"$cli_end"
	[ "$sns" != - ] || sns=""
	[ "$cns" != - ] || cns=""
	port=$((port + 1))
	in_ns "$sns" timeout 90 stdbuf -oL ib_write_bw -d "$sdev" -x "$(gid_index "$sdev" "$sip")" \
		-p $port -q 8 -D 60 -F >"$log/$name.srv" 2>&1 &
	spid=$!
	sleep 2
	in_ns "$cns" timeout 90 stdbuf -oL ib_write_bw -d "$cdev" -x "$(gid_index "$cdev" "$cip")" \
		-p $port -q 8 -D 60 -F "$sip" >"$log/$name.cli" 2>&1 &
	cpid=$!
	# Traffic flows: the client's device has sent thousands of packets
	# (perftest takes a few seconds to start, many more under KASAN).
	if ! wait_for 60 tx_over 1000; then
		echo "$name: the traffic did not start"
		tail -n 5 "$log/$name.cli" "$log/$name.srv"
		rc=1
	fi
	if ! timeout "$limit" "$@"; then
		echo "$name: removal failed or took over $limit s: $*"
		rc=1
	fi
	# The processes end: by themselves (an error, or their 30 s), or
	# killed after 40 s.
	t=400
	while [ $t -gt 0 ] && { kill -0 $spid 2>/dev/null || kill -0 $cpid 2>/dev/null; }; do
		sleep 0.1
		t=$((t - 1))
	done
	stop_traffic "$sdev" "$cdev" $spid $cpid
	return $rc
}

# stop_traffic SDEV CDEV PID...: end the ib_write_bw of both devices
# and the timeout above each, found by name: a signal to the background
# job's PID reaches only the shell running it, which would leave its
# ib_write_bw running and holding the module. SIGTERM first, then, for a
# process that outlives it by 2 s, SIGKILL.
stop_traffic() {
	local pat="ib_write_bw -d ($1|$2) " t=20
	shift 2
	pkill -f "$pat" 2>/dev/null
	while [ $t -gt 0 ] && pgrep -f "$pat" >/dev/null; do
		sleep 0.1
		t=$((t - 1))
	done
	pkill -9 -f "$pat" 2>/dev/null
	wait "$@" 2>/dev/null
}

# retry_exceeded NAME: the client's WQEs ended with IBV_WC_RETRY_EXC_ERR
# (perftest: "Failed status 12").
retry_exceeded() {
	grep -q "Failed status 12" "$log/$1.cli" ||
		{ tail -n 5 "$log/$1.cli"; return 1; }
}

check "set up dev_c and dev_s" setup
check "rdma link delete dev_s under traffic" load del_srv \
	ip netns exec peer rdma link delete dev_s
check "dev_s is gone" gone dev_s
check "the client's WQEs ended with IBV_WC_RETRY_EXC_ERR" retry_exceeded del_srv
ip link del veth0 2>/dev/null
rdma link delete dev_c 2>/dev/null

check "set up again" setup
check "rdma link delete dev_c under traffic" load del_cli rdma link delete dev_c
check "dev_c is gone" gone dev_c
ip netns exec peer rdma link delete dev_s 2>/dev/null
ip link del veth0 2>/dev/null

check "set up again" setup
check "netdev removal (veth1) under traffic" load del_netdev \
	ip -n peer link del veth1
check "dev_s went with its netdev" wait_for 10 gone dev_s
check "dev_c went with its netdev (the veth pair)" wait_for 10 gone dev_c

# rdma_rxe of 6.1 has known use-after-free bugs that KASAN reports: the
# rxe case runs on the stock kernels only.
# (load runs the removal under timeout, so a command, not a function; the
# pattern's [s] keeps pkill from matching the sh -c running it.)
# The server may be gone already: against rdma_rxe of 6.12, which drops
# many packets under 8 QPs, the client can exhaust its retries before the
# removal and the server then ends when the client does; the removal of
# the device and the module is what is tested, not the kill.
peer_module_gone=(sh -c 'pkill -9 -f "ib_write_bw -d rxe_[s]"; sleep 1;
	rdma link delete rxe_s && modprobe -r rdma_rxe')
if [ "${SRDMA_KUNIT:-0}" = 1 ]; then
	skip "the peer's driver unloaded under traffic" "no rdma_rxe on the test kernel"
else
	srv_end="- rxe_s 10.80.0.1" cli_end="peer dev_c 10.80.0.2"
	check "set up rxe_s (rdma_rxe) and dev_c" sh -c '
		modprobe rdma_rxe &&
		ip link add veth0 type veth peer name veth1 netns peer &&
		ip addr add 10.80.0.1/24 dev veth0 && ip link set veth0 up &&
		ip -n peer addr add 10.80.0.2/24 dev veth1 &&
		ip -n peer link set veth1 up &&
		rdma link add rxe_s type rxe netdev veth0 &&
		ip netns exec peer rdma link add dev_c type softrdma netdev veth1 &&
		ip netns exec peer ping -c 1 -W 5 10.80.0.1 >/dev/null'
	check "RoCEv2 GIDs of rxe_s and dev_c" eval \
		'wait_gid rxe_s 10.80.0.1 && wait_gid dev_c 10.80.0.2'
	# The time is rdma_rxe's own teardown, which has taken over 20 s
	# under TCG: softrdma is checked by the retry-exceeded step.
	removal_limit=60
	check "the peer's process killed, its device deleted, rdma_rxe unloaded, under traffic" \
		load rxe_gone "${peer_module_gone[@]}"
	removal_limit=20
	check "the softrdma client's WQEs ended with IBV_WC_RETRY_EXC_ERR" \
		retry_exceeded rxe_gone
	ip netns exec peer rdma link delete dev_c 2>/dev/null
	ip link del veth0 2>/dev/null
fi

check "netns removal" ip netns del peer
check "rmmod softrdma" rmmod softrdma
check "kernel logged no warning" kernel_clean_since "$mark"
tap_finish
