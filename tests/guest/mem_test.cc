// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Memory: windows of type 1 and 2, their invalidation, reregistration and
// zero-based regions, over RC QPs between two devices (tests/guest/pair.sh).
// Device B owns the memory and device A accesses it remotely; the checks
// of B's behaviour run where B is softrdma (SRDMA_KIND_B), so that rdma_rxe
// can stand in for A.

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "verbs_pair.h"

namespace {

using namespace srdma_test;

class MemTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    a_ = OpenDev(Env("SRDMA_DEV_A", "srdma0"), Env("SRDMA_IP_A", "10.80.0.1")).release();
    b_ = OpenDev(Env("SRDMA_DEV_B", "srdma1"), Env("SRDMA_IP_B", "10.80.0.2")).release();
  }
  static void TearDownTestSuite() {
    delete a_;
    delete b_;
    a_ = b_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(a_ && a_->pd && a_->gid_index >= 0) << "device A";
    ASSERT_TRUE(b_ && b_->pd && b_->gid_index >= 0) << "device B";
    if (Env("SRDMA_KIND_B", "softrdma") != "softrdma")
      GTEST_SKIP() << "the memory checked is softrdma's";
    mtu_ = std::min(a_->active_mtu, b_->active_mtu);
    ASSERT_TRUE(MakeEnd(a_, &a, 65536));
    // B binds and invalidates through ibv_post_send() and ibv_wr_*.
    ASSERT_TRUE(MakeEnd(b_, &b, 65536, 64, nullptr,
                        IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_BIND_MW |
                            IBV_QP_EX_WITH_LOCAL_INV));
    ConnOpts o;
    o.retry_cnt = 1;
    ASSERT_EQ(Connect(&a, &b, mtu_, o), 0);
    ASSERT_EQ(Connect(&b, &a, mtu_, o), 0);
    // B's memory for windows: binding allowed, no remote access itself.
    win_buf.assign(65536, 0);
    win_mr = ibv_reg_mr(b_->pd, win_buf.data(), win_buf.size(),
                        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
    ASSERT_NE(win_mr, nullptr);
  }
  void TearDown() override {
    if (win_mr) ibv_dereg_mr(win_mr);
  }

  // One signaled work request on @e's QP; its completion.
  ibv_wc Do(End& e, ibv_send_wr wr) {
    ibv_send_wr* bad;
    wr.send_flags |= IBV_SEND_SIGNALED;
    ibv_wc wc = {};
    wc.status = IBV_WC_GENERAL_ERR;
    if (ibv_post_send(e.qp, &wr, &bad)) return wc;
    auto w = Poll(e.cq, 1);
    return w.empty() ? wc : w[0];
  }
  ibv_wc Rdma(ibv_wr_opcode op, uint64_t raddr, uint32_t rkey, size_t off, size_t len) {
    ibv_sge sge = {(uintptr_t)a.buf.data() + off, (uint32_t)len, a.mr->lkey};
    ibv_send_wr wr = {};
    wr.opcode = op;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    return Do(a, wr);
  }
  ibv_wc BindType2(ibv_mw* mw, uint32_t rkey, uint64_t addr, uint64_t len, int access,
                   ibv_mr* mr = nullptr) {
    ibv_send_wr wr = {};
    wr.opcode = IBV_WR_BIND_MW;
    wr.bind_mw.mw = mw;
    wr.bind_mw.rkey = rkey;
    wr.bind_mw.bind_info.mr = mr ? mr : win_mr;
    wr.bind_mw.bind_info.addr = addr;
    wr.bind_mw.bind_info.length = len;
    wr.bind_mw.bind_info.mw_access_flags = access;
    return Do(b, wr);
  }
  // A receive of 64 bytes at the start of B's buffer.
  int PostRecvB(uint64_t id) {
    ibv_sge sge = {(uintptr_t)b.buf.data(), 64, b.mr->lkey};
    ibv_recv_wr wr = {}, *bad;
    wr.wr_id = id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    return ibv_post_recv(b.qp, &wr, &bad);
  }
  // A SEND with Invalidate of @rkey, 16 bytes from A; its completion.
  ibv_wc SendWithInv(uint32_t rkey) {
    ibv_sge sge = {(uintptr_t)a.buf.data(), 16, a.mr->lkey};
    ibv_send_wr wr = {};
    wr.opcode = IBV_WR_SEND_WITH_INV;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.invalidate_rkey = rkey;
    return Do(a, wr);
  }
  uint64_t WinAddr(size_t off) const { return (uintptr_t)win_buf.data() + off; }

  static Dev* a_;
  static Dev* b_;
  ibv_mtu mtu_ = IBV_MTU_1024;
  End a, b;
  std::vector<uint8_t> win_buf;
  ibv_mr* win_mr = nullptr;
};

Dev* MemTest::a_ = nullptr;
Dev* MemTest::b_ = nullptr;

TEST_F(MemTest, Type1WindowGrantsItsRangeOnly) {
  ibv_mw* mw = ibv_alloc_mw(b_->pd, IBV_MW_TYPE_1);
  ASSERT_NE(mw, nullptr) << strerror(errno);
  ibv_mw_bind bind = {};
  bind.wr_id = 11;
  bind.send_flags = IBV_SEND_SIGNALED;
  bind.bind_info.mr = win_mr;
  bind.bind_info.addr = WinAddr(4096);
  bind.bind_info.length = 8192;
  bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  uint32_t old_rkey = mw->rkey;
  ASSERT_EQ(ibv_bind_mw(b.qp, mw, &bind), 0);
  auto w = Poll(b.cq, 1);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(w[0].status);
  EXPECT_EQ(w[0].opcode, IBV_WC_BIND_MW);
  EXPECT_EQ(w[0].wr_id, 11u);
  EXPECT_NE(mw->rkey, old_rkey) << "a bind gives the window its next key";

  Fill(a.buf, 0, 300, 21);
  auto wc = Rdma(IBV_WR_RDMA_WRITE, WinAddr(4096 + 100), mw->rkey, 0, 300);
  ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(std::memcmp(win_buf.data() + 4196, a.buf.data(), 300), 0);
  wc = Rdma(IBV_WR_RDMA_READ, WinAddr(4096 + 100), mw->rkey, 1000, 300);
  ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(a.buf.data() + 1000, a.buf.data(), 300), 0);
  // One byte past the window: the IBTA remote access error (C9-88).
  wc = Rdma(IBV_WR_RDMA_WRITE, WinAddr(4096 + 8192 - 10), mw->rkey, 0, 11);
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(ibv_dealloc_mw(mw), 0);
}

TEST_F(MemTest, Type1OldKeyAndTheRegionsOwnKeyAreRefused) {
  ibv_mw* mw = ibv_alloc_mw(b_->pd, IBV_MW_TYPE_1);
  ASSERT_NE(mw, nullptr);
  ibv_mw_bind bind = {};
  bind.send_flags = IBV_SEND_SIGNALED;
  bind.bind_info.mr = win_mr;
  bind.bind_info.addr = WinAddr(0);
  bind.bind_info.length = 4096;
  bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
  uint32_t before = mw->rkey;
  ASSERT_EQ(ibv_bind_mw(b.qp, mw, &bind), 0);
  ASSERT_EQ(Poll(b.cq, 1).size(), 1u);
  // The key of before the bind names nothing now.
  auto wc = Rdma(IBV_WR_RDMA_READ, WinAddr(0), before, 0, 8);
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(ibv_dealloc_mw(mw), 0);
}

TEST_F(MemTest, Type2BindZeroBasedThenRemoteAndLocalInvalidation) {
  ibv_mw* mw = ibv_alloc_mw(b_->pd, IBV_MW_TYPE_2);
  ASSERT_NE(mw, nullptr) << strerror(errno);
  Fill(win_buf, 8192, 4096, 5);
  uint32_t rkey = ibv_inc_rkey(mw->rkey);
  auto wc = BindType2(mw, rkey, WinAddr(8192), 4096,
                      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED);
  ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(wc.opcode, IBV_WC_BIND_MW);
  // Zero based: the window's first byte is address 0.
  wc = Rdma(IBV_WR_RDMA_READ, 0, rkey, 0, 4096);
  ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(std::memcmp(a.buf.data(), win_buf.data() + 8192, 4096), 0);

  // A bound type 2 window cannot be bound again.
  wc = BindType2(mw, ibv_inc_rkey(rkey), WinAddr(0), 64, IBV_ACCESS_REMOTE_READ);
  EXPECT_EQ(wc.status, IBV_WC_MW_BIND_ERR) << ibv_wc_status_str(wc.status);
  ibv_dealloc_mw(mw);
}

// An atomic at an address aligned in a zero-based window's addresses but
// not in the memory the window maps must not execute: no 8-byte atomic
// may target that memory, and its 8 bytes may cross into the next page.
// It is an invalid request, as a misaligned address is, and the memory is
// left as it was.
TEST_F(MemTest, AtomicThroughWindowMisalignedInMemoryIsInvalid) {
  ibv_mw* mw = ibv_alloc_mw(b_->pd, IBV_MW_TYPE_2);
  ASSERT_NE(mw, nullptr) << strerror(errno);
  uint32_t rkey = ibv_inc_rkey(mw->rkey);
  const size_t off = 4092 + (8 - (WinAddr(4092) & 7)) % 8 + 4;  // 4 mod 8
  auto wc = BindType2(mw, rkey, WinAddr(off), 64,
                      IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED);
  ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  ibv_sge sge = {(uintptr_t)a.buf.data(), 8, a.mr->lkey};
  ibv_send_wr wr = {};
  wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.wr.atomic.remote_addr = 0;
  wr.wr.atomic.rkey = rkey;
  wr.wr.atomic.compare_add = 1;
  wc = Do(a, wr);
  EXPECT_EQ(wc.status, IBV_WC_REM_INV_REQ_ERR) << ibv_wc_status_str(wc.status);
  for (size_t i = 0; i < win_buf.size(); i++) ASSERT_EQ(win_buf[i], 0) << "byte " << i;
  ibv_dealloc_mw(mw);
}

TEST_F(MemTest, Type2SendWithInvalidateThenLocalInvalidate) {
  ibv_mw* mw = ibv_alloc_mw(b_->pd, IBV_MW_TYPE_2);
  ASSERT_NE(mw, nullptr);
  uint32_t rkey = ibv_inc_rkey(mw->rkey);
  ASSERT_EQ(BindType2(mw, rkey, WinAddr(0), 4096, IBV_ACCESS_REMOTE_READ).status,
            IBV_WC_SUCCESS);
  // SEND with invalidate names the window (IBTA 10.6.7.2.3).
  ASSERT_EQ(PostRecvB(5), 0);
  ASSERT_EQ(SendWithInv(rkey).status, IBV_WC_SUCCESS);
  auto rw = Poll(b.cq, 1);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].status, IBV_WC_SUCCESS);
  EXPECT_TRUE(rw[0].wc_flags & IBV_WC_WITH_INV);
  EXPECT_EQ(rw[0].invalidated_rkey, rkey);

  // Invalid now: it binds again, and LOCAL_INV invalidates it.
  rkey = ibv_inc_rkey(rkey);
  ASSERT_EQ(BindType2(mw, rkey, WinAddr(0), 4096, IBV_ACCESS_REMOTE_READ).status,
            IBV_WC_SUCCESS);
  ASSERT_EQ(Rdma(IBV_WR_RDMA_READ, WinAddr(0), rkey, 0, 64).status, IBV_WC_SUCCESS);
  ibv_send_wr inv = {};
  inv.opcode = IBV_WR_LOCAL_INV;
  inv.invalidate_rkey = rkey;
  auto wc = Do(b, inv);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(wc.opcode, IBV_WC_LOCAL_INV);
  wc = Rdma(IBV_WR_RDMA_READ, WinAddr(0), rkey, 0, 64);
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(wc.status);
  ibv_dealloc_mw(mw);
}

// The note under IBTA o9-5.2.2: invalidating a key in the Free state
// changes nothing and is no error, remotely (SEND with Invalidate) as
// locally (LOCAL_INV): a type 2 window just allocated, and one invalidated
// already.
TEST_F(MemTest, InvalidatingAFreeKeySucceeds) {
  ibv_mw* mw = ibv_alloc_mw(b_->pd, IBV_MW_TYPE_2);
  ASSERT_NE(mw, nullptr);
  ibv_send_wr inv = {};
  inv.opcode = IBV_WR_LOCAL_INV;
  inv.invalidate_rkey = mw->rkey;
  auto wc = Do(b, inv);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << "never bound: " << ibv_wc_status_str(wc.status);

  const uint32_t rkey = ibv_inc_rkey(mw->rkey);
  ASSERT_EQ(BindType2(mw, rkey, WinAddr(0), 4096, IBV_ACCESS_REMOTE_READ).status,
            IBV_WC_SUCCESS);
  inv.invalidate_rkey = rkey;
  for (int i = 0; i < 2; i++) {
    wc = Do(b, inv);
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << "LOCAL_INV " << i << ": "
                                         << ibv_wc_status_str(wc.status);
  }
  ASSERT_EQ(PostRecvB(7), 0);
  EXPECT_EQ(SendWithInv(rkey).status, IBV_WC_SUCCESS);
  auto rw = Poll(b.cq, 1);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(rw[0].status);
  EXPECT_TRUE(rw[0].wc_flags & IBV_WC_WITH_INV);
  EXPECT_EQ(rw[0].invalidated_rkey, rkey);
  // Still free: no access through it.
  wc = Rdma(IBV_WR_RDMA_READ, WinAddr(0), rkey, 0, 64);
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(wc.status);
  ibv_dealloc_mw(mw);
}

// IBTA 9.9.3.1.10 (class J): a SEND with Invalidate naming a key the
// responder may not invalidate (here a memory region's, which only its
// owner may invalidate) is executed and acknowledged: the sender's WQE
// succeeds. The receive WQE completes in error and B's QP enters the
// error state; no NAK is sent.
TEST_F(MemTest, SendWithInvalidateOfAKeyItMayNotInvalidate) {
  ASSERT_EQ(PostRecvB(5), 0);
  ASSERT_EQ(PostRecvB(6), 0);
  auto wc = SendWithInv(b.mr->rkey);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  auto rw = Poll(b.cq, 2);
  ASSERT_EQ(rw.size(), 2u);
  EXPECT_EQ(rw[0].wr_id, 5u);
  EXPECT_EQ(rw[0].status, IBV_WC_REM_INV_REQ_ERR) << ibv_wc_status_str(rw[0].status);
  EXPECT_EQ(rw[1].wr_id, 6u);
  EXPECT_EQ(rw[1].status, IBV_WC_WR_FLUSH_ERR);
  ibv_qp_attr attr = {};
  ibv_qp_init_attr init = {};
  ASSERT_EQ(ibv_query_qp(b.qp, &attr, IBV_QP_STATE, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_ERR);
  // A was sent no NAK: its QP is still in RTS.
  ASSERT_EQ(ibv_query_qp(a.qp, &attr, IBV_QP_STATE, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_RTS) << "A was sent a NAK";
}

// ibv_wr_bind_mw() and ibv_wr_local_inv(). A window given local write
// along with its remote rights binds: local write is no right of a window
// and is ignored, as rdma_rxe and the hardware providers do.
TEST_F(MemTest, WrApiBindsAndInvalidatesAWindow) {
  ibv_qp_ex* qx = ibv_qp_to_qp_ex(b.qp);
  ASSERT_NE(qx, nullptr);
  ibv_mw* mw = ibv_alloc_mw(b_->pd, IBV_MW_TYPE_2);
  ASSERT_NE(mw, nullptr);
  uint32_t rkey = ibv_inc_rkey(mw->rkey);
  ibv_mw_bind_info info = {win_mr, WinAddr(1024), 2048,
                           IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE};
  // Refused at once, the QP unharmed: a type 1 window (ibv_bind_mw()'s
  // alone, also through ibv_post_send()), a key of another window, data
  // attached to a bind.
  ibv_mw* mw1 = ibv_alloc_mw(b_->pd, IBV_MW_TYPE_1);
  ASSERT_NE(mw1, nullptr);
  ibv_wr_start(qx);
  ibv_wr_bind_mw(qx, mw1, ibv_inc_rkey(mw1->rkey), &info);
  EXPECT_EQ(ibv_wr_complete(qx), EINVAL);
  ibv_send_wr legacy = {}, *bad = nullptr;
  legacy.opcode = IBV_WR_BIND_MW;
  legacy.bind_mw = {mw1, ibv_inc_rkey(mw1->rkey), info};
  EXPECT_EQ(ibv_post_send(b.qp, &legacy, &bad), EINVAL);
  EXPECT_EQ(bad, &legacy);
  ibv_wr_start(qx);
  ibv_wr_bind_mw(qx, mw, ibv_inc_rkey(mw1->rkey), &info);
  EXPECT_EQ(ibv_wr_complete(qx), EINVAL);
  ibv_wr_start(qx);
  ibv_wr_bind_mw(qx, mw, rkey, &info);
  ibv_wr_set_sge(qx, win_mr->lkey, WinAddr(0), 8);
  EXPECT_EQ(ibv_wr_complete(qx), EINVAL);
  EXPECT_EQ(ibv_dealloc_mw(mw1), 0);

  ibv_wr_start(qx);
  qx->wr_id = 71;
  qx->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_bind_mw(qx, mw, rkey, &info);
  ASSERT_EQ(ibv_wr_complete(qx), 0);
  auto w = Poll(b.cq, 1);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(w[0].status);
  EXPECT_EQ(w[0].opcode, IBV_WC_BIND_MW);
  EXPECT_EQ(w[0].wr_id, 71u);

  Fill(a.buf, 0, 2048, 44);
  auto wc = Rdma(IBV_WR_RDMA_WRITE, WinAddr(1024), rkey, 0, 2048);
  ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(std::memcmp(win_buf.data() + 1024, a.buf.data(), 2048), 0);

  ibv_wr_start(qx);
  qx->wr_id = 72;
  qx->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_local_inv(qx, rkey);
  ASSERT_EQ(ibv_wr_complete(qx), 0);
  w = Poll(b.cq, 1);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(w[0].status);
  EXPECT_EQ(w[0].opcode, IBV_WC_LOCAL_INV);
  wc = Rdma(IBV_WR_RDMA_WRITE, WinAddr(1024), rkey, 0, 8);
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(wc.status);
  ibv_dealloc_mw(mw);
}

TEST_F(MemTest, BindNeedsTheMwBindRight) {
  ibv_mw* mw = ibv_alloc_mw(b_->pd, IBV_MW_TYPE_2);
  ASSERT_NE(mw, nullptr);
  // b.mr grants remote access but not IBV_ACCESS_MW_BIND.
  auto wc = BindType2(mw, ibv_inc_rkey(mw->rkey), (uintptr_t)b.buf.data(), 64,
                      IBV_ACCESS_REMOTE_READ, b.mr);
  EXPECT_EQ(wc.status, IBV_WC_MW_BIND_ERR) << ibv_wc_status_str(wc.status);
  ibv_dealloc_mw(mw);
}

TEST_F(MemTest, ReregisterMovesTheRegionAndChangesItsRights) {
  // B's region moves to another buffer with the same keys.
  std::vector<uint8_t> other(16384, 0);
  uint32_t rkey = b.mr->rkey;
  ASSERT_EQ(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, other.data(),
                         other.size(), 0),
            0);
  EXPECT_EQ(b.mr->rkey, rkey);
  Fill(a.buf, 0, 500, 8);
  auto wc = Rdma(IBV_WR_RDMA_WRITE, (uintptr_t)other.data() + 64, b.mr->rkey, 0, 500);
  ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(std::memcmp(other.data() + 64, a.buf.data(), 500), 0);
  // Remote write taken away.
  ASSERT_EQ(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
                         IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ),
            0);
  ASSERT_EQ(Rdma(IBV_WR_RDMA_READ, (uintptr_t)other.data() + 64, b.mr->rkey, 2000, 500).status,
            IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(a.buf.data() + 2000, a.buf.data(), 500), 0);
  wc = Rdma(IBV_WR_RDMA_WRITE, (uintptr_t)other.data(), b.mr->rkey, 0, 8);
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(wc.status);
  // The region must not point at @other once it goes.
  ibv_dereg_mr(b.mr);
  b.mr = nullptr;
}

TEST_F(MemTest, ZeroBasedRegion) {
  // The core wants the address and the IOVA at the same offset in a page.
  constexpr size_t kLen = 8192;
  auto* zb = static_cast<uint8_t*>(aligned_alloc(4096, kLen));
  ASSERT_NE(zb, nullptr);
  std::memset(zb, 0, kLen);
  ibv_mr* mr = ibv_reg_mr_iova(b_->pd, zb, kLen, 0,
                               IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  ASSERT_NE(mr, nullptr) << strerror(errno);
  Fill(a.buf, 0, 100, 4);
  auto wc = Rdma(IBV_WR_RDMA_WRITE, 0x1000, mr->rkey, 0, 100);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(std::memcmp(zb + 0x1000, a.buf.data(), 100), 0);
  // Its virtual address is no address of the region.
  wc = Rdma(IBV_WR_RDMA_WRITE, (uintptr_t)zb + 0x1000, mr->rkey, 0, 100);
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(wc.status);
  ibv_dereg_mr(mr);
  free(zb);
}

}  // namespace
