// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// srdma_fuzz: send mutated RoCEv2 packets at an RDMA device.
//
//   srdma_fuzz --dev DEV --dst IP --src IP [--packets N] [--seed S]
//
// The tool opens DEV itself and gives it targets: RC and UC QPs (connected
// to QP numbers at --src that do not exist), UD QPs, receive WQEs, and a
// region with every remote right. It then sends --packets IPv4 or IPv6
// datagrams (as --dst is) from --src to DEV's address --dst, UDP port
// 4791, through a raw socket (IP_HDRINCL, or IPPROTO_RAW for IPv6), so
// that it controls every byte from the IP header on. IPv6 datagrams carry
// a valid UDP checksum, which IPv6 requires; IPv4 ones carry none.
//
// Each packet starts as a structured packet of a random opcode of every
// transport (RC, UC, UD, CNP, the reserved ranges), addressed to one of
// the QPs (or QP1, or a random QPN), with PSNs around the expected ones,
// the region's R_Key or another, addresses and lengths inside, on the edge
// of and far outside the region, and payloads of 0 to MTU + 64 bytes. Half
// of them are then mutated (bytes flipped, truncated or extended, pad count, TVer,
// opcode, P_Key, length fields) and its ICRC computed, or corrupted on
// purpose, before it goes. Every 512 packets the tool drains its CQs,
// posts receives again and brings QPs that a packet put in the error state
// back to RTS, so that the deep paths stay reachable.
//
// It prints what it sent and the device's counters before and after (the
// caller checks that the device still works and that the kernel logged
// nothing). Exit status 0 unless the tool itself failed.

#include <arpa/inet.h>
#include <endian.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../wire/roce_wire.h"

namespace {

using namespace srdma_wire;

constexpr uint32_t kQkey = 0x11223344;

// An IPv4 address as a RoCEv2 GID (IPv4-mapped), or an IPv6 one as is.
struct Addr {
  bool v6 = false;
  std::array<uint8_t, 16> gid{};

  bool Parse(const std::string& s) {
    in_addr a4{};
    if (inet_pton(AF_INET, s.c_str(), &a4) == 1) {
      gid[10] = gid[11] = 0xff;
      std::memcpy(gid.data() + 12, &a4, 4);
      return true;
    }
    v6 = true;
    return inet_pton(AF_INET6, s.c_str(), gid.data()) == 1;
  }
  const uint8_t* v4() const { return gid.data() + 12; }
};

struct Target {
  ibv_qp* qp;
  uint32_t rq_psn;
};

class Fuzzer {
 public:
  Fuzzer(const std::string& dev, const Addr& src, const Addr& dst, uint64_t seed)
      : src_(src), dst_(dst), rng_(seed), dev_name_(dev) {}

  bool Open() {
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    for (int i = 0; list && i < n; i++)
      if (dev_name_ == ibv_get_device_name(list[i])) ctx_ = ibv_open_device(list[i]);
    ibv_free_device_list(list);
    if (!ctx_) return Fail("no device " + dev_name_);
    pd_ = ibv_alloc_pd(ctx_);
    cq_ = ibv_create_cq(ctx_, 4096, nullptr, nullptr, 0);
    buf_.assign(1 << 16, 0);
    mr_ = ibv_reg_mr(pd_, buf_.data(), buf_.size(),
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                         IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
    if (!pd_ || !cq_ || !mr_) return Fail("pd/cq/mr");
    if (!FindGid()) return Fail("no RoCEv2 GID for the --dst address on " + dev_name_);
    for (int i = 0; i < 4; i++) Add(IBV_QPT_RC);
    for (int i = 0; i < 2; i++) Add(IBV_QPT_UC);
    for (int i = 0; i < 2; i++) Add(IBV_QPT_UD);
    for (auto& t : targets_)
      if (!Up(t)) return Fail("bring QP up");
    sock_ = socket(dst_.v6 ? AF_INET6 : AF_INET, SOCK_RAW, IPPROTO_RAW);
    if (sock_ < 0) return Fail(std::string("raw socket: ") + strerror(errno));
    return true;
  }

  bool Run(uint64_t packets) {
    sockaddr_storage to = {};
    socklen_t tolen;
    if (dst_.v6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&to);
      a->sin6_family = AF_INET6;
      std::memcpy(&a->sin6_addr, dst_.gid.data(), 16);
      tolen = sizeof(*a);
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&to);
      a->sin_family = AF_INET;
      std::memcpy(&a->sin_addr, dst_.v4(), 4);
      tolen = sizeof(*a);
    }
    for (uint64_t i = 0; i < packets; i++) {
      std::vector<uint8_t> p = Build();
      if (sendto(sock_, p.data(), p.size(), 0, reinterpret_cast<sockaddr*>(&to), tolen) < 0 &&
          errno != ENOBUFS && errno != EMSGSIZE && errno != EINVAL)
        return Fail(std::string("sendto: ") + strerror(errno));
      sent_++;
      if (i % 512 == 511) Maintain();
    }
    Maintain();
    return true;
  }

  void Report() const {
    std::printf("sent %llu packets (%llu with a bad ICRC on purpose)\n",
                (unsigned long long)sent_, (unsigned long long)bad_icrc_);
    for (auto& [op, n] : per_op_) std::printf("  opcode 0x%02x: %llu\n", op, (unsigned long long)n);
    std::printf("completions drained %llu, QPs brought back from the error state %llu\n",
                (unsigned long long)cqes_, (unsigned long long)recovered_);
  }

 private:
  bool Fail(const std::string& what) {
    std::fprintf(stderr, "srdma_fuzz: %s\n", what.c_str());
    return false;
  }

  bool FindGid() {
    ibv_port_attr port = {};
    if (ibv_query_port(ctx_, 1, &port)) return false;
    mtu_ = 128u << port.active_mtu;
    for (int i = 0; i < port.gid_tbl_len && i < 256; i++) {
      ibv_gid_entry e = {};
      if (ibv_query_gid_ex(ctx_, 1, i, &e, 0) || e.gid_type != IBV_GID_TYPE_ROCE_V2) continue;
      if (std::memcmp(e.gid.raw, dst_.gid.data(), 16) == 0) {
        gid_index_ = i;
        return true;
      }
    }
    return false;
  }

  void Add(ibv_qp_type type) {
    ibv_qp_init_attr init = {};
    init.send_cq = cq_;
    init.recv_cq = cq_;
    init.qp_type = type;
    init.cap.max_send_wr = 16;
    init.cap.max_recv_wr = 256;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    ibv_qp* qp = ibv_create_qp(pd_, &init);
    if (qp) targets_.push_back({qp, static_cast<uint32_t>(rng_() & 0xffffff)});
  }

  // RESET -> INIT -> RTR -> RTS, then receives.
  bool Up(Target& t) {
    ibv_qp_attr a = {};
    a.qp_state = IBV_QPS_RESET;
    ibv_modify_qp(t.qp, &a, IBV_QP_STATE);
    a = {};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
    if (t.qp->qp_type == IBV_QPT_UD) {
      a.qkey = kQkey;
      mask |= IBV_QP_QKEY;
    } else {
      a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
                          (t.qp->qp_type == IBV_QPT_RC ? IBV_ACCESS_REMOTE_READ |
                                                             IBV_ACCESS_REMOTE_ATOMIC
                                                       : 0);
      mask |= IBV_QP_ACCESS_FLAGS;
    }
    if (ibv_modify_qp(t.qp, &a, mask)) return false;
    a = {};
    a.qp_state = IBV_QPS_RTR;
    mask = IBV_QP_STATE;
    if (t.qp->qp_type != IBV_QPT_UD) {
      a.path_mtu = IBV_MTU_1024;
      a.dest_qp_num = 0x100 + t.qp->qp_num;
      a.rq_psn = t.rq_psn;
      a.ah_attr.is_global = 1;
      a.ah_attr.grh.sgid_index = gid_index_;
      a.ah_attr.grh.hop_limit = 64;
      std::memcpy(a.ah_attr.grh.dgid.raw, src_.gid.data(), 16);
      a.ah_attr.port_num = 1;
      mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
      if (t.qp->qp_type == IBV_QPT_RC) {
        a.max_dest_rd_atomic = 4;
        a.min_rnr_timer = 1;
        mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
      }
    }
    if (ibv_modify_qp(t.qp, &a, mask)) return false;
    a = {};
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 0;
    mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
    if (t.qp->qp_type == IBV_QPT_RC) {
      a.timeout = 10;
      a.retry_cnt = 1;
      a.rnr_retry = 1;
      a.max_rd_atomic = 4;
      mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
    }
    if (ibv_modify_qp(t.qp, &a, mask)) return false;
    for (int i = 0; i < 128; i++) Recv(t.qp, i);
    return true;
  }

  void Recv(ibv_qp* qp, int i) {
    // Receive buffers share the region; the fuzzer never reads them.
    ibv_sge sge = {(uintptr_t)buf_.data() + (i % 8) * 4096, 4096, mr_->lkey};
    ibv_recv_wr wr = {}, *bad;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_post_recv(qp, &wr, &bad);
  }

  void Maintain() {
    ibv_wc wc[64];
    int n;
    while ((n = ibv_poll_cq(cq_, 64, wc)) > 0) {
      cqes_ += n;
      for (int i = 0; i < n; i++)
        for (auto& t : targets_)
          if (t.qp->qp_num == wc[i].qp_num && wc[i].status == IBV_WC_SUCCESS &&
              (wc[i].opcode & IBV_WC_RECV))
            Recv(t.qp, i);
    }
    for (auto& t : targets_) {
      ibv_qp_attr a;
      ibv_qp_init_attr init;
      if (ibv_query_qp(t.qp, &a, IBV_QP_STATE, &init) == 0 && a.qp_state == IBV_QPS_ERR) {
        // Flushed completions first, so the CQ cannot overflow.
        while ((n = ibv_poll_cq(cq_, 64, wc)) > 0) cqes_ += n;
        if (Up(t)) recovered_++;
      }
    }
  }

  uint32_t Pick(std::initializer_list<uint32_t> v) {
    return *(v.begin() + rng_() % v.size());
  }

  // A structured packet, mutated, with its IP and UDP headers and ICRC.
  std::vector<uint8_t> Build() {
    static const uint8_t kOps[] = {
        // RC
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d,
        0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17,
        // UC
        0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b,
        // UD, CNP, and opcodes no transport has
        0x64, 0x65, 0x81, 0x15, 0x18, 0x1f, 0x2c, 0x40, 0x66, 0xa0, 0xc0, 0xff};
    uint8_t op = kOps[rng_() % sizeof(kOps)];
    const Target* t = targets_.empty() ? nullptr : &targets_[rng_() % targets_.size()];
    uint32_t qpn;
    switch (rng_() % 10) {
      case 0: qpn = 1; break;
      case 1: qpn = rng_() & 0xffffff; break;
      case 2: qpn = 0xffffff; break;
      default: qpn = t ? t->qp->qp_num : 2;
    }
    uint32_t psn = t ? t->rq_psn : 0;
    switch (rng_() % 4) {
      case 0: psn = rng_() & 0xffffff; break;
      case 1: psn = (psn + (rng_() % 64) - 32) & 0xffffff; break;
      default: psn = (psn + rng_() % 4) & 0xffffff;
    }
    // Mostly within the MTU (a full MTU now and then: MIDDLE packets), a
    // few over it.
    size_t paylen = rng_() % 3 == 0 ? 0 : rng_() % (mtu_ + 1);
    if (rng_() % 4 == 0) paylen = mtu_;
    if (rng_() % 16 == 0) paylen = mtu_ + 1 + rng_() % 64;
    if (rng_() % 2) paylen = std::min<size_t>(paylen, 64);
    // FIRST and MIDDLE packets carry a whole MTU, LAST at least a byte.
    uint8_t c = op & 0x1f;
    bool mid = (op & 0xe0) <= 0x20 && (c == 0x00 || c == 0x01 || c == 0x06 || c == 0x07 ||
                                       (op == 0x0d || op == 0x0e));
    bool last = (op & 0xe0) <= 0x20 && (c == 0x02 || c == 0x03 || c == 0x08 || c == 0x09 ||
                                        op == 0x0f || op == 0x16);
    if (mid && rng_() % 8) paylen = mtu_;
    if (last && !paylen && rng_() % 8) paylen = 1 + rng_() % mtu_;
    // Requests and acknowledgements that carry no payload, mostly without.
    if ((op == 0x0c || op == 0x11 || op == 0x12 || op == 0x13 || op == 0x14) && rng_() % 8)
      paylen = 0;

    std::vector<uint8_t> b(12, 0);
    uint8_t pad = (4 - paylen % 4) % 4;
    b[0] = op;
    b[1] = static_cast<uint8_t>((rng_() % 8 == 0 ? 0x80 : 0) | (pad << 4));  // SE, pad, TVer 0
    b[2] = b[3] = 0xff;                                                       // P_Key
    b[5] = qpn >> 16;
    b[6] = qpn >> 8;
    b[7] = qpn;
    b[8] = rng_() % 2 ? 0x80 : 0;  // AckReq
    b[9] = psn >> 16;
    b[10] = psn >> 8;
    b[11] = psn;
    uint32_t ext = ExtOf(op);
    auto put32 = [&](uint32_t v) {
      for (int sh = 24; sh >= 0; sh -= 8) b.push_back(static_cast<uint8_t>(v >> sh));
    };
    auto put64 = [&](uint64_t v) {
      put32(v >> 32);
      put32(static_cast<uint32_t>(v));
    };
    uint64_t base = (uintptr_t)buf_.data();
    uint64_t va = Pick({0, 1, 2, 3}) == 0 ? rng_() : base + (rng_() % (buf_.size() + 64));
    if (rng_() % 8 == 0) va = ~0ull - rng_() % 4096;
    uint32_t rkey = rng_() % 4 ? mr_->rkey : static_cast<uint32_t>(rng_());
    uint32_t len = rng_() % 4 ? static_cast<uint32_t>(paylen) :
                                Pick({0u, 1u, 0x7fffffffu, 0x80000000u, 0xffffffffu,
                                      static_cast<uint32_t>(rng_())});
    if (ext & kDeth) {
      put32(rng_() % 4 ? kQkey : (rng_() % 2 ? 0x80010000u : static_cast<uint32_t>(rng_())));
      put32(rng_() & 0xffffff);
    }
    if (ext & kReth) {
      put64(va);
      put32(rkey);
      put32(len);
    }
    if (ext & kAtomic) {
      put64(rng_() % 4 ? va & ~7ull : va);
      put32(rkey);
      put64(rng_());
      put64(rng_());
    }
    if (ext & kAeth) put32((Pick({0x00u, 0x20u, 0x60u, 0x61u, 0x62u, 0x63u, 0x64u,
                                  static_cast<uint32_t>(rng_() & 0xff)}) << 24) |
                           (rng_() & 0xffffff));
    if (ext & kAtmAck) put64(rng_());
    if (ext & kImm) put32(static_cast<uint32_t>(rng_()));
    if (ext & kIeth) put32(rng_() % 2 ? mr_->rkey : static_cast<uint32_t>(rng_()));
    for (size_t i = 0; i < paylen + pad; i++) b.push_back(static_cast<uint8_t>(rng_()));

    Mutate(b);
    per_op_[b.empty() ? 0 : b[0]]++;

    RoceHeaderFields f = {};
    f.src_gid = src_.gid.data();
    f.dst_gid = dst_.gid.data();
    f.v6 = dst_.v6;
    f.sport = static_cast<uint16_t>(49152 + rng_() % 16384);
    // DSCP and ECN, or IPv6's traffic class and flow label, now and then
    // (the ICRC masks them); a random IPv4 identification.
    if (rng_() % 4 == 0) {
      f.tos = static_cast<uint8_t>(rng_());
      f.flow = static_cast<uint32_t>(rng_());
    }
    f.id = static_cast<uint16_t>(rng_());
    if (rng_() % 10 == 0) {
      f.icrc_xor = 1u << (rng_() % 32);
      bad_icrc_++;
    }
    std::vector<uint8_t> p = RoceDatagram(f, b);
    return p;
  }

  // Half the packets go as built (deep paths); the others get one to
  // three mutations of the transport bytes.
  void Mutate(std::vector<uint8_t>& b) {
    int n = rng_() % 2 ? 0 : 1 + rng_() % 3;
    for (int k = 0; k < n && !b.empty(); k++) {
      switch (rng_() % 9) {
        case 0:  // a random byte anywhere
          b[rng_() % b.size()] = static_cast<uint8_t>(rng_());
          break;
        case 1:  // a bit in the headers
          b[rng_() % std::min<size_t>(b.size(), 48)] ^= 1u << (rng_() % 8);
          break;
        case 2:  // truncated, maybe inside the BTH
          b.resize(rng_() % (b.size() + 1));
          break;
        case 3:  // extended with junk
          for (int i = rng_() % 40; i > 0; i--) b.push_back(static_cast<uint8_t>(rng_()));
          break;
        case 4:  // pad count
          if (b.size() > 1) b[1] = (b[1] & ~0x30) | ((rng_() % 4) << 4);
          break;
        case 5:  // TVer
          if (b.size() > 1) b[1] = (b[1] & ~0x0f) | (1 + rng_() % 15);
          break;
        case 6:  // opcode
          b[0] = static_cast<uint8_t>(rng_());
          break;
        case 7:  // P_Key
          if (b.size() > 3) {
            b[2] = static_cast<uint8_t>(rng_());
            b[3] = static_cast<uint8_t>(rng_());
          }
          break;
        default:  // a 32-bit field after the BTH set to an extreme
          if (b.size() >= 16) {
            size_t at = 12 + 4 * (rng_() % ((b.size() - 12) / 4));
            uint32_t v = Pick({0u, 0xffffffffu, 0x80000000u, 0x7fffffffu});
            std::memcpy(&b[at], &v, 4);
          }
      }
    }
  }

  Addr src_, dst_;
  std::mt19937_64 rng_;
  std::string dev_name_;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_mr* mr_ = nullptr;
  std::vector<uint8_t> buf_;
  std::vector<Target> targets_;
  int gid_index_ = 0;
  uint32_t mtu_ = 1024;
  int sock_ = -1;
  uint64_t sent_ = 0, bad_icrc_ = 0, cqes_ = 0, recovered_ = 0;
  std::map<uint8_t, uint64_t> per_op_;
};

void Usage() {
  std::fprintf(stderr,
               "usage: srdma_fuzz --dev DEV --dst IP --src IP [--packets N] [--seed S]\n"
               "  (both addresses IPv4, or both IPv6)\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string dev, src, dst;
  uint64_t packets = 100000, seed = 1;
  static const option opts[] = {{"dev", required_argument, nullptr, 'd'},
                                {"src", required_argument, nullptr, 's'},
                                {"dst", required_argument, nullptr, 't'},
                                {"packets", required_argument, nullptr, 'n'},
                                {"seed", required_argument, nullptr, 'r'},
                                {nullptr, 0, nullptr, 0}};
  for (int c; (c = getopt_long(argc, argv, "", opts, nullptr)) != -1;) {
    switch (c) {
      case 'd': dev = optarg; break;
      case 's': src = optarg; break;
      case 't': dst = optarg; break;
      case 'n': packets = std::strtoull(optarg, nullptr, 0); break;
      case 'r': seed = std::strtoull(optarg, nullptr, 0); break;
      default: Usage(); return 2;
    }
  }
  Addr s, d;
  if (dev.empty() || !s.Parse(src) || !d.Parse(dst) || s.v6 != d.v6) {
    Usage();
    return 2;
  }
  Fuzzer f(dev, s, d, seed);
  if (!f.Open() || !f.Run(packets)) return 1;
  f.Report();
  return 0;
}
