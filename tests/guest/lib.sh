# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# TAP helpers for the guest test scripts (sourced, not run).
#
#   plan N | ok COND-CMD... -- DESCRIPTION | check DESC CMD... | skip DESC
#   finish: prints the trailing plan if none was given, exits non-zero on
#   any failure.

tap_n=0
tap_failed=0

# check DESCRIPTION CMD [ARGS...]: run CMD, "ok" when it exits 0.
check() {
	local desc=$1 out
	shift
	tap_n=$((tap_n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $tap_n - $desc"
	else
		echo "not ok $tap_n - $desc"
		tap_failed=$((tap_failed + 1))
		printf '%s\n' "$out" | tail -n 20 | sed 's/^/# /'
	fi
}

# check_not DESCRIPTION CMD...: "ok" when CMD fails.
check_not() {
	local desc=$1
	shift
	check "$desc" tap_negate "$@"
}

tap_negate() {
	if "$@"; then
		echo "unexpectedly succeeded: $*"
		return 1
	fi
	return 0
}

skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1 # SKIP ${2:-}"
}

diag() {
	echo "# $*"
}

tap_finish() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
}

# wait_for SECONDS CMD...: poll CMD until it succeeds.
wait_for() {
	local t=$(($1 * 10))
	shift
	while [ "$t" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		t=$((t - 1))
	done
	"$@"
}

# The kernel reported a problem since the mark (dmesg line count).
kernel_clean_since() {
	local mark=$1 bad
	bad=$(dmesg | tail -n +"$((mark + 1))" |
		grep -E "Couldn't|WARNING:|BUG:|Oops|Call Trace|KASAN|possible .*deadlock|circular locking|refcount_t|list_(add|del) corruption|unregister_netdevice: waiting" || true)
	if [ -n "$bad" ]; then
		printf '%s\n' "$bad" | head -n 40
		return 1
	fi
	return 0
}

dmesg_mark() {
	dmesg | wc -l
}

# load_module KO: insmod a module built outside the kernel's tree after
# loading, with modprobe, every module it depends on. For softrdma.ko, the
# doorbell device's module built beside it is loaded first (what its
# softdep asks of modprobe), unless SRDMA_NO_DOORBELL_FILE is set.
load_module() {
	local deps dbko
	deps=$(modinfo -F depends "$1" | tr ',' ' ')
	# shellcheck disable=SC2086
	[ -z "$deps" ] || modprobe -a $deps || return 1
	modprobe ib_uverbs || return 1
	dbko=$(dirname "$1")/softrdma_doorbell.ko
	if [ "$(basename "$1")" = softrdma.ko ] && [ -f "$dbko" ] &&
		[ -z "${SRDMA_NO_DOORBELL_FILE:-}" ] &&
		! grep -q '^softrdma_doorbell ' /proc/modules; then
		insmod "$dbko" || return 1
	fi
	insmod "$1"
}
