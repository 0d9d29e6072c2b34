# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Helpers to run rdma-core's and perftest's client/server tools between two
# RDMA devices, the server possibly in another network namespace (sourced by
# tests/guest/perftest.sh and tools/bench/bench-guest.sh, not run).
#
#   gid_index DEV IPV4          index of DEV's RoCEv2 GID for IPV4
#   wait_gid DEV IPV4           the same, waiting up to 20 s for the GID
#   pt_run NAME SRV_NS SRV_DEV CLI_NS CLI_DEV SRV_IP TOOL [ARGS...]
#                               run TOOL as server and client, outputs in
#                               $PT_LOG/NAME.srv and $PT_LOG/NAME.cli
#   pt_bw FILE, pt_lat FILE     the figures of a perftest client output
#
# The tools exchange their QP numbers over TCP: the server listens on a port
# of its own per run (from PT_PORT up), the client connects to SRV_IP.

PT_LOG=${PT_LOG:-/tmp/perftest}
PT_PORT=${PT_PORT:-18600}
PT_TIMEOUT=${PT_TIMEOUT:-120}	# seconds a client may run

# gid_index DEV IPV4: print the index of the RoCEv2 GID ::ffff:IPV4 of port 1
# of DEV. rdma_rxe also has a RoCEv1 GID with the same value, softrdma only
# RoCEv2 ones; the index depends on the order addresses came up, so look.
gid_index() {
	local p=/sys/class/infiniband/$1/ports/1 want f n type
	local IFS=.
	# shellcheck disable=SC2086
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' $2)
	unset IFS
	# One grep over the whole table: a port has hundreds of GID entries.
	for f in $(grep -lx "$want" "$p"/gids/* 2>/dev/null); do
		n=${f##*/}
		type=$(cat "$p/gid_attrs/types/$n" 2>/dev/null) || continue
		if [ "$type" = "RoCE v2" ]; then
			echo "$n"
			return 0
		fi
	done
	return 1
}

# wait_gid DEV IPV4: gid_index, waiting for the core to add the GID (it does
# so from a work queue after the device or the address appears).
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

# in_ns NS CMD...: CMD in network namespace NS; "" is the initial namespace.
in_ns() {
	local ns=$1
	shift
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$@"
	else
		"$@"
	fi
}

# listening NS PORT: a TCP socket listens on PORT in NS.
listening() {
	[ -n "$(in_ns "$1" ss -Hltn "sport = :$2" 2>/dev/null)" ]
}

# pt_run NAME SRV_NS SRV_DEV CLI_NS CLI_DEV SRV_IP TOOL [ARGS...]
#
# Starts TOOL as server on SRV_DEV in netns SRV_NS, waits until it listens,
# runs TOOL as client on CLI_DEV in CLI_NS towards SRV_IP, then waits for the
# server. Each side gets the index of its device's RoCEv2 GID (-g for the
# ibv_* examples, -x for perftest); the GIDs are those of SRV_IP and of
# PT_CLI_IP. Outputs: $PT_LOG/NAME.srv, $PT_LOG/NAME.cli. Returns 0 when
# both sides exited 0; otherwise prints why (and the ends of both outputs).
pt_run() {
	local name=$1 sns=$2 sdev=$3 cns=$4 cdev=$5 sip=$6 tool=$7
	shift 7
	local port=$PT_PORT gflag=-x sgid cgid spid crc src t
	PT_PORT=$((PT_PORT + 1))
	case $tool in ibv_*) gflag=-g ;; esac
	mkdir -p "$PT_LOG"
	sgid=$(wait_gid "$sdev" "$sip") || return 1
	cgid=$(wait_gid "$cdev" "${PT_CLI_IP:?}") || return 1

	in_ns "$sns" timeout $((PT_TIMEOUT + 30)) "$tool" -d "$sdev" "$gflag" "$sgid" \
		-p "$port" "$@" >"$PT_LOG/$name.srv" 2>&1 &
	spid=$!
	t=300
	while ! listening "$sns" "$port"; do
		t=$((t - 1))
		if [ $t = 0 ] || ! kill -0 "$spid" 2>/dev/null; then
			echo "$name: the server never listened on port $port"
			kill "$spid" 2>/dev/null
			wait "$spid"
			tail -n 20 "$PT_LOG/$name.srv"
			return 1
		fi
		sleep 0.1
	done

	in_ns "$cns" timeout "$PT_TIMEOUT" "$tool" -d "$cdev" "$gflag" "$cgid" \
		-p "$port" "$@" "$sip" >"$PT_LOG/$name.cli" 2>&1
	crc=$?
	# A client that failed may leave the server waiting for ever.
	[ $crc = 0 ] || { sleep 2; kill "$spid" 2>/dev/null; }
	wait "$spid"
	src=$?
	if [ $crc != 0 ] || [ $src != 0 ]; then
		echo "$name: client exit $crc, server exit $src" \
			"(124: timed out after $PT_TIMEOUT s; 143: killed)"
		echo "client: $tool -d $cdev $gflag $cgid -p $port $* $sip"
		tail -n 15 "$PT_LOG/$name.cli"
		echo "server: $tool -d $sdev $gflag $sgid -p $port $*"
		tail -n 15 "$PT_LOG/$name.srv"
		return 1
	fi
	return 0
}

# pt_bw FILE: "MB/s Mpps" of the last result line of a perftest bandwidth
# run (columns: bytes, iterations, peak MB/s, average MB/s, Mpps).
pt_bw() {
	awk '$1 ~ /^[0-9]+$/ && NF >= 5 && $2 ~ /^[0-9]+$/ { bw = $4; mr = $5 }
	     END { if (bw == "") exit 1; print bw, mr }' "$1"
}

# pt_lat FILE: "typical average" latency in microseconds of the last result
# line of a perftest latency run (bytes, iterations, min, max, typical,
# average, ...).
pt_lat() {
	awk '$1 ~ /^[0-9]+$/ && NF >= 7 && $2 ~ /^[0-9]+$/ { ty = $5; av = $6 }
	     END { if (ty == "") exit 1; print ty, av }' "$1"
}
