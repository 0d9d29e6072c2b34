// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Verbs object tests, run in a guest against a softrdma device through the
// provider: the device as libibverbs sees it, and the life cycle of PD, MR,
// CQ and QP objects. The device name comes from SRDMA_DEV (default srdma0);
// SRDMA_NETDEV names its netdev (for the GUID and MTU checks).

#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

// Owning wrappers so that a failed assertion never leaks an object.
struct DeviceListDeleter {
  void operator()(ibv_device** l) const { ibv_free_device_list(l); }
};
struct ContextDeleter {
  void operator()(ibv_context* c) const { ibv_close_device(c); }
};
struct PdDeleter {
  void operator()(ibv_pd* p) const { EXPECT_EQ(ibv_dealloc_pd(p), 0); }
};
struct MrDeleter {
  void operator()(ibv_mr* m) const { EXPECT_EQ(ibv_dereg_mr(m), 0); }
};
struct CqDeleter {
  void operator()(ibv_cq* c) const { EXPECT_EQ(ibv_destroy_cq(c), 0); }
};
struct QpDeleter {
  void operator()(ibv_qp* q) const { EXPECT_EQ(ibv_destroy_qp(q), 0); }
};
struct ChannelDeleter {
  void operator()(ibv_comp_channel* c) const {
    EXPECT_EQ(ibv_destroy_comp_channel(c), 0);
  }
};

using Context = std::unique_ptr<ibv_context, ContextDeleter>;
using Pd = std::unique_ptr<ibv_pd, PdDeleter>;
using Mr = std::unique_ptr<ibv_mr, MrDeleter>;
using Cq = std::unique_ptr<ibv_cq, CqDeleter>;
using Qp = std::unique_ptr<ibv_qp, QpDeleter>;
using Channel = std::unique_ptr<ibv_comp_channel, ChannelDeleter>;

Context OpenDevice(const std::string& name) {
  int n = 0;
  std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv_get_device_list(&n));
  if (!list) return nullptr;
  for (int i = 0; i < n; i++)
    if (name == ibv_get_device_name(list.get()[i]))
      return Context(ibv_open_device(list.get()[i]));
  return nullptr;
}

class VerbsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dev_name_ = Env("SRDMA_DEV", "srdma0");
    ctx_ = OpenDevice(dev_name_);
    ASSERT_TRUE(ctx_) << "cannot open " << dev_name_ << ": "
                      << std::strerror(errno);
    ASSERT_EQ(ibv_query_device(ctx_.get(), &attr_), 0);
    pd_.reset(ibv_alloc_pd(ctx_.get()));
    ASSERT_TRUE(pd_);
  }

  Cq MakeCq(int cqe, ibv_comp_channel* ch = nullptr) {
    return Cq(ibv_create_cq(ctx_.get(), cqe, nullptr, ch, 0));
  }

  Qp MakeQp(ibv_qp_type type, ibv_cq* cq, uint32_t wr = 16, uint32_t sge = 1,
            uint32_t inl = 0) {
    ibv_qp_init_attr init = {};
    init.send_cq = cq;
    init.recv_cq = cq;
    init.qp_type = type;
    init.cap.max_send_wr = wr;
    init.cap.max_recv_wr = wr;
    init.cap.max_send_sge = sge;
    init.cap.max_recv_sge = sge;
    init.cap.max_inline_data = inl;
    last_init_ = init;
    Qp qp(ibv_create_qp(pd_.get(), &last_init_));
    return qp;
  }

  std::string dev_name_;
  Context ctx_;
  Pd pd_;
  ibv_device_attr attr_ = {};
  ibv_qp_init_attr last_init_ = {};
};

// --- The device as libibverbs sees it ---

TEST(Device, ListedUnderItsName) {
  int n = 0;
  std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv_get_device_list(&n));
  ASSERT_TRUE(list);
  bool found = false;
  std::string want = Env("SRDMA_DEV", "srdma0");
  for (int i = 0; i < n; i++) {
    if (want != ibv_get_device_name(list.get()[i])) continue;
    found = true;
    EXPECT_EQ(list.get()[i]->transport_type, IBV_TRANSPORT_IB);
    EXPECT_EQ(list.get()[i]->node_type, IBV_NODE_CA);
  }
  EXPECT_TRUE(found) << want << " not among " << n << " devices";
}

TEST_F(VerbsTest, DeviceAttributesAreTruthful) {
  EXPECT_GT(attr_.max_qp, 1000);
  EXPECT_GE(attr_.max_qp_wr, 1024);
  EXPECT_GE(attr_.max_sge, 16);
  EXPECT_GE(attr_.max_cqe, 4096);
  EXPECT_GE(attr_.max_mr, 1024);
  EXPECT_GE(attr_.max_pd, 1024);
  EXPECT_EQ(attr_.phys_port_cnt, 1);
  EXPECT_EQ(attr_.max_pkeys, 1);
  EXPECT_NE(attr_.node_guid, 0u);
  EXPECT_EQ(attr_.sys_image_guid, attr_.node_guid);
  EXPECT_GE(attr_.max_srq, 1024);
  EXPECT_GE(attr_.max_srq_wr, 1024);
  EXPECT_GE(attr_.max_mw, 1024);
  EXPECT_GE(attr_.max_ah, 1024);
  EXPECT_GE(attr_.max_mcast_grp, 1);
  EXPECT_GE(attr_.max_mcast_qp_attach, 1);
  // Atomics are atomic among this device's own operations.
  EXPECT_EQ(attr_.atomic_cap, IBV_ATOMIC_HCA);
  EXPECT_GE(attr_.max_qp_rd_atom, 16);
  EXPECT_TRUE(attr_.device_cap_flags & IBV_DEVICE_RC_RNR_NAK_GEN);
  EXPECT_TRUE(attr_.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
  EXPECT_TRUE(attr_.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
  // Not implemented, so not advertised.
  EXPECT_EQ(attr_.device_cap_flags & (IBV_DEVICE_XRC | IBV_DEVICE_SRQ_RESIZE), 0u);
}

TEST_F(VerbsTest, ExtendedQueryMatches) {
  ibv_device_attr_ex ex = {};
  ASSERT_EQ(ibv_query_device_ex(ctx_.get(), nullptr, &ex), 0);
  EXPECT_EQ(ex.orig_attr.max_qp, attr_.max_qp);
  EXPECT_EQ(ex.orig_attr.node_guid, attr_.node_guid);
  EXPECT_EQ(ex.odp_caps.general_caps, 0u);
}

TEST_F(VerbsTest, NodeGuidFromMac) {
  std::string netdev = Env("SRDMA_NETDEV", "");
  if (netdev.empty()) GTEST_SKIP() << "SRDMA_NETDEV not set";
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  ifreq ifr = {};
  std::strncpy(ifr.ifr_name, netdev.c_str(), IFNAMSIZ - 1);
  ASSERT_EQ(ioctl(fd, SIOCGIFHWADDR, &ifr), 0);
  close(fd);
  const auto* mac = reinterpret_cast<const uint8_t*>(ifr.ifr_hwaddr.sa_data);
  // Modified EUI-64: flip the U/L bit and put ff:fe in the middle.
  std::array<uint8_t, 8> eui = {static_cast<uint8_t>(mac[0] ^ 2), mac[1],
                                mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]};
  uint64_t guid = 0;
  std::memcpy(&guid, eui.data(), 8);  // node_guid is big-endian in memory
  EXPECT_EQ(attr_.node_guid, guid);
}

TEST_F(VerbsTest, PortIsRoceAndActive) {
  ibv_port_attr port = {};
  ASSERT_EQ(ibv_query_port(ctx_.get(), 1, &port), 0);
  EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(port.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(port.max_mtu, IBV_MTU_4096);
  EXPECT_GE(port.active_mtu, IBV_MTU_256);
  EXPECT_LE(port.active_mtu, port.max_mtu);
  EXPECT_GT(port.gid_tbl_len, 0);
  EXPECT_EQ(port.pkey_tbl_len, 1);
  uint16_t pkey = 0;
  ASSERT_EQ(ibv_query_pkey(ctx_.get(), 1, 0, &pkey), 0);
  EXPECT_EQ(ntohs(pkey), 0xffff);
  // No port 2.
  EXPECT_NE(ibv_query_port(ctx_.get(), 2, &port), 0);
}

TEST_F(VerbsTest, RoceV2GidsFromNetdevAddresses) {
  std::string want = Env("SRDMA_IPV4", "");
  if (want.empty()) GTEST_SKIP() << "SRDMA_IPV4 not set";
  in_addr v4 = {};
  ASSERT_EQ(inet_pton(AF_INET, want.c_str(), &v4), 1);
  ibv_port_attr port = {};
  ASSERT_EQ(ibv_query_port(ctx_.get(), 1, &port), 0);
  bool found_v2 = false;
  for (int i = 0; i < port.gid_tbl_len && i < 64; i++) {
    ibv_gid_entry e = {};
    if (ibv_query_gid_ex(ctx_.get(), 1, i, &e, 0)) continue;
    // IPv4-mapped IPv6: ::ffff:a.b.c.d
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(e.gid.raw, prefix, 12) == 0 &&
        std::memcmp(e.gid.raw + 12, &v4, 4) == 0 &&
        e.gid_type == IBV_GID_TYPE_ROCE_V2)
      found_v2 = true;
  }
  EXPECT_TRUE(found_v2) << "no RoCEv2 GID for " << want;
}

// --- PD and MR ---

TEST_F(VerbsTest, ManyPds) {
  std::vector<Pd> pds;
  for (int i = 0; i < 256; i++) {
    pds.emplace_back(ibv_alloc_pd(ctx_.get()));
    ASSERT_TRUE(pds.back()) << i;
  }
}

TEST_F(VerbsTest, RegisterPinnedMemory) {
  std::vector<uint8_t> buf(1 << 20, 0xa5);
  for (int access : std::initializer_list<int>{0, IBV_ACCESS_LOCAL_WRITE,
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                         IBV_ACCESS_REMOTE_READ}) {
    Mr mr(ibv_reg_mr(pd_.get(), buf.data(), buf.size(), access));
    ASSERT_TRUE(mr) << "access " << access << ": " << std::strerror(errno);
    EXPECT_EQ(mr->addr, buf.data());
    EXPECT_EQ(mr->length, buf.size());
    EXPECT_NE(mr->lkey, 0u);
    EXPECT_EQ(mr->pd, pd_.get());
  }
  // Registration must not disturb the data.
  EXPECT_EQ(buf[12345], 0xa5);
}

TEST_F(VerbsTest, KeysAreUnique) {
  std::vector<uint8_t> buf(4096);
  std::vector<Mr> mrs;
  for (int i = 0; i < 64; i++) {
    mrs.emplace_back(ibv_reg_mr(pd_.get(), buf.data(), buf.size(),
                                IBV_ACCESS_LOCAL_WRITE));
    ASSERT_TRUE(mrs.back());
    for (int j = 0; j < i; j++) EXPECT_NE(mrs[j]->lkey, mrs[i]->lkey);
  }
}

TEST_F(VerbsTest, RejectsBadRegistrations) {
  std::vector<uint8_t> buf(4096);
  // Remote write needs local write (IBTA 10.6.3.1).
  errno = 0;
  EXPECT_EQ(ibv_reg_mr(pd_.get(), buf.data(), buf.size(),
                       IBV_ACCESS_REMOTE_WRITE),
            nullptr);
  EXPECT_EQ(errno, EINVAL);
  // Zero length.
  EXPECT_EQ(ibv_reg_mr(pd_.get(), buf.data(), 0, IBV_ACCESS_LOCAL_WRITE),
            nullptr);
  // Unmapped memory cannot be pinned.
  EXPECT_EQ(ibv_reg_mr(pd_.get(), reinterpret_cast<void*>(0x1000), 4096,
                       IBV_ACCESS_LOCAL_WRITE),
            nullptr);
  // On-demand paging is not implemented, hence refused.
  EXPECT_EQ(ibv_reg_mr(pd_.get(), buf.data(), buf.size(),
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND),
            nullptr);
}

TEST_F(VerbsTest, PdWithMrCannotBeFreed) {
  std::vector<uint8_t> buf(4096);
  ibv_pd* pd = ibv_alloc_pd(ctx_.get());
  ASSERT_NE(pd, nullptr);
  ibv_mr* mr = ibv_reg_mr(pd, buf.data(), buf.size(), 0);
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(ibv_dealloc_pd(pd), EBUSY);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
  EXPECT_EQ(ibv_dealloc_pd(pd), 0);
}

// A parent domain stands for its protection domain wherever a PD is
// named; the protection domain outlives its parent domains.
TEST_F(VerbsTest, ParentDomainStandsForItsPd) {
  std::vector<uint8_t> buf(4096);
  ibv_parent_domain_init_attr pattr = {};
  pattr.pd = pd_.get();
  ibv_pd* parent = ibv_alloc_parent_domain(ctx_.get(), &pattr);
  ASSERT_NE(parent, nullptr) << std::strerror(errno);

  // Over another parent domain: over its protection domain.
  pattr.pd = parent;
  ibv_pd* parent2 = ibv_alloc_parent_domain(ctx_.get(), &pattr);
  ASSERT_NE(parent2, nullptr) << std::strerror(errno);

  ibv_mr* mr = ibv_reg_mr(parent, buf.data(), buf.size(),
                          IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr, nullptr) << std::strerror(errno);
  ibv_cq_init_attr_ex cattr = {};
  cattr.cqe = 16;
  cattr.wc_flags = IBV_WC_STANDARD_FLAGS;
  cattr.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
  cattr.parent_domain = parent;
  ibv_cq_ex* cq = ibv_create_cq_ex(ctx_.get(), &cattr);
  ASSERT_NE(cq, nullptr) << std::strerror(errno);
  // The CQ's parent domain must be one: a protection domain is refused.
  cattr.parent_domain = pd_.get();
  EXPECT_EQ(ibv_create_cq_ex(ctx_.get(), &cattr), nullptr);
  EXPECT_EQ(errno, EINVAL);

  ibv_qp_init_attr init = {};
  init.send_cq = ibv_cq_ex_to_cq(cq);
  init.recv_cq = ibv_cq_ex_to_cq(cq);
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = 4;
  init.cap.max_recv_wr = 4;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  ibv_qp* qp = ibv_create_qp(parent, &init);
  ASSERT_NE(qp, nullptr) << std::strerror(errno);

  ibv_qp_attr a = {};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  ASSERT_EQ(ibv_modify_qp(qp, &a,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                              IBV_QP_ACCESS_FLAGS),
            0);
  // An MR of the protection domain serves a QP of the parent domain.
  ibv_mr* mr2 = ibv_reg_mr(pd_.get(), buf.data(), buf.size(),
                           IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr2, nullptr);
  ibv_sge sge = {reinterpret_cast<uintptr_t>(buf.data()), 64, mr2->lkey};
  ibv_recv_wr rwr = {}, *bad = nullptr;
  rwr.sg_list = &sge;
  rwr.num_sge = 1;
  EXPECT_EQ(ibv_post_recv(qp, &rwr, &bad), 0);

  // Neither domain goes while what was made on it lasts.
  EXPECT_EQ(ibv_dealloc_pd(pd_.get()), EBUSY);
  EXPECT_EQ(ibv_dealloc_pd(parent), EBUSY);
  EXPECT_EQ(ibv_destroy_qp(qp), 0);
  EXPECT_EQ(ibv_dealloc_pd(parent), EBUSY);
  EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
  EXPECT_EQ(ibv_dealloc_pd(parent), EBUSY);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
  EXPECT_EQ(ibv_dereg_mr(mr2), 0);
  EXPECT_EQ(ibv_dealloc_pd(parent), 0);
  EXPECT_EQ(ibv_dealloc_pd(pd_.get()), EBUSY);
  // Then the PD, which the fixture frees, may go.
  EXPECT_EQ(ibv_dealloc_pd(parent2), 0);
}

// --- CQ ---

TEST_F(VerbsTest, CqSizesAndEmptyPoll) {
  for (int want : {1, 2, 100, 1000, 4096}) {
    Cq cq = MakeCq(want);
    ASSERT_TRUE(cq) << want;
    EXPECT_GE(cq->cqe, want);
    ibv_wc wc[4];
    EXPECT_EQ(ibv_poll_cq(cq.get(), 4, wc), 0);
  }
  Cq big = MakeCq(attr_.max_cqe);
  EXPECT_TRUE(big);
  EXPECT_FALSE(MakeCq(attr_.max_cqe + 1));
  EXPECT_FALSE(MakeCq(0));
}

TEST_F(VerbsTest, CqArmWithoutEvents) {
  Channel ch(ibv_create_comp_channel(ctx_.get()));
  ASSERT_TRUE(ch);
  Cq cq = MakeCq(16, ch.get());
  ASSERT_TRUE(cq);
  EXPECT_EQ(ibv_req_notify_cq(cq.get(), 0), 0);
  EXPECT_EQ(ibv_req_notify_cq(cq.get(), 1), 0);
  // Nothing completed: no event may be pending.
  int flags = fcntl(ch->fd, F_GETFL);
  ASSERT_EQ(fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK), 0);
  pollfd p = {ch->fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 50), 0);
}

TEST_F(VerbsTest, CqInUseCannotBeDestroyed) {
  ibv_cq* cq = ibv_create_cq(ctx_.get(), 16, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr);
  Qp qp = MakeQp(IBV_QPT_RC, cq);
  ASSERT_TRUE(qp);
  EXPECT_EQ(ibv_destroy_cq(cq), EBUSY);
  qp.reset();
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
}

// --- QP ---

TEST_F(VerbsTest, QpCapacitiesGrantedAtLeastAsAsked) {
  Cq cq = MakeCq(256);
  ASSERT_TRUE(cq);
  struct Caps {
    uint32_t wr, sge, inl;
  };
  for (Caps c : {Caps{1, 1, 0}, Caps{100, 4, 64}, Caps{1000, 16, 256},
                 Caps{16, 1, 512}}) {
    Qp qp = MakeQp(IBV_QPT_RC, cq.get(), c.wr, c.sge, c.inl);
    ASSERT_TRUE(qp) << c.wr << "/" << c.sge << "/" << c.inl << ": "
                    << std::strerror(errno);
    EXPECT_GE(last_init_.cap.max_send_wr, c.wr);
    EXPECT_GE(last_init_.cap.max_recv_wr, c.wr);
    EXPECT_GE(last_init_.cap.max_send_sge, c.sge);
    EXPECT_GE(last_init_.cap.max_recv_sge, c.sge);
    EXPECT_GE(last_init_.cap.max_inline_data, c.inl);
    EXPECT_NE(qp->qp_num, 0u);
    EXPECT_NE(qp->qp_num, 1u);  // QP1 is the GSI QP
    EXPECT_EQ(qp->state, IBV_QPS_RESET);
  }
}

TEST_F(VerbsTest, QpOverLimitsRejected) {
  Cq cq = MakeCq(16);
  ASSERT_TRUE(cq);
  EXPECT_FALSE(MakeQp(IBV_QPT_RC, cq.get(), attr_.max_qp_wr + 1));
  EXPECT_FALSE(MakeQp(IBV_QPT_RC, cq.get(), 16, attr_.max_sge + 1));
  EXPECT_FALSE(MakeQp(IBV_QPT_RC, cq.get(), 16, 1, 1 << 20));
}

TEST_F(VerbsTest, QpTypes) {
  Cq cq = MakeCq(16);
  ASSERT_TRUE(cq);
  for (ibv_qp_type t : {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD}) {
    Qp qp = MakeQp(t, cq.get());
    EXPECT_TRUE(qp) << t;
  }
  EXPECT_FALSE(MakeQp(IBV_QPT_RAW_PACKET, cq.get()));
}

TEST_F(VerbsTest, QpNumbersAreUnique) {
  Cq cq = MakeCq(16);
  ASSERT_TRUE(cq);
  std::vector<Qp> qps;
  for (int i = 0; i < 128; i++) {
    qps.push_back(MakeQp(IBV_QPT_RC, cq.get(), 4));
    ASSERT_TRUE(qps.back()) << i;
    for (int j = 0; j < i; j++) EXPECT_NE(qps[j]->qp_num, qps[i]->qp_num);
  }
}

TEST_F(VerbsTest, QpResetToInitAndBack) {
  Cq cq = MakeCq(16);
  ASSERT_TRUE(cq);
  Qp qp = MakeQp(IBV_QPT_RC, cq.get());
  ASSERT_TRUE(qp);

  ibv_qp_attr a = {};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  ASSERT_EQ(ibv_modify_qp(qp.get(), &a,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                              IBV_QP_ACCESS_FLAGS),
            0);

  ibv_qp_attr q = {};
  ibv_qp_init_attr qi = {};
  ASSERT_EQ(ibv_query_qp(qp.get(), &q, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS |
                                           IBV_QP_PORT | IBV_QP_CAP,
                         &qi),
            0);
  EXPECT_EQ(q.qp_state, IBV_QPS_INIT);
  EXPECT_EQ(q.qp_access_flags,
            IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  EXPECT_EQ(q.port_num, 1);
  EXPECT_GE(q.cap.max_send_wr, 16u);
  EXPECT_EQ(qi.qp_type, IBV_QPT_RC);

  // INIT -> INIT with a new access mask.
  a.qp_access_flags = IBV_ACCESS_REMOTE_READ;
  EXPECT_EQ(ibv_modify_qp(qp.get(), &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS),
            0);

  // Back to RESET, then INIT again.
  ibv_qp_attr r = {};
  r.qp_state = IBV_QPS_RESET;
  EXPECT_EQ(ibv_modify_qp(qp.get(), &r, IBV_QP_STATE), 0);
  a.qp_access_flags = 0;
  EXPECT_EQ(ibv_modify_qp(qp.get(), &a,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                              IBV_QP_ACCESS_FLAGS),
            0);
}

TEST_F(VerbsTest, QpIllegalTransitionsRejected) {
  Cq cq = MakeCq(16);
  ASSERT_TRUE(cq);
  Qp qp = MakeQp(IBV_QPT_RC, cq.get());
  ASSERT_TRUE(qp);

  ibv_qp_attr a = {};
  // RESET -> RTS is not a transition of IBTA 10.3.1.
  a.qp_state = IBV_QPS_RTS;
  EXPECT_NE(ibv_modify_qp(qp.get(), &a, IBV_QP_STATE), 0);
  // RESET -> INIT without its required attributes.
  a.qp_state = IBV_QPS_INIT;
  EXPECT_NE(ibv_modify_qp(qp.get(), &a, IBV_QP_STATE), 0);
  // A port that does not exist.
  a.port_num = 2;
  EXPECT_NE(ibv_modify_qp(qp.get(), &a,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                              IBV_QP_ACCESS_FLAGS),
            0);
  // A P_Key index past the table.
  a.port_num = 1;
  a.pkey_index = 1;
  EXPECT_NE(ibv_modify_qp(qp.get(), &a,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                              IBV_QP_ACCESS_FLAGS),
            0);
  ibv_qp_attr q = {};
  ibv_qp_init_attr qi = {};
  ASSERT_EQ(ibv_query_qp(qp.get(), &q, IBV_QP_STATE, &qi), 0);
  EXPECT_EQ(q.qp_state, IBV_QPS_RESET);
}

TEST_F(VerbsTest, InitToError) {
  Cq cq = MakeCq(16);
  ASSERT_TRUE(cq);
  Qp qp = MakeQp(IBV_QPT_UD, cq.get());
  ASSERT_TRUE(qp);
  ibv_qp_attr a = {};
  // IBTA 10.3.1: every state but RESET may move to ERR.
  a.qp_state = IBV_QPS_ERR;
  EXPECT_NE(ibv_modify_qp(qp.get(), &a, IBV_QP_STATE), 0);
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qkey = 0x11111111;
  ASSERT_EQ(ibv_modify_qp(qp.get(), &a,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                              IBV_QP_QKEY),
            0);
  a.qp_state = IBV_QPS_ERR;
  EXPECT_EQ(ibv_modify_qp(qp.get(), &a, IBV_QP_STATE), 0);
  ibv_qp_attr q = {};
  ibv_qp_init_attr qi = {};
  ASSERT_EQ(ibv_query_qp(qp.get(), &q, IBV_QP_STATE, &qi), 0);
  EXPECT_EQ(q.qp_state, IBV_QPS_ERR);
  // Nothing was posted: nothing to flush.
  ibv_wc wc;
  EXPECT_EQ(ibv_poll_cq(cq.get(), 1, &wc), 0);
}

// An RC QP moved from RESET to INIT.
bool RcInit(ibv_qp* qp) {
  ibv_qp_attr a = {};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                   IBV_QP_ACCESS_FLAGS) == 0;
}

int PostRecv(ibv_qp* qp, uint64_t wr_id) {
  ibv_recv_wr wr = {}, *bad = nullptr;
  wr.wr_id = wr_id;
  return ibv_post_recv(qp, &wr, &bad);
}

int PostSend(ibv_qp* qp, uint64_t wr_id) {
  ibv_send_wr wr = {}, *bad = nullptr;
  wr.wr_id = wr_id;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  return ibv_post_send(qp, &wr, &bad);
}

// The completions of @cq until @n arrived or a second passed; at least
// one poll (n = 0: what is there now).
std::vector<ibv_wc> PollFor(ibv_cq* cq, size_t n) {
  std::vector<ibv_wc> out;
  int i = 0;
  do {
    ibv_wc wc[8];
    int got = ibv_poll_cq(cq, 8, wc);
    if (got < 0) break;
    out.insert(out.end(), wc, wc + got);
    if (!got && out.size() < n) usleep(1000);
  } while (out.size() < n && ++i < 1000);
  return out;
}

// IBTA 10.3.1: receives are taken from INIT on, sends from RTS on; before,
// a post fails at once and leaves nothing behind.
TEST_F(VerbsTest, PostBeforeTheQpTakesWorkFails) {
  Cq cq = MakeCq(16);
  ASSERT_TRUE(cq);
  ibv_qp_init_attr_ex init = {};
  init.send_cq = cq.get();
  init.recv_cq = cq.get();
  init.qp_type = IBV_QPT_RC;
  init.cap = {16, 16, 1, 1, 0};
  init.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  init.pd = pd_.get();
  init.send_ops_flags = IBV_QP_EX_WITH_SEND;
  Qp qp(ibv_create_qp_ex(ctx_.get(), &init));
  ASSERT_TRUE(qp);
  ibv_qp_ex* qx = ibv_qp_to_qp_ex(qp.get());
  ASSERT_NE(qx, nullptr);
  auto wr_send = [&] {
    ibv_wr_start(qx);
    qx->wr_id = 9;
    ibv_wr_send(qx);
    ibv_wr_set_sge(qx, 0, 0, 0);
    return ibv_wr_complete(qx);
  };

  EXPECT_EQ(PostRecv(qp.get(), 1), EINVAL) << "RESET";
  EXPECT_EQ(PostSend(qp.get(), 2), EINVAL) << "RESET";
  EXPECT_EQ(wr_send(), EINVAL) << "RESET";
  ASSERT_TRUE(RcInit(qp.get()));
  EXPECT_EQ(PostSend(qp.get(), 3), EINVAL) << "INIT";
  EXPECT_EQ(wr_send(), EINVAL) << "INIT";
  EXPECT_EQ(PostRecv(qp.get(), 4), 0) << "INIT";
  // Only the receive was posted: the error state flushes it alone.
  ibv_qp_attr a = {};
  a.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(qp.get(), &a, IBV_QP_STATE), 0);
  auto wc = PollFor(cq.get(), 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 4u);
  EXPECT_EQ(wc[0].status, IBV_WC_WR_FLUSH_ERR);
  usleep(20000);
  EXPECT_TRUE(PollFor(cq.get(), 0).empty());
}

// A QP moved to RESET forgets the completions of its former work: what it
// completes next is not mistaken for the flushes of before. Another QP's
// completions in the same CQ stay, in order.
TEST_F(VerbsTest, ResetDropsTheQpsCompletions) {
  Cq cq = MakeCq(64);
  ASSERT_TRUE(cq);
  Qp q1 = MakeQp(IBV_QPT_RC, cq.get());
  Qp q2 = MakeQp(IBV_QPT_RC, cq.get());
  ASSERT_TRUE(q1 && q2);
  ASSERT_TRUE(RcInit(q1.get()));
  ASSERT_TRUE(RcInit(q2.get()));
  // Interleaved in the CQ: q2's 10, q1's 11, 12, q2's 20, 21.
  ASSERT_EQ(PostRecv(q2.get(), 10), 0);
  ASSERT_EQ(PostRecv(q1.get(), 11), 0);
  ASSERT_EQ(PostRecv(q1.get(), 12), 0);
  ibv_qp_attr a = {};
  a.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(q2.get(), &a, IBV_QP_STATE), 0);
  ASSERT_EQ(ibv_modify_qp(q1.get(), &a, IBV_QP_STATE), 0);
  ASSERT_EQ(PostRecv(q2.get(), 20), 0);
  ASSERT_EQ(PostRecv(q2.get(), 21), 0);
  usleep(50000);
  a.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(ibv_modify_qp(q1.get(), &a, IBV_QP_STATE), 0);
  std::vector<uint64_t> ids;
  for (const ibv_wc& w : PollFor(cq.get(), 3)) {
    EXPECT_EQ(w.qp_num, q2->qp_num);
    EXPECT_EQ(w.status, IBV_WC_WR_FLUSH_ERR);
    ids.push_back(w.wr_id);
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{10, 20, 21}));
  // Destroyed: its completions go too.
  ASSERT_EQ(PostRecv(q2.get(), 22), 0);
  usleep(50000);
  q2.reset();
  EXPECT_TRUE(PollFor(cq.get(), 0).empty());
  // q1 starts again, empty.
  ASSERT_TRUE(RcInit(q1.get()));
  ASSERT_EQ(PostRecv(q1.get(), 30), 0);
  a.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(q1.get(), &a, IBV_QP_STATE), 0);
  auto wc = PollFor(cq.get(), 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 30u);
  EXPECT_EQ(wc[0].qp_num, q1->qp_num);
}

TEST_F(VerbsTest, ObjectChurn) {
  std::vector<uint8_t> buf(64 * 1024);
  for (int i = 0; i < 200; i++) {
    Pd pd(ibv_alloc_pd(ctx_.get()));
    ASSERT_TRUE(pd);
    Mr mr(ibv_reg_mr(pd.get(), buf.data(), buf.size(),
                     IBV_ACCESS_LOCAL_WRITE));
    ASSERT_TRUE(mr);
    Cq cq(ibv_create_cq(ctx_.get(), 64, nullptr, nullptr, 0));
    ASSERT_TRUE(cq);
    ibv_qp_init_attr init = {};
    init.send_cq = cq.get();
    init.recv_cq = cq.get();
    init.qp_type = IBV_QPT_RC;
    init.cap = {64, 64, 2, 2, 0};
    Qp qp(ibv_create_qp(pd.get(), &init));
    ASSERT_TRUE(qp);
  }
}

}  // namespace
