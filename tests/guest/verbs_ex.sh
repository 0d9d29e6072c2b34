#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Extended verbs suite (build/tests/srdma_verbs_ex_test): ibv_create_cq_ex
# and extended polling, the ibv_wr_* API, ibv_resize_cq, completion
# channels, threads and fork, between two softrdma devices:
#
#   init netns                              netns "peer"
#   dev_init -- veth0 10.80.0.1/24 ======= veth1 10.80.0.2/24 -- dev_peer
#
# tests/guest/pair.sh sets the devices up and runs the binary; its TAP is
# kept as comments here. Prints TAP; the gtest XML and text are
# $SRDMA_OUT/verbs_ex_test-softrdma-softrdma.{xml,txt}.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/guest/lib.sh
. tests/guest/lib.sh

out=${SRDMA_OUT:-/tmp}
mark=$(dmesg_mark)

# rdma_rxe (6.1) holds UDP port 4791 in the init netns, where dev_init goes.
if grep -q '^rdma_rxe ' /proc/modules; then
	check "rdma_rxe unloaded: it holds UDP 4791 in the init netns" modprobe -r rdma_rxe
fi
tests/guest/pair.sh srdma_verbs_ex_test softrdma softrdma >"$out/verbs_ex-pair.log" 2>&1
rc=$?
sed 's/^/# /' "$out/verbs_ex-pair.log"
check "extended verbs suite, softrdma <-> softrdma" test "$rc" = 0
check "kernel logged no warning" kernel_clean_since "$mark"
tap_finish
