// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// End-to-end flow control (IBTA 9.7.7.2), part of srdma_rc_test: A is the
// requester, B the responder. A softrdma responder puts its receive queue's
// credits into every ACK (C9-150.2.1); a softrdma requester sends a request
// that would consume a receive WQE beyond them alone, one packet with
// AckReq, and waits for the ACK (C9-162, C9-163). It counts such requests
// in tx_limited_packets (per packet). rdma_rxe sends no credits (the "invalid" code),
// which lifts the limit for the rest of the connection.
//
// Topology and environment as for rc_test.cc (tests/guest/pair.sh).

#include <infiniband/verbs.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "verbs_pair.h"

namespace {

using namespace srdma_test;

class CreditTest : public PairFixture {
 protected:
  void SetUp() override {
    PairFixture::SetUp();
    if (HasFatalFailure()) return;
    if (!SoftA())
      GTEST_SKIP() << "the requester under test is softrdma's";
    b_credits_ = SoftB();
    ASSERT_TRUE(MakeEnd(a_dev_, &a_, 1 << 16));
    ASSERT_TRUE(MakeEnd(b_dev_, &b_, 1 << 16));
    ConnOpts o;
    o.min_rnr_timer = 1;  // 0.01 ms
    ASSERT_EQ(Connect(&a_, &b_, mtu_, o), 0);
    ASSERT_EQ(Connect(&b_, &a_, mtu_, o), 0);
  }

  long Limited() { return ReadCounter(a_dev_->ctx, "tx_limited_packets"); }

  void PostRecv(uint64_t id, size_t off, size_t len) {
    ASSERT_EQ(srdma_test::PostRecv(b_, off, len, id), 0);
  }

  // @op from A to B at @off of both buffers; immediate data @id.
  void PostSend(ibv_wr_opcode op, uint64_t id, size_t off, size_t len) {
    ASSERT_EQ(srdma_test::PostSend(a_, op, off, len, id, (uintptr_t)b_.buf.data() + off,
                                   b_.mr->rkey, IBV_SEND_SIGNALED, uint32_t(id)),
              0);
  }

  bool b_credits_ = true;
  End a_, b_;
};

// C9-156: before the responder's first ACK the requester has no credit; a
// message of several packets starts with one packet alone, then goes on
// once the ACK says the receive WQE is there.
TEST_F(CreditTest, FirstSendOfAConnectionStartsAlone) {
  const size_t len = 3 * (128u << mtu_) + 100;
  const long before = Limited();
  ASSERT_GE(before, 0) << "no tx_limited_packets counter";
  Fill(a_.buf, 0, len, 3);
  PostRecv(1, 0, len);
  PostSend(IBV_WR_SEND, 1, 0, len);
  auto sw = Poll(a_.cq, 1);
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(sw[0].status);
  auto rw = Poll(b_.cq, 1);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].byte_len, len);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), len), 0);
  EXPECT_EQ(Limited(), before + 1);
}

// C9-162: SENDs beyond the credits wait; WRITEs without immediate consume
// no receive WQE and go regardless, in order. B has two receives posted
// and reposts four more 100 ms later: every message arrives, in order,
// and the requester reported limited requests rather than sending
// everything into RNR NAKs.
TEST_F(CreditTest, SendsBeyondTheCreditsWaitForThem) {
  constexpr int kSends = 6;
  const long before = Limited();
  for (int i = 0; i < 2; i++) PostRecv(i, 4096 * i, 4096);
  Fill(a_.buf, 0, 4096 * (kSends + 1), 9);
  for (int i = 0; i < kSends; i++) PostSend(IBV_WR_SEND, i, 4096 * i, 64);
  PostSend(IBV_WR_RDMA_WRITE, kSends, 4096 * kSends, 4096);
  std::thread repost([&] {
    usleep(100000);
    for (int i = 2; i < kSends; i++) PostRecv(i, 4096 * i, 4096);
  });
  auto rw = Poll(b_.cq, kSends);
  repost.join();
  auto sw = Poll(a_.cq, kSends + 1);
  ASSERT_EQ(sw.size(), size_t(kSends + 1));
  for (int i = 0; i <= kSends; i++) {
    EXPECT_EQ(sw[i].wr_id, uint64_t(i));
    EXPECT_EQ(sw[i].status, IBV_WC_SUCCESS) << ibv_wc_status_str(sw[i].status);
  }
  ASSERT_EQ(rw.size(), size_t(kSends));
  for (int i = 0; i < kSends; i++) {
    EXPECT_EQ(rw[i].wr_id, uint64_t(i));
    EXPECT_EQ(std::memcmp(a_.buf.data() + 4096 * i, b_.buf.data() + 4096 * i, 64), 0);
  }
  EXPECT_EQ(std::memcmp(a_.buf.data() + 4096 * kSends, b_.buf.data() + 4096 * kSends, 4096), 0);
  // The first SEND and the third (no credit left) at least went alone.
  if (b_credits_) {
    EXPECT_GE(Limited(), before + 2);
  }
}

// A WRITE with immediate consumes a receive WQE: limited, it goes whole,
// with AckReq on its last packet (o9-99), and its data arrives intact.
TEST_F(CreditTest, LimitedWriteWithImmediateGoesWhole) {
  const size_t len = 2 * (128u << mtu_) + 8;
  const long before = Limited();
  Fill(a_.buf, 0, len, 5);
  PostRecv(7, 0, 0);
  PostSend(IBV_WR_RDMA_WRITE_WITH_IMM, 7, 0, len);
  auto sw = Poll(a_.cq, 1);
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(sw[0].status);
  auto rw = Poll(b_.cq, 1);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(ntohl(rw[0].imm_data), 7u);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), len), 0);
  EXPECT_EQ(Limited(), before + 3);
}

}  // namespace
