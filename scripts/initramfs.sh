#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest's initramfs (uncompressed cpio): busybox, bash, fio,
# dmsetup, mdadm, make-bcache, kmod, the ext4 and xfs tools, lvm and
# sfdisk, perf, the installed dm-poll kselftests and the guest jobs, each
# binary with the shared libraries it links.  The same image boots the
# base and the patched kernel: it holds no kernel-specific file (vm-run.sh
# appends the kernel's modules).
# Prints the path of the cpio archive.
set -eu
. "$(dirname "$0")/lib.sh"

need_cmds busybox fio dmsetup mdadm make-bcache cpio ldd kmod mke2fs e2fsck mkfs.xfs xfs_repair \
	lvm sfdisk cc
[ -f /usr/include/liburing.h ] || die "liburing-dev missing (run: make deps)"
patched=$(sp_src patched)
[ -d "$patched/tools/testing/selftests/dm-poll" ] ||
	die "no dm-poll selftests in $patched (run scripts/apply-series.sh)"

out=$SP_BUILD/initramfs
root=$out/root
ksft=$out/kselftest

say "initramfs: installing the dm-poll kselftests"
rm -rf "$ksft"
run_logged "$SP_LOGS/kselftest-install.log" \
	make -C "$patched/tools/testing/selftests" TARGETS=dm-poll \
	O="$out/kselftest-obj" INSTALL_PATH="$ksft" install
[ -x "$ksft/dm-poll/iopoll_verify" ] || die "iopoll_verify was not built"

# The bench's buffer maker (guest job bench, nr_buffers).
cc -O2 -Wall -Wextra -o "$out/sp-bufmake" "$SP_TOP/scripts/guest/sp-bufmake.c" ||
	die "cannot build scripts/guest/sp-bufmake.c"

rm -rf "$root"
mkdir -p "$root"/usr/{bin,sbin,lib,lib64} "$root"/{dev,proc,sys,tmp,run,mnt,etc}
# Debian is usr-merged: keep the same layout so the dynamic loader and
# the libraries are found at the paths the binaries were linked with.
for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done

# copy_with_libs FILE...: copy FILEs and every library they load.
copy_with_libs() {
	local f lib
	for f in "$@"; do
		cp -L "$f" "$root/usr/bin/"
		for lib in $(ldd "$f" | awk '/=> \// { print $3 } /^\t\// { print $1 }'); do
			[ -e "$root$lib" ] || { mkdir -p "$root$(dirname "$lib")"; cp -L "$lib" "$root$lib"; }
		done
	done
}

copy_with_libs /bin/bash "$(command -v fio)" "$(command -v dmsetup)" \
	"$(command -v mdadm)" "$(command -v timeout)" "$(command -v make-bcache)" \
	"$ksft/dm-poll/iopoll_verify" "$out/sp-bufmake"
# kmod, not busybox: modprobe with modules.dep and aliases, the kernel
# command line's module options, and the kernel's own request_module()
# (/sbin/modprobe).
copy_with_libs "$(command -v kmod)"
for tool in modprobe insmod rmmod lsmod depmod modinfo; do
	ln -s kmod "$root/usr/bin/$tool"
done
ln -s ../bin/kmod "$root/usr/sbin/modprobe"
# Filesystems on the stacks: create, check, repair (read-only checks).
copy_with_libs "$(command -v mke2fs)" "$(command -v e2fsck)" \
	"$(command -v mkfs.xfs)" "$(command -v xfs_repair)"
ln -s mke2fs "$root/usr/bin/mkfs.ext4"
# LVM: the one lvm binary (lvcreate and the others are its links), with a
# configuration for a guest without udev and daemons; sfdisk for the
# partitions the PVs sit on.
copy_with_libs "$(command -v lvm)" "$(command -v sfdisk)"
for tool in pvcreate pvremove pvmove pvs vgcreate vgremove vgs lvcreate lvremove \
	lvextend lvconvert lvchange lvs; do
	ln -s lvm "$root/usr/bin/$tool"
done
mkdir -p "$root/etc/lvm"
install -m 644 "$SP_TOP/scripts/guest/lvm.conf" "$root/etc/lvm/lvm.conf"
# perf for make profile (guest job "profile"), where the host has it.
! command -v perf >/dev/null || copy_with_libs "$(command -v perf)"
cp /bin/busybox "$root/usr/bin/busybox"
for applet in $(busybox --list); do
	[ -e "$root/usr/bin/$applet" ] || ln -s busybox "$root/usr/bin/$applet"
done
echo "root:x:0:0:root:/:/bin/sh" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"

cp -a "$ksft" "$root/kselftest"
install -m 755 "$SP_TOP/scripts/guest/init" "$root/init"
mkdir -p "$root/jobs"
install -m 755 "$SP_TOP"/scripts/guest/job-*.sh "$root/jobs/"
install -m 644 "$SP_TOP/scripts/guest/stacks.sh" "$root/jobs/stacks.sh"

say "initramfs: packing $(du -sh "$root" | cut -f1)"
(cd "$root" && find . -print0 | LC_ALL=C sort -z |
	cpio --null --reproducible -o -H newc --quiet) >"$out/initramfs.cpio.new"
mv "$out/initramfs.cpio.new" "$out/initramfs.cpio"
echo "$out/initramfs.cpio"
