// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// A hostile (or buggy) process: it writes garbage into the rings softrdma
// mapped into it, posts malformed work requests behind the provider's back,
// and races destruction against posting and polling. Each test checks that
// only the abused queue breaks, with a clear completion status, and that a
// healthy QP pair on the same devices keeps working. The guest script
// (tests/guest/hostile.sh) checks that the kernel logged nothing. A hostile
// peer too: RC requests that no conforming requester sends, written to a
// raw socket with a correct ICRC, must get the NAK the IBTA asks for.
//
// Topology and environment as for rc_test.cc (tests/guest/pair.sh).

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "hostile_rings.h"
#include "roce_wire.h"
#include "verbs_pair.h"

namespace {

using namespace srdma_test;

class HostileTest : public PairFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(PairFixture::SetUp());
    ASSERT_TRUE(MakeEnd(a_dev_, &a_, 65536));
    ASSERT_TRUE(MakeEnd(b_dev_, &b_, 65536));
    ConnOpts o;
    o.timeout = 12;
    o.retry_cnt = 3;
    ASSERT_EQ(Connect(&a_, &b_, mtu_, o), 0);
    ASSERT_EQ(Connect(&b_, &a_, mtu_, o), 0);
  }

  // Posts one signaled RDMA @op of @len bytes between @from's buffer and
  // @to's, both at @off, and expects it to complete successfully.
  static void Rdma(End& from, End& to, ibv_wr_opcode op, uint32_t len,
                   size_t off = 0) {
    ibv_sge sge = {(uintptr_t)from.buf.data() + off, len, from.mr->lkey};
    ibv_send_wr wr = {}, *bad;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = op;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = (uintptr_t)to.buf.data() + off;
    wr.wr.rdma.rkey = to.mr->rkey;
    ASSERT_EQ(ibv_post_send(from.qp, &wr, &bad), 0);
    auto wc = Poll(from.cq, 1);
    ASSERT_EQ(wc.size(), 1u);
    EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);
  }

  // A healthy pair on the same devices still moves data.
  void ExpectHealthyPairWorks() {
    End x, y;
    ASSERT_TRUE(MakeEnd(a_dev_, &x, 8192));
    ASSERT_TRUE(MakeEnd(b_dev_, &y, 8192));
    ASSERT_EQ(Connect(&x, &y, mtu_, {}), 0);
    ASSERT_EQ(Connect(&y, &x, mtu_, {}), 0);
    Fill(x.buf, 0, 8192, 42);
    ASSERT_NO_FATAL_FAILURE(Rdma(x, y, IBV_WR_RDMA_WRITE, 8192));
    EXPECT_EQ(std::memcmp(x.buf.data(), y.buf.data(), 8192), 0);
  }

  // Ring the SQ doorbell as the provider does, without touching the ring.
  void Doorbell(End& e) { ASSERT_EQ(hostile_sq_doorbell(e.qp), 0); }

  ibv_qp_state State(ibv_qp* qp) {
    ibv_qp_attr attr = {};
    ibv_qp_init_attr init = {};
    ibv_query_qp(qp, &attr, IBV_QP_STATE, &init);
    return attr.qp_state;
  }

  // Sends the transport bytes @t (BTH on, no ICRC) as a datagram from
  // a_dev_'s address to b_dev_'s, through a raw socket, with the ICRC
  // computed and its bits @icrc_xor flipped.
  void SendRaw(const std::vector<uint8_t>& t, uint32_t icrc_xor = 0) {
    static const uint8_t kV4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    srdma_wire::RoceHeaderFields f = {};
    f.src_gid = a_dev_->gid.raw;
    f.dst_gid = b_dev_->gid.raw;
    f.v6 = std::memcmp(b_dev_->gid.raw, kV4Mapped, 12) != 0;
    f.sport = 49999;
    f.id = 1;  // raw(7): an IPv4 ID of 0 is replaced, under the ICRC
    f.icrc_xor = icrc_xor;
    std::vector<uint8_t> p = srdma_wire::RoceDatagram(f, t);
    int fd = socket(f.v6 ? AF_INET6 : AF_INET, SOCK_RAW, IPPROTO_RAW);
    ASSERT_GE(fd, 0) << strerror(errno);
    sockaddr_storage to = {};
    socklen_t len;
    if (f.v6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&to);
      a->sin6_family = AF_INET6;
      std::memcpy(&a->sin6_addr, f.dst_gid, 16);
      len = sizeof(*a);
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&to);
      a->sin_family = AF_INET;
      std::memcpy(&a->sin_addr, f.dst_gid + 12, 4);
      len = sizeof(*a);
    }
    EXPECT_EQ(sendto(fd, p.data(), p.size(), 0, reinterpret_cast<sockaddr*>(&to), len),
              ssize_t(p.size()))
        << strerror(errno);
    close(fd);
  }

  // A BTH for b_: @flags is its second byte (SE, M, PadCnt, TVer), the PSN
  // the one b_'s responder expects next unless @psn_delta moves it.
  std::vector<uint8_t> Bth(uint8_t opcode, uint8_t flags, int psn_delta = 0) {
    uint32_t qpn = b_.qp->qp_num, psn = (a_.psn + psn_delta) & 0xffffff;
    return {opcode,
            flags,
            0xff,
            0xff,
            0,
            uint8_t(qpn >> 16),
            uint8_t(qpn >> 8),
            uint8_t(qpn),
            0x80,
            uint8_t(psn >> 16),
            uint8_t(psn >> 8),
            uint8_t(psn)};
  }

  // Waits up to 5 s for counter @name of @dev to pass @before.
  static long WaitCounter(Dev* dev, const char* name, long before) {
    long now = before;
    for (int i = 0; i < 500 && now <= before; i++) {
      usleep(10000);
      now = ReadCounter(dev->ctx, name);
    }
    return now;
  }

  // b_ got a request it must answer with NAK invalid request: its QP ends
  // in the error state (IBTA 9.9.3, class B) and a_, which never sent that
  // PSN, drops the NAK as a ghost (C9-136) and stays as it was.
  void ExpectNakedInvalid(const std::vector<uint8_t>& t) {
    long inv = ReadCounter(b_dev_->ctx, "rx_invalid_requests");
    ASSERT_GE(inv, 0);
    SendRaw(t);
    EXPECT_EQ(WaitCounter(b_dev_, "rx_invalid_requests", inv), inv + 1);
    ibv_qp_state st = IBV_QPS_RTS;
    for (int i = 0; i < 500 && st != IBV_QPS_ERR; i++) {
      usleep(10000);
      st = State(b_.qp);
    }
    EXPECT_EQ(st, IBV_QPS_ERR);
    EXPECT_EQ(State(a_.qp), IBV_QPS_RTS);
    ExpectHealthyPairWorks();
  }

  // Writes a receive WQE of 0xffff SGEs (wr_id @id) into @to's RQ and
  // sends @to a SEND from @from, which completes with @sent: @to's WQE
  // completes with IBV_WC_LOC_QP_OP_ERR and @to ends, saying that its own
  // queue failed it (IBV_EVENT_QP_FATAL).
  void ExpectGarbageRqEntryEndsQp(End& from, End& to, uint64_t id, ibv_wc_status sent) {
    uint32_t stride;
    auto* w = static_cast<srdma_recv_wqe*>(
        hostile_rq_slot(to.qp, hostile_rq_prod(to.qp), &stride));
    w->wr_id = id;
    w->num_sge = 0xffff;
    hostile_rq_publish(to.qp, 1);
    ibv_sge sge = {(uintptr_t)from.buf.data(), 64, from.mr->lkey};
    ibv_send_wr wr = {}, *bad;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ASSERT_EQ(ibv_post_send(from.qp, &wr, &bad), 0);
    auto wc = Poll(from.cq, 1, 10000);
    ASSERT_EQ(wc.size(), 1u);
    EXPECT_EQ(wc[0].status, sent) << ibv_wc_status_str(wc[0].status);
    auto rwc = Poll(to.cq, 1, 5000);
    ASSERT_EQ(rwc.size(), 1u);
    EXPECT_EQ(rwc[0].wr_id, id);
    EXPECT_EQ(rwc[0].status, IBV_WC_LOC_QP_OP_ERR) << ibv_wc_status_str(rwc[0].status);
    EXPECT_TRUE(WaitQpEvent(to.dev->ctx, to.qp, IBV_EVENT_QP_FATAL, 5000));
    EXPECT_EQ(State(to.qp), IBV_QPS_ERR);
    ExpectHealthyPairWorks();
  }

  End a_, b_;
};

TEST_F(HostileTest, GarbageSqProducerIndex) {
  srdma_ring_ctrl* c = hostile_sq_ctrl(a_.qp);
  c->prod += 100000;  // far more WQEs than the ring holds
  Doorbell(a_);
  // No WQE to complete in error: the QP goes to ERR and says so with an
  // asynchronous event.
  ibv_async_event ev = {};
  pollfd p = {a_dev_->ctx->async_fd, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 5000), 1);
  ASSERT_EQ(ibv_get_async_event(a_dev_->ctx, &ev), 0);
  EXPECT_EQ(ev.event_type, IBV_EVENT_QP_FATAL);
  EXPECT_EQ(ev.element.qp, a_.qp);
  ibv_ack_async_event(&ev);
  EXPECT_EQ(State(a_.qp), IBV_QPS_ERR);
  ExpectHealthyPairWorks();
}

TEST_F(HostileTest, GarbageWqeOpcode) {
  uint32_t stride;
  auto* w = static_cast<srdma_send_wqe*>(
      hostile_sq_slot(a_.qp, hostile_sq_prod(a_.qp), &stride));
  std::memset(w, 0, stride);
  w->wr_id = 77;
  w->opcode = 200;
  w->num_sge = 255;
  w->flags = SRDMA_WQE_SIGNALED;
  hostile_sq_publish(a_.qp, 1);
  Doorbell(a_);
  auto wc = Poll(a_.cq, 1, 5000);
  ASSERT_GE(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 77u);
  EXPECT_EQ(wc[0].status, IBV_WC_LOC_QP_OP_ERR);
  EXPECT_EQ(State(a_.qp), IBV_QPS_ERR);
  ExpectHealthyPairWorks();
}

TEST_F(HostileTest, OverlongInlineAndSgeCount) {
  uint32_t stride;
  auto* w = static_cast<srdma_send_wqe*>(
      hostile_sq_slot(a_.qp, hostile_sq_prod(a_.qp), &stride));
  std::memset(w, 0, stride);
  w->wr_id = 78;
  w->opcode = IB_UVERBS_WR_SEND;
  w->flags = SRDMA_WQE_SIGNALED | SRDMA_WQE_INLINE;
  w->inline_len = 0xffffffff;
  hostile_sq_publish(a_.qp, 1);
  Doorbell(a_);
  auto wc = Poll(a_.cq, 1, 5000);
  ASSERT_GE(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 78u);
  EXPECT_EQ(wc[0].status, IBV_WC_LOC_QP_OP_ERR);
  ExpectHealthyPairWorks();
}

TEST_F(HostileTest, SgeLengthsOverflow) {
  uint32_t stride;
  auto* w = static_cast<srdma_send_wqe*>(
      hostile_sq_slot(a_.qp, hostile_sq_prod(a_.qp), &stride));
  std::memset(w, 0, stride);
  w->wr_id = 79;
  w->opcode = IB_UVERBS_WR_RDMA_WRITE;
  w->flags = SRDMA_WQE_SIGNALED;
  w->num_sge = 2;
  w->wr.rdma.remote_addr = (uintptr_t)b_.buf.data();
  w->wr.rdma.rkey = b_.mr->rkey;
  auto* sge = reinterpret_cast<srdma_sge*>(w + 1);
  sge[0] = {(uintptr_t)a_.buf.data(), 0xffffffff, a_.mr->lkey};
  sge[1] = {(uintptr_t)a_.buf.data(), 0xffffffff, a_.mr->lkey};
  hostile_sq_publish(a_.qp, 1);
  Doorbell(a_);
  auto wc = Poll(a_.cq, 1, 5000);
  ASSERT_GE(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 79u);
  EXPECT_NE(wc[0].status, IBV_WC_SUCCESS);
  ExpectHealthyPairWorks();
}

TEST_F(HostileTest, ForeignLkeyIsProtectionError) {
  // An L_Key of another PD: the device's other PD (device B's MR).
  ibv_sge sge = {(uintptr_t)a_.buf.data(), 64, b_.mr->lkey};
  ibv_send_wr wr = {}, *bad;
  wr.wr_id = 80;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = (uintptr_t)b_.buf.data();
  wr.wr.rdma.rkey = b_.mr->rkey;
  ASSERT_EQ(ibv_post_send(a_.qp, &wr, &bad), 0);
  auto wc = Poll(a_.cq, 1, 5000);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_LOC_PROT_ERR);
  ExpectHealthyPairWorks();
}

TEST_F(HostileTest, GarbageRqEntry) {
  ExpectGarbageRqEntryEndsQp(a_, b_, 81, IBV_WC_REM_OP_ERR);
}

// The same on UC, which has no NAK to carry the error: the receiving QP
// must not drop every later message in silence behind the bad WQE.
TEST_F(HostileTest, GarbageRqEntryEndsAUcQp) {
  End ua, ub;
  ASSERT_TRUE(MakeEnd(a_dev_, &ua, 4096, 16, nullptr, 0, IBV_QPT_UC));
  ASSERT_TRUE(MakeEnd(b_dev_, &ub, 4096, 16, nullptr, 0, IBV_QPT_UC));
  ASSERT_EQ(ConnectUc(&ua, &ub, mtu_), 0);
  ASSERT_EQ(ConnectUc(&ub, &ua, mtu_), 0);
  ExpectGarbageRqEntryEndsQp(ua, ub, 82, IBV_WC_SUCCESS);
}

TEST_F(HostileTest, GarbageCqConsumerIndex) {
  srdma_ring_ctrl* c = hostile_cq_ctrl(a_.cq);
  c->cons = c->prod + 12345;  // consumed what was never produced
  ibv_sge sge = {(uintptr_t)a_.buf.data(), 64, a_.mr->lkey};
  ibv_send_wr wr = {}, *bad;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = (uintptr_t)b_.buf.data();
  wr.wr.rdma.rkey = b_.mr->rkey;
  ASSERT_EQ(ibv_post_send(a_.qp, &wr, &bad), 0);
  // The CQ is in error: polling reports it instead of returning garbage.
  int n = 0;
  for (int i = 0; i < 2000 && n >= 0; i++) {
    ibv_wc wc;
    n = ibv_poll_cq(a_.cq, 1, &wc);
    if (n == 0) usleep(1000);
  }
  EXPECT_LT(n, 0);
  ExpectHealthyPairWorks();
}

TEST_F(HostileTest, GarbageNotifyAndStateWords) {
  hostile_cq_ctrl(a_.cq)->notify = 0xdeadbeef;
  hostile_sq_ctrl(a_.qp)->kstate = 0xffffffff;
  hostile_sq_ctrl(a_.qp)->notify = 0x12345678;
  // The transport ignores what it does not own; the provider now believes
  // the kernel polls and skips the doorbell, so only this QP may stall.
  ExpectHealthyPairWorks();
}

// The doorbell eventfd (softrdma-abi.h, struct srdma_alloc_ucontext_req)
// takes only the numbers of its own context's QPs: another context's QP
// stays unrung, garbage is taken back and ignored, and the QP's own number
// rings it.
TEST_F(HostileTest, DoorbellEventfdRingsOnlyItsContextsQps) {
  int fd_a = hostile_db_fd(a_.qp->context);
  int fd_b = hostile_db_fd(b_.qp->context);
  if (fd_a < 0 || fd_b < 0) GTEST_SKIP() << "the kernel watches no doorbell eventfd";
  if (hostile_db_is_file(a_.qp->context) || hostile_db_is_file(b_.qp->context))
    GTEST_SKIP() << "the doorbell is a file (SOFTRDMA_DOORBELL_FILE=0 for the eventfd)";
  ASSERT_NE(a_.qp->context, b_.qp->context);

  // b_'s provider believes the kernel polls its SQ: the post rings nothing.
  hostile_sq_ctrl(b_.qp)->kstate |= SRDMA_RING_KSTATE_POLLING;
  Fill(b_.buf, 0, 4096, 7);
  ASSERT_EQ(PostRdma(&b_, &a_, IBV_WR_RDMA_WRITE, 99, 0, 4096), 0);

  const uint64_t values[] = {b_.qp->qp_num, 0, 1, 0xffffff, 0x1000000,
                             a_.qp->qp_num + 4321, UINT64_MAX - 1};
  for (uint64_t v : values)
    EXPECT_EQ(write(fd_a, &v, sizeof(v)), ssize_t(sizeof(v))) << strerror(errno);
  EXPECT_TRUE(Poll(b_.cq, 1, 300).empty()) << "a_'s eventfd rang b_'s QP";
  // Each value was taken back as it was written: nothing is left to read.
  uint64_t left;
  EXPECT_EQ(read(fd_a, &left, sizeof(left)), -1);
  EXPECT_EQ(errno, EAGAIN);

  uint64_t mine = b_.qp->qp_num;
  ASSERT_EQ(write(fd_b, &mine, sizeof(mine)), ssize_t(sizeof(mine)));
  auto wc = Poll(b_.cq, 1, 5000);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 99u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), 4096), 0);
  ExpectHealthyPairWorks();
}

// The doorbell file: ioctl(SRDMA_DOORBELL_RING) rings only QPs of the
// context the file is bound to and says so (EINVAL); nothing else is a
// doorbell; once the context is closed, a descriptor kept on the file
// gets ENODEV.
TEST_F(HostileTest, DoorbellFileRingsOnlyItsContextsQps) {
  int fd_a = hostile_db_fd(a_.qp->context);
  int fd_b = hostile_db_fd(b_.qp->context);
  if (fd_a < 0 || fd_b < 0 || !hostile_db_is_file(a_.qp->context) ||
      !hostile_db_is_file(b_.qp->context))
    GTEST_SKIP() << "no doorbell file (no /dev/" SRDMA_DOORBELL_DEV ")";
  ASSERT_NE(a_.qp->context, b_.qp->context);

  // b_'s provider believes the kernel polls its SQ: the post rings nothing.
  hostile_sq_ctrl(b_.qp)->kstate |= SRDMA_RING_KSTATE_POLLING;
  Fill(b_.buf, 0, 4096, 7);
  ASSERT_EQ(PostRdma(&b_, &a_, IBV_WR_RDMA_WRITE, 99, 0, 4096), 0);

  // QP numbers are per device: b_'s number may name a QP of a_'s context
  // on a_'s device, which the call rings. Another context's QP on a_'s
  // device, and numbers of no QP, are refused.
  ioctl(fd_a, SRDMA_DOORBELL_RING, (unsigned long)b_.qp->qp_num);
  ibv_context* other = ibv_open_device(a_.qp->context->device);
  ASSERT_NE(other, nullptr);
  ibv_pd* opd = ibv_alloc_pd(other);
  ibv_cq* ocq = ibv_create_cq(other, 4, nullptr, nullptr, 0);
  ASSERT_TRUE(opd && ocq);
  ibv_qp_init_attr oinit = {};
  oinit.send_cq = ocq;
  oinit.recv_cq = ocq;
  oinit.qp_type = IBV_QPT_RC;
  oinit.cap.max_send_wr = 1;
  oinit.cap.max_recv_wr = 1;
  oinit.cap.max_send_sge = 1;
  oinit.cap.max_recv_sge = 1;
  ibv_qp* oqp = ibv_create_qp(opd, &oinit);
  ASSERT_NE(oqp, nullptr);
  const unsigned long values[] = {oqp->qp_num, 0, 1, 0xffffff, 0x1000000, ~0UL};
  for (unsigned long v : values) {
    EXPECT_EQ(ioctl(fd_a, SRDMA_DOORBELL_RING, v), -1) << v;
    EXPECT_EQ(errno, EINVAL) << v;
  }
  EXPECT_EQ(ioctl(hostile_db_fd(other), SRDMA_DOORBELL_RING, (unsigned long)oqp->qp_num), 0)
      << strerror(errno);
  EXPECT_EQ(ibv_destroy_qp(oqp), 0);
  EXPECT_EQ(ibv_destroy_cq(ocq), 0);
  EXPECT_EQ(ibv_dealloc_pd(opd), 0);
  EXPECT_EQ(ibv_close_device(other), 0);
  EXPECT_EQ(ioctl(fd_a, SRDMA_DOORBELL_RING + 1, (unsigned long)b_.qp->qp_num), -1);
  EXPECT_EQ(errno, ENOTTY);
  uint64_t qpn = b_.qp->qp_num;
  EXPECT_EQ(write(fd_a, &qpn, sizeof(qpn)), -1);
  EXPECT_TRUE(Poll(b_.cq, 1, 300).empty()) << "a_'s doorbell file rang b_'s QP";

  ASSERT_EQ(ioctl(fd_b, SRDMA_DOORBELL_RING, (unsigned long)b_.qp->qp_num), 0)
      << strerror(errno);
  auto wc = Poll(b_.cq, 1, 5000);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 99u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), 4096), 0);

  // A file that outlives its context, and one never bound.
  ibv_context* ctx = ibv_open_device(a_.qp->context->device);
  ASSERT_NE(ctx, nullptr);
  ASSERT_TRUE(hostile_db_is_file(ctx));
  int kept = dup(hostile_db_fd(ctx));
  ASSERT_GE(kept, 0);
  EXPECT_EQ(ibv_close_device(ctx), 0);
  EXPECT_EQ(ioctl(kept, SRDMA_DOORBELL_RING, 1UL), -1);
  EXPECT_EQ(errno, ENODEV);
  close(kept);
  int fresh = open("/dev/" SRDMA_DOORBELL_DEV, O_RDWR | O_CLOEXEC);
  ASSERT_GE(fresh, 0) << strerror(errno);
  EXPECT_EQ(ioctl(fresh, SRDMA_DOORBELL_RING, (unsigned long)a_.qp->qp_num), -1);
  EXPECT_EQ(errno, EINVAL);
  close(fresh);
  ExpectHealthyPairWorks();
}

// A thread writes a QP's number to the doorbell eventfd and then blocks
// in the same system call: a writev() whose second buffer faults on a page
// that userfaultfd holds. The QP's doorbell work is queued on that thread
// and cannot run until it returns to user mode. Destroying the QP from
// another thread must not wait for it; the work runs later, without the
// QP.
TEST_F(HostileTest, DestroyDoesNotWaitForADoorbellNotYetRun) {
  End x, y;
  ASSERT_TRUE(MakeEnd(a_dev_, &x, 4096));
  ASSERT_TRUE(MakeEnd(b_dev_, &y, 4096));
  ASSERT_EQ(Connect(&x, &y, mtu_, {}), 0);
  ASSERT_EQ(Connect(&y, &x, mtu_, {}), 0);
  int fd = hostile_db_fd(x.qp->context);
  if (fd < 0) GTEST_SKIP() << "the kernel watches no doorbell eventfd";
  if (hostile_db_is_file(x.qp->context))
    GTEST_SKIP() << "the doorbell is a file (SOFTRDMA_DOORBELL_FILE=0 for the eventfd)";
  int uffd = int(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
  if (uffd < 0) GTEST_SKIP() << "userfaultfd: " << strerror(errno);
  uffdio_api api = {};
  api.api = UFFD_API;
  ASSERT_EQ(ioctl(uffd, UFFDIO_API, &api), 0) << strerror(errno);
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  void* held = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(held, MAP_FAILED);
  uffdio_register reg = {};
  reg.range.start = uintptr_t(held);
  reg.range.len = page;
  reg.mode = UFFDIO_REGISTER_MODE_MISSING;
  ASSERT_EQ(ioctl(uffd, UFFDIO_REGISTER, &reg), 0) << strerror(errno);

  uint64_t qpn = x.qp->qp_num;
  iovec iov[2] = {{&qpn, sizeof(qpn)}, {held, sizeof(qpn)}};
  std::atomic<bool> returned{false};
  std::thread writer([&] {
    writev(fd, iov, 2);
    returned = true;
  });
  pollfd p = {uffd, POLLIN, 0};
  bool blocked = poll(&p, 1, 10000) == 1;
  if (blocked) {
    uffd_msg msg;
    EXPECT_EQ(read(uffd, &msg, sizeof(msg)), ssize_t(sizeof(msg)));
    EXPECT_FALSE(returned);
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(ibv_destroy_qp(x.qp), 0);
    x.qp = nullptr;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
    EXPECT_FALSE(returned) << "the writer was let go before the destroy";
  }
  // Let the writer go; its queued doorbell then finds no QP.
  uffdio_zeropage zp = {};
  zp.range.start = uintptr_t(held);
  zp.range.len = page;
  ioctl(uffd, UFFDIO_ZEROPAGE, &zp);
  writer.join();
  munmap(held, page);
  close(uffd);
  if (!blocked) GTEST_SKIP() << "the writev() did not block on the held page";
  ExpectHealthyPairWorks();
}

TEST_F(HostileTest, DestroyRacesPostAndPoll) {
  for (int round = 0; round < 20; round++) {
    End x, y;
    ASSERT_TRUE(MakeEnd(a_dev_, &x, 4096, 256));
    ASSERT_TRUE(MakeEnd(b_dev_, &y, 4096, 256));
    ASSERT_EQ(Connect(&x, &y, mtu_, {}), 0);
    ASSERT_EQ(Connect(&y, &x, mtu_, {}), 0);
    std::atomic<bool> stop{false};
    std::thread poster([&] {
      ibv_sge sge = {(uintptr_t)x.buf.data(), 64, x.mr->lkey};
      while (!stop) {
        ibv_send_wr wr = {}, *bad;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.wr.rdma.remote_addr = (uintptr_t)y.buf.data();
        wr.wr.rdma.rkey = y.mr->rkey;
        wr.send_flags = IBV_SEND_SIGNALED;
        ibv_post_send(x.qp, &wr, &bad);
        ibv_wc wc[8];
        ibv_poll_cq(x.cq, 8, wc);
      }
    });
    usleep(2000 + round * 500);
    // The peer vanishes mid-traffic; then this side's QP too.
    ASSERT_EQ(ibv_destroy_qp(y.qp), 0);
    y.qp = nullptr;
    usleep(1000);
    stop = true;
    poster.join();
    ASSERT_EQ(ibv_destroy_qp(x.qp), 0);
    x.qp = nullptr;
  }
  ExpectHealthyPairWorks();
}

// IBTA C9-84: an RC request with a reserved opcode (0x18..0x1f, 0x15).
TEST_F(HostileTest, ReservedRcOpcodeIsAnInvalidRequest) {
  ExpectNakedInvalid(Bth(0x18, 0));
}

// C9-85: pad on a FIRST packet, whose payload is otherwise a full PMTU.
TEST_F(HostileTest, PadOnSendFirstIsAnInvalidRequest) {
  std::vector<uint8_t> t = Bth(0x00, 1 << 4);
  t.resize(t.size() + (128u << mtu_), 0x5a);
  ExpectNakedInvalid(t);
}

// C9-92: an RDMA READ request carries no payload.
TEST_F(HostileTest, ReadRequestWithPayloadIsAnInvalidRequest) {
  std::vector<uint8_t> t = Bth(0x0c, 0);
  const uint64_t va = (uintptr_t)b_.buf.data();
  for (int i = 7; i >= 0; i--) t.push_back(uint8_t(va >> (8 * i)));
  for (int i = 3; i >= 0; i--) t.push_back(uint8_t(b_.mr->rkey >> (8 * i)));
  t.insert(t.end(), {0, 0, 0, 8});  // DMA length
  t.insert(t.end(), 8, 0x5a);       // the payload it may not have
  ExpectNakedInvalid(t);
}

// A WRITE's DMA length, like a READ's, is at most 2^31 (C9-94): a
// WRITE_FIRST announcing 2^31 + 1 bytes is an invalid request, answered
// as such before its R_Key is looked at.
TEST_F(HostileTest, WriteOverTwoGibIsAnInvalidRequest) {
  std::vector<uint8_t> t = Bth(0x06, 0);
  const uint64_t va = (uintptr_t)b_.buf.data();
  for (int i = 7; i >= 0; i--) t.push_back(uint8_t(va >> (8 * i)));
  for (int i = 3; i >= 0; i--) t.push_back(uint8_t(b_.mr->rkey >> (8 * i)));
  t.insert(t.end(), {0x80, 0, 0, 1});  // DMA length 2^31 + 1
  t.insert(t.end(), size_t(PmtuBytes(mtu_)), 0x5a);
  ExpectNakedInvalid(t);
}

// A QP that gave itself no responder resources (max_dest_rd_atomic 0)
// answers a READ with NAK invalid request (C9-86), as one whose
// resources are all in use.
TEST_F(HostileTest, ReadToAQpWithoutResponderResourcesIsAnInvalidRequest) {
  End x, y;
  ASSERT_TRUE(MakeEnd(a_dev_, &x, 4096));
  ASSERT_TRUE(MakeEnd(b_dev_, &y, 4096));
  ConnOpts ox, oy;
  ox.rd_atomic = 1;
  oy.rd_atomic = 0;
  ASSERT_EQ(Connect(&x, &y, mtu_, ox), 0);
  ASSERT_EQ(Connect(&y, &x, mtu_, oy), 0);
  ASSERT_EQ(PostRdma(&x, &y, IBV_WR_RDMA_READ, 1, 0, 64), 0);
  auto wc = Poll(x.cq, 1, 10000);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_REM_INV_REQ_ERR) << ibv_wc_status_str(wc[0].status);
  ExpectHealthyPairWorks();
}

// The same requests are dropped, and b_ keeps working, when their ICRC is
// wrong (checked before anything is answered) or their PSN is a duplicate
// (nothing to answer: 9.9.3 only NAKs the expected PSN).
TEST_F(HostileTest, InvalidRequestsWithBadIcrcOrOldPsnAreDropped) {
  long icrc = ReadCounter(b_dev_->ctx, "rx_drop_bad_icrc");
  long inv = ReadCounter(b_dev_->ctx, "rx_invalid_requests");
  long dup = ReadCounter(b_dev_->ctx, "rx_duplicates");
  ASSERT_TRUE(icrc >= 0 && inv >= 0 && dup >= 0);
  SendRaw(Bth(0x18, 0), 1u << 7);
  EXPECT_EQ(WaitCounter(b_dev_, "rx_drop_bad_icrc", icrc), icrc + 1);
  SendRaw(Bth(0x18, 0, -1));
  EXPECT_EQ(WaitCounter(b_dev_, "rx_duplicates", dup), dup + 1);
  EXPECT_EQ(ReadCounter(b_dev_->ctx, "rx_invalid_requests"), inv);
  EXPECT_EQ(State(b_.qp), IBV_QPS_RTS);
  // b_'s responder still takes a_'s requests from the PSN it expects.
  Fill(a_.buf, 0, 4096, 7);
  ASSERT_NO_FATAL_FAILURE(Rdma(a_, b_, IBV_WR_RDMA_WRITE, 4096));
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data(), 4096), 0);
}

// IBTA 9.7.5.1.4: a duplicate RDMA READ is answered again from the PSN it
// names, but only for data of the original request: one that asks for
// bytes the original did not, or for more responses than the original
// had left, is dropped. a_ reads 2 PMTUs from b_ (PSNs p and p + 1); the
// test then sends b_ duplicates of that READ with its own RETHs.
TEST_F(HostileTest, DuplicateReadAnsweredOnlyWithinTheOriginal) {
  const uint32_t pmtu = PmtuBytes(mtu_);
  Fill(b_.buf, 0, 4 * pmtu, 9);
  ASSERT_NO_FATAL_FAILURE(Rdma(a_, b_, IBV_WR_RDMA_READ, 2 * pmtu));

  // A READ request for b_: PSN p + @psn_delta, @len bytes at @off.
  auto read_req = [&](int psn_delta, uint64_t off, uint32_t len) {
    std::vector<uint8_t> t = Bth(0x0c, 0, psn_delta);
    const uint64_t va = (uintptr_t)b_.buf.data() + off;
    for (int i = 7; i >= 0; i--) t.push_back(uint8_t(va >> (8 * i)));
    for (int i = 3; i >= 0; i--) t.push_back(uint8_t(b_.mr->rkey >> (8 * i)));
    for (int i = 3; i >= 0; i--) t.push_back(uint8_t(len >> (8 * i)));
    return t;
  };
  // Sends @t to b_, waits for it to count as a duplicate, and returns
  // how many packets b_ sent in answer within 300 ms.
  auto answers = [&](const std::vector<uint8_t>& t) -> long {
    long dup = ReadCounter(b_dev_->ctx, "rx_duplicates");
    long tx = ReadCounter(b_dev_->ctx, "tx_packets");
    EXPECT_TRUE(dup >= 0 && tx >= 0);
    SendRaw(t);
    EXPECT_EQ(WaitCounter(b_dev_, "rx_duplicates", dup), dup + 1);
    usleep(300000);
    return ReadCounter(b_dev_->ctx, "tx_packets") - tx;
  };

  // Bytes beyond the original's, from its first PSN or its second.
  EXPECT_EQ(answers(read_req(0, 2 * pmtu, pmtu)), 0);
  EXPECT_EQ(answers(read_req(1, 3 * pmtu / 2, pmtu)), 0);
  // Two responses from its second PSN: one more than it had left.
  EXPECT_EQ(answers(read_req(1, 0, 2 * pmtu)), 0);
  // Its second half again: one READ response, then the whole of it.
  EXPECT_EQ(answers(read_req(1, pmtu, pmtu)), 1);
  EXPECT_EQ(answers(read_req(0, 0, 2 * pmtu)), 2);

  // a_ dropped the responses it no longer waited for; both QPs go on.
  EXPECT_EQ(State(a_.qp), IBV_QPS_RTS);
  EXPECT_EQ(State(b_.qp), IBV_QPS_RTS);
  Fill(a_.buf, 8192, 4096, 11);
  ASSERT_NO_FATAL_FAILURE(Rdma(a_, b_, IBV_WR_RDMA_WRITE, 4096, 8192));
  EXPECT_EQ(std::memcmp(a_.buf.data() + 8192, b_.buf.data() + 8192, 4096), 0);
}

}  // namespace
