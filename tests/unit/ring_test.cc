// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Unit tests of the provider's ring code (provider/ring.h) against the
// layout of include/uapi/rdma/softrdma-abi.h: wraparound of the free-running
// indices, full and empty rings, and the order in which entries and indices
// are published. The kernel's side is played by the test, with the same
// rules as kernel/srdma_queue.h.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "ring.h"
}

namespace {

static_assert(sizeof(srdma_ring_ctrl) == SRDMA_RING_CTRL_SIZE);
static_assert(offsetof(srdma_ring_ctrl, prod) == 0);
static_assert(offsetof(srdma_ring_ctrl, cons) == 64);
static_assert(offsetof(srdma_ring_ctrl, notify) == 128);
static_assert(offsetof(srdma_ring_ctrl, kstate) == 192);
static_assert(sizeof(srdma_send_wqe) == 64);
static_assert(sizeof(srdma_recv_wqe) == 16);
static_assert(sizeof(srdma_cqe) == 64);
static_assert(sizeof(srdma_sge) == 16);
static_assert(sizeof(srdma_alloc_ucontext_req) == 8);
static_assert(offsetof(srdma_alloc_ucontext_req, doorbell_fd) == 4);

// A ring in ordinary memory, laid out as the kernel lays out its rings.
class Ring {
 public:
  Ring(uint32_t num, uint32_t stride)
      : mem_(SRDMA_RING_CTRL_SIZE + size_t{num} * stride + 64) {
    void* p = mem_.data();
    size_t space = mem_.size();
    p = std::align(64, SRDMA_RING_CTRL_SIZE, p, space);
    srdma_uring_setup(&r_, p, num, stride);
  }
  srdma_uring* get() { return &r_; }
  srdma_ring_ctrl* ctrl() { return r_.ctrl; }

 private:
  std::vector<uint8_t> mem_;
  srdma_uring r_{};
};

TEST(ProviderRing, EmptyAndFull) {
  Ring ring(8, 64);
  srdma_uring* r = ring.get();
  EXPECT_EQ(srdma_uring_space(r), 8u);
  for (uint32_t i = 0; i < 8; i++) {
    ASSERT_GT(srdma_uring_space(r), 0u);
    srdma_uring_publish(r, 1);
  }
  EXPECT_EQ(srdma_uring_space(r), 0u);
  EXPECT_EQ(ring.ctrl()->prod, 8u);
  // The consumer frees three slots.
  ring.ctrl()->cons = 3;
  EXPECT_EQ(srdma_uring_space(r), 3u);
}

TEST(ProviderRing, WrapsAroundTheCounters) {
  Ring ring(4, 64);
  srdma_uring* r = ring.get();
  r->own = 0xfffffffe;
  ring.ctrl()->prod = r->own;
  ring.ctrl()->cons = r->own;
  EXPECT_EQ(srdma_uring_space(r), 4u);
  auto* first = static_cast<uint8_t*>(srdma_uring_prod_entry(r));
  EXPECT_EQ(first, r->buf + 2 * 64);  // slot 0xfffffffe & 3
  srdma_uring_publish(r, 3);
  EXPECT_EQ(r->own, 1u);
  EXPECT_EQ(ring.ctrl()->prod, 1u);
  EXPECT_EQ(srdma_uring_space(r), 1u);
  EXPECT_EQ(static_cast<uint8_t*>(srdma_uring_prod_entry(r)), r->buf + 64);
}

TEST(ProviderRing, CorruptConsumerIndexMeansNoSpace) {
  Ring ring(8, 64);
  srdma_uring* r = ring.get();
  srdma_uring_publish(r, 2);
  // A consumer index ahead of the producer is impossible: refuse to post.
  ring.ctrl()->cons = 5;
  EXPECT_EQ(srdma_uring_space(r), 0u);
  ring.ctrl()->cons = 0x80000000;
  EXPECT_EQ(srdma_uring_space(r), 0u);
}

TEST(ProviderRing, ConsumerSide) {
  Ring ring(4, sizeof(srdma_cqe));
  srdma_uring* r = ring.get();
  EXPECT_EQ(srdma_uring_cons_peek(r), nullptr);
  ring.ctrl()->prod = 2;
  const void* e = srdma_uring_cons_peek(r);
  EXPECT_EQ(e, r->buf);
  srdma_uring_consume(r, 1);
  EXPECT_EQ(ring.ctrl()->cons, 1u);
  EXPECT_EQ(srdma_uring_cons_peek(r), r->buf + sizeof(srdma_cqe));
  srdma_uring_consume(r, 1);
  EXPECT_EQ(srdma_uring_cons_peek(r), nullptr);
}

TEST(ProviderRing, ArmNeverWeakensNext) {
  Ring ring(4, 64);
  srdma_uring* r = ring.get();
  srdma_uring_arm(r, true);
  EXPECT_EQ(ring.ctrl()->notify, uint32_t{SRDMA_CQ_NOTIFY_SOLICITED});
  srdma_uring_arm(r, false);
  EXPECT_EQ(ring.ctrl()->notify, uint32_t{SRDMA_CQ_NOTIFY_NEXT});
  srdma_uring_arm(r, true);
  EXPECT_EQ(ring.ctrl()->notify, uint32_t{SRDMA_CQ_NOTIFY_NEXT});
}

TEST(ProviderRing, ErrorBit) {
  Ring ring(4, 64);
  EXPECT_FALSE(srdma_uring_error(ring.get()));
  ring.ctrl()->kstate = SRDMA_RING_KSTATE_ERROR;
  EXPECT_TRUE(srdma_uring_error(ring.get()));
}

// A producer thread and a consumer thread pass a million sequence numbers
// through a small ring: every entry read must be the one published, in
// order, which holds only if entries are written before prod is released
// and read after it is acquired (and likewise for cons).
TEST(ProviderRing, PublicationOrderAcrossThreads) {
  constexpr uint32_t kCount = 1u << 20;
  Ring ring(16, 64);
  srdma_uring* prod = ring.get();
  srdma_uring cons = *prod;  // the consumer's private view

  std::thread producer([&] {
    for (uint32_t i = 0; i < kCount; i++) {
      while (srdma_uring_space(prod) == 0) std::this_thread::yield();
      auto* e = static_cast<uint64_t*>(srdma_uring_prod_entry(prod));
      for (int w = 0; w < 8; w++) e[w] = uint64_t{i} * 8 + w;
      srdma_uring_publish(prod, 1);
    }
  });

  uint32_t bad = 0;
  for (uint32_t i = 0; i < kCount; i++) {
    const void* p;
    while (!(p = srdma_uring_cons_peek(&cons))) std::this_thread::yield();
    const auto* e = static_cast<const uint64_t*>(p);
    for (int w = 0; w < 8; w++)
      if (e[w] != uint64_t{i} * 8 + w) bad++;
    srdma_uring_consume(&cons, 1);
  }
  producer.join();
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(ring.ctrl()->prod, kCount);
  EXPECT_EQ(ring.ctrl()->cons, kCount);
}

}  // namespace
