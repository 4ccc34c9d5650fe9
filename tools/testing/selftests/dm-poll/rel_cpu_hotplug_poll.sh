#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A CPU goes offline and comes back while polled I/O runs through dm and
# md.  Offlining drains the CPU's hardware queues, which for poll queues
# only the rings' own polling can do, migrates the rings, and frees the
# CPU's per-cpu bio caches (bio_cpu_dead()) while clones from them may be
# in flight.  The same through dmp_fault, whose clones also go from a
# workqueue and are retried after BLK_STS_AGAIN.  Every I/O must
# complete, with its data.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault_lib.sh"

CPU=/sys/devices/system/cpu/cpu1/online

dmp_require_root
dmp_require_cmds dmsetup mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
[ -w "$CPU" ] || dmp_skip_all "needs CPU hotplug of cpu1 ($CPU)"
dmp_on_exit "echo 1 >$CPU"

# cpu_off_on: take cpu1 offline and bring it back.
cpu_off_on()
{
	local rc=0

	sleep 0.2
	echo 0 >"$CPU" || { echo "# cannot take cpu1 offline"; rc=1; }
	sleep 0.3
	echo 1 >"$CPU" || { echo "# cannot bring cpu1 online"; return 1; }
	return "$rc"
}

ktap_print_header
ktap_set_plan 5
# 4 KiB chunks: most bios are split, so each has several links.
dmp_dm_create hp-striped "0 131072 striped 2 8 $a 0 $b 0" ||
	ktap_exit_fail_msg "cannot create dm-striped"
striped=$DMP_NODE
dmp_rings_under_load "dm-striped: cpu1 offline and online" "$striped" 4 "$(dmp_scaled 10)" \
	cpu_off_on
dmp_dm_create hp-nested "0 131072 linear $striped 0" ||
	ktap_exit_fail_msg "cannot create dm-linear over dm-striped"
dmp_rings_under_load "dm-linear over dm-striped: cpu1 offline and online" \
	"$DMP_NODE" 4 "$(dmp_scaled 10)" cpu_off_on
dmp_cleanup

dmp_md_create 0 --chunk=4 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
dmp_rings_under_load "md raid0: cpu1 offline and online" "$DMP_NODE" 4 "$(dmp_scaled 10)" cpu_off_on
dmp_cleanup

dmpf_under_load "cpu1 offline and online" "$a" \
	"clones=4 wq_every=5 fail_every=7 fail_status=again" 4 "$(dmp_scaled 10)" cpu_off_on
ktap_finished
