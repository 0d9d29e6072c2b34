// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The per-opcode table of the transport (IBTA 9.2.1, Table 38), the parser
 * of received transport headers and the builder of headers to send, and the
 * small tables of AETH encodings (IBTA 9.7.5.2).
 *
 * Everything here is a pure function of its arguments: no locks, no state,
 * callable from any context. srdma_hdr_kunit.c tests it.
 */

#include <linux/kernel.h>
#include <linux/skbuff.h>

#include "srdma_hdr.h"

/*
 * Header layouts. Each sets, together and once, the header bits, the header
 * length and the offset of each extended header, so that the three cannot
 * disagree; extended headers follow the BTH in enum srdma_hdr order.
 */
#define SRDMA_HDRS_NONE							\
	.hdr_len = SRDMA_BTH_LEN

#define SRDMA_HDRS_IMMDT						\
	.hdrs = BIT(SRDMA_HDR_IMMDT),					\
	.hdr_len = SRDMA_BTH_LEN + SRDMA_IMMDT_LEN,			\
	.off = { [SRDMA_HDR_IMMDT] = SRDMA_BTH_LEN }

#define SRDMA_HDRS_IETH							\
	.hdrs = BIT(SRDMA_HDR_IETH),					\
	.hdr_len = SRDMA_BTH_LEN + SRDMA_IETH_LEN,			\
	.off = { [SRDMA_HDR_IETH] = SRDMA_BTH_LEN }

#define SRDMA_HDRS_RETH							\
	.hdrs = BIT(SRDMA_HDR_RETH),					\
	.hdr_len = SRDMA_BTH_LEN + SRDMA_RETH_LEN,			\
	.off = { [SRDMA_HDR_RETH] = SRDMA_BTH_LEN }

#define SRDMA_HDRS_RETH_IMMDT						\
	.hdrs = BIT(SRDMA_HDR_RETH) | BIT(SRDMA_HDR_IMMDT),		\
	.hdr_len = SRDMA_BTH_LEN + SRDMA_RETH_LEN + SRDMA_IMMDT_LEN,	\
	.off = { [SRDMA_HDR_RETH] = SRDMA_BTH_LEN,			\
		 [SRDMA_HDR_IMMDT] = SRDMA_BTH_LEN + SRDMA_RETH_LEN }

#define SRDMA_HDRS_ATMETH						\
	.hdrs = BIT(SRDMA_HDR_ATMETH),					\
	.hdr_len = SRDMA_BTH_LEN + SRDMA_ATMETH_LEN,			\
	.off = { [SRDMA_HDR_ATMETH] = SRDMA_BTH_LEN }

#define SRDMA_HDRS_AETH							\
	.hdrs = BIT(SRDMA_HDR_AETH),					\
	.hdr_len = SRDMA_BTH_LEN + SRDMA_AETH_LEN,			\
	.off = { [SRDMA_HDR_AETH] = SRDMA_BTH_LEN }

#define SRDMA_HDRS_AETH_ATMACK						\
	.hdrs = BIT(SRDMA_HDR_AETH) | BIT(SRDMA_HDR_ATMACK),		\
	.hdr_len = SRDMA_BTH_LEN + SRDMA_AETH_LEN + SRDMA_ATMACK_LEN,	\
	.off = { [SRDMA_HDR_AETH] = SRDMA_BTH_LEN,			\
		 [SRDMA_HDR_ATMACK] = SRDMA_BTH_LEN + SRDMA_AETH_LEN }

#define SRDMA_HDRS_DETH							\
	.hdrs = BIT(SRDMA_HDR_DETH),					\
	.hdr_len = SRDMA_BTH_LEN + SRDMA_DETH_LEN,			\
	.off = { [SRDMA_HDR_DETH] = SRDMA_BTH_LEN }

#define SRDMA_HDRS_DETH_IMMDT						\
	.hdrs = BIT(SRDMA_HDR_DETH) | BIT(SRDMA_HDR_IMMDT),		\
	.hdr_len = SRDMA_BTH_LEN + SRDMA_DETH_LEN + SRDMA_IMMDT_LEN,	\
	.off = { [SRDMA_HDR_DETH] = SRDMA_BTH_LEN,			\
		 [SRDMA_HDR_IMMDT] = SRDMA_BTH_LEN + SRDMA_DETH_LEN }

/* Flags shared by every packet of an operation. */
#define SRDMA_F_SEND	(SRDMA_OPF_REQ | SRDMA_OPF_SEND | SRDMA_OPF_PAYLOAD | \
			 SRDMA_OPF_RWR)
#define SRDMA_F_WRITE	(SRDMA_OPF_REQ | SRDMA_OPF_WRITE | SRDMA_OPF_PAYLOAD)
#define SRDMA_F_WRITE_IMM (SRDMA_F_WRITE | SRDMA_OPF_IMM | SRDMA_OPF_RWR)
#define SRDMA_F_RRESP	(SRDMA_OPF_RESP | SRDMA_OPF_READ_RESP | \
			 SRDMA_OPF_PAYLOAD)

/*
 * IBTA Table 38. RC and UC share the operations 0x00-0x0b; UD has the two
 * SEND_ONLYs with a DETH. Opcodes not listed (reserved, RD, XRC, CNP,
 * manufacturer-specific) are unknown to softrdma: srdma_opcode() returns
 * NULL for them, and the parser reads no field behind the BTH of such a
 * packet. It drops them, but for RC ones, invalid requests (C9-84).
 */
static const struct srdma_opcode_info srdma_opcodes[256] = {
	/* Reliable Connection */
	[SRDMA_OP_RC_SEND_FIRST] = {
		.name = "RC_SEND_FIRST",
		.flags = SRDMA_F_SEND | SRDMA_OPF_FIRST,
		SRDMA_HDRS_NONE,
	},
	[SRDMA_OP_RC_SEND_MIDDLE] = {
		.name = "RC_SEND_MIDDLE",
		.flags = SRDMA_F_SEND | SRDMA_OPF_MIDDLE,
		SRDMA_HDRS_NONE,
	},
	[SRDMA_OP_RC_SEND_LAST] = {
		.name = "RC_SEND_LAST",
		.flags = SRDMA_F_SEND | SRDMA_OPF_LAST,
		SRDMA_HDRS_NONE,
	},
	[SRDMA_OP_RC_SEND_LAST_IMM] = {
		.name = "RC_SEND_LAST_WITH_IMMEDIATE",
		.flags = SRDMA_F_SEND | SRDMA_OPF_LAST | SRDMA_OPF_IMM,
		SRDMA_HDRS_IMMDT,
	},
	[SRDMA_OP_RC_SEND_ONLY] = {
		.name = "RC_SEND_ONLY",
		.flags = SRDMA_F_SEND | SRDMA_OPF_ONLY,
		SRDMA_HDRS_NONE,
	},
	[SRDMA_OP_RC_SEND_ONLY_IMM] = {
		.name = "RC_SEND_ONLY_WITH_IMMEDIATE",
		.flags = SRDMA_F_SEND | SRDMA_OPF_ONLY | SRDMA_OPF_IMM,
		SRDMA_HDRS_IMMDT,
	},
	[SRDMA_OP_RC_WRITE_FIRST] = {
		.name = "RC_RDMA_WRITE_FIRST",
		.flags = SRDMA_F_WRITE | SRDMA_OPF_FIRST,
		SRDMA_HDRS_RETH,
	},
	[SRDMA_OP_RC_WRITE_MIDDLE] = {
		.name = "RC_RDMA_WRITE_MIDDLE",
		.flags = SRDMA_F_WRITE | SRDMA_OPF_MIDDLE,
		SRDMA_HDRS_NONE,
	},
	[SRDMA_OP_RC_WRITE_LAST] = {
		.name = "RC_RDMA_WRITE_LAST",
		.flags = SRDMA_F_WRITE | SRDMA_OPF_LAST,
		SRDMA_HDRS_NONE,
	},
	[SRDMA_OP_RC_WRITE_LAST_IMM] = {
		.name = "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
		.flags = SRDMA_F_WRITE_IMM | SRDMA_OPF_LAST,
		SRDMA_HDRS_IMMDT,
	},
	[SRDMA_OP_RC_WRITE_ONLY] = {
		.name = "RC_RDMA_WRITE_ONLY",
		.flags = SRDMA_F_WRITE | SRDMA_OPF_ONLY,
		SRDMA_HDRS_RETH,
	},
	[SRDMA_OP_RC_WRITE_ONLY_IMM] = {
		.name = "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
		.flags = SRDMA_F_WRITE_IMM | SRDMA_OPF_ONLY,
		SRDMA_HDRS_RETH_IMMDT,
	},
	[SRDMA_OP_RC_READ_REQ] = {
		.name = "RC_RDMA_READ_REQUEST",
		.flags = SRDMA_OPF_REQ | SRDMA_OPF_READ | SRDMA_OPF_ONLY,
		SRDMA_HDRS_RETH,
	},
	/* 9.7.5.1.9: AETH on the first and last response, not the middle */
	[SRDMA_OP_RC_READ_RESP_FIRST] = {
		.name = "RC_RDMA_READ_RESPONSE_FIRST",
		.flags = SRDMA_F_RRESP | SRDMA_OPF_FIRST,
		SRDMA_HDRS_AETH,
	},
	[SRDMA_OP_RC_READ_RESP_MIDDLE] = {
		.name = "RC_RDMA_READ_RESPONSE_MIDDLE",
		.flags = SRDMA_F_RRESP | SRDMA_OPF_MIDDLE,
		SRDMA_HDRS_NONE,
	},
	[SRDMA_OP_RC_READ_RESP_LAST] = {
		.name = "RC_RDMA_READ_RESPONSE_LAST",
		.flags = SRDMA_F_RRESP | SRDMA_OPF_LAST,
		SRDMA_HDRS_AETH,
	},
	[SRDMA_OP_RC_READ_RESP_ONLY] = {
		.name = "RC_RDMA_READ_RESPONSE_ONLY",
		.flags = SRDMA_F_RRESP | SRDMA_OPF_ONLY,
		SRDMA_HDRS_AETH,
	},
	[SRDMA_OP_RC_ACK] = {
		.name = "RC_ACKNOWLEDGE",
		.flags = SRDMA_OPF_RESP | SRDMA_OPF_ACK | SRDMA_OPF_ONLY,
		SRDMA_HDRS_AETH,
	},
	[SRDMA_OP_RC_ATOMIC_ACK] = {
		.name = "RC_ATOMIC_ACKNOWLEDGE",
		.flags = SRDMA_OPF_RESP | SRDMA_OPF_ATOMIC_ACK | SRDMA_OPF_ONLY,
		SRDMA_HDRS_AETH_ATMACK,
	},
	[SRDMA_OP_RC_CMP_SWAP] = {
		.name = "RC_COMPARE_SWAP",
		.flags = SRDMA_OPF_REQ | SRDMA_OPF_ATOMIC | SRDMA_OPF_ONLY,
		SRDMA_HDRS_ATMETH,
	},
	[SRDMA_OP_RC_FETCH_ADD] = {
		.name = "RC_FETCH_ADD",
		.flags = SRDMA_OPF_REQ | SRDMA_OPF_ATOMIC | SRDMA_OPF_ONLY,
		SRDMA_HDRS_ATMETH,
	},
	/* 9.4.1.1: SEND with Invalidate, RC (and XRC) only */
	[SRDMA_OP_RC_SEND_LAST_INV] = {
		.name = "RC_SEND_LAST_WITH_INVALIDATE",
		.flags = SRDMA_F_SEND | SRDMA_OPF_LAST | SRDMA_OPF_INV,
		SRDMA_HDRS_IETH,
	},
	[SRDMA_OP_RC_SEND_ONLY_INV] = {
		.name = "RC_SEND_ONLY_WITH_INVALIDATE",
		.flags = SRDMA_F_SEND | SRDMA_OPF_ONLY | SRDMA_OPF_INV,
		SRDMA_HDRS_IETH,
	},

	/* Unreliable Connection: SEND and RDMA WRITE only (9.8.2) */
	[SRDMA_OP_UC_SEND_FIRST] = {
		.name = "UC_SEND_FIRST",
		.flags = SRDMA_F_SEND | SRDMA_OPF_FIRST,
		SRDMA_HDRS_NONE,
	},
	[SRDMA_OP_UC_SEND_MIDDLE] = {
		.name = "UC_SEND_MIDDLE",
		.flags = SRDMA_F_SEND | SRDMA_OPF_MIDDLE,
		SRDMA_HDRS_NONE,
	},
	[SRDMA_OP_UC_SEND_LAST] = {
		.name = "UC_SEND_LAST",
		.flags = SRDMA_F_SEND | SRDMA_OPF_LAST,
		SRDMA_HDRS_NONE,
	},
	[SRDMA_OP_UC_SEND_LAST_IMM] = {
		.name = "UC_SEND_LAST_WITH_IMMEDIATE",
		.flags = SRDMA_F_SEND | SRDMA_OPF_LAST | SRDMA_OPF_IMM,
		SRDMA_HDRS_IMMDT,
	},
	[SRDMA_OP_UC_SEND_ONLY] = {
		.name = "UC_SEND_ONLY",
		.flags = SRDMA_F_SEND | SRDMA_OPF_ONLY,
		SRDMA_HDRS_NONE,
	},
	[SRDMA_OP_UC_SEND_ONLY_IMM] = {
		.name = "UC_SEND_ONLY_WITH_IMMEDIATE",
		.flags = SRDMA_F_SEND | SRDMA_OPF_ONLY | SRDMA_OPF_IMM,
		SRDMA_HDRS_IMMDT,
	},
	[SRDMA_OP_UC_WRITE_FIRST] = {
		.name = "UC_RDMA_WRITE_FIRST",
		.flags = SRDMA_F_WRITE | SRDMA_OPF_FIRST,
		SRDMA_HDRS_RETH,
	},
	[SRDMA_OP_UC_WRITE_MIDDLE] = {
		.name = "UC_RDMA_WRITE_MIDDLE",
		.flags = SRDMA_F_WRITE | SRDMA_OPF_MIDDLE,
		SRDMA_HDRS_NONE,
	},
	[SRDMA_OP_UC_WRITE_LAST] = {
		.name = "UC_RDMA_WRITE_LAST",
		.flags = SRDMA_F_WRITE | SRDMA_OPF_LAST,
		SRDMA_HDRS_NONE,
	},
	[SRDMA_OP_UC_WRITE_LAST_IMM] = {
		.name = "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
		.flags = SRDMA_F_WRITE_IMM | SRDMA_OPF_LAST,
		SRDMA_HDRS_IMMDT,
	},
	[SRDMA_OP_UC_WRITE_ONLY] = {
		.name = "UC_RDMA_WRITE_ONLY",
		.flags = SRDMA_F_WRITE | SRDMA_OPF_ONLY,
		SRDMA_HDRS_RETH,
	},
	[SRDMA_OP_UC_WRITE_ONLY_IMM] = {
		.name = "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
		.flags = SRDMA_F_WRITE_IMM | SRDMA_OPF_ONLY,
		SRDMA_HDRS_RETH_IMMDT,
	},

	/* Unreliable Datagram: single-packet SENDs (9.8.3) */
	[SRDMA_OP_UD_SEND_ONLY] = {
		.name = "UD_SEND_ONLY",
		.flags = SRDMA_F_SEND | SRDMA_OPF_ONLY,
		SRDMA_HDRS_DETH,
	},
	[SRDMA_OP_UD_SEND_ONLY_IMM] = {
		.name = "UD_SEND_ONLY_WITH_IMMEDIATE",
		.flags = SRDMA_F_SEND | SRDMA_OPF_ONLY | SRDMA_OPF_IMM,
		SRDMA_HDRS_DETH_IMMDT,
	},
};

/**
 * srdma_opcode() - Look up what an opcode means
 * @opcode: BTH:OpCode
 *
 * Context: any.
 * Return: the table entry, or NULL for an opcode softrdma does not
 * support (reserved, RD, XRC, CNP, manufacturer-specific).
 */
const struct srdma_opcode_info *srdma_opcode(u8 opcode)
{
	const struct srdma_opcode_info *info = &srdma_opcodes[opcode];

	return info->name ? info : NULL;
}

/**
 * srdma_pkt_hdr_len() - Bytes of transport headers of an opcode
 * @opcode: BTH:OpCode
 *
 * For a receive path that wants the headers linear before it looks at them
 * (pskb_may_pull(skb, srdma_pkt_hdr_len(op))); srdma_pkt_parse() itself
 * does not need that.
 *
 * Context: any.
 * Return: the BTH and extended headers' length, or 0 for an unknown opcode.
 */
unsigned int srdma_pkt_hdr_len(u8 opcode)
{
	const struct srdma_opcode_info *info = srdma_opcode(opcode);

	return info ? info->hdr_len : 0;
}

/* --- Receive: parser --- */

/*
 * Payload and pad of a packet whose headers fit. @room is what lies between
 * the headers and the ICRC. Only checks that need no QP context are made
 * here; the path MTU checks of C9-69..C9-71 and C9-92 are the requester's
 * and responder's, which know the MTU.
 */
static enum srdma_drop srdma_parse_payload(const struct srdma_opcode_info *info,
					   unsigned int room, unsigned int pad,
					   u32 *paylen)
{
	bool payload = info->flags & SRDMA_OPF_PAYLOAD;

	/*
	 * 9.2.5: the pad stretches the payload to a multiple of 4 bytes. A
	 * FIRST or MIDDLE packet is a whole PMTU, already a multiple of 4
	 * (C9-69), so only a payload that ends a message can need pad.
	 */
	if (pad && (!payload || !(info->flags & SRDMA_OPF_LAST)))
		return SRDMA_DROP_BAD_PAD;
	if (pad > room)
		return SRDMA_DROP_BAD_PAD;
	/* Table 38: READ requests, atomics and ACKs end with their headers. */
	if (!payload && room)
		return SRDMA_DROP_BAD_LENGTH;
	*paylen = room - pad;
	/*
	 * C9-70: only an ONLY packet may be empty; C9-69 and C9-71 want at
	 * least one byte in FIRST, MIDDLE and LAST. No conforming requester
	 * (or responder, for READ responses) sends them empty.
	 */
	if (payload && !*paylen &&
	    (info->flags & SRDMA_OPF_ONLY) != SRDMA_OPF_ONLY)
		return SRDMA_DROP_BAD_LENGTH;
	return SRDMA_DROP_NONE;
}

/*
 * C9-120, C9-135: a reserved syndrome or NAK code is silently dropped. A
 * READ response or an atomic ACK answers its request (9.7.5.1.9, and for
 * both 9.7.5.1: a valid response has a well-formed AETH): it carries an
 * ACK; one with an RNR or NAK syndrome is malformed, and dropped as well,
 * never placed.
 */
static bool srdma_aeth_valid(u8 opcode, u8 syndrome)
{
	if (syndrome & SRDMA_SYN_RESV)
		return false;
	switch (srdma_syn_type(syndrome)) {
	case SRDMA_SYN_ACK:
		return true;
	case SRDMA_SYN_RNR:
		return opcode == SRDMA_OP_RC_ACK;
	case SRDMA_SYN_NAK:
		return opcode == SRDMA_OP_RC_ACK &&
		       srdma_syn_value(syndrome) <= SRDMA_NAK_INVALID_RD_REQ;
	default:
		return false;
	}
}

static void srdma_parse_bth(const struct srdma_bth *bth, struct srdma_pkt *pkt)
{
	u32 qpn = be32_to_cpu(bth->qpn);
	u32 apsn = be32_to_cpu(bth->apsn);

	pkt->opcode = bth->opcode;
	pkt->se = bth->flags & SRDMA_BTH_SE;
	pkt->migreq = bth->flags & SRDMA_BTH_MIG;
	pkt->pad = FIELD_GET(SRDMA_BTH_PAD, bth->flags);
	pkt->pkey = be16_to_cpu(bth->pkey);
	/* resv8a and Resv7 are ignored on receipt (C9-6, C9-7) */
	pkt->qpn = FIELD_GET(SRDMA_BTH_QPN, qpn);
	pkt->ackreq = apsn & SRDMA_BTH_ACKREQ;
	pkt->psn = FIELD_GET(SRDMA_BTH_PSN, apsn);
}

/* Extended header @h of a packet whose headers start at @hdr. */
static void *srdma_ext(const void *hdr, const struct srdma_opcode_info *info,
		       enum srdma_hdr h)
{
	return (void *)hdr + info->off[h];
}

/* Extended headers, each at the offset the table gives for the opcode. */
static void srdma_parse_ext(const u8 *hdr, const struct srdma_opcode_info *info,
			    struct srdma_pkt *pkt)
{
	if (srdma_opcode_has(info, SRDMA_HDR_DETH)) {
		const struct srdma_deth *deth =
			srdma_ext(hdr, info, SRDMA_HDR_DETH);

		pkt->deth.qkey = be32_to_cpu(deth->qkey);
		pkt->deth.src_qp = FIELD_GET(SRDMA_DETH_SQP,
					     be32_to_cpu(deth->sqp));
	}
	if (srdma_opcode_has(info, SRDMA_HDR_RETH)) {
		const struct srdma_reth *reth =
			srdma_ext(hdr, info, SRDMA_HDR_RETH);

		pkt->reth.va = be64_to_cpu(reth->va);
		pkt->reth.rkey = be32_to_cpu(reth->rkey);
		pkt->reth.len = be32_to_cpu(reth->len);
	}
	if (srdma_opcode_has(info, SRDMA_HDR_ATMETH)) {
		const struct srdma_atmeth *atm =
			srdma_ext(hdr, info, SRDMA_HDR_ATMETH);

		pkt->atmeth.va = be64_to_cpu(atm->va);
		pkt->atmeth.rkey = be32_to_cpu(atm->rkey);
		pkt->atmeth.swap_add = be64_to_cpu(atm->swap_add);
		pkt->atmeth.compare = be64_to_cpu(atm->compare);
	}
	if (srdma_opcode_has(info, SRDMA_HDR_AETH)) {
		const struct srdma_aeth *aeth =
			srdma_ext(hdr, info, SRDMA_HDR_AETH);
		u32 smsn = be32_to_cpu(aeth->smsn);

		pkt->aeth.syndrome = FIELD_GET(SRDMA_AETH_SYNDROME, smsn);
		pkt->aeth.msn = FIELD_GET(SRDMA_AETH_MSN, smsn);
	}
	if (srdma_opcode_has(info, SRDMA_HDR_ATMACK)) {
		const struct srdma_atmack *ack =
			srdma_ext(hdr, info, SRDMA_HDR_ATMACK);

		pkt->atmack_orig = be64_to_cpu(ack->orig);
	}
	if (srdma_opcode_has(info, SRDMA_HDR_IMMDT)) {
		const struct srdma_immdt *immdt =
			srdma_ext(hdr, info, SRDMA_HDR_IMMDT);

		pkt->imm = immdt->imm;
	}
	if (srdma_opcode_has(info, SRDMA_HDR_IETH)) {
		const struct srdma_ieth *ieth =
			srdma_ext(hdr, info, SRDMA_HDR_IETH);

		pkt->ieth_rkey = be32_to_cpu(ieth->rkey);
	}
}

/**
 * srdma_pkt_parse() - Validate and decode the transport headers of a packet
 * @skb: the packet; skb->data at the BTH, skb->len covering BTH to ICRC
 *	inclusive. It may be non-linear and nothing needs to have been pulled:
 *	the headers are read with skb_header_pointer(), which copies them
 *	out of the fragments only when they are not in the linear part.
 * @pkt: filled in; every field is written, extended header fields of
 *	headers the opcode does not have are zeroed
 *
 * The header checks of IBTA 9.6 that depend on nothing but the packet, in
 * this order, each before any field it guards is used (see enum
 * srdma_drop for the IBTA reference of each):
 *
 *  1. skb->len holds a BTH and an ICRC: only then is the BTH read;
 *  2. BTH:TVer is 0: any other version gives every other field, OpCode
 *     included, an unknown meaning (9.2.6);
 *  3. skb->len is a multiple of 4 (9.2.5);
 *  4. BTH:OpCode is in the table: only then are header lengths known (an
 *     unknown opcode must not be used to index anything); skb->len holds
 *     the opcode's extended headers and the ICRC: only then are they read;
 *  5. PadCnt and payload length agree with the opcode (9.2.5, C9-69..71);
 *  6. an AETH syndrome is not a reserved code (C9-120, C9-135), and is
 *     an ACK in a READ response or an atomic ACK (9.7.5.1).
 *
 * An RC request that fails 4 for its opcode alone, or 5, is not dropped
 * here but returned as SRDMA_DROP_INVALID_REQ with its BTH decoded, for
 * the responder to NAK (C9-84, C9-85, C9-92).
 *
 * On success the caller knows: @pkt->info is the opcode's entry; the
 * payload is @pkt->paylen bytes at offset @pkt->hdr_len from the BTH,
 * followed by @pkt->pad bytes of pad and the ICRC, all inside skb->len;
 * an opcode without payload has @pkt->paylen 0 and @pkt->pad 0; FIRST,
 * MIDDLE and LAST packets have at least one byte of payload and FIRST and
 * MIDDLE no pad.
 *
 * Left to the caller: the ICRC (srdma_icrc_verify(), which needs no
 * parsed field and may run before or after this); then, in IBTA 9.6
 * order, the destination QP, its state and service type against
 * OpCode[7:5] (C9-37..C9-39), P_Key (9.6.1.1.3) and Q_Key (9.6.1.5.1);
 * then the PSN and opcode sequence (9.7.4.1.2, 9.7.4.1.3) and the length
 * against the path MTU (C9-92), whose failures an RC responder answers
 * with a NAK rather than a silent drop.
 *
 * Context: any; does not modify @skb.
 * Return: SRDMA_DROP_NONE; SRDMA_DROP_INVALID_REQ for an RC request the
 * responder NAKs once the QP's checks pass; or why the packet must be
 * silently dropped.
 */
enum srdma_drop srdma_pkt_parse(const struct sk_buff *skb,
				struct srdma_pkt *pkt)
{
	u8 buf[SRDMA_MAX_HDR_LEN];
	const struct srdma_opcode_info *info;
	const struct srdma_bth *bth;
	unsigned int len = skb->len;
	const u8 *hdr;
	enum srdma_drop drop;

	*pkt = (struct srdma_pkt){};

	/* 1 */
	if (len < SRDMA_BTH_LEN + SRDMA_ICRC_SIZE)
		return SRDMA_DROP_TOO_SHORT;
	bth = skb_header_pointer(skb, 0, SRDMA_BTH_LEN, buf);
	if (WARN_ON_ONCE(!bth))
		return SRDMA_DROP_TOO_SHORT;

	/* 2 */
	if (FIELD_GET(SRDMA_BTH_TVER, bth->flags) != SRDMA_TVER)
		return SRDMA_DROP_BAD_TVER;

	/* 3 */
	if (len % 4)
		return SRDMA_DROP_BAD_LENGTH;

	/* 4 */
	info = srdma_opcode(bth->opcode);
	if (!info) {
		if (srdma_opcode_transport(bth->opcode) != SRDMA_TRANSPORT_RC)
			return SRDMA_DROP_BAD_OPCODE;
		/* C9-84: a reserved RC opcode is an invalid request. */
		srdma_parse_bth(bth, pkt);
		pkt->invalid_req = true;
		return SRDMA_DROP_INVALID_REQ;
	}
	if (len < info->hdr_len + SRDMA_ICRC_SIZE)
		return SRDMA_DROP_TRUNCATED;
	hdr = skb_header_pointer(skb, 0, info->hdr_len, buf);
	if (WARN_ON_ONCE(!hdr))
		return SRDMA_DROP_TRUNCATED;
	srdma_parse_bth((const struct srdma_bth *)hdr, pkt);
	pkt->info = info;
	pkt->hdr_len = info->hdr_len;

	/* 5 */
	drop = srdma_parse_payload(info,
				   len - info->hdr_len - SRDMA_ICRC_SIZE,
				   pkt->pad, &pkt->paylen);
	if (drop != SRDMA_DROP_NONE) {
		/*
		 * C9-85, C9-92: an RC request whose pad or length does not
		 * fit its opcode is an invalid request. A UC request or a
		 * response of that kind is silently dropped (C9-191, C9-133).
		 */
		if (srdma_opcode_transport(pkt->opcode) != SRDMA_TRANSPORT_RC ||
		    !(info->flags & SRDMA_OPF_REQ))
			return drop;
		pkt->paylen = 0;
		pkt->invalid_req = true;
		return SRDMA_DROP_INVALID_REQ;
	}

	/* 6 */
	srdma_parse_ext(hdr, info, pkt);
	if (srdma_opcode_has(info, SRDMA_HDR_AETH) &&
	    !srdma_aeth_valid(pkt->opcode, pkt->aeth.syndrome))
		return SRDMA_DROP_BAD_AETH;

	return SRDMA_DROP_NONE;
}

static const char *const srdma_drop_names[SRDMA_DROP_MAX] = {
	[SRDMA_DROP_NONE] = "none",
	[SRDMA_DROP_TOO_SHORT] = "rx_drop_too_short",
	[SRDMA_DROP_BAD_TVER] = "rx_drop_bad_tver",
	[SRDMA_DROP_BAD_OPCODE] = "rx_drop_bad_opcode",
	[SRDMA_DROP_BAD_LENGTH] = "rx_drop_bad_length",
	[SRDMA_DROP_TRUNCATED] = "rx_drop_truncated",
	[SRDMA_DROP_BAD_PAD] = "rx_drop_bad_pad",
	[SRDMA_DROP_BAD_AETH] = "rx_drop_bad_aeth",
	[SRDMA_DROP_INVALID_REQ] = "rx_drop_invalid_req",
	[SRDMA_DROP_BAD_ICRC] = "rx_drop_bad_icrc",
};

/**
 * srdma_drop_name() - Name of a drop reason
 * @reason: the reason
 *
 * The names of the reasons other than SRDMA_DROP_NONE are fit for
 * rdma_hw_stats counters (lower case, "rx_drop_" prefix, no spaces), so
 * that a counter array indexed by reason needs no second table.
 *
 * Context: any.
 * Return: a static string; "invalid" for a value out of range.
 */
const char *srdma_drop_name(enum srdma_drop reason)
{
	if ((unsigned int)reason >= SRDMA_DROP_MAX)
		return "invalid";
	return srdma_drop_names[reason];
}

/* --- Send: header builder --- */

static void srdma_build_bth(struct srdma_bth *bth, const struct srdma_pkt *pkt)
{
	bth->opcode = pkt->opcode;
	/* TVer 0 (C9-5) */
	bth->flags = (pkt->se ? SRDMA_BTH_SE : 0) |
		     (pkt->migreq ? SRDMA_BTH_MIG : 0) |
		     FIELD_PREP(SRDMA_BTH_PAD, pkt->pad & 3) |
		     FIELD_PREP(SRDMA_BTH_TVER, SRDMA_TVER);
	bth->pkey = cpu_to_be16(pkt->pkey);
	/* resv8a and Resv7 are sent as 0 (C9-6, C9-7) */
	bth->qpn = cpu_to_be32(FIELD_PREP(SRDMA_BTH_QPN,
					  pkt->qpn & SRDMA_QPN_MASK));
	bth->apsn = cpu_to_be32((pkt->ackreq ? SRDMA_BTH_ACKREQ : 0) |
				FIELD_PREP(SRDMA_BTH_PSN,
					   pkt->psn & SRDMA_PSN_MASK));
}

static void srdma_build_ext(u8 *hdr, const struct srdma_opcode_info *info,
			    const struct srdma_pkt *pkt)
{
	if (srdma_opcode_has(info, SRDMA_HDR_DETH)) {
		struct srdma_deth *deth = srdma_ext(hdr, info, SRDMA_HDR_DETH);

		deth->qkey = cpu_to_be32(pkt->deth.qkey);
		deth->sqp = cpu_to_be32(FIELD_PREP(SRDMA_DETH_SQP,
						   pkt->deth.src_qp &
						   SRDMA_QPN_MASK));
	}
	if (srdma_opcode_has(info, SRDMA_HDR_RETH)) {
		struct srdma_reth *reth = srdma_ext(hdr, info, SRDMA_HDR_RETH);

		reth->va = cpu_to_be64(pkt->reth.va);
		reth->rkey = cpu_to_be32(pkt->reth.rkey);
		reth->len = cpu_to_be32(pkt->reth.len);
	}
	if (srdma_opcode_has(info, SRDMA_HDR_ATMETH)) {
		struct srdma_atmeth *atm =
			srdma_ext(hdr, info, SRDMA_HDR_ATMETH);

		atm->va = cpu_to_be64(pkt->atmeth.va);
		atm->rkey = cpu_to_be32(pkt->atmeth.rkey);
		atm->swap_add = cpu_to_be64(pkt->atmeth.swap_add);
		atm->compare = cpu_to_be64(pkt->atmeth.compare);
	}
	if (srdma_opcode_has(info, SRDMA_HDR_AETH)) {
		struct srdma_aeth *aeth = srdma_ext(hdr, info, SRDMA_HDR_AETH);

		aeth->smsn = cpu_to_be32(FIELD_PREP(SRDMA_AETH_SYNDROME,
						    pkt->aeth.syndrome) |
					 FIELD_PREP(SRDMA_AETH_MSN,
						    pkt->aeth.msn &
						    SRDMA_AETH_MSN));
	}
	if (srdma_opcode_has(info, SRDMA_HDR_ATMACK)) {
		struct srdma_atmack *ack =
			srdma_ext(hdr, info, SRDMA_HDR_ATMACK);

		ack->orig = cpu_to_be64(pkt->atmack_orig);
	}
	if (srdma_opcode_has(info, SRDMA_HDR_IMMDT)) {
		struct srdma_immdt *immdt =
			srdma_ext(hdr, info, SRDMA_HDR_IMMDT);

		immdt->imm = pkt->imm;
	}
	if (srdma_opcode_has(info, SRDMA_HDR_IETH)) {
		struct srdma_ieth *ieth = srdma_ext(hdr, info, SRDMA_HDR_IETH);

		ieth->rkey = cpu_to_be32(pkt->ieth_rkey);
	}
}

/**
 * srdma_pkt_build_hdrs() - Write the transport headers of a packet
 * @buf: where the BTH goes, srdma_pkt_hdr_len(@pkt->opcode) bytes, any
 *	alignment
 * @pkt: the packet: @pkt->opcode picks the extended headers written, and
 *	only the fields of those are read (@pkt->info, @pkt->hdr_len and
 *	@pkt->paylen are not); values wider than their wire fields are
 *	truncated to them
 *
 * Writes the BTH with TVer 0 and the reserved bits clear, then each
 * extended header of the opcode at its offset. The caller appends
 * @pkt->paylen bytes of payload, @pkt->pad bytes of zeros to bring them to
 * a multiple of 4 (9.2.5) and room for the ICRC.
 *
 * Context: any.
 * Return: @buf + the header length (where the payload goes), or NULL when
 * @pkt->opcode is not in the table (a caller bug, warned about once).
 */
void *srdma_pkt_build_hdrs(void *buf, const struct srdma_pkt *pkt)
{
	const struct srdma_opcode_info *info = srdma_opcode(pkt->opcode);

	if (WARN_ON_ONCE(!info))
		return NULL;
	srdma_build_bth(buf, pkt);
	srdma_build_ext(buf, info, pkt);
	return buf + info->hdr_len;
}

/* --- IBTA 9.7.5.2: AETH encodings --- */

/*
 * Table 48, RNR NAK timer field encoding, in microseconds. Code 0 is the
 * longest interval, not the shortest.
 */
static const u32 srdma_rnr_usecs[32] = {
	655360,     10,     20,     30,     40,     60,     80,    120,
	   160,    240,    320,    480,    640,    960,   1280,   1920,
	  2560,   3840,   5120,   7680,  10240,  15360,  20480,  30720,
	 40960,  61440,  81920, 122880, 163840, 245760, 327680, 491520,
};

/**
 * srdma_rnr_timer_usecs() - Interval of an RNR NAK timer code
 * @code: the 5-bit timer field of an RNR NAK (9.7.5.2.8), or the
 *	min_rnr_timer attribute of a QP; higher bits are ignored
 *
 * A requester waits at least this long before it retries (C9-130).
 *
 * Context: any.
 * Return: the interval in microseconds.
 */
u32 srdma_rnr_timer_usecs(u8 code)
{
	return srdma_rnr_usecs[code & SRDMA_SYN_VALUE];
}

/* Table 50 (9.7.7.2.4): end-to-end flow control credit codes 0-30. */
static const u16 srdma_credit_counts[SRDMA_CREDITS_INVALID] = {
	    0,     1,     2,     3,     4,     6,     8,    12,
	   16,    24,    32,    48,    64,    96,   128,   192,
	  256,   384,   512,   768,  1024,  1536,  2048,  3072,
	 4096,  6144,  8192, 12288, 16384, 24576, 32768,
};

/**
 * srdma_aeth_credits() - Number of credits an ACK's credit code grants
 * @code: bits [4:0] of an ACK syndrome (9.7.5.2.1); higher bits ignored
 *
 * Context: any.
 * Return: the number of receive WQEs the responder advertises, or U32_MAX
 * for SRDMA_CREDITS_INVALID: no end-to-end flow control information, the
 * requester is not limited by credits (9.7.7.2.4).
 */
u32 srdma_aeth_credits(u8 code)
{
	code &= SRDMA_SYN_VALUE;
	if (code == SRDMA_CREDITS_INVALID)
		return U32_MAX;
	return srdma_credit_counts[code];
}

/**
 * srdma_aeth_credit_code() - Credit code for an ACK
 * @credits: receive WQEs available to the requester
 *
 * The codes are logarithmic; a responder must never advertise more than it
 * has posted (C9-161), so this rounds down.
 *
 * Context: any.
 * Return: the largest code, 0-30, whose count is at most @credits.
 */
u8 srdma_aeth_credit_code(u32 credits)
{
	u8 code = SRDMA_CREDITS_INVALID - 1;

	while (srdma_credit_counts[code] > credits)
		code--;
	return code;
}
