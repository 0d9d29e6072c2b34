#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# rdma-core's own verbs test suite (Debian's python3-pyverbs ships it in
# /usr/share/doc/rdma-core/tests) against softrdma devices: an independent
# check of the verbs contract, written for hardware providers. Every test
# connects its QPs to others on the same device:
#
#   init netns
#     srdma_pv --- pv0 10.84.0.1/24 ===== pv1      the whole suite
#     srdma_pn --- eth0 10.87.0.1/24      its RDMA-CM tests again, over a
#                                         virtio NIC, when the guest has
#                                         one that is down and has no
#                                         address (run-guest --nic)
#
# The RDMA-CM tests look for the device's netdev in
# /sys/class/infiniband/DEV/device/net/, which a device has only under a
# NIC (over a virtio NIC, the NIC's virtio device is its parent): over the
# veth they skip themselves. Only they run over the NIC: with a netdev
# found, every test's set-up spawns processes to read its addresses, and
# the whole suite takes twenty times as long under TCG.
# Prints TAP, one line per test of the suite (its skips as SKIP); the
# suite's own output is $SRDMA_OUT/pyverbs.txt and pyverbs-nic.txt. The
# tests of other vendors' devices (mlx5, EFA) skip themselves.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/guest/lib.sh
. tests/guest/lib.sh

kver=${SRDMA_KVER:-$(uname -r)}
module=${SRDMA_MODULE:-build/kmod/$kver/softrdma.ko}
out=${SRDMA_OUT:-/tmp}
suite=/usr/share/doc/rdma-core/tests
work=$(mktemp -d /tmp/pyverbs.XXXXXX)
mark=$(dmesg_mark)

# A virtio NIC nobody set up.
nic=
if [ "$(basename "$(readlink /sys/class/net/eth0/device/subsystem)")" = virtio ] &&
	[ -z "$(ip -o addr show dev eth0 2>/dev/null)" ]; then
	nic=eth0
fi

cleanup() {
	rdma link del srdma_pv 2>/dev/null
	rdma link del srdma_pn 2>/dev/null
	ip link del pv0 2>/dev/null
	if [ -n "$nic" ]; then
		ip addr flush dev "$nic" 2>/dev/null
		ip link set "$nic" down 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT

if [ ! -f "$suite/run_tests.py" ]; then
	skip "rdma-core's verbs suite" "python3-pyverbs is not installed"
	tap_finish
	exit
fi
# The suite is installed as documentation: some modules are compressed.
cp -r "$suite" "$work/tests"
gunzip -f "$work"/tests/*.gz

# The provider where libibverbs looks for it (the guest's root is an
# overlay: the host's stays as it is).
check "provider installed" cmake --install "${SRDMA_BUILD:-build}"
# rdma_rxe (6.1) holds UDP port 4791 in the init netns.
if grep -q '^rdma_rxe ' /proc/modules; then
	check "rdma_rxe unloaded: it holds UDP 4791 in the init netns" modprobe -r rdma_rxe
fi
grep -q '^softrdma ' /proc/modules ||
	check "softrdma loads" load_module "$module"
ip link add pv0 type veth peer name pv1
ip addr add 10.84.0.1/24 dev pv0
ip link set pv0 up
ip link set pv1 up
check "rdma link add srdma_pv on pv0" rdma link add srdma_pv type softrdma netdev pv0
# The suite looks for a GID of the address (IPv4-mapped).
check "srdma_pv has a GID of 10.84.0.1" wait_for 10 \
	grep -q ':ffff:0a54:0001' -r /sys/class/infiniband/srdma_pv/ports/1/gids/

# run_suite DEV LOG [MODULE...]: the suite's TAP lines, named DEV:test.
run_suite() {
	local dev=$1 log=$2 name=unnamed line rc
	shift 2
	(cd "$work/tests" && timeout 900 python3 run_tests.py --dev "$dev" -v "$@") \
		>"$log" 2>&1
	rc=$?
	# unittest -v: "test_x (tests.mod.Class.test_x)", then, on that line
	# or after its docstring's first line, "... ok", "... skipped 'why'",
	# "... FAIL" or "... ERROR".
	while IFS= read -r line; do
		if [[ $line =~ ^(test[A-Za-z0-9_]*)\ \(tests\.([A-Za-z0-9_.]*)\) ]]; then
			name=${BASH_REMATCH[2]}
		fi
		case $line in
		*" ... ok")
			tap_n=$((tap_n + 1)); echo "ok $tap_n - $dev: $name" ;;
		*" ... skipped "*)
			tap_n=$((tap_n + 1))
			echo "ok $tap_n - $dev: $name # SKIP ${line##* ... skipped }" ;;
		*" ... FAIL" | *" ... ERROR" | *" ... unexpected success")
			tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1))
			echo "not ok $tap_n - $dev: $name" ;;
		esac
	done <"$log"
	# A failure's traceback, from the summary at the end.
	awk '/^(FAIL|ERROR): /{ p = 1 } p' "$log" | head -n 200 | sed 's/^/# /'
	check "rdma-core's suite on $dev ran to the end and passed ($(tail -n 3 "$log" | grep -E '^(OK|FAILED)' || echo "exit $rc"))" \
		test "$rc" = 0
}

run_suite srdma_pv "$out/pyverbs.txt"

if [ -n "$nic" ]; then
	failed=$tap_failed
	check "$nic up with 10.87.0.1/24" sh -c \
		"ip addr add 10.87.0.1/24 dev $nic && ip link set $nic up"
	check "rdma link add srdma_pn on $nic" \
		rdma link add srdma_pn type softrdma netdev "$nic"
	check "srdma_pn's parent device is $nic's" \
		test -e /sys/class/infiniband/srdma_pn/device/net/"$nic"
	check "srdma_pn has a GID of 10.87.0.1" wait_for 10 \
		grep -q ':ffff:0a57:0001' -r /sys/class/infiniband/srdma_pn/ports/1/gids/
	if [ "$tap_failed" = "$failed" ]; then
		run_suite srdma_pn "$out/pyverbs-nic.txt" test_rdmacm
	fi
else
	skip "rdma-core's RDMA-CM tests over a NIC" "the guest has no NIC to spare"
fi
check "kernel logged no warning" kernel_clean_since "$mark"
tap_finish
