#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dm and md over an NVMe multipath head (DM_POLL_NVME_MPATH_DEVS; in the
# harness, its multipath VM machine: two controllers of one subsystem
# share a namespace).  The head is a bio-based disk that polls: it sends
# each bio on to a path's request queue, where io_uring polls it.
# dm-linear, dm-striped and md raid0 over it poll end to end: data
# verified, 0 interrupts from either controller; the control interrupt
# driven.  Then one path's controller is removed from the PCI bus under
# polled load and comes back by a rescan: what it had in flight completes
# there or, failed over to the other path, by interrupt; every I/O
# completes with its data, and the stack polls again once the path is
# back.
. "$(dirname "$0")/lib.sh"

# A removal waits for what is in flight, a rescan for the controller to
# probe: seconds under TCG, far more on a debug kernel.  The limit is
# there to catch a bio that nobody polls any more.
DMP_LOAD_MAX_LAT_MS=60000
DMP_LOAD_PASS_S=590

dmp_require_root
dmp_require_cmds dmsetup mdadm
dmp_get_nvme_devs 1 DM_POLL_NVME_MPATH_DEVS
head=${DMP_NVME[0]}
hname=${head##*/}
size=$(dmp_sectors "$head")
half=$((size / 2 / 8 * 8))

# paths: the path devices of the head nvmeSnN, hidden disks nvmeScCnN of
# their controllers C, one a line.
paths()
{
	local p

	for p in /sys/block/"${hname%n*}"c*n"${hname##*n}"; do
		[ -e "$p" ] && basename "$p"
	done
}

# path_pci N: the PCI device of the controller of the head's path N.
path_pci()
{
	local p

	p=$(paths | sed -n "$(($1 + 1))p")
	[ -n "$p" ] && readlink -f "/sys/block/$p/device/device"
}
[ "$(paths | wc -l)" -ge 2 ] || dmp_skip_all "$head has fewer than two paths"
# The controllers' PCI devices: a rescan brings one back under a new name.
pcis=("$(path_pci 0)" "$(path_pci 1)")
[ -d "${pcis[0]}" ] || dmp_skip_all "no PCI device behind the paths of $head"
[ -d "${pcis[1]}" ] || dmp_skip_all "no PCI device behind the paths of $head"

# wait_paths N: until the head has N paths, at most 60 s.
wait_paths()
{
	local i

	for ((i = 0; i < 600; i++)); do
		[ "$(paths | wc -l)" -ge "$1" ] && return 0
		sleep 0.1
	done
	echo "# $head: $(paths | wc -l) paths after 60 s, not $1"
	return 1
}

# A controller removed and not back yet comes back at the end.
dmp_on_exit 'echo 1 >/sys/bus/pci/rescan; wait_paths 2'

NREMOVED=0
# remove_path: the controller of one path (each in turn) off the PCI bus
# for a second, then a rescan, until the head has both paths again.
remove_path()
{
	local pci=${pcis[$((NREMOVED++ % 2))]}

	echo "# removing $pci ($(paths | paste -sd' '))"
	echo 1 >"$pci/remove" || return 1
	sleep 1
	echo 1 >/sys/bus/pci/rescan || return 1
	wait_paths 2
}

ktap_print_header
ktap_set_plan 11
dmp_check_io_poll "$head (multipath head)" "$head" 1
dmp_check_polled "raw $head" "$head" -s 16M -b 4k-128k -q 8 -S 171

dmp_dm_create mp-linear "0 131072 linear $head 2048" ||
	ktap_exit_fail_msg "cannot create dm-linear"
linear=$DMP_NODE
dmp_check_polled "dm-linear over $head" "$linear" -s 16M -b 4k-128k -q 8 -S 172
dmp_check_below "dm-linear over $head" "$head" 2048 172 16M
dmp_check_irq "dm-linear over $head" "$linear" -s 16M -b 4k-128k -q 8 -S 173

# The two halves of the head, striped, with 4 KiB chunks.
dmp_dm_create mp-striped "0 131072 striped 2 8 $head 0 $head $half" ||
	ktap_exit_fail_msg "cannot create dm-striped"
dmp_check_polled "dm-striped over two halves of $head" "$DMP_NODE" \
	-s 16M -b 4k-128k -q 8 -S 174
dmp_dm_remove mp-striped

# md raid0 over two dm-linear pieces of the head: md over dm over it.
if ! { dmp_dm_create mp-p0 "0 262144 linear $head 524288" && p0=$DMP_NODE &&
	dmp_dm_create mp-p1 "0 262144 linear $head 786432"; }; then
	ktap_exit_fail_msg "cannot create dm-linear pieces"
fi
dmp_md_create 0 --chunk=16 -- "$p0" "$DMP_NODE" || ktap_exit_fail_msg "cannot create md raid0"
md=$DMP_NODE
dmp_check_polled "md raid0 over dm-linear over $head" "$md" -s 16M -b 4k-128k -q 8 -S 175

cycles=$(dmp_scaled 8)
dmp_rings_under_load "dm-linear over $head: a path removed and back" "$linear" 4 "$cycles" \
	remove_path
dmp_rings_under_load "md raid0 over dm-linear over $head: a path removed and back" "$md" 4 \
	"$cycles" remove_path
dmp_check_polled "dm-linear over $head, after the removals" "$linear" \
	-s 16M -b 4k-128k -q 8 -S 176
dmp_check_polled "md raid0 over dm-linear over $head, after the removals" "$md" \
	-s 16M -b 4k-128k -q 8 -S 177
ktap_finished
