#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the out-of-tree test modules dmp_fault and dmp_starve (the dm-poll
# selftests' fault/ directory) against one built tree ("patched" by
# default) with W=1, failing on any compiler or modpost warning, and pack
# them for the test VM: build/kernel/TREE/obj/stackpoll-modules.cpio holds
# /lib/modules/stackpoll/*.ko, and vm-run.sh appends that archive
# to the initramfs of a kernel image in the same obj directory.
# Prints the path of the cpio archive.
#
# Usage: build-module.sh [TREE]
set -eu
. "$(dirname "$0")/lib.sh"

tree=${1:-patched}
src=$(sp_src "$tree")
# The debug kernel is the patched tree built with scripts/debug.config.
[ "$tree" = debug ] && src=$(sp_src patched)
obj=$(sp_obj "$tree")
mod_src=$SP_TOP/tools/testing/selftests/dm-poll/fault
# Built in a copy, so that no build product lands among the files the
# series adds (apply-series.sh adds whatever is in the selftests dir).
mod=$SP_KDIR/$tree/dmp_fault
cpio_out=$obj/stackpoll-modules.cpio
log=$SP_LOGS/module-$tree.log

[ -f "$src/Makefile" ] || die "no $tree tree at $src (run scripts/apply-series.sh)"
if [ ! -f "$obj/arch/x86/boot/bzImage" ] ||
	{ [ ! -f "$obj/Module.symvers" ] && [ ! -f "$obj/vmlinux.symvers" ]; }; then
	die "the $tree kernel is not built in $obj (run scripts/build-kernel.sh $tree)"
fi
grep -qx 'CONFIG_MODULES=y' "$obj/.config" ||
	die "$obj/.config has no CONFIG_MODULES"
[ -f "$mod_src/dmp_fault.c" ] || die "no module sources at $mod_src"
[ -f "$src/include/linux/blk-stack-poll.h" ] ||
	die "the $tree tree has no include/linux/blk-stack-poll.h: dmp_fault needs the series"
need_cmds gcc make cpio ccache
# A failed build leaves no archive behind for the VM to boot with.
rm -f "$cpio_out"

# The command line of build-kernel.sh, so that nothing of the kernel's own
# build is redone or gets another version string.
kmake() { sp_kmake "$src" "$obj" "$@"; }

say "module[$tree]: dmp_fault, dmp_starve (log: $log)"
start=$(date +%s)
: >"$log"
# scripts/module.lds and the host tools; a no-op once done.
kmake modules_prepare >>"$log" 2>&1 || { tail -n 40 "$log" >&2; die "modules_prepare failed; log: $log"; }
# modpost of an external module reads the kernel's exports from
# Module.symvers, which only "make modules" writes.  With every driver
# built in there are no in-tree modules, so it would be vmlinux.symvers
# over again: copy that instead of walking the whole tree.
if [ ! -f "$obj/Module.symvers" ] || [ "$obj/vmlinux.symvers" -nt "$obj/Module.symvers" ]; then
	[ -f "$obj/vmlinux.symvers" ] || die "$obj has neither Module.symvers nor vmlinux.symvers"
	[ ! -s "$obj/modules.order" ] ||
		die "$obj has in-tree modules: run 'make modules' there to get Module.symvers"
	cp "$obj/vmlinux.symvers" "$obj/Module.symvers"
fi

mkdir -p "$mod"
# Copy only what changed (cp -u keeps mtimes newer), so that make stays
# incremental; drop files that are no longer in the sources.
cp -u "$mod_src"/Makefile "$mod_src"/*.c "$mod/"
for f in "$mod"/*.c; do
	[ -f "$mod_src/${f##*/}" ] || rm -f "$f"
done
if ! kmake M="$mod" W=1 modules >>"$log" 2>&1; then
	tail -n 40 "$log" >&2
	die "the test modules do not build; log: $log"
fi
# W=1 warnings do not fail the build: fail on them here.  An unchanged
# module is not recompiled and prints nothing, so remove the object of a
# module that warned: the next build compiles it and warns again.
if grep -nE 'warning:|WARNING:' "$log" >&2; then
	rm -f "$mod"/*.o
	die "the test modules build with warnings (above); log: $log"
fi

pack=$mod/cpio-root
rm -rf "$pack"
mkdir -p "$pack/lib/modules/stackpoll"
kos=()
for m in "$mod_src"/*.c; do
	m=${m##*/}
	[ -f "$mod/${m%.c}.ko" ] || die "no $mod/${m%.c}.ko after the build"
	cp "$mod/${m%.c}.ko" "$pack/lib/modules/stackpoll/"
	kos+=("lib/modules/stackpoll/${m%.c}.ko")
done
(cd "$pack" && printf '%s\n' lib/modules lib/modules/stackpoll "${kos[@]}" |
	cpio --reproducible -o -H newc --quiet) >"$cpio_out.new"
mv "$cpio_out.new" "$cpio_out"
say "module[$tree]: $(modinfo -F vermagic "$mod/dmp_fault.ko" 2>/dev/null || echo '?') in $(($(date +%s) - start)) s"
echo "$cpio_out"
