#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install, with apt-get, whatever the build, the VM and the tests need and
# this machine lacks.  Quiet when everything is there.
set -eu
. "$(dirname "$0")/lib.sh"

packages=(
	linux-source-6.12		# the base tree
	linux-config-6.12		# Debian's config, which the test kernel's follows
	git make gcc flex bison bc libelf-dev libssl-dev openssl perl ccache cpio xz-utils kmod
	python3 python3-ply python3-git	# checkpatch's spdxcheck
	qemu-system-x86			# the test VM
	busybox-static bash coreutils util-linux fio mdadm dmsetup	# guest userspace
	bcache-tools			# make-bcache in the guest
	e2fsprogs xfsprogs		# filesystems on the stacks, in the guest
	lvm2 fdisk			# LVM on partitions (lvm, sfdisk), in the guest
	liburing-dev rsync		# iopoll_verify; kselftest install
	shellcheck
	gnuplot-nox			# make bench: the plot
	linux-perf			# make profile: perf in the guest
	dpkg-dev debhelper		# make deb: bindeb-pkg (dpkg-buildpackage, dh_*)
)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo)
say "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
run_logged "$SP_LOGS/apt-update.log" "${sudo[@]}" apt-get update
run_logged "$SP_LOGS/apt-install.log" "${sudo[@]}" apt-get install -y \
	--no-install-recommends "${missing[@]}"
