#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A SCHED_FIFO poller on a CPU of its own, as databases that poll run:
# polled clones that find no tag below (null_blk with one tag) fail with
# BLK_STS_AGAIN and DM's worker resubmits them while the poller spins on
# the bio.  With RT throttling off, a kworker bound to the poller's CPU
# never runs there: the worker must run elsewhere.  DM's worker was bound
# to the CPU that queued the work, and the poller spun until its time
# limit.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup chrt taskset
dmp_require_nullb
[ "$(nproc)" -ge 2 ] || dmp_skip_all "needs 2 CPUs: the poller takes one"

rt=/proc/sys/kernel/sched_rt_runtime_us
old_rt=$(cat "$rt")
dmp_on_exit "echo $old_rt >$rt"

ktap_print_header
ktap_set_plan 2
dmp_nullb_create onetag size=64 memory_backed=1 queue_mode=2 poll_queues=1 \
	submit_queues=1 hw_queue_depth=1 ||
	ktap_exit_fail_msg "cannot create null_blk with one tag"
nullb=$DMP_NODE
dmp_dm_create onetag "0 65536 linear $nullb 0" || ktap_exit_fail_msg "cannot create dm-linear"
dm=$DMP_NODE
filter=$(dmp_again_filter "$nullb") || ktap_exit_fail_msg "cannot name $nullb in a trace filter"
echo -1 >"$rt" || ktap_exit_fail_msg "cannot turn RT throttling off"

# check_fifo DESC VERIFY-ARGS...: polled write+verify on the dm device by
# a SCHED_FIFO task on CPU 1, within 30 s, with clones failed below
# counted.  One KTAP result.
check_fifo()
{
	local desc=$1 n rc=0
	shift

	dmp_count_start block/block_bio_complete dev "$filter" ||
		{ ktap_test_fail "$desc: cannot count block_bio_complete events"; return; }
	taskset -c 1 chrt -f 50 "$DMP_VERIFY" -T 30 "$@" "$dm" || rc=$?
	n=$(dmp_count_stop block/block_bio_complete dev "$filter")
	echo "# $desc: $n clones to $nullb ended with BLK_STS_AGAIN"
	if [ "$rc" != 0 ]; then
		ktap_test_fail "$desc: polled I/O failed or did not end in 30 s"
	elif [ "$n" -eq 0 ]; then
		ktap_test_fail "$desc: no clone below ended with BLK_STS_AGAIN"
	else
		ktap_test_pass "$desc: requeued clones done, data verified"
	fi
}

check_fifo "dm-linear over null_blk with one tag, SCHED_FIFO poller, qd8" \
	-s 8M -b 4k-64k -q 8 -S 311
check_fifo "dm-linear over null_blk with one tag, SCHED_FIFO poller, qd32" \
	-s 8M -b 4k-128k -q 32 -S 312
ktap_finished
