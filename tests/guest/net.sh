#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# softrdma's UDP sockets per network namespace and its receive path, inside
# a guest. Prints TAP.
#
#   initial netns                               netns srdma_ns
#   -------------                               --------------
#   rxe0 (rdma_rxe, for a while),
#   then srdma_a (softrdma)
#     |
#   veth_a 10.91.0.1/24 fd91::1/64 ══════════ veth_b 10.91.0.2/24 fd91::2/64
#                                                 |
#   dummy_a 10.92.0.1/24                        srdma_b (softrdma)
#     |                                         dummy_b 10.93.0.1/24 (none)
#   srdma_a (refused while rxe has the port)    lo 127.0.0.1 (srdma_lo_b)
#
# Checks: loading the module takes UDP port 4791 nowhere; the first device
# of a namespace opens IPv4 and IPv6 sockets on 4791 there and only there,
# the last one closes them; rdma_rxe in the initial namespace and softrdma
# in srdma_ns coexist; a softrdma device in the initial namespace fails
# with a clear message while rxe has the port; datagrams to 4791 reach the
# device's counters, from the wire (IPv4, IPv6, rdma_rxe's own packets) and
# looped back through lo to the device's address; datagrams for an address
# without a device count as rx_drop_no_device; ibv_rc_pingpong (data
# checked) runs between two QPs of one device (through lo), between
# softrdma and rdma_rxe, and between two softrdma devices, over IPv4 and
# IPv6 GIDs, the IPv6 runs across the veth with transmit checksum offload
# off so that the receiving stack checks softrdma's UDP checksums;
# moving or deleting the netdev, deleting the namespace and rmmod are
# clean; the kernel logged no warning.
#
# Environment: SRDMA_KVER (guest kernel), SRDMA_BUILD (userspace build dir,
# default build), SRDMA_MODULE (default build/kmod/$SRDMA_KVER/softrdma.ko),
# SRDMA_OUT (results).
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/guest/lib.sh
. tests/guest/lib.sh

kver=${SRDMA_KVER:-$(uname -r)}
build=${SRDMA_BUILD:-build}
module=${SRDMA_MODULE:-build/kmod/$kver/softrdma.ko}
resdir=${SRDMA_OUT:-/tmp}
ns=srdma_ns
mark=$(dmesg_mark)

in_ns() {
	ip netns exec "$ns" "$@"
}

# has_4791 [NETNS]: a UDP socket is bound to port 4791 (IPv4 and IPv6).
has_4791() {
	local o
	if [ $# -gt 0 ]; then
		o=$(ip netns exec "$1" ss -Huan)
	else
		o=$(ss -Huan)
	fi
	echo "$o"
	grep -qE '0\.0\.0\.0:4791 ' <<<"$o" && grep -qE '(\[::\]|\*):4791 ' <<<"$o"
}

no_4791() {
	local o
	if [ $# -gt 0 ]; then
		o=$(ip netns exec "$1" ss -Huan)
	else
		o=$(ss -Huan)
	fi
	echo "$o"
	! grep -q ':4791 ' <<<"$o"
}

cnt() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"
}

# grew DEV COUNTER BEFORE: the counter is now above BEFORE.
grew() {
	local now
	now=$(cnt "$1" "$2")
	echo "$1 $2: $3 -> $now"
	[ "$now" -gt "$3" ]
}

same() {
	local now
	now=$(cnt "$1" "$2")
	echo "$1 $2: $3 -> $now"
	[ "$now" -eq "$3" ]
}

# send ADDR [NETNS]: one datagram of garbage to ADDR port 4791.
send() {
	if [ $# -gt 1 ]; then
		ip netns exec "$2" bash -c "printf 'not a BTH' >/dev/udp/$1/4791"
	else
		bash -c "printf 'not a BTH' >/dev/udp/$1/4791"
	fi
}

dev_gone() {
	! rdma dev | grep -q "$1:"
}

logged_in_use() {
	dmesg | tail -n +"$((mark + 1))" |
		grep "UDP port 4791 is in use in this network namespace"
}

# tx_csum_off NETDEV [NETNS]: no transmit checksum offload, so that the
# stack fills in UDP checksums before the netdev and the receiver checks
# them.
tx_csum_off() {
	local cmd=(python3 - "$1")
	[ $# -gt 1 ] && cmd=(ip netns exec "$2" "${cmd[@]}")
	"${cmd[@]}" <<'EOF'
import array, fcntl, socket, struct, sys
ETHTOOL_GTXCSUM, ETHTOOL_STXCSUM, SIOCETHTOOL = 0x16, 0x17, 0x8946
sk, name = socket.socket(), sys.argv[1].encode()
def ethtool(cmd):
    val = array.array('B', struct.pack('II', cmd, 0))
    fcntl.ioctl(sk, SIOCETHTOOL, struct.pack('16sP', name, val.buffer_info()[0]))
    return struct.unpack('II', val)[1]
ethtool(ETHTOOL_STXCSUM)
sys.exit(ethtool(ETHTOOL_GTXCSUM))
EOF
}

# IPv6 UDP checksum errors, both namespaces together.
udp6_csum_errors() {
	cat /proc/net/snmp6 <(in_ns cat /proc/net/snmp6) |
		awk '/^Udp6InCsumErrors/ { n += $2 } END { print n }'
}

# gid_index DEV GID: the table index of GID, once the core has added it.
gid_index() {
	local f t
	for t in $(seq 50); do
		for f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
			if [ "$(cat "$f")" = "$2" ]; then
				basename "$f"
				return 0
			fi
		done
		sleep 0.1
	done
	echo "no GID $2 on $1" >&2
	return 1
}

# pingpong SERVER CLIENT GID_FAMILY: ibv_rc_pingpong with data checks, the
# server on SERVER in $ns, the client on CLIENT in the initial namespace,
# over the GIDs of 10.91.0.0/24 (4) or fd91::/64 (6). CLIENT "self": the
# client on SERVER too, both QPs on one device.
pingpong() {
	local sgid cgid caddr cdev=$2 sidx cidx spid rc cns=()
	if [ "$3" = 4 ]; then
		sgid=0000:0000:0000:0000:0000:ffff:0a5b:0002
		cgid=0000:0000:0000:0000:0000:ffff:0a5b:0001
		caddr=::ffff:10.91.0.1
	else
		sgid=fd91:0000:0000:0000:0000:0000:0000:0002
		cgid=fd91:0000:0000:0000:0000:0000:0000:0001
		caddr=fd91::1
	fi
	if [ "$cdev" = self ]; then
		cdev=$1 cgid=$sgid caddr=${caddr%1}2
		cns=(ip netns exec "$ns")
	fi
	sidx=$(gid_index "$1" "$sgid") || return 1
	cidx=$(gid_index "$cdev" "$cgid") || return 1
	in_ns timeout 120 ibv_rc_pingpong -d "$1" -g "$sidx" -n 20 -c \
		>"$resdir/net-pp-$1-$2-v$3-server.txt" 2>&1 &
	spid=$!
	wait_for 10 sh -c "ip netns exec $ns ss -Htln | grep -q ':18515 '"
	"${cns[@]}" timeout 120 ibv_rc_pingpong -d "$cdev" -g "$cidx" -n 20 -c \
		10.91.0.2 >"$resdir/net-pp-$1-$2-v$3-client.txt" 2>&1
	rc=$?
	wait "$spid" || rc=1
	tail -n 4 "$resdir/net-pp-$1-$2-v$3-client.txt"
	grep -q "local address: .* GID $caddr\$" \
		"$resdir/net-pp-$1-$2-v$3-client.txt" || rc=1
	return $rc
}

# --- Setup -------------------------------------------------------------------
modprobe rdma_ucm
ip netns add "$ns"
in_ns ip link set lo up
ip link add veth_a type veth peer name veth_b
ip link set veth_b netns "$ns"
ip addr add 10.91.0.1/24 dev veth_a
ip -6 addr add fd91::1/64 dev veth_a nodad
ip link set veth_a up
in_ns ip addr add 10.91.0.2/24 dev veth_b
in_ns ip -6 addr add fd91::2/64 dev veth_b nodad
in_ns ip link set veth_b up
in_ns ip link add dummy_b type dummy
in_ns ip addr add 10.93.0.1/24 dev dummy_b
in_ns ip link set dummy_b up
ip link add dummy_a type dummy
ip addr add 10.92.0.1/24 dev dummy_a
ip link set dummy_a up

# --- Sockets follow devices ----------------------------------------------------
check "provider installs into libibverbs' directories" \
	cmake --install "$build"
check "module and its dependencies load" load_module "$module"
check "loading takes port 4791 in no namespace" \
	sh -c "! ss -Huan | grep -q ':4791 ' && ! ip netns exec $ns ss -Huan | grep -q ':4791 '"
check "rdma link add in $ns" \
	in_ns rdma link add srdma_b type softrdma netdev veth_b
check "$ns has IPv4 and IPv6 sockets on 4791" has_4791 "$ns"
check "the initial namespace has none" no_4791

# --- Receive path ---------------------------------------------------------------
check "srdma_b has an ACTIVE port" \
	wait_for 5 sh -c "rdma link show srdma_b/1 | grep -q 'state ACTIVE'"
pk=$(cnt srdma_b rx_packets)
mal=$(cnt srdma_b rx_drop_malformed)
nodev=$(cnt srdma_b rx_drop_no_device)
send 10.91.0.2
check "an IPv4 datagram from the wire counts in rx_packets" \
	wait_for 3 grew srdma_b rx_packets "$pk"
check "and, not being RoCEv2, in rx_drop_malformed" \
	wait_for 3 grew srdma_b rx_drop_malformed "$mal"
pk=$(cnt srdma_b rx_packets)
send fd91::2
check "an IPv6 datagram from the wire counts in rx_packets" \
	wait_for 3 grew srdma_b rx_packets "$pk"
pk=$(cnt srdma_b rx_packets)
send 10.91.0.2 "$ns"
check "a datagram to the device's address through lo is the device's" \
	wait_for 3 grew srdma_b rx_packets "$pk"
pk=$(cnt srdma_b rx_packets)
send fd91::2 "$ns"
check "the same over IPv6" \
	wait_for 3 grew srdma_b rx_packets "$pk"
pk=$(cnt srdma_b rx_packets)
send 10.93.0.1 "$ns"
send 127.0.0.1 "$ns"
check "datagrams to addresses without a device: rx_drop_no_device" \
	wait_for 3 sh -c "[ \$(cat /sys/class/infiniband/srdma_b/ports/1/hw_counters/rx_drop_no_device) -ge $((nodev + 2)) ]"
check "and not rx_packets" same srdma_b rx_packets "$pk"
# RoCEv2 with a P_Key other than the port's (0x1234): a UD SEND to QP1
# (BTH, DETH, ICRC), dropped before its QP is looked up (IBTA 9.6.1.3).
pkd=$(cnt srdma_b rx_drop_pkey)
pkt='\x64\x00\x12\x34\x00\x00\x00\x01\x00\x00\x00\x00'
pkt+='\x80\x01\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00'
printf '%b' "$pkt" >"$resdir/net-pkey.bin"
bash -c "cat '$resdir/net-pkey.bin' >/dev/udp/10.91.0.2/4791"
check "a packet with another P_Key counts in rx_drop_pkey" \
	wait_for 3 grew srdma_b rx_drop_pkey "$pkd"
check "and in ibv_query_port()'s bad_pkey_cntr" sh -c \
	"ibv_devinfo -v -d srdma_b | grep -Eq 'bad_pkey_cntr:[[:space:]]+0x[1-9a-f]'"
check "RC pingpong between two QPs of srdma_b (through lo), IPv4" \
	pingpong srdma_b self 4
check "the same over IPv6" pingpong srdma_b self 6

# --- rdma_rxe next door ----------------------------------------------------------
if modprobe rdma_rxe 2>/dev/null; then
	check "rdma link add rxe0 on veth_a (initial namespace)" \
		rdma link add rxe0 type rxe netdev veth_a
	check "rxe has port 4791 in the initial namespace" has_4791
	check "softrdma keeps its own in $ns" has_4791 "$ns"
	check "softrdma in the initial namespace fails while rxe has the port" \
		tap_negate rdma link add srdma_a type softrdma netdev dummy_a
	check "the log says why" logged_in_use
	check "no srdma_a was left behind" dev_gone srdma_a

	# rping makes rxe send connection requests (UD, QP1) to srdma_b.
	pk=$(cnt srdma_b rx_packets)
	mal=$(cnt srdma_b rx_drop_malformed)
	gid_index rxe0 0000:0000:0000:0000:0000:ffff:0a5b:0001 >/dev/null
	timeout 10 rping -c -a 10.91.0.2 -C 1 >"$resdir/net-rping.txt" 2>&1
	check "rdma_rxe's packets reach srdma_b" grew srdma_b rx_packets "$pk"
	check "and parse as RoCEv2 (not malformed)" same srdma_b rx_drop_malformed "$mal"

	check "RC pingpong softrdma <-> rdma_rxe over IPv4" \
		pingpong srdma_b rxe0 4
	# The receiver verifies the checksums softrdma puts in IPv6 UDP
	# headers; rxe sends zero ones, which softrdma must accept.
	check "veth_b: transmit checksum offload off" tx_csum_off veth_b "$ns"
	csum=$(udp6_csum_errors)
	check "RC pingpong softrdma <-> rdma_rxe over IPv6" \
		pingpong srdma_b rxe0 6
	check "no IPv6 UDP checksum error" \
		test "$(udp6_csum_errors)" = "$csum"

	check "rdma link delete rxe0" rdma link delete rxe0
	check "rmmod rdma_rxe" rmmod rdma_rxe
	check "then the initial namespace's port is free" wait_for 5 no_4791
else
	skip "rdma_rxe tests" "no rdma_rxe module"
fi

# --- softrdma in the initial namespace too -------------------------------------
check "a device in the initial namespace" \
	rdma link add srdma_a type softrdma netdev dummy_a
check "the initial namespace now has softrdma's sockets" has_4791
check "rdma link delete srdma_a releases them" \
	sh -c "rdma link delete srdma_a && ! ss -Huan | grep -q ':4791 '"
check "a device on veth_a" rdma link add srdma_a type softrdma netdev veth_a
check "RC pingpong softrdma <-> softrdma over IPv4" pingpong srdma_b srdma_a 4
check "veth_a: transmit checksum offload off" tx_csum_off veth_a
check "veth_b: transmit checksum offload off" tx_csum_off veth_b "$ns"
csum=$(udp6_csum_errors)
check "RC pingpong softrdma <-> softrdma over IPv6" pingpong srdma_b srdma_a 6
check "no IPv6 UDP checksum error" test "$(udp6_csum_errors)" = "$csum"
check "rdma link delete srdma_a" rdma link delete srdma_a

# --- Release -----------------------------------------------------------------------
check "a second device in $ns (on dummy_b)" \
	in_ns rdma link add srdma_b2 type softrdma netdev dummy_b
check "deleting one of two devices keeps the sockets" \
	sh -c "rdma link delete srdma_b2 && ip netns exec $ns ss -Huan | grep -q ':4791 '"
check "deleting the last device of $ns releases port 4791" \
	sh -c "rdma link delete srdma_b && ! ip netns exec $ns ss -Huan | grep -q ':4791 '"
check "a device can be added again" \
	in_ns rdma link add srdma_b type softrdma netdev veth_b
check "and a device on $ns's lo" \
	in_ns rdma link add srdma_lo_b type softrdma netdev lo
pk=$(cnt srdma_lo_b rx_packets)
send 127.0.0.1 "$ns"
check "which gets datagrams to 127.0.0.1" \
	wait_for 3 grew srdma_lo_b rx_packets "$pk"
in_ns ip link add dummy_c type dummy
in_ns rdma link add srdma_c type softrdma netdev dummy_c
in_ns ip link set dummy_c netns 1
check "a netdev moving to another namespace takes its device along" \
	wait_for 5 dev_gone srdma_c
check "the namespace keeps its sockets for the others" has_4791 "$ns"
ip link del dummy_c
check "ip netns del with devices in it" ip netns del "$ns"
check "its devices are gone" \
	wait_for 10 sh -c "! rdma dev | grep -qE 'srdma_(b|lo_b):'"

# A netdev leaving a namespace that is deleted at once: the device may still
# be attached to the namespace when its exit runs.
ip netns add "$ns"
ip link add dummy_d type dummy
ip link set dummy_d netns "$ns"
in_ns ip link set dummy_d up
in_ns rdma link add srdma_d type softrdma netdev dummy_d
ip -n "$ns" link set dummy_d netns 1
ip netns del "$ns"
check "netdev moved out of a namespace deleted right after: clean" \
	wait_for 10 dev_gone srdma_d
ip link del dummy_d

check "rmmod" rmmod softrdma
check "no socket on 4791 is left" no_4791
check "kernel logged no warning" kernel_clean_since "$mark"
ip link del veth_a 2>/dev/null
ip link del dummy_a

tap_finish
