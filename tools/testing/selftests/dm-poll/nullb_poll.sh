#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# null_blk with poll queues (memory backed, so data can be verified), raw
# and under dm-linear: polled I/O completes and reads back what was written.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_require_nullb

ktap_print_header
ktap_set_plan 4
dmp_nullb_create poll size=64 memory_backed=1 queue_mode=2 poll_queues=1 \
	submit_queues=1 || ktap_exit_fail_msg "cannot create null_blk with poll queues"
nullb=$DMP_NODE
dmp_check_io_poll "null_blk" "$nullb" 1
dmp_check_verified "null_blk 512B-128k random sizes" "$nullb" \
	-s 8M -b 512-128k -q 8 -S 61
dmp_dm_create nlinear "0 65536 linear $nullb 32768" || ktap_exit_fail_msg "cannot create dm-linear"
dmp_check_io_poll "dm-linear over null_blk" "$DMP_NODE" 1
dmp_check_verified "dm-linear over null_blk 512B-128k random sizes" "$DMP_NODE" \
	-s 8M -b 512-128k -q 8 -S 62
ktap_finished
