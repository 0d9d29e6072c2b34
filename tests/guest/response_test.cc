// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// What softrdma's requester makes of responses it did not expect, and of
// answers that come at chosen moments, part of srdma_rc_test. The
// responder is played by the test itself: it writes
// chosen RoCEv2 packets (tools/wire/roce_wire.h) into a raw socket in the
// initial namespace, with the address of the end there as their source,
// and they reach the requester under test in netns "peer" (or, requests
// that the test plays, its responder):
//
//   init netns                                    netns "peer"
//   raw socket, source: the init end's address    requester under test:
//     the init end's netdev ========================= its netdev, QP t
//   QP p (created, never brought up: what t sends it is dropped)
//
// Topology and environment as for rc_test.cc (tests/guest/pair.sh); the
// requester under test is whichever end is in netns "peer", and must be
// softrdma.

#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../../tools/wire/roce_wire.h"
#include "verbs_pair.h"

namespace {

using namespace srdma_test;

constexpr uint8_t kSendFirst = 0x00;
constexpr uint8_t kReadRequest = 0x0c;
constexpr uint8_t kReadRespFirst = 0x0d;
constexpr uint8_t kReadRespMiddle = 0x0e;
constexpr uint8_t kReadRespLast = 0x0f;
constexpr uint8_t kReadRespOnly = 0x10;
constexpr uint8_t kAck = 0x11;
constexpr uint8_t kAtomicAck = 0x12;
constexpr uint8_t kSynAck = 0x00;
constexpr uint8_t kSynNakPsnSeq = 0x60;

bool IsV4Mapped(const ibv_gid& g) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(g.raw, prefix, sizeof(prefix)) == 0;
}

class ResponseTest : public PairFixture {
 protected:
  void SetUp() override {
    PairFixture::SetUp();
    if (HasFatalFailure()) return;
    const bool b_in_peer = !Env("SRDMA_NETNS_B", "").empty();
    if (Env("SRDMA_DEV_A", "dev_init") == Env("SRDMA_DEV_B", "dev_peer"))
      GTEST_SKIP() << "one device: its packets never cross its netdev";
    if (b_in_peer == !Env("SRDMA_NETNS_A", "").empty())
      GTEST_SKIP() << "both ends in one namespace";
    if (!(b_in_peer ? SoftB() : SoftA()))
      GTEST_SKIP() << "the requester under test is softrdma's";
    if (!Env("SRDMA_NETEM", "").empty())
      GTEST_SKIP() << "netem would lose the packets chosen here";
    target_ = b_in_peer ? b_dev_ : a_dev_;
    fake_ = b_in_peer ? a_dev_ : b_dev_;
    v6_ = !IsV4Mapped(target_->gid);
    sock_ = socket(v6_ ? AF_INET6 : AF_INET, SOCK_RAW, IPPROTO_RAW);
    ASSERT_GE(sock_, 0) << "raw socket: " << std::strerror(errno);
    ASSERT_TRUE(MakeEnd(target_, &t_, 1 << 18));
    ASSERT_TRUE(MakeEnd(fake_, &p_, 4096));
  }
  void TearDown() override {
    if (sock_ >= 0) close(sock_);
    if (cap_ >= 0) close(cap_);
  }

  // Bring t up towards p (which stays in RESET), with @retry_cnt and
  // local ACK timeout @timeout (18: about a second; the answers here
  // come well before it).
  void ConnectTarget(uint8_t retry_cnt, uint8_t timeout = 18, uint8_t rd_atomic = 16) {
    ConnOpts o;
    o.retry_cnt = retry_cnt;
    o.timeout = timeout;
    o.rd_atomic = rd_atomic;
    ASSERT_EQ(Connect(&t_, &p_, mtu_, o), 0);
  }

  // A BTH to t's QP: @opcode, @psn, the pad of @payload bytes, AckReq
  // when @ackreq, P_Key 0xffff.
  std::vector<uint8_t> Bth(uint8_t opcode, uint32_t psn, size_t payload, bool ackreq) {
    std::vector<uint8_t> tr(12, 0);
    const uint32_t qpn = t_.qp->qp_num;
    tr[0] = opcode;
    tr[1] = static_cast<uint8_t>((4 - payload % 4) % 4 << 4);
    tr[2] = tr[3] = 0xff;
    tr[5] = qpn >> 16;
    tr[6] = qpn >> 8;
    tr[7] = qpn;
    tr[8] = ackreq ? 0x80 : 0;
    tr[9] = psn >> 16;
    tr[10] = psn >> 8;
    tr[11] = psn;
    return tr;
  }

  // Send p's answer to t: BTH with @opcode and @psn, the AETH
  // (@syndrome, MSN 1) where the opcode has one, an AtomicAckETH of zero
  // for an atomic ACK, then @payload bytes.
  void Answer(uint8_t opcode, uint32_t psn, uint8_t syndrome, size_t payload = 0) {
    std::vector<uint8_t> tr = Bth(opcode, psn, payload, false);
    // AETH: the syndrome, MSN 1. Byte by byte: GCC 12 at -O3 takes an
    // insert() of an initializer list here for an out-of-bounds move.
    if (srdma_wire::ExtOf(opcode) & srdma_wire::kAeth)
      for (uint8_t b : {syndrome, uint8_t{0}, uint8_t{0}, uint8_t{1}}) tr.push_back(b);
    if (srdma_wire::ExtOf(opcode) & srdma_wire::kAtmAck) tr.insert(tr.end(), 8, 0);
    tr.insert(tr.end(), payload + (4 - payload % 4) % 4, 0x5a);
    ASSERT_NO_FATAL_FAILURE(Inject(tr));
  }

  // Send p's request to t: a SEND packet of @opcode (no extended header)
  // with @psn and AckReq, then @payload bytes.
  void Request(uint8_t opcode, uint32_t psn, size_t payload) {
    std::vector<uint8_t> tr = Bth(opcode, psn, payload, true);
    tr.insert(tr.end(), payload + (4 - payload % 4) % 4, 0x5a);
    ASSERT_NO_FATAL_FAILURE(Inject(tr));
  }

  // Send the transport headers and payload @tr, from p's address to t's.
  void Inject(const std::vector<uint8_t>& tr) {
    srdma_wire::RoceHeaderFields f = {};
    f.src_gid = fake_->gid.raw;
    f.dst_gid = target_->gid.raw;
    f.v6 = v6_;
    f.sport = 0xc000;
    const std::vector<uint8_t> pkt = srdma_wire::RoceDatagram(f, tr);

    sockaddr_storage to = {};
    socklen_t tolen;
    if (v6_) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&to);
      a->sin6_family = AF_INET6;
      std::memcpy(&a->sin6_addr, target_->gid.raw, 16);
      tolen = sizeof(*a);
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&to);
      a->sin_family = AF_INET;
      std::memcpy(&a->sin_addr, target_->gid.raw + 12, 4);
      tolen = sizeof(*a);
    }
    ASSERT_EQ(sendto(sock_, pkt.data(), pkt.size(), 0, reinterpret_cast<sockaddr*>(&to), tolen),
              static_cast<ssize_t>(pkt.size()))
        << std::strerror(errno);
  }

  // A READ request t sent to p, as p's side sees it.
  struct ReadRequest {
    uint32_t psn;
    uint64_t va;
    uint32_t len;
  };

  // Start capturing what reaches the init end: a raw UDP socket gets a
  // copy of every UDP datagram, over IPv4 from the IP header on, over
  // IPv6 from the UDP header on.
  void Capture() {
    cap_ = socket(v6_ ? AF_INET6 : AF_INET, SOCK_RAW, IPPROTO_UDP);
    ASSERT_GE(cap_, 0) << "raw socket: " << std::strerror(errno);
  }

  // The next READ request of t to p within @ms, or false.
  bool NextRead(ReadRequest* r, int ms = 5000) {
    const uint32_t qpn = p_.qp->qp_num;
    uint8_t b[2048];
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    pollfd pfd = {cap_, POLLIN, 0};
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0 || poll(&pfd, 1, (int)left.count()) != 1) break;
      const ssize_t n = recv(cap_, b, sizeof(b), 0);
      if (n < (v6_ ? 8 : 20)) continue;
      const size_t ip = v6_ ? 0 : (b[0] & 0xf) * 4;
      const uint8_t* u = b + ip;
      if ((size_t)n < ip + 8 + 12 + 16 || (u[2] << 8 | u[3]) != 4791) continue;
      const uint8_t* bth = u + 8;
      const uint8_t* reth = bth + 12;
      if (bth[0] != kReadRequest || (uint32_t)(bth[5] << 16 | bth[6] << 8 | bth[7]) != qpn)
        continue;
      r->psn = bth[9] << 16 | bth[10] << 8 | bth[11];
      r->va = 0;
      for (int i = 0; i < 8; i++) r->va = r->va << 8 | reth[i];
      r->len = reth[12] << 24 | reth[13] << 16 | reth[14] << 8 | reth[15];
      return true;
    }
    return false;
  }

  // Wait until t's device has sent a packet since @before (tx_packets):
  // an answer to a PSN not sent yet is a ghost, dropped.
  void WaitSent(long before) {
    ASSERT_GE(before, 0) << "no tx_packets counter";
    for (int i = 0; i < 400 && ReadCounter(target_->ctx, "tx_packets") == before; i++) {
    }
    ASSERT_GT(ReadCounter(target_->ctx, "tx_packets"), before) << "the request never left";
  }

  // Post @op of @len bytes at offset @off on t, and wait for it to leave.
  void Post(ibv_wr_opcode op, size_t len, uint64_t id = 1, size_t off = 0) {
    const long before = ReadCounter(target_->ctx, "tx_packets");
    ASSERT_EQ(PostRdma(&t_, &p_, op, id, off, len), 0);
    ASSERT_NO_FATAL_FAILURE(WaitSent(before));
  }

  // Give t a QP of @sges SGEs per send WQE in place of its own (same CQ,
  // protection domain and region).
  void WidenTarget(uint32_t sges) {
    ASSERT_EQ(ibv_destroy_qp(t_.qp), 0);
    t_.qp = nullptr;
    ibv_qp_init_attr init = {};
    init.send_cq = t_.cq;
    init.recv_cq = t_.cq;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = 64;
    init.cap.max_recv_wr = 64;
    init.cap.max_send_sge = sges;
    init.cap.max_recv_sge = 1;
    t_.qp = ibv_create_qp(target_->pd, &init);
    ASSERT_NE(t_.qp, nullptr) << "QP of " << sges << " SGEs: " << std::strerror(errno);
  }

  void Modify(ibv_qp_state state) {
    ibv_qp_attr attr = {};
    attr.qp_state = state;
    attr.en_sqd_async_notify = state == IBV_QPS_SQD;
    ASSERT_EQ(ibv_modify_qp(t_.qp, &attr,
                            IBV_QP_STATE | (state == IBV_QPS_SQD ? IBV_QP_EN_SQD_ASYNC_NOTIFY : 0)),
              0);
  }

  // Wait for t's one completion and return its status.
  ibv_wc_status Status() {
    auto wc = Poll(t_.cq, 1, 60000);
    return wc.size() == 1 ? wc[0].status : IBV_WC_GENERAL_ERR;
  }

  Dev* target_ = nullptr;
  Dev* fake_ = nullptr;
  bool v6_ = false;
  int sock_ = -1;
  int cap_ = -1;
  End t_, p_;
};

// IBTA 9.9.2.3, Table 59: a response of an opcode that does not answer the
// request at that PSN is a bad response, and ends the QP with the WQE
// completed in IBV_WC_BAD_RESP_ERR; ignored, the WQE would end in retry
// exceeded instead, after its timeouts.
TEST_F(ResponseTest, ReadResponseToAWriteIsABadResponse) {
  ConnectTarget(1);
  Post(IBV_WR_RDMA_WRITE, 64);
  Answer(kReadRespOnly, t_.psn, kSynAck, 64);
  EXPECT_EQ(Status(), IBV_WC_BAD_RESP_ERR);
}

TEST_F(ResponseTest, AtomicAckToAReadIsABadResponse) {
  ConnectTarget(1);
  Post(IBV_WR_RDMA_READ, 8);
  Answer(kAtomicAck, t_.psn, kSynAck);
  EXPECT_EQ(Status(), IBV_WC_BAD_RESP_ERR);
}

// IBTA 9.7.5.1.9: a READ response answers its READ; its AETH carries an
// ACK. One that carries a NAK (or an RNR NAK) is malformed: dropped, its
// payload not placed, and the READ still waits for its answer.
TEST_F(ResponseTest, ReadResponseWithANakSyndromeIsDropped) {
  ConnectTarget(1, 20);
  Post(IBV_WR_RDMA_READ, 8);
  Answer(kReadRespOnly, t_.psn, 0x61, 8);
  Answer(kReadRespOnly, t_.psn, 0x2e, 8);
  EXPECT_TRUE(Poll(t_.cq, 1, 300).empty()) << "a READ response with a NAK completed the READ";
  EXPECT_EQ(t_.buf[0], 0) << "a READ response with a NAK was placed";
  Answer(kReadRespOnly, t_.psn, kSynAck, 8);
  EXPECT_EQ(Status(), IBV_WC_SUCCESS);
  EXPECT_EQ(t_.buf[0], 0x5a);
}

// IBTA 9.7.5.2.2: a READ's first PSN is answered by a FIRST (or ONLY)
// response. A MIDDLE there, of the right length, is out of place: not
// data to place.
TEST_F(ResponseTest, MiddleReadResponseAtTheFirstPsnIsABadResponse) {
  const size_t pmtu = PmtuBytes(mtu_);
  ConnectTarget(1);
  Post(IBV_WR_RDMA_READ, 3 * pmtu);
  Answer(kReadRespMiddle, t_.psn, kSynAck, pmtu);
  EXPECT_EQ(Status(), IBV_WC_BAD_RESP_ERR);
  EXPECT_EQ(t_.buf[0], 0) << "an out-of-place response was placed";
}

// IBTA C9-114: a responder NAKs a PSN sequence error once, until the PSN
// it expects arrives; a second NAK of the same PSN is a duplicate of the
// first (netem's "duplicate"), and costs no second retry (C9-137). With
// retry_cnt 1, the first NAK takes the only retry; the second must not end
// the QP; the ACK that follows completes the WRITE. The local ACK timeout
// (timeout 20: about four seconds) does not expire in between.
TEST_F(ResponseTest, DuplicatedSequenceNakCostsOneRetry) {
  ConnectTarget(1, 20);
  Post(IBV_WR_RDMA_WRITE, 64);
  Answer(kAck, t_.psn, kSynNakPsnSeq);
  Answer(kAck, t_.psn, kSynNakPsnSeq);
  usleep(20000);
  Answer(kAck, t_.psn, kSynAck);
  EXPECT_EQ(Status(), IBV_WC_SUCCESS);
}

// IBTA 9.7.5.1.4 lets a requester ask again for a part of a READ. softrdma
// asks for the rest of a READ whose responses came with a gap in pieces
// of one congestion window, each once the one before has come whole
// (srdma_req_read_piece()): answered back to back, the whole rest would
// come every time a response goes missing. Here the responses after the
// first skip one; every request after that must ask, from the PSN after
// the last response placed, for the bytes that PSN stands for, no more than
// what is left and, once at least, less; the responses of each piece end
// in a LAST, as rdma_rxe's responder answers such a request; and the
// READ completes with every byte placed.
TEST_F(ResponseTest, ReadAskedAgainInPieces) {
  const uint32_t pmtu = PmtuBytes(mtu_);
  const uint32_t n = 64;
  ASSERT_NO_FATAL_FAILURE(Capture());
  ConnectTarget(7, 20);
  const uint32_t psn0 = t_.psn;
  const uint64_t base = (uintptr_t)p_.buf.data();
  Post(IBV_WR_RDMA_READ, n * pmtu);
  ReadRequest r;
  ASSERT_TRUE(NextRead(&r)) << "the READ was not seen";
  EXPECT_EQ(r.psn, psn0);
  EXPECT_EQ(r.va, base);
  EXPECT_EQ(r.len, n * pmtu);

  Answer(kReadRespFirst, psn0, kSynAck, pmtu);
  Answer(kReadRespMiddle, (psn0 + 2) & 0xffffff, kSynAck, pmtu);
  uint32_t done = 1, pieces = 0;
  bool shorter = false;
  while (done < n) {
    ASSERT_TRUE(NextRead(&r)) << "no request for the rest after " << done << " responses";
    const uint32_t psn = (psn0 + done) & 0xffffff;
    const uint32_t at = (r.psn - psn0) & 0xffffff;
    // One sent again from further back (a local ACK timeout while the
    // answers were on their way) is answered by what was sent since.
    if (at < done) continue;
    ASSERT_EQ(at, done) << "a request for a PSN not reached yet";
    EXPECT_EQ(r.va, base + (uint64_t)done * pmtu);
    ASSERT_GT(r.len, 0u);
    ASSERT_LE(r.len, (n - done) * pmtu);
    ASSERT_EQ(r.len % pmtu, 0u);
    shorter |= r.len < (n - done) * pmtu;
    const uint32_t k = r.len / pmtu;
    for (uint32_t i = 0; i < k; i++)
      Answer(i == k - 1 ? kReadRespLast : kReadRespMiddle, (psn + i) & 0xffffff, kSynAck, pmtu);
    done += k;
    pieces++;
  }
  EXPECT_TRUE(shorter) << "the rest was asked for whole, " << pieces << " requests";
  EXPECT_EQ(Status(), IBV_WC_SUCCESS);
  size_t bad = 0, past = 0;
  for (size_t i = 0; i < (size_t)n * pmtu; i++) bad += t_.buf[i] != 0x5a;
  for (size_t i = (size_t)n * pmtu; i < t_.buf.size(); i++) past += t_.buf[i] != 0;
  EXPECT_EQ(bad, 0u) << "bytes not placed";
  EXPECT_EQ(past, 0u) << "bytes placed past the READ's end";
}

// The SQ drain (SQD) ends when the messages begun are answered. With one
// READ allowed in flight (max_rd_atomic 1), READ 2, posted with READ 1,
// gets its PSN behind it but waits for its answer before its request may
// go: it has not begun when the QP enters SQD. The drain must then end
// with READ 1's answer, READ 2 staying for RTS; a drain that waited for
// READ 2, which nobody answers while it is held back, would never end.
// An answer to READ 2 before its request left is a ghost (C9-136), not
// data: only once back in RTS, with the request sent, does one count.
TEST_F(ResponseTest, SqdWaitsNotForAReadHeldBackByTheLimit) {
  ConnectTarget(7, 18, 1);
  // One post for both: the pass that sends READ 1 gives READ 2 its PSN.
  const long before = ReadCounter(target_->ctx, "tx_packets");
  ibv_sge sge[2];
  ibv_send_wr wr[2] = {}, *bad = nullptr;
  for (int i = 0; i < 2; i++) {
    sge[i] = {(uintptr_t)t_.buf.data() + 8 * i, 8, t_.mr->lkey};
    wr[i].wr_id = i + 1;
    wr[i].next = i ? nullptr : &wr[1];
    wr[i].sg_list = &sge[i];
    wr[i].num_sge = 1;
    wr[i].opcode = IBV_WR_RDMA_READ;
    wr[i].send_flags = IBV_SEND_SIGNALED;
    wr[i].wr.rdma.remote_addr = (uintptr_t)p_.buf.data() + 8 * i;
    wr[i].wr.rdma.rkey = p_.mr->rkey;
  }
  ASSERT_EQ(ibv_post_send(t_.qp, wr, &bad), 0);
  ASSERT_NO_FATAL_FAILURE(WaitSent(before));
  ASSERT_NO_FATAL_FAILURE(Modify(IBV_QPS_SQD));
  usleep(10000);
  Answer(kReadRespOnly, t_.psn, kSynAck, 8);
  auto wc = Poll(t_.cq, 1, 10000);
  ASSERT_EQ(wc.size(), 1u) << "READ 1 never completed";
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);
  EXPECT_EQ(t_.buf[0], 0x5a);
  EXPECT_TRUE(WaitQpEvent(target_->ctx, t_.qp, IBV_EVENT_SQ_DRAINED, 5000))
      << "the drain waited for the READ held back";

  // READ 2 has its PSN, but no request of it left: an answer to it now
  // is a ghost (C9-136), dropped.
  const uint32_t psn2 = (t_.psn + 1) & 0xffffff;
  Answer(kReadRespOnly, psn2, kSynAck, 8);
  EXPECT_TRUE(Poll(t_.cq, 1, 300).empty()) << "an answer to a READ never sent was taken";
  EXPECT_EQ(t_.buf[8], 0);

  const long sent = ReadCounter(target_->ctx, "tx_packets");
  ASSERT_NO_FATAL_FAILURE(Modify(IBV_QPS_RTS));
  ASSERT_NO_FATAL_FAILURE(WaitSent(sent));
  Answer(kReadRespOnly, psn2, kSynAck, 8);
  wc = Poll(t_.cq, 1, 10000);
  ASSERT_EQ(wc.size(), 1u) << "READ 2 never completed back in RTS";
  EXPECT_EQ(wc[0].wr_id, 2u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);
  EXPECT_EQ(t_.buf[8], 0x5a);
}

// IBTA C9-222.1.1: a class C error on a request tied to a receive WQE
// ends the QP and completes that WQE in error, which tells the consumer;
// an asynchronous event is for errors tied to no WQE. A SEND cut short by
// the FIRST of another (an opcode out of sequence, C9-84: NAK invalid
// request) completes the receive it was filling with
// IBV_WC_REM_INV_REQ_ERR, not as flushed, and raises no error event.
TEST_F(ResponseTest, SendCutShortCompletesItsReceiveInError) {
  const size_t pmtu = PmtuBytes(mtu_);
  ConnectTarget(1);
  ASSERT_EQ(PostRecv(t_, 0, 4 * pmtu, 7), 0);
  ASSERT_EQ(PostRecv(t_, 4 * pmtu, 64, 8), 0);
  Request(kSendFirst, p_.psn, pmtu);
  Request(kSendFirst, (p_.psn + 1) & 0xffffff, pmtu);
  auto wc = Poll(t_.cq, 2, 10000);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].wr_id, 7u);
  EXPECT_EQ(wc[0].status, IBV_WC_REM_INV_REQ_ERR) << ibv_wc_status_str(wc[0].status);
  EXPECT_EQ(wc[1].wr_id, 8u);
  EXPECT_EQ(wc[1].status, IBV_WC_WR_FLUSH_ERR) << ibv_wc_status_str(wc[1].status);
  ibv_qp_attr attr = {};
  ibv_qp_init_attr init = {};
  ASSERT_EQ(ibv_query_qp(t_.qp, &attr, IBV_QP_STATE, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_ERR);
  EXPECT_EQ(WaitQpErrorEvent(target_->ctx, t_.qp, 500), -1)
      << "an asynchronous event for an error a completion reported";
}

// IBTA C9-61: a send queue has at most 2^23 PSNs outstanding, so that the
// responder tells a duplicate from a request ahead of it; a READ takes the
// PSNs of all its responses at once. At a path MTU of 256 a READ of 2 GiB
// takes 2^23 PSNs: behind an unanswered WRITE it must wait for the
// WRITE's ACK. Then it goes, asking for no more than the PSNs left, and,
// unanswered, it is asked for again from its first PSN once the local ACK
// timeout (17: about half a second) or an early retransmission comes: a
// requester that lost count of what is outstanding (una and the next PSN
// half the PSN space apart, ordered neither way) would wait for ever.
// The READ's destination is one 64 MiB region named by 32 SGEs.
TEST_F(ResponseTest, ReadKeepsWithinHalfThePsnSpace) {
  constexpr uint32_t kSges = 32;
  constexpr size_t kChunk = 64 << 20;
  constexpr uint64_t kLen = uint64_t{kSges} * kChunk;
  constexpr uint32_t kWindow = 1u << 23;
  ASSERT_NO_FATAL_FAILURE(WidenTarget(kSges));
  void* dst = mmap(nullptr, kChunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(dst, MAP_FAILED);
  struct Unmap {
    void* p;
    ibv_mr* mr = nullptr;
    ~Unmap() {
      if (mr) ibv_dereg_mr(mr);
      munmap(p, kChunk);
    }
  } region{dst};
  region.mr = ibv_reg_mr(target_->pd, dst, kChunk, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(region.mr, nullptr) << std::strerror(errno);
  ASSERT_NO_FATAL_FAILURE(Capture());
  mtu_ = IBV_MTU_256;
  ConnectTarget(7, 17);
  const uint32_t psn0 = t_.psn;
  const uint32_t psn1 = (psn0 + 1) & 0xffffff;
  Post(IBV_WR_RDMA_WRITE, 8, 1);

  ibv_sge sge[kSges];
  for (auto& s : sge) s = {(uintptr_t)dst, (uint32_t)kChunk, region.mr->lkey};
  ibv_send_wr wr = {}, *bad = nullptr;
  wr.wr_id = 2;
  wr.sg_list = sge;
  wr.num_sge = kSges;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = 0x10000;
  wr.wr.rdma.rkey = p_.mr->rkey;
  ASSERT_EQ(ibv_post_send(t_.qp, &wr, &bad), 0) << std::strerror(errno);

  ReadRequest r = {};
  EXPECT_FALSE(NextRead(&r, 250)) << "2^23 + 1 PSNs outstanding: the READ went, PSN " << r.psn
                                  << ", " << r.len << " bytes";
  Answer(kAck, psn0, kSynAck);
  auto wc = Poll(t_.cq, 1, 10000);
  ASSERT_EQ(wc.size(), 1u) << "the WRITE never completed";
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);

  ASSERT_TRUE(NextRead(&r)) << "the READ never went once the WRITE was answered";
  EXPECT_EQ(r.psn, psn1);
  EXPECT_EQ(r.va, 0x10000u);
  ASSERT_GT(r.len, 0u);
  EXPECT_LE(r.len, kLen);
  EXPECT_LE((r.len + 255) / 256, kWindow) << "more than 2^23 PSNs outstanding";
  ASSERT_TRUE(NextRead(&r, 10000)) << "the READ, unanswered, was never asked for again";
  EXPECT_EQ(r.psn, psn1);
  EXPECT_TRUE(Poll(t_.cq, 1, 0).empty()) << "the READ completed unanswered";
}

}  // namespace
