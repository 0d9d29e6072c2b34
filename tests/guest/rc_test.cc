// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// RC transport tests between two RDMA devices, run in a guest:
//
//   init netns                               netns "peer"
//   SRDMA_DEV_A -- veth (SRDMA_IP_A) ===== veth (SRDMA_IP_B) -- SRDMA_DEV_B
//
// One process drives both ends (devices are visible in every netns). Each
// device may be softrdma or rdma_rxe, so the same suite checks softrdma
// against itself and against rxe in both directions. Every operation's
// data is verified byte for byte.

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <poll.h>

#include <gtest/gtest.h>

#include "verbs_pair.h"

namespace {

using namespace srdma_test;

class RcTest : public PairFixture {
 protected:
  void Pair(size_t bytes, const ConnOpts& o = {}, uint32_t depth = 64) {
    ASSERT_TRUE(MakeEnd(a_dev_, &a_, bytes, depth));
    ASSERT_TRUE(MakeEnd(b_dev_, &b_, bytes, depth));
    ASSERT_EQ(Connect(&a_, &b_, mtu_, o), 0);
    ASSERT_EQ(Connect(&b_, &a_, mtu_, o), 0);
  }

  // Fetch and add 1 at @raddr of B, the original value to A's buffer at @off.
  int PostFetchAdd(size_t off, uint64_t raddr, uint64_t id) {
    return PostSend(a_, IBV_WR_ATOMIC_FETCH_AND_ADD, off, 8, id, raddr, b_.mr->rkey,
                    IBV_SEND_SIGNALED, 0, 1);
  }

  End a_, b_;
};

std::vector<size_t> Sizes(int pmtu) {
  return {0, 1, 63, (size_t)pmtu - 1, (size_t)pmtu, (size_t)pmtu + 1,
          3 * (size_t)pmtu + 17, 65536, 1 << 20};
}

TEST_F(RcTest, SendSizes) {
  ASSERT_NO_FATAL_FAILURE(Pair(2 << 20));
  int pmtu = PmtuBytes(mtu_);
  uint32_t seed = 1;
  for (size_t len : Sizes(pmtu)) {
    SCOPED_TRACE(len);
    Fill(a_.buf, 0, len, seed);
    std::fill(b_.buf.begin(), b_.buf.begin() + len + 16, 0xee);
    ASSERT_EQ(PostRecv(b_, 0, len + 16, 100 + len), 0);
    ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, len, len), 0);
    auto sw = Poll(a_.cq, 1);
    auto rw = Poll(b_.cq, 1);
    ASSERT_EQ(sw.size(), 1u);
    ASSERT_EQ(rw.size(), 1u);
    EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(sw[0].status);
    EXPECT_EQ(sw[0].opcode, IBV_WC_SEND);
    EXPECT_EQ(sw[0].wr_id, len);
    EXPECT_EQ(rw[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(rw[0].status);
    EXPECT_EQ(rw[0].opcode, IBV_WC_RECV);
    EXPECT_EQ(rw[0].wr_id, 100 + len);
    EXPECT_EQ(rw[0].byte_len, len);
    EXPECT_EQ(rw[0].qp_num, b_.qp->qp_num);
    EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), len), 0);
    EXPECT_EQ(b_.buf[len], 0xee) << "wrote past the message";
    seed++;
  }
}

TEST_F(RcTest, SendWithImmediate) {
  ASSERT_NO_FATAL_FAILURE(Pair(8192));
  Fill(a_.buf, 0, 3000, 7);
  ASSERT_EQ(PostRecv(b_, 0, 4096, 1), 0);
  ASSERT_EQ(PostSend(a_, IBV_WR_SEND_WITH_IMM, 0, 3000, 2, 0, 0,
                     IBV_SEND_SIGNALED, 0xdeadbeef),
            0);
  auto rw = Poll(b_.cq, 1);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].status, IBV_WC_SUCCESS);
  EXPECT_TRUE(rw[0].wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(ntohl(rw[0].imm_data), 0xdeadbeefu);
  EXPECT_EQ(rw[0].byte_len, 3000u);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), 3000), 0);
  EXPECT_EQ(Poll(a_.cq, 1).size(), 1u);
}

TEST_F(RcTest, InlineSend) {
  ASSERT_NO_FATAL_FAILURE(Pair(4096));
  Fill(a_.buf, 0, 48, 9);
  ASSERT_EQ(PostRecv(b_, 0, 64, 1), 0);
  ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, 48, 2, 0, 0,
                     IBV_SEND_SIGNALED | IBV_SEND_INLINE),
            0);
  // Inline data is copied at post time: the buffer may change at once.
  std::vector<uint8_t> want(a_.buf.begin(), a_.buf.begin() + 48);
  std::fill(a_.buf.begin(), a_.buf.begin() + 48, 0);
  auto rw = Poll(b_.cq, 1);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(want.data(), b_.buf.data(), 48), 0);
  EXPECT_EQ(Poll(a_.cq, 1).size(), 1u);
}

TEST_F(RcTest, WriteSizes) {
  ASSERT_NO_FATAL_FAILURE(Pair(2 << 20));
  int pmtu = PmtuBytes(mtu_);
  uint32_t seed = 100;
  for (size_t len : Sizes(pmtu)) {
    SCOPED_TRACE(len);
    Fill(a_.buf, 0, len, seed++);
    std::fill(b_.buf.begin(), b_.buf.begin() + len + 16, 0xee);
    ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE, 0, len, len,
                       (uintptr_t)b_.buf.data(), b_.mr->rkey),
              0);
    auto sw = Poll(a_.cq, 1);
    ASSERT_EQ(sw.size(), 1u);
    EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(sw[0].status);
    EXPECT_EQ(sw[0].opcode, IBV_WC_RDMA_WRITE);
    EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), len), 0);
    EXPECT_EQ(b_.buf[len], 0xee);
  }
}

TEST_F(RcTest, WriteWithImmediate) {
  ASSERT_NO_FATAL_FAILURE(Pair(65536));
  Fill(a_.buf, 0, 10000, 11);
  ASSERT_EQ(PostRecv(b_, 0, 0, 5), 0);
  ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 10000, 6,
                     (uintptr_t)b_.buf.data() + 100, b_.mr->rkey,
                     IBV_SEND_SIGNALED, 0x1234),
            0);
  auto rw = Poll(b_.cq, 1);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(rw[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(ntohl(rw[0].imm_data), 0x1234u);
  EXPECT_EQ(rw[0].wr_id, 5u);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data() + 100, 10000), 0);
  EXPECT_EQ(Poll(a_.cq, 1).size(), 1u);
}

// C9-88: the R_Key of a zero-length RDMA READ or WRITE is not validated,
// with immediate data or without (rsockets sends such WRITEs with key 0).
TEST_F(RcTest, ZeroLengthReadAndWriteIgnoreTheRkey) {
  ASSERT_NO_FATAL_FAILURE(Pair(4096));
  constexpr uint64_t kNowhere = 0x8100000000;
  ASSERT_EQ(PostRecv(b_, 0, 0, 7), 0);
  ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 0, 1, kNowhere, 0, IBV_SEND_SIGNALED,
                     0xabc),
            0);
  ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE, 0, 0, 2, kNowhere, 0xdead), 0);
  ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_READ, 0, 0, 3, kNowhere, 0xbeef), 0);
  auto sw = Poll(a_.cq, 3);
  ASSERT_EQ(sw.size(), 3u);
  for (size_t i = 0; i < sw.size(); i++) {
    EXPECT_EQ(sw[i].status, IBV_WC_SUCCESS) << i << ": " << ibv_wc_status_str(sw[i].status);
    EXPECT_EQ(sw[i].wr_id, i + 1);
  }
  auto rw = Poll(b_.cq, 1);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(rw[0].status);
  EXPECT_EQ(rw[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(rw[0].byte_len, 0u);
  EXPECT_EQ(ntohl(rw[0].imm_data), 0xabcu);
  EXPECT_EQ(rw[0].wr_id, 7u);
  // The QP is still up: a real WRITE follows.
  Fill(a_.buf, 0, 100, 3);
  ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE, 0, 100, 4, (uintptr_t)b_.buf.data(), b_.mr->rkey), 0);
  sw = Poll(a_.cq, 1);
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(sw[0].status);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), 100), 0);
}

TEST_F(RcTest, ReadSizes) {
  ASSERT_NO_FATAL_FAILURE(Pair(2 << 20));
  int pmtu = PmtuBytes(mtu_);
  uint32_t seed = 200;
  for (size_t len : Sizes(pmtu)) {
    SCOPED_TRACE(len);
    Fill(b_.buf, 0, len, seed++);
    std::fill(a_.buf.begin(), a_.buf.begin() + len + 16, 0xee);
    ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_READ, 0, len, len,
                       (uintptr_t)b_.buf.data(), b_.mr->rkey),
              0);
    auto sw = Poll(a_.cq, 1);
    ASSERT_EQ(sw.size(), 1u);
    EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(sw[0].status);
    EXPECT_EQ(sw[0].opcode, IBV_WC_RDMA_READ);
    EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), len), 0);
    EXPECT_EQ(a_.buf[len], 0xee);
  }
}

TEST_F(RcTest, Atomics) {
  ASSERT_NO_FATAL_FAILURE(Pair(4096));
  uint64_t* target = reinterpret_cast<uint64_t*>(b_.buf.data() + 64);
  uint64_t* result = reinterpret_cast<uint64_t*>(a_.buf.data());
  *target = 100;
  // Fetch and add: returns the old value, adds once.
  for (int i = 0; i < 10; i++) {
    ASSERT_EQ(PostSend(a_, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8, i, (uintptr_t)target, b_.mr->rkey,
                       IBV_SEND_SIGNALED, 0, 5),
              0);
    auto sw = Poll(a_.cq, 1);
    ASSERT_EQ(sw.size(), 1u);
    EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(sw[0].opcode, IBV_WC_FETCH_ADD);
    EXPECT_EQ(*result, 100u + 5 * i);
  }
  EXPECT_EQ(*target, 150u);
  // Compare and swap: swaps only on a match.
  for (uint64_t cmp : {150ull, 150ull}) {
    ASSERT_EQ(PostSend(a_, IBV_WR_ATOMIC_CMP_AND_SWP, 0, 8, 0, (uintptr_t)target, b_.mr->rkey,
                       IBV_SEND_SIGNALED, 0, cmp, 7),
              0);
    auto sw = Poll(a_.cq, 1);
    ASSERT_EQ(sw.size(), 1u);
    EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(sw[0].opcode, IBV_WC_COMP_SWAP);
  }
  EXPECT_EQ(*result, 7u);  // the second compare saw 7, did not swap
  EXPECT_EQ(*target, 7u);
}

TEST_F(RcTest, ManyMessagesInFlight) {
  constexpr int kMsgs = 500;
  constexpr size_t kLen = 3000;
  ASSERT_NO_FATAL_FAILURE(Pair(kMsgs * kLen, {}, 512));
  Fill(a_.buf, 0, kMsgs * kLen, 33);
  int posted_r = 0, posted_s = 0, done_s = 0, done_r = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while ((done_s < kMsgs || done_r < kMsgs) &&
         std::chrono::steady_clock::now() < deadline) {
    while (posted_r < kMsgs && posted_r - done_r < 256) {
      ASSERT_EQ(PostRecv(b_, posted_r * kLen, kLen, posted_r), 0);
      posted_r++;
    }
    while (posted_s < posted_r && posted_s - done_s < 256) {
      // Only every 16th WQE is signaled; completion order is FIFO.
      int flags = (posted_s % 16 == 15 || posted_s == kMsgs - 1) ? IBV_SEND_SIGNALED : 0;
      ASSERT_EQ(PostSend(a_, IBV_WR_SEND, posted_s * kLen, kLen, posted_s, 0, 0, flags), 0);
      posted_s++;
    }
    ibv_wc wc[32];
    int n = ibv_poll_cq(a_.cq, 32, wc);
    for (int i = 0; i < n; i++) {
      ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS);
      ASSERT_EQ((int)wc[i].wr_id % 16 == 15 || (int)wc[i].wr_id == kMsgs - 1, true);
      done_s = wc[i].wr_id + 1;
    }
    n = ibv_poll_cq(b_.cq, 32, wc);
    for (int i = 0; i < n; i++) {
      ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS);
      ASSERT_EQ((int)wc[i].wr_id, done_r) << "receives complete in order";
      done_r++;
    }
  }
  EXPECT_EQ(done_s, kMsgs);
  EXPECT_EQ(done_r, kMsgs);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), kMsgs * kLen), 0);
}

TEST_F(RcTest, WrongRkeyIsRemoteAccessError) {
  // A's receives share its CQ: the error completes first, then the rest
  // of the SQ and the RQ flush. (rdma_rxe does not flush receives.) The
  // SEND may be posted after the QP failed, and flushed after the RQ.
  const bool a_flushes_rq = SoftA();
  ASSERT_NO_FATAL_FAILURE(Pair(4096));
  if (a_flushes_rq) {
    ASSERT_EQ(PostRecv(a_, 1024, 64, 3), 0);
  }
  ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE, 0, 100, 1, (uintptr_t)b_.buf.data(),
                     b_.mr->rkey ^ 0x100),
            0);
  ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, 10, 2), 0);
  auto sw = Poll(a_.cq, a_flushes_rq ? 3 : 2);
  ASSERT_EQ(sw.size(), a_flushes_rq ? 3u : 2u);
  EXPECT_EQ(sw[0].status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(sw[0].status);
  EXPECT_EQ(sw[0].wr_id, 1u);
  for (size_t i = 1; i < sw.size(); i++) {
    EXPECT_EQ(sw[i].status, IBV_WC_WR_FLUSH_ERR);
    EXPECT_TRUE(sw[i].wr_id == 2u || sw[i].wr_id == 3u) << sw[i].wr_id;
  }
  EXPECT_TRUE(!a_flushes_rq || sw[1].wr_id != sw[2].wr_id);
  // C9-222.1.1: a WRITE ties the error to no receive WQE of B, whose
  // owner learns of it from the asynchronous event.
  if (SoftB()) {
    EXPECT_EQ(WaitQpErrorEvent(b_dev_->ctx, b_.qp, 5000), IBV_EVENT_QP_ACCESS_ERR);
  }
}

TEST_F(RcTest, OutOfRangeWriteIsRemoteAccessError) {
  ASSERT_NO_FATAL_FAILURE(Pair(4096));
  ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE, 0, 200, 1,
                     (uintptr_t)b_.buf.data() + 4000, b_.mr->rkey),
            0);
  auto sw = Poll(a_.cq, 1);
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].status, IBV_WC_REM_ACCESS_ERR);
}

// IBTA C9-83: a request of a kind the responder's QP does not take (its
// qp_access_flags lack the right) is NAKed as an invalid request, not as
// a remote access error: the R_Key is fine. rdma_rxe does the same.
TEST_F(RcTest, RequestTheQpDoesNotTakeIsInvalidRequest) {
  const bool b_counts = SoftB();
  const struct {
    ibv_wr_opcode op;
    int right;
    const char* name;
  } kOps[] = {
      {IBV_WR_RDMA_WRITE, IBV_ACCESS_REMOTE_WRITE, "WRITE"},
      {IBV_WR_RDMA_READ, IBV_ACCESS_REMOTE_READ, "READ"},
      {IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_ACCESS_REMOTE_ATOMIC, "fetch and add"},
  };
  for (const auto& k : kOps) {
    SCOPED_TRACE(k.name);
    End a, b;
    ASSERT_TRUE(MakeEnd(a_dev_, &a, 4096));
    ASSERT_TRUE(MakeEnd(b_dev_, &b, 4096));
    ASSERT_EQ(Connect(&a, &b, mtu_, {}), 0);
    ASSERT_EQ(Connect(&b, &a, mtu_, {}), 0);
    ibv_qp_attr attr = {};
    attr.qp_access_flags = kAccess & ~k.right;
    ASSERT_EQ(ibv_modify_qp(b.qp, &attr, IBV_QP_ACCESS_FLAGS), 0);
    const long before = b_counts ? ReadCounter(b_dev_->ctx, "rx_invalid_requests") : 0;
    ASSERT_GE(before, 0) << "no rx_invalid_requests counter";
    std::memset(b.buf.data(), 0x5a, 64);
    ASSERT_EQ(PostSend(a, k.op, 0, 8, 1, (uintptr_t)b.buf.data(), b.mr->rkey, IBV_SEND_SIGNALED,
                       0, 1),
              0);
    auto sw = Poll(a.cq, 1);
    ASSERT_EQ(sw.size(), 1u);
    EXPECT_EQ(sw[0].status, IBV_WC_REM_INV_REQ_ERR) << ibv_wc_status_str(sw[0].status);
    // Nothing was placed or changed.
    EXPECT_EQ(b.buf[0], 0x5a);
    EXPECT_EQ(b.buf[7], 0x5a);
    if (b_counts) {
      EXPECT_EQ(ReadCounter(b_dev_->ctx, "rx_invalid_requests"), before + 1);
    }
  }
}

// IBTA C9-92, C9-93: a packet longer than the responder's path MTU (or a
// FIRST or MIDDLE packet of another size) is an invalid request. Here the
// requester's path MTU is larger than the responder's, a misconfiguration
// the responder must catch rather than place packets it never expects.
TEST_F(RcTest, PacketsLargerThanThePathMtuAreInvalidRequests) {
  if (!SoftB())
    GTEST_SKIP() << "rdma_rxe of 6.1 does not check lengths against the MTU";
  if (mtu_ < IBV_MTU_1024) GTEST_SKIP() << "path MTU below 1024";
  for (bool write : {false, true}) {
    SCOPED_TRACE(write ? "WRITE" : "SEND");
    End a, b;
    ASSERT_TRUE(MakeEnd(a_dev_, &a, 8192));
    ASSERT_TRUE(MakeEnd(b_dev_, &b, 8192));
    ASSERT_EQ(Connect(&a, &b, IBV_MTU_1024, {}), 0);
    ASSERT_EQ(Connect(&b, &a, IBV_MTU_256, {}), 0);
    const long before = ReadCounter(b_dev_->ctx, "rx_invalid_requests");
    ASSERT_GE(before, 0) << "no rx_invalid_requests counter";
    ASSERT_EQ(PostRecv(b, 0, 4096, 7), 0);
    ASSERT_EQ(PostSend(a, write ? IBV_WR_RDMA_WRITE : IBV_WR_SEND, 0, 1000, 1,
                       (uintptr_t)b.buf.data(), b.mr->rkey),
              0);
    auto sw = Poll(a.cq, 1);
    ASSERT_EQ(sw.size(), 1u);
    EXPECT_EQ(sw[0].status, IBV_WC_REM_INV_REQ_ERR) << ibv_wc_status_str(sw[0].status);
    EXPECT_EQ(ReadCounter(b_dev_->ctx, "rx_invalid_requests"), before + 1);
  }
}

TEST_F(RcTest, RnrRetryExceeded) {
  ConnOpts o;
  o.rnr_retry = 0;
  ASSERT_NO_FATAL_FAILURE(Pair(4096, o));
  ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, 10, 1), 0);
  auto sw = Poll(a_.cq, 1);
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].status, IBV_WC_RNR_RETRY_EXC_ERR) << ibv_wc_status_str(sw[0].status);
}

TEST_F(RcTest, RnrThenReceivePosted) {
  ConnOpts o;
  o.rnr_retry = 7;  // infinite
  ASSERT_NO_FATAL_FAILURE(Pair(4096, o));
  Fill(a_.buf, 0, 100, 5);
  ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, 100, 1), 0);
  usleep(200000);
  EXPECT_TRUE(Poll(a_.cq, 1, 10).empty());
  ASSERT_EQ(PostRecv(b_, 0, 100, 2), 0);
  auto sw = Poll(a_.cq, 1);
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(Poll(b_.cq, 1).size(), 1u);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), 100), 0);
}

// IBTA 9.7.5.2.8: a requester whose SEND is RNR NAKed waits for the timer
// the NAK encodes and tries again, rnr_retry times; 7 means without limit.
// Each attempt is NAKed here, so the NAKs counted by the softrdma end are
// rnr_retry + 1, and the requester waited at least rnr_retry timers.
class RnrRetryTest : public RcTest, public ::testing::WithParamInterface<int> {
 protected:
  // The RNR NAKs that reached A, counted where softrdma runs.
  long RnrNaks() {
    if (SoftA())
      return ReadCounter(a_dev_->ctx, "rx_rnr_naks");
    return ReadCounter(b_dev_->ctx, "tx_rnr_naks");
  }
};

// IBTA C9-132, 9.9.2.1.1: rnr_retry limits the retries of one request, and
// the counter is reloaded when a packet is acknowledged. With rnr_retry 1,
// three SENDs in a row, each RNR NAKed once before its receive is posted,
// all succeed.
TEST_F(RnrRetryTest, BudgetIsPerMessage) {
  ConnOpts o;
  o.rnr_retry = 1;
  o.min_rnr_timer = 31;  // 491.52 ms: time to see the NAK, then post
  ASSERT_NO_FATAL_FAILURE(Pair(4096, o));
  for (int i = 0; i < 3; i++) {
    SCOPED_TRACE("message " + std::to_string(i));
    const long before = RnrNaks();
    ASSERT_GE(before, 0) << "no RNR NAK counter";
    ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, 10, 1), 0);
    long naks = 0;
    for (int t = 0; t < 200 && naks < 1; t++) naks = RnrNaks() - before;
    ASSERT_EQ(naks, 1);
    ASSERT_EQ(PostRecv(b_, 0, 64, 2), 0);
    auto sw = Poll(a_.cq, 1);
    ASSERT_EQ(sw.size(), 1u);
    EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(sw[0].status);
    EXPECT_EQ(Poll(b_.cq, 1).size(), 1u);
  }
}

TEST_P(RnrRetryTest, RetriesAsManyTimesAsAsked) {
  const int retries = GetParam();
  ConnOpts o;
  o.rnr_retry = retries;
  o.min_rnr_timer = 14;  // 1.28 ms
  ASSERT_NO_FATAL_FAILURE(Pair(4096, o));
  const long before = RnrNaks();
  ASSERT_GE(before, 0) << "no RNR NAK counter";
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, 10, 1), 0);
  if (retries == 7) {
    // Infinite: still retrying well after 7 NAKs, then the receive lets
    // the message through.
    long naks = 0;
    for (int i = 0; i < 2000 && naks <= 10; i++) {
      usleep(1000);
      naks = RnrNaks() - before;
    }
    EXPECT_GT(naks, 10);
    EXPECT_TRUE(Poll(a_.cq, 1, 10).empty());
    ASSERT_EQ(PostRecv(b_, 0, 64, 2), 0);
    auto sw = Poll(a_.cq, 1);
    ASSERT_EQ(sw.size(), 1u);
    EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(sw[0].status);
    EXPECT_EQ(Poll(b_.cq, 1).size(), 1u);
    return;
  }
  auto sw = Poll(a_.cq, 1);
  auto waited = std::chrono::steady_clock::now() - t0;
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].status, IBV_WC_RNR_RETRY_EXC_ERR) << ibv_wc_status_str(sw[0].status);
  EXPECT_EQ(RnrNaks() - before, retries + 1);
  EXPECT_GE(waited, std::chrono::microseconds(1280) * retries);
  // The QP is in the error state: a new receive on B is not reached.
  EXPECT_TRUE(Poll(b_.cq, 1, 10).empty());
}

INSTANTIATE_TEST_SUITE_P(Rnr, RnrRetryTest, ::testing::Range(0, 8),
                         [](const auto& info) { return "rnr_retry_" + std::to_string(info.param); });

TEST_F(RcTest, PeerGoneRetryExceeded) {
  ConnOpts o;
  o.timeout = 10;  // 4 ms
  o.retry_cnt = 2;
  ASSERT_NO_FATAL_FAILURE(Pair(4096, o));
  ASSERT_EQ(ibv_destroy_qp(b_.qp), 0);
  b_.qp = nullptr;
  ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE, 0, 100, 1, (uintptr_t)b_.buf.data(),
                     b_.mr->rkey),
            0);
  ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, 10, 2), 0);
  auto sw = Poll(a_.cq, 2);
  ASSERT_EQ(sw.size(), 2u);
  EXPECT_EQ(sw[0].status, IBV_WC_RETRY_EXC_ERR) << ibv_wc_status_str(sw[0].status);
  EXPECT_EQ(sw[1].status, IBV_WC_WR_FLUSH_ERR);
}

// Run @cmd in network namespace @ns ("" is the initial one).
int InNetns(const std::string& ns, const std::string& cmd) {
  return std::system((ns.empty() ? cmd : "ip netns exec " + ns + " " + cmd).c_str());
}

// The core may have dropped and added a device's GIDs again, at a new index.
void RefindGid(Dev* dev, const std::string& ip) {
  dev->gid_index = -1;
  for (int i = 0; i < 50 && dev->gid_index < 0; i++) {
    dev->gid_index = FindGid(dev->ctx, ip, &dev->gid);
    if (dev->gid_index < 0) usleep(100000);
  }
  EXPECT_GE(dev->gid_index, 0) << "the GID of " << ip << " did not come back";
}

// The survivor of a peer whose netdev went down: its first WQE ends with
// IBV_WC_RETRY_EXC_ERR once the retries are spent, each after a local ACK
// timeout (IBTA 9.7.6.1.3), and the next WQE is flushed.
TEST_F(RcTest, PeerNetdevDownRetryExceeded) {
  char nd[64] = {};
  std::string ndev_path = std::string("/sys/class/infiniband/") +
                          ibv_get_device_name(b_dev_->ctx->device) + "/ports/1/gid_attrs/ndevs/" +
                          std::to_string(b_dev_->gid_index);
  FILE* f = std::fopen(ndev_path.c_str(), "r");
  ASSERT_NE(f, nullptr) << ndev_path;
  ASSERT_EQ(std::fscanf(f, "%63s", nd), 1);
  std::fclose(f);
  const std::string ns_a = Env("SRDMA_NETNS_A", ""), ns_b = Env("SRDMA_NETNS_B", "peer");
  ConnOpts o;
  o.timeout = 12;  // 16.8 ms
  o.retry_cnt = 3;
  ASSERT_NO_FATAL_FAILURE(Pair(4096, o));
  // Keep B's IPv6 address (and so its GID) across the link's down and up.
  ASSERT_EQ(InNetns(ns_b, std::string("sysctl -qw net.ipv6.conf.") + nd + ".keep_addr_on_down=1"),
            0);
  ASSERT_EQ(InNetns(ns_b, std::string("ip link set ") + nd + " down"), 0);
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE, 0, 100, 1, (uintptr_t)b_.buf.data(), b_.mr->rkey),
            0);
  ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, 10, 2), 0);
  auto sw = Poll(a_.cq, 2);
  auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(InNetns(ns_b, std::string("ip link set ") + nd + " up"), 0);
  ASSERT_EQ(sw.size(), 2u);
  EXPECT_EQ(sw[0].status, IBV_WC_RETRY_EXC_ERR) << ibv_wc_status_str(sw[0].status);
  EXPECT_EQ(sw[0].wr_id, 1u);
  EXPECT_EQ(sw[1].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_GE(waited, std::chrono::microseconds(16777) * o.retry_cnt);
  // The link went down: resolve the neighbours again for the tests after.
  const std::string ip_a = Env("SRDMA_IP_A", "10.80.0.1"), ip_b = Env("SRDMA_IP_B", "10.80.0.2");
  bool ok = false;
  for (int i = 0; i < 50 && !ok; i++) {
    ok = InNetns(ns_a, "ping -q -c 1 -W 1 " + ip_b + " >/dev/null") == 0 &&
         InNetns(ns_b, "ping -q -c 1 -W 1 " + ip_a + " >/dev/null") == 0;
    if (!ok) usleep(100000);
  }
  EXPECT_TRUE(ok) << "no path between " << ip_a << " and " << ip_b << " after the link came up";
  RefindGid(b_dev_, ip_b);
}

// A route that changes under a connected QP applies to its next packet,
// also between two QPs of one device, whose packets the QP's route cache
// hands straight to the device: once the peer's address is gone, the
// requests go nowhere and the first WQE ends with IBV_WC_RETRY_EXC_ERR.
TEST_F(RcTest, PeerAddressRemovedRetryExceeded) {
  if (Env("SRDMA_KIND_A", "softrdma") != "softrdma") GTEST_SKIP() << "softrdma's route cache";
  const std::string ns_b = Env("SRDMA_NETNS_B", "peer");
  const std::string ip_a = Env("SRDMA_IP_A", "10.80.0.1"), ip_b = Env("SRDMA_IP_B", "10.80.0.2");
  if (ip_a == ip_b) GTEST_SKIP() << "both ends on one address";
  const std::string saved = "/tmp/srdma-addr-b." + std::to_string(getpid());
  ConnOpts o;
  o.timeout = 12;  // 16.8 ms
  o.retry_cnt = 3;
  ASSERT_NO_FATAL_FAILURE(Pair(4096, o));
  // Warm the route: a WRITE that arrives.
  ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE, 0, 100, 1, (uintptr_t)b_.buf.data(), b_.mr->rkey),
            0);
  auto ok = Poll(a_.cq, 1);
  ASSERT_EQ(ok.size(), 1u);
  ASSERT_EQ(ok[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(ok[0].status);
  // "ADDR/PREFIX dev NETDEV" of B's address, to put it back.
  ASSERT_EQ(InNetns(ns_b, "ip -o addr show to " + ip_b + " | awk '{print $4, \"dev\", $2}' > " +
                              saved),
            0);
  ASSERT_EQ(InNetns(ns_b, "sh -c 'ip addr del $(cat " + saved + ")'"), 0);
  ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE, 0, 100, 2, (uintptr_t)b_.buf.data(), b_.mr->rkey),
            0);
  ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, 10, 3), 0);
  auto sw = Poll(a_.cq, 2);
  const std::string nodad = ip_b.find(':') != std::string::npos ? " nodad" : "";
  EXPECT_EQ(InNetns(ns_b, "sh -c 'ip addr add $(cat " + saved + ")" + nodad + "'"), 0);
  std::remove(saved.c_str());
  ASSERT_EQ(sw.size(), 2u);
  EXPECT_EQ(sw[0].status, IBV_WC_RETRY_EXC_ERR) << ibv_wc_status_str(sw[0].status);
  EXPECT_EQ(sw[0].wr_id, 2u);
  EXPECT_EQ(sw[1].status, IBV_WC_WR_FLUSH_ERR);
  RefindGid(b_dev_, ip_b);
}

TEST_F(RcTest, ReceiveTooSmallIsError) {
  // IBTA C9-91: a SEND larger than the receive buffer is NAKed as an
  // invalid request. rdma_rxe answers with a remote operational error
  // and completes its receive with LOC_QP_OP_ERR instead.
  bool rxe = Env("SRDMA_KIND_B", "softrdma") == "rxe";
  ASSERT_NO_FATAL_FAILURE(Pair(8192));
  ASSERT_EQ(PostRecv(b_, 0, 100, 1), 0);
  ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, 2000, 2), 0);
  auto sw = Poll(a_.cq, 1);
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].status, rxe ? IBV_WC_REM_OP_ERR : IBV_WC_REM_INV_REQ_ERR)
      << ibv_wc_status_str(sw[0].status);
  auto rw = Poll(b_.cq, 1);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].status, rxe ? IBV_WC_LOC_QP_OP_ERR : IBV_WC_LOC_LEN_ERR);
  // C9-222.1.1: the completion reports the error; no asynchronous event.
  if (!rxe) {
    EXPECT_EQ(WaitQpErrorEvent(b_dev_->ctx, b_.qp, 500), -1)
        << "an asynchronous event for an error a completion reported";
  }
}

TEST_F(RcTest, ErrorStateFlushesPostedReceives) {
  // A local behaviour of B; rdma_rxe does not flush receives posted in
  // the error state.
  if (!SoftB())
    GTEST_SKIP() << "device B is not softrdma";
  ASSERT_NO_FATAL_FAILURE(Pair(4096));
  for (int i = 0; i < 5; i++) ASSERT_EQ(PostRecv(b_, 0, 64, 10 + i), 0);
  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(b_.qp, &attr, IBV_QP_STATE), 0);
  auto rw = Poll(b_.cq, 5);
  ASSERT_EQ(rw.size(), 5u);
  for (int i = 0; i < 5; i++) {
    EXPECT_EQ(rw[i].status, IBV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(rw[i].wr_id, 10u + i);
  }
  // Receives posted in the error state are flushed too.
  ASSERT_EQ(PostRecv(b_, 0, 64, 99), 0);
  rw = Poll(b_.cq, 1);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].wr_id, 99u);
  EXPECT_EQ(rw[0].status, IBV_WC_WR_FLUSH_ERR);
}

TEST_F(RcTest, ManyQps) {
  constexpr int kQps = 16;
  std::vector<std::unique_ptr<End>> as, bs;
  for (int i = 0; i < kQps; i++) {
    as.push_back(std::make_unique<End>());
    bs.push_back(std::make_unique<End>());
    ASSERT_TRUE(MakeEnd(a_dev_, as[i].get(), 65536));
    ASSERT_TRUE(MakeEnd(b_dev_, bs[i].get(), 65536));
    ASSERT_EQ(Connect(as[i].get(), bs[i].get(), mtu_, {}), 0);
    ASSERT_EQ(Connect(bs[i].get(), as[i].get(), mtu_, {}), 0);
  }
  for (int i = 0; i < kQps; i++) {
    Fill(as[i]->buf, 0, 65536, 1000 + i);
    ibv_sge sge = {(uintptr_t)as[i]->buf.data(), 65536, as[i]->mr->lkey};
    ibv_send_wr wr = {}, *bad;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = (uintptr_t)bs[i]->buf.data();
    wr.wr.rdma.rkey = bs[i]->mr->rkey;
    ASSERT_EQ(ibv_post_send(as[i]->qp, &wr, &bad), 0);
  }
  for (int i = 0; i < kQps; i++) {
    auto sw = Poll(as[i]->cq, 1);
    ASSERT_EQ(sw.size(), 1u);
    EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(std::memcmp(as[i]->buf.data(), bs[i]->buf.data(), 65536), 0);
  }
}

TEST_F(RcTest, LargeMessages) {
  // 64 MiB by default: WRITE, READ and SEND of one message each.
  size_t len = std::strtoul(Env("SRDMA_LARGE_BYTES", "67108864").c_str(), nullptr, 0);
  ASSERT_NO_FATAL_FAILURE(Pair(len));
  Fill(a_.buf, 0, len, 77);
  ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE, 0, len, 1, (uintptr_t)b_.buf.data(),
                     b_.mr->rkey),
            0);
  auto sw = Poll(a_.cq, 1, 600000);
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), len), 0);

  std::fill(a_.buf.begin(), a_.buf.end(), 0);
  ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_READ, 0, len, 2, (uintptr_t)b_.buf.data(),
                     b_.mr->rkey),
            0);
  sw = Poll(a_.cq, 1, 600000);
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), len), 0);

  Fill(a_.buf, 0, len, 78);
  std::fill(b_.buf.begin(), b_.buf.end(), 0);
  ASSERT_EQ(PostRecv(b_, 0, len, 3), 0);
  ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, len, 4), 0);
  sw = Poll(a_.cq, 1, 600000);
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS);
  auto rw = Poll(b_.cq, 1, 600000);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(rw[0].byte_len, len);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), len), 0);
}

TEST_F(RcTest, MultipleSgesBothSides) {
  ASSERT_NO_FATAL_FAILURE(Pair(65536));
  Fill(a_.buf, 0, 65536, 90);
  // Gather from three pieces, scatter into four.
  ibv_sge s[3] = {{(uintptr_t)a_.buf.data(), 1000, a_.mr->lkey},
                  {(uintptr_t)a_.buf.data() + 5000, 3000, a_.mr->lkey},
                  {(uintptr_t)a_.buf.data() + 20000, 4500, a_.mr->lkey}};
  ibv_sge r[4] = {{(uintptr_t)b_.buf.data(), 100, b_.mr->lkey},
                  {(uintptr_t)b_.buf.data() + 1000, 2000, b_.mr->lkey},
                  {(uintptr_t)b_.buf.data() + 9000, 4000, b_.mr->lkey},
                  {(uintptr_t)b_.buf.data() + 30000, 8000, b_.mr->lkey}};
  ibv_recv_wr rwr = {}, *rbad;
  rwr.sg_list = r;
  rwr.num_sge = 4;
  ASSERT_EQ(ibv_post_recv(b_.qp, &rwr, &rbad), 0);
  ibv_send_wr swr = {}, *sbad;
  swr.sg_list = s;
  swr.num_sge = 3;
  swr.opcode = IBV_WR_SEND;
  swr.send_flags = IBV_SEND_SIGNALED;
  ASSERT_EQ(ibv_post_send(a_.qp, &swr, &sbad), 0);
  auto rw = Poll(b_.cq, 1);
  ASSERT_EQ(rw.size(), 1u);
  ASSERT_EQ(rw[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(rw[0].byte_len, 8500u);
  std::vector<uint8_t> sent, got;
  for (auto& x : s) sent.insert(sent.end(), (uint8_t*)x.addr, (uint8_t*)x.addr + x.length);
  for (auto& x : r) got.insert(got.end(), (uint8_t*)x.addr, (uint8_t*)x.addr + x.length);
  got.resize(sent.size());
  EXPECT_EQ(sent, got);
  EXPECT_EQ(Poll(a_.cq, 1).size(), 1u);
}

TEST_F(RcTest, UnsignaledWritesThenSignaledRead) {
  ASSERT_NO_FATAL_FAILURE(Pair(65536));
  Fill(a_.buf, 0, 32768, 91);
  // Ten unsignaled WRITEs, then a signaled READ back: one completion, and
  // (IBTA ordering) the READ sees every WRITE.
  for (int i = 0; i < 10; i++)
    ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE, i * 3000, 3000, i,
                       (uintptr_t)b_.buf.data() + i * 3000, b_.mr->rkey, 0),
              0);
  ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_READ, 32768, 30000, 99,
                     (uintptr_t)b_.buf.data(), b_.mr->rkey),
            0);
  auto sw = Poll(a_.cq, 1);
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].wr_id, 99u);
  EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(a_.buf.data(), a_.buf.data() + 32768, 30000), 0);
  EXPECT_TRUE(Poll(a_.cq, 1, 100).empty());
}

// IBTA C9-60: a requester that leaves AckReq off must make sure the ACKs
// it needs still come. softrdma leaves it off an unsignaled message (the
// ACK only frees the slot) and, once the SQ is quiet, sends the last
// packet again with AckReq (the tail probe). The responder acknowledges the
// duplicate (C9-105), rdma_rxe as well as softrdma: no local ACK timeout
// follows, however long the QP stays idle.
TEST_F(RcTest, UnsignaledTailIsProbedNotRetried) {
  if (!SoftA())
    GTEST_SKIP() << "the requester's behaviour is checked on softrdma";
  ConnOpts o;
  o.timeout = 16;  // 268 ms: long enough for lazy ACKs at any HZ
  o.retry_cnt = 1;
  ASSERT_NO_FATAL_FAILURE(Pair(4096, o));
  const long probes = ReadCounter(a_dev_->ctx, "tail_probes");
  const long timeouts = ReadCounter(a_dev_->ctx, "ack_timeouts");
  ASSERT_GE(probes, 0) << "no tail_probes counter";
  Fill(a_.buf, 0, 300, 17);
  for (int i = 0; i < 3; i++)
    ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE, i * 100, 100, i,
                       (uintptr_t)b_.buf.data() + i * 100, b_.mr->rkey, 0),
              0);
  long probed = 0;
  for (int t = 0; t < 200 && probed < 1; t++) probed = ReadCounter(a_dev_->ctx, "tail_probes") - probes;
  EXPECT_GE(probed, 1);
  // Two ACK timeouts and the QP would have failed; none happens, and the
  // answered probe is not repeated (one per WRITE at most, had the posts
  // been spread out).
  usleep(700000);
  EXPECT_EQ(ReadCounter(a_dev_->ctx, "ack_timeouts"), timeouts);
  EXPECT_LE(ReadCounter(a_dev_->ctx, "tail_probes") - probes, 3);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), 300), 0);
  ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE, 0, 8, 9, (uintptr_t)b_.buf.data(), b_.mr->rkey), 0);
  auto sw = Poll(a_.cq, 1);
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].wr_id, 9u);
  EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(sw[0].status);
}

// A path that only delays (tests/guest/netem.sh runs this under netem
// "delay 20ms" on both ends: 40 ms and more for a round trip) loses
// nothing, so nothing may be sent twice. The early retransmission goes
// back to una when the window has not moved for a while (10 ms at least,
// an eighth of the local ACK timeout); the requester measures the round
// trip and waits longer than it may take, or, when that leaves no room
// inside the timeout (67 ms here), not at all. Each burst starts from an
// idle QP, the case that waits a whole round trip for its first ACK. Two
// messages before give the first sample. Elsewhere (no netem, or loss or
// reordering that need retransmissions) the test is skipped.
TEST_F(RcTest, LongRoundTripIsNotSentTwice) {
  const std::string netem = Env("SRDMA_NETEM", "");
  if (netem.find("delay") == std::string::npos ||
      netem.find('%') != std::string::npos)
    GTEST_SKIP() << "only under a netem delay without loss or reordering";
  if (!SoftA())
    GTEST_SKIP() << "the requester's behaviour is checked on softrdma";
  constexpr int kBursts = 4, kMsgs = 48;
  constexpr size_t kLen = 4096;
  ASSERT_NO_FATAL_FAILURE(Pair(kMsgs * kLen, {}, 64));
  Fill(a_.buf, 0, kMsgs * kLen, 41);
  // Two messages: a round trip longer than the first early retransmission's
  // delay leaves the first without a sample.
  for (int i = 0; i < 2; i++) {
    ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE, 0, 8, 1000 + i, (uintptr_t)b_.buf.data(),
                       b_.mr->rkey),
              0);
    auto first = Poll(a_.cq, 1);
    ASSERT_EQ(first.size(), 1u);
    ASSERT_EQ(first[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(first[0].status);
  }
  const long early = ReadCounter(a_dev_->ctx, "early_retransmits");
  const long rtx = ReadCounter(a_dev_->ctx, "retransmits");
  ASSERT_GE(early, 0) << "no early_retransmits counter";
  for (int b = 0; b < kBursts; b++) {
    for (int i = 0; i < kMsgs; i++) {
      int flags = i == kMsgs - 1 ? IBV_SEND_SIGNALED : 0;
      ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE, i * kLen, kLen, i,
                         (uintptr_t)b_.buf.data() + i * kLen, b_.mr->rkey, flags),
                0);
    }
    auto wc = Poll(a_.cq, 1);
    ASSERT_EQ(wc.size(), 1u) << "burst " << b;
    ASSERT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);
    ASSERT_EQ(wc[0].wr_id, (uint64_t)kMsgs - 1);
  }
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), kMsgs * kLen), 0);
  EXPECT_EQ(ReadCounter(a_dev_->ctx, "early_retransmits"), early);
  EXPECT_EQ(ReadCounter(a_dev_->ctx, "retransmits"), rtx);
}

// IBTA 9.7.5.1.2: a READ response acknowledges the requests before it. An
// unsignaled SEND followed by a READ needs no ACK of its own: the READ's
// response completes it, and nothing is sent again, whatever order the
// responder answers in. The same for an atomic. A guest that stops for
// longer than the early retransmission's delay (10 ms: a loaded host under
// TCG and KASAN) makes the timer go back once; only go-backs that no timer
// caused are the requester misreading a response.
TEST_F(RcTest, ResponsesAcknowledgeWhatCameBefore) {
  if (!SoftA())
    GTEST_SKIP() << "the requester's behaviour is checked on softrdma";
  ASSERT_NO_FATAL_FAILURE(Pair(8192));
  const long before = ReadCounter(a_dev_->ctx, "retransmits");
  ASSERT_GE(before, 0) << "no retransmits counter";
  const long timed = ReadCounter(a_dev_->ctx, "early_retransmits") +
                     ReadCounter(a_dev_->ctx, "ack_timeouts");
  Fill(a_.buf, 0, 4096, 23);
  Fill(b_.buf, 4096, 4096, 29);
  std::memset(b_.buf.data() + 8000, 0, 8);
  for (int i = 0; i < 20; i++) {
    ASSERT_EQ(PostRecv(b_, i * 64, 64, i), 0);
    ASSERT_EQ(PostSend(a_, IBV_WR_SEND, i * 64, 64, 100 + i, 0, 0, 0), 0);
    if (i % 2)
      ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_READ, 4096 + i * 64, 64, 200 + i,
                         (uintptr_t)b_.buf.data() + 4096 + i * 64, b_.mr->rkey),
                0);
    else
      ASSERT_EQ(PostFetchAdd(4096 + i * 64, (uintptr_t)b_.buf.data() + 8000, 200 + i), 0);
    auto sw = Poll(a_.cq, 1);
    ASSERT_EQ(sw.size(), 1u);
    EXPECT_EQ(sw[0].wr_id, 200u + i);
    EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(sw[0].status);
    auto rw = Poll(b_.cq, 1);
    ASSERT_EQ(rw.size(), 1u);
    EXPECT_EQ(rw[0].wr_id, (uint64_t)i);
  }
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), 20 * 64), 0);
  for (int i = 1; i < 20; i += 2)
    EXPECT_EQ(std::memcmp(a_.buf.data() + 4096 + i * 64, b_.buf.data() + 4096 + i * 64, 64), 0);
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(b_.buf.data() + 8000), 10u);
  const long timer_gobacks = ReadCounter(a_dev_->ctx, "early_retransmits") +
                             ReadCounter(a_dev_->ctx, "ack_timeouts") - timed;
  EXPECT_LE(ReadCounter(a_dev_->ctx, "retransmits") - before, timer_gobacks)
      << "went back with no timer expired";
}

// The perftest pattern: a stream of small WRITEs, one in 50 signaled, as
// many in flight as the SQ holds. Slots come back as ACKs arrive, without
// an ACK per message, and every byte lands.
TEST_F(RcTest, UnsignaledStreamCompletes) {
  constexpr int kDepth = 64, kMsgs = 3000, kEvery = 50, kLen = 64;
  ASSERT_NO_FATAL_FAILURE(Pair(kMsgs * kLen, {}, kDepth));
  Fill(a_.buf, 0, kMsgs * kLen, 5);
  int posted = 0, done = 0;
  while (done < kMsgs) {
    while (posted < kMsgs && posted - done < kDepth) {
      const bool sig = (posted + 1) % kEvery == 0 || posted + 1 == kMsgs;
      ASSERT_EQ(PostSend(a_, IBV_WR_RDMA_WRITE, posted * kLen, kLen, posted,
                         (uintptr_t)b_.buf.data() + posted * kLen, b_.mr->rkey,
                         sig ? IBV_SEND_SIGNALED : 0),
                0)
          << "message " << posted;
      posted++;
    }
    auto wc = Poll(a_.cq, 1);
    ASSERT_EQ(wc.size(), 1u) << "after " << done << " messages";
    ASSERT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);
    done = (int)wc[0].wr_id + 1;
  }
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), kMsgs * kLen), 0);
}

// A QP its consumer moves to ERR completes every outstanding WQE with
// IBV_WC_WR_FLUSH_ERR, the first of the QP's life too: no WQE failed.
TEST_F(RcTest, ModifyToErrorFlushesEveryOutstandingWqe) {
  ConnOpts o;
  o.rnr_retry = 7;        // RNR NAKs without end
  o.min_rnr_timer = 31;   // 491.52 ms between them
  ASSERT_NO_FATAL_FAILURE(Pair(4096, o));
  // B posts no receive: A's SENDs, the QP's first WQEs, stay outstanding.
  ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, 10, 1), 0);
  ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, 10, 2), 0);
  usleep(50000);
  ASSERT_EQ(Poll(a_.cq, 1, 10).size(), 0u) << "a SEND completed without a receive";
  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(a_.qp, &attr, IBV_QP_STATE), 0);
  auto sw = Poll(a_.cq, 2);
  ASSERT_EQ(sw.size(), 2u);
  for (size_t i = 0; i < sw.size(); i++) {
    EXPECT_EQ(sw[i].status, IBV_WC_WR_FLUSH_ERR) << i << ": " << ibv_wc_status_str(sw[i].status);
    EXPECT_EQ(sw[i].wr_id, i + 1);
  }
}

// Post on @a a signaled WRITE @id of 4096 bytes to offset @to of @b's
// region whose SGE runs past the end of @a's region: a local protection
// error before anything is sent.
int PostPastTheRegion(End* a, End* b, uint64_t id, size_t to) {
  ibv_sge sge = {(uintptr_t)a->buf.data() + a->buf.size() - 16, 4096, a->mr->lkey};
  ibv_send_wr wr = {}, *bad;
  wr.wr_id = id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = (uintptr_t)b->buf.data() + to;
  wr.wr.rdma.rkey = b->mr->rkey;
  return ibv_post_send(a->qp, &wr, &bad);
}

// IBTA C9-209: a WQE that fails before it is sent (an SGE past the end of
// its region: a local protection error) completes in error only after the
// WQEs before it, which the responder may have executed: those complete
// as their ACKs come, not flushed. Then the QP is in ERR.
TEST_F(RcTest, LocalErrorWaitsForTheWqesBeforeIt) {
  // rdma_rxe of 6.1 as the requester completes neither WQE; that of 6.12
  // completes the second with IBV_WC_WR_FLUSH_ERR.
  if (!SoftA()) GTEST_SKIP() << "the requester under test is softrdma's";
  constexpr size_t kLen = 1 << 20;
  ASSERT_NO_FATAL_FAILURE(Pair(2 * kLen));
  Fill(a_.buf, 0, kLen, 41);
  ASSERT_EQ(PostRdma(&a_, &b_, IBV_WR_RDMA_WRITE, 1, 0, kLen), 0);
  ASSERT_EQ(PostPastTheRegion(&a_, &b_, 2, kLen), 0);
  auto wc = Poll(a_.cq, 2);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);
  EXPECT_EQ(wc[1].wr_id, 2u);
  EXPECT_EQ(wc[1].status, IBV_WC_LOC_PROT_ERR) << ibv_wc_status_str(wc[1].status);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), kLen), 0);
  ibv_qp_attr attr;
  ibv_qp_init_attr init;
  ASSERT_EQ(ibv_query_qp(a_.qp, &attr, IBV_QP_STATE, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_ERR);
}

// The same where nothing asks for an ACK: with no local ACK timeout
// (timeout 0) an unsignaled WRITE goes without AckReq, the WQE after it
// fails, and a third waits behind. The requester asks for the ACK the
// WRITE needs to complete (a tail probe) instead of waiting for ever, or
// running its pass again and again for the WQE posted.
TEST_F(RcTest, LocalErrorAfterAnUnacknowledgedTail) {
  // C9-140: timeout 0 disables the local ACK timer; a packet that netem
  // drops (loss, corruption) is then never sent again, and the QP waits
  // for ever, as the IBTA lets it.
  const std::string netem = Env("SRDMA_NETEM", "");
  if (netem.find("loss") != std::string::npos || netem.find("corrupt") != std::string::npos)
    GTEST_SKIP() << "timeout 0: nothing resends what netem drops";
  ConnOpts o;
  o.timeout = 0;
  ASSERT_NO_FATAL_FAILURE(Pair(8192, o));
  Fill(a_.buf, 0, 4096, 43);
  ASSERT_EQ(PostRdma(&a_, &b_, IBV_WR_RDMA_WRITE, 1, 0, 4096, false), 0);
  ASSERT_EQ(PostPastTheRegion(&a_, &b_, 2, 4096), 0);
  ASSERT_EQ(PostRdma(&a_, &b_, IBV_WR_RDMA_WRITE, 3, 0, 64), 0);
  auto wc = Poll(a_.cq, 2, 20000);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].wr_id, 2u);
  if (SoftA())
    EXPECT_EQ(wc[0].status, IBV_WC_LOC_PROT_ERR) << ibv_wc_status_str(wc[0].status);
  else
    EXPECT_NE(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc[1].wr_id, 3u);
  EXPECT_EQ(wc[1].status, IBV_WC_WR_FLUSH_ERR) << ibv_wc_status_str(wc[1].status);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), 4096), 0);
}

// IBTA C9-218 (requester class F): a completion the send CQ cannot take
// ends the QP with an asynchronous error; the CQ reports its own.
TEST_F(RcTest, SendCqOverflowEndsTheQp) {
  if (!SoftA()) GTEST_SKIP() << "rdma_rxe leaves its QP as it is";
  ASSERT_NO_FATAL_FAILURE(Pair(4096, ConnOpts(), 4));
  const int cqes = a_.cq->cqe;
  int posted = 0, err = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  // Completions free the SQ's slots, the CQ is not polled: it fills.
  while (posted < 2 * cqes + 8 && std::chrono::steady_clock::now() < until) {
    err = PostSend(a_, IBV_WR_RDMA_WRITE, 0, 8, posted, (uintptr_t)b_.buf.data(), b_.mr->rkey);
    if (err == ENOMEM) {
      usleep(1000);
      continue;
    }
    if (err) break;
    posted++;
  }
  ASSERT_TRUE(WaitQpEvent(a_dev_->ctx, a_.qp, IBV_EVENT_QP_FATAL, 30000))
      << "no IBV_EVENT_QP_FATAL after " << posted << " WQEs on a CQ of " << cqes;
  ibv_qp_attr attr;
  ibv_qp_init_attr init;
  ASSERT_EQ(ibv_query_qp(a_.qp, &attr, IBV_QP_STATE, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_ERR);
}

// IBTA C9-225 (responder class G): a receive completion the CQ cannot take
// ends the responder's QP with an asynchronous error, and its message is
// not acknowledged: the requester does not see it complete. What came
// before it is: here an unsignaled SEND, which asks for no ACK itself.
TEST_F(RcTest, RecvCqOverflowEndsTheResponder) {
  if (!SoftB()) GTEST_SKIP() << "the responder under test is softrdma's";
  ConnOpts o;
  o.retry_cnt = 1;
  ASSERT_NO_FATAL_FAILURE(Pair(4096, o, 4));
  const int cqes = b_.cq->cqe;
  // One SEND at a time, a receive for each, until B's CQ has one free
  // entry; B's CQ is never polled. Two receives more than that are
  // posted all along, so that every ACK grants A credit for two SENDs: a
  // SEND without credit would ask for an ACK of its own (C9-163).
  ASSERT_EQ(PostRecv(b_, 0, 64, 5000), 0);
  ASSERT_EQ(PostRecv(b_, 0, 64, 5001), 0);
  for (int i = 0; i < cqes - 1; i++) {
    ASSERT_EQ(PostRecv(b_, 0, 64, i), 0);
    ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, 8, i), 0);
    auto wc = Poll(a_.cq, 1);
    ASSERT_EQ(wc.size(), 1u) << "SEND " << i;
    ASSERT_EQ(wc[0].status, IBV_WC_SUCCESS) << "SEND " << i << ": "
                                            << ibv_wc_status_str(wc[0].status);
  }
  // An unsignaled SEND takes the last entry, a signaled one overflows.
  ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, 8, 1000, 0, 0, 0), 0);
  ASSERT_EQ(PostSend(a_, IBV_WR_SEND, 0, 8, 1001), 0);
  auto wc = Poll(a_.cq, 1);
  ASSERT_GE(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 1001u) << "the SEND before the overflow was not acknowledged";
  EXPECT_EQ(wc[0].status, IBV_WC_RETRY_EXC_ERR) << ibv_wc_status_str(wc[0].status);
  EXPECT_TRUE(WaitQpEvent(b_dev_->ctx, b_.qp, IBV_EVENT_QP_FATAL, 10000))
      << "no IBV_EVENT_QP_FATAL at B";
}

TEST_F(RcTest, SolicitedEventWakesChannel) {
  ASSERT_NO_FATAL_FAILURE(Pair(4096));
  ibv_comp_channel* ch = ibv_create_comp_channel(b_dev_->ctx);
  ASSERT_NE(ch, nullptr);
  ibv_cq* cq = ibv_create_cq(b_dev_->ctx, 16, nullptr, ch, 0);
  ASSERT_NE(cq, nullptr);
  // A QP on B whose receive CQ has the channel.
  End c;
  c.dev = b_dev_;
  c.cq = cq;
  ibv_qp_init_attr init = {};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  init.cap = {16, 16, 1, 1, 0};
  c.qp = ibv_create_qp(b_dev_->pd, &init);
  ASSERT_NE(c.qp, nullptr);
  c.buf.assign(4096, 0);
  c.mr = ibv_reg_mr(b_dev_->pd, c.buf.data(), 4096, kAccess);
  c.psn = 7;
  End d;
  ASSERT_TRUE(MakeEnd(a_dev_, &d, 4096));
  ASSERT_EQ(Connect(&d, &c, mtu_, {}), 0);
  ASSERT_EQ(Connect(&c, &d, mtu_, {}), 0);
  ASSERT_EQ(PostRecv(c, 0, 64, 1), 0);
  ASSERT_EQ(PostRecv(c, 0, 64, 2), 0);
  ASSERT_EQ(ibv_req_notify_cq(cq, 1), 0);  // solicited only
  ASSERT_EQ(PostSend(d, IBV_WR_SEND, 0, 8, 10, 0, 0, 0), 0);
  pollfd p = {ch->fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 300), 0) << "an unsolicited SEND woke the channel";
  ASSERT_EQ(PostSend(d, IBV_WR_SEND, 0, 8, 11, 0, 0, IBV_SEND_SOLICITED), 0);
  ASSERT_EQ(poll(&p, 1, 10000), 1);
  ibv_cq* ev_cq;
  void* ev_ctx;
  ASSERT_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
  EXPECT_EQ(ev_cq, cq);
  ibv_ack_cq_events(cq, 1);
  EXPECT_EQ(Poll(cq, 2).size(), 2u);
  ASSERT_EQ(ibv_destroy_qp(c.qp), 0);
  c.qp = nullptr;
  c.cq = nullptr;
  ibv_dereg_mr(c.mr);
  c.mr = nullptr;
  ASSERT_EQ(ibv_destroy_cq(cq), 0);
  ASSERT_EQ(ibv_destroy_comp_channel(ch), 0);
}

}  // namespace
