#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A raid1 array's life under polled load: resync, a member failed, reads
# from the degraded array, a spare added and recovered, and a stop refused
# while the array is in use (a member without poll queues joining:
# md_nopoll_join_poll.sh).  Nothing hangs, every I/O completes with its
# data or with the error md's rules give it.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm dmsetup
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

# md_action_is NODE ACTION: the array runs ACTION (resync, recover, idle).
md_action_is()
{
	local got

	got=$(cat "$(dmp_sysfs "$1")/md/sync_action")
	[ "$got" = "$2" ] || { echo "# $1: sync_action is $got, expected $2"; return 1; }
	sleep 0.3
}

ktap_print_header
ktap_set_plan 8
dmp_dm_create m0 "0 262144 linear $a 0" || ktap_exit_fail_msg "cannot create member"
m0=$DMP_NODE
dmp_dm_create m1 "0 262144 linear $b 0" || ktap_exit_fail_msg "cannot create member"
m1=$DMP_NODE
dmp_dm_create m2 "0 262144 linear $a 262144" || ktap_exit_fail_msg "cannot create member"
m2=$DMP_NODE

# Slow resync down so that the load overlaps it; the limit is global.
speed=$(cat /proc/sys/dev/raid/speed_limit_max)
dmp_on_exit "echo $speed >/proc/sys/dev/raid/speed_limit_max"
echo 2000 >/proc/sys/dev/raid/speed_limit_max
dmp_md_create 1 --size=65536 -- "$m0" "$m1" || ktap_exit_fail_msg "cannot create md raid1"
dev=$DMP_NODE
dmp_rings_under_load "raid1 resync" "$dev" 2 5 md_action_is "$dev" resync
echo "$speed" >/proc/sys/dev/raid/speed_limit_max
dmp_md_wait_sync "$dev" || ktap_exit_fail_msg "$dev: resync or recovery did not finish"

dmp_rings_under_load "raid1: mdadm --fail a member" "$dev" 2 1 \
	dmp_after_pause 0.5 mdadm --quiet --fail "$dev" "$m1"
dmp_check_polled_by_irq "degraded raid1: writes" "$dev" -m write -s 16M -b 4k-256k -q 4 -S 91
dmp_check_polled "degraded raid1: reads" "$dev" -m read -s 16M -b 4k-256k -q 4 -S 91

# md lets a failed member go once its last bio is done and md's thread
# has seen the failure: a moment, longer on a slow kernel or machine.
for ((i = 0; i < 300; i++)); do
	err=$(mdadm --quiet --remove "$dev" "$m1" 2>&1) && break
	sleep 0.2
done
if [ "$i" -ge 300 ]; then
	# Who holds it: I/O in flight on the member, md's view of it.
	echo "# mdadm: $err"
	echo "# $m1 in flight: $(cat "$(dmp_sysfs "$m1")/inflight")"
	echo "# $dev in flight: $(cat "$(dmp_sysfs "$dev")/inflight")"
	grep -H . "$(dmp_sysfs "$dev")"/md/dev-*/state | sed 's/^/# /'
	ktap_exit_fail_msg "cannot remove the failed member"
fi
dmp_rings_under_load "raid1: spare added, recovery" "$dev" 2 1 \
	dmp_after_pause 0.3 mdadm --quiet --add "$dev" "$m2"
dmp_md_wait_sync "$dev" || ktap_exit_fail_msg "$dev: resync or recovery did not finish"
dmp_check_io_poll "raid1 after recovery onto a polling member" "$dev" 1
dmp_check_mirrors "raid1 after recovery under polled load" "$dev"
dmp_rings_under_load "raid1: mdadm --stop while in use" "$dev" 2 3 dmp_md_stop_refused "$dev"
ktap_finished
