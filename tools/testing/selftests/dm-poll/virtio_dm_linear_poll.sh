#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# virtio-blk with poll queues, raw and under dm-linear: polled I/O is
# reaped from the poll virtqueue, which has no interrupt.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
vd=${DM_POLL_VIRTIO_DEV:-}
[ -n "$vd" ] || dmp_skip_all "needs a virtio-blk disk with poll queues in DM_POLL_VIRTIO_DEV"
[ -b "$vd" ] || dmp_skip_all "$vd is not a block device"
[ "$(dmp_io_poll "$vd")" = 1 ] ||
	dmp_skip_all "$vd has no poll queues (boot with virtio_blk.poll_queues=N)"

ktap_print_header
ktap_set_plan 5
dmp_check_polled "$vd 4k qd8" "$vd" -s 4M -b 4k -q 8 -S 51
dmp_dm_create vlinear "0 32768 linear $vd 4096" || ktap_exit_fail_msg "cannot create dm-linear"
dev=$DMP_NODE
dmp_check_io_poll "dm-linear over $vd" "$dev" 1
dmp_check_polled "dm-linear over $vd 4k qd8" "$dev" -b 4k -q 8 -S 52
dmp_check_polled "dm-linear over $vd 512B-64k random sizes" "$dev" -b 512-64k -q 4 -S 53
dmp_check_irq "dm-linear over $vd 4k qd8" "$dev" -b 4k -q 8 -S 54
ktap_finished
