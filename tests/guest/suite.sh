#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The guest side of tests/run: every guest test, results in $SRDMA_OUT.
#
#   SRDMA_KUNIT=1 (test kernel): load the module once to run its KUnit
#   suites and keep their KTAP (kunit-SUITE.ktap), then unload it.
#   Then tests/guest/device.sh (device.tap), the extended verbs suite
#   (verbs_ex.tap), rdma-core's own verbs suite (pyverbs.tap), and the
#   two-device suites through tests/guest/pair.sh: the RC transport suite with softrdma at
#   both ends over IPv4 and IPv6 and with rdma_rxe as the peer in both
#   roles, and the hostile-process suite (pair-*.tap, *.xml); the RC and
#   datagram suites on one device (loopback.tap); perftest and
#   rdma-core's examples (perftest.tap); rdma_cm and its tools (cm.tap);
#   captures of the wire checked by tools of their own (wire.tap); the
#   exclusive netns mode (netns_exclusive.tap); NVMe over Fabrics and NFS
#   over RDMA (nvmeof.tap, nfsrdma.tap).
#
# Exits 0 when every test passed.
set -u
cd "$(dirname "$0")/../.." || exit 1
kver=${SRDMA_KVER:-$(uname -r)}
module=${SRDMA_MODULE:-build/kmod/$kver/softrdma.ko}
out=${SRDMA_OUT:-/tmp}
rc=0
# KASAN and lockdep make the test kernel several times slower: smaller
# large messages there (the stock kernels move 64 MiB).
if [ "${SRDMA_KUNIT:-0}" = 1 ]; then
	export SRDMA_LARGE_BYTES=${SRDMA_LARGE_BYTES:-8388608}
	export SRDMA_QP_TIMEOUT=${SRDMA_QP_TIMEOUT:-18}
fi

if [ "${SRDMA_KUNIT:-0}" = 1 ]; then
	# shellcheck source=tests/guest/lib.sh
	. tests/guest/lib.sh
	if load_module "$module"; then
		found=0
		for d in /sys/kernel/debug/kunit/softrdma_*; do
			[ -r "$d/results" ] || continue
			cp "$d/results" "$out/kunit-$(basename "$d").ktap"
			found=1
		done
		rmmod softrdma || rc=1
		if [ $found = 0 ]; then
			echo "suite: no KUnit results in debugfs" >&2
			echo "not ok 1 - KUnit suites ran" >"$out/kunit-missing.tap"
			rc=1
		fi
	else
		echo "not ok 1 - module with KUnit suites loads" >"$out/kunit-missing.tap"
		rc=1
	fi
fi

tests/guest/device.sh >"$out/device.tap" 2>&1 || rc=1
cat "$out/device.tap"
tests/guest/verbs_ex.sh >"$out/verbs_ex.tap" 2>&1 || rc=1
cat "$out/verbs_ex.tap"
tests/guest/pyverbs.sh >"$out/pyverbs.tap" 2>&1 || rc=1
cat "$out/pyverbs.tap"
# Per-namespace sockets, coexistence with rdma_rxe, garbage datagrams.
# About 7 minutes under TCG: on the 6.1 kernel only (it passes on 6.12 too:
# run tests/guest/net.sh there by hand).
if [ "${SRDMA_KVER#6.1.}" != "$SRDMA_KVER" ] && [ "${SRDMA_KUNIT:-0}" != 1 ]; then
	# It loads the module itself, to see what loading alone does.
	! grep -q '^softrdma ' /proc/modules || rmmod softrdma || rc=1
	tests/guest/net.sh >"$out/net.tap" 2>&1 || rc=1
	cat "$out/net.tap"
fi
runs=(
	"srdma_rc_test softrdma softrdma"
	"--ipv6 srdma_rc_test softrdma softrdma"
	"srdma_hostile_test softrdma softrdma"
	# The doorbells the doorbell file replaces: the uverbs command and
	# the eventfd
	"--cmd-doorbell --filter RcTest.SendSizes:RcTest.WriteSizes:RcTest.ReadSizes:RcTest.Atomics:RcTest.ModifyToErrorFlushesEveryOutstandingWqe srdma_rc_test softrdma softrdma"
	"--eventfd-doorbell --filter RcTest.SendSizes:RcTest.WriteSizes:RcTest.ReadSizes:RcTest.Atomics:RcTest.ModifyToErrorFlushesEveryOutstandingWqe srdma_rc_test softrdma softrdma"
	"--eventfd-doorbell --filter HostileTest.*Eventfd*:HostileTest.DestroyDoesNotWaitForADoorbellNotYetRun srdma_hostile_test softrdma softrdma"
	"srdma_dgram_test softrdma softrdma"
	"--ipv6 srdma_dgram_test softrdma softrdma"
	"srdma_mem_test softrdma softrdma"
	"srdma_cm_test softrdma softrdma"
	"--ipv6 srdma_cm_test softrdma softrdma"
)
# rdma_rxe of 6.1 has known use-after-free bugs that KASAN reports; it is a
# peer on the stock kernels only.
[ "${SRDMA_KUNIT:-0}" = 1 ] ||
	runs+=("srdma_rc_test rxe softrdma" "--swap srdma_rc_test rxe softrdma"
	       "srdma_dgram_test rxe softrdma" "--swap srdma_dgram_test rxe softrdma"
	       "srdma_mem_test rxe softrdma"
	       "srdma_cm_test rxe softrdma" "--swap srdma_cm_test rxe softrdma")
for run in "${runs[@]}"; do
	tap=$out/pair-${run// /}.tap
	tap=${tap//--/}
	# shellcheck disable=SC2086
	tests/guest/pair.sh $run >"$tap" 2>&1 || rc=1
	cat "$tap"
done
# Both ends on one device: softrdma's own loopback, then the IP stack.
tests/guest/loopback.sh >"$out/loopback.tap" 2>&1 || rc=1; cat "$out/loopback.tap"
tests/guest/perftest.sh >"$out/perftest.tap" 2>&1 || rc=1; cat "$out/perftest.tap"
tests/guest/cm.sh >"$out/cm.tap" 2>&1 || rc=1; cat "$out/cm.tap"
# The packets on the wire, captured and checked by tools of their own.
tests/guest/wire.sh >"$out/wire.tap" 2>&1 || rc=1; cat "$out/wire.tap"
# The RDMA core's exclusive network namespace mode; it unloads the module.
tests/guest/netns_exclusive.sh >"$out/netns_exclusive.tap" 2>&1 || rc=1
cat "$out/netns_exclusive.tap"
tests/guest/nvmeof.sh >"$out/nvmeof.tap" 2>&1 || rc=1; cat "$out/nvmeof.tap"
tests/guest/nfsrdma.sh >"$out/nfsrdma.tap" 2>&1 || rc=1; cat "$out/nfsrdma.tap"
# 200,000 mutated packets, 100,000 on the test kernel, where KASAN and
# lockdep under TCG handle about 700 a second (tests/guest/fuzz.sh sends a
# million by itself: a soak to run by hand).
if [ "${SRDMA_KUNIT:-0}" = 1 ]; then
	export SRDMA_FUZZ_PACKETS=${SRDMA_FUZZ_PACKETS:-100000}
else
	export SRDMA_FUZZ_PACKETS=${SRDMA_FUZZ_PACKETS:-200000}
fi
tests/guest/fuzz.sh >"$out/fuzz.tap" 2>&1 || rc=1; cat "$out/fuzz.tap"
tests/guest/teardown.sh >"$out/teardown.tap" 2>&1 || rc=1; cat "$out/teardown.tap"
# Network faults (about a minute and a half) and scale: on 6.1 only, like
# net.sh.
if [ "${SRDMA_KVER#6.1.}" != "$SRDMA_KVER" ] && [ "${SRDMA_KUNIT:-0}" != 1 ]; then
	tests/guest/netem.sh >"$out/netem.tap" 2>&1 || rc=1
	cat "$out/netem.tap"
	# 10,000 connected QPs per device, and 1,000 churn cycles (about six
	# minutes; SRDMA_CHURN_CYCLES=100000 for a soak).
	SRDMA_CHURN_CYCLES=${SRDMA_CHURN_CYCLES:-1000} \
		tests/guest/pair.sh srdma_scale_test softrdma softrdma \
		>"$out/scale.tap" 2>&1 || rc=1
	cat "$out/scale.tap"
fi
exit $rc
