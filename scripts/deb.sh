#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Debian packages of the patched kernel, for a real machine: Debian's own
# config (linux-config-6.12, amd64, or DEB_CONFIG=FILE, plain, .xz or
# .gz), the series' new options at their defaults (olddefconfig), built
# with the kernel's bindeb-pkg and ccache.  Release 6.12.y-stackpoll.
# Prints the paths of the packages on stdout; they land in build/deb/.
#
# Changed from the config given, and only that:
#   SYSTEM_TRUSTED_KEYS, SYSTEM_REVOCATION_KEYS  blanked when they name
#       files (Debian's certificates, not in this tree); the build makes
#       its own module signing key
#   DEBUG_INFO  off, unless DEB_DEBUG_INFO=1: Debian's DWARF in every
#       object and pahole's BTF of vmlinux and of every module make the
#       build longer, its directory several times larger, and add a -dbg
#       package of about a GB; DEB_DEBUG_INFO=1 keeps them and needs
#       pahole (apt-get install dwarves)
#   DEB_TESTS=1  adds what the dm-poll kselftests' config asks for and
#       the given config lacks (Debian's: md linear, dm-ebs, dm-dust,
#       dm-clone, SLUB_STATS, DEBUG_ATOMIC_SLEEP), so that every test runs
#   DEB_FRAGMENT=FILE  Kconfig lines of your own applied on top
# DEB_CONFIG_ONLY=1 stops after the config (build/kernel/patched/deb/.config).
set -eu
. "$(dirname "$0")/lib.sh"

DEB_CONFIG=${DEB_CONFIG:-/usr/src/linux-config-6.12/config.amd64_none_amd64.xz}
localversion=-stackpoll
src=$(sp_src patched)
# Beside obj/, not under build/deb: ccache (CCACHE_BASEDIR, lib.sh) sees
# the sources as ../src from both, so that the test kernel's objects are
# hits here; from build/deb/obj every path would differ.
obj=$SP_KDIR/patched/deb
# dpkg-buildpackage writes the packages to the parent of the build
# directory; they are moved from there to build/deb.
pkgdir=$SP_KDIR/patched
out=$SP_BUILD/deb
log=$SP_LOGS/deb.log

[ -f "$src/Makefile" ] || die "no patched tree at $src (run: make tree)"
if [ ! -f "$src/include/linux/blk-stack-poll.h" ] ||
	[ -z "$(git -C "$src" rev-list -1 base..HEAD 2>/dev/null)" ]; then
	die "$src is not patched: the series is not applied (run: make tree)"
fi
[ -z "$(git -C "$src" status --porcelain --untracked-files=no)" ] ||
	say "deb: note: $src has uncommitted changes; they are built too"
[ -f "$DEB_CONFIG" ] || die "no kernel config at $DEB_CONFIG" \
	"(apt-get install linux-config-6.12, or DEB_CONFIG=/path/to/config)"
need_cmds gcc make flex bison bc ccache cpio depmod xz perl python3 openssl \
	dpkg-buildpackage dh_testdir
if [ -n "${DEB_FRAGMENT:-}" ]; then
	[ -f "$DEB_FRAGMENT" ] || die "DEB_FRAGMENT=$DEB_FRAGMENT: no such file"
fi

mkdir -p "$obj" "$out"
case $DEB_CONFIG in
*.xz) xzcat "$DEB_CONFIG" ;;
*.gz) zcat "$DEB_CONFIG" ;;
*) cat "$DEB_CONFIG" ;;
esac >"$obj/given.config" || die "cannot read $DEB_CONFIG"
grep -q '^CONFIG_X86_64=y$' "$obj/given.config" ||
	die "$DEB_CONFIG is not an x86_64 kernel config"

cp "$obj/given.config" "$obj/wanted.config"
cfg() { "$src/scripts/config" --file "$obj/wanted.config" "$@"; }
for key in SYSTEM_TRUSTED_KEYS SYSTEM_REVOCATION_KEYS; do
	val=$(cfg --state "$key")
	case $val in
	'' | undef) ;;
	*)
		say "deb: config: $key=\"\" (was \"$val\", not in this tree)"
		cfg --set-str "$key" ""
		;;
	esac
done
if [ "${DEB_DEBUG_INFO:-0}" = 1 ]; then
	[ "$(cfg --state DEBUG_INFO_BTF)" != y ] || need_cmds pahole
elif [ "$(cfg --state DEBUG_INFO)" = y ]; then
	say "deb: config: DEBUG_INFO off (DEB_DEBUG_INFO=1 keeps it)"
	cfg --disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT \
		--disable DEBUG_INFO_DWARF4 --disable DEBUG_INFO_DWARF5 \
		--enable DEBUG_INFO_NONE
fi
# lacking CONFIG: what the dm-poll kselftests' config sets (y or m) and
# CONFIG does not; the tests that need it fail or skip on that kernel.
lacking() {
	grep -E '^CONFIG_[A-Z0-9_]+=[ym]$' \
		"$src/tools/testing/selftests/dm-poll/config" |
		while IFS= read -r line; do
			grep -qE "^${line%=*}=[ym]$" "$1" || echo "$line"
		done
}
if [ "${DEB_TESTS:-0}" = 1 ]; then
	add=$(lacking "$obj/wanted.config")
	say "deb: config: for the kselftests: $(echo "$add" | paste -sd" ")"
	echo "$add" >>"$obj/wanted.config"
fi
if [ -n "${DEB_FRAGMENT:-}" ]; then
	say "deb: config: $DEB_FRAGMENT on top"
	cat "$DEB_FRAGMENT" >>"$obj/wanted.config"
fi
# The release gets -stackpoll from LOCALVERSION on the command line, not
# from CONFIG_LOCALVERSION, which would change autoconf.h and with it
# every file's ccache key.  A config that carries it already (the test
# kernel's) gets nothing more.
case $(cfg --state LOCALVERSION) in
*"$localversion") lv= ;;
*) lv=$localversion ;;
esac

kmake() { sp_kmake "$src" "$obj" LOCALVERSION="$lv" "$@"; }

cp "$obj/wanted.config" "$obj/.config"
run_logged "$SP_LOGS/deb-config.log" kmake olddefconfig
if [ "${DEB_DEBUG_INFO:-0}" != 1 ] && grep -qx 'CONFIG_DEBUG_INFO=y' "$obj/.config"; then
	die "DEBUG_INFO is still on in $obj/.config"
fi
# What olddefconfig changed: what follows from the changes above, the
# series' new options (it adds none today), and what differs between the
# compiler and tools here and where the config was made.
"$src/scripts/diffconfig" "$obj/wanted.config" "$obj/.config" \
	>"$SP_LOGS/deb-olddefconfig.diff" || die "scripts/diffconfig failed"
"$src/scripts/diffconfig" "$obj/given.config" "$obj/.config" \
	>"$SP_LOGS/deb-config.diff" || die "scripts/diffconfig failed"
names() { grep "^$1" "$SP_LOGS/deb-olddefconfig.diff" | awk '{ print $1 }' |
	sed 's/^[-+]//' | paste -sd' '; }
say "deb: olddefconfig: dropped (dependencies off): $(names -);" \
	"changed: $(names ' ');" "added at their defaults: $(names '+')" \
	"(values: $SP_LOGS/deb-olddefconfig.diff; against $DEB_CONFIG:" \
	"$SP_LOGS/deb-config.diff)"
missing=$(lacking "$obj/.config" | sed 's/^CONFIG_//; s/=.*//' | paste -sd' ')
[ -z "$missing" ] ||
	say "deb: the dm-poll kselftests that need $missing will fail or skip" \
		"on this kernel (DEB_TESTS=1 adds them)"

[ "${DEB_CONFIG_ONLY:-0}" != 1 ] || exit 0

# The previous run's packages, here and where dpkg-buildpackage writes
# them (the parent of the build directory).
rm -f "$out"/linux-*.deb "$out"/linux-upstream_* \
	"$pkgdir"/linux-*.deb "$pkgdir"/linux-upstream_*
say "deb: building with bindeb-pkg (log: $log)"
start=$(date +%s)
DEBFULLNAME=$SP_AUTHOR_NAME DEBEMAIL=$SP_AUTHOR_EMAIL \
	run_logged "$log" kmake bindeb-pkg
release=$(cat "$obj/include/config/kernel.release")
find "$pkgdir" -maxdepth 1 \( -name 'linux-*.deb' -o -name 'linux-upstream_*' \) \
	-exec mv -t "$out" {} +
image=$(find "$out" -maxdepth 1 -name "linux-image-${release}_*.deb")
headers=$(find "$out" -maxdepth 1 -name "linux-headers-${release}_*.deb")
[ -n "$image" ] || die "no linux-image-$release package in $out (log: $log)"
say "deb: $release packaged in $(($(date +%s) - start)) s:" \
	"$(find "$out" -maxdepth 1 -name '*.deb' -printf '%f\n' | sort | paste -sd' ')"
say "deb: install on the machine to test (not linux-libc-dev: it would" \
	"replace Debian's): dpkg -i ${image##*/}${headers:+ ${headers##*/}}," \
	"then reboot into $release (the package's postinst makes its initramfs" \
	"and runs update-grub; GRUB lists it under Advanced options)"
echo "$image"
[ -z "$headers" ] || echo "$headers"
