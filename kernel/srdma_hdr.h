/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 transport headers as they are on the wire, and the helpers that
 * read and write them.
 *
 * A RoCEv2 packet is an IBA transport packet (IBTA vol. 1 chapter 9) carried
 * in UDP (IBTA vol. 1 Annex A17):
 *
 *   Ethernet | IPv4/IPv6 | UDP (dport 4791) | BTH | [extended headers]
 *            | payload | pad (0-3 bytes) | ICRC (4 bytes)
 *
 * The BTH (IBTA 9.2) is always 12 bytes. Which extended headers (IBTA 9.3)
 * follow it, in which order, and whether a payload may follow them, depends
 * only on BTH:OpCode; srdma_opcode() returns that from the one per-opcode
 * table in srdma_opcode.c. The ICRC (srdma_icrc.c) covers the IP and UDP
 * headers with their variant fields masked, the whole BTH except byte 4, and
 * everything up to itself.
 *
 * The structs below describe the bytes exactly. All of them are __packed:
 * they are read straight out of received frames, where the BTH sits at
 * whatever offset Ethernet, IP and UDP leave it (42 bytes into a frame on
 * an architecture with NET_IP_ALIGN 0), so no member may be assumed to be
 * naturally aligned. Multi-bit fields that do not fill a byte are reached
 * through the GENMASK()s next to each struct and FIELD_GET()/FIELD_PREP()
 * on the CPU-order value.
 *
 * The parser, srdma_pkt_parse(), turns a received packet into a struct
 * srdma_pkt of CPU-order fields; srdma_pkt_build_hdrs() writes the headers
 * of a packet to send from the same struct.
 */
#ifndef SRDMA_HDR_H
#define SRDMA_HDR_H

#include <linux/bitfield.h>
#include <linux/bitops.h>
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/types.h>

struct sk_buff;

/* IANA-assigned UDP destination port of RoCEv2 (Annex A17). */
#define SRDMA_UDP_PORT		4791

/* The ICRC trails every packet (Annex A17.3.3). */
#define SRDMA_ICRC_SIZE		4

/* --- IBTA 9.2: Base Transport Header --- */

/**
 * struct srdma_bth - Base Transport Header, IBTA 9.2
 * @opcode: OpCode (9.2.1); bits [7:5] the transport, [4:0] the operation
 * @flags: SE (9.2.3), MigReq (9.2.4), PadCnt (9.2.5), TVer (9.2.6)
 * @pkey: P_Key (9.2.7)
 * @qpn: resv8a (F/B/Resv6 of 9.2.9-9.2.11 on IB, all reserved and masked
 *	out of the ICRC on RoCEv2) and DestQP (9.2.8)
 * @apsn: AckReq (9.2.12), Resv7 (9.2.13) and PSN (9.2.14)
 */
struct srdma_bth {
	u8 opcode;
	u8 flags;
	__be16 pkey;
	__be32 qpn;
	__be32 apsn;
} __packed;

#define SRDMA_BTH_LEN		12
static_assert(sizeof(struct srdma_bth) == SRDMA_BTH_LEN);

/* srdma_bth.flags */
#define SRDMA_BTH_SE		BIT(7)
#define SRDMA_BTH_MIG		BIT(6)
#define SRDMA_BTH_PAD		GENMASK(5, 4)
#define SRDMA_BTH_TVER		GENMASK(3, 0)
/* be32_to_cpu(srdma_bth.qpn) */
#define SRDMA_BTH_RESV8A	GENMASK(31, 24)
#define SRDMA_BTH_QPN		GENMASK(23, 0)
/* be32_to_cpu(srdma_bth.apsn) */
#define SRDMA_BTH_ACKREQ	BIT(31)
#define SRDMA_BTH_RESV7		GENMASK(30, 24)
#define SRDMA_BTH_PSN		GENMASK(23, 0)

/* The only transport version there is (9.2.6, C9-5). */
#define SRDMA_TVER		0

/* Offset of resv8a in the BTH, the byte the ICRC replaces by 0xff. */
#define SRDMA_BTH_RESV8A_OFFSET	4

/* QP numbers are 24 bits; QP1 is the GSI (CM) QP. */
#define SRDMA_QPN_MASK		GENMASK(23, 0)
/* BTH:DestQP of a multicast datagram (IBTA 10.5.2). */
#define SRDMA_MCAST_QPN		0xffffff
#define SRDMA_QPN_GSI		1

/* --- IBTA 9.3: extended transport headers --- */

/**
 * struct srdma_rdeth - Reliable Datagram ETH, IBTA 9.3.1 (RD only; softrdma
 *	does not implement RD, the format is here for completeness)
 * @een: reserved 8 bits and the 24-bit EE context
 */
struct srdma_rdeth {
	__be32 een;
} __packed;

#define SRDMA_RDETH_LEN		4
static_assert(sizeof(struct srdma_rdeth) == SRDMA_RDETH_LEN);
#define SRDMA_RDETH_EEC		GENMASK(23, 0)

/**
 * struct srdma_deth - Datagram ETH, IBTA 9.3.2 (UD)
 * @qkey: Q_Key (9.3.2.1)
 * @sqp: reserved 8 bits (9.3.2.2) and the 24-bit SrcQP (9.3.2.3)
 */
struct srdma_deth {
	__be32 qkey;
	__be32 sqp;
} __packed;

#define SRDMA_DETH_LEN		8
static_assert(sizeof(struct srdma_deth) == SRDMA_DETH_LEN);
#define SRDMA_DETH_SQP		GENMASK(23, 0)

/**
 * struct srdma_reth - RDMA ETH, IBTA 9.3.3
 * @va: virtual address (9.3.3.1)
 * @rkey: R_Key (9.3.3.2)
 * @len: DMA length of the whole RDMA operation (9.3.3.3)
 */
struct srdma_reth {
	__be64 va;
	__be32 rkey;
	__be32 len;
} __packed;

#define SRDMA_RETH_LEN		16
static_assert(sizeof(struct srdma_reth) == SRDMA_RETH_LEN);

/**
 * struct srdma_atmeth - Atomic ETH, IBTA 9.3.4; 28 bytes, so __packed is
 *	needed for the size and not only for the alignment
 * @va: virtual address (9.3.4.1), 8-byte aligned on a valid request
 * @rkey: R_Key (9.3.4.2)
 * @swap_add: swap or add data (9.3.4.3)
 * @compare: compare data (9.3.4.4), used by compare and swap only
 */
struct srdma_atmeth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

#define SRDMA_ATMETH_LEN	28
static_assert(sizeof(struct srdma_atmeth) == SRDMA_ATMETH_LEN);

/**
 * struct srdma_aeth - ACK ETH, IBTA 9.3.5
 * @smsn: Syndrome (9.3.5.1, encoded as in 9.7.5.2) and the 24-bit MSN
 *	(9.3.5.2)
 */
struct srdma_aeth {
	__be32 smsn;
} __packed;

#define SRDMA_AETH_LEN		4
static_assert(sizeof(struct srdma_aeth) == SRDMA_AETH_LEN);
#define SRDMA_AETH_SYNDROME	GENMASK(31, 24)
#define SRDMA_AETH_MSN		GENMASK(23, 0)

/**
 * struct srdma_atmack - Atomic ACK ETH, IBTA 9.3.5.3
 * @orig: original remote data (9.3.5.4), the value before the operation
 */
struct srdma_atmack {
	__be64 orig;
} __packed;

#define SRDMA_ATMACK_LEN	8
static_assert(sizeof(struct srdma_atmack) == SRDMA_ATMACK_LEN);

/**
 * struct srdma_immdt - Immediate data ETH, IBTA 9.3.6
 * @imm: the immediate data, opaque to the transport and kept big-endian
 *	up to the work completion (ib_wc.ex.imm_data is __be32 too)
 */
struct srdma_immdt {
	__be32 imm;
} __packed;

#define SRDMA_IMMDT_LEN		4
static_assert(sizeof(struct srdma_immdt) == SRDMA_IMMDT_LEN);

/**
 * struct srdma_ieth - Invalidate ETH, IBTA 9.3.7
 * @rkey: the R_Key to invalidate (9.3.7.1)
 */
struct srdma_ieth {
	__be32 rkey;
} __packed;

#define SRDMA_IETH_LEN		4
static_assert(sizeof(struct srdma_ieth) == SRDMA_IETH_LEN);

/**
 * struct srdma_xrceth - XRC ETH, IBTA 9.3.8 (not used yet; for XRC later)
 * @srqn: reserved 8 bits (9.3.8.1) and the 24-bit XRC SRQ number (9.3.8.2)
 */
struct srdma_xrceth {
	__be32 srqn;
} __packed;

#define SRDMA_XRCETH_LEN	4
static_assert(sizeof(struct srdma_xrceth) == SRDMA_XRCETH_LEN);
#define SRDMA_XRCETH_SRQN	GENMASK(23, 0)

/* Longest BTH plus extended headers of any supported opcode. */
#define SRDMA_MAX_HDR_LEN	(SRDMA_BTH_LEN + SRDMA_ATMETH_LEN)

/* --- IBTA 9.2.1, Table 38: opcodes --- */

/* BTH:OpCode[7:5], the transport service (C9-38). */
#define SRDMA_OPCODE_TRANSPORT	GENMASK(7, 5)

/**
 * enum srdma_transport - transport service of an opcode, OpCode[7:5]
 * @SRDMA_TRANSPORT_RC: reliable connection
 * @SRDMA_TRANSPORT_UC: unreliable connection
 * @SRDMA_TRANSPORT_RD: reliable datagram (not supported)
 * @SRDMA_TRANSPORT_UD: unreliable datagram
 * @SRDMA_TRANSPORT_CNP: RoCEv2 congestion notification packet (Annex A17)
 * @SRDMA_TRANSPORT_XRC: extended reliable connection (not supported yet)
 */
enum srdma_transport {
	SRDMA_TRANSPORT_RC	= 0x00,
	SRDMA_TRANSPORT_UC	= 0x20,
	SRDMA_TRANSPORT_RD	= 0x40,
	SRDMA_TRANSPORT_UD	= 0x60,
	SRDMA_TRANSPORT_CNP	= 0x80,
	SRDMA_TRANSPORT_XRC	= 0xa0,
};

/**
 * srdma_opcode_transport() - Transport service of an opcode
 * @opcode: BTH:OpCode
 *
 * Return: one of enum srdma_transport, or another multiple of 0x20 for the
 * reserved and manufacturer-specific ranges.
 */
static inline enum srdma_transport srdma_opcode_transport(u8 opcode)
{
	return opcode & SRDMA_OPCODE_TRANSPORT;
}

/*
 * The opcodes softrdma knows, numbered as in IBTA Table 38 (RC and UC share
 * the low five bits of each operation; UD has only the two SEND_ONLYs).
 */
enum srdma_opcode {
	SRDMA_OP_RC_SEND_FIRST			= 0x00,
	SRDMA_OP_RC_SEND_MIDDLE			= 0x01,
	SRDMA_OP_RC_SEND_LAST			= 0x02,
	SRDMA_OP_RC_SEND_LAST_IMM		= 0x03,
	SRDMA_OP_RC_SEND_ONLY			= 0x04,
	SRDMA_OP_RC_SEND_ONLY_IMM		= 0x05,
	SRDMA_OP_RC_WRITE_FIRST			= 0x06,
	SRDMA_OP_RC_WRITE_MIDDLE		= 0x07,
	SRDMA_OP_RC_WRITE_LAST			= 0x08,
	SRDMA_OP_RC_WRITE_LAST_IMM		= 0x09,
	SRDMA_OP_RC_WRITE_ONLY			= 0x0a,
	SRDMA_OP_RC_WRITE_ONLY_IMM		= 0x0b,
	SRDMA_OP_RC_READ_REQ			= 0x0c,
	SRDMA_OP_RC_READ_RESP_FIRST		= 0x0d,
	SRDMA_OP_RC_READ_RESP_MIDDLE		= 0x0e,
	SRDMA_OP_RC_READ_RESP_LAST		= 0x0f,
	SRDMA_OP_RC_READ_RESP_ONLY		= 0x10,
	SRDMA_OP_RC_ACK				= 0x11,
	SRDMA_OP_RC_ATOMIC_ACK			= 0x12,
	SRDMA_OP_RC_CMP_SWAP			= 0x13,
	SRDMA_OP_RC_FETCH_ADD			= 0x14,
	/* 0x15 is reserved for RC (RESYNC exists for RD only) */
	SRDMA_OP_RC_SEND_LAST_INV		= 0x16,
	SRDMA_OP_RC_SEND_ONLY_INV		= 0x17,

	SRDMA_OP_UC_SEND_FIRST			= 0x20,
	SRDMA_OP_UC_SEND_MIDDLE			= 0x21,
	SRDMA_OP_UC_SEND_LAST			= 0x22,
	SRDMA_OP_UC_SEND_LAST_IMM		= 0x23,
	SRDMA_OP_UC_SEND_ONLY			= 0x24,
	SRDMA_OP_UC_SEND_ONLY_IMM		= 0x25,
	SRDMA_OP_UC_WRITE_FIRST			= 0x26,
	SRDMA_OP_UC_WRITE_MIDDLE		= 0x27,
	SRDMA_OP_UC_WRITE_LAST			= 0x28,
	SRDMA_OP_UC_WRITE_LAST_IMM		= 0x29,
	SRDMA_OP_UC_WRITE_ONLY			= 0x2a,
	SRDMA_OP_UC_WRITE_ONLY_IMM		= 0x2b,

	SRDMA_OP_UD_SEND_ONLY			= 0x64,
	SRDMA_OP_UD_SEND_ONLY_IMM		= 0x65,

	/* RoCEv2 CNP (Annex A17); not in the table yet: srdma_opcode() is NULL */
	SRDMA_OP_CNP				= 0x81,
};

/**
 * enum srdma_hdr - extended transport headers, in the order in which they
 *	follow the BTH when several are present (IBTA 9.3, Table 38)
 * @SRDMA_HDR_RDETH: struct srdma_rdeth (RD)
 * @SRDMA_HDR_DETH: struct srdma_deth (UD, RD)
 * @SRDMA_HDR_RETH: struct srdma_reth
 * @SRDMA_HDR_ATMETH: struct srdma_atmeth
 * @SRDMA_HDR_AETH: struct srdma_aeth
 * @SRDMA_HDR_ATMACK: struct srdma_atmack
 * @SRDMA_HDR_IMMDT: struct srdma_immdt
 * @SRDMA_HDR_IETH: struct srdma_ieth
 * @SRDMA_HDR_NUM: number of extended header kinds
 */
enum srdma_hdr {
	SRDMA_HDR_RDETH,
	SRDMA_HDR_DETH,
	SRDMA_HDR_RETH,
	SRDMA_HDR_ATMETH,
	SRDMA_HDR_AETH,
	SRDMA_HDR_ATMACK,
	SRDMA_HDR_IMMDT,
	SRDMA_HDR_IETH,
	SRDMA_HDR_NUM,
};

/*
 * srdma_opcode_info.flags. Position: FIRST starts a message, LAST ends one,
 * an ONLY packet does both; single-packet operations (READ request, atomics,
 * ACKs) are ONLY. Operation: exactly one of SEND..ATOMIC_ACK.
 */
#define SRDMA_OPF_REQ		BIT(0)	/* requester to responder */
#define SRDMA_OPF_RESP		BIT(1)	/* responder to requester */
#define SRDMA_OPF_FIRST		BIT(2)
#define SRDMA_OPF_MIDDLE	BIT(3)
#define SRDMA_OPF_LAST		BIT(4)
#define SRDMA_OPF_ONLY		(SRDMA_OPF_FIRST | SRDMA_OPF_LAST)
#define SRDMA_OPF_PAYLOAD	BIT(5)	/* may carry payload */
#define SRDMA_OPF_SEND		BIT(6)
#define SRDMA_OPF_WRITE		BIT(7)
#define SRDMA_OPF_READ		BIT(8)	/* RDMA READ request */
#define SRDMA_OPF_READ_RESP	BIT(9)
#define SRDMA_OPF_ATOMIC	BIT(10)
#define SRDMA_OPF_ACK		BIT(11)
#define SRDMA_OPF_ATOMIC_ACK	BIT(12)
#define SRDMA_OPF_IMM		BIT(13)	/* completes with immediate data */
#define SRDMA_OPF_INV		BIT(14)	/* invalidates an R_Key */
/* Needs a receive WQE: every SEND packet, a WRITE with immediate's last. */
#define SRDMA_OPF_RWR		BIT(15)

/**
 * struct srdma_opcode_info - what BTH:OpCode says about a packet
 * @name: IBTA name of the opcode, for debug output and tracepoints
 * @flags: SRDMA_OPF_* bits
 * @hdrs: BIT(enum srdma_hdr) of each extended header present
 * @hdr_len: bytes from the start of the BTH to the payload
 * @off: offset from the start of the BTH of each extended header present
 *	(never 0, the BTH is first), 0 for those absent
 */
struct srdma_opcode_info {
	const char *name;
	u32 flags;
	u8 hdrs;
	u8 hdr_len;
	u8 off[SRDMA_HDR_NUM];
};

/**
 * srdma_opcode_has() - Whether packets of an opcode carry a header
 * @info: from srdma_opcode()
 * @hdr: the extended header
 *
 * Return: true when @hdr is present.
 */
static inline bool srdma_opcode_has(const struct srdma_opcode_info *info,
				    enum srdma_hdr hdr)
{
	return info->hdrs & BIT(hdr);
}

/* --- IBTA 9.7.5.2: AETH syndrome --- */

/*
 * The syndrome byte: bit 7 is reserved (C9-119.a1), bits [6:5] say what
 * bits [4:0] hold (Table 46).
 */
#define SRDMA_SYN_RESV		BIT(7)
#define SRDMA_SYN_TYPE		GENMASK(6, 5)
#define SRDMA_SYN_VALUE		GENMASK(4, 0)

/**
 * enum srdma_syn_type - AETH syndrome bits [6:5], IBTA Table 46
 * @SRDMA_SYN_ACK: ACK; value is the credit count code (9.7.5.2.1)
 * @SRDMA_SYN_RNR: RNR NAK; value is the RNR timer code (9.7.5.2.8)
 * @SRDMA_SYN_RESERVED: reserved
 * @SRDMA_SYN_NAK: NAK; value is enum srdma_nak_code (9.7.5.2.2)
 */
enum srdma_syn_type {
	SRDMA_SYN_ACK		= 0,
	SRDMA_SYN_RNR		= 1,
	SRDMA_SYN_RESERVED	= 2,
	SRDMA_SYN_NAK		= 3,
};

/**
 * enum srdma_nak_code - NAK codes, IBTA Table 47; 5-31 are reserved
 * @SRDMA_NAK_PSN_SEQ: PSN sequence error (9.7.5.2.3)
 * @SRDMA_NAK_INVALID_REQ: invalid request (9.7.5.2.5)
 * @SRDMA_NAK_REMOTE_ACCESS: remote access error (9.7.5.2.4)
 * @SRDMA_NAK_REMOTE_OP: remote operational error (9.7.5.2.6)
 * @SRDMA_NAK_INVALID_RD_REQ: invalid RD request (9.7.5.2.7)
 */
enum srdma_nak_code {
	SRDMA_NAK_PSN_SEQ		= 0,
	SRDMA_NAK_INVALID_REQ		= 1,
	SRDMA_NAK_REMOTE_ACCESS		= 2,
	SRDMA_NAK_REMOTE_OP		= 3,
	SRDMA_NAK_INVALID_RD_REQ	= 4,
};

/* Credit code meaning "no credit information" (9.7.5.2.1). */
#define SRDMA_CREDITS_INVALID	0x1f

/**
 * srdma_syn() - Build an AETH syndrome
 * @type: what the syndrome says
 * @value: credit code, RNR timer code or NAK code, 5 bits
 *
 * Return: the syndrome byte, with the reserved msb clear (C9-119.a1).
 */
static inline u8 srdma_syn(enum srdma_syn_type type, u8 value)
{
	return FIELD_PREP(SRDMA_SYN_TYPE, type) |
	       FIELD_PREP(SRDMA_SYN_VALUE, value & SRDMA_SYN_VALUE);
}

/**
 * srdma_syn_type() - What an AETH syndrome says
 * @syndrome: the syndrome byte
 *
 * Return: bits [6:5] as enum srdma_syn_type.
 */
static inline enum srdma_syn_type srdma_syn_type(u8 syndrome)
{
	return FIELD_GET(SRDMA_SYN_TYPE, syndrome);
}

/**
 * srdma_syn_value() - Credit, timer or NAK code of an AETH syndrome
 * @syndrome: the syndrome byte
 *
 * Return: bits [4:0].
 */
static inline u8 srdma_syn_value(u8 syndrome)
{
	return FIELD_GET(SRDMA_SYN_VALUE, syndrome);
}

/* --- IBTA 9.7.1, 9.7.4: 24-bit PSN arithmetic --- */

#define SRDMA_PSN_MASK		GENMASK(23, 0)

/* PSNs a requester may have outstanding, half the PSN space (C9-61). */
#define SRDMA_PSN_WINDOW	BIT(23)

/**
 * srdma_psn_add() - Advance a PSN
 * @psn: a 24-bit PSN
 * @n: how many PSNs to advance by
 *
 * Return: (@psn + @n) modulo 2^24.
 */
static inline u32 srdma_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SRDMA_PSN_MASK;
}

/**
 * srdma_psn_diff() - Signed distance from one PSN to another
 * @a: a 24-bit PSN
 * @b: a 24-bit PSN
 *
 * PSNs are compared in a window of half the PSN space (IBTA 9.7.1, C9-61;
 * 9.7.4.1.2 and 9.7.6.1 split it into a valid and an invalid half): @a is
 * after @b when it lies less than 2^23 PSNs ahead of it modulo 2^24. The
 * point exactly 2^23 away is on neither side; it comes out as -2^23, "before",
 * from both ends. The requester keeps one PSN fewer outstanding than C9-61
 * allows, so that it never separates its oldest unacknowledged PSN from its
 * next one (srdma_req_read_room()).
 *
 * Return: @a - @b as a sign-extended 24-bit value, in [-2^23, 2^23 - 1].
 */
static inline s32 srdma_psn_diff(u32 a, u32 b)
{
	return sign_extend32(a - b, 23);
}

/**
 * srdma_psn_before() - Whether a PSN comes before another
 * @a: a 24-bit PSN
 * @b: a 24-bit PSN
 *
 * Return: true when @a is logically less than @b (see srdma_psn_diff()).
 */
static inline bool srdma_psn_before(u32 a, u32 b)
{
	return srdma_psn_diff(a, b) < 0;
}

/**
 * srdma_psn_after() - Whether a PSN comes after another
 * @a: a 24-bit PSN
 * @b: a 24-bit PSN
 *
 * Return: true when @a is logically greater than @b (see srdma_psn_diff()).
 */
static inline bool srdma_psn_after(u32 a, u32 b)
{
	return srdma_psn_diff(a, b) > 0;
}

/* --- Timers --- */

/**
 * srdma_ack_timeout_ns() - Local ACK timeout of an RC QP
 * @timeout: the 5-bit Local ACK Timeout attribute (IBTA 9.7.6.1.3,
 *	ib_qp_attr.timeout)
 *
 * The timeout is 4.096 us * 2^@timeout; 0 disables the timer (an infinite
 * timeout). Bits above the five the attribute has are ignored.
 *
 * Return: the timeout in nanoseconds, exact, or 0 for no timeout.
 */
static inline u64 srdma_ack_timeout_ns(u8 timeout)
{
	timeout &= 0x1f;
	return timeout ? 4096ULL << timeout : 0;
}

/* --- srdma_opcode.c --- */

/**
 * enum srdma_drop - Why a received packet was dropped
 * @SRDMA_DROP_NONE: not dropped
 * @SRDMA_DROP_TOO_SHORT: no room for a BTH and an ICRC
 * @SRDMA_DROP_BAD_TVER: BTH:TVer is not 0 (9.6.1.1.1, C9-36)
 * @SRDMA_DROP_BAD_OPCODE: reserved, manufacturer-specific or unsupported
 *	opcode (RD, XRC, CNP for now) of another transport than RC
 * @SRDMA_DROP_BAD_LENGTH: length not a multiple of 4 (9.2.5); payload on an
 *	opcode that has none, or an empty FIRST, MIDDLE or LAST (C9-69..71),
 *	other than in an RC request
 * @SRDMA_DROP_TRUNCATED: no room for the extended headers of the opcode
 *	and the ICRC
 * @SRDMA_DROP_BAD_PAD: PadCnt larger than the payload, or not 0 on a packet
 *	that does not end a message with payload (9.2.5), other than in an RC
 *	request
 * @SRDMA_DROP_BAD_AETH: reserved AETH syndrome or NAK code (C9-120, C9-135)
 * @SRDMA_DROP_INVALID_REQ: not a drop by itself: an RC request with a
 *	reserved or unsupported opcode (C9-84), pad on a FIRST or MIDDLE
 *	packet (C9-85), or a payload its opcode does not allow (C9-92). Once
 *	the packet passes the checks that need a QP and its ICRC, the
 *	responder answers it with NAK invalid request (C9-93); until then it
 *	is dropped like the others. Only the BTH fields of the packet are
 *	valid, and @info may be NULL.
 * @SRDMA_DROP_BAD_ICRC: ICRC mismatch (Annex A17.3.3); not set by
 *	srdma_pkt_parse(), for the receive path to count srdma_icrc_verify()
 * @SRDMA_DROP_MAX: number of reasons
 */
enum srdma_drop {
	SRDMA_DROP_NONE,
	SRDMA_DROP_TOO_SHORT,
	SRDMA_DROP_BAD_TVER,
	SRDMA_DROP_BAD_OPCODE,
	SRDMA_DROP_BAD_LENGTH,
	SRDMA_DROP_TRUNCATED,
	SRDMA_DROP_BAD_PAD,
	SRDMA_DROP_BAD_AETH,
	SRDMA_DROP_INVALID_REQ,
	SRDMA_DROP_BAD_ICRC,
	SRDMA_DROP_MAX,
};

/**
 * struct srdma_pkt - a transport packet, decoded (receive) or to be built
 *	(send); all fields in CPU order except @imm
 * @info: srdma_opcode(@opcode); NULL for a reserved RC opcode (@invalid_req)
 * @invalid_req: an RC request the parser found invalid
 *	(SRDMA_DROP_INVALID_REQ); only the BTH fields are valid
 * @opcode: BTH:OpCode
 * @pad: BTH:PadCnt, bytes of pad between payload and ICRC
 * @se: BTH:SE, solicited event
 * @migreq: BTH:MigReq
 * @ackreq: BTH:AckReq
 * @pkey: BTH:P_Key
 * @qpn: BTH:DestQP
 * @psn: BTH:PSN
 * @hdr_len: @info->hdr_len, offset of the payload from the BTH
 * @paylen: bytes of payload, without pad and ICRC
 * @reth: RETH, when @info has it
 * @reth.va: RETH:VA
 * @reth.rkey: RETH:R_Key
 * @reth.len: RETH:DMALen
 * @atmeth: AtomicETH, when @info has it
 * @atmeth.va: AtomicETH:VA
 * @atmeth.rkey: AtomicETH:R_Key
 * @atmeth.swap_add: AtomicETH:SwapDt (compare and swap) or AddDt (fetch
 *	and add)
 * @atmeth.compare: AtomicETH:CmpDt
 * @aeth: AETH, when @info has it
 * @aeth.syndrome: AETH:Syndrome, see srdma_syn_type()
 * @aeth.msn: AETH:MSN
 * @atmack_orig: AtomicAckETH:OrigRemDt
 * @imm: ImmDt, big-endian as on the wire and in struct ib_wc
 * @ieth_rkey: IETH:R_Key
 * @deth: DETH, when @info has it
 * @deth.qkey: DETH:Q_Key
 * @deth.src_qp: DETH:SrcQP
 */
struct srdma_pkt {
	const struct srdma_opcode_info *info;
	bool invalid_req;
	u8 opcode;
	u8 pad;
	bool se;
	bool migreq;
	bool ackreq;
	u16 pkey;
	u32 qpn;
	u32 psn;
	u32 hdr_len;
	u32 paylen;
	struct {
		u64 va;
		u32 rkey;
		u32 len;
	} reth;
	struct {
		u64 va;
		u32 rkey;
		u64 swap_add;
		u64 compare;
	} atmeth;
	struct {
		u8 syndrome;
		u32 msn;
	} aeth;
	u64 atmack_orig;
	__be32 imm;
	u32 ieth_rkey;
	struct {
		u32 qkey;
		u32 src_qp;
	} deth;
};

const struct srdma_opcode_info *srdma_opcode(u8 opcode);
unsigned int srdma_pkt_hdr_len(u8 opcode);
enum srdma_drop srdma_pkt_parse(const struct sk_buff *skb,
				struct srdma_pkt *pkt);
void *srdma_pkt_build_hdrs(void *buf, const struct srdma_pkt *pkt);
const char *srdma_drop_name(enum srdma_drop reason);
u32 srdma_rnr_timer_usecs(u8 code);
u32 srdma_aeth_credits(u8 code);
u8 srdma_aeth_credit_code(u32 credits);

/* --- srdma_icrc.c --- */

/* crc32_le(~0, 8 bytes of 0xff): the CRC after the masked LRH (A17.3.3). */
#define SRDMA_ICRC_SEED		0xdebb20e3

int srdma_icrc(struct sk_buff *skb, unsigned int bth_off, unsigned int len,
	       u32 *icrc);
int srdma_icrc_verify(struct sk_buff *skb);
int srdma_icrc_fill(struct sk_buff *skb);

#endif /* SRDMA_HDR_H */
