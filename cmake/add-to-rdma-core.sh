#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Make an rdma-core source tree build the softrdma provider the way it builds
# its own providers.
#
#   add-to-rdma-core.sh [--copy | --remove] RDMA_CORE_TREE [SOFTRDMA_REPO]
#
# Changes to RDMA_CORE_TREE (each step is skipped when already done):
#   providers/softrdma              link to SOFTRDMA_REPO/provider (whose
#                                   CMakeLists.txt calls rdma_provider()
#                                   when rdma-core includes it); --copy:
#                                   its *.c, *.h and a CMakeLists.txt with
#                                   rdma_provider(softrdma <sources>)
#   kernel-headers/rdma/softrdma-abi.h
#                                   link to (--copy: copy of) the uAPI header
#   kernel-headers/CMakeLists.txt   rdma/softrdma-abi.h added to
#                                   publish_internal_headers(rdma ...) and to
#                                   the rdma_kernel_provider_abi(...) call, so
#                                   <rdma/softrdma-abi.h> and
#                                   <kernel-abi/softrdma-abi.h> exist
#   CMakeLists.txt                  add_subdirectory(providers/softrdma)
#                                   after the siw provider
# --copy gives a self-contained tree to turn into a distribution patch;
# --remove undoes all of it.
#
# Static libibverbs builds (ENABLE_STATIC) also list providers in
# libibverbs/verbs.h and all_providers.c; softrdma is not added there.
set -eu

mode=link
case "${1:-}" in
--copy) mode=copy; shift ;;
--remove) mode=remove; shift ;;
esac

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	sed -n '7p' "$0" >&2
	exit 2
fi

tree=$(cd "$1" && pwd)
repo=$(cd "${2:-$(dirname "$0")/..}" && pwd)
uapi="$repo/include/uapi/rdma/softrdma-abi.h"
khdr_cmake="$tree/kernel-headers/CMakeLists.txt"
top_cmake="$tree/CMakeLists.txt"
entry='  rdma/softrdma-abi.h'
subdir='add_subdirectory(providers/softrdma)'

die() {
	echo "add-to-rdma-core: $*" >&2
	exit 1
}

[ -f "$tree/buildlib/rdma_functions.cmake" ] && [ -f "$khdr_cmake" ] &&
	[ -f "$tree/libibverbs/driver.h" ] ||
	die "$tree is not an rdma-core source tree"
grep -q '^function(rdma_provider ' "$tree/buildlib/rdma_functions.cmake" ||
	die "$tree/buildlib/rdma_functions.cmake has no rdma_provider()"

# Insert $2 after the first line equal to $1 in file $3, unless present
# after it already.
insert_after() {
	awk -v anchor="$1" -v line="$2" '
		done == 0 && seen == 1 { if ($0 != line) print line; done = 1 }
		{ print }
		$0 == anchor && done == 0 { seen = 1 }
		END { if (seen == 0) exit 3 }' "$3" >"$3.softrdma" ||
		{ rm -f "$3.softrdma"; die "no line '$1' in $3"; }
	mv "$3.softrdma" "$3"
}

remove_line() {
	grep -vxF "$1" "$2" >"$2.softrdma" || true
	mv "$2.softrdma" "$2"
}

if [ "$mode" = remove ]; then
	rm -rf "$tree/providers/softrdma" "$tree/kernel-headers/rdma/softrdma-abi.h"
	remove_line "$entry" "$khdr_cmake"
	remove_line "$subdir" "$top_cmake"
	echo "softrdma removed from $tree"
	exit 0
fi

[ -f "$uapi" ] || die "missing $uapi (the provider needs its uAPI header)"
ls "$repo"/provider/*.c >/dev/null 2>&1 || die "no $repo/provider/*.c"

# Provider sources.
dst="$tree/providers/softrdma"
if [ "$mode" = link ]; then
	if [ -d "$dst" ] && [ ! -L "$dst" ]; then
		die "$dst exists and is not a link (remove it, or use --copy)"
	fi
	ln -sfn "$repo/provider" "$dst"
else
	[ -L "$dst" ] && rm -f "$dst"
	mkdir -p "$dst"
	rm -f "$dst"/*.c "$dst"/*.h
	cp "$repo"/provider/*.c "$dst/"
	for h in "$repo"/provider/*.h; do
		[ -e "$h" ] && cp "$h" "$dst/"
	done
	# In rdma-core's own style: one rdma_provider() call.
	{
		echo 'rdma_provider(softrdma'
		for c in "$dst"/*.c; do
			echo "  $(basename "$c")"
		done
		echo ')'
	} >"$dst/CMakeLists.txt"
fi

# uAPI header, where rdma-core keeps its copies of the kernel's.
khdr="$tree/kernel-headers/rdma/softrdma-abi.h"
if [ "$mode" = link ]; then
	ln -sfn "$uapi" "$khdr"
else
	rm -f "$khdr"
	cp "$uapi" "$khdr"
fi

# Register the header and the provider with the tree's build.
insert_after 'publish_internal_headers(rdma' "$entry" "$khdr_cmake"
insert_after 'rdma_kernel_provider_abi(' "$entry" "$khdr_cmake"
if ! grep -qxF "$subdir" "$top_cmake"; then
	insert_after 'add_subdirectory(providers/siw)' "$subdir" "$top_cmake"
fi

pabi=$(sed -n 's/^set(IBVERBS_PABI_VERSION "\([0-9]*\)")/\1/p' "$top_cmake")
echo "softrdma added to $tree ($mode); it builds lib/libsoftrdma-rdmav${pabi:-?}.so"
