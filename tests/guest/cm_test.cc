// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Connection setup through rdma_cm between two devices in two network
// namespaces (tests/guest/pair.sh): B listens on its address, A resolves
// B's address and route, connects, and both exchange messages; then A
// disconnects. Over RC (RDMA_PS_TCP: the IB CM's REQ/REP/RTU and DREQ/DREP
// MADs on QP1) and UD (RDMA_PS_UDP: SIDR REQ/REP), where the answer goes
// back through an AH made from the received completion and its GRH
// (ibv_create_ah_from_wc()).
//
// One thread drives both ends: an rdma_cm ID belongs to the network
// namespace its creator was in, so each end's IDs are created inside that
// end's namespace (setns()), and the thread returns to its own.

#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <sched.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "verbs_pair.h"

namespace {

using srdma_test::Env;

// Runs the scope in network namespace @name ("" is the initial one).
class InNetns {
 public:
  explicit InNetns(const std::string& name) {
    self_ = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    std::string path = name.empty() ? "/proc/1/ns/net" : "/run/netns/" + name;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ok_ = self_ >= 0 && fd >= 0 && setns(fd, CLONE_NEWNET) == 0;
    if (fd >= 0) close(fd);
  }
  ~InNetns() {
    if (self_ >= 0) {
      setns(self_, CLONE_NEWNET);
      close(self_);
    }
  }
  bool ok() const { return ok_; }

 private:
  int self_ = -1;
  bool ok_ = false;
};

sockaddr_storage Addr(const std::string& ip, uint16_t port) {
  sockaddr_storage ss = {};
  auto* in4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, ip.c_str(), &in4->sin_addr) == 1) {
    in4->sin_family = AF_INET;
    in4->sin_port = htons(port);
  } else {
    inet_pton(AF_INET6, ip.c_str(), &in6->sin6_addr);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
  }
  return ss;
}

// The next event of @ch, which must be @want; its copy in *out (the
// event itself is acknowledged). Returns false on a timeout or another
// event.
bool Expect(rdma_event_channel* ch, rdma_cm_event_type want, rdma_cm_event* out = nullptr,
            int ms = 20000) {
  pollfd p = {ch->fd, POLLIN, 0};
  if (poll(&p, 1, ms) != 1) {
    ADD_FAILURE() << "no rdma_cm event, waiting for " << rdma_event_str(want);
    return false;
  }
  rdma_cm_event* ev;
  if (rdma_get_cm_event(ch, &ev)) {
    ADD_FAILURE() << "rdma_get_cm_event: " << strerror(errno);
    return false;
  }
  bool ok = ev->event == want;
  if (!ok)
    ADD_FAILURE() << "got " << rdma_event_str(ev->event) << " (status " << ev->status
                  << "), waiting for " << rdma_event_str(want);
  if (out) *out = *ev;
  rdma_ack_cm_event(ev);
  return ok;
}

// Resources of one end: PD, CQ, a registered buffer; the QP is the ID's.
struct Side {
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  std::vector<uint8_t> buf = std::vector<uint8_t>(8192, 0);
  ibv_mr* mr = nullptr;
  rdma_cm_id* id = nullptr;

  bool Make(rdma_cm_id* cm_id, ibv_qp_type type) {
    id = cm_id;
    pd = ibv_alloc_pd(id->verbs);
    cq = pd ? ibv_create_cq(id->verbs, 64, nullptr, nullptr, 0) : nullptr;
    mr = cq ? ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE) : nullptr;
    if (!mr) return false;
    ibv_qp_init_attr init = {};
    init.send_cq = cq;
    init.recv_cq = cq;
    init.qp_type = type;
    init.cap.max_send_wr = 16;
    init.cap.max_recv_wr = 16;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    return rdma_create_qp(id, pd, &init) == 0;
  }
  int Recv(size_t off, size_t len) {
    ibv_sge sge = {(uintptr_t)buf.data() + off, (uint32_t)len, mr->lkey};
    ibv_recv_wr wr = {}, *bad;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    return ibv_post_recv(id->qp, &wr, &bad);
  }
  int Send(size_t off, size_t len, ibv_ah* ah = nullptr, uint32_t qpn = 0, uint32_t qkey = 0) {
    ibv_sge sge = {(uintptr_t)buf.data() + off, (uint32_t)len, mr->lkey};
    ibv_send_wr wr = {}, *bad;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = qpn;
    wr.wr.ud.remote_qkey = qkey;
    return ibv_post_send(id->qp, &wr, &bad);
  }
  ~Side() {
    if (id && id->qp) rdma_destroy_qp(id);
    if (mr) ibv_dereg_mr(mr);
    if (cq) ibv_destroy_cq(cq);
    if (pd) ibv_dealloc_pd(pd);
    if (id) rdma_destroy_id(id);
  }
};

class CmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ns_a_ = Env("SRDMA_NETNS_A", "");
    ns_b_ = Env("SRDMA_NETNS_B", "peer");
    ip_a_ = Env("SRDMA_IP_A", "10.80.0.1");
    ip_b_ = Env("SRDMA_IP_B", "10.80.0.2");
    {
      InNetns in(ns_b_);
      ASSERT_TRUE(in.ok()) << "setns " << ns_b_;
      ch_b_ = rdma_create_event_channel();
    }
    ch_a_ = rdma_create_event_channel();
    ASSERT_NE(ch_a_, nullptr);
    ASSERT_NE(ch_b_, nullptr);
  }
  void TearDown() override {
    if (listen_) rdma_destroy_id(listen_);
    if (ch_a_) rdma_destroy_event_channel(ch_a_);
    if (ch_b_) rdma_destroy_event_channel(ch_b_);
  }

  // B listens on its address and @port; A's ID resolves address and route.
  void ListenAndResolve(rdma_port_space ps, uint16_t port, rdma_cm_id** a_id) {
    {
      InNetns in(ns_b_);
      ASSERT_TRUE(in.ok());
      ASSERT_EQ(rdma_create_id(ch_b_, &listen_, nullptr, ps), 0);
    }
    auto b = Addr(ip_b_, port);
    ASSERT_EQ(rdma_bind_addr(listen_, reinterpret_cast<sockaddr*>(&b)), 0) << strerror(errno);
    ASSERT_EQ(rdma_listen(listen_, 4), 0);
    {
      InNetns in(ns_a_);
      ASSERT_TRUE(in.ok());
      ASSERT_EQ(rdma_create_id(ch_a_, a_id, nullptr, ps), 0);
    }
    auto a = Addr(ip_a_, 0);
    ASSERT_EQ(rdma_resolve_addr(*a_id, reinterpret_cast<sockaddr*>(&a),
                                reinterpret_cast<sockaddr*>(&b), 5000),
              0);
    ASSERT_TRUE(Expect(ch_a_, RDMA_CM_EVENT_ADDR_RESOLVED));
    ASSERT_EQ(rdma_resolve_route(*a_id, 5000), 0);
    ASSERT_TRUE(Expect(ch_a_, RDMA_CM_EVENT_ROUTE_RESOLVED));
    EXPECT_EQ(ibv_get_device_name((*a_id)->verbs->device), Env("SRDMA_DEV_A", "srdma0"));
  }

  std::string ns_a_, ns_b_, ip_a_, ip_b_;
  rdma_event_channel* ch_a_ = nullptr;
  rdma_event_channel* ch_b_ = nullptr;
  rdma_cm_id* listen_ = nullptr;
};

TEST_F(CmTest, RcConnectExchangeDisconnect) {
  Side a, b;
  rdma_cm_id* aid = nullptr;
  ASSERT_NO_FATAL_FAILURE(ListenAndResolve(RDMA_PS_TCP, 20886, &aid));
  ASSERT_TRUE(a.Make(aid, IBV_QPT_RC));
  ASSERT_EQ(a.Recv(4096, 4096), 0);
  rdma_conn_param cp = {};
  cp.responder_resources = 4;
  cp.initiator_depth = 4;
  cp.retry_count = 7;
  cp.rnr_retry_count = 7;
  const char hello[] = "softrdma via rdma_cm";
  cp.private_data = hello;
  cp.private_data_len = sizeof(hello);
  ASSERT_EQ(rdma_connect(aid, &cp), 0) << strerror(errno);

  rdma_cm_event req = {};
  ASSERT_TRUE(Expect(ch_b_, RDMA_CM_EVENT_CONNECT_REQUEST, &req));
  EXPECT_EQ(ibv_get_device_name(req.id->verbs->device), Env("SRDMA_DEV_B", "srdma1"));
  ASSERT_GE(req.param.conn.private_data_len, sizeof(hello));
  ASSERT_TRUE(b.Make(req.id, IBV_QPT_RC));
  ASSERT_EQ(b.Recv(0, 4096), 0);
  rdma_conn_param acc = {};
  acc.responder_resources = 4;
  acc.initiator_depth = 4;
  acc.rnr_retry_count = 7;
  ASSERT_EQ(rdma_accept(b.id, &acc), 0) << strerror(errno);
  ASSERT_TRUE(Expect(ch_a_, RDMA_CM_EVENT_ESTABLISHED));
  ASSERT_TRUE(Expect(ch_b_, RDMA_CM_EVENT_ESTABLISHED));

  srdma_test::Fill(a.buf, 0, 3000, 1);
  srdma_test::Fill(b.buf, 4096, 2000, 2);
  ASSERT_EQ(a.Send(0, 3000), 0);
  auto w = srdma_test::Poll(b.cq, 1);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(w[0].byte_len, 3000u);
  EXPECT_EQ(std::memcmp(b.buf.data(), a.buf.data(), 3000), 0);
  ASSERT_EQ(b.Send(4096, 2000), 0);
  auto sw = srdma_test::Poll(a.cq, 2);
  ASSERT_EQ(sw.size(), 2u);
  for (auto& c : sw) EXPECT_EQ(c.status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(a.buf.data() + 4096, b.buf.data() + 4096, 2000), 0);

  // DREQ; B answers (DREP) when it disconnects in turn.
  ASSERT_EQ(rdma_disconnect(aid), 0);
  EXPECT_TRUE(Expect(ch_b_, RDMA_CM_EVENT_DISCONNECTED));
  EXPECT_EQ(rdma_disconnect(b.id), 0);
  EXPECT_TRUE(Expect(ch_a_, RDMA_CM_EVENT_DISCONNECTED));
}

TEST_F(CmTest, UdResolveThenDatagramsBothWays) {
  Side a, b;
  rdma_cm_id* aid = nullptr;
  ASSERT_NO_FATAL_FAILURE(ListenAndResolve(RDMA_PS_UDP, 20887, &aid));
  ASSERT_TRUE(a.Make(aid, IBV_QPT_UD));
  ASSERT_EQ(a.Recv(4096, 2048), 0);
  rdma_conn_param cp = {};
  ASSERT_EQ(rdma_connect(aid, &cp), 0) << strerror(errno);

  rdma_cm_event req = {};
  ASSERT_TRUE(Expect(ch_b_, RDMA_CM_EVENT_CONNECT_REQUEST, &req));
  ASSERT_TRUE(b.Make(req.id, IBV_QPT_UD));
  ASSERT_EQ(b.Recv(0, 2048), 0);
  rdma_conn_param acc = {};
  acc.qp_num = b.id->qp->qp_num;
  ASSERT_EQ(rdma_accept(b.id, &acc), 0) << strerror(errno);

  // SIDR REP: B's QP number, Q_Key and an address vector towards it.
  rdma_cm_event est = {};
  ASSERT_TRUE(Expect(ch_a_, RDMA_CM_EVENT_ESTABLISHED, &est));
  EXPECT_EQ(est.param.ud.qp_num, b.id->qp->qp_num);
  ibv_ah* ah = ibv_create_ah(a.pd, &est.param.ud.ah_attr);
  ASSERT_NE(ah, nullptr) << strerror(errno);
  srdma_test::Fill(a.buf, 0, 700, 3);
  ASSERT_EQ(a.Send(0, 700, ah, est.param.ud.qp_num, est.param.ud.qkey), 0);
  auto w = srdma_test::Poll(b.cq, 1);
  ASSERT_EQ(w.size(), 1u);
  ASSERT_EQ(w[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(w[0].byte_len, 40u + 700);
  EXPECT_EQ(w[0].src_qp, a.id->qp->qp_num);
  EXPECT_EQ(std::memcmp(b.buf.data() + 40, a.buf.data(), 700), 0);

  // The answer goes where the datagram came from: an AH from its GRH.
  ibv_ah* back = ibv_create_ah_from_wc(b.pd, &w[0], reinterpret_cast<ibv_grh*>(b.buf.data()),
                                       b.id->port_num);
  ASSERT_NE(back, nullptr) << strerror(errno);
  srdma_test::Fill(b.buf, 2048, 300, 4);
  ASSERT_EQ(b.Send(2048, 300, back, w[0].src_qp, est.param.ud.qkey), 0);
  auto aw = srdma_test::Poll(a.cq, 2);
  ASSERT_EQ(aw.size(), 2u);
  for (auto& c : aw) {
    EXPECT_EQ(c.status, IBV_WC_SUCCESS);
    if (c.opcode == IBV_WC_RECV) {
      EXPECT_EQ(c.src_qp, b.id->qp->qp_num);
    }
  }
  EXPECT_EQ(std::memcmp(a.buf.data() + 4096 + 40, b.buf.data() + 2048, 300), 0);
  EXPECT_EQ(srdma_test::Poll(b.cq, 1).size(), 1u);
  ibv_destroy_ah(back);
  ibv_destroy_ah(ah);
}

}  // namespace
