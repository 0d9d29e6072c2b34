// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// RoCEv2 wire facts for the userspace tools, written from the IBTA
// specification (volume 1 chapter 9 and Annex A17) independently of the
// kernel module, so that the tools check the module rather than repeat it:
// the ICRC, the Internet checksum and the extended headers of each opcode.

#ifndef SRDMA_TOOLS_ROCE_WIRE_H
#define SRDMA_TOOLS_ROCE_WIRE_H

#include <arpa/inet.h>

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

}  // namespace srdma_wire

#endif  // SRDMA_TOOLS_ROCE_WIRE_H
