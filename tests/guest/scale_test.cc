// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Churn and scale, between two devices (tests/guest/pair.sh):
//
//   Churn         SRDMA_CHURN_CYCLES (default 10000) cycles of PD, CQ, MR
//                 and a QP pair taken to RTS and destroyed, with a message
//                 on every 16th pair; kernel memory (slab and the rest of
//                 MemAvailable) must come back to where it was after a
//                 warm-up
//   ManyQps       SRDMA_MANY_QPS (default 10000) RC QPs on device A, each
//                 connected to one of B's, all alive at once; messages on
//                 a sample of them; prints the memory per QP
//
// The figures go to stdout (RecordProperty as well, so into the XML).

#include <infiniband/verbs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "verbs_pair.h"

namespace {

using namespace srdma_test;

// A /proc/meminfo value in KiB.
long MemInfo(const std::string& key) {
  std::ifstream f("/proc/meminfo");
  std::string k;
  long v;
  std::string unit;
  while (f >> k >> v) {
    std::getline(f, unit);
    if (k == key + ":") return v;
  }
  return -1;
}

void DropCaches() {
  sync();
  std::ofstream("/proc/sys/vm/drop_caches") << "3\n";
}

class ScaleTest : public ::testing::Test {
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

  // A protection domain of its own, freed after the objects in it.
  struct Pd {
    ibv_pd* pd;
    ~Pd() {
      if (pd) ibv_dealloc_pd(pd);
    }
  };

  // One cycle: everything created, connected, maybe used, destroyed.
  void Cycle(bool traffic) {
    Pd pa{ibv_alloc_pd(a_->ctx)}, pb{ibv_alloc_pd(b_->ctx)};
    ASSERT_TRUE(pa.pd && pb.pd);
    End a, b;
    ASSERT_TRUE(MakeEnd(a_, &a, 4096, 4, pa.pd));
    ASSERT_TRUE(MakeEnd(b_, &b, 4096, 4, pb.pd));
    ConnOpts o;
    ASSERT_EQ(Connect(&a, &b, mtu_, o), 0);
    ASSERT_EQ(Connect(&b, &a, mtu_, o), 0);
    if (!traffic) return;
    ibv_sge rs = {(uintptr_t)b.buf.data(), 64, b.mr->lkey};
    ibv_recv_wr rwr = {}, *rbad;
    rwr.sg_list = &rs;
    rwr.num_sge = 1;
    ASSERT_EQ(ibv_post_recv(b.qp, &rwr, &rbad), 0);
    ibv_sge ss = {(uintptr_t)a.buf.data(), 64, a.mr->lkey};
    ibv_send_wr swr = {}, *sbad;
    swr.sg_list = &ss;
    swr.num_sge = 1;
    swr.opcode = IBV_WR_SEND;
    swr.send_flags = IBV_SEND_SIGNALED;
    ASSERT_EQ(ibv_post_send(a.qp, &swr, &sbad), 0);
    auto w = Poll(a.cq, 1);
    ASSERT_EQ(w.size(), 1u);
    ASSERT_EQ(w[0].status, IBV_WC_SUCCESS);
    ASSERT_EQ(Poll(b.cq, 1).size(), 1u);
  }

  static Dev* a_;
  static Dev* b_;
  ibv_mtu mtu_ = IBV_MTU_1024;
};

Dev* ScaleTest::a_ = nullptr;
Dev* ScaleTest::b_ = nullptr;

TEST_F(ScaleTest, ChurnReturnsMemory) {
  const long cycles = std::strtol(Env("SRDMA_CHURN_CYCLES", "10000").c_str(), nullptr, 0);
  // Warm-up: slab caches, the xarrays' nodes, the page allocator's lists.
  for (int i = 0; i < 200; i++) ASSERT_NO_FATAL_FAILURE(Cycle(i % 16 == 0));
  DropCaches();
  long slab0 = MemInfo("Slab"), avail0 = MemInfo("MemAvailable");
  for (long i = 0; i < cycles; i++) ASSERT_NO_FATAL_FAILURE(Cycle(i % 16 == 0)) << "cycle " << i;
  DropCaches();
  long slab1 = MemInfo("Slab"), avail1 = MemInfo("MemAvailable");
  std::printf("churn: %ld cycles; slab %ld -> %ld KiB, available %ld -> %ld KiB\n", cycles, slab0,
              slab1, avail0, avail1);
  RecordProperty("slab_growth_kib", std::to_string(slab1 - slab0));
  RecordProperty("available_loss_kib", std::to_string(avail0 - avail1));
  // A leak of a single small object per cycle would be 10000 * 64 B at
  // least; allow for the allocators' own fluctuation.
  EXPECT_LT(slab1 - slab0, 2048) << "slab grew over the cycles";
  EXPECT_LT(avail0 - avail1, 8192) << "memory did not come back";
}

TEST_F(ScaleTest, ManyConnectedQps) {
  const long n = std::strtol(Env("SRDMA_MANY_QPS", "10000").c_str(), nullptr, 0);
  ibv_cq* acq = ibv_create_cq(a_->ctx, 4096, nullptr, nullptr, 0);
  ibv_cq* bcq = ibv_create_cq(b_->ctx, 4096, nullptr, nullptr, 0);
  ASSERT_TRUE(acq && bcq);
  std::vector<uint8_t> abuf(4096), bbuf(4096);
  ibv_mr* amr = ibv_reg_mr(a_->pd, abuf.data(), abuf.size(), IBV_ACCESS_LOCAL_WRITE);
  ibv_mr* bmr = ibv_reg_mr(b_->pd, bbuf.data(), bbuf.size(), IBV_ACCESS_LOCAL_WRITE);
  ASSERT_TRUE(amr && bmr);
  DropCaches();
  long avail0 = MemInfo("MemAvailable");

  auto make = [](Dev* d, ibv_cq* cq) {
    ibv_qp_init_attr init = {};
    init.send_cq = cq;
    init.recv_cq = cq;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = 1;
    init.cap.max_recv_wr = 1;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    return ibv_create_qp(d->pd, &init);
  };
  // Each device's half is made, connected and destroyed by a thread of its
  // own, so that the two halves run on both CPUs: a QP is connected only
  // once both ends exist, since RTR names the peer's QPN. Connect() only
  // reads the peer's qp_num and psn.
  std::vector<End> as(n), bs(n);
  auto both = [](auto&& fa, auto&& fb) {
    std::thread t(fb);
    fa();
    t.join();
  };
  long made_a = 0, made_b = 0;
  auto create = [&](std::vector<End>* v, Dev* d, ibv_cq* cq, long* made) {
    for (long i = 0; i < n; i++, (*made)++) {
      (*v)[i].dev = d;
      (*v)[i].qp = make(d, cq);
      if (!(*v)[i].qp) break;
    }
  };
  both([&] { create(&as, a_, acq, &made_a); }, [&] { create(&bs, b_, bcq, &made_b); });
  long conn_a = 0, conn_b = 0;
  auto connect = [&](std::vector<End>* v, std::vector<End>* peer, long* conn) {
    ConnOpts o;
    for (long i = 0; i < std::min(made_a, made_b); i++, (*conn)++)
      if (Connect(&(*v)[i], &(*peer)[i], mtu_, o)) break;
  };
  both([&] { connect(&as, &bs, &conn_a); }, [&] { connect(&bs, &as, &conn_b); });
  long made = std::min(conn_a, conn_b);
  long avail1 = MemInfo("MemAvailable");
  std::printf("many QPs: %ld connected pairs (%ld QPs); %.1f KiB per QP (both ends' kernel "
              "and mapped memory, by MemAvailable)\n",
              made, 2 * made, made ? (avail0 - avail1) / (2.0 * made) : 0.0);
  RecordProperty("qps", std::to_string(2 * made));
  RecordProperty("kib_per_qp", std::to_string(made ? (avail0 - avail1) / (2 * made) : 0));
  EXPECT_EQ(made, n) << "could not create and connect them all: " << strerror(errno);

  // A message on every 100th pair, all in flight together.
  int sent = 0;
  for (long i = 0; i < made; i += 100) {
    ibv_sge rs = {(uintptr_t)bbuf.data(), 64, bmr->lkey};
    ibv_recv_wr rwr = {}, *rbad;
    rwr.sg_list = &rs;
    rwr.num_sge = 1;
    ASSERT_EQ(ibv_post_recv(bs[i].qp, &rwr, &rbad), 0);
    ibv_sge ss = {(uintptr_t)abuf.data(), 64, amr->lkey};
    ibv_send_wr swr = {}, *sbad;
    swr.wr_id = i;
    swr.sg_list = &ss;
    swr.num_sge = 1;
    swr.opcode = IBV_WR_SEND;
    swr.send_flags = IBV_SEND_SIGNALED;
    ASSERT_EQ(ibv_post_send(as[i].qp, &swr, &sbad), 0);
    sent++;
  }
  auto sw = Poll(acq, sent, 120000);
  auto rw = Poll(bcq, sent, 120000);
  EXPECT_EQ(sw.size(), size_t(sent));
  EXPECT_EQ(rw.size(), size_t(sent));
  for (auto& c : sw) EXPECT_EQ(c.status, IBV_WC_SUCCESS);

  auto destroy = [](std::vector<End>* v) {
    for (auto& e : *v) {
      if (e.qp) ibv_destroy_qp(e.qp);
      e.qp = nullptr;
    }
  };
  both([&] { destroy(&as); }, [&] { destroy(&bs); });
  ibv_dereg_mr(amr);
  ibv_dereg_mr(bmr);
  ibv_destroy_cq(acq);
  ibv_destroy_cq(bcq);
}

}  // namespace
