#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# srdma_pingpong (tools/bench/srdma_pingpong.cc) on one softrdma device
# and on one rdma_rxe device, in one guest, alternating:
#
#   init netns
#     rxe0 ------- veth0 10.81.0.1/24 === veth1        rdma_rxe
#   netns "bl"
#     srdma_l ---- vl0 10.83.0.1/24 ===== vl1          softrdma
#
# Both QPs of each run are on one device, as in run-bench's rxe and
# softrdma-1dev columns. Run it in a guest with two CPUs:
#
#   tools/vm/run-guest --kernel 6.1 --append tsc=reliable --out DIR \
#       -- tools/bench/pingpong-guest.sh
#
# Environment: PINGPONG_ROUNDS (default 2), PINGPONG_ITERS (default
# 30000), SRDMA_KVER, SRDMA_BUILD, SRDMA_MODULE.
set -eu
cd "$(dirname "$0")/../.."
# shellcheck source=tests/guest/lib.sh
. tests/guest/lib.sh
# shellcheck source=tools/bench/lib.sh
. tools/bench/lib.sh

kver=${SRDMA_KVER:-$(uname -r)}
build=${SRDMA_BUILD:-build}
module=${SRDMA_MODULE:-build/kmod/$kver/softrdma.ko}
iters=${PINGPONG_ITERS:-30000}
pp=$build/tools/srdma_pingpong

cmake --install "$build" >/dev/null
grep -q '^softrdma ' /proc/modules || load_module "$module"
one_device_netns bl vl0 10.83.0.1/24
ip netns exec bl rdma link add srdma_l type softrdma netdev vl0
ip link add veth0 type veth peer name veth1
ip addr add 10.81.0.1/24 dev veth0
ip link set veth0 up
ip link set veth1 up
modprobe rdma_rxe
rdma link add rxe0 type rxe netdev veth0
wait_gid srdma_l 10.83.0.1 >/dev/null
wait_gid rxe0 10.81.0.1 >/dev/null
gs=$(gid_index srdma_l 10.83.0.1)
gr=$(gid_index rxe0 10.81.0.1)

for _ in $(seq "${PINGPONG_ROUNDS:-2}"); do
	ip netns exec bl "$pp" srdma_l "$gs" "$iters"
	"$pp" rxe0 "$gr" "$iters"
done

rdma link delete rxe0
ip link del veth0
ip netns exec bl rdma link delete srdma_l
ip netns del bl
