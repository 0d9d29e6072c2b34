#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Connection management over softrdma: the kernel's IB CM talks through
# QP1 (MADs in UD datagrams), so librdmacm and its users run unchanged.
#
#   init netns (clients)                       netns "peer" (servers)
#   srdma_c -- veth0 10.80.0.1/24 ========= veth1 10.80.0.2/24 -- srdma_s
#   rxe_c ----'  (interop, after srdma_c is deleted)
#
# Each tool of rdmacm-utils (rping, ucmatose, udaddy, mckey, rdma_server
# and rdma_client, rstream and riostream) and perftest with -R (rdma_cm
# connection setup) must run to completion with exit 0 at both ends. Then
# rdma_rxe replaces srdma_c and rping and ucmatose run again, with rxe as
# the client and with rxe as the server, so that the CM MADs of each side
# are checked against the other.
# On the test kernel (SRDMA_KUNIT=1) the rdma_rxe part is skipped, as in
# suite.sh. Prints TAP; each tool's output goes to $SRDMA_OUT/cm/NAME.{srv,cli}.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/guest/lib.sh
. tests/guest/lib.sh
# shellcheck source=tools/bench/lib.sh
. tools/bench/lib.sh

kver=${SRDMA_KVER:-$(uname -r)}
build=${SRDMA_BUILD:-build}
module=${SRDMA_MODULE:-build/kmod/$kver/softrdma.ko}
out=${SRDMA_OUT:-/tmp}
log=$out/cm
PT_LOG=$log
PT_CLI_IP=10.80.0.1
PT_TIMEOUT=60
# No figure is wanted: a run that reached its report at both ends is done
# even when perftest could not calibrate its clock (tools/bench/lib.sh).
PT_UNCALIBRATED_OK=1
mark=$(dmesg_mark)
mkdir -p "$log"

check "provider installed" cmake --install "$build"
grep -q '^softrdma ' /proc/modules ||
	check "module loads" load_module "$module"
if grep -q '^rdma_rxe ' /proc/modules; then
	check "rdma_rxe unloaded (it holds UDP port 4791 of the init netns)" \
		modprobe -r rdma_rxe
fi

ip netns add peer
ip link add veth0 type veth peer name veth1 netns peer
ip addr add 10.80.0.1/24 dev veth0
ip link set veth0 up
ip link set lo up
ip -n peer addr add 10.80.0.2/24 dev veth1
ip -n peer link set veth1 up
ip -n peer link set lo up

check "device srdma_c on veth0" \
	rdma link add srdma_c type softrdma netdev veth0
check "device srdma_s on veth1 in netns peer" \
	ip netns exec peer rdma link add srdma_s type softrdma netdev veth1
check "RoCEv2 GID of 10.80.0.1 on srdma_c" wait_gid srdma_c 10.80.0.1
check "RoCEv2 GID of 10.80.0.2 on srdma_s" wait_gid srdma_s 10.80.0.2
check "neighbours resolve" sh -c \
	'ping -c 1 -W 5 10.80.0.2 && ip netns exec peer ping -c 1 -W 5 10.80.0.1'

# pair NAME SRV_NS CLI_NS "SERVER CMD" "CLIENT CMD": start the server in
# SRV_NS ("" for the init netns), give it time to listen, run the client
# in CLI_NS, wait for the server. Both must exit 0 within 60 s.
pair() {
	local name=$1 sns=$2 cns=$3 srv=$4 cli=$5 spid crc src t try
	local -a sx=() cx=()

	[ -z "$sns" ] || sx=(ip netns exec "$sns")
	[ -z "$cns" ] || cx=(ip netns exec "$cns")
	# shellcheck disable=SC2086
	"${sx[@]}" timeout 60 $srv >"$log/$name.srv" 2>&1 &
	spid=$!
	# The rdma_cm listeners bind at once; under TCG the process start
	# takes most of a second, several under KASAN. A client that came
	# before the listener is rejected (no such service; rsockets say
	# "Connection refused"): it tries again.
	sleep 2
	for try in 1 2 3 4; do
		# shellcheck disable=SC2086
		"${cx[@]}" timeout 60 $cli >"$log/$name.cli" 2>&1
		crc=$?
		[ $crc != 0 ] && kill -0 "$spid" 2>/dev/null &&
			grep -qE "REJECTED|refused" "$log/$name.cli" || break
		sleep 3
	done
	if [ $crc != 0 ]; then
		t=50
		while [ $t -gt 0 ] && kill -0 "$spid" 2>/dev/null; do
			sleep 0.1
			t=$((t - 1))
		done
		kill "$spid" 2>/dev/null
	fi
	wait "$spid"
	src=$?
	[ $crc = 0 ] && [ $src = 0 ] && return 0
	echo "$name: client exit $crc, server exit $src (124: timeout)"
	echo "client: $cli"
	tail -n 8 "$log/$name.cli"
	echo "server: $srv"
	tail -n 8 "$log/$name.srv"
	return 1
}

# rping checks every byte it moves with -v: the client's ping data comes
# back through RDMA READ and WRITE and is printed at both ends.
rping_ok() {
	pair "$1" "$2" "$3" "rping -s -a $4 -v -C 5" "rping -c -a $4 -v -C 5" &&
		[ "$(grep -c 'ping data: rdma-ping-' "$log/$1.cli")" = 5 ] &&
		[ "$(grep -c 'server ping data: rdma-ping-' "$log/$1.srv")" = 5 ]
}

check "rping -v: srdma_c -> srdma_s" rping_ok rping peer "" 10.80.0.2
check "ucmatose: RC connections, sends both ways" \
	pair ucmatose peer "" "ucmatose -c 4" "ucmatose -s 10.80.0.2 -c 4"
check "udaddy: UD QPs through rdma_cm, sends both ways" \
	pair udaddy peer "" "udaddy -c 4" "udaddy -s 10.80.0.2 -c 4"
# mckey: the receiver joins 239.1.2.3 through rdma_cm and attaches its UD
# QP; the sender joins send-only and sends 10 datagrams to the group.
check "mckey: UD multicast through rdma_cm" \
	pair mckey peer "" "mckey -m 239.1.2.3 -b 10.80.0.2 -C 10" \
		"mckey -m 239.1.2.3 -b 10.80.0.1 -s -C 10"
check "rdma_server / rdma_client" \
	pair rdma_client peer "" "rdma_server" "rdma_client -s 10.80.0.2"
# rsockets (librdmacm's sockets over RC: small sends, RDMA WRITE with
# immediate, zero-length WRITEs as credit updates, completion channels),
# every byte verified (-T v): nonblocking (the default) over all sizes
# and at 4 KiB, blocking at 300000 bytes, and a server that waits in
# rpoll() (-T a). Only the server: a client in rpoll() fails when the
# server's last data and its shutdown are both in before it looks
# (rpoll() reports POLLIN with POLLHUP, which rstream takes for an error).
# riostream adds riowrite() into a mapped peer buffer.
n=0
for o in "-S all -C 10|" "-S 4096 -C 300|" "-T b -S 300000 -C 10|" \
	 "-S 100 -C 500|-T a"; do
	cli_o="-T v ${o%|*}" srv_o="-T v ${o%|*}"
	[ -z "${o#*|}" ] || srv_o+=" ${o#*|}"
	n=$((n + 1))
	for t in rstream riostream; do
		# shellcheck disable=SC2086
		check "$t $srv_o" pair "$t-$n" peer "" "$t -b 10.80.0.2 $srv_o" \
			"$t -s 10.80.0.2 $cli_o"
	done
done
# perftest with -R: the server listens through rdma_cm, not on TCP. A run
# whose clock calibration failed (tools/bench/lib.sh, pt_run) is repeated.
port=18600
cm_perf() {
	local name=$1 tool=$2 try
	shift 2
	for try in 1 2 3; do
		port=$((port + 1))
		pair "$name" peer "" "$tool -d srdma_s -p $port -R $*" \
			"$tool -d srdma_c -p $port -R $* 10.80.0.2" && return 0
		grep -q "Can't produce a report" "$log/$name.cli" \
			"$log/$name.srv" || return 1
	done
	return 1
}
for t in "write_bw_cm ib_write_bw -n 200" "send_lat_cm ib_send_lat -n 200" \
	 "send_bw_ud_cm ib_send_bw -c UD -n 200 -s 512"; do
	# shellcheck disable=SC2086
	check "${t%% *}: ${t#* } -R" cm_perf $t
done
rdma statistic show link srdma_c/1 >"$log/stats-srdma_c.txt" 2>&1
ip netns exec peer rdma statistic show link srdma_s/1 \
	>"$log/stats-srdma_s.txt" 2>&1

check "rdma link delete srdma_c" rdma link delete srdma_c
if [ "${SRDMA_KUNIT:-0}" = 1 ]; then
	skip "rdma_cm with rdma_rxe" "rdma_rxe is no peer on the test kernel"
else
	failed=$tap_failed
	check "rdma_rxe loads" modprobe rdma_rxe
	[ "$tap_failed" != "$failed" ] ||
		check "device rxe_c (rdma_rxe) on veth0" \
			rdma link add rxe_c type rxe netdev veth0
	if [ "$tap_failed" = "$failed" ]; then
		check "rping -v: rxe_c -> srdma_s" \
			rping_ok rping-rxe-cli peer "" 10.80.0.2
		check "rping -v: srdma_s -> rxe_c" \
			rping_ok rping-rxe-srv "" peer 10.80.0.1
		check "ucmatose: rxe_c -> srdma_s" pair ucmatose-rxe peer "" \
			"ucmatose -c 2" "ucmatose -s 10.80.0.2 -c 2"
		check "udaddy: srdma_s -> rxe_c" pair udaddy-rxe "" peer \
			"udaddy -c 2" "udaddy -s 10.80.0.1 -c 2"
		check "rdma link delete rxe_c" rdma link delete rxe_c
	fi
fi
grep -q '^rdma_rxe ' /proc/modules &&
	check "rdma_rxe unloads" modprobe -r rdma_rxe

check "rdma link delete srdma_s" ip netns exec peer rdma link delete srdma_s
check "netns removal" ip netns del peer
ip link del veth0 2>/dev/null
check "kernel logged no warning" kernel_clean_since "$mark"
tap_finish
