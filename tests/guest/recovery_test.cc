// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Loss recovery of softrdma's requester with chosen packets lost, part of
// srdma_rc_test: A is the requester, B the responder. tc filters on A's
// netdev drop exactly the packets a case names (cls_u32 matching UDP and
// BTH fields, act_gact), where netem would drop at random:
//
//   dev A (softrdma) -- netdev A ==egress: first send of chosen PSNs dropped==> B
//                               <==ingress: every PSN sequence NAK dropped==
//
// Topology and environment as for rc_test.cc (tests/guest/pair.sh). The
// offsets assume IP headers without options: 20 bytes (IPv4) or 40 (IPv6),
// then 8 of UDP, then the BTH (opcode in byte 0, PSN in bytes 9 to 11)
// and, in an ACK, the AETH (syndrome in byte 0).

#include <infiniband/verbs.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "verbs_pair.h"

namespace {

using namespace srdma_test;

constexpr int kIp4 = 20, kIp6 = 40, kUdp = 8, kRoceV2Port = 4791;
constexpr int kOpAck = 0x11, kSynPsnSeqNak = 0x60;

// tc filters on one netdev, in its namespace, removed again on
// destruction. ok() is false when the kernel lacks a piece (cls_u32,
// act_gact with deterministic actions, sch_prio, sch_ingress).
class TcDrops {
 public:
  TcDrops(const std::string& netns, const std::string& dev) : dev_(dev) {
    pre_ = netns.empty() ? "" : "ip netns exec " + netns + " ";
    ok_ = Tc("qdisc add dev " + dev_ + " root handle 1: prio") &&
          Tc("qdisc add dev " + dev_ + " handle ffff: ingress");
  }
  ~TcDrops() {
    Tc("qdisc del dev " + dev_ + " root");
    Tc("qdisc del dev " + dev_ + " ingress");
  }
  bool ok() const { return ok_; }

  // Drop the first RoCEv2 packet sent with PSN @psn, let the second pass,
  // drop the third... (gact's deterministic action: every 2nd passes).
  void DropFirstSent(uint32_t psn) {
    char m[96];
    for (int ip : {kIp4, kIp6}) {
      std::snprintf(m, sizeof(m), "match u16 %d 0xffff at %d match u32 0x%06x 0x00ffffff at %d",
                    kRoceV2Port, ip + 2, psn & 0xffffff, ip + kUdp + 8);
      ok_ = ok_ && Tc("filter add dev " + dev_ + " parent 1: protocol " + Proto(ip) + " u32 " +
                      m + " action drop random determ pass 2");
    }
  }

  // Drop every ACK-type packet received with AETH syndrome @syn.
  void DropReceivedAcks(int syn) {
    char m[96];
    for (int ip : {kIp4, kIp6}) {
      std::snprintf(m, sizeof(m), "match u8 0x%02x 0xff at %d match u8 0x%02x 0xff at %d", kOpAck,
                    ip + kUdp, syn, ip + kUdp + 12);
      ok_ = ok_ && Tc("filter add dev " + dev_ + " parent ffff: protocol " + Proto(ip) + " u32 " +
                      m + " action drop");
    }
  }

 private:
  static std::string Proto(int ip) { return ip == kIp4 ? "ip" : "ipv6"; }
  bool Tc(const std::string& args) {
    const std::string cmd = pre_ + "tc " + args + " >/dev/null 2>&1";
    return std::system(cmd.c_str()) == 0;
  }

  std::string dev_, pre_;
  bool ok_ = false;
};

class RecoveryTest : public PairFixture {
 protected:
  void SetUp() override {
    PairFixture::SetUp();
    if (HasFatalFailure()) return;
    if (!SoftA())
      GTEST_SKIP() << "the requester under test is softrdma's";
    if (!Env("SRDMA_NETEM", "").empty())
      GTEST_SKIP() << "netem holds the root qdisc; the drops here are chosen";
    if (Env("SRDMA_DEV_A", "dev_init") == Env("SRDMA_DEV_B", "dev_peer"))
      GTEST_SKIP() << "one device: its packets never cross its netdev";
  }
  void TearDown() override {
    if (mw_) ibv_dealloc_mw(mw_);
    if (win_mr_) ibv_dereg_mr(win_mr_);
  }

  // a and b, @bytes of memory each, connected with a 268 ms local ACK
  // timeout (room for early retransmissions at any HZ); a's QP may bind
  // and invalidate windows. dev_ is a's netdev.
  void Pair(size_t bytes, uint8_t retry_cnt = 7) {
    ASSERT_TRUE(MakeEnd(a_dev_, &a, bytes, 64, nullptr,
                        IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
                            IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV));
    ASSERT_TRUE(MakeEnd(b_dev_, &b, bytes));
    ConnOpts o;
    o.timeout = 16;
    o.retry_cnt = retry_cnt;
    ASSERT_EQ(Connect(&a, &b, mtu_, o), 0);
    ASSERT_EQ(Connect(&b, &a, mtu_, o), 0);
    dev_ = NetdevOf(a_dev_->ctx);
    ASSERT_FALSE(dev_.empty()) << "no netdev under " << ibv_get_device_name(a_dev_->ctx->device);
  }

  // A type 2 window of a's PD over win_, and the WQE that binds it (for
  // remote READ) with @rkey.
  void Window() {
    win_mr_ = ibv_reg_mr(a_dev_->pd, win_.data(), win_.size(),
                         IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
    ASSERT_NE(win_mr_, nullptr);
    mw_ = ibv_alloc_mw(a_dev_->pd, IBV_MW_TYPE_2);
    ASSERT_NE(mw_, nullptr);
  }
  ibv_send_wr BindWr(uint32_t rkey) {
    ibv_send_wr wr = {};
    wr.opcode = IBV_WR_BIND_MW;
    wr.bind_mw.mw = mw_;
    wr.bind_mw.rkey = rkey;
    wr.bind_mw.bind_info.mr = win_mr_;
    wr.bind_mw.bind_info.addr = (uintptr_t)win_.data();
    wr.bind_mw.bind_info.length = win_.size();
    wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
    return wr;
  }

  End a, b;
  std::string dev_;
  std::vector<uint8_t> win_ = std::vector<uint8_t>(4096);
  ibv_mr* win_mr_ = nullptr;
  ibv_mw* mw_ = nullptr;
};

// IBTA C9-114, C9-122: after its one PSN sequence error NAK a responder
// drops every new request but the one it expects, and says nothing more.
// When that NAK is lost, only the requester can end the silence. Three
// packets of a 48-packet WRITE are lost once each, and so is every NAK:
// the WRITE still completes, byte for byte, and no local ACK timeout is
// spent. softrdma goes back early, an eighth of the timeout after the
// window stopped moving (early_retransmits), without counting a retry;
// packets sent again after one gap may close the next. A requester that
// waited for the timeout would spend one per stall.
TEST_F(RecoveryTest, LostNaksCostNoTimeout) {
  const size_t len = 48 * (128u << mtu_);
  ASSERT_NO_FATAL_FAILURE(Pair(len, 1));

  TcDrops drops(Env("SRDMA_NETNS_A", ""), dev_);
  for (uint32_t k : {5u, 20u, 37u})
    drops.DropFirstSent(a.psn + k);
  drops.DropReceivedAcks(kSynPsnSeqNak);
  if (!drops.ok())
    GTEST_SKIP() << "tc cannot drop chosen packets here (cls_u32, act_gact)";

  const long timeouts = ReadCounter(a_dev_->ctx, "ack_timeouts");
  const long early = ReadCounter(a_dev_->ctx, "early_retransmits");
  const long naks = ReadCounter(a_dev_->ctx, "rx_seq_naks");
  ASSERT_GE(early, 0) << "no early_retransmits counter";
  Fill(a.buf, 0, len, 23);
  ibv_sge sge = {(uintptr_t)a.buf.data(), (uint32_t)len, a.mr->lkey};
  ibv_send_wr wr = {}, *bad;
  wr.wr_id = 1;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = (uintptr_t)b.buf.data();
  wr.wr.rdma.rkey = b.mr->rkey;
  ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
  auto wc = Poll(a.cq, 1, 60000);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);
  EXPECT_EQ(std::memcmp(a.buf.data(), b.buf.data(), len), 0);
  EXPECT_EQ(ReadCounter(a_dev_->ctx, "rx_seq_naks"), naks) << "a NAK got through";
  EXPECT_GE(ReadCounter(a_dev_->ctx, "early_retransmits") - early, 1);
  EXPECT_EQ(ReadCounter(a_dev_->ctx, "ack_timeouts"), timeouts);
}

// A go-back-N resends the requests around a local operation that already
// ran, not the operation: a type 2 memory window bound a second time
// fails (the window is valid), and would end the QP; invalidated a second
// time, it would undo a bind made since. Twice a WRITE loses one packet (and the NAK): the
// bind that follows the first and the invalidation that follows the
// second, each with a WRITE after it, run once, and every WQE completes
// successfully, in order.
TEST_F(RecoveryTest, GoBackDoesNotRunLocalOperationsAgain) {
  const uint32_t len = 4 * (128u << mtu_);
  ASSERT_NO_FATAL_FAILURE(Pair(2 * len + 128));
  ASSERT_NO_FATAL_FAILURE(Window());

  // PSNs: WRITE 0-3, WRITE 4; WRITE 5-8, WRITE 9.
  TcDrops drops(Env("SRDMA_NETNS_A", ""), dev_);
  drops.DropFirstSent(a.psn + 2);
  drops.DropFirstSent(a.psn + 7);
  drops.DropReceivedAcks(kSynPsnSeqNak);
  if (!drops.ok())
    GTEST_SKIP() << "tc cannot drop chosen packets here (cls_u32, act_gact)";

  Fill(a.buf, 0, a.buf.size(), 41);
  const uint32_t rkey = ibv_inc_rkey(mw_->rkey);
  uint64_t id = 0;
  size_t off = 0;
  // WRITE of @n bytes, @local, WRITE of 64 bytes: all three complete.
  auto round = [&](uint32_t n, ibv_send_wr local) {
    ibv_sge sges[2] = {{(uintptr_t)a.buf.data() + off, n, a.mr->lkey},
                       {(uintptr_t)a.buf.data() + off + n, 64, a.mr->lkey}};
    ibv_send_wr wr[3] = {{}, local, {}};
    for (int i = 0; i < 3; i++) {
      wr[i].wr_id = id + i;
      wr[i].send_flags = IBV_SEND_SIGNALED;
      wr[i].next = i < 2 ? &wr[i + 1] : nullptr;
    }
    for (int i : {0, 2}) {
      wr[i].opcode = IBV_WR_RDMA_WRITE;
      wr[i].sg_list = &sges[i / 2];
      wr[i].num_sge = 1;
      wr[i].wr.rdma.remote_addr = (uintptr_t)b.buf.data() + off + (i ? n : 0);
      wr[i].wr.rdma.rkey = b.mr->rkey;
    }
    ibv_send_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_send(a.qp, wr, &bad), 0);
    auto wc = Poll(a.cq, 3, 60000);
    ASSERT_EQ(wc.size(), 3u);
    for (int i = 0; i < 3; i++) {
      EXPECT_EQ(wc[i].wr_id, id + i);
      EXPECT_EQ(wc[i].status, IBV_WC_SUCCESS)
          << "WQE " << i << ": " << ibv_wc_status_str(wc[i].status);
    }
    id += 3;
    off += n + 64;
  };
  ASSERT_NO_FATAL_FAILURE(round(len, BindWr(rkey)));
  ibv_send_wr inv = {};
  inv.opcode = IBV_WR_LOCAL_INV;
  inv.invalidate_rkey = rkey;
  ASSERT_NO_FATAL_FAILURE(round(len, inv));
  EXPECT_EQ(std::memcmp(a.buf.data(), b.buf.data(), off), 0);
}

// A local operation that ran behind a READ completes when the READ does,
// also after a go-back-N resent the READ and passed over the operation:
// the READ's request is lost (the window halves to the READ's 16 packets,
// so the resending pass stops short of the operation), and the
// invalidation behind it, the last WQE, must still complete, without
// another WQE or ACK to come.
TEST_F(RecoveryTest, LocalOperationAfterLostReadCompletes) {
  const uint32_t len = 16 * (128u << mtu_);
  ASSERT_NO_FATAL_FAILURE(Pair(len));
  ASSERT_NO_FATAL_FAILURE(Window());

  const uint32_t rkey = ibv_inc_rkey(mw_->rkey);
  ibv_send_wr bind = BindWr(rkey), *bad = nullptr;
  bind.wr_id = 1;
  bind.send_flags = IBV_SEND_SIGNALED;
  ASSERT_EQ(ibv_post_send(a.qp, &bind, &bad), 0);
  auto wc = Poll(a.cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  ASSERT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);

  TcDrops drops(Env("SRDMA_NETNS_A", ""), dev_);
  drops.DropFirstSent(a.psn);  // the READ request
  if (!drops.ok())
    GTEST_SKIP() << "tc cannot drop chosen packets here (cls_u32, act_gact)";

  Fill(b.buf, 0, len, 52);
  ibv_sge sge = {(uintptr_t)a.buf.data(), len, a.mr->lkey};
  ibv_send_wr wr[2] = {};
  wr[0].wr_id = 2;
  wr[0].next = &wr[1];
  wr[0].opcode = IBV_WR_RDMA_READ;
  wr[0].send_flags = IBV_SEND_SIGNALED;
  wr[0].sg_list = &sge;
  wr[0].num_sge = 1;
  wr[0].wr.rdma.remote_addr = (uintptr_t)b.buf.data();
  wr[0].wr.rdma.rkey = b.mr->rkey;
  wr[1].wr_id = 3;
  wr[1].opcode = IBV_WR_LOCAL_INV;
  wr[1].send_flags = IBV_SEND_SIGNALED;
  wr[1].invalidate_rkey = rkey;
  ASSERT_EQ(ibv_post_send(a.qp, wr, &bad), 0);
  wc = Poll(a.cq, 2, 10000);
  ASSERT_EQ(wc.size(), 2u) << "the invalidation never completed";
  for (int i = 0; i < 2; i++) {
    EXPECT_EQ(wc[i].wr_id, uint64_t(i + 2));
    EXPECT_EQ(wc[i].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[i].status);
  }
  EXPECT_EQ(std::memcmp(a.buf.data(), b.buf.data(), len), 0);
}

}  // namespace
