#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The guest side of tools/bench/run-bench: the same perftest matrix on
# rdma_rxe and on softrdma, in one guest, one kernel.
#
#   init netns
#     rxe0 ------- veth0 10.81.0.1/24 === veth1          column "rxe"
#   netns "ba"                              netns "bb"
#     srdma_a ---- va 10.82.0.1/24 ====== vb 10.82.0.2/24 -- srdma_b
#                                                        column "softrdma"
#   netns "bl"  (only with BENCH_ONE_DEVICE=1)
#     srdma_l ---- vl0 10.83.0.1/24 ===== vl1            column "softrdma-1dev"
#
#   rxe            client and server on rxe0, to its own address: rdma_rxe
#                  hands such packets from its requester straight to its
#                  receive path (rxe_loopback()), without UDP or IP. That is
#                  the only way to run rxe at both ends in one guest on 6.1
#                  and 6.12: rxe receives only in the init netns, and two
#                  rxe devices there (say on veth0 and veth1) never receive
#                  each other's packets.
#   softrdma       softrdma between two namespaces over veth: the path two
#                  hosts take, UDP/IP at both ends.
#   softrdma-1dev  softrdma like rxe, one device with both ends on it;
#                  softrdma hands such packets from its transmit path
#                  straight to its receive path (srdma_net_loopback()).
#
# rdma_rxe of 6.1 holds UDP port 4791 of the init netns from its load, so
# softrdma's devices live in other namespaces; every device exists for the
# whole run so that the runs of each test can be interleaved: rep 1 of
# every column, then rep 2... A drift in the host's load then touches all
# columns alike. Figures are medians over the reps.
#
# Environment: BENCH_REPS (default 3; 0 skips the matrix), BENCH_DB_DELAY
# (default 100us: the one-way delay of the doorbell count), BENCH_ONE_DEVICE=1
# (the third column), BENCH_PROFILE=1 (perf record -a of a 64 B and a
# 64 KiB ib_write_bw per column), SRDMA_KVER, SRDMA_BUILD, SRDMA_MODULE,
# SRDMA_OUT (results: bench.txt, bench.tsv, bench-raw.tsv, syscalls.tsv,
# doorbells.tsv, stats-DEV.txt, profile-*.txt, logs/). Progress goes to
# stderr.
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
reps=${BENCH_REPS:-3}
PT_LOG=$out/logs
PT_TIMEOUT=60
mkdir -p "$PT_LOG"
raw=$out/bench-raw.tsv
mark=$(dmesg_mark)
t0=$(date +%s)

say() { printf '[%4ds] %s\n' $(($(date +%s) - t0)) "$*" >&2; }
die() { echo "bench-guest: $*" >&2; exit 1; }

# --- Setup ----------------------------------------------------------------
cmake --install "$build" >/dev/null || die "cannot install the provider"
grep -q '^softrdma ' /proc/modules || load_module "$module" ||
	die "cannot load $module"
modprobe rdma_rxe || die "cannot load rdma_rxe"

ip link add veth0 type veth peer name veth1
ip addr add 10.81.0.1/24 dev veth0
ip link set veth0 up
ip link set veth1 up
rdma link add rxe0 type rxe netdev veth0 || die "cannot create rxe0"

# Column: "SRV_NS SRV_DEV CLI_NS CLI_DEV SRV_IP CLI_IP" ("-": init netns).
cols=(rxe softrdma)
declare -A col=(
	[rxe]="- rxe0 - rxe0 10.81.0.1 10.81.0.1"
	[softrdma]="bb srdma_b ba srdma_a 10.82.0.2 10.82.0.1"
	[softrdma-1dev]="bl srdma_l bl srdma_l 10.83.0.1 10.83.0.1"
)
for ns in ba bb; do
	ip netns add $ns
	ip -n $ns link set lo up
done
ip link add va netns ba type veth peer name vb netns bb
ip -n ba addr add 10.82.0.1/24 dev va
ip -n ba link set va up
ip -n bb addr add 10.82.0.2/24 dev vb
ip -n bb link set vb up
devs=("ba srdma_a va" "bb srdma_b vb")
if [ "${BENCH_ONE_DEVICE:-0}" = 1 ]; then
	cols+=(softrdma-1dev)
	one_device_netns bl vl0 10.83.0.1/24 || die "cannot set up netns bl"
	devs+=("bl srdma_l vl0")
fi
for dev in "${devs[@]}"; do
	read -r ns name nd <<<"$dev"
	ip netns exec "$ns" rdma link add "$name" type softrdma netdev "$nd" ||
		die "cannot create $name"
done

# run_col NAME COLUMN TOOL [ARGS...]: pt_run between the column's ends.
run_col() {
	local name=$1 sns sdev cns cdev sip
	read -r sns sdev cns cdev sip PT_CLI_IP <<<"${col[$2]}"
	[ "$sns" != - ] || sns=""
	[ "$cns" != - ] || cns=""
	shift 2
	pt_run "$name" "$sns" "$sdev" "$cns" "$cdev" "$sip" "$@"
}

# counters DEV: "sent received retransmitted" packets of DEV (softrdma's
# and rxe's counter names).
counters() {
	rdma statistic show link "$1/1" 2>/dev/null | awk '{
		for (i = 1; i < NF; i++) {
			if ($i == "tx_packets" || $i == "sent_pkts") tx = $(i + 1)
			if ($i == "rx_packets" || $i == "rcvd_pkts") rx = $(i + 1)
			if ($i == "retransmits" || $i == "completer_retry_err") re = $(i + 1)
		}
	} END { print tx + 0, rx + 0, re + 0 }'
}

# --- The matrix -------------------------------------------------------------
# id | label | unit | kind (bw, mr, lat) | perftest command. Iterations give
# about a second of traffic per run under TCG to the fastest column, several
# to rxe; with -q 4, -n counts per QP. Shorter runs (a tenth of these, until
# 631cb4e) lasted about 50 ms on one device: they measured the start of a
# stream more than its steady state, and their spread hid the ratios.
# Per QP, -n stays a multiple of perftest's completion moderation (100):
# otherwise the last, extra signaled WQE of each QP counts as 100 messages,
# and once the QPs that finish first have overshot their share, perftest
# stops polling the CQ before the others are done and waits for ever
# (seen whenever the QPs progress unevenly, as with SQ polling).
n64k=2000 n4k=16000 nmr=100000 nlat=5000
tests=()
for op in write read send; do
	for q in 1 4; do
		tests+=("${op}_bw_4k_q$q|$op bw 4 KiB, $q QP|MB/s|bw|ib_${op}_bw -s 4096 -q $q -n $((n4k / q))")
		tests+=("${op}_bw_64k_q$q|$op bw 64 KiB, $q QP|MB/s|bw|ib_${op}_bw -s 65536 -q $q -n $((n64k / q))")
	done
done
for op in write read send; do
	tests+=("${op}_lat|$op lat 2 B|usec|lat|ib_${op}_lat -s 2 -n $nlat")
done
for q in 1 4; do
	tests+=("write_mr_q$q|write msg rate 64 B, $q QP|Mpps|mr|ib_write_bw -s 64 -q $q -n $((nmr / q))")
done

printf 'rep\ttest\tcolumn\tstatus\tvalue\tvalue2\ttx_pkts\trx_pkts\tretrans\tseconds\n' >"$raw"
say "$(uname -r): ${#tests[@]} tests x ${#cols[@]} columns x $reps reps"
for rep in $(seq 1 "$reps"); do
	for t in "${tests[@]}"; do
		IFS='|' read -r id _ _ kind cmd <<<"$t"
		say "rep $rep/$reps: $id"
		for c in "${cols[@]}"; do
			name=$id-$c-$rep
			dev=$(read -r _ _ _ d _ <<<"${col[$c]}"; echo "$d")
			read -r tx0 rx0 re0 <<<"$(counters "$dev")"
			s0=$(date +%s.%N)
			# shellcheck disable=SC2086
			if run_col "$name" "$c" $cmd >"$PT_LOG/$name.err" 2>&1; then
				case $kind in
				lat) v=$(pt_lat "$PT_LOG/$name.cli") ;;
				*) v=$(pt_bw "$PT_LOG/$name.cli") ;;
				esac || v="- -"
				read -r v1 v2 <<<"$v"
				st=ok
			else
				v1=- v2=- st=fail
				say "FAILED: $name (see logs/$name.err)"
				sed 's/^/    /' "$PT_LOG/$name.err" | head -n 12 >&2
			fi
			s1=$(date +%s.%N)
			read -r tx1 rx1 re1 <<<"$(counters "$dev")"
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\n' "$rep" "$id" \
				"$c" "$st" "$v1" "$v2" $((tx1 - tx0)) $((rx1 - rx0)) \
				$((re1 - re0)) "$(echo "$s1 - $s0" | bc)" >>"$raw"
		done
	done
done

# --- System calls per post --------------------------------------------------
# ib_write_bw -s 64 -n 10000: the write() + ioctl() calls of the client
# per 1000 posts, set-up and tear-down included (about 60 calls, 6 per
# 1000). Not the difference of two runs of different lengths: with SQ
# polling a run's doorbells depend on whether the other CPU was idle when
# it started streaming, so two runs may differ by thousands of calls.
# perf stat counts the syscall tracepoints in the kernel without slowing
# the process down; strace (the fallback) stops it at every call, which
# gives the transport time to go idle between posts, so it overstates
# doorbells.
sys_posts=10000
syscalls=$out/syscalls.tsv
printf 'column\tposts\tcalls\ttool\n' >"$syscalls"
if perf stat -e syscalls:sys_enter_write true >/dev/null 2>&1; then
	sys_tool=perf
else
	sys_tool=strace
fi
for c in "${cols[@]}"; do
	for n in $sys_posts; do
		f=$PT_LOG/syscalls-$c-$n.txt
		if [ $sys_tool = perf ]; then
			PT_CLI_WRAP="perf stat -x, -e syscalls:sys_enter_write,syscalls:sys_enter_ioctl -o $f"
		else
			PT_CLI_WRAP="strace -c -f -e trace=write,ioctl -o $f"
		fi
		if run_col "syscalls-$c-$n" "$c" ib_write_bw -s 64 -n "$n" \
			>"$PT_LOG/syscalls-$c-$n.err" 2>&1; then
			if [ $sys_tool = perf ]; then
				calls=$(awk -F, '/sys_enter/ { s += $1 } END { print s + 0 }' "$f")
			else
				calls=$(awk '$NF == "write" || $NF == "ioctl" { s += $4 } END { print s + 0 }' "$f")
			fi
		else
			calls=-
		fi
		printf '%s\t%s\t%s\t%s\n' "$c" "$n" "$calls" "$sys_tool" >>"$syscalls"
	done
done

# Doorbells of softrdma alone, per message size, with the veth as it is
# (every round trip ends inside the doorbell call that started it: the
# receiver runs in the softirq the sender raised, so the transport is idle
# again when the process posts next) and with a round trip of twice
# BENCH_DB_DELAY (netem on both ends), as between two hosts: while ACKs
# are outstanding the transport reads new WQEs by itself. Counted as
# above, set-up included.
db_delay=${BENCH_DB_DELAY:-100us}
doorbells=$out/doorbells.tsv
printf 'size\tdelay\tposts\tcalls\n' >"$doorbells"
if [ $sys_tool = perf ]; then
	for delay in 0 "$db_delay"; do
		for l in "ba va" "bb vb"; do
			read -r ns nd <<<"$l"
			[ "$delay" = 0 ] ||
				ip netns exec "$ns" tc qdisc replace dev "$nd" root \
					netem delay "$delay" limit 100000
		done
		for sz in "64 10000" "4096 5000" "65536 1000"; do
			read -r s n <<<"$sz"
			{
				f=$PT_LOG/doorbells-$s-$delay-$n.txt
				PT_CLI_WRAP="perf stat -x, -e syscalls:sys_enter_write,syscalls:sys_enter_ioctl -o $f"
				if run_col "doorbells-$s-$delay-$n" softrdma ib_write_bw \
					-s "$s" -n "$n" >"$PT_LOG/doorbells-$s-$delay-$n.err" 2>&1; then
					calls=$(awk -F, '/sys_enter/ { s += $1 } END { print s + 0 }' "$f")
				else
					calls=-
				fi
				printf '%s\t%s\t%s\t%s\n' "$s" "$delay" "$n" "$calls" >>"$doorbells"
			}
		done
		for l in "ba va" "bb vb"; do
			read -r ns nd <<<"$l"
			ip netns exec "$ns" tc qdisc del dev "$nd" root 2>/dev/null
		done
	done
fi
unset PT_CLI_WRAP

# --- Profiles (BENCH_PROFILE=1) ---------------------------------------------
# A flat system-wide profile of the 64 B message-rate run and of the 64 KiB
# write bandwidth run per column. The data goes to the guest's tmpfs (perf
# cannot mmap a file on the 9p share); only the report is kept.
if [ "${BENCH_PROFILE:-0}" = 1 ]; then
	for c in "${cols[@]}"; do
		for p in "mr|-s 64 -n 20000" "bw64k|-s 65536 -n 600"; do
			IFS='|' read -r pid pargs <<<"$p"
			say "profile $c $pid"
			# perf record takes tens of seconds to start under TCG.
			# shellcheck disable=SC2086
			PT_TIMEOUT=180 \
			PT_CLI_WRAP="perf record -a -q --proc-map-timeout 10000 -o /tmp/perf.data" \
				run_col "profile-$c-$pid" "$c" ib_write_bw $pargs \
				>"$PT_LOG/profile-$c-$pid.err" 2>&1
			perf report -i /tmp/perf.data --stdio --no-children \
				--sort dso,sym 2>/dev/null | grep -v '^#' | grep -v '^$' |
				head -n 60 >"$out/profile-$c-$pid.txt"
			rm -f /tmp/perf.data
		done
	done
fi

for d in rxe0 srdma_a srdma_b srdma_l; do
	[ -e "/sys/class/infiniband/$d" ] &&
		rdma statistic show link "$d/1" >"$out/stats-$d.txt" 2>&1
done
cat /proc/net/softnet_stat >"$out/softnet_stat.txt"

# --- Report -----------------------------------------------------------------
tools/bench/report "$raw" "$syscalls" "$kver" "$reps" "$out/bench.tsv" \
	"${tests[@]}" >"$out/bench.txt" || die "report failed"
# Doorbells per 1000 posts, set-up included.
awk -F'\t' -v d="$db_delay" 'NR > 1 && $4 != "-" {
		k = $1 "|" $2
		n[k] = $3
		c[k] = $4
		if (!($1 in seen)) { seen[$1] = 1; sizes[ns++] = $1 }
	}
	function per(k) {
		if (!(k in n)) return "-"
		return sprintf("%.0f", c[k] * 1000 / n[k])
	}
	END {
		if (!ns) exit
		print ""
		print "softrdma doorbell system calls per 1000 posts, ib_write_bw (perf stat)"
		printf "%-10s %14s %28s\n", "size (B)", "veth as is", "netem delay " d " each way"
		for (i = 0; i < ns; i++)
			printf "%-10s %14s %28s\n", sizes[i], per(sizes[i] "|0"), per(sizes[i] "|" d)
	}' "$doorbells" >>"$out/bench.txt"
cat "$out/bench.txt"

# Leave the guest as found (and let rxe's teardown run under our eyes).
for d in srdma_a srdma_b srdma_l rxe0; do
	[ ! -e "/sys/class/infiniband/$d" ] || rdma link delete "$d"
done
for ns in ba bb bl; do
	[ ! -e "/run/netns/$ns" ] || ip netns del $ns
done
ip link del veth0
if ! kernel_clean_since "$mark" >"$out/kernel-warnings.txt"; then
	say "the kernel logged warnings: see kernel-warnings.txt"
	exit 1
fi
say "done"
exit 0
