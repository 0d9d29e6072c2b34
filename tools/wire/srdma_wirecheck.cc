// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// srdma_wirecheck: check the RoCEv2 packets of a capture against the wire
// rules, independently of the code that built them.
//
//   srdma_wirecheck [--expect OP,...] [--expect-aeth SYN,...] [--expect-credits]
//                   FILE.pcap
//
// FILE is a classic pcap file (dumpcap -P, tshark -F pcap) of Ethernet
// frames. Every IPv4 or IPv6 datagram to UDP port 4791 in it is checked:
//
//   IP        IPv4: version, no options, header checksum, total length;
//             IPv6: payload length; both: UDP as the next protocol
//   UDP       length equals the IP payload; checksum valid (IPv6: present,
//             RFC 8200 8.1; IPv4: zero or valid); source port not zero
//   BTH       a known opcode, TVer 0, the default P_Key, pad 0..3; the
//             datagram holds BTH, the opcode's extended headers (IBTA 9.2,
//             Table 38), pad and ICRC, and the BTH-to-ICRC length is a
//             multiple of 4 (9.3.1)
//   payload   none where the opcode carries none (ACK, READ request,
//             atomics, atomic ACK); FIRST and MIDDLE packets fill a path
//             MTU (256..4096) without pad (9.7.5.1.3)
//   AETH      a defined syndrome: ACK, RNR NAK, or NAK codes 0 to 4 (9.4.1)
//   ICRC      over the masked pseudo-header (Annex A17.3.3)
//
// --expect lists opcodes (hex, as 0x0a) that must appear at least once,
// --expect-aeth AETH syndromes: 0x00 any ACK, 0x20 any RNR NAK, 0x60 to
// 0x64 a NAK of that code; --expect-credits at least one ACK syndrome
// with an end-to-end credit count, not the "invalid" code 0x1f (9.7.7.2).
// Prints the count of each opcode seen and every violation (the first 50
// in full); exit status 0 when there is at least one packet and no
// violation, 1 otherwise, 2 when the file cannot be read.

#include <arpa/inet.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "roce_wire.h"

namespace {

using namespace srdma_wire;

constexpr uint32_t kPcapMagic = 0xa1b2c3d4, kPcapMagicNs = 0xa1b23c4d;
constexpr uint32_t kLinkEthernet = 1;
constexpr size_t kBth = 12, kIcrc = 4;

// The opcodes of IBTA 9.2 Table 38 for RC, UC and UD, and the RoCEv2 CNP.
bool KnownOpcode(uint8_t op) {
  uint8_t t = op & 0xe0, c = op & 0x1f;
  switch (t) {
    case 0x00:  // RC
      return c <= 0x14 || c == 0x16 || c == 0x17;
    case 0x20:  // UC
      return c <= 0x0b;
    case 0x60:  // UD
      return c == 0x04 || c == 0x05;
    case 0x80:
      return op == 0x81;  // CNP (Annex A17.9.3)
    default:
      return false;
  }
}

// FIRST and MIDDLE packets of SEND, WRITE and READ responses.
bool FillsMtu(uint8_t op) {
  uint8_t c = op & 0x1f;
  if (op == 0x81 || (op & 0xe0) == 0x60) return false;
  return c == 0x00 || c == 0x01 || c == 0x06 || c == 0x07 ||
         ((op & 0xe0) == 0x00 && (c == 0x0d || c == 0x0e));
}

// ACK, READ request, atomics and atomic ACK carry no payload.
bool NoPayload(uint8_t op) {
  if ((op & 0xe0) != 0x00) return false;
  uint8_t c = op & 0x1f;
  return c == 0x0c || c == 0x11 || c == 0x12 || c == 0x13 || c == 0x14;
}

bool AethSyndromeOk(uint8_t syn) {
  switch (syn >> 5) {
    case 0:  // ACK, with a credit count
    case 1:  // RNR NAK, with a timer
      return true;
    case 3:  // NAK: PSN sequence, invalid request, remote access,
             // remote operational, invalid RD request
      return (syn & 0x1f) <= 4;
    default:
      return false;
  }
}

uint16_t Be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

class Checker {
 public:
  void Packet(size_t index, const uint8_t* frame, size_t caplen) {
    index_ = index;
    if (caplen < 14) return;
    uint16_t type = Be16(frame + 12);
    if (type == 0x0800)
      Ip4(frame + 14, caplen - 14);
    else if (type == 0x86dd)
      Ip6(frame + 14, caplen - 14);
  }

  int Report(const std::set<int>& expect, const std::set<int>& expect_aeth,
             bool expect_credits) {
    std::printf("%zu RoCEv2 packets, %zu violations\n", packets_, errors_);
    for (auto& [op, n] : seen_) std::printf("  opcode 0x%02x: %zu\n", op, n);
    for (auto& [syn, n] : aeth_) std::printf("  AETH syndrome 0x%02x: %zu\n", syn, n);
    std::printf("  ACK syndromes with a credit count: %zu\n", credits_);
    int rc = packets_ && !errors_ ? 0 : 1;
    if (expect_credits && !credits_) {
      std::printf("expected an ACK syndrome with a credit count, saw none\n");
      rc = 1;
    }
    for (int op : expect) {
      if (!seen_.count(op)) {
        std::printf("expected opcode 0x%02x was not seen\n", op);
        rc = 1;
      }
    }
    for (int syn : expect_aeth) {
      if (!aeth_.count(syn)) {
        std::printf("expected AETH syndrome 0x%02x was not seen\n", syn);
        rc = 1;
      }
    }
    return rc;
  }

 private:
  template <typename... Args>
  void Fail(const char* fmt, Args... args) {
    if (errors_++ < 50) {
      std::printf("packet %zu: ", index_);
      std::printf(fmt, args...);
      std::printf("\n");
    }
  }

  void Ip4(const uint8_t* ip, size_t len) {
    if (len < 20 || ip[9] != IPPROTO_UDP) return;
    size_t tot = Be16(ip + 2);
    if (len < 28 || Be16(ip + 20 + 2) != kRoceV2Port) return;
    packets_++;
    if ((ip[0] >> 4) != 4 || (ip[0] & 0x0f) != 5) return Fail("IPv4 version/IHL %#x", ip[0]);
    if (InetChecksum(ip, 20) != 0) return Fail("IPv4 header checksum");
    if (tot < 28 || tot > len) return Fail("IPv4 total length %zu of %zu", tot, len);
    if (Be16(ip + 6) & 0x3fff) return Fail("IPv4 fragment");
    const uint8_t* udp = ip + 20;
    size_t ulen = tot - 20;
    uint16_t csum = Be16(udp + 6);
    if (csum && UdpChecksum(ip + 12, 8, udp, ulen, 4) != 0) return Fail("IPv4 UDP checksum");
    Udp(ip, 20, udp, ulen);
  }

  void Ip6(const uint8_t* ip, size_t len) {
    if (len < 48 || ip[6] != IPPROTO_UDP || Be16(ip + 40 + 2) != kRoceV2Port) return;
    packets_++;
    size_t plen = Be16(ip + 4);
    if (plen < 8 || 40 + plen > len) return Fail("IPv6 payload length %zu of %zu", plen, len);
    const uint8_t* udp = ip + 40;
    if (Be16(udp + 6) == 0) return Fail("IPv6 UDP checksum missing");
    if (UdpChecksum(ip + 8, 32, udp, plen, 6) != 0) return Fail("IPv6 UDP checksum");
    Udp(ip, 40, udp, plen);
  }

  // The Internet checksum over the pseudo-header (addresses, protocol,
  // length) and the datagram; 0 when the datagram's checksum is right.
  static uint16_t UdpChecksum(const uint8_t* addrs, size_t alen, const uint8_t* udp, size_t ulen,
                              int v) {
    uint32_t sum = 0;
    for (size_t i = 0; i < alen; i += 2) sum += Be16(addrs + i);
    sum += IPPROTO_UDP;
    sum += static_cast<uint32_t>(ulen & 0xffff);
    if (v == 6) sum += static_cast<uint32_t>(ulen >> 16);
    return InetChecksum(udp, ulen, sum);
  }

  void Udp(const uint8_t* ip, size_t iplen, const uint8_t* udp, size_t ulen) {
    if (Be16(udp + 4) != ulen) return Fail("UDP length %u, IP says %zu", Be16(udp + 4), ulen);
    if (Be16(udp) == 0) return Fail("UDP source port 0");
    const uint8_t* bth = udp + 8;
    size_t blen = ulen - 8;  // BTH to ICRC inclusive
    if (blen < kBth + kIcrc) return Fail("%zu bytes after UDP: no room for BTH and ICRC", blen);
    uint8_t op = bth[0];
    seen_[op]++;
    if (!KnownOpcode(op)) return Fail("unknown opcode 0x%02x", op);
    unsigned pad = (bth[1] >> 4) & 3, tver = bth[1] & 0x0f;
    if (tver) return Fail("opcode 0x%02x: TVer %u", op, tver);
    if (Be16(bth + 2) != 0xffff) return Fail("opcode 0x%02x: P_Key %#x", op, Be16(bth + 2));
    if (blen % 4) return Fail("opcode 0x%02x: BTH to ICRC is %zu bytes, not a multiple of 4", op,
                              blen);
    size_t hdr = kBth + (op == 0x81 ? 0 : ExtLen(ExtOf(op)));
    if (blen < hdr + pad + kIcrc)
      return Fail("opcode 0x%02x: %zu bytes, headers %zu pad %u", op, blen, hdr, pad);
    size_t payload = blen - hdr - kIcrc - pad;
    if (NoPayload(op) && (payload || pad))
      Fail("opcode 0x%02x: %zu payload bytes, pad %u where none belong", op, payload, pad);
    if (FillsMtu(op) && (pad || payload < 256 || payload > 4096 || (payload & (payload - 1))))
      Fail("opcode 0x%02x: FIRST/MIDDLE with %zu bytes, pad %u (not a path MTU)", op, payload,
           pad);
    if (ExtOf(op) & kAeth) {
      uint8_t syn = bth[kBth];
      if (!AethSyndromeOk(syn)) Fail("opcode 0x%02x: AETH syndrome %#x", op, syn);
      // ACKs and RNR NAKs by class; NAKs by code.
      aeth_[(syn >> 5) == 3 ? syn : syn & 0xe0]++;
      if ((syn >> 5) == 0 && (syn & 0x1f) != 0x1f) credits_++;
    }
    std::vector<uint8_t> pkt(ip, ip + iplen + ulen - kIcrc);
    uint32_t want = Icrc(pkt, iplen), got;
    std::memcpy(&got, ip + iplen + ulen - kIcrc, 4);
    if (le32toh(got) != want)
      Fail("opcode 0x%02x PSN %u: ICRC %08x, computed %08x", op,
           (bth[9] << 16) | (bth[10] << 8) | bth[11], le32toh(got), want);
  }

  size_t index_ = 0, packets_ = 0, errors_ = 0, credits_ = 0;
  std::map<int, size_t> seen_, aeth_;
};

std::set<int> ParseList(const char* arg) {
  std::set<int> out;
  std::stringstream ss(arg);
  std::string v;
  while (std::getline(ss, v, ',')) out.insert(static_cast<int>(std::strtol(v.c_str(), nullptr, 0)));
  return out;
}

int Usage(const char* prog) {
  std::fprintf(stderr,
               "usage: %s [--expect OP,...] [--expect-aeth SYN,...] [--expect-credits] "
               "FILE.pcap\n",
               prog);
  return 2;
}

uint32_t Swap32(uint32_t v) { return __builtin_bswap32(v); }

}  // namespace

int main(int argc, char** argv) {
  std::set<int> expect, expect_aeth;
  bool expect_credits = false;
  const char* file = nullptr;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--expect" && i + 1 < argc)
      expect = ParseList(argv[++i]);
    else if (a == "--expect-aeth" && i + 1 < argc)
      expect_aeth = ParseList(argv[++i]);
    else if (a == "--expect-credits")
      expect_credits = true;
    else if (!file && a[0] != '-')
      file = argv[i];
    else
      return Usage(argv[0]);
  }
  if (!file) return Usage(argv[0]);
  std::ifstream in(file, std::ios::binary);
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    std::fprintf(stderr, "%s: %s\n", file, std::strerror(errno));
    return 2;
  }
  if (data.size() < 24) {
    std::fprintf(stderr, "%s: not a pcap file\n", file);
    return 2;
  }
  uint32_t magic, link;
  std::memcpy(&magic, data.data(), 4);
  std::memcpy(&link, data.data() + 20, 4);
  bool swap = magic == Swap32(kPcapMagic) || magic == Swap32(kPcapMagicNs);
  if (!swap && magic != kPcapMagic && magic != kPcapMagicNs) {
    std::fprintf(stderr, "%s: not a classic pcap file (magic %08x)\n", file, magic);
    return 2;
  }
  if ((swap ? Swap32(link) : link) != kLinkEthernet) {
    std::fprintf(stderr, "%s: link type %u, not Ethernet\n", file, swap ? Swap32(link) : link);
    return 2;
  }
  Checker c;
  size_t off = 24, n = 0;
  while (off + 16 <= data.size()) {
    uint32_t incl;
    std::memcpy(&incl, data.data() + off + 8, 4);
    if (swap) incl = Swap32(incl);
    off += 16;
    if (incl > data.size() - off) {
      std::fprintf(stderr, "%s: record %zu truncated\n", file, n + 1);
      return 2;
    }
    c.Packet(++n, data.data() + off, incl);
    off += incl;
  }
  return c.Report(expect, expect_aeth, expect_credits);
}
