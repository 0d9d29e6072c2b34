#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# softrdma devices under the RDMA core's exclusive network namespace mode,
# where each device is visible in one namespace only:
#
#   netns na                                   netns nb
#   sa -- va 10.85.0.1/24 ================== vb 10.85.0.2/24 -- sb
#
# "rdma system set netns exclusive", then two devices, each added on its
# netdev and moved into that netdev's namespace ("rdma dev set DEV netns
# NS": the core resets every client of the device, uverbs included, which
# it allows only for drivers that can disassociate a process's context).
# Checks: each namespace sees its own device and no other, the initial
# namespace neither; ibv_rc_pingpong runs between the two namespaces;
# deleting a namespace with its process gone takes the veth pair, and
# with it both devices, away cleanly; the mode goes back to shared; the
# module unloads; the kernel logged no warning. Prints TAP.
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
log=$out/netns_exclusive
mark=$(dmesg_mark)
mkdir -p "$log"

check "provider installed" cmake --install "$build"
grep -q '^softrdma ' /proc/modules ||
	check "module loads" load_module "$module"
# The mode changes only while no namespace but the initial one exists, and
# a deleted namespace goes away asynchronously: wait_for. On the way out,
# whatever happened, the shared mode the other tests expect comes back.
restore() {
	ip netns del na 2>/dev/null
	ip netns del nb 2>/dev/null
	wait_for 10 rdma system set netns shared
}
trap restore EXIT
check "exclusive mode" wait_for 10 rdma system set netns exclusive
rdma system show | sed 's/^/# /'

ip netns add na
ip netns add nb
ip link add va netns na type veth peer name vb netns nb
ip -n na addr add 10.85.0.1/24 dev va
ip -n na link set va up
ip -n na link set lo up
ip -n nb addr add 10.85.0.2/24 dev vb
ip -n nb link set vb up
ip -n nb link set lo up

check "device sa on va" ip netns exec na rdma link add sa type softrdma netdev va
check "device sb on vb" ip netns exec nb rdma link add sb type softrdma netdev vb
check "sa into netns na" rdma dev set sa netns na
check "sb into netns nb" rdma dev set sb netns nb

# devs NS: the RDMA devices a namespace sees ("" for the initial one).
devs() {
	in_ns "$1" rdma dev | awk '{ sub(":", "", $2); print $2 }' | sort | xargs
}
check "netns na sees sa alone" test "$(devs na)" = sa
check "netns nb sees sb alone" test "$(devs nb)" = sb
check "the initial netns sees neither" test -z "$(devs "")"
# shellcheck disable=SC2016
check "libibverbs in netns na lists sa alone" sh -c \
	'[ "$(ip netns exec na ibv_devices | awk "NR > 2 { print \$1 }")" = sa ]'
# gid NS DEV IP: the index of IP's RoCEv2 GID, read from the sysfs that
# NS mounts (an exclusive-mode device is listed only there).
gid() {
	# shellcheck disable=SC2016
	ip netns exec "$1" bash -c '. tools/bench/lib.sh && wait_gid "$0" "$1"' "$2" "$3"
}
pingpong() {
	local gs gc spid rc
	gs=$(gid nb sb 10.85.0.2) && gc=$(gid na sa 10.85.0.1) || return 1
	ip netns exec nb timeout 60 ibv_rc_pingpong -d sb -g "$gs" -n 200 -c \
		>"$log/pingpong.srv" 2>&1 &
	spid=$!
	sleep 2
	ip netns exec na timeout 60 ibv_rc_pingpong -d sa -g "$gc" -n 200 -c \
		10.85.0.2 >"$log/pingpong.cli" 2>&1
	rc=$?
	wait "$spid" && [ $rc = 0 ]
}
check "ibv_rc_pingpong (data checked) from netns na to netns nb" pingpong
tail -n 2 "$log/pingpong.cli" | sed 's/^/# /'

# The veth pair goes with its first namespace; both devices with it.
gone() {
	local t=50
	while [ $t -gt 0 ]; do
		[ -z "$(devs nb)" ] && [ -z "$(devs "")" ] && return 0
		sleep 0.1
		t=$((t - 1))
	done
	return 1
}
check "netns na deleted" ip netns del na
check "both devices went with the veth pair" gone
check "netns nb deleted" ip netns del nb
check "shared mode again" wait_for 10 rdma system set netns shared
check "module unloads" rmmod softrdma
check "kernel logged no warning" kernel_clean_since "$mark"
tap_finish
