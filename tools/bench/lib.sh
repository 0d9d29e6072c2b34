# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# Run rdma-core's and perftest's client/server tools between two RDMA
# devices, each end in any network namespace. Sourced by
# tests/guest/perftest.sh, tests/guest/teardown.sh and the scripts of
# tools/bench/.
#
#   gid_index DEV IPV4      index of DEV's RoCEv2 GID for IPV4
#   wait_gid DEV IPV4       the same, waiting up to 20 s for the GID
#   in_ns NS CMD...         CMD in netns NS ("" is the initial one)
#   one_device_netns NS IF CIDR
#                           netns NS with a veth pair IF/IF's peer (IF
#                           with 1 for its last character), IF at CIDR:
#                           both ends of a one-device run
#   pt_run NAME SRV_NS SRV_DEV CLI_NS CLI_DEV SRV_IP TOOL [ARGS...]
#                           TOOL as server and client; outputs in
#                           $PT_LOG/NAME.srv and $PT_LOG/NAME.cli
#   pt_bw FILE              "MB/s Mpps" of a perftest bandwidth output
#   pt_lat FILE             "typical average" (usec) of a latency output
#
# Settings (environment or shell variables):
#   PT_CLI_IP    the client's IPv4 address (selects its GID); required
#   PT_LOG       directory for the outputs (default /tmp/perftest)
#   PT_PORT      first TCP port for the out-of-band exchange (default
#                18600); each run takes the next one, so that no run
#                meets a socket of the previous one
#   PT_TIMEOUT   seconds a client may take (default 120)
#   PT_CLI_WRAP  a command line to run the client under (perf stat ...)
#   PT_RETRIES   extra attempts when perftest could not calibrate its clock
#                (default 2)
#   PT_UNCALIBRATED_OK  1: a run that never calibrated counts as done (it
#                ran to its report at both ends; no figure is wanted)

PT_LOG=${PT_LOG:-/tmp/perftest}
PT_PORT=${PT_PORT:-18600}
PT_TIMEOUT=${PT_TIMEOUT:-120}
PT_RETRIES=${PT_RETRIES:-2}

# gid_of ADDRESS: the GID of an IPv4 address (IPv4-mapped) or of an IPv6
# one, written as sysfs writes GIDs (eight groups of four hex digits).
gid_of() {
	local head tail g grp=() IFS
	case $1 in
	*:*)
		head=${1%%::*} tail=
		[ "$head" = "$1" ] || tail=${1#*::}
		IFS=:
		# shellcheck disable=SC2206
		local hs=($head) ts=($tail)
		unset IFS
		grp=("${hs[@]}")
		[ "$head" = "$1" ] ||
			for ((g = ${#hs[@]} + ${#ts[@]}; g < 8; g++)); do grp+=(0); done
		grp+=("${ts[@]}")
		grp=("${grp[@]/#/0x}")
		printf '%04x:%04x:%04x:%04x:%04x:%04x:%04x:%04x' "${grp[@]}"
		;;
	*)
		IFS=.
		# shellcheck disable=SC2086
		printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' $1
		;;
	esac
}

# gid_index DEV IPV4: print the index of the RoCEv2 GID ::ffff:IPV4 of port 1
# of DEV. rdma_rxe lists a RoCEv1 GID of the same value too, softrdma only
# RoCEv2 ones, and indices follow the order addresses came up: look it up.
gid_index() {
	local p=/sys/class/infiniband/$1/ports/1 want f n type
	want=$(gid_of "$2")
	# One grep over the whole table: a port has hundreds of entries, and
	# a process per entry costs seconds under TCG.
	while read -r f; do
		n=${f##*/}
		type=$(cat "$p/gid_attrs/types/$n" 2>/dev/null) || continue
		if [ "$type" = "RoCE v2" ]; then
			echo "$n"
			return 0
		fi
	done < <(grep -lx "$want" "$p"/gids/* 2>/dev/null)
	return 1
}

# wait_gid DEV IPV4: gid_index, waiting for the RDMA core, which adds GIDs
# from a work queue after the device or the address appears.
wait_gid() {
	local t=200
	while [ $t -gt 0 ]; do
		gid_index "$1" "$2" && return 0
		sleep 0.1
		t=$((t - 1))
	done
	echo "no RoCEv2 GID for $2 on $1" >&2
	return 1
}

in_ns() {
	local ns=$1
	shift
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$@"
	else
		"$@"
	fi
}

one_device_netns() {
	local ns=$1 ifa=$2 cidr=$3
	local ifb=${ifa%?}1
	ip netns add "$ns" &&
		ip -n "$ns" link set lo up &&
		ip link add "$ifa" netns "$ns" type veth peer name "$ifb" netns "$ns" &&
		ip -n "$ns" addr add "$cidr" dev "$ifa" &&
		ip -n "$ns" link set "$ifa" up &&
		ip -n "$ns" link set "$ifb" up
}

# listening NS PORT: a TCP socket listens on PORT in NS.
listening() {
	[ -n "$(in_ns "$1" ss -Hltn "sport = :$2" 2>/dev/null)" ]
}

# pt_counters NS DEV: DEV's non-zero port counters, on one line.
pt_counters() {
	in_ns "$1" rdma statistic show link "$2/1" 2>&1 |
		awk '{ s = $2 ":"; for (i = 3; i < NF; i += 2)
			if ($(i + 1) != 0) s = s " " $i " " $(i + 1); print s }'
}

# pt_uncalibrated LOG: the tool that wrote LOG ran to its report and
# stopped there because it could not calibrate its clock.
pt_uncalibrated() {
	grep -q "Can't produce a report" "$1"
}

# pt_once NAME SRV_NS SRV_DEV CLI_NS CLI_DEV SRV_IP TOOL [ARGS...]: one
# attempt of pt_run. Returns 0 when both ends exited 0, 2 when perftest
# could not calibrate its clock (a property of the guest's timing, not of
# the device), 1 on any other failure.
pt_once() {
	local name=$1 sns=$2 sdev=$3 cns=$4 cdev=$5 sip=$6 tool=$7
	shift 7
	local port=$PT_PORT gflag=-x sgid cgid spid crc src t wrap=() sns_exec=()
	PT_PORT=$((PT_PORT + 1))
	case $tool in ibv_*) gflag=-g ;; esac
	sgid=$(wait_gid "$sdev" "$sip") || return 1
	cgid=$(wait_gid "$cdev" "${PT_CLI_IP:?}") || return 1
	# stdbuf: keep stdout and stderr in order in the logs, and keep what a
	# killed tool printed.
	# A simple command, not a function, in the background: $! is then the
	# timeout process itself, which passes a kill on to the server.
	[ -z "$sns" ] || sns_exec=(ip netns exec "$sns")
	"${sns_exec[@]}" timeout $((PT_TIMEOUT + 30)) stdbuf -oL "$tool" \
		-d "$sdev" "$gflag" "$sgid" -p "$port" "$@" \
		>"$PT_LOG/$name.srv" 2>&1 &
	spid=$!
	# The client does not retry its TCP connection: wait for the server
	# (which takes a second or so to start under TCG).
	sleep 0.5
	t=300
	while ! listening "$sns" "$port"; do
		t=$((t - 1))
		if [ $t = 0 ] || ! kill -0 "$spid" 2>/dev/null; then
			echo "$name: the server never listened on port $port"
			echo "server: $tool -d $sdev $gflag $sgid -p $port $*"
			kill "$spid" 2>/dev/null
			wait "$spid"
			tail -n 8 "$PT_LOG/$name.srv"
			return 1
		fi
		sleep 0.1
	done
	# shellcheck disable=SC2206
	[ -z "${PT_CLI_WRAP:-}" ] || wrap=($PT_CLI_WRAP)
	in_ns "$cns" timeout "$PT_TIMEOUT" "${wrap[@]}" stdbuf -oL "$tool" \
		-d "$cdev" "$gflag" "$cgid" -p "$port" "$@" "$sip" \
		>"$PT_LOG/$name.cli" 2>&1
	crc=$?
	# A server whose client failed may wait for it for ever.
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
	# An end that could not calibrate skips the final exchange, which
	# the other end then reports as a failure of its own.
	pt_uncalibrated "$PT_LOG/$name.cli" ||
		pt_uncalibrated "$PT_LOG/$name.srv" && return 2
	# At most 20 lines: check() shows the last 20.
	echo "$name: client exit $crc, server exit $src (124: timeout)"
	pt_counters "$cns" "$cdev"
	pt_counters "$sns" "$sdev"
	echo "client: $tool -d $cdev $gflag $cgid -p $port $* $sip"
	tail -n 7 "$PT_LOG/$name.cli"
	echo "server: $tool -d $sdev $gflag $sgid -p $port $*"
	tail -n 7 "$PT_LOG/$name.srv"
	return 1
}

# pt_run NAME SRV_NS SRV_DEV CLI_NS CLI_DEV SRV_IP TOOL [ARGS...]
#
# Starts TOOL as server on SRV_DEV in netns SRV_NS, waits until it listens,
# runs it as client on CLI_DEV in CLI_NS towards SRV_IP and waits for the
# server. Each end gets the index of its device's RoCEv2 GID (-g for the
# ibv_* examples, -x for perftest): SRV_IP's and PT_CLI_IP's. Returns 0 when
# both ends exited 0, else prints the commands and the ends of their output.
#
# perftest reports only after it has measured the CPU's cycles per
# microsecond by regression over gettimeofday(); under TCG on a busy host
# that fit can fail ("Correlation coefficient r^2 < 0.9", exit 1 at the
# end of a complete run, at either end). Such runs are repeated up to
# PT_RETRIES times.
pt_run() {
	local try=0 rc
	mkdir -p "$PT_LOG"
	while :; do
		pt_once "$@"
		rc=$?
		[ $rc = 2 ] || return $rc
		try=$((try + 1))
		if [ $try -gt "$PT_RETRIES" ]; then
			echo "$1: perftest could not calibrate its clock in $try runs"
			grep -h "r^2" "$PT_LOG/$1.cli" "$PT_LOG/$1.srv"
			# Each run still went to its report at both ends.
			[ "${PT_UNCALIBRATED_OK:-0}" = 1 ] && return 0
			return 1
		fi
		echo "# $1: perftest's clock calibration failed, run again" >&2
		# A busy host spoils the fit for a while: let it pass.
		sleep 2
	done
}

# pt_bw FILE: "MB/s Mpps" of the last result line of a perftest bandwidth
# run (columns: bytes, iterations, peak MB/s, average MB/s, Mpps).
pt_bw() {
	awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5 { bw = $4; mr = $5 }
	     END { if (bw == "") exit 1; print bw, mr }' "$1"
}

# pt_lat FILE: "typical average" latency in microseconds of the last
# result line of a perftest latency run (bytes, iterations, min, max,
# typical, average, ...).
pt_lat() {
	awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 7 { ty = $5; av = $6 }
	     END { if (ty == "") exit 1; print ty, av }' "$1"
}
