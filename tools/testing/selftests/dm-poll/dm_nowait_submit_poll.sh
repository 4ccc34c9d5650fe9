#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A REQ_NOWAIT submitter does not sleep: io_uring issues I/O inline with
# REQ_NOWAIT, holding its ring's lock, and expects BLK_STS_AGAIN instead
# of a wait.  Below every stack here sits a null_blk with one tag that
# each request holds for 5 ms, so that most bios find it taken.  The
# ring task's sleeps in the submit path are counted (sched_switch with
# io_submit_sqes() and schedule() on its stack), with the bios that
# ended with BLK_STS_AGAIN below.  The waits that polled-io.rst still
# lists (md's mirror writes, writecache's cache device, integrity's data)
# are not what this test runs.  The rest of a bio that DM splits across
# a chunk is mapped in the submission with REQ_NOWAIT kept, its part that
# fails with BLK_STS_AGAIN retried by DM: before, the rest went without
# REQ_NOWAIT and waited for the slow tag (200 sleeps in 200 reads).
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup fio awk
dmp_require_nullb

# load DEV FIO-OPTION...: fio io_uring random reads on DEV, 2000 of them
# at QD8, interrupt driven unless the options say --hipri=1.
load()
{
	local dev=$1
	shift

	fio --name=nowait --filename="$dev" --ioengine=io_uring --direct=1 \
		--rw=randread --bs=4k --iodepth=8 --number_ios=2000 --size=64M \
		"$@" --output-format=terse --terse-version=3 >/tmp/fio.terse 2>&1 &&
		awk -F';' '$1 == 3 && $5 != 0 { bad = 1 } END { exit bad }' /tmp/fio.terse
}

# check_no_sleep DESC BELOW DEV FIO-OPTION...: the load on DEV slept 0
# times in the submit path, some bios to BELOW ended with BLK_STS_AGAIN,
# and no I/O failed.  One KTAP result.
check_no_sleep()
{
	local desc=$1 below=$2 dev=$3 filter
	shift 3

	if filter=$(dmp_again_filter "$below"); then
		dmp_check_no_sleep "$desc" "$filter" "bios to $below" \
			"no bio below ended with BLK_STS_AGAIN" load "$dev" "$@"
	else
		ktap_test_fail "$desc: no device number for $below"
	fi
}

ktap_print_header
ktap_set_plan 5

# Each request holds the one tag for 5 ms.
dmp_nullb_create slow size=64 memory_backed=1 queue_mode=2 poll_queues=1 \
	submit_queues=1 hw_queue_depth=1 irqmode=2 completion_nsec=5000000 ||
	ktap_exit_fail_msg "cannot create null_blk with one slow tag"
slow=$DMP_NODE
dmp_nullb_create fast size=64 memory_backed=1 queue_mode=2 poll_queues=1 \
	submit_queues=1 ||
	ktap_exit_fail_msg "cannot create null_blk"
fast=$DMP_NODE

# 64 KiB chunks, the even ones on the slow device; 4 KiB reads at 4 KiB
# offsets never cross one.
dmp_dm_create striped "0 131072 striped 2 128 $slow 0 $fast 0" ||
	ktap_exit_fail_msg "cannot create dm-striped"
striped=$DMP_NODE
check_no_sleep "dm-striped, interrupt driven, one slow tag below" "$slow" "$striped"
check_no_sleep "dm-striped, polled, one slow tag below" "$slow" "$striped" --hipri=1
dmp_dm_remove striped || ktap_exit_fail_msg "cannot remove dm-striped"
# The even chunks on the fast device: the first part of a 128 KiB bio
# goes there, the rest to the slow tag.
dmp_dm_create striped2 "0 131072 striped 2 128 $fast 0 $slow 0" ||
	ktap_exit_fail_msg "cannot create dm-striped"
check_no_sleep "dm-striped, 128 KiB across chunks, interrupt driven, the rest on the slow tag" \
	"$slow" "$DMP_NODE" --bs=128k --number_ios=200
check_no_sleep "dm-striped, 128 KiB across chunks, polled, the rest on the slow tag" \
	"$slow" "$DMP_NODE" --bs=128k --number_ios=200 --hipri=1
check_no_sleep "dm-striped, 128 KiB writes across chunks, verified, the rest on the slow tag" \
	"$slow" "$DMP_NODE" --bs=128k --number_ios=100 --size=16M \
	--rw=randwrite --verify=crc32c --verify_fatal=1 --do_verify=1
ktap_finished
