// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// RoCEv2 wire facts for the userspace tools, written from the IBTA
// specification (volume 1 chapter 9 and Annex A17) independently of the
// kernel module, so that the tools check the module rather than repeat it:
// the ICRC, the Internet checksum and the extended headers of each opcode.

#ifndef SRDMA_TOOLS_ROCE_WIRE_H
#define SRDMA_TOOLS_ROCE_WIRE_H

#include <arpa/inet.h>
#include <endian.h>
#include <netinet/in.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace srdma_wire {

constexpr uint16_t kRoceV2Port = 4791;

// CRC-32 of Ethernet (reflected 0xedb88320), without the final complement.
inline uint32_t Crc32(uint32_t crc, const uint8_t* p, size_t n) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  for (size_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

// ICRC of a RoCEv2 packet (IBTA Annex A17.3.3): @pkt is the whole
// datagram from the IP header (@iplen bytes: 20 for IPv4, 40 for IPv6) to
// the last byte before the ICRC. The fields routers may change are masked
// with ones: TOS, TTL and header checksum of IPv4; traffic class, flow
// label and hop limit of IPv6; the UDP checksum; the BTH's resv8a.
inline uint32_t Icrc(const std::vector<uint8_t>& pkt, size_t iplen) {
  std::vector<uint8_t> m(8 + pkt.size(), 0xff);
  std::memcpy(m.data() + 8, pkt.data(), pkt.size());
  uint8_t* ip = m.data() + 8;
  if (iplen == 20) {
    ip[1] = 0xff;
    ip[8] = 0xff;
    ip[10] = ip[11] = 0xff;
  } else {
    ip[0] |= 0x0f;
    ip[1] = ip[2] = ip[3] = 0xff;
    ip[7] = 0xff;
  }
  ip[iplen + 6] = ip[iplen + 7] = 0xff;
  if (pkt.size() > iplen + 8 + 4) ip[iplen + 8 + 4] = 0xff;
  return ~Crc32(0xffffffffu, m.data(), m.size());
}

// The Internet checksum of @n bytes, folded from @sum.
inline uint16_t InetChecksum(const uint8_t* p, size_t n, uint32_t sum = 0) {
  for (size_t i = 0; i + 1 < n; i += 2) sum += (p[i] << 8) | p[i + 1];
  if (n % 2) sum += p[n - 1] << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return htons(static_cast<uint16_t>(~sum));
}

// Extended headers of an opcode (IBTA 9.2, Table 38), in order.
enum Ext : uint32_t {
  kRdeth = 1, kDeth = 2, kReth = 4, kAtomic = 8, kAeth = 16, kAtmAck = 32, kImm = 64,
  kIeth = 128,
};

inline uint32_t ExtOf(uint8_t op) {
  uint8_t t = op & 0xe0, c = op & 0x1f;
  if (op == 0x81) return 0;  // CNP: 16 reserved bytes, treated as payload
  if (t == 0x60) return c == 0x05 ? (kDeth | kImm) : kDeth;  // UD
  switch (c) {
    case 0x03: case 0x05: case 0x09: return kImm;
    case 0x06: case 0x0a: return kReth;
    case 0x0b: return kReth | kImm;
    case 0x0c: return kReth;                                 // READ request
    case 0x0d: case 0x0f: case 0x10: case 0x11: return kAeth;  // responses, ACK
    case 0x12: return kAeth | kAtmAck;
    case 0x13: case 0x14: return kAtomic;
    case 0x16: case 0x17: return kIeth;
    default: return 0;
  }
}

// Bytes of the extended headers @ext (a set of Ext bits).
inline size_t ExtLen(uint32_t ext) {
  size_t n = 0;
  if (ext & kRdeth) n += 4;
  if (ext & kDeth) n += 8;
  if (ext & kReth) n += 16;
  if (ext & kAtomic) n += 28;
  if (ext & kAeth) n += 4;
  if (ext & kAtmAck) n += 8;
  if (ext & kImm) n += 4;
  if (ext & kIeth) n += 4;
  return n;
}

// Where a datagram goes: @gid is the IPv6 address, or the IPv4-mapped GID
// of an IPv4 address (::ffff:a.b.c.d).
struct RoceHeaderFields {
  const uint8_t* src_gid;
  const uint8_t* dst_gid;
  bool v6;
  uint16_t sport;
  uint8_t tos;         // IPv4 TOS; IPv6 traffic class (the ICRC masks both)
  uint32_t flow;       // IPv6 flow label (masked too)
  uint16_t id;         // IPv4 identification
  uint32_t icrc_xor;   // flipped bits of the ICRC, to send a bad one
};

// A RoCEv2 datagram from the IP header on, for a raw socket (IP_HDRINCL,
// or IPPROTO_RAW for IPv6): IPv4 with DF and TTL 64 and no UDP checksum,
// as RoCEv2 allows, or IPv6 with hop limit 64 and the UDP checksum IPv6
// requires; then UDP to port 4791, @transport (the BTH up to the ICRC),
// and the ICRC.
inline std::vector<uint8_t> RoceDatagram(const RoceHeaderFields& f,
                                         const std::vector<uint8_t>& transport) {
  const size_t iplen = f.v6 ? 40 : 20;
  const size_t udplen = 8 + transport.size() + 4;
  const size_t total = iplen + udplen;
  std::vector<uint8_t> p(total - 4, 0);
  if (f.v6) {
    uint32_t vtf = (6u << 28) | (uint32_t(f.tos) << 20) | (f.flow & 0xfffff);
    for (int i = 0; i < 4; i++) p[i] = static_cast<uint8_t>(vtf >> (24 - 8 * i));
    p[4] = udplen >> 8;
    p[5] = udplen & 0xff;
    p[6] = IPPROTO_UDP;
    p[7] = 64;
    std::memcpy(&p[8], f.src_gid, 16);
    std::memcpy(&p[24], f.dst_gid, 16);
  } else {
    p[0] = 0x45;
    p[1] = f.tos;
    p[2] = total >> 8;
    p[3] = total & 0xff;
    p[4] = f.id >> 8;
    p[5] = f.id & 0xff;
    p[6] = 0x40;
    p[8] = 64;
    p[9] = IPPROTO_UDP;
    std::memcpy(&p[12], f.src_gid + 12, 4);
    std::memcpy(&p[16], f.dst_gid + 12, 4);
    uint16_t sum = InetChecksum(p.data(), 20);
    std::memcpy(&p[10], &sum, 2);
  }
  uint8_t* udp = &p[iplen];
  uint16_t sport = htons(f.sport), dport = htons(kRoceV2Port);
  uint16_t ulen = htons(static_cast<uint16_t>(udplen));
  std::memcpy(udp, &sport, 2);
  std::memcpy(udp + 2, &dport, 2);
  std::memcpy(udp + 4, &ulen, 2);
  if (!transport.empty()) std::memcpy(udp + 8, transport.data(), transport.size());
  uint32_t icrc = htole32(Icrc(p, iplen) ^ f.icrc_xor);
  p.resize(total);
  std::memcpy(&p[total - 4], &icrc, 4);
  udp = &p[iplen];
  if (f.v6) {
    // The pseudo-header (RFC 8200 8.1): addresses, length, next header.
    uint32_t sum = udplen + IPPROTO_UDP;
    for (size_t i = 8; i < 40; i += 2) sum += (p[i] << 8) | p[i + 1];
    uint16_t c = InetChecksum(udp, udplen, sum);
    if (!c) c = 0xffff;
    std::memcpy(udp + 6, &c, 2);
  }
  return p;
}

}  // namespace srdma_wire

#endif  // SRDMA_TOOLS_ROCE_WIRE_H
