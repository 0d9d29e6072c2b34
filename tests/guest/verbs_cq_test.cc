// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The CQ side of the extended verbs of libsoftrdma, in the binary and
// topology of verbs_ex_test.cc:
//
//   - ibv_create_cq_ex() and extended polling, every ibv_wc_read_*()
//     accessor a CQE can answer, and what creation must refuse;
//   - completion timestamps, free-running and wall clock, and the device's
//     clock (ibv_query_rt_values_ex());
//   - ibv_resize_cq() larger and smaller with completions outstanding, and
//     while completions keep arriving;
//   - completion channels: solicited-only and any-completion arming.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "hostile_rings.h"
#include "verbs_ex.h"

namespace {

using namespace srdma_test;

// ---------------------------------------------------------------- creation

TEST_F(VerbsExTest, CreateCqExRefusesWhatACqeCannotHold) {
  for (uint64_t flag : {(uint64_t)IBV_WC_EX_WITH_CVLAN, (uint64_t)IBV_WC_EX_WITH_FLOW_TAG,
                        (uint64_t)IBV_WC_EX_WITH_TM_INFO}) {
    SCOPED_TRACE(flag);
    errno = 0;
    EXPECT_EQ(CreateCqEx(a_dev_, 16, nullptr, nullptr, kWcFlags | flag), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
  }

  ibv_cq_init_attr_ex attr = {};
  attr.cqe = 16;
  attr.wc_flags = kWcFlags;
  attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
  attr.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
  errno = 0;
  EXPECT_EQ(ibv_create_cq_ex(a_dev_->ctx, &attr), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);

  // A parent domain is taken (VerbsTest.ParentDomainStandsForItsPd), a
  // protection domain in its place is not.
  attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
  attr.flags = 0;
  attr.parent_domain = a_dev_->pd;
  errno = 0;
  EXPECT_EQ(ibv_create_cq_ex(a_dev_->ctx, &attr), nullptr);
  EXPECT_EQ(errno, EINVAL);

  attr = {};
  attr.cqe = 0;
  errno = 0;
  EXPECT_EQ(ibv_create_cq_ex(a_dev_->ctx, &attr), nullptr);
  EXPECT_EQ(errno, EINVAL);

  // What it can hold, and the single-threaded promise, are accepted.
  attr = {};
  attr.cqe = 100;
  attr.wc_flags = kWcFlags;
  attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
  attr.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
  ibv_cq_ex* cq = ibv_create_cq_ex(a_dev_->ctx, &attr);
  ASSERT_NE(cq, nullptr) << strerror(errno);
  EXPECT_GE(cq->cqe, 100);
  ibv_poll_cq_attr pattr = {};
  EXPECT_EQ(ibv_start_poll(cq, &pattr), ENOENT);
  EXPECT_EQ(ibv_start_poll(cq, &pattr), ENOENT);
  EXPECT_EQ(ibv_resize_cq(ibv_cq_ex_to_cq(cq), 300), 0);
  EXPECT_GE(cq->cqe, 300);
  EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
}

// ---------------------------------------------------------------- extended polling

// Every operation posted with ibv_post_send(); both sides polled with the
// extended API, every accessor checked.
TEST_F(VerbsExTest, ExtendedPollingOfEveryCompletion) {
  PairX(65536);
  const uint32_t aqpn = a_->qp->qp_num, bqpn = b_->qp->qp_num;
  auto expect_send = [&](const XWc& w, uint64_t id, ibv_wc_opcode op) {
    EXPECT_EQ(w.status, IBV_WC_SUCCESS) << ibv_wc_status_str(w.status);
    EXPECT_EQ(w.wr_id, id);
    EXPECT_EQ(w.opcode, op);
    EXPECT_EQ(w.vendor_err, 0u);
    EXPECT_EQ(w.qp_num, aqpn);
    EXPECT_EQ(w.wc_flags, 0u);
    EXPECT_EQ(w.slid, 0u);
    EXPECT_EQ(w.sl, 0);
    EXPECT_EQ(w.dlid_path_bits, 0);
  };
  auto expect_recv = [&](const XWc& w, uint64_t id, ibv_wc_opcode op, uint32_t len,
                         unsigned flags, uint32_t imm) {
    EXPECT_EQ(w.status, IBV_WC_SUCCESS) << ibv_wc_status_str(w.status);
    EXPECT_EQ(w.wr_id, id);
    EXPECT_EQ(w.opcode, op);
    EXPECT_EQ(w.vendor_err, 0u);
    EXPECT_EQ(w.byte_len, len);
    EXPECT_EQ(w.wc_flags, flags);
    if (flags & IBV_WC_WITH_IMM) {
      EXPECT_EQ(w.imm, imm);
    }
    EXPECT_EQ(w.qp_num, bqpn);
    EXPECT_EQ(w.src_qp, aqpn);
    EXPECT_EQ(w.slid, 0u);
    EXPECT_EQ(w.sl, 0);
    EXPECT_EQ(w.dlid_path_bits, 0);
  };

  // SEND
  Fill(a_->buf, 0, 1500, 1);
  ASSERT_EQ(PostRecv(*b_, 0, 4096, 101), 0);
  ASSERT_EQ(PostSend(*a_, IBV_WR_SEND, 0, 1500, 1), 0);
  auto s = PollEx(a_->cqx, 1);
  auto r = PollEx(b_->cqx, 1);
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(r.size(), 1u);
  expect_send(s[0], 1, IBV_WC_SEND);
  expect_recv(r[0], 101, IBV_WC_RECV, 1500, 0, 0);
  EXPECT_EQ(std::memcmp(a_->buf.data(), b_->buf.data(), 1500), 0);

  // SEND with immediate
  Fill(a_->buf, 0, 3000, 2);
  ASSERT_EQ(PostRecv(*b_, 0, 4096, 102), 0);
  ASSERT_EQ(PostSend(*a_, IBV_WR_SEND_WITH_IMM, 0, 3000, 2, 0, 0, IBV_SEND_SIGNALED,
                     0xdeadbeef),
            0);
  s = PollEx(a_->cqx, 1);
  r = PollEx(b_->cqx, 1);
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(r.size(), 1u);
  expect_send(s[0], 2, IBV_WC_SEND);
  expect_recv(r[0], 102, IBV_WC_RECV, 3000, IBV_WC_WITH_IMM, 0xdeadbeef);
  EXPECT_EQ(std::memcmp(a_->buf.data(), b_->buf.data(), 3000), 0);

  // RDMA WRITE, then WRITE with immediate
  Fill(a_->buf, 4096, 5000, 3);
  ASSERT_EQ(PostSend(*a_, IBV_WR_RDMA_WRITE, 4096, 5000, 3, Addr(*b_, 8192), b_->mr->rkey), 0);
  s = PollEx(a_->cqx, 1);
  ASSERT_EQ(s.size(), 1u);
  expect_send(s[0], 3, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(std::memcmp(a_->buf.data() + 4096, b_->buf.data() + 8192, 5000), 0);
  Fill(a_->buf, 4096, 777, 4);
  ASSERT_EQ(PostRecv(*b_, 0, 0, 104), 0);
  ASSERT_EQ(PostSend(*a_, IBV_WR_RDMA_WRITE_WITH_IMM, 4096, 777, 4, Addr(*b_, 20000),
                     b_->mr->rkey, IBV_SEND_SIGNALED, 0x1234),
            0);
  s = PollEx(a_->cqx, 1);
  r = PollEx(b_->cqx, 1);
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(r.size(), 1u);
  expect_send(s[0], 4, IBV_WC_RDMA_WRITE);
  expect_recv(r[0], 104, IBV_WC_RECV_RDMA_WITH_IMM, 777, IBV_WC_WITH_IMM, 0x1234);
  EXPECT_EQ(std::memcmp(a_->buf.data() + 4096, b_->buf.data() + 20000, 777), 0);

  // RDMA READ
  Fill(b_->buf, 30000, 6000, 5);
  ASSERT_EQ(PostSend(*a_, IBV_WR_RDMA_READ, 30000, 6000, 5, Addr(*b_, 30000), b_->mr->rkey), 0);
  s = PollEx(a_->cqx, 1);
  ASSERT_EQ(s.size(), 1u);
  expect_send(s[0], 5, IBV_WC_RDMA_READ);
  EXPECT_EQ(s[0].byte_len, 6000u);
  EXPECT_EQ(std::memcmp(a_->buf.data() + 30000, b_->buf.data() + 30000, 6000), 0);

  // Atomics
  uint64_t* target = reinterpret_cast<uint64_t*>(b_->buf.data() + 40000);
  uint64_t* result = reinterpret_cast<uint64_t*>(a_->buf.data() + 40000);
  *target = 1000;
  ASSERT_EQ(PostSend(*a_, IBV_WR_ATOMIC_FETCH_AND_ADD, 40000, 8, 6, Addr(*b_, 40000),
                     b_->mr->rkey, IBV_SEND_SIGNALED, 0, 24),
            0);
  s = PollEx(a_->cqx, 1);
  ASSERT_EQ(s.size(), 1u);
  expect_send(s[0], 6, IBV_WC_FETCH_ADD);
  EXPECT_EQ(s[0].byte_len, 8u);
  EXPECT_EQ(*result, 1000u);
  EXPECT_EQ(*target, 1024u);
  ASSERT_EQ(PostSend(*a_, IBV_WR_ATOMIC_CMP_AND_SWP, 40000, 8, 7, Addr(*b_, 40000),
                     b_->mr->rkey, IBV_SEND_SIGNALED, 0, 1024, 77),
            0);
  s = PollEx(a_->cqx, 1);
  ASSERT_EQ(s.size(), 1u);
  expect_send(s[0], 7, IBV_WC_COMP_SWAP);
  EXPECT_EQ(s[0].byte_len, 8u);
  EXPECT_EQ(*result, 1024u);
  EXPECT_EQ(*target, 77u);

  // Empty: ENOENT, and the CQ lock was released (the next poll returns).
  ibv_poll_cq_attr attr = {};
  EXPECT_EQ(ibv_start_poll(a_->cqx, &attr), ENOENT);
  EXPECT_EQ(ibv_start_poll(a_->cqx, &attr), ENOENT);
  ibv_wc wc;
  EXPECT_EQ(ibv_poll_cq(a_->cq, 1, &wc), 0);
  attr.comp_mask = 1;
  EXPECT_EQ(ibv_start_poll(a_->cqx, &attr), EINVAL);
}

// Both ways of polling take from the same ring, in order.
TEST_F(VerbsExTest, ClassicAndExtendedPollingInterleave) {
  PairX(65536);
  constexpr int kN = 24;
  for (int i = 0; i < kN; i++) ASSERT_EQ(PostRecv(*b_, i * 100, 100, 1000 + i), 0);
  for (int i = 0; i < kN; i++)
    ASSERT_EQ(PostSend(*a_, IBV_WR_SEND_WITH_IMM, i * 100, 100, i, 0, 0, IBV_SEND_SIGNALED,
                       i),
              0);
  ASSERT_EQ(PollEx(a_->cqx, kN).size(), (size_t)kN);
  int next = 0;
  for (int turn = 0; next < kN; turn++) {
    if (turn % 2) {
      ibv_wc wc[3];
      int n = ibv_poll_cq(b_->cq, 3, wc);
      ASSERT_GT(n, 0);
      for (int i = 0; i < n; i++, next++) {
        EXPECT_EQ(wc[i].wr_id, 1000u + next);
        EXPECT_EQ(wc[i].status, IBV_WC_SUCCESS);
        EXPECT_TRUE(wc[i].wc_flags & IBV_WC_WITH_IMM);
        EXPECT_EQ(ntohl(wc[i].imm_data), (uint32_t)next);
        EXPECT_EQ(wc[i].src_qp, a_->qp->qp_num);
      }
    } else {
      const int n = std::min(2, kN - next);
      auto w = PollEx(b_->cqx, n);
      ASSERT_EQ(w.size(), (size_t)n);
      for (auto& x : w) {
        EXPECT_EQ(x.wr_id, 1000u + next);
        EXPECT_EQ(x.imm, (uint32_t)next);
        next++;
      }
    }
  }
}

// The decoding of every CQE field, including the invalidated rkey that a
// SEND with invalidate of a fast-registration MR reports (which a process
// cannot register): CQEs written into the CQ's mapped ring by the test, as
// the kernel would write them.
TEST_F(VerbsExTest, ExtendedPollingDecodesEveryCqeField) {
  ibv_cq_ex* cq = CreateCqEx(a_dev_, 8, nullptr, nullptr);
  ASSERT_NE(cq, nullptr);
  srdma_ring_ctrl* ctrl = hostile_cq_ctrl(ibv_cq_ex_to_cq(cq));
  auto* cqes = reinterpret_cast<srdma_cqe*>(reinterpret_cast<uint8_t*>(ctrl) +
                                            SRDMA_RING_CTRL_SIZE);
  srdma_cqe inv = {};
  inv.wr_id = 0x1122334455667788ull;
  inv.status = IBV_WC_SUCCESS;
  inv.opcode = IBV_WC_RECV;
  inv.wc_flags = SRDMA_CQE_WITH_INV;
  inv.byte_len = 4321;
  inv.qp_num = 0x123;
  inv.src_qp = 0xabcdef;
  inv.ex.invalidated_rkey = 0x5a5a0102;
  inv.vendor_err = 0;
  inv.sl = 3;
  srdma_cqe err = {};
  err.wr_id = 9;
  err.status = IBV_WC_LOC_PROT_ERR;
  err.opcode = IBV_WC_RDMA_READ;
  err.vendor_err = 0x77;
  err.qp_num = 0x456;
  srdma_cqe imm = {};
  imm.wr_id = 10;
  imm.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
  imm.wc_flags = SRDMA_CQE_WITH_IMM;
  imm.ex.imm_data = htonl(0xcafef00d);
  cqes[0] = inv;
  cqes[1] = err;
  cqes[2] = imm;
  cqes[3] = inv;
  __atomic_store_n(&ctrl->prod, 4, __ATOMIC_RELEASE);

  auto w = PollEx(cq, 3, 1000);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].wr_id, inv.wr_id);
  EXPECT_EQ(w[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(w[0].opcode, IBV_WC_RECV);
  EXPECT_EQ(w[0].wc_flags, (unsigned)IBV_WC_WITH_INV);
  EXPECT_EQ(w[0].inv_rkey, 0x5a5a0102u);
  EXPECT_EQ(w[0].byte_len, 4321u);
  EXPECT_EQ(w[0].qp_num, 0x123u);
  EXPECT_EQ(w[0].src_qp, 0xabcdefu);
  EXPECT_EQ(w[0].sl, 3);
  EXPECT_EQ(w[0].slid, 0u);
  EXPECT_EQ(w[0].dlid_path_bits, 0);
  EXPECT_EQ(w[1].wr_id, 9u);
  EXPECT_EQ(w[1].status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(w[1].opcode, IBV_WC_RDMA_READ);
  EXPECT_EQ(w[1].vendor_err, 0x77u);
  EXPECT_EQ(w[1].qp_num, 0x456u);
  EXPECT_EQ(w[2].wr_id, 10u);
  EXPECT_EQ(w[2].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(w[2].wc_flags, (unsigned)IBV_WC_WITH_IMM);
  EXPECT_EQ(w[2].imm, 0xcafef00du);
  // The same CQE through ibv_poll_cq(): the union holds the rkey.
  ibv_wc wc = {};
  ASSERT_EQ(ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc), 1);
  EXPECT_EQ(wc.wr_id, inv.wr_id);
  EXPECT_EQ(wc.wc_flags, (unsigned)IBV_WC_WITH_INV);
  EXPECT_EQ(wc.invalidated_rkey, 0x5a5a0102u);
  EXPECT_EQ(wc.src_qp, 0xabcdefu);
  EXPECT_EQ(wc.sl, 3);
  EXPECT_EQ(__atomic_load_n(&ctrl->cons, __ATOMIC_ACQUIRE), 4u);
  EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
}

// ---------------------------------------------------------------- resize

TEST_F(VerbsExTest, ResizeWithCompletionsOutstanding) {
  XOpts ob;
  ob.depth = 128;
  ob.cqe = 64;
  ob.channel = Channel(b_dev_);
  ASSERT_NE(ob.channel, nullptr);
  PairX(128 * 256, {}, ob);
  ASSERT_EQ(b_->cq->cqe, 64);
  Fill(a_->buf, 0, 128 * 256, 41);
  int sent = 0, polled = 0;
  auto send = [&](int n) {
    for (int i = 0; i < n; i++, sent++) {
      ASSERT_EQ(PostRecv(*b_, sent * 256, 256, sent), 0);
      ASSERT_EQ(PostSend(*a_, IBV_WR_SEND, sent * 256, 100 + sent, sent), 0);
    }
    // A SEND completes after its receive's CQE was written.
    ASSERT_EQ(PollEx(a_->cqx, n).size(), (size_t)n);
  };
  auto expect_next = [&](const std::vector<XWc>& w) {
    for (const XWc& x : w) {
      EXPECT_EQ(x.wr_id, (uint64_t)polled) << "lost, duplicated or reordered";
      EXPECT_EQ(x.status, IBV_WC_SUCCESS);
      EXPECT_EQ(x.byte_len, 100u + polled);
      polled++;
    }
  };

  send(40);
  // Smaller than what is outstanding: refused, nothing changes.
  EXPECT_EQ(ibv_resize_cq(b_->cq, 16), EINVAL);
  EXPECT_EQ(b_->cq->cqe, 64);
  expect_next(PollEx(b_->cqx, 5));
  // Larger, with 35 outstanding.
  ASSERT_EQ(ibv_resize_cq(b_->cq, 200), 0);
  EXPECT_GE(b_->cq->cqe, 200);
  // The arm survives a resize.
  ASSERT_EQ(ibv_req_notify_cq(b_->cq, 0), 0);
  ASSERT_EQ(ibv_resize_cq(b_->cq, 150), 0);
  send(40);
  void* ctx = nullptr;
  EXPECT_EQ(WaitEvent(ob.channel, 10000, &ctx), b_->cq);
  EXPECT_EQ(ctx, b_.get());
  // Smaller, with 75 outstanding: refused under 75, accepted above.
  EXPECT_EQ(ibv_resize_cq(b_->cq, 64), EINVAL);
  ASSERT_EQ(ibv_resize_cq(b_->cq, 100), 0);
  EXPECT_GE(b_->cq->cqe, 100);
  EXPECT_LT(b_->cq->cqe, 150);
  // Drain with both polling APIs.
  ibv_wc wc[10];
  ASSERT_EQ(ibv_poll_cq(b_->cq, 10, wc), 10);
  for (auto& x : wc) {
    EXPECT_EQ(x.wr_id, (uint64_t)polled);
    EXPECT_EQ(x.byte_len, 100u + polled);
    polled++;
  }
  expect_next(PollEx(b_->cqx, 65));
  EXPECT_EQ(polled, 80);
  ibv_poll_cq_attr attr = {};
  EXPECT_EQ(ibv_start_poll(b_->cqx, &attr), ENOENT);
  for (int i = 0; i < 80; i++)
    ASSERT_EQ(std::memcmp(a_->buf.data() + i * 256, b_->buf.data() + i * 256, 100 + i), 0)
        << i;
  // Down to the smallest size once empty, and the CQ still works.
  ASSERT_EQ(ibv_resize_cq(b_->cq, 1), 0);
  EXPECT_GE(b_->cq->cqe, 1);
  EXPECT_EQ(ibv_resize_cq(b_->cq, 0), EINVAL);
  ASSERT_EQ(PostRecv(*b_, 0, 256, 80), 0);
  ASSERT_EQ(PostSend(*a_, IBV_WR_SEND, 0, 180, 80), 0);
  expect_next(PollEx(b_->cqx, 1));
  EXPECT_EQ(polled, 81);
}

// Resizes while the kernel keeps completing receives into the CQ.
TEST_F(VerbsExTest, ResizeWhileCompletionsArrive) {
  constexpr int kMsgs = 1500;
  constexpr int kRq = 128;
  XOpts ob;
  ob.depth = kRq;
  ob.cqe = kRq;
  PairX(kRq * 64, {}, ob);
  std::atomic<bool> stop{false};
  std::atomic<int> send_err{0};
  std::thread sender([&] {
    int posted = 0, done = 0;
    while (done < kMsgs && !stop) {
      while (posted < kMsgs && posted - done < 48) {
        uint32_t v = posted;
        std::memcpy(a_->buf.data() + (posted % kRq) * 64, &v, 4);
        int flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
        if (PostSend(*a_, IBV_WR_SEND, (posted % kRq) * 64, 4, posted, 0, 0, flags)) {
          send_err = 1;
          return;
        }
        posted++;
      }
      ibv_wc wc[16];
      int n = ibv_poll_cq(a_->cq, 16, wc);
      for (int i = 0; i < n; i++)
        if (wc[i].status != IBV_WC_SUCCESS) send_err = 2;
      done += n > 0 ? n : 0;
      if (n <= 0) usleep(20);
    }
  });
  const int sizes[] = {kRq, 4 * kRq, 2 * kRq, 8 * kRq, kRq, 3 * kRq};
  int posted = 0, got = 0, resizes = 0;
  bool ok = true;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  while (ok && got < kMsgs && std::chrono::steady_clock::now() < end) {
    // One slot spare: the kernel hands a receive's slot back just after
    // writing its completion.
    while (ok && posted < kMsgs && posted - got < kRq - 1) {
      ok = PostRecv(*b_, (posted % kRq) * 64, 64, posted) == 0;
      EXPECT_TRUE(ok) << "receive " << posted;
      posted++;
    }
    for (const XWc& x : PollEx(b_->cqx, 7, 0)) {
      uint32_t v = ~0u;
      std::memcpy(&v, b_->buf.data() + (got % kRq) * 64, 4);
      ok = x.status == IBV_WC_SUCCESS && x.wr_id == (uint64_t)got && v == (uint32_t)got;
      EXPECT_TRUE(ok) << "completion " << got << ": wr_id " << x.wr_id << ", data " << v
                      << ", " << ibv_wc_status_str(x.status);
      if (!ok) break;
      got++;
      // Every size holds every receive that can be outstanding.
      if (got % 37 == 0) {
        int err = ibv_resize_cq(b_->cq, sizes[resizes++ % 6]);
        ok = err == 0;
        EXPECT_EQ(err, 0) << "resize at " << got;
        if (!ok) break;
      }
    }
  }
  stop = true;
  sender.join();
  EXPECT_EQ(send_err.load(), 0);
  EXPECT_EQ(got, kMsgs);
  EXPECT_GT(resizes, 30);
}

TEST_F(VerbsExTest, ResizeOfAPlainCq) {
  ibv_cq* cq = ibv_create_cq(a_dev_->ctx, 10, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr);
  ASSERT_EQ(ibv_resize_cq(cq, 1000), 0);
  EXPECT_GE(cq->cqe, 1000);
  ibv_device_attr dev = {};
  ASSERT_EQ(ibv_query_device(a_dev_->ctx, &dev), 0);
  EXPECT_EQ(ibv_resize_cq(cq, dev.max_cqe + 1), EINVAL);
  ibv_wc wc;
  EXPECT_EQ(ibv_poll_cq(cq, 1, &wc), 0);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
}

// ---------------------------------------------------------------- timestamps

uint64_t ClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

// The device's free-running clock is CLOCK_MONOTONIC_RAW in ns: the
// attributes say 1 GHz and 64 bits, ibv_query_rt_values_ex() reads it.
TEST_F(VerbsExTest, DeviceClockIsMonotonicRawNs) {
  ibv_device_attr_ex attr = {};
  ASSERT_EQ(ibv_query_device_ex(a_dev_->ctx, nullptr, &attr), 0);
  EXPECT_EQ(attr.hca_core_clock, 1000000u);  // kHz
  EXPECT_EQ(attr.completion_timestamp_mask, UINT64_MAX);

  ibv_values_ex v = {};
  v.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
  uint64_t before = ClockNs(CLOCK_MONOTONIC_RAW);
  ASSERT_EQ(ibv_query_rt_values_ex(a_dev_->ctx, &v), 0);
  uint64_t after = ClockNs(CLOCK_MONOTONIC_RAW);
  EXPECT_EQ(v.comp_mask, (uint32_t)IBV_VALUES_MASK_RAW_CLOCK);
  EXPECT_EQ(v.raw_clock.tv_sec, 0);
  EXPECT_GE((uint64_t)v.raw_clock.tv_nsec, before);
  EXPECT_LE((uint64_t)v.raw_clock.tv_nsec, after);

  v.comp_mask = 1u << 31;
  EXPECT_EQ(ibv_query_rt_values_ex(a_dev_->ctx, &v), EINVAL);
}

// Both timestamps on the completions of both ends: each falls between the
// clock read before the post and after the poll, and they do not go back.
TEST_F(VerbsExTest, CompletionTimestamps) {
  XOpts o;
  o.wc_flags = kWcFlags | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
               IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
  PairX(4096, o, o);
  struct Ts {
    uint64_t wr_id, raw, real;
  };
  auto poll_ts = [](ibv_cq_ex* cq) {
    Ts t = {};
    ibv_poll_cq_attr attr = {};
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int ret;
    while ((ret = ibv_start_poll(cq, &attr)) == ENOENT &&
           std::chrono::steady_clock::now() < end)
      usleep(50);
    EXPECT_EQ(ret, 0);
    if (ret) return t;
    EXPECT_EQ(cq->status, IBV_WC_SUCCESS) << ibv_wc_status_str(cq->status);
    t.wr_id = cq->wr_id;
    t.raw = ibv_wc_read_completion_ts(cq);
    t.real = ibv_wc_read_completion_wallclock_ns(cq);
    ibv_end_poll(cq);
    return t;
  };

  uint64_t last_raw[2] = {}, last_real[2] = {};
  for (uint64_t i = 1; i <= 3; i++) {
    SCOPED_TRACE(i);
    uint64_t raw0 = ClockNs(CLOCK_MONOTONIC_RAW), real0 = ClockNs(CLOCK_REALTIME);
    ASSERT_EQ(PostRecv(*b_, 0, 4096, 100 + i), 0);
    ASSERT_EQ(PostSend(*a_, IBV_WR_SEND, 0, 1000, i), 0);
    Ts s = poll_ts(a_->cqx), r = poll_ts(b_->cqx);
    uint64_t raw1 = ClockNs(CLOCK_MONOTONIC_RAW), real1 = ClockNs(CLOCK_REALTIME);
    EXPECT_EQ(s.wr_id, i);
    EXPECT_EQ(r.wr_id, 100 + i);
    int k = 0;
    for (const Ts& t : {s, r}) {
      EXPECT_GE(t.raw, raw0);
      EXPECT_LE(t.raw, raw1);
      EXPECT_GE(t.real, real0);
      EXPECT_LE(t.real, real1);
      EXPECT_GE(t.raw, last_raw[k]);
      last_raw[k] = t.raw;
      last_real[k++] = t.real;
    }
  }
  EXPECT_NE(last_real[0], 0u);
}

// ---------------------------------------------------------------- events

TEST_F(VerbsExTest, CompletionChannelSolicitedAndAll) {
  XOpts oa, ob;
  oa.channel = Channel(a_dev_);
  ob.channel = Channel(b_dev_);
  ASSERT_TRUE(oa.channel && ob.channel);
  PairX(65536, oa, ob);
  Fill(a_->buf, 0, 65536, 51);
  for (int i = 0; i < 8; i++) ASSERT_EQ(PostRecv(*b_, i * 1024, 1024, 500 + i), 0);
  void* ctx = nullptr;

  // Solicited only: an unsolicited receive does not wake.
  ASSERT_EQ(ibv_req_notify_cq(b_->cq, 1), 0);
  ASSERT_EQ(PostSend(*a_, IBV_WR_SEND, 0, 100, 1), 0);
  ASSERT_EQ(PollEx(a_->cqx, 1).size(), 1u);
  EXPECT_EQ(WaitEvent(ob.channel, 500), nullptr) << "an unsolicited completion woke";
  ASSERT_EQ(PollEx(b_->cqx, 1).size(), 1u);
  // ... a solicited one does (the arm was not used up).
  ASSERT_EQ(PostSend(*a_, IBV_WR_SEND, 1024, 100, 2, 0, 0,
                     IBV_SEND_SIGNALED | IBV_SEND_SOLICITED),
            0);
  EXPECT_EQ(WaitEvent(ob.channel, 10000, &ctx), b_->cq);
  EXPECT_EQ(ctx, b_.get());
  auto r = PollEx(b_->cqx, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].wr_id, 501u);
  ASSERT_EQ(PollEx(a_->cqx, 1).size(), 1u);
  // One event per arm.
  ASSERT_EQ(PostSend(*a_, IBV_WR_SEND, 2048, 100, 3, 0, 0,
                     IBV_SEND_SIGNALED | IBV_SEND_SOLICITED),
            0);
  ASSERT_EQ(PollEx(a_->cqx, 1).size(), 1u);
  EXPECT_EQ(WaitEvent(ob.channel, 500), nullptr) << "an event without an arm";
  ASSERT_EQ(PollEx(b_->cqx, 1).size(), 1u);
  // Solicited through the ibv_wr_* API, with immediate data.
  ASSERT_EQ(ibv_req_notify_cq(b_->cq, 1), 0);
  ibv_wr_start(a_->qpx);
  a_->qpx->wr_id = 4;
  a_->qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
  ibv_wr_send_imm(a_->qpx, htonl(44));
  ibv_wr_set_sge(a_->qpx, a_->mr->lkey, Addr(*a_, 3072), 10);
  ASSERT_EQ(ibv_wr_complete(a_->qpx), 0);
  EXPECT_EQ(WaitEvent(ob.channel, 10000), b_->cq);
  r = PollEx(b_->cqx, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].imm, 44u);
  ASSERT_EQ(PollEx(a_->cqx, 1).size(), 1u);

  // Any completion: an unsolicited receive wakes.
  ASSERT_EQ(ibv_req_notify_cq(b_->cq, 0), 0);
  ASSERT_EQ(PostSend(*a_, IBV_WR_SEND, 4096, 100, 5), 0);
  EXPECT_EQ(WaitEvent(ob.channel, 10000), b_->cq);
  ASSERT_EQ(PollEx(b_->cqx, 1).size(), 1u);
  // A later solicited-only request does not weaken a pending "any".
  ASSERT_EQ(ibv_req_notify_cq(b_->cq, 0), 0);
  ASSERT_EQ(ibv_req_notify_cq(b_->cq, 1), 0);
  ASSERT_EQ(PostSend(*a_, IBV_WR_SEND, 5120, 100, 6), 0);
  EXPECT_EQ(WaitEvent(ob.channel, 10000), b_->cq);
  ASSERT_EQ(PollEx(b_->cqx, 1).size(), 1u);
  ASSERT_EQ(PollEx(a_->cqx, 2).size(), 2u);
  // A send completion (RDMA WRITE) wakes its CQ's channel.
  ASSERT_EQ(ibv_req_notify_cq(a_->cq, 0), 0);
  ASSERT_EQ(PostSend(*a_, IBV_WR_RDMA_WRITE, 0, 4096, 7, Addr(*b_, 32768), b_->mr->rkey),
            0);
  EXPECT_EQ(WaitEvent(oa.channel, 10000, &ctx), a_->cq);
  EXPECT_EQ(ctx, a_.get());
  ASSERT_EQ(PollEx(a_->cqx, 1).size(), 1u);
  // IBTA 11.4.2.2: a completion in error wakes a solicited-only arm.
  ASSERT_EQ(ibv_req_notify_cq(b_->cq, 1), 0);
  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(b_->qp, &attr, IBV_QP_STATE), 0);
  EXPECT_EQ(WaitEvent(ob.channel, 10000), b_->cq);
  r = PollEx(b_->cqx, 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].status, IBV_WC_WR_FLUSH_ERR);
}

}  // namespace
