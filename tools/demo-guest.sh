#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Guest side of tools/run-demo.
#
#   init netns                          netns "peer"
#   srdma0 -- veth0 10.80.0.1/24 ===== veth1 10.80.0.2/24 -- srdma1
#
set -euo pipefail
cd "$(dirname "$0")/.."
kver=$(uname -r)

run() {
	echo
	echo "\$ $*"
	"$@"
}

cmake --install build >/dev/null
# shellcheck source=tests/guest/lib.sh
. tests/guest/lib.sh
load_module "build/kmod/$kver/softrdma.ko"

ip netns add peer
ip link add veth0 type veth peer name veth1 netns peer
ip addr add 10.80.0.1/24 dev veth0
ip link set veth0 up
ip -n peer addr add 10.80.0.2/24 dev veth1
ip -n peer link set veth1 up
ip -n peer link set lo up

run rdma link add srdma0 type softrdma netdev veth0
run ip netns exec peer rdma link add srdma1 type softrdma netdev veth1
run rdma link show
run rdma dev show
run ibv_devices
run ibv_devinfo -v -d srdma0
echo
echo "\$ srdma_verbs_objects_test (PD, MR, CQ, QP on srdma0)"
SRDMA_DEV=srdma0 SRDMA_NETDEV=veth0 SRDMA_IPV4=10.80.0.1 \
	build/tests/srdma_verbs_objects_test --gtest_brief=1
run rdma link delete srdma0
run rmmod softrdma
run rdma dev show
echo
echo "demo: done"
