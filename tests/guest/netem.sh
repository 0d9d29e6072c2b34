#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The RC suite under network faults: tc netem on both directions of the
# veth pair (tests/guest/pair.sh --netem), softrdma at both ends:
#
#   loss 1%, loss 10%        go-back-N, ACK timeouts, implied NAKs
#   delay 1ms reorder 25%    PSN sequence NAKs, duplicates
#   duplicate 5%             duplicate requests and responses
#   corrupt 1%               bit errors: the ICRC drops them, retries follow
#   delay 20ms               a round trip longer than the early
#                            retransmission's least delay: nothing is sent
#                            twice (LongRoundTripIsNotSentTwice alone)
#
# Every data test of srdma_rc_test runs (every opcode, 0 B to
# SRDMA_LARGE_BYTES, default 4 MiB here, 512 messages in flight; byte for
# byte, in order, atomics applied once). The error-path tests are left
# out: a NAK that netem drops ends in a retry-exceeded error instead of the
# error the test expects, as IBTA says it must. So is the RNR matrix
# (RnrRetryTest): every RNR NAK or retried SEND that netem drops costs a
# local ACK timeout, which the error retry counter counts and an RNR NAK
# does not reload (IBTA 9.9.2.1.1), so a long RNR wait may end in
# IBV_WC_RETRY_EXC_ERR. The tail probe test counts ACK timeouts, which a
# lost probe or ACK causes, and the implied-ACK test retransmissions. Prints TAP.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/guest/lib.sh
. tests/guest/lib.sh

export SRDMA_LARGE_BYTES=${SRDMA_LARGE_BYTES:-4194304}
filter='*-*RemoteAccessError*:*InvalidRequest*:*ReceiveTooSmall*:*RnrRetryExceeded*:*RetryExceeded*:*PeerGone*:*RnrRetryTest*:*UnsignaledTail*:*ResponsesAcknowledge*'
for netem in "loss 1%" "loss 10%" "delay 1ms reorder 25% 50%" "duplicate 5%" \
	"corrupt 1%"; do
	start=$(date +%s)
	check "RC data suite under netem $netem" tests/guest/pair.sh \
		--netem "$netem" --filter "$filter" srdma_rc_test softrdma softrdma
	diag "netem $netem: $(($(date +%s) - start)) s"
done
check "RC round trip of 40 ms under netem delay 20ms" tests/guest/pair.sh \
	--netem "delay 20ms" --filter '*LongRoundTripIsNotSentTwice*' \
	srdma_rc_test softrdma softrdma
tap_finish
