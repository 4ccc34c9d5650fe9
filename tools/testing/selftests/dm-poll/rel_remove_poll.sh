#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Devices go away under polled load.  A dm device whose table is wiped,
# as dmsetup remove --force does, fails polled I/O with EIO, or with
# EOPNOTSUPP once the error target's table, which cannot poll, is live;
# a null_blk device removed from under dm-linear fails it with EIO; a
# raid1 or raid10 member removed is failed by md, which completes every
# I/O from the other mirror (polled reads keep REQ_NOWAIT, and raid1 used
# to pass their errors up as for a caller that would rather fail than
# wait); an array in use refuses to stop.  Nothing hangs and every I/O
# ends with its data or with the error that is the rule.
. "$(dirname "$0")/lib.sh"

EIO=5
EOPNOTSUPP=95

dmp_require_root
dmp_require_cmds dmsetup mdadm
dmp_require_nullb
dmp_get_nvme_devs 1
a=${DMP_NVME[0]}

# nullb_power_off DEV: remove the null_blk disk DEV (configfs power 0).
nullb_power_off()
{
	local name

	sleep 1
	for name in /sys/kernel/config/nullb/"$DMP_PREFIX"-*; do
		[ "/dev/${name##*/}" = "$1" ] || continue
		echo 0 >"$name/power" && return 0
	done
	echo "# cannot power off $1"
	return 1
}

nullb_args=(size=64 memory_backed=1 queue_mode=2 poll_queues=1 submit_queues=1)

ktap_print_header
ktap_set_plan 5
dmp_dm_create rm-linear "0 65536 linear $a 0" || ktap_exit_fail_msg "cannot create dm-linear"
DMP_LOAD_ALLOW_ERRNO=$EIO,$EOPNOTSUPP dmp_rings_under_load \
	"dm-linear: table wiped (EIO, EOPNOTSUPP)" \
	"$DMP_NODE" 4 1 dmp_after_pause 1 dmsetup wipe_table "${DMP_NODE#/dev/mapper/}"

dmp_nullb_create rm0 "${nullb_args[@]}" || ktap_exit_fail_msg "cannot create null_blk"
gone=$DMP_NODE
dmp_dm_create rm-over-nullb "0 131072 linear $gone 0" ||
	ktap_exit_fail_msg "cannot create dm-linear over null_blk"
DMP_LOAD_ALLOW_ERRNO=$EIO dmp_rings_under_load "dm-linear: null_blk below removed (EIO)" \
	"$DMP_NODE" 4 1 nullb_power_off "$gone"
dmp_cleanup

dmp_nullb_create rm1 "${nullb_args[@]}" || ktap_exit_fail_msg "cannot create null_blk"
gone=$DMP_NODE
dmp_md_create 1 --assume-clean -- "$a" "$gone" || ktap_exit_fail_msg "cannot create md raid1"
raid1=$DMP_NODE
dmp_rings_under_load "md raid1: a member removed" "$raid1" 4 1 nullb_power_off "$gone"
dmp_rings_under_load "md raid1: stop refused while in use" "$raid1" 2 3 dmp_md_stop_refused "$raid1"
dmp_cleanup

dmp_nullb_create rm2 "${nullb_args[@]}" || ktap_exit_fail_msg "cannot create null_blk"
gone=$DMP_NODE
dmp_md_create 10 --layout=n2 --chunk=64 --assume-clean -- "$a" "$gone" ||
	ktap_exit_fail_msg "cannot create md raid10"
dmp_rings_under_load "md raid10 near2: a member removed" "$DMP_NODE" 4 1 nullb_power_off "$gone"
ktap_finished
