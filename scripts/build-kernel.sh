#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build bzImage and the modules of one tree ("base" or "patched", default
# from BASE=1) with ccache, incrementally, from allnoconfig plus
# scripts/stackpoll.config; the modules go to OBJ/kernel-modules.cpio.
# "debug" builds the patched sources with scripts/debug.config on top
# (KASAN, lockdep, kmemleak...) in a build directory of its own.
# Prints the path of the bzImage on stdout.
set -eu
. "$(dirname "$0")/lib.sh"

tree=${1:-$(sp_tree)}
src=$(sp_src "$tree")
[ "$tree" = debug ] && src=$(sp_src patched)
obj=$(sp_obj "$tree")
[ -f "$src/Makefile" ] || die "no $tree tree at $src (run scripts/base-tree.sh)"
# The base kernel carries the series' null_blk patches: they change the
# test device, not the stacking, so that both kernels are measured and
# tested on the same device.  Branch base-devices, checked out in the base
# repo (branch base stays the pristine tree the series applies to).
if [ "$tree" = base ]; then
	SP_BRANCH=base-devices SP_ONLY='^null_blk: ' \
		bash "$SP_TOP/scripts/apply-series.sh" >/dev/null 2>"$SP_LOGS/base-devices.log" ||
		die "base: the null_blk patches do not apply: $(tail -1 "$SP_LOGS/base-devices.log")"
	sp_git -C "$src" checkout -q base-devices ||
		die "base: cannot check out branch base-devices in $src"
fi
need_cmds gcc make flex bison bc ccache cpio depmod

case $tree in
base) localversion=-spbase ;;
bisect) localversion=-spbisect ;;
debug) localversion=-stackpoll-debug ;;
*) localversion=-stackpoll ;;
esac

mkdir -p "$obj"
fragment=$obj/stackpoll.config
{
	if [ "$tree" = debug ]; then
		# debug.config may turn off what stackpoll.config turns on.
		grep -vE "^(# )?($(grep -oE '^CONFIG_[A-Z0-9_]+' \
			"$SP_TOP/scripts/debug.config" | paste -sd'|'))[= ]" \
			"$SP_TOP/scripts/stackpoll.config"
		cat "$SP_TOP/scripts/debug.config"
	else
		cat "$SP_TOP/scripts/stackpoll.config"
	fi
	echo "CONFIG_LOCALVERSION=\"$localversion\""
	echo "# CONFIG_LOCALVERSION_AUTO is not set"
} >"$fragment.new"

kmake() { sp_kmake "$src" "$obj" "$@"; }

log=$SP_LOGS/kernel-$tree.log
if ! cmp -s "$fragment.new" "$fragment" || [ ! -f "$obj/.config" ]; then
	say "kernel[$tree]: configuring (allnoconfig + stackpoll.config)"
	mv "$fragment.new" "$fragment"
	KCONFIG_ALLCONFIG=$fragment run_logged "$SP_LOGS/config-$tree.log" \
		kmake allnoconfig
	# A symbol whose dependencies are not met is silently dropped by
	# Kconfig: refuse to build a kernel that lacks something we asked for.
	dropped=$(grep -E '^(CONFIG_[A-Z0-9_]+=.*|# CONFIG_[A-Z0-9_]+ is not set)$' \
		"$fragment" | while read -r line; do
		case $line in
		*=n) line="# ${line%=n} is not set" ;;
		esac
		grep -qxF -- "$line" "$obj/.config" || echo "$line"
	done)
	# Configured anew next time, not taken for done.
	[ -z "$dropped" ] || { rm -f "$fragment"; die "config options not satisfied in $obj/.config: $dropped"; }
else
	rm -f "$fragment.new"
fi

say "kernel[$tree]: building bzImage and modules (log: $log)"
start=$(date +%s)
run_logged "$log" kmake bzImage modules
release=$(cat "$obj/include/config/kernel.release")

# The modules, installed stripped with their depmod files and packed as
# a cpio archive that vm-run.sh appends to the initramfs of this kernel.
# Their paths start at usr/lib: lib is a symlink in the initramfs, and
# an archive entry "lib" would replace it with a directory.
mods=$obj/modules-root
rm -rf "$mods"
run_logged "$SP_LOGS/modules-install-$tree.log" \
	kmake INSTALL_MOD_PATH="$mods/usr" INSTALL_MOD_STRIP=1 modules_install
[ -f "$mods/usr/lib/modules/$release/modules.dep" ] ||
	die "kernel[$tree]: no modules.dep after modules_install (is depmod installed?)"
rm -f "$mods/usr/lib/modules/$release/build"
(cd "$mods" && find usr/lib/modules -print0 | LC_ALL=C sort -z |
	cpio --null --reproducible -o -H newc --quiet) >"$obj/kernel-modules.cpio.new"
mv "$obj/kernel-modules.cpio.new" "$obj/kernel-modules.cpio"
say "kernel[$tree]: $release built in $(($(date +%s) - start)) s," \
	"$(find "$mods" -name '*.ko*' | wc -l) modules"
echo "$obj/arch/x86/boot/bzImage"
