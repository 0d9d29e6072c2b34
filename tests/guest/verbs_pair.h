// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Helpers of the guest tests that connect RC QPs between two devices
// (tests/guest/pair.sh draws the topology): opening a device by name, finding
// its RoCEv2 GID for an IPv4 or IPv6 address, creating and connecting a QP
// with its CQ and a registered buffer, polling.
#ifndef SRDMA_TESTS_VERBS_PAIR_H
#define SRDMA_TESTS_VERBS_PAIR_H

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace srdma_test {

inline std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

struct Dev {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  int gid_index = -1;
  ibv_gid gid = {};
  ibv_mtu active_mtu = IBV_MTU_1024;
  ~Dev() {
    if (pd) ibv_dealloc_pd(pd);
    if (ctx) ibv_close_device(ctx);
  }
};

// The index of the RoCEv2 GID of IP address @ip: IPv4 (as an IPv4-mapped
// GID) or IPv6.
inline int FindGid(ibv_context* ctx, const std::string& ip, ibv_gid* out) {
  uint8_t want[16] = {};
  in_addr v4 = {};
  if (inet_pton(AF_INET, ip.c_str(), &v4) == 1) {
    want[10] = want[11] = 0xff;
    std::memcpy(want + 12, &v4, 4);
  } else if (inet_pton(AF_INET6, ip.c_str(), want) != 1) {
    return -1;
  }
  ibv_port_attr port = {};
  if (ibv_query_port(ctx, 1, &port)) return -1;
  for (int i = 0; i < port.gid_tbl_len && i < 256; i++) {
    ibv_gid_entry e = {};
    if (ibv_query_gid_ex(ctx, 1, i, &e, 0)) continue;
    if (e.gid_type != IBV_GID_TYPE_ROCE_V2) continue;
    if (std::memcmp(e.gid.raw, want, 16) == 0) {
      *out = e.gid;
      return i;
    }
  }
  return -1;
}

inline std::unique_ptr<Dev> OpenDev(const std::string& name, const std::string& ip) {
  auto d = std::make_unique<Dev>();
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  for (int i = 0; list && i < n; i++)
    if (name == ibv_get_device_name(list[i])) d->ctx = ibv_open_device(list[i]);
  ibv_free_device_list(list);
  if (!d->ctx) return nullptr;
  d->pd = ibv_alloc_pd(d->ctx);
  ibv_port_attr port = {};
  ibv_query_port(d->ctx, 1, &port);
  d->active_mtu = port.active_mtu;
  // GIDs appear asynchronously after the address is configured.
  for (int t = 0; t < 50 && d->gid_index < 0; t++) {
    d->gid_index = FindGid(d->ctx, ip, &d->gid);
    if (d->gid_index < 0) usleep(100000);
  }
  return d;
}

// One RC queue pair with its CQ and a registered buffer.
struct End {
  Dev* dev = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  std::vector<uint8_t> buf;
  ibv_mr* mr = nullptr;
  uint32_t psn = 0;

  ~End() {
    if (qp) ibv_destroy_qp(qp);
    if (mr) ibv_dereg_mr(mr);
    if (cq) ibv_destroy_cq(cq);
  }
};

constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                        IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

// @pd: the protection domain of the QP and the region, else the device's.
// @send_ops: IBV_QP_EX_WITH_* for a QP with the ibv_wr_* API, else 0.
// @type: IBV_QPT_RC or IBV_QPT_UC.
inline bool MakeEnd(Dev* dev, End* e, size_t bytes, uint32_t depth = 64,
                    ibv_pd* pd = nullptr, uint64_t send_ops = 0,
                    ibv_qp_type type = IBV_QPT_RC) {
  if (!pd) pd = dev->pd;
  e->dev = dev;
  e->cq = ibv_create_cq(dev->ctx, 4 * depth, nullptr, nullptr, 0);
  if (!e->cq) return false;
  ibv_qp_init_attr_ex init = {};
  init.send_cq = e->cq;
  init.recv_cq = e->cq;
  init.qp_type = type;
  init.cap.max_send_wr = depth;
  init.cap.max_recv_wr = depth;
  init.cap.max_send_sge = 4;
  init.cap.max_recv_sge = 4;
  init.cap.max_inline_data = 64;
  init.comp_mask = IBV_QP_INIT_ATTR_PD;
  init.pd = pd;
  if (send_ops) {
    init.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    init.send_ops_flags = send_ops;
  }
  e->qp = ibv_create_qp_ex(dev->ctx, &init);
  if (!e->qp) return false;
  e->buf.assign(bytes, 0);
  e->mr = ibv_reg_mr(pd, e->buf.data(), e->buf.size(), kAccess);
  e->psn = std::random_device{}() & 0xffffff;
  return e->mr != nullptr;
}

// Local ACK timeout exponent: 14 (4.096 us * 2^14 = 67 ms) unless
// SRDMA_QP_TIMEOUT says otherwise (a KASAN kernel under TCG is slow).
inline uint8_t DefaultTimeout() {
  return static_cast<uint8_t>(std::strtoul(Env("SRDMA_QP_TIMEOUT", "14").c_str(), nullptr, 0));
}

struct ConnOpts {
  uint8_t timeout = DefaultTimeout();
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint8_t min_rnr_timer = 1;  // 0.01 ms
  uint8_t rd_atomic = 16;
};

// RESET -> INIT of @qp, on port 1, with @access.
inline int ToInit(ibv_qp* qp, int access) {
  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_INIT;
  attr.port_num = 1;
  attr.qp_access_flags = access;
  return ibv_modify_qp(qp, &attr,
                       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

// The RTR attributes every connected QP @a towards @b needs: path, peer
// QP and PSN.
inline ibv_qp_attr RtrAttr(const End* a, const End* b, ibv_mtu mtu) {
  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = mtu;
  attr.dest_qp_num = b->qp->qp_num;
  attr.rq_psn = b->psn;
  attr.ah_attr.is_global = 1;
  attr.ah_attr.grh.dgid = b->dev->gid;
  attr.ah_attr.grh.sgid_index = a->dev->gid_index;
  attr.ah_attr.grh.hop_limit = 64;
  attr.ah_attr.port_num = 1;
  return attr;
}

constexpr int kRtrMask =
    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

// RESET -> INIT -> RTR -> RTS of @a towards @b.
inline int Connect(End* a, End* b, ibv_mtu mtu, const ConnOpts& o) {
  if (int err = ToInit(a->qp, kAccess)) return err;
  ibv_qp_attr attr = RtrAttr(a, b, mtu);
  attr.max_dest_rd_atomic = o.rd_atomic;
  attr.min_rnr_timer = o.min_rnr_timer;
  if (int err = ibv_modify_qp(a->qp, &attr,
                              kRtrMask | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    return err;
  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  attr.sq_psn = a->psn;
  attr.timeout = o.timeout;
  attr.retry_cnt = o.retry_cnt;
  attr.rnr_retry = o.rnr_retry;
  attr.max_rd_atomic = o.rd_atomic;
  return ibv_modify_qp(a->qp, &attr,
                       IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
                           IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                           IBV_QP_MAX_QP_RD_ATOMIC);
}

// RESET -> INIT -> RTR -> RTS of UC QP @a towards @b.
inline int ConnectUc(End* a, End* b, ibv_mtu mtu) {
  if (int err = ToInit(a->qp, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)) return err;
  ibv_qp_attr attr = RtrAttr(a, b, mtu);
  if (int err = ibv_modify_qp(a->qp, &attr, kRtrMask)) return err;
  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  attr.sq_psn = a->psn;
  return ibv_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

// Poll @cq until @n completions arrived or @ms passed.
inline std::vector<ibv_wc> Poll(ibv_cq* cq, int n, int ms = 60000) {
  std::vector<ibv_wc> out;
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while ((int)out.size() < n && std::chrono::steady_clock::now() < end) {
    ibv_wc wc[16];
    int got = ibv_poll_cq(cq, 16, wc);
    if (got < 0) break;
    out.insert(out.end(), wc, wc + got);
    if (!got) usleep(50);
  }
  return out;
}

// ibv_post_recv() of one work request: @len bytes at @off of @e's buffer.
inline int PostRecv(End& e, size_t off, size_t len, uint64_t id) {
  ibv_sge sge = {(uintptr_t)e.buf.data() + off, (uint32_t)len, e.mr->lkey};
  ibv_recv_wr wr = {}, *bad;
  wr.wr_id = id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  return ibv_post_recv(e.qp, &wr, &bad);
}

// ibv_post_send() of one work request with one SGE: @len bytes at @off of
// @e's buffer; @raddr and @rkey for RDMA and atomics, @compare_add and
// @swap for atomics.
inline int PostSend(End& e, ibv_wr_opcode op, size_t off, size_t len, uint64_t id,
                    uint64_t raddr = 0, uint32_t rkey = 0, int flags = IBV_SEND_SIGNALED,
                    uint32_t imm = 0, uint64_t compare_add = 0, uint64_t swap = 0) {
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

// One RDMA WRITE or READ of @len bytes at offset @off of both buffers,
// from @a's QP to @b's region. Returns ibv_post_send()'s result.
inline int PostRdma(End* a, End* b, ibv_wr_opcode op, uint64_t id, size_t off, size_t len,
                    bool signaled = true) {
  ibv_sge sge = {(uintptr_t)a->buf.data() + off, (uint32_t)len, a->mr->lkey};
  ibv_send_wr wr = {}, *bad;
  wr.wr_id = id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = op;
  wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
  wr.wr.rdma.remote_addr = (uintptr_t)b->buf.data() + off;
  wr.wr.rdma.rkey = b->mr->rkey;
  return ibv_post_send(a->qp, &wr, &bad);
}

// Wait up to @ms for the asynchronous event @type of @qp; other events of
// the context (left by earlier tests) are acknowledged and passed over.
inline bool WaitQpEvent(ibv_context* ctx, ibv_qp* qp, ibv_event_type type, int ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p = {ctx->async_fd, POLLIN, 0};
    if (poll(&p, 1, (int)left.count()) <= 0) continue;
    ibv_async_event ev;
    if (ibv_get_async_event(ctx, &ev)) return false;
    const bool ours = ev.event_type == type && ev.element.qp == qp;
    ibv_ack_async_event(&ev);
    if (ours) return true;
  }
}

// The first error event (IBV_EVENT_QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR)
// of @qp within @ms, or -1; other events are acknowledged and passed over.
inline int WaitQpErrorEvent(ibv_context* ctx, ibv_qp* qp, int ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return -1;
    pollfd p = {ctx->async_fd, POLLIN, 0};
    if (poll(&p, 1, (int)left.count()) <= 0) continue;
    ibv_async_event ev;
    if (ibv_get_async_event(ctx, &ev)) return -1;
    const ibv_event_type t = ev.event_type;
    const bool ours = ev.element.qp == qp &&
                      (t == IBV_EVENT_QP_FATAL || t == IBV_EVENT_QP_REQ_ERR ||
                       t == IBV_EVENT_QP_ACCESS_ERR);
    ibv_ack_async_event(&ev);
    if (ours) return t;
  }
}

inline void Fill(std::vector<uint8_t>& v, size_t off, size_t len, uint32_t seed) {
  std::mt19937 g(seed);
  for (size_t i = 0; i < len; i++) v[off + i] = g();
}

inline int PmtuBytes(ibv_mtu m) { return 128 << m; }

// The sysfs file of a port counter of @ctx's device.
inline std::string CounterPath(ibv_context* ctx, const char* name) {
  return std::string("/sys/class/infiniband/") + ibv_get_device_name(ctx->device) +
         "/ports/1/hw_counters/" + name;
}

// The core caches a port's counters for RDMA_HW_STATS_DEFAULT_LIFESPAN
// (10 ms) after a read; wait that out so that the value is fresh. -1 when
// the device has no such counter.
inline long ReadCounter(ibv_context* ctx, const char* name) {
  usleep(25000);
  FILE* f = std::fopen(CounterPath(ctx, name).c_str(), "r");
  long v = -1;
  if (!f) return -1;
  if (std::fscanf(f, "%ld", &v) != 1) v = -1;
  std::fclose(f);
  return v;
}

// The netdev under an RDMA device's port 1.
inline std::string NetdevOf(ibv_context* ctx) {
  std::ifstream f(std::string("/sys/class/infiniband/") + ibv_get_device_name(ctx->device) +
                  "/ports/1/gid_attrs/ndevs/0");
  std::string name;
  std::getline(f, name);
  return name;
}

// A fixture that opens devices A and B (SRDMA_DEV_A/B at SRDMA_IP_A/B)
// once per test suite and checks them before each test.
class PairFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    a_dev_ = OpenDev(Env("SRDMA_DEV_A", "dev_init"), Env("SRDMA_IP_A", "10.80.0.1")).release();
    b_dev_ = OpenDev(Env("SRDMA_DEV_B", "dev_peer"), Env("SRDMA_IP_B", "10.80.0.2")).release();
  }
  static void TearDownTestSuite() {
    delete a_dev_;
    delete b_dev_;
    a_dev_ = b_dev_ = nullptr;
  }

  void SetUp() override {
    ASSERT_TRUE(a_dev_ && a_dev_->pd) << "device A";
    ASSERT_TRUE(b_dev_ && b_dev_->pd) << "device B";
    ASSERT_GE(a_dev_->gid_index, 0) << "no RoCEv2 GID on A";
    ASSERT_GE(b_dev_->gid_index, 0) << "no RoCEv2 GID on B";
    mtu_ = std::min(a_dev_->active_mtu, b_dev_->active_mtu);
  }

  // Whether end A (the requester) or B (the responder) is softrdma
  // (SRDMA_KIND_A/B), not rdma_rxe.
  static bool SoftA() { return Env("SRDMA_KIND_A", "softrdma") == "softrdma"; }
  static bool SoftB() { return Env("SRDMA_KIND_B", "softrdma") == "softrdma"; }

  static inline Dev* a_dev_ = nullptr;
  static inline Dev* b_dev_ = nullptr;
  ibv_mtu mtu_ = IBV_MTU_1024;
};

}  // namespace srdma_test

#endif  // SRDMA_TESTS_VERBS_PAIR_H
