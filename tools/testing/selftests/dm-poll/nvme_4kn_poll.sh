#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe namespaces of 4096-byte logical blocks (DM_POLL_NVME_4KN_DEVS; in
# the harness, its multipath VM machine): dm-linear, dm-striped and md
# raid0 on them take the 4 KiB block size up, and poll end to end with I/O
# in multiples of it (iopoll_verify refuses sizes and offsets that are
# not): data verified, dm-linear's from the namespace below, 0 interrupts;
# the control interrupt driven.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup mdadm
dmp_get_nvme_devs 2 DM_POLL_NVME_4KN_DEVS
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

# check_lbs DESC DEV: DEV has 4096-byte logical blocks.  One KTAP result.
check_lbs()
{
	local lbs

	lbs=$(cat "$(dmp_sysfs "$2")/queue/logical_block_size")
	if [ "$lbs" = 4096 ]; then
		ktap_test_pass "$1: logical blocks of 4096 bytes"
	else
		echo "# $1: logical blocks of $lbs bytes"
		ktap_test_fail "$1: logical blocks not of 4096 bytes"
	fi
}

ktap_print_header
ktap_set_plan 12
check_lbs "raw $a" "$a"
dmp_check_polled "raw $a: 4k-128k" "$a" -s 16M -b 4k-128k -q 8 -S 161

# 1 MiB into the namespace, a length in whole 4 KiB blocks.
dmp_dm_create 4kn-linear "0 65536 linear $a 2048" ||
	ktap_exit_fail_msg "cannot create dm-linear"
check_lbs dm-linear "$DMP_NODE"
dmp_check_polled "dm-linear: 4k-128k" "$DMP_NODE" -s 16M -b 4k-128k -q 8 -S 162
dmp_check_below "dm-linear" "$a" 2048 162 16M
dmp_cleanup

# 4 KiB chunks, one logical block: most bios are split.
dmp_dm_create 4kn-striped "0 131072 striped 2 8 $a 0 $b 0" ||
	ktap_exit_fail_msg "cannot create dm-striped"
check_lbs dm-striped "$DMP_NODE"
dmp_check_polled "dm-striped, 4K chunks: 4k-128k" "$DMP_NODE" -s 16M -b 4k-128k -q 8 -S 163
dmp_check_irq "dm-striped, 4K chunks: 4k-128k" "$DMP_NODE" -s 16M -b 4k-128k -q 8 -S 164
dmp_cleanup

dmp_md_create 0 --chunk=4 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
check_lbs "md raid0" "$DMP_NODE"
dmp_check_polled "md raid0, 4K chunks: 4k-128k" "$DMP_NODE" -s 16M -b 4k-128k -q 8 -S 165
dmp_check_irq "md raid0, 4K chunks: 4k-128k" "$DMP_NODE" -s 16M -b 4k-128k -q 8 -S 166
dmp_cleanup

dmp_md_create 0 --chunk=64 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
dmp_check_polled "md raid0, 64K chunks: 4k-1M, across chunks" "$DMP_NODE" \
	-s 16M -b 4k-1M -q 4 -S 167 -W
ktap_finished
