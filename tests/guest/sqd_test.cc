// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Send Queue Drain (the SQD state, IBTA chapter 10), part of
// srdma_rc_test. A QP moved to SQD starts no new message; the messages
// already started go on to the end, retried and timed as in RTS (C9-139),
// and once they are acknowledged the SQ Drained event comes, if it was
// asked for. Back in RTS the WQEs held back go.
//
//   dev A: QP a --- WRITE 1 (large, in flight) ---> dev B: QP b
//                   [a to SQD], WRITE 2 posted
//               <-- ACKs: WRITE 1 completes, then IBV_EVENT_SQ_DRAINED
//                   WRITE 2 waits
//                   [a to RTS]
//               --- WRITE 2 --->
//
// Topology and environment as for rc_test.cc (tests/guest/pair.sh).

#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "verbs_pair.h"

namespace {

using namespace srdma_test;

constexpr size_t kBig = 4 << 20, kSmall = 4096;

class SqdTest : public PairFixture {
 protected:
  void SetUp() override {
    PairFixture::SetUp();
    if (HasFatalFailure()) return;
    if (!SoftA()) GTEST_SKIP() << "the requester under test is softrdma's";
  }

  static bool WaitDrained(ibv_context* ctx, ibv_qp* qp, int ms) {
    return WaitQpEvent(ctx, qp, IBV_EVENT_SQ_DRAINED, ms);
  }
};

// A large WRITE in flight when the QP enters SQD completes, the drain
// event follows it, and a WRITE posted in SQD waits for RTS. (Posted
// before, the second WRITE could start before the modify: an SQ poller
// takes it as soon as the first is sent.)
TEST_F(SqdTest, StartedMessageFinishesAndTheNextWaitsForRts) {
  End a, b;
  ASSERT_TRUE(MakeEnd(a_dev_, &a, kBig + kSmall, 16));
  ASSERT_TRUE(MakeEnd(b_dev_, &b, kBig + kSmall, 16));
  ASSERT_EQ(Connect(&a, &b, mtu_, ConnOpts()), 0);
  ASSERT_EQ(Connect(&b, &a, mtu_, ConnOpts()), 0);
  Fill(a.buf, 0, a.buf.size(), 23);
  a.buf[0] = 0x5a;

  ASSERT_EQ(PostRdma(&a, &b, IBV_WR_RDMA_WRITE, 1, 0, kBig), 0);
  // The WRITE has started once its first byte is at B.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (((volatile uint8_t*)b.buf.data())[0] != 0x5a)
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "WRITE 1 never began";

  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_SQD;
  attr.en_sqd_async_notify = 1;
  ASSERT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY), 0);
  ASSERT_EQ(PostRdma(&a, &b, IBV_WR_RDMA_WRITE, 2, kBig, kSmall), 0);

  ASSERT_TRUE(WaitDrained(a_dev_->ctx, a.qp, 120000)) << "no IBV_EVENT_SQ_DRAINED";
  // WRITE 1 completed before the event, whole; WRITE 2 did not start.
  auto wc = Poll(a.cq, 2, 300);
  ASSERT_EQ(wc.size(), 1u) << "WRITE 2 ran in SQD, or WRITE 1 never completed";
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);
  EXPECT_EQ(std::memcmp(a.buf.data(), b.buf.data(), kBig), 0);
  EXPECT_TRUE(std::all_of(b.buf.begin() + kBig, b.buf.end(), [](uint8_t c) { return c == 0; }));

  ibv_qp_init_attr init;
  ASSERT_EQ(ibv_query_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_CUR_STATE, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_SQD);
  EXPECT_EQ(attr.sq_draining, 0) << "the drain is over";

  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  ASSERT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE), 0);
  wc = Poll(a.cq, 1);
  ASSERT_EQ(wc.size(), 1u) << "WRITE 2 never completed back in RTS";
  EXPECT_EQ(wc[0].wr_id, 2u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);
  EXPECT_EQ(std::memcmp(a.buf.data(), b.buf.data(), b.buf.size()), 0);
}

// With one READ allowed in flight (max_rd_atomic 1), a second READ posted
// behind a large one waits for the first: it has not begun when the QP
// enters SQD, so it waits for RTS, and the drain ends with the first.
// (It gets its PSNs only once the congestion window reaches it, near the
// end of the first READ: a modify that lands after that is the case
// srdma_swqe_begun() is for, which this test meets only by chance;
// ResponseTest.SqdWaitsNotForAReadHeldBackByTheLimit meets it always.)
TEST_F(SqdTest, ReadHeldBackByTheLimitWaitsForRts) {
  End a, b;
  ASSERT_TRUE(MakeEnd(a_dev_, &a, kBig + kSmall, 16));
  ASSERT_TRUE(MakeEnd(b_dev_, &b, kBig + kSmall, 16));
  ConnOpts o;
  o.rd_atomic = 1;
  ASSERT_EQ(Connect(&a, &b, mtu_, o), 0);
  ASSERT_EQ(Connect(&b, &a, mtu_, o), 0);
  Fill(b.buf, 0, b.buf.size(), 31);
  b.buf[0] = 0x5a;
  b.buf[kBig - 1] = 0xa5;

  ASSERT_EQ(PostRdma(&a, &b, IBV_WR_RDMA_READ, 1, 0, kBig), 0);
  ASSERT_EQ(PostRdma(&a, &b, IBV_WR_RDMA_READ, 2, kBig, kSmall), 0);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (((volatile uint8_t*)a.buf.data())[0] != 0x5a)
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "READ 1 never began";

  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_SQD;
  attr.en_sqd_async_notify = 1;
  ASSERT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY), 0);
  // READ 1 completes with its last response, which places its last byte:
  // while that byte is missing after the modify, the QP entered SQD with
  // READ 1 unfinished. Otherwise READ 2 may rightly have gone in RTS.
  const bool read1_over = ((volatile uint8_t*)a.buf.data())[kBig - 1] == 0xa5;
  ASSERT_TRUE(WaitDrained(a_dev_->ctx, a.qp, 120000)) << "no IBV_EVENT_SQ_DRAINED";
  if (read1_over) {
    Poll(a.cq, 2);
    GTEST_SKIP() << "READ 1 was over before the QP entered SQD: nothing to tell";
  }
  auto wc = Poll(a.cq, 2, 300);
  ASSERT_EQ(wc.size(), 1u) << "READ 2 began in SQD, or READ 1 never completed";
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);
  EXPECT_EQ(std::memcmp(a.buf.data(), b.buf.data(), kBig), 0);

  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  ASSERT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE), 0);
  wc = Poll(a.cq, 1);
  ASSERT_EQ(wc.size(), 1u) << "READ 2 never completed back in RTS";
  EXPECT_EQ(wc[0].wr_id, 2u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);
  EXPECT_EQ(std::memcmp(a.buf.data(), b.buf.data(), b.buf.size()), 0);
}

// A QP with nothing in flight drains at once; what is posted in SQD waits
// for RTS.
TEST_F(SqdTest, IdleQpDrainsAtOnce) {
  End a, b;
  ASSERT_TRUE(MakeEnd(a_dev_, &a, kSmall, 16));
  ASSERT_TRUE(MakeEnd(b_dev_, &b, kSmall, 16));
  ASSERT_EQ(Connect(&a, &b, mtu_, ConnOpts()), 0);
  ASSERT_EQ(Connect(&b, &a, mtu_, ConnOpts()), 0);
  Fill(a.buf, 0, a.buf.size(), 29);

  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_SQD;
  attr.en_sqd_async_notify = 1;
  ASSERT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY), 0);
  ASSERT_TRUE(WaitDrained(a_dev_->ctx, a.qp, 10000)) << "no IBV_EVENT_SQ_DRAINED";

  ASSERT_EQ(PostRdma(&a, &b, IBV_WR_RDMA_WRITE, 7, 0, kSmall), 0);
  EXPECT_TRUE(Poll(a.cq, 1, 300).empty()) << "a WRITE started in SQD";
  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  ASSERT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE), 0);
  auto wc = Poll(a.cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);
  EXPECT_EQ(std::memcmp(a.buf.data(), b.buf.data(), kSmall), 0);
}

}  // namespace
