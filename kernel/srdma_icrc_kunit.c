// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite of the ICRC (srdma_icrc.c), built into the module with
 * SRDMA_KUNIT=y like srdma_kunit.c:
 *
 *   softrdma_icrc  ICRC check and fill, and the parser, on packets
 *                  captured from rdma_rxe
 *
 * The captured packets were sent by the rdma_rxe of Debian's 6.1 kernel in
 * a guest. The CM REQs are from "rping -c" towards an address with a static
 * neighbour on a dummy device, over IPv4 and IPv6. The RC, UC and UD
 * packets are from QPs of one rxe device talking to each other through an
 * address in a second network namespace, where a raw socket swapped the IP
 * addresses, recomputed the ICRC and sent each frame back; a SEND_MIDDLE
 * dropped there once provoked the PSN sequence NAK, a SEND before any
 * receive was posted the RNR NAK, a bad R_Key the remote access NAK, and
 * the requester's PSNs started at 0xfffffd to wrap. Only frames rxe sent
 * are used, from the IP header through the ICRC. The expected header
 * fields are tshark's decoding of the same frames, not softrdma's.
 */

#include <kunit/test.h>
#include <linux/crc32.h>
#include <linux/in.h>
#include <linux/skbuff.h>
#include <linux/string.h>

#include "srdma_hdr.h"
#include "srdma_kunit_skb.h"

/* --- softrdma_icrc: packets captured from rdma_rxe --- */

/* IPv4, UD SEND_ONLY to QP1: a CM REQ MAD (rping -c) */
static const u8 srdma_cap_ud_cm_req_v4[] =
	"\x45\x00\x01\x34\xb7\x45\x40\x00\x40\x11\x6d\xd3\x0a\x4f\x00\x01"
	"\x0a\x4f\x00\x02\xd8\x72\x12\xb7\x01\x20\x00\x00\x64\x00\xff\xff"
	"\x00\x00\x00\x01\x80\x00\x00\x00\x80\x01\x00\x00\x00\x00\x00\x01"
	"\x01\x07\x02\x03\x00\x00\x00\x00\x00\x00\x00\x02\xcb\x68\x0b\x86"
	"\x00\x10\x00\x00\x00\x00\x00\x00\x86\x0b\x68\xcb\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x01\x06\x1c\x06\x14\x21\x68\xff\xfe\x6f\x29\x41"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x11\x01\x00\x00\x00\x01"
	"\x00\x00\x00\xa0\x06\x85\xe3\xa7\xff\xff\x37\xf0\xff\xff\xff\xff"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x0a\x4f\x00\x01"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x0a\x4f\x00\x02"
	"\x8d\x6a\xf0\x00\x00\x40\x00\x98\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x40\xcc\x37\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x0a\x4f\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x0a\x4f\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\xd8\xb6\xe6\x40";

/* IPv6, UD SEND_ONLY to QP1: a CM REQ MAD (rping -c) */
static const u8 srdma_cap_ud_cm_req_v6[] =
	"\x60\x00\x00\x00\x01\x20\x11\x40\xfd\x79\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x01\xfd\x79\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x02\xd8\x72\x12\xb7\x01\x20\x00\x00"
	"\x64\x00\xff\xff\x00\x00\x00\x01\x80\x00\x00\x05\x80\x01\x00\x00"
	"\x00\x00\x00\x01\x01\x07\x02\x03\x00\x00\x00\x00\x00\x00\x00\x02"
	"\xcb\x68\x0b\x87\x00\x10\x00\x00\x00\x00\x00\x00\x87\x0b\x68\xcb"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x01\x06\x1c\x06\x14\x21\x68\xff"
	"\xfe\x6f\x29\x41\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x12\x01"
	"\x00\x00\x00\x01\x00\x00\x00\xa0\xb2\x37\xb4\xa7\xff\xff\x37\xf0"
	"\xff\xff\xff\xff\xfd\x79\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x01\xfd\x79\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x02\xc9\x5b\xf0\x00\x00\x40\x00\x98\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x60\xeb\x27\xfd\x79\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\xfd\x79\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x19\x8f\x23\x9e";

/* RC SEND_ONLY, 5 bytes and 3 of pad */
static const u8 srdma_cap_rc_send_only_pad3[] =
	"\x45\x00\x00\x34\x34\xdc\x40\x00\x40\x11\xef\x3c\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x20\x00\x00\x04\x30\xff\xff"
	"\x00\x00\x00\x12\x80\xff\xff\xfd\x01\x08\x0f\x16\x1d\x00\x00\x00"
	"\x73\xc1\x9f\x5a";

/* RC ACKNOWLEDGE, RNR NAK (timer code 1): no receive WQE posted */
static const u8 srdma_cap_rc_rnr_nak[] =
	"\x45\x00\x00\x30\x34\xde\x40\x00\x40\x11\xef\x3e\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x1c\x00\x00\x11\x00\xff\xff"
	"\x00\x00\x00\x11\x00\xff\xff\xfd\x21\x00\x00\x00\x7d\x24\x2b\x0f";

/* RC SEND_FIRST, 256 bytes (PMTU 256), PSN 0xfffffe */
static const u8 srdma_cap_rc_send_first_psn_fffffe[] =
	"\x45\x00\x01\x2c\x35\x83\x40\x00\x40\x11\xed\x9d\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x01\x18\x00\x00\x00\x00\xff\xff"
	"\x00\x00\x00\x12\x00\xff\xff\xfe\x01\x08\x0f\x16\x1d\x24\x2b\x32"
	"\x39\x40\x47\x4e\x55\x5c\x63\x6a\x71\x78\x7f\x86\x8d\x94\x9b\xa2"
	"\xa9\xb0\xb7\xbe\xc5\xcc\xd3\xda\xe1\xe8\xef\xf6\xfd\x04\x0b\x12"
	"\x19\x20\x27\x2e\x35\x3c\x43\x4a\x51\x58\x5f\x66\x6d\x74\x7b\x82"
	"\x89\x90\x97\x9e\xa5\xac\xb3\xba\xc1\xc8\xcf\xd6\xdd\xe4\xeb\xf2"
	"\xf9\x00\x07\x0e\x15\x1c\x23\x2a\x31\x38\x3f\x46\x4d\x54\x5b\x62"
	"\x69\x70\x77\x7e\x85\x8c\x93\x9a\xa1\xa8\xaf\xb6\xbd\xc4\xcb\xd2"
	"\xd9\xe0\xe7\xee\xf5\xfc\x03\x0a\x11\x18\x1f\x26\x2d\x34\x3b\x42"
	"\x49\x50\x57\x5e\x65\x6c\x73\x7a\x81\x88\x8f\x96\x9d\xa4\xab\xb2"
	"\xb9\xc0\xc7\xce\xd5\xdc\xe3\xea\xf1\xf8\xff\x06\x0d\x14\x1b\x22"
	"\x29\x30\x37\x3e\x45\x4c\x53\x5a\x61\x68\x6f\x76\x7d\x84\x8b\x92"
	"\x99\xa0\xa7\xae\xb5\xbc\xc3\xca\xd1\xd8\xdf\xe6\xed\xf4\xfb\x02"
	"\x09\x10\x17\x1e\x25\x2c\x33\x3a\x41\x48\x4f\x56\x5d\x64\x6b\x72"
	"\x79\x80\x87\x8e\x95\x9c\xa3\xaa\xb1\xb8\xbf\xc6\xcd\xd4\xdb\xe2"
	"\xe9\xf0\xf7\xfe\x05\x0c\x13\x1a\x21\x28\x2f\x36\x3d\x44\x4b\x52"
	"\x59\x60\x67\x6e\x75\x7c\x83\x8a\x91\x98\x9f\xa6\xad\xb4\xbb\xc2"
	"\xc9\xd0\xd7\xde\xe5\xec\xf3\xfa\x0c\x76\x6b\xbb";

/* RC SEND_LAST_WITH_IMMEDIATE, SE, PSN wrapped to 0 */
static const u8 srdma_cap_rc_send_last_imm_psn_0[] =
	"\x45\x00\x00\x88\x35\x85\x40\x00\x40\x11\xee\x3f\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x74\x00\x00\x03\x80\xff\xff"
	"\x00\x00\x00\x12\x80\x00\x00\x00\x12\x34\x56\x78\x01\x08\x0f\x16"
	"\x1d\x24\x2b\x32\x39\x40\x47\x4e\x55\x5c\x63\x6a\x71\x78\x7f\x86"
	"\x8d\x94\x9b\xa2\xa9\xb0\xb7\xbe\xc5\xcc\xd3\xda\xe1\xe8\xef\xf6"
	"\xfd\x04\x0b\x12\x19\x20\x27\x2e\x35\x3c\x43\x4a\x51\x58\x5f\x66"
	"\x6d\x74\x7b\x82\x89\x90\x97\x9e\xa5\xac\xb3\xba\xc1\xc8\xcf\xd6"
	"\xdd\xe4\xeb\xf2\xf9\x00\x07\x0e\x15\x1c\x23\x2a\x31\x38\x3f\x46"
	"\x4d\x54\x5b\x62\x81\xf8\x38\xbc";

/* RC ACKNOWLEDGE, NAK PSN sequence error (SEND_MIDDLE lost) */
static const u8 srdma_cap_rc_nak_psn_seq[] =
	"\x45\x00\x00\x30\x35\x88\x40\x00\x40\x11\xee\x94\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x1c\x00\x00\x11\x00\xff\xff"
	"\x00\x00\x00\x11\x00\xff\xff\xff\x60\x00\x00\x01\x6d\xc6\x2b\x0f";

/* RC ACKNOWLEDGE, ACK with credit code 0x1f (no credits) */
static const u8 srdma_cap_rc_ack[] =
	"\x45\x00\x00\x30\x35\x80\x40\x00\x40\x11\xee\x9c\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x1c\x00\x00\x11\x00\xff\xff"
	"\x00\x00\x00\x11\x00\xff\xff\xfd\x1f\x00\x00\x01\x4c\x72\x6c\x5f";

/* RC RDMA_WRITE_LAST, 44 bytes */
static const u8 srdma_cap_rc_write_last[] =
	"\x45\x00\x00\x58\x35\x8f\x40\x00\x40\x11\xee\x65\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x44\x00\x00\x08\x00\xff\xff"
	"\x00\x00\x00\x12\x80\x00\x00\x02\x01\x08\x0f\x16\x1d\x24\x2b\x32"
	"\x39\x40\x47\x4e\x55\x5c\x63\x6a\x71\x78\x7f\x86\x8d\x94\x9b\xa2"
	"\xa9\xb0\xb7\xbe\xc5\xcc\xd3\xda\xe1\xe8\xef\xf6\xfd\x04\x0b\x12"
	"\x19\x20\x27\x2e\x41\xee\x82\x40";

/* RC RDMA_WRITE_ONLY_WITH_IMMEDIATE, 10 bytes and 2 of pad */
static const u8 srdma_cap_rc_write_only_imm[] =
	"\x45\x00\x00\x4c\x35\x90\x40\x00\x40\x11\xee\x70\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x38\x00\x00\x0b\x20\xff\xff"
	"\x00\x00\x00\x12\x80\x00\x00\x03\x00\x00\x55\xfe\xbb\xc2\x5e\x20"
	"\x00\x00\x02\x3b\x00\x00\x00\x0a\xca\xfe\x00\x01\x01\x08\x0f\x16"
	"\x1d\x24\x2b\x32\x39\x40\x00\x00\x82\x0c\x95\x25";

/* RC RDMA_READ_REQUEST for 700 bytes */
static const u8 srdma_cap_rc_read_req[] =
	"\x45\x00\x00\x3c\x35\x94\x40\x00\x40\x11\xee\x7c\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x28\x00\x00\x0c\x00\xff\xff"
	"\x00\x00\x00\x12\x80\x00\x00\x04\x00\x00\x55\xfe\xbb\xc2\x70\x00"
	"\x00\x00\x02\x3b\x00\x00\x02\xbc\xe3\x67\x1a\xae";

/* RC RDMA_READ_RESPONSE_LAST, 188 bytes */
static const u8 srdma_cap_rc_read_resp_last[] =
	"\x45\x00\x00\xec\x35\x98\x40\x00\x40\x11\xed\xc8\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\xd8\x00\x00\x0f\x00\xff\xff"
	"\x00\x00\x00\x11\x00\x00\x00\x06\x1f\x00\x00\x05\x01\x08\x0f\x16"
	"\x1d\x24\x2b\x32\x39\x40\x47\x4e\x55\x5c\x63\x6a\x71\x78\x7f\x86"
	"\x8d\x94\x9b\xa2\xa9\xb0\xb7\xbe\xc5\xcc\xd3\xda\xe1\xe8\xef\xf6"
	"\xfd\x04\x0b\x12\x19\x20\x27\x2e\x35\x3c\x43\x4a\x51\x58\x5f\x66"
	"\x6d\x74\x7b\x82\x89\x90\x97\x9e\xa5\xac\xb3\xba\xc1\xc8\xcf\xd6"
	"\xdd\xe4\xeb\xf2\xf9\x00\x07\x0e\x15\x1c\x23\x2a\x31\x38\x3f\x46"
	"\x4d\x54\x5b\x62\x69\x70\x77\x7e\x85\x8c\x93\x9a\xa1\xa8\xaf\xb6"
	"\xbd\xc4\xcb\xd2\xd9\xe0\xe7\xee\xf5\xfc\x03\x0a\x11\x18\x1f\x26"
	"\x2d\x34\x3b\x42\x49\x50\x57\x5e\x65\x6c\x73\x7a\x81\x88\x8f\x96"
	"\x9d\xa4\xab\xb2\xb9\xc0\xc7\xce\xd5\xdc\xe3\xea\xf1\xf8\xff\x06"
	"\x0d\x14\x1b\x22\x29\x30\x37\x3e\x45\x4c\x53\x5a\x61\x68\x6f\x76"
	"\x7d\x84\x8b\x92\x99\xa0\xa7\xae\xb5\xbc\xc3\xca\xd1\xd8\xdf\xe6"
	"\xed\xf4\xfb\x02\x09\x10\x17\x1e\xec\x8d\x0d\x1f";

/* RC RDMA_READ_RESPONSE_ONLY, 3 bytes and 1 of pad */
static const u8 srdma_cap_rc_read_resp_only_pad1[] =
	"\x45\x00\x00\x34\x35\x99\x40\x00\x40\x11\xee\x7f\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x20\x00\x00\x10\x10\xff\xff"
	"\x00\x00\x00\x11\x00\x00\x00\x07\x1f\x00\x00\x06\x01\x08\x0f\x00"
	"\xd9\xe5\x46\xc0";

/* RC COMPARE_SWAP */
static const u8 srdma_cap_rc_cmp_swap[] =
	"\x45\x00\x00\x48\x35\x9c\x40\x00\x40\x11\xee\x68\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x34\x00\x00\x13\x00\xff\xff"
	"\x00\x00\x00\x12\x80\x00\x00\x08\x00\x00\x55\xfe\xbb\xc2\xb0\x00"
	"\x00\x00\x02\x3b\x11\x12\x13\x14\x15\x16\x17\x18\x01\x02\x03\x04"
	"\x05\x06\x07\x08\xb0\x38\xb8\x2a";

/* RC ATOMIC_ACKNOWLEDGE of the COMPARE_SWAP */
static const u8 srdma_cap_rc_atomic_ack[] =
	"\x45\x00\x00\x38\x35\x9e\x40\x00\x40\x11\xee\x76\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x24\x00\x00\x12\x00\xff\xff"
	"\x00\x00\x00\x11\x00\x00\x00\x08\x1f\x00\x00\x07\x32\x2b\x24\x1d"
	"\x16\x0f\x08\x01\x55\x38\x83\x94";

/* RC ACKNOWLEDGE, NAK remote access error (bad R_Key) */
static const u8 srdma_cap_rc_nak_remote_access[] =
	"\x45\x00\x00\x30\x35\xb2\x40\x00\x40\x11\xee\x6a\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x1c\x00\x00\x11\x00\xff\xff"
	"\x00\x00\x00\x11\x00\x00\x00\x0b\x62\x00\x00\x09\x56\x20\xad\xb0";

/* UC RDMA_WRITE_LAST_WITH_IMMEDIATE, 4 bytes */
static const u8 srdma_cap_uc_write_last_imm[] =
	"\x45\x00\x00\x34\x35\xa9\x40\x00\x40\x11\xee\x6f\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x7c\x12\xb7\x00\x20\x00\x00\x29\x00\xff\xff"
	"\x00\x00\x00\x14\x00\x80\x00\x03\x00\x00\xbe\xef\x01\x08\x0f\x16"
	"\xb7\xf6\xc9\x4b";

/* UD SEND_ONLY_WITH_IMMEDIATE, 4 bytes */
static const u8 srdma_cap_ud_send_only_imm[] =
	"\x45\x00\x00\x3c\x35\xae\x40\x00\x40\x11\xee\x62\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x5c\x12\xb7\x00\x28\x00\x00\x65\x00\xff\xff"
	"\x00\x00\x00\x16\x00\x00\x00\x11\x11\x11\x11\x11\x00\x00\x00\x15"
	"\xab\xcd\xef\x01\x79\x80\x87\x8e\x9b\xb4\x91\x62";

/* IPv6, RC SEND_MIDDLE, 256 bytes, PSN 0xffffff */
static const u8 srdma_cap_rc_send_middle_v6[] =
	"\x60\x00\x00\x00\x01\x18\x11\x40\xfd\x79\x00\x01\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x01\xfd\x79\x00\x01\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x02\xc2\x28\x12\xb7\x01\x18\x00\x00"
	"\x01\x00\xff\xff\x00\x00\x00\x18\x00\xff\xff\xff\x01\x08\x0f\x16"
	"\x1d\x24\x2b\x32\x39\x40\x47\x4e\x55\x5c\x63\x6a\x71\x78\x7f\x86"
	"\x8d\x94\x9b\xa2\xa9\xb0\xb7\xbe\xc5\xcc\xd3\xda\xe1\xe8\xef\xf6"
	"\xfd\x04\x0b\x12\x19\x20\x27\x2e\x35\x3c\x43\x4a\x51\x58\x5f\x66"
	"\x6d\x74\x7b\x82\x89\x90\x97\x9e\xa5\xac\xb3\xba\xc1\xc8\xcf\xd6"
	"\xdd\xe4\xeb\xf2\xf9\x00\x07\x0e\x15\x1c\x23\x2a\x31\x38\x3f\x46"
	"\x4d\x54\x5b\x62\x69\x70\x77\x7e\x85\x8c\x93\x9a\xa1\xa8\xaf\xb6"
	"\xbd\xc4\xcb\xd2\xd9\xe0\xe7\xee\xf5\xfc\x03\x0a\x11\x18\x1f\x26"
	"\x2d\x34\x3b\x42\x49\x50\x57\x5e\x65\x6c\x73\x7a\x81\x88\x8f\x96"
	"\x9d\xa4\xab\xb2\xb9\xc0\xc7\xce\xd5\xdc\xe3\xea\xf1\xf8\xff\x06"
	"\x0d\x14\x1b\x22\x29\x30\x37\x3e\x45\x4c\x53\x5a\x61\x68\x6f\x76"
	"\x7d\x84\x8b\x92\x99\xa0\xa7\xae\xb5\xbc\xc3\xca\xd1\xd8\xdf\xe6"
	"\xed\xf4\xfb\x02\x09\x10\x17\x1e\x25\x2c\x33\x3a\x41\x48\x4f\x56"
	"\x5d\x64\x6b\x72\x79\x80\x87\x8e\x95\x9c\xa3\xaa\xb1\xb8\xbf\xc6"
	"\xcd\xd4\xdb\xe2\xe9\xf0\xf7\xfe\x05\x0c\x13\x1a\x21\x28\x2f\x36"
	"\x3d\x44\x4b\x52\x59\x60\x67\x6e\x75\x7c\x83\x8a\x91\x98\x9f\xa6"
	"\xad\xb4\xbb\xc2\xc9\xd0\xd7\xde\xe5\xec\xf3\xfa\xcb\x0e\x46\xec";

/* IPv6, RC ATOMIC_ACKNOWLEDGE */
static const u8 srdma_cap_rc_atomic_ack_v6[] =
	"\x60\x00\x00\x00\x00\x24\x11\x40\xfd\x79\x00\x01\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x01\xfd\x79\x00\x01\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x02\xc2\x28\x12\xb7\x00\x24\x00\x00"
	"\x12\x00\xff\xff\x00\x00\x00\x17\x00\x00\x00\x08\x1f\x00\x00\x07"
	"\x32\x2b\x24\x1d\x16\x0f\x08\x01\x15\x7d\x9c\x54";

/* IPv6, UD SEND_ONLY_WITH_IMMEDIATE */
static const u8 srdma_cap_ud_send_only_imm_v6[] =
	"\x60\x00\x00\x00\x00\x28\x11\x40\xfd\x79\x00\x01\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x01\xfd\x79\x00\x01\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x02\xd4\x09\x12\xb7\x00\x28\x00\x00"
	"\x65\x00\xff\xff\x00\x00\x00\x1c\x00\x00\x00\x11\x11\x11\x11\x11"
	"\x00\x00\x00\x1b\xab\xcd\xef\x01\x79\x80\x87\x8e\xe0\xad\x47\x84";

struct srdma_cap_case {
	const char *name;
	const u8 *bytes;	/* IP header .. ICRC */
	unsigned int len;
	struct srdma_pkt want;	/* tshark's decoding */
};

/* The arrays are string literals: their sizeof counts a final NUL. */
#define SRDMA_CAP(n)							\
	.name = #n, .bytes = srdma_cap_##n, .len = sizeof(srdma_cap_##n) - 1

static const struct srdma_cap_case srdma_cap_cases[] = {
	{
		SRDMA_CAP(ud_cm_req_v4),
		.want = {
			.opcode = SRDMA_OP_UD_SEND_ONLY, .ackreq = true,
			.pkey = 0xffff, .qpn = 0x000001, .psn = 0x000000,
			.hdr_len = 20, .paylen = 256,
			.deth = { .qkey = 0x80010000, .src_qp = 0x000001 },
		},
	},
	{
		SRDMA_CAP(ud_cm_req_v6),
		.want = {
			.opcode = SRDMA_OP_UD_SEND_ONLY, .ackreq = true,
			.pkey = 0xffff, .qpn = 0x000001, .psn = 0x000005,
			.hdr_len = 20, .paylen = 256,
			.deth = { .qkey = 0x80010000, .src_qp = 0x000001 },
		},
	},
	{
		SRDMA_CAP(rc_send_only_pad3),
		.want = {
			.opcode = SRDMA_OP_RC_SEND_ONLY, .pad = 3,
			.ackreq = true, .pkey = 0xffff, .qpn = 0x000012,
			.psn = 0xfffffd, .hdr_len = 12, .paylen = 5,
		},
	},
	{
		SRDMA_CAP(rc_rnr_nak),
		.want = {
			.opcode = SRDMA_OP_RC_ACK, .pkey = 0xffff,
			.qpn = 0x000011, .psn = 0xfffffd, .hdr_len = 16,
			.aeth = { .syndrome = 0x21, .msn = 0 },
		},
	},
	{
		SRDMA_CAP(rc_send_first_psn_fffffe),
		.want = {
			.opcode = SRDMA_OP_RC_SEND_FIRST, .pkey = 0xffff,
			.qpn = 0x000012, .psn = 0xfffffe, .hdr_len = 12,
			.paylen = 256,
		},
	},
	{
		SRDMA_CAP(rc_send_last_imm_psn_0),
		.want = {
			.opcode = SRDMA_OP_RC_SEND_LAST_IMM, .se = true,
			.ackreq = true, .pkey = 0xffff, .qpn = 0x000012,
			.psn = 0x000000, .hdr_len = 16, .paylen = 88,
			.imm = cpu_to_be32(0x12345678),
		},
	},
	{
		SRDMA_CAP(rc_nak_psn_seq),
		.want = {
			.opcode = SRDMA_OP_RC_ACK, .pkey = 0xffff,
			.qpn = 0x000011, .psn = 0xffffff, .hdr_len = 16,
			.aeth = { .syndrome = 0x60, .msn = 1 },
		},
	},
	{
		SRDMA_CAP(rc_ack),
		.want = {
			.opcode = SRDMA_OP_RC_ACK, .pkey = 0xffff,
			.qpn = 0x000011, .psn = 0xfffffd, .hdr_len = 16,
			.aeth = { .syndrome = 0x1f, .msn = 1 },
		},
	},
	{
		SRDMA_CAP(rc_write_last),
		.want = {
			.opcode = SRDMA_OP_RC_WRITE_LAST, .ackreq = true,
			.pkey = 0xffff, .qpn = 0x000012, .psn = 0x000002,
			.hdr_len = 12, .paylen = 44,
		},
	},
	{
		SRDMA_CAP(rc_write_only_imm),
		.want = {
			.opcode = SRDMA_OP_RC_WRITE_ONLY_IMM, .pad = 2,
			.ackreq = true, .pkey = 0xffff, .qpn = 0x000012,
			.psn = 0x000003, .hdr_len = 32, .paylen = 10,
			.reth = { .va = 0x55febbc25e20, .rkey = 0x23b, .len = 10 },
			.imm = cpu_to_be32(0xcafe0001),
		},
	},
	{
		SRDMA_CAP(rc_read_req),
		.want = {
			.opcode = SRDMA_OP_RC_READ_REQ, .ackreq = true,
			.pkey = 0xffff, .qpn = 0x000012, .psn = 0x000004,
			.hdr_len = 28,
			.reth = { .va = 0x55febbc27000, .rkey = 0x23b, .len = 700 },
		},
	},
	{
		SRDMA_CAP(rc_read_resp_last),
		.want = {
			.opcode = SRDMA_OP_RC_READ_RESP_LAST, .pkey = 0xffff,
			.qpn = 0x000011, .psn = 0x000006, .hdr_len = 16,
			.paylen = 188, .aeth = { .syndrome = 0x1f, .msn = 5 },
		},
	},
	{
		SRDMA_CAP(rc_read_resp_only_pad1),
		.want = {
			.opcode = SRDMA_OP_RC_READ_RESP_ONLY, .pad = 1,
			.pkey = 0xffff, .qpn = 0x000011, .psn = 0x000007,
			.hdr_len = 16, .paylen = 3,
			.aeth = { .syndrome = 0x1f, .msn = 6 },
		},
	},
	{
		SRDMA_CAP(rc_cmp_swap),
		.want = {
			.opcode = SRDMA_OP_RC_CMP_SWAP, .ackreq = true,
			.pkey = 0xffff, .qpn = 0x000012, .psn = 0x000008,
			.hdr_len = 40,
			.atmeth = { .va = 0x55febbc2b000, .rkey = 0x23b,
				    .swap_add = 0x1112131415161718,
				    .compare = 0x0102030405060708 },
		},
	},
	{
		SRDMA_CAP(rc_atomic_ack),
		.want = {
			.opcode = SRDMA_OP_RC_ATOMIC_ACK, .pkey = 0xffff,
			.qpn = 0x000011, .psn = 0x000008, .hdr_len = 24,
			.aeth = { .syndrome = 0x1f, .msn = 7 },
			.atmack_orig = 0x322b241d160f0801,
		},
	},
	{
		SRDMA_CAP(rc_nak_remote_access),
		.want = {
			.opcode = SRDMA_OP_RC_ACK, .pkey = 0xffff,
			.qpn = 0x000011, .psn = 0x00000b, .hdr_len = 16,
			.aeth = { .syndrome = 0x62, .msn = 9 },
		},
	},
	{
		SRDMA_CAP(uc_write_last_imm),
		.want = {
			.opcode = SRDMA_OP_UC_WRITE_LAST_IMM, .pkey = 0xffff,
			.qpn = 0x000014, .psn = 0x800003, .hdr_len = 16,
			.paylen = 4, .imm = cpu_to_be32(0x0000beef),
		},
	},
	{
		SRDMA_CAP(ud_send_only_imm),
		.want = {
			.opcode = SRDMA_OP_UD_SEND_ONLY_IMM, .pkey = 0xffff,
			.qpn = 0x000016, .psn = 0x000011, .hdr_len = 24,
			.paylen = 4,
			.deth = { .qkey = 0x11111111, .src_qp = 0x000015 },
			.imm = cpu_to_be32(0xabcdef01),
		},
	},
	{
		SRDMA_CAP(rc_send_middle_v6),
		.want = {
			.opcode = SRDMA_OP_RC_SEND_MIDDLE, .pkey = 0xffff,
			.qpn = 0x000018, .psn = 0xffffff, .hdr_len = 12,
			.paylen = 256,
		},
	},
	{
		SRDMA_CAP(rc_atomic_ack_v6),
		.want = {
			.opcode = SRDMA_OP_RC_ATOMIC_ACK, .pkey = 0xffff,
			.qpn = 0x000017, .psn = 0x000008, .hdr_len = 24,
			.aeth = { .syndrome = 0x1f, .msn = 7 },
			.atmack_orig = 0x322b241d160f0801,
		},
	},
	{
		SRDMA_CAP(ud_send_only_imm_v6),
		.want = {
			.opcode = SRDMA_OP_UD_SEND_ONLY_IMM, .pkey = 0xffff,
			.qpn = 0x00001c, .psn = 0x000011, .hdr_len = 24,
			.paylen = 4,
			.deth = { .qkey = 0x11111111, .src_qp = 0x00001b },
			.imm = cpu_to_be32(0xabcdef01),
		},
	},
};

static void srdma_cap_case_desc(const struct srdma_cap_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_cap, srdma_cap_cases, srdma_cap_case_desc);

/* Length of the IP and UDP headers in front of the BTH. */
static unsigned int srdma_cap_l3l4(const u8 *bytes)
{
	return (bytes[0] >> 4 == 4 ? (bytes[0] & 0x0f) * 4 : 40) + 8;
}

/*
 * A received packet: network header at the IP header, skb->data at the BTH,
 * skb->len from BTH through ICRC, as srdma_icrc_verify() gets it.
 */
static struct sk_buff *srdma_cap_rx_skb(const u8 *bytes, unsigned int len,
					const struct srdma_layout *l)
{
	struct sk_buff *skb = srdma_test_skb(bytes, len, l);

	if (!skb)
		return NULL;
	skb_reset_network_header(skb);
	skb_pull(skb, srdma_cap_l3l4(bytes));
	return skb;
}

static void srdma_icrc_seed_test(struct kunit *test)
{
	static const u8 lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};

	KUNIT_EXPECT_EQ(test, crc32_le(~0U, lrh, sizeof(lrh)),
			(u32)SRDMA_ICRC_SEED);
}

static void srdma_icrc_capture_test(struct kunit *test)
{
	const struct srdma_cap_case *c = test->param_value;
	unsigned int l3l4 = srdma_cap_l3l4(c->bytes);
	/* splits inside the BTH and inside the ICRC */
	const struct srdma_layout layouts[] = {
		{ "linear", SRDMA_SHAPE_LINEAR },
		{ "frags", SRDMA_SHAPE_FRAGS, l3l4 + 5, c->len - 2 },
		{ "frags after UDP", SRDMA_SHAPE_FRAGS, l3l4, l3l4 + 1 },
		{ "frag_list", SRDMA_SHAPE_FRAG_LIST, l3l4 + 13 },
	};
	struct srdma_pkt got;
	struct sk_buff *skb;
	unsigned int i;
	u8 *hdrs;

	/* Built from tshark's values, the headers are byte for byte rxe's. */
	hdrs = kunit_kzalloc(test, SRDMA_MAX_HDR_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, hdrs);
	KUNIT_ASSERT_NOT_NULL(test, srdma_pkt_build_hdrs(hdrs, &c->want));
	KUNIT_EXPECT_EQ(test, memcmp(hdrs, c->bytes + l3l4, c->want.hdr_len),
			0);

	for (i = 0; i < ARRAY_SIZE(layouts); i++) {
		skb = srdma_cap_rx_skb(c->bytes, c->len, &layouts[i]);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		KUNIT_EXPECT_EQ_MSG(test, srdma_icrc_verify(skb), 0, "%s",
				    layouts[i].name);
		KUNIT_EXPECT_EQ_MSG(test, srdma_pkt_parse(skb, &got),
				    SRDMA_DROP_NONE, "%s", layouts[i].name);
		KUNIT_EXPECT_PTR_EQ(test, got.info,
				    srdma_opcode(c->want.opcode));
		srdma_expect_pkt(test, &got, &c->want, layouts[i].name);
		kfree_skb(skb);
	}
}

/* Flip bits @mask of byte @off of a copy of the packet and verify it. */
static int srdma_icrc_flip(struct kunit *test, const struct srdma_cap_case *c,
			   unsigned int off, u8 mask)
{
	static const struct srdma_layout linear = { "linear" };
	struct sk_buff *skb;
	u8 *buf;
	int ret;

	buf = kunit_kmalloc(test, c->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	memcpy(buf, c->bytes, c->len);
	buf[off] ^= mask;
	skb = srdma_cap_rx_skb(buf, c->len, &linear);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	ret = srdma_icrc_verify(skb);
	kfree_skb(skb);
	kunit_kfree(test, buf);
	return ret;
}

struct srdma_icrc_byte {
	u8 off;
	u8 mask;
};

/* IPv4: TOS, TTL, header checksum */
static const struct srdma_icrc_byte srdma_masked4[] = {
	{ 1, 0xff }, { 8, 0xff }, { 10, 0xff }, { 11, 0xff },
};

/* IPv6: traffic class (across bytes 0 and 1), flow label, hop limit */
static const struct srdma_icrc_byte srdma_masked6[] = {
	{ 0, 0x0f }, { 1, 0xff }, { 2, 0xff }, { 3, 0xff }, { 7, 0xff },
};

/* IPv4: total length, identification, flags, addresses */
static const struct srdma_icrc_byte srdma_covered4[] = {
	{ 3, 0x04 }, { 4, 0x80 }, { 5, 0x01 }, { 6, 0x20 }, { 12, 0x01 },
	{ 19, 0x80 },
};

/* IPv6: payload length, addresses */
static const struct srdma_icrc_byte srdma_covered6[] = {
	{ 5, 0x04 }, { 8, 0x01 }, { 23, 0x10 }, { 24, 0x01 }, { 39, 0x80 },
};

/* Annex A17.3.3: the variant fields are masked, everything else counts. */
static void srdma_icrc_mask_test(struct kunit *test)
{
	const struct srdma_cap_case *c = test->param_value;
	unsigned int bth = srdma_cap_l3l4(c->bytes), i, n;
	bool v4 = c->bytes[0] >> 4 == 4;
	const struct srdma_icrc_byte *b;

	b = v4 ? srdma_masked4 : srdma_masked6;
	n = v4 ? ARRAY_SIZE(srdma_masked4) : ARRAY_SIZE(srdma_masked6);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, srdma_icrc_flip(test, c, b[i].off,
							  b[i].mask),
				    0, "IP byte %u", b[i].off);
	/* UDP checksum, BTH resv8a */
	KUNIT_EXPECT_EQ(test, srdma_icrc_flip(test, c, bth - 2, 0xff), 0);
	KUNIT_EXPECT_EQ(test, srdma_icrc_flip(test, c, bth - 1, 0xff), 0);
	KUNIT_EXPECT_EQ(test, srdma_icrc_flip(test, c,
					      bth + SRDMA_BTH_RESV8A_OFFSET,
					      0xff), 0);

	b = v4 ? srdma_covered4 : srdma_covered6;
	n = v4 ? ARRAY_SIZE(srdma_covered4) : ARRAY_SIZE(srdma_covered6);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, srdma_icrc_flip(test, c, b[i].off,
							  b[i].mask),
				    -EBADMSG, "IP byte %u", b[i].off);
	/* UDP ports and length; the BTH but resv8a; the end and the ICRC */
	for (i = bth - 8; i < bth - 2; i++)
		KUNIT_EXPECT_EQ_MSG(test, srdma_icrc_flip(test, c, i, 0x5a),
				    -EBADMSG, "byte %u", i);
	for (i = bth; i < bth + SRDMA_BTH_LEN; i++)
		if (i != bth + SRDMA_BTH_RESV8A_OFFSET)
			KUNIT_EXPECT_EQ_MSG(test,
					    srdma_icrc_flip(test, c, i, 0x5a),
					    -EBADMSG, "BTH byte %u", i - bth);
	for (i = c->len - 5; i < c->len; i++)
		KUNIT_EXPECT_EQ_MSG(test, srdma_icrc_flip(test, c, i, 0x5a),
				    -EBADMSG, "byte %u", i);
}

/* Transmit side: the ICRC written into a zeroed trailer is rxe's. */
static void srdma_icrc_fill_test(struct kunit *test)
{
	const struct srdma_cap_case *c = test->param_value;
	unsigned int l3l4 = srdma_cap_l3l4(c->bytes), i;
	const struct srdma_layout layouts[] = {
		{ "linear", SRDMA_SHAPE_LINEAR },
		{ "frags, ICRC split", SRDMA_SHAPE_FRAGS, l3l4 + 12, c->len - 3 },
		{ "frag_list", SRDMA_SHAPE_FRAG_LIST, l3l4 },
	};
	struct sk_buff *skb;
	u8 *buf, *out;

	buf = kunit_kmalloc(test, c->len, GFP_KERNEL);
	out = kunit_kmalloc(test, c->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, out);
	memcpy(buf, c->bytes, c->len);
	memset(buf + c->len - SRDMA_ICRC_SIZE, 0, SRDMA_ICRC_SIZE);

	for (i = 0; i < ARRAY_SIZE(layouts); i++) {
		skb = srdma_test_skb(buf, c->len, &layouts[i]);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		skb_reset_network_header(skb);
		skb_set_transport_header(skb, l3l4 - 8);
		KUNIT_EXPECT_EQ_MSG(test, srdma_icrc_fill(skb), 0, "%s",
				    layouts[i].name);
		KUNIT_ASSERT_EQ(test, skb_copy_bits(skb, 0, out, c->len), 0);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(out, c->bytes, c->len), 0,
				    "%s", layouts[i].name);
		kfree_skb(skb);
	}
}

/* Layouts the ICRC cannot cover are refused, not guessed at. */
static void srdma_icrc_layout_test(struct kunit *test)
{
	static const struct srdma_layout linear = { "linear" };
	const struct srdma_cap_case *v4 = &srdma_cap_cases[0];
	const struct srdma_cap_case *v6 = &srdma_cap_cases[1];
	struct sk_buff *skb;
	u32 icrc;
	u8 *buf;

	buf = kunit_kmalloc(test, v6->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);

	/* IP version 5 */
	memcpy(buf, v4->bytes, v4->len);
	buf[0] = 0x55;
	skb = srdma_cap_rx_skb(buf, v4->len, &linear);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_EXPECT_EQ(test, srdma_icrc_verify(skb), -EINVAL);
	kfree_skb(skb);

	/* IPv4, protocol TCP */
	memcpy(buf, v4->bytes, v4->len);
	buf[9] = IPPROTO_TCP;
	skb = srdma_cap_rx_skb(buf, v4->len, &linear);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_EXPECT_EQ(test, srdma_icrc_verify(skb), -EINVAL);
	kfree_skb(skb);

	/* the BTH not right after the UDP header */
	skb = srdma_cap_rx_skb(v4->bytes, v4->len, &linear);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_EXPECT_EQ(test, srdma_icrc_verify(skb), 0);
	skb_pull(skb, 4);
	KUNIT_EXPECT_EQ(test, srdma_icrc_verify(skb), -EINVAL);
	kfree_skb(skb);

	/* IPv6 with an extension header */
	memcpy(buf, v6->bytes, v6->len);
	buf[6] = 0;	/* hop-by-hop options */
	skb = srdma_cap_rx_skb(buf, v6->len, &linear);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_EXPECT_EQ(test, srdma_icrc_verify(skb), -EINVAL);
	/* lengths past the end */
	KUNIT_EXPECT_EQ(test, srdma_icrc(skb, 0, skb->len + 1, &icrc), -EINVAL);
	KUNIT_EXPECT_EQ(test, srdma_icrc(skb, 4, skb->len, &icrc), -EINVAL);
	KUNIT_EXPECT_EQ(test, srdma_icrc(skb, 0, SRDMA_BTH_LEN - 1, &icrc),
			-EINVAL);
	/* no room for BTH and ICRC */
	skb_trim(skb, SRDMA_BTH_LEN + SRDMA_ICRC_SIZE - 1);
	KUNIT_EXPECT_EQ(test, srdma_icrc_verify(skb), -EINVAL);
	kfree_skb(skb);

	/* transmit without a transport header */
	skb = srdma_test_skb(v4->bytes, v4->len, &linear);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reset_network_header(skb);
	KUNIT_EXPECT_EQ(test, srdma_icrc_fill(skb), -EINVAL);
	kfree_skb(skb);
}

static struct kunit_case srdma_icrc_test_cases[] = {
	KUNIT_CASE(srdma_icrc_seed_test),
	KUNIT_CASE_PARAM(srdma_icrc_capture_test, srdma_cap_gen_params),
	KUNIT_CASE_PARAM(srdma_icrc_mask_test, srdma_cap_gen_params),
	KUNIT_CASE_PARAM(srdma_icrc_fill_test, srdma_cap_gen_params),
	KUNIT_CASE(srdma_icrc_layout_test),
	{}
};

static struct kunit_suite srdma_icrc_test_suite = {
	.name = "softrdma_icrc",
	.test_cases = srdma_icrc_test_cases,
};

kunit_test_suite(srdma_icrc_test_suite);
