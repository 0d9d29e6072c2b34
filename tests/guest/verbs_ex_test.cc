// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The extended verbs of libsoftrdma between two devices, run in a guest
// (tests/guest/verbs_ex.sh, through tests/guest/pair.sh):
//
//   init netns                               netns "peer"
//   SRDMA_DEV_A -- veth (SRDMA_IP_A) ===== veth (SRDMA_IP_B) -- SRDMA_DEV_B
//
//   - ibv_create_cq_ex() and extended polling, every ibv_wc_read_*()
//     accessor a CQE can answer, and what creation must refuse;
//   - ibv_create_qp_ex() with the ibv_wr_* API, every operation, with
//     batching, abort and the errors ibv_wr_complete() reports;
//   - ibv_resize_cq() larger and smaller with completions outstanding, and
//     while completions keep arriving;
//   - completion channels: solicited-only and any-completion arming;
//   - four threads posting to their own QPs and polling one shared CQ;
//   - fork() after ibv_fork_init(): the parent keeps working.
//
// Data is verified byte for byte. Both devices are softrdma.

#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "hostile_rings.h"
#include "verbs_pair.h"

namespace {

using namespace srdma_test;

// ibv_fork_init() must come before any other verb of the process.
class ForkInitEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { ASSERT_EQ(ibv_fork_init(), 0); }
};

const auto* const kForkInit =
    ::testing::AddGlobalTestEnvironment(new ForkInitEnvironment);

constexpr uint64_t kWcFlags = IBV_WC_STANDARD_FLAGS;
constexpr uint64_t kSendOps =
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
};

ibv_cq_ex* CreateCqEx(Dev* dev, int cqe, ibv_comp_channel* ch, void* context,
                      uint64_t wc_flags = kWcFlags) {
  ibv_cq_init_attr_ex attr = {};
  attr.cqe = cqe;
  attr.cq_context = context;
  attr.channel = ch;
  attr.wc_flags = wc_flags;
  return ibv_create_cq_ex(dev->ctx, &attr);
}

bool MakeXEnd(Dev* dev, XEnd* e, size_t bytes, const XOpts& o = {}) {
  e->dev = dev;
  if (o.shared_cq) {
    e->cqx = o.shared_cq;
  } else {
    e->cqx = CreateCqEx(dev, o.cqe ? o.cqe : 4 * o.depth, o.channel, e);
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

XWc ReadXWc(ibv_cq_ex* cq) {
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
std::vector<XWc> PollEx(ibv_cq_ex* cq, int n, int ms = 60000) {
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
ibv_cq* WaitEvent(ibv_comp_channel* ch, int ms, void** context = nullptr) {
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

  static int PostRecv(End& e, size_t off, size_t len, uint64_t id) {
    ibv_sge sge = {(uintptr_t)e.buf.data() + off, (uint32_t)len, e.mr->lkey};
    ibv_recv_wr wr = {}, *bad;
    wr.wr_id = id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    return ibv_post_recv(e.qp, &wr, &bad);
  }

  // ibv_post_send() of one work request with one SGE.
  static int PostSend(End& e, ibv_wr_opcode op, size_t off, size_t len, uint64_t id,
                      uint64_t raddr = 0, uint32_t rkey = 0,
                      int flags = IBV_SEND_SIGNALED, uint32_t imm = 0,
                      uint64_t compare_add = 0, uint64_t swap = 0) {
    ibv_sge sge = {(uintptr_t)e.buf.data() + off, (uint32_t)len, e.mr->lkey};
    ibv_send_wr wr = {}, *bad;
    wr.wr_id = id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = op;
    wr.send_flags = flags;
    wr.imm_data = htonl(imm);
    if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
      wr.wr.atomic.remote_addr = raddr;
      wr.wr.atomic.rkey = rkey;
      wr.wr.atomic.compare_add = compare_add;
      wr.wr.atomic.swap = swap;
    } else {
      wr.wr.rdma.remote_addr = raddr;
      wr.wr.rdma.rkey = rkey;
    }
    return ibv_post_send(e.qp, &wr, &bad);
  }

  uint64_t Addr(End& e, size_t off) { return (uintptr_t)e.buf.data() + off; }

  std::unique_ptr<XEnd> a_, b_;
  std::vector<ibv_comp_channel*> channels_;
};

// ---------------------------------------------------------------- queries

TEST_F(VerbsExTest, QueriesStillWork) {
  PairX(4096);
  ibv_device_attr_ex dev = {};
  ASSERT_EQ(ibv_query_device_ex(a_dev_->ctx, nullptr, &dev), 0);
  EXPECT_GE(dev.orig_attr.max_cqe, 4096);
  EXPECT_GE(dev.orig_attr.max_qp_wr, 64);
  EXPECT_GT(dev.orig_attr.max_cq, 0);
  EXPECT_EQ(dev.orig_attr.atomic_cap, IBV_ATOMIC_HCA);

  ibv_port_attr port = {};
  ASSERT_EQ(ibv_query_port(a_dev_->ctx, 1, &port), 0);
  EXPECT_EQ(port.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_GT(port.gid_tbl_len, 0);

  ibv_qp_attr attr = {};
  ibv_qp_init_attr init = {};
  ASSERT_EQ(ibv_query_qp(a_->qp, &attr,
                         IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                             IBV_QP_ACCESS_FLAGS | IBV_QP_CAP,
                         &init),
            0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(attr.path_mtu, mtu_);
  EXPECT_EQ(attr.dest_qp_num, b_->qp->qp_num);
  EXPECT_EQ(attr.qp_access_flags, (unsigned)kAccess);
  EXPECT_GE(init.cap.max_send_wr, 64u);
  EXPECT_GE(init.cap.max_send_sge, 4u);
  EXPECT_EQ(init.qp_type, IBV_QPT_RC);
}

// ---------------------------------------------------------------- creation

TEST_F(VerbsExTest, CreateCqExRefusesWhatACqeCannotHold) {
  for (uint64_t flag : {(uint64_t)IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
                        (uint64_t)IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
                        (uint64_t)IBV_WC_EX_WITH_CVLAN, (uint64_t)IBV_WC_EX_WITH_FLOW_TAG,
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

  attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
  attr.flags = 0;
  attr.parent_domain = a_dev_->pd;
  errno = 0;
  EXPECT_EQ(ibv_create_cq_ex(a_dev_->ctx, &attr), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);

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

TEST_F(VerbsExTest, CreateQpExRefusesWhatItCannotPost) {
  ibv_cq* cq = ibv_create_cq(a_dev_->ctx, 64, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr);
  auto attr = [&](ibv_qp_type type, uint32_t mask, uint64_t ops) {
    ibv_qp_init_attr_ex a = {};
    a.send_cq = cq;
    a.recv_cq = cq;
    a.qp_type = type;
    a.cap.max_send_wr = 16;
    a.cap.max_recv_wr = 16;
    a.cap.max_send_sge = 1;
    a.cap.max_recv_sge = 1;
    a.comp_mask = mask;
    a.pd = a_dev_->pd;
    a.send_ops_flags = ops;
    return a;
  };
  constexpr uint32_t kOps = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  for (uint64_t op : {(uint64_t)IBV_QP_EX_WITH_TSO,
                      (uint64_t)IBV_QP_EX_WITH_ATOMIC_WRITE}) {
    SCOPED_TRACE(op);
    auto a = attr(IBV_QPT_RC, kOps, IBV_QP_EX_WITH_SEND | op);
    errno = 0;
    EXPECT_EQ(ibv_create_qp_ex(a_dev_->ctx, &a), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
  }
  // What the type cannot carry: WRITE on UD, READ on UC.
  for (auto [type, op] : {std::pair{IBV_QPT_UD, (uint64_t)IBV_QP_EX_WITH_RDMA_WRITE},
                          std::pair{IBV_QPT_UC, (uint64_t)IBV_QP_EX_WITH_RDMA_READ}}) {
    SCOPED_TRACE(type);
    auto a = attr(type, kOps, IBV_QP_EX_WITH_SEND | op);
    errno = 0;
    EXPECT_EQ(ibv_create_qp_ex(a_dev_->ctx, &a), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
  }
  // SEND is every type's.
  for (ibv_qp_type type : {IBV_QPT_UC, IBV_QPT_UD}) {
    SCOPED_TRACE(type);
    auto a = attr(type, kOps, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
    ibv_qp* q = ibv_create_qp_ex(a_dev_->ctx, &a);
    ASSERT_NE(q, nullptr) << strerror(errno);
    EXPECT_NE(ibv_qp_to_qp_ex(q), nullptr);
    EXPECT_EQ(ibv_destroy_qp(q), 0);
  }
  auto a = attr(IBV_QPT_RC, IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS, 0);
  a.create_flags = IBV_QP_CREATE_SCATTER_FCS;
  errno = 0;
  EXPECT_EQ(ibv_create_qp_ex(a_dev_->ctx, &a), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  // The creation flags named, none set: nothing is asked.
  a.create_flags = 0;
  ibv_qp* no_flags = ibv_create_qp_ex(a_dev_->ctx, &a);
  ASSERT_NE(no_flags, nullptr) << strerror(errno);
  EXPECT_EQ(ibv_destroy_qp(no_flags), 0);

  // Without send_ops_flags a QP has no struct ibv_qp_ex, whatever created it.
  a = attr(IBV_QPT_RC, IBV_QP_INIT_ATTR_PD, 0);
  ibv_qp* plain_ex = ibv_create_qp_ex(a_dev_->ctx, &a);
  ASSERT_NE(plain_ex, nullptr);
  EXPECT_EQ(ibv_qp_to_qp_ex(plain_ex), nullptr);
  ibv_qp_init_attr init = {};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  init.cap = a.cap;
  ibv_qp* plain = ibv_create_qp(a_dev_->pd, &init);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(ibv_qp_to_qp_ex(plain), nullptr);
  EXPECT_GE(init.cap.max_send_wr, 16u);
  EXPECT_GT(init.cap.max_inline_data, 0u);
  a = attr(IBV_QPT_RC, kOps, IBV_QP_EX_WITH_RDMA_WRITE);
  ibv_qp* ex = ibv_create_qp_ex(a_dev_->ctx, &a);
  ASSERT_NE(ex, nullptr);
  EXPECT_NE(ibv_qp_to_qp_ex(ex), nullptr);
  EXPECT_GE(a.cap.max_send_wr, 16u);
  EXPECT_EQ(ibv_destroy_qp(ex), 0);
  EXPECT_EQ(ibv_destroy_qp(plain), 0);
  EXPECT_EQ(ibv_destroy_qp(plain_ex), 0);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
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

// ---------------------------------------------------------------- ibv_wr_*

TEST_F(VerbsExTest, WrApiPostsEveryOperation) {
  PairX(65536);
  ibv_qp_ex* qx = a_->qpx;
  const uint32_t rkey = b_->mr->rkey, lkey = a_->mr->lkey;
  Fill(a_->buf, 0, 16384, 11);
  Fill(b_->buf, 30000, 4000, 12);
  uint64_t* add_target = reinterpret_cast<uint64_t*>(b_->buf.data() + 40000);
  uint64_t* swp_target = reinterpret_cast<uint64_t*>(b_->buf.data() + 40008);
  *add_target = 1000;
  *swp_target = 100;
  uint8_t inl[48], inl2[30];
  std::mt19937 g(13);
  for (auto& c : inl) c = g();
  for (auto& c : inl2) c = g();
  const std::vector<uint8_t> inl_want(inl, inl + sizeof(inl));
  const std::vector<uint8_t> inl2_want(inl2, inl2 + sizeof(inl2));
  for (int i = 0; i < 5; i++) ASSERT_EQ(PostRecv(*b_, 50000 + i * 2048, 2048, 200 + i), 0);

  ibv_wr_start(qx);
  qx->wr_id = 1;
  qx->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_send(qx);
  ibv_wr_set_sge(qx, lkey, Addr(*a_, 0), 1000);
  qx->wr_id = 2;
  ibv_wr_send_imm(qx, htonl(0xabc));
  ibv_sge two[2] = {{Addr(*a_, 1000), 300, lkey}, {Addr(*a_, 2000), 500, lkey}};
  ibv_wr_set_sge_list(qx, 2, two);
  qx->wr_id = 3;
  qx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
  ibv_wr_send(qx);
  ibv_wr_set_inline_data(qx, inl, sizeof(inl));
  std::memset(inl, 0, sizeof(inl));  // copied by the setter
  qx->wr_id = 4;
  qx->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_rdma_write(qx, rkey, Addr(*b_, 16384));
  ibv_data_buf bufs[2] = {{inl2, 20}, {inl2 + 20, 10}};
  ibv_wr_set_inline_data_list(qx, 2, bufs);
  std::memset(inl2, 0, sizeof(inl2));
  qx->wr_id = 5;
  ibv_wr_rdma_write(qx, rkey, Addr(*b_, 20000));
  ibv_wr_set_sge(qx, lkey, Addr(*a_, 5000), 3000);
  qx->wr_id = 6;
  ibv_wr_rdma_write_imm(qx, rkey, Addr(*b_, 24000), htonl(0x77));
  ibv_wr_set_sge(qx, lkey, Addr(*a_, 9000), 2000);
  qx->wr_id = 7;
  ibv_wr_rdma_read(qx, rkey, Addr(*b_, 30000));
  ibv_sge rd[2] = {{Addr(*a_, 30000), 1000, lkey}, {Addr(*a_, 31000), 3000, lkey}};
  ibv_wr_set_sge_list(qx, 2, rd);
  qx->wr_id = 8;
  ibv_wr_atomic_fetch_add(qx, rkey, Addr(*b_, 40000), 5);
  ibv_wr_set_sge(qx, lkey, Addr(*a_, 40000), 8);
  qx->wr_id = 9;
  ibv_wr_atomic_cmp_swp(qx, rkey, Addr(*b_, 40008), 100, 200);
  ibv_wr_set_sge(qx, lkey, Addr(*a_, 40008), 8);
  qx->wr_id = 10;
  qx->wr_flags = 0;  // unsignaled: no completion of its own
  ibv_wr_rdma_write(qx, rkey, Addr(*b_, 60000));
  ibv_wr_set_sge(qx, lkey, Addr(*a_, 12000), 100);
  qx->wr_id = 11;
  qx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
  ibv_wr_send(qx);
  ibv_wr_set_sge(qx, lkey, Addr(*a_, 13000), 0);
  ASSERT_EQ(ibv_wr_complete(qx), 0);

  auto s = PollEx(a_->cqx, 10);
  ASSERT_EQ(s.size(), 10u);
  const std::pair<uint64_t, ibv_wc_opcode> want[] = {
      {1, IBV_WC_SEND},       {2, IBV_WC_SEND},       {3, IBV_WC_SEND},
      {4, IBV_WC_RDMA_WRITE}, {5, IBV_WC_RDMA_WRITE}, {6, IBV_WC_RDMA_WRITE},
      {7, IBV_WC_RDMA_READ},  {8, IBV_WC_FETCH_ADD},  {9, IBV_WC_COMP_SWAP},
      {11, IBV_WC_SEND}};
  for (size_t i = 0; i < s.size(); i++) {
    SCOPED_TRACE(i);
    EXPECT_EQ(s[i].status, IBV_WC_SUCCESS) << ibv_wc_status_str(s[i].status);
    EXPECT_EQ(s[i].wr_id, want[i].first);
    EXPECT_EQ(s[i].opcode, want[i].second);
  }
  // Receives complete in order: SEND, SEND_IMM, inline SEND, WRITE_IMM,
  // the empty SEND.
  auto r = PollEx(b_->cqx, 5);
  ASSERT_EQ(r.size(), 5u);
  for (int i = 0; i < 5; i++) {
    EXPECT_EQ(r[i].wr_id, 200u + i);
    EXPECT_EQ(r[i].status, IBV_WC_SUCCESS) << ibv_wc_status_str(r[i].status);
  }
  EXPECT_EQ(r[0].byte_len, 1000u);
  EXPECT_EQ(r[1].byte_len, 800u);
  EXPECT_EQ(r[1].imm, 0xabcu);
  EXPECT_EQ(r[2].byte_len, sizeof(inl));
  EXPECT_EQ(r[3].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(r[3].imm, 0x77u);
  EXPECT_EQ(r[3].byte_len, 2000u);
  EXPECT_EQ(r[4].opcode, IBV_WC_RECV);
  EXPECT_EQ(r[4].byte_len, 0u);

  const uint8_t* a = a_->buf.data();
  const uint8_t* b = b_->buf.data();
  EXPECT_EQ(std::memcmp(a, b + 50000, 1000), 0);
  EXPECT_EQ(std::memcmp(a + 1000, b + 52048, 300), 0);
  EXPECT_EQ(std::memcmp(a + 2000, b + 52048 + 300, 500), 0);
  EXPECT_EQ(std::memcmp(inl_want.data(), b + 54096, sizeof(inl)), 0);
  EXPECT_EQ(std::memcmp(inl2_want.data(), b + 16384, 30), 0);
  EXPECT_EQ(std::memcmp(a + 5000, b + 20000, 3000), 0);
  EXPECT_EQ(std::memcmp(a + 9000, b + 24000, 2000), 0);
  EXPECT_EQ(std::memcmp(a + 30000, b + 30000, 4000), 0);
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(a_->buf.data() + 40000), 1000u);
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(a_->buf.data() + 40008), 100u);
  EXPECT_EQ(*add_target, 1005u);
  EXPECT_EQ(*swp_target, 200u);
  EXPECT_EQ(std::memcmp(a + 12000, b + 60000, 100), 0);
}

// ibv_wr_abort() and failed batches post nothing; the QP keeps working,
// and batches interleave with ibv_post_send().
TEST_F(VerbsExTest, WrApiAbortAndErrorsPostNothing) {
  PairX(65536);
  ibv_qp_ex* qx = a_->qpx;
  const uint32_t rkey = b_->mr->rkey, lkey = a_->mr->lkey;
  Fill(a_->buf, 0, 8192, 21);
  ASSERT_EQ(PostRecv(*b_, 0, 4096, 300), 0);

  ibv_wr_start(qx);
  qx->wr_id = 1;
  qx->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_send(qx);
  ibv_wr_set_sge(qx, lkey, Addr(*a_, 0), 111);
  ibv_wr_abort(qx);

  struct Bad {
    const char* what;
    int err;
    std::function<void()> build;
  };
  std::vector<ibv_sge> many(a_->cap.max_send_sge + 1, ibv_sge{Addr(*a_, 0), 8, lkey});
  std::vector<uint8_t> big(a_->cap.max_inline_data + 1, 1);
  const Bad bad[] = {
      {"too many SGEs", EINVAL,
       [&] {
         ibv_wr_send(qx);
         ibv_wr_set_sge_list(qx, many.size(), many.data());
       }},
      {"inline over the limit", EINVAL,
       [&] {
         ibv_wr_send(qx);
         ibv_wr_set_inline_data(qx, big.data(), big.size());
       }},
      {"inline READ", EINVAL,
       [&] {
         ibv_wr_rdma_read(qx, rkey, Addr(*b_, 0));
         ibv_wr_set_inline_data(qx, big.data(), 8);
       }},
      {"setter without a builder", EINVAL,
       [&] { ibv_wr_set_sge(qx, lkey, Addr(*a_, 0), 8); }},
      {"a good WQE, then an error", EINVAL,
       [&] {
         ibv_wr_send(qx);
         ibv_wr_set_sge(qx, lkey, Addr(*a_, 0), 8);
         ibv_wr_send(qx);
         ibv_wr_set_sge_list(qx, many.size(), many.data());
         ibv_wr_send(qx);
         ibv_wr_set_sge(qx, lkey, Addr(*a_, 0), 8);
       }},
      {"more WQEs than the SQ holds", ENOMEM,
       [&] {
         for (uint32_t i = 0; i <= a_->cap.max_send_wr; i++) {
           ibv_wr_rdma_write(qx, rkey, Addr(*b_, 8192));
           ibv_wr_set_sge(qx, lkey, Addr(*a_, 0), 8);
         }
       }},
  };
  for (const Bad& x : bad) {
    SCOPED_TRACE(x.what);
    ibv_wr_start(qx);
    qx->wr_id = 2;
    qx->wr_flags = IBV_SEND_SIGNALED;
    x.build();
    EXPECT_EQ(ibv_wr_complete(qx), x.err);
  }
  usleep(100000);
  ibv_wc wc;
  EXPECT_EQ(ibv_poll_cq(a_->cq, 1, &wc), 0) << "a failed batch posted work";
  EXPECT_EQ(ibv_poll_cq(b_->cq, 1, &wc), 0) << "a failed batch posted work";

  // The first receive gets the first SEND that was completed: this one.
  ibv_wr_start(qx);
  qx->wr_id = 3;
  qx->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_send(qx);
  ibv_wr_set_sge(qx, lkey, Addr(*a_, 1000), 333);
  ASSERT_EQ(ibv_wr_complete(qx), 0);
  // ibv_post_send() between two batches.
  ASSERT_EQ(PostRecv(*b_, 4096, 4096, 301), 0);
  ASSERT_EQ(PostSend(*a_, IBV_WR_SEND, 2000, 444, 4), 0);
  ibv_wr_start(qx);
  qx->wr_id = 5;
  ibv_wr_rdma_write(qx, rkey, Addr(*b_, 9000));
  ibv_wr_set_sge(qx, lkey, Addr(*a_, 3000), 555);
  ASSERT_EQ(ibv_wr_complete(qx), 0);
  // An empty batch is fine.
  ibv_wr_start(qx);
  ASSERT_EQ(ibv_wr_complete(qx), 0);

  auto s = PollEx(a_->cqx, 3);
  ASSERT_EQ(s.size(), 3u);
  for (int i = 0; i < 3; i++) {
    EXPECT_EQ(s[i].status, IBV_WC_SUCCESS);
    EXPECT_EQ(s[i].wr_id, 3u + i);
  }
  auto r = PollEx(b_->cqx, 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].wr_id, 300u);
  EXPECT_EQ(r[0].byte_len, 333u);
  EXPECT_EQ(r[1].wr_id, 301u);
  EXPECT_EQ(r[1].byte_len, 444u);
  EXPECT_EQ(std::memcmp(a_->buf.data() + 1000, b_->buf.data(), 333), 0);
  EXPECT_EQ(std::memcmp(a_->buf.data() + 2000, b_->buf.data() + 4096, 444), 0);
  EXPECT_EQ(std::memcmp(a_->buf.data() + 3000, b_->buf.data() + 9000, 555), 0);
}

// SEND with invalidate goes out as such; an ordinary MR's rkey may not be
// invalidated remotely. That is a class J error (IBTA 9.9.3.1.10): the
// SEND executed and is acknowledged, the receive completes in error.
TEST_F(VerbsExTest, WrApiSendWithInvalidate) {
  PairX(8192);
  ibv_qp_ex* qx = a_->qpx;
  Fill(a_->buf, 0, 100, 31);
  ASSERT_EQ(PostRecv(*b_, 0, 4096, 400), 0);
  ibv_wr_start(qx);
  qx->wr_id = 1;
  qx->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_send_inv(qx, b_->mr->rkey);
  ibv_wr_set_sge(qx, a_->mr->lkey, Addr(*a_, 0), 100);
  ASSERT_EQ(ibv_wr_complete(qx), 0);
  auto s = PollEx(a_->cqx, 1);
  auto r = PollEx(b_->cqx, 1);
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(s[0].wr_id, 1u);
  EXPECT_EQ(s[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(s[0].status);
  EXPECT_EQ(r[0].wr_id, 400u);
  EXPECT_EQ(r[0].status, IBV_WC_REM_INV_REQ_ERR) << ibv_wc_status_str(r[0].status);
  // The MR is still valid: a WRITE through a new pair reaches it.
  XEnd x, y;
  ASSERT_TRUE(MakeXEnd(a_dev_, &x, 4096));
  ASSERT_TRUE(MakeXEnd(b_dev_, &y, 4096));
  ASSERT_EQ(Connect(&x, &y, mtu_, {}), 0);
  ASSERT_EQ(Connect(&y, &x, mtu_, {}), 0);
  ASSERT_EQ(PostSend(x, IBV_WR_RDMA_WRITE, 0, 64, 2, Addr(*b_, 4096), b_->mr->rkey), 0);
  s = PollEx(x.cqx, 1);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(s[0].status);
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

// ---------------------------------------------------------------- threads

TEST_F(VerbsExTest, FourThreadsPostToTheirQpsAndShareOneCq) {
  constexpr int kThreads = 4;
  constexpr int kOps = 400;
  constexpr size_t kChunk = 1024;
  constexpr uint32_t kDepth = 32;
  ibv_cq_ex* shared = CreateCqEx(a_dev_, kThreads * kDepth * 2, nullptr, nullptr);
  ASSERT_NE(shared, nullptr);
  std::vector<std::unique_ptr<XEnd>> as, bs;
  XOpts oa;
  oa.depth = kDepth;
  oa.shared_cq = shared;
  for (int t = 0; t < kThreads; t++) {
    as.push_back(std::make_unique<XEnd>());
    bs.push_back(std::make_unique<XEnd>());
    ASSERT_TRUE(MakeXEnd(a_dev_, as[t].get(), kOps * kChunk, oa));
    ASSERT_TRUE(MakeXEnd(b_dev_, bs[t].get(), kOps * kChunk));
    ASSERT_EQ(Connect(as[t].get(), bs[t].get(), mtu_, {}), 0);
    ASSERT_EQ(Connect(bs[t].get(), as[t].get(), mtu_, {}), 0);
    Fill(as[t]->buf, 0, kOps * kChunk, 60 + t);
  }
  std::atomic<int> done[kThreads] = {};
  std::atomic<int> errors{0};
  auto owner = [&](uint32_t qpn) {
    for (int t = 0; t < kThreads; t++)
      if (as[t]->qp->qp_num == qpn) return t;
    return -1;
  };
  auto worker = [&](int t) {
    XEnd& a = *as[t];
    XEnd& b = *bs[t];
    const bool wr_api = t % 2;
    int posted = 0;
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(300);
    while (done[t] < kOps && std::chrono::steady_clock::now() < end) {
      // One slot spare: a WQE's slot comes back just after its completion.
      while (posted < kOps && posted - done[t] < (int)kDepth - 1) {
        uint64_t raddr = Addr(b, posted * kChunk);
        if (wr_api) {
          ibv_wr_start(a.qpx);
          a.qpx->wr_id = posted;
          a.qpx->wr_flags = IBV_SEND_SIGNALED;
          ibv_wr_rdma_write(a.qpx, b.mr->rkey, raddr);
          ibv_wr_set_sge(a.qpx, a.mr->lkey, Addr(a, posted * kChunk), kChunk);
          if (ibv_wr_complete(a.qpx)) errors++;
        } else if (PostSend(a, IBV_WR_RDMA_WRITE, posted * kChunk, kChunk, posted, raddr,
                            b.mr->rkey)) {
          errors++;
        }
        posted++;
      }
      // Completions of any thread's QP; count them for their owner.
      if (t < 2) {
        for (const XWc& w : PollEx(shared, 8, 0)) {
          int o = owner(w.qp_num);
          if (o < 0 || w.status != IBV_WC_SUCCESS) errors++;
          if (o >= 0) done[o]++;
        }
      } else {
        ibv_wc wc[8];
        int n = ibv_poll_cq(ibv_cq_ex_to_cq(shared), 8, wc);
        for (int i = 0; i < n; i++) {
          int o = owner(wc[i].qp_num);
          if (o < 0 || wc[i].status != IBV_WC_SUCCESS) errors++;
          if (o >= 0) done[o]++;
        }
        if (n < 0) errors++;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) threads.emplace_back(worker, t);
  // A thread may finish while others still need their completions polled.
  for (auto& th : threads) th.join();
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto all_done = [&] {
    for (auto& d : done)
      if (d < kOps) return false;
    return true;
  };
  while (!all_done() && std::chrono::steady_clock::now() < end)
    for (const XWc& w : PollEx(shared, 8, 10)) {
      int o = owner(w.qp_num);
      if (o >= 0) done[o]++;
    }
  EXPECT_EQ(errors.load(), 0);
  for (int t = 0; t < kThreads; t++) {
    EXPECT_EQ(done[t].load(), kOps) << "thread " << t;
    EXPECT_EQ(std::memcmp(as[t]->buf.data(), bs[t]->buf.data(), kOps * kChunk), 0)
        << "thread " << t;
  }
  for (auto& a : as) {
    ibv_destroy_qp(a->qp);
    a->qp = nullptr;
  }
  as.clear();
  bs.clear();
  EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(shared)), 0);
}

// ---------------------------------------------------------------- fork

TEST_F(VerbsExTest, ForkAfterForkInitParentKeepsWorking) {
  PairX(65536);
  Fill(a_->buf, 0, 8192, 71);
  ASSERT_EQ(PostSend(*a_, IBV_WR_RDMA_WRITE, 0, 8192, 1, Addr(*b_, 0), b_->mr->rkey), 0);
  ASSERT_EQ(PollEx(a_->cqx, 1).size(), 1u);

  EXPECT_NE(ibv_is_fork_initialized(), IBV_FORK_DISABLED);
  // Memory of its own for the child: with fork protection, pages that
  // share anything with a registered buffer are not in the child at all
  // (MADV_DONTFORK), and malloc() may well hand out such neighbours.
  constexpr size_t kScratch = 1 << 20;
  void* mem = mmap(nullptr, kScratch, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  auto* scratch = static_cast<uint8_t*>(mem);
  std::memset(scratch, 1, kScratch);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The child touches its own copy of that memory, never a verbs object.
    std::memset(scratch, 0x5a, kScratch);
    _exit(scratch[12345] == 0x5a ? 0 : 1);
  }
  // The parent works on while the child lives, and after it is gone.
  Fill(a_->buf, 8192, 8192, 72);
  EXPECT_EQ(PostSend(*a_, IBV_WR_RDMA_WRITE, 8192, 8192, 2, Addr(*b_, 8192), b_->mr->rkey),
            0);
  EXPECT_EQ(PollEx(a_->cqx, 1).size(), 1u);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(scratch[12345], 1) << "the child wrote the parent's memory";
  munmap(mem, kScratch);

  // Pages of the parent written after fork() are what RDMA reads.
  Fill(a_->buf, 16384, 8192, 73);
  Fill(b_->buf, 32768, 8192, 74);
  ASSERT_EQ(PostRecv(*b_, 49152, 8192, 600), 0);
  ibv_wr_start(a_->qpx);
  a_->qpx->wr_id = 3;
  a_->qpx->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_rdma_write(a_->qpx, b_->mr->rkey, Addr(*b_, 16384));
  ibv_wr_set_sge(a_->qpx, a_->mr->lkey, Addr(*a_, 16384), 8192);
  a_->qpx->wr_id = 4;
  ibv_wr_rdma_read(a_->qpx, b_->mr->rkey, Addr(*b_, 32768));
  ibv_wr_set_sge(a_->qpx, a_->mr->lkey, Addr(*a_, 32768), 8192);
  a_->qpx->wr_id = 5;
  ibv_wr_send(a_->qpx);
  ibv_wr_set_sge(a_->qpx, a_->mr->lkey, Addr(*a_, 0), 8192);
  ASSERT_EQ(ibv_wr_complete(a_->qpx), 0);
  auto s = PollEx(a_->cqx, 3);
  ASSERT_EQ(s.size(), 3u);
  for (auto& w : s) EXPECT_EQ(w.status, IBV_WC_SUCCESS) << ibv_wc_status_str(w.status);
  auto r = PollEx(b_->cqx, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(a_->buf.data(), b_->buf.data(), 32768), 0);
  EXPECT_EQ(std::memcmp(a_->buf.data() + 32768, b_->buf.data() + 32768, 8192), 0);
  EXPECT_EQ(std::memcmp(a_->buf.data(), b_->buf.data() + 49152, 8192), 0);
}

}  // namespace
