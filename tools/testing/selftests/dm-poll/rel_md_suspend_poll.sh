#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md suspended and resumed 50 times under polled load (mddev_suspend()
# waits for every bio in flight, which only the rings' polling completes):
# raid1 through sysfs suspend_lo, raid0, which has no such file, through
# a member's write-mostly flag, whose changes suspend the array.  And on
# raid1 a suspended range opened and closed 50 times: bios in the range
# wait, or, with REQ_NOWAIT, fail at submission, whole: md splits no
# REQ_NOWAIT bio.  Every I/O must complete, with its data.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

# md_suspend_resume NODE: one mddev_suspend() and mddev_resume().
md_suspend_resume()
{
	local md

	md=$(dmp_sysfs "$1")/md
	dmp_note_inflight "$1"
	echo 0 >"$md/suspend_lo"
}

# md_writemostly_toggle NODE MEMBER: two suspends and resumes.
md_writemostly_toggle()
{
	local state

	state=$(dmp_sysfs "$1")/md/dev-${2#/dev/}/state
	dmp_note_inflight "$1"
	echo writemostly >"$state" && printf '%s\n' -writemostly >"$state"
}

# md_suspend_range NODE: suspend the first 8 MiB for 0.1 s.
md_suspend_range()
{
	local md

	md=$(dmp_sysfs "$1")/md
	echo 16384 >"$md/suspend_hi" && sleep 0.1 && echo 0 >"$md/suspend_hi"
}

ktap_print_header
ktap_set_plan 3
dmp_md_create 0 --chunk=4 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
dmp_rings_under_load "md raid0: suspend and resume" "$DMP_NODE" 4 25 \
	md_writemostly_toggle "$DMP_NODE" "$a"
dmp_cleanup
dmp_md_create 1 --assume-clean -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid1"
dmp_rings_under_load "md raid1: suspend and resume" "$DMP_NODE" 4 50 \
	md_suspend_resume "$DMP_NODE"
dmp_rings_under_load "md raid1: suspended range" "$DMP_NODE" 4 50 \
	md_suspend_range "$DMP_NODE"
ktap_finished
