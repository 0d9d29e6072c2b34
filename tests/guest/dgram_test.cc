// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The services other than RC, between two RDMA devices in a guest (the
// topology of tests/guest/pair.sh): unreliable datagrams (UD), unreliable
// connections (UC) and shared receive queues (SRQ).
//
//   UD   address handles over IPv4 or IPv6 GIDs, Q_Key checks and the
//        privileged Q_Key rule, the GRH in the first 40 bytes of the
//        receive buffer, source QP in the completion, immediate data,
//        messages up to the path MTU
//   UC   SEND and WRITE (with immediate) of one and many packets; a message
//        that finds no receive WQE is dropped and the next one arrives
//   SRQ  one SRQ shared by several RC QPs and by a UD QP, the limit event,
//        RNR while it is empty
//
// Either device may be rdma_rxe (SRDMA_KIND_A/B); checks of behaviour that
// the IBTA leaves to the implementation run only where softrdma is the end
// whose behaviour is checked.

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "verbs_pair.h"

namespace {

using namespace srdma_test;

constexpr uint32_t kQkey = 0x1234567;
constexpr size_t kGrh = 40;

// A QP of any type with its own CQ and a registered buffer.
struct Qp {
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  std::vector<uint8_t> buf;
  ibv_mr* mr = nullptr;
  ~Qp() {
    if (qp) ibv_destroy_qp(qp);
    if (mr) ibv_dereg_mr(mr);
    if (cq) ibv_destroy_cq(cq);
  }
};

class DgramTest : public ::testing::Test {
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
    mtu_ = std::min(a_->active_mtu, b_->active_mtu);
  }
  // Defined with the SRQ tests.
  void SrqPair(ibv_srq* srq, End* a, End* b, size_t bytes, const ConnOpts& o);
  static bool SoftA() { return Env("SRDMA_KIND_A", "softrdma") == "softrdma"; }
  static bool SoftB() { return Env("SRDMA_KIND_B", "softrdma") == "softrdma"; }

  // Create a QP of @type on @d; @srq, when given, serves its receives.
  static void Make(Dev* d, Qp* q, ibv_qp_type type, size_t bytes, ibv_srq* srq = nullptr,
                   ibv_cq* cq = nullptr) {
    q->cq = cq ? nullptr : ibv_create_cq(d->ctx, 256, nullptr, nullptr, 0);
    ibv_cq* use = cq ? cq : q->cq;
    ASSERT_NE(use, nullptr);
    ibv_qp_init_attr init = {};
    init.send_cq = use;
    init.recv_cq = use;
    init.srq = srq;
    init.qp_type = type;
    init.cap.max_send_wr = 64;
    init.cap.max_recv_wr = srq ? 0 : 64;
    init.cap.max_send_sge = 2;
    init.cap.max_recv_sge = srq ? 0 : 2;
    init.cap.max_inline_data = 64;
    q->qp = ibv_create_qp(d->pd, &init);
    ASSERT_NE(q->qp, nullptr) << "create_qp: " << strerror(errno);
    q->buf.assign(bytes, 0);
    q->mr = ibv_reg_mr(d->pd, q->buf.data(), bytes, kAccess);
    ASSERT_NE(q->mr, nullptr);
  }

  // UD (or any datagram QP): RESET -> INIT -> RTR -> RTS with a Q_Key.
  static void UdUp(Qp* q, uint32_t qkey = kQkey) {
    ibv_qp_attr a = {};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qkey = qkey;
    ASSERT_EQ(ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                           IBV_QP_QKEY), 0);
    a = {};
    a.qp_state = IBV_QPS_RTR;
    ASSERT_EQ(ibv_modify_qp(q->qp, &a, IBV_QP_STATE), 0);
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 0;
    ASSERT_EQ(ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
  }

  // UC: connect @q on @from to @peer on @to.
  void UcConnect(Dev* from, Qp* q, Dev* to, Qp* peer) {
    ibv_qp_attr a = {};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    ASSERT_EQ(ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                           IBV_QP_ACCESS_FLAGS), 0);
    a = {};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = mtu_;
    a.dest_qp_num = peer->qp->qp_num;
    a.rq_psn = 100;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = to->gid;
    a.ah_attr.grh.sgid_index = from->gid_index;
    a.ah_attr.grh.hop_limit = 64;
    a.ah_attr.port_num = 1;
    ASSERT_EQ(ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                           IBV_QP_DEST_QPN | IBV_QP_RQ_PSN), 0);
    a = {};
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 100;
    ASSERT_EQ(ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
  }

  static ibv_ah* MakeAh(Dev* from, Dev* to, uint8_t tclass = 0, uint8_t hop_limit = 64) {
    ibv_ah_attr ah = {};
    ah.is_global = 1;
    ah.grh.dgid = to->gid;
    ah.grh.sgid_index = from->gid_index;
    ah.grh.hop_limit = hop_limit;
    ah.grh.traffic_class = tclass;
    ah.port_num = 1;
    return ibv_create_ah(from->pd, &ah);
  }

  static int PostRecv(Qp* q, size_t off, size_t len, uint64_t id) {
    ibv_sge sge = {(uintptr_t)q->buf.data() + off, (uint32_t)len, q->mr->lkey};
    ibv_recv_wr wr = {}, *bad;
    wr.wr_id = id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    return ibv_post_recv(q->qp, &wr, &bad);
  }

  static int PostUd(Qp* q, ibv_ah* ah, uint32_t qpn, uint32_t qkey, size_t off, size_t len,
                    uint64_t id, bool imm = false, uint32_t imm_data = 0) {
    ibv_sge sge = {(uintptr_t)q->buf.data() + off, (uint32_t)len, q->mr->lkey};
    ibv_send_wr wr = {}, *bad;
    wr.wr_id = id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(imm_data);
    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = qpn;
    wr.wr.ud.remote_qkey = qkey;
    return ibv_post_send(q->qp, &wr, &bad);
  }

  static int PostUc(Qp* q, ibv_wr_opcode op, size_t off, size_t len, uint64_t id,
                    uint64_t raddr = 0, uint32_t rkey = 0, uint32_t imm = 0) {
    ibv_sge sge = {(uintptr_t)q->buf.data() + off, (uint32_t)len, q->mr->lkey};
    ibv_send_wr wr = {}, *bad;
    wr.wr_id = id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = op;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(imm);
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    return ibv_post_send(q->qp, &wr, &bad);
  }

  static bool IsV4(const Dev* d) {
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::memcmp(d->gid.raw, mapped, 12) == 0;
  }

  static Dev* a_;
  static Dev* b_;
  ibv_mtu mtu_ = IBV_MTU_1024;
};

Dev* DgramTest::a_ = nullptr;
Dev* DgramTest::b_ = nullptr;

// --- UD ---------------------------------------------------------------------

TEST_F(DgramTest, UdSendSizesGrhSourceAndImmediate) {
  Qp s, r;
  ASSERT_NO_FATAL_FAILURE(Make(a_, &s, IBV_QPT_UD, 8192));
  ASSERT_NO_FATAL_FAILURE(Make(b_, &r, IBV_QPT_UD, 8192));
  ASSERT_NO_FATAL_FAILURE(UdUp(&s));
  ASSERT_NO_FATAL_FAILURE(UdUp(&r));
  ibv_ah* ah = MakeAh(a_, b_);
  ASSERT_NE(ah, nullptr) << strerror(errno);
  const size_t pmtu = PmtuBytes(mtu_);
  uint32_t seed = 7;
  for (size_t len : {size_t{0}, size_t{1}, size_t{63}, size_t{256}, pmtu - 1, pmtu}) {
    SCOPED_TRACE(len);
    bool imm = len & 1;
    Fill(s.buf, 0, len, seed++);
    std::fill(r.buf.begin(), r.buf.end(), 0xee);
    ASSERT_EQ(PostRecv(&r, 0, kGrh + len + 8, 1000 + len), 0);
    ASSERT_EQ(PostUd(&s, ah, r.qp->qp_num, kQkey, 0, len, len, imm, 0xabc000 + len), 0);
    auto sw = Poll(s.cq, 1);
    auto rw = Poll(r.cq, 1);
    ASSERT_EQ(sw.size(), 1u);
    ASSERT_EQ(rw.size(), 1u);
    EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(sw[0].status);
    EXPECT_EQ(sw[0].opcode, IBV_WC_SEND);
    EXPECT_EQ(sw[0].wr_id, len);
    ASSERT_EQ(rw[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(rw[0].status);
    EXPECT_EQ(rw[0].opcode, IBV_WC_RECV);
    EXPECT_EQ(rw[0].wr_id, 1000 + len);
    EXPECT_EQ(rw[0].byte_len, kGrh + len);
    EXPECT_EQ(rw[0].src_qp, s.qp->qp_num);
    EXPECT_TRUE(rw[0].wc_flags & IBV_WC_GRH);
    EXPECT_EQ(!!(rw[0].wc_flags & IBV_WC_WITH_IMM), imm);
    if (imm) {
      EXPECT_EQ(ntohl(rw[0].imm_data), 0xabc000 + len);
    }
    EXPECT_EQ(std::memcmp(r.buf.data() + kGrh, s.buf.data(), len), 0);
    // The GRH is the IP header of the datagram (RoCEv2, IBTA A17.4.5).
    if (IsV4(a_)) {
      ip h;
      std::memcpy(&h, r.buf.data() + 20, sizeof(h));
      EXPECT_EQ(h.ip_v, 4);
      EXPECT_EQ(std::memcmp(&h.ip_src, a_->gid.raw + 12, 4), 0);
      EXPECT_EQ(std::memcmp(&h.ip_dst, b_->gid.raw + 12, 4), 0);
    } else {
      ip6_hdr h;
      std::memcpy(&h, r.buf.data(), sizeof(h));
      EXPECT_EQ(h.ip6_vfc >> 4, 6);
      EXPECT_EQ(std::memcmp(&h.ip6_src, a_->gid.raw, 16), 0);
      EXPECT_EQ(std::memcmp(&h.ip6_dst, b_->gid.raw, 16), 0);
    }
    // Nothing written past the message.
    EXPECT_EQ(r.buf[kGrh + len], 0xee);
  }
  ibv_destroy_ah(ah);
}

TEST_F(DgramTest, UdQkeyMismatchDropsAndPrivilegedBitUsesTheQpsOwn) {
  Qp s, r;
  ASSERT_NO_FATAL_FAILURE(Make(a_, &s, IBV_QPT_UD, 4096));
  ASSERT_NO_FATAL_FAILURE(Make(b_, &r, IBV_QPT_UD, 4096));
  ASSERT_NO_FATAL_FAILURE(UdUp(&s, kQkey));
  ASSERT_NO_FATAL_FAILURE(UdUp(&r, kQkey));
  ibv_ah* ah = MakeAh(a_, b_);
  ASSERT_NE(ah, nullptr);
  Fill(s.buf, 0, 100, 1);
  Fill(s.buf, 200, 100, 2);
  ASSERT_EQ(PostRecv(&r, 0, 1024, 1), 0);
  // A wrong Q_Key: silently dropped at the receiver (IBTA 10.2.5).
  ASSERT_EQ(PostUd(&s, ah, r.qp->qp_num, kQkey + 1, 0, 100, 1), 0);
  ASSERT_EQ(Poll(s.cq, 1).size(), 1u);
  EXPECT_EQ(Poll(r.cq, 1, 500).size(), 0u);
  // High bit set: the sending QP's own Q_Key goes on the wire. rdma_rxe
  // (6.1) sends the Q_Key of the WR as it is.
  const uint32_t qkey = SoftA() ? 0x80000000u : kQkey;
  ASSERT_EQ(PostUd(&s, ah, r.qp->qp_num, qkey, 200, 100, 2), 0);
  auto sw = Poll(s.cq, 1);
  auto rw = Poll(r.cq, 1);
  ASSERT_EQ(sw.size(), 1u);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(rw[0].wr_id, 1u);
  EXPECT_EQ(std::memcmp(r.buf.data() + kGrh, s.buf.data() + 200, 100), 0);
  ibv_destroy_ah(ah);
}

TEST_F(DgramTest, UdManyMessagesOneAhPerDestinationQp) {
  Qp s, r1, r2;
  ASSERT_NO_FATAL_FAILURE(Make(a_, &s, IBV_QPT_UD, 4096));
  ASSERT_NO_FATAL_FAILURE(Make(b_, &r1, IBV_QPT_UD, 65536));
  ASSERT_NO_FATAL_FAILURE(Make(b_, &r2, IBV_QPT_UD, 65536));
  ASSERT_NO_FATAL_FAILURE(UdUp(&s));
  ASSERT_NO_FATAL_FAILURE(UdUp(&r1));
  ASSERT_NO_FATAL_FAILURE(UdUp(&r2));
  ibv_ah* ah = MakeAh(a_, b_, 0x20, 8);
  ASSERT_NE(ah, nullptr);
  constexpr int kMsgs = 32;
  for (int i = 0; i < kMsgs; i++) {
    ASSERT_EQ(PostRecv(&r1, i * 1024, 1024, i), 0);
    ASSERT_EQ(PostRecv(&r2, i * 1024, 1024, i), 0);
  }
  for (int i = 0; i < kMsgs; i++) {
    s.buf[i] = static_cast<uint8_t>(i);
    Qp* to = (i & 1) ? &r2 : &r1;
    ASSERT_EQ(PostUd(&s, ah, to->qp->qp_num, kQkey, i, 1, i), 0);
    if (i % 16 == 15) {
      ASSERT_EQ(Poll(s.cq, 16).size(), 16u);
    }
  }
  auto w1 = Poll(r1.cq, kMsgs / 2);
  auto w2 = Poll(r2.cq, kMsgs / 2);
  ASSERT_EQ(w1.size(), size_t{kMsgs / 2});
  ASSERT_EQ(w2.size(), size_t{kMsgs / 2});
  // veth does not reorder: datagrams arrive in order, each in its WQE.
  for (int i = 0; i < kMsgs / 2; i++) {
    EXPECT_EQ(w1[i].status, IBV_WC_SUCCESS);
    EXPECT_EQ(r1.buf[w1[i].wr_id * 1024 + kGrh], 2 * i);
    EXPECT_EQ(r2.buf[w2[i].wr_id * 1024 + kGrh], 2 * i + 1);
  }
  ibv_destroy_ah(ah);
}

TEST_F(DgramTest, UdOverMtuIsALocalLengthError) {
  if (!SoftA()) GTEST_SKIP() << "the sender's behaviour is checked on softrdma";
  Qp s, r;
  ASSERT_NO_FATAL_FAILURE(Make(a_, &s, IBV_QPT_UD, 8192));
  ASSERT_NO_FATAL_FAILURE(Make(b_, &r, IBV_QPT_UD, 8192));
  ASSERT_NO_FATAL_FAILURE(UdUp(&s));
  ASSERT_NO_FATAL_FAILURE(UdUp(&r));
  ibv_port_attr port = {};
  ASSERT_EQ(ibv_query_port(a_->ctx, 1, &port), 0);
  ibv_ah* ah = MakeAh(a_, b_);
  ASSERT_NE(ah, nullptr);
  ASSERT_EQ(PostUd(&s, ah, r.qp->qp_num, kQkey, 0, PmtuBytes(port.active_mtu) + 1, 9), 0);
  auto sw = Poll(s.cq, 1);
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].status, IBV_WC_LOC_LEN_ERR) << ibv_wc_status_str(sw[0].status);
  ibv_destroy_ah(ah);
}

// IBTA 9.8.3.2.2, C9-205: a datagram longer than the receive buffer is
// an invalid request, dropped silently; the WQE is not used (9.8.3.2.5)
// and the QP goes on: the next datagram that fits completes in it.
TEST_F(DgramTest, UdTooLongForTheReceiveBufferIsDropped) {
  if (!SoftB()) GTEST_SKIP() << "the receiver's behaviour is checked on softrdma";
  Qp s, r;
  ASSERT_NO_FATAL_FAILURE(Make(a_, &s, IBV_QPT_UD, 4096));
  ASSERT_NO_FATAL_FAILURE(Make(b_, &r, IBV_QPT_UD, 4096));
  ASSERT_NO_FATAL_FAILURE(UdUp(&s));
  ASSERT_NO_FATAL_FAILURE(UdUp(&r));
  ibv_ah* ah = MakeAh(a_, b_);
  ASSERT_NE(ah, nullptr);
  const long before = ReadCounter(b_->ctx, "rx_drop_too_long");
  ASSERT_GE(before, 0) << "no rx_drop_too_long counter";
  ASSERT_EQ(PostRecv(&r, 0, kGrh + 10, 5), 0);
  ASSERT_EQ(PostUd(&s, ah, r.qp->qp_num, kQkey, 0, 100, 1), 0);
  auto sw = Poll(s.cq, 1);
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS);
  long dropped = 0;
  for (int t = 0; t < 200 && dropped < 1; t++)
    dropped = ReadCounter(b_->ctx, "rx_drop_too_long") - before;
  EXPECT_EQ(dropped, 1);
  EXPECT_TRUE(Poll(r.cq, 1, 100).empty()) << "the WQE was used";
  ibv_qp_attr attr;
  ibv_qp_init_attr init;
  ASSERT_EQ(ibv_query_qp(r.qp, &attr, IBV_QP_STATE, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_RTS);
  ASSERT_EQ(PostUd(&s, ah, r.qp->qp_num, kQkey, 0, 10, 2), 0);
  auto rw = Poll(r.cq, 1);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(rw[0].status);
  EXPECT_EQ(rw[0].wr_id, 5u);
  EXPECT_EQ(rw[0].byte_len, kGrh + 10);
  ibv_destroy_ah(ah);
}

// Multicast (IBTA 10.5): two QPs on B attached to one group both receive
// what A sends to it; a detached QP receives no more.
TEST_F(DgramTest, UdMulticastToAttachedQps) {
  if (!SoftB()) GTEST_SKIP() << "the receiving device is checked on softrdma";
  Qp s, r1, r2;
  ASSERT_NO_FATAL_FAILURE(Make(a_, &s, IBV_QPT_UD, 4096));
  ASSERT_NO_FATAL_FAILURE(Make(b_, &r1, IBV_QPT_UD, 4096));
  ASSERT_NO_FATAL_FAILURE(Make(b_, &r2, IBV_QPT_UD, 4096));
  ASSERT_NO_FATAL_FAILURE(UdUp(&s));
  ASSERT_NO_FATAL_FAILURE(UdUp(&r1));
  ASSERT_NO_FATAL_FAILURE(UdUp(&r2));
  ibv_gid mgid = {};
  if (IsV4(b_)) {
    mgid.raw[10] = mgid.raw[11] = 0xff;
    const uint8_t g[4] = {239, 1, 2, 3};
    std::memcpy(mgid.raw + 12, g, 4);
  } else {
    ASSERT_EQ(inet_pton(AF_INET6, "ff0e::db8:1", mgid.raw), 1);
  }
  // A unicast GID is no group; an RC QP cannot attach.
  EXPECT_NE(ibv_attach_mcast(r1.qp, &b_->gid, 0), 0);
  ASSERT_EQ(ibv_attach_mcast(r1.qp, &mgid, 0), 0);
  ASSERT_EQ(ibv_attach_mcast(r2.qp, &mgid, 0), 0);
  ibv_ah_attr aa = {};
  aa.is_global = 1;
  aa.grh.dgid = mgid;
  aa.grh.sgid_index = a_->gid_index;
  aa.grh.hop_limit = 8;
  aa.port_num = 1;
  ibv_ah* ah = ibv_create_ah(a_->pd, &aa);
  ASSERT_NE(ah, nullptr) << strerror(errno);
  for (int i = 0; i < 4; i++) {
    ASSERT_EQ(PostRecv(&r1, i * 512, 512, i), 0);
    ASSERT_EQ(PostRecv(&r2, i * 512, 512, i), 0);
  }
  Fill(s.buf, 0, 200, 5);
  // IP needs a moment to take the group membership everywhere.
  usleep(200000);
  ASSERT_EQ(PostUd(&s, ah, 0xffffff, kQkey, 0, 200, 1), 0);
  ASSERT_EQ(Poll(s.cq, 1).size(), 1u);
  auto w1 = Poll(r1.cq, 1);
  auto w2 = Poll(r2.cq, 1);
  ASSERT_EQ(w1.size(), 1u);
  ASSERT_EQ(w2.size(), 1u);
  for (auto* q : {&r1, &r2}) EXPECT_EQ(std::memcmp(q->buf.data() + kGrh, s.buf.data(), 200), 0);
  EXPECT_EQ(w1[0].src_qp, s.qp->qp_num);
  EXPECT_EQ(w2[0].src_qp, s.qp->qp_num);
  ASSERT_EQ(ibv_detach_mcast(r2.qp, &mgid, 0), 0);
  EXPECT_NE(ibv_detach_mcast(r2.qp, &mgid, 0), 0) << "detached twice";
  ASSERT_EQ(PostUd(&s, ah, 0xffffff, kQkey, 0, 200, 2), 0);
  ASSERT_EQ(Poll(s.cq, 1).size(), 1u);
  EXPECT_EQ(Poll(r1.cq, 1).size(), 1u);
  EXPECT_EQ(Poll(r2.cq, 1, 300).size(), 0u);
  ASSERT_EQ(ibv_detach_mcast(r1.qp, &mgid, 0), 0);
  ibv_destroy_ah(ah);
}

// --- UC ---------------------------------------------------------------------

TEST_F(DgramTest, UcSendAndWriteOfOneAndManyPackets) {
  Qp a, b;
  ASSERT_NO_FATAL_FAILURE(Make(a_, &a, IBV_QPT_UC, 1 << 20));
  ASSERT_NO_FATAL_FAILURE(Make(b_, &b, IBV_QPT_UC, 1 << 20));
  ASSERT_NO_FATAL_FAILURE(UcConnect(a_, &a, b_, &b));
  ASSERT_NO_FATAL_FAILURE(UcConnect(b_, &b, a_, &a));
  const size_t pmtu = PmtuBytes(mtu_);
  uint32_t seed = 3;
  for (size_t len : {size_t{0}, size_t{1}, pmtu, pmtu + 1, 3 * pmtu + 17, size_t{65536}}) {
    SCOPED_TRACE(len);
    Fill(a.buf, 0, len, seed++);
    ASSERT_EQ(PostRecv(&b, 0, len + 16, 500 + len), 0);
    ASSERT_EQ(PostUc(&a, IBV_WR_SEND, 0, len, len), 0);
    auto sw = Poll(a.cq, 1);
    auto rw = Poll(b.cq, 1);
    ASSERT_EQ(sw.size(), 1u);
    ASSERT_EQ(rw.size(), 1u);
    EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(rw[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(rw[0].byte_len, len);
    EXPECT_EQ(std::memcmp(b.buf.data(), a.buf.data(), len), 0);

    // WRITE with immediate into the second half of b's buffer.
    Fill(a.buf, 0, len, seed++);
    ASSERT_EQ(PostRecv(&b, 0, 0, 900 + len), 0);
    ASSERT_EQ(PostUc(&a, IBV_WR_RDMA_WRITE_WITH_IMM, 0, len, len,
                     (uintptr_t)b.buf.data() + (1 << 19), b.mr->rkey, 0x55aa0000u + len),
              0);
    sw = Poll(a.cq, 1);
    rw = Poll(b.cq, 1);
    ASSERT_EQ(sw.size(), 1u);
    ASSERT_EQ(rw.size(), 1u);
    EXPECT_EQ(sw[0].opcode, IBV_WC_RDMA_WRITE);
    EXPECT_EQ(rw[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
    EXPECT_EQ(ntohl(rw[0].imm_data), 0x55aa0000u + len);
    EXPECT_EQ(std::memcmp(b.buf.data() + (1 << 19), a.buf.data(), len), 0);
  }
}

TEST_F(DgramTest, UcMessageWithoutReceiveWqeIsDropped) {
  if (!SoftB()) GTEST_SKIP() << "the receiver's behaviour is checked on softrdma";
  Qp a, b;
  ASSERT_NO_FATAL_FAILURE(Make(a_, &a, IBV_QPT_UC, 65536));
  ASSERT_NO_FATAL_FAILURE(Make(b_, &b, IBV_QPT_UC, 65536));
  ASSERT_NO_FATAL_FAILURE(UcConnect(a_, &a, b_, &b));
  ASSERT_NO_FATAL_FAILURE(UcConnect(b_, &b, a_, &a));
  Fill(a.buf, 0, 5000, 1);
  Fill(a.buf, 8192, 5000, 2);
  // No receive WQE: the sender completes, the message is lost.
  ASSERT_EQ(PostUc(&a, IBV_WR_SEND, 0, 5000, 1), 0);
  ASSERT_EQ(Poll(a.cq, 1).size(), 1u);
  EXPECT_EQ(Poll(b.cq, 1, 300).size(), 0u);
  // The next message arrives whole.
  ASSERT_EQ(PostRecv(&b, 0, 8192, 7), 0);
  ASSERT_EQ(PostUc(&a, IBV_WR_SEND, 8192, 5000, 2), 0);
  ASSERT_EQ(Poll(a.cq, 1).size(), 1u);
  auto rw = Poll(b.cq, 1);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(rw[0].byte_len, 5000u);
  EXPECT_EQ(std::memcmp(b.buf.data(), a.buf.data() + 8192, 5000), 0);
}

// --- SRQ --------------------------------------------------------------------

struct Srq {
  ibv_srq* srq = nullptr;
  // An SRQ of @max_wr WQEs of one SGE on @pd.
  bool Create(ibv_pd* pd, uint32_t max_wr) {
    ibv_srq_init_attr a = {};
    a.attr.max_wr = max_wr;
    a.attr.max_sge = 1;
    srq = ibv_create_srq(pd, &a);
    return srq != nullptr;
  }
  ~Srq() {
    if (srq) ibv_destroy_srq(srq);
  }
};

static int PostSrq(ibv_srq* srq, ibv_mr* mr, std::vector<uint8_t>& buf, size_t off, size_t len,
                   uint64_t id) {
  ibv_sge sge = {(uintptr_t)buf.data() + off, (uint32_t)len, mr->lkey};
  ibv_recv_wr wr = {}, *bad;
  wr.wr_id = id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  return ibv_post_srq_recv(srq, &wr, &bad);
}

// An RC QP on A (@a) connected to one on B (@b) whose receives come from
// @srq; both with a buffer of @bytes.
void DgramTest::SrqPair(ibv_srq* srq, End* a, End* b, size_t bytes, const ConnOpts& o) {
  ASSERT_TRUE(MakeEnd(a_, a, bytes));
  b->dev = b_;
  b->cq = ibv_create_cq(b_->ctx, 64, nullptr, nullptr, 0);
  ASSERT_NE(b->cq, nullptr);
  ibv_qp_init_attr init = {};
  init.send_cq = b->cq;
  init.recv_cq = b->cq;
  init.srq = srq;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = 16;
  init.cap.max_send_sge = 1;
  b->qp = ibv_create_qp(b_->pd, &init);
  ASSERT_NE(b->qp, nullptr) << strerror(errno);
  b->buf.assign(bytes, 0);
  b->mr = ibv_reg_mr(b_->pd, b->buf.data(), b->buf.size(), kAccess);
  ASSERT_NE(b->mr, nullptr);
  ASSERT_EQ(Connect(a, b, mtu_, o), 0);
  ASSERT_EQ(Connect(b, a, mtu_, o), 0);
}

static int SendOne(End* a, size_t len, uint64_t id) {
  ibv_sge sge = {(uintptr_t)a->buf.data(), (uint32_t)len, a->mr->lkey};
  ibv_send_wr wr = {}, *bad;
  wr.wr_id = id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  return ibv_post_send(a->qp, &wr, &bad);
}

TEST_F(DgramTest, SrqSharedByRcQpsAndItsLimitEvent) {
  if (!SoftB()) GTEST_SKIP() << "the SRQ is checked on softrdma";
  Srq srq;
  ASSERT_TRUE(srq.Create(b_->pd, 64)) << strerror(errno);
  ibv_cq* bcq = ibv_create_cq(b_->ctx, 256, nullptr, nullptr, 0);
  ASSERT_NE(bcq, nullptr);
  std::vector<uint8_t> rbuf(64 * 4096);
  ibv_mr* rmr = ibv_reg_mr(b_->pd, rbuf.data(), rbuf.size(), IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(rmr, nullptr);
  {
    constexpr int kQps = 3, kPosted = 12, kLimit = 4;
    std::vector<std::unique_ptr<End>> as, bs;
    for (int i = 0; i < kQps; i++) {
      as.push_back(std::make_unique<End>());
      bs.push_back(std::make_unique<End>());
      ASSERT_TRUE(MakeEnd(a_, as[i].get(), 65536));
      // B's QPs take their receives from the SRQ.
      End* e = bs[i].get();
      e->dev = b_;
      ibv_qp_init_attr init = {};
      init.send_cq = bcq;
      init.recv_cq = bcq;
      init.srq = srq.srq;
      init.qp_type = IBV_QPT_RC;
      init.cap.max_send_wr = 16;
      init.cap.max_send_sge = 1;
      e->qp = ibv_create_qp(b_->pd, &init);
      ASSERT_NE(e->qp, nullptr) << strerror(errno);
      e->psn = 7 * i;
      ConnOpts o;
      ASSERT_EQ(Connect(as[i].get(), e, mtu_, o), 0);
      ASSERT_EQ(Connect(e, as[i].get(), mtu_, o), 0);
    }
    // A QP with an SRQ has no receive queue of its own.
    ibv_recv_wr rwr = {}, *bad;
    EXPECT_NE(ibv_post_recv(bs[0]->qp, &rwr, &bad), 0);

    for (int i = 0; i < kPosted; i++) ASSERT_EQ(PostSrq(srq.srq, rmr, rbuf, i * 4096, 4096, i), 0);
    ibv_srq_attr lim = {};
    lim.srq_limit = kLimit;
    ASSERT_EQ(ibv_modify_srq(srq.srq, &lim, IBV_SRQ_LIMIT), 0);
    ibv_srq_attr q = {};
    ASSERT_EQ(ibv_query_srq(srq.srq, &q), 0);
    EXPECT_GE(q.max_wr, 64u);
    EXPECT_EQ(q.srq_limit, uint32_t{kLimit});

    // Nine messages over three QPs leave 3 WQEs, fewer than the limit.
    constexpr int kMsgs = 9;
    for (int m = 0; m < kMsgs; m++) {
      End* a = as[m % kQps].get();
      std::memset(a->buf.data(), 0x30 + m, 3000);
      ibv_sge sge = {(uintptr_t)a->buf.data(), 3000, a->mr->lkey};
      ibv_send_wr wr = {}, *sbad;
      wr.wr_id = m;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      wr.opcode = IBV_WR_SEND;
      wr.send_flags = IBV_SEND_SIGNALED;
      ASSERT_EQ(ibv_post_send(a->qp, &wr, &sbad), 0);
      ASSERT_EQ(Poll(a->cq, 1).size(), 1u);
    }
    auto rw = Poll(bcq, kMsgs);
    ASSERT_EQ(rw.size(), size_t{kMsgs});
    for (int m = 0; m < kMsgs; m++) {
      EXPECT_EQ(rw[m].status, IBV_WC_SUCCESS);
      EXPECT_EQ(rw[m].qp_num, bs[m % kQps]->qp->qp_num);
      EXPECT_EQ(rw[m].byte_len, 3000u);
      EXPECT_EQ(rbuf[rw[m].wr_id * 4096 + 2999], 0x30 + m);
    }
    // The limit event, once.
    pollfd pfd = {b_->ctx->async_fd, POLLIN, 0};
    ASSERT_EQ(poll(&pfd, 1, 5000), 1);
    ibv_async_event ev;
    ASSERT_EQ(ibv_get_async_event(b_->ctx, &ev), 0);
    EXPECT_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
    EXPECT_EQ(ev.element.srq, srq.srq);
    ibv_ack_async_event(&ev);
    ASSERT_EQ(ibv_query_srq(srq.srq, &q), 0);
    EXPECT_EQ(q.srq_limit, 0u) << "the limit disarms when it fires";
    for (auto& e : bs) {
      ibv_destroy_qp(e->qp);
      e->qp = nullptr;
    }
  }
  ibv_dereg_mr(rmr);
  ibv_destroy_cq(bcq);
}

TEST_F(DgramTest, SrqEmptyMeansRnrThenDelivery) {
  if (!SoftB()) GTEST_SKIP() << "the SRQ is checked on softrdma";
  Srq srq;
  ASSERT_TRUE(srq.Create(b_->pd, 16)) << strerror(errno);
  End a, b;
  ConnOpts o;
  o.min_rnr_timer = 10;  // 0.96 ms
  ASSERT_NO_FATAL_FAILURE(SrqPair(srq.srq, &a, &b, 8192, o));
  Fill(a.buf, 0, 2000, 4);
  ibv_sge sge = {(uintptr_t)a.buf.data(), 2000, a.mr->lkey};
  ibv_send_wr wr = {}, *sbad;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  ASSERT_EQ(ibv_post_send(a.qp, &wr, &sbad), 0);
  usleep(100000);
  EXPECT_EQ(Poll(a.cq, 1, 10).size(), 0u) << "completed while the SRQ was empty";
  ASSERT_EQ(PostSrq(srq.srq, b.mr, b.buf, 0, 4096, 77), 0);
  auto sw = Poll(a.cq, 1);
  auto rw = Poll(b.cq, 1);
  ASSERT_EQ(sw.size(), 1u);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(sw[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(rw[0].wr_id, 77u);
  EXPECT_EQ(std::memcmp(b.buf.data(), a.buf.data(), 2000), 0);
}

TEST_F(DgramTest, SrqServesAUdQp) {
  if (!SoftB()) GTEST_SKIP() << "the SRQ is checked on softrdma";
  Srq srq;
  ASSERT_TRUE(srq.Create(b_->pd, 16)) << strerror(errno);
  Qp s, r;
  ASSERT_NO_FATAL_FAILURE(Make(a_, &s, IBV_QPT_UD, 4096));
  ASSERT_NO_FATAL_FAILURE(Make(b_, &r, IBV_QPT_UD, 4096, srq.srq));
  ASSERT_NO_FATAL_FAILURE(UdUp(&s));
  ASSERT_NO_FATAL_FAILURE(UdUp(&r));
  ibv_ah* ah = MakeAh(a_, b_);
  ASSERT_NE(ah, nullptr);
  ASSERT_EQ(PostSrq(srq.srq, r.mr, r.buf, 0, 1024, 3), 0);
  Fill(s.buf, 0, 500, 9);
  ASSERT_EQ(PostUd(&s, ah, r.qp->qp_num, kQkey, 0, 500, 1), 0);
  auto rw = Poll(r.cq, 1);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(rw[0].wr_id, 3u);
  EXPECT_EQ(rw[0].byte_len, kGrh + 500);
  EXPECT_EQ(std::memcmp(r.buf.data() + kGrh, s.buf.data(), 500), 0);
  ASSERT_EQ(Poll(s.cq, 1).size(), 1u);
  ibv_destroy_ah(ah);
}

// A QP with an SRQ that enters ERR takes no more WQEs from it and says so
// with the affiliated event Last WQE Reached; the WQEs it did not take stay
// in the SRQ for its other QPs.
TEST_F(DgramTest, SrqQpInErrorRaisesLastWqeReached) {
  if (!SoftB()) GTEST_SKIP() << "the SRQ is checked on softrdma";
  Srq srq;
  ASSERT_TRUE(srq.Create(b_->pd, 16)) << strerror(errno);
  End a, b, a2, b2;
  ConnOpts o;
  ASSERT_NO_FATAL_FAILURE(SrqPair(srq.srq, &a, &b, 8192, o));
  ASSERT_NO_FATAL_FAILURE(SrqPair(srq.srq, &a2, &b2, 8192, o));
  ASSERT_EQ(PostSrq(srq.srq, b.mr, b.buf, 0, 4096, 1), 0);
  ASSERT_EQ(PostSrq(srq.srq, b.mr, b.buf, 4096, 4096, 2), 0);
  Fill(a.buf, 0, 1000, 5);
  ASSERT_EQ(SendOne(&a, 1000, 10), 0);
  ASSERT_EQ(Poll(a.cq, 1).size(), 1u);
  auto rw = Poll(b.cq, 1);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].wr_id, 1u);

  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(b.qp, &attr, IBV_QP_STATE), 0);
  EXPECT_TRUE(WaitQpEvent(b_->ctx, b.qp, IBV_EVENT_QP_LAST_WQE_REACHED, 5000))
      << "no Last WQE Reached for the QP in ERR";
  EXPECT_EQ(Poll(b.cq, 1, 100).size(), 0u) << "a WQE of the SRQ was flushed by its QP";

  Fill(a2.buf, 0, 700, 6);
  ASSERT_EQ(SendOne(&a2, 700, 20), 0);
  rw = Poll(b2.cq, 1);
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(rw[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(rw[0].wr_id, 2u) << "the WQE left in the SRQ serves another QP";
  EXPECT_EQ(std::memcmp(b.buf.data() + 4096, a2.buf.data(), 700), 0);
}

// A QP reset in the middle of a message held a WQE of its SRQ: the WQE
// comes back exactly once (flushed), not lost with the QP's own queues.
TEST_F(DgramTest, SrqWqeHeldAcrossResetIsReturned) {
  if (!SoftB()) GTEST_SKIP() << "the SRQ is checked on softrdma";
  constexpr size_t kLen = 16 << 20;
  Srq srq;
  ASSERT_TRUE(srq.Create(b_->pd, 4)) << strerror(errno);
  End a, b;
  ConnOpts o;
  ASSERT_NO_FATAL_FAILURE(SrqPair(srq.srq, &a, &b, kLen, o));
  std::memset(a.buf.data(), 0x5a, kLen);
  ASSERT_EQ(PostSrq(srq.srq, b.mr, b.buf, 0, kLen, 9), 0);
  ASSERT_EQ(SendOne(&a, kLen, 30), 0);
  // Wait for the first packet to land, then reset before the last one.
  const volatile uint8_t* first = b.buf.data();
  const volatile uint8_t* last = b.buf.data() + kLen - 1;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!*first && std::chrono::steady_clock::now() < end) {
  }
  ASSERT_NE(*first, 0) << "the message did not start";
  bool whole_before = *last != 0;
  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(ibv_modify_qp(b.qp, &attr, IBV_QP_STATE), 0);
  auto rw = Poll(b.cq, 2, 1000);
  ASSERT_EQ(rw.size(), 1u) << "the SRQ's WQE must come back once";
  EXPECT_EQ(rw[0].wr_id, 9u);
  if (rw[0].status == IBV_WC_SUCCESS)
    EXPECT_NE(*last, 0) << "completed without its last byte";
  else
    EXPECT_EQ(rw[0].status, IBV_WC_WR_FLUSH_ERR) << ibv_wc_status_str(rw[0].status);
  if (whole_before) std::printf("note: the message was whole before the reset\n");
}

}  // namespace
