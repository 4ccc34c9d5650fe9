#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The NVMe controllers under dm and md are reset while polled I/O runs
# through them.  A reset tears down the poll queues with requests on them
# and requeues those; the stacked devices' links wait for them until the
# queues are back.  Every I/O must complete, with its data: the same as
# on the raw namespace, which is checked first.  The same through
# dmp_fault, with clones from a workqueue and retried after BLK_STS_AGAIN.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault_lib.sh"

# I/O waits for the reset: a second or two, far longer on a debug kernel
# under TCG.  The limit is there to catch a bio that nobody polls any
# more, which never completes.
DMP_LOAD_MAX_LAT_MS=90000
DMP_LOAD_PASS_S=590

dmp_require_root
dmp_require_cmds dmsetup mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

# reset_both: reset the controllers of both namespaces, one after the other.
reset_both()
{
	local ns

	for ns in "$a" "$b"; do
		sleep 0.5
		echo 1 >"$(dmp_sysfs "$ns")/device/reset_controller" ||
			{ echo "# cannot reset the controller of $ns"; return 1; }
	done
}

ktap_print_header
ktap_set_plan 5
dmp_rings_under_load "raw $a and $b: controller resets" "$a" 2 "$(dmp_scaled 3)" reset_both
dmp_dm_create reset-striped "0 131072 striped 2 8 $a 0 $b 0" ||
	ktap_exit_fail_msg "cannot create dm-striped"
dmp_rings_under_load "dm-striped: controller resets" "$DMP_NODE" 4 "$(dmp_scaled 3)" reset_both
dmp_cleanup
dmp_md_create 0 --chunk=4 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
dmp_rings_under_load "md raid0: controller resets" "$DMP_NODE" 4 "$(dmp_scaled 3)" reset_both
dmp_cleanup

dmpf_under_load "controller resets" "$a" \
	"clones=4 wq_every=5 fail_every=7 fail_status=again" 4 "$(dmp_scaled 3)" reset_both
ktap_finished
