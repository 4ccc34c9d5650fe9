#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Requeue under polled load: a noflush suspend makes thin push back the
# bios waiting for a block to be provisioned (BLK_STS_DM_REQUEUE); DM
# requeues them and sends them, by interrupt, after resume.  Every I/O
# must complete, with its data.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup dd
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 1
dmp_thin_pool_create "$a" 500000 "$b" || ktap_exit_fail_msg "cannot create thin-pool"
pool=$DMP_NODE
dmsetup message "$pool" 0 "create_thin 1" || ktap_exit_fail_msg "cannot create thin 1"
dmp_dm_create thin1 "0 131072 thin $pool 1" || ktap_exit_fail_msg "cannot create thin 1"
thin1=$DMP_NODE

thin1_noflush()
{
	dmsetup suspend --noflush "${thin1#/dev/mapper/}" && sleep 0.1 &&
		dmsetup resume "${thin1#/dev/mapper/}"
}
dmp_under_load "thin: noflush suspend while blocks are provisioned" "$thin1" thin1_noflush
ktap_finished
