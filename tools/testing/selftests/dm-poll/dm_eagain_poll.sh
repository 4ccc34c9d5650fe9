#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# BLK_STS_AGAIN from below: a null_blk device with one tag per queue
# fails the polled REQ_NOWAIT clones it has no tag for.  DM retries them
# from its worker; every I/O must still succeed, with its data.  Linux 6.12
# resubmitted them with REQ_NOWAIT, so they failed again and -EAGAIN
# reached the CQE.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_require_nullb

ktap_print_header
ktap_set_plan 3
dmp_nullb_create onetag size=64 memory_backed=1 queue_mode=2 poll_queues=1 \
	submit_queues=1 hw_queue_depth=1 ||
	ktap_exit_fail_msg "cannot create null_blk with one tag"
nullb=$DMP_NODE
dmp_check_again "null_blk, one tag, qd8" "$nullb" "$nullb" -s 8M -b 4k-64k -q 8 -S 141
dmp_dm_create onetag "0 65536 linear $nullb 0" || ktap_exit_fail_msg "cannot create dm-linear"
dmp_check_again "dm-linear over null_blk, one tag, qd8" "$nullb" "$DMP_NODE" \
	-s 8M -b 4k-64k -q 8 -S 142
dmp_dm_create onetag2 "0 65536 striped 2 8 $nullb 0 $nullb 65536" ||
	ktap_exit_fail_msg "cannot create dm-striped"
dmp_check_again "dm-striped over null_blk, one tag, qd8" "$nullb" "$DMP_NODE" \
	-s 8M -b 512-64k -q 8 -S 143
ktap_finished
