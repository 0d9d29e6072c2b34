// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// SQ polling (kernel/srdma_sqpoll.c), part of srdma_rc_test: A streams
// requests to B. When a process streams and another CPU is idle, a
// softrdma doorbell hands the QP to a poller on that CPU, which picks up
// new WQEs without doorbells until the stream pauses. These tests check
// what a process sees while a poller has its QP: every request arrives,
// completions come in order, and a QP destroyed or moved to the error
// state under a poller is let go cleanly (the suite then checks the
// kernel log).
//
// Topology and environment as for rc_test.cc (tests/guest/pair.sh).

#include <infiniband/verbs.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "verbs_pair.h"

namespace {

using namespace srdma_test;

constexpr uint32_t kDepth = 256;

// "Y" when softrdma is loaded with the SQ poller on.
bool SqPollOn() {
  FILE* f = std::fopen("/sys/module/softrdma/parameters/sq_poll", "r");
  char c = 0;
  if (!f) return false;
  if (std::fscanf(f, " %c", &c) != 1) c = 0;
  std::fclose(f);
  return c == 'Y' || c == '1';
}

class SqPollTest : public PairFixture {
 protected:
  void SetUp() override {
    PairFixture::SetUp();
    if (HasFatalFailure()) return;
    if (!SoftA())
      GTEST_SKIP() << "the requester under test is softrdma's";
  }

  // A fresh pair of connected QPs, A's SQ kDepth deep.
  void Pair(End* a, End* b, size_t bytes) {
    ASSERT_TRUE(MakeEnd(a_dev_, a, bytes, kDepth));
    ASSERT_TRUE(MakeEnd(b_dev_, b, bytes, kDepth));
    ASSERT_EQ(Connect(a, b, mtu_, ConnOpts()), 0);
    ASSERT_EQ(Connect(b, a, mtu_, ConnOpts()), 0);
  }

  // @n requests @op of @len bytes each, one in @every signaled, from A's
  // buffer to the same offsets of B's (READ: from B's to A's), the SQ kept
  // nearly full as perftest's bandwidth tests do: every signaled WQE
  // completes successfully and in order, and every byte arrives.
  void Stream(End* a, End* b, ibv_wr_opcode op, uint32_t n, uint32_t len, uint32_t every) {
    uint32_t posted = 0, done = 0;
    while (done < n) {
      while (posted < n && posted - done < kDepth - every) {
        const bool sig = (posted + 1) % every == 0 || posted + 1 == n;
        ASSERT_EQ(PostRdma(a, b, op, posted, size_t(posted) * len, len, sig), 0) << posted;
        posted++;
      }
      auto wc = Poll(a->cq, 1);
      ASSERT_FALSE(wc.empty()) << "no completion after " << done;
      for (const ibv_wc& c : wc) {
        ASSERT_EQ(c.status, IBV_WC_SUCCESS) << ibv_wc_status_str(c.status);
        ASSERT_GE(c.wr_id, done) << "completions out of order";
        done = uint32_t(c.wr_id) + 1;
      }
    }
    EXPECT_EQ(std::memcmp(a->buf.data(), b->buf.data(), a->buf.size()), 0);
  }

  // A Stream() on a fresh pair of QPs. With a second CPU idle (nothing
  // else runs in the guest) and no netem on the link, it is handed to a
  // poller; under loss the transport waits for ACKs instead, says so to
  // the provider, and is rung no doorbell to hand over. An rdma_rxe peer
  // runs its transport in kworkers on either CPU, so the poller may
  // rightly find its CPU busy: the hand-over is checked only between two
  // softrdma ends.
  void StreamHandedOver(ibv_wr_opcode op, uint32_t n, uint32_t len) {
    End a, b;
    ASSERT_NO_FATAL_FAILURE(Pair(&a, &b, size_t(n) * len));
    Fill(op == IBV_WR_RDMA_READ ? b.buf : a.buf, 0, size_t(n) * len, 17);
    const long before = ReadCounter(a_dev_->ctx, "sq_poll_handoffs");
    ASSERT_NO_FATAL_FAILURE(Stream(&a, &b, op, n, len, 32));
    if (SqPollOn() && SoftB() && sysconf(_SC_NPROCESSORS_ONLN) >= 2 &&
        Env("SRDMA_NETEM", "").empty()) {
      EXPECT_GT(ReadCounter(a_dev_->ctx, "sq_poll_handoffs"), before)
          << "a stream with an idle CPU was never handed to a poller";
    }
  }
};

// A stream of small WRITEs, one in 32 signaled.
TEST_F(SqPollTest, StreamOfWritesArrivesWhole) {
  StreamHandedOver(IBV_WR_RDMA_WRITE, 20000, 16);
}

// A stream of small READs, one in 32 signaled. Each READ may complete
// before its doorbell returns (the response comes back within the call),
// so the SQ rarely holds two outstanding WQEs; the unsignaled ones still
// say that the process is not waiting for them, and the stream goes to a
// poller as a stream of WRITEs does.
TEST_F(SqPollTest, StreamOfReadsArrivesWhole) {
  StreamHandedOver(IBV_WR_RDMA_READ, 8000, 64);
}

// Destroying a QP with a full SQ just posted, while a poller may be
// serving it: destroy waits for the poller to let go, and the next QP
// works. Many rounds, to meet the poller in each of its states.
TEST_F(SqPollTest, DestroyWhilePolled) {
  constexpr uint32_t kLen = 256;
  for (int round = 0; round < 30; round++) {
    End a, b;
    Pair(&a, &b, size_t(kDepth) * kLen);
    for (uint32_t i = 0; i < kDepth - 1; i++)
      ASSERT_EQ(PostRdma(&a, &b, IBV_WR_RDMA_WRITE, i, size_t(i) * kLen, kLen, i % 16 == 15), 0);
    // Some rounds wait a little: the poller then is mid-stream.
    if (round % 3)
      usleep(50 * (round % 7));
    ASSERT_EQ(ibv_destroy_qp(a.qp), 0) << "round " << round;
    a.qp = nullptr;
  }
  End a, b;
  Pair(&a, &b, 4096);
  Fill(a.buf, 0, 4096, 5);
  ASSERT_EQ(PostRdma(&a, &b, IBV_WR_RDMA_WRITE, 1, 0, 4096, true), 0);
  auto wc = Poll(a.cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(a.buf.data(), b.buf.data(), 4096), 0);
}

// Moving A to the error state under a poller: every WQE completes once,
// in order, those before the move successfully and the rest flushed
// (IBTA 10.3.1: no WQE is lost or completed twice).
TEST_F(SqPollTest, ErrorWhilePolledFlushesInOrder) {
  constexpr uint32_t kWrites = kDepth - 1, kLen = 1024;
  End a, b;
  Pair(&a, &b, size_t(kWrites) * kLen);
  for (uint32_t i = 0; i < kWrites; i++)
    ASSERT_EQ(PostRdma(&a, &b, IBV_WR_RDMA_WRITE, i, size_t(i) * kLen, kLen, true), 0);
  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE), 0);

  auto wc = Poll(a.cq, kWrites);
  ASSERT_EQ(wc.size(), size_t(kWrites));
  bool flushing = false;
  for (uint32_t i = 0; i < kWrites; i++) {
    EXPECT_EQ(wc[i].wr_id, i);
    if (wc[i].status == IBV_WC_WR_FLUSH_ERR) {
      flushing = true;
    } else {
      EXPECT_TRUE(!flushing && wc[i].status == IBV_WC_SUCCESS)
          << i << ": " << ibv_wc_status_str(wc[i].status);
    }
  }
  EXPECT_TRUE(Poll(a.cq, 1, 200).empty()) << "a WQE completed twice";
}

}  // namespace
