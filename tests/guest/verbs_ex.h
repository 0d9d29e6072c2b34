// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The extended verbs between two devices: ends whose CQ comes from
// ibv_create_cq_ex() and whose QP has the ibv_wr_* API, extended polling
// and completion events, and the fixture of the tests of
// srdma_verbs_ex_test (verbs_ex_test.cc, verbs_cq_test.cc).

#ifndef SRDMA_TESTS_GUEST_VERBS_EX_H
#define SRDMA_TESTS_GUEST_VERBS_EX_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "verbs_pair.h"

namespace srdma_test {

inline constexpr uint64_t kWcFlags = IBV_WC_STANDARD_FLAGS;
inline constexpr uint64_t kSendOps =
    IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_SEND_WITH_INV |
    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
    IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;

// An RC end whose CQ comes from ibv_create_cq_ex() and whose QP has the
// ibv_wr_* API.
struct XEnd : End {
  ibv_cq_ex* cqx = nullptr;
  ibv_qp_ex* qpx = nullptr;
  ibv_qp_cap cap = {};
};

struct XOpts {
  uint32_t depth = 64;
  int cqe = 0;  // 0: 4 * depth
  ibv_comp_channel* channel = nullptr;
  ibv_cq_ex* shared_cq = nullptr;  // use this CQ instead of a new one
  uint64_t wc_flags = kWcFlags;    // of a new CQ
};

inline ibv_cq_ex* CreateCqEx(Dev* dev, int cqe, ibv_comp_channel* ch, void* context,
                      uint64_t wc_flags = kWcFlags) {
  ibv_cq_init_attr_ex attr = {};
  attr.cqe = cqe;
  attr.cq_context = context;
  attr.channel = ch;
  attr.wc_flags = wc_flags;
  return ibv_create_cq_ex(dev->ctx, &attr);
}

inline bool MakeXEnd(Dev* dev, XEnd* e, size_t bytes, const XOpts& o = {}) {
  e->dev = dev;
  if (o.shared_cq) {
    e->cqx = o.shared_cq;
  } else {
    e->cqx = CreateCqEx(dev, o.cqe ? o.cqe : 4 * o.depth, o.channel, e, o.wc_flags);
    if (!e->cqx) return false;
    e->cq = ibv_cq_ex_to_cq(e->cqx);
  }
  ibv_qp_init_attr_ex init = {};
  init.send_cq = ibv_cq_ex_to_cq(e->cqx);
  init.recv_cq = ibv_cq_ex_to_cq(e->cqx);
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = o.depth;
  init.cap.max_recv_wr = o.depth;
  init.cap.max_send_sge = 4;
  init.cap.max_recv_sge = 4;
  init.cap.max_inline_data = 64;
  init.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  init.pd = dev->pd;
  init.send_ops_flags = kSendOps;
  e->qp = ibv_create_qp_ex(dev->ctx, &init);
  if (!e->qp) return false;
  e->cap = init.cap;
  e->qpx = ibv_qp_to_qp_ex(e->qp);
  if (!e->qpx) return false;
  e->buf.assign(bytes, 0);
  e->mr = ibv_reg_mr(dev->pd, e->buf.data(), e->buf.size(), kAccess);
  e->psn = std::random_device{}() & 0xffffff;
  return e->mr != nullptr;
}

// One extended completion, every accessor read.
struct XWc {
  uint64_t wr_id;
  ibv_wc_status status;
  ibv_wc_opcode opcode;
  uint32_t vendor_err;
  uint32_t byte_len;
  uint32_t imm;  // host order
  uint32_t inv_rkey;
  uint32_t qp_num;
  uint32_t src_qp;
  unsigned int wc_flags;
  uint32_t slid;
  uint8_t sl;
  uint8_t dlid_path_bits;
};

inline XWc ReadXWc(ibv_cq_ex* cq) {
  XWc w = {};
  w.wr_id = cq->wr_id;
  w.status = cq->status;
  w.opcode = ibv_wc_read_opcode(cq);
  w.vendor_err = ibv_wc_read_vendor_err(cq);
  w.byte_len = ibv_wc_read_byte_len(cq);
  w.wc_flags = ibv_wc_read_wc_flags(cq);
  if (w.wc_flags & IBV_WC_WITH_IMM) w.imm = ntohl(ibv_wc_read_imm_data(cq));
  if (w.wc_flags & IBV_WC_WITH_INV) w.inv_rkey = ibv_wc_read_invalidated_rkey(cq);
  w.qp_num = ibv_wc_read_qp_num(cq);
  w.src_qp = ibv_wc_read_src_qp(cq);
  w.slid = ibv_wc_read_slid(cq);
  w.sl = ibv_wc_read_sl(cq);
  w.dlid_path_bits = ibv_wc_read_dlid_path_bits(cq);
  return w;
}

// Poll @cq with start/next/end_poll until @n completions or @ms passed
// (at least one batch is tried).
inline std::vector<XWc> PollEx(ibv_cq_ex* cq, int n, int ms = 60000) {
  std::vector<XWc> out;
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    ibv_poll_cq_attr attr = {};
    int ret = ibv_start_poll(cq, &attr);
    if (ret && ret != ENOENT) {
      ADD_FAILURE() << "ibv_start_poll: " << ret;
      break;
    }
    if (!ret) {
      do {
        out.push_back(ReadXWc(cq));
      } while ((int)out.size() < n && (ret = ibv_next_poll(cq)) == 0);
      EXPECT_TRUE(ret == 0 || ret == ENOENT) << "ibv_next_poll: " << ret;
      ibv_end_poll(cq);
    }
    if ((int)out.size() >= n || std::chrono::steady_clock::now() >= end) break;
    if (ret) usleep(50);
  }
  return out;
}

// The next completion event of @ch within @ms, acknowledged, or nullptr.
inline ibv_cq* WaitEvent(ibv_comp_channel* ch, int ms, void** context = nullptr) {
  pollfd p = {ch->fd, POLLIN, 0};
  if (poll(&p, 1, ms) != 1) return nullptr;
  ibv_cq* cq = nullptr;
  void* ctx = nullptr;
  if (ibv_get_cq_event(ch, &cq, &ctx)) return nullptr;
  ibv_ack_cq_events(cq, 1);
  if (context) *context = ctx;
  return cq;
}

class VerbsExTest : public PairFixture {
 protected:
  void TearDown() override {
    // QPs and CQs before the channels their CQs use.
    a_.reset();
    b_.reset();
    for (ibv_comp_channel* ch : channels_) EXPECT_EQ(ibv_destroy_comp_channel(ch), 0);
    channels_.clear();
  }

  ibv_comp_channel* Channel(Dev* dev) {
    ibv_comp_channel* ch = ibv_create_comp_channel(dev->ctx);
    if (!ch) return nullptr;
    fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
    channels_.push_back(ch);
    return ch;
  }

  void PairX(size_t bytes, const XOpts& oa = {}, const XOpts& ob = {}) {
    a_ = std::make_unique<XEnd>();
    b_ = std::make_unique<XEnd>();
    ASSERT_TRUE(MakeXEnd(a_dev_, a_.get(), bytes, oa));
    ASSERT_TRUE(MakeXEnd(b_dev_, b_.get(), bytes, ob));
    ASSERT_EQ(Connect(a_.get(), b_.get(), mtu_, {}), 0);
    ASSERT_EQ(Connect(b_.get(), a_.get(), mtu_, {}), 0);
  }

  uint64_t Addr(End& e, size_t off) { return (uintptr_t)e.buf.data() + off; }

  std::unique_ptr<XEnd> a_, b_;
  std::vector<ibv_comp_channel*> channels_;
};

}  // namespace srdma_test

#endif  // SRDMA_TESTS_GUEST_VERBS_EX_H
