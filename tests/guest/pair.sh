#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run a GoogleTest binary that drives QPs between two RDMA devices:
#
#   init netns                                   netns "peer"
#   dev_init -- veth0 10.80.0.1/24 fd80::1/64 === veth1 10.80.0.2/24 fd80::2/64 -- dev_peer
#
#   pair.sh [options] TEST KIND_INIT KIND_PEER
#     TEST       a binary in build/tests (srdma_rc_test, srdma_hostile_test, ...)
#     KIND_*     softrdma or rxe; rdma_rxe of 6.1 binds UDP 4791 only in the
#                init netns, so rxe goes on dev_init
#     --swap     dev_peer drives as A (requester), dev_init as B
#     --ipv6     the QPs address each other by their IPv6 GIDs
#     --netem "ARGS"  impair both directions: tc qdisc ... netem ARGS on
#                veth0 and veth1 (loss, reordering, duplication, corruption)
#     --filter F     run only the tests gtest_filter F selects
#     --cmd-doorbell the provider rings with the uverbs command, not the
#                    doorbell file (SOFTRDMA_EVENTFD_DOORBELL=0)
#     --eventfd-doorbell the provider rings by the doorbell eventfd, not
#                    the doorbell file (SOFTRDMA_DOORBELL_FILE=0)
#   SRDMA_TEST_TIMEOUT   seconds the test binary may run (default 900)
#
# Prints TAP; the gtest XML and text go to $SRDMA_OUT/NAME.{xml,txt}, NAME
# being TEST-KIND_INIT-KIND_PEER[-swap][-v6], with the devices' counters.
# The test gets each end's device, address, kind and network namespace
# (SRDMA_{DEV,IP,KIND,NETNS}_{A,B}; an empty namespace is the initial one),
# and the netem arguments in SRDMA_NETEM (empty without --netem).
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/guest/lib.sh
. tests/guest/lib.sh

swap="" v6="" netem="" filter="*" cmddb="" efddb=""
while [ $# -gt 0 ]; do
	case $1 in
	--swap) swap=1 ;;
	--ipv6) v6=1 ;;
	--netem) netem=${2:?}; shift ;;
	--filter) filter=${2:?}; shift ;;
	--cmd-doorbell) cmddb=1; export SOFTRDMA_EVENTFD_DOORBELL=0 ;;
	--eventfd-doorbell) efddb=1; export SOFTRDMA_DOORBELL_FILE=0 ;;
	*) break ;;
	esac
	shift
done
test_bin=${1:?test binary} kind_a=${2:-softrdma} kind_b=${3:-softrdma}
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
ip -6 addr add fd80::1/64 dev veth0 nodad
ip link set veth0 up
ip -n peer addr add 10.80.0.2/24 dev veth1
ip -n peer -6 addr add fd80::2/64 dev veth1 nodad
ip -n peer link set veth1 up
ip -n peer link set lo up
# Resolve the neighbours now: the core resolves a QP's destination MAC at
# the move to RTR and gives up after one second (ETIMEDOUT), which a loaded
# TCG guest can take for IPv6 neighbour discovery.
resolve_neighbours() {
	local i
	for i in 1 2 3; do
		ping -c 1 -W 5 10.80.0.2 &&
			ping -6 -c 1 -W 5 fd80::2 &&
			ip netns exec peer ping -c 1 -W 5 10.80.0.1 &&
			ip netns exec peer ping -6 -c 1 -W 5 fd80::1 && return 0
	done
	return 1
}
check "neighbours resolve (ping, both directions, IPv4 and IPv6)" resolve_neighbours

add_dev() {	# KIND NAME NETDEV [netns]
	if [ -n "${4:-}" ]; then
		ip netns exec "$4" rdma link add "$2" type "$1" netdev "$3"
	else
		rdma link add "$2" type "$1" netdev "$3"
	fi
}
if [ -n "$netem" ]; then
	# shellcheck disable=SC2086
	check "netem $netem on both directions" sh -c \
		"tc qdisc add dev veth0 root netem $netem &&
		 ip netns exec peer tc qdisc add dev veth1 root netem $netem"
fi
check "device dev_init ($kind_a) on veth0" add_dev "$kind_a" dev_init veth0
check "device dev_peer ($kind_b) on veth1 in netns peer" add_dev "$kind_b" dev_peer veth1 peer

ip_init=10.80.0.1 ip_peer=10.80.0.2
[ -z "$v6" ] || { ip_init=fd80::1; ip_peer=fd80::2; }
slug=$(printf '%s' "$netem" | tr -c 'a-zA-Z0-9' '_')
name=${test_bin#srdma_}-$kind_a-$kind_b${swap:+-swap}${v6:+-v6}${netem:+-netem-$slug}${cmddb:+-cmddb}${efddb:+-efddb}
if [ -z "$swap" ]; then
	ends=(SRDMA_DEV_A=dev_init SRDMA_IP_A=$ip_init SRDMA_KIND_A="$kind_a"
	      SRDMA_NETNS_A=
	      SRDMA_DEV_B=dev_peer SRDMA_IP_B=$ip_peer SRDMA_KIND_B="$kind_b"
	      SRDMA_NETNS_B=peer)
else
	ends=(SRDMA_DEV_A=dev_peer SRDMA_IP_A=$ip_peer SRDMA_KIND_A="$kind_b"
	      SRDMA_NETNS_A=peer
	      SRDMA_DEV_B=dev_init SRDMA_IP_B=$ip_init SRDMA_KIND_B="$kind_a"
	      SRDMA_NETNS_B=)
fi
env "${ends[@]}" SRDMA_NETEM="$netem" timeout "${SRDMA_TEST_TIMEOUT:-900}" "$build/tests/$test_bin" --gtest_filter="$filter" \
	--gtest_output="xml:$out/$name.xml" >"$out/$name.txt" 2>&1
rc=$?
check "$test_bin: $kind_a <-> $kind_b${swap:+ (roles swapped)}${v6:+ over IPv6}${netem:+ under netem $netem}${cmddb:+, doorbell by command}${efddb:+, doorbell by eventfd}" test "$rc" = 0
[ "$rc" = 0 ] || grep -E "FAILED|Failure|Expected|Which is|status" "$out/$name.txt" | head -40 | sed 's/^/# /'
rdma statistic show link dev_init/1 >"$out/stats-$name-init.txt" 2>&1
rdma statistic show link dev_peer/1 >"$out/stats-$name-peer.txt" 2>&1

check "rdma link delete dev_init" rdma link delete dev_init
check "rdma link delete dev_peer" rdma link delete dev_peer
check "netns removal" ip netns del peer
# rdma_rxe of 6.1 holds UDP 4791 in the init netns while it is loaded.
if [ "$kind_a" = rxe ] || [ "$kind_b" = rxe ]; then
	check "rdma_rxe unloads" rmmod rdma_rxe
fi
check "kernel logged no warning" kernel_clean_since "$mark"
tap_finish
