// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Source and destination addresses at a connected QP (IBTA C9-47.1.1),
// part of srdma_rc_test. RoCEv2 carries the GIDs as the IP addresses: an
// RC QP takes packets only from the address of its peer, to its own.
//
//   dev A: QP a  at SRDMA_IP_A ---------- its peer ----------> dev B: QP b
//          QP c  at a second address of A's netdev, with b's QPN and the
//                PSN b expects --- silently dropped (rx_drop_address) -->
//
// Topology and environment as for rc_test.cc (tests/guest/pair.sh); the
// second address is SRDMA_IP_A with a "1" appended (10.80.0.11, fd80::11),
// added for the test and removed after it.

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "verbs_pair.h"

namespace {

using namespace srdma_test;

// A second address on a netdev, in its namespace, for the life of the
// object.
class ExtraAddress {
 public:
  ExtraAddress(const std::string& netns, const std::string& dev, const std::string& ip) {
    const bool v6 = ip.find(':') != std::string::npos;
    const std::string pre = netns.empty() ? "" : "ip netns exec " + netns + " ";
    add_ = pre + "ip " + (v6 ? "-6 " : "") + "addr add " + ip + (v6 ? "/64 nodad" : "/24") +
           " dev " + dev;
    del_ = pre + "ip addr del " + ip + (v6 ? "/64" : "/24") + " dev " + dev;
    ok_ = std::system((add_ + " >/dev/null 2>&1").c_str()) == 0;
  }
  ~ExtraAddress() {
    if (ok_) std::system((del_ + " >/dev/null 2>&1").c_str());
  }
  bool ok() const { return ok_; }

 private:
  std::string add_, del_;
  bool ok_ = false;
};

class AddressTest : public PairFixture {};

// A WRITE from another address of the peer's host, with everything else
// right (QPN, the PSN expected, the R_Key), places nothing and gets no
// answer: its requester ends in retry exceeded. The peer's own WRITE at
// that PSN then goes through.
TEST_F(AddressTest, ConnectedQpTakesPacketsOnlyFromItsPeer) {
  if (!SoftB()) GTEST_SKIP() << "the responder under test is softrdma's";
  if (Env("SRDMA_DEV_A", "dev_init") == Env("SRDMA_DEV_B", "dev_peer"))
    GTEST_SKIP() << "one device: the pair has one netdev for both ends";
  const std::string alias = Env("SRDMA_IP_A", "10.80.0.1") + "1";
  ExtraAddress extra(Env("SRDMA_NETNS_A", ""), NetdevOf(a_dev_->ctx), alias);
  ASSERT_TRUE(extra.ok()) << "cannot add " << alias;
  std::unique_ptr<Dev> alt = OpenDev(Env("SRDMA_DEV_A", "dev_init"), alias);
  ASSERT_TRUE(alt && alt->pd) << "device A again";
  ASSERT_GE(alt->gid_index, 0) << "no RoCEv2 GID for " << alias;

  const size_t len = 64;
  End a, b, c;
  ASSERT_TRUE(MakeEnd(a_dev_, &a, 4096));
  ASSERT_TRUE(MakeEnd(b_dev_, &b, 4096));
  ASSERT_TRUE(MakeEnd(alt.get(), &c, 4096));
  ConnOpts o;
  ASSERT_EQ(Connect(&a, &b, mtu_, o), 0);
  ASSERT_EQ(Connect(&b, &a, mtu_, o), 0);
  // c speaks as a would: b's QPN, the PSN b expects, but from alias.
  c.psn = a.psn;
  o.retry_cnt = 1;
  ASSERT_EQ(Connect(&c, &b, mtu_, o), 0);

  const long drops = ReadCounter(b_dev_->ctx, "rx_drop_address");
  ASSERT_GE(drops, 0) << "no rx_drop_address counter";
  std::memset(c.buf.data(), 0xab, len);
  ASSERT_EQ(PostRdma(&c, &b, IBV_WR_RDMA_WRITE, 1, 0, len), 0);
  auto wc = Poll(c.cq, 1, 60000);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_RETRY_EXC_ERR) << ibv_wc_status_str(wc[0].status);
  EXPECT_EQ(std::count(b.buf.begin(), b.buf.end(), 0), (long)b.buf.size())
      << "data placed from another address";
  EXPECT_GT(ReadCounter(b_dev_->ctx, "rx_drop_address"), drops);

  Fill(a.buf, 0, len, 47);
  ASSERT_EQ(PostRdma(&a, &b, IBV_WR_RDMA_WRITE, 2, 0, len), 0);
  wc = Poll(a.cq, 1, 60000);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);
  EXPECT_EQ(std::memcmp(a.buf.data(), b.buf.data(), len), 0);
}

}  // namespace
