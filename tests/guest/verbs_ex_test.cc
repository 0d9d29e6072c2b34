// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The extended verbs of libsoftrdma between two devices, run in a guest
// (tests/guest/verbs_ex.sh, through tests/guest/pair.sh):
//
//   init netns                               netns "peer"
//   SRDMA_DEV_A -- veth (SRDMA_IP_A) ===== veth (SRDMA_IP_B) -- SRDMA_DEV_B
//
//   - the classic queries next to the extended objects;
//   - ibv_create_qp_ex() with the ibv_wr_* API, every operation, with
//     batching, abort and the errors ibv_wr_complete() reports, and what
//     creation must refuse;
//   - four threads posting to their own QPs and polling one shared CQ;
//   - fork() after ibv_fork_init(): the parent keeps working.
//
// The CQ side (ibv_create_cq_ex(), extended polling, resize, completion
// channels) is in verbs_cq_test.cc, the same binary. Data is verified
// byte for byte. Both devices are softrdma.

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "verbs_ex.h"

namespace {

using namespace srdma_test;

// ibv_fork_init() must come before any other verb of the process.
class ForkInitEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { ASSERT_EQ(ibv_fork_init(), 0); }
};

const auto* const kForkInit =
    ::testing::AddGlobalTestEnvironment(new ForkInitEnvironment);

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
