#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A REQ_NOWAIT write to raid4/5/6 does not sleep for its first stripe.
# raid5 adds a bio to stripe_heads one by one; with none free (or the
# one it needs busy with an overlapping write) it used to wait in the
# submitter, which for io_uring is the ring task holding its ring.  A
# REQ_NOWAIT bio that no stripe_head holds yet now fails with
# BLK_STS_AGAIN instead (io_uring sends it again from io-wq, where it
# may wait); once one holds it, it waits for the others as before.
# Three null_blk members with one tag that each request holds for 5 ms
# keep stripes busy; the stripe cache has 17 entries, its minimum.  fio
# io_uring writes of 4 KiB at QD16 (each within one stripe), the array
# marked active first so that md_write_start() has nothing to wait for;
# the ring task's sleeps in the submit path are counted
# (dmp_submit_sleeps) with the writes md ended with BLK_STS_AGAIN.
#   1. md raid5, random writes, verified;
#   2. md raid5, writes to 16 blocks, most overlapping one in flight;
#   3. md raid5 with an internal bitmap, random writes, verified;
#   4. dm-raid raid5, random writes, verified.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm dmsetup fio awk
dmp_require_nullb

ktap_print_header
ktap_set_plan 4

# load DEV FIO-OPTION...: io_uring writes of 4 KiB to DEV at QD16.
load()
{
	local dev=$1
	shift

	fio --name=r5nowait --filename="$dev" --ioengine=io_uring --direct=1 \
		--rw=randwrite --bs=4k --iodepth=16 "$@" \
		--output-format=terse --terse-version=3 >/tmp/fio.terse 2>&1 &&
		awk -F';' '$1 == 3 && $5 != 0 { bad = 1 } END { exit bad }' /tmp/fio.terse
}

# check_no_sleep DESC DEV FIO-OPTION...: the writes to DEV slept 0 times
# in the submit path, some ended with BLK_STS_AGAIN, and none failed.
# One KTAP result.
check_no_sleep()
{
	local desc=$1 dev=$2 filter
	shift 2

	# A write that marks the array active, blocking, before counting.
	if ! dd if=/dev/zero of="$dev" bs=4k count=1 oflag=direct status=none ||
		! filter=$(dmp_again_filter "$dev"); then
		ktap_test_fail "$desc: cannot write to $dev"
		return
	fi
	dmp_check_no_sleep "$desc" "$filter && rwbs ~ \"W*\"" writes \
		"no write found its stripe busy" load "$dev" "$@"
}

# make_members: three null_blk members with one tag that each request
# holds for 5 ms, in the array members.
make_members()
{
	local m

	members=()
	for m in a b c; do
		dmp_nullb_create "r5$1$m" size=64 memory_backed=1 queue_mode=2 \
			submit_queues=1 hw_queue_depth=1 irqmode=2 completion_nsec=5000000 ||
			ktap_exit_fail_msg "cannot create null_blk with one slow tag"
		members+=("$DMP_NODE")
	done
}

make_members md
dmp_md_create 5 --assume-clean --bitmap=none --chunk=16 --size=32768 -- "${members[@]}" ||
	ktap_exit_fail_msg "cannot create md raid5"
md=$DMP_NODE
sys=$(dmp_sysfs "$md")/md
echo 17 >"$sys/stripe_cache_size" || ktap_exit_fail_msg "cannot set stripe_cache_size"
echo 60 >"$sys/safe_mode_delay" || ktap_exit_fail_msg "cannot set safe_mode_delay"
check_no_sleep "md raid5: random writes, 17 stripes" "$md" --size=32M --io_size=1600k \
	--verify=crc32c --verify_fatal=1 --do_verify=1
check_no_sleep "md raid5: overlapping writes to 16 blocks" "$md" --size=64k \
	--io_size=800k --norandommap --randrepeat=0
dmp_md_stop "$md"

# A bitmap: its bits for a write are set before the write is queued.
make_members bm
dmp_md_create 5 --assume-clean --bitmap=internal --bitmap-chunk=64K --chunk=16 \
	--size=32768 -- "${members[@]}" || ktap_exit_fail_msg "cannot create md raid5 with a bitmap"
md=$DMP_NODE
sys=$(dmp_sysfs "$md")/md
echo 17 >"$sys/stripe_cache_size" || ktap_exit_fail_msg "cannot set stripe_cache_size"
echo 60 >"$sys/safe_mode_delay" || ktap_exit_fail_msg "cannot set safe_mode_delay"
check_no_sleep "md raid5 with a bitmap: random writes, 17 stripes" "$md" --size=32M \
	--io_size=1600k --verify=crc32c --verify_fatal=1 --do_verify=1
dmp_md_stop "$md"

# 16 KiB chunks, for which dm-raid takes a stripe cache of 17.
make_members dm
legs="- ${members[0]} - ${members[1]} - ${members[2]}"
dmp_dm_create r5 "0 131072 raid raid5_ls 4 32 nosync stripe_cache 17 3 $legs" ||
	ktap_exit_fail_msg "cannot create dm-raid raid5"
check_no_sleep "dm-raid raid5: random writes, 17 stripes" "$DMP_NODE" --size=32M \
	--io_size=1600k --verify=crc32c --verify_fatal=1 --do_verify=1
ktap_finished
