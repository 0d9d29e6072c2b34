#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The guest side of tools/bench/run-bench --netem: perftest goodput under
# network faults, softrdma next to rdma_rxe, in one guest, one kernel.
#
#   netns "na"                               netns "nb"
#     srdma_a -- va 10.84.0.1/24 ======= vb 10.84.0.2/24 -- srdma_b
#   init netns                               netns "nc"
#     rxe0 ---- veth0 10.85.0.1/24 ==== vc 10.85.0.2/24 -- srdma_c
#
#   column          requester (client)   responder (server)
#   softrdma        srdma_a              srdma_b
#   rxe>softrdma    rxe0                 srdma_c
#   softrdma>rxe    srdma_c              rxe0
#
# rdma_rxe cannot reach a second rxe device in the same guest (it receives
# only in the init netns, and packets between two local addresses never
# leave through a veth), and its loopback path skips the netdev and so
# netem. The requester's recovery (go-back-N, timers, NAK handling) is
# what decides goodput under loss, so the columns with one requester each
# against the same kind of responder compare the two: "softrdma" and
# "rxe>softrdma" have a softrdma responder, "softrdma>rxe" shows softrdma
# recovering against rxe's responder.
#
# Every condition is applied with tc netem to both directions of both
# links. Each figure is one perftest run of NETEM_SECONDS (default 4)
# seconds (-D): the MB/s of messages completed, retransmissions included
# in the cost, not in the figure.
#
# Environment: NETEM_SECONDS, SRDMA_KVER, SRDMA_BUILD, SRDMA_MODULE,
# SRDMA_OUT (results: netem.txt, netem.tsv, logs/). Progress goes to stderr.
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
secs=${NETEM_SECONDS:-4}
PT_LOG=$out/logs
PT_TIMEOUT=$((secs + 60))
# Under loss the clock fit of perftest fails more often on a busy host.
PT_RETRIES=5
mkdir -p "$PT_LOG"
tsv=$out/netem.tsv
mark=$(dmesg_mark)
t0=$(date +%s)

say() { printf '[%4ds] %s\n' $(($(date +%s) - t0)) "$*" >&2; }
die() { echo "netem-guest: $*" >&2; exit 1; }

# --- Setup ----------------------------------------------------------------
cmake --install "$build" >/dev/null || die "cannot install the provider"
grep -q '^softrdma ' /proc/modules || load_module "$module" ||
	die "cannot load $module"
modprobe rdma_rxe || die "cannot load rdma_rxe"
modprobe sch_netem || die "no sch_netem"

for ns in na nb nc; do
	ip netns add $ns
	ip -n $ns link set lo up
done
ip link add va netns na type veth peer name vb netns nb
ip -n na addr add 10.84.0.1/24 dev va
ip -n nb addr add 10.84.0.2/24 dev vb
ip link add veth0 type veth peer name vc netns nc
ip addr add 10.85.0.1/24 dev veth0
ip -n nc addr add 10.85.0.2/24 dev vc
links=("na va" "nb vb" "- veth0" "nc vc")
for l in "${links[@]}"; do
	read -r ns nd <<<"$l"
	[ "$ns" != - ] || ns=""
	in_ns "$ns" ip link set "$nd" up
done
ip netns exec na rdma link add srdma_a type softrdma netdev va || die "srdma_a"
ip netns exec nb rdma link add srdma_b type softrdma netdev vb || die "srdma_b"
ip netns exec nc rdma link add srdma_c type softrdma netdev vc || die "srdma_c"
rdma link add rxe0 type rxe netdev veth0 || die "cannot create rxe0"
# Resolve the neighbours before netem can drop the first ARP.
ip netns exec na ping -c 1 -W 5 10.84.0.2 >/dev/null || die "no path a-b"
ip netns exec nc ping -c 1 -W 5 10.85.0.1 >/dev/null || die "no path c-rxe0"

# Column: "SRV_NS SRV_DEV CLI_NS CLI_DEV SRV_IP CLI_IP" ("-": init netns).
cols=(softrdma "rxe>softrdma" "softrdma>rxe")
declare -A col=(
	[softrdma]="nb srdma_b na srdma_a 10.84.0.2 10.84.0.1"
	[rxe>softrdma]="nc srdma_c - rxe0 10.85.0.2 10.85.0.1"
	[softrdma>rxe]="- rxe0 nc srdma_c 10.85.0.1 10.85.0.2"
)

run_col() {
	local name=$1 sns sdev cns cdev sip
	read -r sns sdev cns cdev sip PT_CLI_IP <<<"${col[$2]}"
	[ "$sns" != - ] || sns=""
	[ "$cns" != - ] || cns=""
	shift 2
	pt_run "$name" "$sns" "$sdev" "$cns" "$cdev" "$sip" "$@"
}

# netem ARGS...: impair every link in both directions ("none": clear).
netem() {
	local l ns nd
	for l in "${links[@]}"; do
		read -r ns nd <<<"$l"
		[ "$ns" != - ] || ns=""
		in_ns "$ns" tc qdisc del dev "$nd" root 2>/dev/null
		[ "$1" = none ] && continue
		# shellcheck disable=SC2068
		in_ns "$ns" tc qdisc add dev "$nd" root netem $@ ||
			die "tc netem $* on $nd"
	done
}

conds=("none" "loss 1%" "loss 10%" "delay 1ms reorder 25% 50%"
	"duplicate 5%" "corrupt 1%")
tests=("write|ib_write_bw -s 65536" "read|ib_read_bw -s 65536"
	"send|ib_send_bw -s 65536" "write4k|ib_write_bw -s 4096")

printf 'condition\ttest\tcolumn\tMB/s\n' >"$tsv"
for cond in "${conds[@]}"; do
	netem "$cond"
	for t in "${tests[@]}"; do
		IFS='|' read -r id cmd <<<"$t"
		say "$cond: $id"
		for c in "${cols[@]}"; do
			name=$(echo "$cond-$id-$c" | tr -c 'a-z0-9.\n' '_')
			# shellcheck disable=SC2086
			if run_col "$name" "$c" $cmd -D "$secs" \
				>"$PT_LOG/$name.err" 2>&1; then
				v=$(pt_bw "$PT_LOG/$name.cli") || v=-
				v=${v%% *}
			else
				v=fail
				say "FAILED: $name (see logs/$name.err)"
			fi
			printf '%s\t%s\t%s\t%s\n' "$cond" "$id" "$c" "$v" >>"$tsv"
		done
	done
done
netem none

for d in srdma_a srdma_b srdma_c rxe0; do
	rdma statistic show link "$d/1" >"$out/stats-$d.txt" 2>&1
done

# --- Report: one line per condition and test, ratios against rxe --------
{
	echo "$kver, goodput under netem (MB/s), ${secs} s per figure"
	echo "ratio: softrdma column over rxe>softrdma (same responder)"
	echo
	awk -F'\t' 'NR > 1 { v[$1 "|" $2 "|" $3] = $4
		if (!($1 "|" $2 in seen)) { seen[$1 "|" $2] = 1; order[n++] = $1 "|" $2 } }
	END {
		printf "%-27s %-8s %9s %13s %9s %13s\n", "condition", "test",
			"softrdma", "rxe>softrdma", "ratio", "softrdma>rxe"
		for (i = 0; i < n; i++) {
			split(order[i], k, "|")
			s = v[order[i] "|softrdma"]; r = v[order[i] "|rxe>softrdma"]
			ratio = (s + 0 > 0 && r + 0 > 0) ? sprintf("%.2f", s / r) : "-"
			printf "%-27s %-8s %9s %13s %9s %13s\n", k[1], k[2], s, r,
				ratio, v[order[i] "|softrdma>rxe"]
		}
	}' "$tsv"
} >"$out/netem.txt"
cat "$out/netem.txt"

for d in srdma_a srdma_b srdma_c rxe0; do
	[ ! -e "/sys/class/infiniband/$d" ] || rdma link delete "$d"
done
for ns in na nb nc; do
	ip netns del $ns
done
ip link del veth0 2>/dev/null
if ! kernel_clean_since "$mark" >"$out/kernel-warnings.txt"; then
	say "the kernel logged warnings: see kernel-warnings.txt"
	exit 1
fi
say "done"
exit 0
